"""Checks run under `mpiexec -n 2` by tests/test_mpi.py (one mode per launch).

    mpiexec -n 2 python tests/mpi/mpi_checks.py MODE [DIR]

Every rank prints one line "RESULT <rank> <json>" on success, or "RAISED <rank>
<type>: <message>" and exits with status 3 when fit raised.  Data: 600 pendigits rows.
"""
import json
import os
import sys

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI
from sklearn.base import clone

from skylite import KernelRidge, KernelSVC
from skylite.admm import BlockADMM, iteration
from skylite.datasets import load_pendigits
from skylite._early_stopping import MONITOR_RELATIVE_RESIDUAL, holdout_rows
from skylite.prox import get_loss, get_regularizer
from skylite.prox.coding import code_labels
from skylite._distributed import Distributed
from skylite.kernels import Gaussian
from skylite.prox import RKHSNorm
from skylite.sketch import GaussianRFF, Nystroem

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def data(rows=600):
    X, y = load_pendigits()[:2]
    return X[:rows].astype(np.float64) / 100.0, y[:rows]


def my_slice(n):
    """The rows the simulated path gives row block `rank` of `size`."""
    bounds = np.linspace(0, n, size + 1).round().astype(int)
    return slice(bounds[rank], bounds[rank + 1])


def engine(fmap, loss, alpha, **kw):
    kw.setdefault("memory_budget", 10**9)
    kw.setdefault("n_threads", 1)
    return BlockADMM(fmap, loss, get_regularizer("l2"), alpha, **kw)


