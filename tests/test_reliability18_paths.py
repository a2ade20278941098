"""Reliability-18 (issue 26), paths: the attacks of the campaign on reliability-17's path and environment fixes,
done again here as the second user did them (docs/reliability-18-paths.md)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import their_folder

from storagelab import ownership

_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")


def test_lab_does_not_put_the_working_folder_first_on_jupyterlabs_sys_path(tmp_path, monkeypatch):
    """`cd THEIRS; storagelab lab` -> "their jupyterlab.py ran as uid 0": `python -m jupyterlab` puts the working
    folder first on sys.path. The interpreter options the lab starts JupyterLab with, run on a module found only in
    the working folder, must not find it."""
    from storagelab import cli  # noqa: PLC0415

    started = []

    class Started:
        def __init__(self, argv, **kwargs):
            started.append(argv)

        def poll(self):
            return 0

        def wait(self, timeout=None):
            return 0

    with monkeypatch.context() as m:
        m.setattr(subprocess, "Popen", Started)
        assert cli.cmd_lab(type("Args", (), {"extra": []})()) == 0
    argv = started[0]
    options = argv[1 : argv.index("-m")]
    (tmp_path / "h18probe.py").write_text("print('their module ran')\n")
    ran = subprocess.run(
        [argv[0], *options, "-m", "h18probe"], cwd=tmp_path, capture_output=True, text=True, env={"PATH": "/usr/bin"}
    )
    assert (ran.returncode, ran.stdout) == (1, "")
    assert ran.stderr.endswith("No module named h18probe\n")
    assert argv[0] == sys.executable


@_ROOT_ONLY
def test_jupyters_empty_and_slash_entries_are_the_working_folder_and_are_checked(tmp_path, monkeypatch):
    """`cd THEIRS; JUPYTER_CONFIG_PATH=:/etc/jupyter storagelab lab` (and `=/`) -> "their config ran as uid 0":
    jupyter_core keeps an empty entry and strips each one's trailing "/", so both are the working folder, and the
    check skipped the first and passed "/" as root's. JUPYTER_PATH (kernels, lab extensions) is read the same way."""
    import jupyter_core.paths  # noqa: PLC0415

    theirs = their_folder(tmp_path)
    monkeypatch.chdir(theirs)
    for var, value in (
        ("JUPYTER_CONFIG_PATH", ":/etc/jupyter"),
        ("JUPYTER_CONFIG_PATH", "/"),
        ("JUPYTER_PATH", "/usr/share/jupyter:"),
        ("JUPYTER_PATH", "//"),
    ):
        monkeypatch.setenv(var, value)
        read = jupyter_core.paths.jupyter_config_path() if "CONFIG" in var else jupyter_core.paths.jupyter_path()
        assert "" in read, value  # the library's own reading: the working folder
        monkeypatch.delenv(var)
        said = ownership.environment_refusal({var: value})
        assert said is not None and said.startswith(f"the environment's {var} (.): {theirs} is another user's"), value
    assert ownership.environment_refusal({"JUPYTER_PATH": "", "JUPYTER_CONFIG_PATH": "/etc/jupyter"}) is None


def test_the_loaders_origin_token_in_ld_variables_is_refused():
    """`LD_LIBRARY_PATH='$ORIGIN/../../tmp/theirs' storagelab lab fio` from a folder of root's -> "their library ran
    in fio as uid 0": the check took $ORIGIN for a missing folder under the working one (root's), the loader made it
    /usr/bin, fio's folder, and loaded their libaio.so.1 from /tmp/theirs."""
    for var, value in (
        ("LD_LIBRARY_PATH", "$ORIGIN/../../tmp/theirs"),
        ("LD_LIBRARY_PATH", "/usr/lib:${ORIGIN}/x"),
        ("LD_PRELOAD", "$LIB/x.so"),
        ("LD_AUDIT", "/usr/$PLATFORM/a.so"),
    ):
        said = ownership.environment_refusal({var: value})
        assert said is not None and said.startswith(f"the environment's {var} ({value}) holds the loader's $"), value


def test_a_relative_entry_is_checked_from_the_clones_top_where_lab_runs_kernels_too(tmp_path, monkeypatch):
    """`storagelab lab` runs a kernel in its notebook's folder, the clone's top for a notebook there: a relative
    PYTHONPATH entry `../theirs` passed, checked from the working folder and the notebooks folder only."""
    (tmp_path / "a" / "wd").mkdir(parents=True)
    (tmp_path / "clone" / "notebooks").mkdir(parents=True)
    (tmp_path / "theirs").mkdir(mode=0o777)  # 0777: another user's to write, whoever runs the test
    os.chmod(tmp_path / "theirs", 0o777)
    monkeypatch.chdir(tmp_path / "a" / "wd")
    monkeypatch.setattr(ownership, "_kernels_folder", lambda: str(tmp_path / "clone" / "notebooks"))
    monkeypatch.setattr(ownership, "_lab_folder", lambda: str(tmp_path / "clone"), raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "a"))  # r-21: Spark's folder is checked too, in there
    said = ownership.environment_refusal({"PYTHONPATH": "../theirs/pp"})
    assert said is not None and said.startswith(f"the environment's PYTHONPATH ({tmp_path}/clone/../theirs/pp): ")
    assert ownership.environment_refusal({"PYTHONPATH": "../wd"}) is None


