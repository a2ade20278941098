"""dd: the records lines and the transfer line dd prints on stderr when it ends (or on SIGUSR1/SIGINFO), and GNU
dd's ``status=progress`` lines.

Grammar (docs/formats/transfers.md, section dd; from the tools' source):

* ``F+P records in`` / ``F+P records out`` (full + partial blocks): GNU coreutils, BSD and BusyBox alike.
* GNU coreutils (``print_xfer_stats``): ``N bytes (SI, IEC) copied, T s, R/s``; ``N bytes (SI) copied, ...`` when
  the IEC form has no prefix, and ``N byte(s) copied, ...`` below 1 kB; coreutils < 8.24 printed only the SI form.
  The amount and rate are SI (``MB`` = 10^6 B), the parenthesised IEC form (``MiB``) powers of 1024. ``T`` is
  ``%g s`` (``%.0f s`` in a progress line); the rate is ``Infinity B/s`` when no time passed (stored NULL).
  ``status=progress`` prints the same line every second, each after a ``\\r``, all on the physical line before
  the records lines.
* BSD / macOS (``bin/dd/misc.c: summary``): ``N bytes transferred in T secs (R bytes/sec)`` (``seconds`` in some
  older BSD-derived dd).
* BusyBox with FEATURE_DD_THIRD_STATUS_LINE: ``N bytes (XB) copied, T seconds, RB/s``; its ``make_human_readable_str``
  divides by 1024, so ``64.2MB`` is 64.2 MiB. Without that feature (Debian's busybox) only the records lines.

The byte count ``N`` is exact and is what ``bytes`` holds; the duration is as printed; ``rate_bytes_per_s`` is the
printed rate (rounded to 2-3 digits by dd) and ``computed_rate_bytes_per_s`` bytes / duration.
"""

from __future__ import annotations

import re

from ..units import UnitError, prefixed_bytes
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, table

TOOL = "dd"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {"dd": "its records/bytes summary"}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
HELPER_MODULES: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None

TABLES = {
    "dd_transfers": table(
        "dd's end-of-run statistics (records lines and transfer line; one row per dd run) and GNU dd's "
        "`status=progress` lines (one row each, `progress` true).",
        ("seq", "INTEGER", "0-based order of the row in the file"),
        ("flavour", "VARCHAR", "gnu, bsd or busybox: which dd's transfer line (NULL when only records lines)"),
        ("progress", "BOOLEAN", "true for a `status=progress` line (no records counts), false for the end statistics"),
        ("records_in_full", "BIGINT", "`F` of `F+P records in`, count; NULL for a progress line"),
        ("records_in_partial", "BIGINT", "`P` of `F+P records in`, count"),
        ("records_out_full", "BIGINT", "`F` of `F+P records out`, count"),
        ("records_out_partial", "BIGINT", "`P` of `F+P records out`, count"),
        ("bytes", "DOUBLE", "bytes copied as printed (exact), bytes; NULL when dd printed no transfer line"),
        ("duration_ns", "DOUBLE", "elapsed time as printed, nanoseconds"),
        (
            "rate_bytes_per_s",
            "DOUBLE",
            "printed rate, bytes/s (GNU: SI, MB/s = 10^6 B/s; BusyBox: powers of 1024; BSD: bytes/sec); NULL for "
            "`Infinity B/s`",
        ),
        ("computed_rate_bytes_per_s", "DOUBLE", "bytes / duration, bytes/s; NULL when the duration is 0"),
        *LINES,
    ),
}

_RECORDS = re.compile(r"^\s*(\d+)\+(\d+) records (in|out)\s*$")
_NUM = r"([0-9]+(?:[.,][0-9]*)?(?:e[-+]?[0-9]+)?)"
# GNU: N bytes (67 MB, 64 MiB) copied, 0.993853 s, 84.6 MB/s | N bytes copied, ... | 1 byte copied, ...
_GNU = re.compile(rf"^(\d+) bytes? (?:\(([^)]*)\) )?copied, {_NUM} s, (?:{_NUM} ?([kKMGTPE]?)B/s|Infinity B/s)\s*$")
_BSD = re.compile(rf"^(\d+) bytes transferred in {_NUM} sec(?:ond)?s \({_NUM} bytes/sec\)\s*$")
_BUSYBOX = re.compile(rf"^(\d+) bytes \(([^)]*)\) copied, {_NUM} seconds, {_NUM}([kKMGTPE]?)B/s\s*$")
_OTHER_DD = re.compile(
    r"^\s*(?:\d+ truncated (?:records?|blocks?)|\d+ odd length swab blocks?|dd: .*|\d+ sparse output blocks?)\s*$"
)
_SNIFF = re.compile(
    r"^\s*\d+\+\d+ records in\s*\n\s*\d+\+\d+ records out\s*$"
    r"|^\r?\d+ bytes? (?:\([^)]*\) )?copied, [0-9.e+-]+ s(?:econds)?, "
    r"|^\d+ bytes transferred in [0-9.]+ secs \(",
    re.M,
)


