"""Under mpiexec: each rank reads its share of a LIBSVM file with skylite.io.files.read_rows
and saves it to OUT.rank<r>.npz for the test to compare with the whole file."""
import sys

import numpy as np
from mpi4py import MPI

from skylite._distributed import Distributed
from skylite.io.files import read_rows

path, out = sys.argv[1], sys.argv[2]
dist = Distributed(MPI.COMM_WORLD)
X, y = read_rows(path, dist=dist)
np.savez(f"{out}.rank{dist.rank}.npz", data=X.data, indices=X.indices, indptr=X.indptr,
         shape=X.shape, y=y)
