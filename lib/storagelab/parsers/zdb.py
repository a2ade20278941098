"""OpenZFS zdb: block statistics (``-b``/``-bb``/``-bbb``), simulated DDT (``-S``), DDT dump (``-D``/``-DD``/``-DDD``).

Format reference: docs/formats/log-formats.md section D. One file may hold several outputs
(a terminal transcript with ``zdb -b pool`` prompt lines, or ``-b`` and ``-DD`` in one
capture): every section found is parsed, whatever the format name says.

* Summary values (``bp count:`` ...) are raw integers in every version.
* Tables (``-bb`` per-type table, block size histogram, DDT histograms) print zfs_nicenum
  values, ``K M G T P E`` = powers of 1024, rounded to 3 significant digits (``human_units``
  is true and the stored integers are approximate); ``-P`` prints raw integers.
* ``\\r`` progress output of stderr (``loading concrete vdev ...``, ``3.87T completed
  (3323MB/s) estimated time remaining: ...``) is removed first, also when glued to a stdout line.
* Rows of the ``-bb`` table whose values are all ``-`` (types with no blocks) are not stored.
* zdb prints ``Dittoed blocks ...`` and ``additional, non-pointer bps ...`` only when non-zero:
  after a complete summary their absence is stored as 0.
* nan/inf ratios and percentages (``used: -nan%``) are NULL.
"""

from __future__ import annotations

import math
import re

from ..units import UnitError, zfs_nicenum
from . import zdb_config
from .base import LINES, Parsed, ParseError, lines_of, table

TOOL = "zdb"
PARSER_VERSION = 1
FORMATS = ("zdb-b", "zdb-S", "zdb-DD", "zdb-C")
HELPER_MODULES = ("zdb_config",)  # part of this parser: its code is in the parser version too

_HUMAN = (
    "human_units",
    "BOOLEAN",
    (
        "true when the row's numbers were printed with K/M/G suffixes (powers of 1024, 3 significant "
        "digits, so the stored integers are approximate); false for raw integers (-P)"
    ),
)

