"""``zpool status`` (``-v``, ``-D``, ``-p``): pool state, scrub/resilver, the vdev table with its error counts,
the data errors, and the dedup table summary and histogram. A part of the zpool parser (``zpool.py`` reads the
format ``zpool-status`` with it).

Format (OpenZFS ``cmd/zpool/zpool_main.c``: ``status_callback``, ``print_scan_status``, ``print_status_config``,
``print_error_log``, ``print_dedup_stats``; published outputs of ZFS on Linux 0.6-0.8, OpenZFS 2.x and TrueNAS in
tests/fixtures/zpool-status):

* A report per pool: ``  pool: NAME``, `` state: STATE``, optional ``status:``/``action:`` paragraphs (continued on
  tab-indented lines), ``   see: URL``, ``  scan: ...`` (absent on a pool never scrubbed), ``config:``, the vdev
  table, ``errors: ...`` and, with ``-D``, `` dedup: ...`` and the DDT histogram.
* scan: ``scrub repaired X in T with N errors on DATE``, ``resilvered X in T with N errors on DATE``, ``scrub
  canceled on DATE``, ``scrub|resilver in progress since DATE`` followed by progress lines: 0.6/0.7 ``X scanned out
  of Y at R/s, T to go`` and ``Z resilvered, P% done``; 0.8-2.1 ``X scanned at R/s, Y issued at R/s, Z total``;
  2.2+ ``X / Y scanned at R/s, Z / W issued at R/s``; then ``Z repaired|resilvered, P% done, T to go``. Sizes are
  ``zfs_nicebytes`` (powers of 1024; a locale may print ``10,2T``), durations ``HH:MM:SS``, ``N days HH:MM:SS`` or
  (<= 0.7) ``14h7m``.
* The vdev table: ``NAME STATE READ WRITE CKSUM`` (more columns with ``-s``/``-c`` are not stored), rows indented
  two spaces a level under the pool (depth counts the open rows indented less, so hand-padded lines still nest), class lines ``logs``/``cache``/``spares``/``special``/``dedup`` at the pool's
  level, spares ``AVAIL``/``INUSE`` without counts; error counts are nicenums (``1.88K``) or, with ``-p``, exact;
  text after the counts (``too many errors``, ``(resilvering)``, ``was /dev/sdb1``) is kept as the row's note.
* `` dedup: DDT entries N, size X on disk, Y in core``: up to 2.2 X and Y are bytes per entry; 2.3+ prints totals
  and adds ``, Z cached (P%)``, which is how the two are told apart (``ddt_sizes``). The OpenSolaris code of pool
  version 23 (zfs-fuse 0.7.0, tests/fixtures/zfs-fuse/0.7.0) prints the same summary on its own line without the
  `` dedup: `` prefix (``DDT entries 448, size 438 on disk, 118 in core``, per entry), then the same histogram, and
  nothing at all for an empty table (``printf("DDT entries %llu, size %llu on disk, %llu in core\n", ...)`` after
  ``if (... ddo->ddo_count == 0) return;``, as libzfswrap's port of that zpool status code has it).
"""

from __future__ import annotations

import re

from ..units import UnitError, zfs_nicenum
from .base import LINES, SHELL_PROMPT, Parsed, ParseError, table

_COMMON = (("report_no", "INTEGER", "1-based number of the pool report in the file"), ("pool", "VARCHAR", "pool name"))

