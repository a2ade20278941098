"""What the devices saw beside what fio asked for (issue 25): ``zpool iostat -w`` latency and ``-r`` request-size
histograms, ``-l`` wait times and ``-q`` queue depths next to the fio runs of the same selection.

``device_beside_fio(con, sel)`` returns the tables and sentences computed from them:

* ``req_size``: per zpool iostat -r block (file, pool or vdev, sample) and I/O class, the I/Os counted (ind + agg),
  the share that ZFS aggregated (agg / all), the share of I/Os of at most 4 KiB, and the median bucket (the lower
  bound, bytes, of the size bucket holding the middle I/O). Counts are zpool's nicenum values (1.68M = 1.68 x 2^20):
  shares of them are rounded like the counts.
* ``latency``: per zpool iostat -w block (file, pool or vdev, sample, block) and wait kind (total_wait, disk_wait,
  syncq_wait, asyncq_wait read/write; scrub, trim, rebuild), the I/Os counted and the upper bound (ns) of the bucket
  holding the median and the 99th-percentile I/O (a bucket holds waits up to 2^(j+1)-1 ns, so these are bounds,
  not measured percentiles); ``latency_cells`` are the -w cells themselves (for the chart).
* ``waits`` / ``queues``: the -l and -q rows as stored (ns; counts).
* ``fio``: the final fio runs (rw, block size, iodepth, the time fio printed, its end in epoch seconds when the JSON
  output gave one, the run's length).
* ``aligned``: zpool -r and -w samples whose ``-T u`` time stamp falls inside a fio run's time span on the same host label;
  empty unless both sides carry epoch times.
* ``lines``: what the data shows and, as plainly, what it cannot show.

What this cannot do, and says: a ``zpool iostat -r`` without an interval (the usual paste) counts every I/O since the
pool was imported, so it cannot be laid over one fio run; a histogram sample covers its interval, not the run; fio's
text time stamp carries no time zone, so only fio JSON (``timestamp``) and ``zpool iostat -T u`` can be aligned in
time; pool-level counts include I/O of anything else the pool served.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ..parsers.zpool_latency_hist import BUCKETS
from .db import frame
from .device_tables import NICENUM, count_text, ns_text, share_text
from .selection import Selection

_SMALL = 4096  # bytes: requests of at most one 4 KiB block


def req_size_summary(con, sel: Selection) -> pl.DataFrame:
    """One row per -r block (file, name, sample) and I/O class: I/Os, aggregated share, small share, median bucket."""
    where, params = sel.sql("f")
    cells = frame(
        con,
        f"""SELECT f.path, f.sha256, f.host, r.name, r.sample, r.block, r.timestamp, r.io_class, r.bucket_bytes,
                   sum(r.count) AS ios, sum(CASE WHEN r.kind = 'agg' THEN r.count ELSE 0 END) AS agg,
                   bool_and(r.exact) AS exact
            FROM zpool_iostat_req_size r JOIN files f USING (file_id)
            WHERE {where}
            GROUP BY ALL ORDER BY f.path, r.sample, r.block, r.io_class, r.bucket_bytes""",
        params,
    )
    keys = ["path", "host", "name", "sample", "block", "timestamp", "io_class"]
    if cells.is_empty():
        schema = {
            **{k: pl.Utf8 for k in keys},
            "sample": pl.Int64,
            "block": pl.Int64,
            "ios": pl.Float64,
            "exact": pl.Boolean,
        }
        return pl.DataFrame(schema=schema)
    cells = cells.with_columns(cum=pl.col("ios").cum_sum().over(keys), total=pl.col("ios").sum().over(keys))
    return cells.group_by(keys, maintain_order=True).agg(
        ios=pl.col("ios").sum(),
        exact=pl.col("exact").all(),
        agg_share=pl.col("agg").sum() / pl.col("ios").sum(),
        small_share=pl.col("ios").filter(pl.col("bucket_bytes") <= _SMALL).sum() / pl.col("ios").sum(),
        median_bucket_bytes=pl.col("bucket_bytes")
        .filter(pl.col("total") > 0, pl.col("cum") >= pl.col("total") / 2)
        .first(),
    )


def fio_runs(con, sel: Selection) -> pl.DataFrame:
    """The final fio runs of the selection: what was asked, when fio printed its report, and for how long it ran."""
    where, params = sel.sql("f")
    return frame(
        con,
        f"""SELECT f.path, f.sha256, f.host, f.label, j.job_index, j.rw, j.block_size_bytes, j.iodepth, j.report_time,
                   j.report_epoch_s, max(r.runtime_ns) / 1e9 AS runtime_s
            FROM fio_jobs j JOIN files f USING (file_id)
            LEFT JOIN fio_results r ON r.file_id = j.file_id AND r.job_index = j.job_index
            WHERE j.is_final AND {where}
            GROUP BY ALL ORDER BY f.path, j.job_index""",
        params,
    )


def _table(con, sel: Selection, name: str) -> pl.DataFrame:
    where, params = sel.sql("f")
    return frame(
        con,
        f"SELECT f.path, f.sha256, f.host, t.* EXCLUDE (file_id) FROM {name} t JOIN files f USING (file_id) WHERE {where} "
        "ORDER BY f.path, t.line_start",
        params,
    )


def aligned_samples(req: pl.DataFrame, fio: pl.DataFrame) -> pl.DataFrame:
    """-r samples whose -T u epoch time stamp lies inside a fio run's span (its end minus its runtime .. its end) on
    the same host label. Runs or samples without epoch times, or without a host label, are not aligned."""
    cols = ["path", "name", "sample", "timestamp", "fio_path", "job_index", "rw"]
    if req.is_empty() or fio.is_empty():
        return pl.DataFrame(schema={c: pl.Utf8 for c in cols})
    samples = (
        req.select("path", "host", "name", "sample", "timestamp")
        .unique(maintain_order=True)
        .filter(pl.col("timestamp").str.contains(r"^\d{9,11}$"), pl.col("host").is_not_null())
        .with_columns(epoch=pl.col("timestamp").cast(pl.Int64))
    )
    runs = fio.filter(
        pl.col("report_epoch_s").is_not_null(), pl.col("runtime_s").is_not_null(), pl.col("host").is_not_null()
    ).select(pl.col("path").alias("fio_path"), "host", "job_index", "rw", "report_epoch_s", "runtime_s")
    both = samples.join(runs, on="host")
    inside = (pl.col("epoch") <= pl.col("report_epoch_s")) & (
        pl.col("epoch") >= pl.col("report_epoch_s") - pl.col("runtime_s")
    )
    return both.filter(inside).select(cols)


def latency_cells(con, sel: Selection) -> pl.DataFrame:
    """The zpool iostat -w cells of the selection, with their file's path, host label and hash (provenance)."""
    where, params = sel.sql("f")
    return frame(
        con,
        f"""SELECT f.path, f.host, f.sha256, w.name, w.sample, w.block, w.timestamp, w.bucket, w.bucket_max_ns,
                   w.bucket_label,
                   w.wait, w.op, w.count, w.exact, w.line_start, w.line_end
            FROM zpool_iostat_latency_hist w JOIN files f USING (file_id)
            WHERE {where} ORDER BY f.path, w.sample, w.block, w.wait, w.op, w.bucket""",
        params,
    )


