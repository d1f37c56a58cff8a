"""The MPI gallery examples (not run by the site build) run on their defaults as a fresh
clone has them: no data folder, no network."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script, options, floor", [
    ("mpi_dense.py", ["--features", "1024"], 0.85),   # the shipped MNIST sample
    ("mpi_sparse.py", [], 0.95),                      # tests/data's Reuters samples
])
def test_mpi_example_runs_without_data_or_network(mpiexec, tmp_path, script, options, floor):
    env = dict(os.environ, OMP_NUM_THREADS="1", SKYLITE_DATA=str(tmp_path / "empty"))
    proc = subprocess.run([mpiexec, "-n", "2", sys.executable, str(EXAMPLES / script),
                           *options], capture_output=True, text=True, timeout=180, cwd=tmp_path,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [accuracy] = re.findall(r"test accuracy ([\d.]+)(%?)", proc.stdout)
    value = float(accuracy[0]) / (100 if accuracy[1] else 1)
    assert value >= floor, proc.stdout
    assert not (tmp_path / "empty").exists()        # nothing fetched, nothing cached
