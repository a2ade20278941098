"""Reliability-13, processes (docs/reliability-13-processes.md): each test does what the attack did."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab import paths, report

ROOT = Path(__file__).resolve().parents[1]
NB = paths.NOTEBOOKS / "07_explore.ipynb"  # its name and parameters: papermill is the fake below


def _fake_papermill(figures: list[str], headline: str, then: str = "", ready: Path | None = None) -> types.ModuleType:
    """A papermill whose execute_notebook writes what a notebook run writes (figures, a raw excerpt, the summary,
    the executed notebook) where the run says (STORAGELAB_REPORT_DIR, its output path), then ``then``: 'hang'
    (says so in the file ``ready``, and sleeps), 'interrupt' (Ctrl-C) or 'fail' (a cell raised)."""

    def execute_notebook(src, dest, **kw):
        where = Path(os.environ[paths.REPORT_DIR_ENV])
        figs = paths.figure_dir("07_explore", where / "figures")
        figs.mkdir(parents=True, exist_ok=True)
        for name in figures:
            for suffix in (".svg", ".png", ".vl.json"):
                (figs / f"{name}{suffix}").write_text(f"{headline} {name}")
        (where / "raw").mkdir(exist_ok=True)
        (where / "raw" / f"{headline}.html").write_text("<html></html>")
        Path(dest).write_text(json.dumps({"cells": [], "headline": headline}))
        if then == "hang" and ready is not None:
            ready.write_text("1")
            time.sleep(60)
        if then == "interrupt":
            raise KeyboardInterrupt
        if then == "fail":
            raise RuntimeError("a cell raised")
        (where / "summaries").mkdir(exist_ok=True)
        (where / "summaries" / "07_explore.json").write_text(json.dumps({"headline": headline}))

    return types.SimpleNamespace(execute_notebook=execute_notebook)  # type: ignore[return-value]


def _files(folder: Path) -> dict[str, str]:
    """The report folder's files and their text; not the run folders (.storagelab-run-*), which the next run sweeps,
    nor the selection each report holds (.selection.*.json, written before any run: test_report_folders)."""
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not str(p.relative_to(folder)).startswith((".storagelab-run-", ".selection."))
    }


def _run(monkeypatch, folder: Path, figures: list[str], headline: str, then: str = ""):
    monkeypatch.setitem(sys.modules, "papermill", _fake_papermill(figures, headline, then))
    return report.run_notebooks(plans=[(NB, {})], out_dir=folder, jobs=1)


def _killed_run(folder: Path, figures: list[str], headline: str, ready: Path) -> None:  # in a forked child
    sys.modules["papermill"] = _fake_papermill(figures, headline, "hang", ready)  # type: ignore[assignment]
    report.run_notebooks(plans=[(NB, {})], out_dir=folder, jobs=1)


def test_a_run_killed_or_stopped_in_its_notebook_leaves_the_last_good_report_whole(monkeypatch, tmp_path):
    """Attack (main 6e8c9c7, reliability-9 Low 6 again): `build` in a built clone, SIGTERM to its group at 60 s, in
    its notebooks: `summaries=13 figures=42 unfinished=2 broken_links=12` where the good build left 15, 54, 0, 0
    (14 figure files gone, 2 executed notebooks half-written, 12 links of the old pages to figures that were gone).
    Each run removed its report's summary and figures before it ran, and papermill wrote the executed notebook in
    place. Now a run writes into a folder of its own, moved into the report folder once every run has ended: killed
    (SIGKILL here: nothing of the run's own code runs after it) or stopped by Ctrl-C, the report is as it was;
    ended, it is replaced whole (a figure no longer drawn goes); a failed run replaces it with its failure."""
    folder = tmp_path / "rep" / "all"
    (ok,) = _run(monkeypatch, folder, ["a", "b"], "good")
    assert ok.ok and ok.executed == folder / "executed" / "07_explore.ipynb" and getattr(ok, "stage", None) is None
    good = _files(folder)
    assert sorted(good) == [
        "executed/07_explore.ipynb",
        "figures/07-explore/a.png",
        "figures/07-explore/a.svg",
        "figures/07-explore/a.vl.json",
        "figures/07-explore/b.png",
        "figures/07-explore/b.svg",
        "figures/07-explore/b.vl.json",
        "raw/good.html",
        "summaries/07_explore.json",
    ]
    child = multiprocessing.get_context("fork").Process(
        target=_killed_run, args=(folder, ["a"], "killed", tmp_path / "ready")
    )
    child.start()
    for _ in range(300):
        if (tmp_path / "ready").exists():
            break
        time.sleep(0.02)
    assert (tmp_path / "ready").exists()
    os.kill(child.pid, signal.SIGKILL)
    child.join(10)
    assert child.exitcode == -signal.SIGKILL
    assert _files(folder) == good  # before: the summary and figures gone, the executed notebook the killed run's
    assert [p.name.split("-")[2] for p in folder.glob(".storagelab-run-*")] == [str(child.pid)]  # for the next run
    with pytest.raises(KeyboardInterrupt):
        _run(monkeypatch, folder, ["c"], "stopped", "interrupt")
    assert _files(folder) == good
    (failed,) = _run(monkeypatch, folder, ["a"], "failed", "fail")
    assert not failed.ok
    assert json.loads((folder / "summaries" / "07_explore.json").read_text())["status"] == "failed"
    (new,) = _run(monkeypatch, folder, ["a"], "new")
    assert new.ok
    assert _files(folder) == {
        "executed/07_explore.ipynb": json.dumps({"cells": [], "headline": "new"}),
        "figures/07-explore/a.png": "new a",
        "figures/07-explore/a.svg": "new a",
        "figures/07-explore/a.vl.json": "new a",
        "raw/failed.html": "<html></html>",
        "raw/good.html": "<html></html>",
        "raw/new.html": "<html></html>",
        "summaries/07_explore.json": json.dumps({"headline": "new"}),
    }
    assert sorted(p.name for p in folder.iterdir()) == [
        ".selection.07_explore.json",  # the selection of the report it holds (--output outside reports/)
        "executed",
        "figures",
        "raw",
        "summaries",
    ]  # no run folder


def _closed(*fds: int):
    """A child's preexec_fn: its descriptors ``fds`` closed, as `cmd >&-` (1), `2>&-` (2) or `<&-` (0) leave them."""
    return lambda: [os.close(fd) for fd in fds]


def _storagelab(*argv: str, closed: tuple[int, ...], **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(report.__file__).resolve().parents[1]))  # the code under test
    cmd = [sys.executable, "-m", "storagelab", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=_closed(*closed), timeout=120, **kw)


