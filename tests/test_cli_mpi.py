"""`mpiexec -n 2 skylite train`: each rank reads its share of a LIBSVM file, the ranks train
together, rank 0 prints and writes the model; a bad line on one rank stops both."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import skylite
from skylite.io import dump_svmlight, load_svmlight

READ_ROWS = Path(__file__).parent / "mpi" / "read_rows_check.py"
TIMEOUT = 120


def run(command, cwd):
    """Run with a timeout, from `cwd` (away from the checkout, so that `python -m skylite`
    finds the installed package, not the source tree)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, env=env,
                          cwd=cwd)


def train_serially_and_on_two_ranks(mpiexec, path, X, y, tmp_path, extra=()):
    """`skylite train path` in one process and under `mpiexec -n 2` (squared loss to a tight
    tol); checks both succeed, the ranks saw all 1000 rows, and the two models' objectives on
    (X, y) agree to 1e-6.  Returns the mpiexec process and the two models."""
    options = [*extra, "--loss", "squared", "--sigma", "0.6", "--features", "128", "--alpha",
               "1e-4", "--tol", "1e-9", "--iters", "3000", "--threads", "1", "-q"]
    serial = run([sys.executable, "-m", "skylite", "train", str(path), "-m",
                  str(tmp_path / "serial.sky"), *options], tmp_path)
    assert serial.returncode == 0, serial.stderr
    ranks = run([mpiexec, "-n", "2", sys.executable, "-m", "skylite", "train", str(path),
                 "-m", str(tmp_path / "ranks.sky"), *options], tmp_path)
    assert ranks.returncode == 0, ranks.stderr
    assert "1000 rows over 2 ranks, 16 features" in ranks.stdout
    one, two = (skylite.load(tmp_path / f"{name}.sky") for name in ("serial", "ranks"))
    f_one, f_two = one.objective(X, y), two.objective(X, y)
    assert abs(f_two - f_one) <= 1e-6 * abs(f_one)
    return ranks, one, two


@pytest.fixture(scope="module")
def libsvm_file(tmp_path_factory, pendigits):
    X, y = pendigits[0][:1000] / 100.0, pendigits[1][:1000]
    path = tmp_path_factory.mktemp("data") / "pendigits.svm"
    dump_svmlight(X, y, path)
    return path, X, y


def test_ranks_read_disjoint_shares_that_make_the_whole_file(mpiexec, libsvm_file, tmp_path):
    path, _, _ = libsvm_file
    proc = run([mpiexec, "-n", "2", sys.executable, str(READ_ROWS), str(path),
                str(tmp_path / "part")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    parts = [np.load(tmp_path / f"part.rank{r}.npz") for r in range(2)]
    X, y = load_svmlight(path, zero_based=False)
    shares = [sp.csr_matrix((p["data"], p["indices"], p["indptr"]), shape=tuple(p["shape"]))
              for p in parts]
    assert all(0 < s.shape[0] < X.shape[0] for s in shares)
    assert all(s.shape[1] == X.shape[1] for s in shares)      # the ranks agreed on d
    np.testing.assert_array_equal(sp.vstack(shares).toarray(), X.toarray())
    np.testing.assert_array_equal(np.concatenate([p["y"] for p in parts]), y)
    assert parts[0]["y"].dtype == np.int64                      # integral labels, both ranks


def test_mpiexec_train_reaches_the_serial_model(mpiexec, libsvm_file, tmp_path):
    path, X, y = libsvm_file
    ranks, one, two = train_serially_and_on_two_ranks(mpiexec, path, X, y, tmp_path)
    assert ranks.stdout.count("trained KernelRidge") == 1          # rank 0 prints
    np.testing.assert_allclose(two.predict(X), one.predict(X), rtol=1e-4, atol=1e-4)


def test_a_bad_line_in_one_ranks_share_stops_every_rank(mpiexec, libsvm_file, tmp_path):
    path, _, _ = libsvm_file
    lines = path.read_text().splitlines()
    lines[-3] = lines[-3].replace(":", "=", 1)        # in the second half: rank 1's bytes
    bad = tmp_path / "bad.svm"
    bad.write_text("\n".join(lines) + "\n")
    proc = run([mpiexec, "-n", "2", sys.executable, "-m", "skylite", "train", str(bad),
                "-m", str(tmp_path / "m.sky")], tmp_path)
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, proc.stderr                            # printed once, by rank 0
    assert "rank 1 failed" in errors[0] and "line" in errors[0] and "Traceback" not in \
        proc.stderr
    assert not (tmp_path / "m.sky").exists()


def test_hdf5_under_mpiexec_each_rank_reads_its_rows_and_reaches_the_serial_model(
        mpiexec, libsvm_file, tmp_path):
    h5py = pytest.importorskip("h5py", reason="h5py is not installed (pip install '.[test]')")
    _, X, y = libsvm_file
    path = tmp_path / "pendigits.h5"
    with h5py.File(path, "w") as f:
        f["rows"] = X.astype(np.float32)
        f["labels"] = y
    shares = run([mpiexec, "-n", "2", sys.executable, str(READ_ROWS), str(path),
                  str(tmp_path / "part"), "rows", "labels"], tmp_path)
    assert shares.returncode == 0, shares.stderr
    parts = [np.load(tmp_path / f"part.rank{r}.npz") for r in range(2)]
    assert [len(p["X"]) for p in parts] == [500, 500]           # rows [0, 500) and [500, 1000)
    np.testing.assert_array_equal(np.vstack([p["X"] for p in parts]), X.astype(np.float32))
    np.testing.assert_array_equal(np.concatenate([p["y"] for p in parts]), y)
    train_serially_and_on_two_ranks(mpiexec, path, X, y, tmp_path,
                                    ["--x-dataset", "rows", "--y-dataset", "labels"])
