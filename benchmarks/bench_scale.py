"""Scale: skylite against exact SVC and RBFSampler + SGD on deformed MNIST, n = 60k to 1M.

    python benchmarks/deformed_mnist.py 1000000 DATA/dm1m --jobs 2      # the rows (once)
    python benchmarks/bench_scale.py run skylite --n 60000 --data DATA/dm1m
    python benchmarks/bench_scale.py run svc --n 240000 --data DATA/dm1m --cap 3600
    python benchmarks/bench_scale.py run rbf-sgd --n 60000 --data DATA/dm1m
    python benchmarks/bench_scale.py report --plot docs/images/scale.png

Training rows are the first n rows of the deformed-digit stream (skylite.datasets.
deformed_digits, seed 0): row k is a pure function of (seed, k), so the 60k set is a prefix of
the 240k set, which is a prefix of the 1M set.  Every contender is evaluated once on the real
10,000 MNIST test digits (skylite.datasets.load_mnist), never on generated rows.

Protocols, fixed a priori (nothing is chosen by looking at test accuracy):

- skylite: KernelSVC, Gaussian kernel, sigma = 6, Fastfood (the fastest Gaussian map),
  s = 16384 in 16 column blocks of 1024 (Fastfood's stack width for 784 pixels padded to
  1024; the default block rule would cut 1M rows into 61 blocks of 269), float32,
  alpha = 1 / (n C) with C = 10 (the exact SVC's C), tol = 1e-3, early stopping on the last
  10,000 of the n rows (a contiguous split of i.i.d. rows: X and X_val are views of the
  memory-mapped file, nothing is copied), patience 10 iterations without a better
  validation accuracy (`scoring="score"`; --scoring loss monitors the validation loss); it
  trains on the other n - 10,000 rows and keeps the best validated iterate; memory_budget
  4 GiB (the working memory, then whole Z blocks in what is left).
- skylite-nystroem: the same protocol with Nystroem features instead of Fastfood: s = 4096
  k-means landmarks (the default landmark rule, k-means on a bounded pool of rows) in 8
  column blocks of 512, the RKHS norm (the Nystroem default), memory_budget 16 GiB and
  cache_precision "auto" (bfloat16 when it caches more blocks: at a million rows Z is
  8.1 GB in bfloat16, 16.2 GB in float32).  Fixed before its runs, from MNIST 20k, where
  Nystroem s = 4096 was as accurate as RFF s = 16384 (docs/choosing_parameters.md).
- exact SVC: scikit-learn's SVC (libsvm), C = 10, gamma = 1/72 (= 1 / (2 sigma^2)), all n
  rows, cache_size 2000 MB (--svc-cache-mb; a larger kernel cache only makes libsvm faster,
  never changes its solution).  A fit that runs past --cap seconds is stopped and reported as
  "> cap".
- RBFSampler + SGDClassifier: scikit-learn's RBFSampler(gamma=1/72, n_components=8192),
  float32, then SGDClassifier(loss="hinge", alpha = 1 / (n C)) with its own early stopping
  (validation_fraction 0.1 of the training rows).  Z (n x 8192) is materialized: the run is
  refused when it would not fit in the machine's memory, and the table says why.

Each `run` is its own process (its peak RSS is its own) and appends one JSON line to
--results (default benchmarks/results/scale.jsonl); `report` prints the table of the last
result of every (contender, n) and draws accuracy and time against n.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _memory import peak_rss  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "scale.jsonl"
SIGMA, C_SVC, FEATURES, RBF_FEATURES, VALIDATION_ROWS = 6.0, 10.0, 16384, 8192, 10000
BLOCKS = 16
NYSTROEM_FEATURES, NYSTROEM_BLOCKS, NYSTROEM_BUDGET = 4096, 8, 16 * 2**30
CONTENDERS = ("skylite", "skylite-nystroem", "svc", "svc-pairs", "rbf-sgd")
LABELS = {"skylite": "skylite KernelSVC (Fastfood, s=16384, early stopping)",
          "skylite-nystroem": "skylite KernelSVC (Nystroem, s=4096, early stopping)",
          "svc": "exact SVC (libsvm, C=10)",
          "svc-pairs": "exact SVC, its 45 one-vs-one problems in 2 processes",
          "rbf-sgd": "RBFSampler (s=8192) + SGDClassifier"}


def training_rows(prefix, n):
    """Rows [0, n) of the deformed stream, memory-mapped (float32) and their labels."""
    X = np.load(f"{prefix}.X.npy", mmap_mode="r")
    y = np.load(f"{prefix}.y.npy", mmap_mode="r")
    if len(X) < n:
        sys.exit(f"{prefix}.X.npy has {len(X):,} rows, fewer than n = {n:,}: generate more "
                 f"with benchmarks/deformed_mnist.py")
    return X[:n], np.asarray(y[:n])


def data_seed(prefix):
    """The deformed stream's seed, from the PREFIX.json deformed_mnist.py writes (else None)."""
    try:
        with open(f"{prefix}.json") as f:
            return json.load(f)["seed"]
    except FileNotFoundError:
        return None


