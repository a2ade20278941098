"""Dedup table (DDT) memory estimates (notebook 04).

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

from ..units import GiB

# in-core bytes per entry seen in practice (zdb -DD "in core" field; docs/formats/zfs-facts.md F3)
OBSERVED_IN_CORE = (141, 154, 165, 320, 392)


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


# ----------------------------------------------------------------------------- notebook 04 on any selection

STATS_SQL = """
SELECT s.*, f.path, coalesce(s.pool, f.pool, f.label, regexp_extract(f.path, '[^/]+$')) AS pool_name,
       s.pool IS NULL AND f.pool IS NOT NULL AS pool_from_manifest
FROM zdb_block_stats s JOIN files f USING (file_id) WHERE {where} ORDER BY s.bp_count
"""
DDT_SQL = """
SELECT h.file_id, h.ddt_no, h.source, h.alloc_blocks, h.ref_blocks, h.alloc_dsize_bytes, h.ref_dsize_bytes, f.path,
       coalesce((SELECT any_value(r.pool) FROM zdb_ddt_ratios r WHERE r.file_id = h.file_id AND r.ddt_no = h.ddt_no),
                f.pool, f.label, regexp_extract(f.path, '[^/]+$')) AS pool_name
FROM zdb_ddt_histogram h JOIN files f USING (file_id)
WHERE {where} AND h.is_total AND h.object IS NULL
ORDER BY f.path, h.ddt_no
"""
OBJECTS_SQL = """
SELECT o.file_id, o.ddt_no, f.path, coalesce(o.pool, f.pool, f.label, regexp_extract(f.path, '[^/]+$')) AS pool_name,
       sum(o.entries) AS entries, sum(o.core_bytes_total) AS core_bytes, sum(o.disk_bytes_total) AS disk_bytes,
       bool_or(o.totals_derived) AS derived
