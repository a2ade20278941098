"""The command line's task list and the JupyterLab entry point."""

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import ROOT


def test_help_lists_every_task():
    out = subprocess.run(
        [sys.executable, "-m", "storagelab", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for cmd in ("ingest", "parse", "run", "report", "build", "schema", "sql", "lab"):
        assert cmd in out
    tasks = subprocess.run([str(ROOT / "run"), "help"], capture_output=True, text=True, check=True).stdout
    for task in ("build", "test", "ingest", "parse", "notebooks", "report", "lab", "bench"):
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
