"""Rows to Arrow columns of the tables' SQL types: the one shape in which rows travel from a parser to
DuckDB (a worker builds them, the writer inserts them with one statement per table)."""

from __future__ import annotations

from operator import itemgetter

import pyarrow as pa

from ..parsers.base import Table, Tuples

ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
    "TIMESTAMP": pa.timestamp("us"),
}
# what a value the column's type cannot hold raises (an integer past 64 bits, a string in a number column)
UNFIT = (OverflowError, pa.ArrowException, TypeError, ValueError)
_INT_BITS = {"BIGINT": 63, "INTEGER": 31, "DOUBLE": 63}  # DOUBLE: an integer no int64 holds is refused, not rounded


def schema_of(tab: Table, names: list[str] | None = None) -> pa.Schema:
    """The Arrow schema of ``tab`` (of its columns in ``names`` only, in the table's order)."""
    return pa.schema([(c.name, ARROW_TYPES[c.type]) for c in tab.columns if names is None or c.name in names])


def array(values: list, sql_type: str) -> pa.Array:
    typ = ARROW_TYPES[sql_type]
    if sql_type in ("BIGINT", "INTEGER", "DOUBLE"):
        try:  # exact ints (and ints or floats for DOUBLE) convert as they are
            return pa.array(values, type=typ)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            if sql_type == "DOUBLE":  # ints past 2^53 round to the nearest double; past 64 bits they are refused
                values = [None if v is None else float(_fits_int64(v)) for v in values]
            else:
                values = [None if v is None else int(v) for v in values]
    return pa.array(values, type=typ)


def _fits_int64(v):
    """v, or OverflowError for an integer past 64 bits (a DOUBLE would keep only its first 16 digits)."""
    if type(v) is int and v.bit_length() > 63:
        raise OverflowError(f"{v} does not fit 64 bits")
    return v


def table(tab: Table, cols: dict[str, list]) -> pa.Table:
    """The columns of ``tab`` present in ``cols`` as an Arrow table of the SQL types."""
    present = [c for c in tab.columns if c.name in cols]
    return pa.Table.from_arrays([array(cols[c.name], c.type) for c in present], schema=schema_of(tab, list(cols)))


def columns(table_name: str, row_sets: list, names: list[str]) -> dict[str, list]:
    """Every column of ``names`` but file_id (None where a row has none) from several row sets (each a
    list of dicts or a Tuples), rows kept in order: each run of sets of one shape is transposed in one
    C-level pass. KeyError(sorted unknown names) when rows hold a column the table does not declare."""
    wanted = [c for c in names if c != "file_id"]
    out: dict[str, list] = {c: [] for c in wanted}
    runs: list[tuple[tuple | None, list]] = []  # (names of Tuples, or None for dicts; [row sets])
    for rows in row_sets:
        shape = rows.names if isinstance(rows, Tuples) else None
        if runs and runs[-1][0] == shape:
            runs[-1][1].append(rows)
        else:
            runs.append((shape, [rows]))
    for shape, group in runs:
        data: list = []
        for rows in group:
            data.extend(rows.data if shape is not None else rows)
        for c, values in _transpose(table_name, shape, data, wanted).items():
            out[c].extend(values)
    return out


class RowShapeError(Exception):
    """A parser bug: a row of a Tuples table with more or fewer fields than the table's names (a positional
    row that would put values under the wrong columns, or leave a column NULL)."""


_CHECKED_SHAPES: set[tuple] = set()  # (table, Tuples names) whose names were checked against the table


def _transpose(table_name: str, shape: tuple | None, data: list, wanted: list[str]) -> dict:
    """Columns (every one of ``wanted``) of tuples in the order ``shape``, or of dicts (shape None)."""
    n = len(data)
    if shape is not None:
        if (table_name, shape) not in _CHECKED_SHAPES:
            bad = set(shape) - set(wanted)
            if bad:
                raise KeyError(sorted(bad))
            _CHECKED_SHAPES.add((table_name, shape))
        try:  # the strict zips fail on a row of another width than the others, or than the names
            got = dict(zip(shape, zip(*data, strict=True), strict=True)) if n else {}
        except ValueError:
            width = len(shape)
            short = next(i for i, row in enumerate(data) if len(row) != width)
            raise RowShapeError(
                f"parser produced a row of {len(data[short])} fields for {table_name}, whose rows have {width} "
                f"({', '.join(shape)}): row {short + 1}"
            ) from None
        return {c: got[c] if c in got else [None] * n for c in wanted}
    k = len(wanted)
    if k >= 2 and all(len(r) == k for r in data):
        try:  # every row has exactly every column (the usual case): one C-level pass per row
            return dict(zip(wanted, zip(*map(itemgetter(*wanted), data), strict=True), strict=True))
        except KeyError:
            pass
    bad = set().union(*(r.keys() for r in data)) - set(wanted)
    if bad:
        raise KeyError(sorted(bad))
    return {c: [r.get(c) for r in data] for c in wanted}


def unfit_error(tab: Table, table_name: str, rows, e: BaseException) -> dict:
    """The error of a file one of whose values its column cannot hold, with the row's line."""
    records = [dict(zip(rows.names, r, strict=True)) for r in rows.data] if isinstance(rows, Tuples) else rows
    types = {c.name: c.type for c in tab.columns}
    for r in records:
        for name, v in r.items():
            if isinstance(v, int) and not isinstance(v, bool):
                bits = _INT_BITS.get(types.get(name))
                too_big = bool(bits) and v.bit_length() > bits
                if too_big:
                    digits = str(v) if len(str(v)) <= 30 else f"{str(v)[:12]}... ({len(str(v))} digits)"
                    return dict(
                        kind="invalid",
                        line=r.get("line_start"),
                        message=f"{table_name}.{name}: {digits} is out of range",
                        expected=(
                            "an integer of at most 64 bits (stored as a DOUBLE, a longer one would be rounded)"
                            if types.get(name) == "DOUBLE"
                            else f"a number that fits a {types.get(name)}"
                        ),
                    )
    return dict(kind="parser-bug", line=None, expected=None, message=f"{table_name}: {type(e).__name__}: {e}")
