"""GNU ``parted``: machine output (``-m``) and the human table. See the package docstring for the format."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import cast

from ..base import Parsed, ParseError
from .common import _cut, _Disk, _is_command, _table_type, sector_sizes

# --- parted ----------------------------------------------------------------------------------

_PARTED_UNIT = re.compile(r"^(\d+)(s|B)$")
# parted's default ('compact') unit and its explicit decimal/binary units: rounded to the last printed digit
_PARTED_ROUNDED = re.compile(r"^(\d+)(?:\.(\d+))?(kB|MB|GB|TB|PB|EB|KiB|MiB|GiB|TiB|PiB|EiB)$")
_UNIT_BYTES = {u: 1000 ** (k + 1) for k, u in enumerate(("kB", "MB", "GB", "TB", "PB", "EB"))}
_UNIT_BYTES |= {u: 1024 ** (k + 1) for k, u in enumerate(("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"))}
_ROUNDED_WARNING = (
    "parted printed rounded sizes (its default unit): start_bytes/size_bytes are stored as printed, with "
    "rounded_to_bytes; their sectors and alignment are not known (run parted DEV unit s print)"
)


def _parted_rounded(value: str) -> tuple[int, int] | None:
    """A rounded parted value in bytes as printed and the bytes its last digit stands for ('1049kB' -> (1049000,
    1000), '17.4kB' -> (17400, 100)); None when it is not one."""
    m = _PARTED_ROUNDED.match(value.strip())
    if not m:
        return None
    unit, decimals = _UNIT_BYTES[m.group(3)], m.group(2) or ""
    scaled = Fraction(int(m.group(1) + decimals), 10 ** len(decimals)) * unit
    return round(scaled), max(1, round(Fraction(unit, 10 ** len(decimals))))


def _not_exact(value: str, lineno: int) -> ParseError:
    return ParseError(
        f"parted value {value!r} is not in sectors, bytes or a size unit",
        line=lineno,
        kind="unsupported-version",
        expected="parted DEV unit s print (or unit B, or the default unit)",
    )


def _parted_sectors(value: str, lsec: int, lineno: int, *, end: bool = False) -> int:
    m = _PARTED_UNIT.match(value.strip())
    if not m:
        raise _not_exact(value, lineno)
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


def _parted_part(index: int, start: str, end: str, size: str, lsec: int, lineno: int, parsed: Parsed) -> dict:
    """A partition's position: exact sectors, or (parted's rounded units) bytes as printed and their rounding."""
    if _PARTED_UNIT.match(start.strip()) and _PARTED_UNIT.match(end.strip()):
        first = _parted_sectors(start, lsec, lineno)
        return {
            "index": index,
            "start_sector": first,
            "size_sectors": _parted_sectors(end, lsec, lineno, end=True) - first + 1,
        }
    values = [_parted_rounded(v) or _exact_bytes(v, lsec) for v in (start, end, size)]
    bad = next((v for v, got in zip((start, end, size), values, strict=True) if got is None), None)
    if bad is not None:
        raise _not_exact(bad, lineno)
    if _ROUNDED_WARNING not in " ".join(parsed.warnings):
        parsed.warnings.append(f"line {lineno}: {_ROUNDED_WARNING}")
    printed = cast(list[tuple[int, int]], values)  # none is None (checked above)
    return {
        "index": index,
        "start_sector": None,
        "size_sectors": None,
        "start_bytes": printed[0][0],
        "size_bytes": printed[2][0],
        "rounded_to_bytes": max(v[1] for v in printed),
    }


def _exact_bytes(value: str, lsec: int) -> tuple[int, int] | None:
    """An exact value among rounded ones (a '0.00B' or '512B' cell): bytes, rounding 1 byte."""
    m = _PARTED_UNIT.match(value.strip())
    if not m:
        return None
    return int(m.group(1)) * (lsec if m.group(2) == "s" else 1), 1


def _disk_size(disk: _Disk, value: str, lineno: int) -> None:
    """The disk's printed size: sectors or bytes, or rounded (bytes as printed and their rounding)."""
    rounded = _parted_rounded(value)
    if rounded:
        disk.size_bytes, disk.size_rounded_to = rounded
    elif not _PARTED_UNIT.match(value):
        raise _not_exact(value, lineno)
    elif value.endswith("s"):
        disk.size_sectors = int(value[:-1])
    else:
        disk.size_bytes = int(value[:-1])


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
                cur.lsec, cur.psec = sector_sizes(fields[3], fields[4], lineno)
            except ValueError:
                raise ParseError(
                    f"unreadable sector sizes {fields[3]!r}/{fields[4]!r}", line=lineno, expected="integers (bytes)"
                ) from None
            _disk_size(cur, fields[1], lineno)
            if cur.size_bytes is not None and cur.size_rounded_to is None:
                cur.size_sectors = cur.size_bytes // cur.lsec
                cur.size_bytes = None
            cur.table_type = _table_type(fields[5])
            continue
        cur.line_end = lineno
        if len(fields) == 5 and fields[4] == "free":
            _add_free(cur, fields[3], lineno, parsed)
            continue
        if len(fields) < 7 or not fields[0].isdigit():
            raise _cut(
                lineno,
                last,
                f"not a parted -m partition line: {s[:80]!r}",
                "number:start:end:size:filesystem:name:flags;",
            )
        assert cur.lsec is not None  # read from the disk line
        part = _parted_part(int(fields[0]), fields[1], fields[2], fields[3], cur.lsec, lineno, parsed)
        cur.parts.append(
            part
            | {
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
# an interactive session (``parted DEV``, then commands at the ``(parted)`` prompt): its banner and prompts
_SESSION = re.compile(r"^(?:GNU Parted \S+|Using \S.*|Welcome to GNU Parted!.*|\(parted\)(?:\s.*)?)$")


# parted's answer to ``align-check TYPE N`` at its prompt: 'N aligned', 'N not aligned' and, from parted 3.4 on,
# 'N not aligned: 63s % 2048s != 0s' (parted.c do_align_check); with TYPE or N left out it asks for them first
# ('alignment type(min/opt)  [optimal]/minimal? ', 'Partition number? '), answered on the same line. In script
# mode (-s) it prints nothing (the exit code is the verdict).
_ALIGN_CMD = re.compile(r"^\(parted\)\s+align-check(?:\s+(\S+))?(?:\s+(\d+))?\s*$")
_ALIGN_ASK = re.compile(r"^(?:alignment type\(min/opt\).*\?\s*(\S+)|Partition number\?\s*(\d+))\s*$")
_ALIGN_ANSWER = re.compile(r"^(\d+) (aligned|not aligned)(?::\s*(.+))?$")
_ALIGN_TYPES = {"min": "minimal", "minimal": "minimal", "opt": "optimal", "optimal": "optimal"}


def _align_check(cur: _Disk | None, asked: dict, s: str, lineno: int, parsed: Parsed) -> bool:
    """One line of an ``align-check`` exchange (the command, parted's questions, its answer): True when ``s`` is
    one. The answer goes to the partition of that number in the disk listed last (``align_check``)."""
    m = _ALIGN_CMD.match(s)
    if m:
        asked.clear()
        asked.update(kind=_ALIGN_TYPES.get((m.group(1) or "").lower()), line=lineno)
        return True
    m = _ALIGN_ASK.match(s)
    if m and "line" in asked:
        if m.group(1):
            asked["kind"] = _ALIGN_TYPES.get(m.group(1).lower(), asked.get("kind"))
        return True
    m = _ALIGN_ANSWER.match(s)
    if not m or "line" not in asked:
        return False
    number, verdict = int(m.group(1)), m.group(2) + (f": {m.group(3).strip()}" if m.group(3) else "")
    part = next((p for p in (cur.parts if cur else []) if p.get("index") == number), None)
    if part is None:
        parsed.warnings.append(f"line {lineno}: parted align-check of partition {number}, not in the listing above")
    else:
        part["align_check"] = f"{asked.get('kind') or 'type not shown'}: {verdict}"
    asked.clear()
    return True


def _add_free(disk: _Disk, size: str, lineno: int, parsed: Parsed) -> None:
    if _PARTED_UNIT.match(size.strip()):
        disk.add_free(_parted_sectors(size, disk.lsec or 512, lineno))
    elif _parted_rounded(size) is None:
        raise _not_exact(size, lineno)
    else:
        parsed.warnings.append(f"line {lineno}: free space printed rounded ({size.strip()}): not summed")


def _parted_row(cur: _Disk, spans: list[tuple[str, int]], line: str, lineno: int, last: int, parsed: Parsed) -> None:
    s = line.strip()
    cells = {}
    for k, (label, at) in enumerate(spans):
        stop = spans[k + 1][1] if k + 1 < len(spans) else None
        cells[label] = line[at:stop].strip()
    if not cells.get("Start") or not cells.get("End"):
        raise _cut(lineno, last, f"parted row without Start/End: {s[:80]!r}", "a partition row")
    if not cells.get("Number"):
        if "Free Space" in line:
            _add_free(cur, cells["Size"], lineno, parsed)
            return
        raise _cut(lineno, last, f"parted row without Number: {s[:80]!r}", "a partition row")
    if not cells["Number"].isdigit():
        raise _cut(lineno, last, f"parted Number {cells['Number']!r}", "a partition number")
    part = _parted_part(
        int(cells["Number"]), cells["Start"], cells["End"], cells.get("Size", ""), cur.lsec or 512, lineno, parsed
    )
    cur.parts.append(
        part
        | {
            "type": cells.get("Type") or None,
            "filesystem": cells.get("File system") or None,
            "name": cells.get("Name") or None,
            "flags": cells.get("Flags") or None,
            "line": lineno,
        }
    )


def _parted_header_line(cur: _Disk, s: str, lineno: int, last: int, parsed: Parsed) -> None:
    m = re.match(r"^Disk (.+): (\S+)$", s)
    if m and not s.startswith("Disk Flags:"):
        cur.name = m.group(1)
        _disk_size(cur, m.group(2), lineno)
        return
    m = re.match(r"^Sector size \(logical/physical\): (\d+)B/(\d+)B$", s)
    if m:
        cur.lsec, cur.psec = sector_sizes(m.group(1), m.group(2), lineno)
        if cur.size_bytes is not None and cur.size_sectors is None and cur.size_rounded_to is None:
            cur.size_sectors = cur.size_bytes // cur.lsec
    elif s.startswith("Partition Table:"):
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


def _parse_parted_human(lines: list[str], parsed: Parsed, last: int) -> None:
    disks: list[_Disk] = []
    cur: _Disk | None = None
    spans: list[tuple[str, int]] | None = None
    asked: dict = {}  # an align-check exchange in progress
    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if _align_check(cur, asked, s, lineno, parsed):
            spans = None
            continue
        if not s or _SESSION.match(s):
            spans = None if not s or s.startswith("(parted)") else spans
            continue
        if s.startswith("Model:"):
            cur, spans = _Disk(None, lineno), None
            disks.append(cur)
            continue
        if cur is None:
            if _is_command(s, "parted"):
                continue
            if s.startswith(("Error:", "Warning:", "Information:")):
                # parted's message about the disk it prints next ('Error: /dev/sdb: unrecognised disk label'
                # before the listing of an unlabelled disk, or of one disk among others in parted -l)
                parsed.warnings.append(f"line {lineno}: {s}")
                continue
            raise ParseError(f"not parted output: {s[:80]!r}", line=lineno, expected="'Model: ...' line")
        cur.line_end = lineno
        if spans is not None:
            _parted_row(cur, spans, line, lineno, last, parsed)
        elif s.startswith("Number") and "Start" in s:
            spans = sorted(
                ((label, line.index(label)) for label in _PARTED_LABELS if label in line), key=lambda x: x[1]
            )
            if lineno >= last:
                raise ParseError(
                    "parted output ends after the column header",
                    line=lineno,
                    kind="truncated",
                    expected="partition rows",
                )
        else:
            _parted_header_line(cur, s, lineno, last, parsed)
    if not disks:
        raise ParseError("no parted 'Model:' block found", line=1, expected="parted DEV unit s print output")
    for disk in _one_listing_a_disk(disks, parsed):
        disk.emit(parsed)


def _one_listing_a_disk(disks: list[_Disk], parsed: Parsed) -> list[_Disk]:
    """A session that prints a disk twice (``print``, then ``unit s`` and ``print`` again) lists it once: its last
    exact listing (else its last), the others named in a warning."""

    def exact(d: _Disk) -> bool:
        return d.size_rounded_to is None and all(p.get("rounded_to_bytes") is None for p in d.parts)

    keep: dict[str | None, _Disk] = {}
    for d in disks:
        kept = keep.get(d.name)
        if kept is None or exact(d) or not exact(kept):
            keep[d.name] = d
    for d in disks:
        kept = keep[d.name]
        if d is not kept:
            parsed.warnings.append(
                f"line {d.line_start}: {d.name} is printed again at line {kept.line_start}"
                f"{' in exact units' if exact(kept) and not exact(d) else ''}: that listing is kept"
            )
    for d in reversed(disks):  # the latest verdict on a partition wins
        if d is not keep[d.name]:
            _carry_align_checks(d, keep[d.name], parsed)
    return [d for d in disks if keep[d.name] is d]


def _start_span(disk: _Disk, part: dict) -> tuple[int, int]:
    """A partition's start in bytes and how far off the printed value may be (0 when printed in sectors)."""
    if part.get("start_sector") is not None:
        return part["start_sector"] * (disk.lsec or 512), 0
    return part["start_bytes"], part.get("rounded_to_bytes") or 0


def _carry_align_checks(dropped: _Disk, kept: _Disk, parsed: Parsed) -> None:
    """parted's align-check verdicts given under a listing that is not kept (``print``, ``align-check opt 1``,
    then ``unit s print``) go to the same partition of the kept listing: same number and a start that agrees
    within the rounding of the printed values. A verdict the kept listing already has (asked after it) wins."""
    for part in dropped.parts:
        if not part.get("align_check"):
            continue
        same = next((p for p in kept.parts if p.get("index") == part["index"]), None)
        if same is not None and same.get("align_check"):
            continue
        if same is not None:
            (a, ra), (b, rb) = _start_span(dropped, part), _start_span(kept, same)
            if abs(a - b) <= max(ra, rb):
                same["align_check"] = part["align_check"]
                continue
        parsed.warnings.append(
            f"line {part['line']}: parted's align-check of partition {part['index']} is not kept: the listing at "
            f"line {kept.line_start} has no partition {part['index']} that starts where that one did"
        )
