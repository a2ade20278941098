"""Named values per raw file, the vocabulary claims use (``papers/<study>/claims.csv``: target + metric).

``per_file(con, sel)`` measures every selected file in base units, in long form (target, metric,
value, file_id), whatever tool wrote it. A claim names a target (the file's path under data/raw/)
and a metric from this list, or a formula over them (see ``claims.check``):

* fio: ``<direction>.bw_bytes_per_s``, ``<direction>.iops`` and ``<direction>.elapsed_ns`` (the final report's
  first reporting group: the one run bandwidth of ``fio_runs``, total I/O over elapsed time), ``numjobs``,
  ``iodepth``, ``bs_bytes``, ``size_bytes`` (workload options, output first, then the manifest command);
* bonnie++: one metric per test of the file's first preferred run: ``put_block``, ``rewrite``,
  ``get_block`` (bytes/s), ``seeks`` (1/s), ``seq_create`` ... (files/s), and ``<test>.latency_ns``;
* zdb: ``bp_count``, ``bp_logical_bytes``, ``bp_allocated_bytes``, ``embedded_bp_count``, ``dedup_ratio``;
* partition tables: ``first_partition_start_bytes``, ``disk_size_bytes``;
* zpool list: ``pool:<pool>.size_bytes``; zpool iostat -v: ``cache.size_bytes``, ``cache.used_ratio``,
  ``vdev:<name>.size_bytes``;
* mbuffer: ``rate_bytes_per_s``, ``bytes``, ``resolved_bytes``, ``duration_ns``, ``status.in_rate_bytes_per_s``;
* layout tables: ``layout_disks`` (the disk count every layout adds up to, when they agree).
"""

from __future__ import annotations

import polars as pl

from ..claims import raw_target
from . import fio_runs
from .db import frame
from .mbuffer import rates
from .result import MEASURE_SCHEMA as SCHEMA
from .selection import Selection


def _long(rows: list[tuple]) -> pl.DataFrame:
    """(target, metric, value, file_id[, path, line_start, line_end, sha256]) rows as ``SCHEMA``'s frame."""
    width = len(SCHEMA)
    rows = [tuple(r) + (None,) * (width - len(r)) for r in rows]
    return pl.DataFrame(rows, schema=SCHEMA, orient="row") if rows else pl.DataFrame(schema=SCHEMA)


def _at(r: dict) -> tuple:
    """A row's raw lines as a measure's path, line_start, line_end, sha256."""
    return (r["path"], r.get("line_start"), r.get("line_end"), r.get("sha256"))


def _q(con, sel: Selection, sql: str) -> pl.DataFrame:
    where, params = sel.sql("f")
    return frame(con, sql.format(where=where), params)


def fio(runs: pl.DataFrame) -> pl.DataFrame:
    rows: list[tuple] = []
    if runs.height:
        first = runs.filter(pl.col("groupid") == pl.col("groupid").min().over("file_id"))
        for r in first.iter_rows(named=True):
            t, at = raw_target(r["path"]), _at(r)
            rows.append((t, f"{r['direction']}.bw_bytes_per_s", r["bw_bytes_per_s"], r["file_id"], *at))
            for metric in ("iops", "elapsed_ns"):
                if r.get(metric) is not None:
                    rows.append((t, f"{r['direction']}.{metric}", float(r[metric]), r["file_id"], *at))
        for r in first.unique("file_id", keep="first").iter_rows(named=True):
            t = raw_target(r["path"])
            for metric, col in (
                ("numjobs", "wl_numjobs"),
                ("iodepth", "wl_iodepth"),
                ("bs_bytes", "wl_bs"),
                ("size_bytes", "wl_size"),
            ):
                v = r.get(col)
                if v is not None:
                    try:
                        rows.append((t, metric, float(v), r["file_id"]))
                    except ValueError:
                        pass
    return _long(rows)


