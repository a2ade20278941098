"""util-linux ``sfdisk -d`` (both forms) and the old ``sfdisk -l`` (util-linux <= 2.25). See the package docstring for the format."""

from __future__ import annotations

import re

from ..base import Parsed, ParseError
from .common import _cut, _Disk, _disk_of, _index_of, _is_command, _table_type, sector_sizes

# --- sfdisk -d -------------------------------------------------------------------------------

_SFDISK_KEY = re.compile(r"^(label|label-id|device|unit|first-lba|last-lba|sector-size|table-length|grain):\s*(.*)$")
_SFDISK_ROW = re.compile(r"^(\S.*?)\s*:\s*(start\s*=.*)$")
_SFDISK_OLD = re.compile(r"^# partition table of (.+)$")


def _sfdisk_fields(text: str, lineno: int, last: int) -> dict[str, str]:
    fields: dict[str, str] = {}
    if text.replace('\\"', "").count('"') % 2:
        raise _cut(lineno, last, f"unterminated quoted value in {text[:80]!r}", 'key="value"')
    for item in re.findall(r'(?:[^,"]|"(?:[^"\\]|\\.)*")+', text):
        item = item.strip()
        if "=" in item:
            key, value = item.split("=", 1)
            value = value.strip()
            if value.startswith('"') and value.endswith('"') and len(value) >= 2:
                value = value[1:-1].replace('\\"', '"')
            fields[key.strip().lower()] = value
        elif item[:1].isdigit():  # reliability-33: `start=2,099,200` was read as start=2 (and flags '099', '200')
            raise _cut(lineno, last, f"cannot read {item!r} in {text[:80]!r} (a thousands separator?)", "key=N")
        elif item:
            fields[item.lower()] = ""
    return fields


def _parse_sfdisk(lines: list[str], parsed: Parsed, last: int) -> None:
    disks: list[_Disk] = []
    cur: _Disk | None = None
    first = lastlba = None

    def new(lineno: int) -> _Disk:
        nonlocal cur, first, lastlba
        if cur is not None:
            disks.append(cur)
        cur, first, lastlba = _Disk(None, lineno), None, None
        return cur

    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            continue
        m = _SFDISK_OLD.match(s)
        if m:
            cur = new(lineno)
            cur.name, cur.table_type = m.group(1).strip(), "MBR"
            continue
        m = _SFDISK_KEY.match(s)
        if m:
            key, value = m.group(1), m.group(2).strip()
            if cur is None or cur.parts or (key == "label" and cur.table_type is not None):
                cur = new(lineno)
            cur.line_end = lineno
            if key == "label":
                cur.table_type = _table_type(value)
            elif key == "label-id":
                cur.label_id = value
            elif key == "device":
                cur.name = value
            elif key == "unit" and value != "sectors":
                raise ParseError(
                    f"sfdisk unit {value!r}", line=lineno, kind="unsupported-version", expected="unit: sectors"
                )
            elif key == "sector-size":
                cur.lsec = sector_sizes(value, None, lineno)[0] if _is_uint(value) else None
                if cur.lsec is None:
                    raise ParseError(f"unreadable sector-size {value!r}", line=lineno, expected="an integer")
            elif key in ("first-lba", "last-lba"):
                if not _is_uint(value):
                    raise ParseError(f"unreadable {key} {value!r}", line=lineno, expected="an integer")
                first, lastlba = (int(value), lastlba) if key == "first-lba" else (first, int(value))
                cur.first = first
                cur.usable = lastlba - first + 1 if first is not None and lastlba is not None else None
                if lastlba is not None:
                    cur.size_sectors, cur.size_source = lastlba + 1, "usable-end"
            continue
        m = _SFDISK_ROW.match(s)
        if not m:
            if cur is None and (_is_command(s, "sfdisk") or s.startswith("#")):
                continue
            raise _cut(
                lineno,
                last,
                f"not an sfdisk dump line: {s[:80]!r}",
                "'label: ...' header lines or 'DEV : start=N, size=N, type=...'",
            )
        if cur is None:
            cur = new(lineno)
        cur.line_end = lineno
        fields = _sfdisk_fields(m.group(2), lineno, last)
        try:
            start, size = _uint(fields["start"]), _uint(fields["size"])
        except (KeyError, ValueError):
            raise _cut(
                lineno,
                last,
                f"sfdisk row without readable start=/size=: {s[:80]!r}",
                "'DEV : start=N, size=N, type=...'",
            ) from None
        if size == 0:
            continue  # unused slot of the old format: start=0, size=0, Id= 0
        device = m.group(1)
        flags = [f for f in ("bootable",) if f in fields]
        flags = ["boot"] if flags else []
        if fields.get("attrs"):
            flags.append(fields["attrs"])
        cur.parts.append(
            {
                "device": device,
                "index": _index_of(device),
                "start_sector": start,
                "size_sectors": size,
                "type_id": fields.get("type", fields.get("id")),
                "name": fields.get("name"),
                "flags": ", ".join(flags) or None,
                "line": lineno,
            }
        )
    if cur is None:
        raise ParseError("no sfdisk dump found", line=1, expected="sfdisk -d output")
    disks.append(cur)
    _emit_dumps(disks, parsed)