def test_a_refused_lab_out_under_a_folder_others_can_swap_makes_no_folder(tmp_path, capsys):
    """`lab fio --out /tmp/W/a/b` (W root's, 0777 without the sticky bit) was made, then refused: root's empty a/b
    stayed in W, b inside root's a where no other user can remove it. Now refused before anything is made."""
    from storagelab.lab import cli as lab_cli  # noqa: PLC0415

    w = tmp_path / "w"
    w.mkdir()
    os.chmod(w, 0o777)
    assert lab_cli._not_shared(w / "a" / "b", "fio", "--out", lab_cli._OUT_WRITES, make=True) is False
    assert list(w.iterdir()) == []
    assert capsys.readouterr().err.startswith(f"storagelab lab fio: --out {w}/a/b is inside {w}, which can be written")
    assert lab_cli._not_shared(tmp_path / "own" / "c", "fio", "--out", lab_cli._OUT_WRITES, make=True) is True
    assert Path(tmp_path / "own" / "c").is_dir()


def test_a_folder_named_from_a_home_with_a_tilde_is_checked_where_it_leads(tmp_path, monkeypatch):
    """`IPYTHONDIR='~bob' storagelab run ...` -> "their startup ran as uid 0": IPython expands "~" and "~user", and
    the check took '~bob' for a missing folder under the working one (root's)."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chmod(theirs, 0o777)  # another user's to write, whoever runs the test
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(theirs))
    said = ownership.environment_refusal({"IPYTHONDIR": "~/ipy"})  # HOME not in it: the process's
    assert said is not None and said.startswith(f"the environment's IPYTHONDIR ({theirs}/ipy): {theirs} can be")
    assert ownership._home_of("~root/x", {}) == "/root/x"
    assert ownership._home_of("~", {"HOME": "/h"}) == "/h"


def test_a_refused_spark_ingest_output_under_a_folder_others_can_swap_is_not_made(tmp_path):
    """`spark-ingest OUT` with OUT=/tmp/W/a/b (W writable by every user, no sticky bit; or the user's own folder) was
    made, then refused: root's empty a/b were left there. Now refused before anything is made (no JVM started)."""
    w = tmp_path / "w"
    w.mkdir()
    os.chmod(w, 0o777)
    why, given = ownership.spark_output(str(w / "a" / "b"))
    assert (why or "").startswith(f"output {w}/a/b is inside {w}, which can be written by every user")
    assert (given, list(w.iterdir())) == (str(w / "a" / "b"), [])


def test_spark_ingests_python_workers_do_not_put_the_working_folder_first_on_sys_path(tmp_path, monkeypatch):
    """`cd THEIRS; storagelab spark-ingest IN OUT` -> "their pyspark ran ... as uid 0": Spark runs its Python workers
    as `python -m pyspark.daemon` in the working folder, which `-m` puts first on sys.path. The session sets
    PYTHONSAFEPATH for them (the builder recorded here: no JVM); with it, a module found only there is not found."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession  # noqa: PLC0415

    from storagelab import spark_ingest  # noqa: PLC0415

    settings = {}

    class Builder:
        def config(self, key, value):
            settings[key] = value
            return self

        def master(self, _):
            return self

        appName = master  # noqa: N815

        def getOrCreate(self):  # noqa: N802
            return self

        def stop(self):
            pass

    monkeypatch.setattr(SparkSession, "builder", Builder())
    spark_ingest.stop(spark_ingest.session())  # and its private temporary folder removed
    env = {key[len("spark.executorEnv.") :]: v for key, v in settings.items() if key.startswith("spark.executorEnv.")}
    (tmp_path / "h18probe.py").write_text("print('their module ran')\n")
    ran = subprocess.run(
        [sys.executable, "-m", "h18probe"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin", **env},
    )
    assert (ran.returncode, ran.stdout) == (1, "")


def test_a_semicolon_separates_ld_library_path_entries_as_the_loader_reads_them(tmp_path, monkeypatch):
    """`LD_LIBRARY_PATH='/usr/lib;/tmp/theirs' storagelab lab fio` -> "their library ran in fio as uid 0": the loader
    splits the list on ";" as on ":", the check took it for one missing folder under /usr (root's). An empty entry
    after a ";" is the working folder."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chmod(theirs, 0o777)  # another user's to write, whoever runs the test
    said = ownership.environment_refusal({"LD_LIBRARY_PATH": f"/usr/lib;{theirs}"})
    assert said is not None and said.startswith(f"the environment's LD_LIBRARY_PATH ({theirs}): {theirs} can be")
    monkeypatch.chdir(theirs)
    said = ownership.environment_refusal({"LD_LIBRARY_PATH": "/usr/lib;"})
    assert said is not None and said.startswith(f"the environment's LD_LIBRARY_PATH (.): {theirs} can be")
