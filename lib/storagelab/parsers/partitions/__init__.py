"""Partition tables: FreeBSD ``gpart show``, util-linux ``fdisk -l`` and ``sfdisk -d``, GNU ``parted``.

One row per real partition (free-space rows are summed into ``disks.free_sectors``) and one row
per disk/geom. Sectors are the table's logical sectors; ``*_bytes`` columns multiply by the
logical sector size. ``alignment()`` (storagelab/sectors.py) is the verdict (4 KiB and 1 MiB) every row
carries. One module per tool (gpart, fdisk, sfdisk, parted, ...); ``common`` holds the disk collector, ``tables``
the tables.

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

import re

from ...sectors import alignment  # noqa: F401 - re-exported: parsers.partitions.alignment, as before
from ..base import SHELL_PROMPT, Parsed, ParseError, lines_of, not_this_format
from .common import _is_command
from .fdisk import _FDISK_DISK as _FDISK_DISK_LINE
from .fdisk import SNIFF_LOCALIZED, _parse_fdisk, refuse_localized
from .gdisk import _DISK as _GDISK_DISK
from .gdisk import SNIFF as _SNIFF_GDISK
from .gdisk import parse_gdisk
from .gpart import _parse_gpart
from .parted import _parse_parted_human, _parse_parted_machine
from .sfdisk import _parse_sfdisk, _parse_sfdisk_legacy
from .tables import TABLES  # noqa: F401

TOOL = "partitions"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {
    "gpart": "gpart show",
    "fdisk": "fdisk -l",
    "fdisk-localized": "fdisk -l in another language",
    "sfdisk": "sfdisk -d",
    "sfdisk-l": "sfdisk -l",
    "gdisk": "gdisk/sgdisk -p",
    "parted": "parted print/-m/interactive",
}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
HELPER_MODULES: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None
FORMATS = ("gpart", "fdisk", "sfdisk", "sfdisk-l", "parted", "gdisk", "fdisk-localized")


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
    if _SNIFF_GDISK.search(head):
        return "gdisk"
    if _SNIFF_FDISK.search(head) and _SNIFF_FDISK_UNITS.search(head):
        return "fdisk"
    if SNIFF_LOCALIZED.search(head):
        return "fdisk-localized"
    if _SNIFF_PARTED_M.search(head.replace("\r\n", "\n")):
        return "parted"
    if _SNIFF_PARTED_H.search(head) and re.search(r"^Partition Table: ", head, re.M):
        return "parted"
    return None


_TOOLS = {"gpart": ("gpart",), "fdisk": ("fdisk", "sfdisk"), "sfdisk": ("sfdisk",), "sfdisk-l": ("sfdisk",)}
_TOOLS["parted"] = ("parted",)
_TOOLS["fdisk-localized"] = ("fdisk",)
_TOOLS["gdisk"] = ("gdisk", "sgdisk", "fdisk")  # fdisk: BusyBox fdisk's GPT listing
_SUDO_PASSWORD = re.compile(r"^\s*\[sudo\] ")  # sudo's password prompt, in any language
_SFDISK_COMMENT = re.compile(r"^\s*# partition table of ")  # old sfdisk -d's first line, not a prompt
_NUMBER_MARK = re.compile(r"^\s*\d+[$#%>](?:\s|$)")  # a row's number with a mark (`2%`), not a prompt (reliability-34)


def _only_the_tools_output(lines: list[str], tools: tuple[str, ...], fmt: str) -> list[str]:
    """A terminal transcript's lines with everything but the partition tool's output blanked (line numbers
    kept): sudo's password prompt, and each other command's prompt line and output up to the next prompt
    (``$ sudo swapoff /dev/sda5``, a bare ``$`` at the end). The tool's own command lines stay: the parsers
    read them (``gpart show -l``)."""
    out: list[str] = []
    other, section = False, list[str]()
    for line in [*lines, "$ "]:  # a last prompt closes the last section
        if _SUDO_PASSWORD.match(line):
            out.append("")
            continue
        if SHELL_PROMPT.match(line) and not _SFDISK_COMMENT.match(line) and not _NUMBER_MARK.match(line):
            _not_the_tools(section, fmt, len(out) - len(section) + 1)
            other, section = not any(_is_command(line, tool) for tool in tools), []
        if other:
            section.append(line)
        out.append("" if other else line)
    return out[:-1]


def _not_the_tools(section: list[str], fmt: str, lineno: int) -> None:
    """reliability-34: a listing after a damaged command line (`# gpaRt show da0`) was blanked as another command's
    output, and the file stored with no rows (or fewer), exit 0: the tool's own output there is refused."""
    if section and sniff("\n".join(section)) == fmt:
        raise ParseError(
            f"{fmt} output after a command that is not {'/'.join(_TOOLS[fmt])}: {section[0].strip()[:60]!r}",
            line=lineno,
            expected=f"the {fmt} command line before its output",
        )


def _busybox_mixed(lines: list[str]) -> tuple[list[str], list[str]] | None:
    """BusyBox ``fdisk -l`` lists a GPT disk its gdisk way and an MBR disk the fdisk way, one after the other: the
    lines of each kind (the others blanked, line numbers kept), or None when the listing holds one kind only."""
    owner, owners = None, []
    for line in lines:
        s = line.strip()
        if _GDISK_DISK.match(s) or s.startswith("Found valid GPT"):
            owner = "gdisk"
        elif _FDISK_DISK_LINE.match(s):
            owner = "fdisk"
        owners.append(owner)
    if not {"gdisk", "fdisk"} <= set(owners):
        return None

    def kept(kind: str) -> list[str]:
        return [ln if o in (kind, None) else "" for ln, o in zip(lines, owners, strict=True)]

    return kept("gdisk"), kept("fdisk")


def parse(text: str, fmt: str | None = None) -> Parsed:
    if not text.strip():
        raise ParseError("file is empty", kind="empty", expected="gpart show, fdisk -l, sfdisk -d or parted output")
    fmt = fmt or sniff(text)
    if fmt not in FORMATS:
        raise not_this_format(
            text, "not a partition table listing", "gpart show, fdisk -l, sfdisk -d or parted (-m) unit s print output"
        )
    parsed = Parsed(tool=TOOL, format=fmt)
    lines = _only_the_tools_output(lines_of(text), _TOOLS[fmt], fmt)
    last = max((i for i, ln in enumerate(lines, 1) if ln.strip()), default=1)
    if fmt == "gpart":
        _parse_gpart(lines, parsed, last)
    elif fmt == "fdisk":
        _parse_fdisk(lines, parsed, last)
    elif fmt == "sfdisk":
        _parse_sfdisk(lines, parsed, last)
    elif fmt == "fdisk-localized":
        refuse_localized(lines)
    elif fmt == "gdisk" and (split := _busybox_mixed(lines)):
        for part, parser in zip(split, (parse_gdisk, _parse_fdisk), strict=True):
            parser(part, parsed, max((i for i, ln in enumerate(part, 1) if ln.strip()), default=1))
    elif fmt == "gdisk":
        parse_gdisk(lines, parsed, last)
    elif fmt == "sfdisk-l":
        _parse_sfdisk_legacy(lines, parsed, last)
    elif re.search(r"^(?:BYT|CHS|CYL);", text, re.M):
        _parse_parted_machine(lines, parsed, last)
    else:
        _parse_parted_human(lines, parsed, last)
    return parsed
