"""GPT fdisk (``gdisk -l``, ``sgdisk -p``, gdisk's interactive ``p``) and BusyBox fdisk's GPT listing.

gdisk/sgdisk (checked against 1.0.9 here and the format in gdisk's source, ``GPTData::DisplayGPTData``)::

    Disk gpt.img: 131072 sectors, 64.0 MiB
    Sector size (logical): 512 bytes                    (or: Sector size (logical/physical): 4096/4096 bytes)
    Disk identifier (GUID): 6B5C0C6E-...
    Partition table holds up to 128 entries
    Main partition table begins at sector 2 and ends at sector 33
    First usable sector is 34, last usable sector is 131038
    Partitions will be aligned on 2-sector boundaries
    Total free space is 79839 sectors (39.0 MiB)

    Number  Start (sector)    End (sector)  Size       Code  Name
       1              34            2047   1007.0 KiB  EF02  bios boot

``gdisk -l`` first prints its version and a "Partition table scan" (``MBR: protective``, ``GPT: present``). When
it found an MBR and no GPT it converts the MBR to GPT *in memory* and lists that: the disk holds an MBR, so
``table_type`` is MBR and a warning says the codes are gdisk's (8300), not MBR ids; the Name column then holds
gdisk's type names, stored as ``type``. Sizes come from the sector counts, never from the rounded Size column.

BusyBox fdisk (``CONFIG_FEATURE_GPT_LABEL``) prints a shorter form: ``Disk DEV: N sectors, 3597M``, ``Logical
sector size: 512``, the GUID and usable-sector lines, and ``Number  Start (sector)  End (sector)  Size Name``
rows without a code.
"""

from __future__ import annotations

import re

from ..base import Parsed, ParseError
from .common import _cut, _Disk, _is_command, sector_sizes

FORMATS = ("gdisk",)

_DISK = re.compile(r"^(?:Command \(\? for help\):\s*)?Disk (.+?): (\d+) sectors, (.+)$")
_SECTOR = re.compile(r"^(?:Sector size \(logical\):|Logical sector size:) (\d+)(?: bytes)?$")
_SECTOR_LP = re.compile(r"^Sector size \(logical/physical\): (\d+)/(\d+) bytes$")
_USABLE = re.compile(r"^First usable sector is (\d+), last usable sector is (\d+)$")
_FREE = re.compile(r"^Total free space is (\d+) sectors")
_HEADER = re.compile(r"^Number\s+Start \(sector\)\s+End \(sector\)\s+Size\s+(Code\s+)?Name$")
# gdisk: a Code column; the Size is 'N[.N] UNIT' (reliability-33: '(.+?)' took '131071   48.0 MiB' when a Start
# written '32 768' shifted the columns: Start 32, End 768, exit 0)
_ROW_CODE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+(?:\.\d+)?\s+[A-Za-z]+)\s+([0-9A-F]{4})(?:\s+(.*?))?\s*$")
# BusyBox: Size 'N[.N]UNIT' ('1024K', '918G'), a bare number (bytes) only under 1000 (reliability-34: a Start
# written '27 263 016' shifted the columns: Start 27, End 263, Size '016', exit 0)
_ROW_BUSYBOX = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+(?:\.\d+)?[KMGTPEZY]?)()(?:\s+(.*?))?\s*$")
# lines gdisk prints that carry nothing for the tables
_SKIP = re.compile(
    r"^(?:GPT fdisk \(s?gdisk\) version \S+|Partition table scan:|(?:MBR|BSD|APM|GPT): .*|Partition table holds .*"
    r"|Main partition table begins .*|Partitions will be aligned .*|\*+|in memory\.|Command \(\? for help\):.*"
    r"|Model: .*|[pq]|Found valid GPT with (?:protective|hybrid) MBR; using GPT\.?)$"
)
_CONVERTED = "Found invalid GPT and valid MBR; converting MBR to GPT format"
_BLANK = "Creating new GPT entries in memory."  # no table on the disk (scan: all 'not present'): gdisk made one
SNIFF = re.compile(
    r"^(?:Command \(\? for help\):\s*)?Disk \S.*: \d+ sectors, [^\n]*\n(?:Model: [^\n]*\n)?"
    r"(?:Sector size \(logical|Logical sector size: )",  # gdisk 1.0.5+ names a real disk's model between the two
    re.M,
)


