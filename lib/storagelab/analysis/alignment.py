"""Sector alignment (notebook 03): offsets, verdicts, and before/after benchmark ratios.

A partition starting at LBA 63 on 512-byte sectors starts 32,256 bytes into the disk:
32,256 mod 4,096 = 3,584, so every 4 KiB block inside it straddles two physical sectors of a
512e/4Kn drive and each write becomes a read-modify-write (docs/formats/zfs-facts.md F9/F10). LBA 2048 =
1 MiB is aligned to both 4 KiB and 1 MiB.
"""

from __future__ import annotations

import polars as pl

from .partition_alignment import alignment

TESTS_ORDER = [
    "putc",
    "put_block",
    "rewrite",
    "getc",
    "get_block",
    "seeks",
    "seq_create",
    "seq_read",
    "seq_delete",
    "ran_create",
    "ran_read",
    "ran_delete",
]


def offset_remainder(start_sector: int, sector_bytes: int = 512, boundary: int = 4096) -> int:
    """Bytes past the last ``boundary`` at which a partition starting at ``start_sector`` begins."""
    if start_sector < 0 or sector_bytes <= 0 or boundary <= 0:
        raise ValueError("start_sector >= 0, sector_bytes > 0 and boundary > 0 required")
    return (start_sector * sector_bytes) % boundary


def verdict(start_sector: int, sector_bytes: int = 512, physical_bytes: int = 4096) -> dict:
    """The parser's alignment verdict (the one stored in ``partitions``), plus the remainder against
    the drive's physical sector size."""
    v = alignment(start_sector, sector_bytes)
    rem = offset_remainder(start_sector, sector_bytes, physical_bytes)
    return dict(
        start_sector=start_sector,
        start_bytes=v["start_bytes"],
        rem_4k=v["align_4k_rem_bytes"],
        rem_1m=v["align_1m_rem_bytes"],
        rem_physical=rem,
        aligned_physical=rem == 0,
        aligned_1m=v["aligned_1m"],
    )


def before_after(results: pl.DataFrame, before: str, after: str, key: str = "run") -> pl.DataFrame:
    """One row per test: value before and after, after/before ratio, CPU and latency before/after.

    ``results`` has columns ``key`` (run identifier), test, value (bytes/s or ops/s), too_fast,
    cpu_pct, latency_ns. A test "too fast to measure" (+++++) on either side gets no ratio.
    """
    cols = ["test", "value", "too_fast", "cpu_pct", "latency_ns"]
    b = results.filter(pl.col(key) == before).select(cols).rename({c: f"{c}_before" for c in cols[1:]})
    a = results.filter(pl.col(key) == after).select(cols).rename({c: f"{c}_after" for c in cols[1:]})
    if b.is_empty() or a.is_empty():
        raise LookupError(f"no results for {before if b.is_empty() else after!r}")
    out = b.join(a, on="test", how="full", coalesce=True).with_columns(
        ratio=pl.when(pl.col("value_before") > 0).then(pl.col("value_after") / pl.col("value_before")),
        latency_ratio=pl.when(pl.col("latency_ns_before") > 0).then(
            pl.col("latency_ns_after") / pl.col("latency_ns_before")
        ),
    )
    order = {t: i for i, t in enumerate(TESTS_ORDER)}
    return out.with_columns(_o=pl.col("test").replace_strict(order, default=99)).sort("_o").drop("_o")


# what each bonnie++ block test asks of the disks (scaling.disk_model's directions)
DEVICE_TESTS = {"put_block": "write", "get_block": "read"}
DEVICE_SCHEMA = {
    "test": pl.String,
    "single_disk_value": pl.Float64,
    "disk_model": pl.String,
    "beyond_disks": pl.String,
    "disk_multiple": pl.Float64,
    "both_beyond": pl.Boolean,
}


