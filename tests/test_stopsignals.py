"""SIGTERM and SIGHUP end a command with one line and 143/129, as Ctrl-C ends it with 130 (issue 26's campaigns,
Low: at Python's defaults `kill` or a closed terminal ended a command without a word)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))


def _catches(pid: int, sig: int, within: float = 10) -> bool:
    """True once ``pid`` has a handler for ``sig`` (SigCgt in /proc), False if it never has within ``within`` s."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        caught = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("SigCgt:"))
        if int(caught.split()[1], 16) >> (sig - 1) & 1:
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sql_stopped_by_sigterm_or_sighup_says_so_in_one_line_and_exits_128_plus_the_signal(sig, tmp_path):
    """A long `sql` query killed as `kill` and a closed terminal kill it: before, -15/-1 and nothing said."""
    db = tmp_path / "e.duckdb"
    duckdb.connect(str(db)).close()
    query = "select count(*) from range(100000000000) a"
    argv = [sys.executable, "-m", "storagelab", "sql", "--db", str(db), query]
    p = subprocess.Popen(argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    caught = _catches(p.pid, sig)
    time.sleep(0.1)  # into the query
    p.send_signal(sig)
    out, err = p.communicate(timeout=10)
    what = "terminated (SIGTERM)" if sig == signal.SIGTERM else "hung up (SIGHUP: its terminal closed?)"
    assert (p.returncode, out, err, caught) == (128 + sig, "", f"storagelab sql: {what}\n", True)


def test_a_forked_child_keeps_the_signals_default_and_the_command_is_not_stopped_by_its_childs_signal():
    """A pool worker (forked) that inherited the handler dies by SIGTERM as before (-15, no line of the command's);
    the command itself then gets its line and 143."""
    code = """if True:
        import argparse, os, signal, sys, time
        from storagelab import cli
        def work(args):
            child = os.fork()
            if child == 0:
                time.sleep(5)
                os._exit(0)
            os.kill(child, signal.SIGTERM)
            print(os.waitpid(child, 0)[1], flush=True)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            return 0
        sys.exit(cli._guarded(argparse.Namespace(cmd="build", func=work), top=True))
    """
    p = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=30)
    assert (p.returncode, p.stdout, p.stderr) == (
        143,
        f"{signal.SIGTERM}\n",
        "storagelab build: terminated (SIGTERM)\n",
    )


_DURING_A_FORK = """
import os, signal, subprocess
from storagelab import stopsignals
sent = []
def before():  # registered before stopsignals' hooks: runs after its block, so the SIGTERM waits for the unblock
    if not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGTERM)
os.register_at_fork(before=before)
stopsignals.on_stop_signals("test")
def on_signal(signum, frame):  # as `lab bonnie`'s: Ctrl-C's path
    raise KeyboardInterrupt
signal.signal(signal.SIGTERM, on_signal)
try:
    subprocess.run(["sleep", "5"], preexec_fn=lambda: None)
    print("lost")
except KeyboardInterrupt:
    print("interrupted")
"""


def test_a_sigterm_that_comes_while_a_child_is_forked_is_not_lost():
    """Reliability-16 (found by a clean-clone run): `lab bonnie` SIGTERMed while it started bonnie++ ran on, and
    (bonnie++ stopped) waited 25 minutes: the signal, blocked across the fork, ran the lab's handler when the fork
    hook unblocked it, and Python dropped the handler's KeyboardInterrupt raised inside the hook."""
    r = subprocess.run([sys.executable, "-c", _DURING_A_FORK], capture_output=True, text=True, timeout=60)
    assert (r.stdout, r.stderr) == ("interrupted\n", "")
