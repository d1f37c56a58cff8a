"""The two products of every ADMM iteration, Z W' (m columns) and Z^T B (k columns), on one
tile of the row sweep: skylite's narrow kernels against BLAS's sgemm (numpy, one thread).

    python benchmarks/bench_narrow_products.py [--rows 256] [--features 1024] [--m 10]
                                               [--k 10] [--tiles 235]

A tile is --rows x --features (one column block of the row sweep; the protocol of
docs/scale.md has 256 x 1024 tiles, 16 blocks, 10 classes).  "in cache" multiplies the same
tile again and again; "from memory" walks --tiles consecutive tiles of a Z too large for the
caches, as a cached iteration does.  Printed: microseconds per tile and GFlop/s (2 rows s m
flops for Z W', 2 rows s k for Z^T B), for float32 Z (against sgemm), Z in bfloat16 (uint16
top halves, decoded in registers; without the kernels a bfloat16 cache is first decoded to a
float32 tile for sgemm) and float64 Z (against dgemm).  The times include a Python call per
tile on both sides (about a microsecond): numpy's matmul with `out=`, and the kernels through
`_narrow.times_into` / `t_times_into` with W'^T and the outputs made once.
"""
import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from skylite._native import _narrow
from skylite.admm._column_blocks import _aligned_empty


def per_tile(product, tiles, operand, repeat):
    """Median over `repeat` runs of the seconds per tile of product(tile, operand)."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for tile in tiles:
            product(tile, operand)
        runs.append((time.perf_counter() - start) / len(tiles))
    return float(np.median(runs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--features", type=int, default=1024)
    parser.add_argument("--m", type=int, default=10, help="columns of W'")
    parser.add_argument("--k", type=int, default=10, help="columns of B")
    parser.add_argument("--tiles", type=int, default=235)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not _narrow.available():
        raise SystemExit("the narrow kernels need AVX-512; this CPU runs sgemm only")
    rng = np.random.default_rng(0)
    r, s = args.rows, args.features
    Z = _aligned_empty((args.tiles * r, s), np.float32)
    Z[:] = rng.standard_normal(Z.shape, dtype=np.float32)
    Z16 = _aligned_empty(Z.shape, np.uint16)
    Z16[:] = Z.view(np.uint32) >> 16
    Z64 = _aligned_empty(Z.shape, np.float64)
    Z64[:] = Z
    W = rng.standard_normal((s, args.m))
    B = rng.standard_normal((r, args.k))

    def blas(dtype):
        out, grad = np.empty((r, args.m), dtype), np.empty((s, args.k), dtype)
        return (lambda tile, w: np.matmul(tile, w, out=out),
                lambda tile, b: np.matmul(tile.T, b, out=grad))

    def kernels(dtype):
        out, pt = np.empty((r, args.m), dtype), np.empty((args.k, s), dtype)
        return (lambda tile, wt: _narrow.times_into(tile, wt, out),
                lambda tile, b: _narrow.t_times_into(tile, b, pt))

    contenders = [("sgemm", "float32", Z, *blas(np.float32)),
                  ("kernel", "float32", Z, *kernels(np.float32)),
                  ("kernel", "bfloat16", Z16, *kernels(np.float32)),
                  ("dgemm", "float64", Z64, *blas(np.float64)),
                  ("kernel", "float64", Z64, *kernels(np.float64))]
    flops = {"Z W'": 2 * r * s * args.m, "Z^T B": 2 * r * s * args.k}
    print(f"tiles of {r} x {s}, W' {s} x {args.m}, B {r} x {args.k}, one thread")
    print("\n| product | code | Z | in cache (us) | GFlop/s | from memory (us) | GFlop/s |")
    print("|---|---|---|---:|---:|---:|---:|")
    with threadpool_limits(1):
        for name, operand, index in (("Z W'", W, 0), ("Z^T B", B, 1)):
            for code, kind, data, *products in contenders:
                product = products[index]
                given = operand.astype(np.float64 if kind == "float64" else np.float32)
                if code == "kernel" and index == 0:     # the kernels take W'^T
                    given = np.ascontiguousarray(given.T)
                stream = [data[t * r:(t + 1) * r] for t in range(args.tiles)]
                hot = per_tile(product, [stream[0]] * args.tiles, given, args.repeat)
                cold = per_tile(product, stream, given, args.repeat)
                print(f"| {name} | {code} | {kind} | {hot * 1e6:.1f} | "
                      f"{flops[name] / hot / 1e9:.0f} | {cold * 1e6:.1f} | "
                      f"{flops[name] / cold / 1e9:.0f} |")


if __name__ == "__main__":
    main()
