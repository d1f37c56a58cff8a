"""Early stopping on a validation set: an explicit one (X_val, y_val) or a seeded, stratified
choice of training rows (`early_stopping=True`: scored in the fit, or held out), on real
data (pendigits)."""
import re

import numpy as np
import pytest

import skylite
from skylite import KernelRidge, KernelSVC
from skylite.admm import BlockADMM
from skylite.cli import main
from skylite._early_stopping import MONITOR_RELATIVE_RESIDUAL
from skylite.prox.coding import code_labels

pytestmark = pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")


@pytest.fixture(scope="module")
def digits(pendigits):
    # float64 rows: the validation scores (features in the fit's precision) and predictions
    # (features in the rows' precision) then take the same features
    X, y = pendigits[0][:2000].astype(np.float64) / 100.0, pendigits[1][:2000]
    return X, y


@pytest.fixture
def engine_input(monkeypatch):
    """What BlockADMM.fit receives: X, Y and the engine's validation object."""
    seen = {}
    original = BlockADMM.fit

    def fit(engine, X, Y, W0=None, **kw):
        seen.update(X=X, Y=Y, validation=engine.validation)
        return original(engine, X, Y, W0=W0, **kw)
    monkeypatch.setattr(BlockADMM, "fit", fit)
    return seen


def test_the_split_is_a_seeded_stratified_subset_disjoint_from_the_fitted_rows(
        digits, engine_input):
    X, y = digits
    kw = dict(method="rff", n_features=128, max_iter=5, early_stopping=True,
              validation_fraction=0.2)
    model = KernelSVC(random_state=3, **kw).fit(X, y)
    held = model.validation_indices_
    assert np.array_equal(held, np.unique(held)) and held[0] >= 0 and held[-1] < len(X)
    fitted = np.setdiff1d(np.arange(len(X)), held)
    # the engine fits exactly the other rows, and scores exactly the held-out ones
    np.testing.assert_array_equal(engine_input["X"], X[fitted])
    assert engine_input["Y"].shape == (len(fitted), 10)
    np.testing.assert_array_equal(engine_input["validation"].X, X[held])
    # stratified: round(0.2 n_c) rows of every class
    for c in range(10):
        n_c = np.sum(y == c)
        assert np.sum(y[held] == c) == np.floor(0.2 * n_c + 0.5)
    # sigma from the fitted rows only
    assert model.feature_map_.sigma == pytest.approx(np.sqrt(16 * X[fitted].var() / 2))
    again = KernelSVC(random_state=3, **kw).fit(X, y).validation_indices_
    other = KernelSVC(random_state=4, **kw).fit(X, y).validation_indices_
    np.testing.assert_array_equal(again, held)
    assert len(other) == len(held) and not np.array_equal(other, held)
    assert KernelSVC(n_features=128, max_iter=5).fit(X, y).validation_indices_ is None


def test_by_default_it_scores_training_rows_that_stay_in_the_fit(digits, engine_input):
    X, y = digits
    kw = dict(method="rff", n_features=128, tol=1e-4, max_iter=300, random_state=3)
    iterates = {}
    alone = KernelSVC(**kw, early_stopping=False, callback=lambda i, r, W: iterates.update(
        {i: W.copy()})).fit(X, y)
    recorded = KernelSVC(**kw, early_stopping=True, n_iter_no_change=None).fit(X, y)
    # the engine fits every row and scores about 500 of them (per class, rounded; seeded)
    np.testing.assert_array_equal(engine_input["X"], X)
    scored = recorded.validation_indices_
    assert abs(len(scored) - 500) <= 5 and np.array_equal(scored, np.unique(scored))
    np.testing.assert_array_equal(engine_input["validation"].X, X[scored])
    for c in range(10):
        assert np.sum(y[scored] == c) == np.floor(500 / len(X) * np.sum(y == c) + 0.5)
    # scoring rows changes no iterate: the recorded run is the run without early stopping
    assert recorded.alpha_ == alone.alpha_ and recorded.n_iter_ == alone.n_iter_
    np.testing.assert_array_equal(recorded.coef_, alone.coef_)
    assert "validation" in recorded.history_[-1]
    # with the rule, the model is that run's iterate at best_iteration_
    early = KernelSVC(**kw, early_stopping=True).fit(X, y)
    assert early.best_iteration_ < alone.n_iter_
    np.testing.assert_array_equal(early.coef_, iterates[early.best_iteration_])


