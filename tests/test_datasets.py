"""skylite.datasets: the MNIST loader (a local file, else OpenML through scikit-learn, cached)
and the MNIST sample shipped inside the package."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.utils import Bunch

from skylite.datasets import get_data_home, load_mnist, load_mnist_sample, mnist

TESTS_SAMPLE = Path(__file__).parent / "data" / "mnist_sample.npz"


def test_the_shipped_sample_is_the_first_mnist_images():
    X, y, X_test, y_test = load_mnist_sample()
    assert X.shape == (1500, 784) and X_test.shape == (500, 784)
    assert X.dtype == X_test.dtype == np.float32 and y.dtype == y_test.dtype == np.int64
    assert X.min() == 0 and X.max() == 1 and set(np.unique(y_test)) == set(range(10))
    with np.load(TESTS_SAMPLE) as z:     # the first 3,000 training images, as uint8
        np.testing.assert_array_equal(X, z["pixels"][:1500].astype(np.float32) / np.float32(255))
        np.testing.assert_array_equal(y, z["labels"][:1500])


def _small_mnist(monkeypatch, n_train=6, n_test=4):
    """Shrink the standard split to n_train + n_test images so the tests stay small."""
    monkeypatch.setattr(mnist, "N_TRAIN", n_train)
    monkeypatch.setattr(mnist, "N_TEST", n_test)


def _openml_like(n, seed=0):
    """What fetch_openml("mnist_784", as_frame=False, parser="liac-arff") returns: float64
    pixels 0..255 and the labels as strings."""
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, size=(n, 784)).astype(np.float64)
    labels = rng.integers(0, 10, size=n).astype(str).astype(object)
    return Bunch(data=pixels, target=labels)


@pytest.fixture
def fake_openml(monkeypatch):
    """fetch_openml replaced by a 10-image OpenML-shaped answer; records its calls."""
    _small_mnist(monkeypatch)
    calls, bunch = [], _openml_like(10)

    def fetch_openml(name, **kwargs):
        calls.append((name, kwargs))
        return bunch

    monkeypatch.setattr("sklearn.datasets.fetch_openml", fetch_openml)
    return calls, bunch


def test_fetches_converts_and_caches(tmp_path, fake_openml, monkeypatch):
    calls, bunch = fake_openml
    X, y, X_test, y_test = load_mnist(data_home=tmp_path / "data")
    [(name, kwargs)] = calls
    assert name == "mnist_784"
    assert kwargs == dict(version=1, as_frame=False, parser="liac-arff",
                          data_home=tmp_path / "data")
    # the standard split: the first images train, the rest test; pixels k / 255 in float32
    np.testing.assert_array_equal(X, (bunch.data[:6] / 255).astype(np.float32))
    np.testing.assert_array_equal(X_test, (bunch.data[6:] / 255).astype(np.float32))
    assert X.dtype == X_test.dtype == np.float32 and y.dtype == y_test.dtype == np.int64
    np.testing.assert_array_equal(np.r_[y, y_test], bunch.target.astype(int))
    assert (tmp_path / "data" / "mnist.npz").is_file()
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["mnist.npz"]   # no partial file

    def offline(*args, **kwargs):
        raise AssertionError("the cached file should have been read")

    monkeypatch.setattr("sklearn.datasets.fetch_openml", offline)
    again = load_mnist(n_train=3, data_home=tmp_path / "data")
    for got, want in zip(again, (X[:3], y[:3], X_test, y_test)):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype


def test_reads_a_local_file_without_fetching(tmp_path, monkeypatch):
    """A file in the format of the data folder's mnist.npz (float32 k / 255) is read as it is."""
    monkeypatch.setattr("sklearn.datasets.fetch_openml", None)     # any call would fail
    rng = np.random.default_rng(1)
    arrays = dict(X_train=rng.integers(0, 256, (5, 784)).astype(np.float32) / np.float32(255),
                  y_train=rng.integers(0, 10, 5), X_test=np.ones((2, 784), np.float32),
                  y_test=np.array([3, 4]))
    np.savez_compressed(tmp_path / "mnist.npz", **arrays)
    monkeypatch.setenv("SKYLITE_DATA", str(tmp_path))
    X, y, X_test, y_test = load_mnist(n_train=4)
    np.testing.assert_array_equal(X, arrays["X_train"][:4])
    np.testing.assert_array_equal(y, arrays["y_train"][:4])
    np.testing.assert_array_equal(X_test, arrays["X_test"])
    np.testing.assert_array_equal(y_test, [3, 4])