TABLES = {
    "zpool_status_pools": table(
        "zpool status: one row per pool report (state, scan, errors, dedup summary).",
        *_COMMON,
        ("state", "VARCHAR", "ONLINE, DEGRADED, FAULTED, SUSPENDED, UNAVAIL ..."),
        ("status", "VARCHAR", "the status: paragraph, its lines joined by a space; NULL when none"),
        ("action", "VARCHAR", "the action: paragraph; NULL when none"),
        ("see", "VARCHAR", "the see: URL; NULL when none"),
        ("scan_kind", "VARCHAR", "scrub, resilver or NULL (no scan: line, or 'none requested')"),
        ("scan_state", "VARCHAR", "finished, canceled, in_progress, paused; NULL without a scan"),
        ("scan_processed_bytes", "DOUBLE", "bytes repaired (scrub) or resilvered, bytes"),
        ("scan_duration_ns", "DOUBLE", "duration of a finished scan, ns"),
        ("scan_errors", "BIGINT", "errors of a finished scan, count"),
        ("scan_time", "VARCHAR", "the date printed: end of a finished/canceled scan, start of one in progress"),
        ("scanned_bytes", "DOUBLE", "in progress: bytes scanned, bytes"),
        ("scan_total_bytes", "DOUBLE", "in progress: bytes to scan (the 'out of', 'total' or '/ Y' figure), bytes"),
        ("issued_bytes", "DOUBLE", "in progress (0.8+): bytes issued, bytes"),
        ("scan_rate_bytes_per_s", "DOUBLE", "in progress: scan rate, bytes/s"),
        ("issue_rate_bytes_per_s", "DOUBLE", "in progress (0.8+): issue rate, bytes/s"),
        ("done_pct", "DOUBLE", "in progress: percent done"),
        ("to_go_ns", "DOUBLE", "in progress: estimated time to go, ns; NULL when no estimate"),
        ("data_errors", "BIGINT", "0 for 'No known data errors', N for 'N data errors', the files listed by -v"),
        ("errors_text", "VARCHAR", "the errors: line(s) as printed, joined by ' | '"),
        ("ddt_entries", "BIGINT", "-D: DDT entries, count (0 for 'no DDT entries')"),
        ("ddt_disk_bytes", "DOUBLE", "-D: the 'size X on disk' figure, bytes (see ddt_sizes)"),
        ("ddt_core_bytes", "DOUBLE", "-D: the 'Y in core' figure, bytes (see ddt_sizes)"),
        ("ddt_sizes", "VARCHAR", "'per_entry' (<= 2.2: X, Y per DDT entry) or 'total' (2.3+, with 'cached')"),
        ("command", "VARCHAR", "the zpool status command of the prompt line before the report, when present"),
        *LINES,
    ),
    "zpool_status_vdevs": table(
        "zpool status: the config table, one row per pool/vdev/device line.",
        *_COMMON,
        ("name", "VARCHAR", "the NAME column (pool, mirror-0, raidz2-0, sda, a guid of a missing device ...)"),
        ("depth", "INTEGER", "0 for the pool (and class lines), 1 for top-level vdevs, 2 for their devices ..."),
        ("class", "VARCHAR", "normal, log, cache, spare, special or dedup (the section the row is in)"),
        ("leaf", "BOOLEAN", "no row is indented under this one (a device)"),
        ("state", "VARCHAR", "ONLINE, DEGRADED, FAULTED, UNAVAIL, REMOVED, OFFLINE, AVAIL, INUSE ..."),
        ("read_errors", "DOUBLE", "READ errors, count (nicenum: 1.2K = 1228.8); NULL when not printed (spares)"),
        ("write_errors", "DOUBLE", "WRITE errors, count"),
        ("cksum_errors", "DOUBLE", "CKSUM errors, count"),
        ("exact", "BOOLEAN", "false when a count was printed with a K/M suffix (rounded)"),
        ("note", "VARCHAR", "text after the counts: too many errors, (resilvering), was /dev/..., corrupted data"),
        *LINES,
    ),
    "zpool_status_error_files": table(
        "zpool status -v: the files (or <metadata>:<0x..> objects) listed under 'Permanent errors'.",
        *_COMMON,
        ("path", "VARCHAR", "the file, dataset:object or <metadata>:<0x0> as printed"),
        *LINES,
    ),
    "zpool_status_ddt": table(
        "zpool status -D: the DDT histogram (bucket / allocated / referenced), one row per refcount bucket.",
        *_COMMON,
        ("refcnt_bucket", "BIGINT", "reference count bucket, its lower edge (1, 2, 4 ... 1K = 1024); NULL on Total"),
        ("is_total", "BOOLEAN", "the Total row"),
        ("alloc_blocks", "DOUBLE", "allocated blocks, count"),
        ("alloc_lsize_bytes", "DOUBLE", "allocated LSIZE, bytes"),
        ("alloc_psize_bytes", "DOUBLE", "allocated PSIZE, bytes"),
        ("alloc_dsize_bytes", "DOUBLE", "allocated DSIZE, bytes"),
        ("ref_blocks", "DOUBLE", "referenced blocks, count"),
        ("ref_lsize_bytes", "DOUBLE", "referenced LSIZE, bytes"),
        ("ref_psize_bytes", "DOUBLE", "referenced PSIZE, bytes"),
        ("ref_dsize_bytes", "DOUBLE", "referenced DSIZE, bytes"),
        ("exact", "BOOLEAN", "false when printed with K/M/G suffixes (3 significant digits)"),
        *LINES,
    ),
}

