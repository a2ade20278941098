"""Reliability-27 (store): a failed file is bytes of a size and a second too. Same-size logs of one second (a tar),
one of them not the output of any tool: moved onto a stored log by `mv` (which keeps the second), it was skipped as
the stored log unchanged, its rows kept under a path that holds no benchmark output, also by whole ingests."""

import os

import duckdb
from test_store_identity import OneSecond

FAILED = b"#" * len(OneSecond.fio)  # of the logs' size, and no tool's output


def _failed(tree: OneSecond) -> set[str]:
    con = duckdb.connect(str(tree.tmp / "d.duckdb"), read_only=True)
    rows = con.execute("SELECT path FROM ingest_errors").fetchall()
    con.close()
    return {os.path.relpath(p, tree.logs) for (p,) in rows}


def _fail(tree: OneSecond, name: str) -> None:
    (tree.logs / name).write_bytes(FAILED)
    os.utime(tree.logs / name, ns=(tree.SECOND, tree.SECOND))


def test_a_failed_file_moved_onto_a_stored_log_is_read_not_kept_as_that_log(tmp_path):
    tree = OneSecond(tmp_path, {"s1/a.txt": 0})
    _fail(tree, "s2/e.txt")
    tree.ingest("s1", "s2")
    tree.mv("s2/e.txt", "s1/a.txt")
    tree.ingest(
        "s1"
    )  # on the old code: s1/a skipped, its former log's rows kept, no failure listed (`ingest s1 s2` too)
    assert _failed(tree) == {"s1/a.txt", "s2/e.txt"}
    assert tree.held("s1") == {}


def test_a_failed_file_exchanged_with_a_stored_log_is_read_where_it_lands(tmp_path):
    tree = OneSecond(tmp_path, {"s1/a.txt": 0})
    _fail(tree, "s2/e.txt")
    tree.ingest("s1", "s2")
    tree.rotate("s1/a.txt", "s2/e.txt")
    tree.ingest("s2")  # s2/e, read, holds s1/a's stored log: on the old code a copy of it, s1/a left as stored
    tree.ingest("s1", "s2")  # on the old code: s1/a skipped by this and every later ingest, its log's rows kept
    assert _failed(tree) == {"s1/a.txt"}
    assert tree.held("s2") == tree.on_disk("s2")


def test_bytes_moved_off_a_path_that_now_holds_another_size_are_read_where_they_land(tmp_path):
    """A rotation of three (s2/b <- s1/a, a longer log; s1/a <- s3/a; s3/a <- s2/b's bytes), then `ingest s2`: s2/b
    held bytes of another size, so no exchange was seen, and the bytes it had held (a log, or a failure) reached
    s3/a, of the same size and second as s3/a's record: every later ingest skipped s3/a, its old rows kept."""
    for held in ("log", "failure"):
        files = {"s3/a.txt": 1} if held == "failure" else {"s2/b.txt": 0, "s3/a.txt": 1}
        tree = OneSecond(tmp_path / held, files, ("s1", "s2", "s3"))
        (tree.logs / "s1/a.txt").write_bytes(tree.fio + b"\n")
        os.utime(tree.logs / "s1/a.txt", ns=(tree.SECOND, tree.SECOND))
        if held == "failure":
            _fail(tree, "s2/b.txt")
        tree.ingest("s1", "s2", "s3")
        tree.rotate("s2/b.txt", "s1/a.txt", "s3/a.txt")
        tree.ingest("s2")
        tree.ingest("s1", "s2", "s3")  # on the old code: s3/a skipped, the rows of the bytes it had kept
        assert tree.held("s3") == ({} if held == "failure" else tree.on_disk("s3"))
        assert _failed(tree) == ({"s3/a.txt"} if held == "failure" else set())


def test_a_gone_file_moved_onto_a_file_of_another_folder_is_read_there(tmp_path):
    """`mv s2/b s3/a` (one size, one second), then `ingest s2`: s2/b's rows were removed as gone, and every later
    ingest skipped s3/a, the rows of the bytes it had held kept, the bytes it holds never stored."""
    tree = OneSecond(tmp_path, {"s2/b.txt": 0, "s3/a.txt": 1}, ("s2", "s3"))
    tree.mv("s2/b.txt", "s3/a.txt")
    tree.ingest("s2")
    tree.ingest("s2", "s3")  # on the old code: s3/a skipped
    assert tree.held("s3") == tree.on_disk("s3")
