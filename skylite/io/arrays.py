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
    """The rows of one MPI rank: near-equal, consecutive shares in rank order.

    Parameters
    ----------
    n : int
        The number of rows.
    rank : int
        This rank, 0 <= rank < size.
    size : int
        The number of ranks.

    Returns
    -------
    tuple of int
        (start, stop): the rank's rows are [start, stop), with start = n rank // size.
    """
    return (n * rank) // size, (n * (rank + 1)) // size


def labels_path(path):
    """The labels file beside an `.npy` file of rows.

    Parameters
    ----------
    path : str or os.PathLike
        The rows: NAME.X.npy (what benchmarks/deformed_mnist.py writes) or NAME.npy.

    Returns
    -------
    str
        NAME.y.npy.
    """
    path = os.fspath(path)
    if path.endswith(".X.npy"):
        return path[:-len(".X.npy")] + ".y.npy"
    return path[:-len(".npy")] + ".y.npy"


def open_npy(path):
    """The array of an `.npy` file, memory-mapped read-only (no copy).

    Parameters
    ----------
    path : str or os.PathLike
        The `.npy` file.

    Returns
    -------
    numpy.memmap
        The array, read-only.

    Raises
    ------
    FileNotFoundError, ValueError
        A missing or unreadable file, named in the message.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable .npy file ({exc})") from None


def is_hdf5_dataset(obj):
    """Whether `obj` is an h5py Dataset (checked without importing h5py).

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
        True for an h5py Dataset.
    """
    return type(obj).__module__.startswith("h5py") and hasattr(obj, "id") and \
        hasattr(obj, "shape") and hasattr(obj, "dtype")


def hdf5_rows(dataset, start=0, stop=None):
    """Rows [start, stop) of an h5py dataset as an ndarray, without a copy when it can be.

    A contiguous, uncompressed dataset of a native float or integer dtype is memory-mapped
    straight from its file at its byte offset; any other (chunked, compressed, virtual) is
    read into memory in its own dtype.

    Parameters
    ----------
    dataset : h5py.Dataset
        A dataset of rows (its first axis).
    start : int, default=0
        The first row.
    stop : int or None, default=None
        One past the last row (None: every row).

    Returns
    -------
    numpy.ndarray
        The rows: a read-only numpy.memmap for a contiguous dataset, else an array in memory.
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
    """The rows and labels of an HDF5 file, or one rank's share of them.

    Parameters
    ----------
    path : str or os.PathLike
        The HDF5 file.
    x_name : str, default="X"
        The 2-D dataset of the rows (n x d).
    y_name : str, default="y"
        The dataset of the labels (n, or n x m).
    rank : int, default=0
        This rank; it gets rows `rank_rows(n, rank, size)`.
    size : int, default=1
        The number of ranks.
    require_labels : bool, default=True
        Whether a file without `y_name` is an error (else y is None).

    Returns
    -------
    X : numpy.ndarray
        The rows (memory-mapped when the dataset allows, see `hdf5_rows`).
    y : numpy.ndarray or None
        Their labels.

    Raises
    ------
    ImportError
        h5py is not installed.
    FileNotFoundError, ValueError
        A missing or unreadable file, a missing dataset, a wrong shape or too few rows for
        the ranks; the message names the file.
    """
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
