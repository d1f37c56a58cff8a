"""Quasi-Monte-Carlo random features: the sequences, the documented parameters, block
independence, and a lower Gram error than Monte Carlo at equal s."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.special import gammaincinv, ndtri
from scipy.stats import qmc as scipy_qmc

from skylite.kernels import Gaussian, Laplacian, Matern, Polynomial
from skylite.sketch import GaussianRFF, LaplacianRFF, MaternRFF, map_from_dict
from skylite.sketch import qmc

# (kernel, map factory) on pendigits scaled to [0, 1], as in test_sketch.py
KERNELS = {
    "gaussian": (Gaussian(1.0), lambda **kw: GaussianRFF(sigma=1.0, **kw)),
    "laplacian": (Laplacian(4.0), lambda **kw: LaplacianRFF(sigma=4.0, **kw)),
    "matern": (Matern(1.5, 1.0), lambda **kw: MaternRFF(nu=1.5, length_scale=1.0, **kw)),
    "matern_rough": (Matern(0.7, 2.0), lambda **kw: MaternRFF(nu=0.7, length_scale=2.0, **kw)),
}
QMC = ("halton", "sobol")


def relative_error(Z, K):
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


# ---- the sequences ----

def test_first_primes():
    assert qmc.first_primes(10).tolist() == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
    p = qmc.first_primes(5000)
    assert p[-1] == 48611 and len(set(p.tolist())) == 5000


def test_sobol_direction_numbers_give_scipys_sequence():
    """XOR of the direction numbers over the Gray code of f is scipy's unscrambled point f."""
    dims, n = 40, 1024
    v = qmc.sobol_direction_numbers(dims)
    f = np.arange(n, dtype=np.uint64)
    g = f ^ (f >> np.uint64(1))
    x = np.zeros((n, dims), dtype=np.uint32)
    for bit in range(32):
        on = ((g >> np.uint64(bit)) & np.uint64(1)).astype(bool)
        x[on] ^= v[:, bit]
    expected = scipy_qmc.Sobol(dims, scramble=False, bits=32).random(n)
    np.testing.assert_array_equal(x * 2.0**-32, expected)


@given(m=st.integers(1, 10), dims=st.integers(2, 30), seed=st.integers(0, 2**64 - 1),
       start=st.integers(0, 50))
@settings(max_examples=30, deadline=None)
def test_scrambled_sobol_keeps_the_net_property(m, dims, seed, start):
    """The matrix scramble is nonsingular and the shift a bijection, so any 2^m consecutive
    points from a multiple of 2^m keep Sobol's stratification: each coordinate has exactly one
    point in every interval [k / 2^m, (k + 1) / 2^m), and the first two coordinates (a
    (0, m, 2)-net) one point in every elementary box of area 2^-m."""
    n = 2**m
    U = qmc.points("sobol", dims, seed, start * n, n)
    cells = np.floor(U * n).astype(int)
    for i in range(dims):
        assert np.array_equal(np.sort(cells[:, i]), np.arange(n))
    for a in range(m + 1):
        boxes = np.floor(U[:, 0] * 2**a).astype(int) * 2**(m - a) + \
            np.floor(U[:, 1] * 2**(m - a)).astype(int)
        assert np.array_equal(np.sort(boxes), np.arange(n))


def test_scramble_depends_on_the_seed():
    a, b = qmc.points("sobol", 5, 1, 0, 64), qmc.points("sobol", 5, 2, 0, 64)
    assert np.abs(a - b).max() > 0.1
    np.testing.assert_array_equal(a, qmc.points("sobol", 5, 1, 0, 64))


@given(dims=st.integers(1, 60), seed=st.integers(0, 2**64 - 1), first=st.integers(0, 10**6))
@settings(max_examples=20, deadline=None)
def test_halton_is_libskylarks_leaped_sequence_rotated(dims, seed, first):
    """u_i(f) = frac(phi_{p_i}(f L + 1) + shift_i): libSkylark's leaped Halton (leap L = the
    first prime that is not a base), rotated modulo 1; checked with exact integer digits."""
    bases, leap, shifts = qmc.halton_table(dims, seed)
    assert leap == qmc.first_primes(dims + 1)[-1]
    assert np.all((0 <= shifts) & (shifts < 1))
    U = qmc.points("halton", dims, seed, first, 3)
    for row, f in enumerate(range(first, first + 3)):
        for i, p in enumerate(bases.tolist()):
            n, phi, scale = f * leap + 1, 0.0, 1.0 / p
            while n:
                n, digit = divmod(n, p)
                phi += digit * scale
                scale /= p
            assert abs(U[row, i] - math.fmod(phi + shifts[i], 1.0)) < 1e-12


