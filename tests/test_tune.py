"""`skylite tune` (LIBSVM grid.py's habits: log2 ranges, a table, the best pair, a heatmap)
and `skylite.plotting.plot_search`, on pendigits rows shipped with skylite."""
import argparse

import numpy as np
import pytest
from hypothesis import given, strategies as st

import skylite
from skylite.cli import main, parse_values
from skylite.model_selection import KernelGridSearchCV

pytestmark = pytest.mark.filterwarnings("ignore:BlockADMM stopped at max_iter")


@pytest.fixture(scope="module")
def digits_npz(tmp_path_factory, pendigits):
    X, y = pendigits[0][:900] / 100.0, pendigits[1][:900]
    path = tmp_path_factory.mktemp("data") / "digits.npz"
    np.savez(path, X=X, y=y)
    return path, X, y


def test_tune_round_trip_prints_the_table_writes_the_best_model_and_the_heatmap(
        digits_npz, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path, X, y = digits_npz
    model, plot = tmp_path / "best.sky", tmp_path / "grid.png"
    args = [str(path), "-m", str(model), "--sigma", "0.6,1.2", "--C", "2^-1:2^5:3",
            "--cv", "3", "--features", "128", "--plot", str(plot)]
    assert main(["tune", *args]) == 0
    out = capsys.readouterr().out
    assert "C=2^-1" in out and "C=2^2" in out and "C=2^5" in out
    assert out.count("[fold ") >= 6 and "best: sigma=" in out
    best = skylite.load(model)
    search = KernelGridSearchCV(
        skylite.KernelSVC(n_features=128), {"C": [0.5, 4.0, 32.0], "sigma": [0.6, 1.2]},
        cv=3).fit(X, y)
    assert (best.C, best.sigma) == (search.best_params_["C"], search.best_params_["sigma"])
    np.testing.assert_array_equal(best.predict(X), search.predict(X))
    assert plot.stat().st_size > 10_000


@pytest.mark.parametrize("args, message", [
    (["--C", "1,-2"], "values must be finite and > 0"),
    (["--C", "2^3:2^1:1"], "START <= STOP"),
    (["--C", "1:2"], "START:STOP:STEP"),
    (["--C", "abc"], "not a number"),
    (["--alpha", "1e-3"], "--alpha applies only with --loss squared or lad"),
    (["--loss", "squared", "--C", "1"], "--C applies only with --loss hinge or logistic"),
])
def test_tune_refuses_bad_options_in_one_line(digits_npz, tmp_path, capsys, args, message):
    path = digits_npz[0]
    with pytest.raises(SystemExit) as exit_info:
        main(["tune", str(path), "-m", str(tmp_path / "m.sky"), *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_tune_refuses_more_folds_than_rows_before_any_fit(tmp_path, capsys):
    data = tmp_path / "tiny.npz"
    np.savez(data, X=np.arange(8.0).reshape(4, 2), y=np.array([0, 1, 0, 1]))
    assert main(["tune", str(data), "-m", str(tmp_path / "m.sky"), "--cv", "5"]) == 1
    assert "5 folds need at least 5 rows" in capsys.readouterr().err
    assert not (tmp_path / "m.sky").exists()


@given(st.integers(-20, 20), st.integers(0, 30), st.sampled_from([0.5, 1, 2, 3]))
def test_a_log2_range_is_the_powers_of_two_from_start_to_stop(start, span, step):
    stop = start + span
    values = parse_values(f"2^{start}:2^{stop}:{step:g}")
    expected = 2.0 ** np.arange(start, stop + 1e-9, step)
    np.testing.assert_allclose(values, expected)


def test_a_list_mixes_numbers_and_powers_of_two():
    assert parse_values("1, 2^3,0.5") == [1.0, 8.0, 0.5]
    with pytest.raises(argparse.ArgumentTypeError):
        parse_values(",")


def test_plot_search_draws_a_cell_per_grid_point_with_the_best_outlined(digits_npz):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from skylite.plotting import plot_search
    _, X, y = digits_npz
    search = KernelGridSearchCV(skylite.KernelSVC(n_features=64),
                                {"C": [1.0, 8.0], "sigma": [0.05, 0.6, 1.2]}, cv=3).fit(X, y)
    ax = plot_search(search)
    labels = [t.get_text() for t in ax.texts]
    assert len(labels) == 6
    best = 100 * search.best_score_
    assert f"{best:.1f}" in labels
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "3"]
    assert ax.get_ylabel() == "sigma" and "best outlined" in ax.get_title()
    with pytest.raises(ValueError, match="not a parameter"):
        plot_search(search, x="gamma")
    decades = KernelGridSearchCV(skylite.KernelSVC(n_features=32), {"C": [1.0, 10.0]},
                                 cv=2).fit(X, y)
    ax = plot_search(decades)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "10"]
    assert ax.get_xlabel() == "C"


def test_plot_search_draws_a_named_score_of_several_and_a_pipelines_c(digits_npz):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from skylite.plotting import plot_search
    _, X, y = digits_npz
    pipe = make_pipeline(StandardScaler(), skylite.KernelSVC(n_features=64))
    search = KernelGridSearchCV(pipe, {"kernelsvc__C": [1.0, 8.0], "kernelsvc__sigma": [2, 4]},
                                cv=2, scoring=["accuracy", "f1_macro"], refit="f1_macro"
                                ).fit(X, y)
    ax = plot_search(search)             # x="C" finds kernelsvc__C; the refit's score
    assert "f1_macro" in ax.get_title() and "best outlined" in ax.get_title()
    assert f"{100 * search.best_score_:.1f}" in [t.get_text() for t in ax.texts]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "3"]    # log2 C
    ax = plot_search(search, x="kernelsvc__C", metric="accuracy")
    best_accuracy = np.nanmax(search.cv_results_["mean_test_accuracy"])
    assert f"{100 * best_accuracy:.1f}" in [t.get_text() for t in ax.texts]
    with pytest.raises(ValueError, match="name the score to draw, one of"):
        plot_search(search, x="kernelsvc__C", metric="recall")
    unranked = KernelGridSearchCV(pipe, {"kernelsvc__C": [1.0, 8.0]}, cv=2,
                                  scoring=["accuracy", "f1_macro"], refit=False).fit(X, y)
    with pytest.raises(ValueError, match="name the score to draw"):
        plot_search(unranked, x="kernelsvc__C")
    ax = plot_search(unranked, x="kernelsvc__C", metric="accuracy")
    assert "best outlined" not in ax.get_title()