TABLES = {
    "zdb_block_stats": table(
        "zdb -b summary block (one per `bp count:`); counts and bytes are exact integers as zdb prints them.",
        ("block_no", "INTEGER", "1-based number of this summary block in the file"),
        ("pool", "VARCHAR", "pool from the `zdb ... POOL` invocation/prompt line before it, else NULL"),
        ("bp_count", "BIGINT", "block pointers traversed, count (embedded bps included)"),
        ("ganged_count", "BIGINT", "gang blocks, count (NULL before 0.6.5)"),
        ("bp_logical_bytes", "BIGINT", "total logical size (LSIZE), bytes"),
        ("bp_logical_avg_bytes", "BIGINT", "LSIZE per bp as printed (integer), bytes"),
        ("bp_physical_bytes", "BIGINT", "total physical size (PSIZE), bytes"),
        ("bp_physical_avg_bytes", "BIGINT", "PSIZE per bp as printed, bytes"),
        ("compression_physical", "DOUBLE", "LSIZE/PSIZE ratio as printed (2 decimals); NULL for nan/inf"),
        ("bp_allocated_bytes", "BIGINT", "total allocated size (ASIZE, with parity and copies), bytes"),
        ("bp_allocated_avg_bytes", "BIGINT", "ASIZE per bp as printed, bytes"),
        ("compression_allocated", "DOUBLE", "LSIZE/ASIZE ratio as printed; NULL for nan/inf"),
        ("bp_deduped_bytes", "BIGINT", "ASIZE saved by dedup, bytes (NULL in pre-dedup zdb output)"),
        ("dedup_ref_gt1_count", "BIGINT", "blocks referenced more than once (`ref>1:`), count"),
        ("dedup_ratio", "DOUBLE", "`deduplication:` ratio as printed (1 + deduped/allocated); NULL for nan/inf"),
        ("bp_cloned_bytes", "BIGINT", "ASIZE saved by block cloning, bytes (2.2+, else NULL)"),
        ("bp_cloned_count", "BIGINT", "cloned blocks, count (2.2+, else NULL)"),
        ("embedded_bp_count", "BIGINT", "sum of `additional, non-pointer bps of type T` counts (0 when none printed)"),
        ("dittoed_same_vdev", "BIGINT", "`Dittoed blocks on same vdev`, count (0 when not printed)"),
        (
            "dittoed_same_metaslab",
            "BIGINT",
            "`Dittoed blocks in same metaslab`, count (0 when not printed; NULL for the 0.6/0.7 format without it)",
        ),
        (
            "leaks",
            "VARCHAR",
            "'none' (No leaks line), 'leaked' (size mismatch or leaked space lines), NULL when not checked/shown",
        ),
        (
            "leaked_bytes",
            "BIGINT",
            "signed leaked bytes (alloc - traversal; negative = double count); 0 for 'none'; NULL if unknown",
        ),
        ("traversal_bytes", "BIGINT", "`block traversal size` of a mismatch line, bytes (else NULL)"),
        ("alloc_bytes", "BIGINT", "`alloc` of a mismatch line, bytes (else NULL)"),
        (
            "zfs_era",
            "VARCHAR",
            (
                "output layout hint, the lowest OpenZFS release printing it: 'pre-dedup' (no bp deduped:), '0.6/0.7' "
                "(SPA allocated:), '0.8+' (Normal class:; FreeBSD's pre-13 ZFS prints it too), '2.0+' (block size "
                "histogram), '2.1+' (Embedded log class), '2.2+' (bp cloned:), '2.4+' (Special embedded log)"
            ),
        ),
        *LINES,
    ),
    "zdb_classes": table(
        "Allocation class lines of a zdb -b summary.",
        ("block_no", "INTEGER", "zdb_block_stats.block_no"),
        ("class", "VARCHAR", "Normal, Special, Dedup, Embedded log, Special embedded log, SPA allocated"),
        ("allocated_bytes", "BIGINT", "bytes allocated in the class"),
        ("used_pct", "DOUBLE", "percent of the class's space used; NULL for nan/-nan (class has no space)"),
        *LINES,
    ),
    "zdb_embedded_bps": table(
        "`additional, non-pointer bps of type T: N` lines (embedded block pointers).",
        ("block_no", "INTEGER", "zdb_block_stats.block_no"),
        ("embedded_type", "INTEGER", "embedded bp type: 0 data, 1 reserved, 2 redacted"),
        ("bp_count", "BIGINT", "embedded block pointers of this type, count"),
        *LINES,
    ),
    "zdb_block_types": table(
        "zdb -bb per-object-type table (-bbb adds per-level rows). Types with no blocks (`-` rows) are not stored.",
        ("block_no", "INTEGER", "zdb_block_stats.block_no of the preceding summary (NULL if none)"),
        ("type_name", "VARCHAR", "DMU object type as printed (`DMU dnode`, `other`, `Total`, `Metadata Total`)"),
        ("level", "INTEGER", "indirection level of a -bbb `L<n>` row; NULL for the type's total row"),
        ("blocks", "BIGINT", "blocks, count"),
        ("lsize_bytes", "BIGINT", "logical size, bytes"),
        ("psize_bytes", "BIGINT", "physical size, bytes"),
        ("asize_bytes", "BIGINT", "allocated size, bytes"),
        ("avg_bytes", "BIGINT", "ASIZE per block, bytes"),
        ("comp_ratio", "DOUBLE", "LSIZE/PSIZE"),
        ("pct_total", "DOUBLE", "share of the total ASIZE, percent"),
        ("ganged_blocks", "BIGINT", "-bbb `number of ganged blocks` under the row, count (NULL when not printed)"),
        _HUMAN,
        *LINES,
    ),
    "zdb_block_size_histogram": table(
        "zdb -bb `Block Size Histogram` (2.0+): one row per power-of-two block size.",
        ("block_no", "INTEGER", "zdb_block_stats.block_no of the preceding summary (NULL if none)"),
        ("block_size_bytes", "BIGINT", "block size of the row, bytes"),
        ("psize_count", "BIGINT", "blocks of this physical size, count"),
        ("psize_bytes", "BIGINT", "their physical bytes"),
        ("psize_cum_bytes", "BIGINT", "cumulative physical bytes up to this size"),
        ("lsize_count", "BIGINT", "blocks of this logical size, count"),
        ("lsize_bytes", "BIGINT", "their logical bytes"),
        ("lsize_cum_bytes", "BIGINT", "cumulative logical bytes"),
        ("asize_count", "BIGINT", "blocks of this allocated size, count"),
        ("asize_bytes", "BIGINT", "their allocated bytes"),
        ("asize_cum_bytes", "BIGINT", "cumulative allocated bytes"),
        _HUMAN,
        *LINES,
    ),
    "zdb_ddt_histogram": table(
        "DDT histograms: `Simulated DDT histogram` (zdb -S), the aggregated `DDT histogram` (-DD), per-object (-DDD).",
        ("ddt_no", "INTEGER", "1-based number of the -S/-D output in the file (shared with zdb_ddt_ratios/objects)"),
        ("source", "VARCHAR", "'simulated' (zdb -S) or 'ddt' (existing dedup table)"),
        (
            "object",
            "VARCHAR",
            "DDT object of a -DDD per-object histogram (DDT-sha256-zap-unique); NULL when aggregated/simulated",
        ),
        (
            "refcnt_bucket",
            "BIGINT",
            "reference count bucket, its lower edge (1, 2, 4 ... 1K = 1024); NULL on the Total row",
        ),
        ("is_total", "BOOLEAN", "the Total row"),
        ("alloc_blocks", "BIGINT", "allocated (unique) blocks, count = DDT entries"),
        ("alloc_lsize_bytes", "BIGINT", "allocated LSIZE, bytes"),
        ("alloc_psize_bytes", "BIGINT", "allocated PSIZE, bytes"),
        ("alloc_dsize_bytes", "BIGINT", "allocated DSIZE (on disk), bytes"),
        ("ref_blocks", "BIGINT", "referenced blocks, count"),
        ("ref_lsize_bytes", "BIGINT", "referenced LSIZE, bytes"),
        ("ref_psize_bytes", "BIGINT", "referenced PSIZE, bytes"),
        ("ref_dsize_bytes", "BIGINT", "referenced DSIZE, bytes"),
        _HUMAN,
        *LINES,
    ),
    "zdb_ddt_ratios": table(
        "`dedup = X, compress = Y, copies = Z, dedup * compress / copies = W` line of zdb -S / -D.",
        ("ddt_no", "INTEGER", "see zdb_ddt_histogram.ddt_no"),
        ("source", "VARCHAR", "'simulated' or 'ddt'"),
        ("pool", "VARCHAR", "pool from the invocation/prompt line, else NULL"),
        ("dedup", "DOUBLE", "referenced DSIZE / allocated DSIZE, ratio"),
        ("compress", "DOUBLE", "referenced LSIZE / referenced PSIZE, ratio"),
        ("copies", "DOUBLE", "referenced DSIZE / referenced PSIZE, ratio"),
        ("product", "DOUBLE", "dedup * compress / copies, ratio"),
        *LINES,
    ),
    "zdb_ddt_objects": table(
        "zdb -D object lines: DDT objects (<= 2.2 per-entry sizes, 2.3+ totals), 2.3+ table headers and log objects, "
        "or `All DDTs are empty`.",
        ("ddt_no", "INTEGER", "see zdb_ddt_histogram.ddt_no"),
        ("pool", "VARCHAR", "pool from the invocation/prompt line, else NULL"),
        (
            "kind",
            "VARCHAR",
            (
                "'object' (DDT-<cksum>-<type>-<class>), 'table' (2.3+ DDT-<cksum>: version=...), "
                "'log' (2.3+ DDT-log-<cksum>-<n>), 'all_empty' (All DDTs are empty)"
            ),
        ),
        ("name", "VARCHAR", "object name as printed"),
        ("checksum", "VARCHAR", "sha256, sha512, skein, edonr, blake3 ..."),
        ("ddt_type", "VARCHAR", "storage type of an object (zap)"),
        ("ddt_class", "VARCHAR", "ditto, duplicate or unique"),
        ("entries", "BIGINT", "entries, count"),
        (
            "disk_bytes_per_entry",
            "DOUBLE",
            "on-disk bytes per entry: <= 2.2 as printed (`size X on disk`, truncated by zdb); 2.3+ dspace/entries",
        ),
        (
            "core_bytes_per_entry",
            "DOUBLE",
            "in-core bytes per entry: <= 2.2 as printed (`Y in core`); 2.3+ mspace/entries",
        ),
        (
            "disk_bytes_total",
            "DOUBLE",
            "on-disk bytes of the object: 2.3+ dspace as printed; <= 2.2 entries x per-entry",
        ),
        (
            "core_bytes_total",
            "DOUBLE",
            "in-core bytes of the object: 2.3+ mspace as printed; <= 2.2 entries x per-entry",
        ),
        (
            "totals_derived",
            "BOOLEAN",
            (
                "true when the totals were computed as entries x per-entry (<= 2.2; approximate, zdb truncates the "
                "per-entry value), false when printed (2.3+)"
            ),
        ),
        ("ddt_version", "INTEGER", "'table': DDT version (0 legacy, 1 fast dedup)"),
        ("flags", "BIGINT", "'table'/'log': flags value (printed in hex)"),
        ("flag_names", "VARCHAR", "'table'/'log': flag names in brackets as printed (`FLAT LOG`), else NULL"),
        ("object_id", "BIGINT", "'table': rootobj; 'log': obj"),
        ("log_len", "BIGINT", "'log': the `len=` field as printed"),
        ("log_txg", "BIGINT", "'log': the `txg=` field"),
        *LINES,
    ),
    "zdb_events": table(
        "Leak, error and other notable lines of zdb -b (one per line).",
        ("block_no", "INTEGER", "zdb_block_stats.block_no of the summary they belong to (NULL if none followed)"),
        (
            "kind",
            "VARCHAR",
            (
                "'no_leaks', 'size_mismatch' (leaked/unreachable), 'leaked_space', 'read_error', "
                "'error_count', 'indirect_vdev', 'error' (another error line)"
            ),
        ),
        ("vdev", "BIGINT", "vdev id (leaked_space, indirect_vdev)"),
        ("offset_bytes", "BIGINT", "leaked segment offset, bytes"),
        (
            "size_bytes",
            "BIGINT",
            "leaked segment size, or mismatch difference (signed), or indirect mapping memory, bytes",
        ),
        ("errno", "INTEGER", "error number (read_error, error_count)"),
        ("count", "BIGINT", "error_count: occurrences; indirect_vdev: segments"),
        ("text", "VARCHAR", "the line, stripped"),
        *LINES,
    ),
}
TABLES.update(zdb_config.TABLES)