def test_a_command_started_with_its_standard_output_or_error_closed_works_or_says_why(tmp_path):
    """Attack (main 6e8c9c7): `sql "select 1" >&-` and `parse` -> a traceback (`'NoneType' object has no attribute
    'isatty'`), exit 1; `ingest --db X 2>&-` -> exit 1 and no database (its first line on stderr raised); `run
    07_explore >&-` -> the report tree's lock file became descriptor 1, the kernel found its stdout closed and died
    ("FAILED: RuntimeError: Kernel died before replying to kernel_info"). Now /dev/null fills each closed standard
    descriptor before anything is opened (and the children inherit it); a command whose output is its result says
    in one line that it has nowhere to go."""
    fixture = ROOT / "tests" / "fixtures" / "fio" / "3.33"
    one = sorted(fixture.glob("*.txt"))[0]
    db = tmp_path / "x.duckdb"
    p = _storagelab("ingest", str(one), "--db", str(db), "--no-parquet", closed=(0, 1, 2), cwd=tmp_path)
    assert p.returncode == 0
    p = _storagelab("sql", "--db", str(db), "select 1", closed=(1,))
    assert (p.returncode, p.stderr) == (
        2,
        "storagelab sql: standard output is closed (>&-): the result would go nowhere; send it to a file or to "
        "/dev/null\n",
    )
    p = _storagelab("sql", "--db", str(db), "--csv", "select count(*) n from files", closed=())
    assert (p.returncode, p.stdout) == (0, "n\n1\n"), p.stderr


def _child_sees_descriptor_one(result) -> None:  # in a forked child with descriptor 1 closed
    from storagelab import stdfds  # noqa: PLC0415

    os.close(1)
    stdfds.fill_closed()
    probe = "import os, sys; sys.stderr.write(os.readlink('/proc/self/fd/1'))"
    p = subprocess.run([sys.executable, "-c", probe], stderr=subprocess.PIPE, text=True)
    result.put((p.returncode, p.stderr, sys.stdout.writable()))


def test_the_descriptors_filled_for_a_closed_standard_output_reach_the_children():
    """What the kernel died of: the child of a command started with `>&-` finds descriptor 1 open (/dev/null, not
    a file of the command's), and the command's own print goes there without an error."""
    result = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=_child_sees_descriptor_one, args=(result,))
    child.start()
    assert result.get(timeout=10) == (0, "/dev/null", True)
    child.join(10)


