"""mbuffer: the ``summary:`` line and the ``in @ ..., out @ ...`` status lines.

Format (mbuffer.c ``summary()``, ``statusThread()`` and ``kb2str()``; checked against the 2008
Thumper logs of seed 001 and real runs of R20230301, tests/fixtures/mbuffer/):

* ``summary: [Nx ]AMOUNT [U]Byte in DURATION - average of RATE [U]B/s[, Nx empty][, Nx full]``
  (``Nx`` when mbuffer wrote to N outputs; the average is then N times the input rate).
* ``in @ RATE [U]B/s, out @ RATE [U]B/s, [N x ]TOTAL [U]B total, buffer P% full[, D% done]``.
  On stderr these are separated by ``\\r`` (one physical line holds many); in a ``-l`` log file
  they are one per line and prefixed ``mbuffer: ``.
* ``kb2str`` works on KiB and divides by 1024 while the value exceeds 10000: the unit letters
  k/M/G/T are always powers of 1024 (docs/formats/zfs-facts.md F21). Releases before 20180318 print them
  without the ``i`` (``MB/s``, ``GByte``), newer ones with it (``MiB/s``, ``GiByte``);
  ``units_binary`` records which labels the line used, the values are converted the same way.
* When the value is exactly 10000 of a unit (10000 MiB = ``dd bs=1M count=10000``), ``kb2str``
  falls through to ``%5.lg `` and prints no unit letter: ``1e+04 Byte``. The number is stored as
  printed (10000 bytes) with ``suspect`` set and a warning giving what rate x time implies.
  The 2008 socat runs show it, and so does R20230301 (fixture stderr-10000m.txt).
* Durations: ``4 min 59.3 sec`` (2008), `` 9.5sec``, ``1min 05.0sec``, ``1h 02min 03.0sec``.
* Other ``mbuffer: ...`` lines (warnings, errors) are kept as warnings; any other line is an error.
"""

from __future__ import annotations

import re

from ..units import UnitError, duration_to_ns, mbuffer_bytes, mbuffer_rate
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, table

TOOL = "mbuffer"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {"mbuffer-summary": "its summary line"}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
HELPER_MODULES: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None
FORMATS = ("mbuffer-summary",)

_UNITS_BINARY = (
    "units_binary",
    "BOOLEAN",
    "true when the line printed IEC labels (kiB, MiB/s, GiByte: mbuffer >= 20180318), false for the "
    "legacy labels (kB, MB/s, GByte) of older releases; both mean powers of 1024 and are converted so. "
    "NULL when no value on the line carried a unit letter",
)

TABLES = {
    "mbuffer_summaries": table(
        "mbuffer `summary:` lines (one per mbuffer run).",
        ("bytes", "DOUBLE", "amount transferred as printed, bytes (k/M/G/T = powers of 1024); see suspect"),
        ("duration_ns", "DOUBLE", "elapsed time as printed (0.1 s resolution), nanoseconds"),
        ("rate_bytes_per_s", "DOUBLE", "`average of` rate as printed, bytes/s (powers of 1024)"),
        (
            "computed_rate_bytes_per_s",
            "DOUBLE",
            "bytes x outputs / duration: differs from rate_bytes_per_s by the rounding of the printed values; "
            "NULL when the printed duration is 0.0",
        ),
        ("outputs", "INTEGER", "N of `summary: Nx` (number of outputs; the average is summed over them), else 1"),
        ("empty_count", "INTEGER", "`, Nx empty` (times the buffer ran empty); NULL when not printed"),
        ("full_count", "INTEGER", "`, Nx full` (times the buffer was full); NULL when not printed"),
        _UNITS_BINARY,
        (
            "suspect",
            "BOOLEAN",
            "true when a value was printed without a unit letter (`1e+04 Byte`): mbuffer's formatter lost the unit, "
            "the stored number is the printed one and is wrong; a warning gives the amount rate x time implies",
        ),
        *LINES,
    ),
    "mbuffer_status": table(
        "mbuffer status lines `in @ ..., out @ ..., ... total, buffer P% full` (several per physical line on stderr).",
        ("seq", "INTEGER", "0-based order of the status record in the file"),
        ("in_rate_bytes_per_s", "DOUBLE", "input rate over the last interval, bytes/s; NULL for ` ??? `"),
        ("out_rate_bytes_per_s", "DOUBLE", "output rate (summed over outputs), bytes/s; NULL for ` ??? `"),
        ("outputs", "INTEGER", "N of `N x TOTAL` (number of outputs), else 1"),
        ("total_bytes", "DOUBLE", "bytes written so far (per output), bytes"),
        ("buffer_fill_pct", "DOUBLE", "buffer fill, percent"),
        ("done_pct", "DOUBLE", "`, D% done` when the input size is known, percent; else NULL"),
        _UNITS_BINARY,
        ("suspect", "BOOLEAN", "true when a value was printed without a unit letter (see mbuffer_summaries.suspect)"),
        *LINES,
    ),
}

