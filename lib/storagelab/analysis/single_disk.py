"""Each layout against one of its own disks (notebook 01, and 03's cache check): the disk model per direction,
which single-disk run can stand for one of a pool's disks, and why the others cannot.

A w-way mirror writes every block to all w disks (one disk's worth per vdev) and may read from all of them; a
RAIDZ-p vdev streams over its w - p data disks and serves about one random read at a time; n vdevs add up. A
mirror of unequal disks (an NVMe beside a virtual disk) writes at its slower leg's speed.
"""

from __future__ import annotations

import re

import polars as pl

from . import fio_runs
from .db import frame

PARITY = {"single": 0, "raidz1": 1, "raidz2": 2, "raidz3": 3}


BONNIE_SQL = """
SELECT f.file_id, f.path, f.sha256, coalesce(f.label, f.path) AS label, f.stack, f.vdev_type, f.vdev_count, f.vdev_width,
       f.host, f.devices, f.cache_devices, f.log_devices, f.phase, b.size_bytes, b.chunk_bytes, b.concurrency, r.test,
       coalesce(r.bytes_per_s, r.ops_per_s) AS value, r.line_start, r.line_end
FROM bonnie_results r JOIN bonnie_runs b USING (file_id, run_index, source) JOIN files f USING (file_id)
WHERE {where} AND b.preferred AND r.test IN ('put_block', 'get_block', 'seeks')
  AND b.run_index = (SELECT min(run_index) FROM bonnie_runs b2 WHERE b2.file_id = b.file_id AND b2.preferred)
"""
BONNIE_DIRECTION = {"put_block": "write", "get_block": "read", "seeks": "seeks"}


def family(stack: str | None) -> str | None:
    """The filesystem family of a stack label, without its redundancy: 'btrfs-raid1' -> 'btrfs',
    'mergerfs+btrfs-raid1' -> 'mergerfs+btrfs', 'zfs' -> 'zfs'."""
    return None if stack is None else re.sub(r"-(raid\d*|mirror|raidz\d?|stripe)\b", "", stack)


def disk_model(direction: str, vdev_type: str | None, count: int, width: int) -> tuple[float, float, str]:
    """What the layout should give relative to one of its disks, (low, high, why), for streaming writes, streaming
    reads and random reads (seeks): a w-way mirror writes every block to all w disks (1x per vdev) and may read
    from all of them (up to w x); a RAIDZ-p vdev streams over its w - p data disks and serves about one random
    read at a time; n vdevs add up."""
    n, w = count or 1, width or 1
    if vdev_type == "mirror":
        if direction == "write":
            return n, n, f"{n} mirror vdev(s): each writes every block to all {w} disks"
        return n, n * w, f"{n} x {w}-way mirror: reads from 1 to {w} disks per vdev"
    if vdev_type in PARITY and vdev_type != "single":
        p = PARITY[vdev_type]
        if direction == "seeks":
            return n, n, f"{n} {vdev_type} vdev(s): one random read at a time each"
        return n * (w - p), n * (w - p), f"{n} x {w}-wide {vdev_type}: {w - p} data disks each"
    return n * w, n * w, f"{n * w} disk(s) striped"


def is_single_disk(r: dict) -> bool:
    """One disk alone: vdev_type single on one vdev (a count of 2 or more single vdevs is a stripe of that many
    disks, the h6 trial's stripe2), or one vdev one disk wide."""
    if (r["vdev_count"] or 1) != 1:
        return False
    return r["vdev_type"] == "single" or ((r["vdev_count"] or 0) == 1 and (r["vdev_width"] or 0) == 1)


SINGLE_SCHEMA = {
    "label": pl.String,
    "single": pl.String,
    "direction": pl.String,
    "value": pl.Float64,
    "single_value": pl.Float64,
    "ratio": pl.Float64,
    "model_low": pl.Float64,
    "model_high": pl.Float64,
    "model": pl.String,
    "within_model": pl.Boolean,
    "unequal": pl.Boolean,
    "file_id": pl.Int64,
    "single_file_id": pl.Int64,
    # each ratio's two lines (its chart dot names both): the layout's run and the single disk's
    "path": pl.String,
    "line_start": pl.Int64,
    "line_end": pl.Int64,
    "sha256": pl.String,  # the file's as stored: an excerpt of it rewritten since is refused
    "single_path": pl.String,
    "single_line_start": pl.Int64,
    "single_line_end": pl.Int64,
    "single_sha256": pl.String,
}


