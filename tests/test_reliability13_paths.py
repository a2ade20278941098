"""Reliability-13 (issue 26), paths: the attacks of the campaign on every command that makes or names a path, done
again here as the second user did them (docs/reliability-13-paths.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import duckdb
import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab import cli, ownership

_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")


def _user(*argv: str) -> None:
    subprocess.run(argv, check=True, preexec_fn=_as_user(USER))


@_ROOT_ONLY
def test_sql_parquet_through_the_users_link_to_a_folder_of_roots_is_refused(shared_tmp, tmp_path, capsys):  # noqa: F811
    """Reliability-13 High: the user's symlink /tmp/h13rootlink2 -> /root/h13v (root's folder); root's `sql "SELECT
    'pwned' AS x" --parquet /tmp/h13rootlink2/victim --force` resolved the folder first (reliability-12's fix), saw
    root's own folder, and replaced the root-only victim (12 bytes, 0600) with a 204-byte Parquet file, mode 0644.
    Every other command refuses a symlink of another user's on the way; now sql --parquet does too."""
    roots = tmp_path / "roots"
    roots.mkdir()
    victim = roots / "victim"
    victim.write_text("root secret\n")
    victim.chmod(0o600)
    pub = shared_tmp / "pub"
    pub.mkdir()
    pub.chmod(0o1777)  # as /tmp
    link = pub / "h13rootlink"
    _user("ln", "-s", str(roots), str(link))
    db = tmp_path / "d.duckdb"
    duckdb.connect(str(db)).close()
    rc = cli.main(["sql", "SELECT 'pwned' AS x", "--db", str(db), "--parquet", str(link / "victim"), "--force"])
    assert rc == 2
    assert capsys.readouterr().err == (
        f"storagelab sql: --parquet {link / 'victim'}: {link} is a symlink of another user's ({USER}): another user "
        "could change where it leads; write it to a folder of your own\n"
    )
    assert victim.read_text() == "root secret\n"
    # a folder of theirs on the way, which they could turn into such a link at any time, is refused as well
    _user("mkdir", "-m", "755", str(pub / "theirs"))
    why = ownership.foreign_link(pub / "theirs" / "x", strict=True, steady=True)
    assert why == f"{pub / 'theirs'} is a folder of another user's ({USER}) on the way"
    # root's own path still passes
    assert cli.main(["sql", "SELECT 42 AS a", "--db", str(db), "--parquet", str(roots / "y.parquet")]) == 0
    assert Path(roots / "y.parquet").stat().st_size > 0


@_ROOT_ONLY
def test_temp_tmp_and_spark_programs_of_another_user_are_refused(shared_tmp):  # noqa: F811
    """Reliability-13 Medium 1: with TMPDIR unset, Python's tempfile reads TEMP, then TMP: root's `run` made its
    kernel folder in the user's TEMP, they renamed it away and put theirs in its place, and root's kernel wrote
    kernel.json and its five kernel-ipc sockets there (the same swap as reliability-11 Medium 1, through a variable the
    check did not list). PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON (run by Spark; spark-ingest keeps them) and
    STORAGELAB_REPORT_DIR (a notebook run by hand saves its figures there by name) are checked as well."""
    (shared_tmp / "pub").mkdir()
    (shared_tmp / "pub").chmod(0o1777)  # as /tmp
    theirs = shared_tmp / "pub" / "env"
    _user("mkdir", "-m", "755", str(theirs))
    for var in ("TEMP", "TMP", "STORAGELAB_REPORT_DIR"):
        assert ownership.environment_refusal({var: str(theirs)}) == (
            f"the environment's {var} ({theirs}): {theirs} is another user's (mode drwxr-xr-x): another user could "
            "put their own files under the names written or read there as you (a Jupyter kernel's startup scripts, "
            f"its connection file); unset {var} or give a folder of your own"
        )
    for var in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        why = ownership.environment_refusal({var: str(theirs / "python")})
        assert why is not None and why.startswith(f"the environment's {var} ({theirs}): {theirs} is another user's")
        assert ownership.environment_refusal({var: "python3"}) is None  # by name: PATH's entries are checked
    assert ownership.environment_refusal({"TEMP": "/tmp", "TMP": "/tmp", "PYSPARK_PYTHON": "/usr/bin/python3"}) is None


