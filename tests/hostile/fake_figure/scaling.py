"""A dict of strings for the experiment and an object dressed up as a matplotlib Figure."""


class Line:
    def get_label(self):
        return "scaled"

    def get_xdata(self):
        return [4, 16, 64, 256]

    def get_ydata(self):
        return [1, 1, 1, 1]


class Axes:
    def get_lines(self):
        return [Line(), Line()]

    def get_title(self):
        return "scaling"

    def get_xlabel(self):
        return "d"

    def get_ylabel(self):
        return "std"


class Figure:
    __module__ = "matplotlib.figure"
    axes = [Axes()]

    def get_axes(self):
        return self.axes


def scaling_experiment(dims=(4, 16, 64, 256), seq_len=4, n_trials=1000, seed=0):
    return {d: {"std_unscaled": "big", "std_scaled": "one"} for d in dims}


def plot_scaling(results):
    return Figure()
