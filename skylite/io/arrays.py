"""Dense rows from array files, used in place: `.npy` (memory-mapped) and HDF5 datasets.

Data at the scale skylite is for (millions of rows) comes as arrays on disk, not as text.
These readers hand the estimators and the engine arrays that are *views of the file*, so a fit
never copies X into memory: the operating system pages rows in as the sweep reads them (each
ADMM iteration reads every row once, row block by row block, when it regenerates the feature
blocks; with cached blocks only the first iteration does).

- `.npy`: `np.load(path, mmap_mode="r")`.  float32 and float64 are used as they are; other
  dtypes are converted (a copy).
- HDF5 (libSkylark's format: datasets `X`, n x d, and `y`, n, names can be changed): a
  contiguous, uncompressed dataset is memory-mapped at its offset in the file (`hdf5_rows`);
  a chunked or compressed one is read, as float32 or float64, into memory (HDF5 has to
  decompress it; no float64 copy of float32 data is made).  h5py is an optional dependency
  (`pip install skylite[hdf5]`).

Under MPI each rank takes rows [r n / P, (r + 1) n / P) (`rank_rows`) and touches only those.
"""
import os

import numpy as np

__all__ = ["NPY_SUFFIXES", "HDF5_SUFFIXES", "open_npy", "open_hdf5", "hdf5_rows",
           "is_hdf5_dataset", "labels_path", "rank_rows"]

NPY_SUFFIXES = (".npy",)
HDF5_SUFFIXES = (".h5", ".hdf5", ".hdf")


def rank_rows(n, rank, size):
    """The row range [start, stop) of `rank` out of `size` for n rows (near-equal shares)."""
    return (n * rank) // size, (n * (rank + 1)) // size


def labels_path(path):
    """The labels file beside an `.npy` rows file: NAME.X.npy -> NAME.y.npy (what
    benchmarks/deformed_mnist.py writes), else NAME.npy -> NAME.y.npy."""
    path = os.fspath(path)
    if path.endswith(".X.npy"):
        return path[:-len(".X.npy")] + ".y.npy"
    return path[:-len(".npy")] + ".y.npy"


def open_npy(path):
    """The array of an `.npy` file, memory-mapped read-only (no copy).  Raises
    FileNotFoundError or ValueError naming the file."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable .npy file ({exc})") from None


def is_hdf5_dataset(obj):
    """True for an h5py Dataset (checked without importing h5py)."""
    return type(obj).__module__.startswith("h5py") and hasattr(obj, "id") and \
        hasattr(obj, "shape") and hasattr(obj, "dtype")


def hdf5_rows(dataset, start=0, stop=None):
    """Rows [start, stop) of an h5py dataset as an ndarray, without a copy when it can be.

    A contiguous, uncompressed dataset of a native float or integer dtype is memory-mapped
    straight from its file at its byte offset; any other (chunked, compressed, virtual) is
    read into memory in its own dtype.  The result is read-only in the first case.
    """
    n = dataset.shape[0]
    stop = n if stop is None else stop
    offset = dataset.id.get_offset()
    if (offset is not None and dataset.chunks is None and dataset.compression is None
            and dataset.dtype.kind in "fiu" and dataset.dtype.isnative
            and dataset.size > 0):
        whole = np.memmap(dataset.file.filename, mode="r", dtype=dataset.dtype,
                          offset=offset, shape=dataset.shape, order="C")
        return whole[start:stop]
    return dataset[start:stop]


def open_hdf5(path, x_name="X", y_name="y", *, rank=0, size=1, require_labels=True):
    """(X, y) of this rank's rows of an HDF5 file with a 2-D dataset `x_name` and a 1-D (or
    n x m) dataset `y_name`.  y is None when the file has no `y_name` and labels are not
    required.  Raises ImportError (h5py missing) or ValueError / FileNotFoundError naming
    the file and the problem (missing dataset, wrong shape, too few rows for the ranks)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    try:
        import h5py
    except ImportError:
        raise ImportError(f"{path}: reading HDF5 needs h5py (pip install 'skylite[hdf5]')") \
            from None
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise ValueError(f"{path}: not a readable HDF5 file ({exc})") from None
    with f:
        names = sorted(f.keys())
        if x_name not in f or not isinstance(f[x_name], h5py.Dataset):
            raise ValueError(f"{path}: no dataset '{x_name}' (datasets: "
                             f"{', '.join(names) or 'none'}); choose it with --x-dataset")
        X = f[x_name]
        if X.ndim != 2:
            raise ValueError(f"{path}: dataset '{x_name}' must be 2-D (rows x columns), got "
                             f"shape {X.shape}")
        if y_name in f:
            Y = f[y_name]
            if not isinstance(Y, h5py.Dataset) or Y.ndim not in (1, 2) or \
                    Y.shape[0] != X.shape[0]:
                raise ValueError(f"{path}: dataset '{y_name}' must have one label per row of "
                                 f"'{x_name}' ({X.shape[0]}), got shape "
                                 f"{getattr(Y, 'shape', None)}")
        elif require_labels:
            raise ValueError(f"{path}: no dataset '{y_name}' for the labels (datasets: "
                             f"{', '.join(names)}); choose it with --y-dataset")
        else:
            Y = None
        start, stop = rank_rows(X.shape[0], rank, size)
        if stop == start:
            raise ValueError(f"{path}: {X.shape[0]} rows cannot be shared by {size} ranks")
        rows = hdf5_rows(X, start, stop)
        labels = None if Y is None else np.asarray(Y[start:stop])
    return rows, labels
