"""Reliability-24, the read side (issue 26, h1): the excerpt of a streamed (huge) log shows the lines the parser
read, decoded as the parser decoded them."""

import codecs
import gzip
import hashlib
import re

from storagelab import excerpts
from storagelab.parsers import decode
from storagelab.store import stream

ROW = re.compile(r'<span id="L(\d+)"(?: class="hl")?><b>\s*\d+</b>  ([^\n]*)')


def _rows(tmp_path, w, p, start, end):
    href = w.href(str(p), hashlib.sha256(p.read_bytes()).hexdigest(), start, end)
    assert href is not None
    return ROW.findall((tmp_path / "rep" / href.split("#")[0]).read_bytes().decode("utf-8"))  # a CR kept


def test_the_excerpt_of_a_huge_log_is_decoded_as_its_parser_decoded_it(tmp_path, monkeypatch):
    monkeypatch.setattr(excerpts, "WHOLE_TEXT_MAX", 1000, raising=False)  # "huge" made small
    w = excerpts.Excerpts(tmp_path / "rep")
    body = "".join(f"{i}, 4890, 0, 4096, 0\n" for i in range(60))
    # Latin-1 (the parser reads the whole log as Latin-1 once a byte is not UTF-8)
    lat = tmp_path / "lat.log"
    lat.write_bytes((body + "lat=5 \xb5s\n" + body).encode("latin-1"))
    assert _rows(tmp_path, w, lat, 61, 61)[8] == ("61", "lat=5 \xb5s")  # main: 'lat=5 \ufffds'
    # a gzip of a UTF-16 LE log without BOM whose U+010A holds a 0x0A byte: main split it there, showed its NULs
    u16 = tmp_path / "u16.log.gz"
    text = body + "job \u010a\r\n" + body
    u16.write_bytes(gzip.compress(text.encode("utf-16-le")))
    assert _rows(tmp_path, w, u16, 61, 62)[8:10] == [("61", "job \u010a"), ("62", "0, 4890, 0, 4096, 0")]
    # with its BOM, plain (main: no excerpt at all), and big-endian
    for name, data in (
        ("bom.log", codecs.BOM_UTF16_LE + text.encode("utf-16-le")),
        ("be.log", text.encode("utf-16-be")),
    ):
        (tmp_path / name).write_bytes(data)
        assert _rows(tmp_path, w, tmp_path / name, 61, 61)[8] == ("61", "job \u010a")
    # a UTF-8 BOM before Latin-1 text, and a last line ending in a lone CR: as decode gives them
    odd = tmp_path / "odd.log"
    odd.write_bytes(codecs.BOM_UTF8 + (body + "\xe9\nend\r").encode("latin-1"))
    rows = _rows(tmp_path, w, odd, 1, 1)
    assert rows[0] == ("1", "0, 4890, 0, 4096, 0")
    assert _rows(tmp_path, w, odd, 62, 62)[-2:] == [("61", "\xe9"), ("62", "end\r")]
    assert [r[1] for r in _rows(tmp_path, w, odd, 55, 62)] == decode(odd.read_bytes()).split("\n")[46:62]


def test_the_streamed_parse_reads_the_lines_decode_gives(tmp_path):
    # the stream parser's lines (store.stream.lines) were not decode's for a UTF-8 BOM before Latin-1 text (line 1
    # kept 'ï»¿') and for a last line ending in a lone CR (dropped)
    p = tmp_path / "odd.log"
    p.write_bytes(codecs.BOM_UTF8 + "jobname: x\n\xe9\nend\r".encode("latin-1"))
    assert stream._head(str(p))[1] == "utf-8-sig"
    assert (
        list(stream.lines(str(p), "latin-1")) == decode(p.read_bytes()).split("\n") == ["jobname: x", "\xe9", "end\r"]
    )


def test_a_view_in_a_database_others_can_write_is_not_run_with_the_reader_s_rights(tmp_path):
    # the attack: root's own database left mode 0666; the second user rewrote its bytes in place (cat of a copy they
    # had given a view of read_text('/root/...')), and root's `sql --db` printed root's 0600 file
    import duckdb
    import pytest

    from storagelab import database
    from storagelab.errors import StoreError

    secret = tmp_path / "secret.txt"
    secret.write_text("ROOTSECRET")
    secret.chmod(0o600)
    db = tmp_path / "x.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(f"CREATE VIEW fio_leak AS SELECT content FROM read_text('{secret}')")
    db.chmod(0o600)
    with database.connect(db, read_only=True) as con:  # this user's own, writable by no one else: their own SQL
        assert con.execute("SELECT * FROM fio_leak").fetchall() == [("ROOTSECRET",)]
    for mode in (0o666, 0o620):
        db.chmod(mode)
        with pytest.raises(StoreError, match=rf"a database that other users can write \(mode 0{mode:o}\) with views"):
            database.connect(db, read_only=True)  # main: opened, and `SELECT * FROM fio_leak` gave ROOTSECRET
        with pytest.raises(StoreError, match=r"with views or macros \(fio_leak\)"):
            database.connect(db)  # an ingest's: a macro of theirs named as a function it calls (now) would run


