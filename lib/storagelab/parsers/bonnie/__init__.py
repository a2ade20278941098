"""bonnie++ results: the 80-column text table and the CSV line, bonnie++ 1.03 to 2.00a.

Formats (``sniff`` decides by content):

* ``bonnie-text``: one or more text tables (an IO block ``Version ... ------Sequential Output------``
  and/or a file block ``------Sequential Create------``), possibly several result rows under one
  header (pasted comparisons), with progress messages, prompts or prose around them.
* ``bonnie-csv``: CSV lines, with or without the ``-x`` header line. Three layouts
  (docs/formats/log-formats.md C.9): 27 fields without a version (1.03), 48 fields with
  format_version 1.96/1.97 first, 50 fields with format_version 1.98 first (1.98, 2.00, 2.00a).
  Columns are mapped by fixed index, never by the header (whose width is wrong in 1.96 and 1.98+).
* ``bonnie-text+csv``: both, as a plain run prints them (table, then its CSV line). Text rows and
  CSV lines of the same run are joined **by order**, not by name (the text cuts long names), and
  checked against each other; disagreements become warnings.

Units (docs/formats/log-formats.md C.5/C.6, docs/formats/zfs-facts.md F19): ``K/sec`` columns and every CSV throughput are KiB/s;
1.98+ text cells carry ``k``/``m``/``g`` = KiB/s, MiB/s, GiB/s; size cells ``NNNM``/``NNG`` are MiB/GiB;
chunk sizes ``4k``/``1m`` are KiB/MiB; the files count is in units of 1024 files; latency cells carry
``us``/``ms``/``s``. ``+++++`` (test shorter than 0.5 s) is stored as NULL with ``too_fast`` true,
never as 0. A blank cell or empty CSV field (test not run: ``-f``, ``-s 0``, ``-n 0``) gives no row.

Known defects absorbed here:

* 1.98+ text prints the file-creation rates with an integer conversion of a double, i.e. garbage
  (the file count x 1024, or 0). When the CSV line of the same run is present, the text rows take
  the CSV rate (``value_from = 'csv'``, the printed cell kept in ``value_text``). When only the
  text is there, the value is kept and ``suspect`` is set. A cell printed with decimals
  (``165.746758``) comes from a build patched to print the double with ``%f`` (a downstream port
  patch of bon_time.cpp exists, and the seed 004 FreeBSD 1.98 tables look like it): such cells are
  taken as measured (``suspect`` false).
* num_dirs sits one slot right of its header name in 1.96+ CSV; the 1.98+ CSV never records the
  IO chunk size (taken from the paired text row when there is one); the 1.96 ``-s 0`` line misses
  one comma (repaired); 2.00a drops a one-digit non-default seeker count from the text size cell.
* bon_csv2txt output (a table rebuilt from CSV by the perl script shipped with bonnie++; 2.00a's is told by the
  width of its ``Version`` line) is read, with a warning: its size cell is the CSV's ``size:chunk:seeks:seekers``
  (not the text table's ``size:chunk:concurrency:seeks:seekers``), and it prints ``+++++`` as ``0k``: such a cell
  is stored NULL (``too_fast`` when its CPU cell is ``+++``, which the script copies unchanged), with a warning.
"""

from __future__ import annotations

from .. import markdown
from ..base import Parsed, ParseError, lines_of
from .cells import _VERSION_LIKE, FILE_TESTS, IO_TESTS, RATE_TESTS, Run
from .csvline import _CSV_HEADER, _csv_sniff, _csv_width, _looks_103, _parse_csv
from .join import _pair
from .rows import _TEXT_SNIFF
from .schema import TABLES
from .table import _text_runs

__all__ = [
    "TOOL",
    "PARSER_VERSION",
    "READS",
    "TABLES",
    "FORMATS",
    "IO_TESTS",
    "FILE_TESTS",
    "RATE_TESTS",
    "sniff",
    "parse",
]

TOOL = "bonnie++"
PARSER_VERSION = 1
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {"bonnie-text": "table", "bonnie-csv": "CSV", "bonnie-text+csv": "table with its CSV line"}
PARSE_TAKES_NAME = False  # optional hooks, declared (contract.py): none offered
STREAM_FORMATS: tuple[str, ...] = ()
HELPER_MODULES = ("markdown",)  # a write-up's headings (parsers/markdown.py): hashed into the parser version
parse_bytes = None
parse_stream = None
FORMATS = ("bonnie-text", "bonnie-csv", "bonnie-text+csv")
# the columns of a bonnie_runs row that come from the run's info (the others are set where the row is made)
_RUN_SET_HERE = ("run_index", "source", "paired_run_index", "preferred", "section", "line_start", "line_end")
_RUN_INFO = tuple(c for c in TABLES["bonnie_runs"].row_columns if c not in _RUN_SET_HERE)


