"""``zpool iostat -w``: latency histograms (part of the zpool parser).

Format (OpenZFS ``cmd/zpool/zpool_main.c``: ``print_iostat_histos``/``print_iostat_histo``, ``iostat_top_labels``/
``iostat_bottom_labels[IOS_L_HISTO]``; checked against the published outputs in
tests/fixtures/zpool/published/iostat-w.md). A block per pool (and per vdev with ``-v``), repeated for each interval::

    data1        total_wait     disk_wait    syncq_wait    asyncq_wait
    latency      read  write   read  write   read  write   read  write  scrub   trim  rebuild
    ----------  -----  -----  -----  -----  -----  -----  -----  -----  -----  -----  -----
    1ns             0      0      0      0      0      0      0      0      0      0      0
    ...
    2us             0      0      0      0      0      0  6.11K      0      0      0      0
    ...
    137s            0      0      0      0      0      0      0      0      0      0      0
    ---------------------------------------------------------------------------------------

* The top-left cell names the pool or vdev; the wait groups are ``total_wait``, ``disk_wait``, ``syncq_wait`` and
  ``asyncq_wait`` (0.7 printed ``sync_queue``/``async_queue`` for the same two histograms: stored as syncq_wait and
  asyncq_wait), each with read and write; then one column each for ``scrub`` (0.7+), ``trim`` (0.8+) and
  ``rebuild`` (2.0+).
* Bucket j (0 .. 36) holds I/Os that took up to 2^(j+1)-1 ns (the one before it ends at 2^j-1). The label is that
  upper bound in ``zfs_nicetime`` (decimal units, floored: ``1ns 3ns ... 511ns 1us 2us 4us 8us 16us 32us 65us ...
  1ms ... 1s ... 137s``); it is stored with its exact bound in ns (``bucket_max_ns``).
* Counts are ``zfs_nicenum`` (K, M = powers of 1024, three digits, so ``6.11K`` is about 6,257 and not exact) or
  plain integers (exact: ``-p``, or below 1024).
* ``-H`` (scripted) prints no headers: the name on a line of its own, then one line per bucket, tab-separated,
  whose first field is the bound in ns (``1``, ``3`` ... ``137438953471``). The columns are then known only by their
  number: 9 (0.7: ... scrub), 10 (0.8: + trim) or 11 (2.0+: + rebuild).
* ``-T u|d`` timestamp lines and a prompt line are kept with the blocks after them. ``sample`` counts reports: a
  report starts again where the file's first block name (its first pool) comes again; ``block`` is a block's place
  in its report (vdev names such as ``mirror`` repeat within one report).
* A paste that stops inside its last block (the author's, or a search excerpt's cut) keeps the complete rows and
  says which buckets are missing; a cut last row (shorter than the header's rule) is left out with a warning.
"""

from __future__ import annotations

import math
import re

from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, table
from .zpool_hist import _COMMAND, _RULE, _TIMESTAMP, Reports, _count

FORMAT = "zpool-iostat-w"
BUCKETS = 37  # VDEV_L_HISTO_BUCKETS
WAITS = ("total_wait", "disk_wait", "syncq_wait", "asyncq_wait")
SINGLE = ("scrub", "trim", "rebuild")
_GROUPS = re.compile(r"^\S+\s+total_wait\s+disk_wait\s+(?:syncq_wait|sync_queue)\s+(?:asyncq_wait|async_queue)\s*$")
_BOTTOM = re.compile(r"^latency((?:\s+(?:read|write)){8})((?:\s+(?:scrub|trim|rebuild))*)\s*$")
_SCRIPTED_ROW = re.compile(r"^\d+(\t[^\t]+)+$")
_SOLID = re.compile(r"^-{20,}$")

TABLES = {
    "zpool_iostat_latency_hist": table(
        "zpool iostat -w: one row per histogram cell (report, pool or vdev block, latency bucket, wait kind).",
        ("name", "VARCHAR", "the pool or vdev the block is of (its top-left cell, or its own line with -H)"),
        ("sample", "INTEGER", "0-based report number (each interval repeats the blocks; 0 = since import)"),
        ("block", "INTEGER", "0-based place of the block in its report (-v: pool, then its vdevs in order)"),
        ("bucket", "INTEGER", "bucket index j, 0 .. 36"),
        ("bucket_max_ns", "BIGINT", "ns: the bucket's upper bound 2^(j+1)-1 (it holds waits above 2^j-1 up to this)"),
        ("bucket_label", "VARCHAR", "the bucket as printed (zfs_nicetime 1ns ... 137s, or the ns bound with -H)"),
        (
            "wait",
            "VARCHAR",
            "total_wait, disk_wait, syncq_wait, asyncq_wait (0.7: sync_queue/async_queue), scrub, trim or rebuild",
        ),
        ("op", "VARCHAR", "read or write; NULL for scrub, trim and rebuild (one column each)"),
        ("count", "DOUBLE", "count of I/Os (nicenum: K, M = powers of 1024, approximate unless exact)"),
        ("exact", "BOOLEAN", "the count was printed as a plain integer (-p, or below 1024)"),
        ("timestamp", "VARCHAR", "the -T u|d timestamp line printed before this block, as printed; else NULL"),
        ("command", "VARCHAR", "the zpool command of the prompt line before the output, when present"),
        *LINES,
    ),
}


