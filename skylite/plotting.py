"""Pictures of a fitted model's ADMM run, drawn from its ``history_`` with matplotlib.

matplotlib is optional: install it with ``pip install "skylite[plot]"`` (the ``docs`` extra
has it too).  ``import skylite.plotting`` works without it; drawing raises ImportError
naming the extra.
"""
import numpy as np

__all__ = ["plot_history"]

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
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError('skylite.plotting needs matplotlib: pip install "skylite[plot]" '
                          '(or the "docs" extra)') from exc
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