_FIRST = re.compile(r"^\r?(?:\d+\+\d+ records in|\d+ bytes? (?:\(|copied|transferred))")


def sniff(text: str) -> str | None:
    """``dd`` when the text holds dd's statistics and begins with them (after blank and shell prompt lines): a
    paste of another tool's run with a dd beside it (bonnie++ and a `dd ... && sync`) is that tool's."""
    head = text[:200000]
    if not _SNIFF.search(head):
        return None
    first = next((ln for ln in lines_of(head) if ln.strip() and not SHELL_PROMPT.match(ln)), "")
    return "dd" if _FIRST.match(first.strip(" \t")) else None


def _num(s: str, lineno: int) -> float:
    try:
        return float(s.replace(",", "."))
    except ValueError:
        raise ParseError(f"not a number: {s!r}", line=lineno, expected="a number") from None


def transfer_line(text: str, lineno: int) -> dict | None:
    """The values of one transfer line (GNU, BSD or BusyBox grammar), or None when the text is none of them."""
    t = text.strip()
    try:
        m = _GNU.match(t)
        if m:
            rate = None if m.group(4) is None else prefixed_bytes(m.group(4).replace(",", "."), m.group(5), 1000)
            return {"flavour": "gnu", "bytes": float(m.group(1)), "s": _num(m.group(3), lineno), "rate": rate}
        m = _BSD.match(t)
        if m:
            return {"flavour": "bsd", "bytes": float(m.group(1)), "s": _num(m.group(2), lineno),
                    "rate": _num(m.group(3), lineno)}  # fmt: skip
        m = _BUSYBOX.match(t)
        if m:
            rate = prefixed_bytes(m.group(4), m.group(5), 1024)
            return {"flavour": "busybox", "bytes": float(m.group(1)), "s": _num(m.group(3), lineno), "rate": rate}
    except UnitError as e:
        raise ParseError(str(e), line=lineno, expected="a dd transfer line") from None
    return None


def _row(parsed: Parsed, seq: int, x: dict | None, progress: bool, records: dict, first: int, last: int) -> None:
    ns = None if x is None else x["s"] * 1e9
    parsed.add(
        "dd_transfers",
        {
            "seq": seq,
            "flavour": None if x is None else x["flavour"],
            "progress": progress,
            "records_in_full": records.get("in", (None, None))[0],
            "records_in_partial": records.get("in", (None, None))[1],
            "records_out_full": records.get("out", (None, None))[0],
            "records_out_partial": records.get("out", (None, None))[1],
            "bytes": None if x is None else x["bytes"],
            "duration_ns": ns,
            "rate_bytes_per_s": None if x is None else x["rate"],
            "computed_rate_bytes_per_s": x["bytes"] / x["s"] if x and x["s"] > 0 else None,
            "line_start": first,
            "line_end": last,
        },
    )


def parse(text: str, fmt: str | None = None) -> Parsed:
    parsed = Parsed(tool=TOOL, format="dd")
    seq = 0
    records: dict[str, tuple[int, int]] = {}
    first = 0
    lines = lines_of(text)
    for n, raw in enumerate(lines, 1):
        parts = [p for p in raw.split("\r") if p.strip()]
        if not parts or SHELL_PROMPT.match(raw):
            continue
        *progress, last = parts
        for p in progress:  # status=progress lines, each after a \r
            x = transfer_line(p, n)
            if x is None:
                raise ParseError(f"not a dd line: {p.strip()[:80]!r}", line=n, expected="a dd status=progress line")
            _row(parsed, seq, x, True, {}, n, n)
            seq += 1
        rec = _RECORDS.match(last)
        if rec:
            if records and (rec.group(3) == "in" or rec.group(3) in records):
                # a dd run with records lines only (status=noxfer, BusyBox without the third line) ends here
                _row(parsed, seq, None, False, records, first, n - 1)
                seq, records = seq + 1, {}
            if not records:
                first = n
            records[rec.group(3)] = (int(rec.group(1)), int(rec.group(2)))
            continue
        x = transfer_line(last, n)
        if x is not None:
            _row(parsed, seq, x, bool(raw.startswith("\r") and not records), records, first or n, n)
            seq, records, first = seq + 1, {}, 0
        elif _OTHER_DD.match(last):
            parsed.warnings.append(f"line {n}: {last.strip()[:120]}")
        else:
            raise ParseError(
                f"not a dd line: {last.strip()[:80]!r}",
                line=n,
                expected="'F+P records in/out' or dd's transfer line (GNU, BSD or BusyBox)",
            )
    if records:
        _row(parsed, seq, None, False, records, first, len(lines))
    if not parsed.count("dd_transfers"):
        raise ParseError("no dd statistics found", line=1, expected="'F+P records in' and 'F+P records out'")
    return parsed
