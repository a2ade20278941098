"""What the partition-tool parsers share: the disk collector that makes the rows, and small helpers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...sectors import alignment
from ..base import Parsed, ParseError

# --- shared helpers --------------------------------------------------------------------------

_TABLE_TYPES = {"dos": "MBR", "msdos": "MBR", "mbr": "MBR", "gpt": "GPT"}


def _table_type(label: str | None) -> str | None:
    if not label or label.lower() in ("unknown", "none"):
        return None
    return _TABLE_TYPES.get(label.lower(), label.upper())


def _index_of(device: str) -> int | None:
    m = re.search(r"(\d+)$", device)
    if m:
        return int(m.group(1))
    m = re.search(r"\d([a-h])$", device)  # BSD label partitions: ada0s1a .. ada0s1h
    return ord(m.group(1)) - ord("a") + 1 if m else None


def _disk_of(device: str) -> str:
    m = re.match(r"^(.*\d)p\d+$", device) or re.match(r"^(.*?)\d+$", device)
    return m.group(1) if m else device


def _cut(lineno: int, last: int, message: str, expected: str) -> ParseError:
    """A malformed row: 'truncated' on the file's last line, else 'invalid'."""
    return ParseError(message, line=lineno, expected=expected, kind="truncated" if lineno >= last else "invalid")


def _is_command(line: str, tool: str) -> bool:
    return re.search(rf"(?:^|[\s$#>%])(?:sudo\s+)?{tool}(?:\s|$)", line) is not None


@dataclass(eq=False)  # two disks are the same only when they are one object
class _Disk:
    """Collects one disk/geom and its partitions before rows are made."""

    name: str | None
    line_start: int
    line_end: int = 0  # the line_start until a later line belongs to the disk
    table_type: str | None = None
    label_id: str | None = None
    media: str | None = None
    state: str | None = None
    size_sectors: int | None = None
    size_bytes: int | None = None
    first: int | None = None
    usable: int | None = None
    free: int | None = None
    size_source: str | None = "printed"
    size_rounded_to: int | None = None  # bytes: the disk size was printed rounded (parted's default unit)
    lsec: int | None = None
    psec: int | None = None
    source: str | None = None
    parts: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.line_end = self.line_start

    def add_free(self, sectors: int) -> None:
        self.free = (self.free or 0) + sectors

    def emit(self, parsed: Parsed, offset: int = 0) -> None:
        lsec = self.lsec or 512
        source = self.source or ("printed" if self.lsec else "assumed")
        for p in self.parts:
            known = p["start_sector"] is not None  # unknown: a legacy sfdisk -l start printed as 'N+'
            if known and (p["start_sector"] < 0 or p["size_sectors"] < 0):  # reliability-33: fdisk `-63`, a traceback
                raise ParseError(
                    f"a negative start or size ({p['start_sector']}, {p['size_sectors']} sectors)",
                    line=p["line"],
                    expected="sector numbers of 0 or more",
                )
            abs_start = p["start_sector"] + offset if known else None
            row = {
                "disk": self.name,
                "table_type": self.table_type,
                "index": p.get("index"),
                "device": p.get("device"),
                "start_sector": p["start_sector"],
                "end_sector": p["start_sector"] + p["size_sectors"] - 1 if known else None,
                "size_sectors": p["size_sectors"],
                "abs_start_sector": abs_start,
                "logical_sector_bytes": lsec,
                "physical_sector_bytes": self.psec,
                "logical_sector_source": source,
                "size_bytes": p["size_bytes"] if p.get("rounded_to_bytes") else p["size_sectors"] * lsec,
                "type": p.get("type"),
                "type_id": p.get("type_id"),
                "name": p.get("name"),
                "filesystem": p.get("filesystem"),
                "flags": p.get("flags"),
                "line_start": p["line"],
                "line_end": p["line"],
            }
            row.update(alignment(abs_start, lsec) if abs_start is not None else _UNKNOWN_ALIGNMENT)
            if p.get("align_check"):  # parted's verdict, where a session ran align-check (the column is NULL else)
                row["align_check"] = p["align_check"]
            row["rounded_to_bytes"] = p.get("rounded_to_bytes")
            if row["rounded_to_bytes"]:
                row["start_bytes"] = p["start_bytes"]  # as printed, rounded: its sector is not known
            parsed.add("partitions", row)
        if self.size_bytes is None and self.size_sectors is not None:
            self.size_bytes = self.size_sectors * lsec
        parsed.add(
            "disks",
            {
                "disk": self.name,
                "table_type": self.table_type,
                "label_id": self.label_id,
                "size_sectors": self.size_sectors,
                "size_bytes": self.size_bytes,
                "size_source": self.size_source if self.size_bytes is not None else None,
                "usable_first_sector": self.first,
                "usable_sectors": self.usable,
                "free_sectors": self.free,
                "partitions": len(self.parts),
                "logical_sector_bytes": lsec,
                "physical_sector_bytes": self.psec,
                "logical_sector_source": source,
                "media_size_text": self.media,
                "state": self.state,
                "size_rounded_to_bytes": self.size_rounded_to,
                "line_start": self.line_start,
                "line_end": self.line_end,
            },
        )


_UNKNOWN_ALIGNMENT = {
    "start_bytes": None,
    "align_4k_rem_bytes": None,
    "align_1m_rem_bytes": None,
    "aligned_4k": None,
    "aligned_1m": None,
}


def sector_sizes(logical: str, physical: str | None, lineno: int) -> tuple[int, int | None]:
    """The logical and physical sector sizes a tool printed, in bytes. reliability-32: a printed 0 was read as no
    size, so 512 was assumed without a word (a 4Kn disk's partitions stored 8 times too small), and parted -m
    divided by it (a traceback)."""
    lsec, psec = int(logical), None if physical is None else int(physical)
    if lsec <= 0 or (psec is not None and psec <= 0):
        shown = logical if physical is None else f"{logical}/{physical}"
        raise ParseError(f"sector size {shown} bytes", line=lineno, expected="a sector size of 512, 4096, ... bytes")
    return lsec, psec