FROM zdb_ddt_objects o JOIN files f USING (file_id) WHERE {where} AND o.kind = 'object' AND o.entries IS NOT NULL
GROUP BY ALL ORDER BY f.path, o.ddt_no
"""


L2ARC_HEADER_BYTES = 96  # RAM per block held in L2ARC (arc_buf_hdr_t l2 part, approximate)
DDT_LEAF_BYTES = 4096  # legacy ZAP leaf block holding DDT entries
FLAT_PHYS_BYTES = 72  # OpenZFS 2.3 flat DDT entry on disk (docs/formats/zfs-facts.md F6)
FAST_ENTRY_CORE_BYTES = 216  # OpenZFS 2.3 ddt_entry_t in core, as module/zfs/ddt.c states it (F6)

ZPOOL_SQL = """
SELECT z.pool, z.dedup_ratio, z.alloc_bytes, z.exact, z.file_id, f.path FROM zpool_list z JOIN files f USING (file_id)
WHERE {where} AND z.vdev IS NULL AND z.dedup_ratio IS NOT NULL
"""


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


def ladder(
    stats: pl.DataFrame, zpool: pl.DataFrame, ddt: pl.DataFrame, objects: pl.DataFrame, bytes_per_entry: float
) -> pl.DataFrame:
    """Per pool, every DDT estimate the logs allow, crude to good: (pool, rung, entries, low, high, bytes_per_entry,
    ddt_bytes, basis). ``zpool`` rows are matched to a zdb -b by pool and nearest ALLOC (``matching_zpool``)."""
    rows = []
    for s in stats.iter_rows(named=True):
        pool, bpe = s["pool"], bytes_per_entry
        rows.append((pool, "1. bp count (upper bound)", s["bp_count"], None, None, bpe, "zdb -b: every block pointer"))
        extra = (s["bp_deduped_bytes"] or 0) / s["bp_allocated_avg_bytes"] if s["bp_allocated_avg_bytes"] else 0
        less = s["bp_count"] - (s["embedded_bp_count"] or 0) - extra
        rows.append(
            (
                pool,
                "2. bp count less embedded bps and extra references",
                less,
                None,
                None,
                bpe,
                "zdb -b: bp count - embedded - deduped / average ASIZE",
            )
        )
        zr = matching_zpool(s, zpool)
        if zr and s["bp_deduped_bytes"] and s["bp_allocated_avg_bytes"]:
            t = dedup_tracked(
                s["bp_deduped_bytes"], zr["dedup_ratio"], s["bp_allocated_avg_bytes"], 0.0 if zr["exact"] else 0.01
            )
            if t["entries"] is not None:
                rows.append(
                    (
                        pool,
                        "3. DDT-tracked blocks (zpool list DEDUP + zdb -b deduped)",
                        t["entries"],
                        t["entries_low"],
                        t["entries_high"],
                        bpe,
                        f"deduped / (DEDUP {zr['dedup_ratio']:.2f} - 1) / average ASIZE",
                    )
                )
    for r in ddt.iter_rows(named=True):
        rung = "4. zdb -S simulated entries" if r["source"] == "simulated" else "5. zdb -DD entries"
        rows.append((r["pool_name"], rung, r["alloc_blocks"], None, None, bytes_per_entry, "zdb DDT histogram Total"))
    for r in objects.iter_rows(named=True):
        if r["entries"] and r["core_bytes"]:
            rows.append(
                (
                    r["pool_name"],
                    "6. zdb -DD entries x measured in-core size",
                    r["entries"],
                    None,
                    None,
                    r["core_bytes"] / r["entries"],
                    "zdb -DD DDT objects: entries and in-core bytes",
                )
            )
    schema = {
        "pool": pl.String,
        "rung": pl.String,
        "entries": pl.Float64,
        "entries_low": pl.Float64,
        "entries_high": pl.Float64,
        "bytes_per_entry": pl.Float64,
        "basis": pl.String,
    }
    df = pl.DataFrame(rows, schema=schema, orient="row")
    return df.with_columns(
        ddt_bytes=pl.col("entries") * pl.col("bytes_per_entry"),
        ddt_bytes_low=pl.col("entries_low") * pl.col("bytes_per_entry"),
        ddt_bytes_high=pl.col("entries_high") * pl.col("bytes_per_entry"),
    ).sort("pool", "rung")


def one_summary_per_pool(stats: pl.DataFrame, pool: str = "pool_name") -> pl.DataFrame:
    """zdb -b summaries, one per pool (column ``pool``): the same numbers printed by several runs (``-b`` and ``-bb``
    of one pool) count once; a pool with different summaries (taken at other times) keeps each, named
    ``pool (file name)``."""
    if stats.is_empty():
        return stats
    out = stats.unique(subset=[pool, "bp_count", "bp_allocated_bytes"], keep="first", maintain_order=True)
    return out.with_columns(
        pl.when(pl.len().over(pool) > 1)
        .then(pl.concat_str([pl.col(pool), pl.lit(" ("), pl.col("path").str.split("/").list.last(), pl.lit(")")]))
        .otherwise(pl.col(pool))
        .alias(pool)
    )


def arc_max(ram_gib: float, arc_max_gib: float) -> float:
    """The ARC maximum in GiB: ``arc_max_gib``, or 0 for FreeBSD's legacy default, RAM less 1 GiB."""
    return arc_max_gib if arc_max_gib else ram_gib - 1