def test_tune_a_regressor_over_alpha(tmp_path, capsys, pendigits):
    X = pendigits[0][:600] / 100.0
    data = tmp_path / "reg.npz"
    np.savez(data, X=X, y=X[:, 0] * X[:, 1] + X[:, 2])
    assert main(["tune", str(data), "-m", str(tmp_path / "r.sky"), "--loss", "squared",
                 "--alpha", "1e-2,1e-4", "--sigma", "0.5", "--cv", "3", "--features", "64",
                 "-q"]) == 0
    out = capsys.readouterr().out
    assert "alpha=0.01" in out and "alpha=0.0001" in out and "best: sigma=0.5 alpha=" in out
    assert "R^2" in out and type(skylite.load(tmp_path / "r.sky")).__name__ == "KernelRidge"


def test_tune_with_method_auto_searches_on_nystroem_features(digits_npz, tmp_path, capsys):
    """--method auto: the search and the best model use Nystroem landmarks (the Gaussian
    kernel's measured choice), with the choice recorded in the model file."""
    path, X, y = digits_npz
    model = tmp_path / "auto.sky"
    assert main(["tune", str(path), "-m", str(model), "--method", "auto", "--sigma", "0.6",
                 "--C", "1,10", "--cv", "3", "--features", "128", "-q"]) == 0
    best = skylite.load(model)
    assert best.method_ == "nystroem" and best.feature_map_.n_features == 128
    search = KernelGridSearchCV(skylite.KernelSVC(n_features=128, method="auto"),
                                {"C": [1.0, 10.0], "sigma": [0.6]}, cv=3).fit(X, y)
    assert best.C == search.best_params_["C"]
    np.testing.assert_array_equal(best.predict(X), search.predict(X))
