"""Injected faults against skylite's model files: how many were tried, how many lost or
corrupted a model.

    python benchmarks/fault_report.py [--kills 40] [--race-seconds 10]

1. bit flips: every byte of a saved model file (pendigits, s = 32), one random bit each; a
   load must refuse the file (ValueError naming it), never return a model.
2. kill -9 while re-saving: a process saves two models (s = 4096, 330 KB files) over one file
   in turn and is killed at a random moment, --kills times; the file must then load as one of
   the two models.
3. a reader racing a writer: loads in a loop for --race-seconds while another process
   re-saves; every load must return one of the two models.

4. the cost of refusing malformed sparse input: the structure check of a CSR matrix
   (indptr monotone and consistent, every index in range; O(nnz)) against one transform of
   the same rows.

Needs only the package (pendigits ships with it).
"""
import argparse
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import skylite
from skylite import KernelSVC
from skylite.datasets import load_pendigits

RESAVE = Path(__file__).resolve().parents[1] / "tests" / "faults" / "resave_forever.py"


def models(folder):
    X, y = load_pendigits()[:2]
    X, y = X[:800] / 100.0, y[:800]
    paths = []
    for seed in (0, 1):
        paths.append(folder / f"model{seed}.sky")
        KernelSVC(sigma=0.6, n_features=4096, max_iter=3, random_state=seed).fit(X, y).save(
            paths[-1])
    small = folder / "small.sky"
    KernelSVC(sigma=0.6, n_features=32, max_iter=20).fit(X, y).save(small)
    return paths, small


def one_of(path, expected):
    loaded = skylite.load(path)
    return any(np.array_equal(loaded.coef_, m.coef_) for m in expected)


def bit_flips(small, folder, rng):
    raw = small.read_bytes()
    bad = folder / "flipped.sky"
    refused = 0
    for position in range(len(raw)):
        flipped = bytearray(raw)
        flipped[position] ^= 1 << int(rng.integers(8))
        bad.write_bytes(bytes(flipped))
        try:
            skylite.load(bad)
        except ValueError:
            refused += 1
    return len(raw), refused


def kills(paths, folder, expected, count, rng):
    dest = folder / "dest.sky"
    expected[0].save(dest)
    intact = 0
    for _ in range(count):
        proc = subprocess.Popen([sys.executable, str(RESAVE), *map(str, paths), str(dest)],
                                stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()
        time.sleep(rng.uniform(0.01, 0.5))
        proc.kill()
        proc.wait()
        try:
            intact += one_of(dest, expected)
        except ValueError:
            pass
    return count, intact


def race(paths, folder, expected, seconds):
    dest = folder / "race.sky"
    expected[0].save(dest)
    proc = subprocess.Popen([sys.executable, str(RESAVE), *map(str, paths), str(dest),
                             str(seconds + 5)], stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    loads = good = 0
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        loads += 1
        try:
            good += one_of(dest, expected)
        except (ValueError, OSError):
            pass
    proc.kill()
    proc.wait()
    return loads, good


def csr_check_cost():
    """(milliseconds of the CSR structure check, of a transform at s = 1024, nnz) on random
    sparse rows of Reuters' shape and density (7,770 x 8,315, 0.5%)."""
    import scipy.sparse as sp
    from skylite._validation import sparse_structure_checked
    from skylite.sketch import GaussianRFF
    X = sp.random(7770, 8315, density=0.005, format="csr", random_state=0)
    start = time.perf_counter()
    for _ in range(20):
        sparse_structure_checked(X)
    check = (time.perf_counter() - start) / 20
    fmap = GaussianRFF(1024, sigma=1.0, n_blocks=2).fit(X)
    start = time.perf_counter()
    fmap.transform(X)
    return 1e3 * check, 1e3 * (time.perf_counter() - start), X.nnz


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=40)
    parser.add_argument("--race-seconds", type=float, default=10.0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        paths, small = models(folder)
        expected = [skylite.load(p) for p in paths]
        rows = [("one bit flipped in each byte of a model file", *bit_flips(small, folder, rng),
                 "refused at load"),
                ("kill -9 while re-saving", *kills(paths, folder, expected, args.kills, rng),
                 "file is the old or the new model"),
                ("loads racing a writer", *race(paths, folder, expected, args.race_seconds),
                 "load returned the old or the new model")]
    print("| fault | tried | safe | safe means | lost or corrupted |")
    print("|---|---|---|---|---|")
    for fault, tried, safe, meaning in rows:
        print(f"| {fault} | {tried} | {safe} | {meaning} | {tried - safe} |")
    lost = sum(tried - safe for _, tried, safe, _ in rows)
    print(f"\n{sum(r[1] for r in rows)} injected faults, {lost} lost or corrupted a model")
    check, transform, nnz = csr_check_cost()
    print(f"\nCSR structure check of 7,770 x 8,315 rows ({nnz:,} nonzeros): {check:.2f} ms; "
          f"one transform of them at s = 1024: {transform:.0f} ms ({check / transform:.2%})")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
