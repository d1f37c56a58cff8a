"""The transform's GEMMs in tiles of rows: how many rows per call.

    python benchmarks/bench_transform_tiles.py [--rows 20000] [--features 8192] [--blocks 16]
                                               [--tiles 128 256 512 1024] [--rounds 4]

The products a Gaussian map makes when it regenerates every block of the first --rows MNIST
training rows (float64, 784 columns): X_t Omega_j for every tile t of rows and block j
(784 x s_j, s_j = --features / --blocks), each one numpy matmul into an output made before,
as skylite's row sweep makes them: two Python threads (numpy releases the GIL), thread q
taking the blocks j = q, q + 2, ..., with BLAS at one thread each.  Every tile size is timed
once per round, the rounds in turn, so that a slow spell of a shared machine falls on all
of them; the table gives each size's fastest and median seconds, and its ratio to the
largest size's median.  OpenBLAS packs both operands in every call, so a call of more rows
packs Omega_j fewer times per row.
"""
import argparse
import threading
import time

import numpy as np
from threadpoolctl import threadpool_limits

from skylite.datasets import load_mnist


def run_tiles(X, blocks, rows):
    """Seconds for two threads to make every tile of `rows` rows of every block."""
    def work(first_block):
        out = np.ones((rows, blocks[0].shape[1]))
        for start in range(0, len(X), rows):
            tile = X[start:start + rows]
            for omega in blocks[first_block::2]:
                np.matmul(tile, omega, out=out[:len(tile)])

    threads = [threading.Thread(target=work, args=(q,)) for q in (0, 1)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--features", type=int, default=8192)
    parser.add_argument("--blocks", type=int, default=16)
    parser.add_argument("--tiles", type=int, nargs="+", default=[128, 256, 512, 1024])
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    X = load_mnist(args.rows)[0].astype(np.float64)
    width = args.features // args.blocks
    rng = np.random.default_rng(0)
    blocks = [rng.standard_normal((X.shape[1], width)) for _ in range(args.blocks)]
    times = {rows: [] for rows in args.tiles}
    with threadpool_limits(limits=1, user_api="blas"):
        run_tiles(X, blocks, args.tiles[0])                     # warm up
        for _ in range(args.rounds):
            for rows in args.tiles:
                times[rows].append(run_tiles(X, blocks, rows))
    largest = float(np.median(times[max(args.tiles)]))
    print(f"{args.rows} MNIST rows x 784 by {args.blocks} blocks of 784 x {width}, float64, "
          f"2 threads, {args.rounds} rounds")
    print("| rows per call | fastest s | median s | median / largest's |")
    print("|---:|---:|---:|---:|")
    for rows in args.tiles:
        median = float(np.median(times[rows]))
        print(f"| {rows} | {min(times[rows]):.3f} | {median:.3f} | {median / largest:.3f} |")


if __name__ == "__main__":
    main()
