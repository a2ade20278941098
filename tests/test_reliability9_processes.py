"""Reliability-9, part B (docs/reliability-9-processes.md): each attack that broke, as root with the real second user.

High 1: `ingest --db /tmp/x.duckdb` (a sticky folder: allowed) while the user kept `x.duckdb.wal -> a root-only file`
planted once the database existed: DuckDB opens its log O_WRONLY|O_CREAT|O_APPEND, through the symlink, and appended
2.6 MB of log to the root file. Medium 1: a database or an in-memory dataset read in a folder the user can add names
to (/tmp; the working folder for a dataset): DuckDB spills a big query to `<db>.tmp/` (`./.tmp/`), creating its files
by name through the user's symlinks there, and truncated the root file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab import dataset
from storagelab.errors import DatabaseBusyError
from storagelab.store import StoreError, connect
from storagelab.store import db as store_db

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")

# the user's loop (docs/reliability-9-scripts/proc-walplant.py.txt): once DB exists, keep DB.wal -> VICTIM planted
_WALPLANT = """import os, sys, time
db, victim = sys.argv[1:3]
print("watching", flush=True)
end = time.monotonic() + 10
while not os.path.exists(db) and time.monotonic() < end and not os.path.exists(sys.argv[3]):
    pass
while time.monotonic() < end and not os.path.exists(sys.argv[3]):
    try:
        os.symlink(victim, db + ".wal")
    except FileExistsError:
        pass"""

ROOT = Path(__file__).resolve().parents[1]
FIO_LOG = ROOT / "tests" / "fixtures" / "fio" / "3.33" / "seq_write_group.txt"
_BIG_SORT = "SELECT count(*) FROM (SELECT range x, md5(range::varchar) y FROM range(1500000) ORDER BY y)"


def _sticky(folder):
    """A sticky world-writable folder of root's, as /tmp, and a root-only file in a folder the user cannot enter."""
    (folder / "pub").mkdir()
    (folder / "pub").chmod(0o1777)
    (folder / "vic").mkdir(mode=0o700)
    victim = folder / "vic" / "victim"
    victim.write_text("root secret\n")
    victim.chmod(0o600)
    return folder / "pub", victim


def test_a_database_in_a_sticky_folder_is_refused_while_the_user_plants_its_log(shared_tmp):  # noqa: F811
    """Attack (High 1): the user's loop plants `x.duckdb.wal -> victim` as soon as root's `x.duckdb` exists. Before:
    the ingest ended 0 and the victim held DuckDB's log. Now a database to write in a folder another user can add
    names to is refused, sticky or not, before DuckDB makes anything there."""
    pub, victim = _sticky(shared_tmp)
    db, stop = pub / "x.duckdb", shared_tmp / "stop"
    plant = subprocess.Popen(
        ["/usr/bin/python3", "-c", _WALPLANT, str(db), str(victim), str(stop)],
        stdout=subprocess.PIPE, text=True, preexec_fn=_as_user(USER),
    )  # fmt: skip
    try:
        assert plant.stdout is not None and plant.stdout.readline() == "watching\n"
        with pytest.raises(StoreError) as e:
            con = connect(db)  # `ingest --db`, `lab fio --db`: the same connect
            store_db.ensure_schema(con)
            con.close()
    finally:
        stop.touch()
        plant.wait(timeout=15)
    assert str(e.value) == (
        f"{db}: {db} is in {pub}, which can be written by every user (mode drwxrwxrwt): another user could change "
        "what it leads to, or put a symlink under a name DuckDB writes beside it (x.duckdb.wal, x.duckdb.tmp/) and "
        "have it overwrite any file you can write; give a database in a folder of your own"
    )
    assert victim.read_text() == "root secret\n"
    assert sorted(p.name for p in pub.iterdir()) == []


