"""One disk's partition table printed by several tools (gdisk -l, sgdisk -p, fdisk -l, parted print) is one table.

Each (file, disk) of the ``partitions`` rows is one printed table. Two printed tables are the same disk's when they
agree on the disk's identity as far as both print it (the base name of its path: ``gpt.img`` = ``/dev/shm/h5/gpt.img``;
the disk identifier, GUID or MBR id, where both print one; the disk size where both print it; the host where both
are labelled) and on the table itself (logical sector size and every partition's number, start and end). Notebook 03
counts disks and partitions once and names each disk one way (its longest printed name, the most specific).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

import polars as pl

_TABLE_KEY = ("file_id", "disk")


@dataclass
class _Table:
    """One disk's table as first printed, and every output that printed the same one."""

    base: str
    sector: int | None
    parts: tuple
    ident: str | None
    size: int | None
    host: str | None
    names: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def same(self, other: _Table) -> bool:
        if (self.base, self.sector, self.parts) != (other.base, other.sector, other.parts):
            return False
        pairs = ((self.ident, other.ident), (self.size, other.size), (self.host, other.host))
        return all(a is None or b is None or a == b for a, b in pairs)

    def absorb(self, other: _Table) -> None:
        self.ident, self.size, self.host = self.ident or other.ident, self.size or other.size, self.host or other.host
        self.names += [n for n in other.names if n not in self.names]
        self.paths += [p for p in other.paths if p not in self.paths]

    @property
    def name(self) -> str:
        return max(self.names, key=lambda n: (len(n), n))


def _printed(parts: pl.DataFrame) -> list[tuple[tuple, _Table]]:
    """Every printed table of ``parts``: its (file_id, disk) key and its identity."""
    out = []
    for key, rows in parts.group_by(_TABLE_KEY, maintain_order=True):
        first = rows.row(0, named=True)
        part_rows = rows.sort("index").select("index", "abs_start_sector", "end_sector").iter_rows()
        table = _Table(
            posixpath.basename(str(first["disk"]).rstrip("/")) or str(first["disk"]),
            first["logical_sector_bytes"],
            tuple(part_rows),
            first.get("disk_id"),
            first.get("disk_size_bytes"),
            first.get("host"),
            [str(first["disk"])],
            [posixpath.basename(str(first["path"]))],
        )
        out.append((tuple(key), table))
    return out


def same_tables(parts: pl.DataFrame) -> pl.DataFrame:
    """``parts`` with ``table`` (one number per disk, in order of first appearance), ``disk_name`` (the disk's
    one name), ``outputs`` (how many outputs printed that table) and ``output_files`` (their file names)."""
    if parts.is_empty():
        return parts.with_columns(
            table=pl.lit(None, pl.Int64),
            disk_name=pl.lit(None, pl.String),
            outputs=pl.lit(None, pl.Int64),
            output_files=pl.lit(None, pl.List(pl.String)),
        )
    tables: list[_Table] = []
    of_key: dict[tuple, int] = {}
    for key, t in _printed(parts):
        i = next((j for j, known in enumerate(tables) if known.same(t)), None)
        if i is None:
            tables.append(t)
            i = len(tables) - 1
        else:
            tables[i].absorb(t)
        of_key[key] = i
    keys = pl.DataFrame(
        {
            "file_id": [k[0] for k in of_key],
            "disk": [k[1] for k in of_key],
            "table": list(of_key.values()),
            "disk_name": [tables[i].name for i in of_key.values()],
            "outputs": [len(tables[i].paths) for i in of_key.values()],
            "output_files": [tables[i].paths for i in of_key.values()],
        },
        schema_overrides={"file_id": parts.schema["file_id"], "disk": parts.schema["disk"], "table": pl.Int64},
    )
    return parts.join(keys, on=list(_TABLE_KEY), how="left", maintain_order="left")


def distinct_partitions(parts: pl.DataFrame) -> pl.DataFrame:
    """One row per partition of each disk (``parts`` after ``same_tables``), in order of first appearance."""
    return parts.unique(["table", "index"], keep="first", maintain_order=True)


# parted's align-check answer as stored (``partitions.align_check``): 'optimal: not aligned: 63s % 2048s != 0s',
# 'minimal: aligned', 'type not shown: 1 aligned'
_CHECK = re.compile(r"^(?P<kind>[^:]+): (?P<answer>(?:not )?aligned)(?:: (?P<start>\d+)s % (?P<grain>\d+)s)?")


def parted_checks(parts: pl.DataFrame) -> list[dict]:
    """parted's own ``align-check`` verdicts in ``parts`` (after ``same_tables``), each beside the arithmetic on the
    same partition: its grain (the sectors parted divided by, where it printed them; else 1 MiB for 'optimal' and the
    physical sector for 'minimal', parted's usual grains), whether the start is a multiple of it here, and whether
    the two agree. Keys: disk, index, kind, parted ('aligned' / 'not aligned'), text, grain_bytes, grain_from,
    arithmetic (True: a multiple; None where the start was printed rounded), agree (None likewise), and the row
    (path, sha256, line_start) for its link."""
    if parts.is_empty() or "align_check" not in parts.columns:
        return []
    out = []
    for r in parts.filter(pl.col("align_check").is_not_null()).iter_rows(named=True):
        m = _CHECK.match(r["align_check"])
        if m is None:
            continue
        logical = r["logical_sector_bytes"] or 512
        # a listing in parted's rounded units has no sector: parted's verdict stands alone (arithmetic None)
        start = r["abs_start_sector"] * logical if r["abs_start_sector"] is not None else None
        if m["grain"]:
            grain, grain_from = int(m["grain"]) * logical, "the grain parted printed"
        elif m["kind"] == "minimal" and r.get("physical_bytes"):
            grain, grain_from = int(r["physical_bytes"]), "the physical sector (parted's minimal check)"
        else:
            grain, grain_from = 2**20, "1 MiB (parted's usual optimal grain; it printed none)"
        arithmetic = start % grain == 0 if start is not None else None
        out.append(
            dict(
                disk=r.get("disk_name") or r["disk"],
                index=r["index"],
                kind=m["kind"],
                parted=m["answer"],
                text=r["align_check"],
                grain_bytes=grain,
                grain_from=grain_from,
                arithmetic=arithmetic,
                agree=arithmetic == (m["answer"] == "aligned") if arithmetic is not None else None,
                start_bytes=start,
                row={k: r.get(k) for k in ("path", "sha256", "line_start", "line_end")},
            )  # fmt: skip
        )
    return out