def latency_summary(cells: pl.DataFrame) -> pl.DataFrame:
    """One row per -w block and wait kind: I/Os counted, and the upper bound (ns) of the bucket holding the median
    and the 99th-percentile I/O (None when the column counted nothing). A block whose paste stops before the last
    bucket (137s; the parser keeps it with a warning) has ``cut_at`` (the last bucket printed, as printed): its I/Os
    above that bucket are missing, so ``ios`` counts only those up to it and no median or p99 is given."""
    keys = ["path", "host", "name", "sample", "block", "timestamp", "wait", "op"]
    if cells.is_empty():
        schema = {
            **{k: pl.Utf8 for k in keys},
            "sample": pl.Int64,
            "block": pl.Int64,
            "ios": pl.Float64,
            "exact": pl.Boolean,
        }
        return pl.DataFrame(schema={**schema, "cut_at": pl.Utf8})
    cells = cells.with_columns(cum=pl.col("count").cum_sum().over(keys), total=pl.col("count").sum().over(keys))
    cut = pl.col("bucket").max() < BUCKETS - 1

    def bound(q: float) -> pl.Expr:
        within = pl.col("bucket_max_ns").filter(pl.col("total") > 0, pl.col("cum") >= pl.col("total") * q).first()
        return pl.when(cut).then(None).otherwise(within)

    return cells.group_by(keys, maintain_order=True).agg(
        ios=pl.col("count").sum(),
        exact=pl.col("exact").all(),
        median_max_ns=bound(0.5),
        p99_max_ns=bound(0.99),
        cut_at=pl.when(cut).then(pl.col("bucket_label").sort_by("bucket").last()),
    )


