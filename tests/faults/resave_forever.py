"""Fault-injection helper: re-save two models over one file, alternately, until killed.

    python resave_forever.py A.sky B.sky DEST.sky [SECONDS]

Prints "ready" once both models are loaded, then saves A, B, A, ... over DEST (for SECONDS,
or until killed).  Used by tests/test_persistence.py and benchmarks/fault_report.py.
"""
import sys
import time

import skylite

a, b = skylite.load(sys.argv[1]), skylite.load(sys.argv[2])
print("ready", flush=True)
stop = time.monotonic() + float(sys.argv[4]) if len(sys.argv) > 4 else float("inf")
while time.monotonic() < stop:
    a.save(sys.argv[3])
    b.save(sys.argv[3])