def history(e):
    return {k: [r[k] for r in e.history_] for k in ("objective", "primal", "dual", "rho")}


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def same_on_all_ranks(a):
    """True if the array is bitwise the same on every rank."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    root = a.copy()
    comm.Bcast(root, root=0)
    return bool(comm.allreduce(int(np.array_equal(root, a)), op=MPI.MIN))


def consistency():
    """(a) 2 ranks vs one process with 2 simulated row blocks (hinge, fixed iterations;
    from zero and from a warm start); (b) 2 ranks reach the serial R = 1 optimum (squared loss, tight tol)."""
    X, y = data()
    fmap = GaussianRFF(256, sigma=0.6, n_blocks=4, random_state=0).fit(X)
    part = my_slice(len(X))
    hinge = get_loss("hinge")
    Y, _ = code_labels(y, hinge)
    mpi = engine(fmap, hinge, 1e-3, max_iter=40, tol=1e-14, comm=comm).fit(X[part], Y[part])
    out = {"coef_same": same_on_all_ranks(mpi.coef_),
           "history_same": same_on_all_ranks(np.array(list(history(mpi).values())))}
    if rank == 0:
        sim = engine(fmap, hinge, 1e-3, max_iter=40, tol=1e-14, n_row_blocks=2).fit(X, Y)
        out["iterations"] = [mpi.n_iter_, sim.n_iter_]
        out["history_rel"] = max(rel(history(mpi)[k], history(sim)[k]) for k in history(sim))
        out["coef_rel"] = float(np.linalg.norm(mpi.coef_ - sim.coef_)
                                / np.linalg.norm(sim.coef_))
    # (a'') a warm start at that model (each rank starts its row block by its own passes,
    # mu summed over the ranks): the simulated row blocks' iterates again
    W0 = mpi.coef_
    mpi = engine(fmap, hinge, 1e-3, max_iter=10, tol=1e-14, comm=comm).fit(X[part], Y[part],
                                                                            W0=W0)
    if rank == 0:
        sim = engine(fmap, hinge, 1e-3, max_iter=10, tol=1e-14, n_row_blocks=2).fit(X, Y,
                                                                                   W0=W0)
        out["warm_sweep"] = [bool(mpi.method_.row_sweep_), bool(sim.method_.row_sweep_)]
        out["warm_history_rel"] = max(rel(history(mpi)[k], history(sim)[k]) for k in
                                      history(sim))
        out["warm_coef_rel"] = float(np.linalg.norm(mpi.coef_ - sim.coef_)
                                     / np.linalg.norm(sim.coef_))
    # (a') the same with Anderson acceleration (the default for logistic loss): its inner
    # products are reduced over the ranks, so both take the same decisions
    logistic = get_loss("logistic")
    Y, _ = code_labels(y, logistic)
    mpi = engine(fmap, logistic, 1e-3, max_iter=40, tol=1e-14, comm=comm).fit(X[part], Y[part])
    if rank == 0:
        sim = engine(fmap, logistic, 1e-3, max_iter=40, tol=1e-14, n_row_blocks=2).fit(X, Y)
        out["anderson"] = [mpi.acceleration, sim.acceleration]
        out["anderson_outcomes_same"] = ([r.get("acceleration") for r in mpi.history_]
                                         == [r.get("acceleration") for r in sim.history_])
        out["anderson_accepted"] = sum(r.get("acceleration") == "accepted"
                                       for r in mpi.history_)
        out["anderson_history_rel"] = max(rel(history(mpi)[k], history(sim)[k])
                                          for k in history(sim))
    squared = get_loss("squared", classification=True)
    Y, _ = code_labels(y, squared)
    mpi = engine(fmap, squared, 1e-3, tol=1e-10, max_iter=5000, comm=comm).fit(X[part], Y[part])
    if rank == 0:
        serial = engine(fmap, squared, 1e-3, tol=1e-10, max_iter=5000).fit(X, Y)
        Z = fmap.transform(X)
        F = lambda W: 0.5 * np.sum((Z @ W - Y) ** 2) / len(X) + 1e-3 * 0.5 * np.sum(W * W)
        out["converged"] = [bool(mpi.converged_), bool(serial.converged_)]
        out["objective_rel"] = abs(F(mpi.coef_) - F(serial.coef_)) / F(serial.coef_)
        out["engine_objective_rel"] = abs(mpi.history_[-1]["objective"] - F(serial.coef_)) \
            / F(serial.coef_)
        W_star = np.linalg.solve(Z.T @ Z + len(X) * 1e-3 * np.eye(Z.shape[1]), Z.T @ Y)
        out["coef_vs_closed_form"] = float(np.linalg.norm(mpi.coef_ - W_star)
                                           / np.linalg.norm(W_star))
        out["comm_seconds"] = mpi.phase_seconds_["comm"]
    return out


def classes():
    """(d) unequal rank sizes, rank 0 lacks a class, string labels, default sigma."""
    X, y = data()
    labels = np.array([f"digit{v}" for v in y])
    rows = np.arange(len(X))
    if rank == 0:
        mine = rows[:200][labels[:200] != "digit9"]
    else:
        mine = rows[200:]
    model = KernelSVC(method="rff", n_features=256, n_blocks=4, alpha=1e-3, max_iter=60,
                      n_threads=1, memory_budget=10**9, n_iter_no_change=None, comm=comm)
    model.fit(X[mine], labels[mine], X_val=X[mine], y_val=labels[mine])
    score = model.score(X[mine], labels[mine])
    objective = model.objective(X[mine], labels[mine])
    all_rows = np.concatenate(comm.allgather(mine))
    local_correct = np.sum(model.predict(X[mine]) == labels[mine])
    serial_sigma = KernelSVC(n_features=256, n_blocks=4)._kernel_object(X[all_rows]).sigma
    model.comm = None                    # the same model, evaluated serially on all rows
    serial_objective = model.objective(X[all_rows], labels[all_rows])
    serial_score = model.score(X[all_rows], labels[all_rows])
    ridge = KernelRidge(n_features=128, n_blocks=2, alpha=1e-3, max_iter=30, n_threads=1,
                        n_iter_no_change=None, comm=comm)
    target = y.astype(float) + X[:, 0]
    ridge.fit(X[mine], target[mine], X_val=X[mine], y_val=target[mine])
    r2 = ridge.score(X[mine], target[mine])
    r2_validation = ridge.history_[-1]["validation"]
    ridge.comm = None
    serial_r2 = ridge.score(X[all_rows], target[all_rows])
    return {"r2": r2, "r2_validation": r2_validation, "serial_r2": serial_r2,
            "classes": model.classes_.tolist(), "score": score, "objective": objective,
            "has_9_locally": bool(np.any(labels[mine] == "digit9")),
            "n_local": int(len(mine)),
            "score_matches_counts": bool(abs(score - comm.allreduce(local_correct)
                                        / len(all_rows)) < 1e-15),
            "serial_score": serial_score, "serial_objective": serial_objective,
            "sigma": model.feature_map_.sigma, "serial_sigma": serial_sigma,
            "validation": model.history_[-1]["validation"],
            "coef_same": same_on_all_ranks(model.coef_)}


def early_stopping():
    """Each rank splits its own rows (seed from random_state and the rank); the validation
    score is global, so every rank stops at the same iteration with the same model."""
    X, y = data(1200)
    part = my_slice(len(X))
    X, y = X[part], y[part]
    model = KernelSVC(method="rff", sigma=0.6, n_features=256, n_blocks=4, alpha=1e-6,
                      tol=1e-12, max_iter=150, n_threads=1, early_stopping=True,
                      n_iter_no_change=5, random_state=7, comm=comm,
                      validation_fraction="auto").fit(X, y)
    held = model.validation_indices_
    groups = np.searchsorted(model.classes_, y)
    expected = holdout_rows(groups, 0.1, np.random.default_rng([7, rank]))[1]
    # the default scores 500 rows of all ranks' 1,200, drawn the same way, kept in the fit
    scored = clone(model).set_params(validation_fraction=None, max_iter=2,
                                     comm=comm).fit(X, y).validation_indices_
    scored_match = np.array_equal(scored, holdout_rows(groups, 500 / 1200,
                                                       np.random.default_rng([7, rank]))[1])
    scores = [r["validation"] for r in model.history_]
    # the rule judges the run from the first iteration with small relative residuals on
    monitored = next(r["iteration"] for r in model.history_
                     if r["residual_ratio"] * model.tol <= MONITOR_RELATIVE_RESIDUAL)
    return {"held": held.tolist(), "n_local": int(len(X)),
            "split_matches_rank_seed": bool(np.array_equal(held, expected)) and scored_match,
            "n_iter": model.n_iter_, "best_iteration": model.best_iteration_,
            "best_score": scores[model.best_iteration_ - 1],
            "max_score": max(scores[monitored - 1:]),
            "global_score_of_kept_W": model.score(X[held], y[held]),
            "history_same": same_on_all_ranks(np.array(scores)),
            "coef_same": same_on_all_ranks(model.coef_)}


def nan():
    """(e) rank 1's rows contain a NaN."""
    X, y = data(200)
    part = my_slice(len(X))
    X = X[part].copy()
    if rank == 1:
        X[5, 3] = np.nan
    KernelRidge(n_features=64, n_blocks=2, max_iter=5, comm=comm).fit(X, y[part])