@pytest.mark.parametrize("scoring", ["score", "loss"])
def test_early_stopping_stops_before_max_iter_and_keeps_the_best_W(digits, scoring):
    X, y = digits
    iterates = {}
    remember = lambda iteration, record, W: iterates.__setitem__(iteration, W.copy())
    model = KernelSVC(sigma=0.6, n_features=256, alpha=1e-6, tol=1e-5, max_iter=300,
                      n_threads=1, early_stopping=True, n_iter_no_change=5, scoring=scoring,
                      callback=remember).fit(X, y)
    scores = [record["validation"] for record in model.history_]
    losses = [record["validation_loss"] for record in model.history_]
    best = model.best_iteration_
    # monitored from the first iteration whose relative residuals are at most the gate
    first = next(r["iteration"] for r in model.history_
                 if r["residual_ratio"] * 1e-5 <= MONITOR_RELATIVE_RESIDUAL)
    monitored = np.array(scores if scoring == "score" else [-v for v in losses])[first - 1:]
    improved = first + int(np.argmax(monitored))       # the first best: later ones only tie
    assert model.n_iter_ == improved + 5 < 300 and not model.converged_
    # the latest of the best values
    assert best == first + int(np.flatnonzero(monitored == monitored.max())[-1])
    np.testing.assert_array_equal(model.coef_, iterates[best])
    held = model.validation_indices_
    assert model.score(X[held], y[held]) == scores[best - 1]
    # the recorded loss is the hinge loss of the kept W on the held-out rows
    Y_held, _ = code_labels(y[held], model.loss_, classes=model.classes_)
    O_held = model._model_outputs(X[held])
    assert losses[best - 1] == pytest.approx(model.loss_.value(O_held, Y_held) / len(held),
                                             rel=1e-10)


def test_the_loss_keeps_improving_after_the_accuracy_stalls(digits):
    """Monitoring the loss runs longer than the accuracy of the same run: the accuracy of
    200 held-out rows moves in steps of 1/200."""
    X, y = digits
    kw = dict(sigma=0.6, n_features=256, alpha=1e-6, tol=1e-5, max_iter=300, n_threads=1,
              early_stopping=True, validation_fraction=0.1, n_iter_no_change=10)
    by_score = KernelSVC(scoring="score", **kw).fit(X, y)
    by_loss = KernelSVC(scoring="loss", **kw).fit(X, y)
    assert by_loss.n_iter_ > by_score.n_iter_
    # the same iterates: the score run is a prefix of the loss run
    np.testing.assert_array_equal([r["validation"] for r in by_score.history_],
                                  [r["validation"] for r in by_loss.history_][
                                      :by_score.n_iter_])



def test_an_explicit_validation_set_takes_precedence(pendigits, tmp_path):
    X, y = pendigits[0] / 100.0, pendigits[1]
    X, y, X_val, y_val = X[:3000], y[:3000], X[3000:4500], y[3000:4500]   # training rows
    kw = dict(sigma=0.6, n_features=256, alpha=1e-6, tol=1e-9, max_iter=150, n_threads=1)
    # a patience it never reaches: the same engine as an early-stopped fit (a single
    # early-stopped Nystroem fit does not whiten its features, a run to tol does)
    full = KernelSVC(**kw, n_iter_no_change=10**6).fit(X, y, X_val=X_val, y_val=y_val)
    early = KernelSVC(**kw, early_stopping=True, scoring="score").fit(X, y, X_val=X_val,
                                                                      y_val=y_val)
    assert early.validation_indices_ is None                  # no split: X_val was given
    scores = [r["validation"] for r in early.history_]
    first = next(r["iteration"] for r in early.history_
                 if r["residual_ratio"] * 1e-9 <= MONITOR_RELATIVE_RESIDUAL)
    improved = first + int(np.argmax(scores[first - 1:]))
    assert early.n_iter_ == improved + 10 < full.n_iter_      # n_iter_no_change=10
    best = early.best_iteration_ - 1
    assert scores[best] == max(scores[first - 1:])
    assert early.score(X_val, y_val) == scores[best]
    # the same run as the full one up to where it stopped
    np.testing.assert_array_equal(scores, [r["validation"] for r in full.history_][:len(scores)])
    early.save(tmp_path / "early.sky")
    assert skylite.load(tmp_path / "early.sky").score(X_val, y_val) == scores[best]


