"""Reliability-11 (docs/reliability-11-store.md): the attacks that broke, each done again as it was done, as root with
the real second user: a folder on a FUSE file system the user mounted, whose names it shows as root's; a WAL the user
puts beside a database read where no hard link can be made (a file system without them; a non-root reader of
another user's database)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)
from test_write_paths import _database_and_wal, _theirs, _user

from storagelab import database, ownership
from storagelab.store import StoreError, connect

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")]

# the machine's own mounts as bytes (a mount point need not be UTF-8: reliability-12 High 1)
_MOUNTS = Path("/proc/self/mountinfo")
# the line the kernel wrote in /proc/self/mountinfo for the attack (bindfs -u 0 -g 0 -p 0755 -o allow_other, run by
# storagelab-rel5, uid 1002, over a folder of theirs), with the mount point given by the test
_BINDFS = "54 27 0:50 / {at} rw,nosuid,nodev,relatime - fuse /tmp/h11u/src rw,user_id={uid},group_id={uid},default_permissions,allow_other\n"


def _uid() -> int:
    import pwd  # noqa: PLC0415

    return pwd.getpwnam(USER).pw_uid


def test_a_database_on_a_fuse_mount_of_another_users_is_refused(tmp_path, monkeypatch):
    """Reliability-11: the user's bindfs showed every name of their folder as root's, 0755; root's ingest made its
    database there and DuckDB appended its WAL to a root-only file through the user's symlink at <db>.wal. The
    kernel's record of who mounted it (user_id=) is what counts; a mount of root's own is not refused."""
    at = tmp_path / "mnt"
    at.mkdir()
    info = tmp_path / "mountinfo"
    monkeypatch.setattr(ownership, "MOUNTINFO", str(info))
    info.write_bytes(_MOUNTS.read_bytes() + _BINDFS.format(at=str(at).replace(" ", "\\040"), uid=_uid()).encode())
    with pytest.raises(
        StoreError,
        match=r"mnt, which is on a FUSE file system \(fuse of /tmp/h11u/src\) mounted by the user storagelab-rel5",
    ):
        connect(at / "sub" / "x.duckdb")
    assert not (at / "sub" / "x.duckdb").exists()
    assert ownership.shared(at).startswith(f"{at} is on a FUSE file system")
    assert not ownership.private_folder(at / "sub")
    info.write_bytes(_MOUNTS.read_bytes() + _BINDFS.format(at=at, uid=0).encode())  # root's own mount
    connect(at / "y.duckdb").close()


# bindfs on libfuse 3 comes with fusermount3, on libfuse 2 (Debian 12's bindfs 1.14) with fusermount: a machine
# with the second only left both tests' mounts behind, busy ("fusermount3" not found)
FUSERMOUNT = shutil.which("fusermount3") or shutil.which("fusermount") or "fusermount"


def _bindfs_as_user_ok() -> bool:
    try:
        lines = [line.split("#")[0].strip() for line in open("/etc/fuse.conf")]
    except OSError:
        return False
    return bool(shutil.which("bindfs")) and os.path.exists("/dev/fuse") and "user_allow_other" in lines


@pytest.mark.skipif(not _bindfs_as_user_ok(), reason="needs bindfs, /dev/fuse and user_allow_other in /etc/fuse.conf")
def test_the_users_real_bindfs_mount_is_refused(shared_tmp):  # noqa: F811
    """The attack itself: the user mounts bindfs over their folder, showing it as root's; root's ingest is refused."""
    src, at = _theirs(shared_tmp), shared_tmp / "pub" / "mnt"
    _user("mkdir", "-m", "755", str(at))
    _user("bindfs", "-u", "0", "-g", "0", "-p", "0755", "-o", "allow_other", str(src), str(at))
    try:
        assert at.stat().st_uid == 0
        with pytest.raises(StoreError, match=r"mounted by the user storagelab-rel5"):
            connect(at / "x.duckdb")
        assert os.listdir(src) == []
    finally:
        subprocess.run([FUSERMOUNT, "-u", str(at)], check=False)


def test_a_wal_planted_where_no_hard_link_can_be_made_is_not_read(shared_tmp, monkeypatch):  # noqa: F811
    """Reliability-11: root's database in a sticky folder on a file system without hard links (a FUSE one, here every
    link refused with EPERM as it refused them; the same error fs.protected_hardlinks gives a non-root reader of
    another user's database): _private_view fell back to opening it by name, and the user's WAL, toggled at
    <db>.wal, was replayed into root's `sql` (1 of 40 runs). The plant is made at the race's moment (just before
    DuckDB's open, as in reliability-10's test); root's own WAL is still read, and a writer's lock still stops it."""
    sticky, db, theirs, craft = _database_and_wal(shared_tmp)

    def no_link(*a, **k):
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "link", no_link)
    real = database.spill_config

    def plant_then(path=None):
        if not (sticky / "x.duckdb.wal").exists():
            _user("cp", str(theirs / "c.duckdb.wal"), str(sticky / "x.duckdb.wal"))
        return real(path)

    monkeypatch.setattr(database, "spill_config", plant_then)
    before = set(os.listdir("/tmp"))
    con = connect(db, read_only=True)
    assert con.execute("SELECT v FROM t").fetchall() == [("root",)]  # main: [('INJECTED',), ('root',)]
    con.close()
    assert (sticky / "x.duckdb.wal").stat().st_uid == _uid()  # planted, not read
    assert not {n for n in set(os.listdir("/tmp")) - before if n.startswith("storagelab-read-")}  # the copy removed
    with pytest.raises(StoreError, match=r"x.duckdb.wal is a file of another user's \(storagelab-rel5\), beside"):
        connect(db, read_only=True)
    (sticky / "x.duckdb.wal").unlink()
    monkeypatch.setattr(database, "spill_config", real)
    shutil.copy(craft / "c.duckdb.wal", sticky / "x.duckdb.wal")  # root's own WAL: read
    con = connect(db, read_only=True)
    assert con.execute("SELECT v FROM t ORDER BY v").fetchall() == [("INJECTED",), ("root",)]
    con.close()
    (sticky / "x.duckdb.wal").unlink()
    _user("ln", "-s", "/etc/shadow", str(sticky / "x.duckdb.wal"))  # a symlink there: never read by its name
    with pytest.raises(StoreError, match=r"x.duckdb.wal"):
        connect(db, read_only=True)
    (sticky / "x.duckdb.wal").unlink()
    held = subprocess.Popen(  # a writer holding the database: busy, as before
        [
            sys.executable,
            "-c",
            f"import duckdb,sys; c=duckdb.connect({str(db)!r}); print(1, flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        held.stdout.readline()
        with pytest.raises(database.DatabaseBusyError, match="is in use by another process"):
            connect(db, read_only=True)
    finally:
        held.kill()
        held.wait()


def test_under_umask_000_nothing_made_is_writable_by_others(shared_tmp):  # noqa: F811
    """Reliability-11: root's umask 000, a database in root's own 0755 folder: DuckDB made <db>.wal -rw-rw-rw-; after
    the ingest was SIGKILLed the user truncated it and root's `sql` then found no `files` table (the schema and the
    committed batches were in the WAL); `export --dataset` into root's 0755 folder refused its own 0777 _storagelab.
    Now the process takes group and other write out of its umask."""
    root = shared_tmp / "own"
    root.mkdir(mode=0o755)
    fio = os.path.join(os.path.dirname(__file__), "fixtures", "fio", "2.2.10")

    def storagelab(*argv, **env):
        return subprocess.run(
            [sys.executable, "-m", "storagelab", *argv],
            preexec_fn=lambda: os.umask(0),
            env={**os.environ, **env},
            capture_output=True,
            text=True,
        )

    killed = storagelab(
        "ingest", fio, "--db", str(root / "x.duckdb"), "--no-parquet", STORAGELAB_FAULT="batch-committed"
    )
    assert killed.returncode == -9
    wal = root / "x.duckdb.wal"
    assert wal.stat().st_mode & 0o777 == 0o644  # main: 0o666
    user = subprocess.run(
        ["/usr/bin/python3", "-c", f"open({str(wal)!r}, 'r+b').truncate(0)"],  # root's venv is out of their reach
        preexec_fn=_as_user(USER),
        capture_output=True,
        text=True,
    )
    assert "Permission denied" in user.stderr
    (root / "ds").mkdir(mode=0o755)
    done = storagelab("export", "--dataset", str(root / "ds"), "--db", str(root / "x.duckdb"))
    assert done.returncode == 0, done.stderr  # main: exit 2, "_storagelab can be written by every user"
    made = [p for p in root.rglob("*") if p.lstat().st_mode & 0o022]
    assert made == []
