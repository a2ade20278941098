"""Sector alignment (notebook 03): offsets, verdicts, and before/after benchmark ratios.

Three steps: ``query`` (SQL -> frames), ``compute`` (frames -> ``AlignmentNumbers``) and
``alignment_findings.write`` (sentences); ``analyse`` runs them.

A partition starting at LBA 63 on 512-byte sectors starts 32,256 bytes into the disk:
32,256 mod 4,096 = 3,584, so every 4 KiB block inside it straddles two physical sectors of a
512e/4Kn drive and each write becomes a read-modify-write (docs/formats/zfs-facts.md F9/F10). LBA 2048 =
1 MiB is aligned to both 4 KiB and 1 MiB.
"""

from __future__ import annotations

import math

import polars as pl

from ..chartsource import SOURCE_STRUCT, source
from ..sectors import alignment
from . import alignment_findings, measures, pool_members, stats
from .alignment_numbers import (
    AlignmentFrames,
    AlignmentNumbers,
    Anomalies,
    AshiftEvidence,
    Dataset,
    MemoryRead,
    Noise,
    PoolSettings,
)
from .alignment_tables import parted_checks, same_tables
from .db import frame
from .fio_runs import file_names
from .recordsize import DEFAULT_RECORDSIZE, nearest_ashift, raidz_overhead
from .result import Result, lines_of
from .scaling import disk_model, is_single_disk

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
DEVICE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "test": pl.String,
    "single_disk_value": pl.Float64,
    "disk_model": pl.String,
    "beyond_disks": pl.String,
    "disk_multiple": pl.Float64,
    "both_beyond": pl.Boolean,
    # the single-disk run's bonnie++ line (its value's), what a finding's figure of it links to
    "single_sources": pl.List(SOURCE_STRUCT),
}


def device_check(runs: pl.DataFrame, before: dict, after: dict, values: dict, tolerance: float = 1.1) -> pl.DataFrame:
    """Block write and read of the before and after runs against a single-disk run of the selection (vdev_count 1,
    width 1, or vdev_type single) on the same host: a layout draws at most ``scaling.disk_model``'s upper bound of
    one disk's speed (x ``tolerance`` for run-to-run noise); a run above that was answered by a cache, not the
    disks. Only a single disk of the pair's own host (labelled) counts, and only a run whose layout is labelled is
    judged: another machine's disk, or an unknown layout, says nothing about these disks. ``values``: (side, test)
    -> the side's value (its configuration's mean).
    ``beyond_disks``: 'before', 'after' (the faster offender) or None; ``disk_multiple``: its value / the single disk;
    ``both_beyond``: both runs are above their disks."""

    host = before.get("host")
    singles = runs.filter(
        ((pl.col("vdev_type") == "single") | ((pl.col("vdev_count") == 1) & (pl.col("vdev_width") == 1)))
        & pl.lit(host is not None and host == after.get("host"))
        & (pl.col("host") == (host or ""))
    )
    rows: list[dict] = []
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
                    single_sources=[],
                )
            )
            continue
        disk = float(max(one["value"].to_list()))  # the values are not null
        fastest = one.sort("value", descending=True).head(1)
        worst, why, beyond = None, None, 0
        for side, run in (("before", before), ("after", after)):
            if is_single_disk(run) or (run["vdev_type"] is None and run["vdev_count"] is None):
                continue  # a single disk itself, or a layout not labelled: nothing to bound it by
            value = values.get((side, test))
            if value is None:
                continue
            low, high, why_run = disk_model(direction, run["vdev_type"], run["vdev_count"] or 1, run["vdev_width"] or 1)
            multiple = value / disk
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
                single_sources=list(
                    lines_of(fastest.select("path", "line_start", *[c for c in ("sha256",) if c in fastest.columns]))
                ),
            )
        )
    return pl.DataFrame(rows, schema=DEVICE_SCHEMA, orient="row")


# ----------------------------------------------------------------------------- notebook 03: query