def iteration_fault():
    """(e') rank 1 runs out of memory in its loss prox at iteration 3."""
    X, y = data(200)
    part = my_slice(len(X))
    loss = get_loss("squared")
    if rank == 1:
        iteration.loss_prox = FailingProx(iteration.loss_prox, at_call=3)
    fmap = GaussianRFF(64, sigma=0.6, n_blocks=2, random_state=0).fit(X)
    engine(fmap, loss, 1e-3, max_iter=10, comm=comm).fit(X[part], y[part].reshape(-1, 1)
                                                         .astype(float))


def different_columns():
    """Rank 0's rows have 5 columns, rank 1's 1: refused on every rank before the Nystroem
    map draws its landmarks."""
    X, y = data(200)
    part = my_slice(len(X))
    X = X[part, :5] if rank == 0 else X[part, :1]
    KernelSVC(method="nystroem", sigma=1.0, n_features=32, comm=comm).fit(X, y[part])


def save_fails():
    """Rank 0 cannot write the model: every rank raises its error."""
    X, y = data(200)
    part = my_slice(len(X))
    model = KernelSVC(sigma=0.6, n_features=32, max_iter=3, comm=comm).fit(X[part], y[part])
    model.save("/nonexistent/directory/model.sky")


def pcg_fault():
    """Rank 1 runs out of memory in a kernel product of the PCG's third iteration: every
    rank raises at the same collective, no rank waits."""
    X, y = data(200)
    part = my_slice(len(X))
    if rank == 1:
        from skylite.admm import pcg
        pcg.kernel_matvec = FailingProx(pcg.kernel_matvec, at_call=3)
    KernelRidge(solver="pcg", sigma=0.6, n_features=32, max_iter=10, tol=1e-12,
                comm=comm).fit(X[part], y[part].astype(float))


def mismatch():
    """(e'') rank 1 was given another max_iter: refused on every rank, no hang."""
    X, y = data(200)
    part = my_slice(len(X))
    KernelRidge(n_features=64, n_blocks=2, max_iter=5 + rank, comm=comm).fit(X[part],
                                                                            y[part] * 1.0)


