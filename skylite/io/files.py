"""Training and test files for the command line: LIBSVM text or `.npz`, whole or one rank's share.

`read_rows(path, part=..., comm=...)` returns the rows (X, y) of a file.  With an mpi4py
communicator of P > 1 ranks, rank r gets only its share:

- LIBSVM text: the lines whose first byte lies in the r-th of P equal byte ranges of the file
  (`svmlight_byte_ranges`), so each rank reads about 1/P of a plain file from disk; the ranks
  then agree on the index base and the number of columns from the global min/max index.
- `.npz`: rows [r n / P, (r + 1) n / P) of the arrays (the arrays are decompressed whole on
  every rank: NumPy cannot read part of a compressed array).

Any failure on any rank (missing file, malformed line, no rows) is raised on every rank, and
every error names the file.
"""
import os

import numpy as np

from .._distributed import Distributed
from .._validation import check_rows
from .svmlight import assemble, read_svmlight_part, resolve_features, svmlight_byte_ranges


def read_rows(path, *, part="train", n_features=None, zero_based=False, comm=None):
    """(X, y) from a LIBSVM/svmlight file (plain or gzip) or an `.npz` file.

    Raises FileNotFoundError ("no such file: ...") or ValueError naming the file.

    Parameters
    ----------
    path : str or path-like
        The file.
    part : {"train", "test"}, default="train"
        Which arrays of an npz file without `X`/`y` to read (`X_train`/`y_train` or
        `X_test`/`y_test`).
    n_features : int or None, default=None
        The number of columns (None: a LIBSVM file's largest index; an npz file's own); a
        file with more is an error.
    zero_based : bool, default=False
        LIBSVM indices start at 0 (False: at 1).
    comm : mpi4py communicator or None, default=None
        Each rank calls read_rows and gets its share of the rows; every rank alike raises
        any rank's error (skylite._distributed.Distributed is accepted too).

    Returns
    -------
    X : ndarray or CSR matrix of shape (n, n_features)
        The rows (this rank's share under `comm`).
    y : ndarray of shape (n,) or None
        None for an npz file without labels; integral LIBSVM labels come back as int64 (so
        predictions print as `3`, not `3.0`, as LIBSVM's do), on every rank alike.
    """
    dist = comm if isinstance(comm, Distributed) else Distributed(comm)
    rank, size = dist.rank, dist.size
    if str(path).endswith(".npz"):
        return dist.agree(_read_npz_rows, path, part, rank, size, n_features)
    byte_range = None if size == 1 else dist.agree(svmlight_byte_ranges, path, size)[rank]
    rows = dist.agree(_read_part, path, byte_range)
    lowest = rows.min_index if rows.min_index >= 0 else np.iinfo(np.int64).max
    lows, highs, integral = zip(*dist.allgather((lowest, rows.max_index,
                                                 _integral(rows.labels))))
    low = min(lows)
    low = -1 if low == np.iinfo(np.int64).max else low
    try:
        base, columns = resolve_features(low, max(highs), zero_based=zero_based,
                                         n_features=n_features)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    X, y = dist.agree(assemble, rows, columns, base)
    return X, (y.astype(np.int64) if all(integral) else y)


def _read_part(path, byte_range):
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    rows = read_svmlight_part(path, byte_range)
    if rows.n_rows == 0:
        where = "" if byte_range is None else f" in bytes [{byte_range[0]}, {byte_range[1]})"
        raise ValueError(f"{path}: no rows{where}")
    return rows


def _integral(labels):
    return bool(labels.size == 0 or (np.all(labels == np.round(labels))
                                     and np.abs(labels).max() < 2**53))


def _read_npz_rows(path, part, rank, size, n_features):
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    try:
        arrays = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
    with arrays:
        names = set(arrays.files)
        x_name, y_name = ("X", "y") if "X" in names else (f"X_{part}", f"y_{part}")
        if x_name not in names:
            raise ValueError(f"{path}: no array 'X' or '{x_name}' (arrays: "
                             f"{', '.join(sorted(names)) or 'none'})")
        X = arrays[x_name]
        y = arrays[y_name] if y_name in names else None
    if X.ndim != 2:
        raise ValueError(f"{path}: {x_name} must be 2-D, got shape {X.shape}")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{path}: {x_name} has {X.shape[1]} columns, expected {n_features}")
    if y is not None and len(y) != len(X):
        raise ValueError(f"{path}: {x_name} has {len(X)} rows but {y_name} has {len(y)}")
    start, stop = (len(X) * rank) // size, (len(X) * (rank + 1)) // size
    if stop == start:
        raise ValueError(f"{path}: {len(X)} rows cannot be shared by {size} ranks")
    try:
        X = check_rows(X[start:stop], name=x_name)
    except ValueError as exc:       # NaN, complex, strings: one line that names the file
        raise ValueError(f"{path}: {str(exc).splitlines()[0]}") from None
    return X, (None if y is None else y[start:stop])