def test_halton_base_two_coordinate_is_stratified():
    """Before the rotation, the base-2 coordinate of 2^m consecutive points has one point in
    every interval of length 2^-m (the leap is odd)."""
    bases, leap, shifts = qmc.halton_table(3, 7)
    U = qmc.points("halton", 3, 7, 0, 256)
    unrotated = np.mod(U[:, 0] - shifts[0], 1.0)          # dyadic values, up to rounding
    cells = np.floor(np.mod(unrotated * 256 + 1e-9, 256)).astype(int)
    assert np.array_equal(np.sort(cells), np.arange(256))


# ---- the maps' parameters: the documented formula ----

def _documented_params(name, fmap, j, sequence):
    """Block j's W_j and b_j from qmc.points and the inverse CDFs of _projection.pyx."""
    d, s, seed = fmap.n_features_in_, fmap.n_features, fmap.seed_
    lo, hi = fmap.transform_op_.block_offsets[j:j + 2]
    c = np.arange(lo, hi)
    f = c // 2
    matern = name.startswith("matern")
    dims = d + (2 if matern else 1)
    U = qmc.points(sequence, dims, seed, 0, int(f.max()) + 1)[f]
    if name == "gaussian":
        W = ndtri(U[:, :d]).T * (1.0 / fmap.sigma)
    elif name == "laplacian":
        W = np.tan(np.pi * (U[:, :d] - 0.5)).T * (1.0 / fmap.sigma)
    else:
        G = gammaincinv(fmap.nu, U[:, 0])
        W = ndtri(U[:, 1:d + 1]).T * ((1.0 / fmap.length_scale) * np.sqrt(fmap.nu / G))
    b = np.where(c % 2 == 0, 0.0, 1.5 * np.pi)
    if s % 2 and hi == s:
        b[-1] = 2 * np.pi * U[-1, dims - 1]
    return W, b


@pytest.mark.parametrize("name", sorted(KERNELS))
@given(d=st.integers(1, 9), s=st.integers(1, 600), n_blocks=st.integers(1, 4),
       seed=st.integers(0, 2**64 - 1), sequence=st.sampled_from(QMC), single=st.booleans())
@settings(max_examples=10, deadline=None)
def test_params_follow_the_documented_formula(name, d, s, n_blocks, seed, sequence, single):
    n_blocks = min(n_blocks, s)
    fmap = KERNELS[name][1](n_features=s, n_blocks=n_blocks, random_state=seed,
                            sequence=sequence).fit(np.ones((1, d)))
    dtype = np.float32 if single else np.float64
    for j, s_j in enumerate(fmap.block_sizes):
        p = fmap.transform_op_.block_params(j, dtype)
        W, b = _documented_params(name, fmap, j, sequence)
        rtol = 1e-6 if single else 1e-12
        np.testing.assert_allclose(p[:d * s_j].reshape(d, s_j), W, rtol=rtol)
        np.testing.assert_allclose(p[d * s_j:], b, rtol=rtol)


def test_pairs_are_cos_and_sin_of_one_frequency(digits_small):
    X = digits_small[:30]
    fmap = GaussianRFF(10, sigma=1.0, sequence="sobol").fit(X)
    Z = fmap.transform(X) / np.sqrt(2.0 / 10)
    np.testing.assert_allclose(Z[:, 0::2] ** 2 + Z[:, 1::2] ** 2, 1.0, rtol=1e-12)
    W = fmap.transform_op_.block_params(0)[:X.shape[1] * 10].reshape(-1, 10)
    np.testing.assert_array_equal(W[:, 0::2], W[:, 1::2])


# ---- blocks: independent of generation order and of the split ----

@given(name=st.sampled_from(sorted(KERNELS)), sequence=st.sampled_from(QMC),
       s=st.integers(1, 300), n_blocks=st.integers(1, 7), seed=st.integers(0, 2**64 - 1),
       order_seed=st.integers(0, 1000))