def disagreements(seed, count):
    """`count` generated per-rank disagreements (a seeded draw, the same on both ranks): for
    each, a parameter and a value per rank drawn from its pool (good and bad values, rows of
    other widths, targets of another length), a fit, and what each rank raised.  Every case
    must end on every rank, with the same outcome (both fit, or both raise one error)."""
    rng = np.random.default_rng(int(seed))
    cases = []
    for _ in range(int(count)):
        name = str(rng.choice(sorted(POOLS)))
        cases.append([name, [int(i) for i in rng.choice(len(POOLS[name]), size=size)],
                      bool(rng.random() < 0.5)])
    return disagreement_cases(json.dumps(cases))


# the values a generated disagreement draws from, per parameter (good and bad values, rows
# of other widths, targets of another length)
POOLS = {"C": [1.0, 10.0, -1.0, "big"], "sigma": [0.6, 1.2, "scale", -1.0, 1e-200],
         "n_features": [32, 48, -1, 2**40], "max_iter": [3, 4, 0, 2**64],
         "kernel": ["gaussian", "laplacian", "nonsense"], "method": [None, "nystroem"],
         "n_threads": [1, 2, -3], "adapt_rho": [True, False, "False"],
         "columns": [16, 5], "targets": ["all", "short"]}


def disagreement_cases(cases):
    """Given cases (JSON: [name, [value index per rank], whether rank 1 scores with one
    target too few]), a fit per case with each rank's value of the parameter `name`, and
    what each rank raised: every case must end on every rank with the same outcome."""
    X, y = data(120)
    part = my_slice(len(X))
    outcomes = []
    for name, indices, short_score in json.loads(cases):
        mine = POOLS[name][indices[rank]]
        params = dict(sigma=0.6, n_features=32, max_iter=3, n_threads=1, comm=comm)
        Xr, yr = X[part], y[part]
        if name == "columns":
            Xr = Xr[:, :mine]
        elif name == "targets":
            yr = yr if mine == "all" else yr[:-1]
        else:
            params[name] = mine
        try:
            model = KernelSVC(**params).fit(Xr, yr)
            yr_score = yr if not short_score or rank == 0 else yr[:-1]
            outcome = f"fitted, score {model.score(Xr, yr_score):.6f}"
        except Exception as exc:         # noqa: BLE001 - compared across the ranks
            outcome = f"{type(exc).__name__}: {exc}"
        outcomes.append([name, repr(mine), outcome])
    everyone = comm.allgather([o[2] for o in outcomes])
    return {"cases": outcomes, "same": all(o == everyone[0] for o in everyone)}


def bad_setting(name):
    """Rank 1 alone was given a bad value of one setting: the same error on every rank."""
    X, y = data(200)
    part = my_slice(len(X))
    good = {"tol": 1e-3, "alpha": 1e-4, "rho": 1.0, "max_iter": 5, "n_features": 64,
            "sigma": 0.6, "kernel": "gaussian", "regularizer": "l2",
            "precision": "float64", "relaxation": None, "n_blocks": 2,
            "validation_fraction": 0.1, "n_threads": 1}
    bad = {"tol": -1, "alpha": -1.0, "rho": 0.0, "max_iter": 0, "n_features": -5,
           "sigma": -1.0, "kernel": "nonsense", "regularizer": "l3", "precision": "half",
           "relaxation": 5.0, "n_blocks": 1000, "validation_fraction": 2.0,
           "n_threads": -2}
    params = dict(good, **({name: bad[name]} if rank == 1 else {}))
    KernelSVC(comm=comm, early_stopping=name == "validation_fraction",
              **params).fit(X[part], y[part])


class FailingProx:
    """The engine's loss prox call, raising MemoryError at its `at_call`-th call."""

    def __init__(self, prox, at_call):
        self.prox, self.at_call, self.calls = prox, at_call, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.at_call:
            raise MemoryError("cannot allocate the prox workspace")
        return self.prox(*args, **kwargs)


def _checkpointed(path, die_at=None):
    X, y = data()
    part = my_slice(len(X))

    def die(it, record, W):
        if die_at is not None and it == die_at:
            os._exit(7)                            # a killed job: no cleanup at all
    return KernelSVC(sigma=0.6, n_features=256, n_blocks=4, alpha=1e-3, max_iter=35,
                     tol=1e-12, n_threads=1, memory_budget=0, comm=comm, checkpoint=path,
                     checkpoint_every=5, callback=die).fit(X[part], y[part])


