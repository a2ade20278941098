"""One disk's partition table printed by several tools (gdisk -l, sgdisk -p, fdisk -l, parted print) is one table.

Each (file, disk) of the ``partitions`` rows is one printed table. Two printed tables are the same disk's when they
agree on the disk's identity as far as both print it (the base name of its path: ``gpt.img`` = ``/dev/shm/h5/gpt.img``;
the disk identifier, GUID or MBR id, where both print one; the disk size where both print it; the host where both
are labelled) and on the table itself (logical sector size and every partition's number, start and end). Notebook 03
counts disks and partitions once and names each disk one way (its longest printed name, the most specific).
"""

from __future__ import annotations

import posixpath
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
