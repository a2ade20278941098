"""Reliability-24 (issue 26), environment: the programs storagelab starts, the paths they are given and what they find
from the working folder (docs/reliability-24-env.md)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import their_folder

from storagelab import ownership
from storagelab.lab.presets import PRESETS, build_runs


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_a_target_with_a_colon_is_one_folder_to_fio(tmp_path, monkeypatch):
    """`lab fio --target ROOT/t:b`: fio reads ":" in --directory as a list, so it put job 1's files in "b" relative to
    its working folder (another user's: their symlink b/<run>.1.0 had fio overwrite a file of root's). The command's
    --directory, given to fio itself (two jobs, from a folder holding b/, with ROOT/t beside ROOT/t:b), now keeps
    every file in ROOT/t:b."""
    target, beside, theirs = tmp_path / "t:b", tmp_path / "t", tmp_path / "w"
    for folder in (target, beside, theirs / "b"):
        folder.mkdir(parents=True)
    run = build_runs(PRESETS["smoke"], target=target, out=tmp_path / "out", rw=["write"], depth_jobs=[(1, 2)])[0]
    (directory,) = [a for a in run.argv if a.startswith("--directory=")]
    monkeypatch.chdir(theirs)
    argv = ["fio", "--name=j", directory, "--rw=write", "--bs=4k", "--size=4k", "--numjobs=2", "--output=/dev/null"]
    assert subprocess.run([*argv, "--unlink=0"], capture_output=True).returncode == 0
    assert sorted(p.name for p in target.iterdir()) == ["j.0.0", "j.1.0"]
    assert list(beside.iterdir()) == [] and list((theirs / "b").iterdir()) == []


def test_an_empty_home_or_xdg_folder_is_the_working_folder_and_is_checked(tmp_path, monkeypatch):
    """`cd THEIRS; HOME= storagelab report`: vl-convert, drawing the index's thumbnails in this process, read
    ./.fonts, .local/share/fonts and .config/fontconfig/fonts.conf from the working folder (strace: their fonts opened
    and drawn with); an empty XDG_DATA_HOME is "fonts" there, an empty XDG_CONFIG_HOME "fontconfig/fonts.conf". The
    check skipped empty values. From a folder of this user's they pass, as an empty PATH does."""
    theirs = their_folder(tmp_path)
    monkeypatch.chdir(theirs)
    for var in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        said = ownership.environment_refusal({var: ""})
        assert said is not None and said.startswith(f"the environment's {var} (.): {theirs} is another user's"), var
    assert ownership.environment_refusal({"XDG_CACHE_HOME": "", "TMPDIR": "", "JUPYTER_CONFIG_DIR": ""}) is None
    monkeypatch.chdir(tmp_path)
    assert ownership.environment_refusal({"HOME": "", "XDG_DATA_HOME": "", "XDG_CONFIG_HOME": ""}) is None


def _lab_argv(monkeypatch, extra: list[str]) -> list[str]:
    """The options `storagelab lab` starts JupyterLab with (Popen recorded, nothing started)."""
    from storagelab import cli  # noqa: PLC0415

    started: list[list[str]] = []

    def record(argv, **kwargs):
        started.append(argv)
        return SimpleNamespace(poll=lambda: 0, wait=lambda timeout=None: 0)

    with monkeypatch.context() as m:
        m.setattr(subprocess, "Popen", record)
        assert cli.cmd_lab(SimpleNamespace(extra=extra)) == 0
    return started[0][started[0].index("jupyterlab") + 1 :]


def test_jupyterlab_listens_on_the_address_its_urls_print(monkeypatch):
    """JupyterLab's default address "localhost" is bound as /etc/hosts lists it (here 127.0.0.1 only): with the second
    user's listener on [::1]:8888 it bound 127.0.0.1:8888 and printed http://localhost:8888/lab?token=...; `curl -6`
    (and Chromium, which takes localhost as ::1 first) sent that URL, token and all, to their listener. JupyterLab,
    given storagelab lab's options, now takes 127.0.0.1, the address its URLs then print; an address the user names
    is kept."""
    from jupyter_server.serverapp import ServerApp  # noqa: PLC0415

    def address(extra: list[str]) -> str:
        app = ServerApp()
        app.parse_command_line(_lab_argv(monkeypatch, extra))
        return app.ip

    assert address([]) == "127.0.0.1"
    assert address(["--ip=0.0.0.0"]) == address(["--ip", "0.0.0.0"]) == address(["--ServerApp.ip=0.0.0.0"]) == "0.0.0.0"


