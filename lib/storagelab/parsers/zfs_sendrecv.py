"""``zfs send -v`` / ``-vP`` (stderr) and ``zfs receive -v`` (stdout), alone or pasted together.

Grammar (docs/formats/transfers.md, section zfs; OpenZFS ``lib/libzfs/libzfs_sendrecv.c``: ``send_print_verbose``,
``send_progress_thread``, ``zfs_receive_one``; zfs-fuse 0.7.0 / OpenZFS 0.6.5 for the older receive line):

* send, human: ``full send of SNAP estimated size is SIZE``, ``send from @FROM to SNAP estimated size is SIZE``
  (``send from FROM to SNAP`` when FROM names a dataset or bookmark), ``total estimated size is SIZE``, the header
  ``TIME        SENT   SNAPSHOT [NAME]`` (``BYTES`` with ``-e``-style estimates, ``BLOCKS`` with ``-vv``) and one
  progress line a second, ``HH:MM:SS   SIZE   [BLOCKS]   SNAP``.
* send, parsable (``-P``): ``full\\tSNAP\\tBYTES``, ``incremental\\tFROM\\tSNAP\\tBYTES``, ``size\\tBYTES``, progress
  ``HH:MM:SS\\tBYTES\\t[BLOCKS\\t]SNAP`` (tabs; a paste may show them as spaces).
* receive: ``receiving full|incremental stream of SNAP into DEST`` (``would receive`` with ``-n``, ``corrective``
  with ``-c``), then ``received SIZE stream in T seconds (RATE/sec)``. T is whole seconds before OpenZFS 2.2
  (``time(NULL)`` differences, 0 printed as 1) and ``%.2f`` since (``CLOCK_MONOTONIC_RAW``).
* SIZE is ZFS's nicenum: ``K M G T P E`` are powers of 1024, with a ``B`` after them in releases before 0.7.0
  (``80.2MB`` = 80.2 MiB) and for plain bytes (``312B``).

Other lines of zfs (``cannot receive ...``, ``snap ... already exists; ignoring``) are kept as warnings with their
line, shell prompts are skipped; a file with none of the lines above is not this tool's output.
"""

from __future__ import annotations

import re

from ..units import UnitError, zfs_nicenum
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, lines_of, table

TOOL = "zfs send/receive"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {"zfs-send-receive-v": "zfs send -v, zfs receive -v"}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
HELPER_MODULES: tuple[str, ...] = ()
parse_bytes = None
parse_stream = None

TABLES = {
    "zfs_send_streams": table(
        "`zfs send -v`'s header lines: one row per stream it announces, and one for `total estimated size`.",
        ("seq", "INTEGER", "0-based order of the row in the file"),
        ("kind", "VARCHAR", "full, incremental, or total (`total estimated size is` / `size`)"),
        ("from_snapshot", "VARCHAR", "the incremental source as printed (`@s1` or `pool/fs@s1`); NULL for full"),
        ("snapshot", "VARCHAR", "the snapshot sent; NULL for the total"),
        ("estimated_bytes", "DOUBLE", "estimated stream size, bytes (nicenum: powers of 1024; -P: exact)"),
        ("parsable", "BOOLEAN", "true for the `-P` layout (tab-separated, exact bytes)"),
        *LINES,
    ),
    "zfs_send_progress": table(
        "`zfs send -v`'s per-second progress lines.",
        ("seq", "INTEGER", "0-based order of the progress line in the file"),
        ("clock", "VARCHAR", "local time of day printed, HH:MM:SS"),
        ("bytes", "DOUBLE", "bytes sent so far of this snapshot, bytes"),
        ("blocks", "BIGINT", "blocks sent so far (`-vv`), count; NULL when not printed"),
        ("snapshot", "VARCHAR", "the snapshot being sent"),
        *LINES,
    ),
    "zfs_receives": table(
        "`zfs receive -v`: one row per stream received (`receiving ... stream of ... into ...` and its `received` "
        "line).",
        ("seq", "INTEGER", "0-based order of the stream in the file"),
        ("kind", "VARCHAR", "full or incremental; NULL when only the `received` line is there"),
        ("dry_run", "BOOLEAN", "true for `would receive` (-n)"),
        ("snapshot", "VARCHAR", "the stream's snapshot (its name on the sender)"),
        ("target", "VARCHAR", "the snapshot it is received into"),
        ("bytes", "DOUBLE", "stream size received, bytes (nicenum: powers of 1024, 3 significant digits)"),
        ("duration_ns", "DOUBLE", "time printed, nanoseconds (see whole_seconds)"),
        ("rate_bytes_per_s", "DOUBLE", "printed rate, bytes/s (powers of 1024)"),
        (
            "whole_seconds",
            "BOOLEAN",
            "true when the time is whole seconds (OpenZFS < 2.2, zfs-fuse): a difference of two wall-clock seconds, "
            "so the true time is within 1 s of it, and 0 is printed as 1",
        ),
        *LINES,
    ),
}

