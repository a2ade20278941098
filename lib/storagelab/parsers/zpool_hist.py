"""``zpool iostat -r``: request-size histograms (part of the zpool parser).

Format (OpenZFS ``cmd/zpool/zpool_main.c``, ``print_iostat_histo``; checked against three published outputs in
tests/fixtures/zpool/published/iostat-r.md): a block per pool (and per vdev with ``-v``), repeated for each
interval (``zpool iostat -r 5``)::

    NVME1         sync_read    sync_write    async_read    async_write      scrub         trim         rebuild
    req_size      ind    agg    ind    agg    ind    agg    ind    agg    ind    agg    ind    agg    ind    agg
    ----------  -----  -----  -----  -----  -----  -----  -----  -----  -----  -----  -----  -----  -----  -----
    512         1.68M      0  4.84K      0  13.9K      0  2.04M      0      1      0      0      0      0      0
    ...
    16M             0      0      0      0      0      0      0      0      0      0     32      0      0      0
    ---------------------------------------------------------------------------------------------------------

The top-left cell names the pool or vdev; each I/O class (``sync_read`` ... ``scrub``, then ``trim`` from 0.8 and
``rebuild`` from 2.0, fewer when an author cut columns) has two columns: ``ind`` (individual I/Os) and ``agg``
(aggregated I/Os). A row's label is the bucket's lower bound in bytes (``zfs_nicenum(1 << j)``: 512, 1K ... 16M),
a bucket holding requests of 2^j up to 2^(j+1)-1 bytes. Counts are nicenum (K, M = powers of 1024, so ``1.68M`` is
about 1,761,608 and not exact) or exact with ``-p``. Latency histograms (``-w``) are read by zpool_latency_hist.py.

The ``-l`` wait-time groups (``total_wait`` ... ``asyncq_wait`` read/write, ``scrub``/``trim``/``rebuild`` wait) and
the ``-q`` queue groups (``syncq_read`` ... ``rebuildq_write``: ``pend``/``activ``) of an ordinary zpool iostat
table are read by zpool.py with its rows and stored here (``add_group_rows``): times in ns (zfs_nicetime ``252us``,
or raw ns with ``-p``), queue depths as counts; each row keeps its report's ``sample`` (the interval index).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from itertools import pairwise

from ..units import UnitError, zfs_nicenum
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, table

FORMAT = "zpool-iostat-r"
CLASSES = ("sync_read", "sync_write", "async_read", "async_write", "scrub", "trim", "rebuild")

TABLES = {
    "zpool_iostat_req_size": table(
        "zpool iostat -r: one row per histogram cell (pool or vdev, interval, size bucket, I/O class, ind/agg).",
        ("name", "VARCHAR", "the pool or vdev the block is of (its top-left cell)"),
        ("sample", "INTEGER", "0-based report number: a report starts where the file's first block name comes again"),
        (
            "block",
            "INTEGER",
            "0-based place of the block in its report (-v: pool, then its vdevs; names like mirror repeat)",
        ),
        ("bucket_bytes", "BIGINT", "bytes: the size bucket's lower bound (2^j; the bucket holds 2^j .. 2^(j+1)-1)"),
        ("bucket_label", "VARCHAR", "the bucket as printed (512, 1K, ... 16M)"),
        ("io_class", "VARCHAR", "sync_read, sync_write, async_read, async_write, scrub, trim or rebuild"),
        ("kind", "VARCHAR", "ind (individual I/Os) or agg (I/Os ZFS aggregated into one)"),
        ("count", "DOUBLE", "count of I/Os (nicenum: K, M = powers of 1024, approximate unless exact)"),
        ("exact", "BOOLEAN", "the count was printed as a plain integer (-p, or below 1024)"),
        ("timestamp", "VARCHAR", "the -T u|d timestamp line printed before this block, as printed; else NULL"),
        ("command", "VARCHAR", "the zpool command of the prompt line before the output, when present"),
        *LINES,
    ),
}

_KINDS = re.compile(r"^req_size(\s+(?:ind|agg))+\s*$")
_RULE = re.compile(r"^-+(\s+-+)*\s*$")
_TIMESTAMP = re.compile(r"^(\d{9,11}|\w{3}\s+\w{3}\s+\d{1,2}\s+\d\d:\d\d:\d\d\s.*\d{4})\s*$")
_COMMAND = re.compile(r"(zpool\s+iostat\b.*)$")


class Reports:
    """Report and block numbers of histogram blocks (-r, -w): a report starts where the file's first block name (its
    first pool) comes again; vdev names such as ``mirror`` repeat inside one report."""

    def __init__(self) -> None:
        self.first: str | None = None
        self.sample, self.block = -1, 0

    def start(self, name: str) -> dict:
        if self.first is None or name == self.first:
            self.first = self.first or name
            self.sample, self.block = self.sample + 1, 0
        else:
            self.block += 1
        return {"name": name, "sample": self.sample, "block": self.block}


def sniff(lines: list[str]) -> bool:
    """Whether a request-size header (a name and I/O classes over 'req_size ind agg ...') is among the lines."""
    return any(_KINDS.match(b) and len(a.split()) > 1 for a, b in pairwise(lines))


def _count(cell: str, lineno: int) -> tuple[float, bool]:
    if cell.isdigit():
        return float(cell), True
    try:
        value = zfs_nicenum(cell)
        if math.isnan(value):
            raise UnitError(cell)
        return value, False
    except UnitError:
        raise ParseError(
            f"not a count: {cell!r}", line=lineno, expected="a count like 0, 530, 2.98K or 1.68M"
        ) from None


def _bucket(label: str, lineno: int, last: int) -> int:
    try:
        value = zfs_nicenum(label)
    except UnitError:
        value = 0
    value = value if math.isfinite(value) else 0  # reliability-32: int(inf) raised OverflowError
    if value < 1 or int(value) != value or int(value) & (int(value) - 1):
        kind = "truncated" if lineno >= last else "invalid"
        raise ParseError(f"not a size bucket: {label!r}", line=lineno, kind=kind, expected="512, 1K, 2K ... 16M")
    return int(value)


def _header(line: str, lineno: int) -> tuple[str, list[str]]:
    name, *classes = line.split()
    unknown = [c for c in classes if c not in CLASSES]
    if unknown:
        raise ParseError(
            f"unknown I/O classes in a zpool iostat -r header: {', '.join(unknown)}",
            line=lineno,
            expected=", ".join(CLASSES),
        )
    return name, classes


def parse(text: str, tool: str, then: Callable[[Parsed, list[str], int], None] | None = None) -> Parsed:
    """The histogram blocks of ``text``; at a line that is not one after some were read, ``then(parsed, lines,
    lineno)`` reads the rest where given (zpool.py: a zpool iostat table pasted after them), else it is an error."""
    parsed = Parsed(tool=tool, format=FORMAT)
    lines = [ln.rstrip() for ln in lines_of(text)]
    last = max(i for i, ln in enumerate(lines, 1) if ln.strip())
    reports = Reports()
    command = timestamp = None
    i = 0
    while i < len(lines):
        s, lineno = lines[i].strip(), i + 1
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not s or _RULE.match(s):
            i += 1
        elif _KINDS.match(nxt):
            name, classes = _header(s, lineno)
            if len(nxt.split()) - 1 != 2 * len(classes):
                raise ParseError(
                    f"{len(classes)} I/O classes over {len(nxt.split()) - 1} ind/agg columns",
                    line=lineno + 1,
                    expected="two columns (ind, agg) under each class",
                )
            meta = reports.start(name) | {"timestamp": timestamp, "command": command}
            i = _block(lines, i + 2, classes, meta, parsed, last)
        elif _TIMESTAMP.match(s):
            timestamp, i = s, i + 1
        elif SHELL_PROMPT.match(s) or _COMMAND.search(s):
            m = _COMMAND.search(s)
            command, timestamp, i = (m.group(1).strip() if m else None), None, i + 1
        elif parsed.n_rows and then is not None:
            then(parsed, lines, lineno)  # another output after the histograms: its own parser reads it
            break
        else:
            raise ParseError(
                f"not zpool iostat -r output: {s[:80]!r}", line=lineno, expected="a request-size histogram block"
            )
    if not parsed.n_rows:
        raise ParseError("zpool iostat -r output without rows", line=last, kind="truncated", expected="bucket rows")
    return parsed


def _block(lines: list[str], i: int, classes: list[str], meta: dict, parsed: Parsed, last: int) -> int:
    """The bucket rows of one block from line index i (after its rule line); the index after the block."""
    if i < len(lines) and _RULE.match(lines[i].strip()):
        i += 1
    rows = 0
    while i < len(lines) and lines[i].strip() and not _RULE.match(lines[i].strip()):
        lineno, cells = i + 1, lines[i].split()
        if len(cells) != 1 + 2 * len(classes):
            kind = "truncated" if lineno >= last else "invalid"
            raise ParseError(
                f"a request-size row has {len(cells)} cells", line=lineno, kind=kind, expected=f"{1 + 2 * len(classes)}"
            )
        bucket = _bucket(cells[0], lineno, last)
        for k, cell in enumerate(cells[1:]):
            count, exact = _count(cell, lineno)
            parsed.add(
                "zpool_iostat_req_size",
                meta
                | {
                    "bucket_bytes": bucket,
                    "bucket_label": cells[0],
                    "io_class": classes[k // 2],
                    "kind": ("ind", "agg")[k % 2],
                    "count": count,
                    "exact": exact,
                    "line_start": lineno,
                    "line_end": lineno,
                },
            )
        rows += 1
        i += 1
    if not rows:
        raise ParseError("a request-size histogram without rows", line=i, kind="truncated", expected="bucket rows")
    return i


# --- the -l and -q column groups of a zpool iostat table ------------------------------------------------------------
# (zpool.py reads the table; these add the groups after capacity/operations/bandwidth to their own tables)

_SINGLE = ("scrub", "trim", "rebuild")  # -l groups of one column (their wait time)
_QUEUES = ("syncq_read", "syncq_write", "asyncq_read", "asyncq_write", "scrubq_read", "trimq_write", "rebuildq_write")
_TIME = re.compile(r"^(\d+(?:\.\d+)?)(ns|us|ms|s)$")
_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9}

_ROW_KEYS = ("pool", "vdev", "sample", "timestamp", "command", "line_start", "line_end")
TABLES["zpool_iostat_latency"] = table(
    "zpool iostat -l: average wait times of a pool/vdev row, one row per wait kind and direction.",
    ("pool", "VARCHAR", "pool name"),
    ("vdev", "VARCHAR", "vdev/device name; NULL for the pool's own row (as in zpool_iostat)"),
    ("sample", "INTEGER", "the report's number, as in zpool_iostat (0 = since import)"),
    ("wait", "VARCHAR", "total_wait, disk_wait, syncq_wait, asyncq_wait, scrub, trim or rebuild"),
    ("op", "VARCHAR", "read or write; NULL for scrub/trim/rebuild (one column)"),
    ("latency_ns", "DOUBLE", "average wait, ns (zfs_nicetime 252us = 252,000 ns, rounded as printed); NULL for '-'"),
    ("timestamp", "VARCHAR", "the -T u|d timestamp line before this report, as printed; else NULL"),
    ("command", "VARCHAR", "the zpool command of the prompt line before the output, when present"),
    *LINES,
)
TABLES["zpool_iostat_queues"] = table(
    "zpool iostat -q: I/Os pending in and active from each queue of a pool/vdev row, one row per queue.",
    ("pool", "VARCHAR", "pool name"),
    ("vdev", "VARCHAR", "vdev/device name; NULL for the pool's own row (as in zpool_iostat)"),
    ("sample", "INTEGER", "the report's number, as in zpool_iostat (0 = since import)"),
    (
        "queue",
        "VARCHAR",
        "syncq_read, syncq_write, asyncq_read, asyncq_write, scrubq_read, trimq_write, rebuildq_write",
    ),
    ("pending", "DOUBLE", "I/Os waiting in the queue, count (nicenum: K = 1024)"),
    ("active", "DOUBLE", "I/Os issued to the device from the queue, count"),
    ("timestamp", "VARCHAR", "the -T u|d timestamp line before this report, as printed; else NULL"),
    ("command", "VARCHAR", "the zpool command of the prompt line before the output, when present"),
    *LINES,
)


def _latency_ns(cell: str, lineno: int) -> float | None:
    if cell == "-":
        return None
    if cell.isdigit():  # -p: nanoseconds
        return float(cell)
    m = _TIME.match(cell)
    if not m:
        raise ParseError(f"not a wait time: {cell!r}", line=lineno, expected="a time like 133ns, 252us, 6ms, 1s or -")
    return float(m.group(1)) * _NS[m.group(2)]


def add_group_rows(parsed: Parsed, row: dict, groups: list[str], values: list[str]) -> None:
    """The -l wait times and -q queue depths of one zpool iostat row: ``values`` are its cells after the six of
    capacity/operations/bandwidth, in the order of ``groups`` (the group line's names after those three)."""
    base = {k: row[k] for k in _ROW_KEYS}
    lineno = row["line_start"]
    k = 0
    for group in groups:
        width = 1 if group in _SINGLE else 2
        cells, k = values[k : k + width], k + width
        if group in _QUEUES:
            (pending, _), (active, _) = (_count(c, lineno) if c != "-" else (None, None) for c in cells)
            parsed.add("zpool_iostat_queues", base | {"queue": group, "pending": pending, "active": active})
        elif width == 1:
            parsed.add(
                "zpool_iostat_latency", base | {"wait": group, "op": None, "latency_ns": _latency_ns(cells[0], lineno)}
            )
        else:
            for op, cell in zip(("read", "write"), cells, strict=False):  # a row cut short keeps the ops it has
                parsed.add(
                    "zpool_iostat_latency", base | {"wait": group, "op": op, "latency_ns": _latency_ns(cell, lineno)}
                )
