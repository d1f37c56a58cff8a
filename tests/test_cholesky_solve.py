"""The blocked Cholesky solve of the RKHS norm's prox (skylite/prox/_cholesky_solve.pyx):
(L L^T)^-1 V against LAPACK's potrs, over sizes that span one, several and ragged blocks and
column counts beyond one group of the narrow kernels, in float32 and float64, with the
kernels and without them; its input checks; and that it reads nothing above L's diagonal
(potrf's `clean=0` leaves A there)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.linalg.lapack import get_lapack_funcs

from skylite.prox._cholesky_solve import cholesky_solve


def factor_of(s, dtype, seed):
    """(A, L) for a random s x s positive definite A (condition number about 10), L its lower
    Cholesky factor in Fortran order with A's values left above the diagonal."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((s, s))
    A = (M @ M.T / s + np.eye(s)).astype(dtype)
    potrf, = get_lapack_funcs(("potrf",), (A,))
    L, info = potrf(np.array(A, order="F"), lower=1, clean=0)
    assert info == 0
    return A, L


@settings(max_examples=25, deadline=None)
@given(s=st.sampled_from([1, 2, 37, 128, 129, 300, 513]), m=st.sampled_from([1, 3, 10, 13]),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16),
       narrow=st.booleans())
def test_the_blocked_solve_matches_potrs(s, m, dtype, seed, narrow):
    """With the narrow kernels (where the CPU runs them) and with the trsm path of CPUs
    without AVX-512."""
    A, L = factor_of(s, dtype, seed)
    V = np.random.default_rng(seed + 1).standard_normal((s, m)).astype(dtype)
    X = cholesky_solve(L, V, narrow=narrow)
    potrs, = get_lapack_funcs(("potrs",), (L,))
    reference, info = potrs(L, V, lower=1)
    assert info == 0 and X.dtype == dtype and X.shape == (s, m)
    eps = np.finfo(dtype).eps
    scale = np.abs(reference).max()
    np.testing.assert_allclose(X, reference, rtol=0, atol=50 * s * eps * scale)
    # and it solves A X = V (to the rounding of A's condition, about 10)
    np.testing.assert_allclose(A.astype(np.float64) @ X, V, rtol=0,
                               atol=100 * s * eps * np.abs(V).max())


def test_a_vector_keeps_its_shape_and_an_empty_right_hand_side_is_empty():
    A, L = factor_of(200, np.float64, 0)
    v = np.arange(200.0)
    x = cholesky_solve(L, v)
    assert x.shape == (200,)
    np.testing.assert_allclose(A @ x, v, atol=1e-9)
    assert cholesky_solve(L, np.empty((200, 0))).shape == (200, 0)


def test_bad_input_is_refused():
    A, L = factor_of(50, np.float64, 0)
    with pytest.raises(ValueError, match="square"):
        cholesky_solve(L[:, :40], np.ones((50, 2)))
    with pytest.raises(ValueError, match="Fortran"):
        cholesky_solve(np.ascontiguousarray(L), np.ones((50, 2)))
    with pytest.raises(ValueError, match="Fortran"):
        cholesky_solve(np.asfortranarray(L.astype(np.int64)), np.ones((50, 2)))
    with pytest.raises(ValueError, match="49 rows"):
        cholesky_solve(L, np.ones((49, 2)))
