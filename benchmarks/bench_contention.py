"""skylite on a busy machine: fit seconds with and without a competing process, 1 and 2 threads.

    python benchmarks/bench_contention.py [--rows 10000] [--repeats 2] [--part threads grid]
                                          [--grid-rows 10000 30000]

A kernel SVM on the first --rows MNIST training rows (Gaussian sigma = 6, s = 4096, float32,
40 iterations, tol 1e-12 so that every run does the same work), in a fresh process per run,
quiet and beside one competing busy process (`python -c "while True: pass"`, started and
stopped by this script), with 1 and 2 threads; the --repeats runs of each cell are made in
rounds, each round running every cell once.  Three OpenMP wait settings:

- skylite's default: OMP_WAIT_POLICY=passive (set by `import skylite` unless the user set
  OMP_WAIT_POLICY or GOMP_SPINCOUNT): a thread waiting at the end of a parallel region
  sleeps at once;
- libgomp's default: GOMP_SPINCOUNT=300000, the spinning that lets a waiting thread hold a
  core that the competing process and skylite's working thread both want;
- GOMP_SPINCOUNT=1000: a short spin, then sleep.

Last, a GridSearchCV of 4 fits (alpha 1e-4 and 1e-5, 2 folds, s = 2048, 30 iterations) plus
the refit on the first --grid-rows rows, with n_jobs=1 and n_jobs=2 (joblib's workers set the
OpenMP limit, which n_threads=None follows: one thread each).  Two 1-thread workers can
beat one 2-thread process by at most (2-thread speed-up) / 2 on the 4 fits, and not at all
on the refit, which runs alone.  Each cell is the median of --repeats runs.
Targets: with a competing process, 2 threads / 1 thread <= 1.0; 2 threads busy / 2 threads
quiet <= 1.7; quiet, 2 threads / 1 <= 0.6; GridSearchCV n_jobs=2 / n_jobs=1 <= 0.7.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

from _busy import competing_process  # noqa: E402
from _data import mnist_file  # noqa: E402

# the children run outside the checkout: `python -c` there would import its source tree
OUTSIDE = tempfile.gettempdir()
FIT = """
import sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from skylite import KernelSVC
data = np.load(sys.argv[1])
rows = int(sys.argv[2])
X, y = data["X_train"][:rows], data["y_train"][:rows]
start = time.perf_counter()
KernelSVC(method="rff", sigma=6.0, n_features=4096, precision="float32", max_iter=40, tol=1e-12,
          early_stopping=False, n_threads=int(sys.argv[3])).fit(X, y)
print(time.perf_counter() - start)
"""
SETTINGS = {"skylite default (OMP_WAIT_POLICY=passive)": {},
            "libgomp default (GOMP_SPINCOUNT=300000)": {"GOMP_SPINCOUNT": "300000"},
            "a short spin (GOMP_SPINCOUNT=1000)": {"GOMP_SPINCOUNT": "1000"}}


def fit_seconds(rows, threads, env):
    run = subprocess.run([sys.executable, "-c", FIT, str(mnist_file()), str(rows), str(threads)],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, **env}, cwd=OUTSIDE)
    return float(run.stdout.strip().splitlines()[-1])


def measure(rows, threads, env, busy, repeats):
    times = []
    for _ in range(repeats):
        with competing_process(busy):
            times.append(fit_seconds(rows, threads, env))
    return float(np.median(times))


GRID = """
import sys, time, warnings
import numpy as np
from sklearn.model_selection import GridSearchCV
warnings.simplefilter("ignore")
from skylite import KernelSVC
data = np.load(sys.argv[1])
X, y = data["X_train"][:int(sys.argv[2])], data["y_train"][:int(sys.argv[2])]
grid = GridSearchCV(KernelSVC(method="rff", sigma=6.0, n_features=2048, precision="float32",
                              max_iter=30, tol=1e-12, early_stopping=False),
                    {"alpha": [1e-4, 1e-5]}, cv=2, n_jobs=int(sys.argv[3]))
start = time.perf_counter()
grid.fit(X, y)
print(time.perf_counter() - start)
"""


def grid_seconds(rows, n_jobs):
    """Seconds of a GridSearchCV of 4 fits (2 alphas x 2 folds) plus the refit."""
    run = subprocess.run([sys.executable, "-c", GRID, str(mnist_file()), str(rows), str(n_jobs)],
                         capture_output=True, text=True, check=True, cwd=OUTSIDE)
    return float(run.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--part", nargs="+", choices=("threads", "grid"),
                        default=["threads", "grid"])
    parser.add_argument("--grid-rows", type=int, nargs="+", default=[10000, 30000])
    args = parser.parse_args()
    print(f"bench_contention on {os.cpu_count()} cores: MNIST {args.rows} rows, s = 4096, "
          f"40 iterations, median of {args.repeats}\n")
    if "threads" in args.part:
        threads_table(args)
    if "grid" in args.part:
        print("| GridSearchCV, 4 fits and the refit | n_jobs=1 s | n_jobs=2 s | 2 / 1 |")
        print("|---|---|---|---|")
        for rows in args.grid_rows:
            one, two = (float(np.median([grid_seconds(rows, jobs)
                                         for _ in range(args.repeats)])) for jobs in (1, 2))
            print(f"| MNIST {rows} rows | {one:.1f} | {two:.1f} | {two / one:.2f} |",
                  flush=True)


def threads_table(args):
    """Every cell --repeats times, in rounds (each round runs every setting, machine state
    and thread count once), so that a slow spell of a shared machine falls on all of them;
    the table gives each cell's median."""
    cells = [(name, busy, t) for name in SETTINGS for busy in (False, True) for t in (1, 2)]
    times = {cell: [] for cell in cells}
    for _ in range(args.repeats):
        for name, busy, t in cells:
            times[name, busy, t].append(measure(args.rows, t, SETTINGS[name], busy, 1))
    print("| OpenMP wait | machine | 1 thread s | 2 threads s | 2 / 1 |")
    print("|---|---|---|---|---|")
    results = {}
    for name in SETTINGS:
        for busy in (False, True):
            one, two = (float(np.median(times[name, busy, t])) for t in (1, 2))
            results[name, busy] = (one, two)
            print(f"| {name} | {'one busy process' if busy else 'quiet'} | {one:.2f} | "
                  f"{two:.2f} | {two / one:.2f} |", flush=True)
    print()
    for name in SETTINGS:
        (q1, q2), (b1, b2) = results[name, False], results[name, True]
        print(f"- {name}: busy 2 threads / 1 thread {b2 / b1:.2f} (target <= 1.0); busy / "
              f"quiet with 2 threads {b2 / q2:.2f} (<= 1.7); quiet 2 / 1 {q2 / q1:.2f} "
              f"(<= 0.6)")
    print()


if __name__ == "__main__":
    main()
