"""Real data sets: pendigits and an MNIST sample shipped with skylite, the full MNIST (a
local file, else fetched once and cached), and the deformed-digits stream."""
from importlib import resources

import numpy as np

from .mnist import get_data_home, load_mnist, load_mnist_sample

__all__ = ["get_data_home", "load_mnist", "load_mnist_sample", "load_pendigits"]


def load_pendigits():
    """UCI Pen-Based Recognition of Handwritten Digits (LIBSVM's copy).

    16 integer features in 0..100, 10 classes; the standard split.

    Returns
    -------
    X_train : ndarray of shape (7494, 16), float32
        Training rows.
    y_train : ndarray of shape (7494,), int64
        Their labels 0..9.
    X_test : ndarray of shape (3498, 16), float32
        Test rows.
    y_test : ndarray of shape (3498,), int64
        Their labels.
    """
    with resources.files(__package__).joinpath("pendigits.npz").open("rb") as f:
        z = np.load(f)
        return z["X_train"], z["y_train"], z["X_test"], z["y_test"]
