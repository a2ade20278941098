"""Positional rows are checked against their names: a Tuples row of the wrong width is an error naming the
table, never a column silently NULL (or values under the wrong column)."""

from __future__ import annotations

import pytest

from storagelab.parsers.base import Tuples
from storagelab.schema import all_tables
from storagelab.store import arrow, worker

NAMES = ("pool", "vdev", "depth")  # three columns of zpool_list
COLUMNS = [c.name for c in all_tables()["zpool_list"].columns]


def test_a_two_field_row_in_a_three_column_table_is_an_error_naming_the_table():
    rows = Tuples(NAMES, [("tank", None, 0), ("tank", "sda")])
    with pytest.raises(arrow.RowShapeError) as e:
        arrow.columns("zpool_list", [rows], COLUMNS)
    assert str(e.value) == (
        "parser produced a row of 2 fields for zpool_list, whose rows have 3 (pool, vdev, depth): row 2"
    )


def test_a_row_too_wide_is_an_error_too():
    rows = Tuples(NAMES, [("tank", None, 0, "extra")])
    with pytest.raises(arrow.RowShapeError, match=r"row of 4 fields for zpool_list"):
        arrow.columns("zpool_list", [rows], COLUMNS)


def test_rows_of_the_right_width_keep_every_column():
    rows = Tuples(NAMES, [("tank", None, 0), ("tank", "sda", 1)])
    got = arrow.columns("zpool_list", [rows], COLUMNS)
    assert (got["pool"], got["vdev"], got["depth"]) == (["tank", "tank"], [None, "sda"], [0, 1])
    assert got["size_bytes"] == [None, None]  # a column the rows do not name


def test_no_rows_give_empty_columns():
    got = arrow.columns("zpool_list", [Tuples(NAMES, [])], COLUMNS)
    assert got["pool"] == [] and got["depth"] == []


def test_the_file_with_the_short_row_fails_alone():
    errors = []
    good = Tuples(NAMES, [("tank", None, 0), ("tank", "sda", 1)])
    bad = Tuples(NAMES, [("pool2", None, 0), ("pool2", "sdb")])
    built = worker.typed_tables({"zpool_list": [(1, good), (2, bad)]}, lambda seq, err: errors.append((seq, err)))
    assert errors == [
        (
            2,
            {
                "kind": "parser-bug",
                "line": None,
                "expected": None,
                "message": "parser produced a row of 2 fields for zpool_list, whose rows have 3 "
                "(pool, vdev, depth): row 2",
            },
        )
    ]
    table = built["zpool_list"]
    assert table.column("pool").to_pylist() == ["tank", "tank"]
    assert table.column("depth").to_pylist() == [0, 1]
