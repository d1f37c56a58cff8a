"""skylite.plotting draws a real fitted model's history_ (pendigits), and says which extra to
install when matplotlib is missing."""
import sys

import numpy as np
import pytest

from skylite import KernelRidge, KernelSVC
from skylite.plotting import plot_history

pytestmark = pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")


@pytest.fixture(scope="module")
def plt():
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is not installed "
                                                          "(pip install '.[test]')")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    yield plt
    plt.close("all")


@pytest.fixture(scope="module")
def fitted(pendigits):
    X, y = pendigits[0][:1500] / 100.0, pendigits[1][:1500]
    return KernelSVC(sigma=0.6, n_features=256, alpha=1e-4, max_iter=40, early_stopping=True,
                     random_state=0).fit(X, y)


def lines_of(panel):
    return [(line.get_xdata(), line.get_ydata()) for line in panel.get_lines()]


def test_every_panel_has_one_point_per_record(plt, fitted):
    history = fitted.history_
    axes = plot_history(fitted)
    assert axes.shape == (2, 2)
    objective, residuals, rho, validation = axes.ravel()
    iterations = [r["iteration"] for r in history]
    (x, y), = lines_of(objective)
    assert list(x) == iterations and np.allclose(y, [r["objective"] for r in history])
    (_, primal), (_, dual) = lines_of(residuals)
    assert np.allclose(primal, [r["primal"] for r in history])
    assert np.allclose(dual, [r["dual"] for r in history])
    (_, rhos), = lines_of(rho)
    assert np.allclose(rhos, [r["rho"] for r in history])
    (_, scores), (best_x, best_y) = lines_of(validation)
    assert np.allclose(scores, [r["validation"] for r in history])
    kept = history[fitted.best_iteration_ - 1]
    assert list(best_x) == [kept["iteration"]] and list(best_y) == [kept["validation"]]


def test_seconds_axis_and_a_second_run_on_the_same_axes(plt, fitted):
    axes = plot_history(fitted, x="seconds", label="first")
    plot_history(fitted.history_[:10], x="seconds", axes=axes, label="first 10")
    (x, _), (x10, _) = lines_of(axes[0, 0])
    assert np.allclose(x, [r["elapsed"] for r in fitted.history_])
    assert len(x10) == 10 and np.all(np.diff(x) > 0)
    assert [t.get_text() for t in axes[0, 0].get_legend().get_texts()] == ["first",
                                                                            "first 10"]


def test_without_a_validation_set_the_panel_says_so(plt, pendigits):
    X, y = pendigits[0][:500] / 100.0, pendigits[1][:500].astype(float)
    model = KernelRidge(sigma=0.6, n_features=64, solver="admm", max_iter=15).fit(X, y)
    panel = plot_history(model)[1, 1]
    assert not panel.get_lines()
    assert "no validation set" in panel.texts[0].get_text()


def test_refuses_what_it_cannot_draw(plt, fitted):
    with pytest.raises(ValueError, match="x must be one of"):
        plot_history(fitted, x="rho")
    with pytest.raises(ValueError, match="history is empty"):
        plot_history([])
    with pytest.raises(ValueError, match="4 Axes"):
        plot_history(fitted, axes=plt.subplots(1, 2)[1])


def test_without_matplotlib_the_error_names_the_extra(fitted, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r'skylite\[plot\]'):
        plot_history(fitted)
