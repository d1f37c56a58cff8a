"""Prox throughput of the skylite.prox losses (and regularizers): n = 10^6 rows, m = 10.

    python benchmarks/bench_prox.py [--n 1000000] [--m 10] [--repeats 5] [--t 0.1]

Prints one row per (operator, threads): the minimum over `repeats` runs of the wall time of
one `prox` call (the machine is shared, so the minimum is the honest figure), the process
CPU time of that run (about threads x seconds when the cores were free; about equal to the
wall time when another process held the second core) and rows/s.  Timings include the
front's input checks (finiteness, target coding: about 10-25 ms here).
Inputs are float64 C-contiguous (no conversion is timed); V ~ N(0, 3^2), targets coded for
each loss; `out` is preallocated.  The logistic prox is timed cold (out filled with NaN, so
no warm start) and warm (out = the solution for a slightly different V, as in ADMM).
"""
import argparse
import os
import time

import numpy as np

import skylite.prox as P


def best_time(fn, repeats, setup=None):
    """(wall seconds, process CPU seconds) of the fastest of `repeats` calls of fn."""
    best = (np.inf, np.inf)
    for _ in range(repeats):
        if setup is not None:
            setup()
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        best = min(best, (time.perf_counter() - start, time.process_time() - cpu))
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--m", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--t", type=float, default=0.1)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args(argv)
    n, m, t = args.n, args.m, args.t
    rng = np.random.default_rng(0)
    V = rng.normal(scale=3.0, size=(n, m))
    labels = rng.integers(0, m, n)
    pm1 = np.where(np.arange(m) == labels[:, None], 1.0, -1.0)
    onehot = np.eye(m)[labels]
    out = np.empty_like(V)

    cases = [("squared", P.SquaredLoss(classification=True), pm1, None),
             ("lad", P.AbsoluteLoss(classification=True), pm1, None),
             ("hinge", P.HingeLoss(), pm1, None),
             ("logistic (cold)", P.LogisticLoss(), onehot, np.nan),
             ("logistic (warm)", P.LogisticLoss(), onehot, "warm")]
    print(f"prox throughput, n = {n}, m = {m}, t = {t}, min of {args.repeats} runs "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at start)")
    print(f"{'operator':<18} {'threads':>7} {'seconds':>9} {'cpu s':>9} {'rows/s':>12}")
    for name, loss, Y, fill in cases:
        warm = None
        if fill == "warm":
            warm = loss.prox(V + rng.normal(scale=0.01, size=V.shape), Y, t)
        for threads in args.threads:
            # `out` is refilled (NaN: no usable warm start; or the warm start) untimed
            setup = None if fill is None else (
                (lambda: out.__setitem__(Ellipsis, warm)) if fill == "warm"
                else (lambda: out.fill(np.nan)))
            sec, cpu = best_time(lambda: loss.prox(V, Y, t, out=out, n_threads=threads),
                                 args.repeats, setup)
            print(f"{name:<18} {threads:>7} {sec:>9.4f} {cpu:>9.4f} {n / sec:>12.3e}")
    for name in ("l2", "l1"):
        reg = P.get_regularizer(name)
        for threads in args.threads:
            sec, cpu = best_time(lambda: reg.prox(V, t, out=out, n_threads=threads),
                                 args.repeats)
            print(f"{'reg ' + name:<18} {threads:>7} {sec:>9.4f} {cpu:>9.4f} {n / sec:>12.3e}")


if __name__ == "__main__":
    main()
