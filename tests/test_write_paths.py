"""Every output path another user could change between the check and the write (docs/write-paths.md): each test
does the attack with the real second user (a swap loop, a folder they made first, a symlink they planted), as root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab import runoutput, sqlout
from storagelab.lab import cli as lab_cli
from storagelab.ownership import file_refusal, foreign_link
from storagelab.store import StoreError, connect

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")

_FLIP = """import os, sys, time
link, a, b = sys.argv[1:4]
print("flipping", flush=True)
end = time.time() + 20
while time.time() < end and not os.path.exists(sys.argv[4]):
    for t in (a, b):
        os.symlink(t, link + ".new")
        os.replace(link + ".new", link)"""

_FIO_NAMES = [".write-4k-qd1-nj1.txt.part", *(f"write-4k-qd1-nj1_{k}.1.log" for k in ("bw", "iops", "lat", "clat"))]


def _user(*argv: str) -> None:
    subprocess.run(argv, check=True, preexec_fn=_as_user(USER))


def _theirs(folder):
    """A folder the user made in a sticky world-writable one of root's (as /tmp)."""
    (folder / "pub").mkdir()
    (folder / "pub").chmod(0o1777)
    _user("mkdir", "-m", "755", str(folder / "pub" / "theirs"))
    return folder / "pub" / "theirs"


def _victim(folder):
    victim = folder / "victim"
    victim.write_text("root secret\n")
    victim.chmod(0o600)
    return victim


@pytest.mark.skipif(not shutil.which("fio"), reason="lab fio checks for fio first")
def test_lab_out_through_a_link_the_user_flips_is_refused(shared_tmp, capsys):  # noqa: F811
    """Attack (main a18e018): the user flips their link /tmp/.../L between a folder of root's and one of theirs whose
    fio log names are symlinks to a root-only file; `lab fio --out L`, 12 times: the lab walked L three times (the
    check, fio's argv, its writer), and at try 7 the check saw root's folder and fio wrote its log into the root file
    ('251, 2115, 1, 0, 0'). Now another user's link on the way is refused before anything is made."""
    victim, ours, theirs = _victim(shared_tmp), shared_tmp / "ours", shared_tmp / "theirs"
    ours.mkdir()
    theirs.mkdir()
    shutil.chown(theirs, USER)
    _user("mkdir", str(theirs / "own"))
    for name in _FIO_NAMES:
        _user("ln", "-s", str(victim), str(theirs / "own" / name))
    link, stop = theirs / "L", shared_tmp / "stop"
    flip = subprocess.Popen(
        ["/usr/bin/python3", "-c", _FLIP, str(link), str(ours), str(theirs / "own"), str(stop)],
        stdout=subprocess.PIPE, text=True, preexec_fn=_as_user(USER),
    )  # fmt: skip
    try:
        assert flip.stdout is not None and flip.stdout.readline() == "flipping\n"
        time.sleep(0.05)
        codes = [
            lab_cli.main(["fio", "--target", str(ours / "t"), "--out", str(link), "--rw", "write",
                          "--depth-jobs", "1x1", "--size", "1M", "--runtime", "1", "--no-ingest"])
            for _ in range(5)
        ]  # fmt: skip
    finally:
        stop.touch()
        flip.wait(30)
    assert codes == [2] * 5
    err = capsys.readouterr().err.splitlines()
    assert (
        err
        == [
            f"storagelab lab fio: --out {link}: {link} is a symlink of another user's ({USER}), who could turn it to a "
            "folder of theirs once it is checked; give the real path"
        ]
        * 5
    )
    assert victim.read_text() == "root secret\n"
    assert not (ours / "t").exists()


def test_a_database_or_parquet_result_in_a_folder_the_user_made_first_is_refused(shared_tmp):  # noqa: F811
    """Attack: the user makes the folder root names first and plants the final names as symlinks to a root-only
    file; `ingest --db THEIRS/x.duckdb` and `sql --parquet THEIRS/o.parquet` wrote there unchecked (DuckDB held the
    planted names; a swap of the folder's contents was the user's to make). Now both are refused, as the lab's and
    run's folders are."""
    victim, theirs = _victim(shared_tmp), _theirs(shared_tmp)
    for name in ("x.duckdb.wal", ".o.parquet.tmp"):
        _user("ln", "-s", str(victim), str(theirs / name))
    with pytest.raises(StoreError) as e:
        connect(theirs / "x.duckdb")
    assert str(e.value) == (
        f"{theirs / 'x.duckdb'}: {theirs / 'x.duckdb'} is in {theirs}, which is another user's (mode drwxr-xr-x): "
        "another user could change what it leads to, or put a symlink under a name DuckDB writes beside it "
        "(x.duckdb.wal, x.duckdb.tmp/) and have it overwrite any file you can write; give a database in a folder of "
        "your own"
    )
    why = sqlout.parquet_target_refused(str(theirs / "o.parquet"), str(shared_tmp / "db.duckdb"), force=False)
    assert why == (
        f"--parquet {theirs / 'o.parquet'}: {theirs / 'o.parquet'} is in {theirs}, which is another user's (mode "
        "drwxr-xr-x): another user could change what it leads to once it is checked; write it to a folder of your own"
    )
    assert victim.read_text() == "root secret\n"
    assert sorted(p.name for p in theirs.iterdir()) == [".o.parquet.tmp", "x.duckdb.wal"]