def device_beside_fio(con, sel: Selection) -> dict:
    """The device-side tables beside the fio runs of ``sel``, and sentences saying what they show and cannot."""
    req = req_size_summary(con, sel)
    fio = fio_runs(con, sel)
    cells = latency_cells(con, sel)
    lat = latency_summary(cells)
    timed = [t.select("path", "host", "name", "sample", "timestamp") for t in (req, lat) if t.height]
    out: dict[str, Any] = {
        "req_size": req,
        "latency": lat,
        "latency_cells": cells,
        "waits": _table(con, sel, "zpool_iostat_latency"),
        "queues": _table(con, sel, "zpool_iostat_queues"),
        "fio": fio,
        "aligned": aligned_samples(pl.concat(timed) if timed else req, fio),
    }
    out["waits_table"] = waits_table(out["waits"])
    out["queues_table"] = queues_table(out["queues"])
    skipped = _first_report_skipped(out["waits"])
    out["lines"] = (
        _latency_lines(lat, sel) + _lines(out, sel) + _wait_lines(out["waits_table"], out["queues_table"], skipped)
    )
    return out


_ROW = ["path", "pool", "vdev", "sample", "timestamp"]
WAIT_ORDER = {
    w: i for i, w in enumerate(("total_wait", "disk_wait", "syncq_wait", "asyncq_wait", "scrub", "trim", "rebuild"))
}


def waits_table(waits: pl.DataFrame) -> pl.DataFrame:
    """The -l rows side by side: one row per pool/vdev row of a report and wait kind (in zpool's column order), its
    average read and write wait (ns, as zpool printed them, rounded; None for '-'); scrub, trim and rebuild, which
    have one column and no direction, in ``wait_ns``."""
    cols = [*_ROW, "wait", "read_ns", "write_ns", "wait_ns"]
    if waits.is_empty():
        return pl.DataFrame(schema={c: pl.Float64 if c.endswith("_ns") else pl.Utf8 for c in cols})
    order = pl.col("wait").replace_strict(WAIT_ORDER, default=len(WAIT_ORDER), return_dtype=pl.Int64)
    in_print_order = waits.sort(["path", "sample", "line_start", order], nulls_last=True)  # zpool's row order
    first = in_print_order.group_by([*_ROW, "wait"], maintain_order=True)
    return first.agg(
        read_ns=pl.col("latency_ns").filter(pl.col("op") == "read").first(),
        write_ns=pl.col("latency_ns").filter(pl.col("op") == "write").first(),
        wait_ns=pl.col("latency_ns").filter(pl.col("op").is_null()).first(),
    ).select(cols)


def queues_table(queues: pl.DataFrame) -> pl.DataFrame:
    """The -q rows: one row per pool/vdev row of a report and queue, I/Os pending and active."""
    cols = [*_ROW, "queue", "pending", "active"]
    if queues.is_empty():
        return pl.DataFrame(schema={c: pl.Float64 if c in ("pending", "active") else pl.Utf8 for c in cols})
    return queues.select(cols)


