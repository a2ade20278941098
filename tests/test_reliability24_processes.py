"""Reliability-24, processes and signals (issue 26): the relay of the pool workers' output, real kills, closed and
full standard streams."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from test_reliability21_env import unstoppable_lab
from test_reliability23_processes import _full_pipe

from storagelab.store.workerio import Relay


def test_the_relay_copies_every_byte_of_a_chunk_to_a_non_blocking_stderr_with_less_room_than_the_chunk():
    # reliability-23's medium: the relay thread wrote each chunk of the workers' lines with one os.write; to a
    # stderr made non-blocking by another program sharing it (a pipe of 4 KiB), 4,096 of the 65,536 bytes arrived
    # (a short write) or none (EAGAIN), without a word
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    os.set_blocking(w, False)
    got = bytearray()

    def drain() -> None:
        while data := os.read(r, 1 << 16):
            got.extend(data)

    relay = Relay(w)
    lines = b"".join(b"worker line %05d of the parser pool\n" % i for i in range(1700))  # 62,900 bytes
    assert relay.fd is not None
    os.write(relay.fd, lines)  # the relay's own pipe holds 64 KiB: one chunk for the thread
    reader = threading.Thread(target=drain, daemon=True)
    try:
        reader.start()
        relay.close()
    finally:
        os.close(w)
        reader.join(2)
        os.close(r)
    assert len(got) == 62_900
    assert bytes(got) == lines


def test_a_jupyterlab_that_never_stops_is_killed_even_when_the_labs_stderr_is_full(monkeypatch):
    """`storagelab lab 2>&1 | less`, the reader no longer reading (the pipe full: JupyterLab's own log fills it and
    JupyterLab itself then waits in its write, so its stop never ends), SIGTERM: after the third try the timer
    thread said 'JupyterLab still ran ... killed' before it killed it, that line waited on the full stderr for ever,
    JupyterLab was never killed and `storagelab lab` (which passes SIGTERM and SIGINT on) waited for ever: kill -9.
    Now the server is killed first and the line is dropped when stderr has no room."""
    import signal  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import time  # noqa: PLC0415
    from types import SimpleNamespace  # noqa: PLC0415

    from storagelab import cli, stopsignals  # noqa: PLC0415

    r, w = _full_pipe()
    held = unstoppable_lab(monkeypatch, 3)
    monkeypatch.setattr(sys, "stderr", open(w, "w", buffering=1, closefd=False))  # noqa: SIM115  as stderr: lines
    monkeypatch.setattr(stopsignals, "_STDERR", [w])
    began = time.monotonic()
    try:
        rc = cli.cmd_lab(SimpleNamespace(extra=[]))
        took = time.monotonic() - began
    finally:
        if held[0].poll() is None:
            held[0].kill()
        held[0].wait()
        os.read(r, 1 << 16)  # the pipe emptied: a line still waiting in the old code's timer thread gets its room
        time.sleep(0.05)
        os.close(r)
    assert took < 1.5
    assert (rc, held[0].returncode) == (137, -signal.SIGKILL)


def test_a_lab_fio_that_gave_up_on_a_target_that_does_not_answer_does_not_touch_it_again(tmp_path, monkeypatch):
    """Attack: `lab fio --target` on a FUSE mount over a stopped one, SIGTERM: 15 s later the lab said 'fio ... still
    waits for a file system that does not answer' and 'interrupted: ... discarded', then removed its mark from the
    target (`leftovers.unmark_fio`), an unlink that waited in the kernel as fio did: the lab was still there 40 s
    after its SIGTERM, until kill -9. The mark is now left to the next run's sweep, as the test files are. Here fio
    is the reliability-22 stand-in that even SIGKILL does not end, and the mark's removal the call that never
    returns."""
    import signal  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import time  # noqa: PLC0415

    from storagelab import procs  # noqa: PLC0415
    from storagelab.lab import PRESETS, build_runs, fio, leftovers, run_fio_matrix  # noqa: PLC0415

    monkeypatch.setattr(fio, "KILLED_WAIT_S", 0.1)
    monkeypatch.setattr(fio, "STOP_GRACE_S", 0.0)
    real = subprocess.Popen

    class Unkillable(real):  # a process in the kernel's wait: no signal ends it (for 1.5 s)
        def __init__(self, argv, **kwargs):
            if argv[:1] == ["fio"]:  # not found by the guard's mark either: os.kill does nothing to it as well
                argv = ["sleep", "1.5"]
                kwargs["env"] = {k: v for k, v in kwargs["env"].items() if k != procs.GUARD_ENV}
                threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM)).start()  # the lab's stop
            super().__init__(argv, **kwargs)

        def send_signal(self, sig):  # terminate() and kill(): a process waiting in the kernel takes neither
            if self.args[:1] != ["sleep"]:
                super().send_signal(sig)

    touched: list[Path] = []
    monkeypatch.setattr(subprocess, "Popen", Unkillable)
    monkeypatch.setattr(fio, "_cmd", lambda argv: "fio-3.33")
    monkeypatch.setattr(leftovers, "unmark_fio", touched.append)  # stands for the unlink that never returns
    out, target = tmp_path / "out", tmp_path / "t"
    runs = build_runs(PRESETS["smoke"], target=target, out=out, rw=["write"])[:1]
    lines: list[str] = []
    began = time.monotonic()
    rc = run_fio_matrix(runs, target=target, out=out, ingest=False, log=lines.append)
    assert time.monotonic() - began < 1.4  # two of _wait_for_fio's 0.5 s rounds
    assert rc == 143
    assert touched == [], lines
    assert lines[-3].startswith("note: fio (pid ") and lines[-2].startswith("interrupted: ")


def test_a_second_lab_run_on_the_same_out_is_refused_while_the_first_writes_it(tmp_path, monkeypatch, capsys):
    """Attack: two `lab fio --out O` at once (same matrix, 0.3 s apart), 3 rounds: both wrote O/.<run>.txt.part and
    fio's logs; one run's output was found cut (a NUL byte at offset 157) and not kept, the other lab ended 2 with a
    bare 'O/.write-64k-qd1-nj1.txt.part: No such file or directory' and left the logs of its run in O without
    manifest rows (an ingest of O then took 13 files for 7 labelled). The second is now refused in one line while the
    first holds O (here: its lock, held as the first run holds it), and runs nothing."""
    from storagelab.lab import main as lab_main  # noqa: PLC0415
    from storagelab.lab.outdir import one_run_at_a_time  # noqa: PLC0415

    bin_dir, out, target = tmp_path / "bin", tmp_path / "out", tmp_path / "t"
    bin_dir.mkdir()
    (bin_dir / "fio").write_text(
        f'#!/bin/sh\n[ "$1" = --version ] && {{ echo fio-3.33; exit 0; }}\ntouch {tmp_path}/ran\n'
    )
    (bin_dir / "fio").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    out.mkdir()
    argv = ["fio", "--target", str(target), "--out", str(out), "--depth-jobs", "1x1", "--bs", "64k", "--rw", "write"]
    with one_run_at_a_time("fio", out) as first:  # the first run's lock (reliability-25: a file in OUT)
        assert first is None
        rc = lab_main([*argv, "--size", "1M", "--runtime", "1", "--no-ingest"])
    assert rc == 2
    assert capsys.readouterr().err == (
        f"storagelab lab fio: --out {out} is being written by another lab run (their runs would overwrite each "
        "other's files); wait for it to end, or give another --out\n"
    )
    assert not (tmp_path / "ran").exists()


def test_a_warning_to_a_full_stderr_does_not_end_the_command(monkeypatch):
    """Attack: `storagelab ingest 2>/dev/full` -> all 38 files stored, but the first warning's write raised ENOSPC in
    the middle of the command: no `ingested 38` line on stdout, Python's 'lost sys.stderr', exit 1 ("some files
    failed to parse"). The line is now lost (later ones go to /dev/null) and the command goes on: rc 0 and its line."""
    import sys  # noqa: PLC0415

    from storagelab import terminal  # noqa: PLC0415

    full = open("/dev/full", "w", buffering=1)  # noqa: SIM115  as stderr: lines
    monkeypatch.setattr(sys, "stderr", full)
    try:
        terminal.say("warning: data/raw/x.txt: line 4: no size cell after the label")
        terminal.say("a second line")
        full.flush()  # Python's own flush at the exit
        assert os.path.samefile(f"/proc/self/fd/{full.fileno()}", os.devnull)
    finally:
        full.close()
