"""skylite.io: a fast svmlight / LIBSVM reader (whole files or byte ranges, plain or gzip)
and writer, and `read_rows`, which reads a LIBSVM or .npz file whole or, under MPI, each
rank's share.  See `skylite.io.svmlight`, `skylite.io.files` and docs/io.md."""
from .files import read_rows
from .svmlight import (SvmlightPart, assemble, dump_svmlight, iter_svmlight_rows, load_svmlight,
                       read_svmlight_part, resolve_features, svmlight_byte_ranges)

__all__ = ["read_rows", "SvmlightPart", "read_svmlight_part", "svmlight_byte_ranges",
           "resolve_features", "assemble", "load_svmlight", "dump_svmlight",
           "iter_svmlight_rows"]
