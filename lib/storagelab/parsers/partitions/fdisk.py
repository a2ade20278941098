"""util-linux ``fdisk -l`` (also ``sfdisk -l`` of util-linux >= 2.26). See the package docstring for the format."""

from __future__ import annotations

import re

from ..base import Parsed, ParseError
from .common import _cut, _Disk, _index_of, _is_command, _table_type, sector_sizes

# --- fdisk -l --------------------------------------------------------------------------------

_FDISK_DISK = re.compile(r"^Disk (.+?): (?:[^,]*), (\d+) bytes(?:, (\d+) sectors)?\s*$")
_FDISK_GEOM = re.compile(r"^\d+ heads, \d+ sectors/track, \d+ cylinders(?:, total (\d+) sectors)?")
_FDISK_UNITS = re.compile(r"^Units(?::| =) (sectors|cylinders) of (\d+) \* (\d+) = (\d+) bytes")
_FDISK_SECTOR = re.compile(r"^Sector size \(logical/physical\): (\d+) bytes / (\d+) bytes")
_FDISK_NOTABLE = re.compile(r"^Disk (.+) doesn't contain a valid partition table")
_FDISK_HEADER = re.compile(r"^\s*(Device|Slice)\s+.*\bStart(?:LBA)?\s+End(?:LBA)?\b")  # BusyBox: StartLBA EndLBA
_BUSYBOX_GEOM = re.compile(r"^\d+ cylinders, \d+ heads, \d+ sectors/track$")
_BUSYBOX_NOTE = re.compile(r"^Note: sector size is \d+ \(not \d+\)$")
_PROMPT = re.compile(r"^Command \(m for help\):")  # fdisk's interactive prompt (util-linux, BusyBox)
# the note BusyBox's interactive fdisk prints before its prompt on a disk of more than 1024 cylinders
_BUSYBOX_CYLINDERS = re.compile(
    r"^(?:The number of cylinders for this disk is set to \d+\.|There is nothing wrong with that, but this is "
    r"larger than 1024,|and could in certain setups cause problems with:|1\) software that runs at boot time .*|"
    r"2\) booting and partitioning software from other OSs|\(e\.g\., DOS FDISK, OS/2 FDISK\))$"
)
_FDISK_NOTE = re.compile(r"^(Partition \d+ |Partition table entries |WARNING|The (primary|backup) |\s+phys=)")
_FDISK_TEXT_COLS = ("Type", "System", "Name")


def _fdisk_row(cols: list[str], line: str, lineno: int, last: int) -> dict:
    tokens = line.split()
    expected = "a partition row matching the header: " + " ".join(cols)
    values: dict[str, str] = {cols[0]: tokens[0]}
    pos = 1
    rest = cols[1:]
    if rest and rest[0] == "Boot":
        if len(tokens) > 1 and tokens[1] == "*":
            values["Boot"] = "*"
            pos = 2
        rest = rest[1:]
    texts = [c for c in rest if c in _FDISK_TEXT_COLS]
    if len(texts) > 1:
        raise ParseError(
            "fdisk columns with two free-text columns cannot be split",
            line=lineno,
            kind="unsupported-version",
            expected="fdisk -l with its default columns",
        )
    text_col = texts[0] if texts else None
    front = rest[: rest.index(text_col)] if text_col else rest
    back = rest[rest.index(text_col) + 1 :] if text_col else []
    have = len(tokens) - pos
    if (have < len(front) + len(back) + 1) if text_col else (have != len(front)):
        raise _cut(lineno, last, f"fdisk row has {len(tokens)} fields: {line.strip()[:80]!r}", expected)
    for c in front:
        values[c] = tokens[pos]
        pos += 1
    end = len(tokens)
    for c in reversed(back):
        end -= 1
        values[c] = tokens[end]
    if text_col:
        values[text_col] = " ".join(tokens[pos:end])
    try:
        start, stop = int(values.get("Start") or values["StartLBA"]), int(values.get("End") or values["EndLBA"])
        size = int(values["Sectors"]) if "Sectors" in values else stop - start + 1
    except (KeyError, ValueError):
        raise _cut(lineno, last, f"unreadable Start/End/Sectors in {line.strip()[:80]!r}", expected) from None
    if stop - start + 1 != size:
        raise ParseError(f"Start {start}, End {stop} and Sectors {size} disagree", line=lineno, expected=expected)
    if "Id" in values and not re.fullmatch(r"[0-9a-fA-F]{1,2}", values["Id"]):  # reliability-33: `208 845` was
        # read as Start 208, End 845 (the columns shifted, '488282161+' taken for the Id), exit 0
        raise ParseError(f"unreadable Id {values['Id']!r} in {line.strip()[:80]!r}", line=lineno, expected=expected)
    device = values[cols[0]]
    return {
        "device": device,
        "index": _index_of(device),
        "start_sector": start,
        "size_sectors": size,
        "type": values.get("Type") or values.get("System"),
        "type_id": values.get("Id"),
        "name": values.get("Name"),
        "flags": "boot" if values.get("Boot") else None,
        "line": lineno,
    }


