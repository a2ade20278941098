"""The few helpers of the exploration notebook (07_explore): what is in the database, and fio runs
with their labels done the polars way (the same selection as ``stacks.RUNS_SQL`` does in SQL).
"""

from __future__ import annotations

import polars as pl

from . import design, fio_runs, run_verdicts, stacks
from .db import frame
from .fio_runs import groups_apart
from .selection import Selection


def table_counts(con) -> pl.DataFrame:
    """Every data table of the database with its row count, by name (not ``meta`` nor the stamps, the store's own
    bookkeeping, whose rows depend on the history of ingests: ``file_stamps_at_open``, and ``file_stamps`` in a
    database last ingested by an older version)."""
    names = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
            "AND table_name NOT IN ('meta', 'file_stamps', 'file_stamps_at_open') ORDER BY table_name"
        ).fetchall()
    ]
    rows = [con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names]
    return pl.DataFrame({"table": names, "rows": rows}, schema={"table": pl.String, "rows": pl.Int64})


def run_bandwidths(groups: pl.DataFrame, files: pl.DataFrame, jobs: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per fio run (file, report, reporting group, direction) with the file's labels.

    ``groups`` is the fio_groups table, ``files`` the files table, ``jobs`` the fio_jobs table (its
    file_id, doc_index and is_final are enough). A file saved with --status-interval holds several
    reports; the last one covers the whole run, so only it is kept; fio runs appended to one file
    each keep their last report: the reports whose jobs are ``is_final`` (without ``jobs``, or for a
    file without job rows, the report with the highest doc_index). Files the manifest marks as
    duplicates (``duplicate_of``) are left out. Several reporting groups of one run are labelled apart
    (``fio_runs.groups_apart``).
    """
    finals = groups.group_by("file_id").agg(pl.col("doc_index").max())
    if jobs is not None and not jobs.is_empty():
        of_runs = jobs.filter(pl.col("is_final")).select("file_id", "doc_index").unique()
        finals = pl.concat([of_runs, finals.join(of_runs, on="file_id", how="anti")], how="vertical_relaxed").cast(
            {"file_id": groups.schema["file_id"], "doc_index": groups.schema["doc_index"]}
        )
    final = groups.join(finals, on=["file_id", "doc_index"]).select(
        "file_id",
        "doc_index",
        "groupid",
        "direction",
        "bw_bytes_per_s",
        "io_bytes",
        "run_max_ns",
        "exact",
        *(c for c in ("line_start", "line_end") if c in groups.columns),  # the group's lines: a bar's raw lines
    )
    labels = files.filter(pl.col("duplicate_of").is_null()).select(
        "file_id", "path", *(c for c in ("sha256",) if c in files.columns), "study", "label", "stack", "host"
    )
    out = final.join(labels, on="file_id", how="inner").sort("path", "doc_index", "groupid", "direction")
    if jobs is not None and {"jobname", "job_index", "groupid"} <= set(jobs.columns):  # each group's first job
        first = jobs.sort("job_index").group_by("file_id", "doc_index", "groupid").agg(pl.col("jobname").first())
        out = out.join(
            first.cast({c: out.schema[c] for c in ("file_id", "doc_index", "groupid")}),
            how="left",
            on=["file_id", "doc_index", "groupid"],
        )
    else:
        out = out.with_columns(jobname=pl.lit(None, pl.String))
    return groups_apart(out).drop("jobname")


def selected_files(con, sel) -> pl.DataFrame:
    """The files table, only the files of the selection ``sel`` (every column, as ``SELECT * FROM files``)."""
    where, params = sel.sql("f")
    return frame(con, f"SELECT f.* FROM files f WHERE {where} ORDER BY f.path", params)


def flagged_runs(con, direction: str = "write", margin: float = 1.1, sel=None) -> pl.DataFrame:
    """The fio runs of ``direction`` in the selection ``sel`` (default: the whole database), fastest first, with the
    plausibility flag of ``stacks.with_flags`` (``flag``: above or at its labelled device limit, direct=1 ignored by
    ZFS) and the design checks of ``design.with_design`` (too short, working set in the cache, a stall ...: the
    checks 05 and 08 make) and the verdicts of its logs (``run_verdicts``: two regimes, dips, not steady); ``clean``:
    none flags the run."""
    runs = fio_runs.runs(con, sel or Selection())
    if runs.is_empty():
        return runs
    runs = runs.with_columns(label=fio_runs.run_label(runs))  # without a label: as much of its path as tells it apart
    # the design checks and the logs' verdicts of 05, 08 and 10 (two regimes, dips, not steady: ``run_verdicts``)
    d = run_verdicts.verdicts(con, runs.filter(pl.col("direction") == direction), margin)
    if d.is_empty():
        return d
    clean = (
        pl.col("flag").is_in([stacks.FLAGS[3], stacks.FLAGS[4]])
        & ~pl.col("design_flagged")
        & pl.col("regime").is_null()
    )
    return d.with_columns(clean=clean).sort("bw_bytes_per_s", descending=True)


def fastest_unflagged(con, direction: str = "write", margin: float = 1.1, sel=None) -> tuple[dict | None, int]:
    """The fastest run of ``flagged_runs`` that neither check flags, and how many faster runs are flagged: a
    headline should not promote a run that measured a cache (the h6 trial's 113 ms write of 48 MiB)."""
    d = flagged_runs(con, direction, margin, sel)
    if d.is_empty():
        return None, 0
    ok = d.filter(pl.col("clean"))
    if ok.is_empty():
        return None, d.height
    best = ok.row(0, named=True)
    return best, d.filter(pl.col("bw_bytes_per_s") > best["bw_bytes_per_s"]).height


def fastest_flags(run: dict) -> str:
    """What flags a run of ``flagged_runs``, in words: its design marker's names and its plausibility flag."""
    said = [
        *run.get("design_flags", []),
        *([str(run["regime"]).removeprefix(f"{design.MARK} ")] if run.get("regime") else []),
        *([run["flag"]] if run["flag"] not in (stacks.FLAGS[3], stacks.FLAGS[4]) else []),
    ]
    return ", ".join(said)


def jobs_note(jobs: pl.DataFrame) -> str:
    """What 07's job table cannot show by itself, counted on it: the jobs fio reported as failed (``error`` not 0:
    their figures are what they did before the error, not a rate of the workload) and the jobs whose iodepth fio
    did not print (JSON job options of a synchronous engine: fio's default is 1, not recorded)."""
    failed = jobs.filter(pl.col("error").fill_null(0) != 0) if "error" in jobs.columns else jobs.clear()
    no_depth = jobs.filter(pl.col("iodepth").is_null()).height if "iodepth" in jobs.columns else 0
    out = []
    if failed.height:
        named = [f"{r['path']} (job {r['jobname']}, error {r['error']})" for r in failed.iter_rows(named=True)]
        out.append(
            f"{failed.height} job(s) failed: {', '.join(named)}: fio stopped on that error, so their figures are what "
            "they did before it, not the workload's rate (05 and 08 name them; `storagelab compare` leaves them out)."
        )
    if no_depth:
        out.append(
            f"{no_depth} job(s) have no iodepth: their output does not print it (fio's default is 1; 08 reads the "
            "command where there is one)."
        )
    return " ".join(out) or "every job ran (error 0) and printed its iodepth."


EMPTY_WORKLOAD_SQL = """
SELECT count(*) AS jobs, count(DISTINCT j.file_id) AS files,
       count(*) FILTER (WHERE j.rw IS NULL AND j.block_size_bytes IS NULL) AS empty_jobs,
       count(*) FILTER (WHERE j.rw IS NULL AND j.block_size_bytes IS NULL AND j.iodepth IS NOT NULL) AS depth_jobs,
       count(DISTINCT j.file_id) FILTER (WHERE j.rw IS NULL AND j.block_size_bytes IS NULL) AS empty_files,
       count(DISTINCT j.file_id) FILTER (WHERE j.rw IS NULL AND j.block_size_bytes IS NULL
           AND (nullif(trim(f.command), '') IS NOT NULL
                OR EXISTS (SELECT 1 FROM fio_commands c WHERE c.file_id = j.file_id AND c.command IS NOT NULL))) AS with_command
FROM fio_jobs j JOIN files f USING (file_id) WHERE j.is_final AND {where}
"""


def empty_workload_note(con, sel: Selection) -> str | None:
    """Why ``fio_jobs`` rw and block_size_bytes (and iodepth, unless fio's latency-target line gives it) are empty for some jobs, counted on the selection: fio
    prints them only in its text output's job line ('name: (g=0): rw=write, bs=...') and in JSON's 'global options' and 'job options';
    an output without them (a report pasted without its preamble, JSON of options given on the command line) has
    none. The analyses then take the workload from the command line: the manifest's command column or a command line
    in the transcript (fio_commands). None when every final job has them."""
    where, params = sel.sql("f")
    r = frame(con, EMPTY_WORKLOAD_SQL.format(where=where), params).row(0, named=True)
    if not r["empty_jobs"]:
        return None
    no_command = r["empty_files"] - r["with_command"]
    line = "fio's 'latency : target=0, ..., depth=N' line"
    if not r["depth_jobs"]:
        depth = "iodepth too"
    elif r["depth_jobs"] == r["empty_jobs"]:
        depth = f"their iodepth is read from {line}"
    else:
        depth = f"iodepth for {r['empty_jobs'] - r['depth_jobs']} of them (the others' from {line})"
    return (
        f"rw and block_size_bytes are empty for {r['empty_jobs']} of {r['jobs']} final fio jobs, {depth} "
        f"({r['empty_files']} of {r['files']} files): their output has no job line ('name: (g=0): rw=..., bs=..., "
        "iodepth=...', the preamble of fio's text output) and no 'global options' or 'job options' (JSON): fio did not print the "
        f"workload. The analyses take it from the command line instead: {r['with_command']} of these files have one "
        "(the manifest's command column, or a 'fio ...' line in the transcript, table fio_commands)"
        + (f"; {no_command} have none, and their workload is unknown." if no_command else ".")
    )