def checkpoint_die(directory):
    """(f) first launch: killed after iteration 12 (checkpoints at 5 and 10)."""
    _checkpointed(os.path.join(directory, "run.ckpt"), die_at=12)


def checkpoint_resume(directory):
    """(f) second launch: resume from iteration 10, compare with an uninterrupted run."""
    path = os.path.join(directory, "run.ckpt")
    files = sorted(os.listdir(directory))
    resumed = _checkpointed(path)
    reference = _checkpointed(None)
    return {"files_before": files, "files_after": sorted(os.listdir(directory)),
            "iterations": [r["iteration"] for r in resumed.history_][:3] + [resumed.n_iter_],
            "coef_equal": bool(np.array_equal(resumed.coef_, reference.coef_)),
            "history_equal": history(resumed) == history(reference)}


def nystroem():
    """Nystroem landmarks drawn from every rank's rows: the same map on both ranks and in one
    process over all rows; 2 ranks repeat 2 simulated row blocks (hinge, RKHS norm), and the
    estimator, which whitens the features on each rank, reaches the serial optimum."""
    X, y = data()
    part = my_slice(len(X))
    fmap = Nystroem(Gaussian(0.6), n_features=64, n_blocks=4).fit_distributed(
        X[part], Distributed(comm))
    hinge = get_loss("hinge")
    Y, _ = code_labels(y, hinge)
    kw = dict(max_iter=30, tol=1e-14, n_threads=1, memory_budget=10**9)
    mpi = BlockADMM(fmap, hinge, RKHSNorm(fmap), 1e-3, comm=comm, **kw).fit(X[part], Y[part])
    model = KernelSVC(sigma=0.6, method="nystroem", n_features=64, n_blocks=4, alpha=1e-3,
                      max_iter=20, comm=comm).fit(X[part], y[part])
    out = {"landmarks_same": same_on_all_ranks(fmap.landmarks_),
           "whitening_same": same_on_all_ranks(fmap.whitening_),
           "coef_same": same_on_all_ranks(mpi.coef_),
           "estimator_coef_same": same_on_all_ranks(model.coef_),
           "estimator_regularizer": model.regularizer_.name,
           "estimator_whitened": "whitening" in model.phase_seconds_}
    if rank == 0:
        serial = Nystroem(Gaussian(0.6), n_features=64, n_blocks=4).fit(X)
        out["landmarks_equal_serial"] = bool(np.array_equal(serial.landmarks_,
                                                            fmap.landmarks_))
        sim = BlockADMM(fmap, hinge, RKHSNorm(fmap), 1e-3, n_row_blocks=2, **kw).fit(X, Y)
        out["iterations"] = [mpi.n_iter_, sim.n_iter_]
        out["history_rel"] = max(rel(history(mpi)[k], history(sim)[k]) for k in history(sim))
        out["coef_rel"] = float(np.linalg.norm(mpi.coef_ - sim.coef_)
                                / np.linalg.norm(sim.coef_))
    # the estimator whitens the features on each rank: run to a tight tol, the serial optimum
    kw = dict(sigma=0.6, method="nystroem", n_features=64, n_blocks=4, alpha=1e-3,
              tol=1e-7, max_iter=5000, n_threads=1)
    tight = KernelSVC(comm=comm, **kw).fit(X[part], y[part])
    objective = tight.objective(X[part], y[part])        # collective: over every rank's rows
    if rank == 0:
        alone = KernelSVC(**kw).fit(X, y)
        out["estimator_whitened_serial"] = "whitening" in alone.phase_seconds_
        out["estimator_objective_rel"] = rel(objective, alone.objective(X, y))
    # early stopping on whitened features (a path whitens), given W~: every rank keeps the
    # same W, and the recorded score is the global score of the kept W
    early = KernelSVC(sigma=0.6, method="nystroem", n_features=64, n_blocks=4,
                      early_stopping=True, validation_fraction=0.2, n_iter_no_change=5,
                      max_iter=300, n_threads=1, comm=comm).fit_path(X[part], y[part],
                                                                    [10.0, 30.0])[0]
    held = early.validation_indices_
    out.update(early_whitened="whitening" in early.phase_seconds_,
               early_coef_same=same_on_all_ranks(early.coef_),
               early_stopped=early.n_iter_ < 300,
               early_best_score=early.history_[early.best_iteration_ - 1]["validation"],
               early_score_of_kept_W=early.score(X[part][held], y[part][held]))
    return out