def device_check(runs: pl.DataFrame, before: dict, after: dict, tolerance: float = 1.1) -> pl.DataFrame:
    """Block write and read of the before and after runs against a single-disk run of the selection (vdev_count 1,
    width 1, or vdev_type single) on the same host: a layout draws at most ``scaling.disk_model``'s upper bound of
    one disk's speed (x ``tolerance`` for run-to-run noise); a run above that was answered by a cache, not the
    disks. Only a single disk of the pair's own host (labelled) counts, and only a run whose layout is labelled is
    judged: another machine's disk, or an unknown layout, says nothing about these disks.
    ``beyond_disks``: 'before', 'after' (the faster offender) or None; ``disk_multiple``: its value / the single disk;
    ``both_beyond``: both runs are above their disks."""
    from .scaling import disk_model, is_single_disk

    host = before.get("host")
    singles = runs.filter(
        ((pl.col("vdev_type") == "single") | ((pl.col("vdev_count") == 1) & (pl.col("vdev_width") == 1)))
        & pl.lit(host is not None and host == after.get("host"))
        & (pl.col("host") == (host or ""))
    )
    rows = []
    for test, direction in DEVICE_TESTS.items():
        one = singles.filter((pl.col("test") == test) & pl.col("value").is_not_null())
        if one.is_empty():
            rows.append(
                dict(
                    test=test,
                    single_disk_value=None,
                    disk_model=None,
                    beyond_disks=None,
                    disk_multiple=None,
                    both_beyond=None,
                )
            )
            continue
        disk = float(one["value"].max())
        worst, why, beyond = None, None, 0
        for side, run in (("before", before), ("after", after)):
            if is_single_disk(run) or (run["vdev_type"] is None and run["vdev_count"] is None):
                continue  # a single disk itself, or a layout not labelled: nothing to bound it by
            value = runs.filter((pl.col("path") == run["path"]) & (pl.col("test") == test))["value"]
            if value.is_empty() or value[0] is None:
                continue
            low, high, why_run = disk_model(direction, run["vdev_type"], run["vdev_count"] or 1, run["vdev_width"] or 1)
            multiple = value[0] / disk
            if multiple > high * tolerance:
                beyond += 1
                if worst is None or multiple > worst[1]:
                    worst, why = (side, multiple), f"{why_run}: at most {high:g}x one disk"
        rows.append(
            dict(
                test=test,
                single_disk_value=disk,
                disk_model=why,
                beyond_disks=worst[0] if worst else None,
                disk_multiple=worst[1] if worst else None,
                both_beyond=beyond == 2,
            )
        )
    return pl.DataFrame(rows, schema=DEVICE_SCHEMA, orient="row")


# ----------------------------------------------------------------------------- notebook 03 on any selection

BONNIE_SQL = """
SELECT f.path, f.file_id, coalesce(f.label, f.path) AS label, f.host, f.phase, f.partition_start_sector, f.vdev_type,
       f.vdev_count, f.vdev_width, f.cache_devices, f.log_devices, f.devices, f.pool, f.command, f.notes, f.ram_bytes, b.run_index,
       b.size_bytes AS file_size_bytes,
       r.test, coalesce(r.bytes_per_s, r.ops_per_s) AS value, r.too_fast, r.cpu_pct, r.latency_ns, r.line_start
FROM bonnie_results r JOIN bonnie_runs b USING (file_id, run_index, source) JOIN files f USING (file_id)
WHERE {where} AND b.preferred
  AND b.run_index = (SELECT min(run_index) FROM bonnie_runs b2 WHERE b2.file_id = b.file_id AND b2.preferred)
ORDER BY f.path, r.test
"""
PARTITIONS_SQL = """
SELECT f.path, p.file_id, p.disk, p.table_type, p.index, p.start_sector, p.abs_start_sector, p.size_bytes,
       p.logical_sector_bytes, p.align_4k_rem_bytes, p.aligned_4k, p.aligned_1m, p.line_start
FROM partitions p JOIN files f USING (file_id) WHERE {where} ORDER BY f.path, p.disk, p.index
"""
HEADLINE_TESTS = ("put_block", "rewrite", "get_block", "seeks")
_TEST_WORDS = {
    "putc": "per-char write",
    "put_block": "block write",
    "rewrite": "rewrite",
    "getc": "per-char read",
    "get_block": "block read",
    "seeks": "random seeks",
}
_LAYOUT = ("vdev_type", "vdev_count", "vdev_width", "cache_devices", "log_devices")


def _value(test: str, v: float | None) -> str:
    """A bonnie++ value as a reader expects it: MiB/s for throughput, per second for seeks and file tests."""
    from ..units import MiB

    if v is None:
        return "+++++"
    return f"{v / MiB:.1f} MiB/s" if test in ("putc", "put_block", "rewrite", "getc", "get_block") else f"{v:.1f}/s"


