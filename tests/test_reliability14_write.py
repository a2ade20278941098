"""Reliability-14 (issue 26), writing and processes: attacks on reliability-13's fixes, each a test that fails on the
code it was found on (main 6673d12)."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_sql_parquet_removes_only_the_temporary_files_it_made_itself(tmp_path):
    """Attack (main 6673d12): `sql "select 1" --parquet /root/h14wp/res` removed root's own `.res.77777.notes.tmp`
    beside it (any `.res.<digits>.*.tmp` of a process gone was taken for a killed write's), and, while another `sql
    --parquet /root/h14wp/res.2024.parquet` was writing, its `tmp_.res.2024.parquet.<pid>.XXXXXXXX.tmp` (read as
    process 2024): that write failed (`IO Error: Could not rename file ...`). Now only the exact names a write of
    this file makes (`.res.<pid>.<8 characters>.tmp`, DuckDB's `tmp_` one), of a process gone, are removed."""
    import duckdb  # noqa: PLC0415

    from storagelab import sqlout  # noqa: PLC0415

    not_its_own = {
        ".res.77777.notes.tmp": "my notes",
        ".res.77777.tmp": "another tool's",
        # a live write of res.999999.parquet (999999: above any pid_max, so `gone` to the old code)
        f".res.999999.parquet.{os.getpid()}.abcd1234.tmp": "",
        f"tmp_.res.999999.parquet.{os.getpid()}.abcd1234.tmp": "PAR1 part written",
    }
    for name, text in not_its_own.items():
        (tmp_path / name).write_text(text)
    for name in (".res.999998.k3j4h5g6.tmp", "tmp_.res.999998.k3j4h5g6.tmp"):  # a killed write of res: removed
        (tmp_path / name).write_text("cut")
    sqlout._write_parquet(duckdb.sql("select 42 x"), tmp_path / "res")
    left = {f.name: f.read_text() for f in tmp_path.iterdir() if f.name != "res"}
    assert left == not_its_own
    assert duckdb.sql(f"select x from read_parquet('{tmp_path / 'res'}')").fetchall() == [(42,)]


@pytest.mark.parametrize("fault", ["empty output", "manifest write"])
def test_lab_bonnie_on_a_full_out_keeps_no_run_a_re_run_would_skip(tmp_path, monkeypatch, fault):
    """Attack (main 6673d12): `lab bonnie --out` on a 2 MB tmpfs left with 0-1 KiB: bonnie++'s own writes of its
    output failed without a word and it ended 0; its empty output was renamed into OUT, the manifest write failed
    (`storagelab lab bonnie: [Errno 28] No space left on device`, exit 2) and was left empty; the re-run the help
    advises then said `lab bonnie: 1 of 1 runs already saved in OUT: skipped (resume)`, exit 0: the run lost, as
    saved (reliability-13's fio fix did not reach bonnie). Now a run whose output does not read back whole, or whose
    manifest row cannot be written, is a failed run kept outside OUT, and a re-run runs it. Here bonnie++ is one that
    ends 0 having written nothing (as on the full disk), or a real 2.00a output with the manifest write failing."""
    from storagelab.lab import bonnie as lab_bonnie  # noqa: PLC0415

    real = ROOT / "tests" / "fixtures" / "bonnie" / "2.00a" / "seeks_n0.out.txt"
    fake = tmp_path / "bonnie++"
    fake.write_text(f"#!/bin/sh\n{'true' if fault == 'empty output' else f'cat {real}'}\nexit 0\n")
    fake.chmod(0o755)
    if fault == "manifest write":

        def full(manifest, rows):
            manifest.write_text("file,la")  # a row cut short by the full disk
            raise OSError(errno.ENOSPC, "No space left on device", str(manifest))

        monkeypatch.setattr(lab_bonnie, "append_manifest", full)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the failed run's folder (mkdtemp), not left in /tmp
    out, target = tmp_path / "out", tmp_path / "t"
    lines: list[str] = []
    kw = dict(target=target, out=out, size_bytes=16 << 20, db=None, files=0, bonnie=str(fake), ingest=False)
    assert lab_bonnie.run_bonnie(**kw, log=lines.append) == 1, lines
    assert "not kept" in lines[-1], lines
    assert [f.name for f in out.iterdir()] == [], lines
    assert not any("skipped (resume)" in line for line in lines)


def test_the_jvms_class_paths_and_option_variables_naming_a_folder_others_can_write_are_refused(tmp_path):
    """Reliability-14 Medium 1: YARN_CONF_DIR and SPARK_DIST_CLASSPATH go on spark-ingest's JVM class path (Spark's
    launcher), and JAVA_TOOL_OPTIONS & co. load a -javaagent: jar before Spark's code; none was checked, so a folder
    the user could write handed their code to root's JVM. Each is now checked as a PATH entry is, by the folder of
    each entry."""
    from storagelab import ownership

    shared = tmp_path / "jars"
    shared.mkdir()
    shared.chmod(0o777)
    jar = shared / "agent.jar"
    for var, value in (
        ("SPARK_DIST_CLASSPATH", f"/usr/share/java/*:{shared}/*"),
        ("YARN_CONF_DIR", str(shared)),
        ("CLASSPATH", str(jar)),
        ("JAVA_TOOL_OPTIONS", f"-Xmx1g -javaagent:{jar}=x"),
        ("_JAVA_OPTIONS", f"-agentpath:{jar}"),
        ("JDK_JAVA_OPTIONS", f"-Xbootclasspath/a:/usr/share/java/x.jar:{jar}"),
        ("SPARK_SUBMIT_OPTS", f"-javaagent:{jar}"),
    ):
        why = ownership.environment_refusal({var: value})
        assert why is not None and why.startswith(
            f"the environment's {var} ({shared}): {shared} can be written by every"
        ), (var, why)
    assert ownership.environment_refusal({"JAVA_TOOL_OPTIONS": "-Xmx1g -Dfile.encoding=UTF-8"}) is None
    assert ownership.environment_refusal({"SPARK_DIST_CLASSPATH": "/usr/share/java/*"}) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the check as the user nobody")
def test_a_path_entry_under_a_folder_closed_to_this_user_is_judged_by_that_folders_owner():
    """A clean-clone run (root's /root 0700, root's PATH with /root/.cargo/bin kept for the user nobody): every command
    of nobody's was refused, 'the environment's PATH (/root/.cargo/bin): Permission denied while it was checked'.
    Nothing under a folder this user cannot enter is run or read as them: where only root (or they) can change that
    folder, the entry is passed; under another user's closed folder it is still refused (they could open it later)."""
    import pwd  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    import storagelab  # noqa: PLC0415

    nobody = pwd.getpwnam("nobody")
    shared = Path(tempfile.mkdtemp(prefix="storagelab-closed-", dir="/tmp"))
    try:
        shared.chmod(0o755)
        (shared / "roots" / "bin").mkdir(parents=True)
        (shared / "roots").chmod(0o700)
        (shared / "theirs" / "bin").mkdir(parents=True)
        os.chown(shared / "theirs", 1, 1)  # daemon's, closed
        (shared / "theirs").chmod(0o700)
        code = (
            "import sys; from storagelab import ownership; print(ownership.environment_refusal({'PATH': sys.argv[1]}))"
        )
        said = {}
        for name in ("roots", "theirs"):
            r = subprocess.run(
                ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups"]
                + [sys.executable, "-c", code, f"/usr/bin:{shared / name / 'bin'}"],
                capture_output=True,
                text=True,
                env=dict(os.environ, PYTHONPATH=str(Path(storagelab.__file__).resolve().parents[1])),
                cwd="/",
            )
            said[name] = r.stdout.strip() or r.stderr
        assert said["roots"] == "None"
        assert said["theirs"].startswith(f"the environment's PATH ({shared / 'theirs' / 'bin'}): "), said
    finally:
        shutil.rmtree(shared)