def test_data_home_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("SKYLITE_DATA", raising=False)
    assert get_data_home() == Path("~/skylite_data").expanduser()
    monkeypatch.setenv("SKYLITE_DATA", str(tmp_path))
    assert get_data_home() == tmp_path
    assert get_data_home("~/elsewhere") == Path("~/elsewhere").expanduser()


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_conversion_keeps_every_pixel(n_train, seed):
    """uint8 pixels k survive as k / 255: (X * 255) rounds back to OpenML's values."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _small_mnist(monkeypatch, n_train, 10 - n_train)
        bunch = _openml_like(10, seed)
        X, y, X_test, y_test = mnist._from_openml(bunch.data, bunch.target)
    assert len(X) == n_train and len(X_test) == 10 - n_train
    np.testing.assert_array_equal(np.rint(np.r_[X, X_test] * 255.0), bunch.data)
    assert 0 <= X.min() and X.max() <= 1


@pytest.mark.parametrize("n_train", [0, -1, 60001, 2.5, True, "100"])
def test_bad_n_train(n_train, tmp_path):
    with pytest.raises(ValueError, match=f"n_train={n_train!r}: expected an int from 1 to"):
        load_mnist(n_train, data_home=tmp_path)


def test_n_train_beyond_a_local_file(tmp_path):
    np.savez(tmp_path / "mnist.npz", X_train=np.zeros((3, 784), np.float32),
             y_train=np.zeros(3, int), X_test=np.zeros((1, 784), np.float32), y_test=[0])
    with pytest.raises(ValueError, match="n_train=4: .*mnist.npz holds only 3 training"):
        load_mnist(4, data_home=tmp_path)


def test_missing_file_without_download(tmp_path):
    with pytest.raises(FileNotFoundError, match="mnist.npz does not exist"):
        load_mnist(data_home=tmp_path, download_if_missing=False)


def test_no_network_says_where_to_put_the_file(monkeypatch, tmp_path):
    def fetch_openml(*args, **kwargs):
        raise OSError("<urlopen error [Errno -2] Name or service not known>")

    monkeypatch.setattr("sklearn.datasets.fetch_openml", fetch_openml)
    with pytest.raises(OSError, match="cannot fetch MNIST from OpenML .*Name or service") as info:
        load_mnist(data_home=tmp_path)
    assert f"put an mnist.npz in {tmp_path}" in str(info.value)


def test_data_home_is_a_file(tmp_path):
    (tmp_path / "home").write_text("")
    with pytest.raises(NotADirectoryError, match="home' is a file"):
        load_mnist(data_home=tmp_path / "home")


@pytest.mark.parametrize("content, message", [
    (b"not an npz", "cannot read it as an MNIST .npz file"),
    (b"PK\x03\x04truncated", "cannot read it as an MNIST .npz file"),
    ("npy", "cannot read it as an MNIST .npz file"),
    ("keys", "not an MNIST file: no X_test, y_test"),
    ("shape", r"X_train has shape \(3, 10\) and y_train \(3,\); expected \(n, 784\)"),
])
def test_a_broken_local_file_is_named(tmp_path, content, message):
    path = tmp_path / "mnist.npz"
    if content == "npy":
        with open(path, "wb") as f:
            np.save(f, np.zeros(3))
    elif content == "keys":
        np.savez(path, X_train=np.zeros((3, 784)), y_train=np.zeros(3))
    elif content == "shape":
        np.savez(path, X_train=np.zeros((3, 10)), y_train=np.zeros(3),
                 X_test=np.zeros((1, 784)), y_test=np.zeros(1))
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as info:
        load_mnist(data_home=tmp_path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("bunch, message", [
    (Bunch(data=np.zeros((9, 784)), target=np.zeros(9).astype(str)), "shapes"),
    (Bunch(data=np.full((10, 784), 0.5), target=np.zeros(10).astype(str)),
     "not integers in 0..255"),
    (Bunch(data=np.full((10, 784), 256.0), target=np.zeros(10).astype(str)),
     "not integers in 0..255"),
])
def test_an_unexpected_openml_answer_is_refused(monkeypatch, tmp_path, bunch, message):
    _small_mnist(monkeypatch)
    monkeypatch.setattr("sklearn.datasets.fetch_openml", lambda *a, **k: bunch)
    with pytest.raises(ValueError, match=message):
        load_mnist(data_home=tmp_path)
    assert not (tmp_path / "mnist.npz").exists()
