"""Reliability-15, the data side (docs/reliability-15-store.md): the readers that did not go through
``ingest_open.open_input``: `storagelab sql --db` and a dataset read by the notebooks (``dataset.open_dataset``)
read root's 0600 database and Parquet files through the second user's symlinks and showed root's rows."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)
from test_write_paths import _theirs, _user

from storagelab import cli, dataset, readcopies
from storagelab.database import schema_signature
from storagelab.errors import StoreError

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attack needs root and a second user")

REFUSED = (
    "reached through a symlink of the user {user}'s, it leads to a file of root's: not read (a link of another "
    "user's is followed only to a file of theirs; copy the file in instead)"
)


def _roots(folder: Path) -> Path:
    """Root's folder 0711 (the user may pass through it), the files in it 0600 or in 0700 folders."""
    (folder / "root").mkdir(mode=0o711)
    return folder / "root"


def test_sql_reads_no_database_of_roots_through_the_users_link(shared_tmp, capsys):  # noqa: F811
    """Reliability-15: root's `sql --db THEIRS/l.duckdb`, l.duckdb their symlink to root's 0600 database, printed
    root's rows (ROOTSECRET), exit 0: the database was opened by the name given. Now refused; so is their link to a
    database of their own (they could turn it once checked), while the path it leads to is read."""
    secret, data = _roots(shared_tmp) / "secret.duckdb", _theirs(shared_tmp)
    with duckdb.connect(str(secret)) as con:
        con.execute("CREATE TABLE t AS SELECT 'ROOTSECRET' AS x")
    secret.chmod(0o600)
    _user("ln", "-s", str(secret), str(data / "l.duckdb"))
    assert cli.main(["sql", "--db", str(data / "l.duckdb"), "SELECT x FROM t"]) == 2
    out, err = capsys.readouterr()
    assert "ROOTSECRET" not in out + err
    link = data / "l.duckdb"
    assert err == (  # reliability-15 paths (h3): any link of another user's as --db is refused, naming where it leads
        f"storagelab sql: {link}: {link} is a symlink of another user's ({USER}), who could turn it to any database of "
        f"yours once it is checked: not read; give the path it leads to ({secret}) if that is the database you mean\n"
    )
    with duckdb.connect(str(data / "mine.duckdb")) as con:
        con.execute("CREATE TABLE t AS SELECT 'theirs' AS x")
    os.chown(data / "mine.duckdb", *_ids())
    _user("ln", "-s", str(data / "mine.duckdb"), str(data / "m.duckdb"))
    assert cli.main(["sql", "--db", str(data / "m.duckdb"), "SELECT x FROM t", "--csv"]) == 2  # their link: refused
    assert cli.main(["sql", "--db", str(data / "mine.duckdb"), "SELECT x FROM t", "--csv"]) == 0  # the path it leads to
    assert capsys.readouterr().out == "x\ntheirs\n"


def _ids() -> tuple[int, int]:
    import pwd  # noqa: PLC0415

    pw = pwd.getpwnam(USER)
    return pw.pw_uid, pw.pw_gid


def _dataset(folder: Path, value: str) -> str:
    """A dataset of one table t (x VARCHAR) holding ``value``, as open_dataset reads one: the part file's path."""
    (folder / dataset.META_DIR).mkdir(parents=True)
    (folder / "t").mkdir()
    part = folder / "t" / "part-1.parquet"
    duckdb.sql(f"COPY (SELECT '{value}' AS x) TO '{part}' (FORMAT parquet)")
    meta = {
        "format": dataset.FORMAT,
        "schema_signature": schema_signature(),
        "tables": {"t": [["x", "VARCHAR"]]},
        "parts": {"t": {"t/part-1.parquet": part.stat().st_size}},
    }
    (folder / dataset.META_DIR / "meta.json").write_text(json.dumps(meta))
    return "t/part-1.parquet"