def one_of_its_disks(single: dict, pool: dict) -> bool:
    """Whether a single-disk run can stand for one disk of the pool's: the same host where both are labelled, and
    where both name their devices, the single disk's among the pool's ('Optane M10' is not one of '6x HDD')."""
    if single.get("host") and pool.get("host") and single["host"] != pool["host"]:
        return False
    mine, theirs = _words(single.get("devices")), _words(pool.get("devices"))
    if not mine or not theirs:
        return True  # not labelled on one side: nothing says it is another disk
    models = {w for w in mine if len(w) >= 4 and re.search(r"[a-z]", w) and re.search(r"\d", w)}  # ST4000DM004
    return bool(models & theirs) if models else mine <= theirs


def legs(devices: str | None) -> list[set[str]]:
    """The device models a devices label names, one set of words per different disk: 'nvme0n1 (Samsung SSD 950 PRO
    256GB) + sdb (QEMU virtual disk)' -> two legs; '2x Seagate ST4000DM004 (ada3, ada5)' -> one."""
    out: list[set[str]] = []
    for part in re.split(r"\s\+\s", devices or ""):
        inner = re.findall(r"\(([^)]*)\)", part)
        words = _words(" ".join(inner) if inner and not re.search(r"\d+x\b", part) else part)
        words = {w for w in words if not re.fullmatch(r"(nvme\d+n\d+|sd[a-z]+|ada\d+|da\d+|nvd\d+)", w)}
        if words and words not in out:
            out.append(words)
    return out


def unequal_mirror(r: dict) -> bool:
    """A mirror whose devices label names different disks (its writes wait for the slower one)."""
    return r.get("vdev_type") == "mirror" and len(legs(r.get("devices"))) > 1


def _words(devices: str | None) -> set[str]:
    """The words of a devices label, counts ('2x') left out: '1x Seagate ST4000DM004' -> {seagate, st4000dm004}."""
    return {w for w in re.findall(r"[a-z0-9]+", (devices or "").lower()) if not re.fullmatch(r"\d+x?", w)}


def against_single_disk(rows: pl.DataFrame, group: list[str]) -> pl.DataFrame:
    """Each labelled layout against the single-disk run of the same family and group (workload, options), one of
    its own disks (``one_of_its_disks``): measured ratio and the model's range. ``rows``: label, family, direction,
    value, vdev_type/count/width + group (+ host, devices, random where known). Random I/O on a RAIDZ vdev is
    modelled as one disk per vdev (every block touches all its disks), not as its data disks streaming."""
    out: list[dict] = []
    labelled = rows.filter(pl.col("vdev_count").is_not_null() | pl.col("vdev_type").is_not_null())
    for r in labelled.iter_rows(named=True):
        if is_single_disk(r) or r["value"] is None:
            continue
        base = labelled.filter(pl.all_horizontal(pl.col(c).eq_missing(r[c]) for c in ["family", "direction", *group]))
        singles = [b for b in base.iter_rows(named=True) if is_single_disk(b) and b["value"] and one_of_its_disks(b, r)]
        if not singles:
            continue
        b = singles[0]
        random_raidz = bool(r.get("random")) and r["vdev_type"] in PARITY and r["vdev_type"] != "single"
        lo, hi, why = disk_model(
            "seeks" if random_raidz else r["direction"], r["vdev_type"], r["vdev_count"] or 1, r["vdev_width"] or 1
        )
        if random_raidz:
            why = f"random I/O: {r['vdev_count'] or 1} {r['vdev_type']} vdev(s), about one disk's I/O each"
        if unequal_mirror(r) and r["direction"] == "write":
            lo, why = (
                0,
                (
                    f"a mirror of unequal disks ({r['devices']}) writes at its slower disk's speed: at most "
                    f"{hi:g}x this one, and less by how much slower the other is (no run of it alone)"
                ),
            )
        ratio = r["value"] / b["value"]
        out.append(
            dict(
                label=r["label"],
                single=b["label"],
                direction=r["direction"],
                value=r["value"],
                single_value=b["value"],
                ratio=ratio,
                model_low=float(lo),
                model_high=float(hi),
                model=why,
                within_model=lo * 0.9 <= ratio <= hi * 1.1,
                unequal=unequal_mirror(r),
                file_id=r["file_id"],
                single_file_id=b["file_id"],
                path=r.get("path"),
                line_start=r.get("line_start"),
                line_end=r.get("line_end"),
                sha256=r.get("sha256"),
                single_path=b.get("path"),
                single_line_start=b.get("line_start"),
                single_line_end=b.get("line_end"),
                single_sha256=b.get("sha256"),
            )
        )
    return pl.DataFrame(out, schema=SINGLE_SCHEMA, orient="row") if out else pl.DataFrame(schema=SINGLE_SCHEMA)


