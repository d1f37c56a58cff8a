"""BlockADMM cost per iteration, thread scaling, phase breakdown, memory budget and peak RSS.

    python benchmarks/bench_admm.py [--rows 20000] [--iters 4] [--rounds 3]
    python benchmarks/bench_admm.py --memory-vs-n 2500 5000 10000 20000 [--plot FILE]

On MNIST rows (skylite.datasets.load_mnist, float64), hinge loss (kernel SVM), Gaussian RFF:
1. seconds per iteration (iterations after the first, which also factors) at s = 8192,
   C = 16 with memory_budget=0 (every Z block regenerated) beside a bare numpy GEMM of the
   transform's shape (rows x 784 times 784 x 8192), for 1 and 2 threads; and the
   two-thread uncached iteration over that GEMM in --rounds rounds, each timing the GEMM
   and then a fit (the target's value is the median of the rounds' ratios: the GEMM's own
   time moves by 10% with the state of a shared machine);
2. the time per phase (transform, factor, products with Z, solves, prox, reductions), the
   paper's performance breakdown, with no cache and with every block cached;
3. peak RSS of training at s = 32768 (explicit Z would be rows x 32768 x 8 bytes), measured
   in a fresh process, beside the memory counted before training (memory_estimate_).
4. (--bandwidth) a cached float32 iteration beside the two products an iteration needs,
   Z.T @ B and Z @ W, in float32 numpy on an explicit Z of the same size (issue target: the
   ratio at most 1.3; MNIST 60k at s = 16384 needs about 8 GB for the two copies of Z).
5. (--phases) the phase breakdown of a cached float32 fit at --rows x --features (blocks of
   1024), with whatever skylite this interpreter imports: --save FILE keeps it as JSON, and
   --before FILE prints a saved run beside this one.  Before/after an engine change:
       git worktree add ../before OLD && python -m venv ../venv-old && \
           ../venv-old/bin/pip install ../before
       ../venv-old/bin/python benchmarks/bench_admm.py --phases --rows 60000 --save old.json
       python benchmarks/bench_admm.py --phases --rows 60000 --before old.json
Then the issue's targets, each marked ok / MISSED.

--memory-vs-n N...: peak RSS of training (KernelSVC, hinge, s = --features-n in --blocks-n
column blocks, --iters iterations, each run in a fresh process reading only its N rows)
against N, three ways:
every Z block cached (memory_budget=None), none cached (memory_budget=0: blocks regenerated
each iteration), and explicit Z (Z = z(X) materialized, float64, then trained by the linear
kernel with memory_budget=0); --plot FILE draws it.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _memory import peak_rss, status_bytes



def load(rows):
    from skylite.datasets import load_mnist
    X, y = load_mnist(rows)[:2]
    return X.astype(np.float64), y


def run(X, y, s, C, threads, budget, iters, precision="float64"):
    from skylite import KernelSVC
    model = KernelSVC(method="rff", sigma=6.0, n_features=s, n_blocks=C, alpha=1e-4,
                      max_iter=iters, tol=1e-12, n_threads=threads, memory_budget=budget,
                      precision=precision, early_stopping=False)
    model.fit(X, y)
    per_iter = float(np.mean([r["seconds"] for r in model.history_[1:]]))
    return model, per_iter


def bandwidth(X, y, s, iters):
    """Seconds per cached float32 iteration / seconds of Z.T @ B + Z @ W in float32 numpy."""
    from skylite.sketch import GaussianRFF
    C = max(1, s // 1024)
    model, per_iter = run(X, y, s, C, None, None, iters, precision="float32")
    assert model.history_ and model.phase_seconds_
    del model
    Z = GaussianRFF(s, sigma=6.0, n_blocks=C, random_state=0).fit(X).transform(
        X.astype(np.float32))
    rng = np.random.default_rng(0)
    B = rng.standard_normal((len(X), 10)).astype(np.float32)
    W = rng.standard_normal((s, 10)).astype(np.float32)
    products = min(_timed(lambda: (Z.T @ B, Z @ W)) for _ in range(3))
    return per_iter, products


def phases(args):
    """Seconds per phase of a cached float32 fit (setup in the first iteration), as JSON."""
    X, y = load(args.rows)
    s = args.features
    model, per_iter = run(X, y, s, max(1, s // 1024), None, None, args.iters,
                          precision="float32")
    return {"label": args.label, "rows": args.rows, "features": s, "iterations": args.iters,
            "first_iteration": model.history_[0]["seconds"], "per_iteration": per_iter,
            "phases": {k: float(v) for k, v in model.phase_seconds_.items()}}


def print_phases(after, before=None):
    """The phase table: seconds over the whole fit, per phase, then per cached iteration."""
    runs = [r for r in (before, after) if r is not None]
    print(f"Phase breakdown: {after['rows']} MNIST rows, hinge, Gaussian RFF s="
          f"{after['features']} in blocks of 1024, float32, every block cached, "
          f"{after['iterations']} iterations; a phase's seconds are its threads' seconds "
          f"divided by the number of threads")
    print(f"{'phase':<22}" + "".join(f"{r['label']:>14}" for r in runs))
    names = [k for r in runs for k in r["phases"]]
    for name in dict.fromkeys(names):
        print(f"{name:<22}" + "".join(
            f"{r['phases'][name]:14.2f}" if name in r["phases"] else f"{'-':>14}"
            for r in runs))
    for key, title in (("first_iteration", "first iteration (wall)"),
                       ("per_iteration", "cached iteration (wall)")):
        print(f"{title:<22}" + "".join(f"{r[key]:14.3f}" for r in runs))


def peak_rss_child(rows, s, C, iters):
    """Runs in a fresh process: train, then report peak RSS and memory_estimate_.

    Peak RSS is VmHWM (benchmarks/_memory.py), this process's own high-water mark."""
    X, y = load(rows)
    model, per_iter = run(X, y, s, C, None, 0, iters)
    print(json.dumps({"peak_rss": peak_rss(),
                      "estimate": int(model.memory_estimate_), "per_iter": per_iter,
                      "data": X.nbytes}))