def test_a_view_replayed_from_a_wal_others_can_write_is_not_run(tmp_path):
    # the database root's own (0600), its write-ahead log left 0666 (root's umask 000): what the log holds is replayed
    # into what root reads, a view of read_text('/root/...') too
    import pytest

    from storagelab import database
    from storagelab.errors import StoreError

    db = tmp_path / "x.duckdb"
    view_in_its_wal(db)
    db.chmod(0o600)
    (tmp_path / "x.duckdb.wal").chmod(0o666)
    with pytest.raises(StoreError, match=r"a database that other users can write \(mode 0622\) with views"):
        database.connect(db, read_only=True)  # main: opened, the view replayed from the log and run


def view_in_its_wal(db):
    """A new database ``db`` whose table is checkpointed and whose write-ahead log holds a view (fio_leak), left there
    (no checkpoint at close): what a reader's open replays."""
    import duckdb

    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t (a INT)")
        con.execute("CHECKPOINT")
        con.execute("PRAGMA disable_checkpoint_on_shutdown")
        con.execute("CREATE VIEW fio_leak AS SELECT 'ROOTSECRET' AS content")


def test_two_same_size_logs_of_one_second_exchanged_by_mv_are_read_again(tmp_path):
    # the attack: two fio logs of one size, both of mtime 22:13:20.000000000 (as tar extracts them), ingested with
    # their labels; `mv` exchanged them (the names put right); the next ingest said "skipped 2 unchanged" and went on
    # reporting each label with the other's numbers (baseline 4024.5, where its file now holds 9024.5's lines)
    import os

    import duckdb

    from storagelab.store import ingest

    logs = tmp_path / "s"
    logs.mkdir()
    base, tuned = logs / "base_clat.1.log", logs / "tuned_clat.1.log"
    base.write_text("".join(f"{i * 100}, {4000 + i}, 0, 4096, 0\n" for i in range(50)))
    tuned.write_text("".join(f"{i * 100}, {9000 + i}, 0, 4096, 0\n" for i in range(50)))
    for p in (base, tuned):
        os.utime(p, ns=(1_700_000_000 * 10**9, 1_700_000_000 * 10**9))
    (logs / "manifest.csv").write_text("path,study,label\nbase_clat.1.log,s,baseline\ntuned_clat.1.log,s,tuned\n")
    db = tmp_path / "db.duckdb"

    def by_label():
        ingest([logs], db_path=db, manifest_path=logs / "manifest.csv", parquet_dir=False, progress=False, workers=1)
        with duckdb.connect(str(db), read_only=True) as con:
            q = "SELECT f.label, avg(s.value) FROM fio_log_samples s JOIN files f USING (file_id) GROUP BY 1 ORDER BY 1"
            return con.execute(q).fetchall()

    assert by_label() == [("baseline", 4024.5), ("tuned", 9024.5)]
    os.replace(base, logs / "x")
    os.replace(tuned, base)
    os.replace(logs / "x", tuned)
    assert by_label() == [("baseline", 9024.5), ("tuned", 4024.5)]  # main: the same as before the exchange


def test_a_stored_log_exchanged_with_a_failed_file_of_its_size_and_second_is_read_again():
    # as above with the other file one that failed (not stored): the stored path was skipped, the failed path's read
    # found the stored bytes and listed it as their copy: the stored path's label kept numbers its file no longer has
    from storagelab.store.filestamps import Stamp
    from storagelab.store.listing import ListedFile
    from storagelab.store.plan import Plan, StoredFile

    stored = {"s/a.log": StoredFile("A" * 64, 1138, 10**18, 1, "fio", "v")}
    stamps = {"s/a.log": Stamp("A" * 64, 1138, 10**18, 7, 5)}  # a.log's inode 7 when its bytes were read
    # exchanged by `mv`: each path holds the other's inode (now the stamps tell, not the size and second)
    listing = [
        ListedFile("s/a.log", "/x/s/a.log", 1138, 10**18, 8, 6),
        ListedFile("s/b.log", "/x/s/b.log", 1138, 10**18, 7, 5),
    ]
    plan = Plan.make(listing, stored, {}, {"fio": "v"}, ["s/"], stamps=stamps)
    assert sorted(j.key for j in plan.jobs) == ["s/a.log", "s/b.log"]  # main: s/a.log skipped
    assert plan.skipped == 0
    untouched = [
        ListedFile("s/a.log", "/x/s/a.log", 1138, 10**18, 7, 5),
        ListedFile("s/b.log", "/x/s/b.log", 1138, 10**18, 8, 6),
    ]
    plan = Plan.make(untouched, stored, {}, {"fio": "v"}, ["s/"], stamps=stamps)
    assert ([j.key for j in plan.jobs], plan.skipped) == (["s/b.log"], 1)