_SIZE = r"([0-9]+(?:\.[0-9]+)?[KMGTPE]?B?)"
_FULL = re.compile(rf"^full send of (\S+)(?: estimated size is {_SIZE})?\s*$")
_INCR = re.compile(rf"^send from (\S+) to (\S+)(?: estimated size is {_SIZE})?\s*$")
_TOTAL = re.compile(rf"^total estimated size is {_SIZE}\s*$")
_P_FULL = re.compile(r"^full\s+(\S+)\s+(\d+)\s*$")
_P_INCR = re.compile(r"^incremental\s+(\S+)\s+(\S+)\s+(\d+)\s*$")
_P_SIZE = re.compile(r"^size\s+(\d+)\s*$")
_HEADER = re.compile(r"^TIME\s+(?:SENT|BYTES)\s+(?:BLOCKS\s+)?SNAPSHOT(?:\s+\S+)?\s*$")
_PROGRESS = re.compile(rf"^(\d\d:\d\d:\d\d)\s+(\d+|{_SIZE[1:-1]})\s+(?:(\d+)\s+)?(\S+@\S+)\s*$")
_RECEIVING = re.compile(r"^(receiving|would receive) (corrective )?(full|incremental) stream of (\S+) into (\S+)\s*$")
_RECEIVED = re.compile(rf"^received {_SIZE} stream in ([0-9]+(?:\.[0-9]+)?) seconds \({_SIZE}/sec\)\s*$")
_ZFS_MESSAGE = re.compile(
    r"^(?:cannot |snap .* already exists|must specify|found clone origin|warning: |resume token|"
    r"skipping snapshot|would (?:destroy|rename)|\s+\w+ = )"
)
_SNIFF = re.compile(
    r"^(?:full send of \S+@\S+|send from \S+ to \S+@\S+|total estimated size is |full[ \t]+\S+@\S+[ \t]+\d+$"
    r"|incremental[ \t]+\S+[ \t]+\S+@\S+[ \t]+\d+$|(?:receiving|would receive) (?:corrective )?(?:full|incremental) stream of "
    r"|received [0-9.]+[KMGTPE]?B? stream in [0-9.]+ seconds \("
    r"|\d\d:\d\d:\d\d[ \t]+(?:\d+|[0-9.]+[KMGTPE]?B?)[ \t]+(?:\d+[ \t]+)?[^\s@]+@\S+[ \t]*$"  # a progress line
    r"|TIME[ \t]+(?:SENT|BYTES)[ \t]+(?:BLOCKS[ \t]+)?SNAPSHOT\b)",
    re.M,
)


def sniff(text: str) -> str | None:
    return "zfs-send-receive-v" if _SNIFF.search(text[:200000]) else None


def _size(s: str, n: int) -> float:
    try:
        return zfs_nicenum(s)
    except UnitError as e:
        raise ParseError(str(e), line=n, expected="a zfs size such as 1.01M, 80.2MB or 312B") from None


