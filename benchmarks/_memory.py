"""Memory of this process, from /proc/self/status (shared by the benchmark scripts)."""


def status_bytes(field):
    """A memory field of /proc/self/status in bytes, e.g. "VmRSS:" or "VmHWM:"."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))


def peak_rss():
    """Peak RSS of this process only (VmHWM): getrusage's ru_maxrss would include the
    parent's high-water mark, which survives fork + exec."""
    return status_bytes("VmHWM:")
