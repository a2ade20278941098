"""Partition tables: FreeBSD ``gpart show``, util-linux ``fdisk -l`` and ``sfdisk -d``, GNU ``parted``.

One row per real partition (free-space rows are summed into ``disks.free_sectors``) and one row
per disk/geom. Sectors are the table's logical sectors; ``*_bytes`` columns multiply by the
logical sector size. ``alignment()`` is the verdict (4 KiB and 1 MiB) every row carries.

Formats (checked against real outputs in tests/fixtures/partitions/, see COMMANDS.md there):

* ``gpart`` (``gpart show [-l|-r|-p]``): ``=>  first  usable  geom  SCHEME  (media) [CORRUPT]``,
  then ``start  sectors  index|provider  type [attrs] (human)`` and ``- free -`` rows.
  gpart prints no sector size. 512 is assumed and checked against the human sizes in
  parentheses (sectors x sector size); when they fit 4096 instead (a 4Kn disk), 4096 is used
  and a warning says so (``logical_sector_source``). The physical size is never printed: NULL.
  The header's numbers are the usable area, not the disk, whose size gpart prints only rounded
  (``media_size_text``, kept as printed): ``disks.size_sectors`` is the end of the usable area
  (first + usable sectors), a lower bound a few dozen sectors short of the disk (the backup GPT
  is not shown), and ``size_source`` says so. A BSD label inside an MBR slice
  (``ada0s1``) has offsets relative to the slice; when the slice is listed in the same output,
  ``abs_start_sector`` adds the slice's start, and the alignment uses it. ``gpart show -l`` prints
  labels where the type was: after a command line with ``-l`` (a transcript) the rows give
  ``name`` (``(null)``: none) and no type, and a ``-l`` table of a geom shown before with the same
  partitions adds its labels to that table's rows instead of listing the disk twice. Without the
  command line a ``-l`` table cannot be told from a plain one: its labels read as types.
  Command lines may come before any table and between tables.
* ``fdisk`` (``fdisk -l``, also ``sfdisk -l``): util-linux >= 2.26 (``Units: sectors``,
  ``Disklabel type:``, ``Sectors``/``Size`` columns) and the 2.20 layout (``Units = sectors``,
  ``Blocks`` with ``+``, ``Id  System``). Cylinder units are refused (not exact).
* ``sfdisk-l`` (``sfdisk -l`` of util-linux <= 2.25, the old sfdisk): ``Disk DEV: C cylinders, H heads,
  S sectors/track``, ``Units: cylinders of N bytes, blocks of 1024 bytes, counting from 0`` (the default,
  ``-uC``), ``Units: sectors of 512 bytes`` (``-uS``), ``blocks of 1024 bytes`` (``-uB``) or ``1MiB``
  (``-uM``), then ``Device Boot Start End [#cyls|#sectors|MiB] [#blocks] Id System`` rows. A start not on
  a unit boundary is printed rounded down with ``+`` (an end rounded up with ``-``): such a start (every
  ``0+`` of a cylinder listing) is not known to the sector, so its sector and alignment are NULL and a
  warning says so. Sizes are exact: ``#sectors``, or ``#blocks`` x 2 (+1 for a ``+``: an odd sector
  count). Unused slots (``0 - 0 0 0 Empty``) are skipped; a disk with no table gives a disks row.
* ``sfdisk`` (``sfdisk -d``): ``label:``/``device:``/``sector-size:`` header and
  ``DEV : start=, size=, type=, uuid=, name=, attrs=, bootable`` rows; the old
  ``# partition table of DEV`` / ``Id=83`` form (no sector size: 512 assumed). Unused slots
  (``size=0``) are skipped.
* ``parted``: machine output (``parted -m DEV unit s print``; ``BYT;`` then
  ``path:size:transport:logical:physical:label:model:flags;`` and
  ``number:start:end:size:fs:name:flags;``) and the human table (``parted DEV unit s print``).
  Only exact units are accepted, sectors (``63s``) or bytes (``32256B``); parted's default
  rounded units (``32.3kB``) are refused.

``table_type`` is normalised: fdisk/sfdisk ``dos`` and parted ``msdos`` are ``MBR``; ``gpt`` is
``GPT``; gpart schemes as printed (``MBR``, ``GPT``, ``BSD``, ``EBR``...); other labels upper-cased.
"""

from __future__ import annotations

