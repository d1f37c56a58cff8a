"""
Kernel SVM over MPI ranks (dense MNIST)
=======================================

A kernel SVM on MNIST over MPI ranks: each rank loads only its slice of the rows.
Run it with::

    mpiexec -n 2 python examples/mpi_dense.py [--rows 20000] [--features 4096] [--iters 500]

Each rank calls ``fit`` with its own rows; the model is the global one and the same on every
rank.  With the defaults it converges (tol 1e-3) in 265 iterations, about 65 s on 2 cores,
with a test accuracy of 96.8%.  Loading: np.load of ../shared/data/mnist.npz reads (and
decompresses) only the arrays that are indexed, but each rank does materialize the whole
X_train array before slicing it (188 MB as float32) — acceptable for an example; for real data, give each rank
its own file, or stream its rows (benchmarks/bench_mpi.py's read_npz_rows does).
The test set is split over the ranks as well: ``score`` is a global accuracy (counts summed
over ranks), printed by rank 0.
"""
# sphinx_gallery_thumbnail_path = "images/mpi_scaling.png"
import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from mpi4py import MPI

from skylite import KernelSVC

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist.npz"


def my_rows(n, rank, size):
    bounds = np.linspace(0, n, size + 1).round().astype(int)
    return slice(bounds[rank], bounds[rank + 1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000, help="training rows (all ranks)")
    parser.add_argument("--features", type=int, default=4096, help="random features s")
    parser.add_argument("--iters", type=int, default=500, help="max ADMM iterations")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    try:
        with np.load(DATA) as data:
            train = my_rows(args.rows, rank, size)
            X = data["X_train"][train].astype(np.float64)
            y = data["y_train"][train]
            test = my_rows(len(data["y_test"]), rank, size)
            X_test, y_test = data["X_test"][test].astype(np.float64), data["y_test"][test]
        error = None
    except OSError as exc:               # e.g. an unreadable file on one rank
        error = f"rank {rank}: {exc}"
    errors = [e for e in comm.allgather(error) if e]
    if errors:                           # every rank stops, none waits for a failed one
        raise SystemExit("cannot load MNIST: " + "; ".join(errors))
    if rank != 0:                        # one copy of each warning is enough
        warnings.simplefilter("ignore")
    model = KernelSVC(n_features=args.features, alpha=1e-5, max_iter=args.iters, tol=1e-3,
                      n_threads=1, memory_budget=None, comm=comm,
                      early_stopping=False)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    accuracy = model.score(X_test, y_test)          # collective: every rank calls it
    if rank == 0:
        comm_seconds = sum(r["comm_seconds"] for r in model.history_)
        print(f"{size} rank(s), {args.rows} training rows ({len(y)} on rank 0), "
              f"s={args.features}: {model.n_iter_} iterations "
              f"({'converged' if model.converged_ else 'max_iter reached'}) in {seconds:.1f} s "
              f"(communication {comm_seconds:.2f} s); test accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
