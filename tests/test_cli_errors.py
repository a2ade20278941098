"""User errors are one line and an exit code, never a traceback: every --help has an example and the
exit codes; parse of folders, missing and unparseable files; closed pipes; Ctrl-C; the run script's
--help and its conda path."""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time

import pytest
from conftest import RAW, ROOT

from storagelab import __version__, cli

ENV = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
FIO = RAW / "homelab-mergerfs" / "fio-zfs-mirror-zfs0.8.4.txt"


def storagelab(*args, **kw):
    r = subprocess.run([sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=ENV, **kw)
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    return r


def _subcommands() -> list[str]:
    import re

    out = storagelab("--help").stdout.split("options:")[0]
    return re.findall(r"^    ([a-z][a-z-]*)(?:\s|$)", out, re.M)


def test_main_help_documents_the_exit_codes():
    out = storagelab("--help").stdout
    assert (
        "exit codes:\n  0    ok\n  1    some files failed to parse (the others were processed; see the messages);\n"
        "       compare: nothing of yours and theirs to put side by side (the lines say what is missing)\n"
        "  2    usage or environment error"
    ) in out
    assert "  130  interrupted (Ctrl-C)" in out


def test_every_subcommand_help_has_an_example_and_the_exit_codes():
    subs = _subcommands()
    assert {"ingest", "parse", "sql", "schema", "report", "build", "run", "lab"} <= set(subs)
    for sub in subs:
        r = storagelab(sub, "--help")
        assert r.returncode == 0, sub
        assert "example" in r.stdout and "storagelab " in r.stdout.split("example", 1)[1], sub
        assert r.stdout.count("exit codes:") == 1, sub


def test_unknown_command_is_a_usage_error():
    r = storagelab("frobnicate")
    assert r.returncode == 2 and "invalid choice: 'frobnicate'" in r.stderr


# ----------------------------------------------------------------------------- parse


def test_parse_missing_file():
    r = storagelab("parse", "missing.txt")
    assert (r.returncode, r.stdout, r.stderr) == (2, "", "storagelab parse: missing.txt: no such file or directory\n")


def test_parse_missing_among_others_prints_nothing():
    r = storagelab("parse", str(FIO), "nope.log.gz")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == "storagelab parse: nope.log.gz: no such file or directory\n"


def test_parse_unparseable_file(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("hello\n")
    r = storagelab("parse", str(bad))
    assert r.returncode == 1 and r.stdout == ""
    assert (
        r.stderr == f"storagelab parse: {bad}:1: unknown-format: no known tool output found (expected "
        "output of fio (normal text, JSON, JSON+, JSON beside normal text, terse, --write_bw_log/iops/lat logs, "
        "--write_hist_log logs); bonnie++ (table, CSV, table with its CSV line); zdb (-b/-bb, -S, -DD, -C/-l); "
        "partitions (gpart show, fdisk -l, fdisk -l in another language, sfdisk -d, sfdisk -l, gdisk/sgdisk -p, "
        "parted print/-m/interactive); zfs (zfs get/zpool get, zfs get -H); arcstats (/proc/spl/kstat/zfs/arcstats, "
        "sysctl kstat.zfs.misc.arcstats, arc_summary, arcstat); zpool (zpool list, zpool iostat, zpool iostat -r, "
        "zpool iostat -w, zpool status); mbuffer (its summary line); pv (-f progress, -n); dd (its records/bytes "
        "summary); zfs send/receive (zfs send -v, zfs receive -v); transcribed (a table typed from a paper, first line "
        '"# storagelab transcribed table"))\n'
    )


def test_parse_several_files_one_bad(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\x00\x01binary")
    r = storagelab("parse", str(FIO), str(bad), str(FIO))
    assert r.returncode == 1
    heads = [json.loads(x) for x in r.stdout.splitlines() if x.startswith('{"table": "files"')]
    assert [h["path"] for h in heads] == [str(FIO), str(FIO)]  # the good ones are still printed
    assert r.stderr.splitlines() == [
        f"storagelab parse: {bad}:1: binary: binary data: NUL byte at offset 0 (expected a text log)",
        "storagelab parse: 1 of 3 files failed",
    ]


def test_parse_a_folder_parses_every_file_in_it():
    folder = RAW / "thumper-x4500"
    r = storagelab("parse", str(folder))
    assert r.returncode == 0 and all(x.startswith("warning: ") for x in r.stderr.splitlines())  # mbuffer's lost units
    heads = [json.loads(x)["path"] for x in r.stdout.splitlines() if x.startswith('{"table": "files"')]
    expected = sorted(str(p) for p in folder.iterdir() if not p.name.startswith("."))
    assert heads == expected


def test_parse_an_empty_folder(tmp_path):
    r = storagelab("parse", str(tmp_path))
    assert (r.returncode, r.stderr) == (2, f"storagelab parse: {tmp_path}: no log files in this folder\n")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
@pytest.mark.parametrize("verb", ["parse", "ingest"])
def test_a_fifo_or_a_device_named_on_the_command_line_is_refused(tmp_path, verb):
    """A FIFO would block the read forever and /dev/zero never ends (it filled the memory until the OOM
    killer came): both are refused at once, as is a symlink to one (issue 13, beside case 28)."""
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    (tmp_path / "zero.txt").symlink_to("/dev/zero")
    db = ["--db", str(tmp_path / "t.duckdb")] if verb == "ingest" else []
    for path, kind in ((fifo, "a FIFO"), (tmp_path / "zero.txt", "a device")):
        r = storagelab(verb, str(FIO), str(path), *db, timeout=60)
        assert (r.returncode, r.stdout) == (2, ""), r.stderr
        assert r.stderr == f"storagelab {verb}: {path}: {kind}, not a log file (save the output to a file first)\n"
    assert not (tmp_path / "t.duckdb").exists()


def test_ctrl_c_while_ingest_imports_the_store_is_one_line(monkeypatch, capsys, tmp_path):
    """Ctrl-C in the first moments of an ingest (while the store module is imported) once gave a
    39-line UnboundLocalError traceback ('StoreError' in the except clause was never bound)."""
    import types

    class Interrupted(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__") and name != "__path__":  # pytest's traceback rendering asks every module for
                raise AttributeError(name)  # __file__ (inspect.getmodule): a Ctrl-C there would end the whole session
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "storagelab.store", Interrupted("storagelab.store"))
    rc = cli.main(["ingest", str(FIO), "--db", str(tmp_path / "t.duckdb"), "--quiet"])
    assert rc == 130
    assert capsys.readouterr().err.startswith("storagelab ingest: interrupted")


def test_build_whose_ingest_was_refused_runs_no_notebook(monkeypatch, capsys, project_built):
    """Issue 13, case 23: an ingest refused (database in use, a manifest mistake) stops `build` at once
    (exit 2), rather than rendering every report from the database it did not update. It takes reports/' build
    lock: after the build `./run test` runs beside the tests (`project_built`), and waits for another test's command
    holding it (a clean-clone run found reports/ held by another test's build)."""
    from storagelab import report

    monkeypatch.setattr(cli, "cmd_ingest", lambda args: 2)
    ran = []
    monkeypatch.setattr(report, "run_notebooks", lambda *a, **k: ran.append(1) or [])
    monkeypatch.setattr(report, "build_plan", lambda *a, **k: ran.append(1) or [])
    assert cli.main(["build", "--wait", "600"]) == 2 and ran == []
    assert capsys.readouterr().err == "storagelab build: the ingest did not run; no report was built\n"


def test_parse_into_a_closed_pipe_is_quiet():
    # enough output to fill the pipe, read by `head -1`
    files = " ".join([str(FIO)] * 60)
    cmd = f'{sys.executable} -m storagelab parse {files} | head -1; echo "rc=${{PIPESTATUS[0]}}" >&2'
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=ENV)
    assert r.stdout.startswith('{"table": "files"') and len(r.stdout.splitlines()) == 1
    assert r.stderr == "rc=0\n"  # no BrokenPipeError, no "Exception ignored" line


# ----------------------------------------------------------------------------- the guard in main()


@pytest.mark.parametrize(
    "exc, rc, err",
    [
        (KeyboardInterrupt(), 130, "storagelab sql: interrupted\n"),
        (
            __import__("storagelab.errors").errors.DatabaseBusyError("db.duckdb is in use by another process"),
            2,
            "storagelab sql: db.duckdb is in use by another process\n",
        ),
        (
            FileNotFoundError("x.duckdb does not exist: run `storagelab ingest` (or ./run build) first"),
            2,
            "storagelab sql: x.duckdb does not exist: run `storagelab ingest` (or ./run build) first\n",
        ),
        (
            PermissionError(13, "Permission denied", "/root/x.log"),
            2,
            "storagelab sql: /root/x.log: Permission denied\n",
        ),
    ],
)
def test_guard_turns_exceptions_into_one_line(capsys, exc, rc, err):
    def boom(args):
        raise exc

    assert cli._guarded(argparse.Namespace(cmd="sql", func=boom)) == rc
    assert capsys.readouterr().err == err


def test_missing_database(tmp_path):
    r = storagelab("sql", "SELECT 1", "--db", str(tmp_path / "none.duckdb"))
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith("storagelab sql: ") and "none.duckdb" in r.stderr


def test_ctrl_c_exits_130_with_one_line(seed_db):
    p = subprocess.Popen(
        [sys.executable, "-m", "storagelab", "sql", "-", "--db", str(seed_db)],
        env=ENV,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # not ignored, even if it is here
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(4)  # started and waiting for the query on stdin
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert (p.returncode, out, err) == (130, "", "storagelab sql: interrupted\n")


# ----------------------------------------------------------------------------- ./run


def test_run_has_the_cli_verbs():
    tasks = subprocess.run([str(ROOT / "run"), "help"], capture_output=True, text=True, check=True).stdout
    for verb in ("ingest", "parse", "sql", "notebooks", "report", "build", "lab", "schema"):
        assert f"\n  {verb} " in tasks, verb


def test_run_test_help_does_not_build():
    t0 = time.monotonic()
    r = subprocess.run([str(ROOT / "run"), "test", "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stderr == "" and time.monotonic() - t0 < 10
    assert r.stdout.startswith("usage: ./run test [PYTEST ARGS]\n")
    for task in ("lock", "schema"):
        r = subprocess.run([str(ROOT / "run"), task, "-h"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and r.stdout.startswith(f"usage: ./run {task}\n")


def test_run_uses_an_active_conda_env_that_has_the_project(tmp_path):
    """CONDA_PREFIX whose python imports storagelab from this checkout: ./run uses it, builds no .venv/."""
    prefix = tmp_path / "conda-env"
    (prefix / "bin").mkdir(parents=True)
    kernel = prefix / "share" / "jupyter" / "kernels" / "storagelab"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text("{}")  # registered already (./run registers it when missing)
    marker = tmp_path / "used"
    py = prefix / "bin" / "python"
    py.write_text(f'#!/bin/sh\necho used >> {marker}\nPYTHONPATH={ROOT / "lib"} exec {sys.executable} "$@"\n')
    py.chmod(0o755)
    env = dict(os.environ, CONDA_PREFIX=str(prefix))
    r = subprocess.run([str(ROOT / "run"), "cli", "--version"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stdout == f"storagelab {__version__}\n", r.stderr
    assert "==> creating" not in r.stderr and "==> installing" not in r.stderr
    assert marker.read_text().count("used") == 2  # the import check, then the command


@pytest.mark.parametrize("name", ["manifest.csv", "runs.parquet", "x.json"])
def test_db_naming_a_data_file_is_refused_not_an_in_memory_database(tmp_path, name):
    """DuckDB opens a .csv/.parquet/.json path as an in-memory database holding it as a table: an ingest there
    reported 'ingested 1' and kept nothing, and sql said the file was read-only (new-user trial)."""
    data = tmp_path / name
    data.write_text("a,b\n1,2\n" if name.endswith(".csv") else "")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "zdb.txt").write_bytes((RAW.parent.parent / "tests" / "fixtures" / "zdb" / "2.3" / "b.txt").read_bytes())
    want = (
        "is not a DuckDB database file: DuckDB reads it as a data file (CSV, Parquet, JSON). --db takes a database file"
    )
    for args in (["sql", "SELECT 1"], ["ingest", str(logs)]):
        r = storagelab(*args, "--db", str(data))
        assert r.returncode == 2 and f"{data} {want}" in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert "ingested" not in r.stdout
    assert not list(tmp_path.glob("*-parquet"))


_SYSTEM_ERROR = """
import sys
from storagelab import cli
def fails(args):
    raise SystemError("error return without exception set")
cli.cmd_sql = fails
sys.exit(cli.main(["sql", "select 1"]))
"""


@pytest.mark.parametrize("limited", [True, False], ids=["ulimit -v set", "no limit"])
def test_a_native_librarys_systemerror_under_a_memory_limit_is_out_of_memory_in_one_line(limited):
    """CI (session 35): under `ulimit -v 890000` DuckDB's table creation returned an error without an exception, and
    the ingest ended in CPython's SystemError traceback. Under an address-space limit that is running out of memory,
    said in one line with what to do (exit 2); without a limit it is a bug, and its traceback stays."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (64 << 30, resource.RLIM_INFINITY))

    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    r = subprocess.run(
        [sys.executable, "-c", _SYSTEM_ERROR],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=limit if limited else None,
        timeout=60,
    )
    if limited:
        assert r.returncode == 2 and r.stderr == (
            "storagelab sql: out of memory (SystemError: error return without exception set): raise the memory limit "
            "(ulimit -v), or give fewer files at a time or fewer --workers\n"
        ), r.stderr
    else:
        assert (
            r.returncode == 1
            and "Traceback" in r.stderr
            and r.stderr.rstrip().endswith("SystemError: error return without exception set")
        ), r.stderr