@settings(max_examples=30, deadline=None)
def test_blocks_do_not_depend_on_order_or_split(name, sequence, s, n_blocks, seed, order_seed,
                                                digits_small):
    """Block j is its own slice of the sequence: blocks made in any order stack to Z, and Z
    is the same for every number of blocks (up to the rounding of GEMMs of other widths: the
    Cauchy frequencies give arguments of cos up to ~100)."""
    n_blocks = min(n_blocks, s)
    X = digits_small[:23]
    make = KERNELS[name][1]
    whole = make(n_features=s, random_state=seed, sequence=sequence).fit(X).transform(X)
    split = make(n_features=s, n_blocks=n_blocks, random_state=seed, sequence=sequence).fit(X)
    order = np.random.default_rng(order_seed).permutation(n_blocks)
    blocks = {j: split.block(X, j) for j in order}
    np.testing.assert_allclose(np.hstack([blocks[j] for j in range(n_blocks)]), whole,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(split.transform(X), np.hstack([blocks[j] for j in
                                                                 range(n_blocks)]))


# ---- kernel approximation ----

@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("sequence", QMC)
def test_randomized_qmc_is_unbiased(name, sequence, digits_small):
    """The random rotation / scramble makes every point uniform: the mean over seeds of
    z(x).z(x') tends to k(x, x')."""
    X = digits_small[:12]
    kernel, make = KERNELS[name]
    estimates = np.array([(Z := make(n_features=33, n_blocks=2, random_state=seed,
                                      sequence=sequence).fit(X).transform(X)) @ Z.T
                          for seed in range(40)])
    mean, stderr = estimates.mean(axis=0), estimates.std(axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(mean - kernel.gram(X)) <= 5 * stderr + 1e-9)


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("sequence", QMC)
def test_gram_error_falls_with_s(name, sequence, digits_small):
    """Every spectrum works through its inverse CDF (libSkylark's Laplacian QMC does not)."""
    X = digits_small[:120]
    kernel, make = KERNELS[name]
    errors = {s: np.mean([relative_error(make(n_features=s, random_state=seed,
                                              sequence=sequence).fit(X).transform(X),
                                         kernel.gram(X)) for seed in range(3)])
              for s in (256, 4096)}
    assert errors[4096] < 0.06 and errors[4096] < 0.4 * errors[256], errors


def test_qmc_gram_error_below_monte_carlo_on_mnist(mnist600):
    """At equal s the QMC maps approximate the Gaussian Gram matrix of MNIST rows better than
    Monte Carlo (skylite's default map), and Sobol' better than i.i.d. frequencies in the same
    cos / sin pairs: the sequence itself helps (docs/feature_maps.md has the curve)."""
    X = mnist600[:200]
    sigma, s, seeds = 10.0, 4096, range(3)
    K = Gaussian(sigma).gram(X)
    error = {method: np.mean([relative_error(Gaussian(sigma).feature_map(
        s, random_state=seed, method=method).fit(X).transform(X), K) for seed in seeds])
        for method in ("rff", "qmc_halton", "qmc_sobol")}
    pairs = []
    for seed in seeds:
        A = X @ (np.random.default_rng(seed).standard_normal((X.shape[1], s // 2)) / sigma)
        pairs.append(relative_error(np.hstack([np.cos(A), np.sin(A)]) / np.sqrt(s // 2), K))
    assert error["qmc_sobol"] < 0.8 * error["rff"], error
    assert error["qmc_halton"] < 0.9 * error["rff"], error
    assert error["qmc_sobol"] < 0.9 * np.mean(pairs), (error, pairs)


# ---- kernels, serialization, input kinds, errors ----

@pytest.mark.parametrize("kernel", [Gaussian(2.0), Laplacian(3.0), Matern(2.5, 1.0)])
def test_kernels_offer_the_qmc_methods(kernel):
    assert {"qmc", "qmc_halton", "qmc_sobol"} <= set(kernel.methods)
    assert kernel.feature_map(64, method="qmc").sequence == "sobol"
    assert kernel.feature_map(64, method="qmc_halton").sequence == "halton"
    assert kernel.feature_map(64).sequence == "monte_carlo"


@pytest.mark.parametrize("sequence", QMC)
def test_serialization_csr_and_float32(sequence, digits_small):
    X = digits_small[:40]
    fmap = MaternRFF(101, nu=0.7, n_blocks=3, random_state=5, sequence=sequence).fit(X)
    Z = fmap.transform(X)
    rebuilt = map_from_dict(fmap.to_dict())
    assert rebuilt.sequence == sequence
    np.testing.assert_array_equal(rebuilt.transform(X), Z)
    np.testing.assert_allclose(fmap.transform(sp.csr_matrix(X)), Z, rtol=1e-12, atol=1e-14)
    Z32 = fmap.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, Z, atol=2e-5)


def test_bad_sequences_and_sizes():
    X = np.ones((2, 3))
    with pytest.raises(ValueError, match="unknown sequence 'niederreiter'.*halton"):
        GaussianRFF(8, sequence="niederreiter").fit(X)
    with pytest.raises(ValueError, match="at most 21201 coordinates.*sequence='halton'"):
        GaussianRFF(8, sequence="sobol").fit(sp.csr_matrix((1, 21201)))
    assert GaussianRFF(8, sequence="halton").fit(sp.csr_matrix((1, 21201))).n_features_in_ \
        == 21201
    with pytest.raises(ValueError, match="unknown feature-map method 'qmc'"):
        Polynomial().feature_map(8, method="qmc")
    with pytest.raises(ValueError, match="at most 4294967296 points"):
        qmc.check_points(2**32 + 1, "sobol")
    with pytest.raises(ValueError, match="no points for sequence"):
        qmc.points("monte_carlo", 2, 0, 0, 4)
