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

import math
import re
from dataclasses import dataclass, field

from ..units import GiB, KiB, MiB, UnitError, bonnie_latency_ns, bonnie_rate
from .base import LINES, Parsed, ParseError, lines_of, table

TOOL = "bonnie++"
PARSER_VERSION = 1
FORMATS = ("bonnie-text", "bonnie-csv", "bonnie-text+csv")

IO_TESTS = ("putc", "put_block", "rewrite", "getc", "get_block", "seeks")
FILE_TESTS = ("seq_create", "seq_read", "seq_delete", "ran_create", "ran_read", "ran_delete")
RATE_TESTS = frozenset(IO_TESTS[:5])
DEFAULT_CHUNK = 8192
DEFAULT_SEEKS = 8192
FILES_UNIT = 1024  # bonnie++ DirectoryUnit: -n 16 means 16 x 1024 files

TABLES = {
    "bonnie_runs": table(
        "One row per bonnie++ result row: a text-table row (its IO row and file row joined) or a CSV line. "
        "A run printed both ways appears twice, linked by paired_run_index; `preferred` marks one row per run.",
        ("run_index", "INTEGER", "0-based order of the result row in the file"),
        ("source", "VARCHAR", "'text' (table row) or 'csv' (CSV line)"),
        (
            "machine",
            "VARCHAR",
            "machine name as printed (the text cuts it to its column, the CSV has it whole); NULL when not printed",
        ),
        (
            "machine_truncated",
            "BOOLEAN",
            "true when the text cut the name (known from the paired CSV line), false "
            "when it is known whole, NULL when it fills its column and cannot be checked",
        ),
        (
            "version",
            "VARCHAR",
            "bonnie++ version (text `Version` line or CSV bonnie_version): 1.03e, 1.97, 1.98, 2.00a",
        ),
        ("format_version", "VARCHAR", "CSV field 0 (1.96, 1.97, 1.98); NULL for 1.03 CSV and for text rows"),
        (
            "size_bytes",
            "BIGINT",
            "IO test file size in bytes (size cell `64G` = 64 GiB, `8196M` = 8196 MiB); "
            "NULL when the IO tests did not run or the cell was cut",
        ),
        (
            "chunk_bytes",
            "BIGINT",
            "IO chunk size in bytes (8192 when not printed, which means the default); NULL in "
            "a 1.98+ CSV line without paired text (that CSV never records it)",
        ),
        (
            "concurrency",
            "INTEGER",
            "-c value (1.9x `Concurrency` row, 1.98+ size cell part 3, CSV field 3); NULL for 1.03",
        ),
        (
            "seeks",
            "BIGINT",
            "number of seeks (1.98+ size cell part 4 or CSV field 7; 8192 = default); NULL before 1.98",
        ),
        (
            "seekers",
            "INTEGER",
            "number of seeker processes (1.98+ CSV field 8, or text size cell part 5 when "
            "printed: 2.00a drops a one-digit value from the text, so NULL there); "
            "NULL before 1.98",
        ),
        ("num_files_printed", "INTEGER", "files count as printed (the -n value, in units of 1024 files)"),
        ("num_files", "BIGINT", "real number of files = num_files_printed x 1024"),
        ("max_size_bytes", "BIGINT", "largest file size in bytes (0 = empty files, the default); NULL for links"),
        ("min_size_bytes", "BIGINT", "smallest file size in bytes (0 when not printed); NULL for links"),
        ("link_mode", "VARCHAR", "'link' or 'symlink' when -n ...:-1/-2 made links instead of files, else NULL"),
        ("num_dirs", "INTEGER", "number of directories the files are spread over; NULL when not printed (<= 1)"),
        ("seed", "VARCHAR", "random seed (1.9x+ CSV field 4); NULL in text"),
        (
            "paired_run_index",
            "INTEGER",
            "run_index of the other representation of the same run (text row <-> CSV line), NULL if none",
        ),
        (
            "preferred",
            "BOOLEAN",
            "true for one row per run: the CSV line when both exist (exact integers, whole name), else the text row",
        ),
        *LINES,
    ),
    "bonnie_results": table(
        "Long form: one row per (run, test) that ran. Tests: putc, put_block, rewrite, getc, get_block, seeks, "
        "seq_create, seq_read, seq_delete, ran_create, ran_read, ran_delete (seq_read/ran_read are bonnie's 'stat').",
        ("run_index", "INTEGER", "bonnie_runs.run_index"),
        ("test", "VARCHAR", "test name (see table doc)"),
        (
            "bytes_per_s",
            "DOUBLE",
            "throughput in bytes/s (putc, put_block, rewrite, getc, get_block); NULL for other tests or too_fast",
        ),
        ("ops_per_s", "DOUBLE", "seeks/s (seeks) or files/s (file tests); NULL for throughput tests or too_fast"),
        ("cpu_pct", "DOUBLE", "CPU use in percent (can exceed 100 with several processes); NULL when too_fast"),
        (
            "too_fast",
            "BOOLEAN",
            "true when printed +++++: the test took < 0.5 s and bonnie++ gave no rate (value NULL, never 0)",
        ),
        (
            "latency_ns",
            "DOUBLE",
            "longest single-operation latency in ns (1.9x+ Latency row / CSV latency field); NULL when empty",
        ),
        (
            "suspect",
            "BOOLEAN",
            "true for a 1.98+ text create/stat/delete rate printed as an integer with no CSV "
            "line to correct it (bonnie++ 1.98-2.00a print garbage there)",
        ),
        (
            "value_from",
            "VARCHAR",
            "'text' or 'csv': where bytes_per_s/ops_per_s came from (a 1.98+ text row takes "
            "its file rates from the paired CSV line)",
        ),
        ("source", "VARCHAR", "'text' or 'csv' (as in bonnie_runs)"),
        ("value_text", "VARCHAR", "the value cell as printed, e.g. '10.4m', '+++++', '165.746758'"),
        ("latency_text", "VARCHAR", "the latency cell as printed, e.g. '437s'"),
        *LINES,
    ),
}

