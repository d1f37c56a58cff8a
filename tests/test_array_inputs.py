"""Rows from array files used in place (issue: scale): .npy memory maps and HDF5 datasets in
`fit`, `read_rows` and the command line, and the automatic row-block plan of the engine."""
import subprocess
import sys

import numpy as np
import pytest

import skylite
from skylite import KernelSVC
from skylite.admm import BlockADMM
from skylite.admm.memory import MemoryRefused
from skylite.io import read_rows
from skylite.io.arrays import hdf5_rows, labels_path, open_npy
from skylite.prox import get_loss, get_regularizer
from skylite.prox.coding import code_labels
from skylite.sketch import GaussianRFF

h5py = pytest.importorskip("h5py", reason="h5py is not installed (pip install '.[test]')")
pytestmark = pytest.mark.filterwarnings("ignore:BlockADMM stopped at max_iter")


@pytest.fixture(scope="module")
def rows(pendigits):
    """1,500 pendigits rows in [0, 1] as float32, and their labels."""
    X, y = pendigits[0][:1500] / 100.0, pendigits[1][:1500]
    return X.astype(np.float32), y


@pytest.fixture(scope="module")
def files(rows, tmp_path_factory):
    """The rows as NAME.X.npy / NAME.y.npy and as an HDF5 file with a contiguous `X`, a
    chunked gzip copy `Xz`, and labels `y`."""
    X, y = rows
    folder = tmp_path_factory.mktemp("arrays")
    np.save(folder / "digits.X.npy", X)
    np.save(folder / "digits.y.npy", y)
    with h5py.File(folder / "digits.h5", "w") as f:
        f["X"] = X
        f["y"] = y
        f.create_dataset("Xz", data=X, chunks=(256, X.shape[1]), compression="gzip")
    return folder


def model(**kw):
    return KernelSVC(sigma=0.6, n_features=256, max_iter=15, precision="float32",
                     random_state=3, **kw)


def test_npy_and_contiguous_hdf5_rows_are_views_of_the_file(rows, files):
    X, _ = rows
    mapped = open_npy(files / "digits.X.npy")
    assert isinstance(mapped, np.memmap) and mapped.dtype == np.float32
    with h5py.File(files / "digits.h5", "r") as f:
        contiguous = hdf5_rows(f["X"], 100, 300)
        chunked = hdf5_rows(f["Xz"], 100, 300)
    assert isinstance(contiguous, np.memmap) and not contiguous.flags.writeable
    assert not isinstance(chunked, np.memmap) and chunked.dtype == np.float32
    np.testing.assert_array_equal(contiguous, X[100:300])
    np.testing.assert_array_equal(chunked, X[100:300])
    assert labels_path("a/b.X.npy") == "a/b.y.npy" and labels_path("a/b.npy") == "a/b.y.npy"


def test_fits_on_a_memmap_an_hdf5_dataset_and_memory_give_the_same_model(rows, files):
    X, y = rows
    in_memory = model().fit(X, y)
    on_memmap = model().fit(np.load(files / "digits.X.npy", mmap_mode="r"), y)
    with h5py.File(files / "digits.h5", "r") as f:
        on_hdf5 = model().fit(f["X"], f["y"])
        on_chunked = model().fit(f["Xz"], y)
        predicted = on_hdf5.predict(f["X"])
    for other in (on_memmap, on_hdf5, on_chunked):
        np.testing.assert_array_equal(other.coef_, in_memory.coef_)
    np.testing.assert_array_equal(predicted, in_memory.predict(X))
    assert in_memory.score(X, y) > 0.9


def test_validation_rows_from_the_same_memmap_are_not_copied(rows, files):
    X, y = rows
    mapped = np.load(files / "digits.X.npy", mmap_mode="r")
    fitted = model(n_iter_no_change=5).fit(mapped[:1200], y[:1200], X_val=mapped[1200:],
                                           y_val=y[1200:])
    reference = model(n_iter_no_change=5).fit(X[:1200], y[:1200], X_val=X[1200:],
                                              y_val=y[1200:])
    np.testing.assert_array_equal(fitted.coef_, reference.coef_)
    assert all("validation" in r for r in fitted.history_)


