"""Under mpiexec: each rank reads its share of a LIBSVM file with skylite.io.read_rows and
saves it to OUT.rank<r>.npz for the test to compare with the whole file."""
import sys

import numpy as np
from mpi4py import MPI

from skylite.io import read_rows

path, out = sys.argv[1], sys.argv[2]
X, y = read_rows(path, comm=MPI.COMM_WORLD)
np.savez(f"{out}.rank{MPI.COMM_WORLD.Get_rank()}.npz", data=X.data, indices=X.indices, indptr=X.indptr,
         shape=X.shape, y=y)