def pcg(directory):
    """KernelRidge(solver="pcg") over 2 ranks: the serial fit's model; the callback on every
    rank; a run killed at iteration 7 resumes from its iteration-6 checkpoint to the
    uninterrupted model bitwise; early stopping on each rank's held-out rows."""
    X, y = data(400)
    part = my_slice(len(X))
    y = y.astype(float)
    kw = dict(sigma=0.6, n_features=64, alpha=1e-3, tol=1e-8, max_iter=300, solver="pcg",
              n_threads=1)
    calls = []
    model = KernelRidge(comm=comm, callback=lambda it, record, A: calls.append(it),
                        **kw).fit(X[part], y[part])
    path = os.path.join(directory, "pcg.ckpt")

    def kill(it, record, A):
        if it == 7:
            raise KeyboardInterrupt      # not an Exception: like a user's Ctrl-C
    try:
        KernelRidge(comm=comm, checkpoint=path, checkpoint_every=3, callback=kill,
                    **kw).fit(X[part], y[part])
        killed = "not killed"
    except BaseException as exc:         # noqa: BLE001 - the interruption, on every rank
        killed = type(exc).__name__
    files = sorted(os.listdir(directory))
    resumed = KernelRidge(comm=comm, checkpoint=path, checkpoint_every=3,
                          **kw).fit(X[part], y[part])
    early = KernelRidge(comm=comm, early_stopping=True, n_iter_no_change=3,
                        **kw).fit(X[part], y[part])
    out = {"coef_same": same_on_all_ranks(model.dual_coef_), "calls": calls,
           "n_iter": model.n_iter_, "converged": model.converged_, "killed": killed,
           "files": files, "files_after": sorted(os.listdir(directory)),
           "resumed_equal": bool(np.array_equal(resumed.dual_coef_, model.dual_coef_)),
           "resumed_iterations": [r["iteration"] for r in resumed.history_],
           "early_n_iter": early.n_iter_, "early_best": early.best_iteration_,
           "early_validation": "validation" in early.history_[0],
           "score": model.score(X[part], y[part])}
    # sparse rows: the Gram blocks of two sparse row sets take the evaluator's sparse path
    sparse = KernelRidge(comm=comm, **kw).fit(sp.csr_matrix(X[part]), y[part])
    if rank == 0:
        serial = KernelRidge(**kw).fit(X, y)
        out["rel_to_serial"] = rel(model.dual_coef_, serial.dual_coef_)
        out["sparse_rel_to_serial"] = rel(sparse.dual_coef_, serial.dual_coef_)
        out["predict_rel"] = float(np.linalg.norm(model.predict(X) - serial.predict(X))
                                   / np.linalg.norm(serial.predict(X)))
        out["serial_n_iter"] = serial.n_iter_
    return out


