"""One file, one verdict (issue 26, reliability-2 mediums and lows): parse and ingest say the same of a file,
in bounded memory; names are printed as they are stored; the database's own files are not ingested; a file
that grows while it is read is not stored with a stale size and SHA-256."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
from conftest import FIXTURES, ROOT

HIST_LINE_BINS = 7_000_000  # the attack's file had 69,999,997 bins in 210 MB: the same shape, a tenth


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )


def _peak_rss_kib(*args: str, env: dict) -> tuple[int, subprocess.CompletedProcess]:
    """The command's peak resident memory (KiB), measured in a parent of its own (no other children)."""
    probe = (
        "import resource, subprocess, sys, json; "
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode, r.stderr]))"
    )
    import json

    full_env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), **env)
    r = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", "storagelab", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=ROOT,
        timeout=600,
    )
    rss, rc, err = json.loads(r.stdout)
    return rss, subprocess.CompletedProcess(args, rc, "", err)


def test_a_huge_one_line_histogram_log_gets_one_verdict_in_bounded_memory(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "big_clat_hist.1.log"
    with open(log, "w") as f:
        f.write("1019, 1, 65536")
        f.write(", 0" * HIST_LINE_BINS)
        f.write("\n")
    assert log.stat().st_size > 20_000_000
    streamed = {"STORAGELAB_STREAM_MIN_BYTES": "1000000"}  # past this size ingest streams the file, as at 210 MB
    rss, parse = _peak_rss_kib("parse", str(log), env=streamed)
    verdict = (
        f"{log}:1: unsupported-version: {HIST_LINE_BINS} histogram bins "
        "(expected 1856 bins (fio >= 3.0) or 1216 (fio 2.x), divided by 2^log_hist_coarseness)"
    )
    assert parse.returncode == 1 and parse.stderr == f"storagelab parse: {verdict}\n"
    assert rss < 400_000  # KiB; it took 924 MB for this file (8.8 GB at 210 MB) when the line was split first
    db = tmp_path / "x.duckdb"
    ingest = _run("ingest", str(logs), "--db", str(db), "--no-parquet", env=streamed)
    assert ingest.returncode == 1 and f"error: {verdict}" in ingest.stderr.splitlines()
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT kind, line, message FROM ingest_errors").fetchall() == [
        ("unsupported-version", 1, f"{HIST_LINE_BINS} histogram bins")
    ]
    con.close()