import math
import re

from ..units import MiB, UnitError, zfs_nicenum
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, table

TOOL = "partitions"
PARSER_VERSION = 1
FORMATS = ("gpart", "fdisk", "sfdisk", "sfdisk-l", "parted")

_SOURCE_DOC = (
    "how logical_sector_bytes is known: 'printed' by the tool, 'checked' (gpart: 512 assumed and consistent "
    "with the printed human sizes), 'inferred' (gpart: 4096, from the human sizes), 'assumed' (512, nothing "
    "printed to check it against)"
)

TABLES = {
    "partitions": table(
        "One row per partition of a partition table (gpart/fdisk/sfdisk/parted); free-space rows are not stored.",
        ("disk", "VARCHAR", "disk or geom the table belongs to, as printed (ada3, ada0s1, /dev/sda, gpt.img)"),
        ("table_type", "VARCHAR", "MBR (dos/msdos), GPT, BSD, EBR, ... (normalised, see module doc)"),
        ("index", "INTEGER", "partition number (gpart index, fdisk/sfdisk device suffix, parted Number)"),
        ("device", "VARCHAR", "partition device as printed (fdisk/sfdisk, gpart -p); else NULL"),
        ("start_sector", "BIGINT", "first sector as printed (relative to the table's disk/geom), logical sectors"),
        ("end_sector", "BIGINT", "last sector (inclusive), logical sectors"),
        ("size_sectors", "BIGINT", "length, logical sectors"),
        (
            "abs_start_sector",
            "BIGINT",
            "first sector on the underlying disk: start_sector plus the start of the enclosing slice for a gpart BSD "
            "label "
            "inside an MBR slice listed in the same output; else = start_sector",
        ),
        ("logical_sector_bytes", "INTEGER", "logical sector size, bytes"),
        ("physical_sector_bytes", "INTEGER", "physical sector size, bytes, where printed (fdisk, parted); else NULL"),
        ("logical_sector_source", "VARCHAR", _SOURCE_DOC),
        (
            "start_bytes",
            "BIGINT",
            "byte offset of the partition on the underlying disk (abs_start_sector x logical size)",
        ),
        ("size_bytes", "BIGINT", "length, bytes"),
        (
            "type",
            "VARCHAR",
            "type as named: gpart type (freebsd-zfs), fdisk Type/System (Linux), parted msdos Type "
            "(primary/extended/logical)",
        ),
        ("type_id", "VARCHAR", "type code: MBR id in hex (fdisk Id, sfdisk type=/Id=) or GPT type GUID (sfdisk)"),
        ("name", "VARCHAR", "partition name/label (GPT name: sfdisk name=, parted Name; gpart -l label)"),
        ("filesystem", "VARCHAR", "file system parted detected (parted 'File system'); else NULL"),
        (
            "flags",
            "VARCHAR",
            "flags/attributes as printed, comma-separated (boot, esp, active, bootme, lba...); "
            "the fdisk Boot '*' and sfdisk 'bootable' are stored as 'boot'",
        ),
        ("align_4k_rem_bytes", "BIGINT", "start_bytes mod 4096, bytes (0 = aligned to 4 KiB)"),
        ("align_1m_rem_bytes", "BIGINT", "start_bytes mod 1048576, bytes (0 = aligned to 1 MiB)"),
        ("aligned_4k", "BOOLEAN", "start_bytes is a multiple of 4096"),
        ("aligned_1m", "BOOLEAN", "start_bytes is a multiple of 1 MiB"),
        *LINES,
    ),
    "disks": table(
        "One row per disk/geom of a partition-table listing (also disks without a table).",
        ("disk", "VARCHAR", "disk or geom as printed"),
        ("table_type", "VARCHAR", "MBR, GPT, BSD, ... (normalised); NULL when the disk has no partition table"),
        ("label_id", "VARCHAR", "disk identifier (fdisk 'Disk identifier', sfdisk label-id)"),
        ("size_sectors", "BIGINT", "disk size, logical sectors (see size_source); NULL when not known"),
        ("size_bytes", "BIGINT", "disk size, bytes (size_sectors x logical size, or as printed)"),
        (
            "size_source",
            "VARCHAR",
            "'printed' (fdisk, parted: the whole disk) or 'usable-end' (gpart header first + usable sectors, sfdisk "
            "last-lba + 1: where the usable area ends, a lower bound, short of the disk by the backup GPT and "
            "alignment slack); NULL when no size is known (sfdisk -d of an MBR)",
        ),
        ("usable_first_sector", "BIGINT", "first usable sector (gpart header, sfdisk first-lba); else NULL"),
        ("usable_sectors", "BIGINT", "usable sectors (gpart header, sfdisk last-lba - first-lba + 1); else NULL"),
        (
            "free_sectors",
            "BIGINT",
            "sum of the free-space rows printed (gpart, parted print free); NULL when none printed",
        ),
        ("partitions", "INTEGER", "partitions stored for this disk, count"),
        ("logical_sector_bytes", "INTEGER", "logical sector size, bytes"),
        ("physical_sector_bytes", "INTEGER", "physical sector size, bytes, where printed; else NULL"),
        ("logical_sector_source", "VARCHAR", _SOURCE_DOC),
        ("media_size_text", "VARCHAR", "gpart's media size in parentheses as printed (3.6T); else NULL"),
        ("state", "VARCHAR", "gpart header state tag (CORRUPT); else NULL"),
        *LINES,
    ),
}


