"""Writing a user's file without ever leaving it half written.

`atomic_write(path, write)` writes to a new temporary file in the destination's folder (a
unique name, so two writers never share it), flushes and fsyncs it, moves it over `path` with
os.replace (atomic on POSIX: a reader sees the old file or the new one, never a mixture) and
fsyncs the folder so that the rename survives a crash.  Until the rename the previous file is
untouched; if writing fails, the temporary file is removed and the previous file stays.
"""
import os
import tempfile


def atomic_write(path, write):
    """Replace `path` by what write(f) writes into a binary file object, atomically."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_folder(folder)


def _fsync_folder(folder):
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:                  # e.g. a platform without directory file descriptors
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