def test_the_temporary_files_of_a_killed_sql_parquet_go_with_the_next_write(tmp_path):
    """Attack (main 6e8c9c7): `sql --parquet o.parquet "select * from range(200000000)"` killed (KILL, TERM, HUP:
    `sql` ends at once) left `.o.parquet.XXXX.tmp` and DuckDB's `tmp_.o.parquet.XXXX.tmp`, as large as the part
    written: 17 files, 1.6 GB after 9 kills, and no later command removed them. Now the names hold the writer's pid
    and a write of the same file removes those of writers that are gone. (The write of `sql --parquet`, in a process
    of its own, killed; then the next one.)"""
    import duckdb  # noqa: PLC0415

    from storagelab import sqlout  # noqa: PLC0415

    dest = tmp_path / "o.parquet"
    code = f"import duckdb; from storagelab import sqlout; sqlout._write_parquet(duckdb.sql('select * from range(300000000)'), __import__('pathlib').Path({str(dest)!r}))"
    env = dict(os.environ, PYTHONPATH=str(Path(report.__file__).resolve().parents[1]))
    killed = subprocess.Popen([sys.executable, "-c", code], env=env)
    for _ in range(600):
        if any(f.name.startswith("tmp_.") and f.stat().st_size > 0 for f in tmp_path.iterdir()):
            break
        time.sleep(0.02)
    killed.kill()
    killed.wait()
    left = sorted(f.name for f in tmp_path.iterdir())  # its lock file (reliability-28), its file and DuckDB's
    assert len(left) == 3 and left[0].endswith(".lock") and left[2].startswith("tmp_.o.parquet."), left
    sqlout._write_parquet(duckdb.sql("select 42 x"), dest)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["o.parquet"]


@pytest.mark.parametrize("kept", [0, 4096])
def test_lab_fio_whose_output_a_full_disk_cut_keeps_no_run(tmp_path, monkeypatch, kept):
    """Attack (main 6e8c9c7): `lab fio --out` on a 2 MB tmpfs left with 0-40 KiB: fio's own writes of its output
    failed without a word and it ended 0. With 0 KiB the empty output was dropped as an "empty log" and the lab said
    `lab fio: 0 files from 1 runs in 2s; nothing new to label`, exit 0: the run lost; with 8-40 KiB its output, cut at
    4096 or 8192 bytes (`truncated: JSON document is cut short`), was renamed into OUT, the manifest was left empty
    and the line was `storagelab lab fio: [Errno 28] No space left on device`. Now a run whose output does not read
    back whole (or whose OUT is full after it) is a failed run, kept outside OUT. Here fio is one that ends 0 having
    written ``kept`` bytes of a real output, as fio did on the full disk."""
    from storagelab.lab import PRESETS, build_runs, run_fio_matrix  # noqa: PLC0415

    real = ROOT / "tests" / "fixtures" / "fio" / "3.33" / "lab-psync" / "randread-4k-qd1-nj1.txt"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fio").write_text(
        f'#!/bin/sh\n[ "$1" = --version ] && {{ echo fio-3.33; exit 0; }}\nhead -c {kept} {real}\nexit 0\n'
    )
    (bin_dir / "fio").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the failed run's folder (mkdtemp), not left in /tmp
    out, target = tmp_path / "out", tmp_path / "t"
    runs = build_runs(PRESETS["smoke"], target=target, out=out, rw=["randread"])[:1]
    lines: list[str] = []
    rc = run_fio_matrix(runs, target=target, out=out, ingest=False, log=lines.append)
    assert rc == 1, lines
    assert lines[-1] == f"lab fio: 1 runs failed: {runs[0].run_id}"
    assert [f.name for f in out.iterdir() if not f.name.startswith(".")] in ([], ["manifest.csv"])
    assert not (out / "manifest.csv").exists() or runs[0].run_id not in (out / "manifest.csv").read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a command as the second user")
def test_a_limit_of_processes_too_low_for_a_notebook_run_is_one_line_before_it_starts(shared_tmp):  # noqa: F811
    """Attack (main 6e8c9c7, as the second user: root is not held to RLIMIT_NPROC): `ulimit -u 8; storagelab run
    07_explore` -> `Aborted`, exit 134, nothing else; `ulimit -u 16` -> "Kernel died before replying to kernel_info";
    `ulimit -u 32` -> a Rust panic ("could not spawn threads"); `ulimit -u 3; lab fio` -> a PanicException traceback.
    Now the limit is checked before anything starts (raised when the hard limit allows)."""
    import pwd  # noqa: PLC0415
    import resource  # noqa: PLC0415

    user = pwd.getpwnam(USER)
    out = shared_tmp / "out"
    out.mkdir()
    os.chown(out, user.pw_uid, user.pw_gid)

    def limited():
        resource.setrlimit(resource.RLIMIT_NPROC, (100, 100))  # enough to start while other tests run as the user
        _as_user(USER)()

    env = dict(os.environ, PYTHONPATH=str(Path(report.__file__).resolve().parents[1]), HOME=str(out))
    env.pop("TMPDIR", None)
    try:
        subprocess.run([sys.executable, "-c", "0"], preexec_fn=_as_user(USER), timeout=60, check=True)
    except (PermissionError, subprocess.CalledProcessError):  # e.g. a Python under root's 0700 home
        pytest.skip(f"the second user cannot run {sys.executable}")
    argv = [sys.executable, "-m", "storagelab", "run", "07_explore", "--output", str(out / "rep")]
    p = subprocess.run(argv, capture_output=True, text=True, env=env, preexec_fn=limited, timeout=120)
    assert (p.returncode, p.stdout, p.stderr) == (
        2,
        "",
        "storagelab run: the limit of processes (ulimit -u 100) is below the 128 `storagelab run` needs (its kernels, "
        "tools and their threads count, with every other process of yours): raise it (e.g. ulimit -u 4096) and run "
        "again\n",
    )


