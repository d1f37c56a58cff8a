"""`skylite train` with the quasi-Monte-Carlo and linear-sketch feature maps (--quasi,
--method): the saved model carries the map, bad combinations fail with one line."""
import numpy as np
import pytest

import skylite
from skylite.cli import main
from skylite.sketch import (JLT, SRHT, CountSketch, GaussianRFF, MaternFastfood, MaternRFF,
                            Nystroem)

from test_cli import pendigits_npz as digits_npz  # noqa: F401  (the shared pendigits file)


def _train(data, model, *options):
    return main(["train", str(data), "-m", str(model), "--features", "256", "--iters", "15",
                 "--threads", "1", "-q", *options])


@pytest.mark.parametrize("options, cls, sequence", [
    (["--quasi", "--sigma", "0.6"], GaussianRFF, "sobol"),
    (["--quasi", "halton", "--sigma", "0.6"], GaussianRFF, "halton"),
    (["--kernel", "matern", "--quasi", "sobol", "--length-scale", "0.6"], MaternRFF, "sobol"),
    (["--kernel", "matern", "--method", "fastfood", "--length-scale", "0.6"], MaternFastfood,
     None),
    (["--method", "qmc_halton", "--kernel", "laplacian", "--sigma", "0.6"], None, "halton")])
def test_train_with_quasi_and_fast_maps(options, cls, sequence, digits_npz, tmp_path, capsys):
    path = tmp_path / "m.sky"
    assert _train(digits_npz, path, *options) == 0
    fmap = skylite.load(path).feature_map_
    if cls is not None:
        assert isinstance(fmap, cls)
    if sequence is not None:
        assert fmap.sequence == sequence
    assert "training accuracy:" in capsys.readouterr().out


@pytest.mark.parametrize("method, cls", [("jlt", JLT), ("srht", SRHT),
                                         ("countsketch", CountSketch)])
def test_linear_kernel_sketches(method, cls, digits_npz, tmp_path, capsys):
    path = tmp_path / "m.sky"
    assert _train(digits_npz, path, "--kernel", "linear", "--method", method) == 0
    model = skylite.load(path)
    assert isinstance(model.feature_map_, cls) and model.coef_.shape[0] == 256
    capsys.readouterr()
    with np.load(digits_npz) as data:
        accuracy = model.score(data["X_test"], data["y_test"])
    assert accuracy > 0.75        # a linear SVM on 16 features, sketched to 256: about 0.8


@pytest.mark.parametrize("options, rule", [([], "kmeans"),
                                           (["--landmarks", "uniform"], "uniform"),
                                           (["--landmarks", "kmeans"], "kmeans")])
def test_train_and_predict_with_nystroem_features(options, rule, digits_npz, tmp_path, capsys):
    path = tmp_path / "m.sky"
    assert _train(digits_npz, path, "--method", "nystroem", *options, "--sigma", "60") == 0
    model = skylite.load(path)
    fmap = model.feature_map_
    assert isinstance(fmap, Nystroem) and fmap.landmarks == rule
    assert fmap.landmarks_.shape == (256, 16) and model.regularizer_.name == "rkhs"
    capsys.readouterr()
    out = tmp_path / "pred.txt"
    assert main(["predict", str(path), str(digits_npz), "-o", str(out)]) == 0
    assert "accuracy" in capsys.readouterr().out
    with np.load(digits_npz) as data:
        expected = model.predict(data["X_test"])
    assert np.array_equal(np.loadtxt(out, dtype=expected.dtype), expected)


def test_bad_map_options(digits_npz, tmp_path, capsys):
    path = tmp_path / "m.sky"
    with pytest.raises(SystemExit) as exit_info:
        _train(digits_npz, path, "--quasi", "--method", "fastfood")
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _train(digits_npz, path, "--quasi", "niederreiter")
    assert "invalid choice" in capsys.readouterr().err
    assert _train(digits_npz, path, "--method", "magic") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown feature-map method 'magic'" in err
    with pytest.raises(SystemExit) as exit_info:
        _train(digits_npz, path, "--kernel", "polynomial", "--quasi")
    assert exit_info.value.code == 2
    assert "--quasi applies only with --kernel gaussian, laplacian or matern" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        _train(digits_npz, path, "--landmarks", "uniform")
    assert exit_info.value.code == 2
    assert "--landmarks applies only with --method nystroem" in capsys.readouterr().err
    for old_name in ("nystroem_uniform", "nystroem_kmeans"):
        assert _train(digits_npz, path, "--method", old_name) == 1
        assert f"unknown feature-map method {old_name!r}" in capsys.readouterr().err


def test_predict_warns_when_a_libsvm_file_is_narrower_than_the_model(tmp_path, capsys):
    from skylite.io import dump_svmlight
    rng = np.random.default_rng(0)
    X, y = rng.random((200, 16)), np.arange(200) % 2
    model = tmp_path / "m.sky"
    wide, narrow = tmp_path / "wide.svm", tmp_path / "narrow.svm"
    dump_svmlight(X, y, wide)
    dump_svmlight(X[:, :8], y, narrow)
    assert _train(wide, model, "--sigma", "1") == 0
    capsys.readouterr()
    assert main(["predict", str(model), str(wide), "-o", str(tmp_path / "p1.txt")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["predict", str(model), str(narrow), "-o", str(tmp_path / "p2.txt")]) == 0
    err = capsys.readouterr().err
    assert "largest feature index of" in err and "trained on 16 features" in err