SNIFF = re.compile(r"^[ \t]*pool: \S+[ \t]*\n[ \t]*state: [A-Z]+", re.M)
_FIELD = re.compile(
    r"^\s*(pool|state|status|action|see|scan|scrub|remove|expand|config|errors|dedup|checkpoint): ?(.*)$"
)
_HEADER = re.compile(r"^(\s*)NAME\s+STATE\s+READ\s+WRITE\s+CKSUM\b")
_PROMPT = re.compile(r"^(?:.*?[$#%>]\s*)?(?:sudo\s+)?(zpool\s+status\b.*)$")
_CLASSES = {"logs": "log", "cache": "cache", "spares": "spare", "special": "special", "dedup": "dedup"}
_DURATION_DHMS = re.compile(r"^(?:(\d+) days? )?(\d+):(\d\d):(\d\d)$")
_DURATION_HM = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
_FINISHED = re.compile(r"^(?:thorough )?(scrub repaired|resilvered) (\S+) in (.+?) with (\d+) errors on (.+)$")
_CANCELED = re.compile(r"^(?:thorough )?(scrub|resilver) canceled on (.+)$")
# Solaris and ZFS on Linux <= 0.6.2 (' scrub:' line): completed after / in progress for / stopped after
_OLD_DONE = re.compile(r"^(scrub|resilver) completed after (\S+) with (\d+) errors on (.+)$")
_OLD_RUN = re.compile(r"^(scrub|resilver) in progress(?: for (\S+))?, ([\d.]+)% done, (\S+) to go$")
_OLD_STOP = re.compile(r"^(scrub|resilver) stopped after (\S+) with (\d+) errors on (.+)$")
_RUNNING = re.compile(r"^(?:thorough )?(scrub|resilver) (in progress|paused) since (.+)$")
_DDT = re.compile(r"^dedup: DDT entries (\d+), size (\S+) on disk, (\S+) in core(?:, (\S+) cached \(([\d.]+)%\))?$")
# the summary as pool version 23 (OpenSolaris, zfs-fuse) prints it: no ' dedup: ' prefix
_DDT_BARE = re.compile(r"^DDT entries \d+, size \S+ on disk, \S+ in core$")
_DDT_ROW = re.compile(r"^\s*(\d+[KMGTPE]?|Total)((?:\s+\S+){8})\s*$")


class _Bad(ValueError):
    """A figure that does not read as its kind."""


def nicebytes(text: str) -> tuple[float, bool]:
    """(bytes, exact) of a zfs_nicebytes figure: '0B', '21K', '1.14M', '10,2T' (a decimal comma)."""
    t = re.sub(r"^(\d+),(\d+)", r"\1.\2", text.strip())
    if t.isdigit():
        return float(t), True
    try:
        return zfs_nicenum(t), t.rstrip("B")[-1:].isdigit()
    except UnitError:
        raise _Bad(text) from None


