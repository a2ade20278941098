"""Ctrl-C during an ingest of a FUSE folder that never answers (issue 26, reliability-11 store Low 2): the read waits
in the kernel, Python's SIGINT handler never runs, and the ingest went on waiting (SIGTERM, fatal, was needed). The
FUSE file system here is root's own bindfs, stopped with SIGSTOP (docs/reliability-11-scripts/store-hang*.txt used the
user's hanging fusepy one)."""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import FIXTURES

import storagelab
from storagelab.stuck import INGEST_STUCK


@pytest.mark.e2e  # one CLI run and the 3 s the watcher gives the main thread
@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bindfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, bindfs and /dev/fuse to mount a FUSE file system that hangs",
)
def test_ctrl_c_ends_an_ingest_stuck_on_a_fuse_mount_that_never_answers(tmp_path):
    def argv(src: Path, mnt: Path) -> list[str]:
        shutil.copy(FIXTURES / "fio" / "3.33" / "json_only.txt", src / "a.txt")
        return ["ingest", str(mnt), "--db", str(tmp_path / "x.duckdb"), "--no-parquet"]

    # the watcher's grace 0.5 s instead of 3 s: the same end, sooner (issue 28)
    assert ctrl_c_when_stuck(tmp_path, argv, grace=0.5) == (130, "", INGEST_STUCK + "\n")  # main: still waiting


def ctrl_c_when_stuck(
    tmp_path: Path, argv, sig: int = signal.SIGINT, grace: float | None = None
) -> tuple[int, str, str]:
    """The storagelab command ``argv(src, mnt)`` (which may put files in src) run on root's bindfs of src, stopped
    (SIGSTOP) before it starts, given Ctrl-C (or ``sig``) once it waits on the mount: (exit code, stdout, stderr).
    ``grace``: stuck.GRACE in that command (`python -m storagelab` as runpy runs it), instead of its 3 s."""
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    src.mkdir()
    mnt.mkdir()
    args = argv(src, mnt)
    fs = subprocess.Popen(["bindfs", "-f", str(src), str(mnt)], stderr=subprocess.DEVNULL)
    cmd = None
    try:
        for _ in range(100):
            if os.path.ismount(mnt):
                break
            time.sleep(0.05)
        fs.send_signal(signal.SIGSTOP)  # from now on every request to the mount waits
        start = ["-m", "storagelab"]
        if grace is not None:
            start = ["-c", f"import runpy, sys, storagelab.stuck as s; s.GRACE = {grace}; sys.argv[0] = 'storagelab'; "
                     "runpy.run_module('storagelab', run_name='__main__', alter_sys=True)"]  # fmt: skip
        cmd = subprocess.Popen(
            [sys.executable, *start, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(Path(storagelab.__file__).parents[1])),  # the code under test
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's foreground command
        )
        for _ in range(200):  # until it waits on the mount
            try:
                if Path(f"/proc/{cmd.pid}/wchan").read_text() == "request_wait_answer":
                    break
            except OSError:
                pass
            time.sleep(0.05)
        cmd.send_signal(sig)
        out, err = cmd.communicate(timeout=15)
        return cmd.returncode, out, err
    finally:
        fs.send_signal(signal.SIGCONT)
        if cmd and cmd.poll() is None:
            cmd.kill()
            cmd.wait(30)
        subprocess.run(["fusermount", "-u", str(mnt)], stderr=subprocess.DEVNULL)
        fs.wait(10)


def test_the_stuck_watcher_never_takes_a_stop_signal_itself():
    """The watcher thread started with Ctrl-C, SIGTERM and SIGHUP unblocked, so the kernel gave it a process's
    signal whenever the main thread held it: spark-ingest holds Ctrl-C while its JVM starts, the watcher took it,
    the command ended mid-start and the half-started JVM held the pipes (test_spark's Ctrl-C test, in two
    clean-clone runs, once reliability-18 watched every command). It is started with them blocked."""
    from storagelab import stuck  # noqa: PLC0415

    with stuck.exit_when_stuck("storagelab test: stuck"):
        watcher = next(t for t in threading.enumerate() if getattr(t, "_target", None) is stuck._watch)
        status = Path(f"/proc/self/task/{watcher.native_id}/status").read_text()
    blocked = int(next(x for x in status.splitlines() if x.startswith("SigBlk:")).split()[1], 16)
    assert [sig for sig in stuck.WATCHED if not blocked & 1 << (sig - 1)] == []
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, set()) & set(stuck.WATCHED)  # the main thread's as before