def test_read_rows_of_npy_and_hdf5_files(rows, files):
    X, y = rows
    Xn, yn = read_rows(files / "digits.X.npy")
    Xh, yh = read_rows(files / "digits.h5")
    Xz, _ = read_rows(files / "digits.h5", x_dataset="Xz")
    for rows_, labels in ((Xn, yn), (Xh, yh), (Xz, yh)):
        assert rows_.dtype == np.float32
        np.testing.assert_array_equal(rows_, X)
        np.testing.assert_array_equal(labels, y)
    assert not Xn.flags.owndata and not Xh.flags.owndata      # views of the files
    # an .npy without a labels file has y None; labels can be named
    np.save(files / "plain.npy", X[:10])
    np.save(files / "plain_labels.npy", y[:10])
    assert read_rows(files / "plain.npy")[1] is None
    np.testing.assert_array_equal(read_rows(files / "plain.npy",
                                            labels=files / "plain_labels.npy")[1], y[:10])
    with pytest.raises(ValueError, match="has 10 rows but digits.y.npy has 1500"):
        read_rows(files / "plain.npy", labels=files / "digits.y.npy")


@pytest.mark.parametrize("build, message", [
    (lambda f, X, y: (f.create_dataset("rows", data=X), f.create_dataset("y", data=y)),
     "no dataset 'X' (datasets: rows, y)"),
    (lambda f, X, y: (f.create_dataset("X", data=X[:, 0]), f.create_dataset("y", data=y)),
     "dataset 'X' must be 2-D"),
    (lambda f, X, y: (f.create_dataset("X", data=X), f.create_dataset("y", data=y[:-3])),
     "dataset 'y' must have one label per row of 'X' (1500)"),
    (lambda f, X, y: (f.create_dataset("X", data=np.where(np.arange(X.shape[1]) == 4, np.nan,
                                                          X)),
                      f.create_dataset("y", data=y)),
     "NaN"),
])
def test_malformed_hdf5_gives_a_one_line_error_naming_the_file(rows, tmp_path, build, message):
    X, y = rows
    path = tmp_path / "bad.h5"
    with h5py.File(path, "w") as f:
        build(f, X, y)
    with pytest.raises(ValueError) as info:
        read_rows(path)
    text = str(info.value)
    assert str(path) in text and message in text and "\n" not in text
    proc = subprocess.run([sys.executable, "-m", "skylite", "train", str(path), "-m",
                           str(tmp_path / "m.sky")], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 1 and message in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_not_an_hdf5_file(tmp_path):
    path = tmp_path / "text.h5"
    path.write_text("1 1:2\n")
    with pytest.raises(ValueError, match="not a readable HDF5 file"):
        read_rows(path)


def test_command_line_trains_and_predicts_on_npy_and_hdf5(rows, files, tmp_path):
    X, y = rows
    common = ["--sigma", "0.6", "--features", "256", "--iters", "15", "--precision",
              "float32", "--seed", "3", "-q"]
    for name, extra in (("npy", [str(files / "digits.X.npy")]),
                        ("h5", [str(files / "digits.h5")]),
                        ("h5z", [str(files / "digits.h5"), "--x-dataset", "Xz"])):
        out = tmp_path / f"{name}.sky"
        proc = subprocess.run([sys.executable, "-m", "skylite", "train", *extra, "-m",
                               str(out), *common], capture_output=True, text=True,
                              cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "1500 rows, 16 features, 10 classes" in proc.stdout
    models = [skylite.load(tmp_path / f"{name}.sky") for name in ("npy", "h5", "h5z")]
    for other in models[1:]:
        np.testing.assert_array_equal(other.coef_, models[0].coef_)
    proc = subprocess.run([sys.executable, "-m", "skylite", "predict",
                           str(tmp_path / "h5.sky"), str(files / "digits.X.npy")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.split()) == 1500 and "accuracy" in proc.stderr
    # options that do not apply to the input are refused (exit 2)
    for bad in (["--x-dataset", "X"], ["--labels", str(files / "digits.y.npy")]):
        target = files / ("digits.X.npy" if bad[0] == "--x-dataset" else "digits.h5")
        proc = subprocess.run([sys.executable, "-m", "skylite", "train", str(target), "-m",
                               str(tmp_path / "x.sky"), *bad], capture_output=True, text=True,
                              cwd=tmp_path)
        assert proc.returncode == 2 and "applies only" in proc.stderr


# ---- the row-block plan ----

@pytest.fixture(scope="module")
def wide_problem(pendigits):
    X = (pendigits[0][:3000] / 100.0).astype(np.float64)
    Y, _ = code_labels(pendigits[1][:3000], "ovr")
    fmap = GaussianRFF(sigma=0.6, n_features=1024, n_blocks=2, random_state=1).fit(X)
    return X, Y, fmap


def engine(fmap, **kw):
    return BlockADMM(fmap, get_loss("squared", classification=True), get_regularizer("l2"),
                     1e-2, tol=1e-6, max_iter=3000, n_threads=2, **kw)


def test_row_blocks_are_added_until_the_working_memory_fits_the_budget(wide_problem, capsys):
    """The column sweep bounds its n_i x s_j per-thread blocks by splitting the rows."""
    X, Y, fmap = wide_problem
    one = engine(fmap, sweep="columns", memory_budget=0).fit(X, Y)
    assert one.n_row_blocks_ == 1
    two = engine(fmap, sweep="columns", n_row_blocks=2, memory_budget=0).fit(X, Y)
    # a budget between the working memory with 2 row blocks and with 1: the plan takes 2
    assert two.memory_footprint_.total < one.memory_footprint_.total
    budget = (two.memory_footprint_.total + one.memory_footprint_.total) // 2
    planned = engine(fmap, sweep="columns", memory_budget=budget, verbose=True).fit(X, Y)
    assert planned.n_row_blocks_ == 2 and planned.memory_estimate_ <= budget
    assert "R=2" in capsys.readouterr().out
    np.testing.assert_array_equal(planned.coef_, two.coef_)
    # the same optimum as one row block (squared loss, l2: a unique solution)
    assert np.linalg.norm(planned.coef_ - one.coef_) <= 1e-3 * np.linalg.norm(one.coef_)
    with pytest.raises(MemoryRefused, match="memory_budget=.* is less than this run's "
                                            "working memory"):
        engine(fmap, sweep="columns", memory_budget=10_000).fit(X, Y)


def test_the_row_sweep_needs_neither_row_blocks_nor_whole_feature_blocks(wide_problem, capsys):
    """With n_i >= s_j, "auto" takes the row sweep: one row block, tiles instead of n_i x s_j
    blocks per thread, and the column sweep's iterates up to rounding."""
    X, Y, fmap = wide_problem
    columns = engine(fmap, sweep="columns", memory_budget=0).fit(X, Y)
    rows = engine(fmap, memory_budget=0, verbose=True).fit(X, Y)
    assert rows.row_sweep_ and not columns.row_sweep_
    assert rows.n_row_blocks_ == 1
    assert rows.memory_footprint_.total < columns.memory_footprint_.total
    assert "row sweep" in capsys.readouterr().out
    # a budget the column sweep cannot meet, even with row blocks: the row sweep keeps one
    budget = rows.memory_footprint_.total
    with pytest.raises(MemoryRefused):
        engine(fmap, sweep="columns", memory_budget=budget).fit(X, Y)
    planned = engine(fmap, memory_budget=budget).fit(X, Y)
    assert planned.row_sweep_ and planned.n_row_blocks_ == 1
    assert planned.memory_estimate_ <= budget
    assert rows.n_iter_ == columns.n_iter_
    np.testing.assert_allclose(rows.coef_, columns.coef_, rtol=0, atol=1e-9 * abs(
        columns.coef_).max())
    with pytest.raises(ValueError, match="sweep='rows' needs at least as many rows"):
        engine(fmap, sweep="rows").fit(X[:300], Y[:300])
    with pytest.raises(ValueError, match="sweep must be"):
        engine(fmap, sweep="diagonal")