def duration_ns(text: str) -> float:
    """'00:15:42', '4 days 00:32:32', '14h7m', '0h0m' -> ns."""
    t = text.strip()
    m = _DURATION_DHMS.match(t)
    m2 = None if m else _DURATION_HM.match(t)
    try:  # reliability-37: a 400-digit hour was a parser-bug (OverflowError: int too large to convert to float)
        if m:
            days, h, mi, s = (int(g or 0) for g in m.groups())
            return float(((days * 24 + h) * 60 + mi) * 60 + s) * 1e9
        if m2 and any(m2.groups()):
            h, mi, s = (int(g or 0) for g in m2.groups())
            return float((h * 60 + mi) * 60 + s) * 1e9
    except OverflowError:
        pass
    raise _Bad(text)


class _Report:
    """One pool's report while it is read."""

    def __init__(self, no: int, pool: str, line: int, command: str | None):
        self.row: dict = {c.name: None for c in TABLES["zpool_status_pools"].columns if c.name != "file_id"}
        self.row.update(report_no=no, pool=pool, line_start=line, line_end=line, command=command)
        self.field: str | None = None  # the paragraph being continued (status, action, scan, errors)
        self.vdevs: list[dict] = []
        self.base: int | None = None  # the indent of the NAME column
        self.open: list[int] = []  # indents of the rows the next row may sit under
        self.section = "normal"
        self.files: list[dict] = []
        self.ddt: list[dict] = []


def _scan_first(rep: _Report, text: str) -> None:
    r = rep.row
    if text == "none requested":
        return
    m = _FINISHED.match(text)
    if m:
        processed, _ = nicebytes(m.group(2))
        r.update(
            scan_kind="scrub" if m.group(1).startswith("scrub") else "resilver",
            scan_state="finished",
            scan_processed_bytes=processed,
            scan_duration_ns=duration_ns(m.group(3)),
            scan_errors=int(m.group(4)),
            scan_time=m.group(5).strip(),
        )
        return
    if _old_scan(r, text):
        return
    m = _CANCELED.match(text) or _RUNNING.match(text)
    if not m:
        raise _Bad(text)
    r["scan_kind"] = m.group(1)
    if len(m.groups()) == 2:
        r.update(scan_state="canceled", scan_time=m.group(2).strip())
    else:
        r.update(scan_state="in_progress" if m.group(2) == "in progress" else "paused", scan_time=m.group(3).strip())


def _old_scan(r: dict, text: str) -> bool:
    """The Solaris / early ZFS on Linux forms of the scan line; False when the text is none of them."""
    m = _OLD_DONE.match(text) or _OLD_STOP.match(text)
    if m:
        r.update(
            scan_kind=m.group(1),
            scan_state="finished" if "completed" in text else "canceled",
            scan_duration_ns=duration_ns(m.group(2)),
            scan_errors=int(m.group(3)),
            scan_time=m.group(4).strip(),
        )
        return True
    m = _OLD_RUN.match(text)
    if m:
        r.update(scan_kind=m.group(1), scan_state="in_progress", done_pct=float(m.group(3)))
        r["to_go_ns"] = duration_ns(m.group(4))
        return True
    return False


