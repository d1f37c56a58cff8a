"""skylite.io: a fast svmlight / LIBSVM reader (whole files or byte ranges, plain or gzip)
and writer.  See `skylite.io.svmlight` and docs/io.md."""
from .svmlight import (SvmlightPart, assemble, dump_svmlight, iter_svmlight_rows, load_svmlight,
                       read_svmlight_part, resolve_features, svmlight_byte_ranges)

__all__ = ["SvmlightPart", "read_svmlight_part", "svmlight_byte_ranges", "resolve_features",
           "assemble", "load_svmlight", "dump_svmlight", "iter_svmlight_rows"]