def _whole_bytes(limit: float) -> int:
    """A bytes-per-entry limit in whole bytes, rounded down: 'fits at 479 B or less' for 479.6 (480 would not fit)."""
    return math.floor(limit)


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
    entries, zdb -DD entries x their measured in-core size) against the ARC's metadata budget."""
    from . import measures, prose
    from .db import frame
    from .result import Result

    where, params = sel.sql("f")
    res = Result.start(con, sel, measures.per_file(con, sel))
    arc_max_gib = arc_max(ram_gib, arc_max_gib)
    if ram_gib <= 0 or not 0 < arc_max_gib <= ram_gib or not 0 < metadata_fraction <= 1 or bytes_per_entry <= 0:
        raise ValueError(
            "need ram_gib > 0, 0 < arc_max_gib <= ram_gib (0: RAM less 1 GiB), 0 < metadata_fraction <= 1, "
            f"bytes_per_entry > 0; got ram_gib {ram_gib:g}, arc_max_gib {arc_max_gib:g}, metadata_fraction "
            f"{metadata_fraction:g}, bytes_per_entry {bytes_per_entry:g}"
        )
    budget = arc_max_gib * GiB * metadata_fraction
    stats = one_summary_per_pool(frame(con, STATS_SQL.format(where=where), params))
    ddt = frame(con, DDT_SQL.format(where=where), params)
    objects = frame(con, OBJECTS_SQL.format(where=where), params)
    res.frames.update(stats=stats, ddt=ddt, objects=objects)
    res.file_ids = stats["file_id"].to_list() + ddt["file_id"].to_list() + objects["file_id"].to_list()
    res.findings.append(
        f"Metadata budget: {arc_max_gib:g} GiB ARC max x {metadata_fraction:g} = "
        f"{budget / GiB:.2f} GiB (RAM {ram_gib:g} GiB; parameters)."
    )
    if stats.is_empty():
        res.missing.append(
            f"no `zdb -b` output for {sel.describe()}: run `zdb -b POOL > zdb-b-POOL.txt`, add it under "
            "data/raw/<study>/ and label it (study, pool) in the manifest"
        )
    else:
        stats = stats.with_columns(pool=pl.col("pool_name"))
        table = memory_table(stats, bytes_per_entry, ram_gib * GiB, arc_max_gib / ram_gib, metadata_fraction)
        table = table.with_columns(crossover_bytes_per_entry=budget / pl.col("bp_count"))
        res.frames["memory"] = table
        res.frames["sensitivity"] = sensitivity(stats, list(per_entry_sizes))
        for r in table.iter_rows(named=True):
            res.findings.append(
                f"Pool {r['pool']}: {r['bp_count']:,} block pointers x {bytes_per_entry:g} B = {prose.size(r['ddt_bytes'])} "
                f"({r['ddt_bytes'] / 1e9:.3g} GB), an upper bound (bp count includes metadata and embedded bps); "
                + ("fits" if r["fits"] else "does not fit")
                + f" the {r['metadata_budget_gib']:.2f} GiB budget; it would "
                f"fit at {_whole_bytes(r['crossover_bytes_per_entry'])} B per entry or less."
            )
        from_manifest = stats.filter(pl.col("pool_from_manifest"))
        if from_manifest.height:
            res.findings.append(
                f"Pool names from the manifest (the zdb output has no prompt line): "
                f"{prose.listing(from_manifest['pool'].to_list())}."
            )
        unnamed = stats.filter(pl.col("pool").is_null() | (pl.col("pool") == pl.col("path").str.split("/").list.last()))
        if unnamed.height:
            res.missing.append(
                "the pool of " + prose.listing(unnamed["path"].to_list()) + " is not in the log nor the "
                "manifest: add the pool name (column pool)"
            )
        res.headline = {
            f"DDT {r['pool']} (bp count x {bytes_per_entry:g} B)": prose.size(r["ddt_bytes"])
            for r in table.iter_rows(named=True)
        }
    if ddt.height:
        for r in ddt.iter_rows(named=True):
            kind = "zdb -S (simulated)" if r["source"] == "simulated" else "zdb -D/-DD (existing DDT)"
            res.findings.append(
                f"Pool {r['pool_name']}, {kind}: {r['alloc_blocks']:,} entries -> "
                f"{prose.size(r['alloc_blocks'] * bytes_per_entry)} at {bytes_per_entry:g} B/entry."
            )
            res.headline[f"DDT entries {r['pool_name']} ({r['source']})"] = f"{r['alloc_blocks']:,}"
    else:
        res.missing.append(
            f"no `zdb -S` or `zdb -DD` output for {sel.describe()}: `zdb -S POOL` (before enabling "
            "dedup) counts the entries a DDT would hold; `zdb -DD POOL` (after) the real ones with their size"
        )
    for r in objects.iter_rows(named=True):
        if r["entries"] and r["core_bytes"] is not None:
            res.findings.append(
                f"Pool {r['pool_name']}, DDT objects: {r['entries']:,} entries use {prose.size(r['core_bytes'])} "
                f"in core = {r['core_bytes'] / r['entries']:.0f} B per entry (measured"
                + (", from zdb's truncated per-entry figure" if r["derived"] else "")
                + ")."
            )
    if stats.height and ddt.height:
        both = stats.join(ddt.rename({"pool_name": "pool"}), on="pool", how="inner")
        for r in both.iter_rows(named=True):
            res.findings.append(
                f"Pool {r['pool']}: bp count {r['bp_count']:,} is {r['bp_count'] / r['alloc_blocks']:.1f}x "
                f"the {r['alloc_blocks']:,} entries zdb counted ({r['source']})."
            )
    zpool = frame(con, ZPOOL_SQL.format(where=where), params)
    lad = ladder(
        stats.with_columns(pool=pl.col("pool_name")) if stats.height else stats, zpool, ddt, objects, bytes_per_entry
    )
    res.frames["ladder"] = lad
    res.file_ids += zpool["file_id"].to_list()
    verdicts = []
    for (pool,), g in lad.group_by("pool", maintain_order=True):
        best = g.sort("rung").row(-1, named=True)
        lo = best["ddt_bytes_low"] if best["ddt_bytes_low"] is not None else best["ddt_bytes"]
        hi = best["ddt_bytes_high"] if best["ddt_bytes_high"] is not None else best["ddt_bytes"]
        fits = "fits" if hi <= budget else "does not fit" if lo > budget else "may or may not fit"
        rng = prose.size(best["ddt_bytes"]) if lo == hi else f"{prose.size(lo)} to {prose.size(hi)}"
        res.findings.append(
            f"Pool {pool}, best estimate ({best['rung'][3:]}): {best['entries']:,.0f} entries, "
            f"{rng} at {best['bytes_per_entry']:.0f} B/entry: {fits} the {budget / GiB:.2f} GiB budget."
        )
        if not best["rung"].startswith("6."):  # bytes per entry assumed, not measured: where the verdict flips
            flip = budget / best["entries"]
            flips = (
                f"{_whole_bytes(flip)} B"
                if best["entries_low"] is None
                else f"{_whole_bytes(flip)} B ({_whole_bytes(budget / best['entries_high'])}-"
                f"{_whole_bytes(budget / best['entries_low'])} B with the ratio's rounding)"
            )
            sizes = sorted(per_entry_sizes)
            res.findings.append(
                f"  It fits while an entry costs at most {flips}; over the in-core sizes seen in zdb -DD "
                f"outputs ({sizes[0]:g}-{sizes[-1]:g} B per entry) it spans {prose.size(best['entries'] * sizes[0])} "
                f"to {prose.size(best['entries'] * sizes[-1])}: the verdict rests on the bytes per entry, which "
                "only `zdb -DD` or `zpool status -D` on the pool itself measure."
            )
        res.headline[f"DDT {pool}, best estimate"] = f"{rng} ({best['rung'][3:]})"
        if best["rung"].startswith(("1.", "2.")):
            res.caveats.append(f"{pool}: only an upper bound (no zdb -S/-DD, no zpool DEDUP)")
        if best["rung"].startswith("6."):
            verdicts.append(f"{pool} {fits} ({rng}, measured bytes per entry)")
        else:
            flip = budget / best["entries"]
            verdicts.append(
                f"{pool} {fits} ({rng}; "
                + (
                    f"it would fit at {_whole_bytes(flip)} B/entry or less)"
                    if fits == "does not fit"
                    else f"not above {_whole_bytes(flip)} B/entry)"
                )
            )
        s_row = stats.filter(pl.col("pool_name") == pool) if stats.height else stats
        if s_row.height:
            sr = s_row.row(0, named=True)
            z = matching_zpool(sr, zpool) if sr["bp_deduped_bytes"] else None
            if z and z["dedup_ratio"] and z["dedup_ratio"] > 1:
                tracked, net = sr["bp_deduped_bytes"] / (z["dedup_ratio"] - 1), net_allocated(sr)
                res.findings.append(
                    f"Pool {pool}: `zpool list` ALLOC {prose.size(z['alloc_bytes'])} and zdb's allocation "
                    f"{prose.size(net)} (bp allocated less deduped) differ by {z['alloc_gap']:.1%}, so the two "
                    f"outputs fit one moment; by DEDUP {z['dedup_ratio']:.2f}x the DDT tracks "
                    f"{prose.size(tracked)} ({tracked / 1e12:.2f} TB), {tracked / net:.1%} of the pool's allocation: "
                    "the rest was written without dedup and has no entry."
                )
            if sr["bp_deduped_bytes"]:
                res.findings.append(
                    f"Pool {pool}: dedup saves {prose.size(sr['bp_deduped_bytes'])} of disk for about "
                    f"{prose.size(best['ddt_bytes'])} of RAM."
                )
            if sr["bp_logical_avg_bytes"]:
                res.findings.append(
                    f"Pool {pool}: its average logical block is {sr['bp_logical_avg_bytes'] / 1024:.0f} KiB; "
                    f"at recordsize=1M large files would need about {1024 * 1024 / sr['bp_logical_avg_bytes']:.0f}x "
                    "fewer entries (small files and metadata do not shrink)."
                )
    cache = res.measures.filter(pl.col("metric") == "cache.size_bytes")
    if cache.height and lad.height:
        best_bytes = lad.sort("rung").group_by("pool", maintain_order=True).last()["ddt_bytes"].max()
        res.findings.append(
            f"An L2ARC of {prose.size(cache['value'].max())} is in the data: DDT blocks it holds leave "
            f"the ARC but keep a header in RAM each (about {L2ARC_HEADER_BYTES} B per "
            f"{DDT_LEAF_BYTES // 1024} KiB DDT block), about {prose.size(best_bytes / DDT_LEAF_BYTES * L2ARC_HEADER_BYTES)} "
            f"for a {prose.size(best_bytes)} table: it relieves RAM, at the price of reads from the cache device."
        )
    if verdicts:
        res.verdict = (
            f"Best DDT estimate per pool against the {budget / GiB:.2f} GiB metadata budget, at "
            f"{bytes_per_entry:g} B/entry unless measured: " + "; ".join(verdicts) + "."
        )
    res.findings.append(
        "OpenZFS 2.3 fast dedup (new tables only; docs/formats/zfs-facts.md F6) changes the arithmetic: flat "
        f"on-disk entries of {FLAT_PHYS_BYTES} B instead of 256 B, a slimmer in-core entry (about "
        f"{FAST_ENTRY_CORE_BYTES} B), a dedup log that batches table updates, `dedup_table_quota` to cap the table, "
        "`zpool ddtprune` to drop old unique entries and `zpool prefetch -t ddt` to load the table into the ARC. "
        "On a pool that already dedups, `zpool status -D` prints its entries and in-core size."
    )
    if lad.height:
        best_entries = lad.sort("rung").group_by("pool", maintain_order=True).last()
        res.findings.append(
            "  Arithmetic at about "
            f"{FAST_ENTRY_CORE_BYTES} B per in-core entry: "
            + prose.listing(
                [
                    f"{r['pool']} {prose.size(r['entries'] * FAST_ENTRY_CORE_BYTES)}"
                    for r in best_entries.iter_rows(named=True)
                ]
            )
            + " (best estimate of the entries)."
        )
    return res