def nicetime(ns: int) -> str:
    """zfs_nicetime of an integer ns (lib/libzutil/zutil_nicenum.c, ZFS_NICENUM_TIME): decimal units, floored."""
    units, n, index = ("ns", "us", "ms", "s"), ns, 0
    while n >= 1000 and index < 3:
        n //= 1000
        index += 1
    return f"{math.floor(ns / 1000**index)}{units[index]}"


_LABELS = {nicetime(2 ** (j + 1) - 1): j for j in range(BUCKETS)}


def columns(n_single: list[str]) -> list[tuple[str, str | None]]:
    """(wait, op) of each count column: four read/write pairs, then the one-column kinds printed."""
    return [(w, op) for w in WAITS for op in ("read", "write")] + [(s, None) for s in n_single]


def sniff(lines: list[str]) -> bool:
    """A latency-histogram header (a name and wait groups over 'latency read write ...'), or -H output: a name line
    followed by bucket lines 1, 3, 7 (ns) with tab-separated counts."""
    for k, line in enumerate(lines[:-1]):
        if _GROUPS.match(line.strip()) and _BOTTOM.match(lines[k + 1].strip()):
            return True
        if k + 3 < len(lines) and line.strip() and "\t" not in line:
            if [ln.split("\t", 1)[0] for ln in lines[k + 1 : k + 4]] == ["1", "3", "7"]:
                return all(_SCRIPTED_ROW.match(ln) for ln in lines[k + 1 : k + 4])
    return False


