"""The `skylite` command line: train / predict on .npz and LIBSVM files, errors."""
import hashlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import skylite
from skylite._commands import demo_models
from skylite.cli import build_parser, main
from skylite.datasets import load_pendigits
from skylite.io import dump_svmlight


@pytest.fixture(scope="module")
def pendigits_npz(tmp_path_factory, pendigits):
    X, y, Xt, yt = pendigits
    path = tmp_path_factory.mktemp("data") / "pendigits.npz"
    np.savez(path, X_train=X[:2000] / 100.0, y_train=y[:2000], X_test=Xt[:1000] / 100.0,
             y_test=yt[:1000])
    return path


def test_train_then_predict_npz(pendigits_npz, tmp_path, capsys):
    model_path = tmp_path / "m.sky"
    code = main(["train", str(pendigits_npz), "-m", str(model_path), "--val",
                 str(pendigits_npz), "--sigma", "0.6", "--alpha", "1e-5", "--features", "512",
                 "--iters", "40", "--threads", "1", "--no-early-stop"])
    out = capsys.readouterr().out
    assert code == 0
    progress = [line for line in out.splitlines() if line.startswith("iter ")]
    assert len(progress) == 40 and "objective" in progress[0] and "validation" in progress[0]
    assert "validation accuracy:" in out and "model written to" in out
    model = skylite.load(model_path)

    predictions = tmp_path / "pred.txt"
    assert main(["predict", str(model_path), str(pendigits_npz), "-o", str(predictions)]) == 0
    summary = capsys.readouterr().out
    labels = np.loadtxt(predictions, dtype=np.int64)
    with np.load(pendigits_npz) as data:
        Xt, yt = data["X_test"], data["y_test"]
    np.testing.assert_array_equal(labels, model.predict(Xt))
    accuracy = float(np.mean(labels == yt))
    assert accuracy > 0.95
    assert f"accuracy {100 * accuracy:.2f}%" in summary

    assert main(["predict", str(model_path), str(pendigits_npz), "--decision-values"]) == 0
    values = np.loadtxt(capsys.readouterr().out.splitlines())
    assert values.shape == (1000, 10)
    np.testing.assert_array_equal(values.argmax(axis=1), labels)


@pytest.mark.parametrize("solver, summary", [("direct", "direct solve"),
                                             ("exact", "exact solve"),
                                             ("pcg", "pcg iterations (converged)")])
def test_kernel_ridge_solvers_report_what_they_did(solver, summary, tmp_path, capsys):
    X = np.random.default_rng(1).random((200, 3))
    data = tmp_path / "reg.npz"
    np.savez(data, X=X, y=np.sin(4 * X[:, 0]) + X[:, 1])
    assert main(["train", str(data), "-m", str(tmp_path / "r.sky"), "--loss", "squared",
                 "--sigma", "0.5", "--alpha", "1e-6", "--features", "128", "-q",
                 "--solver", solver]) == 0
    out = capsys.readouterr().out
    assert "trained KernelRidge: " in out and summary in out and "training R^2:" in out


