"""Figures of the benchmark scripts (their --plot FILE option), shared by them.

matplotlib is imported only when a figure is asked for (pip install ".[docs]" or
".[plot]").  The figures are drawn for the documentation site, where they are shown at
about 1100 pixels wide: every figure has a title, and its fonts and legends are sized to be
read at that width.  The command that made a figure is not drawn into it (the page's
caption gives it); it is printed when the figure is written, and stored with the figure's
data.

`save(fig, path, kind, data)` also writes what was drawn to
`benchmarks/results/figures/<name>.json` (the command, the date and the numbers), so that
`python benchmarks/replot.py` redraws the figure without running the benchmark again.
"""
import json
import shlex
import sys
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
FIGURE_DATA = CHECKOUT / "benchmarks" / "results" / "figures"
DPI = 150                 # figures are drawn at their size in inches x 150 pixels

STYLE = {                 # fonts readable when an 11-inch-wide figure fills ~1100 pixels
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "figure.titlesize": 13,
    "figure.titleweight": "bold",
}


def figure(rows, cols, **kwargs):
    """A new matplotlib figure and its axes, in the shared style, constrained layout."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update(STYLE)
    return plt.subplots(rows, cols, layout="constrained", **kwargs)


def command():
    """The command line of this process, as it would be typed."""
    return " ".join(shlex.quote(arg) for arg in ["python", *sys.argv])


def relative(path):
    """path relative to the checkout when it is inside it (as stored in the records)."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(CHECKOUT))
    except ValueError:
        return str(path)


def save(fig, path, kind=None, data=None, made_by=None):
    """Write fig to path (PNG).  With `kind` and `data`, also store what was drawn in
    FIGURE_DATA/<path's stem>.json, for benchmarks/replot.py.  `made_by` is the command
    that measured the data (given when a stored figure is redrawn: the record's other
    fields, such as when the data was measured, are kept); default this process's."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    redraw = made_by is not None
    made_by = made_by or command()
    print(f"figure written to {path}; made by: {made_by}")
    if kind is None:
        return
    FIGURE_DATA.mkdir(parents=True, exist_ok=True)
    stored = FIGURE_DATA / f"{Path(path).stem}.json"
    record = json.loads(stored.read_text()) if redraw and stored.exists() else {}
    if not redraw:
        record["measured"] = time.strftime("%Y-%m-%d %H:%M")
    record.update({"figure": relative(path), "kind": kind, "command": made_by,
                   "drawn": time.strftime("%Y-%m-%d %H:%M"), "data": data})
    stored.write_text(json.dumps(record, indent=1, default=float) + "\n")
    print(f"figure data written to {stored}")


def bars(panel, labels, values, unit, fmt="{:.1f}"):
    """Horizontal bars with their values written at their ends."""
    positions = range(len(labels))
    panel.barh(positions, values, color=[f"C{k}" for k in positions])
    panel.set_yticks(list(positions), labels)
    panel.invert_yaxis()
    for k, value in enumerate(values):
        panel.text(value, k, " " + fmt.format(value), va="center", fontsize=10)
    panel.set_xlabel(unit)
    panel.set_xlim(0, 1.25 * max(values))