def _plant_spill_names(folder, victim) -> None:
    """As the user: `folder` (theirs) holding DuckDB's spill names for this process as symlinks to ``victim``."""
    names = [f"duckdb_temp_{os.getpid()}_0_{n}" for n in ("owner", "storage_DEFAULT-0.tmp", "storage_S160K-0.tmp")]
    script = "import os, sys\nos.mkdir(sys.argv[1])\nfor n in sys.argv[3:]: os.symlink(sys.argv[2], os.path.join(sys.argv[1], n))"
    subprocess.run(
        ["/usr/bin/python3", "-c", script, str(folder), str(victim), *names], check=True, preexec_fn=_as_user(USER)
    )


@pytest.mark.e2e  # 2.2 s at load 10: two sorts bigger than memory, one spilling
def test_a_big_query_never_spills_into_a_folder_the_user_can_add_names_to(shared_tmp, monkeypatch):  # noqa: F811
    """Attack (Medium 1): root's database copied to /tmp (reading it is allowed), and a dataset read with /tmp as the
    working folder; the user made `x.duckdb.tmp/` and `./.tmp/`, DuckDB's spill folders, holding its spill names
    for root's pid as symlinks to a root-only file. Before: a query bigger than memory truncated the victim (0 bytes).
    Now DuckDB does not spill there: the query fails for memory, the victim is whole; in a folder of root's it
    spills as before. (The store side's rule (reliability-9-store High 1) refuses to open a database with another
    user's `x.duckdb.tmp` already beside it; the spill rule covers the folder planted after the open.)"""
    pub, victim = _sticky(shared_tmp)
    ours = shared_tmp / "ours"
    ours.mkdir()
    con = connect(ours / "x.duckdb")
    store_db.ensure_schema(con)
    dataset.export(con, ours / "ds")
    con.close()
    shutil.copyfile(
        ours / "x.duckdb", pub / "x.duckdb"
    )  # root's file, copied into the sticky folder (a hard link there is refused: reliability-15/16)
    _plant_spill_names(pub / "x.duckdb.tmp", victim)
    with pytest.raises(StoreError, match=r"x\.duckdb\.tmp is a folder of another user's"):
        connect(pub / "x.duckdb", read_only=True)
    shutil.rmtree(pub / "x.duckdb.tmp")
    opened_first = connect(pub / "x.duckdb", read_only=True)
    _plant_spill_names(pub / "x.duckdb.tmp", victim)  # after the open's check
    _plant_spill_names(pub / ".tmp", victim)
    monkeypatch.chdir(pub)
    t0 = time.monotonic()
    for opened in (opened_first, dataset.open_dataset(ours / "ds")):
        opened.execute("SET memory_limit='30MB'; SET threads=1")
        with pytest.raises(duckdb.OutOfMemoryException):
            opened.execute(_BIG_SORT).fetchall()
        opened.close()
    assert victim.read_text() == "root secret\n"
    monkeypatch.chdir(ours)
    spills = connect(ours / "x.duckdb", read_only=True)
    spills.execute("SET memory_limit='30MB'; SET threads=1")
    assert spills.execute(_BIG_SORT).fetchall() == [(1500000,)]
    spills.close()
    assert time.monotonic() - t0 < 20


def test_sql_parquet_never_replaces_a_link_or_a_device_even_with_force(tmp_path):
    """Attack (Low): `sql --parquet /dev/stdout --force "select 1"` ended 0 and had renamed a Parquet file over the
    system's /dev/stdout link (mkstemp in /dev, then os.replace). Now a link, a device or a FIFO there is refused,
    --force or not (here a link to /proc/self/fd/1 and a FIFO of the test's own, not the system's)."""
    from storagelab import sqlout  # noqa: PLC0415

    (tmp_path / "stdout").symlink_to("/proc/self/fd/1")
    os.mkfifo(tmp_path / "fifo")
    db = str(tmp_path / "x.duckdb")
    assert sqlout.parquet_target_refused(str(tmp_path / "stdout"), db, force=True) == (
        f"--parquet {tmp_path / 'stdout'} is a symlink, not a regular file: the result would replace it; give a file name"
    )
    assert sqlout.parquet_target_refused(str(tmp_path / "fifo"), db, force=True) == (
        f"--parquet {tmp_path / 'fifo'} is a special file (prw-r--r--), not a regular file: the result would replace "
        "it; give a file name"
    )
    assert sqlout.parquet_target_refused("/dev/full", db, force=True) == (
        "--parquet /dev/full is a special file (crw-rw-rw-), not a regular file: the result would replace it; give a "
        "file name"
    )
    (tmp_path / "old.parquet").write_bytes(b"x")
    assert sqlout.parquet_target_refused(str(tmp_path / "old.parquet"), db, force=True) is None