# --- line patterns ----------------------------------------------------------------------

_NUM = r"(-?nan|[-+]?inf|-?[0-9]+(?:\.[0-9]+)?)"
_PROGRESS = re.compile(
    r"[ \t]*(?:"
    r"loading (?:concrete |indirect )?vdev \d+, metaslab \d+ of \d+ ?\.*"
    r"|loading space map for vdev \d+ of \d+, metaslab \d+ of \d+ ?\.*"
    r"|verifying [a-z ]*vdev \d+, [a-z ]+ \d+ of \d+ ?\.*"
    r"|-?[0-9.]+[KMGTPE]?B? completed \(\s*\d+MB/s\) estimated time remaining: *(?:\d+ ?hr )?(?:\d+ ?min )?\d+ ?sec"
    r") *"
)
_INVOCATION = re.compile(r"^(?:[^#$%>\n]*[#$%>]\s*)?(?:sudo\s+)?(?:\S*/)?zdb((?:\s+\S+)*)\s*$")
_ZDB_ARG_OPTS = set("IKoptUx")  # getopt options of zdb that take an argument
_BANNER = re.compile(r"^Traversing all blocks\b.*\.\.\.$")
_NO_LEAKS = re.compile(r"^No leaks \(block sum matches space maps exactly\)$")
_MISMATCH = re.compile(r"^block traversal size (\d+) != alloc (\d+) \((leaked|unreachable) (-?\d+)\)$")
_LEAKED_SPACE = re.compile(r"^leaked space: vdev (\d+), offset (0x[0-9a-fA-F]+), size (\d+)$")
_READ_ERROR = re.compile(r"^zdb_blkptr_cb: Got error (\d+) reading\b")
_ERROR_COUNTS = re.compile(r"^Error counts:$")
_ERROR_ROW = re.compile(r"^(\d+)\s+(\d+)$")
_INDIRECT = re.compile(r"^indirect vdev id (\d+) has (\d+) segments \((\S+) in memory\)$")

_SUMMARY = {  # label -> full pattern of the (stripped) line
    "bp count:": re.compile(r"bp count:\s+(\d+)"),
    "ganged count:": re.compile(r"ganged count:\s+(\d+)"),
    "bp logical:": re.compile(r"bp logical:\s+(\d+)\s+avg:\s+(\d+)"),
    "bp physical:": re.compile(r"bp physical:\s+(\d+)\s+avg:\s+(\d+)\s+compression:\s+" + _NUM),
    "bp allocated:": re.compile(r"bp allocated:\s+(\d+)\s+avg:\s+(\d+)\s+compression:\s+" + _NUM),
    "bp deduped:": re.compile(r"bp deduped:\s+(\d+)\s+ref>1:\s+(\d+)\s+deduplication:\s+" + _NUM),
    "bp cloned:": re.compile(r"bp cloned:\s+(\d+)\s+count:\s+(\d+)"),
}
_CLASS_LABELS = {
    "Normal class:": "Normal",
    "SPA allocated:": "SPA allocated",
    "Special class": "Special",
    "Dedup class": "Dedup",
    "Embedded log class": "Embedded log",
    "Special embedded log": "Special embedded log",
}
_CLASS = re.compile(
    r"(Normal class:|SPA allocated:|Special class|Dedup class|Embedded log class|"
    r"Special embedded log)\s+(\d+)\s+used:\s*" + _NUM + r"\s*%"
)
_MANDATORY = ("bp logical:", "bp physical:", "bp allocated:")  # `bp deduped:` is missing before dedup existed

_EMBEDDED = re.compile(r"^additional, non-pointer bps of type (\d+):\s+(\d+)$")
_DITTO_VDEV = re.compile(r"^Dittoed blocks on same vdev:\s+(\d+)$")
_DITTO_MS = re.compile(r"^Dittoed blocks in same metaslab:\s+(\d+)$")
_STAR_ROW = re.compile(r"^\s*\d+:\s+\d+\s*\**\s*$")
_STAR_HEAD = re.compile(r"^(number of \(compressed\) bytes|psize \(in 512-byte sectors\)):\s+number of")
_GANGED = re.compile(r"^number of ganged blocks:\s+(\d+)$")

_TABLE_HEAD = re.compile(r"^Blocks\s+LSIZE\s+PSIZE\s+ASIZE\s+avg\s+comp\s+%Total\s+Type$")
_VALUE = re.compile(r"^(-|nan|-?[0-9]+(?:\.[0-9]+)?[KMGTPE]?)$")
_LEVEL = re.compile(r"^L(\d+) (.+)$")

_HIST_TITLE = re.compile(r"^Block Size Histogram$")
_HIST_HEAD1 = re.compile(r"^block\s+psize\s+lsize\s+asize$")
_HIST_HEAD2 = re.compile(r"^size\s+Count\s+Size\s+Cum\.\s+Count\s+Size\s+Cum\.\s+Count\s+Size\s+Cum\.$")
_NOTE = re.compile(r"^\(note: .*\)$")