# --- cells -----------------------------------------------------------------------------

_NUM = r"[0-9]+(?:\.[0-9]+)?"
_RATE_CELL = re.compile(rf"^{_NUM}[kmgKMG]?$")
_OPS_CELL = re.compile(rf"^{_NUM}$")
_PLUS = re.compile(r"^\+{3,}$")
_LAT_CELL = re.compile(rf"^{_NUM}(?:ns|us|ms|s)$")
_SIZE = re.compile(r"^([0-9]+)([MG]?)$")
_CHUNK = re.compile(r"^([0-9]+)([kKmM]?)$")
_FILES = re.compile(r"^([0-9]+)(?::(link|symlink)|:([0-9]+)(?::([0-9]+))?)?(?:/([0-9]+))?$")
_VERSION_LIKE = re.compile(r"^[0-9]+\.[0-9]+[0-9a-z.]*$")
_CSV_FV = re.compile(r"^[12]\.[0-9]{2}$")  # CSV format_version: 1.96, 1.97, 1.98


def _err(msg, line, expected, kind="invalid"):
    return ParseError(msg, line=line, expected=expected, kind=kind)


def _size_bytes(cell: str, line: int) -> int:
    m = _SIZE.match(cell)
    if not m:
        raise _err(f"bad size cell {cell!r}", line, "a file size like 64M, 8196M or 64G")
    return int(m.group(1)) * (GiB if m.group(2) == "G" else MiB)


def _chunk_bytes(cell: str, line: int) -> int:
    m = _CHUNK.match(cell)
    if not m:
        raise _err(f"bad chunk size {cell!r}", line, "a chunk size like 4k, 64k, 1m or 512")
    return int(m.group(1)) * {"": 1, "k": KiB, "m": MiB}[m.group(2).lower()]


def _int(cell: str, line: int, what: str) -> int:
    if not cell.isdigit():
        raise _err(f"bad {what} {cell!r}", line, f"an integer {what}")
    return int(cell)


def _files_spec(spec: str, line: int) -> dict:
    """``16``, ``16:4096:1024/2``, ``1:symlink`` (text and 1.03 CSV) -> run columns."""
    m = _FILES.match(spec)
    if not m:
        raise _err(f"bad files cell {spec!r}", line, "files[:max[:min]][/dirs] or files:link / files:symlink")
    n = int(m.group(1))
    link = m.group(2)
    return {
        "num_files_printed": n,
        "num_files": n * FILES_UNIT,
        "link_mode": link,
        "max_size_bytes": None if link else int(m.group(3) or 0),
        "min_size_bytes": None if link else int(m.group(4) or 0),
        "num_dirs": int(m.group(5)) if m.group(5) else None,
    }


def _family(version: str | None) -> str | None:
    """'1.0x', '1.9x' or '1.98+' from a version string (None if unknown)."""
    m = re.match(r"^([0-9]+)\.([0-9]{2})", version or "")
    if not m:
        return None
    v = int(m.group(1)) * 100 + int(m.group(2))
    return "1.0x" if v < 190 else ("1.9x" if v < 198 else "1.98+")


@dataclass
class _Res:
    test: str
    value_text: str = ""
    cpu_text: str = ""
    latency_text: str = ""
    value: float | None = None
    too_fast: bool = False
    cpu: float | None = None
    latency_ns: float | None = None
    suspect: bool = False
    value_from: str = ""
    lines: tuple[int, int] = (0, 0)

    @property
    def ran(self) -> bool:
        return bool(self.value_text or self.cpu_text or self.latency_text)


@dataclass
class _Run:
    source: str
    line_start: int
    line_end: int
    info: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)  # test -> _Res
    family: str | None = None
    pair: _Run | None = None
    index: int = 0


