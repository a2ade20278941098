"""Reliability-13 (issue 26), paths: the attacks of the campaign on every command that makes or names a path, done
again here as the second user did them (docs/reliability-13-paths.md)."""

from __future__ import annotations

import os
import shutil
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
    STORAGELAB_REPORT_DIR (a notebook run by hand saves its figures there by name) are checked as well. Medium 4:
    with JUPYTER_PLATFORM_DIRS=1, XDG_CONFIG_DIRS is Jupyter's system config path: the user's
    jupyter_server_config.py there ran as root in `storagelab lab` ("jupyter config ran as uid 0"); XDG_DATA_DIRS
    is its data path (kernel specs). Medium 5: STORAGELAB_ROOT naming the user's clone: `run 07_explore --output
    /root/h13run/o3` ran their notebook as root ("notebook of the user ran as uid 0")."""
    (shared_tmp / "pub").mkdir()
    (shared_tmp / "pub").chmod(0o1777)  # as /tmp
    theirs = shared_tmp / "pub" / "env"
    _user("mkdir", "-m", "755", str(theirs))
    for var in ("TEMP", "TMP", "STORAGELAB_ROOT", "STORAGELAB_REPORT_DIR", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS"):
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


def _exchange(a: Path, b: Path) -> None:
    """renameat2(a, b, RENAME_EXCHANGE), as the user's toggler did: both names always exist."""
    import ctypes  # noqa: PLC0415

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(a))


@_ROOT_ONLY
def test_a_folder_and_a_link_of_the_users_swapped_during_the_check_are_refused(shared_tmp, tmp_path, monkeypatch):  # noqa: F811
    """Reliability-13 High 2: the user swapped their folder /tmp/h13X and their link /tmp/h13X.l -> /root/h13t (root's)
    with renameat2's RENAME_EXCHANGE, so the name was never missing: the walk for links saw their folder (no link),
    the resolve saw their link (root's folder), and every check passed: 5 of 2000 tries for a database
    (file_refusal), 4 for the dataset/Parquet export's folder (made_refusal), 32 for spark-ingest's OUTPUT, 6 for
    `run --output`, 18 for the lab's --out. Here the swap is made around the resolve, as in the hits; every name on
    the way is now walked again after the checks, and one another user can change is refused."""
    from storagelab import runoutput  # noqa: PLC0415

    pub = shared_tmp / "pub"
    pub.mkdir()
    pub.chmod(0o1777)
    roots, theirs = tmp_path / "roots", pub / "h13X"
    (roots / "out").mkdir(parents=True)
    _user("mkdir", "-p", "-m", "755", str(theirs / "out"))
    _user("ln", "-s", str(roots), str(pub / "h13X.l"))
    real_resolve = Path.resolve

    def swapped(self, strict=False):  # the user's swap lands between the walk and the resolve, and back after
        if not str(self).startswith(str(theirs)):
            return real_resolve(self, strict=strict)
        _exchange(theirs, pub / "h13X.l")
        try:
            return real_resolve(self, strict=strict)
        finally:
            _exchange(theirs, pub / "h13X.l")

    monkeypatch.setattr(Path, "resolve", swapped)
    gone = f"{theirs} is a folder of another user's ({USER}) on the way"
    assert ownership.file_refusal(theirs / "x.duckdb", sticky_ok=False) == gone
    assert ownership.made_refusal(theirs / "out") == (gone, roots / "out")
    assert ownership.spark_output(str(theirs / "out"))[0] == (
        f"output {gone}: another user could put a symlink there under a name the run writes "
        "(_storagelab/.meta.json.<pid>.tmp, part files), and have it overwrite any file you can write; give a folder "
        "of your own (e.g. a new folder under it)"
    )
    assert runoutput._refusal(theirs / "out") == (
        f"--output {theirs / 'out'}: {gone}, who could swap it once it is checked: give a folder of your own",
        roots / "out",
    )
    if not shutil.which("fio"):
        return
    # the lab's --out (resolved once at its start; on main's code the run went on, fio wrote into roots/out)
    from storagelab.lab import cli as lab_cli  # noqa: PLC0415

    argv = ["fio", "--target", str(roots / "t"), "--out", str(theirs / "out"), "--rw", "write", "--depth-jobs", "1x1"]
    assert lab_cli.main([*argv, "--size", "1M", "--runtime", "1", "--no-ingest"]) == 2
    assert not (roots / "t").exists()


@_ROOT_ONLY
def test_a_fifo_named_as_the_database_is_refused_not_waited_on(shared_tmp):  # noqa: F811
    """Reliability-13 Medium 3: `sql "SELECT 1" --db THEIRS/fifo.duckdb` (the user's FIFO) waited for a writer for
    ever (Ctrl-C ended it: 130); root's own FIFO as `ingest --db` likewise. Now refused at once, in one line."""
    import threading  # noqa: PLC0415

    from storagelab.store import StoreError, connect  # noqa: PLC0415

    pub = shared_tmp / "pub"
    pub.mkdir()
    pub.chmod(0o1777)
    fifo = pub / "fifo.duckdb"
    _user("mkfifo", "-m", "644", str(fifo))
    raised: list[BaseException] = []

    def read() -> None:
        try:
            connect(fifo, read_only=True).close()
        except BaseException as e:  # noqa: BLE001
            raised.append(e)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    waited = reader.is_alive()
    if waited:  # main's code: DuckDB's open waits for a writer; be one, so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
    assert not waited
    assert len(raised) == 1 and isinstance(raised[0], StoreError)
    assert str(raised[0]) == f"{fifo} is not a regular file (prw-r--r--): give a DuckDB database file"


def test_a_dotdot_after_a_symlink_in_the_database_path_is_refused(tmp_path):
    """Reliability-13 Low 3: `ingest --db /proc/self/cwd/../../root/h13b/p.duckdb` was checked as the kernel follows
    it (/root/h13b/p.duckdb) and opened by DuckDB with the '..' dropped with the name before it
    (/proc/root/h13b/p.duckdb): the path checked was not the path opened. Through root's link /tmp/L -> /srv/a/b,
    `--db /tmp/L/../x.duckdb` would be checked as /srv/a/x.duckdb and opened as /tmp/x.duckdb."""
    from storagelab.store import StoreError, connect  # noqa: PLC0415

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "L").symlink_to(tmp_path / "a" / "b")
    given = tmp_path / "L" / ".." / "x.duckdb"
    with pytest.raises(StoreError) as e:
        connect(given)
    assert str(e.value) == (
        f"the database {given}: a '..' after a symlink leads to {tmp_path / 'a' / 'x.duckdb'}, but DuckDB would open "
        f"{tmp_path / 'x.duckdb'}; give the path without '..'"
    )
    assert not (tmp_path / "x.duckdb").exists() and not (tmp_path / "a" / "x.duckdb").exists()
    connect(tmp_path / "a" / ".." / "y.duckdb").close()  # a '..' that is no link's: the same path either way
    assert (tmp_path / "y.duckdb").exists()
