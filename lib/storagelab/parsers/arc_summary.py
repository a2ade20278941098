"""arc_summary (OpenZFS 2.x, Python 3) and the older arc_summary.py / arc_summary.pl: the lines that carry the
ARC's key kstat values, stored under the kstat's name. A part of the arcstats parser (``arcstats.py``).

Each line is ``LABEL:`` then, after two or more spaces, the values: a percent or ratio and a size
(``50.1 %    7.8 GiB``; old: ``80.00%  80.00   GiB``; ``16:1   15.6 GiB`` for the maximum), or a count
(``1.2G``, ``10.6M``: powers of 1000; old: ``1.23b``, ``936.15k``, ``10.87m``: thousand, million, billion).
Labels of the two generations differ in case and punctuation (``Target size (adaptive):`` and
``Target Size: (Adaptive)``): both are matched. The old ``ARC Size Breakdown`` is not the MRU/MFU sizes the
new one prints: its ``Recently Used Cache Size`` is the MRU target ``p`` (stored as ``p``) and its
``Frequently Used Cache Size`` the rest of ``size`` or ``c`` (not stored; OpenZFS 0.7
``cmd/arc_summary/arc_summary.py``, ``get_arc_summary``). Hit and miss lines inside an L2ARC breakdown are the L2ARC's.
"""

from __future__ import annotations

import re

from .base import Parsed, ParseError

_SPLIT = re.compile(r"^(\S.*?):?\s{2,}(\S.*)$")
# the number starts the text or follows a blank (reliability-32: '62,0 GiB', a decimal comma, was read as 0 GiB)
_SIZE = re.compile(r"(?:^|(?<=\s))(-?\d+(?:\.\d+)?)\s*(B|Bytes|KiB|MiB|GiB|TiB|PiB|EiB)\s*$")
_COUNT = re.compile(r"(?:^|(?<=\s))(\d+(?:\.\d+)?)\s*([kKMGTPEZbmtq]?)\s*$")
_IEC = {"B": 0, "Bytes": 0, "KiB": 1, "MiB": 2, "GiB": 3, "TiB": 4, "PiB": 5, "EiB": 6}
_DECIMAL = {"": 0, "k": 1, "K": 1, "M": 2, "m": 2, "G": 3, "b": 3, "T": 4, "t": 4, "P": 5, "q": 5, "E": 6, "Z": 7}

# normalised label (lower case, ':' removed, single spaces) -> (kstat name, unit)
_LABELS = {
    "arc size (current)": ("size", "bytes"),
    "arc size": ("size", "bytes"),
    "target size (adaptive)": ("c", "bytes"),
    "min size (hard limit)": ("c_min", "bytes"),
    "max size (high water)": ("c_max", "bytes"),
    "metadata cache size (hard limit)": ("arc_meta_limit", "bytes"),
    "metadata cache size (current)": ("arc_meta_used", "bytes"),
    "metadata size (hard limit)": ("arc_meta_limit", "bytes"),  # arc_summary.py 0.7.10+
    "metadata size": ("arc_meta_used", "bytes"),
    "dnode size (hard limit)": ("arc_dnode_limit", "bytes"),
    "dnode size": ("dnode_size", "bytes"),
    "dnode cache size (hard limit)": ("arc_dnode_limit", "bytes"),
    "dnode cache size (current)": ("dnode_size", "bytes"),
    "most frequently used (mfu) cache size": ("mfu_size", "bytes"),
    "most recently used (mru) cache size": ("mru_size", "bytes"),
    # arc_summary.py (ZoL <= 0.7) and arc_summary.pl print the MRU *target* p under 'Recently Used Cache Size'
    # (get_arc_summary: mru_size = arcstats.p) and 'Frequently Used Cache Size' as size - p or c - p: a
    # difference, no kstat, so it is not stored
    "recently used cache size": ("p", "bytes"),
    "cache hit ratio": ("hits", "count"),
    "cache miss ratio": ("misses", "count"),
    "total hits": ("hits", "count"),
    "total i/o hits": ("iohits", "count"),
    "total misses": ("misses", "count"),
    "l2arc size (adaptive)": ("l2_size", "bytes"),
    "l2 arc size (adaptive)": ("l2_size", "bytes"),
}
_L2_LABELS = {"hit ratio": ("l2_hits", "count"), "miss ratio": ("l2_misses", "count")}
_L2_SECTION = re.compile(r"^l2 ?arc breakdown", re.I)
_VERSION = re.compile(r"^(?:Linux|FreeBSD)\s+\S+\s{2,}(\S+)$")  # 2.x: 'Linux 5.15.107-1-pve    2.1.11-pve1'


def _norm(label: str) -> str:
    return " ".join(label.replace(":", " ").lower().split())


def _value(values: str, unit: str) -> float | None:
    if unit == "bytes":
        m = _SIZE.search(values)
        return float(m.group(1)) * 1024 ** _IEC[m.group(2)] if m else None
    m = _COUNT.search(values)
    return float(m.group(1)) * 1000 ** _DECIMAL[m.group(2)] if m else None


def parse_summary(lines: list[str], parsed: Parsed) -> None:
    """Rows of arc_stats for the key lines of an arc_summary report."""
    in_l2 = False
    seen: set[str] = set()
    for lineno, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s:
            continue
        if not raw.startswith((" ", "\t")):
            in_l2 = bool(_L2_SECTION.match(s))
            version = _VERSION.match(s)
            if version and parsed.tool_version is None:
                parsed.tool_version = version.group(1)
        m = _SPLIT.match(s)
        if not m:
            continue
        label = _norm(m.group(1))
        name_unit = (_L2_LABELS.get(label) if in_l2 else None) or _LABELS.get(label)
        if name_unit is None or name_unit[0] in seen:
            continue
        name, unit = name_unit
        value = _value(m.group(2), unit)
        if value is None:
            raise ParseError(
                f"arc_summary {m.group(1)!r}: no {'size' if unit == 'bytes' else 'count'} in {m.group(2)!r}",
                line=lineno,
                expected="a size with a binary unit (7.8 GiB) or a count (1.2G, 10.87m)",
            )
        seen.add(name)
        parsed.add(
            "arc_stats",
            {
                "name": name,
                "value": value,
                "unit": unit,
                "exact": False,
                "kstat_type": None,
                "label": m.group(1).strip(),
                "line_start": lineno,
                "line_end": lineno,
            },
        )
