"""A file is skipped unread only on its stamp (store/filestamps.py): size, mtime, inode and ctime as listed when the
bytes its record holds were read. Size and mtime alone let a rewrite with its mtime set back keep the old rows, and
made every same-size log of one tar second be read again at every ingest."""

from __future__ import annotations

import hashlib
import os

import duckdb
from test_store_identity import OneSecond

from storagelab.store import filestamps, ingest
from storagelab.store.listing import ListedFile


def _sha(k: int) -> str:
    return hashlib.sha256(OneSecond.SAME_SIZE[k]).hexdigest()


def _ingest(tree: OneSecond, *folders: str):
    return ingest([tree.logs / f for f in folders], db_path=tree.tmp / "d.duckdb",
                  manifest_path=tree.logs / "manifest.csv", parquet_dir=False, progress=False, workers=1)  # fmt: skip


def test_a_rewrite_in_place_with_its_mtime_set_back_is_read(tmp_path):
    tree = OneSecond(tmp_path, {"s1/a.txt": 0})  # alone in its size and second: the old rule skipped it
    log = tree.logs / "s1/a.txt"
    ino = log.stat().st_ino
    with open(log, "r+b") as fh:  # the same inode, size and second: only its ctime tells
        fh.write(tree.SAME_SIZE[2])
    os.utime(log, ns=(tree.SECOND, tree.SECOND))
    assert (log.stat().st_ino, log.stat().st_size, log.stat().st_mtime_ns) == (ino, len(tree.fio), tree.SECOND)
    s = _ingest(tree, "s1", "s2")
    assert (s.ingested, s.replaced, s.bytes_read) == (1, 1, len(tree.fio))  # old code: 0 read, a's old rows kept
    held = tree.held("s1")
    assert held == {"s1/a.txt": _sha(2)}


def test_same_size_logs_of_one_second_are_not_read_again(tmp_path):
    """A tar's logs: one size, one second. Before, each was read at every ingest (other bytes had its size and
    mtime); now none is."""
    tree = OneSecond(tmp_path, {"s1/a.txt": 0, "s1/b.txt": 1, "s2/c.txt": 2, "s2/d.txt": 0})
    s = _ingest(tree, "s1", "s2")
    assert (s.skipped, s.ingested, s.bytes_read) == (4, 0, 0)


def test_an_exchange_by_mv_is_read_at_both_paths_and_nothing_else(tmp_path):
    tree = OneSecond(tmp_path, {"s1/a.txt": 0, "s1/b.txt": 1, "s2/c.txt": 2})
    tree.rotate("s1/a.txt", "s1/b.txt")
    s = _ingest(tree, "s1", "s2")
    assert (s.skipped, s.bytes_read) == (1, 2 * len(tree.fio))
    assert tree.held("s1") == {"s1/a.txt": _sha(1), "s1/b.txt": _sha(0)}


def test_a_database_without_stamps_reads_each_file_once_more(tmp_path):
    tree = OneSecond(tmp_path, {"s1/a.txt": 0, "s2/b.txt": 1})
    con = duckdb.connect(str(tmp_path / "d.duckdb"))
    assert con.execute(f"SELECT count(*) FROM {filestamps.TABLE}").fetchone()[0] == 2
    con.execute(f"DROP TABLE {filestamps.TABLE}")  # a database of the size-and-second rule
    con.close()
    assert _ingest(tree, "s1", "s2").bytes_read == 2 * len(tree.fio)
    assert _ingest(tree, "s1", "s2").bytes_read == 0


