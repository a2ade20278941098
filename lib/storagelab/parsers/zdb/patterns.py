"""The lines of zdb output, as patterns (docs/formats/log-formats.md section D), and the small readers of
single tokens: progress output stripped, ratios, the pool named on a command line."""

from __future__ import annotations

import math
import re

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
_CLASS_TAIL = re.compile(r"\s\d+\s+used:\s*\S+\s*%$")  # a class line's end, whatever its label (reliability-34)
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
_OTHER_ERROR = re.compile(r"^(block claim error|zdb_count_block|zdb_blkptr_cb)\b|^error\b", re.IGNORECASE)

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
