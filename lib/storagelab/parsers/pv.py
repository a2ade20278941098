"""pv (pipe viewer): its progress updates as written to a file with ``-f`` (``\\r`` between updates) and its
numeric mode ``-n`` (one number a line).

Grammar (docs/formats/transfers.md, section pv; pv 1.6 ``src/pv/display.c`` and pv(1)): an update is the
components asked for, in this order, separated by blanks: ``NAME:`` (``-N``, right-aligned), the amount (``-b``;
``64.2MiB``), the timer (``-t``; ``H:MM:SS``), the rate (``-r``; ``[18.3MiB/s]``), the average rate (``-a``;
``[19.7MiB/s]``), the bar (``-p``; ``[====>   ] 15%``, or a moving ``<=>`` without a size), the ETA (``-e``;
``ETA 0:00:01``, blank in the last update). With no option pv shows ``-p -t -e -r -b``. Units: pv >= 1.3.0
prints IEC labels (``KiB``, ``MiB``: powers of 1024); pv before 1.3.0 printed the same powers of 1024 as ``kB``,
``MB`` (changelog 1.3.0: "use IEEE1541 units"), the form of most published pastes, and a label without ``i`` is
read so (``units_iec`` false, and a warning); pv >= 1.8 with ``--si`` means powers of 1000 by the same labels, which
the text cannot tell apart (docs/formats/transfers.md).

With ``-n`` each line is a number: the percentage, or the bytes with ``-b``, preceded by the elapsed seconds with
``-t`` (``2.0034 41943040``). A column of numbers never above 100 whose last is 100 is read as percentages,
any other as bytes (a byte count of at most 100 would be misread: such a transfer is no measurement).

With one rate in brackets pv cannot say whether it is ``-r`` or ``-a``: it is stored as ``rate_bytes_per_s`` and
``average_rate_bytes_per_s`` stays NULL.
"""

from __future__ import annotations

import re

from ..units import UnitError, hms_to_ns, prefixed_bytes
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, table

TOOL = "pv"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {"pv": "-f progress", "pv-numeric": "-n"}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
HELPER_MODULES: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None

TABLES = {
    "pv_updates": table(
        "pv's progress updates (`-f` to a file: one per `\\r`-separated field; `-n`: one per line).",
        ("seq", "INTEGER", "0-based order of the update in the file"),
        ("name", "VARCHAR", "`-N NAME` prefix; NULL when none"),
        (
            "bytes",
            "DOUBLE",
            "amount transferred so far, bytes (prefixes: powers of 1024, see units_iec); NULL if not shown",
        ),
        ("elapsed_ns", "DOUBLE", "the timer (whole seconds; -n -t: as printed), nanoseconds"),
        ("rate_bytes_per_s", "DOUBLE", "current rate, bytes/s (the only bracketed rate when one is shown)"),
        ("average_rate_bytes_per_s", "DOUBLE", "average rate since the start (`-a`, second bracketed rate), bytes/s"),
        ("pct", "DOUBLE", "percentage done (bar or -n), percent; NULL when not shown"),
        ("eta_ns", "DOUBLE", "ETA, nanoseconds; NULL when not shown or blank"),
        ("numeric", "BOOLEAN", "true for -n output"),
        (
            "units_iec",
            "BOOLEAN",
            "true when the update's labels had the `i` (KiB, MiB: pv >= 1.3.0), false without it (kB, MB: pv < 1.3.0; "
            "read as powers of 1024 all the same, see the file's warning); NULL with no prefixed value",
        ),
        ("is_last", "BOOLEAN", "true for the last update of its name in the file (the transfer's end values)"),
        *LINES,
    ),
}

_ITEM = re.compile(
    r"(?P<timer>\d+:\d\d:\d\d)(?!\S)"
    r"|\[\s*(?P<rate>(?P<rn>\d+(?:[.,]\d+)?)\s{0,2}(?P<rp>[kKMGTPEZY]?)(?P<ri>i?)(?P<ru>[Bb]))/s\]"
    r"|\[(?P<bar>[=<> -]*)\](?:\s+(?P<pct>\d+)%)?"
    r"|ETA\s+(?P<eta>\d+:\d\d:\d\d)|ETA\s*$"
    r"|(?P<bytes>(?P<bn>\d+(?:[.,]\d+)?)\s{0,2}(?P<bp>[kKMGTPEZY]?)(?P<bi>i?)(?P<bu>[Bb]))(?![/\w])"
)
_NAME = re.compile(r"^\s*(?!\d+:\d\d)([^\s:][^:]*?):\s")
_NUMERIC = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)\s+)?(\d+)\s*$")
_SNIFF = re.compile(
    r"^(?:\s*\S+:\s+)?\s*\d+(?:\.\d+)?\s?[kKMGT]?i?B\s+\d+:\d\d:\d\d\s+\[|"
    r"\d+:\d\d:\d\d \[\s*\d+(?:\.\d+)?\s?[kKMGT]?i?B/s\]",
    re.M,
)