def why_not(single: dict, pool: dict) -> str | None:
    """Why a single-disk run cannot stand for one of ``pool``'s disks (None: it can)."""
    if single.get("host") and pool.get("host") and single["host"] != pool["host"]:
        return f"it ran on host {single['host']}, the pool on {pool['host']}"
    if not one_of_its_disks(single, pool):
        return f"its disk ({single['devices']}) is not one of the pool's ({pool['devices']})"
    return None


REJECTED_SCHEMA = {"single": pl.String, "layout": pl.String, "reason": pl.String, "tool": pl.String}


def rejections(rows: pl.DataFrame, group: list[str]) -> pl.DataFrame:
    """The single-disk runs (labelled single, or 1 vdev of 1 disk) that stand for no layout's disk, with why:
    another host, not one of the pool's disks, or no layout of the same workload and filesystem family."""
    labelled = rows.filter(pl.col("vdev_count").is_not_null() | pl.col("vdev_type").is_not_null())
    cols = ["family", "direction", *group]
    singles = [r for r in labelled.iter_rows(named=True) if is_single_disk(r) and r["value"]]
    layouts = [r for r in labelled.iter_rows(named=True) if not is_single_disk(r) and r["value"] is not None]
    out = {}
    for s in singles:
        alike = [p for p in layouts if all(p[c] == s[c] for c in cols)]
        if any(why_not(s, p) is None for p in alike) or s["label"] in out:
            continue
        if alike:
            out[s["label"]] = (alike[0]["label"], why_not(s, alike[0]))
        elif layouts:
            out[s["label"]] = (None, "no pool layout ran the same workload on the same filesystem family")
        else:
            out[s["label"]] = (None, "no run of a labelled pool layout (vdev_type, vdev_count) is in the selection")
    rows_out = [(k, layout, reason) for k, (layout, reason) in out.items()]
    schema = {k: v for k, v in REJECTED_SCHEMA.items() if k != "tool"}
    return pl.DataFrame(rows_out, schema=schema, orient="row")


def single_disk_rows(con, sel, runs: pl.DataFrame) -> list[tuple[str, pl.DataFrame, list[str]]]:
    """(tool, rows, group) for fio runs (by workload and direction) and bonnie++ runs (by size, chunk, concurrency,
    cache and log devices; block write, block read, seeks), each row with its filesystem family."""

    parts = []
    if runs.height:
        fio_rows = runs.select(
            "file_id",
            *[c for c in ("path", "line_start", "line_end", "sha256") if c in runs.columns],
            # a run without a label (the manifest's column is optional) is named by its file, as everywhere
            fio_runs.run_label(runs).alias("label"),
            "vdev_type",
            "vdev_count",
            "vdev_width",
            "direction",
            "host",
            "devices",
            pl.col("bw_bytes_per_s").alias("value"),
            pl.col("workload").alias("group"),
            family=pl.col("stack").map_elements(family, return_dtype=pl.String),
            random=pl.col("wl_rw").fill_null("").str.starts_with("rand"),
        )
        parts.append(("fio", fio_rows, ["group"]))
    where, params = sel.sql("f")
    b = frame(con, BONNIE_SQL.format(where=where), params)
    if b.height:
        b = b.with_columns(
            direction=pl.col("test").replace_strict(BONNIE_DIRECTION),
            family=pl.col("stack").map_elements(family, return_dtype=pl.String),
        )
        parts.append(("bonnie++", b, ["size_bytes", "chunk_bytes", "concurrency", "cache_devices", "log_devices"]))
    return parts


def comparisons(parts: list[tuple[str, pl.DataFrame, list[str]]]) -> pl.DataFrame:
    out = [against_single_disk(rows, group).with_columns(tool=pl.lit(tool)) for tool, rows, group in parts]
    return pl.concat(out) if out else pl.DataFrame(schema={**SINGLE_SCHEMA, "tool": pl.String})


def rejected(parts: list[tuple[str, pl.DataFrame, list[str]]]) -> pl.DataFrame:
    out = [rejections(rows, group).with_columns(tool=pl.lit(tool)) for tool, rows, group in parts]
    return pl.concat(out) if out else pl.DataFrame(schema=REJECTED_SCHEMA)


def single_disk_comparisons(con, sel, runs: pl.DataFrame) -> pl.DataFrame:
    """Every labelled layout of the selection against one of its own disks (fio and bonnie++)."""
    return comparisons(single_disk_rows(con, sel, runs))
