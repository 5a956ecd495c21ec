"""Zygote side: what numpy and matplotlib set up on first use, done once in the zygote before the
jail, so that no child pays it (loaded by the zygote from its file path: standard library only,
numpy and matplotlib imported by the zygote before these run)."""

from __future__ import annotations


def quietly(step) -> None:
    """A warm-up only saves the children time: one that fails (an odd matplotlib, no fonts) costs
    nothing but that time, never the zygote."""
    try:
        step()
    except Exception:  # noqa: BLE001
        pass


def numpy_first_use() -> None:
    """What numpy sets up on first use (the matmul and ufunc loops, numpy.random's import and a
    generator), done once here rather than in every child. Single-threaded (the zygote set the
    thread variables)."""
    import numpy as np

    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    s = x @ np.swapaxes(x, -1, -2)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    float((w * np.log(np.where(w > 0, w, 1.0))).sum(axis=-1).mean() + s.std(axis=(1, 2)).mean())


def matplotlib_figure() -> None:
    """A pyplot figure laid out once and closed (none is left behind; the next is Figure 1
    again): the backend resolved, the font files opened, the mathtext parser built and the
    layout paths run here, before the jail, not in every child whose student draws one
    (a student's figure with tight_layout would otherwise pay for all of it in its child)."""
    import matplotlib.pyplot as plt

    try:
        fig, axes = plt.subplots(1, 2, figsize=(6, 3))
        for ax in axes:
            ax.plot([4, 16, 64], [1.0, 2.0, 3.0], "o-", label=r"scaled: $QK^\top/\sqrt{d}$")
            ax.set_xscale("log", base=2)
            ax.set_xticks([4, 16, 64], ["4", "16", "64"])
            ax.set_xlabel("d")
            ax.set_ylabel("std")
            ax.set_title("title")
            ax.legend()
        fig.suptitle("suptitle")
        fig.tight_layout()
        fig.canvas.draw()
    finally:
        plt.close("all")
