"""Ctrl-C once polars is imported (reliability-31 read, medium): polars installs its SIGINT handler with SA_RESTART as
it is imported, and a system call the main thread waited in was restarted after Ctrl-C, for ever (a FIFO's open in
`storagelab run`). The command line program puts Python's handler back after that import (polars_sigint.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from conftest import ROOT

PROGRAM = """
import sys
sys.argv[0] = "storagelab"  # as the console script: the program, not a library in a kernel
import storagelab
import polars  # as a command imports it, lazily, after the program started
assert polars.__spec__.loader is polars.__loader__ and type(polars.__loader__).__module__ != "storagelab.polars_sigint"
assert polars.DataFrame({"a": [1, 2]})["a"].sum() == 3
print("ready", flush=True)
open(sys.argv[1])  # a FIFO no one writes to: waits until a signal ends it
"""


def test_ctrl_c_ends_a_call_that_waits_once_polars_is_imported(tmp_path):
    fifo = tmp_path / "nb.ipynb"
    os.mkfifo(fifo)
    p = subprocess.Popen(
        [sys.executable, "-c", PROGRAM, str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "lib")),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal gives it
    )
    try:
        assert p.stdout.readline() == "ready\n"
        time.sleep(0.2)  # in the open
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=10)  # the code before: still waiting in the open (SA_RESTART)
    finally:
        p.kill()
        p.wait()
    assert (p.returncode, err) == (130, "storagelab: interrupted\n")
