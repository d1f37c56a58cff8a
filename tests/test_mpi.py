"""Training over MPI ranks: `mpiexec -n 2` launches of tests/mpi/mpi_checks.py, and
in-process checks of the size-1 communicator, checkpoint/resume and fault plumbing.

mpi4py and mpich come with the `test` extra; without them the MPI tests are skipped with
the reason.  Every launch has a timeout, so a hang fails the test instead of CI.
"""
import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from sklearn.base import clone

import skylite

from skylite import KernelRidge, KernelSVC
from skylite._distributed import Distributed, SerialComm, collective_error, describe
from skylite.admm import BlockADMM
from skylite.prox import get_loss, get_regularizer
from skylite.prox.coding import code_labels
from skylite.sketch import GaussianRFF

SCRIPT = Path(__file__).parent / "mpi" / "mpi_checks.py"
TIMEOUT = 90
pytestmark = pytest.mark.filterwarnings("ignore:BlockADMM stopped at max_iter")


def launch(mpiexec, mode, *args, expect_ok=True):
    """Run `mpiexec -n 2 python mpi_checks.py mode args`; return (per-rank results or
    failure lines, the completed process)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONWARNINGS="ignore")
    proc = subprocess.run([mpiexec, "-n", "2", sys.executable, str(SCRIPT), mode, *args],
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)
    if expect_ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        results = {}            # the ranks' lines may arrive interleaved on one line
        decoder = json.JSONDecoder()
        for match in re.finditer(r"RESULT (\d+) ", proc.stdout):
            results[int(match.group(1))] = decoder.raw_decode(proc.stdout, match.end())[0]
        assert sorted(results) == [0, 1], proc.stdout + proc.stderr
        return results, proc
    return proc.stdout.replace("RAISED", "\nRAISED").splitlines(), proc


def test_ranks_agree_on_a_bfloat16_cache_when_any_rank_needs_it(mpiexec):
    results, _ = launch(mpiexec, "cache_precision")
    assert [r["cache_precision"] for r in results.values()] == ["bfloat16", "bfloat16"]
    assert [r["cached"] for r in results.values()] == [5, 5]
    assert all(r["coef_same"] and r["equals_asked"] for r in results.values())
    for r in results.values():
        assert "the ranks were given different cache_precision" in r["mixed"]


def test_ranks_agree_on_the_precision_auto_resolves_to(mpiexec):
    results, _ = launch(mpiexec, "precision")
    for r in results.values():
        assert r["precisions"] == ["float64", "float64", "float32"]
        assert r["coef_same"] and r["equals_double"]
    assert len({r["refused"] for r in results.values()}) == 1
    assert "rank 0 'float32', rank 1 'float64'" in results[0]["refused"]
    assert "follows each rank's rows" in results[0]["refused"]


def test_two_ranks_repeat_the_simulated_row_blocks_and_reach_the_serial_optimum(mpiexec):
    results, _ = launch(mpiexec, "consistency")
    root = results[0]
    assert results[0]["coef_same"] and results[1]["coef_same"]      # bitwise on every rank
    assert results[0]["history_same"] and results[1]["history_same"]
    # (a) same iterates as one process with 2 simulated row blocks
    assert root["iterations"] == [40, 40]
    assert root["history_rel"] <= 1e-10
    assert root["coef_rel"] <= 1e-10
    assert root["warm_sweep"] == [True, True]
    assert root["warm_history_rel"] <= 1e-10 and root["warm_coef_rel"] <= 1e-10
    # (a') with Anderson acceleration: the same decisions and iterates
    assert root["anderson"] == ["anderson", "anderson"]
    assert root["anderson_outcomes_same"] and root["anderson_accepted"] > 20
    assert root["anderson_history_rel"] <= 1e-8
    # (b) 2 ranks reach the serial R = 1 optimum (squared loss, l2)
    assert root["converged"] == [True, True]
    assert root["objective_rel"] <= 1e-6
    assert root["engine_objective_rel"] <= 1e-6
    assert root["coef_vs_closed_form"] <= 1e-6
    assert root["comm_seconds"] > 0


def test_ranks_whose_rows_use_other_columns_repeat_the_simulated_row_blocks(mpiexec):
    """Each rank draws the map's frequencies for the columns its sparse rows use."""
    results, _ = launch(mpiexec, "sparse_columns")
    assert results[0]["columns_in_use"] != results[1]["columns_in_use"]
    assert all(r["columns_in_use"] < r["width"] for r in results.values())
    for r in results.values():
        assert r["coef_same"] and r["landmarks_equal"]
    assert results[0]["history_rel"] <= 1e-10 and results[0]["coef_rel"] <= 1e-10