def _is_uint(text: str) -> bool:
    """A sector number as sfdisk prints it: ASCII digits only (``str.isdigit`` also takes ``²``, which ``int``
    refuses; ``int`` also reads ``-5``, ``+5`` and ``1_000``)."""
    return text.isascii() and text.isdigit()


def _uint(text: str) -> int:
    if not _is_uint(text):
        raise ValueError(text)
    return int(text)


def _emit_dumps(disks: list[_Disk], parsed: Parsed) -> None:
    """Each dump's rows: its disk named after its first partition when no 'device:' line said, 512 assumed (and
    said) when no 'sector-size:' line did."""
    for d in disks:
        if d.name is None and d.parts:
            d.name = _disk_of(d.parts[0]["device"])
        if d.lsec is None:
            d.lsec, d.source = 512, "assumed"
            parsed.warnings.append(f"line {d.line_start}: sfdisk printed no sector-size: 512 assumed")
        d.emit(parsed)


# --- sfdisk -l of util-linux <= 2.25 --------------------------------------------------------

_SFL_DISK = re.compile(r"^Disk (\S+): (\d+) cylinders, (\d+) heads, (\d+) sectors/track\s*$")
_SFL_UNITS = re.compile(
    r"^Units(?::| =) (?:(cylinders) of (\d+) bytes|(sectors) of (\d+) bytes|(blocks) of 1024 bytes|"
    r"(1MiB) = 1024\*1024 bytes)(?:, blocks of 1024 bytes)?, counting from (\d+)\s*$"
)
_SFL_HEADER = re.compile(
    r"^\s*Device\s+Boot\s+Start\s+End\s+(#cyls\s+#blocks|#sectors|#blocks|MiB\s+#blocks)"
    r"\s+Id\s+System\s*$"
)
_SFL_ROW = re.compile(
    r"^(/\S+)\s+(\*\s+)?(\d+)([+ ]?)\s+(?:(\d+)[- ]?|-)\s+(?:(\d+)[+-]?\s+)?(\d+)(\+?)\s+"
    r"([0-9a-fA-F]{1,2})\s+(.*?)\s*$"
)
# what sfdisk prints besides tables: its own messages and warnings, geometry notes, empty disks
_SFL_NOTE = re.compile(
    r"^(sfdisk:|Warning|WARNING|\s+for C/H/S=|For this listing|No partitions found|/\S+: "
    r"unrecognized partition|\s+start: |\s+end: |Checking that no-one|OK$|DOS and Linux will "
    r"interpret)"
)


def _mib_off(columns: str | None, mib: str | None, blocks: str) -> bool:
    """reliability-34: `1 024` (Start 1, End 24, the End taken for a #cyls column) and `#blocks 1 048 576` (1 block)
    were stored with exit 0: under 'MiB #blocks' the two columns must agree (to a MiB)."""
    return columns == "MiB" and int(blocks) > 0 and (mib is None or abs(int(mib) * 1024 - int(blocks)) > 1024)