class _Reader:
    """One read of zpool iostat -w output, human or scripted."""

    def __init__(self, text: str, tool: str):
        self.parsed = Parsed(tool=tool, format=FORMAT)
        self.lines = [ln.rstrip() for ln in lines_of(text)]
        self.last = max((i for i, ln in enumerate(self.lines, 1) if ln.strip()), default=0)
        self.reports = Reports()
        self.command: str | None = None
        self.timestamp: str | None = None

    def read(self) -> Parsed:
        i = 0
        while i < len(self.lines):
            s, lineno = self.lines[i].strip(), i + 1
            nxt = self.lines[i + 1].strip() if i + 1 < len(self.lines) else ""
            if not s or _RULE.match(s):
                i += 1
            elif _GROUPS.match(s) and _BOTTOM.match(nxt):
                i = self.human_block(i)
            elif "\t" not in s and _SCRIPTED_ROW.match(nxt):
                i = self.scripted_block(i)
            elif _TIMESTAMP.match(s):
                self.timestamp, i = s, i + 1
            elif SHELL_PROMPT.match(s) or _COMMAND.search(s):
                m = _COMMAND.search(s)
                self.command, self.timestamp, i = (m.group(1).strip() if m else None), None, i + 1
            else:
                raise ParseError(
                    f"not zpool iostat -w output: {s[:80]!r}", line=lineno, expected="a latency histogram block"
                )
        if not self.parsed.n_rows:
            raise ParseError(
                "zpool iostat -w output without rows", line=max(self.last, 1), kind="truncated", expected="bucket rows"
            )
        return self.parsed

    def human_block(self, i: int) -> int:
        """The block whose header starts at line index i; the index after it."""
        name = self.lines[i].split()[0]
        bottom = _BOTTOM.match(self.lines[i + 1].strip())
        assert bottom is not None  # read() dispatched here on this match
        single = bottom.group(2).split()
        cols = columns(single)
        meta = self.reports.start(name)
        i += 2
        width = None
        if i < len(self.lines) and _RULE.match(self.lines[i].strip()):
            width, i = len(self.lines[i].rstrip()), i + 1
        rows: list[tuple[int, list[str], int, str]] = []
        while i < len(self.lines) and self.lines[i].strip() and not _SOLID.match(self.lines[i].strip()):
            line, lineno = self.lines[i], i + 1
            cells = line.split()
            if lineno == self.last and width is not None and len(line) < width:
                self.parsed.warnings.append(f"line {lineno}: the last row is cut short ({cells[0]!r}); left out")
                i += 1
                break
            if len(cells) != 1 + len(cols):
                raise ParseError(
                    f"a latency row has {len(cells)} cells",
                    line=lineno,
                    kind="truncated" if lineno >= self.last else "invalid",
                    expected=f"{1 + len(cols)}: the bucket and one count per column",
                )
            rows.append((lineno, cells[1:], self.bucket_of_label(cells[0], lineno), cells[0]))
            i += 1
        ended = i < len(self.lines) and _SOLID.match(self.lines[i].strip())
        self.emit(meta, cols, rows, cut=i >= self.last and not ended)
        return i

    def scripted_block(self, i: int) -> int:
        """A -H block: the name line at index i, then tab-separated bucket lines."""
        meta = self.reports.start(self.lines[i].strip())
        i += 1
        rows: list[tuple[int, list[str], int, str]] = []
        cols = None
        while i < len(self.lines) and _SCRIPTED_ROW.match(self.lines[i]):
            lineno = i + 1
            label, *cells = self.lines[i].split("\t")
            if cols is None:
                cols = self.scripted_columns(len(cells), lineno)
            if len(cells) != len(cols):
                raise ParseError(
                    f"a -H latency row has {len(cells)} counts, the block's first {len(cols)}",
                    line=lineno,
                    kind="truncated" if lineno >= self.last else "invalid",
                    expected="the same number of counts on every row",
                )
            rows.append((lineno, cells, self.bucket_of_bound(label, lineno), label))
            i += 1
        self.emit(meta, cols or [], rows, cut=i >= self.last)
        return i

    @staticmethod
    def scripted_columns(n: int, lineno: int) -> list[tuple[str, str | None]]:
        if n not in (9, 10, 11):
            raise ParseError(
                f"a -H latency row has {n} counts",
                line=lineno,
                kind="unsupported-version",
                expected="9 (0.7), 10 (0.8, with trim) or 11 (2.0+, with rebuild) counts after the bucket",
            )
        return columns(list(SINGLE[: n - 8]))

    def bucket_of_label(self, label: str, lineno: int) -> int:
        if label not in _LABELS:
            raise ParseError(
                f"not a latency bucket: {label!r}",
                line=lineno,
                kind="truncated" if lineno >= self.last else "invalid",
                expected="1ns, 3ns, 7ns ... 137s",
            )
        return _LABELS[label]

    def bucket_of_bound(self, label: str, lineno: int) -> int:
        bound = int(label)
        j = (bound + 1).bit_length() - 2
        if bound < 1 or bound + 1 != 2 ** (j + 1) or j >= BUCKETS:
            raise ParseError(
                f"not a latency bucket bound: {label!r}",
                line=lineno,
                expected="1, 3, 7 ... 137438953471 (2^(j+1)-1 ns)",
            )
        return j

    def emit(self, meta: dict, cols: list, rows: list, cut: bool) -> None:
        """The cells of one block's rows; buckets must run 0, 1, 2 ... and a block that stops early at the end of
        the file is kept with a warning."""
        if not rows:
            raise ParseError(
                f"a latency histogram of {meta['name']!r} without rows",
                line=self.last,
                kind="truncated",
                expected="bucket rows",
            )
        for k, (lineno, _, j, label) in enumerate(rows):
            if j != k:
                raise ParseError(
                    f"bucket {label!r} out of order (expected bucket {k})",
                    line=lineno,
                    expected="buckets from 1ns up, one per row",
                )
        if len(rows) < BUCKETS:
            if not cut:
                raise ParseError(
                    f"the latency histogram of {meta['name']!r} stops at bucket {rows[-1][3]!r}",
                    line=rows[-1][0],
                    expected=f"{BUCKETS} bucket rows (1ns .. 137s)",
                )
            self.parsed.warnings.append(
                f"line {rows[-1][0]}: the histogram of {meta['name']!r} stops at {rows[-1][3]!r} (the paste is cut): "
                f"buckets above it are missing"
            )
        meta = meta | {"timestamp": self.timestamp, "command": self.command}
        for lineno, cells, j, label in rows:
            for (wait, op), cell in zip(cols, cells, strict=True):
                count, exact = _count(cell, lineno)
                self.parsed.add(
                    "zpool_iostat_latency_hist",
                    meta
                    | {
                        "bucket": j,
                        "bucket_max_ns": 2 ** (j + 1) - 1,
                        "bucket_label": label,
                        "wait": wait,
                        "op": op,
                        "count": count,
                        "exact": exact,
                        "line_start": lineno,
                        "line_end": lineno,
                    },
                )


def parse(text: str, tool: str) -> Parsed:
    return _Reader(text, tool).read()
