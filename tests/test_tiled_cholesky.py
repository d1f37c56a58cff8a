"""The tiled Cholesky factorization and triangular inverse (skylite/prox/_tiled_cholesky.pyx):
against LAPACK's potrf and trtri over sizes that span one, several and ragged tiles, in C and
Fortran order, float32 and float64; the same bits on 1 and 2 threads; only the lower
triangle read and written; and a clear error for what cannot be factored."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numpy.linalg import LinAlgError
from scipy.linalg.lapack import get_lapack_funcs

from skylite.prox._tiled_cholesky import TILE, inverse_transpose, tiled_cholesky

SIZES = [1, 2, 37, TILE - 1, TILE, TILE + 1, 2 * TILE + 57]


def positive_definite(s, dtype, seed, order="C"):
    """A random s x s symmetric positive definite matrix (condition number about 10), with
    its strict upper triangle overwritten by a marker that must never be read."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((s, s))
    A = M @ M.T / s + np.eye(s)
    A[np.triu_indices(s, 1)] = 1e30
    return np.array(A, dtype=dtype, order=order)


@settings(max_examples=30, deadline=None)
@given(s=st.sampled_from(SIZES), dtype=st.sampled_from([np.float32, np.float64]),
       order=st.sampled_from("CF"), seed=st.integers(0, 2**16))
def test_the_tiled_factor_and_inverse_match_lapack(s, dtype, order, seed):
    A = positive_definite(s, dtype, seed, order)
    marker = np.triu(A, 1).copy()
    L = tiled_cholesky(A.copy(order=order), 2)
    assert np.array_equal(np.triu(L, 1), marker)                  # left as it was
    L = np.tril(L)
    potrf, trtri = get_lapack_funcs(("potrf", "trtri"), (L,))
    reference, info = potrf(np.tril(A), lower=1, clean=1)
    assert info == 0
    eps = np.finfo(dtype).eps
    assert np.abs(L - reference).max() <= 50 * s * eps * np.abs(reference).max()
    for layout in "CF":
        U = inverse_transpose(np.array(L, order=layout), 2)
        assert U.flags.c_contiguous and U.dtype == dtype
        assert np.array_equal(U, np.triu(U))
        inverse, info = trtri(L, lower=1)
        assert info == 0
        assert np.abs(U.T - inverse).max() <= 50 * s * eps * np.abs(inverse).max()


@pytest.mark.parametrize("order", "CF")
def test_the_same_bits_on_any_number_of_threads(order):
    A = positive_definite(3 * TILE + 11, np.float64, 7, order)
    factors = [tiled_cholesky(A.copy(order=order), threads) for threads in (1, 2)]
    assert np.array_equal(factors[0], factors[1])
    L = np.tril(factors[0])
    assert np.array_equal(inverse_transpose(L, 1), inverse_transpose(L, 2))


@pytest.mark.parametrize("bad_row", [0, TILE - 1, TILE + 3])
@pytest.mark.parametrize("value", [-1.0, 0.0, np.nan, np.inf])
def test_what_cannot_be_factored_names_the_row(bad_row, value):
    """A non-positive or non-finite pivot in the first or a later tile: LinAlgError naming
    the row, never a factor of NaNs (OpenBLAS's potrf passes a NaN pivot on)."""
    A = np.eye(2 * TILE)
    A[bad_row, bad_row] = value
    with pytest.raises(LinAlgError, match=f"failed at row {bad_row}"):
        tiled_cholesky(A, 2)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="square"):
        tiled_cholesky(np.eye(3)[:2])
    with pytest.raises(ValueError, match="float32 or float64"):
        tiled_cholesky(np.eye(3, dtype=np.int64))
    with pytest.raises(ValueError, match="contiguous"):
        tiled_cholesky(np.eye(6)[::2, ::2])
    with pytest.raises(LinAlgError, match="singular"):
        inverse_transpose(np.diag([1.0, 0.0, 1.0]))
    with pytest.raises(LinAlgError, match="singular"):
        inverse_transpose(np.diag([1.0, np.nan, 1.0]))