def bonnie(con, sel: Selection) -> pl.DataFrame:
    df = _q(
        con,
        sel,
        """
        SELECT f.path, f.sha256, r.file_id, r.run_index, r.test, coalesce(r.bytes_per_s, r.ops_per_s) AS value, r.latency_ns,
               r.line_start, r.line_end
        FROM bonnie_results r JOIN bonnie_runs b USING (file_id, run_index, source) JOIN files f USING (file_id)
        WHERE {where} AND b.preferred ORDER BY f.path, r.run_index""",
    )
    rows = []
    if df.height:
        first = df.filter(pl.col("run_index") == pl.col("run_index").min().over("file_id"))
        for r in first.iter_rows(named=True):
            t, at = raw_target(r["path"]), _at(r)
            rows.append((t, r["test"], r["value"], r["file_id"], *at))
            if r["latency_ns"] is not None:
                rows.append((t, f"{r['test']}.latency_ns", r["latency_ns"], r["file_id"], *at))
    return _long(rows)


def zdb(con, sel: Selection) -> pl.DataFrame:
    df = _q(
        con,
        sel,
        """
        SELECT f.path, f.sha256, s.file_id, s.bp_count, s.bp_logical_bytes, s.bp_allocated_bytes, s.embedded_bp_count,
               s.dedup_ratio, s.line_start, s.line_end
        FROM zdb_block_stats s JOIN files f USING (file_id) WHERE {where} ORDER BY f.path""",
    )
    rows = []
    for r in df.iter_rows(named=True):
        at = _at(r)
        for k in ("bp_count", "bp_logical_bytes", "bp_allocated_bytes", "embedded_bp_count", "dedup_ratio"):
            if r[k] is not None:
                rows.append((raw_target(r["path"]), k, float(r[k]), r["file_id"], *at))
    return _long(rows)


def partitions(con, sel: Selection) -> pl.DataFrame:
    parts = _q(
        con,
        sel,
        """
        SELECT f.path, f.sha256, p.file_id, min(p.start_sector * coalesce(p.logical_sector_bytes, 512)) AS start_bytes
        FROM partitions p JOIN files f USING (file_id) WHERE {where} AND p.start_sector > 0 GROUP BY ALL
        ORDER BY f.path, p.file_id""",
    )
    disks = _q(
        con,
        sel,
        """
        SELECT f.path, f.sha256, d.file_id, max(d.size_bytes) AS size_bytes FROM disks d JOIN files f USING (file_id)
        WHERE {where} GROUP BY ALL ORDER BY f.path, d.file_id""",
    )
    rows = [
        (raw_target(r["path"]), "first_partition_start_bytes", float(r["start_bytes"]), r["file_id"])
        for r in parts.iter_rows(named=True)
        if r["start_bytes"] is not None
    ]
    rows += [
        (raw_target(r["path"]), "disk_size_bytes", float(r["size_bytes"]), r["file_id"])
        for r in disks.iter_rows(named=True)
        if r["size_bytes"] is not None
    ]
    return _long(rows)


def zpool(con, sel: Selection) -> pl.DataFrame:
    lst = _q(
        con,
        sel,
        """
        SELECT f.path, f.sha256, z.file_id, z.pool, z.size_bytes, z.line_start, z.line_end FROM zpool_list z
        JOIN files f USING (file_id)
        WHERE {where} AND z.vdev IS NULL""",
    )
    io = _q(
        con,
        sel,
        """
        SELECT f.path, f.sha256, i.file_id, i.role, i.vdev, i.alloc_bytes, i.free_bytes, i.line_start, i.line_end
        FROM zpool_iostat i
        JOIN files f USING (file_id) WHERE {where} AND i.alloc_bytes IS NOT NULL""",
    )
    rows: list[tuple] = [
        (raw_target(r["path"]), f"pool:{r['pool']}.size_bytes", r["size_bytes"], r["file_id"], *_at(r))
        for r in lst.iter_rows(named=True)
        if r["size_bytes"] is not None
    ]
    for r in io.iter_rows(named=True):
        t, size = raw_target(r["path"]), r["alloc_bytes"] + (r["free_bytes"] or 0)
        if r["role"] == "cache":
            rows += [
                (t, "cache.size_bytes", size, r["file_id"], *_at(r)),
                (t, "cache.used_ratio", r["alloc_bytes"] / size, r["file_id"], *_at(r)),
            ]
        elif r["vdev"]:
            rows.append((t, f"vdev:{r['vdev']}.size_bytes", size, r["file_id"], *_at(r)))
    return _long(rows)


