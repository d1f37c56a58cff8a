"""Training and test files for the command line: LIBSVM text, `.npz`, `.npy` or HDF5, whole or
one rank's share.

`read_rows(path, part=..., comm=...)` returns the rows (X, y) of a file.  With an mpi4py
communicator of P > 1 ranks, rank r gets only its share:

- LIBSVM text: the lines whose first byte lies in the r-th of P equal byte ranges of the file
  (`svmlight_byte_ranges`), so each rank reads about 1/P of a plain file from disk; the ranks
  then agree on the index base and the number of columns from the global min/max index.
- `.npz`: rows [r n / P, (r + 1) n / P) of the arrays (the arrays are decompressed whole on
  every rank: NumPy cannot read part of a compressed array).
- `.npy` (rows; labels in NAME.y.npy beside NAME.X.npy or NAME.npy, or `labels=`) and HDF5
  (datasets `X` and `y`): rows [r n / P, (r + 1) n / P), memory-mapped where the format
  allows, so a rank reads only its rows and nothing is copied (skylite.io.arrays).

Any failure on any rank (missing file, malformed line, no rows) is raised on every rank, and
every error names the file.
"""
import os

import numpy as np

from .._distributed import Distributed
from .._validation import check_rows
from .arrays import (HDF5_SUFFIXES, NPY_SUFFIXES, labels_path, open_hdf5, open_npy,
                     rank_rows)
from .svmlight import assemble, read_svmlight_part, resolve_features, svmlight_byte_ranges


def read_rows(path, *, part="train", n_features=None, zero_based=False, comm=None,
              labels=None, x_dataset="X", y_dataset="y"):
    """(X, y) from a LIBSVM/svmlight file (plain or gzip), an `.npz`, an `.npy` or an HDF5 file.

    Raises FileNotFoundError ("no such file: ...") or ValueError naming the file.

    Parameters
    ----------
    path : str or path-like
        The file.
    part : {"train", "test"}, default="train"
        Which arrays of an npz file without `X`/`y` to read (`X_train`/`y_train` or
        `X_test`/`y_test`).
    n_features : int or None, default=None
        The number of columns (None: a LIBSVM file's largest index; an array file's own); a
        file with more is an error.
    zero_based : bool, default=False
        LIBSVM indices start at 0 (False: at 1).
    comm : mpi4py communicator or None, default=None
        Each rank calls read_rows and gets its share of the rows; every rank alike raises
        any rank's error (skylite._distributed.Distributed is accepted too).
    labels : path or None, default=None
        The `.npy` file of an `.npy` file's labels (None: NAME.y.npy beside NAME.X.npy or
        NAME.npy, if it exists).
    x_dataset, y_dataset : str, default="X", "y"
        The HDF5 datasets of the rows and the labels.

    Returns
    -------
    X : ndarray, CSR matrix or memory-mapped array of shape (n, n_features)
        The rows (this rank's share under `comm`).  Rows of `.npy` and HDF5 files are
        memory-mapped views of the file when the format allows (skylite.io.arrays): float32
        stays float32 and nothing is copied.
    y : ndarray of shape (n,) or None
        None for an array file without labels; integral LIBSVM labels come back as int64 (so
        predictions print as `3`, not `3.0`, as LIBSVM's do), on every rank alike.
    """
    dist = comm if isinstance(comm, Distributed) else Distributed(comm)
    rank, size = dist.rank, dist.size
    name = str(path).lower()
    if name.endswith(".npz"):
        return dist.agree(_read_npz_rows, path, part, rank, size, n_features)
    if name.endswith(NPY_SUFFIXES):
        return dist.agree(_read_npy_rows, path, labels, rank, size, n_features)
    if name.endswith(HDF5_SUFFIXES):
        return dist.agree(_read_hdf5_rows, path, x_dataset, y_dataset, rank, size,
                          n_features)
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
    return _checked_share(path, X, y, x_name, y_name, rank, size, n_features)


def _read_npy_rows(path, labels, rank, size, n_features):
    X = open_npy(path)
    labels = labels if labels is not None else labels_path(path)
    y = open_npy(labels) if os.path.exists(labels) else None
    return _checked_share(path, X, y, "the rows", os.path.basename(labels), rank, size,
                          n_features)


def _read_hdf5_rows(path, x_name, y_name, rank, size, n_features):
    X, y = open_hdf5(path, x_name, y_name, rank=rank, size=size, require_labels=False)
    return _checked_rows(path, X, y, f"'{x_name}'", n_features)


def _checked_share(path, X, y, x_name, y_name, rank, size, n_features):
    """This rank's rows of the arrays X, y of a file, checked (see `_checked_rows`)."""
    if X.ndim != 2:
        raise ValueError(f"{path}: {x_name} must be 2-D, got shape {X.shape}")
    if y is not None and len(y) != len(X):
        raise ValueError(f"{path}: {x_name} has {len(X)} rows but {y_name} has {len(y)}")
    start, stop = rank_rows(len(X), rank, size)
    if stop == start:
        raise ValueError(f"{path}: {len(X)} rows cannot be shared by {size} ranks")
    return _checked_rows(path, X[start:stop], None if y is None else np.asarray(y[start:stop]),
                         x_name, n_features)


def _checked_rows(path, X, y, x_name, n_features):
    """Rows of a file checked like any input (dimensions, dtype, NaN / infinity), with the
    error in one line that names the file; float32 and float64 arrays are not copied.  X is
    2-D (checked by the caller, before it takes a rank's rows)."""
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{path}: {x_name} has {X.shape[1]} columns, expected {n_features}")
    try:
        X = check_rows(X, name=x_name)
    except ValueError as exc:       # NaN, complex, strings: one line that names the file
        raise ValueError(f"{path}: {str(exc).splitlines()[0]}") from None
    return X, y
