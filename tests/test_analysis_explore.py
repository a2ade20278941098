"""analysis.explore (notebook 07) on a database of real fio 3.33 outputs."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import polars as pl
import pytest

from storagelab.analysis import explore, open_db, stacks
from storagelab.schema import all_tables
from storagelab.store import ingest

FIO = Path(__file__).resolve().parent / "fixtures" / "fio" / "3.33"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """status_interval.txt (4 JSON reports of one run), two_groups.txt (a write group and a read group),
    xss_jobname.txt, and a copy of two_groups.txt that the manifest marks as a duplicate."""
    raw = tmp_path_factory.mktemp("raw")
    for name in ("status_interval.txt", "two_groups.txt", "xss_jobname.txt"):
        shutil.copy(FIO / name, raw / name)
    # same runs, other bytes (a trailing newline), so it is ingested and only the manifest excludes it
    (raw / "two_groups_repaste.txt").write_bytes((FIO / "two_groups.txt").read_bytes() + b"\n")
    with open(raw / "manifest.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["path", "study", "label", "stack", "host", "duplicate_of"])
        w.writerow(["status_interval.txt", "t", "interval", "zfs", "h1", ""])
        w.writerow(["two_groups.txt", "t", "two groups", "ext4", "h1", ""])
        w.writerow(["two_groups_repaste.txt", "t", "two groups again", "ext4", "h1", "two_groups.txt"])
    dest = raw.parent / "explore.duckdb"
    s = ingest([raw], db_path=dest, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (4, 0), s.errors
    return dest


def test_table_counts_lists_every_table_with_its_rows(db):
    con = open_db(db)
    try:
        counts = explore.table_counts(con)
    finally:
        con.close()
    assert counts.columns == ["table", "rows"] and counts["table"].to_list() == sorted(counts["table"].to_list())
    assert set(all_tables()) <= set(counts["table"]) and "meta" not in set(counts["table"])
    rows = dict(counts.iter_rows())
    assert rows["files"] == 4
    # fio_groups: 4 reports x 1 group (status_interval) + 2 groups x 2 files (two_groups, its copy) + 1 (xss)
    assert rows["fio_groups"] == 4 + 2 + 2 + 1
    assert rows["fio_jobs"] == 4 + 2 + 2 + 1
    assert rows["bonnie_results"] == 0 and rows["ingest_errors"] == 0


def test_run_bandwidths_keeps_the_final_report_and_drops_duplicates(db):
    con = open_db(db)
    try:
        groups = con.sql("SELECT * FROM fio_groups").pl()
        files = con.sql("SELECT * FROM files").pl()
        jobs = con.sql("SELECT * FROM fio_jobs").pl()
        via_sql = stacks.runs(con)
    finally:
        con.close()
    runs = explore.run_bandwidths(groups, files, jobs)
    got = [
        (r["path"].rsplit("/", 1)[-1], r["groupid"], r["direction"], r["bw_bytes_per_s"], r["label"], r["stack"])
        for r in runs.iter_rows(named=True)
    ]
    assert got == [
        ("status_interval.txt", 0, "write", 8385812.0, "interval", "zfs"),  # 4th (final) JSON report, not 8458630
        # two reporting groups of one fio run: not repeats, so each label names its group and first job
        ("two_groups.txt", 0, "write", 16895484.0, "two groups (group 0: writer)", "ext4"),
        ("two_groups.txt", 1, "read", 83886080.0, "two groups (group 1: reader)", "ext4"),
        ("xss_jobname.txt", 0, "write", 349525333.0, None, None),  # not in the manifest: no labels
    ]
    assert runs["io_bytes"].to_list() == [25165824.0, 16777216.0, 4194304.0, 1048576.0]
    # the SQL version of the same selection (notebook 05) agrees row for row
    cols = ["path", "groupid", "direction", "bw_bytes_per_s", "io_bytes", "run_max_ns", "label", "stack"]
    assert runs.select(cols).rows() == via_sql.select(cols).sort("path", "groupid", "direction").rows()


def test_run_bandwidths_of_an_empty_database_is_empty():
    groups = pl.DataFrame(
        schema={
            "file_id": pl.Int32,
            "doc_index": pl.Int32,
            "groupid": pl.Int32,
            "direction": pl.String,
            "bw_bytes_per_s": pl.Float64,
            "io_bytes": pl.Float64,
            "run_max_ns": pl.Float64,
            "exact": pl.Boolean,
        }
    )
    files = pl.DataFrame(
        schema={
            "file_id": pl.Int32,
            "path": pl.String,
            "study": pl.String,
            "label": pl.String,
            "stack": pl.String,
            "host": pl.String,
            "duplicate_of": pl.String,
        }
    )
    out = explore.run_bandwidths(groups, files)
    assert out.height == 0 and {"bw_bytes_per_s", "label", "stack", "path"} <= set(out.columns)


def test_fastest_unflagged_run_of_the_study_logs(seed_db):
    """The explore headline does not promote a cache-inflated run: the fastest homelab write, ZFS mirror (0.8.4) at
    1240 MiB/s, is above its device's limit; the fastest unflagged one is btrfs on the NVMe alone."""
    con = open_db(seed_db)
    best, flagged = explore.fastest_unflagged(con, "write")
    con.close()
    assert (best["label"], best["bw_mib_s"], best["flag"], flagged) == (
        "btrfs (single NVMe)",
        902.0,
        "within the limit",
        2,
    )


def test_07_says_why_the_workload_columns_are_empty(seed_db):
    """docs/reviews-status.md O9: eight homelab logs are fio reports without their job line ('name: (g=0): rw=...',
    only fio-mergerfs-hdd.txt has one) and are not JSON: rw, bs and iodepth are NULL for them, and 07 says so,
    counted, with where the analyses take the workload from (the manifest's command column)."""
    from storagelab.analysis import Selection

    con = open_db(seed_db)
    note = explore.empty_workload_note(con, Selection())
    none = explore.empty_workload_note(con, Selection(study="thumper-x4500"))  # no fio job there: nothing to say
    con.close()
    # their iodepth is in fio's latency-target line (h5 B3), their rw and bs nowhere in the output
    assert note.startswith(
        "rw and block_size_bytes are empty for 8 of 9 final fio jobs, their iodepth is read from fio's 'latency : "
        "target=0, ..., depth=N' line (8 of 9 files): "
    )
    assert note.endswith(
        "The analyses take it from the command line instead: 8 of these files have one (the "
        "manifest's command column, or a 'fio ...' line in the transcript, table fio_commands)."
    )
    assert none is None
