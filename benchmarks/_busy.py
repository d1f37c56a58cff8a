"""A competing busy process for the busy-machine measurements: `python -c "while True:
pass"`, started before the block and killed after it."""
import contextlib
import subprocess
import sys
import time


@contextlib.contextmanager
def competing_process(busy=True):
    """Run the block beside one busy process (none if not `busy`); the process gets half a
    second to start spinning before the block."""
    competitor = (subprocess.Popen([sys.executable, "-c", "while True: pass"])
                  if busy else None)
    try:
        if competitor is not None:
            time.sleep(0.5)
        yield
    finally:
        if competitor is not None:
            competitor.kill()
            competitor.wait()
