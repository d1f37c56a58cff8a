"""MNIST handwritten digits: the full set (a local file, else OpenML, cached) and the small
sample that ships inside skylite.

Both give the standard split in the original order, the images flattened row-major
(28 x 28 -> 784) and the pixels as float32 `k / 255` in [0, 1], labels int64 0..9.
"""
import os
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["get_data_home", "load_mnist", "load_mnist_sample"]

N_TRAIN, N_TEST, N_PIXELS = 60_000, 10_000, 784
FILE = "mnist.npz"
KEYS = ("X_train", "y_train", "X_test", "y_test")


def get_data_home(data_home=None):
    """The folder skylite's data sets are read from and cached in.

    Parameters
    ----------
    data_home : str or path-like, optional
        The folder to use. Default: the environment variable ``SKYLITE_DATA`` if it is set,
        else ``~/skylite_data``.

    Returns
    -------
    Path
        The folder, `~` expanded. It is not created here.
    """
    if data_home is None:
        data_home = os.environ.get("SKYLITE_DATA") or Path("~") / "skylite_data"
    return Path(data_home).expanduser()


def _scaled(pixels):
    """uint8 pixels as float32 k / 255: the values of MNIST's files, in [0, 1]."""
    return pixels.astype(np.float32) / np.float32(255)


def _read_local(path):
    """X_train, y_train, X_test, y_test from a mnist.npz, checked."""
    try:
        z = np.load(path)
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        # not a zip, a truncated one, a pickle (ValueError)
        raise ValueError(f"{path}: cannot read it as an MNIST .npz file ({exc}); delete it "
                         f"to fetch MNIST again") from exc
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise ValueError(f"{path}: cannot read it as an MNIST .npz file (it holds one array, "
                         f"not {', '.join(KEYS)}); delete it to fetch MNIST again")
    with z:
        missing = [key for key in KEYS if key not in z.files]
        arrays = None if missing else [z[key] for key in KEYS]
    if missing:
        raise ValueError(f"{path}: not an MNIST file: no {', '.join(missing)} (expected "
                         f"{', '.join(KEYS)}); delete it to fetch MNIST again")
    X_train, y_train, X_test, y_test = arrays
    for X, y, part in ((X_train, y_train, "train"), (X_test, y_test, "test")):
        if X.ndim != 2 or X.shape[1] != N_PIXELS or y.shape != (len(X),):
            raise ValueError(f"{path}: X_{part} has shape {X.shape} and y_{part} {y.shape}; "
                             f"expected (n, {N_PIXELS}) and (n,)")
    return arrays


def _from_openml(X, y):
    """OpenML's mnist_784 (70,000 rows of pixels 0..255, labels as strings, the training
    images first) as X_train, y_train, X_test, y_test in skylite's form."""
    X, y = np.asarray(X), np.asarray(y)
    if X.shape != (N_TRAIN + N_TEST, N_PIXELS) or y.shape != (N_TRAIN + N_TEST,):
        raise ValueError(f"OpenML's mnist_784 came with shapes {X.shape} and {y.shape}, not "
                         f"({N_TRAIN + N_TEST}, {N_PIXELS}) and ({N_TRAIN + N_TEST},)")
    pixels = X.astype(np.uint8)
    if not np.array_equal(pixels, X):
        raise ValueError("OpenML's mnist_784 pixels are not integers in 0..255")
    labels = y.astype(np.int64)
    return (_scaled(pixels[:N_TRAIN]), labels[:N_TRAIN],
            _scaled(pixels[N_TRAIN:]), labels[N_TRAIN:])


def _fetch(home):
    """MNIST from OpenML through scikit-learn (its download cached under home/openml)."""
    from sklearn.datasets import fetch_openml
    try:
        bunch = fetch_openml("mnist_784", version=1, as_frame=False, parser="liac-arff",
                             data_home=home)
    except OSError as exc:          # no network (URLError), a refused or cut download
        raise OSError(f"cannot fetch MNIST from OpenML ({exc}); without a network, put an "
                      f"mnist.npz in {home} (the format load_mnist documents)") from exc
    return _from_openml(bunch.data, bunch.target)


