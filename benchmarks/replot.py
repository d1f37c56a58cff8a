"""Redraw the documentation's benchmark figures from stored results, without measuring.

    python benchmarks/replot.py                      # every figure of benchmarks/results/figures
    python benchmarks/replot.py docs/images/scale.png ...        # only these

A benchmark script run with --plot FILE stores what it drew in
benchmarks/results/figures/<FILE's name>.json (benchmarks/_plots.py): the command that
measured it, the date, the kind of figure and the numbers.  This script draws each stored
figure again with the drawing code of today (after a change of style, say), into the file
it was first written to.  The scale figures (bench_scale.py) are drawn from the results
files their record names (benchmarks/results/scale*.jsonl), as `bench_scale.py report
--plot` does.
"""
import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _plots import FIGURE_DATA  # noqa: E402


def draw_scale(data, path, made_by):
    import bench_scale
    results = Path(data["results"])
    if not results.is_absolute():
        results = HERE.parent / results
    bench_scale.plot(bench_scale.latest(results), path, results)


def draw_peers(data, path, made_by):
    import bench_vs_peers
    bench_vs_peers.draw(data, path, made_by)


def draw_memory(data, path, made_by):
    import bench_admm
    bench_admm.draw_memory(data, path, made_by)


def draw_mpi(data, path, made_by):
    import bench_mpi
    bench_mpi.draw(data, path, made_by)


def draw_convergence(data, path, made_by):
    import bench_iterations
    bench_iterations.draw(data, path, made_by)


KINDS = {"scale": draw_scale, "peers": draw_peers, "memory_vs_n": draw_memory,
         "mpi_scaling": draw_mpi, "convergence": draw_convergence}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("figures", nargs="*", metavar="FIGURE",
                        help="figures to redraw (default: every stored one)")
    args = parser.parse_args()
    stored = sorted(FIGURE_DATA.glob("*.json"))
    if args.figures:
        wanted = {Path(f).stem for f in args.figures}
        missing = wanted - {s.stem for s in stored}
        if missing:
            sys.exit(f"no stored data for {', '.join(sorted(missing))} in {FIGURE_DATA}")
        stored = [s for s in stored if s.stem in wanted]
    for record_file in stored:
        record = json.loads(record_file.read_text())
        path = Path(record["figure"])
        if not path.is_absolute():
            path = HERE.parent / path
        KINDS[record["kind"]](record["data"], path, record["command"])


if __name__ == "__main__":
    main()
