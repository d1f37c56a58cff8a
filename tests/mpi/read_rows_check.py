"""Under mpiexec: each rank reads its share of a file with skylite.io.read_rows and saves it
to OUT.rank<r>.npz for the test to compare with the whole file.

    read_rows_check.py PATH OUT [X_DATASET Y_DATASET]     (the datasets of an HDF5 file)
"""
import sys

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

from skylite.io import read_rows

path, out = sys.argv[1], sys.argv[2]
names = dict(zip(("x_dataset", "y_dataset"), sys.argv[3:5]))
X, y = read_rows(path, comm=MPI.COMM_WORLD, **names)
target = f"{out}.rank{MPI.COMM_WORLD.Get_rank()}.npz"
if sp.issparse(X):
    np.savez(target, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y)
else:
    np.savez(target, X=X, y=y)
