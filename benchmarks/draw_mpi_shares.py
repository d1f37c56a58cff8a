"""Not a benchmark: draw which rows of a sparse LIBSVM file each MPI rank reads.

    python benchmarks/draw_mpi_shares.py [--ranks 2] [--plot docs/images/mpi_sparse_shares.png]

The picture of examples/mpi_sparse.py (its gallery thumbnail): the nonzeros of the sparse
Reuters training set (reuters_lasvm.svm.gz in skylite's data folder, $SKYLITE_DATA), one dot per nonzero, coloured by
the rank that reads the row.  The shares are the ones `skylite.io.read_rows(path, comm=comm)`
gives: the file's bytes cut into equal ranges (`skylite.io.svmlight_byte_ranges`), each rank
reading the lines whose first byte falls in its range (`skylite.io.read_svmlight_part`).  It
reads the file once per rank, in one process, in a few seconds.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _plots import figure, save  # noqa: E402

from skylite.io import read_svmlight_part, svmlight_byte_ranges  # noqa: E402

from _data import DATA  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA / "reuters_lasvm.svm.gz"))
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--plot", default="docs/images/mpi_sparse_shares.png")
    args = parser.parse_args()
    ranges = svmlight_byte_ranges(args.data, args.ranks)
    fig, panel = figure(1, 1, figsize=(8, 6))
    first_row = 0
    for rank, byte_range in enumerate(ranges):
        part = read_svmlight_part(args.data, byte_range)
        rows = np.repeat(np.arange(part.n_rows) + first_row, np.diff(part.indptr))
        panel.plot(part.indices, rows, ",", color=f"C{rank}", rasterized=True)
        panel.text(1.01, first_row + part.n_rows / 2, f"rank {rank}\n{part.n_rows:,} rows",
                   transform=panel.get_yaxis_transform(), color=f"C{rank}", va="center",
                   ha="left", fontsize=12, fontweight="bold")
        if rank:
            panel.axhline(first_row, color="k", linewidth=1, linestyle="--")
        first_row += part.n_rows
    panel.set_ylim(first_row, 0)
    panel.set_xlim(left=0)
    panel.set_xlabel("feature index")
    panel.set_ylabel("row of the file")
    fig.suptitle(f"{Path(args.data).name}: the rows each of {args.ranks} MPI ranks reads")
    save(fig, args.plot)


if __name__ == "__main__":
    main()