_HOLD = """import fcntl, sys, time
try:
    f = open(sys.argv[1], "rb")
except PermissionError:
    print("refused", flush=True)
    sys.exit(0)
fcntl.lockf(f, fcntl.LOCK_SH)  # DuckDB's read-only open: a shared POSIX lock on the database file
print("holding", flush=True)
time.sleep(20)"""


def test_another_user_cannot_hold_a_new_database_and_is_named_on_an_old_one(shared_tmp):  # noqa: F811
    """Attack (Medium 2): the second user opened root's database (0644) read-only and held DuckDB's lock: root's
    `ingest` and `build` ended 2 at once, ("... is in use by another process ...; DuckDB said: ... (PID 21804)").
    Now a database the ingest creates is 0600 (the user's open fails), and on an older, readable one the refusal
    names the user and the chmod that keeps them out."""
    new, old = shared_tmp / "new.duckdb", shared_tmp / "old.duckdb"  # a folder the user may enter, as data/parsed/
    connect(new).close()
    assert oct(new.stat().st_mode & 0o777) == "0o600"
    connect(old).close()
    old.chmod(0o644)  # made by an older storagelab, or by hand
    holders = [
        subprocess.Popen(["/usr/bin/python3", "-c", _HOLD, str(db)], stdout=subprocess.PIPE, text=True,
                         preexec_fn=_as_user(USER))
        for db in (new, old)
    ]  # fmt: skip
    try:
        assert [h.stdout.readline() for h in holders if h.stdout] == ["refused\n", "holding\n"]
        connect(new).close()
        with pytest.raises(DatabaseBusyError) as e:
            connect(old)
    finally:
        for h in holders:
            h.kill()
            h.wait()
    assert str(e.value).startswith(
        f"{old} is in use by another process (an ingest or an open notebook, pid {holders[1].pid} of the user {USER}: "
        f"`chmod go-rwx {old}` keeps other users from opening it); close it or retry when it has finished. DuckDB said: "
    )


def test_a_fifo_the_user_puts_in_place_of_a_log_or_a_manifest_never_hangs_the_ingest(shared_tmp):  # noqa: F811
    """Attack (Medium 3): in a folder of theirs that root ingests, the user's FIFO as `manifest.csv` hung `ingest DIR`
    for ever (timeout 20 s: exit 124, no output); and the user's loop swapping each listed log for a FIFO and back
    (docs/reliability-9-scripts/proc-fifoswap.py.txt) hung it once in 3 tries (a worker opened the FIFO it had listed
    as a file). Now every input is opened without waiting and checked as opened: one line, or the file's own error."""
    import threading  # noqa: PLC0415

    from storagelab.store.listing import ListedFile  # noqa: PLC0415
    from storagelab.store.worker import parse_one  # noqa: PLC0415

    theirs = shared_tmp / "theirs"
    theirs.mkdir()
    shutil.chown(theirs, USER)  # a folder of theirs, as one they gave root to ingest
    subprocess.run(["cp", str(FIO_LOG), str(theirs / "a.txt")], check=True, preexec_fn=_as_user(USER))
    subprocess.run(
        ["mkfifo", str(theirs / "manifest.csv"), str(theirs / "b.txt")], check=True, preexec_fn=_as_user(USER)
    )
    # without the fix the open below waits for a writer: this one comes after 3 s, so the test fails, never hangs
    unblock = threading.Timer(3, lambda: os.close(os.open(theirs / "b.txt", os.O_WRONLY | os.O_NONBLOCK)))
    unblock.start()
    try:
        out = parse_one(ListedFile("b.txt", str(theirs / "b.txt"), 8242, 0))  # b.txt was a.txt when listed
    finally:
        unblock.cancel()
    assert out.error == dict(
        kind="io", line=None, message=f"[Errno 22] a FIFO, not a regular file: '{theirs / 'b.txt'}'", expected=None
    )
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "ingest", str(theirs), "--db", str(shared_tmp / "x.duckdb"), "--no-parquet"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT / "lib")),
    )  # fmt: skip
    assert (r.returncode, r.stderr) == (
        2,
        f"storagelab ingest: {theirs / 'manifest.csv'}: cannot read the manifest: a FIFO, not a regular file\n",
    )