def test_a_brace_in_a_report_folders_name_is_not_read_as_papermills_parameter(tmp_path, monkeypatch):
    """`run 05_stacks --output '/root/h24w/o{study}'` -> "FAILED: PapermillMissingParameterException: Missing
    parameter 'study'": papermill formats both paths with the run's parameters (str.format); with the parameter given
    it wrote to another folder. Papermill itself runs here, with an engine that executes nothing (no kernel)."""
    import nbformat  # noqa: PLC0415
    from papermill.engines import Engine, papermill_engines  # noqa: PLC0415

    from storagelab import report  # noqa: PLC0415

    class Nothing(Engine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, **kw):
            pass

    monkeypatch.setattr(papermill_engines, "get_engine", lambda name=None: Nothing)
    nb = tmp_path / "n{x}.ipynb"
    cell = nbformat.v4.new_code_cell("study = None")
    cell.metadata["tags"] = ["parameters"]
    nbformat.write(
        nbformat.v4.new_notebook(
            cells=[cell], metadata={"kernelspec": {"name": "python3", "display_name": "p", "language": "python"}}
        ),
        nb,
    )
    for params in ({}, {"study": "x", "x": "y"}):
        out = tmp_path / f"o{{study}}{len(params)}"
        out.mkdir()  # claimed first, as run_notebooks does (a run no longer makes its folder: reliability-27)
        result = report._run_one(nb, params, out)
        assert result.ok, result.error
        assert (result.stage / "executed" / nb.name).is_file()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["n{x}.ipynb", "o{study}0", *([out.name] if params else [])]
        )


def test_a_study_label_with_a_glob_character_is_read_as_its_own_partition(tmp_path):
    """A study labelled "a*" beside a study "a" (as "w[z]" beside "wz"): the export's folder study=a* was read by
    DuckDB as a pattern matching study=a too, so open_dataset counted study a's file twice (and read w[z] as wz's),
    without a word. The export now escapes them as Hive and Spark do (study=a%2A), and a dataset whose folders still
    hold them is refused in one line; exported again, its partitions are written under their new names (an unchanged
    partition whose folder had another name kept no file: its rows were dropped)."""
    import duckdb  # noqa: PLC0415

    from storagelab import dataset  # noqa: PLC0415
    from storagelab.errors import StoreError  # noqa: PLC0415
    from storagelab.store.db import ensure_schema  # noqa: PLC0415

    con = duckdb.connect(str(tmp_path / "db.duckdb"))
    ensure_schema(con)
    for i, study in enumerate(("a", "a*")):
        con.execute("INSERT INTO files (file_id, tool, study, path) VALUES (?, 'fio', ?, ?)", [i, study, f"{i}.txt"])
    query = "SELECT study, count(*) FROM files GROUP BY 1 ORDER BY 1"
    dataset.export(con, tmp_path / "ds")
    assert dataset.open_dataset(tmp_path / "ds").execute(query).fetchall() == [("a", 1), ("a*", 1)]
    # the layout main wrote: the folder study=a* as the label reads
    meta = tmp_path / "ds" / dataset.META_DIR / "meta.json"
    for old in (tmp_path / "ds").glob("*/tool=fio/study=a%2A"):
        old.rename(old.with_name("study=a*"))
    meta.write_text(meta.read_text().replace("study=a%2A", "study=a*"))
    with pytest.raises(StoreError, match=r"study=a\*/.* holds \*, \? or \[, which DuckDB reads as a pattern"):
        dataset.open_dataset(tmp_path / "ds")
    # and exported again, the partition is written under its new name (its stamp unchanged, its files not kept)
    dataset.export(con, tmp_path / "ds")
    assert dataset.open_dataset(tmp_path / "ds").execute(query).fetchall() == [("a", 1), ("a*", 1)]


def test_sql_parquets_row_count_is_of_the_file_written(tmp_path):
    """`sql --parquet 'o[1].parquet'` on a terminal said "wrote 7 rows": the count read the name back with
    read_parquet, which DuckDB globs ([1] matched the o1.parquet beside it), not the 2 rows written."""
    import io  # noqa: PLC0415

    import duckdb  # noqa: PLC0415

    from storagelab import sqlout  # noqa: PLC0415

    con = duckdb.connect()
    con.execute(f"COPY (SELECT range AS x FROM range(7)) TO '{tmp_path / 'o1.parquet'}'")
    err = io.StringIO()
    rc = sqlout.run(
        con, "SELECT 1 AS x UNION ALL SELECT 2", parquet=str(tmp_path / "o[1].parquet"), err=err, terminal=True
    )
    assert rc == 0 and err.getvalue() == f"wrote 2 rows to {tmp_path / 'o[1].parquet'}\n"


def test_a_relative_storagelab_root_names_the_same_clone_in_the_programs_started(tmp_path):
    """`cd clone; STORAGELAB_ROOT=. storagelab run 05_stacks` -> "FAILED: FileNotFoundError: data/parsed/
    storagelab.duckdb does not exist: run `storagelab ingest`": the kernel runs in notebooks/ and took "." from the
    environment as its clone (and JupyterLab's kernels a relative STORAGELAB_REPORT_DIR as a folder under theirs). The
    values are now made absolute for this process and every program it starts (here a child in another folder, as
    the kernel is)."""
    import os  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from storagelab import paths  # noqa: PLC0415

    (tmp_path / "notebooks").mkdir()
    child = "import os; print(os.environ['STORAGELAB_ROOT']); print(os.environ['STORAGELAB_REPORT_DIR'])"
    code = f"from storagelab import paths; import subprocess, sys; print(paths.ROOT); subprocess.run([sys.executable, '-c', {child!r}], cwd='notebooks')"
    lib = str(Path(paths.__file__).resolve().parents[1])
    env = dict(os.environ, STORAGELAB_ROOT=".", STORAGELAB_REPORT_DIR="figs", PYTHONPATH=lib)
    got = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert got.stdout.splitlines() == [str(tmp_path), str(tmp_path), str(tmp_path / "figs")], got.stderr