def test_rows():
    from skylite.datasets import load_mnist
    return load_mnist(1)[2:]


def run_skylite(X, y, n, threads, memory_budget=None, scoring="score", seed=0,
                method="fastfood"):
    from skylite import KernelSVC
    fit_rows = n - VALIDATION_ROWS
    if method == "nystroem":
        features, blocks, budget = NYSTROEM_FEATURES, NYSTROEM_BLOCKS, NYSTROEM_BUDGET
    else:
        features, blocks, budget = FEATURES, BLOCKS, 4 * 2**30
    memory_budget = budget if memory_budget is None else memory_budget
    model = KernelSVC(sigma=SIGMA, n_features=features, n_blocks=blocks, method=method,
                      precision="float32", scoring=scoring,
                      alpha=1.0 / (n * C_SVC), n_iter_no_change=10, n_threads=threads,
                      memory_budget=memory_budget, random_state=seed, verbose=True)
    start = time.perf_counter()
    model.fit(X[:fit_rows], y[:fit_rows], X_val=X[fit_rows:], y_val=y[fit_rows:])
    fit = time.perf_counter() - start
    return model, fit, {"iterations": model.n_iter_, "best_iteration": model.best_iteration_,
                        "blocks": blocks, "row_blocks": model.n_row_blocks_,
                        "sweep": model.sweep_, "scoring": scoring, "seed": seed,
                        "method": method, "cache_precision": model.cache_precision_,
                        "memory_budget": memory_budget,
                        "validation": max(r["validation"] for r in model.history_),
                        "phases": {k: round(v, 1) for k, v in model.phase_seconds_.items()}}


def run_svc(X, y, n, threads, memory_budget=None, svc_cache_mb=2000):
    from sklearn.svm import SVC
    model = SVC(C=C_SVC, gamma=1.0 / (2 * SIGMA**2), cache_size=svc_cache_mb)
    start = time.perf_counter()
    model.fit(np.asarray(X, dtype=np.float64), y)
    return model, time.perf_counter() - start, {"support_vectors": int(model.n_support_.sum()),
                                                "cache_mb": svc_cache_mb}


def _fit_pair(prefix, n, first, second, svc_cache_mb):
    """libsvm's binary problem of classes (first, second) on rows [0, n): a worker's task."""
    from sklearn.svm import SVC
    X, y = training_rows(prefix, n)
    rows = np.flatnonzero((y == first) | (y == second))
    model = SVC(C=C_SVC, gamma=1.0 / (2 * SIGMA**2), cache_size=svc_cache_mb)
    model.fit(np.asarray(X[rows], dtype=np.float64), y[rows])
    return first, second, rows[model.support_], model.dual_coef_[0], float(model.intercept_[0])