BONNIE_SQL = """
SELECT f.path, f.sha256, f.file_id, coalesce(f.label, f.path) AS label, f.host, f.stack, f.phase, f.partition_start_sector,
       f.vdev_type,
       f.vdev_count, f.vdev_width, f.cache_devices, f.log_devices, f.devices, f.pool, f.ashift, f.command, f.notes,
       f.ram_bytes, b.run_index, b.size_bytes AS file_size_bytes, b.section,
       r.test, coalesce(r.bytes_per_s, r.ops_per_s) AS value, r.too_fast, r.cpu_pct, r.latency_ns, r.line_start
FROM bonnie_results r JOIN bonnie_runs b USING (file_id, run_index, source) JOIN files f USING (file_id)
WHERE {where} AND b.preferred
ORDER BY f.path, b.run_index, r.test
"""
PARTITIONS_SQL = """
SELECT f.path, f.host, p.file_id, p.disk, p.table_type, p.index, p.start_sector, p.abs_start_sector, p.end_sector,
       p.size_bytes, p.logical_sector_bytes, p.physical_sector_bytes AS printed_physical_bytes, p.align_4k_rem_bytes, p.aligned_4k, p.aligned_1m, p.line_start,
       p.align_check, f.sha256,
       d.disk_id, d.disk_size_bytes
FROM partitions p JOIN files f USING (file_id)
LEFT JOIN (SELECT file_id, disk, any_value(label_id) AS disk_id,
                  any_value(size_bytes) FILTER (WHERE size_source = 'printed') AS disk_size_bytes
           FROM disks GROUP BY file_id, disk) d USING (file_id, disk)
WHERE {where} ORDER BY f.path, p.disk, p.index
"""
ZPOOL_STATE_SQL = """
SELECT coalesce(f.label, f.path) AS label, z.file_id, z.pool, z.cap_pct, z.frag_pct, z.dedup_ratio, z.line_start,
       z.line_end, f.path, f.sha256
FROM zpool_list z JOIN files f USING (file_id)
WHERE {where} AND z.vdev IS NULL ORDER BY f.path, z.sample
"""
POOL_STATS_SQL = """
SELECT s.file_id, f.path, f.host, coalesce(s.pool, f.pool, f.label) AS pool, f.vdev_type, f.vdev_width,
       f.recordsize_bytes, f.ashift, s.bp_count, s.bp_physical_bytes, s.bp_allocated_bytes, s.line_start, s.line_end,
       f.sha256
FROM zdb_block_stats s JOIN files f USING (file_id) WHERE {where} AND s.bp_count > 0 ORDER BY f.path
"""
PROPS_SQL = """
SELECT p.file_id, f.path, f.sha256, p.name, p.kind, p.property, p.value, p.value_count, p.line_start, p.line_end
FROM zfs_properties p JOIN files f USING (file_id)
WHERE {where} AND p.property IN ('compression', 'dedup', 'recordsize', 'sync', 'ashift') ORDER BY f.path, p.line_start
"""
VDEVS_SQL = """
SELECT v.file_id, f.path, f.sha256, v.pool, v.ashift, v.type, v.line_start, v.line_end
FROM zdb_config_vdevs v JOIN files f USING (file_id)
WHERE {where} AND v.top_level AND v.ashift IS NOT NULL AND NOT coalesce(v.is_log, false) ORDER BY f.path
"""
_LAYOUT = ("vdev_type", "vdev_count", "vdev_width", "cache_devices", "log_devices")
MEMORY_CPU_PCT = 90.0  # a block read that keeps the CPU this busy is copying from memory, not waiting on disks
SLOW_DELETE_RATIO = 2.0  # deletes this many times slower before than after: an anomaly worth explaining
SLOW_WRITE_LATENCY_NS = 1e9  # a block write whose worst latency passes 1 s


def query(con, sel) -> AlignmentFrames:

    where, params = sel.sql("f")
    return AlignmentFrames(
        partitions=frame(con, PARTITIONS_SQL.format(where=where), params),
        runs=frame(con, BONNIE_SQL.format(where=where), params),
        zpool=frame(con, ZPOOL_STATE_SQL.format(where=where), params),
        pool_stats=frame(con, POOL_STATS_SQL.format(where=where), params),
        props=frame(con, PROPS_SQL.format(where=where), params),
        vdevs=_optional(con, "zdb_config_vdevs", VDEVS_SQL.format(where=where), params),
    )


def _optional(con, table: str, sql: str, params: list) -> pl.DataFrame:
    """A query on a table a database of an earlier schema may lack (empty frame then)."""

    found = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]).fetchone()[0]
    return frame(con, sql, params) if found else pl.DataFrame(schema={"file_id": pl.Int64, "pool": pl.String})


# ----------------------------------------------------------------------------- notebook 03: compute