def test_a_small_validation_set_is_monitored_once_the_residuals_are_small(pendigits):
    """The quick start's model with 150 held-out rows: their accuracy reaches its best by
    the fifth iteration (where the rule of patience alone would stop, far from the
    optimum); the run is not judged on it until the relative residuals are at most
    MONITOR_RELATIVE_RESIDUAL, keeps the latest of the best values seen from there, and
    ends within the tenth of a point of the run to tol on the test rows."""
    X, y, X_test, y_test = pendigits
    X, X_test = X / 100.0, X_test / 100.0
    kw = dict(method="rff", sigma=0.6, n_features=512, alpha=1e-5, n_threads=1)
    early = KernelSVC(**kw, early_stopping=True, validation_fraction=0.02).fit(X, y)
    history = early.history_
    scores = [r["validation"] for r in history]
    assert len(early.validation_indices_) == 150 and max(scores[:5]) == max(scores)
    assert early.best_iteration_ > 10 and not early.converged_
    first = next(r["iteration"] for r in history
                 if r["residual_ratio"] * 1e-3 <= MONITOR_RELATIVE_RESIDUAL)
    assert early.best_iteration_ >= first > 10
    assert scores[early.best_iteration_ - 1] == max(scores[first - 1:])
    assert all(s < max(scores[first - 1:]) for s in scores[early.best_iteration_:])
    fit_rows = np.setdiff1d(np.arange(len(X)), early.validation_indices_)
    to_tol = KernelSVC(**kw, early_stopping=False).fit(X[fit_rows], y[fit_rows])
    assert early.n_iter_ < to_tol.n_iter_
    assert early.score(X_test, y_test) >= to_tol.score(X_test, y_test) - 0.001


def test_regression_split_is_not_stratified(digits):
    X, _ = digits
    target = X[:, 0] * 3 - X[:, 1] ** 2
    model = KernelRidge(sigma=1.0, n_features=256, alpha=1e-6, early_stopping=True,
                        validation_fraction=0.25).fit(X, target)
    assert len(model.validation_indices_) == 500
    assert model.history_[-1]["validation"] > 0.95


def test_bad_early_stopping_input_is_named(digits):
    X, y = digits
    for fraction in (0, 1, 1.5, -0.1, "a", True):
        with pytest.raises(ValueError, match="validation_fraction must be None, 'auto' or a number"):
            KernelSVC(early_stopping=True, validation_fraction=fraction).fit(X, y)
    with pytest.raises(ValueError, match="early_stopping must be 'auto', True or False"):
        KernelSVC(early_stopping="yes").fit(X, y)
    with pytest.raises(ValueError, match="n_iter_no_change"):
        KernelSVC(n_iter_no_change=0).fit(X, y)
    with pytest.raises(ValueError, match="scoring must be one of"):
        KernelSVC(scoring="accuracy").fit(X, y)
    unseen = y[:100].copy()
    unseen[0] = 99
    with pytest.raises(ValueError, match="y_val contains a label not among the training"):
        KernelSVC(max_iter=2).fit(X, y, X_val=X[:100], y_val=unseen)
    with pytest.raises(ValueError, match="X_val was given without y_val"):
        KernelSVC().fit(X, y, X_val=X)
    with pytest.raises(ValueError, match="y_val was given without X_val"):
        KernelSVC().fit(X, y, y_val=y)
    with pytest.raises(ValueError, match="X_val has 5 features"):
        KernelSVC().fit(X, y, X_val=X[:, :5], y_val=y)
    rare = y.copy()
    rare[0] = 10                                   # a class of one row
    with pytest.raises(ValueError, match="no training row of class 10"):
        KernelSVC(early_stopping=True, validation_fraction=0.5).fit(X, rare)
    with pytest.raises(ValueError, match="holds out no row"):
        KernelRidge(early_stopping=True, validation_fraction=0.01).fit(X[:20], y[:20] * 1.0)


@pytest.fixture(scope="module")
def npz_files(tmp_path_factory, pendigits):
    X, y = pendigits[0] / 100.0, pendigits[1]
    folder = tmp_path_factory.mktemp("data")
    np.savez(folder / "train.npz", X=X[:2000], y=y[:2000])
    np.savez(folder / "val.npz", X=X[2000:2600], y=y[2000:2600])
    return folder / "train.npz", folder / "val.npz"


@pytest.mark.parametrize("with_val", [False, True])
def test_cli_early_stop_with_and_without_val(npz_files, tmp_path, capsys, with_val):
    train, val = npz_files
    argv = ["train", str(train), "-m", str(tmp_path / "m.sky"), "--sigma", "0.6",
            "--features", "256", "--alpha", "1e-6", "--tol", "1e-5", "--iters", "150",
            "--threads", "1", "--early-stop", "--n-iter-no-change", "4"]
    # --validation-fraction applies only without --val (with it, it is an error)
    assert main(argv + (["--val", str(val)] if with_val else
                        ["--validation-fraction", "0.15"])) == 0
    out = capsys.readouterr().out
    progress = [line for line in out.splitlines() if line.startswith("iter ")]
    assert all("validation" in line for line in progress)
    assert "early stop, best validation at iteration" in out and len(progress) < 150
    model = skylite.load(tmp_path / "m.sky")
    assert model.n_iter_ == len(progress) and model.early_stopping
    if with_val:
        assert "held out" not in out and "validation accuracy:" in out
    else:
        assert "300 training rows held out (--validation-fraction 0.15)" in out


