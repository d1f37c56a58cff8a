"""Feature-map throughput and accuracy on MNIST-shaped rows, beside scikit-learn and a bare GEMM.

    python benchmarks/bench_features.py [--rows 20000] [--repeats 3] [--threads N]

Prints two tables:
1. seconds to transform `rows` x 784 float64 MNIST rows (skylite.datasets.load_mnist) for every
   skylite map, scikit-learn's RBFSampler / PolynomialCountSketch, and a numpy GEMM of the
   (rows x 784) @ (784 x s) shape, with ratios to the GEMM and to the scikit-learn peer;
2. relative Frobenius error ||Z Z^T - K||_F / ||K||_F on 600 rows at s = 16384.
Then the issue's targets, each marked ok / MISSED.  Times are the minimum over repeats.
"""
import argparse
import time

import numpy as np

from skylite.datasets import load_mnist
from skylite.kernels import ExpSemigroup, Gaussian, Laplacian, Matern, Polynomial
from skylite.sketch import (Fastfood, GaussianRFF, LaplacianRFF, MaternRFF, RandomLaplace,
                            TensorSketch)



def best_time(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def throughput_table(X, repeats, threads):
    from sklearn.kernel_approximation import PolynomialCountSketch, RBFSampler

    rng = np.random.default_rng(0)
    gemm = {}
    for s in (4096, 16384):
        W = rng.standard_normal((X.shape[1], s))
        gemm[s] = best_time(lambda: X @ W, repeats)
    X32 = X.astype(np.float32)
    peers = {
        "rbf": best_time(lambda: RBFSampler(gamma=1 / 72, n_components=4096, random_state=0)
                         .fit(X).transform(X), repeats),
        "poly": best_time(lambda: PolynomialCountSketch(degree=2, n_components=4096,
                                                        random_state=0).fit(X).transform(X),
                          repeats),
    }
    rows = [
        ("numpy GEMM", 4096, "float64", gemm[4096], None),
        ("numpy GEMM", 16384, "float64", gemm[16384], None),
        ("sklearn RBFSampler", 4096, "float64", peers["rbf"], "rbf"),
        ("sklearn PolynomialCountSketch", 4096, "float64", peers["poly"], "poly"),
    ]
    maps = [
        (GaussianRFF(4096, sigma=6.0), X, 4096, "rbf"),
        (GaussianRFF(4096, sigma=6.0), X32, 4096, "rbf"),
        (GaussianRFF(4096, sigma=6.0, n_blocks=16), X, 4096, "rbf"),
        (LaplacianRFF(4096, sigma=60.0), X, 4096, "rbf"),
        (MaternRFF(4096, nu=1.5, length_scale=6.0), X, 4096, "rbf"),
        (RandomLaplace(4096, beta=0.05), X, 4096, "rbf"),
        (Fastfood(4096, sigma=6.0), X, 4096, "rbf"),
        (TensorSketch(4096, degree=2, gamma=1 / 784, coef0=1.0), X, 4096, "poly"),
        (TensorSketch(4096, degree=2, gamma=1 / 784, coef0=1.0), X32, 4096, "poly"),
        (GaussianRFF(16384, sigma=6.0), X, 16384, None),
        (Fastfood(16384, sigma=6.0), X, 16384, None),
        (Fastfood(16384, sigma=6.0), X32, 16384, None),
    ]
    results = {}
    for fmap, data, s, peer in maps:
        fmap.fit(data)
        seconds = best_time(lambda: fmap.transform(data, n_threads=threads), repeats)
        label = type(fmap).__name__ + (f" C={fmap.n_blocks}" if fmap.n_blocks > 1 else "")
        rows.append((label, s, data.dtype.name, seconds, peer))
        results[(label, s, data.dtype.name)] = seconds

    print(f"\nTransform of {X.shape[0]} x {X.shape[1]} MNIST rows "
          f"(min of {repeats}; skylite threads = {threads})")
    print(f"{'map':<32} {'s':>6} {'dtype':>8} {'seconds':>8} {'/ GEMM':>7} {'/ sklearn':>9}")
    for label, s, dtype, seconds, peer in rows:
        vs_peer = f"{seconds / peers[peer]:9.2f}" if peer else f"{'':>9}"
        print(f"{label:<32} {s:>6} {dtype:>8} {seconds:8.3f} {seconds / gemm[s]:7.2f} {vs_peer}")
    return gemm, peers, results


def accuracy_table(X600):
    cases = [
        ("GaussianRFF", Gaussian(6.0), GaussianRFF(16384, sigma=6.0, n_blocks=4)),
        ("Fastfood", Gaussian(6.0), Fastfood(16384, sigma=6.0, n_blocks=4)),
        ("LaplacianRFF", Laplacian(60.0), LaplacianRFF(16384, sigma=60.0, n_blocks=4)),
        ("MaternRFF", Matern(1.5, 6.0), MaternRFF(16384, nu=1.5, length_scale=6.0, n_blocks=4)),
        ("RandomLaplace", ExpSemigroup(0.05), RandomLaplace(16384, beta=0.05, n_blocks=4)),
        ("TensorSketch", Polynomial(2, 1 / 784, 1.0),
         TensorSketch(16384, degree=2, gamma=1 / 784, coef0=1.0, n_blocks=4)),
    ]
    print(f"\nRelative Frobenius error of Z Z^T on {len(X600)} MNIST rows, s = 16384")
    print(f"{'map':<16} {'kernel':<40} {'error':>8}")
    errors = {}
    for name, kernel, fmap in cases:
        Z = fmap.fit(X600).transform(X600)
        K = kernel.gram(X600)
        errors[name] = np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)
        print(f"{name:<16} {kernel!r:<40} {100 * errors[name]:7.2f}%")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    X_all = load_mnist(args.rows)[0].astype(np.float64)
    gemm, peers, t = throughput_table(X_all[:args.rows], args.repeats, args.threads)
    errors = accuracy_table(X_all[:600])

    rff = t[("GaussianRFF", 4096, "float64")]
    checks = [
        ("Gaussian RFF s=4096 <= 1.5x GEMM", rff / gemm[4096], 1.5),
        ("Gaussian RFF s=4096 <= 0.8x RBFSampler", rff / peers["rbf"], 0.8),
        ("Fastfood s=16384 <= 0.7x Gaussian RFF",
         t[("Fastfood", 16384, "float64")] / t[("GaussianRFF", 16384, "float64")], 0.7),
        ("Gaussian RFF Gram error < 5%", errors["GaussianRFF"], 0.05),
        ("Fastfood Gram error < 5%", errors["Fastfood"], 0.05),
        ("Laplacian RFF Gram error < 8%", errors["LaplacianRFF"], 0.08),
    ]
    print("\nTargets")
    for name, value, limit in checks:
        print(f"{name:<42} {value:8.3f}  {'ok' if value <= limit else 'MISSED'}")


if __name__ == "__main__":
    main()
