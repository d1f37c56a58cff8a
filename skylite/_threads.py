"""Thread counts and the BLAS thread limit around skylite's own parallel regions.

skylite parallelizes with OpenMP and calls a single-threaded BLAS inside each thread.
A multi-threaded BLAS called from several OpenMP threads oversubscribes the cores (measured
here: 2x slower GEMMs, 100x slower factorizations under load), so every parallel native
call runs inside `blas_single_threaded()`.
"""
import contextlib
import os
import warnings

from ._validation import check_positive

_controller = None


def default_threads():
    """The number of cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class ThreadCountWarning(RuntimeWarning):
    """n_threads asked for more threads than this process has cores: capped."""


def resolve_threads(n_threads):
    """n_threads as given, or every available core for None; at most the available cores
    (more only wait for each other: capped with a ThreadCountWarning).  Results do not
    depend on the thread count."""
    cores = default_threads()
    if n_threads is None:
        return cores
    n_threads = check_positive(n_threads, "n_threads", integer=True)
    if n_threads > cores:
        warnings.warn(f"n_threads={n_threads} is more than the {cores} cores this process "
                      f"may use: using {cores}", ThreadCountWarning, stacklevel=3)
        return cores
    return n_threads


@contextlib.contextmanager
def blas_single_threaded():
    """Limit the BLAS libraries loaded in this process to one thread for the block."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController
        _controller = ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield
