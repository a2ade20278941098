"""The cold ingest with parsing free: what no parser, however fast, can take away from it.

Every file of a corpus is parsed beforehand (untimed: a first ingest, into a database of its own, whose parse step
keeps each file's outcome with its Arrow rows); then a cold ingest into a new database whose parse step hands out
those outcomes. What that second ingest takes is the rest of the pipeline: the manifest, the listing, the hashing
plan, the DuckDB inserts and commits, the Parquet export and the close, all in the main process. Run in a new
process (as `storagelab ingest` is), after its imports: add the interpreter's start-up for a whole command."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from storagelab.store import pipeline

ROOT = Path(__file__).resolve().parent.parent


def _stored_rows(db: Path) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE'"
        ).fetchall()
        return sum(con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for (t,) in tables)
    finally:
        con.close()


def measure(corpus: Path) -> dict:
    """In this process: the ingest with real parsing (``parsed_s``), then the same ingest with parsing free
    (``parse_free_s``, its CPU ``parse_free_cpu_s``); both databases must hold the same rows."""
    real = pipeline.parse_all
    recorded: list = []

    def recording(jobs, workers):
        for out in real(jobs, workers):
            recorded.append(copy.copy(out))  # the writer clears an outcome's rows once it has written them
            yield out

    def replay(jobs, workers):
        if [o.key for o in recorded] != [j.key for j in jobs]:
            raise RuntimeError("the second ingest planned other files than the first")
        yield from recorded

    with tempfile.TemporaryDirectory() as tmp:
        dbs = [Path(tmp) / "parsed.duckdb", Path(tmp) / "parse-free.duckdb"]
        times = []
        for parse_all, db in zip((recording, replay), dbs, strict=True):
            pipeline.parse_all = parse_all
            wall, cpu = time.perf_counter(), time.process_time()
            pipeline.ingest([str(corpus)], db_path=db, manifest_path=Path(tmp) / "none.csv", progress=False)
            times.append((time.perf_counter() - wall, time.process_time() - cpu))
        pipeline.parse_all = real
        rows = [_stored_rows(db) for db in dbs]
    if rows[0] != rows[1]:
        raise RuntimeError(f"the parse-free ingest stored {rows[1]} rows, the real one {rows[0]}")
    return {"parsed_s": times[0][0], "parse_free_s": times[1][0], "parse_free_cpu_s": times[1][1], "rows": rows[1]}


def parse_free(corpus: Path) -> dict:
    """``measure`` in a new Python process (as a cold `storagelab ingest` is)."""
    out = subprocess.run(
        [sys.executable, __file__, str(corpus)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "lib")},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]))))
