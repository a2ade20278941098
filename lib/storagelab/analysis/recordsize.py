"""recordsize: the Ars Technica before/after figures, the amplification model, tuned-vs-default fio runs
(notebook 02).

Amplification (docs/formats/zfs-facts.md F17): ZFS reads and writes whole records. For I/O of size s into a file of
record size R, with both powers of two and the I/O aligned (fio aligns random offsets to bs):

* s < R: an uncached read of s reads R (read amplification R / s); an overwrite of s reads the
  record (if not cached) and writes a new copy of R (write amplification R / s), before parity or
  mirror copies;
* s >= R: whole records, no amplification.

RAIDZ allocation (OpenZFS RAIDZ.rst; F17): a block of d data sectors on a p-parity vdev of width w
takes ceil(d / (w - p)) rows, p parity sectors per row, and is padded to a multiple of p + 1 sectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ..claims import study_claims
from ..units import KiB, MiB
from . import fio_runs, measures, phases, pool_members, recordsize_compare, recordsize_findings, run_verdicts, stats
from .db import frame
from .dedup import UNNAMED_SQL, one_summary_per_pool
from .recordsize_numbers import PoolSizes, RaidzModel, RecordsizeFrames, RecordsizeNumbers
from .result import Result, lines_of
from .scaling import claim_lines

DEFAULT_RECORDSIZE = 128 * KiB

# The Ars Technica 2020 (seed 002) figures the ratios use are read from papers/ars-zfs-vs-raid/claims.csv
# (claim ids below), never typed again here.
RS128K_WRITE, RS1M_WRITE = "ars-raidz2-1m-write-rs128k", "ars-raidz2-1m-write-rs1m"
FIRST_RUN_WRITE = "ars-raidz2-1m-write-throwaway"
TWO_RAIDZ2_READ, RAID6_READ = "ars-2x4wide-raidz2-1m-read", "ars-mdraid6-8wide-1m-read"
RAIDZ2_SERIAL_READ, RAID6_SERIAL_READ = "ars-raidz2-1m-read-single-process", "ars-raid6-1m-read-single-process"
ARS_CLAIM_IDS = (
    RS128K_WRITE,
    RS1M_WRITE,
    FIRST_RUN_WRITE,
    TWO_RAIDZ2_READ,
    RAID6_READ,
    RAIDZ2_SERIAL_READ,
    RAID6_SERIAL_READ,
)


def write_speedup_model(width: int = 8, parity: int = 2, ashift: int = 12) -> tuple[float, str]:
    """What the models explain of a 1 MiB-write speed-up from recordsize 128K to 1M on one RAIDZ vdev: the
    amplification model gives 1.0x (1 MiB writes fill whole 128 KiB records), so only RAIDZ allocation remains:
    the ratio of the two record sizes' allocation efficiencies (data / allocated sectors)."""
    small = raidz_alloc(128 * KiB, width, parity, ashift)
    big = raidz_alloc(1024 * KiB, width, parity, ashift)
    ratio = big["efficiency"] / small["efficiency"]
    return ratio, (
        f"models explain {ratio:.3f}x: no amplification for 1 MiB writes into 128 KiB records (1.0x), and "
        f"RAIDZ allocation of a 1 MiB vs a 128 KiB record on {width}-wide RAIDz{parity} at ashift {ashift} "
        f"({big['efficiency']:.1%} vs {small['efficiency']:.1%} efficient); the rest is not explained by "
        "these models (per-record overhead and how a transaction group batches writes are not in the data)"
    )


