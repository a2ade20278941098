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

from .. import zdb_config
from ..base import Parsed, ParseError, lines_of
from .patterns import _SNIFF_B, _SNIFF_DD, _SNIFF_S, strip_progress
from .reader import Reader
from .schema import TABLES

__all__ = ["TOOL", "PARSER_VERSION", "READS", "TABLES", "FORMATS", "sniff", "parse", "strip_progress"]

TOOL = "zdb"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {"zdb-b": "-b/-bb", "zdb-S": "-S", "zdb-DD": "-DD", "zdb-C": "-C/-l"}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None
FORMATS = ("zdb-b", "zdb-S", "zdb-DD", "zdb-C")
HELPER_MODULES = ("zdb_config",)  # part of this parser: its code is in the parser version too


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
    parsed = Reader.of(text, Parsed(tool=TOOL, format=fmt)).run()
    if "vdev_tree" in text:  # the configuration printed before other output (zdb POOL, zdb -C -b ...)
        zdb_config.add_configs([strip_progress(ln) for ln in lines_of(text)], parsed)
    return parsed
