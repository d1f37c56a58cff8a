"""Checkpoints of a BlockADMM run: the full iteration state, written atomically.

One file per rank, so no rank ever reads or sends another rank's rows:

    serial / one rank:   <path>
    P > 1 ranks:         <path>.rank<r>-of-<P>

Each file is a numpy .npz archive (no pickle) holding the named float64 arrays of the run's
state (`skylite.admm.iteration.State.arrays()`: W, mu, Wbar and every local row block's
O, Obar, nu, Dbar, W', mu', U, and the row sweep's G = Z^T B with its validity flag; plus
Anderson acceleration's memory when it is on, with each stored image's G) and
`meta`, a JSON string: format, the iteration count, rho, the history so far, and what a
resume must match: n, d, s, m, R, P, rank, this rank's row range and row blocks, the
feature map (type, parameters, seed), alpha, loss, regularizer, precision, relaxation,
acceleration and a checksum of this rank's X and Y.

Atomicity: the archive is written to a temporary file of a unique name beside `<file>`,
fsynced and moved over `<file>` with os.replace (skylite._files.atomic_write), so a run
killed while writing leaves the previous checkpoint intact.  The graph-projection
factors are not stored: they are rebuilt (deterministically) on the first sweep after a
resume.  A resumed run repeats the uninterrupted run's arithmetic exactly (same state, same
rho, same accelerator memory, same iteration counter for rho adaptation), so it reaches the
same model bitwise.
"""
import json
import os
import zipfile

import numpy as np

from .._files import atomic_write

FORMAT = 4        # 4: Anderson's memory holds each image's carried G (Z^T B)
# metadata that may legitimately differ between the interrupted and the resumed run (beside
# what the method names as its progress, e.g. ADMM's rho)
_PROGRESS = ("iteration", "history")


def checkpoint_file(path, rank, size):
    """The file of rank `rank` among `size` ranks for checkpoint `path`."""
    path = os.fspath(path)
    return path if size == 1 else f"{path}.rank{rank}-of-{size}"


def data_checksum(X, Y):
    """Cheap fingerprint of a rank's rows: sums of X, X^2 (dense or CSR) and Y."""
    values = X.data if hasattr(X, "tocsr") else X
    values = np.asarray(values, dtype=np.float64)
    return [float(values.sum()), float(np.vdot(values, values)), float(Y.sum())]


def save_checkpoint(filename, meta, arrays):
    """Write one rank's state atomically: `arrays`, a dict of named arrays, and `meta`, a
    JSON-able dict."""
    arrays = {name: np.asarray(value) for name, value in arrays.items()}
    arrays["meta"] = np.array(json.dumps(dict(meta, format=FORMAT)))
    atomic_write(filename, lambda f: np.savez(f, **arrays))


def load_checkpoint(filename, expected, progress=()):
    """Read one rank's checkpoint; raise ValueError if its identifying metadata differs
    from `expected` (the current run's), apart from the iteration, the history and the
    entries named in `progress`.  Returns (meta, dict of named arrays)."""
    try:
        with np.load(filename, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            data = {name: z[name] for name in z.files if name != "meta"}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise ValueError(f"cannot read checkpoint {filename}: {exc}") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"checkpoint {filename} has format {meta.get('format')}, "
                         f"expected {FORMAT}")
    want = json.loads(json.dumps(expected))          # the same JSON normalization
    different = sorted(k for k in want if k not in _PROGRESS + tuple(progress)
                       and meta.get(k) != want[k])
    if different:
        details = ", ".join(f"{k}: checkpoint {meta.get(k)!r} vs run {want[k]!r}"
                            for k in different[:4])
        raise ValueError(f"checkpoint {filename} does not match this run ({details}); "
                         f"delete it or use another checkpoint path")
    return meta, data


def remove_checkpoint(filename):
    """Delete a checkpoint after a run finished normally (missing files are fine)."""
    try:
        os.remove(filename)
    except FileNotFoundError:
        pass