def test_a_dataset_read_reads_no_parquet_of_roots_through_the_users_links(shared_tmp):  # noqa: F811
    """Reliability-15: the notebooks' `-p db_path THEIRS/lds` (``open_dataset``), lds their symlink to root's dataset
    in a 0700 folder, read root's rows; so did their own dataset whose part file is their link to root's part file
    (meta.json, theirs, listing its name and size). Now both refused in one line; their own dataset is read."""
    roots = _roots(shared_tmp) / "ds"
    roots.mkdir(mode=0o700)
    rel = _dataset(roots, "ROOTSECRET")
    data = _theirs(shared_tmp)
    _user("ln", "-s", str(roots), str(data / "lds"))
    with pytest.raises(StoreError) as e:
        dataset.open_dataset(data / "lds")
    assert str(e.value) == f"{data / 'lds'}: {REFUSED.format(user=USER)}"
    _user("mkdir", str(data / "ds"))
    os.chown(data / "ds", 0, 0)  # made as the user, filled by root (duckdb here), then given back
    _dataset(data / "ds", "theirs")
    for p in [data / "ds", *(data / "ds").rglob("*")]:
        os.chown(p, *_ids())
    assert dataset.open_dataset(data / "ds").execute("SELECT x FROM t").fetchall() == [("theirs",)]
    (data / "ds" / "_storagelab" / "meta.json").write_text(
        (data / "ds" / "_storagelab" / "meta.json")
        .read_text()
        .replace(str((data / "ds" / rel).stat().st_size), str((roots / rel).stat().st_size))
    )
    _user("ln", "-sf", str(roots / rel), str(data / "ds" / rel))
    with pytest.raises(StoreError) as e:
        dataset.open_dataset(data / "ds")
    assert str(e.value) == f"{data / 'ds' / rel}: {REFUSED.format(user=USER)}"


def test_sql_reads_no_database_of_roots_swapped_in_after_the_check(shared_tmp, capsys, monkeypatch):  # noqa: F811
    """Reliability-15: the user renamed their symlink to root's database over their own database, in their folder,
    just after root's check (store-toggle.py: 130 of 486 `sql` connects read root's rows on main, 2 then 3 of 1500
    on the first fix, which resolved the name again and opened it by name). Now the file copied is checked to be the
    one checked, and refused when it is not."""
    secret, data = _roots(shared_tmp) / "secret.duckdb", _theirs(shared_tmp)
    with duckdb.connect(str(secret)) as con:
        con.execute("CREATE TABLE t AS SELECT 'ROOTSECRET' AS x")
    secret.chmod(0o600)
    with duckdb.connect(str(data / "t.duckdb")) as con:
        con.execute("CREATE TABLE t AS SELECT 'theirs' AS x")
    os.chown(data / "t.duckdb", *_ids())
    checked = readcopies.read_target

    def then_swapped(db):
        got = checked(db)
        _user("ln", "-s", str(secret), str(data / "l.tmp"))
        _user("mv", "-T", str(data / "l.tmp"), str(data / "t.duckdb"))
        return got

    monkeypatch.setattr(readcopies, "read_target", then_swapped)
    assert cli.main(["sql", "--db", str(data / "t.duckdb"), "SELECT x FROM t", "--csv"]) == 2
    out, err = capsys.readouterr()
    assert "ROOTSECRET" not in out + err
    assert err == (
        f"storagelab sql: {data / 't.duckdb'}: replaced while it was opened (its name or a folder on its way was swapped); not read\n"
    )


def test_a_dataset_read_reads_no_table_folder_of_roots_swapped_in_after_the_check(shared_tmp, monkeypatch):  # noqa: F811
    """Reliability-15: in their own dataset the user renamed a table folder and put their symlink to root's table
    folder (a part of the same name) in its place, after root's check of the parts and before DuckDB read them by
    name (store-dstoggle.py: 1 of 401 opens on main, 2 of 588 on the first fix read root's rows). Now a dataset
    another user can change is read from a private copy made through the descriptors checked."""
    roots = _roots(shared_tmp) / "ds"
    roots.mkdir(mode=0o700)
    rel = _dataset(roots, "ROOTSECRET")
    data = _theirs(shared_tmp)
    _user("mkdir", str(data / "ds"))
    os.chown(data / "ds", 0, 0)
    _dataset(data / "ds", "theirs")
    meta = data / "ds" / "_storagelab" / "meta.json"
    meta.write_text(
        meta.read_text().replace(str((data / "ds" / rel).stat().st_size), str((roots / rel).stat().st_size))
    )
    (data / "ds" / rel).write_bytes(b"\0" * (roots / rel).stat().st_size)  # the size meta.json lists: passes the check
    for p in [data / "ds", *(data / "ds").rglob("*")]:
        os.chown(p, *_ids())
    checked = dataset._refuse_if_unreadable

    def then_swapped(path, info):
        got = checked(path, info)
        _user("mv", str(data / "ds" / "t"), str(data / "ds" / "t.own"))
        _user("ln", "-s", str(roots / "t"), str(data / "ds" / "t"))
        return got

    monkeypatch.setattr(dataset, "_refuse_if_unreadable", then_swapped)
    with pytest.raises(StoreError) as e:
        dataset.open_dataset(data / "ds")
    assert str(e.value) == (
        f"{data / 'ds'}: cannot make this reader's private copy of {data / 'ds' / rel}: {REFUSED.format(user=USER)}"
    )
    assert not [p for p in Path("/tmp").glob(f"storagelab-read-{os.getpid()}-*")]  # the copy removed