def _send_header(parsed: Parsed, line: str, n: int, seq: int) -> bool:
    """A `zfs send -v` header line (human or -P) added as a zfs_send_streams row; False when it is none."""
    row: tuple[str, str | None, str | None, float | None, bool] | None = None
    m = _FULL.match(line) or _P_FULL.match(line)
    if m:
        parsable = m.re is _P_FULL
        size = float(m.group(2)) if parsable else (_size(m.group(2), n) if m.group(2) else None)
        row = ("full", None, m.group(1), size, parsable)
    elif m := _INCR.match(line) or _P_INCR.match(line):
        parsable = m.re is _P_INCR
        size = float(m.group(3)) if parsable else (_size(m.group(3), n) if m.group(3) else None)
        row = ("incremental", m.group(1), m.group(2), size, parsable)
    elif m := _TOTAL.match(line) or _P_SIZE.match(line):
        parsable = m.re is _P_SIZE
        row = ("total", None, None, float(m.group(1)) if parsable else _size(m.group(1), n), parsable)
    if row is None:
        return False
    kind, frm, snap, size, parsable = row
    parsed.add(
        "zfs_send_streams",
        {"seq": seq, "kind": kind, "from_snapshot": frm, "snapshot": snap, "estimated_bytes": size,
         "parsable": parsable, "line_start": n, "line_end": n},
    )  # fmt: skip
    return True


def _progress(parsed: Parsed, m: re.Match, n: int, seq: int) -> None:
    amount = m.group(2)
    parsed.add(
        "zfs_send_progress",
        {"seq": seq, "clock": m.group(1), "bytes": float(amount) if amount.isdigit() else _size(amount, n),
         "blocks": int(m.group(3)) if m.group(3) else None, "snapshot": m.group(4), "line_start": n, "line_end": n},
    )  # fmt: skip


def _received(parsed: Parsed, m: re.Match, n: int, seq: int, pending: dict | None) -> None:
    secs = m.group(2)
    parsed.add(
        "zfs_receives",
        {
            "seq": seq,
            "kind": pending["kind"] if pending else None,
            "dry_run": pending["dry_run"] if pending else False,
            "snapshot": pending["snapshot"] if pending else None,
            "target": pending["target"] if pending else None,
            "bytes": _size(m.group(1), n),
            "duration_ns": float(secs) * 1e9,
            "rate_bytes_per_s": _size(m.group(3), n),
            "whole_seconds": "." not in secs,
            "line_start": pending["line"] if pending else n,
            "line_end": n,
        },
    )


def _receiving_row(pending: dict, seq: int) -> dict:
    """A `receiving ...` line with no `received` line after it (a dry run, or a receive that failed)."""
    return {
        "seq": seq, "kind": pending["kind"], "dry_run": pending["dry_run"], "snapshot": pending["snapshot"],
        "target": pending["target"], "bytes": None, "duration_ns": None, "rate_bytes_per_s": None,
        "whole_seconds": None, "line_start": pending["line"], "line_end": pending["line"],
    }  # fmt: skip


def parse(text: str, fmt: str | None = None) -> Parsed:
    parsed = Parsed(tool=TOOL, format="zfs-send-receive-v")
    seq = {"send": 0, "progress": 0, "recv": 0}
    pending: dict | None = None  # the `receiving ...` line waiting for its `received ...`
    for n, raw in enumerate(lines_of(text), 1):
        line = raw.strip("\r").rstrip()
        if not line.strip() or SHELL_PROMPT.match(line) or _HEADER.match(line):
            continue
        if _send_header(parsed, line, n, seq["send"]):
            seq["send"] += 1
        elif m := _PROGRESS.match(line):
            _progress(parsed, m, n, seq["progress"])
            seq["progress"] += 1
        elif m := _RECEIVING.match(line):
            if pending:
                parsed.add("zfs_receives", _receiving_row(pending, seq["recv"]))
                seq["recv"] += 1
            pending = {"kind": m.group(3), "dry_run": m.group(1) == "would receive", "snapshot": m.group(4),
                       "target": m.group(5), "line": n}  # fmt: skip
        elif m := _RECEIVED.match(line):
            _received(parsed, m, n, seq["recv"], pending)
            seq["recv"], pending = seq["recv"] + 1, None
        elif _ZFS_MESSAGE.match(line):
            parsed.warnings.append(f"line {n}: {line.strip()[:160]}")
        else:
            parsed.warnings.append(f"line {n}: not a zfs send/receive -v line, skipped: {line.strip()[:80]!r}")
    if pending:
        parsed.add("zfs_receives", _receiving_row(pending, seq["recv"]))
    if not any(parsed.count(t) for t in TABLES):
        raise ParseError(
            "no zfs send -v or zfs receive -v line found",
            line=1,
            expected="'full send of ...', 'receiving full stream of ...' or 'received ... stream in ...'",
        )
    return parsed
