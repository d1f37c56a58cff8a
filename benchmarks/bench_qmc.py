"""Quasi-Monte-Carlo vs Monte Carlo random features: Gram error on MNIST rows.

    python benchmarks/bench_qmc.py [--rows 1000] [--seeds 3] [--sizes 1024 2048 4096 8192 16384]

For each kernel and s, prints the relative Frobenius error ||Z Z^T - K||_F / ||K||_F on the
first `rows` MNIST training rows (skylite.datasets.load_mnist, pixels in [0, 1]), the mean over
`seeds` seeds, of

    monte_carlo   skylite's default map (i.i.d. frequencies, random phases b ~ U[0, 2 pi))
    mc_pairs      a numpy reference, not a skylite map: i.i.d. frequencies in cos / sin pairs
                  (the form the QMC maps use), to separate the gain of the pairs from that of
                  the sequence
    halton        sequence="halton" (leaped Halton, libSkylark's, with a random rotation)
    sobol         sequence="sobol" (scrambled Sobol')

and the ratio of the better QMC error to monte_carlo's.  Kernels: Gaussian with sigma = 6
(skylite's default rule sqrt(d Var(X) / 2) on MNIST) and sigma = 10 (the median distance),
Laplacian with sigma = 60, Matern(nu = 1.5, l = 10).  docs/feature_maps.md reports its output.
"""
import argparse
import time

import numpy as np

from skylite.datasets import load_mnist
from skylite.kernels import Gaussian, Laplacian, Matern


KERNELS = [("gaussian sigma=6", Gaussian(6.0)), ("gaussian sigma=10", Gaussian(10.0)),
           ("laplacian sigma=60", Laplacian(60.0)), ("matern nu=1.5 l=10", Matern(1.5, 10.0))]
METHODS = {"monte_carlo": "rff", "halton": "qmc_halton", "sobol": "qmc_sobol"}


def relative_error(Z, K):
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


def pairs_reference(kernel, X, s, seed):
    """i.i.d. frequencies of the kernel's spectral measure in cos / sin pairs (numpy)."""
    rng = np.random.default_rng(seed)
    d, m = X.shape[1], s // 2
    if isinstance(kernel, Gaussian):
        W = rng.standard_normal((d, m)) / kernel.sigma
    elif isinstance(kernel, Laplacian):
        W = rng.standard_cauchy((d, m)) / kernel.sigma
    else:
        G = rng.gamma(kernel.nu, 1.0, m)
        W = rng.standard_normal((d, m)) * np.sqrt(kernel.nu / G) / kernel.length_scale
    A = X @ W
    return np.sqrt(1.0 / m) * np.hstack([np.cos(A), np.sin(A)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096, 8192, 16384])
    args = parser.parse_args()
    X = load_mnist(args.rows)[0].astype(np.float64)
    start = time.perf_counter()
    print(f"relative Gram error on {args.rows} MNIST rows, mean over {args.seeds} seeds\n")
    print(f"| kernel | s | {' | '.join(['monte_carlo', 'mc_pairs', 'halton', 'sobol'])} "
          f"| best QMC / MC |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, kernel in KERNELS:
        K = kernel.gram(X)
        for s in args.sizes:
            errors = {}
            for label, method in METHODS.items():
                errors[label] = np.mean([
                    relative_error(kernel.feature_map(s, n_blocks=4, random_state=seed,
                                                      method=method).fit(X).transform(X), K)
                    for seed in range(args.seeds)])
            errors["mc_pairs"] = np.mean([relative_error(pairs_reference(kernel, X, s, seed), K)
                                          for seed in range(args.seeds)])
            best = min(errors["halton"], errors["sobol"])
            cells = " | ".join(f"{errors[k]:.4f}"
                               for k in ("monte_carlo", "mc_pairs", "halton", "sobol"))
            print(f"| {name} | {s} | {cells} | {best / errors['monte_carlo']:.2f} |", flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