def parse_gdisk(lines: list[str], parsed: Parsed, last: int) -> None:
    disks: list[_Disk] = []
    cur: _Disk | None = None
    converted = blank = False
    table: re.Pattern | None = None  # the row pattern while inside a table
    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            table = None
            continue
        m = _DISK.match(s)
        if m:
            cur, table = _Disk(m.group(1), lineno), None
            cur.size_sectors, cur.table_type = int(m.group(2)), "MBR" if converted else None if blank else "GPT"
            cur.state = "blank" if blank else None
            disks.append(cur)
            converted = blank = False
            continue
        if s == _BLANK:
            blank = True
            parsed.warnings.append(
                f"line {lineno}: gdisk found no partition table and lists an empty GPT it made in memory: the disk "
                "is stored without a table type, its GUID, usable area and free space left out (not the disk's)"
            )
            continue
        if s.startswith(_CONVERTED):
            converted = True
            parsed.warnings.append(
                f"line {lineno}: gdisk found an MBR and no GPT and lists the MBR converted to GPT in memory: "
                "table_type MBR; the codes are gdisk's (8300), not MBR ids, and the names are gdisk's type names"
            )
            continue
        if cur is None or table is None:
            _header_line(cur, s, lineno, last, parsed)
            header = _HEADER.match(s) if cur is not None else None
            table = (_ROW_CODE if header.group(1) else _ROW_BUSYBOX) if header else None
            continue
        cur.line_end = lineno
        cur.parts.append(_row(cur, table, s, lineno, last))
    if not disks:
        raise ParseError(
            "no gdisk 'Disk DEV: N sectors, SIZE' line found", line=1, expected="gdisk -l or sgdisk -p output"
        )
    for d in disks:
        if d.table_type == "MBR" or d.state == "blank":  # gdisk's in-memory GPT: its GUID, usable area and free
            d.label_id = d.first = d.usable = d.free = d.state = None  # space are not the disk's
        d.emit(parsed)


def _header_line(cur: _Disk | None, s: str, lineno: int, last: int, parsed: Parsed) -> None:
    if _SKIP.match(s) or _is_command(s, "gdisk") or _is_command(s, "sgdisk") or _is_command(s, "fdisk"):
        return
    if s.startswith(("Warning!", "You will need to", "Caution", "Problem:", "Warning:")):
        parsed.warnings.append(f"line {lineno}: {s}")
        return
    if cur is None:
        if any(w.startswith(f"line {n}: Warning!") for w in parsed.warnings[-1:] for n in (lineno - 1, lineno - 2)):
            parsed.warnings[-1] += f" {s}"  # gdisk wraps its warnings: 'Warning! ... by' / '33 blocks!'
            return
        raise ParseError(f"not gdisk output: {s[:80]!r}", line=lineno, expected="'Disk DEV: N sectors, SIZE'")
    cur.line_end = lineno
    if m := _SECTOR.match(s):
        cur.lsec = sector_sizes(m.group(1), None, lineno)[0]
    elif m := _SECTOR_LP.match(s):
        cur.lsec, cur.psec = sector_sizes(m.group(1), m.group(2), lineno)
    elif m := _USABLE.match(s):
        cur.first, cur.usable = int(m.group(1)), int(m.group(2)) - int(m.group(1)) + 1
    elif m := _FREE.match(s):
        cur.free = int(m.group(1))
    elif s.startswith("Disk identifier (GUID):"):
        cur.label_id = s.split(":", 1)[1].strip()
    elif _HEADER.match(s):
        if lineno >= last and cur.state != "blank":
            raise ParseError(
                "gdisk output ends after the column header", line=lineno, kind="truncated", expected="partition rows"
            )
    else:
        raise _cut(lineno, last, f"unexpected line in gdisk output: {s[:80]!r}", "gdisk -l header lines or the table")


def _row(cur: _Disk, pattern: re.Pattern, s: str, lineno: int, last: int) -> dict:
    m = pattern.match(s)
    if not m:
        raise _cut(lineno, last, f"not a gdisk partition row: {s[:80]!r}", "Number Start End Size [Code] Name")
    start, end = int(m.group(2)), int(m.group(3))
    if end < start:
        raise ParseError(f"partition ends ({end}) before it starts ({start})", line=lineno, expected="End >= Start")
    if m.group(4).isdigit() and int(m.group(4)) != (end - start + 1) * (cur.lsec or 512):  # BusyBox's bytes
        raise ParseError(
            f"Size {m.group(4)!r} is not the row's {end - start + 1} sectors", line=lineno, expected="Size"
        )
    name = m.group(6) or None
    converted = cur.table_type == "MBR"
    return {
        "index": int(m.group(1)),
        "start_sector": start,
        "size_sectors": end - start + 1,
        "type_id": m.group(5) or None,
        "type": name if converted else None,
        "name": None if converted else name,
        "line": lineno,
    }