def _first_report_skipped(waits: pl.DataFrame) -> set[str]:
    """Paths of -l logs run with -y: their first report is the first interval, not the averages since import."""
    if waits.is_empty():
        return set()
    flagged = waits.filter(pl.col("command").str.contains(r"(?:^|\s)-[A-Za-z]*y"))
    return set(flagged["path"].to_list())


def _wait_lines(
    waits: pl.DataFrame, queues: pl.DataFrame, skipped: frozenset[str] | set[str] = frozenset()
) -> list[str]:
    """One line per -l and per -q row (a pool or vdev in one report): what it shows, and that a report without an
    interval is an average since import (unless zpool ran with -y, which skips that report; ``skipped``)."""
    lines = []
    for key, rows in waits.group_by(_ROW, maintain_order=True):
        shown = []
        for r in rows.iter_rows(named=True):
            if r["wait_ns"] is not None or (r["read_ns"] is None and r["write_ns"] is None):
                shown.append(f"{r['wait']} {_ns_or_dash(r['wait_ns'])}")
            else:
                shown.append(f"{r['wait']} read {_ns_or_dash(r['read_ns'])}, write {_ns_or_dash(r['write_ns'])}")
        name = _row_name(key, key[0] not in skipped)
        lines.append(f"{name}: average waits (`zpool iostat -l`, as printed): {'; '.join(shown)}")
    for key, rows in queues.group_by(_ROW, maintain_order=True):
        busy = rows.filter((pl.col("pending") > 0) | (pl.col("active") > 0))
        shown = [
            f"{r['queue']} {r['pending']:,.0f} pending, {r['active']:,.0f} active" for r in busy.iter_rows(named=True)
        ]
        said = (
            f"{'; '.join(shown)} (the other {rows.height - busy.height} queues empty)" if shown else "every queue empty"
        )
        lines.append(f"{_row_name(key, False)}: queues (`zpool iostat -q`, I/Os at the moment it printed): {said}")
    return lines


def _row_name(key: tuple, averages: bool = True) -> str:
    """'tank (pool row, report 0 of iostat-l.txt, no time stamp: averages since the pool was imported)' (report 0
    of ``averages``, the -l waits: since import; -q queues are counts at the moment zpool printed them)."""
    path, pool, vdev, sample, timestamp = key
    where = f"vdev {vdev} of {pool}" if vdev else "pool row"
    if timestamp:
        when = f"at {timestamp}"
    else:
        when = "no time stamp" + (": averages since the pool was imported" if sample == 0 and averages else "")
    return f"{pool} ({where}, report {sample} of {str(path).rsplit('/', 1)[-1]}, {when})"


def _ns_or_dash(n) -> str:
    return "not printed ('-')" if n is None else _ns(n)


def _latency_lines(lat: pl.DataFrame, sel: Selection) -> list[str]:
    """What the -w histograms show (the first block of each report: the pool, or the first one named), and what a
    missing or untimed one cannot."""
    if lat.is_empty():
        return [
            f"no `zpool iostat -w` output for {sel.describe()}: run `zpool iostat -wv -T u POOL 5` during the fio "
            "runs (and keep its output) to see the latency each I/O had in the queues and on the disks"
        ]
    lines = _cut_lines(lat)
    first = lat.filter(
        pl.col("block") == 0,
        pl.col("ios") > 0,
        pl.col("wait").is_in(["total_wait", "disk_wait"]),
        pl.col("cut_at").is_null(),
    )
    for r in first.iter_rows(named=True):
        lines.append(
            f"{r['name']} (report {r['sample']}), {r['wait']} {r['op']}: {_ios(r)}; the median "
            f"one took at most {_ns(r['median_max_ns'])}, 99 % at most {_ns(r['p99_max_ns'])} (bucket bounds)"
        )
    blocks = lat.select("path", "name", "sample", "block", "timestamp").unique()
    untimed = blocks.filter(pl.col("timestamp").is_null()).height
    if untimed:
        lines.append(
            f"{untimed} -w block(s) carry no time stamp: without `-T u` (or `-T d`) a block cannot be placed in time, "
            "and the first report of `zpool iostat -w` counts every I/O since the pool was imported"
        )
    dated = blocks.filter(pl.col("timestamp").is_not_null(), ~pl.col("timestamp").str.contains(r"^\d{9,11}$")).height
    if dated:
        lines.append(
            f"{dated} -w block(s) carry `-T d` dates: printed in the machine's local time with no zone, they cannot be "
            "set against fio's epoch time; `-T u` can"
        )
    return lines