def mbuffer(con, sel: Selection) -> pl.DataFrame:
    summ, status = mbuffer_frames(con, sel)
    rows = []
    if summ.height:
        for r in rates(summ).iter_rows(named=True):
            t = raw_target(r["path"])
            for k in ("rate_bytes_per_s", "bytes", "resolved_bytes", "duration_ns"):
                if r[k] is not None:
                    rows.append((t, k, float(r[k]), r["file_id"], *_at(r)))
    for r in status.iter_rows(named=True):
        if r["in_rate_bytes_per_s"] is not None:
            rows.append(
                (raw_target(r["path"]), "status.in_rate_bytes_per_s", r["in_rate_bytes_per_s"], r["file_id"], *_at(r))
            )
    return _long(rows)


def mbuffer_frames(con, sel: Selection) -> tuple[pl.DataFrame, pl.DataFrame]:
    """mbuffer summary lines and the last status line of each file, with the files' labels."""
    summ = _q(
        con,
        sel,
        """
        SELECT s.*, f.path, f.sha256, coalesce(f.label, f.path) AS label, f.host, f.command, f.mtime_ns
        FROM mbuffer_summaries s
        JOIN files f USING (file_id) WHERE {where} ORDER BY f.path""",
    )
    status = _q(
        con,
        sel,
        """
        SELECT st.*, f.path, f.sha256, coalesce(f.label, f.path) AS label FROM mbuffer_status st JOIN files f USING (file_id)
        WHERE {where} AND st.seq = (SELECT max(seq) FROM mbuffer_status s2 WHERE s2.file_id = st.file_id)
        ORDER BY f.path""",
    )
    return summ, status


def mbuffer_status_lines(con, sel: Selection) -> pl.DataFrame:
    """Every mbuffer status line of the selection, in the order printed, with its file's label."""
    return _q(
        con,
        sel,
        """
        SELECT st.*, f.path, f.sha256, coalesce(f.label, f.path) AS label FROM mbuffer_status st
        JOIN files f USING (file_id) WHERE {where} ORDER BY f.path, st.seq""",
    )


def layouts(con, sel: Selection) -> pl.DataFrame:
    df = _q(
        con,
        sel,
        """
        SELECT f.path, f.sha256, t.file_id, list_distinct(list(t.disks)) AS disks FROM thumper_layouts t
        JOIN files f USING (file_id) WHERE {where} GROUP BY ALL""",
    )
    return _long(
        [
            (raw_target(r["path"]), "layout_disks", float(r["disks"][0]), r["file_id"])
            for r in df.iter_rows(named=True)
            if len(r["disks"]) == 1
        ]
    )


def per_file(con, sel: Selection, runs: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every named value of every selected file (see the module doc)."""
    if runs is None:
        runs = fio_runs.runs(con, sel)
    return pl.concat(
        [
            fio(runs),
            bonnie(con, sel),
            zdb(con, sel),
            partitions(con, sel),
            zpool(con, sel),
            mbuffer(con, sel),
            layouts(con, sel),
        ]
    )


def study_level(values: dict[str, float | None]) -> pl.DataFrame:
    """Values an analysis computes for the selection as a whole (models, ratios), as measures with target ''."""
    return _long([("", k, None if v is None else float(v), None) for k, v in values.items()])