_SIM_TITLE = re.compile(r"^Simulated DDT histogram:$")
_AGG_TITLE = re.compile(r"^DDT histogram \(aggregated over all DDTs\):$")
_DDT_HEAD = (
    re.compile(r"^bucket\s+allocated\s+referenced$"),
    re.compile(r"^_+\s+_+\s+_+$"),
    re.compile(r"^refcnt\s+blocks\s+LSIZE\s+PSIZE\s+DSIZE\s+blocks\s+LSIZE\s+PSIZE\s+DSIZE$"),
    re.compile(r"^-+\s+-+\s+-+\s+-+\s+-+\s+-+\s+-+\s+-+\s+-+$"),
)
_RATIOS = re.compile(
    r"^dedup = "
    + _NUM
    + r", compress = "
    + _NUM
    + r", copies = "
    + _NUM
    + r", dedup \* compress / copies = "
    + _NUM
    + r"$"
)
_DDT_OBJ_OLD = re.compile(r"^(DDT-(\w+)-(\w+)-(\w+)): (\d+) entries, size (\d+) on disk, (\d+) in core$")
_DDT_OBJ_NEW = re.compile(r"^(DDT-(\w+)-(\w+)-(\w+)): dspace=(\d+); mspace=(\d+); entries=(\d+)$")
_DDT_TABLE = re.compile(
    r"^(DDT-(\w+)): version=(\d+) \[[^\]]*\]; flags=0x([0-9a-fA-F]+)(?: ?\[([^\]]*)\])?; "
    r"rootobj=(\d+)$"
)
_DDT_LOG = re.compile(
    r"^(DDT-log-(\w+)-(\d+)): flags=0x([0-9a-fA-F]+)(?: ?\[([^\]]*)\])?; obj=(\d+); len=(\d+); "
    r"txg=(\d+); entries=(\d+)$"
)
_ALL_EMPTY = re.compile(r"^All DDTs are empty$")

_SNIFF_B = re.compile(
    r"\bbp count:[ \t]+\d+[ \t]*$|^Traversing all blocks\b.*\.\.\.[ \t]*$"
    r"|^Blocks\s+LSIZE\s+PSIZE\s+ASIZE\s+avg\s+comp\s+%Total\s+Type",
    re.MULTILINE,
)
_SNIFF_S = re.compile(r"^Simulated DDT histogram:", re.MULTILINE)
_SNIFF_DD = re.compile(
    r"^DDT-\w+-\w+-\w+: (?:\d+ entries, size \d+ on disk|dspace=\d+; mspace=\d+;)"
    r"|^All DDTs are empty|^DDT histogram \(aggregated over all DDTs\):",
    re.MULTILINE,
)


def sniff(text: str) -> str | None:
    """'zdb-b' (a `bp count:` line, the traversal banner or the -bb table header), 'zdb-S' or 'zdb-DD'."""
    head = text[:4_000_000]
    if _SNIFF_B.search(head):
        return "zdb-b"
    if _SNIFF_S.search(head):
        return "zdb-S"
    if _SNIFF_DD.search(head):
        return "zdb-DD"
    if zdb_config.sniff(head):
        return "zdb-C"
    return None


def strip_progress(line: str) -> str:
    """A raw line without its ``\\r`` progress segments (D.2); the stdout text glued after them is kept."""
    kept = []
    for seg in line.split("\r"):
        while True:
            m = _PROGRESS.match(seg)
            if not m or m.end() == 0:
                break
            seg = seg[m.end() :]
        if seg.strip():
            kept.append(seg)
    return "".join(kept)


_ELIDED = ("...", "[...]", "…", "[…]")  # rows an author left out of a pasted table


def _ratio(tok: str) -> float | None:
    v = float(tok)
    return None if math.isnan(v) or math.isinf(v) else v


def _pool_of(args: str) -> str | None:
    toks = args.split()
    pos: list[str] = []
    skip = False
    for t in toks:
        if t[0] in "|;&<>" or t[:2] in ("2>", "1>") or t == "&&":
            break
        if skip:
            skip = False
            continue
        if t.startswith("-") and len(t) > 1:
            for k, ch in enumerate(t[1:], 1):
                if ch in _ZDB_ARG_OPTS:
                    skip = k == len(t) - 1  # the argument is the next word
                    break
            continue
        pos.append(t)
    if not pos:
        return None
    return re.split(r"[/@]", pos[0])[0] or None


