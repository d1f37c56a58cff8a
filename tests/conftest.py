"""Shared fixtures: small real datasets."""
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from skylite.datasets import load_pendigits

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load_shared(name):
    """A dataset from ../shared/data (beside the checkout), or skip the test without it."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} not found (../shared/data beside the checkout)")
    return np.load(path)


@pytest.fixture(scope="session")
def mnist600():
    """The first 600 MNIST training rows, float64 pixels in [0, 1]."""
    return load_shared("mnist.npz")["X_train"][:600].astype(np.float64)


@pytest.fixture(scope="session")
def mnist3000():
    """The first 3,000 MNIST training rows (float64 pixels in [0, 1]) and their labels."""
    data = load_shared("mnist.npz")
    return data["X_train"][:3000].astype(np.float64), data["y_train"][:3000]


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