def _phase_of(r: dict, legacy: int, sector: int, physical: int) -> str | None:
    if r["phase"] in ("before", "after"):
        return r["phase"]
    if r["partition_start_sector"] is not None:
        return "after" if offset_remainder(r["partition_start_sector"], sector, physical) == 0 else "before"
    return None


def analyse(
    con, sel, legacy_start_sector: int = 63, logical_sector_bytes: int = 512, physical_sector_bytes: int = 4096
):
    """Notebook 03 on any selection: bonnie++ before/after a change (manifest ``phase``, else the partition start's
    alignment), every metric as a ratio, the spread of other "after" runs as a noise band, and the partition tables."""
    from . import measures, prose
    from .db import frame
    from .result import Result

    where, params = sel.sql("f")
    res = Result.start(con, sel, measures.per_file(con, sel))
    parts = frame(con, PARTITIONS_SQL.format(where=where), params)
    if parts.height:  # each partition against the physical sector size asked for (the table's own: 4 KiB, 1 MiB)
        rem = pl.col("abs_start_sector") * pl.col("logical_sector_bytes") % physical_sector_bytes
        parts = parts.with_columns(rem_physical_bytes=rem, aligned_physical=rem == 0)
    res.frames["partitions"] = parts
    for lba in (legacy_start_sector, 2048):
        v = verdict(lba, logical_sector_bytes, physical_sector_bytes)
        res.findings.append(
            f"Arithmetic: LBA {lba} x {logical_sector_bytes} B = {v['start_bytes']:,} B, "
            f"{v['rem_physical']:,} B past a {physical_sector_bytes} B boundary: "
            + ("aligned." if v["aligned_physical"] else "misaligned (each physical sector write straddles two).")
        )
    if parts.height:
        bad = parts.filter(~pl.col("aligned_physical").fill_null(True))
        named = [f"{r[0]} p{r[1]} at LBA {r[2]}" for r in bad.select("disk", "index", "start_sector").iter_rows()]
        res.findings.append(
            f"{parts.height} partition(s) in the selection's partition tables; "
            + (
                f"misaligned to {physical_sector_bytes:,} B physical sectors: {prose.listing(named)}."
                if bad.height
                else f"every one starts on a {physical_sector_bytes:,} B boundary."
            )
        )
    else:
        res.missing.append(
            f"no partition table for {sel.describe()}: save `gpart show`, `fdisk -l`, `sfdisk -d` or "
            "`parted -m ... print` of the disks beside the benchmark logs"
        )
    runs = frame(con, BONNIE_SQL.format(where=where), params)
    if runs.is_empty():
        res.missing.append(
            f"no bonnie++ runs for {sel.describe()}: run bonnie++ before and after the change "
            "(e.g. `bonnie++ -d /pool/dir -s <2 x RAM>`), save each output under data/raw/<study>/ and "
            "label them in the manifest with phase=before / phase=after (or partition_start_sector)"
        )
        res.file_ids = parts["file_id"].to_list()
        return res
    info = runs.unique("path", keep="first").sort("path")
    phases = {
        r["path"]: _phase_of(r, legacy_start_sector, logical_sector_bytes, physical_sector_bytes)
        for r in info.iter_rows(named=True)
    }
    runs = runs.with_columns(side=pl.col("path").replace_strict(phases, default=None))
    res.frames["runs"] = runs
    before = info.filter(pl.col("path").is_in([p for p, s in phases.items() if s == "before"]))
    after = info.filter(pl.col("path").is_in([p for p, s in phases.items() if s == "after"]))
    if before.is_empty() or after.is_empty():
        res.missing.append(
            f"{info.height} bonnie++ run(s) for {sel.describe()}, but "
            + ("none" if before.is_empty() else "no 'after' one")
            + " labelled phase=before/after "
            "(nor with a partition_start_sector to tell misaligned from aligned): label the pair in "
            "the manifest"
        )
        res.file_ids = runs["file_id"].to_list() + parts["file_id"].to_list()
        return res
    b = before.row(0, named=True)
    same = after.filter(pl.all_horizontal(pl.col(c).eq_missing(b[c]) for c in _LAYOUT))
    a = (same if same.height else after).row(0, named=True)
    how = (
        "the 'after' run with the same layout labels (vdev type, count, width, cache, log)"
        if same.height
        else "the first 'after' run (none has the same layout labels)"
    )
    res.frames["pair"] = pl.DataFrame(
        {"side": ["before", "after"], "run": [b["path"], a["path"]], "label": [b["label"], a["label"]]}
    )
    ba = before_after(runs.rename({"path": "run"}), b["path"], a["path"])
    # the noise band: every 'after' run of the same vdev type, count and width (other cache/log variants)
    peers = after.filter(pl.all_horizontal(pl.col(c).eq_missing(b[c]) for c in _LAYOUT[:3]))
    band = (
        runs.filter(pl.col("path").is_in(peers["path"].to_list()))
        .group_by("test")
        .agg(
            pl.col("value").min().alias("after_min"),
            pl.col("value").max().alias("after_max"),
            pl.col("value").count().alias("after_runs"),
        )
    )
    ba = ba.join(band, on="test", how="left").with_columns(
        within_noise=pl.when(pl.col("after_runs") > 1).then(
            (pl.col("value_before") >= pl.col("after_min")) & (pl.col("value_before") <= pl.col("after_max"))
        )
    )
    ba = ba.join(device_check(runs, b, a), on="test", how="left")
    res.frames["ratios"] = ba
    res.file_ids = runs["file_id"].to_list() + parts["file_id"].to_list()
    res.findings.append(
        f"Before: {b['label']}; after: {a['label']} ({how}). "
        + (
            f"{peers.height} 'after' runs of the same vdev layout give the noise band."
            if peers.height > 1
            else "No other 'after' run of this layout: no noise band (repeat bonnie++ on the 'after' layout to get "
            "one), so no difference below can be told from run-to-run noise."
        )
    )
    for r in ba.filter(pl.col("test").is_in(list(_TEST_WORDS))).iter_rows(named=True):
        if r["ratio"] is None:
            continue
        noise = ""
        if r["after_runs"] and r["after_runs"] > 1:
            noise = (
                f"; the {r['after_runs']} 'after' variants spread {_value(r['test'], r['after_min'])} to "
                f"{_value(r['test'], r['after_max'])} ({r['after_max'] / r['after_min']:.2f}x among themselves)"
                + (
                    ", so the 'before' value is **within noise**"
                    if r["within_noise"]
                    else ", the 'before' value lies outside that band"
                )
            )
        res.findings.append(
            f"{_TEST_WORDS[r['test']]}: {_value(r['test'], r['value_before'])} before, "
            f"{_value(r['test'], r['value_after'])} after = {r['ratio']:.2f}x{noise}."
        )
    for r in ba.filter(pl.col("beyond_disks").is_not_null()).iter_rows(named=True):
        res.findings.append(
            f"**Cache artefact**, {_TEST_WORDS.get(r['test'], r['test'])}: the {r['beyond_disks']} run's "
            f"{_value(r['test'], r['value_' + r['beyond_disks']])} is {r['disk_multiple']:.1f}x the single-disk "
            f"run's {_value(r['test'], r['single_disk_value'])}, more than its layout can draw from its disks "
            f"({r['disk_model']}): a cache answered, so its ratio ({r['ratio']:.2f}x) says nothing about the disks."
        )
        other, mine = ("after", a) if r["beyond_disks"] == "before" else ("before", b)
        theirs = a if other == "after" else b
        if r["both_beyond"]:
            res.findings.append(
                f"  The {other} run measured {_value(r['test'], r['value_' + other])}, beyond its disks too: both "
                "runs measured a cache, and their ratio says nothing about the partition offset."
            )
        elif all(theirs[c] == mine[c] for c in ("cache_devices", "log_devices")):
            res.findings.append(
                f"  The {other} run, with the same cache and log device labels, measured "
                f"{_value(r['test'], r['value_' + other])}, within what its disks can draw: why a cache answered one "
                "run and not the other, the logs do not say."
            )
    if "single_disk_value" in ba.columns and ba["single_disk_value"].is_null().all():
        host = b.get("host") if b.get("host") == a.get("host") else None
        res.missing.append(
            (
                f"no single-disk bonnie++ run of host {host} for {sel.describe()}"
                if host
                else "the before and after runs have no (or different) host labels, so no single-disk run can be "
                "matched to their machine"
            )
            + ": without one, block speeds cannot be checked against what the disks can deliver (a run of one of "
            "its disks, labelled with the same host and vdev_count=1, vdev_width=1)"
        )
    _cache_findings(res, b, a)
    _pool_state_findings(res, con, sel, b)
    res.findings.append(
        "A before/after pair measures everything that changed between the two runs (pool contents and "
        "fill, fragmentation, cache state, software), not only the partition offset; the logs alone "
        "cannot attribute the change to alignment."
    )
    if b["partition_start_sector"] is None:
        res.missing.append(
            f"the 'before' run ({b['label']}) has no partition_start_sector label: its offset is unknown"
        )
    res.headline = {
        f"{_TEST_WORDS[r['test']]} after/before": f"{r['ratio']:.2f}x"
        + (
            f" ('after' variants: {r['after_max'] / r['after_min']:.2f}x among themselves)"
            if r["after_runs"] and r["after_runs"] > 1 and r["after_min"]
            else " (one 'after' run: noise unknown)"
        )
        for r in ba.iter_rows(named=True)
        if r["ratio"] is not None and r["test"] in HEADLINE_TESTS and r["beyond_disks"] is None
    }
    if ba["beyond_disks"].is_not_null().any():
        res.caveats.append("a run faster than its disks: cache artefact")
    res.caveats.append("the runs differ in more than the change: no cause shown")
    pb = ba.filter(pl.col("test") == "put_block")
    if pb.height and pb["ratio"][0] is not None:
        res.verdict = (
            f"Block writes ran {pb['ratio'][0]:.2f}x faster after than before; the two runs differ in "
            "more than the partition offset, so the data do not show what caused it."
        )
    return res