def sniff(text: str) -> str | None:
    has_text = bool(_TEXT_SNIFF.search(text))
    has_csv = False
    for ln in lines_of(text):
        if ln.count(",") >= 26 and _csv_sniff(ln):
            has_csv = True
            break
    if has_text and has_csv:
        return "bonnie-text+csv"
    if has_text:
        return "bonnie-text"
    if has_csv:
        return "bonnie-csv"
    return None


def parse(text: str, fmt: str | None = None) -> Parsed:
    if fmt is not None and fmt not in FORMATS:
        raise ParseError(f"unknown bonnie++ format {fmt!r}", expected=" or ".join(FORMATS), kind="invalid")
    if not text.strip():
        raise ParseError("no text", line=1, expected="a bonnie++ table or CSV line", kind="empty")
    lines = lines_of(text)
    warnings: list[str] = []
    csv_runs = _csv_runs(lines, warnings)
    text_runs = _text_runs(lines, warnings)
    if not text_runs and not csv_runs:
        first = next((k for k, ln in enumerate(lines, 1) if ln.strip()), 1)
        raise ParseError(
            "no bonnie++ result table or CSV line found",
            line=first,
            expected="a bonnie++ table ('Version ... ------Sequential Output------') or CSV line",
        )
    _pair(text_runs, csv_runs, warnings)
    suspects = [r for r in text_runs if not r.pair and any(x.suspect for x in r.results.values())]
    if suspects:
        warnings.append(
            f"lines {', '.join(str(r.line_start) for r in suspects)}: bonnie++ 1.98+ text file-creation "
            "rates printed as integers are unreliable and no CSV line corrects them: kept, suspect=true"
        )
    runs = sorted(text_runs + csv_runs, key=lambda r: r.line_start)
    for k, r in enumerate(runs):
        r.index = k
    fmt_out = "bonnie-text+csv" if text_runs and csv_runs else "bonnie-text" if text_runs else "bonnie-csv"
    version = next((r.info["version"] for r in runs if r.info["version"]), None)
    out = Parsed(tool=TOOL, format=fmt_out, tool_version=version, warnings=warnings)
    heads = markdown.sections(lines)
    for r in runs:
        _add_run(out, r, markdown.section_at(heads, r.line_start))
    return out


def _csv_runs(lines: list[str], warnings: list[str]) -> list[Run]:
    """The runs of every bonnie++ CSV line (header lines skipped); a line of an unknown format_version, or a 1.03
    line cut short, is an error."""
    runs = []
    for k, ln in enumerate(lines, 1):
        s = ln.strip()
        if s.count(",") < 2 or _CSV_HEADER.match(s):
            continue
        fields = s.split(",")
        width = _csv_width(fields)
        if width:
            runs.append(_parse_csv(fields, width, k, warnings))
        elif len(fields) in (47, 48, 50) and _VERSION_LIKE.match(fields[0]) and _VERSION_LIKE.match(fields[1]):
            raise ParseError(
                f"bonnie++ CSV format_version {fields[0]!r} is not known",
                line=k,
                expected="format_version 1.96, 1.97 or 1.98",
                kind="unsupported-version",
            )
        elif 15 <= len(fields) < 27 and fields[1] and _looks_103(fields):
            raise ParseError(
                f"bonnie++ 1.03 CSV line has {len(fields)} fields",
                line=k,
                expected="27 fields (1.03 layout)",
                kind="truncated",
            )
    return runs


def _add_run(out: Parsed, r: Run, section: str | None) -> None:
    """The bonnie_runs row of a run and its bonnie_results rows, one per test that ran."""
    info = r.info
    if r.source == "csv":
        info["machine_truncated"] = False
    out.add(
        "bonnie_runs",
        {
            "run_index": r.index,
            "source": r.source,
            **{k: info.get(k) for k in _RUN_INFO},
            "paired_run_index": r.pair.index if r.pair else None,
            "preferred": r.source == "csv" or r.pair is None,
            "section": section,
            "line_start": r.line_start,
            "line_end": r.line_end,
        },
    )
    for test in IO_TESTS + FILE_TESTS:
        res = r.results.get(test)
        if res is None:
            continue
        rate = test in RATE_TESTS
        out.add(
            "bonnie_results",
            {
                "run_index": r.index,
                "test": test,
                "bytes_per_s": res.value if rate else None,
                "ops_per_s": None if rate else res.value,
                "cpu_pct": res.cpu,
                "too_fast": res.too_fast,
                "latency_ns": res.latency_ns,
                "suspect": res.suspect,
                "value_from": res.value_from,
                "source": r.source,
                "value_text": res.value_text or None,
                "latency_text": res.latency_text or None,
                "line_start": res.lines[0],
                "line_end": res.lines[1],
            },
        )