def ars_ratio_specs(width: int = 8, parity: int = 2, ashift: int = 12) -> list[tuple]:
    """(claim, numerator claim id, denominator claim id, model ratio or None, what the model says)."""
    write_model, write_basis = write_speedup_model(width, parity, ashift)
    per_disk = raidz_alloc(1024 * KiB, width, parity, ashift)["max_data_bytes_per_disk"]
    return [
        ("1M recordsize speed-up of RAIDz2 1 MiB writes", RS1M_WRITE, RS128K_WRITE, write_model, write_basis),
        (
            "first (discarded) run vs steady state",
            FIRST_RUN_WRITE,
            RS1M_WRITE,
            None,
            "no model: a fresh file is written without reading or freeing old blocks",
        ),
        (
            "2 x 4-wide RAIDz2 vs 8-wide RAID6, 1 MiB reads",
            TWO_RAIDZ2_READ,
            RAID6_READ,
            4 / 6,
            "streaming model, data disks: 2 x (4 - 2) = 4 vs 8 - 2 = 6",
        ),
        (
            "RAIDz2 vs RAID6, single-process 1 MiB reads",
            RAIDZ2_SERIAL_READ,
            RAID6_SERIAL_READ,
            3.0,
            f"transfer-bound end of the serial-reader model: {width - parity} disks read {per_disk // KiB} KiB each "
            f"(RAIDz{parity}, 1M record, ashift {ashift}) vs 2 read 512 KiB each (RAID6, 512 KiB chunks). Positioning "
            "time (seek, rotation), which striping does not shorten, pulls the ratio toward 1x: the model gives a range "
            "1-3x, not a ceiling on speed",
        ),
    ]


def ars_ratios(figures: dict[str, float], width: int = 8, parity: int = 2, ashift: int = 12) -> pl.DataFrame:
    """The article's ratios from its stated figures (claim id -> bytes/s, as claims.csv has them) and, where a
    model gives one, the model's ratio, the gap to it (``vs_theory_pct``) and the factor it leaves unexplained."""
    rows = []
    for claim, num, den, theory, basis in ars_ratio_specs(width, parity, ashift):
        ratio = figures[num] / figures[den]
        rows.append(
            dict(
                claim=claim,
                numerator=num,
                numerator_mib_s=figures[num] / MiB,
                denominator=den,
                denominator_mib_s=figures[den] / MiB,
                ratio=ratio,
                theory=theory,
                theory_basis=basis,
                vs_theory_pct=None if theory is None else (ratio / theory - 1) * 100,
                unexplained=None if theory is None else ratio / theory,
            )
        )
    return pl.DataFrame(
        rows, schema_overrides={"theory": pl.Float64, "vs_theory_pct": pl.Float64, "unexplained": pl.Float64}
    )


def _power_of_two(n: int, what: str) -> int:
    if not isinstance(n, int) or n < 1 or n & (n - 1):
        raise ValueError(f"{what} must be a power of two in bytes, got {n!r}")
    return n


