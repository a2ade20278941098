"""FreeBSD ``gpart show [-l|-r|-p]``. See the package docstring for the format."""

from __future__ import annotations

import math
import re
from typing import Any

from ...units import UnitError, zfs_nicenum
from ..base import Parsed, ParseError
from .common import _cut, _Disk, _index_of, _is_command, _table_type

# --- gpart -----------------------------------------------------------------------------------

_GPART_HEADER = re.compile(r"^=>\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+\(([^)]*)\)\s*(?:\[([^\]]*)\])?\s*$")
_GPART_FREE = re.compile(r"^\s*(\d+)\s+(\d+)\s+- free -\s+\(([^)]*)\)\s*$")
_GPART_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*?)\s*\(([^)]*)\)\s*$")


def _human_fits(pairs: list[tuple[int, str]], sector_bytes: int) -> bool:
    """Whether gpart's human sizes ('8.0G', '11M', older gpart's '3.0k') fit the sector counts at this sector size:
    within rounding of the printed digits, or, for a whole number of two or more digits, truncated (gpart's
    humanize_number prints 24347 x 512 B = 11.89 MiB as '11M')."""
    for sectors, human in pairs:
        try:
            printed = zfs_nicenum(human[:-1] + human[-1:].upper() if human[-1:] == "k" else human)
        except UnitError:
            return False
        if math.isnan(printed) or printed <= 0:
            return False
        actual = sectors * sector_bytes
        if actual > 2**80:  # reliability-37: a 400-digit size was a parser-bug (OverflowError in the division)
            return False
        digits = re.match(r"\d+", human)
        whole = digits is not None and digits.end() == len(human.rstrip("BKMGTPEkb").rstrip()) and len(digits[0]) >= 2
        truncated = whole and digits is not None and printed <= actual < printed * (int(digits[0]) + 1) / int(digits[0])
        if abs(actual / printed - 1) > 0.06 and not truncated:
            return False
    return True


def _gpart_sector_size(disk: _Disk, pairs: list[tuple[int, str]], parsed: Parsed) -> None:
    if not pairs:
        disk.lsec, disk.source = 512, "assumed"
    elif _human_fits(pairs, 512):
        disk.lsec, disk.source = 512, "checked"
    elif _human_fits(pairs, 4096):
        disk.lsec, disk.source = 4096, "inferred"
        parsed.warnings.append(
            f"line {disk.line_start}: gpart sizes of {disk.name} fit 4096-byte sectors, "
            "not 512: using 4096 (a 4Kn disk)"
        )
    else:
        disk.lsec, disk.source = 512, "assumed"
        parsed.warnings.append(
            f"line {disk.line_start}: gpart sizes of {disk.name} fit neither 512- nor 4096-byte sectors: 512 assumed"
        )


