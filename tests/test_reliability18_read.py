"""Reliability-18 (h6): reliability-17's read-side fixes, attacked again (docs/reliability-18-read.md)."""

import argparse
import json
import os
import re

import duckdb
import pytest
from conftest import FIXTURES

from storagelab import store, stuck
from storagelab.store import stream

COMMANDS = ["parse", "run", "report", "build", "schema", "export", "spark-ingest", "sql", "compare", "lab", "lab fio"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_command_is_watched_for_a_read_that_never_returns(cmd):
    # the attack: root's `run -r db_path` of a database on the user's stopped bindfs hung in request_wait_answer
    # (its check reads the database before any notebook runs); SIGTERM, SIGHUP and Ctrl-C: alive 4 s later, only
    # kill -9 ended it, as sql did before reliability-15. Only sql, parse, export, compare and schema were watched.
    seen = []
    args = argparse.Namespace(cmd=cmd, func=lambda _: seen.append(list(stuck._LINES)) or 0)
    assert stuck.run_unstuck(args) == 0
    assert seen == [[f"storagelab {cmd}: {stuck.STUCK_TAIL}"]]  # main: [[]] for run, report, build, lab, ...
    assert stuck._LINES == []


def test_build_s_ingest_says_the_ingest_s_line_with_one_watcher():
    inner = []

    @stuck.exit_when_stuck(stuck.INGEST_STUCK)
    def ingest(_):
        inner.append(list(stuck._LINES))
        return 0

    assert stuck.run_unstuck(argparse.Namespace(cmd="build", func=ingest)) == 0
    assert inner == [[f"storagelab build: {stuck.STUCK_TAIL}", stuck.INGEST_STUCK]]  # the watcher says the last


def test_a_huge_log_swapped_after_its_hash_is_not_stored_with_the_other_file_s_rows(tmp_path, monkeypatch):
    # the attack: the user exchanged their log with a file of the same size and mtime (renameat2 EXCHANGE in a
    # loop) while root's ingest streamed it; the SHA-256 (one open) and the rows (another) came from different files
    # in 20 of 40 runs, exit 0. Here the swap is made right after the hash, as the loop's hits did.
    logs = tmp_path / "logs"
    logs.mkdir()
    log, alt = logs / "ceph_clat.log", tmp_path / "alt.log"
    text = (FIXTURES / "fio" / "published" / "fio-2.2.10-ceph-randread-4k-KERNEL_clat.log").read_text()
    log.write_text(text)
    alt.write_text(re.sub(r"(?m)^(\d+), \d", r"\1, 9", text))  # the same size, other latencies
    os.utime(alt, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns))
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    real = stream.prepare

    def then_swapped(job):
        done = real(job)
        os.rename(alt, log)  # the same size and mtime at the name: only the inode and ctime differ
        return done

    monkeypatch.setattr(stream, "prepare", then_swapped)
    db = tmp_path / "x.duckdb"
    store.ingest([logs], db_path=db, manifest_path=tmp_path / "none.csv", parquet_dir=False, progress=False)
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("select sha256, (select sum(value) from fio_log_samples) from files").fetchall()
        errors = con.execute("select message from ingest_errors").fetchall()
    assert stored == []  # main: [(SHA-256 of the first file, 2,377,273: the second file's latencies)]
    assert len(errors) == 1 and errors[0][0] == (
        "the file changed while it was read (4,296 bytes when listed, rewritten or another file put at its name since): "
        "not stored this time; the next ingest reads it again"
    )