ZPOOL_STATE_SQL = """
SELECT coalesce(f.label, f.path) AS label, z.file_id, z.cap_pct, z.frag_pct, z.dedup_ratio, z.line_start
FROM zpool_list z JOIN files f USING (file_id)
WHERE {where} AND z.pool = ? AND z.vdev IS NULL ORDER BY f.path, z.sample
"""


def _cache_findings(res, before: dict, after: dict) -> None:
    """Each run's bonnie++ file against the RAM it was told (-r) or labelled with, and its L2ARC label."""
    from . import plausibility, prose

    seen = {}
    for side, r in (("before", before), ("after", after)):
        ram, where = plausibility.ram_bytes(r["command"], r["notes"], r.get("ram_bytes"))
        check = plausibility.against_cache(r["file_size_bytes"], ram)
        if check is not None:
            seen.setdefault((r["file_size_bytes"], ram, where, r["cache_devices"]), []).append(side)
    for (size, ram, where, l2arc), sides in seen.items():
        check = plausibility.against_cache(size, ram)
        res.findings.append(
            f"Test size, {' and '.join(sides)} run{'s' if len(sides) > 1 else ''}: a {prose.size(size)} file, "
            f"{check['size_over_ram']:.1f}x the {prose.size(ram)} of RAM ({where})"
            + (f"; an L2ARC (labelled {l2arc}) adds to what can be cached" if l2arc else "")
            + ": "
            + (
                "the whole file fits in memory, so the block numbers can be cache speeds."
                if check["fits_in_cache"]
                else "the file is larger than RAM, yet reads of recently written data can still come partly from cache."
            )
        )


def _pool_state_findings(res, con, sel, before: dict) -> None:
    """What other logs of the selection say about the 'before' run's pool (fill, fragmentation, dedup): each changes
    write speed, and a before/after pair cannot tell them from the change under study."""
    from .db import frame

    if not before["pool"]:
        return
    where, params = sel.sql("f")
    states = frame(con, ZPOOL_STATE_SQL.format(where=where), [*params, before["pool"]])
    res.file_ids += states["file_id"].to_list()
    parts = [
        f"{r['label']}: {r['cap_pct']:.0f} % full, "
        + ("fragmentation unknown" if r["frag_pct"] is None else f"{r['frag_pct']:.0f} % fragmented")
        + ("" if r["dedup_ratio"] is None else f", DEDUP {r['dedup_ratio']:.2f}x")
        for r in states.iter_rows(named=True)
    ]
    if parts:
        res.findings.append(
            f"Other logs of pool {before['pool']} in the selection (`zpool list`): {'; '.join(parts)}. A full, "
            "fragmented or deduplicating pool writes slower; when these were taken relative to the benchmark runs "
            "the logs do not say, so they are possible causes beside the change, not measured ones."
        )
        res.caveats.append(f"pool {before['pool']} full, fragmented or deduplicating: confounders")