class OneVsOneVote:
    """The multi-class SVC that libsvm builds from its one-vs-one binary machines.

    Pair (i, j), i < j, scores f_ij(x) = sum_k a_k K(x, sv_k) + b over its support vectors
    and votes j when f_ij(x) >= 0, else i (libsvm's rule in scikit-learn's sign convention);
    the class with most votes wins, ties to the smaller label, as in libsvm.  The kernel
    between a test row and every support vector is computed once and shared by all pairs.
    """

    def __init__(self, X, classes, pairs, gamma):
        self.classes, self.gamma = np.asarray(classes), gamma
        self.support = np.unique(np.concatenate([sv for _, _, sv, _, _ in pairs]))
        self.vectors = np.asarray(X[self.support], dtype=np.float64)
        self.pairs = [(i, j, np.searchsorted(self.support, sv), coef, b)
                      for i, j, sv, coef, b in pairs]

    def predict(self, X, chunk=1000):
        from sklearn.metrics.pairwise import rbf_kernel
        votes = np.zeros((len(X), len(self.classes)), dtype=np.int64)
        index = {c: k for k, c in enumerate(self.classes)}
        for start in range(0, len(X), chunk):
            K = rbf_kernel(np.asarray(X[start:start + chunk], dtype=np.float64), self.vectors,
                           gamma=self.gamma)
            for i, j, columns, coef, b in self.pairs:
                second_wins = K[:, columns] @ coef + b >= 0
                votes[start:start + chunk, index[j]] += second_wins
                votes[start:start + chunk, index[i]] += ~second_wins
        return self.classes[np.argmax(votes, axis=1)]


def run_svc_pairs(X, y, n, threads, memory_budget=None, svc_cache_mb=2000, data=None):
    """Exact SVC's solution with its 45 binary problems spread over 2 worker processes.

    detail["worker_peak_rss"] is the largest peak RSS of one worker (getrusage of the reaped
    children); the result's peak_rss is this parent process's."""
    import resource
    from concurrent.futures import ProcessPoolExecutor
    classes = np.unique(y)
    tasks = [(i, j) for a, i in enumerate(classes) for j in classes[a + 1:]]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2) as pool:
        pairs = list(pool.map(_fit_pair, *zip(*[(data, n, i, j, svc_cache_mb)
                                                for i, j in tasks])))
    fit = time.perf_counter() - start
    model = OneVsOneVote(X, classes, pairs, gamma=1.0 / (2 * SIGMA**2))
    worker_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return model, fit, {"support_vectors": int(len(model.support)), "cache_mb": svc_cache_mb,
                        "processes": 2, "worker_peak_rss": worker_peak}


def run_rbf_sgd(X, y, n, threads, memory_budget=None):
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.linear_model import SGDClassifier
    from sklearn.pipeline import make_pipeline

    from skylite._machine import available_memory_bytes, format_bytes
    need = 2 * n * RBF_FEATURES * 4          # Z in float32, and SGD's float64 row copies
    if need > available_memory_bytes():
        return None, None, {"refused": f"Z is {n:,} x {RBF_FEATURES} (float32 "
                                       f"{format_bytes(n * RBF_FEATURES * 4)}, plus a "
                                       f"validation copy): needs about {format_bytes(need)}, "
                                       f"{format_bytes(available_memory_bytes())} available"}
    model = make_pipeline(RBFSampler(gamma=1.0 / (2 * SIGMA**2), n_components=RBF_FEATURES,
                                     random_state=0),
                          SGDClassifier(loss="hinge", alpha=1.0 / (n * C_SVC),
                                        early_stopping=True, random_state=0))
    start = time.perf_counter()
    model.fit(np.asarray(X), y)
    return model, time.perf_counter() - start, {"epochs": int(model[-1].n_iter_)}


RUNNERS = {"skylite": run_skylite,
           "skylite-nystroem": lambda *a, **kw: run_skylite(*a, **kw, method="nystroem"),
           "svc": run_svc, "svc-pairs": run_svc_pairs,
           "rbf-sgd": run_rbf_sgd}