def test_run_output_into_another_selections_report_folder_is_refused(monkeypatch, tmp_path):
    """Attack (main 6e8c9c7): `run 01_vdev_scaling -p study homelab-mergerfs --output reports/thumper-x4500` -> exit 0,
    thumper-x4500's report replaced by homelab-mergerfs's, listed in the index under "thumper-x4500" (the folder's
    recorded selection): `--output` skipped the check that keeps two selections out of one report folder. Now a
    folder of reports/ given as --output is held to it too; a new one records its selection."""
    from storagelab.errors import ParameterError  # noqa: PLC0415

    reports = tmp_path / "reports"
    monkeypatch.setattr(paths, "REPORTS", reports)
    monkeypatch.setitem(sys.modules, "papermill", _fake_papermill(["a"], "ran"))
    theirs = reports / "thumper-x4500"
    theirs.mkdir(parents=True)
    (theirs / ".selection.json").write_text(json.dumps({"selection": {"study": "thumper-x4500"}, "parameters": {}}))
    with pytest.raises(ParameterError) as e:
        report.run_notebooks(["01_vdev_scaling"], {"study": "homelab-mergerfs"}, out_dir=theirs, jobs=1)
    assert str(e.value) == (
        f"{theirs} holds the reports of study 'thumper-x4500', not of study 'homelab-mergerfs': give --output "
        "another folder"
    )
    assert sorted(p.name for p in theirs.iterdir()) == [".selection.json"]
    link = tmp_path / "link"  # reliability-14 Medium 2: root's own link to the folder was held to the link's name
    link.symlink_to(theirs)
    with pytest.raises(ParameterError):
        report.run_notebooks(["01_vdev_scaling"], {"study": "homelab-mergerfs"}, out_dir=link, jobs=1)
    assert sorted(p.name for p in theirs.iterdir()) == [".selection.json"]
    assert sorted(p.name for p in reports.iterdir()) == ["thumper-x4500"]
    new = reports / "mine"
    report.run_notebooks(["01_vdev_scaling"], {"study": "homelab-mergerfs"}, out_dir=new, jobs=1)
    assert json.loads((new / ".selection.json").read_text())["selection"] == {"study": "homelab-mergerfs"}


def test_what_a_kernel_logs_while_ctrl_c_shuts_it_down_is_not_shown(capfd, monkeypatch, tmp_path):
    """Attack (main 6e8c9c7): Ctrl-C (SIGINT to the group) on `run 07_explore` 2.9-4.0 s after its start under load:
    2 of 15 (and 1 in the sweep) printed the kernel's log, `[IPKernelApp] ERROR | Exception in message handler:`, a
    19-line traceback ending `zmq.error.ZMQError: Socket operation on non-socket`, before `storagelab run:
    interrupted`; 1 of 15 more on the branch printed, after that line, asyncio's `Task exception was never retrieved`
    ... `nbclient.exceptions.DeadKernelError: Kernel died` (nbclient's cell task, collected at exit). The kernel's
    stderr is held while a notebook runs; stopped, it is dropped (a failure still shows), and asyncio's log is off
    once a run is stopped (the command is ending)."""
    import logging  # noqa: PLC0415

    monkeypatch.setattr(logging.getLogger("asyncio"), "disabled", False)
    with pytest.raises(KeyboardInterrupt):
        _run(monkeypatch, tmp_path / "rep", ["a"], "stopped", "interrupt")
    assert logging.getLogger("asyncio").disabled
    logged = (
        "[IPKernelApp] ERROR | Exception in message handler:\nTraceback (most recent call last):\n"
        '  File "zmq/backend/cython/_zmq.py", line 1339, in zmq.backend.cython._zmq._check_closed\n'
        "zmq.error.ZMQError: Socket operation on non-socket\n"
    )
    with pytest.raises(KeyboardInterrupt), report._StderrFilter():
        os.write(2, logged.encode())
        raise KeyboardInterrupt
    assert capfd.readouterr().err == ""
    with pytest.raises(RuntimeError), report._StderrFilter():
        os.write(2, b"a kernel's own error\n")
        raise RuntimeError("a cell raised")
    assert capfd.readouterr().err == "a kernel's own error\n"
