"""`storagelab run NOTEBOOK -p NAME VALUE`: parameters are checked against the notebook's
``parameters`` cell before anything runs (papermill alone only warns), then injected and used.

A tiny notebook in a project of its own (STORAGELAB_ROOT=tmp) keeps the executed runs fast and
out of reports/; one call on a real notebook checks the unknown-parameter error end to end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from storagelab import cli, paths, report
from storagelab.errors import ParameterError
from storagelab.nbtools import code, new

ROOT = Path(__file__).resolve().parents[1]

TINY_PARAMS = """
factor = 2.0        # float
count = 3           # int
name = "disk"       # str
verbose = False     # bool
sizes = [1, 2]      # list
"""
TINY_BODY = """
print(f"result={factor * count!r} name={name!r} verbose={verbose!r} sizes={sizes!r}")
print(f"types={type(factor).__name__},{type(count).__name__},{type(name).__name__},{type(verbose).__name__}")
"""


@pytest.fixture
def project(tmp_path):
    """A project root with notebooks/tiny.ipynb and notebooks/other.ipynb (no 'factor')."""
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    new([code(TINY_PARAMS, "parameters"), code(TINY_BODY)], nbs / "tiny.ipynb")
    new([code('label = "x"', "parameters"), code("print(label)")], nbs / "other.ipynb")
    return tmp_path


def storagelab(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, STORAGELAB_ROOT=str(project), PYTHONPATH=str(ROOT / "lib"))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], env=env, cwd=project, capture_output=True, text=True, timeout=300
    )


def executed(project: Path) -> list[str]:
    return sorted(p.name for p in (project / "reports").glob("*/executed/*.ipynb"))


# ----------------------------------------------------------------------------- errors, through the CLI


def test_unknown_parameter_is_an_error_and_nothing_runs(project):
    r = storagelab(project, "run", "tiny", "-p", "facter", "1.5")
    assert r.returncode == 2
    assert "storagelab run: tiny.ipynb: unknown parameter 'facter'" in r.stderr
    assert "factor (default 2.0), count (default 3), name (default 'disk')" in r.stderr  # says what is known
    assert "Traceback" not in r.stderr and "==> running" not in r.stdout
    assert executed(project) == []


def test_unknown_parameter_of_a_real_notebook(tmp_path):
    r = storagelab(tmp_path, "run", str(paths.NOTEBOOKS / "07_explore.ipynb"), "-p", "db", "x.duckdb")
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "storagelab run: 07_explore.ipynb: unknown parameter 'db'; parameters are: db_path (default ''), study "
        "(default ''), stack (default ''), vdev_type (default ''), host (default '')"
    )
    assert executed(tmp_path) == []


def test_parameter_of_one_notebook_is_given_to_it_and_the_other_told(project):
    # the parameter is valid for tiny but unknown to other: tiny takes it, other runs without it, one line says so
    r = storagelab(project, "run", "tiny", "other", "-p", "factor", "1.5", "--no-report")
    assert r.returncode == 0, r.stderr
    assert "note: parameter factor is given to tiny only; other takes no such parameter" in r.stderr.splitlines()
    assert executed(project) == ["other.ipynb", "tiny.ipynb"]


def test_parameter_no_named_notebook_takes_stops_all(project):
    r = storagelab(project, "run", "tiny", "other", "-p", "facter", "1.5")
    assert r.returncode == 2
    assert r.stderr.strip() == (
        "storagelab run: unknown parameter 'facter': none of the notebooks to run takes it (tiny, other)"
    )
    assert executed(project) == []


def test_dedup_parameter_with_recordsize_notebook():
    """h5 L6: `run notebooks 04_dedup_ddt 02_recordsize -p bytes_per_entry 400` was refused whole."""
    from storagelab.nbparams import resolve, validate_each

    nbs = [resolve("04_dedup_ddt"), resolve("02_recordsize")]
    plans, notes = validate_each(nbs, {"bytes_per_entry": 400, "study": "H5 zfsbox"})
    assert [(nb.stem, p) for nb, p in plans] == [
        ("04_dedup_ddt", {"bytes_per_entry": 400, "study": "H5 zfsbox"}),
        ("02_recordsize", {"study": "H5 zfsbox"}),
    ]
    assert notes == [
        "note: parameter bytes_per_entry is given to 04_dedup_ddt only; 02_recordsize takes no such parameter"
    ]


# ----------------------------------------------------------------------------- type checks (in-process: fast)


@pytest.fixture
def run_cli(project, monkeypatch, capsys):
    monkeypatch.setattr(paths, "REPORTS", project / "reports")

    def run(*args: str) -> tuple[int, str]:
        rc = cli.main(["run", str(project / "notebooks" / "tiny.ipynb"), *args])
        return rc, capsys.readouterr().err

    return run


@pytest.mark.parametrize(
    "args, message",
    [
        (["-p", "factor", "fast"], "parameter factor expects float (default 2.0); got 'fast', which is not a literal"),
        (["-p", "factor", "nan"], "parameter factor expects float (default 2.0); got 'nan', which is not a literal"),
        (["-p", "factor", "1e999"], "parameter factor must be a finite number, got inf"),  # issue 13, case 60
        (["-p", "factor", "(-1e999)"], "parameter factor must be a finite number, got -inf"),
        (["-p", "factor", "'2.5'"], "parameter factor expects float (default 2.0); got str '2.5'"),
        (["-p", "count", "True"], "parameter count expects int (default 3); got bool True"),
        (["-p", "count", "2.5"], "parameter count expects int (default 3); got float 2.5"),
        (["-p", "verbose", "1"], "parameter verbose expects bool (default False); got int 1"),
        (["-p", "sizes", "4"], "parameter sizes expects list (default [1, 2]); got int 4"),
        (["-r", "count", "5"], "-r gives a string, but count expects int"),
        (["-p", "count", "4", "-p", "factor", "x"], "parameter factor expects float"),
    ],
)
def test_wrong_type_is_an_error_and_nothing_runs(run_cli, project, args, message):
    rc, err = run_cli(*args)
    assert rc == 2
    assert err.startswith("storagelab run: tiny.ipynb: ") and message in err, err
    assert executed(project) == []


NEGATIVE = {"a": ("-1e5", "-300000.0"), "b": ("-2.5E-3", "-0.0075"), "c": ("-7", "-21.0")}


@pytest.mark.e2e
def test_negative_numbers_in_any_notation_are_values_not_options(project):
    """argparse alone takes '-1e5' for an option ('expected 2 arguments'). Each notation is given to a float
    parameter of its own, in one run (one kernel, not three; issue 28), the last one just before an option."""
    new([code("a = 2.0\nb = 2.0\nc = 2.0", "parameters"), code('print(f"a={a * 3!r} b={b * 3!r} c={c * 3!r}")')],
        project / "notebooks" / "neg.ipynb")  # fmt: skip
    given = [x for name, (value, _) in NEGATIVE.items() for x in ("-p", name, value)]
    r = storagelab(project, "run", "neg", *given, "--no-report")
    assert r.returncode == 0, r.stderr
    out = next(project.glob("reports/*/executed/neg.ipynb")).read_text()
    assert " ".join(f"{name}={want}" for name, (_, want) in NEGATIVE.items()) in out


def test_validate_converts_cli_text_to_the_defaults_types(project):
    nb = project / "notebooks" / "tiny.ipynb"
    got = report.validate(nb, {"factor": "3", "count": "4", "verbose": "True", "sizes": "[4, 8]", "name": "1e3"})
    assert got == {"factor": 3.0, "count": 4, "verbose": True, "sizes": [4, 8], "name": "1e3"}
    assert type(got["factor"]) is float and type(got["count"]) is int
    assert report.validate(nb, {}, raw={"name": "[not, a, list]"}) == {"name": "[not, a, list]"}
    with pytest.raises(ParameterError, match="exactly one cell tagged 'parameters', found 0"):
        new([code("x = 1")], project / "notebooks" / "untagged.ipynb")
        report.validate(project / "notebooks" / "untagged.ipynb", {"x": "2"})
    new([code("x = len('ab')", "parameters")], project / "notebooks" / "computed.ipynb")
    with pytest.raises(ParameterError, match="parameter x must have a literal default"):
        report.notebook_parameters(project / "notebooks" / "computed.ipynb")


def test_every_notebook_declares_literal_parameters():
    for nb in report.list_notebooks():
        params = report.notebook_parameters(nb)
        assert "db_path" in params and params["db_path"] == "", nb.name  # every notebook can run on another database


# ----------------------------------------------------------------------------- a valid run


@pytest.mark.e2e
def test_valid_parameters_are_injected_and_used(project):
    r = storagelab(
        project,
        "run",
        "tiny",
        "-p",
        "factor",
        "3",
        "-p",
        "count",
        "4",
        "-p",
        "verbose",
        "True",
        "-p",
        "sizes",
        "[4, 8]",
        "-r",
        "name",
        "1e3 & <b>",
    )
    assert r.returncode == 0, r.stderr
    assert "==> running tiny.ipynb" in r.stdout
    assert executed(project) == ["tiny.ipynb"]
    (path,) = (project / "reports").glob("all--*/executed/tiny.ipynb")  # non-default values: a folder of their own
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.papermill.parameters == {
        "factor": 3.0,
        "count": 4,
        "verbose": True,
        "sizes": [4, 8],
        "name": "1e3 & <b>",
    }
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "factor = 3.0" in injected[0].source
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "result=12.0 name='1e3 & <b>' verbose=True sizes=[4, 8]" in out  # the values were used
    assert "types=float,int,str,bool" in out


# ----------------------------------------------------------------------------- failures, folders, listing


@pytest.mark.e2e
def test_a_failing_notebook_is_recorded_and_the_others_still_run(project):
    new(
        [code("x = 1  # a number", "parameters"), code("raise ValueError('no such pool: tank')")],
        project / "notebooks" / "broken.ipynb",
    )
    r = storagelab(project, "run", "broken", "other")
    assert r.returncode == 1
    assert "failed: broken (all): ValueError: no such pool: tank" in r.stderr and "Traceback" not in r.stderr
    assert executed(project) == ["broken.ipynb", "other.ipynb"]
    summary = json.loads((project / "reports" / "all" / "summaries" / "broken.json").read_text())
    assert summary["status"] == "failed" and summary["error"] == "ValueError: no such pool: tank"
    index = (project / "reports" / "index.html").read_text()
    assert "FAILED" in index and "ValueError: no such pool: tank" in index
    assert "Kernel is running over TCP" not in r.stderr


def test_report_folders_follow_the_selection_and_the_parameters(project):
    nb = project / "notebooks" / "sel.ipynb"
    new(
        [
            code('study = "a"  # which study\nstack = ""  # which stack\nfactor = 2  # a number', "parameters"),
            code("print(study)"),
        ],
        nb,
    )
    assert report.report_dir(nb, {}).name == "a"
    assert report.report_dir(nb, {"study": "mylab"}).name == "mylab"
    assert report.report_dir(nb, {"study": "mylab", "stack": "zfs"}).name == "mylab--stack-zfs"
    odd = report.report_dir(nb, {"study": "mylab", "factor": 3}).name
    assert (
        odd.startswith("mylab--")
        and odd != "mylab"
        and odd == report.report_dir(nb, {"study": "mylab", "factor": 3}).name
    )
    odd = report.report_dir(nb, {"study": "../../etc"})
    assert odd.parent == report.paths.REPORTS and odd.name.startswith("etc~")  # a folder name, never a path


def test_list_shows_every_parameter_with_type_default_and_meaning():
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "run", "--list"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "lib")),
        timeout=120,
    )
    assert r.returncode == 0
    assert "05_stacks: Stacks compared" in r.stdout
    assert "    inflation_margin         float  default 1.1" in r.stdout
    assert "flag runs faster than margin x the device's stated (approximate) limit" in r.stdout
    assert "    study                    str    default 'homelab-mergerfs'" in r.stdout


def test_kernel_noise_is_held_back_and_the_rest_passed_on(capfd):
    """jupyter_client interrupts every kernel before shutting it down; an idle ipykernel then logs
    'KeyboardInterrupt caught in kernel' on the stderr it shares with us (seen in `./run build`)."""
    with report._StderrFilter():
        os.write(2, b"[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.\n")
        os.write(2, b"[IPKernelApp] WARNING | Kernel is running over TCP without encryption. All ...\n")
        os.write(2, b"Traceback (most recent call last): a real problem\n")
    assert capfd.readouterr().err == "Traceback (most recent call last): a real problem\n"


def test_build_plan_leaves_out_a_notebook_that_is_gone(monkeypatch, seed_db):
    """A notebook a study's claims.csv names but notebooks/ no longer holds (removed or renamed) is
    left out of `build`'s plan; it was a KeyError traceback before any notebook ran (issue 13)."""
    every = report.list_notebooks()
    kept = [nb for nb in every if nb.stem != "01_vdev_scaling"]
    assert len(kept) == len(every) - 1
    monkeypatch.setattr(report, "list_notebooks", lambda: kept)
    plan = report.build_plan(seed_db)
    stems = {nb.stem for nb, _ in plan}
    assert "01_vdev_scaling" not in stems and {"05_stacks", "07_explore"} <= stems