def search():
    """KernelGridSearchCV over 2 ranks (each with an uneven share of the rows) against the
    same search in one process on all the rows."""
    from skylite.model_selection import KernelGridSearchCV
    X, y = data(600)
    cut = 250 if rank == 0 else 600          # uneven shares: the folds are by global row id
    mine = slice(0, cut) if rank == 0 else slice(250, 600)
    grid = {"sigma": [0.3, 1.0], "C": [1.0, 10.0]}
    est = KernelSVC(n_features=128, tol=1e-5, max_iter=3000, n_threads=1, early_stopping=False)
    search = KernelGridSearchCV(clone(est).set_params(comm=comm), grid, cv=3, racing=False,
                                stack_folds=True)
    search.fit(X[mine], y[mine])
    fold_by_fold = KernelGridSearchCV(clone(est).set_params(comm=comm), grid, cv=3,
                                      racing=False, stack_folds=False).fit(X[mine], y[mine])
    out = {"best_params": search.best_params_,
           "mean": search.cv_results_["mean_test_score"].tolist(),
           "score": search.score(X[mine], y[mine]),
           "fold_by_fold_best_params": fold_by_fold.best_params_,
           "fold_by_fold_mean": fold_by_fold.cv_results_["mean_test_score"].tolist()}
    narrow = {"sigma": [0.02, 0.5], "C": [1.0, 10.0]}       # sigma = 0.02: far too narrow
    raced = KernelGridSearchCV(clone(est).set_params(comm=comm), narrow, cv=3,
                               refit=False).fit(X[mine], y[mine])
    out["raced_dropped"] = raced.dropped_after_.tolist()
    from sklearn.model_selection import GroupKFold
    writers = np.arange(600) // 40                          # by global row id
    grouped = KernelGridSearchCV(clone(est).set_params(comm=comm), grid, cv=GroupKFold(3),
                                 racing=False, refit=False).fit(X[mine], y[mine],
                                                                groups=writers[mine])
    out["grouped_mean"] = grouped.cv_results_["mean_test_score"].tolist()
    from scipy.stats import loguniform
    from skylite.model_selection import KernelRandomizedSearchCV
    drawn = KernelRandomizedSearchCV(clone(est).set_params(comm=comm),
                                     {"sigma": loguniform(0.3, 1.0), "C": [1.0, 10.0]},
                                     n_iter=3, cv=3, refit=False).fit(X[mine], y[mine])
    out["drawn_params"] = [{k: float(v) for k, v in p.items()} for p in
                           drawn.cv_results_["params"]]
    out["drawn_mean"] = drawn.cv_results_["mean_test_score"].tolist()
    import warnings
    landmarks = {"n_features": [64, 500], "C": [1.0]}     # 500 > a fold's 400 training rows
    nystroem = clone(est).set_params(method="nystroem")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        failing = KernelGridSearchCV(clone(nystroem).set_params(comm=comm), landmarks, cv=3,
                                     racing=False, refit=False).fit(X[mine], y[mine])
    out["failed_mean"] = failing.cv_results_["mean_test_score"].tolist()
    out["failed_warnings"] = [type(w.message).__name__ for w in caught
                              if "fits failed" in str(w.message)]
    try:                                     # groups from one rank only: refused on both
        KernelGridSearchCV(clone(est).set_params(comm=comm), grid, cv=GroupKFold(3)).fit(
            X[mine], y[mine], groups=writers[mine] if rank == 0 else None)
        out["one_rank_groups"] = "no error"
    except ValueError as exc:
        out["one_rank_groups"] = str(exc)
    if rank == 0:
        out["serial_grouped_mean"] = KernelGridSearchCV(
            est, grid, cv=GroupKFold(3), racing=False, refit=False).fit(
                X, y, groups=writers).cv_results_["mean_test_score"].tolist()
        out["serial_raced_dropped"] = KernelGridSearchCV(
            est, narrow, cv=3, refit=False).fit(X, y).dropped_after_.tolist()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out["serial_failed_mean"] = KernelGridSearchCV(
                nystroem, landmarks, cv=3, racing=False, refit=False).fit(
                    X, y).cv_results_["mean_test_score"].tolist()
        serial = KernelGridSearchCV(est, grid, cv=3, racing=False).fit(X, y)
        out["serial_best_params"] = serial.best_params_
        out["serial_mean"] = serial.cv_results_["mean_test_score"].tolist()
        out["serial_score"] = serial.score(X, y)
    return out


def cache_precision():
    """Rank 0's memory budget holds its Z blocks in bfloat16 only, rank 1's in float32:
    with cache_precision="auto" both ranks take bfloat16 (the same rounded features), and
    the model is the one every rank gets when bfloat16 is asked for."""
    X, y = data()
    part = my_slice(len(X))
    fmap = GaussianRFF(320, sigma=0.6, n_blocks=5, random_state=0).fit(X)
    hinge = get_loss("hinge")
    Y, _ = code_labels(y, hinge)
    kw = dict(max_iter=30, tol=1e-14, precision="float32", comm=comm)
    working = engine(fmap, hinge, 1e-3, memory_budget=0, **kw).fit(
        X[part], Y[part]).memory_footprint_.total
    rows = Y[part].shape[0]
    budget = working + 5 * rows * 64 * 2 + 100 if rank == 0 else 10**9
    auto = engine(fmap, hinge, 1e-3, memory_budget=budget, **kw).fit(X[part], Y[part])
    asked = engine(fmap, hinge, 1e-3, cache_precision="bfloat16", **kw).fit(X[part], Y[part])
    # "auto" on one rank takes part in the agreement, an explicit value on the other does
    # not: refused on both before the setup, not a hang
    try:
        engine(fmap, hinge, 1e-3, cache_precision="auto" if rank == 0 else "bfloat16",
               **kw).fit(X[part], Y[part])
        mixed = "fitted"
    except ValueError as exc:
        mixed = str(exc)
    return {"cache_precision": auto.cache_precision_, "cached": int(auto.cache_plan.n_z_cached),
            "coef_same": same_on_all_ranks(auto.coef_),
            "equals_asked": bool(np.array_equal(auto.coef_, asked.coef_)), "mixed": mixed}