def _phase_of(r: dict, legacy: int, sector: int, physical: int) -> str | None:
    if r["phase"] in ("before", "after"):
        return r["phase"]
    if r["partition_start_sector"] is not None:
        return "after" if offset_remainder(r["partition_start_sector"], sector, physical) == 0 else "before"
    return None


def _same(col_values: dict, cols) -> pl.Expr:
    return pl.all_horizontal(pl.col(c).eq_missing(col_values[c]) for c in cols)


def _file_names(runs: pl.DataFrame) -> tuple[str, ...]:
    """Each file of ``runs`` by its name, with its number of runs where it holds more than one."""

    out = []
    names = file_names(runs["path"].to_list())  # as much of its path as tells it from the others
    for (path,), g in runs.group_by("path", maintain_order=True):
        k = g.select("run_index").unique().height
        out.append(names[path] + (f" ({k} runs)" if k > 1 else ""))
    return tuple(out)


def _config(runs: pl.DataFrame, side: str, run: dict) -> pl.DataFrame:
    """The runs of ``side`` with ``run``'s host and layout labels and under its write-up heading (``section``: a
    write-up's sections are as many machines, never repeats of one): one configuration, its repeats."""

    keys = ("host", *_LAYOUT, "section") if "section" in runs.columns and "section" in run else ("host", *_LAYOUT)
    return runs.filter(_same(run, keys) & (pl.col("side") == side))


def config_values(config: pl.DataFrame, key: str) -> pl.DataFrame:
    """Per test, a configuration's repeats as one row for ``before_after``: the mean of the runs that measured it
    (``n``: how many), too_fast when any run printed '+++++', the mean CPU and the worst latency."""

    return config.group_by("test", maintain_order=True).agg(
        pl.lit(key).alias("run"),
        pl.col("value").mean(),
        pl.col("value").is_not_null().sum().cast(pl.Int64).alias("n"),
        pl.col("too_fast").fill_null(False).any(),
        pl.col("cpu_pct").mean(),
        pl.col("latency_ns").max(),
    )


def _without(config: pl.DataFrame, test: str) -> list[str]:
    """The files of ``config`` with a run that has no value for ``test`` (no such line, or '+++++')."""

    measured = config.filter((pl.col("test") == test) & pl.col("value").is_not_null()).select("path", "run_index")
    lacking = config.select("path", "run_index").unique().join(measured, on=["path", "run_index"], how="anti")
    return list(_file_names(lacking.sort("path", "run_index")))


NOISE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "test": pl.String,
    "before_runs": pl.Int64,
    "after_runs": pl.Int64,
    "after_mean": pl.Float64,
    "pi_low": pl.Float64,
    "pi_high": pl.Float64,
    "band_too_wide": pl.Boolean,
    "within_noise": pl.Boolean,
    "after_without": pl.List(pl.String),
}


def noise_band(runs: pl.DataFrame, before: dict, after: dict, info: pl.DataFrame) -> tuple[pl.DataFrame, Noise]:
    """Per test, the 'after' configuration's repeats: their mean and the prediction interval for the mean of as many
    new runs as the 'before' configuration has (t distribution: mean +- t x sd x sqrt(1/k + 1/n); k = 1 is
    stats.summarise's interval for one new run), and whether the 'before' configuration's mean lies inside it. Where
    the 'after' configuration ran once and the 'before' one has repeats, the roles swap (``Noise.side`` 'before'):
    the 'before' repeats give the interval and the 'after' run is judged against it; the columns keep their names
    (``after_*``: the side that gives the interval, ``before_runs``: the runs judged).
    An interval that reaches zero or below (``band_too_wide``) bounds nothing (a rate is not negative): the repeats
    are too few, or too far apart, to tell the 'before' value from noise, and ``within_noise`` is None then. The
    other 'after' runs are named, not used; ``after_without`` names the repeats with no value for the test."""

    config, mine = _config(runs, "after", after), _config(runs, "before", before)
    repeats = config.select("path", "run_index").unique().height
    others = info.filter((pl.col("side") == "after") & ~_same(after, ("host", *_LAYOUT)))
    side = "after"
    if repeats < 2 and mine.select("path", "run_index").unique().height >= 2:  # the 'before' repeats bound the noise
        config, mine, side = mine, config, "before"
        repeats = config.select("path", "run_index").unique().height
    rows = []
    for (test,), g in config.group_by("test", maintain_order=True):
        vals = [v for v in g["value"].to_list() if v is not None]
        theirs = [v for v in mine.filter(pl.col("test") == test)["value"].to_list() if v is not None]
        k = max(len(theirs), 1)
        r = stats.summarise(vals) if vals else None
        low = high = inside = None
        if r is not None and r.sd is not None:  # two values or more: the spread is known
            half = stats.t_critical(r.n) * r.sd * math.sqrt(1.0 / k + 1.0 / r.n)
            low, high = r.mean - half, r.mean + half
            value = sum(theirs) / len(theirs) if theirs else None
            inside = None if value is None or low <= 0 else low <= value <= high
        wide = None if low is None else low <= 0
        rows.append(
            (test, len(theirs), len(vals), r.mean if r else None, low, high, wide, inside, _without(config, test))
        )
    level = stats.LEVEL if repeats >= 2 else None
    first = config.unique(["path", "run_index"], keep="first", maintain_order=True)  # a line of each repeat
    return pl.DataFrame(rows, schema=NOISE_SCHEMA, orient="row"), Noise(
        repeats, tuple(others["label"].to_list()), level, lines_of(first), side
    )