def test_a_real_histogram_log_cut_by_the_sniff_window_is_still_one(tmp_path):
    """A histogram line longer than the window sniff_log judges (64 KiB) is judged on its whole fields."""
    from storagelab.parsers.fio.logs import SNIFF_CHARS, sniff_log

    line = (FIXTURES / "fio" / "3.33" / "logs" / "avg_clat_hist.1.log").read_text().splitlines()[0]
    big = line.split(", ")[:3] + ["123456789"] * (SNIFF_CHARS // 10 + 10)
    text = ", ".join(big) + "\n"
    assert len(text) > SNIFF_CHARS and sniff_log(text) == "fio-hist-log"
    assert sniff_log(text[: SNIFF_CHARS + 5]) == "fio-hist-log"  # what a streamed head may hold
    assert sniff_log("1019, 1, 65536, x" + ", 0" * SNIFF_CHARS) is None  # the shape still matters


def test_parse_names_a_file_that_is_not_utf8_as_ingest_stores_it(tmp_path):
    """A name with the Latin-1 byte 0xE9: parse printed it as a lone surrogate (\\udce9), ingest stores \\xe9."""
    import json

    good = os.fsdecode(b"caf\xe9.txt")
    bad = os.fsdecode(b"bad\xe9.txt")
    (tmp_path / good).write_bytes((FIXTURES / "fio" / "3.33" / "json_only.txt").read_bytes())
    (tmp_path / bad).write_text("this is not the output of any benchmark tool\n")
    r = _run("parse", str(tmp_path))
    assert r.returncode == 1
    head = json.loads(r.stdout.splitlines()[0])
    assert head["path"] == f"{tmp_path}/caf\\xe9.txt"
    assert r.stderr.splitlines()[0].startswith(f"storagelab parse: {tmp_path}/bad\\xe9.txt:1: unknown-format: ")
    db = tmp_path / "x.duckdb"
    _run("ingest", str(tmp_path), "--db", str(db), "--no-parquet")
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT path FROM files").fetchall() == [(head["path"],)]
    con.close()


def test_a_manifest_row_for_a_hidden_file_says_it_is_hidden(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "..dots..txt").write_bytes((FIXTURES / "fio" / "3.33" / "json_only.txt").read_bytes())
    (logs / "a.txt").write_bytes((FIXTURES / "fio" / "3.33" / "normal_only.txt").read_bytes())
    (logs / "manifest.csv").write_text("path,study\n..dots..txt,S\na.txt,S\ngone.txt,S\n")
    r = _run("ingest", str(logs), "--db", str(tmp_path / "x.duckdb"), "--no-parquet", "--quiet")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert (
        f"warning: {logs / 'manifest.csv'}:2: ..dots..txt: a hidden file (a name starting with '.'): ingest does "
        "not look at hidden files and folders; rename it to have it stored"
    ) in lines
    assert (
        f"warning: {logs / 'manifest.csv'}:4: gone.txt: no such file under {logs} "
        "(a typo, or a file that was moved or deleted?)"
    ) in lines


def test_a_database_inside_the_folder_it_ingests_skips_its_own_files(tmp_path):
    """Before: 'failed 33' on every run (the database, its WAL and its Parquet files read as logs)."""
    (tmp_path / "a.txt").write_bytes((FIXTURES / "fio" / "3.33" / "normal_only.txt").read_bytes())
    db = tmp_path / "x.duckdb"
    for _ in range(2):
        r = _run("ingest", str(tmp_path), "--db", str(db), "--quiet")
        assert r.returncode == 0 and "failed 0" in r.stdout, r.stdout + r.stderr
    assert len(list((tmp_path / "x-parquet").glob("*.parquet"))) > 20
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT path FROM files").fetchall() == [(str(tmp_path / "a.txt"),)]
    assert con.execute("SELECT count(*) FROM ingest_errors").fetchone()[0] == 0
    con.close()


def test_the_database_s_own_files_are_found_without_resolving_every_listed_file(tmp_path, monkeypatch):
    """Its own files (the database, its WAL, its Parquet files, a symlink to the database) are found whether the
    folder listed holds them or the database is named as a file; a folder that holds none of them is not resolved
    file by file (10,000 files: 0.13 s of realpath)."""
    from storagelab.store.pipeline import _own_files

    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("a.txt", "in.duckdb", "in.duckdb.wal"):
        (logs / name).write_text("x")
    (logs / "link").symlink_to(logs / "in.duckdb")
    (tmp_path / "x.duckdb").write_text("db")
    inside = _own_files(logs / "in.duckdb", logs / "in-parquet", [str(logs)])
    assert [inside(str(logs / n)) for n in ("a.txt", "in.duckdb", "in.duckdb.wal", "link", "in-parquet/t.parquet")] == [
        False,
        True,
        True,
        True,
        True,
    ]
    resolved = []
    real = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda p: resolved.append(p) or real(p))
    outside = _own_files(tmp_path / "x.duckdb", tmp_path / "x-parquet", [str(logs), str(tmp_path / "x.duckdb")])
    resolved.clear()
    assert [outside(str(logs / "a.txt")), outside(str(logs / "link")), outside(str(tmp_path / "x.duckdb"))] == [
        False,
        False,
        True,
    ]
    assert resolved == [str(tmp_path)]  # only the folder of the file named on the command line


def test_a_file_appended_to_while_it_is_streamed_is_not_stored_with_a_stale_sha256(tmp_path, monkeypatch):
    """A log that grows while ingest streams it: its rows were the new bytes', its size and SHA-256 the old ones'.
    Now the file is recorded as changed while read (the old state stays), and the next ingest stores it whole."""
    import hashlib

    from storagelab.store import ingest, stream

    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "avg_bw.1.log"
    src = (FIXTURES / "fio" / "3.33" / "logs" / "avg_bw.1.log").read_text()
    log.write_text(src)
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 1)
    real_lines = stream.lines

    def lines_then_append(path, encoding, *hashed):
        for i, ln in enumerate(real_lines(path, encoding, *hashed)):
            if i == 1 and os.path.getsize(path) == len(src):
                with open(path, "a") as f:  # fio writes on while the file is read
                    f.write(src.splitlines()[-1] + "\n")
            yield ln

    monkeypatch.setattr(stream, "lines", lines_then_append)
    db = tmp_path / "x.duckdb"
    s = ingest([logs], db_path=db, manifest_path=tmp_path / "none.csv", parquet_dir=False, progress=False)
    assert s.failed == 1 and s.ingested == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT kind, message FROM ingest_errors").fetchall() == [
        (
            "io",
            f"the file changed while it was read ({len(src):,} bytes when listed, {log.stat().st_size:,} now): not "
            "stored this time; the next ingest reads it again",
        )
    ]
    assert con.execute("SELECT count(*) FROM files").fetchone()[0] == 0
    con.close()
    monkeypatch.setattr(stream, "lines", real_lines)
    s = ingest([logs], db_path=db, manifest_path=tmp_path / "none.csv", parquet_dir=False, progress=False)
    assert s.failed == 0 and s.ingested == 1
    con = duckdb.connect(str(db), read_only=True)
    data = log.read_bytes()
    assert con.execute("SELECT size_bytes, sha256 FROM files").fetchall() == [
        (len(data), hashlib.sha256(data).hexdigest())
    ]
    assert con.execute("SELECT count(*) FROM fio_log_samples").fetchone()[0] == len(data.decode().splitlines())
    assert con.execute("SELECT count(*) FROM ingest_errors").fetchone()[0] == 0
    con.close()
