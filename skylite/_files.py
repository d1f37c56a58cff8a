"""Writing a user's file without ever leaving it half written, or leaving debris behind.

`atomic_write(path, write)` refuses a path that cannot name a file (empty, or a folder),
then writes to a new temporary file in the destination's folder, named
``.<name>.<random>.tmp`` after the destination's name (unique, so two writers never share
one), flushes and fsyncs it, moves it over `path` with os.replace (atomic on POSIX: a reader
sees the old file or the new one, never a mixture) and fsyncs the folder so that the rename
survives a crash.  Until the rename the previous file is untouched; if writing fails, the
temporary file is removed and the previous file stays.  An OSError names `path`, never the
temporary file.

A process killed while writing (kill -9, power loss) cannot remove its temporary file, so each
write first removes the stale temporary files of the same destination.  Stale means that no
live process holds it: a writer keeps an exclusive lock (flock) on its temporary file from
its creation until it has been renamed, and the operating system releases the lock when the
writer dies, however it dies.  A temporary file whose lock can be taken is therefore
abandoned, and removing it never disturbs a slow writer that is still alive, whatever its
age.  (Where flock does not exist no temporary file is ever judged stale.)
"""
import glob
import os
import tempfile

try:
    import fcntl
except ImportError:                  # not POSIX: no locks, so no cleanup of stale files
    fcntl = None

TEMPORARY_SUFFIX = ".tmp"


def atomic_write(path, write):
    """Replace `path` by what write(f) writes into a binary file object, atomically.

    Raises ValueError for an empty path, IsADirectoryError for a folder, and an OSError
    naming `path` when the file cannot be written (e.g. its folder does not exist).
    """
    path = os.fspath(path)
    target = check_file_path(path)
    folder, name = os.path.split(target)
    remove_stale_temporaries(target)
    try:
        fd, tmp = _locked_temporary(folder, name)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
            os.replace(tmp, target)   # still locked: a cleaner never sees it unowned
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
        raise
    _fsync_folder(folder)


def _locked_temporary(folder, name):
    """(fd, name) of a new temporary file for `name` in `folder`, locked by this process.

    A cleaner may lock and remove the file between its creation and the lock: then it is no
    longer linked, and another one is made."""
    while True:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=TEMPORARY_SUFFIX)
        _lock(fd, blocking=True)
        if os.fstat(fd).st_nlink:
            return fd, tmp
        os.close(fd)


def check_file_path(path):
    """The absolute form of `path` if it can name a file to write: ValueError for an empty
    path, IsADirectoryError for an existing folder or a path ending with a separator."""
    path = os.fspath(path)
    if not path:
        raise ValueError("cannot write to an empty path: give a file name")
    if path.endswith((os.sep, os.altsep or os.sep)) or os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a folder: give a file name inside it")
    return os.path.abspath(path)


def temporary_files(path):
    """The temporary files that writes of `path` create or left behind (their names)."""
    folder, name = os.path.split(os.path.abspath(os.fspath(path)))
    pattern = f".{glob.escape(name)}.*{TEMPORARY_SUFFIX}"
    return sorted(glob.glob(os.path.join(glob.escape(folder), pattern)))


def remove_stale_temporaries(path):
    """Remove the temporary files of `path` that no live writer holds (see the module
    docstring); returns how many were removed."""
    if fcntl is None:
        return 0
    removed = 0
    for tmp in temporary_files(path):
        try:
            fd = os.open(tmp, os.O_RDONLY)
        except OSError:                 # renamed or removed meanwhile, or unreadable
            continue
        try:
            if not _lock(fd, blocking=False):
                continue                # a live writer holds it
            try:
                os.unlink(tmp)
                removed += 1
            except OSError:
                pass
        finally:
            os.close(fd)
    return removed


def _lock(fd, blocking):
    """Take an exclusive flock on fd; False if another holds it and blocking is False."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    except OSError:                     # a file system without locks: treat as held
        return blocking
    return True


def _naming(exc, path):
    """The OSError `exc` re-raised about the user's `path` (not the temporary file)."""
    if exc.errno is None:
        return OSError(f"cannot write {path}: {exc.strerror or exc}")
    return OSError(exc.errno, f"cannot write {path}: {exc.strerror}")


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