def test_a_symlink_the_user_planted_on_the_way_is_refused(shared_tmp):  # noqa: F811
    """Attack (reliability-8 Low 9, and High 1 one folder up): the user's symlink /tmp/.../x.duckdb -> a database of
    root's was followed (root's ingest wrote where the user chose), and `run --output THEIRLINK/rep` was refused only
    when the link was the last name. Now any symlink of another user's on the way is refused: as --db, as a folder
    of --output, and reached through a link of root's own."""
    ours, theirs = shared_tmp / "ours", _theirs(shared_tmp)
    ours.mkdir()
    _user("ln", "-s", str(ours / "r.duckdb"), str(theirs / "x.duckdb"))
    _user("ln", "-s", str(ours), str(theirs / "link"))
    os.symlink(theirs / "link", shared_tmp / "root-link")  # root's link to the user's link
    with pytest.raises(StoreError) as e:
        connect(theirs / "x.duckdb")
    assert str(e.value).startswith(f"{theirs / 'x.duckdb'}: {theirs / 'x.duckdb'} is a symlink of another user's ")
    assert not (ours / "r.duckdb").exists()
    why, _ = runoutput.refusal(theirs / "link" / "rep")
    assert why == (
        f"--output {theirs / 'link' / 'rep'}: {theirs / 'link'} is a symlink of another user's ({USER}), who could "
        "turn it once it is checked: give a folder of your own"
    )
    assert not (ours / "rep").exists()
    assert (
        foreign_link(shared_tmp / "root-link" / "a" / "b")
        == f"{theirs / 'link'} is a symlink of another user's ({USER})"
    )
    assert foreign_link(ours / ".." / "ours" / "x") is None
    assert file_refusal(ours / "new" / "x.duckdb") is None  # missing folders: this user makes them


def test_a_report_tree_in_a_folder_the_user_made_first_is_refused(shared_tmp):  # noqa: F811
    """Attack: the user makes the folder first (a clone, or STORAGELAB_ROOT, under /tmp) and plants reports/ with the
    names a build writes (its lock, an executed notebook) as symlinks to a root-only file; `build`, `report` and `run`
    took the tree unchecked (the lock's O_NOFOLLOW held; the notebooks and pages are written by name). Now the tree is
    checked as `run --output` is, before anything is opened in it."""
    from storagelab.errors import StoragelabError  # noqa: PLC0415
    from storagelab.reportlock import writing  # noqa: PLC0415

    victim, theirs = _victim(shared_tmp), _theirs(shared_tmp)
    _user("mkdir", "-p", str(theirs / "reports" / "executed"))
    _user("ln", "-s", str(victim), str(theirs / "reports" / "executed" / "07_explore.ipynb"))
    with pytest.raises(StoragelabError) as e, writing(theirs / "reports"):
        pass
    assert str(e.value) == (
        f"the report folder {theirs / 'reports'} is another user's (mode drwxr-xr-x); give a folder of your own"
    )
    assert victim.read_text() == "root secret\n"
    assert sorted(p.name for p in (theirs / "reports").iterdir()) == ["executed"]


def test_a_parquet_or_dataset_folder_planted_as_the_users_symlink_is_refused(shared_tmp):  # noqa: F811
    """Attack: `--db /tmp/x.duckdb` (a sticky folder: allowed) derives /tmp/x-parquet; the user plants that name as a
    symlink to a folder of root's they choose, and `--dataset` the same: the folder was resolved and checked (root's:
    fine), and the export wrote its <table>.parquet files and stamp where the user pointed. Now a symlink of another
    user's as the folder (or on its way) is refused, before the folder is made or written."""
    from storagelab import dataset  # noqa: PLC0415
    from storagelab.ownership import SharedFolderError  # noqa: PLC0415
    from storagelab.store.export import export_parquet  # noqa: PLC0415

    ours, pub = shared_tmp / "ours", _theirs(shared_tmp).parent
    ours.mkdir()
    _user("ln", "-s", str(ours), str(pub / "x-parquet"))
    _user("ln", "-s", str(ours), str(pub / "ds"))
    (shared_tmp / "dbs").mkdir()
    con = connect(shared_tmp / "dbs" / "x.duckdb")  # one in the sticky folder itself is refused since reliability-9
    try:
        with pytest.raises(SharedFolderError) as e:
            export_parquet(con, pub / "x-parquet")
        assert str(e.value).startswith(f"{pub / 'x-parquet'} is a symlink of another user's ({USER}): another user")
        with pytest.raises(SharedFolderError) as e:
            dataset._owned_folder(pub / "ds")  # export's check, before it writes (its queries need a full database)
        assert str(e.value).startswith(f"--dataset {pub / 'ds'} is a symlink of another user's ({USER}): another ")
    finally:
        con.close()
    assert list(ours.iterdir()) == []