def _fill_value(res: _Res, line: int) -> None:
    """Turn res.value_text / cpu_text / latency_text into numbers (base units)."""
    v, c = res.value_text, res.cpu_text
    if v:
        if _PLUS.match(v):
            res.too_fast = True
        elif res.test in RATE_TESTS:
            if not _RATE_CELL.match(v):
                raise _err(f"bad {res.test} throughput {v!r}", line, "a rate like 83720, 287k, 10.4m, 2.7g or +++++")
            res.value = bonnie_rate(v)
        else:
            if not _OPS_CELL.match(v):
                raise _err(f"bad {res.test} rate {v!r}", line, "a number of operations/s like 200.0, 8891 or +++++")
            res.value = float(v)
    if c and not _PLUS.match(c):
        if not _OPS_CELL.match(c):
            raise _err(f"bad {res.test} CPU cell {c!r}", line, "an integer percentage or +++")
        res.cpu = float(c)
    if res.latency_text:
        try:
            res.latency_ns = bonnie_latency_ns(res.latency_text)
        except UnitError:
            raise _err(
                f"bad {res.test} latency {res.latency_text!r}", line, "a latency like 8631us, 184ms or 437s"
            ) from None


# --- CSV -------------------------------------------------------------------------------

# layout: (io results start, files cell index, file results start, latencies start or None)
_CSV_LAYOUTS = {27: (2, 14, 15, None), 48: (7, 19, 24, 36), 50: (9, 21, 26, 38)}
_CSV_HEADER = re.compile(r"^(format_version,bonnie_version,|name,file_size,)")


def _csv_width(fields: list[str]) -> int | None:
    """The layout a CSV line follows (27, 48 or 50), or None when it is not a bonnie++ result line.

    A line starting ``1.9x,<digit>`` is taken as a 1.9x+ line whatever its length (a short one is
    reported as truncated); a 1.03 line needs its 27 fields, a size cell and 12 result cells.
    """
    if len(fields) > 1 and _CSV_FV.match(fields[0]) and re.match(r"^[0-9](\.|$)", fields[1]):
        fam = _family(fields[0])
        return {"1.98+": 50, "1.9x": 48}.get(fam)
    if len(fields) == 27 and _looks_103(fields):
        return 27
    return None


def _looks_103(fields: list[str]) -> bool:
    return (
        not _VERSION_LIKE.match(fields[0])
        and (not fields[1] or bool(_SIZE.match(fields[1].split(":")[0])))
        and all(x == "" or _RATE_CELL.match(x) or _PLUS.match(x) for x in fields[2:14])
    )


def _csv_sniff(line: str) -> bool:
    """Strict test used by sniff: a full-width bonnie++ CSV line (or the 1.96 -s 0 line)."""
    f = line.rstrip("\r").split(",")
    w = _csv_width(f)
    if w == 27:
        return bool(f[1])
    if w in (48, 50):
        return len(f) == w or (f[0] == "1.96" and len(f) == 47)
    return False


def _parse_csv(fields: list[str], width: int, lineno: int, warnings: list[str]) -> _Run:
    if width == 48 and fields[0] == "1.96" and len(fields) == 47 and not any(fields[5:17]):
        # 1.96 -s 0: the IO placeholder is one comma short (docs/formats/log-formats.md C.9)
        fields = fields[:5] + [""] + fields[5:]
        warnings.append(
            f"line {lineno}: 1.96 CSV line with 47 fields (the -s 0 comma bug): one empty IO field inserted"
        )
    if len(fields) < width:
        raise _err(
            f"bonnie++ CSV line has {len(fields)} fields",
            lineno,
            f"{width} fields (format_version {fields[0]})" if width != 27 else "27 fields (1.03 layout)",
            kind="truncated",
        )
    if len(fields) > width:
        raise _err(f"bonnie++ CSV line has {len(fields)} fields", lineno, f"{width} fields")
    io0, files_i, file0, lat0 = _CSV_LAYOUTS[width]
    run = _Run("csv", lineno, lineno)
    info = run.info
    if width == 27:
        run.family = "1.0x"
        info.update(
            machine=fields[0], version=None, format_version=None, concurrency=None, seed=None, seeks=None, seekers=None
        )
        size, _, chunk = fields[1].partition(":")
        info["size_bytes"] = _size_bytes(size, lineno) if size else None
        info["chunk_bytes"] = _chunk_bytes(chunk, lineno) if chunk else DEFAULT_CHUNK
        files = _files_spec(fields[files_i], lineno) if fields[files_i] else {}
    else:
        run.family = "1.98+" if width == 50 else "1.9x"
        if fields[0] not in ("1.96", "1.97", "1.98"):
            warnings.append(
                f"line {lineno}: CSV format_version {fields[0]} not seen before; read as the {width}-field layout"
            )
        info.update(
            machine=fields[2],
            version=fields[1],
            format_version=fields[0],
            concurrency=_int(fields[3], lineno, "concurrency") if fields[3] else None,
            seed=fields[4] or None,
        )
        info["size_bytes"] = _size_bytes(fields[5], lineno) if fields[5] else None
        if width == 50:
            info["chunk_bytes"] = _chunk_bytes(fields[6], lineno) if fields[6] else None
            info["seeks"] = _int(fields[7], lineno, "seek count") if fields[7] else None
            info["seekers"] = _int(fields[8], lineno, "seeker count") if fields[8] else None
        else:
            info["chunk_bytes"] = (
                _chunk_bytes(fields[6], lineno) if fields[6] else (DEFAULT_CHUNK if fields[5] else None)
            )
            info["seeks"] = info["seekers"] = None
        files = {}
        if fields[files_i]:
            n = _int(fields[files_i], lineno, "files count")
            mx, mn, gap, dirs = fields[files_i + 1 : files_i + 5]
            link = mx if mx in ("link", "symlink") else None
            files = {
                "num_files_printed": n,
                "num_files": n * FILES_UNIT,
                "link_mode": link,
                "max_size_bytes": None if link else (_int(mx, lineno, "max size") if mx else 0),
                "min_size_bytes": None if link else (_int(mn, lineno, "min size") if mn else 0),
                "num_dirs": _int(dirs, lineno, "directory count") if dirs else None,
            }
            if gap:
                warnings.append(
                    f"line {lineno}: CSV field {files_i + 3} (always empty in bonnie++ 1.96-2.00a) "
                    f"holds {gap!r}; ignored"
                )
    if not info["size_bytes"]:
        info["chunk_bytes"] = None
    info.update(
        files
        or {
            "num_files_printed": None,
            "num_files": None,
            "link_mode": None,
            "max_size_bytes": None,
            "min_size_bytes": None,
            "num_dirs": None,
        }
    )
    for k, test in enumerate(IO_TESTS + FILE_TESTS):
        base = io0 + 2 * k if k < 6 else file0 + 2 * (k - 6)
        res = _Res(
            test,
            value_text=fields[base],
            cpu_text=fields[base + 1],
            latency_text=fields[lat0 + k] if lat0 else "",
            value_from="csv",
            lines=(lineno, lineno),
        )
        if res.ran:
            _fill_value(res, lineno)
            run.results[test] = res
    return run


