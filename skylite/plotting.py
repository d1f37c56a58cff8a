"""Pictures drawn with matplotlib: a fitted model's ADMM run (``plot_history``, from its
``history_``) and a grid search's mean cross-validation scores (``plot_search``, from its
``cv_results_``).

matplotlib is optional: install it with ``pip install "skylite[plot]"`` (the ``docs`` extra
has it too).  ``import skylite.plotting`` works without it; drawing raises ImportError
naming the extra.
"""
import numpy as np

__all__ = ["plot_history", "plot_search"]

_X_AXES = {"iteration": "iteration", "seconds": "seconds since the fit started"}


def plot_history(model, *, x="iteration", axes=None, label=None):
    """Draw an ADMM run: objective, residuals, rho and validation score per iteration.

    Four panels, one record of ``history_`` per point, against the iteration number or the
    seconds since the fit started (each record's ``elapsed``):

    1. the objective F(W) = (1/n) sum_i V(y_i, o_i) + alpha r(W) that the iteration reads
       off (log scale when it stays positive);
    2. the primal and dual residuals (solid and dashed, log scale); the run stops when both
       fall below their tolerances, set by ``tol`` (docs/engine.md);
    3. the ADMM penalty rho, which residual balancing changes every 10 iterations;
    4. the validation score (accuracy, or R^2 for regression) when the fit had a validation
       set (``early_stopping=True`` or ``X_val``), with the kept iteration
       (``best_iteration_``) marked; otherwise the panel says there was none.  Its vertical
       axis spans the upper 90% of the scores, so the first iterations' low scores may lie
       below it.

    Call it again with the same ``axes`` and another ``label`` to compare runs.

    Parameters
    ----------
    model : fitted estimator, BlockADMM or list of dict
        A fitted skylite estimator or :class:`skylite.admm.BlockADMM` (anything with a
        ``history_``), or the ``history_`` list itself.
    x : {"iteration", "seconds"}, default="iteration"
        The horizontal axis.
    axes : array of 4 matplotlib Axes or None, default=None
        Where to draw (flattened in the order above); None makes a new 2 x 2 figure.
    label : str or None, default=None
        The legend entry of this run, for several runs on the same axes.

    Returns
    -------
    axes : ndarray of matplotlib Axes
        The four panels, shape (2, 2) for a new figure, else the ``axes`` given.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    """
    plt = _pyplot()
    if x not in _X_AXES:
        raise ValueError(f"x must be one of {sorted(_X_AXES)}, got {x!r}")
    history = getattr(model, "history_", model)
    if not history:
        raise ValueError("the history is empty: fit the model with the ADMM solver first")
    if axes is None:
        axes = plt.subplots(2, 2, figsize=(10, 6.5), layout="constrained")[1]
    panels = np.asarray(axes).ravel()
    if panels.size != 4:
        raise ValueError(f"axes must hold 4 Axes, got {panels.size}")
    t = np.array([r["iteration"] if x == "iteration" else r["elapsed"] for r in history])
    objective = np.array([r["objective"] for r in history])
    color = panels[0].plot(t, objective, label=label)[0].get_color()
    if np.all(objective > 0):
        panels[0].set_yscale("log")
    panels[0].set_title("objective F(W)")
    panels[1].plot(t, [r["primal"] for r in history], color=color, label="primal")
    panels[1].plot(t, [r["dual"] for r in history], color=color, linestyle="--",
                   label="dual")
    panels[1].set_yscale("log")
    panels[1].set_title("primal (solid) and dual (dashed) residuals")
    panels[2].plot(t, [r["rho"] for r in history], color=color, drawstyle="steps-post",
                   label=label)
    panels[2].set_yscale("log")
    panels[2].set_title("rho")
    _plot_validation(panels[3], history, t, color, label,
                     getattr(model, "best_iteration_", None))
    for panel in panels:
        panel.set_xlabel(_X_AXES[x])
        panel.grid(True, which="major", alpha=0.3)
    if label is not None:
        panels[0].legend()
    return axes


def _plot_validation(panel, history, t, color, label, best_iteration):
    """The validation score panel; a note instead when no record has a score."""
    scored = [k for k, r in enumerate(history) if "validation" in r]
    panel.set_title("validation score")
    if not scored:
        panel.text(0.5, 0.5, "no validation set\n(early_stopping=True or X_val)",
                   ha="center", va="center", transform=panel.transAxes)
        return
    panel.plot(t[scored], [history[k]["validation"] for k in scored], color=color,
               label=label)
    curves = [np.asarray(line.get_ydata()) for line in panel.get_lines()
              if len(line.get_ydata()) > 1]             # every run drawn here, not markers
    low = min(np.percentile(curve, 10) for curve in curves)
    high = max(curve.max() for curve in curves)
    pad = 0.3 * max(high - low, 1e-3)
    panel.set_ylim(low - pad, high + pad)
    if best_iteration is not None and 0 < best_iteration <= len(history):
        best = history[best_iteration - 1]
        if "validation" in best:
            marked = any(line.get_label() == "kept iteration" for line in panel.get_lines())
            panel.plot(t[best_iteration - 1], best["validation"], "o", color=color,
                       label="_" if marked else "kept iteration")
            panel.legend(handles=[line for line in panel.get_lines()
                                  if line.get_label() == "kept iteration"], loc="best")


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError('skylite.plotting needs matplotlib: pip install "skylite[plot]" '
                          '(or the "docs" extra)') from exc
    return plt


