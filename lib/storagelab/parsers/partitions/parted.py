"""GNU ``parted``: machine output (``-m``) and the human table. See the package docstring for the format."""

from __future__ import annotations

import re

from ..base import Parsed, ParseError
from .common import _cut, _Disk, _is_command, _table_type

# --- parted ----------------------------------------------------------------------------------

_PARTED_UNIT = re.compile(r"^(\d+)(s|B)$")


def _parted_sectors(value: str, lsec: int, lineno: int, *, end: bool = False) -> int:
    m = _PARTED_UNIT.match(value.strip())
    if not m:
        raise ParseError(
            f"parted value {value!r} is not in sectors or bytes",
            line=lineno,
            kind="unsupported-version",
            expected="exact units: parted DEV unit s print (or unit B)",
        )
    n = int(m.group(1))
    if m.group(2) == "s":
        return n
    if end:
        n += 1  # an end in bytes is the last byte
    if n % lsec:
        raise ParseError(
            f"{value} is not a whole number of {lsec}-byte sectors",
            line=lineno,
            expected="a byte offset on a sector boundary",
        )
    return n // lsec - (1 if end else 0)


def _parse_parted_machine(lines: list[str], parsed: Parsed, last: int) -> None:
    cur: _Disk | None = None
    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            continue
        if s in ("BYT;", "CHS;", "CYL;"):
            if s != "BYT;":
                raise ParseError(
                    f"parted {s} (cylinder/CHS) units",
                    line=lineno,
                    kind="unsupported-version",
                    expected="parted -m DEV unit s print",
                )
            if cur:
                cur.emit(parsed)
            cur = None
            continue
        if not s.endswith(";"):
            if _is_command(s, "parted"):
                continue
            raise _cut(lineno, last, f"parted -m line without ';': {s[:80]!r}", "a line ending in ';'")
        fields = s[:-1].split(":")
        if cur is None:
            if len(fields) < 8:
                raise _cut(
                    lineno,
                    last,
                    f"parted -m disk line has {len(fields)} fields",
                    "path:size:transport:logical:physical:label:model:flags;",
                )
            cur = _Disk(fields[0], lineno)
            try:
                cur.lsec, cur.psec = int(fields[3]), int(fields[4])
            except ValueError:
                raise ParseError(
                    f"unreadable sector sizes {fields[3]!r}/{fields[4]!r}", line=lineno, expected="integers (bytes)"
                ) from None
            cur.size_sectors = _parted_sectors(fields[1], cur.lsec, lineno)
            cur.table_type = _table_type(fields[5])
            continue
        cur.line_end = lineno
        if len(fields) == 5 and fields[4] == "free":
            cur.add_free(_parted_sectors(fields[3], cur.lsec, lineno))
            continue
        if len(fields) < 7 or not fields[0].isdigit():
            raise _cut(
                lineno,
                last,
                f"not a parted -m partition line: {s[:80]!r}",
                "number:start:end:size:filesystem:name:flags;",
            )
        start = _parted_sectors(fields[1], cur.lsec, lineno)
        stop = _parted_sectors(fields[2], cur.lsec, lineno, end=True)
        cur.parts.append(
            {
                "index": int(fields[0]),
                "start_sector": start,
                "size_sectors": stop - start + 1,
                "filesystem": fields[4] or None,
                "name": ":".join(fields[5:-1]) or None,
                "flags": fields[-1] or None,
                "line": lineno,
            }
        )
    if cur is None:
        raise ParseError(
            "parted -m output without a disk line",
            line=last,
            kind="truncated",
            expected="path:size:transport:logical:physical:label:model:flags;",
        )
    cur.emit(parsed)


_PARTED_LABELS = ("Number", "Start", "End", "Size", "Type", "File system", "Name", "Flags")


def _parse_parted_human(lines: list[str], parsed: Parsed, last: int) -> None:
    cur: _Disk | None = None
    spans: list[tuple[str, int]] | None = None
    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            spans = None
            continue
        if s.startswith("Model:"):
            if cur:
                cur.emit(parsed)
            cur, spans = _Disk(None, lineno), None
            continue
        if cur is None:
            if _is_command(s, "parted"):
                continue
            raise ParseError(f"not parted output: {s[:80]!r}", line=lineno, expected="'Model: ...' line")
        cur.line_end = lineno
        if spans is not None:
            cells = {}
            for k, (label, at) in enumerate(spans):
                stop = spans[k + 1][1] if k + 1 < len(spans) else None
                cells[label] = line[at:stop].strip()
            if not cells.get("Start") or not cells.get("End"):
                raise _cut(lineno, last, f"parted row without Start/End: {s[:80]!r}", "a partition row")
            if not cells.get("Number"):
                if "Free Space" in line:
                    cur.add_free(_parted_sectors(cells["Size"], cur.lsec or 512, lineno))
                    continue
                raise _cut(lineno, last, f"parted row without Number: {s[:80]!r}", "a partition row")
            if not cells["Number"].isdigit():
                raise _cut(lineno, last, f"parted Number {cells['Number']!r}", "a partition number")
            lsec = cur.lsec or 512
            start = _parted_sectors(cells["Start"], lsec, lineno)
            stop = _parted_sectors(cells["End"], lsec, lineno, end=True)
            cur.parts.append(
                {
                    "index": int(cells["Number"]),
                    "start_sector": start,
                    "size_sectors": stop - start + 1,
                    "type": cells.get("Type") or None,
                    "filesystem": cells.get("File system") or None,
                    "name": cells.get("Name") or None,
                    "flags": cells.get("Flags") or None,
                    "line": lineno,
                }
            )
            continue
        if s.startswith("Number") and "Start" in s:
            spans = sorted((label, line.index(label)) for label in _PARTED_LABELS if label in line)
            spans.sort(key=lambda x: x[1])
            if lineno >= last:
                raise ParseError(
                    "parted output ends after the column header",
                    line=lineno,
                    kind="truncated",
                    expected="partition rows",
                )
            continue
        m = re.match(r"^Disk (.+): (\S+)$", s)
        if m and not s.startswith("Disk Flags:"):
            cur.name = m.group(1)
            value = m.group(2)
            if not _PARTED_UNIT.match(value):
                raise ParseError(
                    f"parted disk size {value!r} is not exact",
                    line=lineno,
                    kind="unsupported-version",
                    expected="exact units: parted DEV unit s print (or unit B)",
                )
            if value.endswith("s"):
                cur.size_sectors = int(value[:-1])
            else:
                cur.size_bytes = int(value[:-1])
            continue
        m = re.match(r"^Sector size \(logical/physical\): (\d+)B/(\d+)B$", s)
        if m:
            cur.lsec, cur.psec = int(m.group(1)), int(m.group(2))
            if cur.size_bytes is not None and cur.size_sectors is None:
                cur.size_sectors = cur.size_bytes // cur.lsec
            continue
        if s.startswith("Partition Table:"):
            cur.table_type = _table_type(s.split(":", 1)[1].strip())
        elif s.startswith(("Disk Flags:", "Disk ")):
            pass
        elif s.startswith(("Error:", "Warning:", "Information:")):
            parsed.warnings.append(f"line {lineno}: {s}")
        else:
            raise _cut(
                lineno,
                last,
                f"unexpected line in parted output: {s[:80]!r}",
                "Model/Disk/Sector size/Partition Table lines or the table",
            )
    if cur is None:
        raise ParseError("no parted 'Model:' block found", line=1, expected="parted DEV unit s print output")
    cur.emit(parsed)