class _Reader:
    def __init__(self, text: str, fmt: str):
        self.lines = [strip_progress(ln) for ln in lines_of(text)]
        self.out = Parsed(tool=TOOL, format=fmt)
        self.pool: str | None = None
        self.block: dict | None = None  # current zdb_block_stats row
        self.n_blocks = 0
        self.banner_line: int | None = None  # open `Traversing ...` banner without its summary yet
        self.pending: list[dict] = []  # events before their summary
        self.leak: dict = {}
        self.ddt_no = 0
        self.sim_empty: int | None = None  # header-only simulated histogram: the line after its headers
        self.ddt_open = False  # inside a -D dump (objects seen, ratio line not yet)
        self.ddt_source = "ddt"
        self.ddt_object: str | None = None
        self.ddt_hist = False  # the open -D dump printed its aggregated histogram title

    # helpers -----------------------------------------------------------------------------
    def s(self, i: int) -> str:
        return self.lines[i].strip()

    def err(self, msg: str, i: int, expected: str, kind: str = "invalid") -> ParseError:
        return ParseError(msg, line=i + 1, expected=expected, kind=kind)

    def rest_blank(self, i: int) -> bool:
        return all(not ln.strip() for ln in self.lines[i + 1 :])

    def nice(self, tok: str, i: int, what: str) -> tuple[int | None, bool]:
        """A nicenum/nicebytes cell -> (integer value or None for '-', printed-with-suffix)."""
        if tok == "-":
            return None, False
        if tok.isdigit():  # -P raw integers: exact (a float loses them beyond 2**53, 8 PiB)
            return int(tok), False
        try:
            v = zfs_nicenum(tok)
        except UnitError:
            raise self.err(
                f"{what}: not a zfs number: {tok!r}", i, "a number with an optional K/M/G/T/P/E suffix"
            ) from None
        if math.isnan(v):
            return None, False
        return round(v), tok.rstrip("B")[-1:] in ("K", "M", "G", "T", "P", "E")

    def new_ddt(self, source: str) -> None:
        self.sim_empty = None
        self.ddt_no += 1
        self.ddt_source = source
        self.ddt_object = None
        self.ddt_hist = False

    def event(self, i: int, kind: str, **vals) -> None:
        row = {
            "block_no": None,
            "kind": kind,
            "vdev": None,
            "offset_bytes": None,
            "size_bytes": None,
            "errno": None,
            "count": None,
            "text": self.s(i),
            "line_start": i + 1,
            "line_end": i + 1,
        }
        row.update(vals)
        if self.block is not None and kind == "indirect_vdev":
            row["block_no"] = self.block["block_no"]
        else:
            self.pending.append(row)
        self.out.add("zdb_events", row)

    # main loop ---------------------------------------------------------------------------
    def run(self) -> Parsed:
        i, n = 0, len(self.lines)
        while i < n:
            s = self.s(i)
            if not s:
                i += 1
                continue
            i = self.line(i, s)
        if self.banner_line is not None:
            raise self.err(
                "zdb -b output ends before its summary",
                self.banner_line,
                "a `bp count:` summary block",
                kind="truncated",
            )
        self.check_ddt_closed(n - 1)
        if self.ddt_open:
            self.out.warnings.append("DDT object lines without the ratio line that ends zdb -D output")
        if not self.out.n_rows:
            first = next((k for k in range(n) if self.s(k)), 0)
            raise self.err(
                "no zdb block statistics or DDT output found",
                first,
                "zdb -b/-bb summary or table, zdb -S or zdb -D/-DD output",
            )
        return self.out

    def check_ddt_closed(self, i: int) -> None:
        if self.ddt_open and self.ddt_source == "simulated" and self.sim_empty is not None:
            # zdb -S of OpenZFS 2.3.1 can print the histogram's headers and nothing else (no rows, no
            # Total, no ratio line) for a pool full of blocks: zero entries, with a warning
            line = self.sim_empty
            self.out.warnings.append(
                f"line {line}: zdb -S printed an empty simulated DDT histogram (no rows, no "
                "Total, no ratio line; OpenZFS 2.3.1 does this): stored as zero entries, "
                "which may not be the pool's real dedup table"
            )
            zeros = dict.fromkeys(
                (
                    "alloc_blocks",
                    "alloc_lsize_bytes",
                    "alloc_psize_bytes",
                    "alloc_dsize_bytes",
                    "ref_blocks",
                    "ref_lsize_bytes",
                    "ref_psize_bytes",
                    "ref_dsize_bytes",
                ),
                0,
            )
            self.out.add(
                "zdb_ddt_histogram",
                {
                    "ddt_no": self.ddt_no,
                    "source": "simulated",
                    "object": None,
                    "refcnt_bucket": None,
                    "is_total": True,
                    **zeros,
                    "human_units": False,
                    "line_start": line,
                    "line_end": line,
                },
            )
            self.ddt_open, self.sim_empty = False, None
            return
        if self.ddt_open and (self.ddt_source == "simulated" or self.ddt_hist):
            raise self.err(
                "zdb -S/-DD output ends before its ratio line", i, "`dedup = ..., compress = ...`", kind="truncated"
            )

    def line(self, i: int, s: str) -> int:
        """Handle the line at i (non-blank); return the index of the next line to read."""
        m = _INVOCATION.match(s)
        if m:
            self.check_ddt_closed(i)
            self.pool = _pool_of(m.group(1))
            self.block = None
            self.ddt_open = False
            return i + 1
        if _BANNER.match(s):
            if self.banner_line is not None:
                raise self.err(
                    "a new zdb -b run starts before the previous one printed its summary",
                    self.banner_line,
                    "a `bp count:` summary block",
                    kind="truncated",
                )
            self.banner_line = i
            self.block = None
            return i + 1
        if s.startswith("bp count:"):
            return self.summary(i)
        for pat, fn in self.handlers:
            m = pat.match(s)
            if m:
                return fn(self, i, m)
        return i + 1  # other zdb output (-d, -c lines, Verified ... feature refcount, prose): ignored

    # -b events ---------------------------------------------------------------------------
    def h_no_leaks(self, i, m):
        self.leak = {"leaks": "none", "leaked_bytes": 0}
        self.event(i, "no_leaks")
        return i + 1

    def h_mismatch(self, i, m):
        trav, alloc, what, diff = int(m[1]), int(m[2]), m[3], int(m[4])
        if what == "leaked":
            self.leak = {"leaks": "leaked", "leaked_bytes": diff, "traversal_bytes": trav, "alloc_bytes": alloc}
        else:  # 0.6/0.7 under -L: not a leak check
            self.leak = {"traversal_bytes": trav, "alloc_bytes": alloc}
        self.event(i, "size_mismatch", size_bytes=diff)
        return i + 1

    def h_leaked_space(self, i, m):
        self.leak.setdefault("leaks", "leaked")
        self.event(i, "leaked_space", vdev=int(m[1]), offset_bytes=int(m[2], 16), size_bytes=int(m[3]))
        return i + 1

    def h_read_error(self, i, m):
        self.event(i, "read_error", errno=int(m[1]))
        return i + 1

    def h_error_counts(self, i, m):
        j = i + 1
        while j < len(self.lines) and self.s(j):
            r = _ERROR_ROW.match(self.s(j))
            if r:
                self.event(j, "error_count", errno=int(r[1]), count=int(r[2]))
            elif not self.s(j).startswith("errno"):
                break
            j += 1
        return j

    def h_indirect(self, i, m):
        size, _ = self.nice(m[3], i, "indirect mapping size")
        self.event(i, "indirect_vdev", vdev=int(m[1]), count=int(m[2]), size_bytes=size)
        return i + 1

    def h_other_error(self, i, m):
        self.event(i, "error")
        return i + 1

    # -b summary --------------------------------------------------------------------------
    def summary(self, i: int) -> int:
        seen: dict[str, re.Match] = {}
        classes: list[tuple[int, re.Match]] = []
        j = i
        n = len(self.lines)
        while j < n:
            s = self.s(j)
            label = next((lb for lb in _SUMMARY if s.startswith(lb)), None)
            is_class = label is None and s.startswith(tuple(_CLASS_LABELS))
            if label is None and not is_class:
                break
            m = (_SUMMARY[label] if label else _CLASS).fullmatch(s)
            if not m:
                kind = "truncated" if self.rest_blank(j) else "invalid"
                raise self.err(
                    f"unreadable summary line {s!r}", j, f"`{label or 'class'} N ...` as zdb prints it", kind=kind
                )
            if label:
                if label in seen:
                    break  # next block (two summaries without a blank line between)
                seen[label] = m
            else:
                classes.append((j, m))
            j += 1
        missing = [lb for lb in _MANDATORY if lb not in seen]
        if not classes:
            missing.append("Normal class:")
        if missing:
            kind = "truncated" if self.rest_blank(j - 1) else "invalid"
            raise self.err(
                f"zdb -b summary is missing `{missing[0]}`",
                j - 1 if kind == "truncated" else j,
                f"the `{missing[0]}` line of the summary",
                kind=kind,
            )
        self.n_blocks += 1
        labels = [m[1] for _, m in classes]
        era = (
            "2.4+"
            if "Special embedded log" in labels
            else "2.2+"
            if "bp cloned:" in seen
            else "2.1+"
            if "Embedded log class" in labels
            else "0.8+"
            if "SPA allocated:" not in labels
            else "0.6/0.7"
            if "bp deduped:" in seen
            else "pre-dedup"
        )
        g = {k: m.groups() for k, m in seen.items()}
        row = {
            "block_no": self.n_blocks,
            "pool": self.pool,
            "bp_count": int(g["bp count:"][0]),
            "ganged_count": int(g["ganged count:"][0]) if "ganged count:" in g else None,
            "bp_logical_bytes": int(g["bp logical:"][0]),
            "bp_logical_avg_bytes": int(g["bp logical:"][1]),
            "bp_physical_bytes": int(g["bp physical:"][0]),
            "bp_physical_avg_bytes": int(g["bp physical:"][1]),
            "compression_physical": _ratio(g["bp physical:"][2]),
            "bp_allocated_bytes": int(g["bp allocated:"][0]),
            "bp_allocated_avg_bytes": int(g["bp allocated:"][1]),
            "compression_allocated": _ratio(g["bp allocated:"][2]),
            "bp_deduped_bytes": int(g["bp deduped:"][0]) if "bp deduped:" in g else None,
            "dedup_ref_gt1_count": int(g["bp deduped:"][1]) if "bp deduped:" in g else None,
            "dedup_ratio": _ratio(g["bp deduped:"][2]) if "bp deduped:" in g else None,
            "bp_cloned_bytes": int(g["bp cloned:"][0]) if "bp cloned:" in g else None,
            "bp_cloned_count": int(g["bp cloned:"][1]) if "bp cloned:" in g else None,
            "embedded_bp_count": 0,
            "dittoed_same_vdev": 0,
            "dittoed_same_metaslab": None if era in ("0.6/0.7", "pre-dedup") else 0,
            "leaks": None,
            "leaked_bytes": None,
            "traversal_bytes": None,
            "alloc_bytes": None,
            "zfs_era": era,
            "line_start": i + 1,
            "line_end": j,
        }
        row.update(self.leak)
        self.out.add("zdb_block_stats", row)
        for k, m in classes:
            self.out.add(
                "zdb_classes",
                {
                    "block_no": self.n_blocks,
                    "class": _CLASS_LABELS[m[1]],
                    "allocated_bytes": int(m[2]),
                    "used_pct": _ratio(m[3]),
                    "line_start": k + 1,
                    "line_end": k + 1,
                },
            )
        for ev in self.pending:
            ev["block_no"] = self.n_blocks
        self.pending, self.leak, self.block, self.banner_line = [], {}, row, None
        return j

    def need_block(self, i: int, what: str) -> dict:
        if self.block is None:
            raise self.err(f"{what} outside a zdb -b summary", i, "a `bp count:` summary block before it")
        return self.block

    def h_embedded(self, i, m):
        blk = self.need_block(i, "embedded bp line")
        blk["embedded_bp_count"] += int(m[2])
        self.out.add(
            "zdb_embedded_bps",
            {
                "block_no": blk["block_no"],
                "embedded_type": int(m[1]),
                "bp_count": int(m[2]),
                "line_start": i + 1,
                "line_end": i + 1,
            },
        )
        return i + 1

    def h_ditto_vdev(self, i, m):
        self.need_block(i, "Dittoed line")["dittoed_same_vdev"] = int(m[1])
        return i + 1

    def h_ditto_ms(self, i, m):
        self.need_block(i, "Dittoed line")["dittoed_same_metaslab"] = int(m[1])
        return i + 1

    # -bb table ---------------------------------------------------------------------------
    def h_table(self, i, m):
        block_no = self.block["block_no"] if self.block else None
        n = len(self.lines)
        j, last, total_seen, stored = i + 1, None, False, 0
        while j < n:
            raw, s = self.lines[j], self.s(j)
            if not s:
                # -bbbb star histograms may be separated by blank lines: continue if a row follows
                k = j + 1
                while k < n and not self.s(k):
                    k += 1
                if total_seen or k >= n or not (self.row_cells(self.lines[k]) or _STAR_ROW.match(self.s(k))):
                    break
                j = k
                continue
            g = _GANGED.match(s)
            if s in _ELIDED:  # the author left rows out ('[...]'): the rows printed are kept
                self.out.warnings.append(f"line {j + 1}: {s!r} in the zdb -bb table: rows left out by the author")
            elif g and last is not None:
                last["ganged_blocks"] = int(g[1])
            elif _STAR_ROW.match(s) or _STAR_HEAD.match(s):
                pass
            else:
                cells = self.row_cells(raw)
                if cells is None:
                    break
                last = self.table_row(j, cells, block_no)
                stored += last is not None
                if last is not None and last["type_name"] == "Total" and last["level"] is None:
                    total_seen = True
            j += 1
        if not total_seen and self.block is not None and self.rest_blank(j):
            return self.cut_table(j, stored)
        if not total_seen:
            kind = "truncated" if self.rest_blank(j - 1) else "invalid"
            raise self.err(
                "zdb -bb table ends before its Total row",
                j - 1 if kind == "truncated" else j,
                "a `Total` row",
                kind=kind,
            )
        return j

    def cut_table(self, j: int, rows: int) -> int:
        """A -bb table that stops before its Total row at the end of the file, under a complete -b summary: cut
        where it was pasted. The summary and the complete rows are kept; a last row cut inside is dropped."""
        n = len(self.lines)
        partial = j < n and bool(self.s(j))
        self.out.warnings.append(
            f"line {j + 1 if partial else j}: the zdb -bb table stops before its Total row"
            f"{' inside a row (dropped)' if partial else ''}: the -b summary and the {rows} complete rows (of blocks) are kept"
        )
        return j + 1 if partial else j

    @staticmethod
    def row_cells(raw: str) -> list[str] | None:
        """The 7 value cells and the type of a -bb row (tab separated, or tabs expanded to spaces)."""
        if raw.count("\t") >= 7:
            parts = raw.split("\t")
            cells = [p.strip() for p in parts[:7]] + ["\t".join(parts[7:]).strip()]
        else:
            toks = raw.split()
            if len(toks) < 8:
                return None
            cells = toks[:7] + [" ".join(toks[7:])]
        if not all(_VALUE.match(c) for c in cells[:7]) or not cells[7]:
            return None
        return cells

    def table_row(self, j: int, cells: list[str], block_no: int | None) -> dict | None:
        if all(c == "-" for c in cells[:7]):
            return None
        name, level = cells[7], None
        lv = _LEVEL.match(name)
        if lv:
            level, name = int(lv[1]), lv[2]
        vals = [self.nice(c, j, h) for c, h in zip(cells[:5], ("Blocks", "LSIZE", "PSIZE", "ASIZE", "avg"))]
        ratios = []
        for c in cells[5:7]:
            try:
                ratios.append(None if c == "-" else _ratio(c))
            except ValueError:
                raise self.err(f"not a number: {c!r}", j, "comp and %Total as decimals") from None
        row = {
            "block_no": block_no,
            "type_name": name,
            "level": level,
            "blocks": vals[0][0],
            "lsize_bytes": vals[1][0],
            "psize_bytes": vals[2][0],
            "asize_bytes": vals[3][0],
            "avg_bytes": vals[4][0],
            "comp_ratio": ratios[0],
            "pct_total": ratios[1],
            "ganged_blocks": None,
            "human_units": any(h for _, h in vals),
            "line_start": j + 1,
            "line_end": j + 1,
        }
        self.out.add("zdb_block_types", row)
        return row

    # block size histogram ----------------------------------------------------------------
    def h_size_hist(self, i, m):
        block_no = self.block["block_no"] if self.block else None
        if self.block is not None and self.block["zfs_era"] == "0.8+":
            self.block["zfs_era"] = "2.0+"
        n = len(self.lines)
        j = i + 1
        heads = 0
        while j < n and (
            not self.s(j) or _NOTE.match(self.s(j)) or _HIST_HEAD1.match(self.s(j)) or _HIST_HEAD2.match(self.s(j))
        ):
            heads += bool(_HIST_HEAD1.match(self.s(j)) or _HIST_HEAD2.match(self.s(j)))
            j += 1
        if heads != 2:
            kind = "truncated" if j >= n else "invalid"
            raise self.err(
                "Block Size Histogram without its two header lines",
                min(j, n - 1),
                "`block psize lsize asize` and `size Count Size Cum. ...`",
                kind=kind,
            )
        rows = 0
        while j < n and self.s(j):
            toks = self.s(j).split()
            if len(toks) != 10:
                raise self.err(
                    f"block size histogram row has {len(toks)} fields",
                    j,
                    "size: and 9 numbers (Count Size Cum. for psize, lsize, asize)",
                )
            vals = [self.nice(t, j, "histogram cell") for t in [toks[0].rstrip(":")] + toks[1:]]
            if any(v is None for v, _ in vals):
                raise self.err("`-` in block size histogram", j, "numbers")
            names = (
                "block_size_bytes",
                "psize_count",
                "psize_bytes",
                "psize_cum_bytes",
                "lsize_count",
                "lsize_bytes",
                "lsize_cum_bytes",
                "asize_count",
                "asize_bytes",
                "asize_cum_bytes",
            )
            row = {
                "block_no": block_no,
                **{k: v for k, (v, _) in zip(names, vals)},
                "human_units": any(h for _, h in vals[1:]),
                "line_start": j + 1,
                "line_end": j + 1,
            }
            self.out.add("zdb_block_size_histogram", row)
            rows += 1
            j += 1
        if not rows:
            raise self.err(
                "Block Size Histogram has no rows",
                min(j, n - 1),
                "rows `512: ...` to `16M: ...`",
                kind="truncated" if j >= n else "invalid",
            )
        return j

    # DDT -----------------------------------------------------------------------------------
    def h_sim_title(self, i, m):
        if self.ddt_open and self.ddt_source == "simulated":
            raise self.err(
                "new zdb -S output before the ratio line of the previous one", i, "`dedup = ...` line", kind="truncated"
            )
        self.new_ddt("simulated")
        self.ddt_open = True
        return i + 1

    def h_agg_title(self, i, m):
        if not self.ddt_open:
            self.new_ddt("ddt")
            self.ddt_open = True
        self.ddt_object = None
        self.ddt_hist = True
        return i + 1

    def h_ddt_head(self, i, m):
        n = len(self.lines)
        j = i
        for pat in _DDT_HEAD:
            if j >= n or not pat.match(self.s(j)):
                kind = "truncated" if j >= n or self.rest_blank(j - 1) else "invalid"
                raise self.err(
                    "incomplete DDT histogram header", min(j, n - 1), f"a line like {pat.pattern!r}", kind=kind
                )
            j += 1
        if not self.ddt_open:  # a histogram without title: -DDD per-object, or a pasted snippet
            self.new_ddt("ddt")
            self.ddt_open = True
        source, obj = self.ddt_source, self.ddt_object
        total = False
        start = j
        while j < n and self.s(j):
            toks = self.s(j).split()
            if len(toks) != 9:
                kind = "truncated" if self.rest_blank(j) else "invalid"
                raise self.err(
                    f"DDT histogram row has {len(toks)} fields",
                    j,
                    "refcnt and 8 numbers (allocated and referenced blocks, LSIZE, PSIZE, DSIZE)",
                    kind=kind,
                )
            is_total = toks[0] == "Total"
            bucket = None if is_total else self.nice(toks[0], j, "refcnt")[0]
            vals = [self.nice(t, j, "DDT histogram cell") for t in toks[1:]]
            if any(v is None for v, _ in vals) or (bucket is None and not is_total):
                raise self.err("`-` in DDT histogram", j, "numbers")
            names = (
                "alloc_blocks",
                "alloc_lsize_bytes",
                "alloc_psize_bytes",
                "alloc_dsize_bytes",
                "ref_blocks",
                "ref_lsize_bytes",
                "ref_psize_bytes",
                "ref_dsize_bytes",
            )
            self.out.add(
                "zdb_ddt_histogram",
                {
                    "ddt_no": self.ddt_no,
                    "source": source,
                    "object": obj,
                    "refcnt_bucket": bucket,
                    "is_total": is_total,
                    **{k: v for k, (v, _) in zip(names, vals)},
                    "human_units": any(h for _, h in vals),
                    "line_start": j + 1,
                    "line_end": j + 1,
                },
            )
            total = total or is_total
            j += 1
        if obj is None and j > start and not total:
            kind = "truncated" if j >= n or self.rest_blank(j - 1) else "invalid"
            raise self.err("DDT histogram ends before its Total row", j - 1, "a ` Total ...` row", kind=kind)
        if j == start and source == "simulated":
            self.sim_empty = start  # 0-based index of the header's last line + 1
        elif j == start:
            self.out.warnings.append(f"line {start}: DDT histogram with headers only (empty pool)")
        return j

    def h_ratios(self, i, m):
        if not self.ddt_open:
            self.new_ddt("ddt")
        vals = [_ratio(x) for x in m.groups()]
        self.out.add(
            "zdb_ddt_ratios",
            {
                "ddt_no": self.ddt_no,
                "source": self.ddt_source,
                "pool": self.pool,
                "dedup": vals[0],
                "compress": vals[1],
                "copies": vals[2],
                "product": vals[3],
                "line_start": i + 1,
                "line_end": i + 1,
            },
        )
        self.ddt_open = False
        self.ddt_object = None
        return i + 1

    def ddt_row(self, i: int, kind: str, **vals) -> None:
        if not self.ddt_open or self.ddt_source != "ddt":
            self.new_ddt("ddt")
            self.ddt_open = True
        row = {
            "ddt_no": self.ddt_no,
            "pool": self.pool,
            "kind": kind,
            "name": None,
            "checksum": None,
            "ddt_type": None,
            "ddt_class": None,
            "entries": None,
            "disk_bytes_per_entry": None,
            "core_bytes_per_entry": None,
            "disk_bytes_total": None,
            "core_bytes_total": None,
            "totals_derived": None,
            "ddt_version": None,
            "flags": None,
            "flag_names": None,
            "object_id": None,
            "log_len": None,
            "log_txg": None,
            "line_start": i + 1,
            "line_end": i + 1,
        }
        row.update(vals)
        self.out.add("zdb_ddt_objects", row)

    def h_obj_old(self, i, m):
        entries, disk, core = int(m[5]), int(m[6]), int(m[7])
        self.ddt_row(
            i,
            "object",
            name=m[1],
            checksum=m[2],
            ddt_type=m[3],
            ddt_class=m[4],
            entries=entries,
            disk_bytes_per_entry=float(disk),
            core_bytes_per_entry=float(core),
            disk_bytes_total=float(entries * disk),
            core_bytes_total=float(entries * core),
            totals_derived=True,
        )
        self.ddt_object = m[1]
        return i + 1

    def h_obj_new(self, i, m):
        dspace, mspace, entries = int(m[5]), int(m[6]), int(m[7])
        self.ddt_row(
            i,
            "object",
            name=m[1],
            checksum=m[2],
            ddt_type=m[3],
            ddt_class=m[4],
            entries=entries,
            disk_bytes_per_entry=dspace / entries if entries else None,
            core_bytes_per_entry=mspace / entries if entries else None,
            disk_bytes_total=float(dspace),
            core_bytes_total=float(mspace),
            totals_derived=False,
        )
        self.ddt_object = m[1]
        return i + 1

    def h_ddt_table(self, i, m):
        self.ddt_row(
            i,
            "table",
            name=m[1],
            checksum=m[2],
            ddt_version=int(m[3]),
            flags=int(m[4], 16),
            flag_names=m[5],
            object_id=int(m[6]),
        )
        return i + 1

    def h_ddt_log(self, i, m):
        self.ddt_row(
            i,
            "log",
            name=m[1],
            checksum=m[2],
            flags=int(m[4], 16),
            flag_names=m[5],
            object_id=int(m[6]),
            log_len=int(m[7]),
            log_txg=int(m[8]),
            entries=int(m[9]),
        )
        self.ddt_object = None
        return i + 1

    def h_all_empty(self, i, m):
        self.ddt_row(i, "all_empty")
        self.ddt_open = False
        return i + 1

    handlers = (
        (_NO_LEAKS, h_no_leaks),
        (_MISMATCH, h_mismatch),
        (_LEAKED_SPACE, h_leaked_space),
        (_READ_ERROR, h_read_error),
        (_ERROR_COUNTS, h_error_counts),
        (_INDIRECT, h_indirect),
        (_EMBEDDED, h_embedded),
        (_DITTO_VDEV, h_ditto_vdev),
        (_DITTO_MS, h_ditto_ms),
        (_TABLE_HEAD, h_table),
        (_HIST_TITLE, h_size_hist),
        (_SIM_TITLE, h_sim_title),
        (_AGG_TITLE, h_agg_title),
        (_DDT_HEAD[0], h_ddt_head),
        (_RATIOS, h_ratios),
        (_DDT_LOG, h_ddt_log),
        (_DDT_TABLE, h_ddt_table),
        (_DDT_OBJ_OLD, h_obj_old),
        (_DDT_OBJ_NEW, h_obj_new),
        (_ALL_EMPTY, h_all_empty),
        (re.compile(r"^(block claim error|zdb_count_block|zdb_blkptr_cb)\b|^error\b", re.IGNORECASE), h_other_error),
    )