def test_two_ranks_agree_on_nystroem_landmarks_and_repeat_the_simulated_blocks(mpiexec):
    results, _ = launch(mpiexec, "nystroem")
    for r in results.values():
        assert r["landmarks_same"] and r["whitening_same"] and r["coef_same"]
        assert r["estimator_coef_same"] and r["estimator_regularizer"] == "rkhs"
        assert r["estimator_whitened"]
        assert r["early_whitened"] and r["early_coef_same"] and r["early_stopped"]
        assert r["early_best_score"] == r["early_score_of_kept_W"]
    root = results[0]
    assert root["landmarks_equal_serial"]          # drawn by global row id from the seed
    assert root["iterations"] == [30, 30]
    assert root["history_rel"] <= 1e-10
    assert root["coef_rel"] <= 1e-10
    assert root["estimator_whitened_serial"] and root["estimator_objective_rel"] <= 1e-5


def test_unequal_ranks_missing_class_global_score_and_sigma(mpiexec):
    """(d) rank 0: 179 rows without class 9; rank 1: 400 rows; string labels."""
    results, _ = launch(mpiexec, "classes")
    r0, r1 = results[0], results[1]
    assert r0["n_local"] != r1["n_local"]
    assert not r0["has_9_locally"] and r1["has_9_locally"]
    assert r0["classes"] == r1["classes"] == [f"digit{k}" for k in range(10)]
    for key in ("score", "objective", "validation", "sigma", "r2", "r2_validation"):
        assert r0[key] == r1[key], key                       # identical on both ranks
    for r in (r0, r1):
        assert r["coef_same"] and r["score_matches_counts"]
        assert r["score"] == pytest.approx(r["serial_score"], abs=1e-15)
        assert r["objective"] == pytest.approx(r["serial_objective"], rel=1e-12)
        assert r["validation"] == pytest.approx(r["serial_score"], abs=1e-15)
        assert r["sigma"] == pytest.approx(r["serial_sigma"], rel=1e-12)
        assert r["score"] > 0.9
        assert r["r2"] == pytest.approx(r["serial_r2"], rel=1e-12)          # global R^2
        assert r["r2_validation"] == pytest.approx(r["serial_r2"], rel=1e-12)
        assert 0.5 < r["r2"] < 1


def test_each_rank_splits_its_own_rows_and_all_stop_together(mpiexec):
    results, _ = launch(mpiexec, "early-stopping")
    r0, r1 = results[0], results[1]
    for r in (r0, r1):
        assert r["split_matches_rank_seed"] and r["coef_same"] and r["history_same"]
        assert 0 < len(r["held"]) < r["n_local"]
        # stopped early: 5 iterations after the best value (the latest of equal values kept)
        assert r["best_iteration"] <= r["n_iter"] <= r["best_iteration"] + 5 < 150
        assert r["best_score"] == r["max_score"] == r["global_score_of_kept_W"]
    assert r0["n_iter"] == r1["n_iter"] and r0["best_iteration"] == r1["best_iteration"]
    assert r0["held"] != r1["held"][:len(r0["held"])]      # the ranks' seeds differ


@pytest.mark.parametrize("mode, error", [
    ("nan", "ValueError: rank 1 failed: ValueError: Input X contains NaN"),
    ("iteration-fault", "MemoryError: rank 1 failed: MemoryError: cannot allocate"),
    ("mismatch", "ValueError: the ranks were given different max_iter"),
    ("different-columns", "ValueError: the ranks have different number of input features"),
    ("save-fails", "FileNotFoundError: rank 0 failed: FileNotFoundError"),
    ("pcg-fault", "MemoryError: rank 1 failed: MemoryError: cannot allocate"),
])
def test_a_failing_rank_stops_every_rank_with_its_error(mpiexec, mode, error):
    lines, proc = launch(mpiexec, mode, expect_ok=False)
    assert proc.returncode != 0
    raised = [line for line in lines if line.startswith("RAISED")]
    assert sorted(line.split()[1] for line in raised) == ["0", "1"], proc.stdout + proc.stderr
    assert all(error in line for line in raised), raised


