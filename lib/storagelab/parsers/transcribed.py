"""Tables transcribed from a study's text into CSV (``# storagelab transcribed table v1``).

Some studies publish their numbers only as a table in prose (the 2008 Thumper layout sweep, seed 001,
flattened one cell per line). ``scripts/extract_seeds.py`` transcribes such a table by code into a
small CSV under ``data/raw/``; this parser reads it back with the same checks as any tool output.

Format v1::

    # storagelab transcribed table v1: <seed file> lines A-B (...) and C-D (...)
    <CSV header naming a known table layout>
    <one CSV row per line>

Blank lines and further ``#`` comment lines are ignored. Each known header maps to one table
(``LAYOUTS``); today that is the pool-layout sweep (``thumper_layouts``): one row per test, layout
and vdev type, with sizes in 1000-based TB (stored as bytes) and speeds in mbuffer "MB/s", which
are MiB/s (docs/formats/zfs-facts.md F21; stored as bytes/s).
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable
from decimal import Decimal

from ..units import UnitError, mbuffer_rate
from .base import LINES, Parsed, ParseError, lines_of, table

TOOL = "transcribed"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {"transcribed-csv": 'a table typed from a paper, first line "# storagelab transcribed table"'}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
HELPER_MODULES: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None
MARK = "# storagelab transcribed table "
VERSION = "v1"

LAYOUT_HEADER = ("test", "layout", "vdev_count", "vdev_widths", "vdev_type", "size_tb", "speed_mb_per_s", "speed_text")
VDEV_TYPES = ("single", "mirror", "raidz1", "raidz2", "raidz3", "draid")
NOT_RUN = "---"

TABLES = {
    "thumper_layouts": table(
        "Pool-layout sweeps transcribed from a study's table: one row per test, layout and vdev type.",
        (
            "test",
            "VARCHAR",
            "what was measured: zfs_send_read (zfs send | mbuffer > /dev/null), dd_write "
            "(dd of zeros | mbuffer > file)",
        ),
        ("layout", "VARCHAR", "vdev count x width, widest first, e.g. 2x23 or 1x16+2x15"),
        ("vdev_count", "INTEGER", "number of top-level vdevs"),
        ("vdev_widths", "VARCHAR", "disks per vdev as the source lists them, space separated (e.g. '16 15 15')"),
        ("disks", "INTEGER", "total disks in the pool (sum of vdev_widths)"),
        ("vdev_width_min", "INTEGER", "narrowest vdev, disks"),
        ("vdev_width_max", "INTEGER", "widest vdev, disks"),
        ("vdev_type", "VARCHAR", "single, mirror, raidz1, raidz2, raidz3, draid"),
        ("measured", "BOOLEAN", "false where the source gives no result ('---'): layout not run for this vdev type"),
        (
            "size_bytes",
            "BIGINT",
            "usable pool size, bytes (source in 1000-based TB); NULL where the source gives 0 for a layout not run",
        ),
        (
            "speed_bytes_per_s",
            "DOUBLE",
            "throughput, bytes/s (source in mbuffer MB/s = MiB/s); NULL where not measured",
        ),
        ("speed_text", "VARCHAR", "the speed cell exactly as the source prints it ('342.4', '---')"),
        ("source", "VARCHAR", "the transcription's source: seed file and line ranges (from line 1)"),
        *LINES,
    ),
}


def sniff(text: str) -> str | None:
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return "transcribed-csv" if first.startswith(MARK) else None


def parse(text: str, fmt: str | None = None) -> Parsed:
    lines = lines_of(text.lstrip("\ufeff"))
    if not any(ln.strip() for ln in lines):
        raise ParseError("file is empty", line=1, kind="empty", expected=f"'{MARK}{VERSION}: <source>'")
    first = lines[0].rstrip("\r")
    if not first.startswith(MARK):
        raise ParseError("not a transcribed table", line=1, kind="invalid", expected=f"'{MARK}{VERSION}: <source>'")
    m = re.match(r"(v\d+)\s*:\s*(\S.*)$", first[len(MARK) :])
    if not m:
        raise ParseError(
            "marker line has no version and source",
            line=1,
            kind="invalid",
            expected=f"'{MARK}{VERSION}: <seed file> lines A-B ...'",
        )
    if m.group(1) != VERSION:
        raise ParseError(
            f"transcribed table format {m.group(1)} is not supported",
            line=1,
            kind="unsupported-version",
            expected=VERSION,
        )
    source = m.group(2).strip()

    records = [
        (n, ln.rstrip("\r")) for n, ln in enumerate(lines[1:], 2) if ln.strip() and not ln.lstrip().startswith("#")
    ]
    if not records:
        raise ParseError(
            "no header after the marker line", line=len(lines), kind="truncated", expected="a CSV header line"
        )
    head_no, head = records[0]
    header = tuple(c.strip() for c in _fields(head, head_no))
    if header not in LAYOUTS:
        raise ParseError(
            f"unknown table header {','.join(header)!r}",
            line=head_no,
            kind="invalid",
            expected="one of: " + "; ".join(",".join(h) for h in LAYOUTS),
        )
    name, convert = LAYOUTS[header]
    if len(records) == 1:
        raise ParseError("table has a header but no rows", line=head_no, kind="truncated", expected="CSV rows")

    out = Parsed(tool=TOOL, format=fmt or "transcribed-csv", tool_version=VERSION)
    seen: dict[tuple, int] = {}
    for i, (no, ln) in enumerate(records[1:], 1):
        cells = [c.strip() for c in _fields(ln, no)]
        if len(cells) != len(header):
            last = i == len(records) - 1
            raise ParseError(
                f"row has {len(cells)} fields, the header {len(header)}",
                line=no,
                kind="truncated" if last and len(cells) < len(header) else "invalid",
                expected=",".join(header),
            )
        row = convert(dict(zip(header, cells, strict=True)), no)
        key = tuple(row[k] for k in KEYS[name])
        if key in seen:
            raise ParseError(
                f"duplicate row for {key} (first on line {seen[key]})",
                line=no,
                kind="invalid",
                expected="one row per " + ", ".join(KEYS[name]),
            )
        seen[key] = no
        out.add(name, dict(row, source=source, line_start=no, line_end=no))
    return out


def _fields(line: str, no: int) -> list[str]:
    try:
        return next(csv.reader([line], strict=True))
    except csv.Error as e:
        raise ParseError(f"not a CSV line: {e}", line=no, kind="invalid", expected="comma-separated fields") from None


def _number(text: str, what: str, no: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ParseError(
            f"{what} {text!r} is not a number", line=no, kind="invalid", expected=f"{what} as a number"
        ) from None
    if not math.isfinite(value) or value < 0:
        raise ParseError(
            f"{what} {text!r} is not a finite number >= 0", line=no, kind="invalid", expected=f"{what} as a number >= 0"
        )
    return value


def _layout_row(c: dict[str, str], no: int) -> dict:
    if not re.fullmatch(r"[a-z0-9_]+", c["test"]):
        raise ParseError(f"test {c['test']!r} is not an identifier", line=no, expected="lower-case letters, digits, _")
    if c["vdev_type"] not in VDEV_TYPES:
        raise ParseError(f"unknown vdev_type {c['vdev_type']!r}", line=no, expected=", ".join(VDEV_TYPES))
    if not re.fullmatch(r"[0-9]+( +[0-9]+)*", c["vdev_widths"]):
        raise ParseError(
            f"vdev_widths {c['vdev_widths']!r} is not a list of disk counts",
            line=no,
            expected="space-separated whole numbers, e.g. '23 23'",
        )
    widths = [int(w) for w in c["vdev_widths"].split()]
    if min(widths) < 1:
        raise ParseError("a vdev of 0 disks", line=no, expected="vdev widths >= 1")
    if not c["vdev_count"].isdigit() or int(c["vdev_count"]) != len(widths):
        raise ParseError(
            f"vdev_count {c['vdev_count']!r} does not match the {len(widths)} vdev widths",
            line=no,
            expected=str(len(widths)),
        )
    if c["layout"] != layout_label(widths):
        raise ParseError(
            f"layout {c['layout']!r} does not match vdev_widths {c['vdev_widths']!r}",
            line=no,
            expected=layout_label(widths),
        )
    size_tb = _number(c["size_tb"], "size_tb", no)
    measured = c["speed_text"] != NOT_RUN
    if measured:
        speed = _number(c["speed_mb_per_s"], "speed_mb_per_s", no)
        if _number(c["speed_text"], "speed_text", no) != speed:
            raise ParseError(
                f"speed_text {c['speed_text']!r} differs from speed_mb_per_s {c['speed_mb_per_s']!r}",
                line=no,
                expected="the same number in both",
            )
        if size_tb == 0:
            raise ParseError("a measured layout of size 0", line=no, expected="size_tb > 0")
    elif c["speed_mb_per_s"]:
        raise ParseError(
            f"speed_mb_per_s {c['speed_mb_per_s']!r} given for a '{NOT_RUN}' cell",
            line=no,
            expected="an empty speed_mb_per_s",
        )
    try:  # TB are 1000-based (the study says so); mbuffer's MB/s of 2008 are MiB/s
        # exact decimal arithmetic: a float times 10**12 is off by bytes from about 5000 TB on
        size = None if size_tb == 0 and not measured else round(Decimal(c["size_tb"]) * 10**12)
        rate = mbuffer_rate(c["speed_mb_per_s"], "MB/s") if measured else None
    except UnitError as e:
        raise ParseError(str(e), line=no, expected="a plain decimal number") from None
    return dict(
        test=c["test"],
        layout=c["layout"],
        vdev_count=len(widths),
        vdev_widths=c["vdev_widths"],
        disks=sum(widths),
        vdev_width_min=min(widths),
        vdev_width_max=max(widths),
        vdev_type=c["vdev_type"],
        measured=measured,
        size_bytes=size,
        speed_bytes_per_s=rate,
        speed_text=c["speed_text"],
    )


def layout_label(widths: list[int]) -> str:
    """``[16, 15, 15]`` -> ``1x16+2x15``: runs of equal width as count x width, in the listed order."""
    groups: list[list[int]] = []
    for w in widths:
        if groups and groups[-1][1] == w:
            groups[-1][0] += 1
        else:
            groups.append([1, w])
    return "+".join(f"{n}x{w}" for n, w in groups)


# header -> (table, row converter); KEYS: the columns that identify a row (no duplicates allowed)
LAYOUTS: dict[tuple[str, ...], tuple[str, Callable[[dict[str, str], int], dict]]] = {
    LAYOUT_HEADER: ("thumper_layouts", _layout_row),
}
KEYS = {"thumper_layouts": ("test", "layout", "vdev_type")}