def _scan_progress(rep: _Report, text: str) -> None:
    """The lines under 'in progress since': scanned/issued/total figures, then repaired/resilvered, % done."""
    r = rep.row
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        m = re.match(r"^(\S+) scanned out of (\S+)(?: at (\S+)/s)?$", part)
        if m:
            r["scanned_bytes"], r["scan_total_bytes"] = nicebytes(m.group(1))[0], nicebytes(m.group(2))[0]
            r["scan_rate_bytes_per_s"] = nicebytes(m.group(3))[0] if m.group(3) else None
            continue
        m = re.match(r"^(\S+)(?: / (\S+))? (scanned|issued)(?: at (\S+)/s)?$", part)
        if m:
            key = "scanned_bytes" if m.group(3) == "scanned" else "issued_bytes"
            r[key] = nicebytes(m.group(1))[0]
            if m.group(2) and m.group(3) == "scanned":
                r["scan_total_bytes"] = nicebytes(m.group(2))[0]
            if m.group(4):
                rate = "scan_rate_bytes_per_s" if m.group(3) == "scanned" else "issue_rate_bytes_per_s"
                r[rate] = nicebytes(m.group(4))[0]
            continue
        _progress_part(r, part)


def _progress_part(r: dict, part: str) -> None:
    m = re.match(r"^(\S+) total$", part)
    if m:
        r["scan_total_bytes"] = nicebytes(m.group(1))[0]
        return
    m = re.match(r"^(\S+) (?:repaired|resilvered)$", part)
    if m:
        r["scan_processed_bytes"] = nicebytes(m.group(1))[0]
        return
    m = re.match(r"^([\d.]+)% done$", part)
    if m:
        r["done_pct"] = float(m.group(1))
        return
    m = re.match(r"^(\S+|\d+ days? \S+) to go$", part)  # 0.8+: '0 days 01:24:38 to go' (print_scan_status)
    if m:
        r["to_go_ns"] = duration_ns(m.group(1))
        return
    if part in ("no estimated completion time", "(scan is slow", "no estimated time)") or part.startswith("(scan is"):
        return
    raise _Bad(part)


def _count(cell: str) -> tuple[float, bool]:
    if cell.isdigit():
        return float(cell), True
    try:
        return zfs_nicenum(cell), False
    except UnitError:
        raise _Bad(cell) from None


def _vdev_row(rep: _Report, line: str, lineno: int) -> None:
    """A line of the config table (tabs expanded)."""
    indent = len(line) - len(line.lstrip(" "))
    words = line.split()
    assert rep.base is not None  # the table's header line set it
    # zpool prints each child 2 spaces deeper than its parent (print_status_config: depth + 2), but published
    # outputs pad lines by hand: a row's depth is how many open rows are indented less than it
    while rep.open and rep.open[-1] >= indent:
        rep.open.pop()
    depth = len(rep.open) if indent > rep.base else 0
    rep.open.append(indent)
    if depth == 0 and words[0] in _CLASSES and rep.vdevs:
        rep.section = _CLASSES[words[0]]
        if len(words) == 1:
            return  # OpenZFS: a bare class line; Solaris prints it with a state and counts (stored as a row)
    if len(words) < 2:
        raise _Bad(line)
    name, state, rest = words[0], words[1], words[2:]
    counts: list[float | None] = [None, None, None]
    exact = True
    if len(rest) >= 3 and all(re.fullmatch(r"\d+(?:\.\d+)?[KMGTPE]?", c) for c in rest[:3]):
        for k in range(3):
            counts[k], ex = _count(rest[k])
            exact = exact and ex
        rest = rest[3:]
    elif rep.section != "spare" and state not in ("AVAIL", "INUSE"):
        raise _Bad(line)
    if not rep.vdevs and depth != 0:
        raise _Bad(line)
    rep.vdevs.append(
        {
            "report_no": rep.row["report_no"],
            "pool": rep.row["pool"],
            "name": name,
            "depth": depth,
            "class": rep.section if rep.vdevs else "normal",
            "leaf": True,
            "state": state,
            "read_errors": counts[0],
            "write_errors": counts[1],
            "cksum_errors": counts[2],
            "exact": exact,
            "note": " ".join(rest) or None,
            "line_start": lineno,
            "line_end": lineno,
        }
    )
    if len(rep.vdevs) > 1:
        prev = rep.vdevs[-2]
        if depth > prev["depth"]:
            prev["leaf"] = False


