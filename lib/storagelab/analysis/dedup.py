"""Dedup table (DDT) memory estimates (notebook 04).

Three steps: ``query`` (SQL -> frames), ``compute`` (frames -> ``DedupNumbers``, named numbers) and
``dedup_findings.write`` (sentences from those numbers); ``analyse`` runs them.

Rule of thumb (OpenZFS tuning guide; docs/formats/zfs-facts.md F1): each DDT entry cached in the ARC costs
"slightly more than 320 bytes", so RAM ~= entries x 320 B. Estimates, from crude to good:

1. ``bp count`` of ``zdb -b`` x bytes/entry: an upper bound, because bp count includes
   metadata, indirect and embedded block pointers that are never deduplicated (F5.2).
2. ``zdb -S``: the simulated DDT's Total/allocated/blocks = the number of entries a DDT
   would hold (F5.1).
3. ``zdb -DD`` on a pool that dedups: entries x in-core bytes per entry, per DDT object (F3).

The DDT is ARC metadata: to stay cached it must fit under the metadata cap, a fraction of
the ARC maximum (1/4 on Solaris/illumos/FreeBSD <= 12, 3/4 on ZoL 0.7 - OpenZFS 2.1; F7).
"""

from __future__ import annotations

import math

import polars as pl

from ..chartsource import SOURCE_STRUCT
from ..units import GiB
from . import dedup_findings, dedup_histogram, measures
from .db import frame
from .dedup_numbers import (
    DEDUP_OFF,
    LARGE_RECORDSIZE,
    MEASURED_RUNGS,
    NO_META_CAP,
    OBSERVED_IN_CORE,
    RAM_LABEL,
    SIMULATED,
    TWICE,
    UNNAMED,
    UNNAMED_POOL,
    Budget,
    DedupFrames,
    DedupNumbers,
    DedupParams,
    Estimate,
    LeftOut,
    Machine,
    RecordsizeGain,
    Tracked,
    arc_max,
    named,
)
from .fio_runs import short_name
from .result import Result, lines_of


def from_bp_count(stats: pl.DataFrame, bytes_per_entry: float = 320.0) -> pl.DataFrame:
    """Per pool: entries = bp count (minus embedded bps, which never get a DDT entry) and DDT bytes."""
    return (
        stats.with_columns(
            entries_upper=pl.col("bp_count"),
            entries_less_embedded=pl.col("bp_count") - pl.col("embedded_bp_count").fill_null(0),
        )
        .with_columns(
            ddt_bytes=pl.col("entries_upper") * bytes_per_entry,
            ddt_bytes_less_embedded=pl.col("entries_less_embedded") * bytes_per_entry,
        )
        .with_columns(
            ddt_gib=pl.col("ddt_bytes") / GiB,
            ddt_gb=pl.col("ddt_bytes") / 1e9,
        )
    )


def sensitivity(stats: pl.DataFrame, per_entry: list[float] | tuple[float, ...]) -> pl.DataFrame:
    """DDT size over a range of bytes/entry: one row per (pool, bytes_per_entry)."""
    rows = []
    for r in stats.select("pool", "bp_count").iter_rows(named=True):
        for b in per_entry:
            rows.append({"pool": r["pool"], "bytes_per_entry": float(b), "ddt_bytes": r["bp_count"] * float(b)})
    return pl.DataFrame(rows).with_columns(ddt_gib=pl.col("ddt_bytes") / GiB)


def memory_table(
    stats: pl.DataFrame, bytes_per_entry: float, ram_bytes: float, arc_max_fraction: float, metadata_fraction: float
) -> pl.DataFrame:
    """The notebook's main table: per pool, DDT bytes, ARC needed, the metadata budget and the verdict."""
    est = from_bp_count(stats, bytes_per_entry)
    budget = ram_bytes * arc_max_fraction * metadata_fraction
    return est.select(
        "pool",
        "bp_count",
        "embedded_bp_count",
        "ddt_bytes",
        "ddt_gib",
        (pl.col("ddt_bytes") / metadata_fraction / GiB).alias("arc_needed_gib"),
        pl.lit(budget / GiB).alias("metadata_budget_gib"),
        (pl.col("ddt_bytes") <= budget).alias("fits"),
        "file_id",
    )


# ----------------------------------------------------------------------------- notebook 04: query