def test_a_missing_temporary_folder_in_a_sticky_folder_is_refused(tmp_path):
    """Reliability-13 Medium 2: TMPDIR=/tmp/h13M/t, missing, passed (its nearest folder, /tmp, is sticky, which
    TMPDIR may be); the user made /tmp/h13M/t, theirs, 1.2 s after root's `run` began, and root's kernel folder was
    then made in it and swapped for theirs as above. A temporary folder that does not exist is refused when another
    user could make it first; one in a folder of root's alone is not."""
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    assert ownership.environment_refusal({"TMPDIR": str(sticky / "m" / "t")}) == (
        f"the environment's TMPDIR ({sticky / 'm' / 't'}): {sticky / 'm' / 't'} does not exist, and {sticky} can be "
        "written by every user (mode drwxrwxrwt), so another user can make it first: another user could put their "
        "own files under the names written or read there as you (a Jupyter kernel's startup scripts, its connection "
        "file); unset TMPDIR or give a folder of your own"
    )
    assert ownership.environment_refusal({"TMPDIR": str(sticky)}) is None  # it exists: only new names made there
    assert ownership.environment_refusal({"TMPDIR": str(tmp_path / "mine" / "t")}) is None  # in root's own folder


def test_a_name_gone_while_the_environment_is_checked_is_one_line(tmp_path, monkeypatch, capsys):
    """Reliability-13 (reliability-12 Low 2 through the CLI): the user toggled /tmp/h13L between their link and no
    name while root ran `sql "SELECT 1"` with TMPDIR=/tmp/h13L/t: in 58 of 3000 runs of cli.main the link was there
    for realpath's lstat and gone for its readlink, and FileNotFoundError escaped main() (a traceback). Here the
    resolve raises as it did."""
    db = tmp_path / "d.duckdb"
    duckdb.connect(str(db)).close()
    real = Path.resolve

    def gone(self, strict=False):
        if str(self).startswith(str(tmp_path / "L")):
            raise FileNotFoundError(2, "No such file or directory", str(tmp_path / "L"))
        return real(self, strict=strict)

    monkeypatch.setattr(Path, "resolve", gone)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "L" / "t"))
    assert cli.main(["sql", "SELECT 1", "--db", str(db)]) == 2
    assert capsys.readouterr().err == (
        f"storagelab sql: the environment's TMPDIR ({tmp_path / 'L' / 't'}): {tmp_path / 'L'}: No such file or "
        "directory while it was checked (another user may be changing a name on its way): another user could put "
        "their own files under the names written or read there as you (a Jupyter kernel's startup scripts, its "
        "connection file); unset TMPDIR or give a folder of your own\n"
    )


def test_a_database_or_result_whose_name_is_not_utf8_is_one_line(tmp_path, capsys):
    """Reliability-12 Low 1 and reliability-13: `ingest/sql/export/compare --db /root/h13db/<0xff>/x.duckdb`,
    `export --dataset`, `sql --parquet` and `run --output` there each ended in a traceback (DuckDB's
    RuntimeError: std::bad_cast; the --parquet write a TypeError), `run -p db_path` in the notebook's."""
    from storagelab.store import StoreError, connect  # noqa: PLC0415

    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/\xff"))
    odd.mkdir()
    db = tmp_path / "d.duckdb"
    duckdb.connect(str(db)).close()
    assert cli.main(["sql", "SELECT 1", "--db", str(odd / "x.duckdb")]) == 2
    words = "its name is not UTF-8 (byte 0xff), which DuckDB (and the notebook files that record it) cannot take"
    assert capsys.readouterr().err == (
        f"storagelab sql: --db {tmp_path}/\\xff/x.duckdb: {words}; rename it, or give a path whose name is UTF-8\n"
    )
    assert cli.main(["sql", "SELECT 1", "--db", str(db), "--parquet", str(odd / "o.parquet")]) == 2
    assert f"--parquet {tmp_path}/\\xff/o.parquet: {words}" in capsys.readouterr().err
    with pytest.raises(StoreError, match=r"^the database .*: its name is not UTF-8 \(byte 0xff\)"):
        connect(odd / "y.duckdb")