def _parse_fdisk(lines: list[str], parsed: Parsed, last: int) -> None:
    cur: _Disk | None = None
    cols: list[str] | None = None
    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if not s or _PROMPT.match(s) or _BUSYBOX_NOTE.match(s) or _BUSYBOX_CYLINDERS.match(s):
            cols = None  # a note BusyBox prints before the disk: its sector size is in the Units line too
            continue
        m = _FDISK_DISK.match(s)
        if m:
            if cur:
                _finish(cur, parsed)
            cur, cols = _Disk(m.group(1), lineno), None
            cur.size_bytes = int(m.group(2))
            cur.size_sectors = int(m.group(3)) if m.group(3) else None
            continue
        if cur is None:
            if _is_command(s, "fdisk") or _is_command(s, "sfdisk"):
                continue
            raise ParseError(
                f"not an fdisk line: {s[:80]!r}", line=lineno, expected="'Disk DEV: SIZE, N bytes[, N sectors]'"
            )
        cur.line_end = lineno
        if cols is not None:
            if _FDISK_NOTE.match(line):
                parsed.warnings.append(f"line {lineno}: {s}")
                continue
            part = _fdisk_row(cols, line, lineno, last)
            if cur.table_type is None:
                cur.table_type = "MBR"  # util-linux 2.20 printed no 'Disklabel type:' and only knew dos
            cur.parts.append(part)
            continue
        if _FDISK_HEADER.match(line):
            cols = line.split()
            if lineno >= last:
                raise ParseError(
                    "fdisk output ends after the column header",
                    line=lineno,
                    kind="truncated",
                    expected="partition rows",
                )
            continue
        m = _FDISK_UNITS.match(s)
        if m:
            if m.group(1) == "cylinders":
                raise ParseError(
                    "fdisk printed cylinder units (not exact)",
                    line=lineno,
                    kind="unsupported-version",
                    expected="sector units: fdisk -l -u (util-linux >= 2.23 default)",
                )
            cur.lsec = cur.lsec or sector_sizes(m.group(3), None, lineno)[0]
            continue
        m = _FDISK_SECTOR.match(s)
        if m:
            cur.lsec, cur.psec = sector_sizes(m.group(1), m.group(2), lineno)
            continue
        m = _FDISK_GEOM.match(s)
        if m:
            cur.size_sectors = cur.size_sectors or (int(m.group(1)) if m.group(1) else None)
            continue
        if s.startswith(("Disklabel type:", "Disk label type:")):  # util-linux 2.23-2.25 wrote two words
            cur.table_type = _table_type(s.split(":", 1)[1].strip())
        elif s.startswith("Disk identifier:"):
            cur.label_id = s.split(":", 1)[1].strip()
        elif s.startswith(("I/O size", "Disk model:", "Alignment offset:")) or _BUSYBOX_GEOM.match(s):
            pass
        elif _FDISK_NOTABLE.match(s) or _FDISK_NOTE.match(line):
            parsed.warnings.append(f"line {lineno}: {s}")
        elif not s.isascii() and next((ln.strip() for ln in lines[lineno:] if ln.strip()), "").startswith("/dev/"):
            raise ParseError(
                f"the column header of the table is not in English: {s[:80]!r}",
                line=lineno,
                kind="unsupported-version",
                expected="fdisk -l run in the C locale (LC_ALL=C fdisk -l): Device, Boot, Start, End, Sectors, ...",
            )
        else:
            raise _cut(
                lineno,
                last,
                f"unexpected line in fdisk output: {s[:80]!r}",
                "fdisk -l header lines (Units, Sector size, Disklabel type, Disk identifier) or the table",
            )
    if cur is None:
        raise ParseError("no 'Disk ...' line found", line=1, expected="fdisk -l output")
    _finish(cur, parsed)