_NUM = r"(\?\?\?|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"
_UNIT = r"([kKMGT]i?)?"
_SUMMARY = re.compile(
    rf"^summary:\s+(?:(\d+)x\s+)?{_NUM}\s*{_UNIT}Byte\s+in\s+(.+?)\s+-\s+average\s+of\s+{_NUM}\s*{_UNIT}B/s"
    r"((?:,\s*\d+x\s+(?:empty|full))*)\s*$"
)
_STATUS = re.compile(
    rf"^in\s+@\s*{_NUM}\s*{_UNIT}B/s,\s*out\s+@\s*{_NUM}\s*{_UNIT}B/s,\s*(?:(\d+)\s+x\s+)?{_NUM}\s*{_UNIT}B\s+total,"
    r"\s*buffer\s+([0-9]+(?:\.[0-9]*)?)%\s+full(?:,\s*([0-9]+(?:\.[0-9]*)?)%\s+done)?\s*$"
)
# a line of the system journal or syslog (mbuffer run by a service or cron job): 'Sep 11 15:38:29 host bash[1614]: '
# or '2024-09-11T15:38:29+0200 host bash[1614]: ' before what the program printed
_JOURNAL = (
    r"(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d{2}:?\d{2}|Z)?)"
    r" \S+ [^\s:\[]+(?:\[\d+\])?: "
)
_JOURNAL_LINE = re.compile(_JOURNAL)
_BLOB = re.compile(
    r"^\[[0-9.]+(?:[KMGT]i?B?|B)? blob data\]$"
)  # journalctl's stand-in for a line holding control characters
_SNIFF = re.compile(
    rf"^(?:{_JOURNAL})?(?:mbuffer: )?(?:summary:\s.*Byte\s+in\s.*average\s+of\s.*B/s"
    r"|in\s+@\s.*B/s,\s*out\s+@\s.*total,\s*buffer\s)",
    re.M,
)
_PROMPT = re.compile(r"^\s*(?:\S*[$#%>]\s+)?.*\bmbuffer\s+-")
_LEFTOVER = re.compile(r"(\bfull|% done)[a-z]+\s*$")  # letters after a status line's last word


def sniff(text: str) -> str | None:
    return "mbuffer-summary" if _SNIFF.search(text[:200000]) else None


def _binary(*units: str | None) -> bool | None:
    letters = [u for u in units if u]
    if not letters:
        return None
    return any(u.endswith("i") for u in letters)


def _amount(num: str, unit: str | None, lineno: int, what: str) -> float | None:
    if num == "???":
        return None
    try:
        return mbuffer_bytes(num, (unit or "") + "Byte")
    except (UnitError, KeyError):
        raise ParseError(f"unreadable {what} {num!r}", line=lineno, expected="a number with k/M/G/T unit") from None


def _rate(num: str, unit: str | None, lineno: int, what: str) -> float | None:
    if num == "???":
        return None
    try:
        return mbuffer_rate(num, (unit or "") + "B/s")
    except (UnitError, KeyError):
        raise ParseError(f"unreadable {what} {num!r}", line=lineno, expected="a rate like 583 MB/s") from None


def _implied(bytes_: float) -> str:
    """``10000 MiB`` style description of an amount, in the unit that makes it about 10000."""
    for name, power in (("KiB", 1), ("MiB", 2), ("GiB", 3), ("TiB", 4)):
        v = bytes_ / 1024**power
        if v < 20000:
            return f"{v:.0f} {name}"
    return f"{bytes_:.0f} bytes"


def _summary(m: re.Match, lineno: int, parsed: Parsed) -> dict:
    outputs = int(m.group(1)) if m.group(1) else 1
    amount = _amount(m.group(2), m.group(3), lineno, "amount")
    try:
        duration = duration_to_ns(m.group(4))
    except UnitError:
        raise ParseError(
            f"unreadable duration {m.group(4)!r}", line=lineno, expected="a duration like '4 min 59.3 sec' or ' 9.5sec'"
        ) from None
    rate = _rate(m.group(5), m.group(6), lineno, "average rate")
    counts = dict((k, int(n)) for n, k in re.findall(r"(\d+)x\s+(empty|full)", m.group(7)))
    suspect = (amount is not None and not m.group(3)) or (rate is not None and not m.group(6))
    computed = amount * outputs / (duration / 1e9) if amount is not None and duration > 0 else None
    if suspect:
        msg = (
            f"line {lineno}: mbuffer printed a value without a unit letter ({m.group(2)} Byte / "
            f"{m.group(5)} {m.group(6) or ''}B/s): its formatter falls back to '%5.lg ' when a value is exactly "
            "10000 of a unit, so the unit is lost; stored as printed and flagged suspect"
        )
        if rate is not None and m.group(6) and duration > 0:
            msg += f"; rate x time = {_implied(rate * duration / 1e9 / outputs)}"
        parsed.warnings.append(msg)
    return {
        "bytes": amount,
        "duration_ns": duration,
        "rate_bytes_per_s": rate,
        "computed_rate_bytes_per_s": computed,
        "outputs": outputs,
        "empty_count": counts.get("empty"),
        "full_count": counts.get("full"),
        "units_binary": _binary(m.group(3), m.group(6)),
        "suspect": bool(suspect),
        "line_start": lineno,
        "line_end": lineno,
    }