@pytest.mark.parametrize("name", ["tol", "alpha", "rho", "max_iter", "n_features", "sigma",
                                  "kernel", "regularizer", "precision", "relaxation",
                                  "n_blocks", "validation_fraction", "n_threads"])
def test_a_bad_setting_on_one_rank_is_the_same_error_on_every_rank(mpiexec, name):
    lines, proc = launch(mpiexec, "bad-setting", name, expect_ok=False)
    assert proc.returncode != 0
    raised = [line for line in lines if line.startswith("RAISED")]
    assert sorted(line.split()[1] for line in raised) == ["0", "1"], proc.stdout + proc.stderr
    messages = {line.split(" ", 2)[2] for line in raised}
    assert len(messages) == 1, messages                      # the same error on both ranks
    expected = ("rank 1 failed: ValueError: n_threads" if name == "n_threads"  # rank-local
                else f"the ranks were given different {name}")
    assert expected in messages.pop()


def test_generated_per_rank_disagreements_end_alike_on_every_rank(mpiexec):
    """Seeded draws of a parameter and one value per rank (good or bad, equal or not), rows
    of another width, targets of another length, scoring targets of another length: every
    case ends on both ranks (the launch has a timeout) with the same outcome."""
    results, _ = launch(mpiexec, "disagreements", "2026", "16")
    for r in results.values():
        assert r["same"], r["cases"]
    cases = results[0]["cases"]
    fitted = [c[2].startswith("fitted") for c in cases]
    assert any(fitted) and not all(fitted)
    assert any("y has shape" in c[2] for c in cases)           # a score refused on every rank


# sizes of mpi_checks.POOLS (the values each parameter's disagreements draw from)
POOL_SIZES = {"C": 4, "sigma": 5, "n_features": 4, "max_iter": 4, "kernel": 3, "method": 2,
              "n_threads": 3, "adapt_rho": 3, "columns": 2, "targets": 2}
CASE = st.sampled_from(sorted(POOL_SIZES)).flatmap(lambda name: st.tuples(
    st.just(name), st.lists(st.integers(0, POOL_SIZES[name] - 1), min_size=2, max_size=2),
    st.booleans()))


@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=st.lists(CASE, min_size=3, max_size=6))
def test_hypothesis_per_rank_disagreements_end_alike_on_every_rank(mpiexec, cases):
    """Cases generated by hypothesis: a parameter with a value per rank (equal or not, good
    or bad), rows of another width, targets of another length: every case ends on both
    ranks with the same outcome."""
    results, _ = launch(mpiexec, "disagreement_cases", json.dumps([list(c) for c in cases]))
    for r in results.values():
        assert r["same"], r["cases"]
    assert len(results[0]["cases"]) == len(cases)


def test_a_killed_two_rank_run_resumes_to_the_same_model(mpiexec, tmp_path):
    _, proc = launch(mpiexec, "checkpoint-die", str(tmp_path), expect_ok=False)
    assert proc.returncode != 0                                # os._exit(7) after iteration 12
    assert sorted(os.listdir(tmp_path)) == ["run.ckpt.rank0-of-2", "run.ckpt.rank1-of-2"]
    results, _ = launch(mpiexec, "checkpoint-resume", str(tmp_path))
    for r in results.values():
        assert r["iterations"][:3] == [1, 2, 3] and r["iterations"][3] == 35
        assert r["coef_equal"] and r["history_equal"]         # bitwise
        assert r["files_after"] == []                         # removed after a normal fit


