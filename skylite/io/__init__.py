"""skylite.io: a fast svmlight / LIBSVM reader (whole files or byte ranges, plain or gzip)
and writer; `read_rows`, which reads a LIBSVM, .npz, .npy or HDF5 file whole or, under MPI,
each rank's share; and the array-file readers of `skylite.io.arrays`, which memory-map rows
instead of copying them.  See docs/io.md."""
from .arrays import hdf5_rows, open_hdf5, open_npy
from .files import read_rows
from .svmlight import (SvmlightPart, assemble, dump_svmlight, iter_svmlight_rows, load_svmlight,
                       read_svmlight_part, resolve_features, svmlight_byte_ranges)

__all__ = ["read_rows", "open_npy", "open_hdf5", "hdf5_rows", "SvmlightPart", "read_svmlight_part", "svmlight_byte_ranges",
           "resolve_features", "assemble", "load_svmlight", "dump_svmlight",
           "iter_svmlight_rows"]
