"""save / load and pickling of fitted models."""
import pickle

import numpy as np
import pytest

import skylite
from skylite import KernelLogisticRegression, KernelRidge, KernelSVC
from skylite.kernels import Laplacian
from skylite.sketch import Fastfood, TensorSketch


@pytest.fixture(scope="module")
def data(pendigits):
    X, y, Xt, yt = pendigits
    return X[:800] / 100.0, y[:800], Xt[:300] / 100.0, yt[:300]


def fitted_models(X, y):
    names = np.array(list("abcdefghij"))
    return [
        KernelSVC(sigma=0.6, n_features=300, n_blocks=3, alpha=1e-4).fit(X, names[y]),
        KernelLogisticRegression(Laplacian(4.0), n_features=128, alpha=1e-4).fit(X, y),
        KernelRidge(sigma=1.0, n_features=64, alpha=1e-4).fit(X, X[:, 0] - X[:, 1]),
        KernelSVC(feature_map=Fastfood(100, sigma=0.6), alpha=1e-4).fit(X, y % 2 == 0),
        KernelSVC("polynomial", degree=2, gamma=1.0, coef0=1.0, n_features=100).fit(X, y),
    ]


@pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")
def test_save_load_round_trip_is_exact(data, tmp_path):
    X, y, Xt, _ = data
    for k, model in enumerate(fitted_models(X, y)):
        path = tmp_path / f"model{k}.sky"
        model.save(path)
        again = skylite.load(path)
        assert type(again) is type(model)
        np.testing.assert_array_equal(again.coef_, model.coef_)
        if hasattr(model, "decision_function"):      # classifiers only
            np.testing.assert_array_equal(again.decision_function(Xt),
                                          model.decision_function(Xt))
        np.testing.assert_array_equal(again.predict(Xt), model.predict(Xt))
        assert repr(again.get_params()) == repr(model.get_params())
        # small: the header and W only, no random numbers
        assert path.stat().st_size < model.coef_.nbytes + 4096
        restored = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(restored.predict(Xt), model.predict(Xt))


def test_pickled_feature_maps_rebuild_their_operator(data):
    X = data[0]
    fmap = TensorSketch(64, degree=3, n_blocks=2).fit(X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(fmap)).transform(X),
                                  fmap.transform(X))


@pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")   # short fits
def test_corrupted_or_foreign_files_are_rejected(data, tmp_path):
    X, y, _, _ = data
    model = KernelSVC(sigma=0.6, n_features=32, max_iter=50).fit(X, y)
    path = tmp_path / "m.sky"
    model.save(path)
    raw = path.read_bytes()
    cases = {
        "foreign": b"PK\x03\x04 not a model",
        "truncated": raw[:-8],
        "bad header": raw[:16] + b"#" + raw[17:],   # JSON must start with {
        "empty": b"",
    }
    for name, content in cases.items():
        bad = tmp_path / f"{name}.sky"
        bad.write_bytes(content)
        with pytest.raises(ValueError, match="skylite model"):
            skylite.load(bad)
    with pytest.raises(ValueError, match="not fitted"):
        KernelSVC().save(tmp_path / "unfitted.sky")
    with pytest.raises(ValueError, match="JSON"):
        KernelSVC(sigma=0.6, n_features=32, max_iter=50, random_state=np.random.default_rng(0)
                  ).fit(X, y).save(tmp_path / "rng.sky")
