"""Fault-injection helper: save a model and hang once its temporary file is written.

    python hang_while_saving.py MODEL.sky DEST.sky

Loads MODEL, saves it to DEST with fsync replaced by a wait: prints "written" once the
temporary file beside DEST holds the whole model (before it is renamed) and then waits to
be killed.  Used by tests/test_model_files.py and benchmarks/fault_report.py.
"""
import os
import sys
import time

import skylite


def hang(fd):
    print("written", flush=True)
    while True:
        time.sleep(60)


model = skylite.load(sys.argv[1])
os.fsync = hang
model.save(sys.argv[2])