def _the_user_links_at_mkdir(monkeypatch, link: Path, target: Path, sub: str, unlink: bool = False) -> None:
    """The exact window: when the command makes ``link/sub``, the real user first makes ``link`` (a free name in a
    sticky folder) their symlink to ``target`` (and, with ``unlink``, removes it again right after the mkdir, to
    make it anew once the command's checks are done)."""
    import pathlib  # noqa: PLC0415

    mkdir = pathlib.Path.mkdir

    def the_user_links_first(self, *a, **k):
        if self != link / sub or link.is_symlink() or link.exists():
            return mkdir(self, *a, **k)
        subprocess.run(["ln", "-s", str(target), str(link)], check=True, preexec_fn=_as_user(USER))
        mkdir(self, *a, **k)
        if unlink:
            subprocess.run(["rm", str(link)], check=True, preexec_fn=_as_user(USER))

    monkeypatch.setattr(pathlib.Path, "mkdir", the_user_links_first)


_TOGGLE = """import os, sys, time
name, target = sys.argv[1:3]
print("toggling", flush=True)
end = time.monotonic() + 20
while time.monotonic() < end and not os.path.exists(sys.argv[3]):
    try:
        os.symlink(target, name)
        os.unlink(name)
    except OSError:
        pass"""


@pytest.mark.e2e  # 2 to 4 s at load 20: 200 tries against the user's real loop, then the exact window once
def test_spark_output_is_given_to_spark_as_checked_while_the_user_toggles_a_link_on_its_way(shared_tmp, monkeypatch):  # noqa: F811
    """Attack (High 2): spark-ingest resolved OUTPUT, then made it and checked it, but gave Spark the path resolved
    before the mkdir: the user toggling a name on its way as a symlink to a folder of root's (absent at the resolve,
    a link at the mkdir) had the check pass while Spark would write through their link, which they can then turn to
    a folder of theirs holding `_storagelab/.meta.json.<pid>.tmp` (22 of 3000 tries, proc-sprace.py). Now OUTPUT is
    made, resolved once and checked, and Spark gets that path; their link on the way is refused. The user's loop
    wins rarely (0.7 %), so the window is then also hit exactly: the user makes the link just before the mkdir."""

    from storagelab.ownership import foreign_link, spark_output  # noqa: PLC0415

    pub, _ = _sticky(shared_tmp)
    ours, stop = shared_tmp / "ours", shared_tmp / "stop"
    ours.mkdir()
    name = pub / "x"
    toggle = subprocess.Popen(
        ["/usr/bin/python3", "-c", _TOGGLE, str(name), str(ours), str(stop)],
        stdout=subprocess.PIPE, text=True, preexec_fn=_as_user(USER),
    )  # fmt: skip
    given = []
    try:
        assert toggle.stdout is not None and toggle.stdout.readline() == "toggling\n"
        for _ in range(200):
            why, output = spark_output(str(name / "out"))
            given += [] if why else [output]
            shutil.rmtree(ours / "out", ignore_errors=True)
            if name.is_dir() and not name.is_symlink():  # root's own, made when the name was free
                shutil.rmtree(name, ignore_errors=True)
    finally:
        stop.touch()
        toggle.wait(timeout=15)
    assert [o for o in given if foreign_link(Path(o))] == []
    assert set(given) <= {str(name / "out"), str(ours / "out")}
    shutil.rmtree(name, ignore_errors=True)
    _the_user_links_at_mkdir(monkeypatch, name, ours, "out")
    why, output = spark_output(str(name / "out"))  # before: Spark was given /…/pub/x/out, through the link
    assert (why, output) == (
        f"output {name} is a symlink of another user's ({USER}): another user could put a symlink there under a name "
        "the run writes (_storagelab/.meta.json.<pid>.tmp, part files), and have it overwrite any file you can write; "
        "give a folder of your own (e.g. a new folder under it)",
        str(name / "out"),
    )