def amplification(recordsize: int, io_size: int) -> dict:
    """Bytes moved per byte asked for, for aligned I/O of ``io_size`` into records of ``recordsize``."""
    r = _power_of_two(recordsize, "recordsize")
    s = _power_of_two(io_size, "io size")
    amp = r / s if s < r else 1.0
    return dict(
        recordsize_bytes=r,
        io_bytes=s,
        records=max(s // r, 1),
        read_amp=amp,
        write_amp=amp,
        overwrite_read_amp=amp if s < r else 0.0,  # read-modify-write of the record (uncached)
        wasted_read_bytes=max(r - s, 0),
    )


def amplification_table(recordsizes: Sequence[int], io_sizes: Sequence[int]) -> pl.DataFrame:
    """One row per (recordsize, io size)."""
    return pl.DataFrame([amplification(r, s) for r in recordsizes for s in io_sizes])


def raidz_alloc(record_bytes: int, width: int, parity: int, ashift: int = 12) -> dict:
    """Sectors a RAIDZ vdev allocates for one block: data, parity, padding; and the busiest disk's share."""
    if not 1 <= parity <= 3 or width <= parity:
        raise ValueError(f"raidz{parity} needs 1 <= parity <= 3 and width > parity, got width {width}")
    sector = 1 << ashift
    data = -(-record_bytes // sector)
    rows = -(-data // (width - parity))
    raw = data + rows * parity
    padded = -(-raw // (parity + 1)) * (parity + 1)
    return dict(
        record_bytes=record_bytes,
        width=width,
        parity=parity,
        sector_bytes=sector,
        data_sectors=data,
        parity_sectors=rows * parity,
        pad_sectors=padded - raw,
        alloc_bytes=padded * sector,
        efficiency=data / padded,
        data_disks_touched=min(data, width - parity),
        max_data_sectors_per_disk=rows,
        max_data_bytes_per_disk=rows * sector,
    )


def chunked_disks_touched(io_bytes: int, chunk_bytes: int) -> int:
    """Disks a chunk-aligned read of ``io_bytes`` touches on striped RAID with fixed ``chunk_bytes`` (md RAID)."""
    if io_bytes < 1 or chunk_bytes < 1:
        raise ValueError("io and chunk sizes must be >= 1 byte")
    return -(-io_bytes // chunk_bytes)


RUN_GROUP = ("stack", "pool", "vdev_type", "vdev_count", "vdev_width", "rw", "block_size_bytes", "direction")


def tuned_vs_default(
    runs: pl.DataFrame, default_recordsize: int = DEFAULT_RECORDSIZE, by: Sequence[str] = RUN_GROUP
) -> pl.DataFrame:
    """fio runs labelled with recordsize_bytes (manifest): bandwidth relative to the default-recordsize runs of the
    same pool, workload and direction (the mean of those that count: ``run_verdicts.counted``; ``default_flagged``
    where every one is flagged). Unlabelled runs are left out; groups without a default run get null ratios.
    ``matched``: the recordsize equals the I/O size. ``verdict``: 'faster' / 'slower' only by the one rule of 05, 08
    and 10 (a run it does not leave out, against default runs none of which is flagged, outside their run-to-run
    noise: ``stats.compare_values``), else None and ``verdict_why`` says why. ``runs``: ``run_verdicts.verdicts``'
    rows (without ``suspect``, no run is taken as left out)."""
    by = phases.grouped(by, runs)  # runs before and after a change are never one default run's repeats
    labelled = runs.filter(pl.col("recordsize_bytes").is_not_null())
    if "suspect" not in labelled.columns:
        labelled = labelled.with_columns(suspect=pl.lit(False), why=pl.lit(None, pl.String))
    defaults = labelled.filter(pl.col("recordsize_bytes") == default_recordsize)
    base = (
        defaults.filter(run_verdicts.counted(pl.col("suspect"), by))
        .group_by(by, maintain_order=True)
        .agg(
            pl.col("bw_bytes_per_s").mean().alias("default_bw_bytes_per_s"),
            pl.len().alias("default_runs"),
            pl.col("bw_bytes_per_s").alias("default_values"),
            pl.col("suspect").any().alias("default_flagged"),
        )
    )
    out = (
        labelled.join(base, on=by, how="left", nulls_equal=True)
        .with_columns(
            ratio=pl.col("bw_bytes_per_s") / pl.col("default_bw_bytes_per_s"),
            matched=pl.col("recordsize_bytes") == pl.col("block_size_bytes"),
        )
        .with_columns(change_pct=(pl.col("ratio") - 1) * 100)
        .sort([*by, "recordsize_bytes"], nulls_last=True)
    )
    verdicts = [_run_verdict(r, default_recordsize) for r in out.iter_rows(named=True)]
    return out.drop("default_values").with_columns(
        verdict=pl.Series([v for v, _ in verdicts], dtype=pl.String),
        verdict_why=pl.Series([w for _, w in verdicts], dtype=pl.String),
    )


def _run_verdict(r: dict, default_recordsize: int) -> tuple[str | None, str | None]:
    """(verdict, why none) of one tuned run against its default runs: ``tuned_vs_default``'s rule."""
    if r["recordsize_bytes"] == default_recordsize:
        return None, "a default run"
    if r["default_bw_bytes_per_s"] is None:
        return None, "no default run of its pool, workload and direction"
    if r["suspect"]:
        return None, f"flagged: {r['why'] or 'left out'}"
    if r["default_flagged"]:
        return None, "its default runs are flagged"
    c = stats.compare_values([r["bw_bytes_per_s"]], r["default_values"])
    if c.test == stats.NONE:
        return None, "one run on each side: the run-to-run noise is unknown"
    if not c.differs:
        return None, f"within the run-to-run noise ({c.test_name})"
    return ("faster" if r["ratio"] > 1 else "slower"), None


def nearest_ashift(expected: dict[int, float], measured: float, tie: float = 0.005) -> int | None:
    """The ashift whose expected allocated / physical ratio is nearest ``measured``; None when the expectations
    differ by less than ``tie`` (then the ratio cannot tell them apart), or there is only one."""
    if len(expected) < 2 or max(expected.values()) - min(expected.values()) < tie:
        return None
    return min(expected, key=lambda a: abs(expected[a] - measured))


# ----------------------------------------------------------------------------- notebook 02 on any selection

TUNED_GROUP = ("stack", "pool", "vdev_type", "vdev_count", "vdev_width", "workload", "direction")
ZDB_SIZES_SQL = """
SELECT f.path, s.file_id, coalesce(s.pool, f.pool, {unnamed}) AS pool, f.recordsize_bytes, f.vdev_type, f.vdev_width,
       f.ashift, s.bp_count, s.bp_logical_bytes, s.bp_physical_bytes, s.bp_allocated_bytes, s.line_start, s.line_end,
       f.sha256
FROM zdb_block_stats s JOIN files f USING (file_id) WHERE {where} ORDER BY f.path
"""


def model_measures(
    one: dict, three: dict, md6: int, raid_width: int, raid_parity: int, chunk: int, ashift: int
) -> dict:
    """The models' numbers under the names claims use (study-level measures)."""
    return {
        "raidz.1m.data_disks_touched": one["data_disks_touched"],
        "raid6.1m.disks_touched": md6,
        "raidz.1m.max_data_bytes_per_disk": one["max_data_bytes_per_disk"],
        "raidz.1m.max_data_sectors_per_disk": one["max_data_sectors_per_disk"],
        "raidz.1m.efficiency": one["efficiency"],
        "raidz.3m.max_data_bytes_per_disk": three["max_data_bytes_per_disk"],
        "raid6.chunk_sectors": chunk // (1 << ashift),
        "raid6.efficiency": (raid_width - raid_parity) / raid_width,
        "amp.128k.4k.wasted_read_bytes": amplification(128 * KiB, 4 * KiB)["wasted_read_bytes"],
        "amp.128k.8m.records": amplification(128 * KiB, 8 * 1024 * KiB)["records"],
        "amp.1m.8m.records": amplification(1024 * KiB, 8 * 1024 * KiB)["records"],
    }


def raidz_overhead(labels: dict, default_recordsize: int) -> dict[int, float]:
    """allocated / data bytes a RAIDZ vdev spends on full records (parity and padding), by ashift: the labelled
    ashift, else 9 and 12. Empty unless the file is labelled with a raidz vdev_type and vdev_width."""
    vt, width = labels.get("vdev_type"), labels.get("vdev_width")
    if not vt or not vt.startswith("raidz") or not width:
        return {}
    parity = int(vt[-1]) if vt[-1].isdigit() else 1
    record = labels.get("recordsize_bytes") or default_recordsize
    shifts = [labels["ashift"]] if labels.get("ashift") else [9, 12]
    out = {}
    for a in shifts:
        alloc = raidz_alloc(record, width, parity, a)
        out[a] = alloc["alloc_bytes"] / (alloc["data_sectors"] * alloc["sector_bytes"])
    return out


HISTOGRAM_SQL = """
SELECT f.path, f.sha256, h.line_start, h.line_end, h.file_id,
       coalesce(s.pool, f.pool, {unnamed}) AS pool,
       f.recordsize_bytes, h.block_size_bytes, h.lsize_count, h.lsize_bytes, h.psize_bytes, h.asize_bytes,
       h.human_units
FROM zdb_block_size_histogram h JOIN files f USING (file_id)
LEFT JOIN zdb_block_stats s ON s.file_id = h.file_id AND s.block_no = h.block_no
WHERE {where} ORDER BY f.path, h.block_size_bytes
"""


def block_sizes(hist: pl.DataFrame, recordsize: int) -> dict:
    """One zdb -bb block size histogram: the share of logical bytes in blocks of at least ``recordsize`` (full
    records), the bucket holding most logical bytes, and the totals. Bucket N holds blocks of N to 2N - 1 bytes."""
    total = hist["lsize_bytes"].sum()
    top = hist.sort("lsize_bytes", descending=True).row(0, named=True)
    return dict(
        logical_bytes=total,
        blocks=hist["lsize_count"].sum(),
        full_record_share=hist.filter(pl.col("block_size_bytes") >= recordsize)
        .select(pl.col("lsize_bytes").sum())
        .item()
        / total
        if total
        else None,
        top_bucket_bytes=top["block_size_bytes"],
        top_bucket_share=top["lsize_bytes"] / total if total else None,
        approximate=bool(hist["human_units"].any()),
    )


# ----------------------------------------------------------------------------- notebook 02: query and compute

LAYOUT_SQL = """
SELECT DISTINCT coalesce(f.pool, f.label, f.path) AS pool, f.vdev_type, f.vdev_width, f.ashift
FROM files f WHERE {where} AND f.vdev_type LIKE 'raidz%' AND f.vdev_width IS NOT NULL ORDER BY 1
"""
ZDB_VDEVS_SQL = """
SELECT v.file_id, f.path, f.sha256, v.pool, v.type, v.ashift, v.nparity, v.n_children, v.line_start, v.line_end
FROM zdb_config_vdevs v JOIN files f USING (file_id)
WHERE {where} AND v.top_level AND v.ashift IS NOT NULL AND NOT coalesce(v.is_log, false)
  AND coalesce(v.alloc_bias, '') = '' ORDER BY f.path, v.config_no, v.vdev_key
"""
DEFAULT_RAIDZ = (8, 2)  # the parameters' default layout: 8-wide RAIDZ2 (the Ars Technica article's)


def histogram_summaries(hist: pl.DataFrame, default_recordsize: int) -> tuple[list, pl.DataFrame]:
    """One block_sizes summary per distinct histogram (-bb and -bbb of one pool print the same one)."""
    seen, kept, out = set(), [], []
    for (path,), g in hist.group_by("path", maintain_order=True):
        record = g["recordsize_bytes"][0] or default_recordsize
        b = block_sizes(g, record)
        key = (g["pool"][0], b["blocks"], b["logical_bytes"])
        if not b["logical_bytes"] or key in seen:
            continue
        seen.add(key)
        kept.append(path)
        out.append((g["pool"][0], record, {**b, "path": path}))  # its histogram's rows: ``hist`` of that path
    return out, hist.filter(pl.col("path").is_in(kept))


def query(con, sel) -> RecordsizeFrames:

    where, params = sel.sql("f")
    stated = study_claims(sel.study)
    return RecordsizeFrames(
        runs=run_verdicts.verdicts(con, fio_runs.runs(con, sel)),  # the one rule of 05, 08 and 10
        sizes=one_summary_per_pool(frame(con, ZDB_SIZES_SQL.format(where=where, unnamed=UNNAMED_SQL), params), "pool"),
        hist=frame(con, HISTOGRAM_SQL.format(where=where, unnamed=UNNAMED_SQL), params),
        layouts=frame(con, LAYOUT_SQL.format(where=where), params),
        vdevs=_zdb_vdevs(con, where, params),
        figures=dict(zip(stated["claim_id"].to_list(), stated["value_base"].to_list(), strict=True)),
        claim_lines=claim_lines(stated),
    )


def _zdb_vdevs(con, where: str, params: list) -> pl.DataFrame:
    """The selection's zdb -C top-level data vdevs; empty on a database of a schema without the table."""
    found = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'zdb_config_vdevs'")
    return frame(con, ZDB_VDEVS_SQL.format(where=where), params) if found.fetchone()[0] else pl.DataFrame()


def raidz_model(layouts: pl.DataFrame, width: int, parity: int, ashift: int, vdevs: pl.DataFrame) -> RaidzModel:
    """The RAIDZ layout the model uses: the parameters when they differ from the default, else the selection's
    labelled layout (its first, by pool; its ashift from zdb -C of that pool when not labelled), else the first
    raidz vdev of the selection's zdb -C, else the default parameters (and what zdb -C shows instead, if any)."""
    source, note = "parameters", ""
    lines: tuple[dict, ...] = ()
    raidz = vdevs.filter(pl.col("type") == "raidz") if vdevs.height else vdevs
    if (width, parity) == DEFAULT_RAIDZ and layouts.height:
        r = layouts.row(0, named=True)
        vt = r["vdev_type"]
        width, parity = int(r["vdev_width"]), int(vt[-1]) if vt[-1].isdigit() else 1
        own = vdevs.filter(pl.col("pool") == r["pool"]) if vdevs.height else vdevs
        if r["ashift"]:
            ashift, how = int(r["ashift"]), ""
        elif own.height:
            ashift, how, lines = int(own["ashift"][0]), f"; ashift {own['ashift'][0]} from zdb -C", lines_of(own)
        else:
            how = f"; ashift {ashift} assumed"
        source = f"the labelled layout of {r['pool']}{how}"
    elif (width, parity) == DEFAULT_RAIDZ and raidz.height:
        r = raidz.row(0, named=True)
        width, parity, ashift = int(r["n_children"]), int(r["nparity"] or 1), int(r["ashift"])
        source, lines = f"zdb -C of pool {r['pool']}", lines_of(raidz.head(1))
    elif vdevs.height:
        note, lines = zdb_words(vdevs), lines_of(vdevs)
    one = raidz_alloc(1024 * KiB, width, parity, ashift)
    three = raidz_alloc(3 * 1024 * KiB, width, parity, ashift)
    return RaidzModel(width, parity, ashift, source, one, three, note, lines)


def zdb_words(vdevs: pl.DataFrame) -> str:
    """'zdb -C of pool lxd shows ashift 9 and 3 top-level vdevs (disk, disk, disk), no raidz'."""
    out = []
    for (pool,), g in vdevs.group_by("pool", maintain_order=True):
        shifts = "/".join(str(a) for a in sorted(set(g["ashift"].to_list())))
        kinds = ", ".join(f"{t}{p or ''}" if t == "raidz" else t for t, p in g.select("type", "nparity").iter_rows())
        has = "a raidz vdev" if (g["type"] == "raidz").any() else "no raidz vdev"
        out.append(f"zdb -C of pool {pool} shows ashift {shifts} and {g.height} top-level vdev(s) ({kinds}), {has}")
    return "; ".join(out)


def pool_sizes(sizes: pl.DataFrame, default_recordsize: int) -> list[PoolSizes]:
    out = []
    for r in sizes.filter(pl.col("bp_count") > 0).iter_rows(named=True) if sizes.height else []:
        measured = r["bp_allocated_bytes"] / r["bp_physical_bytes"]
        expected = raidz_overhead(r, default_recordsize)
        out.append(
            PoolSizes(
                pool=r["pool"] or r["path"],
                avg_logical_bytes=r["bp_logical_bytes"] / r["bp_count"],
                measured=measured,
                expected=expected,
                nearest=nearest_ashift(expected, measured),
                recordsize_bytes=r["recordsize_bytes"] or default_recordsize,
                layout=f"{r['vdev_width']}-wide {r['vdev_type']}" if expected else None,
                lines=lines_of(r),
            )
        )
    return out


def not_zfs(runs: pl.DataFrame) -> pl.Expr:
    """The runs labelled with a stack other than ZFS (no 'zfs' in it, no pool, no recordsize): recordsize is a ZFS
    dataset property, so nothing to label them with."""
    return (
        pl.col("stack").is_not_null()
        & ~pl.col("stack").str.to_lowercase().str.contains("zfs")
        & pl.col("pool").is_null()
        & pl.col("recordsize_bytes").is_null()
    )


def compute(
    frames: RecordsizeFrames,
    recordsizes,
    io_sizes,
    default_recordsize: int,
    raidz: tuple[int, int, int],
    raid6_chunk_bytes: int,
) -> RecordsizeNumbers:
    """Frames -> named numbers: the models, the pools' measured block sizes, tuned-vs-default fio runs, the study's
    stated ratios."""
    model = raidz_model(frames.layouts, *raidz, frames.vdevs)
    md6 = chunked_disks_touched(1024 * KiB, raid6_chunk_bytes)
    n = RecordsizeNumbers(
        default_recordsize=default_recordsize,
        amplification=amplification_table(list(recordsizes), list(io_sizes)),
        default_amp=amplification(default_recordsize, 4 * KiB),
        model=model,
        measures=model_measures(
            model.one, model.three, md6, model.width, model.parity, raid6_chunk_bytes, model.ashift
        ),
        pools=pool_sizes(frames.sizes, default_recordsize),
    )
    runs = frames.runs
    n.tuned = tuned_vs_default(runs, default_recordsize, by=TUNED_GROUP) if runs.height else runs
    n.comparisons = recordsize_compare.comparisons(runs, default_recordsize)
    if runs.height:  # runs, not their directions: a randrw run has a read and a write row
        other = not_zfs(runs)
        unlabelled = runs.filter(pl.col("recordsize_bytes").is_null() & ~other)
        n.unlabelled_runs = unlabelled.select("file_id", "doc_index", "groupid").n_unique()
        n.other_stacks = tuple(sorted(set(runs.filter(other)["stack"].to_list())))
    if all(cid in frames.figures for cid in ARS_CLAIM_IDS):
        n.stated = ars_ratios(frames.figures)
        n.stated_lines = frames.claim_lines
    n.histograms, n.hist = histogram_summaries(frames.hist, default_recordsize)
    return n


def analyse(
    con,
    sel,
    recordsizes=(4096, 16384, 131072, 1048576),
    io_sizes=(4096, 8192, 16384, 65536, 131072, 1048576),
    default_recordsize: int = DEFAULT_RECORDSIZE,
    raidz_width: int = 8,
    raidz_parity: int = 2,
    ashift: int = 12,
    raid6_chunk_bytes: int = 524288,
):
    """Notebook 02 on any selection: the record model (parameters, or the selection's labelled RAIDZ layout),
    measured block sizes from zdb, and fio runs at different recordsizes compared within one workload."""

    if not 9 <= ashift <= 16:  # what ZFS takes: sectors of 512 B to 64 KiB
        raise ValueError(f"ashift must be 9 to 16 (sectors of 512 B to 64 KiB), got {ashift}")
    if not recordsizes or not io_sizes:
        raise ValueError(
            f"recordsizes and io_sizes need at least one size each, e.g. [4096, 131072]; got {list(recordsizes)} "
            f"and {list(io_sizes)}"
        )
    frames = query(con, sel)
    n = compute(
        frames, recordsizes, io_sizes, default_recordsize, (raidz_width, raidz_parity, ashift), raid6_chunk_bytes
    )
    res = Result.start(
        con, sel, pl.concat([measures.per_file(con, sel, frames.runs), measures.study_level(n.measures)])
    )
    res.numbers = n
    res.frames.update(
        amplification=n.amplification,
        raidz_1m=pl.DataFrame([n.model.one]),
        raidz_3m=pl.DataFrame([n.model.three]),
        zdb_sizes=frames.sizes,
        tuned=n.tuned,
    )
    res.file_ids += frames.sizes["file_id"].to_list() + (n.tuned["file_id"].to_list() if n.tuned.height else [])
    if n.stated.height:
        res.frames["stated_ratios"] = n.stated
    res.frames["block_sizes"] = n.hist
    res.file_ids += n.hist["file_id"].to_list()
    recordsize_findings.write(res, n, frames, sel)
    res.findings += pool_members.sentences(con, sel)  # a member zdb -C marks missing: a degraded pool
    return res