def parse(text: str, fmt: str | None = None) -> Parsed:
    """Rows of every zdb -b/-bb/-bbb, -S and -D/-DD/-DDD section in ``text``."""
    if not text.strip():
        raise ParseError("zdb output is empty", kind="empty", expected="zdb -b, -S or -DD output")
    if fmt is None:
        fmt = sniff(text)
        if fmt is None:
            first = next((k for k, ln in enumerate(lines_of(text), 1) if ln.strip()), 1)
            raise ParseError(
                "not zdb output",
                line=first,
                kind="invalid",
                expected="a `bp count:` line, `Simulated DDT histogram:`, `DDT-...: N entries` / "
                "`dspace=`, the -bb table header or `All DDTs are empty`",
            )
    elif fmt not in FORMATS:
        raise ParseError(f"unknown zdb format {fmt!r}", kind="invalid", expected=" or ".join(FORMATS))
    if fmt == "zdb-C":  # configurations only (zdb -C, zdb -l)
        parsed = Parsed(tool=TOOL, format=fmt)
        if not zdb_config.add_configs([strip_progress(ln) for ln in lines_of(text)], parsed):
            raise ParseError("no vdev_tree in the zdb configuration", kind="truncated", expected="a vdev_tree")
        return parsed
    parsed = _Reader(text, fmt).run()
    if "vdev_tree" in text:  # the configuration printed before other output (zdb POOL, zdb -C -b ...)
        zdb_config.add_configs([strip_progress(ln) for ln in lines_of(text)], parsed)
    return parsed