@pytest.mark.skipif(not shutil.which("fio"), reason="lab fio checks for fio first")
def test_lab_out_whose_name_the_user_links_after_the_start_is_refused(shared_tmp, monkeypatch, capsys):  # noqa: F811
    """Attack (High 3): `lab fio --out /tmp/L/o` with L free when the lab began: the lab checked the path for the
    user's links and resolved it at its start, then made it (seconds later, after its other checks) and checked the
    folder it made. The user made L a link to a folder of root's just before that mkdir (the check saw root's folder)
    and turned it to a folder of theirs just before fio ran: fio's logs went through their symlinks into a root-only
    file (18506 bytes of '253, 1596, 1, 0, 0', proc-oldlab.py). Now a folder that resolves elsewhere once made is
    refused. The window is hit exactly: the real user makes the link when the lab calls mkdir."""

    from storagelab.lab import cli as lab_cli  # noqa: PLC0415

    pub, victim = _sticky(shared_tmp)
    ours, link = shared_tmp / "ours", pub / "L"
    ours.mkdir()
    _the_user_links_at_mkdir(monkeypatch, link, ours, "o")
    argv = ["fio", "--target", str(ours / "t"), "--out", str(link / "o"), "--rw", "write", "--depth-jobs", "1x1",
            "--size", "1M", "--runtime", "1", "--no-ingest"]  # fmt: skip
    assert lab_cli.main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"storagelab lab fio: --out {link / 'o'} led elsewhere once made ({ours / 'o'}): a symlink appeared on its way "
        "after the lab began, which another user could turn to a folder of theirs; give a folder of your own"
    )
    assert victim.read_text() == "root secret\n"
    assert sorted(p.name for p in (ours / "o").iterdir()) == []  # made through the link, nothing written in it
    subprocess.run(["rm", str(link)], check=True, preexec_fn=_as_user(USER))
    _the_user_links_at_mkdir(monkeypatch, link, ours, "o", unlink=True)  # gone again when the lab looks
    assert lab_cli.main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"storagelab lab fio: --out {link / 'o'}: No such file or directory"
    )


def test_a_report_tree_whose_free_name_the_user_links_before_the_mkdir_is_refused(shared_tmp, monkeypatch):  # noqa: F811
    """Attack (Low 7, from the code): the report tree's lock checked the tree for the user's links, made it, and
    checked the resolved folder made, while the writers walk the tree's path as given: a free name on its way made
    the user's link just before the mkdir passed (a folder of root's), as the lab's --out did (High 3). Now the path
    is walked again once made; a link there, or one removed since, is refused. The real user, the exact window."""
    from storagelab.errors import StoragelabError  # noqa: PLC0415
    from storagelab.reportlock import writing  # noqa: PLC0415

    pub, victim = _sticky(shared_tmp)
    ours, link = shared_tmp / "ours", pub / "L"
    ours.mkdir()
    _the_user_links_at_mkdir(monkeypatch, link, ours, "reports")
    with pytest.raises(StoragelabError) as e, writing(link / "reports"):
        pass
    assert (
        str(e.value) == f"the report folder {link} is a symlink of another user's ({USER}); give a folder of your own"
    )
    subprocess.run(["rm", str(link)], check=True, preexec_fn=_as_user(USER))
    _the_user_links_at_mkdir(monkeypatch, link, ours, "reports", unlink=True)
    with pytest.raises(StoragelabError) as e, writing(link / "reports"):
        pass
    assert str(e.value) == (
        f"the report folder {link} does not exist any more (another user may have removed a link of theirs); give a "
        "folder of your own"
    )
    assert victim.read_text() == "root secret\n"