# --- text ------------------------------------------------------------------------------

_V_IO = re.compile(r"^Version(\s+)(\S+)\s+------Sequential Output------")
_V_FILE = re.compile(r"^(?:Version\s+(\S+))?\s*------Sequential Create------")
_IO_H2 = re.compile(r"^(?:Concurrency\s+([0-9]+))?\s*-Per Chr-\s+--Block--\s+-Rewrite-")
_IO_H3 = re.compile(r"^(Machine|Name:Size etc)\b.*%CP")
_F_H2 = re.compile(r"^(.*?)\s*-Create--\s+--Read---\s+-Delete--")
_F_H3 = re.compile(r"^(.*?)\s*/sec %CP\s+/sec %CP\s+/sec %CP")
_LAT = re.compile(r"^Latency(\s|$)")
_TEXT_SNIFF = re.compile(r"(?m)^(?:Version +\S+ +|\s{12,})------Sequential (?:Output|Create)------ +--")
_FIELD = 19  # name+size (IO row) / files cell (file row) width
_PAIR = 10  # one value cell (6) + its CPU cell (4)


def _row_cells(line: str, ntests: int = 6):
    """Split a result row into (prefix, [(value, cpu) or None for blank]).

    Returns (prefix, cells, status) with status 'ok', 'short' (ran out of text: truncated) or
    'bad' (a token that is no cell). Blank cells are found by position (10 columns per test);
    wide values push the rest of the row right, as bonnie++ prints them. A row whose spacing is not
    bonnie++'s (runs of spaces squeezed where it was pasted) but which holds every cell is read by
    its tokens: the name (and size), then a value and its CPU per test.
    """
    prefix, cells, status = _row_cells_by_position(line, ntests)
    if status != "ok":
        toks = line.split()
        head = len(toks) - 2 * ntests
        pairs = list(zip(toks[head::2], toks[head + 1 :: 2]))
        if head in (1, 2) and all(_is_cell(v, c) for v, c in pairs):
            return line[: line.index(toks[head - 1]) + len(toks[head - 1])], pairs, "ok"
    return prefix, cells, status


def _is_cell(value: str, cpu: str) -> bool:
    return bool((_RATE_CELL.match(value) or _PLUS.match(value)) and (_OPS_CELL.match(cpu) or _PLUS.match(cpu)))


def _row_cells_by_position(line: str, ntests: int):
    end = _FIELD
    if len(line) > end and line[end] != " ":  # the name/size or files field overflowed
        nxt = line.find(" ", end)
        end = len(line) if nxt < 0 else nxt
    prefix, tail = line[:end], line[end:]
    cells, pos = [], 0
    pair = re.compile(r"\s*(\S+)\s+(\S+)")
    for _ in range(ntests):
        if len(tail) >= pos + _PAIR and not tail[pos : pos + _PAIR].strip():
            cells.append(None)
            pos += _PAIR
            continue
        m = pair.match(tail, pos)
        if not m:
            return prefix, cells, ("short" if not tail[pos:].strip() or len(tail[pos:].split()) == 1 else "bad")
        v, c = m.group(1), m.group(2)
        if not _is_cell(v, c):
            return prefix, cells, "bad"
        cells.append((v, c))
        pos = m.end()
    if tail[pos:].strip():
        return prefix, cells, "bad"
    return prefix, cells, "ok"


def _latency_cells(line: str, lineno: int) -> list[str]:
    """The 6 latency cells of a ``Latency`` row ('' where empty), placed by column when some are empty."""
    toks = [(m.group(0), m.end()) for m in re.finditer(r"\S+", line)][1:]
    for t, _ in toks:
        if not _LAT_CELL.match(t):
            raise _err(f"bad latency cell {t!r}", lineno, "latencies like 8631us, 184ms, 437s")
    if len(toks) == 6:
        return [t for t, _ in toks]
    if len(toks) > 6:
        raise _err(f"Latency row with {len(toks)} cells", lineno, "6 latency cells")
    if len(line) < 17 + 6 * 10:  # bonnie++ pads every empty cell, up to the last one
        raise _err(f"Latency row cut short ({len(toks)} of 6 cells)", lineno, "6 latency cells", kind="truncated")
    cells = [""] * 6
    for t, e in toks:  # cell k is right-aligned to column 27 + 10k
        k = round((e - 27) / 10)
        if not 0 <= k < 6 or cells[k]:
            raise _err(
                f"cannot place latency cell {t!r} (ends at column {e})",
                lineno,
                "latency cells right-aligned in 10 columns after the 17-column label",
            )
        cells[k] = t
    return cells


class _Text:
    """Text-table reader: finds IO and file blocks and reads their rows."""

    def __init__(self, lines: list[str], warnings: list[str]):
        self.lines = [ln.rstrip("\r").expandtabs() for ln in lines]
        self.w = warnings

    def line(self, i):
        return self.lines[i] if i < len(self.lines) else None

    def next_nonblank(self, i):
        while i < len(self.lines) and not self.lines[i].strip():
            i += 1
        return i

    def read_rows(self, i, kind, header_line, name=None, latency=False):
        """Result rows (each optionally followed by a Latency row) from line i; returns (rows, next i)."""
        rows = []
        while True:
            ln = self.line(i)
            if kind == "file" and rows and ln is not None:
                m = _F_H3.match(ln)
                label = m.group(1).strip() if m else ""
                if label and not label.startswith(("files", "Name:Size", "Machine")):
                    # a pasted second row announced by `name   /sec %CP ...`
                    name = label
                    i += 1
                    ln = self.line(i)
                    if ln is None or not ln.strip():
                        raise _err("result row missing after a header", i, "a result row", kind="truncated")
            if ln is None or not ln.strip():
                if not rows:
                    raise _err(
                        "table header without a result row",
                        header_line,
                        "a result row after the header",
                        kind="truncated",
                    )
                return rows, i
            prefix, cells, status = _row_cells(ln)
            if status != "ok":
                if not rows:
                    if status == "short" or _LAT.match(ln) or self.is_header(ln):
                        raise _err(
                            f"result row cut short ({len(cells)} of 6 tests)"
                            if status == "short"
                            else "table header without a result row",
                            i + 1,
                            "a result row with 6 value/CPU cells",
                            kind="truncated",
                        )
                    raise _err(
                        f"unreadable result row: {ln.strip()[:60]!r}",
                        i + 1,
                        "a result row: name/size (or files) then 6 value/CPU cells",
                    )
                if status == "short" and cells and all(c is not None for c in cells):
                    raise _err(
                        f"result row cut short ({len(cells)} of 6 tests)", i + 1, "6 value/CPU cells", kind="truncated"
                    )
                return rows, i
            row = {"line": i + 1, "prefix": prefix, "cells": cells, "lat": None, "lat_line": None, "name": name}
            name = None
            i += 1
            ln = self.line(i)
            if ln is not None and _LAT.match(ln):
                row["lat"] = _latency_cells(ln, i + 1)
                row["lat_line"] = i + 1
                i += 1
            elif latency:  # 1.9x+ print a Latency row under every result row
                if self.next_nonblank(i) >= len(self.lines):
                    raise _err("the output stops after a result row", row["line"], "its Latency row", kind="truncated")
                self.w.append(f"line {row['line']}: no Latency row under this result row")
            rows.append(row)

    @staticmethod
    def is_header(ln):
        return bool(
            _V_IO.match(ln)
            or _V_FILE.match(ln)
            or _IO_H2.match(ln)
            or _IO_H3.match(ln)
            or _F_H2.match(ln)
            or _F_H3.match(ln)
        )

    def expect(self, i, rx, what, header_line):
        ln = self.line(i)
        if ln is None or not ln.strip():
            raise _err(f"table header stops before its {what}", header_line, what, kind="truncated")
        m = rx.match(ln)
        if not m:
            raise _err(f"unexpected line in a table header: {ln.strip()[:60]!r}", i + 1, what)
        return m

    def io_block(self, i):
        """IO block from line i (a Version line or the Machine/Name:Size header)."""
        start = i
        version = concurrency = None
        m = _V_IO.match(self.lines[i])
        csv2txt = False
        if m:
            version = m.group(2)
            lead = len(m.group(1))
            csv2txt = lead == 1 + max(0, 9 - len(version)) and lead != 1 + max(0, 5 - len(version))
            if csv2txt:
                self.w.append(
                    f"line {i + 1}: a table rebuilt by bon_csv2txt from CSV lines: its size cell is "
                    "size:chunk:seeks:seekers, and a '0k' cell is the script's rendering of +++++ (or 0): stored NULL"
                )
            i += 1
            if _IO_H2.match(self.line(i) or ""):
                concurrency = _IO_H2.match(self.lines[i]).group(1)
                i += 1
            h3 = self.expect(
                i, _IO_H3, "the 'Machine  Size K/sec %CP' / 'Name:Size etc  /sec %CP' header row", start + 1
            )
        else:
            h3 = _IO_H3.match(self.lines[i])
        new_style = h3.group(1) == "Name:Size etc"
        latency = new_style or _family(version) in ("1.9x", "1.98+")
        rows, j = self.read_rows(i + 1, "io", i + 1, latency=latency)
        io = {"version": version, "concurrency": concurrency, "new": new_style, "rows": rows, "start": start}
        return io | {"csv2txt": csv2txt}, j

    def file_block(self, i):
        start = i
        version = name = None
        m = _V_FILE.match(self.lines[i])
        if m:
            version = m.group(1)
            i += 1
        m2 = _F_H2.match(self.line(i) or "")
        if m2:
            name = m2.group(1).strip() or None
            i += 1
        elif start != i:
            self.expect(i, _F_H2, "the '-Create-- --Read--- -Delete--' header row", start + 1)
        m3 = self.expect(i, _F_H3, "the 'files  /sec %CP ...' header row", start + 1)
        label = m3.group(1).strip()
        if label and not label.startswith("files"):
            name = label
        rows, j = self.read_rows(i + 1, "file", i + 1, name, latency=_family(version) in ("1.9x", "1.98+"))
        return {"version": version, "rows": rows, "start": start}, j

    def tables(self):
        """Yield (io_block or None, file_block or None) per table, in order."""
        n = len(self.lines)
        i = 0
        while i < n:
            ln = self.lines[i]
            if _V_IO.match(ln) or _IO_H3.match(ln):
                io, i = self.io_block(i)
                k = self.next_nonblank(i)
                fb = None
                if k < n and _V_FILE.match(self.lines[k]):
                    fv = _V_FILE.match(self.lines[k]).group(1)
                    # 1.03 prints a Version line over the file block only when no IO test ran: such a
                    # block is another run (-s 0), not the file half of this one
                    same_run = fv == io["version"] and _family(fv) != "1.0x"
                    if fv is None or io["version"] is None or same_run:
                        fb, i = self.file_block(k)
                yield io, fb
            elif _V_FILE.match(ln) or (_F_H2.match(ln) and _F_H3.match(self.line(i + 1) or "")):
                fb, i = self.file_block(i)
                yield None, fb
            else:
                i += 1


def _text_runs(lines: list[str], warnings: list[str]) -> list[_Run]:
    runs = []
    for io, fb in _Text(lines, warnings).tables():
        io_rows = io["rows"] if io else []
        f_rows = fb["rows"] if fb else []
        if io_rows and f_rows and len(io_rows) != len(f_rows):
            warnings.append(
                f"line {io['start'] + 1}: {len(io_rows)} IO rows but {len(f_rows)} file rows "
                "under one table; joined by order"
            )
        version = (io and io["version"]) or (fb and fb["version"])
        for k in range(max(len(io_rows), len(f_rows))):
            runs.append(
                _text_run(
                    io if k < len(io_rows) else None,
                    io_rows[k] if k < len(io_rows) else None,
                    f_rows[k] if k < len(f_rows) else None,
                    version,
                    warnings,
                )
            )
    return runs


def _text_run(io, io_row, f_row, version, warnings) -> _Run:
    first = (io_row or f_row)["line"]
    last = max(r["lat_line"] or r["line"] for r in (io_row, f_row) if r)
    run = _Run("text", first, last)
    fam = _family(version) or ("1.98+" if io and io["new"] else None)
    if io and not io["new"] and fam == "1.98+":
        warnings.append(f"line {io['start'] + 1}: version {version} with an old 'Machine Size' header")
    run.family = fam
    info = run.info
    info.update(
        version=version,
        format_version=None,
        seed=None,
        size_bytes=None,
        chunk_bytes=None,
        concurrency=None,
        seeks=None,
        seekers=None,
        machine=None,
        num_files_printed=None,
        num_files=None,
        link_mode=None,
        max_size_bytes=None,
        min_size_bytes=None,
        num_dirs=None,
    )
    names = []
    if io_row:
        toks = io_row["prefix"].split()
        size = None
        if toks and _SIZE.match(toks[-1].split(":")[0]):
            size = toks.pop()
        elif toks:
            warnings.append(f"line {io_row['line']}: no size cell after the machine name (cut from the table)")
        ln = io_row["line"]
        if size and io.get("csv2txt"):
            _csv2txt_size(info, size.split(":"), ln)
        elif size:
            parts = size.split(":")
            info["size_bytes"] = _size_bytes(parts[0], ln)
            info["chunk_bytes"] = _chunk_bytes(parts[1], ln) if len(parts) > 1 and parts[1] else DEFAULT_CHUNK
            if len(parts) > 5:
                raise _err(
                    f"size cell {size!r} has {len(parts)} parts", ln, "size[:chunk[:concurrency[:seeks[:seekers]]]]"
                )
            if fam == "1.98+":
                info["concurrency"] = _int(parts[2], ln, "concurrency") if len(parts) > 2 and parts[2] else 1
                info["seeks"] = _int(parts[3], ln, "seek count") if len(parts) > 3 and parts[3] else DEFAULT_SEEKS
                info["seekers"] = _int(parts[4], ln, "seeker count") if len(parts) > 4 and parts[4] else None
        if fam == "1.9x":
            info["concurrency"] = int(io["concurrency"]) if io["concurrency"] else None
        name = " ".join(toks) or None
        if name:
            room = _FIELD - 1 - len(size) if size else None  # the name keeps 18 - len(size) characters
            names.append((name, room))
        for k, test in enumerate(IO_TESTS):
            _text_result(run, test, io_row, k, csv2txt=bool(io.get("csv2txt")))
    if f_row:
        toks = f_row["prefix"].split()
        named = None
        if len(toks) > 1 and not f_row["name"] and _FILES.match(toks[-1]):
            # bon_csv2txt of several machines prints each machine's name before its files cell
            named, toks = " ".join(toks[:-1]), toks[-1:]
        if len(toks) != 1:
            raise _err(f"bad files cell {f_row['prefix'].strip()!r}", f_row["line"], "files[:max[:min]][/dirs]")
        info.update(_files_spec(toks[0], f_row["line"]))
        if f_row["name"]:
            names.append((f_row["name"], _FIELD))
        elif named:
            names.append((named, _FIELD - 1 - len(toks[0])))
        for k, test in enumerate(FILE_TESTS):
            _text_result(run, test, f_row, k, csv2txt=bool(io and io.get("csv2txt")))  # its rates are the CSV's
    # the machine name: the longest printed form; the others must be its prefixes
    if names:
        best = max(names, key=lambda nr: len(nr[0]))[0]
        for nm, _ in names:
            if not best.startswith(nm):
                warnings.append(f"line {first}: machine names {nm!r} and {best!r} of one run differ")
        info["machine"] = best
        whole = any(len(nm) == len(best) and room is not None and len(nm) < room for nm, room in names)
        info["machine_truncated"] = False if whole else None
    else:
        info["machine_truncated"] = None
    return run


def _csv2txt_size(info: dict, parts: list[str], ln: int) -> None:
    """bon_csv2txt's size cell: the CSV's size, chunk, seeks and seekers joined with ':' (2.00a's 50-field CSV)."""
    if len(parts) > 4:
        raise _err(
            f"bon_csv2txt size cell {':'.join(parts)!r} has {len(parts)} parts", ln, "size[:chunk[:seeks[:seekers]]]"
        )
    parts += [""] * (4 - len(parts))
    info["size_bytes"] = _size_bytes(parts[0], ln)
    info["chunk_bytes"] = _chunk_bytes(parts[1], ln) if parts[1] else None
    info["seeks"] = _int(parts[2], ln, "seek count") if parts[2] else None
    info["seekers"] = _int(parts[3], ln, "seeker count") if parts[3] else None


_CSV2TXT_ZERO = re.compile(r"^0+k?$")


def _text_result(run: _Run, test: str, row: dict, k: int, csv2txt: bool = False) -> None:
    cell = row["cells"][k]
    lat = row["lat"][k] if row["lat"] else ""
    if cell is None and not lat:
        return
    res = _Res(
        test,
        value_text=cell[0] if cell else "",
        cpu_text=cell[1] if cell else "",
        latency_text=lat,
        value_from="text",
        lines=(row["line"], row["lat_line"] or row["line"]),
    )
    zero = csv2txt and _CSV2TXT_ZERO.match(res.value_text)  # bon_csv2txt prints +++++ (and 0) as '0k'
    if zero:
        res.value_text, res.too_fast = "", bool(_PLUS.match(res.cpu_text))
    _fill_value(res, row["line"])
    if zero:
        res.value_text = zero.group()
    if (
        test in FILE_TESTS
        and run.family == "1.98+"
        and res.value is not None
        and "." not in res.value_text
        and not csv2txt
    ):
        res.suspect = True
    run.results[test] = res


# --- joining text and CSV --------------------------------------------------------------


def _tolerance(res: _Res) -> float:
    """Half a unit of the text cell's last printed digit, in base units (+1 KiB: the CSV truncates)."""
    t = res.value_text
    factor = 1.0
    if res.test in RATE_TESTS:
        factor = {"k": KiB, "m": MiB, "g": GiB}.get(t[-1:].lower(), KiB)
        t = t.rstrip("kmgKMG")
    decimals = len(t.partition(".")[2])
    return 0.5 * 10.0**-decimals * factor + (KiB if res.test in RATE_TESTS else 0.0) + 1e-9


def _pair(text_runs: list[_Run], csv_runs: list[_Run], warnings: list[str]) -> None:
    if not text_runs or not csv_runs:
        return
    if len(text_runs) == len(csv_runs):
        pairs = list(zip(text_runs, csv_runs))
    else:
        warnings.append(
            f"{len(text_runs)} text result rows but {len(csv_runs)} CSV lines: each text row joined "
            "with the next CSV line before the following table"
        )
        pairs, free = [], list(csv_runs)
        for k, t in enumerate(text_runs):
            limit = text_runs[k + 1].line_start if k + 1 < len(text_runs) else math.inf
            c = next((c for c in free if t.line_end < c.line_start < limit), None)
            if c:
                free.remove(c)
                pairs.append((t, c))
    for t, c in pairs:
        t.pair, c.pair = c, t
        _check_pair(t, c, warnings)


def _check_pair(t: _Run, c: _Run, warnings: list[str]) -> None:
    where = f"text line {t.line_start} / CSV line {c.line_start}"
    cname, tname = c.info["machine"], t.info["machine"]
    if tname and cname is not None:
        if not cname.startswith(tname):
            warnings.append(f"{where}: machine {tname!r} in the text, {cname!r} in the CSV")
        else:
            t.info["machine_truncated"] = len(cname) > len(tname)
    for key in (
        "size_bytes",
        "num_files_printed",
        "max_size_bytes",
        "min_size_bytes",
        "num_dirs",
        "link_mode",
        "concurrency",
        "seeks",
    ):
        a, b = t.info.get(key), c.info.get(key)
        if a is not None and b is not None and a != b:
            warnings.append(f"{where}: {key} {a} in the text, {b} in the CSV")
    if t.info["version"] and c.info["version"] and t.info["version"] != c.info["version"]:
        warnings.append(f"{where}: version {t.info['version']} in the text, {c.info['version']} in the CSV")
    # what only one side knows
    if c.info["chunk_bytes"] is None and c.info["size_bytes"]:
        c.info["chunk_bytes"] = t.info["chunk_bytes"]
    if c.info["version"] is None:
        c.info["version"] = t.info["version"]
    replaced = []
    for test in IO_TESTS + FILE_TESTS:
        a, b = t.results.get(test), c.results.get(test)
        if a is None or b is None:
            if a is not None or b is not None:
                warnings.append(f"{where}: {test} is in the {'text' if a else 'CSV'} only")
            continue
        if a.too_fast != b.too_fast:
            warnings.append(f"{where}: {test} {a.value_text!r} in the text, {b.value_text!r} in the CSV")
            continue
        if a.value is not None and b.value is not None:
            if test in FILE_TESTS and t.family == "1.98+":
                a.value, a.value_from, a.suspect = b.value, "csv", False
                replaced.append(test)
            elif abs(a.value - b.value) > _tolerance(a):
                warnings.append(
                    f"{where}: {test} {a.value_text!r} in the text, {b.value_text!r} in the CSV "
                    "(beyond the text's printed precision)"
                )
        if a.cpu != b.cpu:
            warnings.append(f"{where}: {test} CPU {a.cpu_text!r} in the text, {b.cpu_text!r} in the CSV")
        if a.latency_ns != b.latency_ns:
            warnings.append(f"{where}: {test} latency {a.latency_text!r} in the text, {b.latency_text!r} in the CSV")
    if replaced:
        warnings.append(
            f"{where}: text rates of {', '.join(replaced)} replaced by the CSV's "
            "(bonnie++ 1.98+ prints them wrongly in the table)"
        )


# --- entry points ----------------------------------------------------------------------


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
    csv_runs = []
    for k, ln in enumerate(lines, 1):
        s = ln.strip()
        if s.count(",") < 2 or _CSV_HEADER.match(s):
            continue
        fields = s.split(",")
        width = _csv_width(fields)
        if width:
            csv_runs.append(_parse_csv(fields, width, k, warnings))
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
    for r in runs:
        info = r.info
        if r.source == "csv":
            info["machine_truncated"] = False
        out.add(
            "bonnie_runs",
            {
                "run_index": r.index,
                "source": r.source,
                **{
                    k: info.get(k)
                    for k in (
                        "machine",
                        "machine_truncated",
                        "version",
                        "format_version",
                        "size_bytes",
                        "chunk_bytes",
                        "concurrency",
                        "seeks",
                        "seekers",
                        "num_files_printed",
                        "num_files",
                        "max_size_bytes",
                        "min_size_bytes",
                        "link_mode",
                        "num_dirs",
                        "seed",
                    )
                },
                "paired_run_index": r.pair.index if r.pair else None,
                "preferred": r.source == "csv" or r.pair is None,
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
    return out