# a pool whose name neither its log nor the manifest gives: shown by its file's label or name, never as a pool name
UNNAMED_SQL = f"'{UNNAMED_POOL}' || coalesce('label ' || f.label, 'file ' || regexp_extract(f.path, '[^/]+$')) || ')'"
STATS_SQL = """
SELECT s.*, f.path, f.sha256, f.host, f.recordsize_bytes AS recordsize_label, f.ram_bytes AS ram_label,
       coalesce(s.pool, f.pool, {unnamed}) AS pool_name,
       s.pool IS NULL AND f.pool IS NOT NULL AS pool_from_manifest
FROM zdb_block_stats s JOIN files f USING (file_id) WHERE {where} ORDER BY s.bp_count
"""
DDT_SQL = """
SELECT h.file_id, h.ddt_no, h.source, h.alloc_blocks, h.ref_blocks, h.alloc_dsize_bytes, h.ref_dsize_bytes, f.path, f.sha256,
       h.line_start, h.line_end,
       f.host, f.ram_bytes AS ram_label, coalesce((SELECT any_value(r.pool) FROM zdb_ddt_ratios r WHERE r.file_id = h.file_id
                         AND r.ddt_no = h.ddt_no), f.pool, {unnamed}) AS pool_name
FROM zdb_ddt_histogram h JOIN files f USING (file_id)
WHERE {where} AND h.is_total AND h.object IS NULL
ORDER BY f.path, h.ddt_no
"""
OBJECTS_SQL = """
SELECT o.file_id, o.ddt_no, f.path, f.sha256, f.host,
       coalesce(o.pool, f.pool, {unnamed}) AS pool_name,
       sum(o.entries) AS entries, sum(o.core_bytes_total) AS core_bytes, sum(o.disk_bytes_total) AS disk_bytes,
       bool_or(o.totals_derived) AS derived, min(o.line_start) AS line_start, max(o.line_end) AS line_end
FROM zdb_ddt_objects o JOIN files f USING (file_id) WHERE {where} AND o.kind = 'object' AND o.entries IS NOT NULL
GROUP BY ALL ORDER BY f.path, o.ddt_no
"""
ARC_SQL = """
SELECT a.file_id, f.path, f.sha256, f.host, f.ram_bytes AS ram_label, f.zfs_version AS zfs_version_label, a.name, a.value,
       a.exact FROM arc_stats a JOIN files f USING (file_id)
WHERE {where} AND a.name IN ('c_max', 'arc_meta_limit', 'memory_all_bytes', 'size', 'arc_meta_used', 'meta')
ORDER BY f.path, a.line_start
"""
STATUS_SQL = """
SELECT z.file_id, f.path, f.sha256, f.host, z.pool AS pool_name, z.ddt_entries AS entries, z.ddt_sizes,
       CASE WHEN z.ddt_sizes = 'total' THEN z.ddt_core_bytes ELSE z.ddt_core_bytes * z.ddt_entries END AS core_bytes,
       z.line_start, z.line_end
FROM zpool_status_pools z JOIN files f USING (file_id)
WHERE {where} AND z.ddt_entries > 0 AND z.ddt_core_bytes IS NOT NULL ORDER BY f.path, z.report_no
"""
RECORDSIZE_SQL = """
SELECT p.file_id, p.name, p.value_bytes FROM zfs_properties p JOIN files f USING (file_id)
WHERE {where} AND p.kind = 'dataset' AND p.property = 'recordsize' AND p.value_bytes IS NOT NULL
"""
DEDUP_PROPERTY_SQL = """
SELECT p.file_id, p.name, p.value, f.path, f.sha256, f.host, p.line_start, p.line_end
FROM zfs_properties p JOIN files f USING (file_id)
WHERE {where} AND p.kind = 'dataset' AND p.property = 'dedup' ORDER BY f.path, p.line_start
"""
# files the ingest refused whose error is about a DDT table (zdb -S / -DD, zpool status -D): not study-scoped, a
# file that failed has no rows to carry its labels
DDT_ERRORS_SQL = """
SELECT path, line, message FROM ingest_errors
WHERE message ILIKE '%DDT%' OR expected ILIKE '%DDT%' OR message ILIKE '%dedup%' ORDER BY path
"""
ZPOOL_SQL = """
SELECT z.pool, z.dedup_ratio, z.alloc_bytes, z.exact, z.file_id, f.path, f.sha256, f.host, z.line_start, z.line_end
FROM zpool_list z JOIN files f USING (file_id)
WHERE {where} AND z.vdev IS NULL AND z.dedup_ratio IS NOT NULL ORDER BY f.path, z.pool
"""

DEFAULT_RECORDSIZE = 128 * 1024  # ZFS's default recordsize (zfsprops.7)