def plot_search(search, *, x="C", y=None, ax=None, title=None, metric=None):
    """Draw a grid search's mean cross-validation score as a heatmap over two parameters.

    One cell per pair of values of `x` (columns, labelled by their log2 when they are
    powers of two, as in LIBSVM's grid.py) and `y` (rows), coloured by ``mean_test_score`` and labelled with it
    (as a percentage for accuracy); the best grid point is outlined.  Grid points that
    racing dropped are hatched: their mean is over the folds they ran.  Where several grid
    points share a cell (a third parameter), the cell shows the best of them.

    Parameters
    ----------
    search : fitted KernelGridSearchCV or GridSearchCV
        Anything with ``cv_results_`` and ``best_index_``.
    x : str, default="C"
        The parameter along the horizontal axis (for a Pipeline's search, "C" finds its last
        step's "<step>__C").
    y : str or None, default=None
        The parameter along the vertical axis; None: the other parameter of the grid
        (sigma, gamma, ...), or a single row if the grid has only `x`.
    ax : matplotlib Axes or None, default=None
        Where to draw; None makes a new figure.
    title : str or None, default=None
        The title; None says what is drawn.
    metric : str or None, default=None
        For a search of several scorings, the name of the one drawn (``mean_test_<name>``);
        None: the one `refit` names.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.
    """
    plt = _pyplot()
    results = search.cv_results_
    names = [key[len("param_"):] for key in results if key.startswith("param_")]
    if x not in names:          # a Pipeline's names its last step: "kernelsvc__C"
        x = next((name for name in names if name.rpartition("__")[2] == x), x)
    if x not in names:
        raise ValueError(f"x={x!r} is not a parameter of the search; it has {names}")
    if y is None:
        others = [name for name in names if name != x]
        y = others[0] if others else None
    elif y not in names or y == x:
        raise ValueError(f"y={y!r} must be another parameter of the search; it has {names}")
    params = results["params"]
    xs = sorted({p[x] for p in params if x in p})
    ys = sorted({p[y] for p in params if y in p}) if y is not None else [None]
    if metric is None:
        metric = "score" if "mean_test_score" in results else getattr(search, "refit", None)
    if not isinstance(metric, str) or f"mean_test_{metric}" not in results:
        scored = [key[len("mean_test_"):] for key in results if key.startswith("mean_test_")]
        raise ValueError(f"metric={metric!r}: name the score to draw, one of {scored}")
    mean = np.asarray(results[f"mean_test_{metric}"], dtype=float)
    dropped = np.asarray(getattr(search, "dropped_after_", np.full(len(params), -1))) >= 0
    grid = np.full((len(ys), len(xs)), np.nan)
    hatched = np.zeros(grid.shape, dtype=bool)
    for i, p in enumerate(params):
        if x not in p or (y is not None and y not in p):
            continue
        r, c = ys.index(p.get(y)), xs.index(p[x])
        if not mean[i] <= grid[r, c]:              # the best of a cell's points (NaN: none)
            grid[r, c], hatched[r, c] = mean[i], dropped[i]
    if ax is None:
        ax = plt.subplots(figsize=(1.1 * len(xs) + 3, 0.7 * len(ys) + 2.2),
                          layout="constrained")[1]
    image = ax.imshow(grid, cmap="viridis", aspect="auto", origin="lower")
    ax.figure.colorbar(image, ax=ax, label="mean CV score")
    accuracy = np.nanmax(grid) <= 1 and np.nanmin(grid) >= 0
    for r in range(len(ys)):
        for c in range(len(xs)):
            if np.isnan(grid[r, c]):
                continue
            text = f"{100 * grid[r, c]:.1f}" if accuracy else f"{grid[r, c]:.3g}"
            ax.text(c, r, text, ha="center", va="center", fontsize=9,
                    color=_text_colour(image.cmap(image.norm(grid[r, c]))))
            if hatched[r, c]:
                ax.add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False,
                                           hatch="//", edgecolor="grey", linewidth=0))
    best = params[search.best_index_] if hasattr(search, "best_index_") else {}
    if x in best:
        r = ys.index(best.get(y)) if y is not None else 0
        ax.add_patch(plt.Rectangle((xs.index(best[x]) - 0.5, r - 0.5), 1, 1, fill=False,
                                   edgecolor="red", linewidth=2.5))
    # powers of two (LIBSVM's grid.py) are labelled by their log2, other values as they are
    logs = (x.rpartition("__")[2] in ("C", "alpha", "gamma")       # a Pipeline's too
            and all(float(np.log2(v)).is_integer() for v in xs))
    ax.set_xticks(range(len(xs)), [f"{np.log2(v):g}" if logs else f"{v:g}" for v in xs])
    ax.set_xlabel(f"log2 {x}" if logs else x)
    ax.set_yticks(range(len(ys)), [f"{v:g}" if isinstance(v, (int, float)) else str(v)
                                   for v in ys] if y is not None else [""])
    ax.set_ylabel(y or "")
    what = "accuracy" if metric == "score" else metric
    what = f"{what} (%)" if accuracy else ("score" if metric == "score" else metric)
    title = title or (f"mean cross-validation {what}" + ("; best outlined in red" if best
                                                          else ""))
    if hatched.any():
        title += "\n(hatched: dropped by racing, mean over the folds it ran)"
    ax.set_title(title)
    return ax


def _text_colour(rgba):
    """Black on a light cell, white on a dark one (the cell's relative luminance, WCAG)."""
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3])
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 else "white"
