"""Reliability-20 (issue 26), environment: the programs storagelab starts and what they find from the working folder,
attacked as the second user did them (docs/reliability-20-env.md)."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from conftest import their_folder

_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")


def _lab_start(monkeypatch, extra: list[str]) -> tuple[list[str], dict]:
    """The command line and keywords `storagelab lab` starts JupyterLab with (Popen recorded, nothing started)."""
    from storagelab import cli  # noqa: PLC0415

    started: list[tuple[list[str], dict]] = []

    def record(argv, **kwargs):
        started.append((argv, kwargs))
        return SimpleNamespace(poll=lambda: 0, wait=lambda timeout=None: 0)

    with monkeypatch.context() as m:
        m.setattr(subprocess, "Popen", record)
        assert cli.cmd_lab(SimpleNamespace(extra=extra)) == 0
    return started[0]


GIVEN = ["--config=mine.py", "--notebook-dir", "mine.py", "--port", "8888", "--ServerApp.ip=localhost"]


@_ROOT_ONLY
def test_labs_kernels_started_without_a_path_are_not_run_in_the_working_folder(tmp_path, monkeypatch):
    """`cd THEIRS; storagelab lab`, then `POST /api/kernels {"name": "python3"}` (no path: a console, an extension)
    -> "their ipykernel_launcher ran as uid 0 cwd THEIRS", six times (the kernel and its five restarts). JupyterLab
    starts such a kernel in its own working folder, and the kernel spec's `python -m ipykernel_launcher` puts that
    folder first on sys.path. The kernel spec's module, looked up from the folder JupyterLab now runs in, is the
    venv's."""
    from storagelab import paths  # noqa: PLC0415

    theirs = their_folder(tmp_path)
    (theirs / "ipykernel_launcher.py").write_text("print('their ipykernel_launcher ran')\n")
    for name in ("mine.py", "8888", "localhost"):  # the last two: values that are not paths, planted as names
        (theirs / name).write_text("")
    monkeypatch.chdir(theirs)
    argv, kwargs = _lab_start(monkeypatch, [*GIVEN, "x=~/a"])
    # what jupyter_client's Popen for such a kernel inherits; "-c" puts the working folder first, as "-m" does
    found = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('ipykernel_launcher').origin)"],
        cwd=kwargs.get("cwd"),  # None: the working folder
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin"},
    )
    import ipykernel  # noqa: PLC0415

    assert found.stdout.strip() == os.path.join(
        os.path.dirname(os.path.dirname(ipykernel.__file__)), "ipykernel_launcher.py"
    )
    assert kwargs["cwd"] == str(paths.ROOT)
    # the user's relative paths among JupyterLab's options still name what they named from the working folder
    # and the other options' values are kept, whatever names the working folder holds
    made = [f"--config={theirs}/mine.py", "--notebook-dir", f"{theirs}/mine.py", "--port", "8888"]
    assert argv[argv.index(made[0]) :][:7] == [*made, "--ServerApp.ip=localhost", "x=~/a"]
    assert "x=~/a" in argv


@_ROOT_ONLY
def test_a_report_takes_neither_css_nor_images_from_the_working_folder(tmp_path, monkeypatch):
    """`cd THEIRS; storagelab report` (and run, build) -> root's reports held "THEIR CSS: every number below is wrong"
    and a blur over every output: nbconvert inlines "custom/custom.css" of its config_dir, "" (the working folder)
    unless given; and it embeds the images a markdown names from metadata.path, "" too."""
    import nbformat  # noqa: PLC0415

    from storagelab import rendering  # noqa: PLC0415

    theirs = their_folder(tmp_path)
    (theirs / "custom").mkdir()
    (theirs / "custom" / "custom.css").write_text('body::before{content:"h20 their css"}\n')
    (theirs / "pic.png").write_bytes(b"\x89PNG their picture")
    folder = tmp_path / "reports" / "mylab"
    (folder / "executed").mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# t\n\n![p](pic.png)")])
    nbformat.write(nb, str(folder / "executed" / "nb.ipynb"))
    monkeypatch.chdir(theirs)
    assert rendering.render_reports(only=folder) == [folder / "nb.html"]
    page = (folder / "nb.html").read_text()
    assert "h20 their css" not in page
    assert '<img alt="p" src="pic.png"' in page  # the markdown's own name, not their picture
    assert base64.b64encode(b"\x89PNG their picture").decode() not in page


def test_a_stop_signal_jupyterlab_loses_is_passed_on_again(monkeypatch):
    """`storagelab lab`, a kernel that dies at its start (restarted by JupyterLab), SIGTERM -> JupyterLab's shutdown
    failed (InvalidStateError in its log) and the lab still ran 20 s later; the second SIGTERM stopped it. Here the
    server is a shell that takes its first SIGTERM and stops at the second, started by cmd_lab as JupyterLab is; it
    ends by itself after 3 s (the old code's wait)."""
    import threading  # noqa: PLC0415

    from storagelab import cli, labstart  # noqa: PLC0415

    real = subprocess.Popen
    server = "trap 'trap - TERM' TERM; echo started; for i in $(seq 60); do sleep 0.05; done"

    def started(argv, **kwargs):
        proc = real(["sh", "-c", server], stdout=subprocess.PIPE, **kwargs)
        assert proc.stdout is not None and proc.stdout.readline() == b"started\n"
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM)).start()  # this process's stop, passed on
        return proc

    monkeypatch.setattr(subprocess, "Popen", started)
    monkeypatch.setattr(labstart, "AGAIN_AFTER", 0.2)
    began = time.monotonic()
    assert cli.cmd_lab(SimpleNamespace(extra=[])) == 143
    assert time.monotonic() - began < 1.5
    assert labstart._again == []