def test_a_dataset_s_meta_json_cannot_make_the_reader_run_its_sql(tmp_path):
    # the attack: the second user's dataset, its meta.json's column type `VARCHAR) ...; COPY (SELECT content FROM
    # read_text('/root/h18v/in/secret.txt')) TO '/tmp/h18pwn.txt' ...`; root's `run -r db_path` of it wrote root's
    # 0600 file into /tmp, world-readable (the views are SQL made of meta.json's table, column and type names)
    from storagelab import dataset
    from storagelab.errors import StoreError

    leak = tmp_path / "leak.csv"
    tables = {n: [[c.name, c.type] for c in t.columns] for n, t in dataset._tables().items()}
    name = sorted(tables)[0]
    tables[name][-1][1] += f"); COPY (SELECT 'theirs') TO '{leak}' (FORMAT csv); CREATE TABLE \"zz\" (\"z\" INTEGER"
    info = {"format": dataset.FORMAT, "schema_signature": dataset.schema_signature(), "parts": {}, "tables": tables}
    (tmp_path / "ds" / dataset.META_DIR).mkdir(parents=True)
    (tmp_path / "ds" / dataset.META_DIR / "meta.json").write_text(json.dumps(info))
    with pytest.raises(StoreError, match="lists a table or column that is not of this version's schema"):
        dataset.open_dataset(tmp_path / "ds")  # main: opened, and leak.csv written by the reader
    assert not leak.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the database to another user")
def test_a_view_in_another_user_s_database_is_not_run_with_the_reader_s_rights(tmp_path):
    # the attack: the second user's database, its `fio_results` a view selecting read_text('/root/h18v/in/secret.txt');
    # root's `sql --db` of it printed root's 0600 file. Here the "secret" is a 0600 file of root's in tmp_path.
    from storagelab import database
    from storagelab.errors import StoreError

    secret = tmp_path / "secret.txt"
    secret.write_text("ROOTSECRET")
    secret.chmod(0o600)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    db = theirs / "x.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(f"CREATE VIEW fio_results AS SELECT content FROM read_text('{secret}')")
    for p in (theirs, db):
        os.chown(p, 1002, 1002)
    with pytest.raises(StoreError, match=r"a database of another user's with views or macros \(fio_results\)"):
        database.connect(db, read_only=True)  # main: opened, and `SELECT * FROM fio_results` gave ROOTSECRET


def test_a_sparse_manifest_or_ignore_file_is_not_read_whole(tmp_path, monkeypatch):
    # the attack: the second user's .storagelabignore (or manifest.csv) made a 6 GiB sparse file; root's ingest read
    # it whole: "out of memory (MemoryError)" under ulimit -v 3 GB, nothing stored. Here 64 MiB against a 1 MiB limit.
    from storagelab import ignore, ingest_open, manifest

    monkeypatch.setattr(ingest_open, "MAX_TEXT_BYTES", 1 << 20, raising=False)
    for name in (ignore.IGNORE_FILE, "manifest.csv"):
        with open(tmp_path / name, "wb") as f:
            f.truncate(64 << 20)
    with pytest.raises(ignore.IgnoreError, match=r"67,108,864 bytes, more than any ignore file \(1,048,576 at most\)"):
        ignore.IgnoreList.load(tmp_path)  # main: 64 MiB read (36 s here), a list of no rules
    with pytest.raises(manifest.ManifestError, match=r"manifest: 67,108,864 bytes, more than any manifest \(1,048,576"):
        manifest.load(tmp_path / "manifest.csv")  # main: 64 MiB read, then refused for its NUL bytes


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the database to another user")
def test_a_table_name_of_another_user_s_database_cannot_end_the_reader_s_sql(tmp_path):
    # the attack: their table named `files"; COPY (SELECT content FROM read_text('/root/...')) TO '/tmp/...' ...;
    # SELECT 1 FROM "files`: root's `run 07_explore -r db_path` of it (explore.table_counts: f'... FROM "{name}"')
    # wrote root's 0600 file into /tmp, world-readable
    from storagelab import database
    from storagelab.analysis import explore
    from storagelab.errors import StoreError

    leak = tmp_path / "leak.csv"
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    db = theirs / "x.duckdb"
    name = f"files\"; COPY (SELECT 'theirs') TO '{leak}' (FORMAT csv); SELECT 1 FROM \"files"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE files (a INTEGER)")
        con.execute('CREATE TABLE "{}" (a INTEGER)'.format(name.replace('"', '""')))
    for p in (theirs, db):
        os.chown(p, 1002, 1002)
    with pytest.raises(StoreError, match="a database of another user's with a table or column named 'files"):
        explore.table_counts(database.connect(db, read_only=True))  # main: counted, and leak.csv written
    assert not leak.exists()