def memory_child(mode, rows, s, blocks, iters):
    """Runs in a fresh process: train one way (`mode`) on the first `rows` rows, then report
    peak RSS, the RSS before the data was read, and memory_estimate_."""
    from _data import mnist_file
    from bench_mpi import read_npz_rows

    from skylite import KernelSVC
    from skylite.sketch import GaussianRFF
    baseline = status_bytes("VmRSS:")
    X = read_npz_rows(mnist_file(), "X_train", 0, rows).astype(np.float64)
    y = read_npz_rows(mnist_file(), "y_train", 0, rows)
    common = dict(alpha=1e-4, max_iter=iters, tol=1e-12, n_blocks=blocks, early_stopping=False)
    if mode == "explicit Z":
        fmap = GaussianRFF(s, sigma=6.0, n_blocks=blocks, random_state=0).fit(X)
        Z = fmap.transform(X)
        model = KernelSVC("linear", memory_budget=0, **common).fit(Z, y)
    else:
        budget = None if mode == "cached" else 0
        model = KernelSVC(method="rff", sigma=6.0, n_features=s, memory_budget=budget,
                          **common).fit(X, y)
    print(json.dumps({"peak_rss": peak_rss(), "baseline": baseline,
                      "estimate": int(model.memory_estimate_), "data": X.nbytes}))


MEMORY_MODES = ("cached", "budget 0", "explicit Z")


def memory_vs_n(args):
    """Peak RSS against n for the three ways of holding Z (one fresh process per run)."""
    s, blocks = args.features_n, args.blocks_n
    print(f"Peak RSS of training against n: MNIST, hinge, s={s} in {blocks} blocks, "
          f"{args.iters} iterations")
    print(f"{'n':>7} {'mode':<11} {'peak RSS MiB':>13} {'before data MiB':>16} "
          f"{'memory_estimate_ MiB':>21} {'X MiB':>7} {'Z would be MiB':>15}")
    runs = {}
    for n in args.memory_vs_n:
        for mode in MEMORY_MODES:
            child = subprocess.run([sys.executable, __file__, "--memory-child", mode, str(n),
                                    str(s), str(blocks), str(args.iters)],
                                   capture_output=True, text=True)
            if child.returncode != 0:
                raise RuntimeError(f"{mode} at n={n} failed:\n{child.stderr}")
            r = runs[(n, mode)] = json.loads(child.stdout.strip().splitlines()[-1])
            print(f"{n:>7} {mode:<11} {r['peak_rss'] / 2**20:13.0f} "
                  f"{r['baseline'] / 2**20:16.0f} {r['estimate'] / 2**20:21.0f} "
                  f"{r['data'] / 2**20:7.0f} {n * s * 8 / 2**20:15.0f}", flush=True)
    if args.plot:
        plot_memory(args, runs)


