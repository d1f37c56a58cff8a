"""precision="auto" (the default): the feature blocks follow the training rows' dtype."""
import numpy as np
import pytest
import scipy.sparse as sp

from skylite import KernelRidge, KernelSVC, load
from skylite.admm import BlockADMM, EngineSettings
from skylite.admm.settings import FLOAT32_MIN_TOL
from skylite.prox import get_loss
from skylite.prox.coding import code_labels
from skylite.sketch import GaussianRFF

pytestmark = pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")


@pytest.mark.parametrize("sparse", [False, True])
def test_auto_is_float32_for_float32_rows_and_float64_otherwise(pendigits, sparse):
    X, y = pendigits[0][:600] / np.float32(100), pendigits[1][:600]
    assert X.dtype == np.float32
    kw = dict(sigma=0.6, method="rff", n_features=256, C=10.0, max_iter=30)
    for rows, resolved in ((X, "float32"), (X.astype(np.float64), "float64")):
        rows = sp.csr_matrix(rows) if sparse else rows
        auto = KernelSVC(**kw).fit(rows, y)
        pinned = KernelSVC(precision=resolved, **kw).fit(rows, y)
        assert auto.precision == "auto" and auto.precision_ == resolved
        assert np.array_equal(auto.coef_, pinned.coef_)      # the same run, bit for bit
    single = KernelSVC(**kw).fit(X, y)
    double = KernelSVC(**kw).fit(X.astype(np.float64), y)
    assert not np.array_equal(single.coef_, double.coef_)
    assert np.allclose(single.coef_, double.coef_, rtol=1e-3, atol=1e-4)


def test_auto_computes_in_float64_below_the_tol_float32_can_reach(pendigits):
    X, y = pendigits[0][:400] / np.float32(100), pendigits[1][:400]
    kw = dict(sigma=0.6, method="rff", n_features=128, max_iter=5)
    assert KernelSVC(tol=FLOAT32_MIN_TOL, **kw).fit(X, y).precision_ == "float32"
    assert KernelSVC(tol=FLOAT32_MIN_TOL / 10, **kw).fit(X, y).precision_ == "float64"
    with pytest.raises(ValueError, match="tol=1e-07 is below 1e-06"):
        KernelSVC(tol=1e-7, cache_precision="bfloat16", **kw).fit(X, y)


def test_a_pinned_precision_ignores_the_rows_dtype(pendigits):
    X, y = pendigits[0][:400] / np.float32(100), pendigits[0][:400, 0] / 100.0
    model = KernelRidge(sigma=0.6, method="rff", n_features=128, alpha=1e-3,
                        precision="float64", solver="admm", max_iter=20).fit(X, y)
    assert model.precision_ == "float64"


def test_a_saved_model_keeps_its_resolved_precision(pendigits, tmp_path):
    X, y, Xt = pendigits[0][:600], pendigits[1][:600], pendigits[2][:300]
    model = KernelSVC(sigma=60.0, method="nystroem", n_features=128, max_iter=20).fit(X, y)
    assert model.precision_ == "float32"
    model.save(tmp_path / "m.sky")
    again = load(tmp_path / "m.sky")
    assert again.precision == "auto" and again.precision_ == "float32"
    assert np.array_equal(again.decision_function(Xt), model.decision_function(Xt))


def test_a_model_pickled_without_precision_predicts_as_it_was_fitted(pendigits):
    X, y, Xt = pendigits[0][:400].astype(np.float64), pendigits[1][:400], pendigits[2][:200]
    model = KernelSVC(sigma=60.0, method="rff", n_features=64, max_iter=10).fit(X, y)
    state = model.__getstate__()
    del state["precision_"]                  # as a model pickled by an earlier version
    again = KernelSVC.__new__(KernelSVC)
    again.__setstate__(state)
    assert again.precision_ == "float64"
    assert np.array_equal(again.predict(Xt), model.predict(Xt))


def test_the_engine_resolves_auto_from_its_rows(pendigits):
    X, y = pendigits[0][:500] / np.float32(100), pendigits[1][:500]
    fmap = GaussianRFF(128, sigma=0.6, n_blocks=2, random_state=0).fit(X)
    hinge = get_loss("hinge")
    Y, _ = code_labels(y, hinge)
    auto = BlockADMM(fmap, hinge, "l2", 1e-3, max_iter=10).fit(X, Y)
    single = BlockADMM(fmap, hinge, "l2", 1e-3, max_iter=10, precision="float32").fit(X, Y)
    assert np.array_equal(auto.coef_, single.coef_)
    assert auto.method_.settings.precision == "float32"
    assert EngineSettings().precision == "auto"