def memory_reads(ba: pl.DataFrame) -> list[MemoryRead]:
    out = []
    row = ba.filter(pl.col("test") == "get_block")
    if row.height:
        r = row.row(0, named=True)
        for side, other in (("before", "after"), ("after", "before")):
            cpu = r[f"cpu_pct_{side}"]
            if cpu is not None and cpu >= MEMORY_CPU_PCT and r[f"value_{side}"]:
                out.append(MemoryRead(side, r[f"value_{side}"], cpu, r[f"cpu_pct_{other}"]))
    return out


def anomalies(ba: pl.DataFrame, reads: list[MemoryRead]) -> Anomalies:
    rows = {r["test"]: r for r in ba.iter_rows(named=True)}
    beyond = rows.get("get_block", {}).get("beyond_disks")
    fast = next((m for m in reads if m.side == "before"), None)
    if fast is None and beyond == "before":
        g = rows["get_block"]
        fast = MemoryRead("before", g["value_before"], g["cpu_pct_before"], g["cpu_pct_after"])
    pb = rows.get("put_block")
    slow_write = None
    if pb and pb["latency_ns_before"] and pb["latency_ns_before"] >= SLOW_WRITE_LATENCY_NS and (pb["ratio"] or 0) > 1:
        slow_write = (pb["value_before"], pb["latency_ns_before"])
    deletes = [(t, rows[t]["ratio"]) for t in ("seq_delete", "ran_delete") if t in rows and rows[t]["ratio"]]
    worst = max(deletes, key=lambda d: d[1], default=None)
    return Anomalies(fast, slow_write, worst if worst and worst[1] >= SLOW_DELETE_RATIO else None)


def ashift_evidence(pool_stats: pl.DataFrame, host: str | None, pool: str | None) -> list[AshiftEvidence]:
    """Other raidz pools of the same host: which ashift their zdb -b allocated / physical matches."""

    out: list[AshiftEvidence] = []
    if not host:
        return out
    for r in pool_stats.filter((pl.col("host") == host) & pl.col("pool").ne_missing(pool)).iter_rows(named=True):
        expected = raidz_overhead({**r, "ashift": None}, DEFAULT_RECORDSIZE)
        if not expected:
            continue
        measured = r["bp_allocated_bytes"] / r["bp_physical_bytes"]
        nearest = nearest_ashift(expected, measured)
        layout = f"{r['vdev_width']}-wide {r['vdev_type']}"
        out.append(AshiftEvidence(r["pool"], host, layout, measured, expected, nearest, lines_of(r)))
    return out