def _parse_sfdisk_legacy(lines: list[str], parsed: Parsed, last: int) -> None:
    disks: list[_Disk] = []
    cur: _Disk | None = None
    unit: int | None = None  # sectors per unit of Start/End
    inc: int | None = None  # 'counting from'
    columns = None
    unknown: list[str] = []
    for lineno, line in enumerate(lines, 1):
        s = line.rstrip()
        if not s.strip():
            continue
        m = _SFL_DISK.match(s)
        if m:
            cur = _Disk(m.group(1), lineno)
            disks.append(cur)
            unit = columns = None
            continue
        if cur is None:
            if _is_command(s, "sfdisk") or _SFL_NOTE.match(s):
                continue
            raise ParseError(
                f"not an sfdisk -l disk line: {s.strip()[:80]!r}",
                line=lineno,
                expected="'Disk DEV: N cylinders, N heads, N sectors/track'",
            )
        m = _SFL_UNITS.match(s)
        if m:
            cyl, cyl_bytes, sec, sec_bytes, blocks, mib, counting = m.groups()
            if sec is not None:
                cur.lsec, unit = int(sec_bytes), 1
            else:
                cur.lsec = 512  # the old sfdisk counts 512-byte sectors whatever the disk
                unit = int(cyl_bytes) // 512 if cyl else 2 if blocks else 2048
            inc = int(counting)
            cur.source = "printed" if sec else "assumed"
            cur.table_type = "MBR"
            cur.line_end = lineno
            continue
        m = _SFL_HEADER.match(s)
        if m:
            if unit is None:
                raise ParseError(
                    "sfdisk -l column header before its Units line",
                    line=lineno,
                    expected="'Units: ... counting from N'",
                )
            columns = m.group(1).split()[0]
            cur.line_end = lineno
            continue
        if _SFL_NOTE.match(s):
            continue
        m = _SFL_ROW.match(s)
        if not m or columns is None:
            raise _cut(
                lineno,
                last,
                f"not an sfdisk -l partition row: {s.strip()[:80]!r}",
                "'DEV [*] Start End [#cyls|MiB] [#blocks|#sectors] Id System' after the column header",
            )
        device, boot, start, plus, end, middle, size, odd, type_id, system = m.groups()
        if (middle is not None and columns in ("#sectors", "#blocks")) or _mib_off(columns, middle, size):
            raise ParseError(f"sfdisk -l row unreadable: {s.strip()[:80]!r}", line=lineno, expected=columns)  # r34
        assert unit is not None and inc is not None  # the column header comes after the Units line
        cur.line_end = lineno
        size = int(size)
        if columns != "#sectors":  # the size column is #blocks of 1024 bytes; '+' marks an odd sector
            size = size * 2 + (odd == "+")
        if size == 0:
            continue  # unused slot
        start_sector = None if plus == "+" else (int(start) - inc) * unit
        if start_sector is None:
            unknown.append(f"{device} ({start}+)")
        elif start_sector < 0:
            raise ParseError(f"start {start} before the first unit", line=lineno, expected="a start >= counting from")
        cur.parts.append(
            {
                "device": device,
                "index": _index_of(device),
                "start_sector": start_sector,
                "size_sectors": size,
                "type_id": type_id.lower(),
                "type": system or None,
                "flags": "boot" if boot else None,
                "line": lineno,
            }
        )
    if not disks:
        raise ParseError(
            "no sfdisk -l disk found", line=1, expected="'Disk DEV: N cylinders, N heads, N sectors/track'"
        )
    if unknown:
        parsed.warnings.append(
            "starts not on a unit boundary ('N+'), so their sector and alignment are unknown "
            "(sfdisk -luS prints sectors): " + ", ".join(unknown)
        )
    for disk in disks:
        disk.size_source = None
        disk.emit(parsed)


# --- parted ----------------------------------------------------------------------------------