def _finish(cur: _Disk, parsed: Parsed) -> None:
    """The disk's rows, once its sector count agrees with its bytes (BusyBox counts 512-byte sectors in the 'Disk'
    line whatever the sector size), and a warning when the table is a GPT's protective MBR."""
    lsec = cur.lsec or 512
    if cur.size_bytes is not None and (cur.size_sectors is None or cur.size_sectors * lsec != cur.size_bytes):
        if cur.size_sectors is not None:
            parsed.warnings.append(
                f"line {cur.line_start}: {cur.size_sectors} sectors of {lsec} bytes are not the {cur.size_bytes} "
                f"bytes printed: {cur.size_bytes // lsec} sectors (the bytes) kept"
            )
        cur.size_sectors = cur.size_bytes // lsec
    if cur.table_type == "MBR" and [p.get("type_id") for p in cur.parts] == ["ee"]:
        parsed.warnings.append(
            f"line {cur.parts[0]['line']}: {cur.name} holds a GPT: this is its protective MBR (one type-ee partition); "
            "run gdisk -l or sgdisk -p (or a fdisk that reads GPT) for its partitions"
        )
    cur.emit(parsed)


# --- fdisk in another language ---------------------------------------------------------------
# 'Festplatte dos63.img: 64 MiB, 67108864 Bytes, 131072 Sektoren' / 'Disque X : 64 MiB, 67108864 octets, 131072
# secteurs' and a units line 'Einheiten: Sektoren von 1 * 512 = 512 Bytes' ('1 × 512'): the layout of fdisk -l with
# every word translated. util-linux 2.33+ prints the disk's model between the two on a real disk ('Festplattenmodell:
# SanDisk SD8SBAT2'), image files have none
_SP = "[ \\xa0\\u202f]"  # a space; French puts no-break spaces before units and colons
_DISK_LOCALIZED = rf"^\S+ .+?{_SP}?: [\d.,]+{_SP}\S+, \d+{_SP}\S+, \d+{_SP}\S+[ \t]*$"
_MODEL_LOCALIZED = rf"(?:[^\n:]+{_SP}?: [^\n]*\n)?"
SNIFF_LOCALIZED = re.compile(
    rf"{_DISK_LOCALIZED}\n{_MODEL_LOCALIZED}[^\n:]+{_SP}?: [^\n]*\b1 [*×] \d+ = \d+{_SP}", re.M
)


def refuse_localized(lines: list[str]) -> None:
    """fdisk -l printed in another language: its words cannot be mapped, so the file is refused with the fix."""
    disk = re.compile(_DISK_LOCALIZED)
    lineno, first = next(((n, ln.strip()) for n, ln in enumerate(lines, 1) if disk.match(ln)), (1, ""))
    raise ParseError(
        f"fdisk -l output in another language than English: {first[:80]!r}",
        line=lineno,
        kind="unsupported-version",
        expected="fdisk -l run in the C locale (LC_ALL=C fdisk -l): Disk, Units, Device, Boot, Start, End, ...",
    )