def _errors(rep: _Report, text: str) -> None:
    r = rep.row
    r["errors_text"] = text if r["errors_text"] is None else f"{r['errors_text']} | {text}"
    if text == "No known data errors":
        r["data_errors"] = 0
    m = re.match(r"^(\d+) data errors?, use '-v' for a list$", text)
    if m:
        r["data_errors"] = int(m.group(1))


def _dedup(rep: _Report, text: str, lineno: int) -> None:
    r = rep.row
    if text == "dedup: no DDT entries":
        r["ddt_entries"] = 0
        return
    m = _DDT.match(text)
    if not m:
        raise ParseError(
            f"not a dedup summary: {text[:80]!r}",
            line=lineno,
            expected="dedup: DDT entries N, size X on disk, Y in core",
        )
    try:
        r.update(
            ddt_entries=int(m.group(1)),
            ddt_disk_bytes=nicebytes(m.group(2))[0],
            ddt_core_bytes=nicebytes(m.group(3))[0],
            ddt_sizes="total" if m.group(4) else "per_entry",
        )
    except _Bad as e:
        raise ParseError(f"dedup: not a size: {e}", line=lineno, expected="a size (390, 82.9M)") from None


def _ddt_row(rep: _Report, line: str, lineno: int) -> bool:
    m = _DDT_ROW.match(line)
    if not m:
        return False
    cells = m.group(2).split()
    try:
        values = [nicebytes(c) for c in cells]
    except _Bad:
        return False
    bucket = m.group(1)
    names = ("alloc_blocks", "alloc_lsize_bytes", "alloc_psize_bytes", "alloc_dsize_bytes",
             "ref_blocks", "ref_lsize_bytes", "ref_psize_bytes", "ref_dsize_bytes")  # fmt: skip
    rep.ddt.append(
        {
            "report_no": rep.row["report_no"],
            "pool": rep.row["pool"],
            "refcnt_bucket": None if bucket == "Total" else round(nicebytes(bucket)[0]),
            "is_total": bucket == "Total",
            **{n: v for n, (v, _) in zip(names, values, strict=True)},
            "exact": all(ex for _, ex in values),
            "line_start": lineno,
            "line_end": lineno,
        }
    )
    return True


def _field_line(rep: _Report, key: str, value: str, line: str, lineno: int) -> None:
    """A 'key: value' line of a report (not pool:, handled by the caller)."""
    r = rep.row
    rep.field = key
    if key == "state":
        r["state"] = value
    elif key in ("status", "action"):
        r[key] = value
    elif key == "see":
        r["see"] = value
    elif key in ("scan", "scrub"):  # 'scrub:' in Solaris and ZFS on Linux <= 0.6.2
        _scan_first(rep, value)
        rep.field = "scan"
    elif key == "errors":
        _errors(rep, value)
        if value.startswith("Permanent errors have been detected"):
            rep.field = "files"
    elif key == "dedup":
        _dedup(rep, "dedup: " + value, lineno)
        rep.field = "ddt"


def _continued(rep: _Report, line: str, lineno: int) -> bool:
    """A line that continues the current field; False when it is not one."""
    s = line.strip()
    if rep.field in ("status", "action"):
        rep.row[rep.field] += " " + s
    elif rep.field == "scan":
        _scan_progress(rep, re.sub(r"(\d),(\d)", r"\1.\2", s))
    elif rep.field == "table":
        _vdev_row(rep, line, lineno)
    elif rep.field == "files":
        rep.files.append(
            {"report_no": rep.row["report_no"], "pool": rep.row["pool"], "path": s, "line_start": lineno,
             "line_end": lineno}
        )  # fmt: skip
    elif rep.field == "ddt":
        if not _ddt_row(rep, line, lineno) and not re.match(r"^(bucket|refcnt|[_\s]+$|[-\s]+$)", s):
            return False
    elif rep.field in ("remove", "expand", "checkpoint"):
        pass  # device removal / raidz expansion / checkpoint progress: not stored
    else:
        return False
    return True


