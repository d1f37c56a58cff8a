"""save / load and pickling of fitted models; atomic, checked model files; all-or-nothing
refits."""
import pickle
import subprocess
import sys
import time
import warnings
from pathlib import Path

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
        KernelSVC(sigma=0.6, method="rff", n_features=300, n_blocks=3,
                  alpha=1e-4).fit(X, names[y]),
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


RESAVE = Path(__file__).parent / "faults" / "resave_forever.py"


@pytest.fixture(scope="module")
def two_models(data, tmp_path_factory):
    """Two saved models of the same shape (s = 4096, 10 classes: 330 KB files)."""
    X, y, _, _ = data
    folder = tmp_path_factory.mktemp("models")
    paths = []
    for seed in (0, 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", skylite.admm.ConvergenceWarning)   # 3 iterations
            model = KernelSVC(sigma=0.6, n_features=4096, alpha=1e-4, max_iter=3,
                              random_state=seed).fit(X, y)
        paths.append(folder / f"model{seed}.sky")
        model.save(paths[-1])
    return [skylite.load(p) for p in paths], paths


def _same_model(loaded, models):
    return any(np.array_equal(loaded.coef_, m.coef_) for m in models)


@pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")
def test_a_flipped_byte_anywhere_is_refused(data, tmp_path):
    X, y, _, _ = data
    path = tmp_path / "m.sky"
    KernelSVC(sigma=0.6, n_features=32, max_iter=20).fit(X, y).save(path)
    raw = path.read_bytes()
    rng = np.random.default_rng(0)
    positions = set(rng.integers(0, len(raw), 80).tolist())
    positions |= {0, 8, 12, 16, 20, len(raw) // 2, len(raw) - 33, len(raw) - 1}
    bad = tmp_path / "bad.sky"
    for position in sorted(positions):
        flipped = bytearray(raw)
        flipped[position] ^= 1 << int(rng.integers(8))
        bad.write_bytes(bytes(flipped))
        with pytest.raises(ValueError, match="skylite model") as info:
            skylite.load(bad)
        assert str(bad) in str(info.value)


def test_killing_a_resave_leaves_the_old_or_the_new_model(two_models, tmp_path):
    """kill -9 at random moments while a process re-saves two models over one file: the
    file is always one of the two complete models, never empty or mixed."""
    models, paths = two_models
    dest = tmp_path / "dest.sky"
    models[0].save(dest)
    rng = np.random.default_rng(1)
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, str(RESAVE), *map(str, paths), str(dest)],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.02, 0.4))
        finally:
            proc.kill()
            proc.wait()
        assert _same_model(skylite.load(dest), models)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "dest.sky"]
    assert all(name.startswith(".dest.sky.") for name in leftovers)   # hidden temporaries


def test_a_reader_racing_a_writer_never_loads_a_mixture(two_models, tmp_path):
    models, paths = two_models
    dest = tmp_path / "dest.sky"
    models[0].save(dest)
    proc = subprocess.Popen([sys.executable, str(RESAVE), *map(str, paths), str(dest), "4"],
                            stdout=subprocess.PIPE, text=True)
    loads = 0
    try:
        assert proc.stdout.readline().strip() == "ready"
        stop = time.monotonic() + 2.0
        while time.monotonic() < stop:
            assert _same_model(skylite.load(dest), models)
            loads += 1
    finally:
        proc.kill()
        proc.wait()
    assert loads >= 20


@pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")
def test_a_refit_that_fails_or_is_interrupted_leaves_the_model_unchanged(data):
    X, y, Xt, _ = data
    model = KernelSVC(sigma=0.6, n_features=256, alpha=1e-4, max_iter=30).fit(X, y)
    before = model.decision_function(Xt)
    state = dict(model.__dict__)
    model.set_params(sigma=3.0, memory_budget=1)
    with pytest.raises(MemoryError):
        model.fit(X, y)
    model.set_params(sigma=0.6, memory_budget=None, random_state=7)

    def interrupt(iteration, record, W):
        if iteration == 3:
            raise KeyboardInterrupt
    model.set_params(callback=interrupt)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, y)
    assert np.array_equal(model.decision_function(Xt), before)
    assert set(model.__dict__) - {"callback", "sigma", "memory_budget", "random_state"} \
        == set(state) - {"callback", "sigma", "memory_budget", "random_state"}
    fresh = KernelSVC(sigma=0.6, n_features=256, callback=interrupt)
    with pytest.raises(KeyboardInterrupt):
        fresh.fit(X, y)
    assert not hasattr(fresh, "coef_") and not hasattr(fresh, "feature_map_")
