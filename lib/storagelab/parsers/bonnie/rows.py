"""The rows of the bonnie++ text table: a result row's value/CPU cells (by column, or by token when the
spacing was squeezed) and its Latency row."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cells import _LAT_CELL, _OPS_CELL, _PLUS, _RATE_CELL, _err

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


@dataclass
class TextRow:
    """A result row of the text table (and the Latency row under it, when there is one)."""

    line: int  # 1-based
    prefix: str  # the name/size (IO row) or files (file row) field
    cells: list[tuple[str, str] | None]  # (value, CPU) per test, None where blank
    name: str | None  # a machine name printed on a header line above the row
    lat: list[str] | None = None  # the Latency row's 6 cells
    lat_line: int | None = None


@dataclass
class Block:
    """The IO block or the file block of a text table: its header's facts and its result rows."""

    version: str | None
    rows: list[TextRow]
    start: int  # 0-based index of its first header line
    concurrency: str | None = None  # IO block: the 1.9x Concurrency cell
    new: bool = False  # IO block: the 'Name:Size etc' header of 1.98+
    csv2txt: bool = False  # IO block: a table rebuilt by bon_csv2txt


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
        pairs = list(zip(toks[head::2], toks[head + 1 :: 2], strict=True)) if head in (1, 2) else []
        if head in (1, 2) and all(_is_cell(v, c) for v, c in pairs):
            return line[: line.index(toks[head - 1]) + len(toks[head - 1])], pairs, "ok"
    return prefix, cells, status


def _is_cell(value: str, cpu: str) -> bool:
    return bool((_RATE_CELL.match(value) or _PLUS.match(value)) and (_OPS_CELL.match(cpu) or _PLUS.match(cpu)))


def _row_cells_by_position(line: str, ntests: int):
    """``_row_cells`` by column. bonnie++ (C printf) and bon_csv2txt (perl sprintf without ``use utf8``) pad fields
    to a width in bytes, not characters: a machine name with non-ASCII letters ('vm ext4 ünï', 13 bytes for 11
    characters) ends its field two characters early. The columns are therefore counted on the line's UTF-8 bytes."""
    raw = line.encode("utf-8").decode("latin-1")  # one character per byte: str offsets are byte offsets
    prefix, cells, status = _by_byte_position(raw, ntests)
    return prefix.encode("latin-1").decode("utf-8", errors="replace"), cells, status


def _by_byte_position(line: str, ntests: int):
    end = _FIELD
    if len(line) > end and line[end] != " ":  # the name/size or files field overflowed
        nxt = line.find(" ", end)
        end = len(line) if nxt < 0 else nxt
    prefix, tail = line[:end], line[end:]
    cells: list[tuple[str, str] | None] = []
    pos = 0
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
