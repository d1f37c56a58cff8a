"""
Linear SVM over MPI ranks (sparse Reuters)
==========================================

A linear SVM on the sparse Reuters set over MPI ranks, each reading its share of the file.
Run it with::

    mpiexec -n 2 python examples/mpi_sparse.py [TRAIN.svm[.gz] TEST.svm[.gz]]

Without arguments it reads the Reuters samples in the repository's ``tests/data``
(``reuters_sample.svm.gz``: 1,000 training rows, ``reuters_sample.t.svm.gz``: 1,100 test
rows, 8,315 columns), so it runs in a fresh clone. Pass the full Reuters files (or any
svmlight files) to train on them. On the samples, 2 ranks train in about 3 s and score
97.1% on the 1,100 test rows. Every rank reads
only the lines whose first byte falls in its share of the file (``skylite.io.read_rows`` with
``comm=``: byte ranges of a plain file are read from disk, a gzipped one is decompressed on
each rank),
the ranks agree on the number of columns, and a failure on any rank (missing file, malformed
line) stops every rank with the same error.  The same as::

    mpiexec -n 2 skylite train TRAIN -m model.sky --kernel linear --alpha 1e-4
    skylite predict model.sky TEST                  # the test accuracy, in one process

The rows each of 2 ranks reads from the Reuters training file (one dot per nonzero; drawn by
``python benchmarks/draw_mpi_shares.py``):

.. image:: /images/mpi_sparse_shares.png
   :alt: The nonzeros of the Reuters training rows, coloured by the rank that reads them
   :width: 60%
"""
# sphinx_gallery_thumbnail_path = "images/mpi_sparse_shares.png"
import sys
import time
from pathlib import Path

from mpi4py import MPI

from skylite import KernelSVC
from skylite.io import read_rows

SAMPLES = Path(__file__).resolve().parents[1] / "tests" / "data"
REUTERS_FEATURES = 8315     # the samples' training rows do not reach the last column


def main():
    if len(sys.argv) == 3:
        (train, test), n_features = sys.argv[1:3], None
    else:
        train, test = SAMPLES / "reuters_sample.svm.gz", SAMPLES / "reuters_sample.t.svm.gz"
        n_features = REUTERS_FEATURES
    comm = MPI.COMM_WORLD
    start = time.perf_counter()
    X, y = read_rows(train, n_features=n_features, comm=comm)
    X_test, y_test = read_rows(test, n_features=X.shape[1], comm=comm)
    rows = comm.allgather(X.shape[0])
    if comm.Get_rank() == 0:
        print(f"{train}: rows per rank {rows}, {X.shape[1]} features, read in "
              f"{time.perf_counter() - start:.2f}s")
    model = KernelSVC("linear", alpha=1e-4, n_threads=1, comm=comm)
    model.fit(X, y)
    accuracy = model.score(X_test, y_test)        # global: every rank calls it
    if comm.Get_rank() == 0:
        print(f"linear SVM over {comm.Get_size()} ranks: {model.n_iter_} iterations, "
              f"{time.perf_counter() - start:.1f}s, test accuracy {100 * accuracy:.2f}%")


if __name__ == "__main__":
    main()