# --- the alignment verdict -------------------------------------------------------------------


def alignment(start_sector: int, logical_sector_bytes: int = 512) -> dict:
    """Byte offset of a partition start and its 4 KiB / 1 MiB alignment.

    ``alignment(63)`` -> start_bytes 32256, align_4k_rem_bytes 3584, aligned_4k False;
    ``alignment(2048)`` -> start_bytes 1048576, aligned to 4 KiB and to 1 MiB.
    """
    if isinstance(start_sector, bool) or not isinstance(start_sector, int) or start_sector < 0:
        raise ValueError(f"start_sector must be an integer >= 0, not {start_sector!r}")
    if isinstance(logical_sector_bytes, bool) or not isinstance(logical_sector_bytes, int) or logical_sector_bytes <= 0:
        raise ValueError(f"logical_sector_bytes must be an integer > 0, not {logical_sector_bytes!r}")
    start = start_sector * logical_sector_bytes
    r4k, r1m = start % 4096, start % MiB
    return {
        "start_bytes": start,
        "align_4k_rem_bytes": r4k,
        "align_1m_rem_bytes": r1m,
        "aligned_4k": r4k == 0,
        "aligned_1m": r1m == 0,
    }


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


class _Disk:
    """Collects one disk/geom and its partitions before rows are made."""

    def __init__(self, name: str | None, lineno: int):
        self.name = name
        self.line_start = self.line_end = lineno
        self.table_type = self.label_id = self.media = self.state = None
        self.size_sectors = self.size_bytes = self.first = self.usable = self.free = None
        self.size_source = "printed"
        self.lsec = None
        self.psec = None
        self.source = None
        self.parts: list[dict] = []

    def add_free(self, sectors: int) -> None:
        self.free = (self.free or 0) + sectors

    def emit(self, parsed: Parsed, offset: int = 0) -> None:
        lsec = self.lsec or 512
        source = self.source or ("printed" if self.lsec else "assumed")
        for p in self.parts:
            known = p["start_sector"] is not None  # unknown: a legacy sfdisk -l start printed as 'N+'
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
                "size_bytes": p["size_sectors"] * lsec,
                "type": p.get("type"),
                "type_id": p.get("type_id"),
                "name": p.get("name"),
                "filesystem": p.get("filesystem"),
                "flags": p.get("flags"),
                "line_start": p["line"],
                "line_end": p["line"],
            }
            row.update(alignment(abs_start, lsec) if known else _UNKNOWN_ALIGNMENT)
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
        digits = re.match(r"\d+", human)
        whole = digits is not None and digits.end() == len(human.rstrip("BKMGTPEkb").rstrip()) and len(digits[0]) >= 2
        truncated = whole and printed <= actual < printed * (int(digits[0]) + 1) / int(digits[0])
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
            for part, labelled in zip(same.parts, cur.parts):
                part["name"] = labelled.get("name")
            return
        _gpart_sector_size(cur, pairs, parsed)
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
        part = {
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
                names |= {f"{disk.name}s{idx}", f"{disk.name}p{idx}", f"{disk.name}{chr(ord('a') + idx - 1)}"}
            if name in names:
                return offset + p["start_sector"]
    return 0


# --- fdisk -l --------------------------------------------------------------------------------

_FDISK_DISK = re.compile(r"^Disk (.+?): (?:[^,]*), (\d+) bytes(?:, (\d+) sectors)?\s*$")
_FDISK_GEOM = re.compile(r"^\d+ heads, \d+ sectors/track, \d+ cylinders(?:, total (\d+) sectors)?")
_FDISK_UNITS = re.compile(r"^Units(?::| =) (sectors|cylinders) of (\d+) \* (\d+) = (\d+) bytes")
_FDISK_SECTOR = re.compile(r"^Sector size \(logical/physical\): (\d+) bytes / (\d+) bytes")
_FDISK_NOTABLE = re.compile(r"^Disk (.+) doesn't contain a valid partition table")
_FDISK_HEADER = re.compile(r"^\s*(Device|Slice)\s+.*\bStart\s+End\b")
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
        start, stop = int(values["Start"]), int(values["End"])
        size = int(values["Sectors"]) if "Sectors" in values else stop - start + 1
    except (KeyError, ValueError):
        raise _cut(lineno, last, f"unreadable Start/End/Sectors in {line.strip()[:80]!r}", expected) from None
    if stop - start + 1 != size:
        raise ParseError(f"Start {start}, End {stop} and Sectors {size} disagree", line=lineno, expected=expected)
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
        if not s:
            cols = None
            continue
        m = _FDISK_DISK.match(s)
        if m:
            if cur:
                cur.emit(parsed)
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
            cur.lsec = cur.lsec or int(m.group(3))
            continue
        m = _FDISK_SECTOR.match(s)
        if m:
            cur.lsec, cur.psec = int(m.group(1)), int(m.group(2))
            continue
        m = _FDISK_GEOM.match(s)
        if m:
            cur.size_sectors = cur.size_sectors or (int(m.group(1)) if m.group(1) else None)
            continue
        if s.startswith(("Disklabel type:", "Disk label type:")):  # util-linux 2.23-2.25 wrote two words
            cur.table_type = _table_type(s.split(":", 1)[1].strip())
        elif s.startswith("Disk identifier:"):
            cur.label_id = s.split(":", 1)[1].strip()
        elif s.startswith(("I/O size", "Disk model:", "Alignment offset:")):
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
    if cur.size_sectors is None and cur.size_bytes is not None:
        cur.size_sectors = cur.size_bytes // (cur.lsec or 512)
    cur.emit(parsed)


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
        elif item:
            fields[item.lower()] = ""
    return fields


def _parse_sfdisk(lines: list[str], parsed: Parsed, last: int) -> None:
    disks: list[_Disk] = []
    cur: _Disk | None = None
    first = lastlba = None

    def new(lineno):
        nonlocal cur, first, lastlba
        if cur is not None:
            disks.append(cur)
        cur, first, lastlba = _Disk(None, lineno), None, None

    for lineno, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            continue
        m = _SFDISK_OLD.match(s)
        if m:
            new(lineno)
            cur.name, cur.table_type = m.group(1).strip(), "MBR"
            continue
        m = _SFDISK_KEY.match(s)
        if m:
            key, value = m.group(1), m.group(2).strip()
            if cur is None or cur.parts or (key == "label" and cur.table_type is not None):
                new(lineno)
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
                cur.lsec = int(value) if value.isdigit() else None
                if cur.lsec is None:
                    raise ParseError(f"unreadable sector-size {value!r}", line=lineno, expected="an integer")
            elif key in ("first-lba", "last-lba"):
                if not value.isdigit():
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
            new(lineno)
        cur.line_end = lineno
        fields = _sfdisk_fields(m.group(2), lineno, last)
        try:
            start, size = int(fields["start"]), int(fields["size"])
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


def _parse_sfdisk_legacy(lines: list[str], parsed: Parsed, last: int) -> None:
    disks: list[_Disk] = []
    cur: _Disk | None = None
    unit = inc = None  # sectors per unit of Start/End, 'counting from'
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


# --- entry points ----------------------------------------------------------------------------

_SNIFF_GPART = re.compile(r"^=>\s*\d+\s+\d+\s+\S+\s+\S+\s+\(", re.M)
_SNIFF_SFDISK = re.compile(r"^\S.*?\s*:\s*start=\s*\d+\s*,\s*size=\s*\d+", re.M)
_SNIFF_SFDISK_HEAD = re.compile(r"^(?:label: \w+|# partition table of |unit: sectors)", re.M)
_SNIFF_SFDISK_L = re.compile(
    r"^Disk \S+: \d+ cylinders, \d+ heads, \d+ sectors/track\s*\n(?:.*\n){0,4}?"
    r"Units(?::| =) .*counting from \d",
    re.M,
)
_SNIFF_FDISK = re.compile(r"^Disk \S.*: [^,]*, \d+ bytes", re.M)
_SNIFF_FDISK_UNITS = re.compile(r"^Units(?::| =) (?:sectors|cylinders) of \d+ \* \d+ = \d+ bytes", re.M)
_SNIFF_PARTED_M = re.compile(r"^(?:BYT|CHS|CYL);\s*\n[^\n]*:[^\n]*:[^\n]*:\d+:\d+:[^\n]*;\s*$", re.M)
_SNIFF_PARTED_H = re.compile(r"^Sector size \(logical/physical\): \d+B/\d+B\s*$", re.M)


def sniff(text: str) -> str | None:
    head = text[:200000]
    if _SNIFF_GPART.search(head):
        return "gpart"
    if _SNIFF_SFDISK.search(head) and _SNIFF_SFDISK_HEAD.search(head):
        return "sfdisk"
    if "sectors/track" in head and _SNIFF_SFDISK_L.search(head):
        return "sfdisk-l"
    if _SNIFF_FDISK.search(head) and _SNIFF_FDISK_UNITS.search(head):
        return "fdisk"
    if _SNIFF_PARTED_M.search(head.replace("\r\n", "\n")):
        return "parted"
    if _SNIFF_PARTED_H.search(head) and re.search(r"^Partition Table: ", head, re.M):
        return "parted"
    return None


_TOOLS = {"gpart": ("gpart",), "fdisk": ("fdisk", "sfdisk"), "sfdisk": ("sfdisk",), "sfdisk-l": ("sfdisk",)}
_TOOLS["parted"] = ("parted",)
_SUDO_PASSWORD = re.compile(r"^\s*\[sudo\] ")  # sudo's password prompt, in any language
_SFDISK_COMMENT = re.compile(r"^\s*# partition table of ")  # old sfdisk -d's first line, not a prompt


def _only_the_tools_output(lines: list[str], tools: tuple[str, ...]) -> list[str]:
    """A terminal transcript's lines with everything but the partition tool's output blanked (line numbers
    kept): sudo's password prompt, and each other command's prompt line and output up to the next prompt
    (``$ sudo swapoff /dev/sda5``, a bare ``$`` at the end). The tool's own command lines stay: the parsers
    read them (``gpart show -l``)."""
    out, other = [], False
    for line in lines:
        if _SUDO_PASSWORD.match(line):
            out.append("")
            continue
        if SHELL_PROMPT.match(line) and not _SFDISK_COMMENT.match(line):
            other = not any(_is_command(line, tool) for tool in tools)
        out.append("" if other else line)
    return out


def parse(text: str, fmt: str | None = None) -> Parsed:
    if not text.strip():
        raise ParseError("file is empty", kind="empty", expected="gpart show, fdisk -l, sfdisk -d or parted output")
    fmt = fmt or sniff(text)
    if fmt not in FORMATS:
        first = next((i for i, ln in enumerate(lines_of(text), 1) if ln.strip()), 1)
        raise ParseError(
            "not a partition table listing",
            line=first,
            expected="gpart show, fdisk -l, sfdisk -d or parted (-m) unit s print output",
        )
    parsed = Parsed(tool=TOOL, format=fmt)
    lines = _only_the_tools_output(lines_of(text), _TOOLS[fmt])
    last = max((i for i, ln in enumerate(lines, 1) if ln.strip()), default=1)
    if fmt == "gpart":
        _parse_gpart(lines, parsed, last)
    elif fmt == "fdisk":
        _parse_fdisk(lines, parsed, last)
    elif fmt == "sfdisk":
        _parse_sfdisk(lines, parsed, last)
    elif fmt == "sfdisk-l":
        _parse_sfdisk_legacy(lines, parsed, last)
    elif re.search(r"^(?:BYT|CHS|CYL);", text, re.M):
        _parse_parted_machine(lines, parsed, last)
    else:
        _parse_parted_human(lines, parsed, last)
    return parsed