def pool_settings(before: dict, props: pl.DataFrame, vdevs: pl.DataFrame) -> PoolSettings:
    """The 'before' run's pool: ashift from zdb -C (its top-level data vdevs), else `zpool get ashift`, else the
    run's ashift label; the datasets of the pool in `zfs get` output with compression, dedup, recordsize, sync."""
    pool = before.get("pool")
    ids: list[int] = []
    lines: tuple[dict, ...] = ()  # the raw lines the ashift is read from (none for a label)
    ashift, source = before.get("ashift"), "the manifest's ashift label" if before.get("ashift") else None
    mine = vdevs.filter(pl.col("pool") == pool) if pool and vdevs.height else vdevs.clear()
    got = props.filter((pl.col("property") == "ashift") & (pl.col("name") == pool)) if pool else props.clear()
    if mine.height:
        shifts = sorted(set(mine["ashift"].to_list()))
        ashift, source = (
            shifts[-1],
            f"zdb -C, {mine['path'][0].split('/')[-1]}"
            + (f"; its vdevs differ: {', '.join(map(str, shifts))}" if len(shifts) > 1 else ""),
        )
        ids += mine["file_id"].to_list()
        lines = lines_of(mine.sort("path", "line_start"))
    elif got.height and got["value_count"][0]:  # 0: not set at creation (detected per vdev), no ashift
        ashift, source = int(got["value_count"][0]), f"zpool get ashift, {got['path'][0].split('/')[-1]}"
        ids += got["file_id"].to_list()
        lines = lines_of(got.head(1))
    datasets = []
    if pool and props.height:
        ds = props.filter(
            (pl.col("kind") == "dataset") & ((pl.col("name") == pool) | pl.col("name").str.starts_with(pool + "/"))
        )
        ids += ds["file_id"].to_list()
        for (name,), g in ds.group_by("name", maintain_order=True):
            v = dict(zip(g["property"], g["value"], strict=True))
            datasets.append(
                Dataset(name, v.get("compression"), v.get("dedup"), v.get("recordsize"), v.get("sync"), lines_of(g))
            )
    return PoolSettings(pool, int(ashift) if ashift else None, source, tuple(datasets), tuple(ids), lines)


def pair_runs(frames: AlignmentFrames, legacy: int, sector: int, physical: int):
    """The runs with their side (before/after) and whether each is its file's first run; the per-file info."""
    runs = frames.runs.with_columns(first=pl.col("run_index") == pl.col("run_index").min().over("path"))
    info = runs.filter(pl.col("first")).unique("path", keep="first").sort("path")
    phases = {r["path"]: _phase_of(r, legacy, sector, physical) for r in info.iter_rows(named=True)}
    side = pl.col("path").replace_strict(phases, default=None, return_dtype=pl.String)
    return runs.with_columns(side=side), info.with_columns(side=side), phases


def _before_row(before: pl.DataFrame, after: pl.DataFrame) -> dict:
    """The 'before' configuration to compare: one with an 'after' run of the same layout labels if any, then the one
    with the most files; the first file by path only between configurations that tie (the pair sentence names the
    others)."""

    def rank(r: dict) -> tuple:
        files = before.filter(_same(r, ("host", *_LAYOUT))).height
        return (0 if after.filter(_same(r, _LAYOUT)).height else 1, -files, r["path"])

    return min(before.iter_rows(named=True), key=rank)