def plot_memory(args, runs):
    """Draw peak RSS against n into args.plot, and store what is drawn for replot.py."""
    data = {"features": args.features_n, "blocks": args.blocks_n, "iters": args.iters,
            "n": list(args.memory_vs_n),
            "peak_rss": {mode: [runs[(n, mode)]["peak_rss"] for n in args.memory_vs_n]
                         for mode in MEMORY_MODES},
            "data": [runs[(n, MEMORY_MODES[0])]["data"] for n in args.memory_vs_n]}
    draw_memory(data, args.plot)


def draw_memory(data, path, made_by=None):
    """Peak RSS against n, one line per mode, beside the sizes of X and of an explicit Z.
    `data`: {"features", "blocks", "iters", "n": [...], "peak_rss": {mode: [bytes per n]},
    "data": [bytes of X per n]}."""
    from _plots import figure, save
    sizes = np.array(data["n"])
    fig, panel = figure(1, 1, figsize=(9, 5.2))
    for mode, peaks in data["peak_rss"].items():
        panel.plot(sizes, np.array(peaks) / 2**30, "o-", label=f"peak RSS, {mode}")
    panel.plot(sizes, sizes * data["features"] * 8 / 2**30, "k--", linewidth=1,
               label=f"Z itself (n x {data['features']} float64)")
    panel.plot(sizes, np.array(data["data"]) / 2**30, "k:", linewidth=1,
               label="X itself (n x 784 float64)")
    panel.set_xlabel("training rows n")
    panel.set_ylabel("GiB")
    panel.grid(True, alpha=0.3)
    panel.legend()
    fig.suptitle(f"Training memory against n: MNIST, hinge, s={data['features']} in "
                 f"{data['blocks']} blocks, {data['iters']} iterations")
    save(fig, path, "memory_vs_n", data, made_by)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--iters", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the paired iteration / GEMM ratio")
    parser.add_argument("--child", nargs=4, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--bandwidth", action="store_true",
                        help="only the cached float32 iteration vs the numpy products")
    parser.add_argument("--features", type=int, default=16384)
    parser.add_argument("--memory-vs-n", type=int, nargs="+", metavar="N",
                        help="only peak RSS against these row counts")
    parser.add_argument("--features-n", type=int, default=4096, help="s for --memory-vs-n")
    parser.add_argument("--blocks-n", type=int, default=8,
                        help="column blocks for --memory-vs-n (more blocks than threads, so "
                             "that a cache of every block differs from the per-thread buffers "
                             "of the uncached sweep)")
    parser.add_argument("--plot", metavar="FILE", help="with --memory-vs-n: draw it to FILE")
    parser.add_argument("--memory-child", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--phases", action="store_true",
                        help="only the phase breakdown of a cached float32 fit")
    parser.add_argument("--label", default="this run", help="--phases: the run's column title")
    parser.add_argument("--save", metavar="FILE", help="--phases: write the run as JSON")
    parser.add_argument("--before", metavar="FILE", help="--phases: a saved run to print beside")
    args = parser.parse_args()
    if args.child:
        peak_rss_child(*args.child)
        return
    if args.memory_child:
        mode, *sizes = args.memory_child
        memory_child(mode, *map(int, sizes))
        return
    if args.memory_vs_n:
        memory_vs_n(args)
        return
    if args.phases:
        after = phases(args)
        if args.save:
            Path(args.save).write_text(json.dumps(after))
        before = json.loads(Path(args.before).read_text()) if args.before else None
        print_phases(after, before)
        return
    if args.bandwidth:
        X, y = load(args.rows)
        per_iter, products = bandwidth(X, y, args.features, args.iters)
        ratio = per_iter / products
        print(f"{args.rows} MNIST rows, s={args.features}, float32, every block cached")
        print(f"{'cached iteration (s)':<38} {per_iter:8.3f}")
        print(f"{'numpy Z.T @ B + Z @ W, float32 (s)':<38} {products:8.3f}")
        print(f"{'ratio (target <= 1.3)':<38} {ratio:8.2f}  {'ok' if ratio <= 1.3 else 'MISSED'}")
        return
    X, y = load(args.rows)
    s, C = 8192, 16
    W = np.random.default_rng(0).standard_normal((X.shape[1], s))
    gemm = min(_timed(lambda: X @ W) for _ in range(3))

    print(f"\nBlockADMM on {args.rows} MNIST rows, hinge loss, Gaussian RFF s={s}, C={C}")
    print(f"bare GEMM {args.rows} x 784 x {s}: {gemm:.3f} s")
    print(f"{'configuration':<40} {'s/iter':>8} {'/ GEMM':>7}")
    times = {}
    for threads in (1, 2):
        for budget, label in ((0, "no cache"), (None, "cache (budget auto)")):
            model, per_iter = run(X, y, s, C, threads, budget, args.iters)
            times[(threads, label)] = (per_iter, model)
            print(f"{f'{threads} thread(s), {label}':<40} {per_iter:8.3f} {per_iter / gemm:7.2f}")
    model32, per_iter32 = run(X, y, s, C, 2, 0, args.iters, precision="float32")
    print(f"{'2 threads, no cache, float32 transform':<40} {per_iter32:8.3f} "
          f"{per_iter32 / gemm:7.2f}")

    print("\nPhase breakdown, 2 threads (seconds per iteration; the first iteration's factor "
          "time amortized)")
    print(f"{'phase':<12} {'no cache':>10} {'all cached':>11}")
    for phase in ("transform", "factor", "products", "solve", "prox", "reduce"):
        cells = [times[(2, label)][1].phase_seconds_[phase] / args.iters
                 for label in ("no cache", "cache (budget auto)")]
        print(f"{phase:<12} {cells[0]:10.3f} {cells[1]:11.3f}")

    big_s, big_C = 32768, 64
    child = subprocess.run([sys.executable, __file__, "--child", str(args.rows), str(big_s),
                            str(big_C), "3"], capture_output=True, text=True, check=True)
    rss = json.loads(child.stdout.strip().splitlines()[-1])
    explicit = args.rows * big_s * 8
    print(f"\nMemory at s={big_s}, C={big_C}, memory_budget=0, {args.rows} rows")
    print(f"explicit Z would take   {explicit / 2**30:6.2f} GiB")
    print(f"memory_estimate_        {rss['estimate'] / 2**30:6.2f} GiB")
    print(f"measured peak RSS       {rss['peak_rss'] / 2**30:6.2f} GiB "
          f"(data X itself {rss['data'] / 2**30:.2f} GiB; {rss['per_iter']:.1f} s/iter)")

    one, two = times[(1, "no cache")][0], times[(2, "no cache")][0]
    ratios = paired_gemm_ratios(X, y, s, C, W, args.iters, args.rounds)
    print(f"\nUncached iteration / bare GEMM, 2 threads, paired in {args.rounds} rounds (a GEMM, "
          f"then a fit; its median later iteration over that GEMM): "
          + ", ".join(f"{r:.3f}" for r in ratios) + f"; median {np.median(ratios):.3f}")
    checks = [("iteration, no cache, <= 1.6x GEMM (paired)", float(np.median(ratios)), 1.6),
              ("2 threads <= 0.65x 1 thread", two / one, 0.65),
              ("peak RSS at s=32768 < 1.5 GB", rss["peak_rss"] / 1e9, 1.5)]
    print("\nTargets")
    for name, value, limit in checks:
        print(f"{name:<42} {value:8.3f}  {'ok' if value <= limit else 'MISSED'}")


def paired_gemm_ratios(X, y, s, C, W, iters, rounds):
    """The uncached two-thread iteration over the bare GEMM of its transform, measured in
    rounds: each round times the GEMM (numpy's, on both cores, into an output written
    before, so that no page of it is first touched inside the timing) and then a fit, and
    gives the fit's median later iteration over that GEMM, so that both halves of a ratio
    see the same state of a shared machine."""
    out = np.ones((X.shape[0], W.shape[1]))
    ratios = []
    for _ in range(rounds):
        gemm = _timed(lambda: np.matmul(X, W, out=out))
        model, _ = run(X, y, s, C, 2, 0, iters)
        ratios.append(float(np.median([r["seconds"] for r in model.history_[1:]])) / gemm)
    return ratios


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