def _grant_write(folder, tag, ident, *, default=False):
    """What `setfacl -m u:NAME:rwx` (tag 2) or `g:NAME:rwx` (tag 8) does, by the xattr itself (no acl package
    needed): the owner, group and other entries from the mode, the named entry and a mask allowing rwx."""
    import struct  # noqa: PLC0415

    mode = folder.stat().st_mode
    entries = [(0x01, mode >> 6 & 7, 0xFFFFFFFF), (tag, 7, ident), (0x04, mode >> 3 & 7, 0xFFFFFFFF)]
    entries += [(0x10, 7, 0xFFFFFFFF), (0x20, mode & 7, 0xFFFFFFFF)]
    packed = b"".join(struct.pack("<HHI", *e) for e in sorted(entries))  # the kernel wants them in tag order
    os.setxattr(folder, f"system.posix_acl_{'default' if default else 'access'}", struct.pack("<I", 2) + packed)


def test_a_folder_another_user_may_write_by_its_access_control_list_is_refused(tmp_path):
    """Reliability-10 High 1: root's folder (drwxr-xr-x) with `setfacl -m u:storagelab-rel5:rwx` showed drwxrwxr-x,
    group root, and was taken for root's alone: `ingest --db` there made the database, the user planted
    `<db>.wal -> /root/victim` once it existed (walplant.py) and DuckDB appended 3 MB of its log to the victim."""
    import pwd  # noqa: PLC0415

    from storagelab.ownership import private_folder, shared  # noqa: PLC0415

    user, group = tmp_path / "u", tmp_path / "g"
    user.mkdir(mode=0o755)
    (group / "sub").mkdir(parents=True, mode=0o755)
    _grant_write(user, 0x02, pwd.getpwnam(USER).pw_uid)
    _grant_write(group, 0x08, pwd.getpwnam(USER).pw_gid)  # the user's own group: it has the user in it
    assert oct(user.stat().st_mode & 0o777) == "0o775"  # the mode shows the mask only, group root
    with pytest.raises(
        StoreError, match=rf"is in {user}, which can be written by the user {USER} \(its access control"
    ):
        connect(user / "x.duckdb")
    with pytest.raises(StoreError, match=rf"is inside {group}, which can be written by the group {USER} \(its acc"):
        connect(group / "sub" / "x.duckdb")
    assert sorted(os.listdir(user)) == [] and sorted(os.listdir(group)) == ["sub"]
    assert shared(user) == f"{user} can be written by the user {USER} (its access control list) (mode drwxrwxr-x)"
    assert not private_folder(user) and not private_folder(group / "sub")
    plain = tmp_path / "plain"
    plain.mkdir(mode=0o755)
    connect(plain / "x.duckdb").close()  # no ACL: root's own folder, as before
    assert private_folder(plain) and shared(plain) is None


def test_a_folder_the_database_needs_is_checked_again_once_made(tmp_path):
    """Reliability-10 High 2: `ingest --db /srv/d/new/y.duckdb`, /srv/d root's 0755 with a default ACL naming the
    user (`setfacl -d -m u:storagelab-rel5:rwx`): the check saw /srv/d (theirs to write in: no), connect made `new`
    (theirs, by the default ACL), DuckDB made the database there, the user's `y.duckdb.wal -> /root/victim` followed:
    3 MB of WAL appended to the victim. Root's umask 000 makes such a folder as well (0777): the folder made is now
    checked too, and a default ACL refused as the folder's own."""
    import pwd  # noqa: PLC0415

    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    old = os.umask(0)
    try:
        with pytest.raises(
            StoreError, match=rf"{mine / 'new'}, which can be written by every user \(mode drwxrwxrwx\)"
        ):
            connect(mine / "new" / "x.duckdb")
    finally:
        os.umask(old)
    assert os.listdir(mine / "new") == []  # no database made there
    acl = tmp_path / "acl"
    acl.mkdir(mode=0o755)
    _grant_write(acl, 0x02, pwd.getpwnam(USER).pw_uid, default=True)
    with pytest.raises(StoreError, match=rf"is in {acl}, which can be written by what is made in it: the user {USER}"):
        connect(acl / "new" / "x.duckdb")