def test_regression_from_npz_with_X_and_y(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.random((400, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    data = tmp_path / "reg.npz"
    np.savez(data, X=X, y=y)
    model_path = tmp_path / "r.sky"
    assert main(["train", str(data), "-m", str(model_path), "--loss", "squared", "--sigma",
                 "0.5", "--alpha", "1e-6", "--features", "256", "-q"]) == 0
    out = capsys.readouterr().out
    assert "iter " not in out
    r2 = float(out.split("training R^2: ")[1].split()[0])
    assert r2 > 0.99
    assert main(["predict", str(model_path), str(data), "-o", str(tmp_path / "p.txt")]) == 0
    np.testing.assert_allclose(np.loadtxt(tmp_path / "p.txt"), skylite.load(model_path)
                               .predict(X), rtol=1e-9)


@pytest.fixture(scope="module")
def small_files(tmp_path_factory):
    """Tiny LIBSVM files: two classes, one class, a validation file with a third column, a
    binary file, and a trained model (with a copy whose loss name is unknown)."""
    folder = tmp_path_factory.mktemp("small")
    (folder / "two.svm").write_text("1 1:0.5 2:0.3\n-1 1:0.1 2:0.2\n1 1:0.4 2:0.1\n")
    (folder / "one.svm").write_text("1 1:0.5 2:0.3\n1 1:0.1 2:0.2\n")
    (folder / "val.svm").write_text("1 1:0.5\n-1 3:0.3\n")
    (folder / "binary.svm").write_bytes(bytes(range(256)) * 4)
    model = folder / "m.sky"
    assert main(["train", str(folder / "two.svm"), "-m", str(model), "--features", "16",
                 "--iters", "3", "-q"]) == 0
    data = model.read_bytes()[:-32]      # the estimator's loss parameter, same length,
    edited = data.replace(b'"loss": "hinge"', b'"loss": "huber"', 1)   # checksum resealed
    (folder / "huber.sky").write_bytes(edited + hashlib.sha256(edited).digest())
    (folder / "edited.sky").write_bytes(edited + model.read_bytes()[-32:])   # not resealed
    return folder


@pytest.mark.parametrize("argv, message", [
    (["train", "missing.svm", "-m", "m.sky"], "no such file: missing.svm"),
    (["train", "{bad}", "-m", "m.sky"], "not a readable .npz"),
    (["train", "{npz}", "-m", "/no/such/folder/m.sky"], "cannot write the model"),
    (["train", "{npz}", "-m", "m.sky", "--alpha", "-1"], "alpha must be"),
    (["predict", "{bad}", "{npz}"], "not a skylite model"),
    (["predict", "missing.sky", "{npz}"], "no such file: missing.sky"),
    (["predict", "{f}/huber.sky", "{f}/two.svm"], "huber.sky is a corrupted skylite model "
                                                  "file: unknown loss 'huber'"),
    (["predict", "{f}/edited.sky", "{f}/two.svm"], "edited.sky is a corrupted skylite model "
                                                    "file: its checksum does not match"),
    (["predict", "{f}/m.sky", "{f}/two.svm", "-o", "{f}/missing/p.txt"],
     "cannot write the predictions to"),
    (["train", "{f}/binary.svm", "-m", "m.sky"], "binary.svm: not a LIBSVM text file"),
    (["train", "{f}/two.svm", "-m", "m.sky", "--val", "{f}/val.svm"],
     "val.svm: feature index 3 does not fit n_features=2"),
    (["train", "{f}/one.svm", "-m", "m.sky"], "at least two classes, got 1 class"),
])
def test_errors_are_one_line_and_nonzero(argv, message, tmp_path, pendigits_npz, small_files,
                                         capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"this is not a zip file")
    argv = [a.format(bad=bad, npz=pendigits_npz, f=small_files) for a in argv]
    assert main(argv) == 1
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "multilabel" not in err and "1 classes" not in captured.out
    assert not (tmp_path / "m.sky").exists()


@pytest.mark.parametrize("options, message", [
    (["--kernel", "linear", "--sigma", "2"], "--sigma applies only with --kernel gaussian"),
    (["--kernel", "linear", "--features", "64"], "--features applies only with random"),
    (["--kernel", "polynomial", "--quasi"], "--quasi applies only with --kernel gaussian"),
    (["--degree", "3"], "--degree applies only with --kernel polynomial"),
    (["--no-early-stop", "--n-iter-no-change", "3"],
     "--n-iter-no-change applies only with early stopping (not --no-early-stop)"),
    (["--val", "v.svm", "--validation-fraction", "0.2"],
     "--validation-fraction applies only with early stopping (not --no-early-stop) without "
     "--val"),
    (["--checkpoint-every", "5"], "--checkpoint-every applies only with --checkpoint"),
    (["--classification"], "--classification applies only with --loss squared or lad"),
    (["--solver", "exact"], "--solver applies only with --loss squared and --reg l2"),
])
def test_an_option_that_does_not_apply_is_an_error(options, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "x.svm", "-m", "m.sky", *options])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_version_and_help_show_every_default(tmp_path):
    run = lambda *argv: subprocess.run([sys.executable, "-m", "skylite", *argv],
                                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"skylite {skylite.__version__}"
    text = " ".join(run("train", "--help").stdout.split())
    for shown in ("the kernel (default: gaussian)", "(default: 0.0001)",
                  "linear sketch (default: 2048;", "max ADMM iterations (default: 500)",
                  "residual tolerance (default: 0.001)", "(default: ceil(s / 4096)",
                  "iterations between checkpoints (default: 10)",
                  "at most 500 rows held out (default: none)"):
        assert shown in text, shown
    # every argument of every command has a line of help
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name, command in [("skylite", parser), *commands.items()]:
        missing = [a.dest for a in command._actions if not a.help]
        assert not missing, (name, missing)


# Runs `skylite ARGV` in this process's interpreter and prints the heavy modules it loaded.
LOADED = """
import sys
from skylite.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("numpy", "scipy", "sklearn", "mpi4py", "h5py", "matplotlib")
print("LOADED", *sorted(name for name in heavy if name in sys.modules))
"""


@pytest.mark.parametrize("argv", [["--version"], ["--help"], [], ["bogus"]])
def test_version_and_help_import_nothing_numerical(argv, tmp_path):
    run = subprocess.run([sys.executable, "-c", LOADED, *argv], capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    assert run.stdout.strip().splitlines()[-1] == "LOADED", run.stdout + run.stderr
    plain = subprocess.run([sys.executable, "-c", "import sys, skylite; "
                            "print('numpy' in sys.modules, skylite.KernelSVC.__name__)"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert plain.stdout.split() == ["False", "KernelSVC"], plain.stderr    # lazy, not gone


def test_wide_rows_are_refused_in_one_line_and_the_linear_kernel_fits(tmp_path):
    """2 rows of d = 2^31 - 2 columns: Nystroem's 2 landmarks and its pool of 2 rows are
    dense, 64 GiB, and refused in one line (on a machine with less memory available, as
    the test machines have); the Gaussian map draws its frequencies for the 4 columns in
    use only; the linear kernel needs little (the paper's estimate said 14.5 TiB for
    d = 2e6)."""
    wide = tmp_path / "wide.svm"
    wide.write_text(f"1 1:0.5 {2**31 - 2}:1\n-1 3:0.25 2000000:2\n")

    def train(path, *options, timeout=60):
        return subprocess.run([sys.executable, "-m", "skylite", "train", str(path), "-m",
                               str(tmp_path / "m.sky"), "--iters", "3", *options],
                              capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
    run = train(wide, "--method", "nystroem", "--features", "2")
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert "Traceback" not in run.stderr and "landmarks" in run.stderr
    assert "linear kernel" in run.stderr and "docs/choosing_parameters.md" in run.stderr
    rff = train(wide, "--method", "rff")
    assert rff.returncode == 0, rff.stderr
    header = rff.stdout.split("; memory ")[1]
    assert header.split()[1] in ("KiB", "MiB") and float(header.split()[0]) < 1024
    narrower = tmp_path / "narrower.svm"
    narrower.write_text("1 1:0.5 2000000:1\n-1 3:0.25 1999999:2\n")
    linear = train(narrower, "--kernel", "linear", timeout=120)
    assert linear.returncode == 0, linear.stderr
    header = linear.stdout.split("; memory ")[1]
    assert header.split()[1] == "MiB" and float(header.split()[0]) < 1024


def test_classification_with_the_squared_loss(small_files, tmp_path, capsys):
    model = tmp_path / "sq.sky"
    assert main(["train", str(small_files / "two.svm"), "-m", str(model), "--loss", "squared",
                 "--classification", "--features", "16", "--iters", "5", "-q"]) == 0
    assert "trained KernelMachine" in capsys.readouterr().out
    assert list(skylite.load(model).classes_) == [-1, 1]


def test_console_script_bad_option_exits_2_without_traceback(tmp_path):
    # cwd away from the checkout: `python -m skylite` must find the installed package
    run = subprocess.run([sys.executable, "-m", "skylite", "train", "x.svm", "-m", "m",
                          "--kernel", "nope"], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "invalid choice: 'nope'" in run.stderr


def test_train_predict_libsvm_files_plain_and_gzip(tmp_path, pendigits, capsys):
    X, y, Xt, yt = pendigits
    train, test = tmp_path / "train.svm.gz", tmp_path / "test.svm"
    dump_svmlight(X[:1500] / 100.0, y[:1500], train)
    # the test file's largest index may be smaller than the training file's
    dump_svmlight(Xt[:500, :12] / 100.0, yt[:500], test)
    model_path = tmp_path / "m.sky"
    assert main(["train", str(train), "-m", str(model_path), "--sigma", "0.6", "--features",
                 "256", "--alpha", "1e-5", "-q", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "1500 rows, 16 features (sparse), 10 classes" in out
    model = skylite.load(model_path)
    assert model.n_features_in_ == 16
    assert main(["predict", str(model_path), str(test), "-o", str(tmp_path / "p")]) == 0
    expected = model.predict(np.hstack([Xt[:500, :12] / 100.0, np.zeros((500, 4))]))
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "p", dtype=np.int64), expected)


def test_malformed_libsvm_file_names_the_line(tmp_path, capsys):
    path = tmp_path / "bad.svm"
    path.write_text("1 1:0.5 2:0.25\n-1 1:0.5 2:abc\n")
    assert main(["train", str(path), "-m", str(tmp_path / "m.sky")]) == 1
    err = capsys.readouterr().err
    assert "line 2" in err and "abc" in err and len(err.strip().splitlines()) == 1


def test_killed_training_resumes_from_its_checkpoint(pendigits_npz, tmp_path):
    options = ["--sigma", "0.6", "--features", "256", "--alpha", "1e-5", "--tol", "1e-12",
               "--iters", "400", "--threads", "1", "-q"]
    full = tmp_path / "full.sky"
    assert main(["train", str(pendigits_npz), "-m", str(full), *options]) == 0
    checkpoint = tmp_path / "state.ckpt"
    command = [sys.executable, "-m", "skylite", "train", str(pendigits_npz), "-m",
               str(tmp_path / "resumed.sky"), "--checkpoint", str(checkpoint),
               "--checkpoint-every", "20", *options]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not checkpoint.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    first.send_signal(signal.SIGKILL)
    assert first.wait(timeout=30) == -signal.SIGKILL, "training ended before it was killed"
    assert checkpoint.exists()
    second = subprocess.run(command, capture_output=True, text=True, timeout=120,
                            cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert not checkpoint.exists()                       # removed when training ends
    resumed, uninterrupted = skylite.load(tmp_path / "resumed.sky"), skylite.load(full)
    np.testing.assert_array_equal(resumed.coef_, uninterrupted.coef_)


def test_the_demo_linear_baseline_converges(pendigits):
    X, y = pendigits[0] / 100.0, pendigits[1]
    defaults = build_parser().parse_args(["demo"])
    name, linear = demo_models(defaults.features, defaults.blocks, defaults.sigma,
                               defaults.alpha, defaults.seed)[0]
    assert name == "linear SVM"
    linear.fit(X, y)
    assert linear.converged_ and linear.n_iter_ < linear.max_iter


def test_predict_streams_rows_from_stdin(tmp_path):
    """`skylite predict MODEL -` answers each row before the next one is written."""
    X, y, X_test, y_test = load_pendigits()
    data = tmp_path / "train.npz"
    np.savez(data, X_train=X[:800] / 100, y_train=y[:800])
    model = tmp_path / "m.sky"
    assert main(["train", str(data), "-m", str(model), "--sigma", "0.6", "--features", "256",
                 "--iters", "30", "-q"]) == 0
    rows = [f"{label} " + " ".join(f"{k + 1}:{v / 100:g}" for k, v in enumerate(x))
            for x, label in zip(X_test[:3], y_test[:3])]
    # cwd: not the checkout, whose skylite/ sources would shadow the installed package
    proc = subprocess.Popen([sys.executable, "-m", "skylite", "predict", str(model), "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    answers = []
    for row in rows:                         # one row in, one prediction out, in turn
        proc.stdin.write(row + "\n")
        proc.stdin.flush()
        answers.append(proc.stdout.readline().strip())
    proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    expected = skylite.load(model).predict(X_test[:3] / 100)
    assert answers == [str(label) for label in expected]
    assert "<stdin>: accuracy" in err and "/3)" in err
    bad = subprocess.run([sys.executable, "-m", "skylite", "predict", str(model), "-"],
                         input="1 1:x\n", capture_output=True, text=True, timeout=60,
                         cwd=tmp_path)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1
    assert "<stdin>: line 1: bad feature value" in bad.stderr