@pytest.mark.e2e
def test_a_relative_db_path_is_from_where_the_command_runs(seed_db, tmp_path):
    """`storagelab run 07_explore -p db_path my.duckdb` from the database's folder (new-user trial: the notebook
    looked for my.duckdb in notebooks/ and failed)."""
    import shutil

    shutil.copy(seed_db, tmp_path / "my.duckdb")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "run", "07_explore", "-p", "db_path", "my.duckdb", "--no-report"]
        + ["--output", str(tmp_path / "out")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"'db_path': '{tmp_path / 'my.duckdb'}'" in r.stdout


@pytest.mark.parametrize(
    "params, message",
    [
        (["-p", "db_path", "/nonexistent/x.duckdb"], "-p db_path /nonexistent/x.duckdb: no such database"),
        (
            ["-p", "compare_with", "hostnas2"],
            "-p compare_with: 'hostnas2' in 'hostnas2': write a selection as key=value",
        ),
    ],
)
def test_a_shared_parameter_mistake_is_said_before_anything_runs(tmp_path, params, message):
    """A missing database or a selection that does not parse: one line, exit 2, and no failed report left in
    reports/ to stay on the index (new-user trial)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "run", "08_fio", *params, "--output", str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stderr.startswith(f"storagelab run: {message}"), r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "out").exists()