_CRAFT = """import duckdb, os, shutil, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = duckdb.connect(sys.argv[2])
c.execute("PRAGMA disable_checkpoint_on_shutdown"); c.execute("SET checkpoint_threshold='10GB'")
c.execute("INSERT INTO t VALUES ('INJECTED')")
os._exit(0)"""


def _database_and_wal(shared_tmp):  # noqa: F811
    """Root's database (0644) in a sticky world-writable folder, and the user's copy of a WAL crafted from it."""
    import duckdb  # noqa: PLC0415

    sticky = shared_tmp / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    db, theirs = sticky / "x.duckdb", _theirs(shared_tmp)
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t (v VARCHAR); INSERT INTO t VALUES ('root')")
    con.close()
    db.chmod(0o644)
    craft = shared_tmp / "craft"  # the WAL the user would make with a DuckDB of theirs (rel-9 craft.py): made here,
    craft.mkdir()  # and copied by the user
    subprocess.run([sys.executable, "-c", _CRAFT, str(db), str(craft / "c.duckdb")], check=True)
    (craft / "c.duckdb.wal").chmod(0o644)
    _user("cp", str(craft / "c.duckdb.wal"), str(theirs / "c.duckdb.wal"))
    return sticky, db, theirs, craft


def test_a_wal_planted_after_the_check_is_not_read_with_the_database(shared_tmp, monkeypatch):  # noqa: F811
    """Reliability-10 High 3: root reads its database in a sticky world-writable folder (/tmp); the user toggles a
    WAL crafted from a copy of it at `<db>.wal`; one there after `beside_refusal` and before DuckDB's open was
    replayed: `storagelab sql` showed the user's rows in 11 of 60 tries (clirace.sh). Here the plant is made at that
    very moment (when the spill settings are read, just before the open); root's own WAL is still read."""

    from storagelab import database  # noqa: PLC0415

    sticky, db, theirs, craft = _database_and_wal(shared_tmp)
    assert (theirs / "c.duckdb.wal").stat().st_size > 0
    real = database.spill_config

    def plant_then(path=None):
        if not (sticky / "x.duckdb.wal").exists():
            _user("cp", str(theirs / "c.duckdb.wal"), str(sticky / "x.duckdb.wal"))
        return real(path)

    monkeypatch.setattr(database, "spill_config", plant_then)
    con = connect(db, read_only=True)
    assert con.execute("SELECT v FROM t").fetchall() == [("root",)]
    con.close()
    assert (sticky / "x.duckdb.wal").stat().st_uid != 0  # planted, not read
    assert sorted(os.listdir(sticky)) == ["x.duckdb", "x.duckdb.wal"]  # the view's folder removed
    with pytest.raises(StoreError, match=r"x.duckdb.wal is a file of another user's \(storagelab-rel5\), beside"):
        connect(db, read_only=True)  # planted before the check: refused, as before
    (sticky / "x.duckdb.wal").unlink()
    monkeypatch.setattr(database, "spill_config", real)
    shutil.copy(theirs / "c.duckdb.wal", sticky / "x.duckdb.wal")  # root's own WAL (a copy root made)
    con = connect(db, read_only=True)
    assert con.execute("SELECT v FROM t ORDER BY v").fetchall() == [("INJECTED",), ("root",)]
    con.close()
    (sticky / "x.duckdb.wal").unlink()
    from storagelab import ownership  # noqa: PLC0415

    checked = ownership.beside_refusal

    def then_a_folder(path):  # the user's folder at <db>.wal just after the first check: no falling back to the name
        why = checked(path)
        _user("mkdir", "-p", str(sticky / "x.duckdb.wal"))
        return why

    monkeypatch.setattr(ownership, "beside_refusal", then_a_folder)
    with pytest.raises(StoreError, match=r"x.duckdb.wal cannot be read safely \(Operation not permitted\)"):
        connect(db, read_only=True)
    assert sorted(os.listdir(sticky)) == ["x.duckdb", "x.duckdb.wal"]


def test_a_refused_run_output_leaves_no_folder_it_made(tmp_path):
    """`run --output THEIRS/a/b/c` made a/b/c inside the second user's folder (root's folders in theirs) and
    `--output new/a/b/../../../THEIRS/x` made new/a/b, both left after the refusal; neither is left now, and a folder
    reached again past a ".." (their own folder) is never removed."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 1002, 1002)
    why, _ = runoutput.refusal(theirs / "a" / "b" / "c")
    assert why and "inside" in why
    assert os.listdir(theirs) == []
    why, _ = runoutput.refusal(tmp_path / "new" / "a" / "b" / ".." / ".." / ".." / "theirs" / "x")
    assert why
    assert sorted(os.listdir(tmp_path)) == ["theirs"] and os.listdir(theirs) == []
