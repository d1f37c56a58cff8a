"""The deformed-digits stream: row k is a pure function of (seed, k)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.ndimage import gaussian_filter

from skylite.datasets.deformed_digits import deformed_digits

# smooth random "digits": strokes are a few pixels wide, as in MNIST
_noise = gaussian_filter(np.random.default_rng(0).uniform(size=(50, 28, 28)), (0, 2.5, 2.5))
IMAGES = np.clip((_noise - 0.5) * 12 + 0.5, 0, 1).reshape(50, 784).astype(np.float32)
LABELS = np.arange(50) % 10


@settings(max_examples=15, deadline=None)
@given(start=st.integers(0, 200), length=st.integers(1, 40), cut=st.integers(0, 40),
       seed=st.integers(0, 2**31))
def test_row_k_is_the_same_in_any_chunking(start, length, cut, seed):
    X, y = deformed_digits(IMAGES, LABELS, seed, start, start + length)
    cut = min(cut, length)
    X1, y1 = deformed_digits(IMAGES, LABELS, seed, start, start + cut)
    X2, y2 = deformed_digits(IMAGES, LABELS, seed, start + cut, start + length)
    np.testing.assert_array_equal(np.concatenate([X1, X2]), X)
    np.testing.assert_array_equal(np.concatenate([y1, y2]), y)
    k = start + length - 1
    alone, label = deformed_digits(IMAGES, LABELS, seed, k, k + 1)
    np.testing.assert_array_equal(alone[0], X[-1])
    assert label[0] == y[-1]


def test_rows_are_deformed_copies_of_their_base_image():
    X, y = deformed_digits(IMAGES, LABELS, 1, 0, 200)
    assert X.dtype == np.float32 and X.shape == (200, 784)
    assert 0 <= X.min() and X.max() <= 1
    # each row is closest (in correlation) to a base image carrying its label, mostly
    corr = np.corrcoef(np.vstack([X, IMAGES]))[:200, 200:]
    assert np.mean(LABELS[corr.argmax(axis=1)] == y) > 0.9
    assert not np.array_equal(X, deformed_digits(IMAGES, LABELS, 2, 0, 200)[0])
    assert len(np.unique(X.round(3), axis=0)) == 200       # no two rows alike


@pytest.mark.parametrize("args, message", [
    ((IMAGES[:, :700], LABELS, 0, 0, 5), "shape"),
    ((IMAGES, LABELS[:3], 0, 0, 5), "labels"),
    ((IMAGES, LABELS, -1, 0, 5), "seed"),
    ((IMAGES, LABELS, 0, 5, 2), "start"),
])
def test_bad_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        deformed_digits(*args)
