"""The command line's task list and the JupyterLab entry point."""

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import ROOT

from storagelab import cli


def test_help_lists_every_task():
    out = subprocess.run(
        [sys.executable, "-m", "storagelab", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for cmd in ("ingest", "parse", "run", "report", "build", "schema", "sql", "lab"):
        assert cmd in out
    tasks = subprocess.run([str(ROOT / "run"), "help"], capture_output=True, text=True, check=True).stdout
    for task in ("build", "test", "test-quick", "ingest", "parse", "notebooks", "report", "lab", "bench"):
        assert f"  {task}" in tasks


def test_unknown_option_is_refused():
    out = subprocess.run([sys.executable, "-m", "storagelab", "ingest", "--bogus"], capture_output=True, text=True)
    assert out.returncode == 2 and "unrecognized arguments: --bogus" in out.stderr


def test_sql_error_is_a_message_not_a_traceback(seed_db):
    out = subprocess.run(
        [sys.executable, "-m", "storagelab", "sql", "SELECT nope FROM files", "--db", str(seed_db)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr and "nope" in out.stderr


@pytest.mark.slow
def test_lab_serves_the_project_notebooks(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "storagelab",
            "lab",
            "--no-browser",
            f"--port={port}",
            "--ip=127.0.0.1",
            "--IdentityProvider.token=t",
            f"--ServerApp.runtime_dir={tmp_path}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/notebooks?token=t", timeout=2) as r:
                    names = {c["name"] for c in json.load(r)["content"]}
                break
            except OSError:
                if time.monotonic() > deadline or p.poll() is not None:
                    raise
                time.sleep(0.5)
        assert {"04_dedup_ddt.ipynb", "07_explore.ipynb"} <= names
    finally:
        p.terminate()
        p.wait(20)


def test_ingest_prints_the_parsers_warnings_by_file_and_line(tmp_path, monkeypatch, capsys):
    """What a parser kept aside or had to assume reaches the user (it had been only in files.warnings): real outputs
    with a terse line beside the text and four 'IOPS=0' records; past FILE_WARNINGS_SHOWN they are counted."""
    import shutil

    from storagelab import cli

    pub = ROOT / "tests" / "fixtures" / "fio" / "published"
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("fio-3.1-terse-and-normal.txt", "fio-3.25-four-threads-iops0.txt"):
        shutil.copy(pub / name, raw / name)
    out = subprocess.run(
        [sys.executable, "-m", "storagelab", "ingest", str(raw), "--db", str(tmp_path / "x.duckdb"), "--no-parquet"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    warned = [ln for ln in out.stderr.splitlines() if ln.startswith("warning: ") and ".txt: line" in ln]
    assert warned == [
        f"warning: {raw}/fio-3.1-terse-and-normal.txt: line 5: 1 fio terse line beside the normal output not stored "
        "(the normal output is, with its printed rounding)",
        f"warning: {raw}/fio-3.25-four-threads-iops0.txt: line 12: write prints IOPS=0 for 72 I/Os in 84.546 s; "
        "stored their rate, 0.852 IOPS",
        f"warning: {raw}/fio-3.25-four-threads-iops0.txt: line 33: write prints IOPS=0 for 74 I/Os in 84.547 s; "
        "stored their rate, 0.875 IOPS",
        # fio 3.25 printed this group's bandwidth 3.7 % low (h6n P1: stored as io/run, 2368 MiB / 84.578 s)
        f"warning: {raw}/fio-3.25-four-threads-iops0.txt: line 54: bandwidth printed as 27.0MiB/s (29.4MB/s) but the "
        "line's io/run gives 28.00MiB/s (2368MiB in 84578 ms: +3.7 % on the printed figure); stored io/run (the line's "
        "29.4MB/s agrees with it)",
        f"warning: {raw}/fio-3.25-four-threads-iops0.txt: line 54: write prints IOPS=0 for 74 I/Os in 84.578 s; "
        "stored their rate, 0.875 IOPS",
        f"warning: {raw}/fio-3.25-four-threads-iops0.txt: line 75: write prints IOPS=0 for 73 I/Os in 84.578 s; "
        "stored their rate, 0.863 IOPS",
    ]
    monkeypatch.setattr(cli, "FILE_WARNINGS_SHOWN", 2)
    (tmp_path / "y.duckdb").unlink(missing_ok=True)
    assert cli.main(["ingest", str(raw), "--db", str(tmp_path / "y.duckdb"), "--no-parquet", "--quiet"]) == 0
    err = [
        ln
        for ln in capsys.readouterr().err.splitlines()
        if ln.startswith("warning: ") and "outside" not in ln and "no manifest at" not in ln
    ]
    assert err[:2] == warned[:2] and err[2:] == [
        'warning: 4 more parser warnings; all of them: storagelab sql "SELECT path, warnings FROM files WHERE '
        'warnings IS NOT NULL"'
    ]


def test_the_main_command_says_the_parser_warnings_in_one_line(tmp_path, capsys):
    """Issue 29: `build` printed 9 per-file parser warnings on the project's own demo data; it prints one line with
    their count and where they are (the ingest command alone still lists them by file and line)."""
    args = argparse.Namespace(
        paths=[str(ROOT / "data" / "raw")],
        db=str(tmp_path / "demo.duckdb"),
        manifest=None,
        no_parquet=True,
        workers=1,
        wait=0,
        quiet=True,
        batch_files=5000,
        one_warning_line=True,
    )
    assert cli.cmd_ingest(args) == 0
    warned = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("warning: ")]
    assert warned == [
        "warning: 9 parser warnings (what a parser kept aside or assumed, by line); all of them: "
        'storagelab sql "SELECT path, warnings FROM files WHERE warnings IS NOT NULL"'
    ]