def sniff(text: str) -> str | None:
    """``pv`` for -f updates; ``pv-numeric`` for a file of two or more lines that are each a number or
    ``seconds number`` (pv -n; no other supported tool writes that)."""
    head = text[:200000]
    if _SNIFF.search(head):
        return "pv"
    lines = [ln for ln in lines_of(head) if ln.strip()]
    return "pv-numeric" if len(lines) >= 2 and all(_NUMERIC.match(ln) for ln in lines) else None


def _amount(number: str, prefix: str, unit: str, n: int) -> float:
    """Bytes (or bytes/s) of a pv value: byte prefixes are powers of 1024 with or without the ``i`` (module doc);
    ``unit`` ``b`` is bits (``--bits``: SI prefixes, powers of 1000, divided by 8)."""
    try:
        value = prefixed_bytes(number.replace(",", "."), prefix.upper() if prefix == "k" else prefix,
                               1000 if unit == "b" else 1024)  # fmt: skip
    except UnitError as e:
        raise ParseError(str(e), line=n, expected="a pv amount such as 64.2MiB") from None
    return value / 8 if unit == "b" else value


def update(segment: str, n: int) -> dict:
    """One pv update (the text between two ``\\r``) as a row's values; ParseError for anything else in it."""
    row: dict = {"name": None, "bytes": None, "elapsed_ns": None, "rate_bytes_per_s": None,
                 "average_rate_bytes_per_s": None, "pct": None, "eta_ns": None}  # fmt: skip
    rest = segment
    m = _NAME.match(rest)
    if m:
        row["name"], rest = m.group(1).strip(), rest[m.end() :]
    iec: set[bool] = set()
    pos = 0
    for it in _ITEM.finditer(rest):
        if rest[pos : it.start()].strip():
            break
        pos = it.end()
        g = it.groupdict()
        if g["timer"]:
            row["elapsed_ns"] = hms_to_ns(g["timer"])
        elif g["rate"]:
            key = "rate_bytes_per_s" if row["rate_bytes_per_s"] is None else "average_rate_bytes_per_s"
            row[key] = _amount(g["rn"], g["rp"], g["ru"], n)
            iec.add(bool(g["ri"])) if g["rp"] and g["ru"] == "B" else None
        elif g["bar"] is not None:
            row["pct"] = float(g["pct"]) if g["pct"] else None
        elif g["eta"]:
            row["eta_ns"] = hms_to_ns(g["eta"])
        elif g["bytes"]:
            row["bytes"] = _amount(g["bn"], g["bp"], g["bu"], n)
            iec.add(bool(g["bi"])) if g["bp"] and g["bu"] == "B" else None
    if rest[pos:].strip() or pos == 0:
        raise ParseError(
            f"not a pv update: {segment.strip()[:80]!r}",
            line=n,
            expected="pv -f's components: [NAME:] amount, H:MM:SS, [rate/s], [average/s], [bar] N%, ETA",
        )
    row["units_iec"] = None if not iec else (iec.pop() if len(iec) == 1 else None)
    return row


def _numeric(lines: list[str]) -> list[tuple[int, dict]] | None:
    """pv -n output: every non-blank line a number (or `seconds number`), else None."""
    found = []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        m = _NUMERIC.match(raw)
        if not m:
            return None
        found.append((n, m))
    if not found:
        return None
    values = [float(m.group(2)) for _, m in found]
    pct = max(values) <= 100 and values[-1] == 100
    return [
        (n, {"name": None, "bytes": None if pct else v, "elapsed_ns": float(m.group(1)) * 1e9 if m.group(1) else None,
             "rate_bytes_per_s": None, "average_rate_bytes_per_s": None, "pct": v if pct else None, "eta_ns": None,
             "numeric": True, "units_iec": None})
        for (n, m), v in zip(found, values, strict=True)
    ]  # fmt: skip


def parse(text: str, fmt: str | None = None) -> Parsed:
    parsed = Parsed(tool=TOOL, format="pv-numeric" if fmt == "pv-numeric" else "pv")
    lines = lines_of(text)
    rows = _numeric(lines)
    if rows is None:
        rows = []
        for n, raw in enumerate(lines, 1):
            if not raw.strip() or SHELL_PROMPT.match(raw):
                continue
            for seg in raw.split("\r"):
                if seg.strip():
                    rows.append((n, {**update(seg, n), "numeric": False}))
    if not rows:
        raise ParseError("no pv update found", line=1, expected="pv -f or pv -n output")
    legacy = next((n for n, r in rows if r["units_iec"] is False), None)
    if legacy is not None:
        parsed.warnings.append(
            f"line {legacy}: units without the 'i' (kB, MB): read as powers of 1024, as pv before 1.3.0 printed them; "
            "pv 1.8+ with --si means powers of 1000 by them (then 2.3 % (k) to 6.9 % (G) less)"
        )
    last_of = {r["name"]: i for i, (_, r) in enumerate(rows)}
    for i, (n, r) in enumerate(rows):
        parsed.add("pv_updates", {"seq": i, **r, "is_last": last_of[r["name"]] == i, "line_start": n, "line_end": n})
    return parsed