def test_cli_rejects_a_bad_validation_fraction(npz_files, tmp_path, capsys):
    train, _ = npz_files
    with pytest.raises(SystemExit) as exit_:
        main(["train", str(train), "-m", str(tmp_path / "m.sky"), "--early-stop",
              "--validation-fraction", "1.5"])
    assert exit_.value.code == 2 and "must be < 1" in capsys.readouterr().err
    # "none" (the default: training rows scored) is an option's value like any other
    with pytest.raises(SystemExit) as exit_:
        main(["train", str(train), "-m", str(tmp_path / "m.sky"), "--val", str(train),
              "--validation-fraction", "none"])
    assert exit_.value.code == 2 and "applies only with" in capsys.readouterr().err


def test_cli_scores_training_rows_by_default(npz_files, tmp_path, capsys):
    train, _ = npz_files
    argv = ["train", str(train), "-m", str(tmp_path / "m.sky"), "--sigma", "0.6",
            "--features", "256", "--alpha", "1e-6", "--iters", "150", "--threads", "1",
            "--early-stop"]
    for given in ([], ["--validation-fraction", "none"]):
        assert main(argv + given) == 0
        out = capsys.readouterr().out
        assert re.search(r"early stopping scored 50\d of the training rows, which stay in "
                         r"the fit", out) and "held out" not in out
        model = skylite.load(tmp_path / "m.sky")
        assert model.validation_fraction is None and model.alpha == 1e-6


def test_cli_scoring_loss_monitors_the_validation_loss(npz_files, tmp_path, capsys):
    train, val = npz_files
    argv = ["train", str(train), "-m", str(tmp_path / "m.sky"), "--sigma", "0.6",
            "--features", "256", "--alpha", "1e-6", "--tol", "1e-5", "--iters", "150",
            "--threads", "1", "--val", str(val)]
    assert main(argv + ["--early-stop", "--scoring", "loss"]) == 0
    out = capsys.readouterr().out
    progress = [line for line in out.splitlines() if line.startswith("iter ")]
    losses = [float(line.split("(loss ")[1].split(")")[0]) for line in progress]
    model = skylite.load(tmp_path / "m.sky")
    assert model.scoring == "loss" and len(losses) == model.n_iter_ < 150
    best = int(out.split("early stop, best validation at iteration ")[1].split(")")[0])
    assert losses[best - 1] < min(losses[best:], default=np.inf)
    assert model.n_iter_ - 10 <= best
    with pytest.raises(SystemExit) as exit_:      # --scoring applies only with early stopping
        main(argv + ["--no-early-stop", "--scoring", "loss"])
    assert exit_.value.code == 2 and "--scoring" in capsys.readouterr().err


def test_auto_early_stopping_is_on_above_10000_rows(pendigits):
    """early_stopping="auto" (the default): a held-out split above 10,000 training rows,
    none at or below it, none with X_val given (that set is used) and none for the ridge
    problems that solver="auto" may solve in closed form."""
    X, y = pendigits[0] / 100.0, pendigits[1]                     # 7,494 rows
    big, big_y = np.vstack([X, X]), np.concatenate([y, y])        # 14,988 rows
    fast = dict(sigma=0.6, n_features=64, max_iter=2)
    model = KernelSVC(**fast).fit(big, big_y)
    assert KernelSVC().early_stopping == "auto"
    # at most 500 rows: 500 / 14,988 of each class
    assert model.early_stopping_ and 495 <= len(model.validation_indices_) <= 505
    assert all("validation" in record for record in model.history_)
    at_limit = KernelSVC(**fast).fit(big[:10_000], big_y[:10_000])
    assert not at_limit.early_stopping_ and at_limit.validation_indices_ is None
    given = KernelSVC(**fast).fit(big, big_y, X_val=X[:500], y_val=y[:500])
    assert not given.early_stopping_ and given.validation_indices_ is None
    ridge = KernelRidge(**fast).fit(big, big_y * 1.0)
    assert not ridge.early_stopping_ and ridge.solver_ == "direct"
    off = KernelSVC(**fast, early_stopping=False).fit(big, big_y)
    assert not off.early_stopping_ and off.validation_indices_ is None


def test_the_cli_default_is_the_estimators(tmp_path):
    from skylite.cli import build_parser
    args = build_parser().parse_args(["train", "x.svm", "-m", str(tmp_path / "m")])
    assert args.early_stop == KernelSVC().get_params()["early_stopping"] == "auto"


@pytest.mark.parametrize("cls", [KernelSVC, skylite.KernelLogisticRegression])  # Anderson
def test_history_holds_python_numbers(digits, cls):
    X, y = digits
    model = cls(sigma=0.6, n_features=64, max_iter=6).fit(X, y, X_val=X[:200], y_val=y[:200])
    for record in model.history_:
        assert all(type(value) in (int, float, bool, str) for value in record.values()), record
    assert "np." not in repr(model.history_)
