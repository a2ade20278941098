"""Reliability-19 (h8): reliability-18's read-side fixes, attacked again (docs/reliability-19-read.md)."""

import contextlib
import os

import duckdb
from test_reliability20_read import a_log_and_another, ingested_and_refused

from storagelab.store import stream


def test_a_huge_log_rewritten_in_place_after_its_hash_is_not_stored_with_the_new_rows(tmp_path, monkeypatch):
    # the attack: reliability-18's fix takes the hashed file's identity (inode, ctime) once the hash is read; the
    # user rewrites their log in place (same inode, same size, `touch -r` for the mtime) between the hash's last
    # read and that fstat: the identity taken is the new content's, every later open matches it, and the SHA-256
    # of the first content was stored with the rows of the second
    logs, log, other = a_log_and_another(tmp_path)  # other: the same size, other latencies
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    real = stream.open_input

    @contextlib.contextmanager
    def rewritten_at_eof(path, *a, **k):
        with real(path, *a, **k) as fh:
            read = fh.read

            def reading(n=-1):
                block = read(n)
                if not block and os.fspath(path) == os.fspath(log):
                    st = os.stat(log)
                    with open(log, "r+b") as w:  # in place: the inode stays
                        w.write(other)
                    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
                return block

            fh.read = reading
            yield fh

    monkeypatch.setattr(stream, "open_input", rewritten_at_eof)
    # main: one file, the SHA-256 of the first content with 2,377,273 (the sum of the second's latencies)
    assert ingested_and_refused(logs, tmp_path) == (0, [(True,)])


def test_an_unfinished_ingest_s_relative_path_does_not_spin_the_reader():
    # the attack: another user's database whose meta lists an unfinished ingest of `gone/a/b` (relative, missing);
    # root's `sql --db` of it looked for the folder holding it, reached "", and spun at 100% CPU for ever
    import json
    import threading

    from storagelab import database

    con = duckdb.connect()
    con.execute("CREATE TABLE meta (key VARCHAR, value VARCHAR)")
    con.execute("INSERT INTO meta VALUES (?, ?)", [database.UNFINISHED, json.dumps([["x", "gone/a/b"]])])
    said = []
    reader = threading.Thread(target=lambda: said.append(database.unfinished_ingest(con, "t.db")), daemon=True)
    reader.start()
    reader.join(5)
    assert said and "run `storagelab ingest . --db t.db` (a folder holding it)" in said[0]  # main: still spinning
