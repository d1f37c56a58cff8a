"""Running a benchmark contender in a fresh Python process: `run_child(code, *args)` runs
`python -c code args...` outside the checkout (whose source tree would shadow the installed
package) and returns the JSON the child printed on its line starting with "RESULT "."""
import json
import subprocess
import sys
import tempfile

OUTSIDE = tempfile.gettempdir()


def run_child(code, *args):
    """The dict the child printed as ``RESULT {json}``; stops with the child's output if it
    printed none (it failed)."""
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=OUTSIDE,
                          capture_output=True, text=True)
    line = next((l for l in proc.stdout.splitlines() if l.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(proc.stdout + proc.stderr)
    return json.loads(line[len("RESULT "):])