def _parse_gpart(lines: list[str], parsed: Parsed, last: int) -> None:
    geoms: list[tuple[_Disk, int]] = []  # (disk, offset)
    cur: _Disk | None = None
    pairs: list[tuple[int, str]] = []

    def close():
        if cur is None:
            return
        if not cur.parts and cur.free is None:
            raise ParseError(
                f"gpart table of {cur.name} has no rows",
                line=cur.line_start,
                kind="truncated",
                expected="partition or '- free -' rows after the '=>' header",
            )
        same = next((d for d, _ in geoms if _same_layout(d, cur)), None)
        if same is not None and labels:  # `gpart show -l` of a table shown before: its labels join that table
            for part, labelled in zip(same.parts, cur.parts, strict=True):
                part["name"] = labelled.get("name")
            return
        _gpart_sector_size(cur, pairs, parsed)
        listed = sum(p["size_sectors"] for p in cur.parts) + (cur.free or 0)
        if cur.usable is not None and listed < cur.usable:  # reliability-37: a listing cut at a line end stored fewer
            parsed.warnings.append(  # partitions and less free space, exit 0; gpart's rows cover its '=>' range
                f"line {cur.line_end}: the gpart table of {cur.name} lists {listed} of its {cur.usable} sectors: "
                "rows are missing (a listing cut short?)"
            )
        geoms.append((cur, _gpart_offset(cur.name, geoms)))

    labels = False  # the tables follow `gpart show -l`: the row names each partition's label, not its type
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        m = _GPART_HEADER.match(line)
        if m:
            close()
            cur, pairs = _Disk(m.group(3), lineno), []
            cur.first, cur.usable = int(m.group(1)), int(m.group(2))
            cur.size_sectors, cur.size_source = cur.first + cur.usable, "usable-end"
            cur.table_type, cur.media, cur.state = _table_type(m.group(4)), m.group(5), m.group(6)
            continue
        if _is_command(line, "gpart"):  # the command line of a transcript, before any table or between two
            labels = _gpart_shows_labels(line)
            continue
        if cur is None:
            raise ParseError(
                f"not a gpart header: {line.strip()[:80]!r}",
                line=lineno,
                expected="'=>  first  size  geom  SCHEME  (size)'",
            )
        cur.line_end = lineno
        m = _GPART_FREE.match(line)
        if m:
            cur.add_free(int(m.group(2)))
            pairs.append((int(m.group(2)), m.group(3)))
            continue
        m = _GPART_ROW.match(line)
        if not m or not m.group(4).strip():
            raise _cut(
                lineno,
                last,
                f"not a gpart partition row: {line.strip()[:80]!r}",
                "'start  size  index  type [attributes] (size)' or '- free -'",
            )
        desc = m.group(4).strip()
        attrs = re.search(r"\s*\[([^\]]*)\]$", desc)
        flags = attrs.group(1) if attrs else None
        if attrs:
            desc = desc[: attrs.start()].strip()
        ident = m.group(3)
        part: dict[str, Any] = {
            "start_sector": int(m.group(1)),
            "size_sectors": int(m.group(2)),
            "type": None if labels else desc,
            "flags": flags,
            "line": lineno,
        }
        if labels:
            part["name"] = None if desc == "(null)" else desc  # gpart -l prints (null) for a partition without one
        if ident.isdigit():
            part["index"] = int(ident)
        else:
            part["device"], part["index"] = ident, _index_of(ident)
        cur.parts.append(part)
        pairs.append((part["size_sectors"], m.group(5)))
    close()
    for disk, offset in geoms:
        disk.emit(parsed, offset)


def _same_layout(a: _Disk, b: _Disk) -> bool:
    """Two gpart tables of one geom with the same partitions (index, start, size): one table shown twice."""
    key = [(p.get("index"), p["start_sector"], p["size_sectors"]) for p in a.parts]
    return (
        a.name == b.name
        and a.first == b.first
        and key == [(p.get("index"), p["start_sector"], p["size_sectors"]) for p in b.parts]
    )


def _gpart_shows_labels(command: str) -> bool:
    """Whether a `gpart show` command line has -l (alone or among other flags: -lp, -l -p)."""
    words = command.split()
    at = next((i for i, w in enumerate(words) if w == "gpart"), None)
    if at is None or words[at + 1 : at + 2] != ["show"]:
        return False
    return any(w.startswith("-") and not w.startswith("--") and "l" in w for w in words[at + 2 :])


def _gpart_offset(name: str, geoms: list[tuple[_Disk, int]]) -> int:
    """Start (on the underlying disk) of the slice/partition that holds geom ``name``, else 0."""
    for disk, offset in geoms:
        for p in disk.parts:
            idx = p.get("index")
            names = {p.get("device")}
            if idx is not None:
                names |= {f"{disk.name}s{idx}", f"{disk.name}p{idx}"}
                if 1 <= idx <= 26:  # a BSD label's partitions are letters: ada0s1a is index 1 of ada0s1
                    names.add(f"{disk.name}{chr(ord('a') + idx - 1)}")
            if name in names:
                return offset + p["start_sector"]
    return 0


# --- fdisk -l --------------------------------------------------------------------------------
