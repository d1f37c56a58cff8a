"""Injected faults against skylite's model files: how many were tried, how many lost or
corrupted a model.

    python benchmarks/fault_report.py [--kills 40] [--race-seconds 10] [--crafted 2000]
                                      [--edits 2000]

1. bit flips: every byte of a saved model file (pendigits, s = 32), one random bit each; a
   load must refuse the file (ValueError naming it), never return a model.
2. kill -9 while re-saving: a process saves two models (s = 4096, 330 KB files) over one file
   in turn and is killed at a random moment, --kills times; the file must then load as one of
   the two models.
3. a reader racing a writer: loads in a loop for --race-seconds while another process
   re-saves; every load must return one of the two models.
5. crafted headers, each written with a valid checksum: --crafted random JSON values
   (nesting, huge and non-finite numbers, wrong types) and headers nested 33 to 10^6 levels
   deep; a load must raise ValueError naming the file, never another exception.
6. edited headers with the checksum recomputed: one field of a saved model's header (each
   kind of model file: random features, Nystroem, exact kernel over dense and sparse rows)
   replaced by a wrong type, a huge, non-finite or nearby number (integers +-1 or 2, floats
   times 0.5 to 2), --edits in all; a load must raise ValueError naming the file or give
   the model's outputs unchanged.
7. saves to paths that cannot be written (empty, folders, a missing folder, below a
   file): each must raise an error naming the path given, not the temporary file, and
   leave no file behind.
8. kill -9 while a save is writing, then a save to the same file: no temporary file may
   remain.

4. the cost of refusing malformed sparse input: the structure check of a CSR matrix
   (indptr monotone and consistent, every index in range; O(nnz)) against one transform of
   the same rows.

Needs only the package (pendigits ships with it).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import skylite
from skylite import KernelRidge, KernelSVC
from skylite.datasets import load_pendigits

FAULTS = Path(__file__).resolve().parents[1] / "tests" / "faults"
RESAVE = FAULTS / "resave_forever.py"
HANG = FAULTS / "hang_while_saving.py"
sys.path.insert(0, str(FAULTS))
from crafted_files import (nested, node_paths, read_model_file, replaced,  # noqa: E402
                           write_model_file)


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


def _refused(path):
    """True if loading `path` raises ValueError naming it; None if it loads (any other
    exception propagates: it is a fault of the loader)."""
    try:
        skylite.load(path)
    except ValueError as exc:
        return str(path) in str(exc)
    return None


def random_json(rng, depth=0):
    kind = rng.integers(9 if depth < 6 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return bool(rng.integers(2))
    if kind == 2:
        return int(rng.choice([0, -1, 1, 2**31, 2**63, -2**63 - 1, 2**64 + 5, 10**19]))
    if kind == 3:
        return float(rng.choice([0.5, -1e308, 1e308, np.nan, np.inf]))
    if kind == 4:
        return "".join(rng.choice(list("ab{[\"\\"), rng.integers(6)))
    if kind in (5, 6):
        return [random_json(rng, depth + 1) for _ in range(rng.integers(4))]
    keys = ["estimator", "params", "coef_shape", "feature_map", "classes", "dual", "x"]
    return {str(rng.choice(keys)): random_json(rng, depth + 1) for _ in range(rng.integers(4))}


def crafted_headers(folder, count, rng):
    path = folder / "crafted.sky"
    refused = 0
    for k in range(count):
        if k % 10 == 0:
            blob = nested(int(rng.integers(33, 10**6)), "[{"[k % 20 // 10])
        else:
            blob = json.dumps(random_json(rng)).encode()
        write_model_file(path, blob, rng.bytes(int(rng.integers(64))))
        try:
            refused += bool(_refused(path))
        except Exception:                 # noqa: BLE001 - counted as a fault
            pass
    return count, refused


def _outputs(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") \
        else model.predict(X)


def edited_headers(folder, count, rng):
    X, y = load_pendigits()[:2]
    X, y = X[:300] / 100.0, y[:300]
    fits = [KernelSVC(sigma=0.6, n_features=64, n_blocks=2, max_iter=20).fit(X, y),
            KernelRidge(method="nystroem", n_features=24, n_blocks=2, sigma=1.0).fit(X, y),
            KernelRidge(sigma=1.0, solver="exact").fit(X[:40], y[:40]),
            KernelRidge(sigma=1.0, solver="exact").fit(sp.csr_matrix(X[:40]), y[:40])]
    files = []
    for k, model in enumerate(fits):
        model.save(folder / f"fit{k}.sky")
        header, body = read_model_file(folder / f"fit{k}.sky")
        files.append((header, body, _outputs(model, X[:50]),
                      [p for p in node_paths(header) if p]))
    path = folder / "edited.sky"
    safe = 0
    for k in range(count):
        header, body, expected, paths = files[k % len(files)]
        where = paths[rng.integers(len(paths))]
        node = header
        for key in where:
            node = node[key]
        if isinstance(node, int) and not isinstance(node, bool) and rng.random() < 0.5:
            value = node + int(rng.choice([-2, -1, 1, 2]))
        elif isinstance(node, float) and rng.random() < 0.5:     # a nearby parameter
            value = node * float(rng.choice([0.5, 0.9, 1.1, 2.0]))
        else:
            value = random_json(rng, depth=5)
        write_model_file(path, replaced(header, where, value), body)
        try:
            refused = _refused(path)
            if refused is None:           # loaded: safe if it predicts as saved
                got = _outputs(skylite.load(path), X[:50])
                safe += bool(np.allclose(got, expected, rtol=1e-4,
                                         atol=1e-4 * np.abs(expected).max()))
            else:
                safe += refused
        except Exception:                 # noqa: BLE001 - counted as a fault
            pass
    return count, safe


def bad_paths(small, folder):
    model = skylite.load(small)
    work = folder / "work"
    (work / "sub").mkdir(parents=True)
    (work / "plain").write_text("x")
    before = os.getcwd()
    left_before = set(folder.glob(".*.tmp"))       # e.g. of the kills above
    os.chdir(work)
    try:
        cases = ["", "sub/", "sub", ".", str(work), "missing/m.sky", "plain/m.sky"]
        safe = 0
        for path in cases:
            try:
                model.save(path)
            except (OSError, ValueError) as exc:
                named = path in str(exc) and ".tmp" not in str(exc)
                safe += named if path else "empty path" in str(exc)
        untouched = (sorted(os.listdir(work)) == ["plain", "sub"] and not os.listdir("sub")
                     and set(folder.glob(".*.tmp")) == left_before)  # "" would write beside work
    finally:
        os.chdir(before)
    return len(cases), safe if untouched else 0


def kills_then_save(paths, folder, count):
    dest = folder / "killed.sky"
    model = skylite.load(paths[0])
    clean = 0
    for _ in range(count):
        proc = subprocess.Popen([sys.executable, str(HANG), str(paths[0]), str(dest)],
                                stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()               # its temporary file is written
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        left = list(folder.glob(".killed.sky.*.tmp"))
        model.save(dest)
        clean += bool(left) and not list(folder.glob(".killed.sky.*.tmp"))
    return count, clean


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
    parser.add_argument("--crafted", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=2000)
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
                 "load returned the old or the new model"),
                ("crafted headers (random JSON, deep nesting), valid checksum",
                 *crafted_headers(folder, args.crafted, rng), "ValueError naming the file"),
                ("one header field edited, checksum recomputed",
                 *edited_headers(folder, args.edits, rng),
                 "ValueError naming the file, or the same outputs"),
                ("saves to paths that cannot be written", *bad_paths(small, folder),
                 "error names the path given; nothing left behind"),
                ("kill -9 while a save writes, then a save",
                 *kills_then_save(paths, folder, max(args.kills // 4, 1)),
                 "the next save removed the temporary file")]
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
