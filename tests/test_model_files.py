"""Model files treated as untrusted input: crafted or edited headers (with their checksum
recomputed) are refused with ValueError naming the file, never another exception and never
a silently different model; saves refuse paths that cannot name a file, name the user's path
in their errors and leave no temporary file behind, even after a save killed with SIGKILL."""
from datetime import timedelta
import json
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skylite
from skylite import KernelLogisticRegression, KernelRidge, KernelSVC
from skylite.sketch import Fastfood

from faults.crafted_files import (nested, node_paths, read_model_file, replaced,
                                  write_model_file)

HANG = Path(__file__).parent / "faults" / "hang_while_saving.py"


def _outputs(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") \
        else model.predict(X)


@pytest.fixture(scope="module")
def saved(pendigits, tmp_path_factory):
    """{kind: (path, header, body, outputs on the probe rows)} of saved models of each kind
    of file: random features with text classes, a map object, Nystroem, exact kernel
    models over dense and sparse rows."""
    X, y = pendigits[0][:300] / 100.0, pendigits[1][:300]
    names = np.array(list("abcdefghij"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = {
            "rff": KernelSVC(method="rff", sigma=0.6, n_features=64, n_blocks=2,
                             max_iter=20).fit(X, names[y]),
            "fastfood": KernelLogisticRegression(feature_map=Fastfood(32, sigma=0.6),
                                                 max_iter=10).fit(X, y % 2),
            "nystroem": KernelRidge(method="nystroem", n_features=24, n_blocks=2,
                                    sigma=1.0).fit(X, X[:, :2]),
            "exact": KernelRidge(sigma=1.0, solver="exact").fit(X[:40], X[:40, 0]),
            "exact sparse": KernelRidge(sigma=1.0, solver="exact").fit(
                sp.csr_matrix(X[:40]), X[:40, 0]),
        }
    folder = tmp_path_factory.mktemp("saved")
    files = {}
    for kind, model in models.items():
        path = folder / f"{kind}.sky"
        model.save(path)
        header, body = read_model_file(path)
        files[kind] = (path, header, body, _outputs(model, X[:50]))
    return files, X[:50], folder


def _loads_as_before_or_is_refused(path, expected, X):
    """Load `path`: a ValueError naming it, or a model whose outputs are those saved (an
    edit that changes nothing the predictions read, e.g. n_iter, or float32 precision)."""
    try:
        model = skylite.load(path)
    except ValueError as exc:
        assert str(path) in str(exc)
        return "refused"
    got = _outputs(model, X)
    assert got.shape == expected.shape
    assert np.allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    return "loaded"


def test_valid_files_load_bitwise(saved):
    files, X, _ = saved
    for kind, (path, _, _, outputs) in files.items():
        np.testing.assert_array_equal(_outputs(skylite.load(path), X), outputs)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6),
                                                                inner, max_size=4),
    max_leaves=20)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(header=json_values, body=st.binary(max_size=64))
def test_arbitrary_headers_are_refused(saved, header, body):
    path = saved[2] / "arbitrary.sky"
    write_model_file(path, json.dumps(header).encode(), body)
    with pytest.raises(ValueError, match="corrupted skylite model file") as info:
        skylite.load(path)
    assert str(path) in str(info.value)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.integers(100, 300_000), opening=st.sampled_from("[{"))
def test_deeply_nested_headers_are_refused_before_parsing(saved, depth, opening):
    path = saved[2] / "deep.sky"
    write_model_file(path, nested(depth, opening))
    with pytest.raises(ValueError, match="header too deeply nested"):
        skylite.load(path)


def _edits(header):
    """A strategy of (node path, new value) edits of a header: wrong types, huge or
    non-finite numbers, nearby integers, other JSON values."""
    paths = [p for p in node_paths(header) if p]

    def values(path):
        node = header
        for key in path:
            node = node[key]
        near = []
        if isinstance(node, int) and not isinstance(node, bool):
            near = [st.integers(node - 3, node + 3)]
        return st.one_of(
            json_values, st.integers(-2**70, 2**70), st.sampled_from(
                [2**63, 2**64, -2**63 - 1, 10**30, 1e308, float("nan"), float("inf"), [],
                 {}, "", None, True, 0, -1, [2**63, 1]]), *near)
    return st.sampled_from(paths).flatmap(lambda p: st.tuples(st.just(p), values(p)))


@pytest.mark.parametrize("kind", ["rff", "fastfood", "nystroem", "exact", "exact sparse"])
def test_edited_headers_with_a_recomputed_checksum_are_refused_or_harmless(saved, kind):
    files, X, folder = saved
    _, header, body, expected = files[kind]
    path = folder / f"edited {kind}.sky"

    # An edit the loader needs long to refuse is a defect (one ran for minutes before it was
    # fixed); a legitimate width that fits in memory may cost up to ~20 s (docs/engine.md).
    @settings(max_examples=60, deadline=timedelta(seconds=60), database=None)
    @given(edit=_edits(header))
    def check(edit):
        write_model_file(path, replaced(header, *edit), body)
        _loads_as_before_or_is_refused(path, expected, X)
    check()


