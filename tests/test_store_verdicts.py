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
