"""Guards before native code: malformed CSR input is refused with one clear error before
scipy or native code reads it (an index out of range would be read out of bounds, a
decreasing indptr crashes scipy); impossible sizes are refused arithmetically; thread counts
follow the OpenMP limit and never exceed the cores."""
import numpy as np
import pytest
import scipy.sparse as sp

from skylite import KernelSVC
from skylite.kernels import Gaussian
from skylite.sketch import GaussianRFF, Nystroem


def _malformed(kind):
    S = sp.csr_matrix(np.random.default_rng(0).random((200, 16)))
    if kind == "index too large":
        S.indices[5] = 10**6
    elif kind == "index 16":
        S.indices[5] = 16
    elif kind == "negative index":
        S.indices[5] = -7
    elif kind == "decreasing indptr":
        S.indptr[3] = S.indptr[5] + 1
    elif kind == "short indptr":
        S.indptr = S.indptr[:-1]
    return S


KINDS = ["index too large", "index 16", "negative index", "decreasing indptr", "short indptr"]
MESSAGES = {"index too large": "index 1000000 is outside \\[0, 16\\)",
            "index 16": "index 16 is outside \\[0, 16\\)",
            "negative index": "index -7 is outside",
            "decreasing indptr": "indptr decreases at row",
            "short indptr": "indptr has 200 entries, expected 201"}


@pytest.mark.filterwarnings("ignore::skylite.admm.ConvergenceWarning")
@pytest.mark.parametrize("kind", KINDS)
def test_fit_predict_and_transform_refuse_a_malformed_csr(kind):
    S = _malformed(kind)
    y = np.arange(200) % 2
    match = "malformed sparse matrix: " + MESSAGES[kind]
    with pytest.raises(ValueError, match=match):
        KernelSVC(n_features=64, sigma=1.0, max_iter=5).fit(S, y)
    good = sp.csr_matrix(np.random.default_rng(1).random((200, 16)))
    model = KernelSVC(n_features=64, sigma=1.0, max_iter=5).fit(good, y)
    with pytest.raises(ValueError, match=match):
        model.predict(S)
    fmap = GaussianRFF(64, sigma=1.0).fit(good)
    with pytest.raises(ValueError, match=match):
        fmap.transform(S)
    with pytest.raises(ValueError, match=match):
        GaussianRFF(64, sigma=1.0).fit(S)
    with pytest.raises(ValueError, match=match):
        Nystroem(Gaussian(1.0), n_features=32).fit(S)
    with pytest.raises(ValueError, match=match):
        Gaussian(1.0).gram(S)
    with pytest.raises(ValueError, match=match):
        KernelSVC(n_features=64, sigma=1.0, max_iter=5).fit(good, y, X_val=S, y_val=y)


def test_impossible_sizes_are_refused_arithmetically():
    X, y = np.random.default_rng(0).random((50, 4)), np.arange(50) % 2
    too_many = "n_features must be an integer > 0 and at most 2147483647"
    for n_features in (10**12, 2**31):
        with pytest.raises(ValueError, match=too_many):
            KernelSVC(n_features=n_features, sigma=1.0).fit(X, y)
        with pytest.raises(ValueError, match=too_many):
            GaussianRFF(n_features, sigma=1.0).fit(X)


def test_more_threads_than_cores_are_capped_with_a_warning():
    from skylite._threads import ThreadCountWarning, default_threads, resolve_threads
    cores = default_threads()
    with pytest.warns(ThreadCountWarning, match=f"n_threads=1000 is more than the {cores}"):
        assert resolve_threads(1000) == cores
    assert resolve_threads(1) == 1 and resolve_threads(None) == cores


LIMITED = """
import numpy as np, warnings
from threadpoolctl import threadpool_limits
from skylite import KernelSVC
warnings.simplefilter("ignore")
X, y = np.random.default_rng(0).random((300, 5)), np.arange(300) % 2
free = KernelSVC(n_features=64, sigma=1.0, max_iter=5).fit(X, y)
with threadpool_limits(1, "openmp"):
    limited = KernelSVC(n_features=64, sigma=1.0, max_iter=5).fit(X, y)
print(free.n_threads_, limited.n_threads_,
      bool(np.array_equal(free.coef_, limited.coef_)))
"""


@pytest.mark.parametrize("env", [{}, {"OMP_NUM_THREADS": "1"}])
def test_n_threads_none_follows_the_openmp_limit(env, tmp_path):
    """n_threads=None takes the OpenMP limit in force (threadpoolctl's, OMP_NUM_THREADS),
    at most the cores; the model does not depend on it."""
    import os
    import subprocess
    import sys
    from skylite._threads import usable_cores
    # run outside the checkout: `python -c` would import its uncompiled skylite/ first
    run = subprocess.run([sys.executable, "-c", LIMITED], capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    free, limited, same = run.stdout.split()
    assert int(free) == (1 if env else usable_cores())
    assert int(limited) == 1 and same == "True"
