"""Shared fixtures: small real datasets (pendigits ships with skylite; the rest is in
tests/data)."""
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from skylite.datasets import load_pendigits

DATA = Path(__file__).resolve().parent / "data"


class Stop(Exception):
    """Raised by a test's callback to interrupt a fit."""


def interrupted_then_resumed(make, X, y, path, at):
    """An estimator's checkpoint round trip: `make(callback=...)` (an estimator writing its
    checkpoint to `path`) is interrupted at iteration `at`, its checkpoint must survive, and
    `make()` resumes from it; returns the resumed, fitted estimator (whose finished run has
    removed the checkpoint)."""
    def kill(it, record, coef):
        if it == at:
            raise Stop
    with pytest.raises(Stop):
        make(callback=kill).fit(X, y)
    assert path.exists()
    resumed = make().fit(X, y)
    assert not path.exists()
    return resumed


def kept_the_best_validated(model, X_val, y_val):
    """A fit with validation rows kept its best-scoring iterate, and that model scores the
    recorded best on the validation rows; returns the recorded scores."""
    scores = [r["validation"] for r in model.history_]
    assert scores[model.best_iteration_ - 1] == max(scores)
    assert model.score(X_val, y_val) == pytest.approx(max(scores))
    return scores


@pytest.fixture(scope="session")
def _mnist():
    """The MNIST sample (tests/data/README.md): float32 pixels k / 255, as in MNIST, and labels."""
    with np.load(DATA / "mnist_sample.npz") as z:
        return z["pixels"].astype(np.float32) / np.float32(255), z["labels"]


@pytest.fixture(scope="session")
def mnist600(_mnist):
    """The first 600 MNIST training rows, float64 pixels in [0, 1]."""
    return _mnist[0][:600].astype(np.float64)


@pytest.fixture(scope="session")
def mnist3000(_mnist):
    """The first 3,000 MNIST training rows (float64 pixels in [0, 1]) and their labels."""
    return _mnist[0][:3000].astype(np.float64), _mnist[1][:3000]


@pytest.fixture(scope="session")
def pendigits():
    """Pendigits (ships with skylite): X_train, y_train, X_test, y_test."""
    return load_pendigits()


@pytest.fixture(scope="session")
def digits_small(pendigits):
    """300 pendigits rows scaled to [0, 1]: a small real dense input."""
    return pendigits[0][:300].astype(np.float64) / 100.0


def find_mpiexec():
    """The mpiexec beside the interpreter (the venv's, from the mpich wheel) or on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


@pytest.fixture(scope="session")
def mpiexec():
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install '.[test]')")
    path = find_mpiexec()
    if path is None:
        pytest.skip("no mpiexec beside the interpreter or on PATH (pip install mpich)")
    return path