def compute(frames: AlignmentFrames, legacy: int, sector: int, physical: int) -> AlignmentNumbers:
    """Frames -> named numbers: arithmetic, partition verdicts, the before/after pair with its ratios, the after
    configuration's noise, what a cache or compression/dedup would explain, and the ashift evidence."""
    parts = frames.partitions
    parts = same_tables(parts)  # one disk printed by several tools: one table
    if parts.height:  # each partition against the physical sector size its table prints, else the parameter
        start = pl.col("abs_start_sector") * pl.col("logical_sector_bytes")
        printed = pl.col("printed_physical_bytes").max().over("table")  # any output of that table that prints it
        phys = pl.coalesce(printed, pl.lit(physical))
        parts = parts.with_columns(
            printed_physical_bytes=printed,
            physical_bytes=phys,
            rem_physical_bytes=start % phys,
            aligned_physical=start % phys == 0,
            aligned_parameter=start % physical == 0,  # against the physical_sector_bytes parameter
        )
    arithmetic = [
        dict(verdict(lba, sector, physical), sector_bytes=sector, physical_bytes=physical) for lba in (legacy, 2048)
    ]
    n = AlignmentNumbers(arithmetic, parts, parted=parted_checks(parts))
    if frames.runs.is_empty():
        return n
    runs, info, n.phases = pair_runs(frames, legacy, sector, physical)
    n.runs = runs
    before, after = info.filter(pl.col("side") == "before"), info.filter(pl.col("side") == "after")
    if before.is_empty() or after.is_empty():
        return n
    b = _before_row(before, after)
    same = after.filter(_same(b, _LAYOUT))
    a = (same if same.height else after).row(0, named=True)
    n.before, n.after, n.same_layout = b, a, bool(same.height)
    mine, theirs = _config(runs, "before", b), _config(runs, "after", a)
    n.before_files, n.after_files = _file_names(mine), _file_names(theirs)
    n.side_runs = {s: c.select("path", "run_index").unique().height for s, c in (("before", mine), ("after", theirs))}
    n.before_others = tuple(before.filter(~_same(b, ("host", *_LAYOUT)))["label"].unique(maintain_order=True))
    means = pl.concat([config_values(mine, "before"), config_values(theirs, "after")])
    ba = before_after(means, "before", "after")
    band, n.noise = noise_band(runs, b, a, info)
    values = {(r["run"], r["test"]): r["value"] for r in means.iter_rows(named=True)}
    ba = ba.join(band, on="test", how="left").join(
        device_check(runs.filter(pl.col("first")), b, a, values), on="test", how="left"
    )
    for side, config in (("before", mine), ("after", theirs)):  # each ratio's lines: every run it is the mean of
        lines = config.filter(pl.col("value").is_not_null()).group_by("test", maintain_order=True)
        ba = ba.join(
            lines.agg(
                pl.col("path").first().alias(f"path_{side}"),
                pl.col("sha256").first().alias(f"sha256_{side}"),
                pl.col("line_start").first().alias(f"line_{side}"),
                source("path", "line_start", None, "sha256").alias(f"sources_{side}"),
            ),
            on="test",
            how="left",
        )
    n.ratios = ba
    n.memory_reads = memory_reads(ba)
    n.anomalies = anomalies(ba, n.memory_reads)
    n.settings = pool_settings(b, frames.props, frames.vdevs)
    n.after_settings = pool_settings(a, frames.props, frames.vdevs)
    n.other_ashift = ashift_evidence(frames.pool_stats, b.get("host"), b.get("pool"))
    n.zdb_pools = tuple(sorted(set(frames.vdevs["pool"].drop_nulls().to_list()))) if frames.vdevs.height else ()
    stack = b.get("stack")
    if stack and "zfs" not in stack.lower() and not b.get("pool") and not b.get("ashift"):
        n.not_zfs = stack
    if b["pool"]:
        n.pool_states = frames.zpool.filter(pl.col("pool") == b["pool"])
    return n


def analyse(
    con, sel, legacy_start_sector: int = 63, logical_sector_bytes: int = 512, physical_sector_bytes: int = 4096
):
    """Notebook 03 on any selection: bonnie++ before/after a change (manifest ``phase``, else the partition start's
    alignment), every metric as a ratio, the 'after' configuration's repeats as the noise band, and the partition
    tables."""

    res = Result.start(con, sel, measures.per_file(con, sel))
    frames = query(con, sel)
    n = compute(frames, legacy_start_sector, logical_sector_bytes, physical_sector_bytes)
    res.numbers = n
    res.frames["partitions"] = n.partitions
    if n.runs.height:
        res.frames["runs"] = n.runs
    pair = n.pair()
    if n.ratios.height and pair:
        res.frames["ratios"] = n.ratios
        res.frames["pair"] = pl.DataFrame(
            {
                "side": ["before", "after"],
                "run": [pair.before["path"], pair.after["path"]],
                "label": [pair.before["label"], pair.after["label"]],
            }
        )
    res.file_ids = frames.file_ids() + (n.pool_states["file_id"].to_list() if n.pool_states.height else [])
    res.file_ids += list(n.settings.file_ids) if n.settings else []
    alignment_findings.write(res, n, sel)
    res.missing += fio_phases(con, sel)
    res.findings += pool_members.sentences(con, sel)  # a member zdb -C marks missing: a degraded pool
    return res


FIO_PHASES_SQL = """
SELECT count(*) AS files, string_agg(DISTINCT coalesce(f.label, f.path), ', ' ORDER BY coalesce(f.label, f.path))
FROM files f WHERE {where} AND f.tool = 'fio' AND f.format NOT IN ('fio-log', 'fio-hist-log')
  AND f.phase IN ('before', 'after')
"""


def fio_phases(con, sel) -> list[str]:
    """A sentence where fio outputs of the selection carry phase=before/after labels: 03 compares bonnie++ only."""
    where, params = sel.sql("f")
    files, labels = con.execute(FIO_PHASES_SQL.format(where=where), params).fetchone()
    if not files:
        return []
    return [
        f"{files} fio output(s) are labelled phase=before/after ({labels}): 03 compares bonnie++ runs only; 05 and "
        "08 set those fio runs side by side by phase"
    ]
