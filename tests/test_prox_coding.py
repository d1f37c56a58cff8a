"""Tests of skylite.prox.coding: class labels <-> loss targets and decision values."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skylite.prox as P
from skylite.prox.coding import code_labels, decode_decision, n_outputs, softmax


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=2, max_size=30).filter(lambda y: len(set(y)) > 1),
       st.sampled_from(["squared", "lad", "hinge", "logistic"]))
def test_code_and_decode_round_trip(labels, loss):
    y = np.array(labels)
    Y, classes = code_labels(y, loss)
    np.testing.assert_array_equal(classes, np.unique(y))
    K = classes.size
    m = n_outputs(K, loss)
    assert Y.shape == (y.size, m) and Y.dtype == np.float64
    if loss == "logistic":
        assert m == K
        assert set(np.unique(Y)) <= {0.0, 1.0} and (Y.sum(axis=1) == 1).all()
    else:
        assert m == (1 if K == 2 else K)
        assert set(np.unique(Y)) <= {-1.0, 1.0}
    # the coded targets are accepted by the loss, and decode back to the labels
    P.get_loss(loss, **({"classification": True} if loss in ("squared", "lad") else {})) \
        .prox(np.zeros_like(Y), Y, 1.0)
    np.testing.assert_array_equal(classes[decode_decision(Y)], y)


def test_two_class_conventions():
    Y, classes = code_labels(np.array(["b", "a", "b"]), "hinge")
    np.testing.assert_array_equal(classes, ["a", "b"])
    np.testing.assert_array_equal(Y, [[1.0], [-1.0], [1.0]])  # classes[1] is +1
    Y, _ = code_labels(np.array(["b", "a", "b"]), P.LogisticLoss())
    np.testing.assert_array_equal(Y, [[0, 1], [1, 0], [0, 1]])
    np.testing.assert_array_equal(decode_decision(np.array([[0.2], [-0.1], [0.0]])), [1, 0, 0])
    np.testing.assert_array_equal(decode_decision(np.array([[1.0, 1.0, 0.0]])), [0])  # ties
    # fixed classes: labels may be a subset; m follows the classes
    Y, classes = code_labels([2, 2], "squared", classes=[0, 1, 2])
    np.testing.assert_array_equal(Y, [[-1, -1, 1], [-1, -1, 1]])


def test_coding_errors():
    with pytest.raises(ValueError, match="at least two classes"):
        code_labels([1, 1, 1], "hinge")
    with pytest.raises(ValueError, match="not in classes"):
        code_labels([1, 5], "hinge", classes=[1, 2])
    with pytest.raises(ValueError, match="sorted and unique"):
        code_labels([1, 2], "hinge", classes=[2, 1])
    with pytest.raises(ValueError, match="1-D"):
        code_labels([[1, 2]], "hinge")
    with pytest.raises(ValueError, match="NaN"):
        code_labels([1.0, np.nan], "logistic")
    with pytest.raises(ValueError, match="unknown loss"):
        code_labels([1, 2], "nope")
    with pytest.raises(ValueError, match="n x m"):
        decode_decision(np.zeros(3))


def test_softmax_is_stable():
    O = np.array([[1e4, -1e4, 0.0], [0.0, 0.0, 0.0], [-1e4, -1e4 + 1, -1e4]])
    Pm = softmax(O)
    assert np.isfinite(Pm).all()
    np.testing.assert_allclose(Pm.sum(axis=1), 1.0)
    np.testing.assert_allclose(Pm[0], [1, 0, 0])
    np.testing.assert_allclose(Pm[2], np.exp([0, 1, 0]) / np.exp([0, 1, 0]).sum())