def precision():
    """precision="auto" with float32 rows on rank 0 and float64 rows on rank 1: the
    estimator computes in float64 on both (the all-float64 model); the engine, which
    resolves it from each rank's rows, refuses the mix on both ranks."""
    X, y = data()
    part = my_slice(len(X))
    mine = X[part].astype(np.float32) if rank == 0 else X[part]
    kw = dict(sigma=0.6, method="rff", n_features=128, n_blocks=2, C=10.0, max_iter=20,
              early_stopping=False, n_threads=1, comm=comm)
    mixed = KernelSVC(**kw).fit(mine, y[part])
    double = KernelSVC(**kw).fit(mine.astype(np.float64), y[part])
    single = KernelSVC(**kw).fit(X[part].astype(np.float32), y[part])
    fmap = GaussianRFF(128, sigma=0.6, n_blocks=2, random_state=0).fit(X)
    hinge = get_loss("hinge")
    Y, _ = code_labels(y, hinge)
    try:
        engine(fmap, hinge, 1e-3, max_iter=5, comm=comm).fit(mine, Y[part])
        refused = "fitted"
    except ValueError as exc:
        refused = str(exc)
    return {"precisions": [mixed.precision_, double.precision_, single.precision_],
            "coef_same": same_on_all_ranks(mixed.coef_),
            "equals_double": bool(np.array_equal(mixed.coef_, double.coef_)),
            "refused": refused}


def sparse_columns():
    """Reuters rows split over 2 ranks, each rank's share using its own columns, so each
    draws the Gaussian map's frequencies for other columns (operator_for_rows): the
    iterates of one process with the same 2 row blocks as simulated row blocks."""
    from pathlib import Path
    from skylite.io import load_svmlight
    X, y = load_svmlight(Path(__file__).resolve().parents[1] / "data" /
                         "reuters_sample.svm.gz")[:2]
    X, y = X[:400], y[:400]
    fmap = GaussianRFF(256, sigma=1.0, n_blocks=2, random_state=0).fit(X)
    part = my_slice(X.shape[0])
    hinge = get_loss("hinge")
    Y, _ = code_labels(y, hinge)
    mpi = engine(fmap, hinge, 1e-3, max_iter=30, tol=1e-14, comm=comm).fit(X[part], Y[part])
    used = len(np.unique(X[part].indices))
    out = {"coef_same": same_on_all_ranks(mpi.coef_), "columns_in_use": used,
           "width": X.shape[1]}
    if rank == 0:
        sim = engine(fmap, hinge, 1e-3, max_iter=30, tol=1e-14, n_row_blocks=2).fit(X, Y)
        out["history_rel"] = max(rel(history(mpi)[k], history(sim)[k]) for k in history(sim))
        out["coef_rel"] = float(np.linalg.norm(mpi.coef_ - sim.coef_)
                                / np.linalg.norm(sim.coef_))
    # Nystroem's k-means pool gathered from both ranks' CSR rows (kept sparse): the
    # landmarks of one process's fit on all the rows
    spread = Nystroem(Gaussian(1.0), n_features=32, random_state=0).fit_distributed(
        X[part], Distributed(comm))
    serial = Nystroem(Gaussian(1.0), n_features=32, random_state=0).fit(X)
    out["landmarks_equal"] = bool(np.array_equal(spread.landmarks_, serial.landmarks_))
    return out


if __name__ == "__main__":
    mode = sys.argv[1]
    args = sys.argv[2:]
    try:
        result = globals()[mode.replace("-", "_")](*args)
    except Exception as exc:          # report, then exit non-zero like an uncaught error
        print(f"RAISED {rank} {type(exc).__name__}: {exc}", flush=True)
        sys.exit(3)
    print(f"RESULT {rank} {json.dumps(result)}", flush=True)
