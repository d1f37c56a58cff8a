"""Small real datasets shipped with skylite."""
from importlib import resources

import numpy as np


def load_pendigits():
    """UCI Pen-Based Recognition of Handwritten Digits (LIBSVM's copy).

    16 integer features in 0..100, 10 classes; the standard split.
    Returns X_train (7494 x 16, float32), y_train, X_test (3498 x 16), y_test (int64).
    """
    with resources.files(__package__).joinpath("pendigits.npz").open("rb") as f:
        z = np.load(f)
        return z["X_train"], z["y_train"], z["X_test"], z["y_test"]
