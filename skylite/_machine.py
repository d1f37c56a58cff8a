"""Probes of the machine's memory, and how skylite prints a number of bytes.

skylite refuses work that cannot fit before it allocates anything: the ADMM engine plans
its working memory and caches against `available_memory_bytes()` (skylite.admm.memory),
a Nystroem map checks its landmarks and whitening against it (skylite.sketch.nystroem), and
the estimators size their default caches from it.  The probe reads what the kernel says is
available (/proc/meminfo's MemAvailable on Linux, else the free physical pages), and no
more than what a container's cgroup memory limit leaves, since exceeding that limit kills
the process however much memory the machine has.  Threads and cores are probed in
`skylite._threads`.
"""
import os

# cgroup v2, then v1: (limit file, usage file); an unlimited v2 limit reads "max"
_CGROUP_FILES = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                 ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                  "/sys/fs/cgroup/memory/memory.usage_in_bytes"))


def available_memory_bytes():
    """The bytes this process may still allocate.

    MemAvailable from /proc/meminfo (Linux; else the free physical pages), and no more than
    the room left under this process's cgroup memory limit (`_cgroup_room`).

    Returns
    -------
    bytes : int
        The available memory, >= 0.
    """
    available = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if available is None:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    room = _cgroup_room()
    return available if room is None else min(available, room)


def _cgroup_room():
    """Bytes left under the cgroup memory limit (limit - usage, at least 0), or None
    without a limit."""
    for limit_file, usage_file in _CGROUP_FILES:
        try:
            with open(limit_file) as f:
                limit = f.read().strip()
            with open(usage_file) as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 2**60:        # v1 writes "no limit" as ~2^63
            return max(int(limit) - usage, 0)
        return None
    return None


def format_bytes(size):
    """A byte count for people, in binary units: 512 -> '512 B', 1536 -> '1.5 KiB',
    3 * 2**30 -> '3.0 GiB' (TiB above that)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"
