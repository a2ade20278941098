"""The store: incremental, atomic, provenance-keeping ingest (on the seeds' real logs)."""

import csv
import json
import multiprocessing
import re
import shutil
import subprocess
import sys
import time

import duckdb
import pytest
from conftest import FIXTURES, RAW

from storagelab import store
from storagelab.errors import DatabaseBusyError, ManifestError
from storagelab.store import ingest


def _ingest(raw, db, **kw):
    return ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", progress=False, **kw)


def _counts(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_name NOT IN ('meta', 'file_stamps_at_open') ORDER BY 1"
            ).fetchall()
        ]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        con.close()


def test_every_raw_file_is_ingested_with_its_labels(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    s = _ingest(raw_copy, db, parquet_dir=tmp_path / "pq")
    assert s.failed == 0, s.errors
    n_manifest = sum(1 for _ in open(raw_copy / "manifest.csv")) - 1
    assert s.ingested == n_manifest
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT count(*), count(study), count(DISTINCT sha256) FROM files").fetchone()
    assert rows == (n_manifest, n_manifest, n_manifest)
    label, stack, tool = con.execute(
        "SELECT label, stack, tool FROM files WHERE path LIKE '%fio-zfs-mirror-zfs0.8.4.txt'"
    ).fetchone()
    assert (label, stack, tool) == ("ZFS mirror (0.8.4)", "zfs", "fio")
    # the ZFS mirror run: 1240 MiB/s, p99 clat 380 ms (issue #2)
    bw = con.execute("""SELECT g.bw_bytes_per_s FROM fio_groups g JOIN files f USING (file_id)
                        WHERE f.label = 'ZFS mirror (0.8.4)'""").fetchone()[0]
    assert bw == pytest.approx(1240 * 2**20)
    con.close()
    # Parquet mirrors every table
    for t, n in _counts(db).items():
        pq = duckdb.connect()
        assert (
            pq.execute("SELECT count(*) FROM read_parquet(?)", [str(tmp_path / "pq" / f"{t}.parquet")]).fetchone()[0]
            == n
        )


def test_reingest_unchanged_skips_everything(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    first = _ingest(raw_copy, db, parquet_dir=False)
    before = _counts(db)
    again = _ingest(raw_copy, db, parquet_dir=False)
    assert again.ingested == 0 and again.failed == 0
    assert again.skipped == first.ingested
    assert _counts(db) == before


def test_touched_but_identical_file_is_skipped(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    f = raw_copy / "homelab-mergerfs" / "fio-btrfs-single.txt"
    f.write_bytes(f.read_bytes())  # new mtime, same bytes
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.ingested == 0 and s.skipped >= 1


def test_changed_file_replaces_its_rows_and_shows_the_change(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    con = duckdb.connect(str(db), read_only=True)
    old_sha, old_at, old_id = con.execute(
        "SELECT sha256, ingested_at, file_id FROM files WHERE path LIKE '%fio-mdadm-raid1-ext4-bitmap-none-run2.txt'"
    ).fetchone()
    con.close()
    f = raw_copy / "homelab-mergerfs" / "fio-mdadm-raid1-ext4-bitmap-none-run2.txt"
    f.write_text(
        f.read_text().replace(
            "568MiB/s (596MB/s), 568MiB/s-568MiB/s (596MB/s-596MB/s)",
            "570MiB/s (598MB/s), 570MiB/s-570MiB/s (598MB/s-598MB/s)",
        )
    )
    time.sleep(0.01)
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert (s.ingested, s.replaced) == (1, 1)
    con = duckdb.connect(str(db), read_only=True)
    sha, at, fid = con.execute(
        "SELECT sha256, ingested_at, file_id FROM files WHERE path LIKE '%bitmap-none-run2.txt'"
    ).fetchone()
    assert sha != old_sha and at > old_at
    assert con.execute("SELECT count(*) FROM fio_groups WHERE file_id = ?", [old_id]).fetchone()[0] == 0
    assert con.execute("SELECT bw_bytes_per_s FROM fio_groups WHERE file_id = ?", [fid]).fetchone()[0] == pytest.approx(
        570 * 2**20
    )
    con.close()


def test_bad_files_never_lose_the_good_ones(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    (raw_copy / "empty.txt").write_bytes(b"")
    (raw_copy / "random.bin").write_bytes(bytes(range(256)) * 8)
    (raw_copy / "notes.txt").write_text("just some words\nnothing a tool printed\n")
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.failed == 3
    n_manifest = sum(1 for _ in open(raw_copy / "manifest.csv")) - 1
    assert s.ingested == n_manifest
    con = duckdb.connect(str(db), read_only=True)
    errs = {
        r[0].rsplit("/", 1)[-1]: r[1:]
        for r in con.execute("SELECT path, kind, line, message FROM ingest_errors").fetchall()
    }
    assert errs["empty.txt"][0] == "empty"
    assert errs["random.bin"][0] == "binary" and errs["random.bin"][1] == 1
    assert errs["notes.txt"][0] == "unknown-format" and errs["notes.txt"][1] == 1
    con.close()


def test_a_failed_reingest_removes_the_rows_of_the_former_bytes_and_keeps_the_others(raw_copy, tmp_path):
    """A stored log overwritten with bytes no parser reads: its old rows described bytes that are gone (every figure
    must trace to a raw line that exists), so they leave with a warning and the failure is recorded; every other
    file keeps its rows. (They had been kept: stale rows, provenance to bytes no longer there.)"""
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    before = _counts(db)
    con = duckdb.connect(str(db), read_only=True)
    rel = "homelab-mergerfs/fio-zfs-mirror-zfs0.8.4.txt"
    (file_id,) = con.execute("SELECT file_id FROM files WHERE path LIKE ?", [f"%{rel}"]).fetchone()
    own = {
        t: con.execute(f'SELECT count(*) FROM "{t}" WHERE file_id = ?', [file_id]).fetchone()[0]
        for t in before
        if t.startswith("fio_")
    }
    con.close()
    f = raw_copy / rel
    f.write_bytes(b"\x00\x01\x02 not a log any more")
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.failed == 1 and s.ingested == 0
    assert any("its new content failed to parse (above); the rows of its former content" in w for w in s.warnings)
    after = _counts(db)
    assert after.pop("ingest_errors") == 1
    before.pop("ingest_errors")
    expected = {t: n - own.get(t, 0) for t, n in before.items()}
    expected["files"] -= 1
    assert after == expected


def test_same_content_under_another_name_is_not_stored_twice(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    src = raw_copy / "homelab-mergerfs" / "fio-btrfs-single.txt"
    (raw_copy / "copy-of-btrfs.log").write_bytes(src.read_bytes())
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.ingested == 0 and s.failed == 0


def _hold_read_only(db, ready, stop):
    con = duckdb.connect(str(db), read_only=True)
    ready.set()
    stop.wait(20)
    con.close()


def test_ingest_while_another_process_reads_gives_a_clear_message(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    ctx = multiprocessing.get_context("spawn")
    ready, stop = ctx.Event(), ctx.Event()
    p = ctx.Process(target=_hold_read_only, args=(db, ready, stop))
    p.start()
    try:
        assert ready.wait(20)
        with pytest.raises(DatabaseBusyError, match="in use by another process"):
            _ingest(raw_copy, db, parquet_dir=False)
    finally:
        stop.set()
        p.join(20)
    # once the reader is gone the ingest works again
    assert _ingest(raw_copy, db, parquet_dir=False).failed == 0


def test_manifest_paths_cannot_leave_data_raw(raw_copy, tmp_path):
    m = raw_copy / "manifest.csv"
    m.write_text(m.read_text() + "../../etc/passwd,evil\n")
    with pytest.raises(ManifestError, match="stay inside"):
        _ingest(raw_copy, tmp_path / "t.duckdb", parquet_dir=False)


def test_manifest_edit_relabels_without_reparsing(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    m = raw_copy / "manifest.csv"
    m.write_text(m.read_text().replace(",btrfs (single NVMe),", ",btrfs on one NVMe,"))
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.ingested == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM files WHERE label = 'btrfs on one NVMe'").fetchone()[0] == 1
    con.close()


def test_cli_parse_prints_json_lines(tmp_path):
    f = RAW / "homelab-mergerfs" / "fio-zfs-mirror-zfs0.8.4.txt"
    out = subprocess.run(
        [sys.executable, "-m", "storagelab", "parse", str(f)], capture_output=True, text=True, check=True
    )
    recs = [json.loads(line) for line in out.stdout.splitlines()]
    assert recs[0]["table"] == "files" and recs[0]["tool"] == "fio" and recs[0]["format"] == "fio-normal"
    tables = {r["table"] for r in recs}
    assert {"fio_jobs", "fio_results", "fio_percentiles", "fio_groups"} <= tables
    res = [r for r in recs if r["table"] == "fio_results"]
    assert len(res) == 1 and res[0]["direction"] == "write" and res[0]["line_start"] == 3


def test_cli_ingest_exit_code_and_summary(raw_copy, tmp_path):
    (raw_copy / "bad.txt").write_text("garbage\n")
    db = tmp_path / "cli.duckdb"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "storagelab",
            "ingest",
            str(raw_copy),
            "--db",
            str(db),
            "--manifest",
            str(raw_copy / "manifest.csv"),
            "--quiet",
            "--no-parquet",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert "failed 1" in out.stdout
    assert "bad.txt:1: unknown-format" in out.stderr


def test_files_parsed_by_other_parser_code_are_reparsed(raw_copy, tmp_path):
    """parser_version carries a hash of the parser's code: rows from older code never linger."""
    from storagelab.parsers import modules, parser_version

    assert all("(code " in parser_version(m) for m in modules())
    db = tmp_path / "t.duckdb"
    first = _ingest(raw_copy, db, parquet_dir=False)
    con = duckdb.connect(str(db))
    con.execute(
        "UPDATE files SET parser_version = 'storagelab 0.0.1; fio parser 1 (code 0000000000)' WHERE tool = 'fio'"
    )
    n_fio = con.execute("SELECT count(*) FROM files WHERE tool = 'fio'").fetchone()[0]
    con.close()
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.replaced == n_fio and s.skipped == first.ingested - n_fio


def test_recorded_parser_versions_are_used_only_for_the_code_that_recorded_them(raw_copy, tmp_path):
    """An ingest with nothing to parse takes the schema check and the parser versions from ``meta``
    while the parsers' sources are unchanged (code_signature); a recorded code that differs from
    the current one is ignored and the versions are computed again."""
    from storagelab.parsers import modules, parser_version

    db = tmp_path / "t.duckdb"
    first = _ingest(raw_copy, db, parquet_dir=False)
    con = duckdb.connect(str(db))
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    assert meta["code"] == store.code_signature()
    assert json.loads(meta["versions"]) == {m.TOOL: parser_version(m) for m in modules()}
    # versions recorded for this very code are trusted: a (pretend) newer fio parser re-parses fio files
    stale = dict(json.loads(meta["versions"]), fio="storagelab 9; fio parser 9 (code 9999999999)")
    con.execute("UPDATE meta SET value = ? WHERE key = 'versions'", [json.dumps(stale)])
    n_fio = con.execute("SELECT count(*) FROM files WHERE tool = 'fio'").fetchone()[0]
    con.close()
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.replaced == n_fio and s.skipped == first.ingested - n_fio
    # versions recorded by other code are not: they are computed again (nothing re-parsed) and recorded
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = 'other code' WHERE key = 'code'")
    con.execute("UPDATE meta SET value = '{\"fio\": \"bogus\"}' WHERE key = 'versions'")
    con.close()
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.ingested == 0 and s.skipped == first.ingested
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT value FROM meta WHERE key = 'code'").fetchone()[0] == store.code_signature()
    con.close()


def test_labels_follow_a_manifest_edit_without_a_reparse(raw_copy, tmp_path):
    """With no file to parse, labels are still applied when the manifest changed (and only then)."""
    db = tmp_path / "t.duckdb"
    first = _ingest(raw_copy, db, parquet_dir=False)
    manifest = raw_copy / "manifest.csv"
    text = manifest.read_text()
    header, row = text.splitlines()[0].split(","), text.splitlines()[1]
    path = row.split(",")[0]
    col = header.index("host")
    con = duckdb.connect(str(db), read_only=True)
    before = con.execute("SELECT host FROM files WHERE path LIKE ?", ["%/" + path]).fetchone()[0]
    con.close()
    manifest.write_text(
        text.replace(row, ",".join(v if i != col else "relabelled-host" for i, v in enumerate(row.split(","))), 1)
    )
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.ingested == 0 and s.skipped == first.ingested
    con = duckdb.connect(str(db), read_only=True)
    after = con.execute("SELECT host FROM files WHERE path LIKE ?", ["%/" + path]).fetchone()[0]
    con.close()
    assert (before, after) == (before, "relabelled-host") and before != "relabelled-host"


def test_copies_are_listed_and_skipped_unread_until_their_original_changes(raw_copy, tmp_path, monkeypatch):
    """A file with the bytes of a stored one is not stored twice: it goes to ``duplicates`` (with
    the path it copies), the next ingest skips it by path, size and mtime without reading it, and
    once the original holds other bytes the copy is stored in its own right."""
    db = tmp_path / "t.duckdb"
    original = sorted(p for p in raw_copy.rglob("*.txt"))[0]
    extra = raw_copy / "zz-copies"  # listed after the original (files go in path order)
    extra.mkdir()
    copy = extra / original.name
    copy.write_bytes(original.read_bytes())
    first = _ingest(raw_copy, db, parquet_dir=False)
    assert first.duplicates == 1 and "(1 identical to another file)" in first.line()
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT path, same_as, size_bytes FROM duplicates").fetchall()
    assert [(p.endswith("zz-copies/" + original.name), s.endswith(original.name), n) for p, s, n in rows] == [
        (True, True, original.stat().st_size)
    ]
    assert con.execute("SELECT count(*) FROM files WHERE path LIKE '%/zz-copies/%'").fetchone()[0] == 0
    con.close()
    read = []
    real_open = open

    def spy(path, *a, **k):
        read.append(str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", spy)
    again = _ingest(raw_copy, db, parquet_dir=False, workers=1)
    monkeypatch.undo()
    assert again.ingested == 0 and again.duplicates == 1
    assert not [p for p in read if p.endswith("zz-copies/" + original.name)]
    original.write_bytes(original.read_bytes() + b"\n")
    third = _ingest(raw_copy, db, parquet_dir=False)
    assert third.ingested == 2 and third.replaced == 1 and third.duplicates == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM duplicates").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM files WHERE path LIKE '%/zz-copies/%'").fetchone()[0] == 1
    con.close()


def test_every_stored_row_belongs_to_the_file_it_came_from(tmp_path):
    """Files of every fio format side by side (JSON rows held as tuples, text/terse rows as dicts,
    in the same chunks and tables): for each stored file, its rows in every table are exactly what
    parsing that file alone gives (the writer takes each file's rows by position in its chunk)."""
    from pathlib import Path

    from storagelab.parsers import parse_bytes
    from storagelab.schema import all_tables

    # the logs, not the goldens and notes beside them (335 files every sniffer read to its end and refused: half
    # the test's time)
    src = tmp_path / "fio"
    shutil.copytree(
        Path(__file__).parent / "fixtures" / "fio",
        src,
        ignore=shutil.ignore_patterns("*.expected.jsonl", "*.sh", "*.md"),
    )
    db = tmp_path / "t.duckdb"
    s = ingest([src], db_path=db, manifest_path=tmp_path / "none.csv", parquet_dir=False, workers=1)
    assert s.ingested >= 40
    con = duckdb.connect(str(db), read_only=True)
    files = con.execute("SELECT file_id, path FROM files").fetchall()
    tabs = all_tables()
    checked = 0
    for fid, path in files:
        full = Path(path) if Path(path).is_absolute() else Path(__file__).parents[1] / path
        parsed, _ = parse_bytes(full.read_bytes(), str(full))  # as the ingest does: fio logs need their name
        for table, rows in parsed.tables.items():
            cols = [c.name for c in tabs[table].columns if c.name != "file_id"]
            got = con.execute(
                f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{table}" WHERE file_id = ?', [fid]
            ).fetchall()
            want = [tuple(r.get(c) for c in cols) for r in rows]
            assert sorted(map(_numbers_as_floats, got)) == sorted(map(_numbers_as_floats, want)), (path, table)
            checked += len(want)
    con.close()
    assert checked > 3000


def _numbers_as_floats(row: tuple) -> str:
    """A row as text with every number as a float (the database stores DOUBLE where a parser may
    give an int), for order-free comparison."""
    return repr(tuple(float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in row))


def test_a_parser_bug_in_one_file_fails_that_file_only(monkeypatch):
    """A file whose rows carry a column the table does not declare fails as a parser bug; the other
    files of its chunk keep exactly their rows, and the failed file has none in any table."""
    from pathlib import Path

    from storagelab.parsers import parse_bytes

    src = sorted((Path(__file__).parent / "fixtures" / "fio" / "3.33").glob("*json*.txt"))[:4]
    jobs = [(str(p), str(p), p.stat().st_size, 0) for p in src]
    bad = str(src[1])

    def buggy(data, path=None):
        parsed, mod = parse_bytes(data, path)
        if path == bad:
            parsed.tables["fio_groups"] = [dict(r, bogus=1) for r in parsed.rows("fio_groups")]
        return parsed, mod

    monkeypatch.setattr(store.worker, "parse_bytes", buggy)
    outs, tables = store.parse_chunk(jobs)
    assert [o.error["kind"] if o.error else None for o in outs] == [None, "parser-bug", None, None]
    assert "bogus" in outs[1].error["message"]
    for name, tbl in tables.items():
        want = sum(len(parse_bytes(p.read_bytes())[0].rows(name)) for i, p in enumerate(src) if i != 1)
        assert tbl.num_rows == want, name
        assert sum(o.table_rows.get(name, 0) for o in outs) == want, name


# ----------------------------------------------------------------------------- issue 13: nothing lost, nothing stale


def _cli(*args, env=None, **kw):
    import os

    return subprocess.run(
        [sys.executable, "-m", "storagelab", *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ, **(env or {})),
        timeout=120,
        **kw,
    )


def _one(db, sql, params=()):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def test_the_same_file_listed_twice_is_stored_once(raw_copy, tmp_path):
    """A folder listed twice, a file and its folder, a symlink alias: one `files` row per file (#18)."""
    db = tmp_path / "t.duckdb"
    n = sum(1 for _ in open(raw_copy / "manifest.csv")) - 1
    one = raw_copy / "homelab-mergerfs" / "fio-btrfs-single.txt"
    (raw_copy / "links").mkdir()
    (raw_copy / "links" / "alias.txt").symlink_to(one)
    s = ingest(
        [raw_copy, raw_copy, one],
        db_path=db,
        manifest_path=raw_copy / "manifest.csv",
        parquet_dir=False,
        progress=False,
    )
    assert s.failed == 0 and s.ingested == n
    assert _one(db, "SELECT count(*), count(DISTINCT path) FROM files") == [(n, n)]
    assert _one(
        db, "SELECT count(*) FROM fio_groups g JOIN files f USING (file_id) WHERE f.path LIKE '%fio-btrfs-single.txt'"
    ) == [(1,)]
    con = duckdb.connect(str(db))
    with pytest.raises(duckdb.ConstraintException):  # the database itself refuses a second row for a path
        con.execute("INSERT INTO files (file_id, path) SELECT 999, path FROM files LIMIT 1")
    con.close()


def test_a_deleted_file_is_removed_with_its_rows(raw_copy, tmp_path):
    """The database mirrors the listed folders (#16)."""
    db = tmp_path / "t.duckdb"
    first = _ingest(raw_copy, db, parquet_dir=False)
    gone = raw_copy / "homelab-mergerfs" / "fio-autotier-ext4.txt"
    fid = _one(db, "SELECT file_id FROM files WHERE path LIKE '%/fio-autotier-ext4.txt'")[0][0]
    gone.unlink()
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert (s.removed, s.ingested, s.skipped) == (1, 0, first.ingested - 1)
    assert "1 removed" in s.line()
    assert _one(db, "SELECT count(*) FROM files WHERE file_id = ?", [fid]) == [(0,)]
    assert _one(db, "SELECT count(*) FROM fio_groups WHERE file_id = ?", [fid]) == [(0,)]
    assert any("fio-autotier-ext4.txt: no such file" in w for w in s.warnings)  # its manifest row is stale
    # a file only in the database's other folders is never removed by an ingest of one folder
    s = ingest(
        [raw_copy / "thumper-x4500"],
        db_path=db,
        manifest_path=raw_copy / "manifest.csv",
        parquet_dir=False,
        progress=False,
    )
    assert s.removed == 0 and _one(db, "SELECT count(*) FROM files") == [(first.ingested - 1,)]


def test_a_renamed_file_keeps_its_rows_under_the_new_path_with_its_new_labels(raw_copy, tmp_path):
    """#17: recognised by SHA-256; file_id and rows kept, path and labels follow the manifest."""
    db = tmp_path / "t.duckdb"
    old = raw_copy / "homelab-mergerfs" / "fio-btrfs-raid1.txt"
    (raw_copy / "zz-copy.txt").write_bytes(old.read_bytes())  # a copy of it, listed in duplicates
    _ingest(raw_copy, db, parquet_dir=False)
    fid, n_rows = _one(db, "SELECT file_id, n_rows FROM files WHERE path LIKE '%/fio-btrfs-raid1.txt'")[0]
    old.rename(old.with_name("fio-btrfs-raid1-renamed.txt"))
    m = raw_copy / "manifest.csv"
    m.write_text(
        m.read_text().replace("homelab-mergerfs/fio-btrfs-raid1.txt,", "homelab-mergerfs/fio-btrfs-raid1-renamed.txt,")
    )
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert (s.renamed, s.removed, s.ingested, s.failed) == (1, 0, 0, 0)
    assert "1 renamed" in s.line()
    path, label, got = _one(db, "SELECT path, label, n_rows FROM files WHERE file_id = ?", [fid])[0]
    assert path.endswith("/fio-btrfs-raid1-renamed.txt") and label == "btrfs raid1" and got == n_rows
    assert _one(db, "SELECT count(*) FROM files WHERE path LIKE '%/fio-btrfs-raid1.txt'") == [(0,)]
    assert [p.rsplit("/", 1)[1] for (p,) in _one(db, "SELECT same_as FROM duplicates")] == [
        "fio-btrfs-raid1-renamed.txt"
    ]
    assert [w for w in s.warnings if "zz-copy.txt" not in w] == []


def test_labels_are_written_with_the_rows(raw_copy, tmp_path, monkeypatch):
    """#3: the labels of a new or changed file go in with its rows, not in a later step a kill can
    miss; and a manifest that differs from the one last applied is applied again."""
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    f = raw_copy / "homelab-mergerfs" / "fio-btrfs-single.txt"
    f.write_bytes(f.read_bytes() + b"\n")

    def killed(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(store.labels, "apply", killed)
    m = raw_copy / "manifest.csv"
    m.write_text(m.read_text().replace(",btrfs (single NVMe),", ",btrfs on one NVMe,"))
    with pytest.raises(KeyboardInterrupt):
        _ingest(raw_copy, db, parquet_dir=False)
    assert _one(db, "SELECT label, study FROM files WHERE path LIKE '%/fio-btrfs-single.txt'") == [
        ("btrfs on one NVMe", "homelab-mergerfs")
    ]
    monkeypatch.undo()
    m.write_text(m.read_text().replace(",Ubuntu 20.04 (kernel 5.4; 5.15 for ZFS 2.1.4),", ",Ubuntu,"))
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.ingested == 0
    assert _one(db, "SELECT count(*) FROM files WHERE os LIKE 'Ubuntu 20.04%'") == [(0,)]


def test_parquet_is_rebuilt_whenever_it_does_not_match_the_database(raw_copy, tmp_path):
    """#4/#9: every table's Parquet file is checked against a stamp each run, not only the tables
    this run wrote; a resolved error leaves ingest_errors.parquet."""
    db, pq = tmp_path / "t.duckdb", tmp_path / "pq"
    bad = raw_copy / "bad.txt"
    bad.write_text("garbage\n")
    _ingest(raw_copy, db, parquet_dir=pq)
    assert _one(db, "SELECT count(*) FROM read_parquet(?)", [str(pq / "ingest_errors.parquet")]) == [(1,)]
    bad.unlink()
    (pq / "bonnie_runs.parquet").unlink()  # lost
    s = _ingest(raw_copy, db, parquet_dir=pq)
    assert s.ingested == 0
    _parquet_equals_db(db, pq)
    (pq / store.STAMP).write_text("{not json")  # a damaged stamp: everything is written again
    (pq / "files.parquet").write_bytes((pq / "duplicates.parquet").read_bytes())
    _ingest(raw_copy, db, parquet_dir=pq)
    _parquet_equals_db(db, pq)


def _parquet_equals_db(db, pq):
    from storagelab.schema import all_tables

    con = duckdb.connect(str(db), read_only=True)
    try:
        for t in all_tables():
            diff = con.execute(
                f'SELECT count(*) FROM ((SELECT * FROM "{t}" EXCEPT ALL SELECT * FROM read_parquet(?)) '
                f'UNION ALL (SELECT * FROM read_parquet(?) EXCEPT ALL SELECT * FROM "{t}"))',
                [str(pq / f"{t}.parquet")] * 2,
            ).fetchone()[0]
            assert diff == 0, t
    finally:
        con.close()


def test_each_database_has_its_own_parquet_folder(raw_copy, tmp_path):
    """#20: `--db other.duckdb` writes beside it, in other-parquet/, never into the cwd or another DB's folder."""
    work = tmp_path / "work"
    work.mkdir()
    r = _cli("ingest", raw_copy, "--db", "a.duckdb", "--manifest", raw_copy / "manifest.csv", "--quiet", cwd=work)
    assert r.returncode == 0, r.stderr
    r = _cli(
        "ingest",
        raw_copy / "thumper-x4500",
        "--db",
        "b.duckdb",
        "--manifest",
        raw_copy / "manifest.csv",
        "--quiet",
        cwd=work,
    )
    assert r.returncode == 0, r.stderr
    assert not list(work.glob("*.parquet"))
    assert store.parquet_dir_for(work / "a.duckdb") == work / "a-parquet"
    _parquet_equals_db(work / "a.duckdb", work / "a-parquet")
    _parquet_equals_db(work / "b.duckdb", work / "b-parquet")
    assert _one(
        work / "a.duckdb", "SELECT count(*) FROM read_parquet(?)", [str(work / "b-parquet" / "files.parquet")]
    ) == [(9,)]


def test_a_schema_rebuild_is_one_transaction(raw_copy, tmp_path, monkeypatch):
    """#5: a rebuild stopped halfway leaves the old database whole (no tool rows without files)."""
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    before = _counts(db)
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = 'old' WHERE key IN ('schema', 'code')")
    con.close()
    calls = []

    def stop(stage):
        calls.append(stage)
        if stage == "schema-drop":
            raise KeyboardInterrupt

    monkeypatch.setattr(store.faults, "inject", stop)
    with pytest.raises(KeyboardInterrupt):
        _ingest(raw_copy, db, parquet_dir=False)
    assert _counts(db) == before
    monkeypatch.undo()
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.rebuilt_schema and _counts(db) == before


def load_text(text: str, folder):
    from storagelab.manifest import load

    f = folder / "plain" / "manifest.csv"
    f.parent.mkdir(exist_ok=True)
    f.write_text(text)
    return load(f)


def test_manifest_mistakes_are_reported_with_file_and_line(raw_copy, tmp_path):
    """#37, #38, #40-43, #45: BOM and UTF-16 read; Latin-1, extra fields, inf/huge/negative refused with the line."""
    from storagelab.manifest import load

    m = raw_copy / "manifest.csv"
    text = m.read_text()
    m.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert len(load(m).rows) == len(text.splitlines()) - 1
    m.write_bytes(text.encode("utf-16"))
    assert len(load(m).rows) == len(text.splitlines()) - 1
    for encoding in ("utf-16-le", "utf-16-be"):  # without a byte-order mark
        m.write_bytes(text.encode(encoding))
        assert load(m).rows == load_text(text, tmp_path).rows
    m.write_bytes(text.replace("btrfs (single NVMe)", "btrfs (single NVMe) caf\xe9").encode("latin-1"))
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "btrfs (single NVMe)" in ln)
    with pytest.raises(ManifestError, match=rf"manifest.csv:{line}: not UTF-8"):
        load(m)
    rows = text.splitlines()
    header = rows[0].split(",")

    def with_value(col, value):
        cells = rows[1].split(",")
        cells[header.index(col)] = value
        m.write_text("\n".join([rows[0], ",".join(cells)] + rows[2:]) + "\n")

    for col, value in [
        ("vdev_count", "inf"),
        ("vdev_count", "1e12"),
        ("recordsize_bytes", "1e30"),
        ("recordsize_bytes", "-131072"),
        ("ashift", "1000"),
        ("device_limit_bytes_per_s", "nan"),
        ("device_limit_bytes_per_s", "-inf"),
        ("vdev_width", "1e999999999"),
    ]:
        with_value(col, value)
        with pytest.raises(ManifestError, match=rf"manifest.csv:2: column {col}"):
            load(m)
    # awk's print of a byte count (new user h5: ram_bytes 2.52765e+10 for 25276510208, 10,208 bytes lost, and nothing
    # said): refused, even where no digit was lost
    for value in ("2.52765e+10", "1.31072e+05"):
        with_value("recordsize_bytes", value)
        with pytest.raises(
            ManifestError, match=rf"manifest.csv:2: column recordsize_bytes: '{re.escape(value)}' is in scientific"
        ):
            load(m)
    with_value("recordsize_bytes", "131072.0")  # a whole number with a decimal point loses nothing
    assert load(m).rows[rows[1].split(",")[0]]["recordsize_bytes"] == 131072
    with_value("recordsize_bytes", "9007199254740993")
    assert load(m).rows[rows[1].split(",")[0]]["recordsize_bytes"] == 9007199254740993
    cells = rows[1].split(",")
    # the seed rows stop before the last column (ram_bytes): as many extra fields as make one too many
    extra = len(header) - len(next(csv.reader([rows[1]]))) + 1
    m.write_text("\n".join([rows[0], ",".join(cells[:1] + ["EXTRA"] * extra + cells[1:])] + rows[2:]) + "\n")
    with pytest.raises(ManifestError, match=rf"manifest.csv:2: {len(header) + 1} fields, the header has {len(header)}"):
        load(m)
    # a column named twice: csv keeps the last, so an empty second 'label' wiped every label (new-user trial)
    m.write_text("\n".join([rows[0] + ",label"] + [r + "," for r in rows[1:]]) + "\n")
    with pytest.raises(ManifestError, match=r"manifest.csv:1: the header names 'label' twice"):
        load(m)
    # a stray or unclosed double quote took the values (or rows) after it into one value, silently
    m.write_text("\n".join([rows[0], rows[1].replace(",", ',"', 1)] + rows[2:]) + "\n")
    with pytest.raises(ManifestError, match=r"manifest.csv:2: ',' expected after '\"' \(a double quote must open"):
        load(m)
    m.write_text(text + rows[1].split(",")[0] + '.2,"unclosed\n')  # it never closes: to the end of the file
    with pytest.raises(ManifestError, match=rf"manifest.csv:{len(rows) + 1}: unexpected end of data"):
        load(m)


def test_several_folders_with_their_own_manifests_are_refused(tmp_path):
    """Listing two folders, each with its manifest.csv, had stored every file unlabelled, with a warning telling
    to add the manifests that were there. Only one manifest labels an ingest: refused, saying what to do."""
    src = FIXTURES / "fio" / "3.33" / "json_only.txt"
    folders = [tmp_path / "s1", tmp_path / "s2"]
    for i, d in enumerate(folders):
        d.mkdir()
        (d / f"run{i}.txt").write_bytes(src.read_bytes() + b"\n" * (i + 1))
        (d / "manifest.csv").write_text(f"path,study,label\nrun{i}.txt,study{i},run {i}\n")
    with pytest.raises(ManifestError) as e:
        ingest(folders, db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert str(e.value) == (
        f"2 folders listed, and {folders[0] / 'manifest.csv'}, {folders[1] / 'manifest.csv'} would not be read: one "
        "manifest labels an ingest; ingest each folder on its own (each with its manifest.csv), or name one with "
        "--manifest"
    )
    assert not (tmp_path / "x.duckdb").exists()
    for d in folders:  # one at a time, each is labelled by its own
        ingest([d], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    con = duckdb.connect(str(tmp_path / "x.duckdb"), read_only=True)
    assert con.execute("SELECT study, label FROM files ORDER BY 1").fetchall() == [
        ("study0", "run 0"),
        ("study1", "run 1"),
    ]
    con.close()


def test_manifest_rows_without_files_and_files_without_rows_are_reported(raw_copy, tmp_path):
    """#46: warnings with file and line; the ingest still succeeds."""
    m = raw_copy / "manifest.csv"
    text = m.read_text()
    m.write_text(text.replace("homelab-mergerfs/fio-btrfs-single.txt,", "homelab-mergerfs/fio-btrfs-singel.txt,"))
    line = next(
        i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("homelab-mergerfs/fio-btrfs-single.txt,")
    )
    s = _ingest(raw_copy, tmp_path / "t.duckdb", parquet_dir=False)
    assert s.failed == 0
    assert any(w.startswith(f"{m}:{line}: homelab-mergerfs/fio-btrfs-singel.txt: no such file") for w in s.warnings)
    assert any(w.endswith("fio-btrfs-single.txt: no row in " + str(m) + " (stored without labels)") for w in s.warnings)
    assert len(s.warnings) == 2


def test_cli_manifest_that_does_not_exist_is_an_error(raw_copy, tmp_path):
    """#47: a mistyped --manifest changes nothing and says so (exit 2)."""
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    r = _cli("ingest", raw_copy, "--db", db, "--manifest", raw_copy / "manfest.csv", "--quiet", "--no-parquet")
    assert r.returncode == 2 and "manfest.csv does not exist" in r.stderr and "Traceback" not in r.stderr
    assert _one(db, "SELECT count(*) FROM files WHERE study IS NULL") == [(0,)]


def test_one_bad_file_name_number_or_depth_never_stops_the_others(raw_copy, tmp_path):
    """#29 non-UTF-8 name, #35 an integer past 64 bits, #31 1,200 nested folders."""
    import os

    odd = os.fsencode(raw_copy / "homelab-mergerfs") + b"/latin1-\xe9\xff.txt"
    with open(odd, "wb") as fh:
        fh.write((raw_copy / "homelab-mergerfs" / "fio-btrfs-single.txt").read_bytes() + b"\n\n")
    zdb = (raw_copy / "freebsd-bonnie-dedup" / "zdb-b-raid1.txt").read_text()
    (raw_copy / "zdb-huge.txt").write_text(
        zdb.replace("bp count:              35419785", "bp count:              99999999999999999999999")
    )
    deep = raw_copy / "deep"
    d = os.fsencode(deep)
    os.mkdir(d)
    for _ in range(1200):
        d += b"/d"
        os.mkdir(d)
    with open(d + b"/zpool.txt", "wb") as fh:
        fh.write((raw_copy / "freebsd-bonnie-dedup" / "zpool-list-after.txt").read_bytes() + b"\n")
    n = sum(1 for _ in open(raw_copy / "manifest.csv")) - 1
    db = tmp_path / "t.duckdb"
    try:
        s = _ingest(raw_copy, db, parquet_dir=tmp_path / "pq")
        again = _ingest(raw_copy, db, parquet_dir=tmp_path / "pq")
    finally:  # shutil.rmtree (pytest's clean-up) recurses: take the 1,200 levels down one by one
        os.unlink(d + b"/zpool.txt")
        while d != os.fsencode(raw_copy):
            os.rmdir(d)
            d = os.path.dirname(d)
    assert s.failed == 1 and s.ingested == n + 2
    assert any(
        e.endswith(
            "zdb-huge.txt:9: invalid: zdb_block_stats.bp_count: 99999999999999999999999 is out of range "
            "(expected a number that fits a BIGINT)"
        )
        or "zdb-huge.txt:9: invalid" in e
        for e in s.errors
    ), s.errors
    assert _one(db, "SELECT count(*) FROM files WHERE path LIKE '%latin1-\\xe9\\xff.txt'") == [(1,)]
    assert _one(db, "SELECT count(*) FROM files WHERE path LIKE '%/d/zpool.txt'") == [(1,)]
    assert again.ingested == 0 and again.failed == 1


def test_a_name_that_spells_out_another_files_escapes_is_said_not_replaced(tmp_path):
    """A name that is not UTF-8 is stored with \\xNN escapes; a file literally named with those escapes gets
    the same key. Neither silently replaces the other: the first listed is stored, the second is named in a
    warning, and every run says so again."""
    import os

    logs = tmp_path / "logs"
    logs.mkdir()
    text = (RAW / "homelab-mergerfs" / "fio-btrfs-single.txt").read_bytes()
    with open(os.fsencode(logs) + b"/latin1-\xe9\xff.txt", "wb") as fh:  # the bytes E9 FF
        fh.write(text)
    (logs / "latin1-\\xe9\\xff.txt").write_bytes(text + b"\n")  # the characters backslash, x, e, 9 ...
    db = tmp_path / "t.duckdb"
    kw = dict(db_path=db, manifest_path=tmp_path / "none.csv", parquet_dir=False, progress=False)
    for _ in range(2):
        s = store.ingest([logs], **kw)
        clash = [w for w in s.warnings if "not ingested; rename one of them" in w]
        assert len(clash) == 1 and "stored as" in clash[0] and clash[0].count("latin1-") == 3, s.warnings
        assert s.failed == 0 and s.replaced == 0
    assert _one(db, "SELECT count(*) FROM files") == [(1,)]


def test_cli_database_faults_are_one_line(raw_copy, tmp_path):
    """#10-12, #58, #55, #59: corrupt, truncated or non-DuckDB --db, a folder, sql with no
    database, bad option values: exit 2, one line, no traceback (too many workers: a note)."""
    good = tmp_path / "good.duckdb"
    _ingest(raw_copy, good, parquet_dir=False)
    truncated = tmp_path / "truncated.duckdb"
    truncated.write_bytes(good.read_bytes()[:20000])
    text = tmp_path / "text.duckdb"
    text.write_text("hello\n")
    rnd = tmp_path / "random.duckdb"
    rnd.write_bytes(bytes(range(256)) * 64)
    bad_block = tmp_path / "checksum.duckdb"
    data = bytearray(good.read_bytes())
    data[12288 + 64 : 12288 + 128] = b"\xde\xad\xbe\xef" * 16  # inside the first block
    bad_block.write_bytes(bytes(data))
    for db, says in [
        (truncated, "not a usable DuckDB database"),
        (text, "not a usable DuckDB database"),
        (rnd, "not a usable DuckDB database"),
        (bad_block, "Corrupt database file"),
        (tmp_path, "is a folder"),
    ]:
        r = _cli("ingest", raw_copy, "--db", db, "--manifest", raw_copy / "manifest.csv", "--quiet", "--no-parquet")
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, (db, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert text.read_text() == "hello\n"  # never overwritten
    r = _cli("sql", "SELECT 1", "--db", tmp_path / "missing.duckdb")
    assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    for opt, value in [
        ("--workers", "0"),
        ("--workers", "-3"),
        ("--batch-files", "0"),
        ("--wait", "nan"),
        ("--wait", "-5"),
        ("--wait", "inf"),
    ]:
        r = _cli("ingest", raw_copy, "--db", good, opt, value)
        assert r.returncode == 2 and opt in r.stderr and "Traceback" not in r.stderr, (opt, value, r.stderr)
    r = _cli("ingest", raw_copy, "--db", good, "--workers", "400", "--quiet")
    assert r.returncode == 0 and "note: --workers 400 is more than the" in r.stderr, r.stderr


def test_cli_disk_full_during_writes_leaves_a_consistent_database(raw_copy, tmp_path):
    """#8: a file-size limit (as a full disk) while writing: one line, exit 2; the re-run finishes."""
    import resource
    import signal

    db = tmp_path / "t.duckdb"

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "storagelab",
            "ingest",
            raw_copy,
            "--db",
            db,
            "--manifest",
            raw_copy / "manifest.csv",
            "--quiet",
            "--no-parquet",
            "--batch-files",
            "3",
        ],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "disk full" in r.stderr and len(r.stderr.strip().splitlines()) <= 2, r.stderr
    r = _cli("ingest", raw_copy, "--db", db, "--manifest", raw_copy / "manifest.csv", "--quiet", "--no-parquet")
    assert r.returncode == 0, r.stderr
    from test_robustness import _complete

    assert _complete(db)[0] == sum(1 for _ in open(raw_copy / "manifest.csv")) - 1


def test_cli_sql_while_an_ingest_writes_is_one_line(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db, parquet_dir=False)
    con = duckdb.connect(str(db))  # a writer holds the database
    try:
        r = _cli("sql", "SELECT count(*) FROM files", "--db", db)
    finally:
        con.close()
    assert r.returncode == 2 and "in use by another process" in r.stderr and "--wait" not in r.stderr
    assert "Traceback" not in r.stderr


def test_a_copy_in_another_study_is_stored_once_and_carries_both_labels(raw_copy, tmp_path):
    """#19: identical bytes in another study are stored once; the copy keeps its own labels (duplicates), the
    other study's selection finds the rows by them, a relabel in the manifest reaches them, and build plans
    that study's reports."""
    from storagelab import report
    from storagelab.analysis import Selection

    src = raw_copy / "homelab-mergerfs" / "fio-btrfs-single.txt"
    (raw_copy / "other-study").mkdir()
    (raw_copy / "other-study" / "btrfs.txt").write_bytes(src.read_bytes())
    m = raw_copy / "manifest.csv"
    m.write_text(m.read_text() + "other-study/btrfs.txt,other-study,,,,btrfs elsewhere\n")
    db = tmp_path / "t.duckdb"
    s = _ingest(raw_copy, db, parquet_dir=False)
    assert s.duplicates == 1
    assert [w for w in s.warnings if "other-study/btrfs.txt: the same bytes as" in w and "labels are kept" in w]
    assert _one(db, "SELECT regexp_extract(path, '[^/]+/[^/]+$'), study, label FROM duplicates") == [
        ("other-study/btrfs.txt", "other-study", "btrfs elsewhere")
    ]
    for study, want in (("other-study", ["homelab-mergerfs/fio-btrfs-single.txt"]), ("homelab-mergerfs", 14)):
        where, params = Selection(study=study).sql("f")
        paths = [
            r[0].split("raw/", 1)[1]
            for r in _one(db, f"SELECT f.path FROM files f JOIN fio_groups g USING (file_id) WHERE {where}", params)
        ]
        assert paths == want if isinstance(want, list) else len(paths) == want, (study, paths)
    m.write_text(m.read_text().replace("other-study/btrfs.txt,other-study,", "other-study/btrfs.txt,study-b,"))
    _ingest(raw_copy, db, parquet_dir=False)
    assert _one(db, "SELECT study FROM duplicates") == [("study-b",)]
    assert "study-b" in {p.get("study") for _, p in report.build_plan(db)}


def test_symlinks_to_files_outside_the_folder_are_not_followed(raw_copy, tmp_path):
    """#27: a link to /etc/passwd or to a log elsewhere is not read; a manifest row naming such a
    link is a warning (no file), not the end of the ingest."""
    outside = tmp_path / "elsewhere.txt"
    outside.write_bytes((raw_copy / "homelab-mergerfs" / "fio-btrfs-single.txt").read_bytes() + b"\n")
    (raw_copy / "links").mkdir()
    (raw_copy / "links" / "passwd").symlink_to("/etc/passwd")
    (raw_copy / "links" / "outside.txt").symlink_to(outside)
    m = raw_copy / "manifest.csv"
    m.write_text(m.read_text() + "links/outside.txt,somewhere\n")
    db = tmp_path / "t.duckdb"
    s = _ingest(raw_copy, db, parquet_dir=False)
    n = sum(1 for _ in open(m)) - 2
    assert s.failed == 0 and s.ingested == n
    assert _one(db, "SELECT count(*) FROM files WHERE path NOT LIKE ?", [str(raw_copy.resolve()) + "/%"]) == [(0,)]
    assert sum("not followed" in w for w in s.warnings) == 2
    assert any("links/outside.txt: no such file" in w for w in s.warnings)


def test_logs_outside_data_raw_are_labelled_by_a_manifest_beside_them(raw_copy, tmp_path):
    db = tmp_path / "t.duckdb"
    s = ingest([raw_copy / "homelab-mergerfs"], db_path=db, parquet_dir=False, progress=False)
    assert s.ingested == 14 and _one(db, "SELECT count(study) FROM files") == [(0,)]  # data/raw's manifest: not theirs
    s = ingest([raw_copy], db_path=db, parquet_dir=False, progress=False)  # raw_copy/manifest.csv
    assert not s.warnings
    assert _one(db, "SELECT count(*) - count(study) FROM files") == [(0,)]


def test_a_label_only_change_is_counted(tmp_path):
    """A manifest added (or edited) for files already stored relabels them without a re-parse, and the summary
    says so (new-user trial: 'ingested 0, skipped 12 unchanged' and nothing about the labels)."""
    import shutil

    raw = tmp_path / "mylogs"
    raw.mkdir()
    for name in ("plain.out.txt", "chunk_c2.out.txt"):
        shutil.copy(FIXTURES / "bonnie" / "2.00a" / name, raw / name)
    db = tmp_path / "x.duckdb"
    first = ingest([raw], db_path=db, parquet_dir=False, progress=False, workers=1)
    assert (first.ingested, first.relabelled) == (2, 0)
    from storagelab import paths

    assert paths.RAW not in raw.parents
    assert first.warnings == [  # no manifest beside them: data/raw/'s cannot label them, and that is said
        f"no manifest at {raw / 'manifest.csv'}: the files under {raw} are unlabelled"
    ]
    (raw / "manifest.csv").write_text("path,study,label\nplain.out.txt,mine,A\nchunk_c2.out.txt,mine,B\n")
    second = ingest([raw], db_path=db, parquet_dir=False, progress=False, workers=1)
    assert (second.ingested, second.skipped, second.relabelled) == (0, 2, 2)
    assert second.line().startswith("ingested 0 (of which 0 replaced), skipped 2 unchanged, 2 relabelled, failed 0;")
    again = ingest([raw], db_path=db, parquet_dir=False, progress=False, workers=1)
    assert again.relabelled == 0 and "relabelled" not in again.line()
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT label FROM files ORDER BY label").fetchall() == [("A",), ("B",)]
    con.close()


def test_notebooks_refuse_a_database_of_another_schema(tmp_path):
    """A database built before a table was added (the trial met 'Table with name fio_commands does not exist' in
    the middle of notebook 08) is refused when opened, with what to do."""
    import duckdb as _duckdb

    from storagelab.analysis import open_db
    from storagelab.store.faults import StoreError

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "a.txt").write_bytes((FIXTURES / "fio" / "3.33" / "json_only.txt").read_bytes())
    db = tmp_path / "x.duckdb"
    ingest([raw], db_path=db, parquet_dir=False, progress=False, workers=1)
    open_db(db).close()  # built by this version: opens
    con = _duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = 'an-older-one' WHERE key = 'schema'")
    con.close()
    with pytest.raises(StoreError) as e:
        open_db(db)
    assert str(e.value) == (
        f"{db} was built by another version of storagelab (its tables differ from this one's): run "
        f"`storagelab ingest --db {db}` (or ./run build) to rebuild it from the raw files"
    )


def test_a_gone_stored_file_hands_its_rows_to_a_copy_still_on_disk(tmp_path):
    """The same log in two studies is stored once (s1) and listed as a copy (s2). s1's file deleted: its rows had
    left with it, and study B lost them while s2/copy.txt was still there. Now the copy holds the rows, with its
    own labels; then that copy overwritten with text no parser reads loses them, instead of keeping stale rows."""
    src = FIXTURES / "fio" / "3.33" / "json_only.txt"
    s1, s2, db = tmp_path / "s1", tmp_path / "s2", tmp_path / "x.duckdb"
    for d, name, study in ((s1, "a.txt", "A"), (s2, "copy.txt", "B")):
        d.mkdir()
        (d / name).write_bytes(src.read_bytes())
        (d / "manifest.csv").write_text(f"path,study,label\n{name},{study},{name} in {study}\n")
    for d in (s1, s2):
        ingest([d], db_path=db, parquet_dir=False, progress=False, workers=1)

    def state():
        con = duckdb.connect(str(db), read_only=True)
        try:
            return (
                con.execute("SELECT path, study, label FROM files").fetchall(),
                con.execute("SELECT count(*) FROM duplicates").fetchone()[0],
                con.execute("SELECT count(*) FROM fio_results").fetchone()[0],
                con.execute("SELECT path, kind FROM ingest_errors").fetchall(),
            )
        finally:
            con.close()

    rows = state()[2]
    assert rows > 0 and state()[1] == 1
    (s1 / "a.txt").unlink()
    s = ingest([s1], db_path=db, parquet_dir=False, progress=False, workers=1)
    copy = str(s2 / "copy.txt")
    assert f"{s1 / 'a.txt'} is gone: its copy {copy} (same bytes) now holds its rows, with its own labels" in s.warnings
    assert state() == ([(copy, "B", "copy.txt in B")], 0, rows, [])
    (s2 / "copy.txt").write_text("hello this is not a log\n")
    s = ingest([s2], db_path=db, parquet_dir=False, progress=False, workers=1)
    assert s.failed == 1 and any(w.startswith(f"{copy}: its new content failed to parse (above)") for w in s.warnings)
    assert state() == ([], 0, 0, [(copy, "unknown-format")])