# the ladder's rungs, crude to good (column ``rung``: the number; ``estimate``: these words)
RUNGS = {
    1: "bp count (upper bound)",
    2: "bp count less embedded bps and extra references",
    3: "DDT-tracked blocks (zpool list DEDUP + zdb -b deduped)",
    4: "zdb -S simulated entries",
    5: "zdb -DD entries",
    6: "zdb -DD entries x measured in-core size",
    7: "zpool status -D entries x measured in-core size",
}


def dedup_tracked(deduped_bytes: float, ratio: float, avg_asize: float, ratio_step: float = 0.01) -> dict:
    """Entries of the DDT from ``zpool list`` DEDUP and ``zdb -b``'s "bp deduped": DEDUP is the ratio over the blocks
    the DDT tracks, so their allocation is deduped / (ratio - 1) and their count that / the average ASIZE. The ratio is
    printed with 2 decimals: ``ratio_step`` / 2 either way gives the range."""

    def entries(r):
        return deduped_bytes / (r - 1) / avg_asize if r > 1 else None

    half = ratio_step / 2
    return dict(entries=entries(ratio), entries_low=entries(ratio + half), entries_high=entries(ratio - half))


def net_allocated(s: dict) -> float | None:
    """What a pool allocates on disk by ``zdb -b``: bp allocated less what dedup saved (zdb's Normal class)."""
    if s.get("bp_allocated_bytes") is None:
        return None
    return s["bp_allocated_bytes"] - (s.get("bp_deduped_bytes") or 0)


def matching_zpool(s: dict, zpool: pl.DataFrame) -> dict | None:
    """The ``zpool list`` row of the same pool whose ALLOC is nearest zdb's net allocation (the same moment), with
    ``alloc_gap``: |ALLOC - zdb| / zdb."""
    net = net_allocated(s)
    z = zpool.filter(pl.col("pool") == s["pool"])
    if not z.height or not net:
        return None
    zr = z.with_columns(gap=(pl.col("alloc_bytes") - net).abs()).sort("gap").row(0, named=True)
    return {**zr, "alloc_gap": zr["gap"] / net}


def _lines(*rows: dict) -> list[dict]:
    """The raw lines of the rows an estimate was computed from (path, line_start, line_end, sha256; for its chart)."""
    return [
        {
            "path": r.get("path"),
            "line_start": r.get("line_start"),
            "line_end": r.get("line_end") or r.get("line_start"),
            "sha256": r.get("sha256"),
        }
        for r in rows
        if r.get("path")
    ]