def _blank(rep: _Report) -> None:
    if rep.field == "files" and not rep.files:
        return  # the blank line between 'errors: Permanent errors ...' and the list
    if rep.field == "ddt":
        return  # blank lines around the histogram
    rep.field = None


def read_status(lines: list[str], parsed: Parsed) -> None:
    """Fill the zpool_status_* tables from the lines of one or more zpool status reports."""
    reports: list[_Report] = []
    rep: _Report | None = None
    command = None
    ignored: list[int] = []
    last = max((i for i, ln in enumerate(lines, 1) if ln.strip()), default=1)
    for lineno, raw in enumerate(lines, 1):
        line = raw.expandtabs(8).rstrip()
        s = line.strip()
        if not s:
            if rep:
                _blank(rep)
            continue
        field = _FIELD.match(line)
        prompt = _PROMPT.match(s)
        if prompt and not field:
            command, rep = prompt.group(1).strip(), None
            continue
        if SHELL_PROMPT.match(s) and not field and not (rep and rep.field in ("table", "files")):
            command, rep = None, None  # another command's prompt line ends the report
            continue
        try:
            if field and field.group(1) == "pool":
                rep = _Report(len(reports) + 1, field.group(2).strip(), lineno, command)
                reports.append(rep)
            elif rep is None:
                ignored.append(lineno)
                continue
            elif (header := _HEADER.match(line)) and rep.field in ("config", None):
                rep.base, rep.field = len(header.group(1)), "table"
            elif field and rep.field != "files":
                _field_line(rep, field.group(1), field.group(2).strip(), line, lineno)
            elif _DDT_BARE.match(s) and rep.field in (None, "errors"):
                _dedup(rep, "dedup: " + s, lineno)
                rep.field = "ddt"
            elif not _continued(rep, line, lineno):
                ignored.append(lineno)
                continue
        except ParseError:
            raise
        except ValueError as e:  # _Bad, or a figure float() refused
            kind = "truncated" if lineno == last else "invalid"
            raise ParseError(
                f"zpool status: cannot read {str(e)[:60]!r} in {s[:80]!r}",
                line=lineno,
                kind=kind,
                expected="zpool status lines: pool/state/scan/config, vdev rows NAME STATE READ WRITE CKSUM",
            ) from None
        rep.row["line_end"] = lineno
    _store(reports, parsed, ignored)


def _store(reports: list[_Report], parsed: Parsed, ignored: list[int]) -> None:
    if not reports:
        raise ParseError("no pool: line", line=1, expected="a zpool status report ('  pool: NAME')")
    for rep in reports:
        if rep.row["state"] is None:
            raise ParseError(
                f"pool {rep.row['pool']}: the report ends before its state: line",
                line=rep.row["line_end"],
                kind="truncated",
                expected=" state: ONLINE|DEGRADED|...",
            )
        if rep.vdevs and rep.row["errors_text"] is None:
            parsed.warnings.append(
                f"line {rep.row['line_end']}: pool {rep.row['pool']}: the report ends before its errors: line "
                "(cut?); its vdev rows are kept"
            )
        if rep.files and rep.row["data_errors"] is None:
            rep.row["data_errors"] = len(rep.files)
        parsed.add("zpool_status_pools", rep.row)
        for table_name, rows in (
            ("zpool_status_vdevs", rep.vdevs),
            ("zpool_status_error_files", rep.files),
            ("zpool_status_ddt", rep.ddt),
        ):
            for row in rows:
                parsed.add(table_name, row)
    if ignored:
        shown = ", ".join(map(str, ignored[:10])) + (" ..." if len(ignored) > 10 else "")
        parsed.warnings.append(f"lines {shown}: text that is not zpool status output ignored")