def _save(arrays, path):
    """Write the four arrays to path as one .npz, atomically (a partial file is never read)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    with open(partial, "wb") as f:
        np.savez_compressed(f, **dict(zip(KEYS, arrays)))
    os.replace(partial, path)


def load_mnist(n_train=None, data_home=None, *, download_if_missing=True):
    """MNIST handwritten digits: the standard 60,000 training and 10,000 test images.

    Reads ``mnist.npz`` in `data_home` when it is there. Otherwise fetches MNIST from
    OpenML (``mnist_784``, version 1, about 55 MB, through scikit-learn's
    `~sklearn.datasets.fetch_openml`), converts it and writes ``mnist.npz`` into
    `data_home`, so that later calls read that file (18 MB) and need no network.

    Parameters
    ----------
    n_train : int, optional
        Return only the first `n_train` training images (in the original order). Default:
        all 60,000. The test set is always the whole 10,000.
    data_home : str or path-like, optional
        The folder of ``mnist.npz`` (see `get_data_home`: default ``$SKYLITE_DATA``, else
        ``~/skylite_data``). An ``mnist.npz`` placed there by hand is read as it is: arrays
        ``X_train`` (60000, 784) and ``X_test`` (10000, 784) of float32 pixels in [0, 1],
        ``y_train`` and ``y_test`` the labels (the format this function writes).
    download_if_missing : bool, default=True
        When ``mnist.npz`` is not in `data_home`: fetch MNIST if True, else raise
        FileNotFoundError.

    Returns
    -------
    X_train : ndarray of shape (n_train, 784), float32
        Training images, flattened row-major, pixels in [0, 1].
    y_train : ndarray of shape (n_train,), int64
        Their digits 0..9.
    X_test : ndarray of shape (10000, 784), float32
        Test images.
    y_test : ndarray of shape (10000,), int64
        Their digits.

    See Also
    --------
    load_mnist_sample : 1,500 training and 500 test images that ship with skylite.
    """
    if n_train is not None and (isinstance(n_train, bool)
                                or not isinstance(n_train, (int, np.integer))
                                or not 1 <= n_train <= N_TRAIN):
        raise ValueError(f"n_train={n_train!r}: expected an int from 1 to {N_TRAIN} (or None "
                         f"for all)")
    home = get_data_home(data_home)
    if home.exists() and not home.is_dir():
        raise NotADirectoryError(f"data_home={str(home)!r} is a file, not a folder")
    path = home / FILE
    if path.exists():
        arrays = _read_local(path)
    elif not download_if_missing:
        raise FileNotFoundError(f"{path} does not exist (and download_if_missing=False): "
                                f"place mnist.npz there or allow the download")
    else:
        home.mkdir(parents=True, exist_ok=True)
        arrays = _fetch(home)
        _save(arrays, path)
    X_train, y_train, X_test, y_test = arrays
    if n_train is not None:
        if n_train > len(X_train):
            raise ValueError(f"n_train={n_train}: {path} holds only {len(X_train)} training "
                             f"images")
        X_train, y_train = X_train[:n_train], y_train[:n_train]
    return X_train, y_train.astype(np.int64, copy=False), X_test, y_test.astype(np.int64, copy=False)


def load_mnist_sample():
    """A small MNIST sample that ships with skylite: no file, no network.

    The first 1,500 training and the first 500 test images of MNIST (stored as uint8, so
    the values are exactly those of `load_mnist`), enough for examples and quick checks.

    Returns
    -------
    X_train : ndarray of shape (1500, 784), float32
        Training images, flattened row-major, pixels in [0, 1].
    y_train : ndarray of shape (1500,), int64
        Their digits 0..9.
    X_test : ndarray of shape (500, 784), float32
        Test images.
    y_test : ndarray of shape (500,), int64
        Their digits.
    """
    with resources.files(__package__).joinpath("mnist_sample.npz").open("rb") as f:
        with np.load(f) as z:
            return (_scaled(z["X_train"]), z["y_train"].astype(np.int64),
                    _scaled(z["X_test"]), z["y_test"].astype(np.int64))