def test_a_report_of_another_user_s_database_shows_no_file_it_names_without_its_sha256(tmp_path):
    # the attack: the second user's database, its bonnie rows' files.path set to /etc/shadow (its charts carry no
    # SHA-256); root's `run 09_bonnie -r db_path theirs -r study ''` wrote raw/shadow-...-L11-11.html with shadow's
    # lines 3-19. Here root's "shadow" is a 0600 file of 30 lines in tmp_path.
    import os

    import pytest

    if os.geteuid() != 0:
        pytest.skip("needs root to give the database to another user")
    shadow = tmp_path / "shadow"
    shadow.write_text("".join(f"user{i}:$6$secret{i}:19000:0:99999:7:::\n" for i in range(30)))
    shadow.chmod(0o600)
    row = {"v": 1, "path": str(shadow), "line_start": 11, "line_end": 11}
    spec = {"datasets": {"d": [row]}, "mark": "bar", "data": {"name": "d"}}
    assert excerpts.enrich(spec, tmp_path / "own")["datasets"]["d"][0].get("raw_href")  # root's own reports: as before
    their_database_read(tmp_path)
    out = excerpts.enrich(spec, tmp_path / "rep")["datasets"]["d"][0]
    assert "raw_href" not in out and not (tmp_path / "rep" / "raw").exists()  # main: a page of shadow's lines 3-19
    assert out["raw_file"] == str(shadow)  # the tooltip still names what their database says


def their_database_read(tmp_path):
    """A database of the second user's (uid 1002: theirs, in a folder of theirs) opened by ``database.connect``, as
    `run -p db_path THEIRS` opens it: what is read from then on is read as theirs (``database.THEIRS``)."""
    import os

    import duckdb

    from storagelab import database

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    db = theirs / "x.duckdb"
    duckdb.connect(str(db)).close()
    for p in (theirs, db):
        os.chown(p, 1002, 1002)
    database.connect(db, read_only=True).close()
    return db


def test_an_excerpt_for_a_row_without_its_sha256_says_it_is_the_file_as_it_is_now(tmp_path):
    # a bonnie chart's row (no SHA-256) of a log rewritten since it was ingested was shown the new lines under the
    # new bytes' SHA-256, as if they were the number's
    f = tmp_path / "b.log"
    f.write_bytes(b"bw=999\nx\n")
    w = excerpts.Excerpts(tmp_path / "rep")
    bare = (tmp_path / "rep" / w.href(str(f), None, 1, 1).split("#")[0]).read_text()
    assert "these are the file's lines as it is now" in bare  # main: nothing said
    sha = hashlib.sha256(f.read_bytes()).hexdigest()
    checked = (
        tmp_path / "rep2" / excerpts.Excerpts(tmp_path / "rep2").href(str(f), sha, 1, 1).split("#")[0]
    ).read_text()
    assert "as it is now" not in checked and "bw=999" in checked


def test_the_bonnie_chart_s_rows_carry_their_file_s_sha256(tmp_path):
    # High 4's fix for notebook 09: a bonnie log rewritten after its ingest gets no excerpt (its bytes are not the
    # stored SHA-256's); main: the chart's rows had no sha256 and the page showed the rewritten lines
    from conftest import FIXTURES

    from storagelab.analysis import Selection, bonnie_rates, bonnie_table, open_db
    from storagelab.store import ingest

    log = tmp_path / "logs" / "big_n16.out.txt"
    log.parent.mkdir()
    log.write_bytes((FIXTURES / "bonnie" / "2.00a" / "big_n16.out.txt").read_bytes())
    db = tmp_path / "db.duckdb"
    ingest([log.parent], db_path=db, parquet_dir=False, progress=False, workers=1)
    with open_db(db) as con:
        res = bonnie_table.analyse(con, Selection())
    rows = bonnie_rates.chart_frame(res["results"], res["table"]).to_dicts()
    assert rows and {r["sha256"] for r in rows} == {hashlib.sha256(log.read_bytes()).hexdigest()}
    log.write_bytes(log.read_bytes().replace(b"361m  84", b"999m  99"))
    spec = {"datasets": {"d": rows}, "mark": "bar", "data": {"name": "d"}}
    assert not any("raw_href" in r for r in excerpts.enrich(spec, tmp_path / "rep")["datasets"]["d"])
