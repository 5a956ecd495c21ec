"""How long one call into a submission may take: the grader's rule and check.py's, one code.

    its CPU time          at most the limit (a busy machine costs a correct submission nothing)
    no progress at all    once the limit has passed in wall time, half a second with almost no CPU
                          (sleeping, blocked on input) ends it
    the wall backstop     `wall_factor` times the limit ends anything else

The standard library only: it is shipped in the student's handout.
"""

from __future__ import annotations

IDLE_CPU = 0.02          # s of CPU per s of wall below which a call counts as making no progress
PROGRESS_WINDOW = 0.5    # s of wall over which progress is measured
CPU, WALL = "cpu", "wall"


def backstop(limit: float, wall_factor: float) -> float:
    """Seconds of wall time after which a call is stopped whatever it does."""
    return max(limit * wall_factor, limit + 2.0)


class CallClock:
    """One call's clocks, started at (`now`, `cpu`): wall seconds and the CPU seconds it runs on."""

    def __init__(self, limit: float, wall_factor: float, now: float, cpu: float):
        self.limit, self.start, self.cpu0 = limit, now, cpu
        self.backstop = now + backstop(limit, wall_factor)
        self.window = (now, cpu)       # (wall, cpu) when progress was last measured

    def over(self, now: float, cpu: float, waiting: bool = True) -> str | None:
        """CPU or WALL when the call is over its time at (`now`, `cpu`), else None. `waiting`
        False: its answer is in, so only the CPU limit counts."""
        if cpu - self.cpu0 >= self.limit:
            return CPU
        if not waiting:
            return None
        if now >= self.backstop:
            return WALL
        if now - self.start >= self.limit:
            w0, c0 = self.window
            if now - w0 >= PROGRESS_WINDOW:
                self.window = (now, cpu)
                if (cpu - c0) / (now - w0) < IDLE_CPU:
                    return WALL
        return None

    def shift(self, away: float) -> None:
        """Moves the wall clocks on by `away` s the caller stood still (not the call's time)."""
        self.start += away
        self.backstop += away
        self.window = (self.window[0] + away, self.window[1])