def child(args):
    """One contender at one n, in this process; prints its result as a JSON line."""
    X, y = training_rows(args.data, args.n)
    Xt, yt = test_rows()
    extra = {"skylite": {"scoring": args.scoring, "seed": args.seed},
             "skylite-nystroem": {"scoring": args.scoring, "seed": args.seed},
             "svc": {"svc_cache_mb": args.svc_cache_mb},
             "svc-pairs": {"svc_cache_mb": args.svc_cache_mb, "data": args.data}
             }.get(args.contender, {})
    model, fit, detail = RUNNERS[args.contender](X, y, args.n, args.threads,
                                                 args.memory_budget, **extra)
    result = {"contender": args.contender, "n": args.n, "threads": args.threads,
              "data_seed": data_seed(args.data), "detail": detail}
    if model is not None:
        start = time.perf_counter()
        predicted = model.predict(Xt)
        result.update(fit_seconds=round(fit, 1),
                      predict_seconds=round(time.perf_counter() - start, 2),
                      accuracy=float(np.mean(predicted == yt)))
    result["peak_rss"] = peak_rss()
    print("RESULT " + json.dumps(result), flush=True)


def run(args):
    """The contender in a child process, capped at --cap seconds; appends the result."""
    command = [sys.executable, __file__, "child", args.contender, "--n", str(args.n),
               "--data", args.data, "--threads", str(args.threads)]
    if args.memory_budget is not None:
        command += ["--memory-budget", str(args.memory_budget)]
    command += ["--svc-cache-mb", str(args.svc_cache_mb), "--scoring", args.scoring,
                "--seed", str(args.seed)]
    started = time.strftime("%Y-%m-%d %H:%M")
    result = None
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as child_process:
        timer = threading.Timer(args.cap, child_process.kill)
        timer.start()
        for line in child_process.stdout:         # the child's progress, passed through
            if line.startswith("RESULT "):
                result = json.loads(line[len("RESULT "):])
            else:
                print(line, end="", flush=True)
        child_process.wait()
        capped = not timer.is_alive()
        timer.cancel()
    if capped:
        result = {"contender": args.contender, "n": args.n, "threads": args.threads,
                  "capped": args.cap, "detail": {}}
    elif result is None:
        sys.exit(f"{args.contender} at n = {args.n} failed (exit {child_process.returncode})")
    result["started"] = started
    args.results.parent.mkdir(parents=True, exist_ok=True)
    with open(args.results, "a") as f:
        f.write(json.dumps(result) + "\n")
    print(json.dumps(result))


def latest(results):
    """The last result of every (contender, n)."""
    table = {}
    with open(results) as f:
        for line in f:
            r = json.loads(line)
            table[r["contender"], r["n"]] = r
    return table


def cell_time(r):
    if "capped" in r:
        return f"> {r['capped'] / 3600:g} h" if r["capped"] >= 3600 else f"> {r['capped']} s"
    return "" if "fit_seconds" not in r else f"{r['fit_seconds']:,.0f} s"


def cell_detail(r):
    """The run's details in one cell: sizes in GiB, the deformed stream's seed when known."""
    if "refused" in r["detail"]:
        return r["detail"]["refused"]
    items = ([("data seed", r["data_seed"])] if r.get("data_seed") is not None else []) + [
        (k, f"{v / 2**30:.1f} GiB" if k.endswith("rss") or k == "memory_budget" else v)
        for k, v in r["detail"].items() if k != "phases"]
    return ", ".join(f"{k} {v}" for k, v in items)


def report(args):
    table = latest(args.results)
    print("| contender | n | fit | predict 10k | test accuracy | peak RSS | detail |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for (contender, n), r in sorted(table.items(), key=lambda kv: (CONTENDERS.index(kv[0][0]),
                                                                   kv[0][1])):
        accuracy = f"{100 * r['accuracy']:.2f}%" if "accuracy" in r else ""
        rss = f"{r['peak_rss'] / 2**30:.1f} GiB" if "peak_rss" in r else ""
        predict = f"{r['predict_seconds']:.1f} s" if "predict_seconds" in r else ""
        fit = cell_time(r) or ("refused" if "refused" in r["detail"] else "not run")
        print(f"| {LABELS[contender]} | {n:,} | {fit} | {predict} | "
              f"{accuracy} | {rss} | {cell_detail(r)} |")
    if args.plot:
        plot(table, args.plot, args.results)


