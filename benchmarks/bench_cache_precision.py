"""Cached feature blocks in bfloat16 against float32: iteration time, objective, accuracy.

    python benchmarks/bench_cache_precision.py [--rows 60000] [--iters 30] [--threads 2]
                                               [--contenders float32 bfloat16 uncached]
                                               [--repeats 1]

Protocol, fixed before the runs: the first --rows MNIST training rows (pixels in [0, 1]),
KernelSVC with the Gaussian kernel, sigma = 6, Fastfood with s = 16384 in 16 column blocks
(the protocol of docs/scale.md), float32 blocks, alpha = 1 / (n C) with C = 10, early
stopping off and tol = 1e-12, so that every contender runs exactly --iters iterations from
the same start.  Contenders:

- float32: cache_precision="float32", a memory budget (12 GiB) that caches every block;
- bfloat16: cache_precision="bfloat16", the same budget (every block cached, in half the
  bytes; the features are rounded to bfloat16);
- uncached: float32 with memory_budget=0 (every block regenerated every iteration).

Printed per contender: the first iteration (factorization and cache filling), the median of
the later iterations (a cached iteration), their ratio to float32's, the objective after the
last iteration relative to float32's, the peak cache bytes, and the accuracy on the 10,000
MNIST test rows (reported once, never used to choose anything).

With --repeats R the contenders are fitted in turn R times (float32, bfloat16, ..., float32,
bfloat16, ...), so that a busy spell of a shared machine falls on all of them; the table
gives each contender's fastest run (the least disturbed) and a line the ratios of every
round, in order.
"""
import argparse
import time
import warnings

import numpy as np

from skylite import KernelSVC
from skylite.admm import ConvergenceWarning
from skylite.datasets import load_mnist

SIGMA, C, FEATURES, BLOCKS, BUDGET = 6.0, 10.0, 16384, 16, 12 * 2**30
CONTENDERS = {"float32": dict(cache_precision="float32", memory_budget=BUDGET),
              "bfloat16": dict(cache_precision="bfloat16", memory_budget=BUDGET),
              "uncached": dict(cache_precision="float32", memory_budget=0)}


def run(name, X, y, Xt, yt, iters, threads):
    model = KernelSVC(sigma=SIGMA, alpha=1.0 / (len(X) * C), method="fastfood",
                      n_features=FEATURES, n_blocks=BLOCKS, precision="float32",
                      early_stopping=False, max_iter=iters, tol=1e-12, n_threads=threads,
                      random_state=0, **CONTENDERS[name])
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    fit = time.perf_counter() - start
    seconds = [r["seconds"] for r in model.history_]
    return {"fit": fit, "first": seconds[0], "iteration": float(np.median(seconds[1:])),
            "objective": model.history_[-1]["objective"], "cache": model.cache_precision_,
            "memory": model.memory_estimate_, "accuracy": model.score(Xt, yt),
            "phases": model.phase_seconds_}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=60000)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--contenders", nargs="+", default=list(CONTENDERS),
                        choices=list(CONTENDERS))
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    X_all, y_all, Xt, yt = load_mnist()
    X, y = X_all[:args.rows], y_all[:args.rows]
    print(f"MNIST {len(X):,} rows, Fastfood s={FEATURES} in {BLOCKS} blocks, sigma={SIGMA:g}, "
          f"C={C:g}, float32, {args.iters} iterations, {args.threads} threads", flush=True)
    rounds = []
    for _ in range(args.repeats):
        rounds.append({})
        for name in args.contenders:
            rounds[-1][name] = r = run(name, X, y, Xt, yt, args.iters, args.threads)
            print(f"  {name}: fit {r['fit']:.1f} s, later iteration {r['iteration']:.3f} s, "
                  "phases " + ", ".join(f"{k} {v:.1f}" for k, v in r["phases"].items()),
                  flush=True)
    results = {name: min((each[name] for each in rounds), key=lambda r: r["iteration"])
               for name in args.contenders}
    ref = results.get("float32")
    if ref and args.repeats > 1:
        for name in args.contenders:
            print(f"  {name} / float32, round by round: "
                  + ", ".join(f"{each[name]['iteration'] / each['float32']['iteration']:.2f}"
                              for each in rounds))
    print("\n| contender | cache | first iteration (s) | later iteration (s) | / float32 "
          "| objective / float32's - 1 | memory (GiB) | test accuracy |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        ratio = f"{r['iteration'] / ref['iteration']:.2f}" if ref else "-"
        objective = f"{r['objective'] / ref['objective'] - 1:+.1e}" if ref else "-"
        print(f"| {name} | {r['cache']} | {r['first']:.2f} | {r['iteration']:.3f} | {ratio} "
              f"| {objective} | {r['memory'] / 2**30:.2f} | {100 * r['accuracy']:.2f}% |")


if __name__ == "__main__":
    main()
