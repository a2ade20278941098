"""JupyterLab as the analyst uses it: `storagelab lab` serves the notebooks, headless Chromium (Playwright)
opens 07 and 08, runs every cell on the storagelab kernel, and the charts draw, with no cell in error and
no request leaving the machine.

Needs the database `./run test` builds beside the tests (data/parsed/storagelab.duckdb) and Debian's chromium.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from headless import CHROMIUM, CHROMIUM_ARGS

from storagelab import paths

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "storagelab-test-" + os.urandom(8).hex()

pytestmark = [pytest.mark.browser]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory, project_built):
    """`storagelab lab` on a free loopback port, with its own Jupyter config/runtime folders (once the database
    `./run test` builds beside the tests is there: `project_built`); yields its URL."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    if not (paths.ROOT / "data" / "parsed" / "storagelab.duckdb").exists():
        pytest.skip("no database: ./run test builds it beside the tests (./run build)")
    home = tmp_path_factory.mktemp("jupyter")
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT / "lib"),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        HOME=str(home),
    )
    for _attempt in range(3):  # another server may take the port between its choice and the bind
        port = _free_port()
        log = (home / f"lab-{port}.log").open("w")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "storagelab",
                "lab",
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={TOKEN}",
                "--LabApp.expose_app_in_browser=True",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        if proc.poll() is None:
            break
    else:
        pytest.fail("JupyterLab did not start: " + (home / f"lab-{port}.log").read_text()[-2000:])
    yield url
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


@pytest.fixture(scope="module")
def chromium(playwright):
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    yield browser
    browser.close()


_WIDGET = "window.jupyterapp.shell.currentWidget"
_STATE_JS = f"""() => {{
  const w = {_WIDGET};
  const cells = w.content.model.toJSON().cells.filter(c => c.cell_type === 'code');
  const rendered = Array.from(w.node.querySelectorAll(
      '.jp-OutputArea-output img, .jp-OutputArea-output svg, .jp-OutputArea-output canvas'))
    .filter(e => {{ const r = e.getBoundingClientRect(); return r.width > 50 && r.height > 50; }});
  return {{
    kernel: w.sessionContext.session.kernel.name,
    counts: cells.map(c => c.execution_count),
    errors: cells.flatMap(c => c.outputs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)),
    charts: cells.filter(c => c.outputs.some(o => o.data && (o.data['image/svg+xml'] || o.data['image/png']
              || Object.keys(o.data).some(k => k.startsWith('application/vnd.vegalite'))))).length,
    rendered: rendered.length,
  }};
}}"""


def _run_all(chromium, url: str, notebook: str) -> tuple[dict, list[str], list[str]]:
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    outside, page_errors = [], []
    local = (url, url.replace("http:", "ws:"), "data:", "blob:")

    def route(r):
        if r.request.url.startswith(local):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda e: page_errors.append(str(e)))
    # a workspace of its own, reset: the notebook is the only document and the current widget
    stem = notebook.removesuffix(".ipynb")
    page.goto(f"{url}/lab/workspaces/test-{stem}/tree/notebooks/{notebook}?reset&token={TOKEN}")
    page.wait_for_function(
        f"() => window.jupyterapp?.shell.currentWidget?.context?.path === 'notebooks/{notebook}'"
        f" && {_WIDGET}.sessionContext?.session?.kernel?.status === 'idle'",
        timeout=120_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # done: every code cell has an execution count and the kernel is idle again
    page.wait_for_function(
        f"""() => {{ const w = {_WIDGET};
            const cells = w.content.model.toJSON().cells.filter(c => c.cell_type === 'code');
            return w.sessionContext?.session?.kernel?.status === 'idle'
                && cells.every(c => c.execution_count !== null); }}""",
        timeout=300_000,
    )
    state = page.evaluate(_STATE_JS)
    shots = paths.ROOT / "tests" / "_artifacts" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"jupyterlab-{notebook}.png"))
    page.close()
    return state, outside, page_errors


def test_notebook_runs_in_jupyterlab_on_the_storagelab_kernel_offline(lab, chromium):
    """08, in JupyterLab and Chromium: what this test alone shows is JupyterLab's part (the notebook's own kernel
    picked with no dialog, cells run top to bottom in it, charts drawn by JupyterLab's renderer, nothing fetched from
    the network), the same for any notebook; every notebook's run is the build's (test_notebook_outputs) and every
    report's charts are drawn in Chromium by test_reports. (It ran 07 too: 15 s more of a clean-clone run.)"""
    for notebook in ["08_fio.ipynb"]:
        state, outside, page_errors = _run_all(chromium, lab, notebook)
        assert state["kernel"] == "storagelab", notebook  # the notebook's own kernelspec, no picker
        assert state["counts"] and all(isinstance(n, int) for n in state["counts"]), (notebook, state["counts"])
        assert state["counts"] == sorted(state["counts"]), notebook  # run top to bottom, once each
        assert state["errors"] == [], notebook
        assert state["charts"] >= 1 and state["rendered"] >= state["charts"], (notebook, state)
        assert outside == [], notebook  # no request left the machine
        assert page_errors == [], notebook
