"""All or nothing: an object's attributes restored when the work on it raises.

A fit, a path of fits or a search sets fitted attributes as it goes; if it raises or is
interrupted (KeyboardInterrupt), `restored_on_failure` puts back every attribute as it was
before, so that a failed fit leaves the previous model exactly as it was, or the object
unfitted if it had never been fitted.
"""
import contextlib

__all__ = ["restored_on_failure"]


@contextlib.contextmanager
def restored_on_failure(obj):
    """Within the block, any exception (KeyboardInterrupt included) restores `obj.__dict__`
    to its state on entry, then propagates."""
    before = dict(obj.__dict__)
    try:
        yield
    except BaseException:
        obj.__dict__.clear()
        obj.__dict__.update(before)
        raise