@pytest.mark.parametrize("kind, edit, message", [
    ("rff", (("feature_map", "params", "n_blocks"), 4), "does not give the features"),
    ("rff", (("feature_map", "params", "sigma"), 0.7), "does not give the features"),
    ("rff", (("feature_map", "seed"), 1), "does not give the features"),
    ("rff", (("classes", "values", 0), 2**63), "classes values"),
    ("rff", (("classes", "dtype"), "<i8"), "classes values"),
    ("rff", (("coef_shape",), [128, 5]), "the feature map has 64 features but W has 128"),
    ("rff", (("coef_shape", 0), 2**63), "outside"),
    ("rff", (("feature_map", "n_features_in"), 2**63), "n_features_in"),
    ("rff", (("feature_names",), ["a"]), "feature_names"),
    ("fastfood", (("feature_map", "params", "n_features"), 64), "features but W has 32"),
    ("nystroem", (("feature_map", "params", "n_blocks"), 3), "disagrees with its arrays"),
    ("nystroem", (("feature_map_arrays", 0, 1), [12, 32]), "landmarks"),
    ("exact", (("dual", "shape"), [20, 2]), "training rows"),
    ("exact", (("dual", "n_features"), 8), "8 columns, the feature map 16"),
    ("exact sparse", (("dual", "nnz"), 2**63), "outside"),
    ("exact", (("dual", "kernel", "params", "sigma"), 2), "does not give the outputs"),
    ("exact sparse", (("dual", "kernel", "params", "sigma"), 0.5), "does not give the outputs"),
    ("exact", (("dual", "probe", 0), 0.25), "does not give the outputs"),
    ("exact", (("targets_1d",), False), "outputs the model was saved with"),
    ("rff", (("outputs_probe", 0, 0), 0.5), "outputs the model was saved with"),
    ("exact", (("params", "n_threads"), 2**63), "n_threads"),
    ("exact sparse", (("dual", "n_features"), 10**7), "10000000 columns, the feature map 16"),
    ("exact", (("feature_map", "n_features_in"), 10**6), "16 columns, the feature map 1000000"),
    ("rff", (("feature_map", "n_features_in"), 2**31 - 1), "GiB for the parameters of one"),
    ("exact", (("feature_map", "params", "n_features"), 10**8), "more than the model's n_f"),
    ("fastfood", (("feature_map", "n_features_in"), 2**31 - 1), "at most 16777216 input"),
])
def test_each_kind_of_inconsistency_is_named(saved, kind, edit, message):
    files, _, folder = saved
    _, header, body, _ = files[kind]
    path = folder / "inconsistent.sky"
    write_model_file(path, replaced(header, *edit), body)
    with pytest.raises(ValueError, match=message) as info:
        skylite.load(path)
    assert str(path) in str(info.value)


def test_malformed_sparse_training_rows_are_refused(saved):
    files, _, folder = saved
    _, header, body, _ = files["exact sparse"]
    n, m = header["dual"]["shape"]
    indptr_at = 8 * n * m
    broken = bytearray(body)
    broken[indptr_at + 8 * 3:indptr_at + 8 * 4] = np.int64(10**6).tobytes()   # indptr[3]
    path = folder / "sparse.sky"
    write_model_file(path, header, bytes(broken))
    with pytest.raises(ValueError, match="malformed sparse matrix"):
        skylite.load(path)


def test_an_oversized_header_length_is_refused(saved):
    files, _, folder = saved
    path = folder / "long.sky"
    write_model_file(path, b"{}", length=2**32 - 1)
    with pytest.raises(ValueError, match="header too large"):
        skylite.load(path)


# ---- saving ----

def test_paths_that_cannot_name_a_file_are_refused_up_front(saved, tmp_path, monkeypatch):
    model = skylite.load(saved[0]["rff"][0])
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    with pytest.raises(ValueError, match="empty path"):
        model.save("")
    for folder in ("sub/", str(tmp_path), "."):
        Path("sub").mkdir(exist_ok=True)
        with pytest.raises(IsADirectoryError, match="is a folder") as info:
            model.save(folder)
        assert str(info.value).startswith(folder)
    with pytest.raises(FileNotFoundError) as info:
        model.save("missing/m.sky")
    assert "missing/m.sky" in str(info.value) and ".tmp" not in str(info.value)
    Path("plain").write_text("x")
    with pytest.raises(NotADirectoryError) as info:
        model.save("plain/m.sky")
    assert "plain/m.sky" in str(info.value) and ".tmp" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]       # nothing in ..
    assert sorted(p.name for p in Path(".").iterdir()) == ["plain", "sub"]
    assert list(Path("sub").iterdir()) == []


def temporary_files(dest):
    return sorted(str(p) for p in dest.parent.glob(f".{dest.name}.*.tmp"))


def _hang_while_saving(model_path, dest):
    proc = subprocess.Popen([sys.executable, str(HANG), str(model_path), str(dest)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "written"
    return proc


def test_a_save_removes_what_a_killed_save_left_and_spares_a_live_one(saved, tmp_path):
    model_path = saved[0]["rff"][0]
    model = skylite.load(model_path)
    dest = tmp_path / "dest.sky"
    killed = _hang_while_saving(model_path, dest)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    leftovers = temporary_files(dest)
    assert len(leftovers) == 1 and Path(leftovers[0]).name.startswith(".dest.sky.")
    live = _hang_while_saving(model_path, dest)      # the next save, still running
    try:
        running = temporary_files(dest)
        assert len(running) == 1 and running != leftovers    # it removed the killed one's
        model.save(dest)
        assert temporary_files(dest) == running               # and is spared by this one
    finally:
        live.send_signal(signal.SIGKILL)
        live.wait()
    model.save(dest)
    assert temporary_files(dest) == []
    assert sorted(os.listdir(tmp_path)) == ["dest.sky"]
    np.testing.assert_array_equal(skylite.load(dest).coef_, model.coef_)