def test_pcg_over_two_ranks_is_the_serial_fit_resumes_calls_back_and_stops_early(
        mpiexec, tmp_path):
    results, _ = launch(mpiexec, "pcg", str(tmp_path))
    for r in results.values():
        assert r["coef_same"] and r["converged"]
        assert r["calls"] == list(range(1, r["n_iter"] + 1))    # every iteration, every rank
        assert r["killed"] != "not killed"
        assert r["files"] == ["pcg.ckpt.rank0-of-2", "pcg.ckpt.rank1-of-2"]
        assert r["files_after"] == []
        assert r["resumed_equal"]                                # bitwise
        assert r["resumed_iterations"] == list(range(1, r["n_iter"] + 1))
        assert r["early_validation"] and r["early_best"] <= r["early_n_iter"]
        assert 0 <= r["early_n_iter"] - r["early_best"] <= 3    # patience 3
    r0 = results[0]
    assert r0["rel_to_serial"] < 1e-5 and r0["predict_rel"] < 1e-7
    assert r0["sparse_rel_to_serial"] < 1e-5
    assert abs(r0["n_iter"] - r0["serial_n_iter"]) <= 1
    assert results[0]["score"] == results[1]["score"]          # global R^2


# ---- in process ----

@pytest.fixture(scope="module")
def digits(pendigits):
    return pendigits[0][:300].astype(np.float64) / 100.0, pendigits[1][:300]


def test_a_pipeline_search_under_a_communicator_is_refused(digits):
    """Its other steps would be fitted on each rank's rows alone."""
    MPI = pytest.importorskip("mpi4py.MPI", reason="mpi4py is not installed")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from skylite.model_selection import KernelGridSearchCV
    X, y = digits
    pipe = make_pipeline(StandardScaler(), KernelSVC(n_features=64, comm=MPI.COMM_SELF))
    with pytest.raises(ValueError, match="a Pipeline under a communicator"):
        KernelGridSearchCV(pipe, {"kernelsvc__C": [1.0]}, cv=2).fit(X, y)


def test_a_size_one_communicator_is_bitwise_serial(digits):
    MPI = pytest.importorskip("mpi4py.MPI", reason="mpi4py is not installed")
    X, y = digits
    kw = dict(n_features=128, n_blocks=4, alpha=1e-3, max_iter=25, tol=1e-12, n_threads=1)
    serial = KernelSVC(**kw).fit(X, y, X_val=X[:50], y_val=y[:50])
    single = KernelSVC(comm=MPI.COMM_SELF, **kw).fit(X, y, X_val=X[:50], y_val=y[:50])
    assert np.array_equal(serial.coef_, single.coef_)
    keys = ("objective", "primal", "dual", "rho", "validation")
    assert [[r[k] for k in keys] for r in serial.history_] == \
        [[r[k] for k in keys] for r in single.history_]
    assert serial.score(X, y) == single.score(X, y)
    assert serial.objective(X, y) == single.objective(X, y)
    assert single.history_[0]["comm_seconds"] >= 0


def test_comm_is_a_parameter_but_never_pickled_or_saved(digits, tmp_path):
    MPI = pytest.importorskip("mpi4py.MPI", reason="mpi4py is not installed")
    X, y = digits
    model = KernelRidge(n_features=64, max_iter=20, comm=MPI.COMM_SELF,
                        checkpoint=tmp_path / "ck")
    assert model.get_params()["comm"] is MPI.COMM_SELF
    assert clone(model).comm is MPI.COMM_SELF
    model.fit(X, y.astype(float))
    assert pickle.loads(pickle.dumps(model)).comm is None
    assert model.comm is MPI.COMM_SELF
    model.save(tmp_path / "model.sky")
    loaded = skylite.load(tmp_path / "model.sky")
    assert loaded.comm is None and loaded.checkpoint == str(tmp_path / "ck")
    assert np.array_equal(loaded.coef_, model.coef_)


class Killed(Exception):
    pass


@pytest.mark.parametrize("variant", [{"acceleration": None},
                                     {"relaxation": 1.0, "acceleration": "anderson",
                                      "rho": 30.0},
                                     {"relaxation": 1.8, "acceleration": "anderson"}])
