"""fio runs that failed (``fio_jobs.error`` not 0: the errno fio stopped on, ``parsers.fio.failed``), named in 05 and
08 so that a run the user labelled and expected never vanishes from a report without a sentence: 'ext4 big ENOSPC:
fio reported error 28 (No space left on device) for job bigrr: no results'."""

from __future__ import annotations

from ..parsers.fio.failed import describe
from .db import frame
from .result import Finding, cite, lines_of
from .selection import Selection

FAILED_SQL = """
SELECT f.path, f.sha256, coalesce(f.label, f.path) AS label, j.jobname, j.error, j.line_start, j.line_end,
       EXISTS (SELECT 1 FROM fio_groups g WHERE g.file_id = j.file_id AND g.doc_index = j.doc_index
                 AND g.groupid = j.groupid AND coalesce(g.io_bytes, 0) > 0) AS has_results
FROM fio_jobs j JOIN files f USING (file_id)
WHERE {where} AND j.error IS NOT NULL AND j.error <> 0
ORDER BY f.path, j.job_index
"""


def sentences(con, sel: Selection) -> list[Finding]:
    """One sentence per failed job of the selection: its run's label, fio's error with its name, and whether its
    group has results (none: it is in no table; some: what it did before the error)."""
    where, params = sel.sql("f")
    out = []
    for r in frame(con, FAILED_SQL.format(where=where), params).iter_rows(named=True):
        err = describe(r["error"])
        outcome = (
            "its results are only what it did before the error: left out of repeats, comparisons and headlines (the rule "
            "of 05, 08 and 10), shown with its other flags"
            if r["has_results"]
            else "no results"
        )
        out.append(
            Finding(f"{r['label']}: fio reported {err} for job {r['jobname']}: {outcome}.", [cite(err, lines_of(r))])
        )
    return out


RUNS_SQL = """
SELECT j.file_id, j.doc_index, j.groupid, f.path, f.sha256, j.jobname, j.error, j.line_start, j.line_end
FROM fio_jobs j JOIN files f USING (file_id)
WHERE list_contains(?::INTEGER[], j.file_id) AND j.is_final AND j.error IS NOT NULL AND j.error <> 0
ORDER BY f.path, j.doc_index, j.groupid, j.job_index
"""


def failed_runs(con, file_ids: list[int]) -> dict[tuple[int, int, int], dict]:
    """(file_id, doc_index, groupid) of a run (``fio_runs.runs``' key without its direction) one of whose jobs fio
    reported as failed -> its first failed job (``jobname``, ``error``, ``what``: 'error 28 (No space left on
    device)', ``path``, ``line_start``, ``line_end``): a run fio stopped on an error is no measurement of the
    workload, only of what it did before (the rule ``storagelab compare`` and 07 apply)."""
    if not file_ids:
        return {}
    out: dict[tuple[int, int, int], dict] = {}
    for r in frame(con, RUNS_SQL, [sorted(set(file_ids))]).iter_rows(named=True):
        out.setdefault((r["file_id"], r["doc_index"], r["groupid"]), {**r, "what": describe(r["error"])})
    return out
