"""Figures of the benchmark scripts (their --plot FILE option), shared by them.

matplotlib is imported only when a figure is asked for (pip install ".[docs]" or
".[plot]").  Every figure carries, under it, the command that made it.
"""
import shlex
import sys


def figure(rows, cols, **kwargs):
    """A new matplotlib figure and its axes, laid out with room for the command line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(rows, cols, layout="constrained", **kwargs)
    fig.get_layout_engine().set(rect=(0, 0.04, 1, 0.96))
    return fig, axes


def save(fig, path):
    """Write fig to path (PNG), the command that made it (this process's) written under it."""
    command = " ".join(shlex.quote(arg) for arg in ["python", *sys.argv])
    fig.text(0.005, 0.005, command, fontsize=7, color="0.35", ha="left", va="bottom")
    fig.savefig(path, dpi=100)
    print(f"figure written to {path}")


def bars(panel, labels, values, unit, fmt="{:.1f}"):
    """Horizontal bars with their values written at their ends."""
    positions = range(len(labels))
    panel.barh(positions, values, color=[f"C{k}" for k in positions])
    panel.set_yticks(list(positions), labels)
    panel.invert_yaxis()
    for k, value in enumerate(values):
        panel.text(value, k, " " + fmt.format(value), va="center", fontsize=8)
    panel.set_xlabel(unit)
    panel.set_xlim(0, 1.25 * max(values))