def test_the_view_folder_of_a_killed_reader_is_removed_by_the_next(shared_tmp):  # noqa: F811
    """Reliability-15: root's `sql --db` of a database in a shared sticky folder reads it through a hard link in a
    0700 `.<db>.read-*` folder made beside it; a reader SIGKILLed between the folder's making and its removal left it
    for good (2 in 150 kills), holding a link to the database. Now named for its process: the next reader removes
    those of readers that are gone, never another user's folder of such a name."""
    import subprocess  # noqa: PLC0415

    from storagelab import readcopies as rc  # noqa: PLC0415
    from storagelab.database import connect  # noqa: PLC0415

    shared_tmp.chmod(0o1777)
    db = shared_tmp / "x.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
    dead = subprocess.run(  # a real reader process, gone: its pid and start time in the folder's name
        [
            "python3",
            "-c",
            "import os; print(os.getpid(), open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    left = shared_tmp / f".x.duckdb.read-{dead[0]}-{dead[1]}-abc"
    left.mkdir(mode=0o700)
    os.link(db, left / "x.duckdb")
    _user("mkdir", str(shared_tmp / f".x.duckdb.read-{dead[0]}-{dead[1]}-theirs"))
    con = connect(db, read_only=True)
    assert con.execute("SELECT x FROM t").fetchall() == [(1,)]
    con.close()
    assert not left.exists()
    assert sorted(p.name for p in shared_tmp.iterdir()) == [f".x.duckdb.read-{dead[0]}-{dead[1]}-theirs", "x.duckdb"]
    assert rc.dead_reader_prefix("p-") == f"p-{os.getpid()}-{rc.start_time(os.getpid())}-"


def test_no_room_for_a_datasets_private_copy_is_said_in_one_line(shared_tmp, monkeypatch):  # noqa: F811
    """Reliability-15: root's read of the user's dataset is from a private copy; with TMPDIR on a full 8 KiB tmpfs
    it said `cannot make this reader's private copy of None: No space left on device`."""
    import errno  # noqa: PLC0415

    data = _theirs(shared_tmp)
    _user("mkdir", str(data / "ds"))
    os.chown(data / "ds", 0, 0)
    _dataset(data / "ds", "theirs")
    for p in [data / "ds", *(data / "ds").rglob("*")]:
        os.chown(p, *_ids())

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("storagelab.readcopies.copy_exactly", full)  # (reliability-17: no longer copyfileobj)
    monkeypatch.setenv("TMPDIR", str(shared_tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    with pytest.raises(StoreError) as e:
        dataset.open_dataset(data / "ds")
    assert str(e.value) == (
        f"{data / 'ds'}: no room for this reader's private copy of the dataset (read so where another user can change "
        f"its files) in the temporary folder {shared_tmp} (No space left on device): free space there, or set TMPDIR "
        "to a folder of yours with room"
    )
    assert not list(shared_tmp.glob("storagelab-read-*"))


@pytest.mark.e2e  # one CLI run and the 3 s the stuck watcher gives the main thread (as test_stuck_read's)
@pytest.mark.skipif(not shutil.which("bindfs") or not os.path.exists("/dev/fuse"), reason="needs bindfs, /dev/fuse")
def test_ctrl_c_ends_a_sql_stuck_on_a_fuse_mount_that_never_answers(tmp_path):
    """Reliability-15: root's `sql --db` of a database on the user's bindfs, stopped (SIGSTOP): Ctrl-C left it waiting
    in the kernel (state D, request_wait_answer), and after it SIGTERM did not end it either, only kill -9 (main).
    Now the stuck watcher ingest has ends it: one line, exit 130."""
    from test_stuck_read import ctrl_c_when_stuck  # noqa: PLC0415

    def argv(src: Path, mnt: Path) -> list[str]:
        with duckdb.connect(str(src / "x.duckdb")) as con:
            con.execute("CREATE TABLE t AS SELECT 1 AS x")
        return ["sql", "--db", str(mnt / "x.duckdb"), "SELECT x FROM t"]

    assert ctrl_c_when_stuck(tmp_path, argv) == (  # main: still waiting (TimeoutExpired)
        130,
        "",
        "storagelab sql: interrupted while reading a file system that does not answer (a FUSE or network mount?); "
        "run it again once the mount answers\n",
    )