def _status(m: re.Match, lineno: int, seq: int) -> dict:
    in_rate = _rate(m.group(1), m.group(2), lineno, "input rate")
    out_rate = _rate(m.group(3), m.group(4), lineno, "output rate")
    total = _amount(m.group(6), m.group(7), lineno, "total")
    suspect = any(
        v is not None and not u for v, u in ((in_rate, m.group(2)), (out_rate, m.group(4)), (total, m.group(7)))
    )
    return {
        "seq": seq,
        "in_rate_bytes_per_s": in_rate,
        "out_rate_bytes_per_s": out_rate,
        "outputs": int(m.group(5)) if m.group(5) else 1,
        "total_bytes": total,
        "buffer_fill_pct": float(m.group(8)),
        "done_pct": float(m.group(9)) if m.group(9) else None,
        "units_binary": _binary(m.group(2), m.group(4), m.group(7)),
        "suspect": suspect,
        "line_start": lineno,
        "line_end": lineno,
    }


def parse(text: str, fmt: str | None = None) -> Parsed:
    if fmt not in (None, *FORMATS):
        raise ParseError(f"unknown mbuffer format {fmt!r}", expected=" or ".join(FORMATS), kind="invalid")
    if not text.strip():
        raise ParseError("file is empty", kind="empty", expected="mbuffer summary or status lines")
    parsed = Parsed(tool=TOOL, format="mbuffer-summary")
    lines = lines_of(text)
    last = max(i for i, ln in enumerate(lines, 1) if ln.strip())
    seq = 0
    journal_others, blobs = 0, 0  # a journal's lines of other programs, and of control characters (not shown)
    for lineno, line in enumerate(lines, 1):
        in_journal = _JOURNAL_LINE.match(line)
        if in_journal:
            line = line[in_journal.end() :]
            if _BLOB.match(line.strip()):
                blobs += 1
                continue
        segments = [s.strip() for s in line.split("\r")]
        segments = [s for s in segments if s]
        for k, seg in enumerate(segments):
            prefixed = seg.startswith("mbuffer:")
            body = seg[len("mbuffer:") :].strip() if prefixed else seg
            m = _SUMMARY.match(body)
            if m:
                parsed.add("mbuffer_summaries", _summary(m, lineno, parsed))
                continue
            m = _STATUS.match(body)
            if m:
                parsed.add("mbuffer_status", _status(m, lineno, seq))
                seq += 1
                continue
            if prefixed and not body.startswith(("summary", "in @")):
                parsed.warnings.append(f"line {lineno}: {seg}")
                continue
            if (_PROMPT.match(seg) or SHELL_PROMPT.match(seg)) and not body.startswith(("summary", "in @")):
                continue  # the command lines of a transcript (zfs send ... | mbuffer | ..., zfs snap ..., a bare prompt)
            if body in ("...", "\u2026", "[...]", "(...)"):  # lines left out where the log was pasted
                parsed.warnings.append(f"line {lineno}: {body!r}: lines left out where the log was pasted")
                continue
            left = _LEFTOVER.search(body)
            m = left and _STATUS.match(body[: left.end(1)])
            if (
                m and left
            ):  # a longer status line overwritten by \r left its last letters on the screen: 'buffer 0% fullll'
                parsed.warnings.append(
                    f"line {lineno}: {body[left.end(1) :].strip()!r} after the status line ignored "
                    "(left over from a longer status line the \\r overwrote)"
                )
                parsed.add("mbuffer_status", _status(m, lineno, seq))
                seq += 1
                continue
            at_end = lineno == last and k == len(segments) - 1
            if in_journal and not body.startswith(("summary:", "in @")):
                journal_others += 1  # another program's line in the journal
                continue
            if body.startswith(("summary:", "in @")) and at_end:
                raise ParseError(
                    f"mbuffer line cut short: {seg[:80]!r}",
                    line=lineno,
                    kind="truncated",
                    expected="a complete summary/status line",
                )
            raise ParseError(
                f"not an mbuffer summary or status line: {seg[:80]!r}",
                line=lineno,
                expected="'summary: N [U]Byte in T - average of R [U]B/s' or "
                "'in @ R [U]B/s, out @ R [U]B/s, N [U]B total, buffer P% full'",
            )
    if journal_others:
        parsed.warnings.append(f"{journal_others} journal line(s) of other programs' output skipped")
    if blobs:
        parsed.warnings.append(
            f"{blobs} journal line(s) shown as '[... blob data]' (lines with control characters: mbuffer's live "
            "status lines, not in the text) skipped; `journalctl --all` shows them"
        )
    if not parsed.n_rows:
        raise ParseError(
            "no mbuffer summary or status line found",
            line=1,
            kind="invalid",
            expected="mbuffer's summary/status output",
        )
    return parsed