def test_serial_checkpoint_resume_is_bitwise_and_refuses_a_mismatch(digits, tmp_path, variant):
    """The row sweep's carried G = Z^T B is state too: without relaxation it is recomputed
    after rho changes (the flag is checkpointed), and Anderson keeps the G of every stored
    image (its memory is checkpointed with them)."""
    X, y = digits
    fmap = GaussianRFF(128, sigma=0.6, n_blocks=4, random_state=0).fit(X)
    loss = get_loss("logistic")
    Y, _ = code_labels(y, loss)
    path = tmp_path / "state.ckpt"

    def run(callback=None, checkpoint=path, alpha=1e-3):
        return BlockADMM(fmap, loss, get_regularizer("l2"), alpha, max_iter=32, tol=1e-12,
                         n_row_blocks=2, n_threads=1, memory_budget=0, checkpoint=checkpoint,
                         checkpoint_every=4, callback=callback, **variant).fit(X, Y)

    def kill(it, record, W):
        if it == 23:
            raise Killed
    with pytest.raises(Killed):
        run(kill)
    assert path.exists()                          # iteration 20's state
    with pytest.raises(ValueError, match="does not match this run.*alpha"):
        run(alpha=2e-3)
    resumed = run()
    assert resumed.history_[20]["iteration"] == 21 and resumed.n_iter_ == 32
    assert not path.exists()
    reference = run(checkpoint=None)
    assert reference.row_sweep_
    assert np.array_equal(resumed.coef_, reference.coef_)
    keys = ("objective", "primal", "dual", "rho")
    assert [[r[k] for k in keys] for r in resumed.history_] == \
        [[r[k] for k in keys] for r in reference.history_]


def test_collective_errors_name_the_failing_rank():
    failures = [describe(ValueError("X contains NaN"), 1),
                describe(KeyboardInterrupt(), 3)]
    exc = collective_error(failures)
    assert type(exc) is ValueError
    assert str(exc) == ("rank 1 failed: ValueError: X contains NaN; "
                        "rank 3 failed: KeyboardInterrupt: ")
    serial = Distributed(None)
    assert isinstance(serial.comm, SerialComm) and serial.serial
    with pytest.raises(ZeroDivisionError):           # one process: the original exception
        serial.agree(lambda: 1 / 0)
    with pytest.raises(ValueError, match="mpi4py communicator"):
        Distributed(object())


def test_kernel_grid_search_over_two_ranks_gives_the_serial_result(mpiexec):
    """Folds by global row id: two ranks with uneven shares of the rows (a rank may hold
    no test row of a fold) find the serial search's scores and best grid point, with the
    folds stacked in one solve and fold by fold, racing drops the serial search's points,
    a group splitter given each rank's groups makes the serial folds, a randomized
    search without a seed searches rank 0's draw on every rank, and a grid point whose fits
    fail gets NaN and one FitFailedWarning on every rank."""
    results, _ = launch(mpiexec, "search")
    root = results[0]
    for r in (0, 1):
        assert results[r]["best_params"] == root["serial_best_params"]
        np.testing.assert_allclose(results[r]["mean"], root["serial_mean"], atol=1e-3)
        assert abs(results[r]["score"] - root["serial_score"]) <= 1e-3
        assert results[r]["fold_by_fold_best_params"] == root["serial_best_params"]
        np.testing.assert_allclose(results[r]["fold_by_fold_mean"], root["serial_mean"],
                                   atol=1e-3)
        # racing counts every rank's test rows: the same points dropped after the same fold
        assert results[r]["raced_dropped"] == root["serial_raced_dropped"]
        # each rank passes its own rows' groups: GroupKFold splits the serial groups
        np.testing.assert_allclose(results[r]["grouped_mean"], root["serial_grouped_mean"],
                                   atol=1e-3)
        assert "groups given" in results[r]["one_rank_groups"]
        # random_state=None: every rank searches rank 0's draw
        assert results[r]["drawn_params"] == root["drawn_params"]
        assert results[r]["drawn_mean"] == root["drawn_mean"]
        # a grid point whose fits fail (too many landmarks) fails on every rank: NaN
        np.testing.assert_allclose(results[r]["failed_mean"], root["serial_failed_mean"],
                                   atol=1e-3)
        assert np.isnan(results[r]["failed_mean"][1])
        assert results[r]["failed_warnings"] == ["FitFailedWarning"]
    assert max(root["serial_raced_dropped"]) == 0
    assert root["grouped_mean"] != root["mean"]