def ladder(
    stats: pl.DataFrame,
    zpool: pl.DataFrame,
    ddt: pl.DataFrame,
    objects: pl.DataFrame,
    bytes_per_entry: float,
    status: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per pool, every DDT estimate the logs allow, crude to good: (pool, rung, estimate, entries, low, high,
    bytes_per_entry, ddt_bytes, basis); ``rung`` is the number of RUNGS, ``estimate`` its words. ``zpool`` rows are
    matched to a zdb -b by pool and nearest ALLOC (``matching_zpool``)."""
    rows = []
    bpe = bytes_per_entry
    for s in stats.iter_rows(named=True) if stats.height else []:
        pool = s["pool"]
        rows.append((pool, 1, s["bp_count"], None, None, bpe, "zdb -b: every block pointer", _lines(s)))
        extra = (s["bp_deduped_bytes"] or 0) / s["bp_allocated_avg_bytes"] if s["bp_allocated_avg_bytes"] else 0
        less = s["bp_count"] - (s["embedded_bp_count"] or 0) - extra
        rows.append(
            (pool, 2, less, None, None, bpe, "zdb -b: bp count - embedded - deduped / average ASIZE", _lines(s))
        )
        zr = matching_zpool(s, zpool)
        if zr and s["bp_deduped_bytes"] and s["bp_allocated_avg_bytes"]:
            step = 0.0 if zr["exact"] else 0.01
            t = dedup_tracked(s["bp_deduped_bytes"], zr["dedup_ratio"], s["bp_allocated_avg_bytes"], step)
            if t["entries"] is not None:
                basis = f"deduped / (DEDUP {zr['dedup_ratio']:.2f} - 1) / average ASIZE"
                rows.append((pool, 3, t["entries"], t["entries_low"], t["entries_high"], bpe, basis, _lines(s, zr)))
    for r in ddt.iter_rows(named=True):
        rung = 4 if r["source"] == "simulated" else 5
        rows.append((r["pool_name"], rung, r["alloc_blocks"], None, None, bpe, "zdb DDT histogram Total", _lines(r)))
    for r in objects.iter_rows(named=True):
        if r["entries"] and r["core_bytes"]:
            per = r["core_bytes"] / r["entries"]
            rows.append(
                (
                    r["pool_name"],
                    6,
                    r["entries"],
                    None,
                    None,
                    per,
                    "zdb -DD DDT objects: entries, in-core bytes",
                    _lines(r),
                )
            )
    for r in status.iter_rows(named=True) if status is not None and status.height else []:
        per = r["core_bytes"] / r["entries"]
        rows.append(
            (r["pool_name"], 7, r["entries"], None, None, per, "zpool status -D: entries, in-core bytes", _lines(r))
        )
    schema = {
        "pool": pl.String(),
        "rung": pl.Int64(),
        "entries": pl.Float64(),
        "entries_low": pl.Float64(),
        "entries_high": pl.Float64(),
        "bytes_per_entry": pl.Float64(),
        "basis": pl.String(),
        "sources": pl.List(SOURCE_STRUCT),
    }
    df = pl.DataFrame(rows, schema=schema, orient="row")
    return (
        df.with_columns(
            estimate=pl.col("rung").replace_strict(RUNGS, return_dtype=pl.String),
            ddt_bytes=pl.col("entries") * pl.col("bytes_per_entry"),
            ddt_bytes_low=pl.col("entries_low") * pl.col("bytes_per_entry"),
            ddt_bytes_high=pl.col("entries_high") * pl.col("bytes_per_entry"),
        )
        .select("pool", "rung", "estimate", pl.exclude("pool", "rung", "estimate"))
        .sort("pool", "rung")
    )


def one_summary_per_pool(stats: pl.DataFrame, pool: str = "pool_name") -> pl.DataFrame:
    """zdb -b summaries, one per pool (column ``pool``): the same numbers printed by several runs (``-b`` and ``-bb``
    of one pool) count once; a pool with different summaries (taken at other times) keeps each, named
    ``pool (file name)``."""
    if stats.is_empty():
        return stats
    out = stats.unique(subset=[pool, "bp_count", "bp_allocated_bytes"], keep="first", maintain_order=True)
    return out.with_columns(
        pl.when(pl.len().over(pool) > 1)
        .then(pl.concat_str([pl.col(pool), pl.lit(" ("), short_name(out), pl.lit(")")]))
        .otherwise(pl.col(pool))
        .alias(pool)
    )


# the largest cache device of zpool iostat -v (measures' cache.size_bytes: alloc + free), with its line
L2ARC_SQL = """
SELECT f.path, f.sha256, i.line_start, i.line_end, i.alloc_bytes + coalesce(i.free_bytes, 0) AS size_bytes
FROM zpool_iostat i JOIN files f USING (file_id)
WHERE {where} AND i.role = 'cache' AND i.alloc_bytes IS NOT NULL ORDER BY size_bytes DESC, f.path, i.line_start
"""


def query(con, sel, measures_frame: pl.DataFrame) -> DedupFrames:

    where, params = sel.sql("f")
    stats = one_summary_per_pool(frame(con, STATS_SQL.format(where=where, unnamed=UNNAMED_SQL), params))
    if stats.height:
        stats = stats.with_columns(pool=pl.col("pool_name"))
    cache = measures_frame.filter(pl.col("metric") == "cache.size_bytes")
    return DedupFrames(
        stats=stats,
        ddt=frame(con, DDT_SQL.format(where=where, unnamed=UNNAMED_SQL), params),
        objects=frame(con, OBJECTS_SQL.format(where=where, unnamed=UNNAMED_SQL), params),
        zpool=frame(con, ZPOOL_SQL.format(where=where), params),
        l2arc_bytes=cache.select(pl.col("value").max()).item() if cache.height else None,
        l2arc_lines=lines_of(frame(con, L2ARC_SQL.format(where=where), params).head(1)),
        arc=frame(con, ARC_SQL.format(where=where), params),
        recordsizes=frame(con, RECORDSIZE_SQL.format(where=where), params),
        status=frame(con, STATUS_SQL.format(where=where), params),
        dedup_props=frame(con, DEDUP_PROPERTY_SQL.format(where=where), params),
        failed=failed_files(con),
    )


def failed_files(con) -> tuple[int, pl.DataFrame]:
    """(How many files of the database failed to parse, those of them whose error is about a DDT table)."""
    found = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'ingest_errors'")
    if not found.fetchone()[0]:
        return 0, pl.DataFrame()
    count = con.execute("SELECT count(DISTINCT path) FROM ingest_errors").fetchone()[0]
    return int(count), frame(con, DDT_ERRORS_SQL, [])


# ----------------------------------------------------------------------------- notebook 04: compute


def arc_budget(g: pl.DataFrame, p: DedupParams) -> Budget:
    """The metadata budget from one ARC statistics output: c_max, and arc_meta_limit where the ARC has one (up to
    OpenZFS 2.1); from 2.2 on there is no metadata cap (F7), so the whole ARC maximum bounds the table. RAM from
    memory_all_bytes, else the parameter."""
    v = dict(zip(g["name"], g["value"], strict=True))
    c_max = v["c_max"]
    label = g["ram_label"][0] if "ram_label" in g.columns else None
    if v.get("memory_all_bytes"):
        ram, ram_source = v["memory_all_bytes"], "memory_all_bytes"
    elif label:  # the manifest's ram_bytes of the statistics' file: the machine's, over the default parameter
        ram, ram_source = float(label), RAM_LABEL
    else:
        ram, ram_source = p.ram_gib * GiB, "parameter"
    if v.get("arc_meta_limit"):
        fraction, rule = v["arc_meta_limit"] / c_max, "arc_meta_limit"
    elif "meta" in v:
        fraction, rule = 1.0, NO_META_CAP
    else:
        fraction, rule = p.metadata_fraction, "metadata_fraction parameter (no arc_meta_limit in the output)"
    return Budget(
        ram_bytes=ram,
        arc_max_bytes=c_max,
        metadata_fraction=fraction,
        source=f"ARC statistics, {g['path'][0].split('/')[-1]}",
        rule=rule,
        ram_source=ram_source,
        arc_size_bytes=v.get("size"),
        meta_used_bytes=v.get("arc_meta_used"),
        ram_label_bytes=label,
        zfs_version_label=g["zfs_version_label"][0] if "zfs_version_label" in g.columns else None,
    )


def arc_budgets(arc: pl.DataFrame, p: DedupParams) -> dict[str | None, Budget]:
    """Per host label, the budget of its (first) ARC statistics output with a c_max; an output without a host label
    stands for every pool when it is the only one (key None)."""
    out: dict[str | None, Budget] = {}
    for _, g in arc.group_by("path", maintain_order=True) if arc.height else []:
        if "c_max" not in g["name"].to_list():
            continue
        out.setdefault(g["host"][0], arc_budget(g, p))
    return out


def whole_bytes(limit: float) -> int:
    """A bytes-per-entry limit in whole bytes, rounded down: 'fits at 479 B or less' for 479.6 (480 would not fit).
    The one rounding rule of every 'fits at' figure (findings and tables)."""
    return math.floor(limit)


def _verdict(low: float, high: float, budget: float) -> str:
    return "fits" if high <= budget else "does not fit" if low > budget else "may or may not fit"


def best_estimate(g: pl.DataFrame, host: str | None, budget: Budget) -> Estimate:
    """The highest rung of one pool's ladder rows, judged against ``budget``."""
    b = g.sort("rung").row(-1, named=True)
    lo = b["ddt_bytes_low"] if b["ddt_bytes_low"] is not None else b["ddt_bytes"]
    hi = b["ddt_bytes_high"] if b["ddt_bytes_high"] is not None else b["ddt_bytes"]
    assumed = b["rung"] not in MEASURED_RUNGS
    return Estimate(
        pool=b["pool"],
        host=host,
        rung=b["rung"],
        estimate=b["estimate"],
        entries=b["entries"],
        entries_low=b["entries_low"],
        entries_high=b["entries_high"],
        bytes_per_entry=b["bytes_per_entry"],
        ddt_bytes=b["ddt_bytes"],
        ddt_low=lo,
        ddt_high=hi,
        fits=_verdict(lo, hi, budget.bytes),
        fits_at_most=whole_bytes(budget.bytes / b["entries"]) if assumed and b["entries"] else None,
        fits_at_most_low=whole_bytes(budget.bytes / b["entries_high"]) if assumed and b["entries_high"] else None,
        fits_at_most_high=whole_bytes(budget.bytes / b["entries_low"]) if assumed and b["entries_low"] else None,
        budget_bytes=budget.bytes,
    )


def other_dedup_pools(zpool: pl.DataFrame, host: str, estimated: set[str], moment: set[int]) -> tuple:
    """Pools of ``host``'s `zpool list` that deduplicate (DEDUP above 1.00x) and have no DDT estimate: from the
    listings that matched a zdb -b (``moment``: file ids), else from every listing of the host."""
    return tuple((r["pool"], r["dedup_ratio"]) for r in _other_dedup_rows(zpool, host, estimated, moment))


def _other_dedup_rows(zpool: pl.DataFrame, host: str, estimated: set[str], moment: set[int]) -> list[dict]:
    """The `zpool list` rows ``other_dedup_pools`` reads (with their lines)."""
    rows = zpool.filter((pl.col("host") == host) & ~pl.col("pool").is_in(list(estimated)))
    same = rows.filter(pl.col("file_id").is_in(list(moment)))
    rows = (same if same.height else rows).unique("pool", keep="last", maintain_order=True)
    return [r for r in rows.iter_rows(named=True) if r["dedup_ratio"] > 1]


def base_pool(pool: str) -> str:
    """A pool's name without the ' (file name)' ``one_summary_per_pool`` gives a second summary of it."""
    return pool.split(" (", 1)[0] if named(pool) else pool


def dedup_says(pool: str, props: pl.DataFrame, value: str) -> tuple[dict, ...]:
    """The `zfs get dedup` lines of ``pool``'s datasets when every one of them says ``value`` ('off'), or any of
    them ('on', 'verify', ... : anything but 'off') does; () when there is no such output or it says otherwise."""
    if props.is_empty():
        return ()
    mine = props.filter((pl.col("name") == pool) | pl.col("name").str.starts_with(pool + "/"))
    if mine.is_empty():
        return ()
    off = mine["value"] == "off"
    if value == "off":
        return lines_of(mine) if off.all() else ()
    return lines_of(mine.filter(~off))


def _left_out(e: Estimate, kept: list[Estimate], props: pl.DataFrame) -> LeftOut | None:
    """Why ``e`` is not part of its host's dedup tables (None: it is)."""
    if not named(e.pool):
        return LeftOut(e.pool, UNNAMED)
    base = base_pool(e.pool)
    off = dedup_says(base, props, "off")
    if off:
        return LeftOut(e.pool, DEDUP_OFF, off)
    if e.rung == 4 and not dedup_says(base, props, "on"):
        return LeftOut(e.pool, SIMULATED)
    twin = next((k.pool for k in kept if base_pool(k.pool) == base), None)
    return LeftOut(e.pool, TWICE, other=twin) if twin else None


def host_tables(mine: list[Estimate], props: pl.DataFrame) -> tuple[list[Estimate], list[LeftOut]]:
    """A host's estimates split into the tables its ARC holds and those left out (``LeftOut``): a zdb -S
    simulation of a pool not shown deduplicating, a pool whose `zfs get` says dedup=off, a pool with no name (it
    may be one of the named ones), a second summary of one pool (the better rung is kept)."""
    kept: list[Estimate] = []
    out: list[LeftOut] = []
    for e in sorted(mine, key=lambda e: -e.rung):
        why = _left_out(e, kept, props)
        if why:
            out.append(why)
        else:
            kept.append(e)
    order = {e.pool: i for i, e in enumerate(mine)}
    return sorted(kept, key=lambda e: order[e.pool]), sorted(out, key=lambda o: order[o.pool])


def machines(
    best: list[Estimate], zpool: pl.DataFrame, moment: set[int], budget_of, props: pl.DataFrame | None = None
) -> list[Machine]:
    """Per host label: the best estimates of the tables its ARC holds (``host_tables``; ``props``: `zfs get
    dedup`) summed against its one ARC budget (``budget_of(host)``)."""
    out = []
    for host in dict.fromkeys(e.host for e in best if e.host):
        mine, left = host_tables([e for e in best if e.host == host], props if props is not None else pl.DataFrame())
        low, high = sum(e.ddt_low for e in mine), sum(e.ddt_high for e in mine)
        entries = sum(e.entries for e in mine)
        budget = budget_of(host)
        estimated = {e.pool for e in mine} | {o.pool for o in left}
        out.append(
            Machine(
                host=host,
                pools=tuple(e.pool for e in mine),
                ddt_bytes=sum(e.ddt_bytes for e in mine),
                ddt_low=low,
                ddt_high=high,
                entries=entries,
                budget=budget,
                fits=_verdict(low, high, budget.bytes),
                fits_at_most=whole_bytes(budget.bytes / entries) if entries else 0,
                other_dedup_pools=other_dedup_pools(zpool, host, estimated, moment),
                other_dedup_lines=tuple(lines_of(r) for r in _other_dedup_rows(zpool, host, estimated, moment)),
                left_out=tuple(left),
            )
        )
    return out


def tracked_shares(stats: pl.DataFrame, zpool: pl.DataFrame) -> list[Tracked]:
    """Per zdb -b pool with blocks deduped and a `zpool list` of the same moment: the bytes its DDT tracks."""
    out = []
    for s in stats.iter_rows(named=True) if stats.height else []:
        net = net_allocated(s)
        z = matching_zpool(s, zpool) if s["bp_deduped_bytes"] else None  # None too where net is unknown
        if z and net and z["dedup_ratio"] and z["dedup_ratio"] > 1:
            out.append(
                Tracked(
                    pool=s["pool"],
                    zpool_alloc=z["alloc_bytes"],
                    zdb_alloc=net,
                    alloc_gap=z["alloc_gap"],
                    dedup_ratio=z["dedup_ratio"],
                    tracked_bytes=s["bp_deduped_bytes"] / (z["dedup_ratio"] - 1),
                    file_id=z["file_id"],
                    zpool_lines=lines_of(z),
                    zdb_lines=lines_of(s),
                )
            )
    return out


def pool_recordsize(pool: str, label: int | None, got: pl.DataFrame) -> tuple[int, str]:
    """A pool's recordsize and where it comes from: `zfs get` of its datasets when they agree, else its
    recordsize label, else ZFS's default."""
    mine = got.filter((pl.col("name") == pool) | pl.col("name").str.starts_with(pool + "/")) if got.height else got
    sizes = sorted(set(mine["value_bytes"].to_list())) if mine.height else []
    if len(sizes) == 1:
        return int(sizes[0]), "zfs get"
    if label:
        return int(label), "label"
    return DEFAULT_RECORDSIZE, "default" if not sizes else "default (its datasets differ)"


def recordsize_gains(stats: pl.DataFrame, got: pl.DataFrame | None = None) -> list[RecordsizeGain]:
    out = []
    for s in stats.iter_rows(named=True) if stats.height else []:
        if s["bp_logical_avg_bytes"]:
            record, source = pool_recordsize(
                s["pool"], s.get("recordsize_label"), got if got is not None else stats.clear()
            )
            out.append(
                RecordsizeGain(
                    pool=s["pool"],
                    avg_logical_bytes=s["bp_logical_avg_bytes"],
                    recordsize_bytes=record,
                    recordsize_source=source,
                    max_gain=LARGE_RECORDSIZE / record,
                    naive_gain=LARGE_RECORDSIZE / s["bp_logical_avg_bytes"],
                    lines=lines_of(s),
                )
            )
    return out


def best_sensitivity(
    best: list[Estimate], machines_: list[Machine], sizes, lad: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The estimate the verdict uses (each pool's best, and a machine's pools together) over ``sizes`` bytes/entry,
    with its entries and, given the ladder ``lad``, the lines of its inputs (``sources``: the best rung's; a machine's:
    its pools' together)."""

    def lines(pools: list[tuple[str, int]]) -> list[dict]:
        if lad is None or "sources" not in lad.columns:
            return []
        keys = set(pools)
        return [s for r in lad.iter_rows(named=True) if (r["pool"], r["rung"]) in keys for s in r["sources"] or ()]

    rung = {e.pool: e.rung for e in best}
    series = [(e.pool, e.entries, lines([(e.pool, e.rung)])) for e in best]
    series += [
        (f"{m.host} (all its pools)", m.entries, lines([(p, rung[p]) for p in m.pools if p in rung]))
        for m in machines_
        if len(m.pools) > 1
    ]
    rows = [(name, float(b), n * float(b), n, src) for name, n, src in series for b in sorted(sizes)]
    schema = {
        "series": pl.String(),
        "bytes_per_entry": pl.Float64(),
        "ddt_bytes": pl.Float64(),
        "entries": pl.Float64(),
        "sources": pl.List(SOURCE_STRUCT),
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def labelled_ram(frames: DedupFrames, p: DedupParams) -> tuple[float, str]:
    """The machine's RAM where no ARC statistics give it: the manifest's ram_bytes of the selection's zdb outputs
    when they agree on one value (over the ram_gib parameter), else the parameter."""
    labels = {
        float(v) for f in (frames.stats, frames.ddt) if "ram_label" in f.columns for v in f["ram_label"].drop_nulls()
    }
    return (labels.pop(), RAM_LABEL) if len(labels) == 1 else (p.ram_gib * GiB, "parameter")


def compute(frames: DedupFrames, p: DedupParams) -> DedupNumbers:
    """Frames -> named numbers: the ladder, each pool's best estimate, each machine's pools together."""
    p.check()
    ram, ram_source = labelled_ram(frames, p)
    arc = arc_max(ram / GiB, p.arc_max_gib)  # on the RAM used
    budget = Budget(ram, arc * GiB, p.metadata_fraction, "parameters", ram_source=ram_source)
    stats = frames.stats
    budgets = arc_budgets(frames.arc, p)
    if set(budgets) == {None}:
        budget = budgets[None]

    def budget_of(host):
        return budgets.get(host, budget)

    memory = pl.DataFrame()
    if stats.height:
        memory = memory_table(stats, p.bytes_per_entry, ram, arc * GiB / ram, p.metadata_fraction)
        per_pool = pl.Series("budget_bytes", [budget_of(h).bytes for h in stats["host"]], pl.Float64)
        memory = (
            memory.with_columns(per_pool)
            .with_columns(
                metadata_budget_gib=pl.col("budget_bytes") / GiB,
                fits=pl.col("ddt_bytes") <= pl.col("budget_bytes"),
                crossover_bytes_per_entry=pl.col("budget_bytes") / pl.col("bp_count"),
            )
            .with_columns(fits_at_most=pl.col("crossover_bytes_per_entry").floor().cast(pl.Int64))
        )
    lad = ladder(stats, frames.zpool, frames.ddt, frames.objects, p.bytes_per_entry, frames.status)
    hosts = _hosts(frames)
    best = [
        best_estimate(g, hosts.get(pool), budget_of(hosts.get(pool)))
        for (pool,), g in lad.group_by("pool", maintain_order=True)
    ]
    tracked = tracked_shares(stats, frames.zpool)
    machines_ = machines(best, frames.zpool, {t.file_id for t in tracked}, budget_of, frames.dedup_props)
    return DedupNumbers(
        params=p,
        budget=budget,
        memory=memory,
        ladder=lad,
        sensitivity=best_sensitivity(best, machines_, p.per_entry_sizes, lad),
        best=best,
        machines=machines_,
        tracked=tracked,
        recordsize=recordsize_gains(stats, frames.recordsizes),
        l2arc_bytes=frames.l2arc_bytes,
        l2arc_lines=frames.l2arc_lines,
        unhosted=[e.pool for e in best if not e.host],
        budgets=budgets,
    )


def _hosts(frames: DedupFrames) -> dict[str, str]:
    """pool -> host label, from whichever of its logs carries one."""
    out: dict[str, str] = {}
    named = (
        (frames.stats, "pool"),
        (frames.ddt, "pool_name"),
        (frames.objects, "pool_name"),
        (frames.status, "pool_name"),
    )
    for f, col in named:
        for r in f.iter_rows(named=True) if f.height else []:
            if r.get("host"):
                out.setdefault(r[col], r["host"])
    return out


# ----------------------------------------------------------------------------- notebook 04: the orchestrator


def analyse(
    con,
    sel,
    bytes_per_entry: float = 320.0,
    per_entry_sizes=OBSERVED_IN_CORE,
    ram_gib: float = 32.0,
    arc_max_gib: float = 0.0,
    metadata_fraction: float = 0.25,
):
    """Notebook 04 on any selection: per pool, the DDT estimates the logs allow (bp count x bytes/entry, zdb -S
    entries, zdb -DD entries x their measured in-core size), and per machine its pools together against its one
    ARC's metadata budget."""

    p = DedupParams(bytes_per_entry, tuple(float(x) for x in per_entry_sizes), ram_gib, arc_max_gib, metadata_fraction)
    p.check()
    res = Result.start(con, sel, measures.per_file(con, sel))
    frames = query(con, sel, res.measures)
    numbers = compute(frames, p)
    res.frames.update(stats=frames.stats, ddt=frames.ddt, objects=frames.objects, ladder=numbers.ladder)
    if numbers.memory.height:
        res.frames["memory"] = numbers.memory
    if numbers.sensitivity.height:
        res.frames["sensitivity"] = numbers.sensitivity
    res.file_ids = frames.file_ids()
    res.numbers = numbers
    dedup_findings.write(res, numbers, frames, sel)
    histogram = dedup_histogram.query(con, sel)  # zpool status -D tables: measured ratio, unique entries
    if histogram.height:
        res.frames["status_histogram"] = histogram
        res.findings.extend(dedup_histogram.sentences(histogram))
    return res