def _cut_lines(lat: pl.DataFrame) -> list[str]:
    """One line per -w block whose paste is cut: what is missing and what the table cannot give for it."""
    cut = lat.filter(pl.col("cut_at").is_not_null()).group_by("path", "name", "sample", "block", maintain_order=True)
    lines = []
    for (path, name, sample, _), rows in cut:
        empty = sorted({f"{r['wait']} {r['op'] or ''}".strip() for r in rows.iter_rows(named=True) if not r["ios"]})
        zero = f"; {', '.join(empty)} show 0 I/Os up to it: their I/Os, if any, are all above the cut" if empty else ""
        lines.append(
            f"{name} (report {sample}, {str(path).rsplit('/', 1)[-1]}): the `zpool iostat -w` histogram stops at the "
            f"{rows['cut_at'][0]} row (the paste is cut; 37 rows run to 137s): I/Os that waited longer are not in it, "
            f"so its counts are only those up to {rows['cut_at'][0]} and no median or p99 is given{zero}"
        )
    return lines


def _ns(n) -> str:
    return ns_text(n, "unknown")


def _ios(r: dict) -> str:
    """'2,173,279 I/Os counted' when zpool printed every count whole; 'about 2,680,000 I/Os counted (zpool printed
    ...)' when some were nicenum values such as 1.68M."""
    said = f"{count_text(r['ios'], r['exact'])} I/Os counted"
    return said if r["exact"] else f"{said} ({NICENUM})"


def _lines(out: dict, sel: Selection) -> list[str]:
    req, fio, aligned = out["req_size"], out["fio"], out["aligned"]
    lines = []
    if req.is_empty():
        lines.append(
            f"no `zpool iostat -r` output for {sel.describe()}: run `zpool iostat -r -T u POOL 10` during the fio "
            "runs (and keep its output) to see the request sizes the disks received"
        )
    else:
        for r in req.filter(pl.col("ios") > 0).iter_rows(named=True):
            lines.append(
                f"{r['name']} (sample {r['sample']}, {r['io_class']}): {_ios(r)}, "
                f"{share_text(r['agg_share'])} of them aggregated by ZFS, {share_text(r['small_share'])} of at most 4 KiB, "
                f"median request in the {_size(r['median_bucket_bytes'])} bucket"
            )
        since_import = req.filter(pl.col("timestamp").is_null()).select("path", "name").unique()
        if since_import.height:
            lines.append(
                f"{since_import.height} -r block(s) carry no time stamp: a histogram without an interval counts "
                "every I/O since the pool was imported, so it is shown beside the fio runs, not laid over them"
            )
    if fio.is_empty():
        lines.append(f"no fio run for {sel.describe()}: nothing to set the device view beside")
    if not aligned.is_empty():
        n = aligned.select("path", "name", "sample").unique().height
        lines.append(
            f"{n} zpool sample(s) fall inside a fio run's time span on the same host: their counts are the pool's, "
            "fio's and anything else it served then"
        )
    elif not req.is_empty() and not fio.is_empty():
        lines.append(
            "no zpool sample could be placed inside a fio run: that needs `zpool iostat -T u` time stamps, fio JSON "
            "output (its `timestamp`) and the same host label on both; fio's text time has no time zone"
        )
    if out["waits"].is_empty() and out["queues"].is_empty():
        lines.append("no `zpool iostat -l`/`-q` columns: run `zpool iostat -lq -T u POOL 10` for wait times and queues")
    return lines


def _size(n) -> str:
    if n is None:
        return "unknown"
    n = int(n)
    for unit, step in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= step:
            return f"{n // step} {unit}"
    return f"{n} B"
