"""Thread counts and the BLAS thread limit around skylite's own parallel regions.

skylite parallelizes with OpenMP and calls a single-threaded BLAS inside each thread.
A multi-threaded BLAS called from several OpenMP threads oversubscribes the cores (measured
here: 2x slower GEMMs, 100x slower factorizations under load), so every parallel native
call runs inside `blas_single_threaded()`.
"""
import contextlib
import numbers
import os
import warnings

from ._validation import check_positive

_controller = None


def default_threads():
    """The threads skylite uses when n_threads is None, as scikit-learn's OpenMP estimators
    do: the OpenMP thread limit in force (OMP_NUM_THREADS, a threadpoolctl
    `threadpool_limits(..., "openmp")`, joblib's inner limit in its workers), and never more
    than the usable cores (the CPU affinity and a cgroup CPU quota)."""
    limits = [usable_cores(), _openmp_limit()]
    return max(1, min(limit for limit in limits if limit))


def usable_cores():
    """The cores this process may use: its CPU affinity, and no more than a cgroup CPU quota
    (a container's --cpus) allows."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    quota = _cgroup_cpus()
    return min(cores, quota) if quota else cores


def _cgroup_cpus():
    """ceil(quota / period) of this process's cgroup (v2 cpu.max, or v1 cfs files), or None
    without a quota."""
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            return max(1, -(-int(quota) // int(period)))
        return None
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") as f:
            quota = int(f.read())
        with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us") as f:
            period = int(f.read())
        return max(1, -(-quota // period)) if quota > 0 and period > 0 else None
    except (OSError, ValueError):
        return None


def _openmp_limit():
    """The OpenMP runtime's thread limit (omp_get_max_threads of the loaded libgomp, which
    OMP_NUM_THREADS and threadpoolctl's limits set), or None if none is loaded."""
    controllers = _threadpool_controller().select(user_api="openmp").lib_controllers
    if not controllers:
        value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0]
        return int(value) if value.isdigit() and int(value) > 0 else None
    return min(c.num_threads for c in controllers)


def _threadpool_controller():
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController
        _controller = ThreadpoolController()
    return _controller


class ThreadCountWarning(RuntimeWarning):
    """n_threads asked for more threads than this process has cores: capped."""


def resolve_threads(n_threads):
    """n_threads as given, or `default_threads()` for None (the OpenMP thread limit in force,
    at most the usable cores); a given count is capped at `usable_cores()` (more only wait
    for each other: capped with a ThreadCountWarning).  Results do not depend on the thread
    count."""
    if n_threads is None:
        return default_threads()
    n_threads = check_positive(n_threads, "n_threads", integer=True)
    cores = usable_cores()
    if n_threads > cores:
        warnings.warn(f"n_threads={n_threads} is more than the {cores} cores this process "
                      f"may use: using {cores}", ThreadCountWarning, stacklevel=3)
        return cores
    return n_threads


@contextlib.contextmanager
def blas_single_threaded():
    """Limit the BLAS libraries loaded in this process to one thread for the block."""
    with _threadpool_controller().limit(limits=1, user_api="blas"):
        yield


@contextlib.contextmanager
def jobs_as_threads(n_jobs):
    """Run the block on n_jobs threads: OpenMP (what skylite uses where n_threads is None,
    `default_threads`) and BLAS limited to them.  n_jobs follows scikit-learn's convention:
    -1 is every usable core, -2 all but one, ...; None leaves the limits as they are.
    Raises ValueError for anything but None or a nonzero int."""
    if n_jobs is None:
        yield None
        return
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a nonzero int (-1: every core), got "
                         f"{n_jobs!r}")
    threads = int(n_jobs) if n_jobs > 0 else max(1, usable_cores() + 1 + int(n_jobs))
    with _threadpool_controller().limit(limits=threads):
        yield threads
