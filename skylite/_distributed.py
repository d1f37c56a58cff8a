"""Communicator plumbing for training over MPI ranks (docs/engine.md, docs/mpi.md).

Every rank holds its own rows; the engine and the estimators talk to the other ranks only
through `Distributed`, a thin wrapper around an mpi4py communicator.  `Distributed(None)`
wraps `SerialComm`, a null communicator of size 1 with the same few buffer methods, so the
engine has one code path: with one process every collective is a copy, and a communicator of
size 1 (e.g. `MPI.COMM_SELF`) gives bitwise the same result as `comm=None`.  The estimators'
statistics (skylite._global_stats) go through it the same way.

Messages per ADMM iteration (s features, m outputs, P ranks; see docs/mpi.md):

    Reduce   s x m float64     sum of the ranks' local W' to the root      (consensus)
    Bcast    s x m float64     Wbar from the root                          (consensus)
    Allreduce  k float64       partial sums: residual norms, objective, validation
                               score, the non-finite / failure flag  (k < 16)

Faults.  A rank that fails must never leave the others waiting in a collective.  Local work
runs under a `Guard` (or `agree`), which turns an exception into a flag; the flag travels in the
next collective (a dedicated tiny `allgather` during setup, the per-iteration Allreduce
during the run), and then *every* rank raises `collective_error`: the same exception type
with a message naming the failing rank(s), e.g. ``ValueError("rank 1 failed: ValueError: X
contains NaN or infinity")``.  With one process the original exception propagates unchanged.
"""
import time

import numpy as np

# Exception types re-raised as such on every rank (they take one message argument);
# anything else becomes RuntimeError.
_REBUILDABLE = (ValueError, TypeError, MemoryError, OSError, FloatingPointError,
                RuntimeError, KeyError, IndexError, ArithmeticError)


class SerialComm:
    """A communicator of one process: the mpi4py methods skylite uses, as copies."""

    rank = 0
    size = 1

    def Get_rank(self):
        return 0

    def Get_size(self):
        return 1

    def Reduce(self, sendbuf, recvbuf, op=None, root=0):
        recvbuf[...] = sendbuf

    def Allreduce(self, sendbuf, recvbuf, op=None):
        recvbuf[...] = sendbuf

    def Bcast(self, buf, root=0):
        pass

    def allgather(self, obj):
        return [obj]


class CollectiveError(RuntimeError):
    """Raised on every rank when a rank failed with an exception that cannot be rebuilt."""


class Distributed:
    """The collectives skylite needs, on an mpi4py communicator or on `SerialComm`.

    `seconds` accumulates the wall time spent inside communication calls (the engine
    records its per-iteration increments as `comm_seconds`).
    """

    def __init__(self, comm=None):
        if comm is None:
            comm = SerialComm()
        elif not all(hasattr(comm, name) for name in ("Get_rank", "Get_size", "Reduce",
                                                       "Bcast", "Allreduce", "allgather")):
            raise ValueError(f"comm must be an mpi4py communicator (e.g. MPI.COMM_WORLD) or "
                             f"None, got {comm!r}")
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.serial = self.size == 1
        self.seconds = 0.0

    @property
    def is_root(self):
        return self.rank == 0

    def _sum_op(self):
        if isinstance(self.comm, SerialComm):
            return None
        from mpi4py import MPI      # an optional dependency, loaded only under MPI
        return MPI.SUM

    # ---- buffer collectives (float64 numpy arrays) ----

    def allreduce_sum(self, values):
        """Elementwise sum over ranks of a small float64 vector, on every rank."""
        send = np.ascontiguousarray(values, dtype=np.float64)
        recv = np.empty_like(send)
        start = time.perf_counter()
        self.comm.Allreduce(send, recv, op=self._sum_op())
        self.seconds += time.perf_counter() - start
        return recv

    def reduce_sum(self, local, out):
        """out (root only) <- sum over ranks of `local` (C-contiguous float64 arrays)."""
        start = time.perf_counter()
        self.comm.Reduce(local, out if self.is_root else None, op=self._sum_op(), root=0)
        self.seconds += time.perf_counter() - start

    def broadcast(self, buf):
        """The root's `buf` into every rank's `buf`, in place (bitwise copies)."""
        start = time.perf_counter()
        self.comm.Bcast(buf, root=0)
        self.seconds += time.perf_counter() - start

    def sum_to_all(self, local):
        """Sum over ranks, identical bitwise on every rank: Reduce to the root, then Bcast."""
        local = np.ascontiguousarray(local, dtype=np.float64)
        total = np.empty_like(local)
        self.reduce_sum(local, total)
        self.broadcast(total)
        return total

    def ranks_on_node(self):
        """How many ranks of this communicator share this node's memory (collective)."""
        if self.serial:
            return 1
        from mpi4py import MPI      # an optional dependency, loaded only under MPI
        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        try:
            return node.Get_size()
        finally:
            node.Free()

    # ---- object collectives (pickled; small, setup only) ----

    def allgather(self, obj):
        start = time.perf_counter()
        result = self.comm.allgather(obj)
        self.seconds += time.perf_counter() - start
        return result

    # ---- faults ----

    def agree(self, fn, *args, **kwargs):
        """Run fn(*args, **kwargs) on every rank; if it raised on any rank, raise on all.

        One small allgather (flags and messages) when size > 1; with one process the
        exception propagates unchanged."""
        if self.serial:
            return fn(*args, **kwargs)
        try:
            result, error = fn(*args, **kwargs), None
        except Exception as exc:     # noqa: BLE001 - re-raised on every rank below
            result, error = None, exc
        self.check(error)
        return result

    def same_everywhere(self, what, value):
        """Collective: raise ValueError on every rank if the ranks hold different `value`s
        (e.g. their rows' number of columns), naming `what` and each rank's value."""
        if self.serial:
            return
        values = self.allgather(value)
        if any(v != values[0] for v in values):
            raise ValueError(f"the ranks have different {what}: " + ", ".join(
                f"rank {r} {v!r}" for r, v in enumerate(values)) + "; every rank must pass "
                "the same")

    def gather_checked(self, fn, *args):
        """Every rank's fn(*args), in rank order, with fn run under a guard: the collective
        always takes place, and if fn raised on any rank every rank raises (one allgather;
        a second, of the failures' descriptions, on the failure path only).  With one
        process: [fn(*args)], an exception propagating unchanged."""
        if self.serial:
            return [fn(*args)]
        guard = Guard()
        value = None
        with guard:
            value = fn(*args)
        everyone = self.allgather((guard.error is not None, value))
        if any(failed for failed, _ in everyone):
            self.raise_failures(guard.error)
        return [v for _, v in everyone]

    def check(self, error):
        """Collective: every rank passes its local exception (or None); raises on every
        rank if any rank failed."""
        if self.serial:
            if error is not None:
                raise error
            return
        failures = [f for f in self.allgather(describe(error, self.rank)) if f is not None]
        if failures:
            raise collective_error(failures, error)

    def raise_failures(self, error):
        """After a collective showed that some rank failed: exchange the descriptions (one
        allgather, on the failure path only) and raise on every rank."""
        if self.serial:
            raise error if error is not None else CollectiveError("rank 0 failed")
        failures = [f for f in self.allgather(describe(error, self.rank)) if f is not None]
        if not failures:
            failures = [{"type": "CollectiveError", "message": "a rank failed", "class": None,
                         "rank": "?"}]
        raise collective_error(failures, error)

    def label_union(self, y):
        """The sorted union of every rank's labels (a rank may lack a class)."""
        local = np.unique(np.asarray(y))
        if self.serial:
            return local
        return np.unique(np.concatenate([np.asarray(u) for u in self.allgather(local)]))


class Guard:
    """Context manager: an exception inside becomes `self.error` (re-raised collectively
    later by the caller through the next collective's flag)."""

    def __init__(self):
        self.error = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if isinstance(value, Exception):
            if self.error is None:          # the first failure is the one reported
                self.error = value
            return True
        return False


def different_settings_error(everyone, show=str, hints=None):
    """The ValueError every rank raises when the ranks' settings differ, or None.

    everyone: each rank's settings, a dict by name (the same names on every rank, as an
    allgather returns them); the error names the settings that differ and, for the first
    three, each rank's value (`show(value)`), then the `hints` (by name) of those that
    differ."""
    differ = sorted(k for k, v in everyone[0].items()
                    if any(other.get(k) != v for other in everyone))
    if not differ:
        return None
    values = "; ".join(f"{k}: " + ", ".join(f"rank {r} {show(other.get(k))}"
                                             for r, other in enumerate(everyone))
                       for k in differ[:3])
    notes = "".join(f" ({hints[k]})" for k in differ if k in (hints or {}))
    return ValueError(f"the ranks were given different {', '.join(differ)} ({values}); "
                      f"every rank must pass the same settings (control flow is "
                      f"collective){notes}")


def describe(error, rank=None):
    """(exception type name, message, exception class) of a local error, or None."""
    if error is None:
        return None
    return {"type": type(error).__name__, "message": str(error),
            "class": type(error) if isinstance(error, _REBUILDABLE) else None,
            "rank": rank}


def collective_error(failures, local_error=None):
    """The exception every rank raises: the failing rank's type (when it can be rebuilt
    from a message) with a message naming the failing rank(s)."""
    first = failures[0]
    text = "; ".join(f"rank {f['rank']} failed: {f['type']}: {f['message']}"
                     for f in failures)
    cls = first["class"] or CollectiveError
    try:
        exc = cls(text)
    except Exception:           # noqa: BLE001 - exotic constructor
        exc = CollectiveError(text)
    if local_error is not None:
        exc.__cause__ = local_error
    exc.collective = True        # raised alike on every rank (the CLI prints it once)
    return exc