def plot(table, path, results=None):
    """Test accuracy and fit time against n, one line per contender, from the results."""
    from _plots import figure, relative, save
    fig, (left, right) = figure(1, 2, figsize=(11, 5.6))
    for color, contender in zip(("C0", "C3", "C1", "C1", "C2"), CONTENDERS):
        rows = sorted((n, r) for (c, n), r in table.items() if c == contender)
        fitted = [(n, r) for n, r in rows if "accuracy" in r]
        if fitted:
            style = "s--" if contender == "svc-pairs" else "o-"
            left.plot([n for n, _ in fitted], [100 * r["accuracy"] for _, r in fitted], style,
                      color=color, label=LABELS[contender], markersize=7)
            right.plot([n for n, _ in fitted], [r["fit_seconds"] for _, r in fitted], style,
                       color=color, markersize=7)
        for n, r in rows:
            if "capped" in r:       # a fit stopped at the cap: its time is a lower bound
                right.plot([n], [r["capped"]], "^", color=color, markersize=9)
                right.annotate(f"stopped at {r['capped'] / 3600:g} h", (n, r["capped"]),
                               textcoords="offset points", xytext=(-8, -4), fontsize=10,
                               color=color, ha="right", va="top")
            if "refused" in r["detail"]:    # Z does not fit in memory: nothing to draw
                left.annotate(f"{n:,} rows: refused\n(Z does not fit in memory)",
                              (n, 0), xycoords=("data", "axes fraction"),
                              textcoords="offset points", xytext=(-4, 6), fontsize=10,
                              color=color, ha="right", va="bottom")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("training rows n (deformed MNIST, log scale)")
        ax.grid(True, which="both", alpha=0.3)
    left.set_title("test accuracy on the real MNIST test set")
    left.set_ylabel("test accuracy (%)")
    right.set_title("fit time (2 cores)")
    right.set_yscale("log")
    right.set_ylabel("seconds (log scale)")
    fig.legend(loc="outside lower center", ncols=2)
    fig.suptitle("Deformed MNIST from 60,000 to 1,000,000 training rows")
    results = relative(results or RESULTS)
    save(fig, path, "scale", {"results": results},
         made_by=command_of_report(results, relative(path)))


def command_of_report(results, path):
    """The command that draws this figure from the stored results."""
    if (HERE.parent / results).resolve() == RESULTS.resolve():
        return f"python benchmarks/bench_scale.py report --plot {path}"
    return f"python benchmarks/bench_scale.py report --results {results} --plot {path}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "child"):
        p = commands.add_parser(name)
        p.add_argument("contender", choices=CONTENDERS)
        p.add_argument("--n", type=int, required=True, help="training rows")
        p.add_argument("--data", required=True,
                       help="prefix of the deformed_mnist.py npy files (PREFIX.X.npy)")
        p.add_argument("--threads", type=int, default=os.cpu_count())
        p.add_argument("--cap", type=float, default=3600, help="seconds before a run is stopped")
        p.add_argument("--memory-budget", type=int, default=None,
                       help="skylite's memory_budget in bytes (default the protocol's: 4 GiB "
                            "for skylite, 16 GiB for skylite-nystroem)")
        p.add_argument("--svc-cache-mb", type=int, default=2000,
                       help="exact SVC's libsvm kernel cache in MB (speed only)")
        p.add_argument("--scoring", choices=("score", "loss"), default="score",
                       help="what skylite's early stopping monitors: the validation accuracy "
                            "(the protocol of the recorded runs) or the validation loss "
                            "(scoring=\"loss\")")
        p.add_argument("--seed", type=int, default=0,
                       help="skylite's random_state: the draw of its feature map")
        p.add_argument("--results", type=Path, default=RESULTS)
    p = commands.add_parser("report")
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--plot", help="write the figure (needs matplotlib)")
    args = parser.parse_args()
    {"run": run, "child": child, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