def test_stamps_an_older_code_kept_are_never_trusted(tmp_path):
    """reliability-31 (store) Medium 1. Code from before ba05dbb kept a stamp without checking that the descriptor
    read was the file listed: a folder swapped between its listing and its read, and back, left s1/a.txt's stamp
    beside the other folder's bytes. Run again on a database that 4621ad2 had marked (its meta key ``file_stamps``),
    that code wrote such a stamp into the table of that name, and the new code trusted it: a.txt skipped for ever with
    another file's SHA-256. What that code leaves is made here by hand: the record holds b's bytes, with a stamp of
    a.txt as listed, in the old table, under the mark. Today's stamps are in a table of another name."""
    tree = OneSecond(tmp_path, {"s1/a.txt": 0, "s2/b.txt": 1})
    log = tree.logs / "s1/a.txt"
    st = log.stat()
    con = duckdb.connect(str(tmp_path / "d.duckdb"))
    con.execute(f"UPDATE files SET sha256 = '{_sha(1)}' WHERE ends_with(path, '/s1/a.txt')")  # the other bytes
    con.execute(
        "CREATE TABLE IF NOT EXISTS file_stamps (path VARCHAR, sha256 VARCHAR, size_bytes BIGINT, mtime_ns BIGINT, "
        "inode UBIGINT, ctime_ns BIGINT)"
    )
    [key] = con.execute("SELECT path FROM files WHERE ends_with(path, '/s1/a.txt')").fetchone()
    con.execute("DELETE FROM file_stamps WHERE path = ?", [key])
    stamp = (key, _sha(1), st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)  # a.txt as listed
    con.execute("INSERT INTO file_stamps VALUES (?, ?, ?, ?, ?, ?)", stamp)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('file_stamps', 'fstat at open')")  # 4621ad2's mark, still set
    con.close()
    s = _ingest(tree, "s1", "s2")
    assert (s.ingested, s.bytes_read) == (1, len(tree.fio))  # code before: (0, 0), b's SHA-256 kept at a.txt
    assert tree.held("s1") == {"s1/a.txt": _sha(0)}
    con = duckdb.connect(str(tmp_path / "d.duckdb"), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert "file_stamps" not in tables and filestamps.TABLE in tables  # the old table dropped, unread
    assert con.execute("SELECT count(*) FROM meta WHERE key = 'file_stamps'").fetchone()[0] == 0
    con.close()
    assert _ingest(tree, "s1", "s2").bytes_read == 0  # then skipped on today's stamps


def test_a_ctime_the_clock_has_not_passed_vouches_only_after_the_tick(tmp_path, monkeypatch):
    log = tmp_path / "a.txt"
    log.write_bytes(b"x")
    st = log.stat()
    item = ListedFile("a.txt", str(log), st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    assert not filestamps.vouches(st.st_ctime_ns, st.st_ctime_ns)  # listed in its tick: a change then keeps the ctime
    assert filestamps.vouches(st.st_ctime_ns, st.st_ctime_ns + 1)
    assert not filestamps.vouches(10**18, 10**18 + 1)  # whole seconds: a filesystem that keeps only seconds
    assert filestamps.vouches(10**18, 10**18 + 2 * 10**9 + 1)
    [settled] = filestamps.settle([item], st.st_ctime_ns)  # stat'ed again once the clock passed its ctime
    assert settled == item and filestamps.clock_ns() > st.st_ctime_ns
    monkeypatch.setattr(filestamps, "clock_ns", lambda: st.st_ctime_ns)  # a clock that never passes it
    assert filestamps.settle([item], st.st_ctime_ns) == [item._replace(ctime_ns=-1)]
    assert not filestamps.matches(filestamps.Stamp("s", *item[2:6]), item._replace(ctime_ns=-1), "s")


def test_a_file_system_whose_ctime_is_not_real_keeps_no_stamp(tmp_path, monkeypatch):
    """On a bindfs with --ctime-from-mtime (sshfs and vfat too) a rewrite with its mtime set back kept its stamp and
    was skipped for ever: 38 of 40 rounds (reliability-28 store). A file of a file system not known to keep a real
    ctime is read at every ingest."""
    from storagelab.store import listing, realctime

    tree = OneSecond(tmp_path, {"s1/a.txt": 0})
    assert _ingest(tree, "s1", "s2").bytes_read == 0  # ext4 or tmpfs here: its stamp vouches
    dev = (tree.logs / "s1/a.txt").stat().st_dev
    monkeypatch.setattr(listing.realctime, "devices", lambda: lambda d: d != dev)  # as on a FUSE file system
    [item] = listing.list_files([tree.logs / "s1"])
    assert item.ctime_ns == -1 and filestamps.settle([item], filestamps.clock_ns()) == [item]
    assert _ingest(tree, "s1", "s2").bytes_read == len(tree.fio)
    assert _ingest(tree, "s1", "s2").bytes_read == len(tree.fio)  # and again: no stamp was kept
    kinds = {"ext4": True, "vfat": False, "fuse.sshfs": False, "fuse": False, "tmpfs": True}
    assert {k: k in realctime.KEEPS_CTIME for k in kinds} == kinds


def test_a_symlink_put_at_a_listed_file_s_name_is_not_followed(tmp_path, monkeypatch):
    """reliability-31 (store) Low 1: a listing follows no symlink in a folder to a file outside it, but a.txt replaced
    by such a link between the listing and the read was read through it: a.txt held, for that ingest, with the other
    file's bytes. A file listed as a file is opened with its own name unfollowed: an io error row, then read again."""
    tree = OneSecond(tmp_path, {"s1/a.txt": 0, "s2/b.txt": 1})
    outside = tmp_path / "outside.txt"
    outside.write_bytes(tree.SAME_SIZE[2])
    os.utime(outside, ns=(tree.SECOND, tree.SECOND))
    log = tree.logs / "s1/a.txt"
    tree.write("s1/a.txt", 0)  # a new ctime: read at the next ingest
    settle = filestamps.settle

    def swapped(listing, clock):  # after the listing, before the read
        out = settle(listing, clock)
        log.rename(tree.logs / "s1/.away")
        log.symlink_to(outside)
        return out

    monkeypatch.setattr(filestamps, "settle", swapped)
    s = _ingest(tree, "s1", "s2")
    assert "a symlink was put in its place" in " ".join(str(e) for e in s.errors), s.errors
    assert tree.held("s1") != {"s1/a.txt": _sha(2)}  # the code before: the outside file's bytes at a.txt
    monkeypatch.setattr(filestamps, "settle", settle)
    log.unlink()
    (tree.logs / "s1/.away").rename(log)
    _ingest(tree, "s1", "s2")
    assert tree.held("s1") == {"s1/a.txt": _sha(0)}
