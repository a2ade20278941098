"""reliability-36 (input): damaged values the reliability-35 fio group refusals did not think of, and a zdb -bb row
after the table's Total damaged in its first cell.

A fio job's "runtime" of 0.4 (or 1e308) ms was a parser-bug (ZeroDivisionError, OverflowError in the group the
parser recomputes) where fio prints whole milliseconds; a "groupid" of {} or [] was a parser-bug (unhashable) and
one of 1.5 was stored as group 1; a direction's "io_bytes" of 1.5 was summed into its group as 1. Now each is a
ParseError naming the line, on the fast and the plain path (and terse). A zdb -bb row after the Total row whose first
cell is damaged (`x.64K ... Metadata Total`) ended the table: the row lost with exit 0 and no warning; now refused.
"""

from __future__ import annotations

import pytest

JSON = "fio/3.1/fioplot-mx200-sweep/mx200-randread-16-1.json"


@pytest.mark.parametrize(
    ("rel", "old", "new", "match"),
    [
        (JSON, '"runtime" : 60001,', '"runtime" : 0.4,', "runtime is 0.4"),
        (JSON, '"runtime" : 60001,', '"runtime" : 1e308,', "runtime is inf"),
        (JSON, '"runtime" : 60001,', '"runtime" : -1,', "runtime is -1"),
        (JSON, '"io_bytes" : 11654758400,', '"io_bytes" : 1.5,', "io_bytes is 1.5"),
        (JSON, '"groupid" : 0,', '"groupid" : {},', "'groupid' is not a number"),
        (JSON, '"groupid" : 0,', '"groupid" : [],', "'groupid' is not a number"),
        (JSON, '"groupid" : 0,', '"groupid" : 1.5,', "'groupid' is not a whole number"),
        ("fio/3.33/terse_v3.txt", ";9538;52;", ";9538;0.4;", "runtime is 0.4"),
    ],
)
def test_a_fio_runtime_or_groupid_no_fio_prints_is_refused(rel, old, new, match):
    """Before: `storagelab parse` said 'parser-bug: ZeroDivisionError' (or OverflowError, TypeError), or stored the
    groupid 1.5 as 1 with exit 0."""
    from conftest import mutated

    from storagelab.errors import ParseError
    from storagelab.parsers import parse_bytes, parse_text

    data = mutated(rel, old, new)
    for parse in (lambda: parse_bytes(data, rel), lambda: parse_text(data.decode(), rel)):
        with pytest.raises(ParseError, match=match):
            parse()


def test_a_zdb_bb_row_after_the_total_damaged_in_its_first_cell_is_refused():
    """Before: exit 0, no warning, zdb_block_types 49 -> 48 (the `Metadata Total` row lost)."""
    from conftest import mutated

    from storagelab.errors import ParseError
    from storagelab.parsers import parse_bytes

    rel = "zdb/2.3/bbb.txt"
    data = mutated(rel, " 3.64K\t 135M\t3.99M", " x.64K\t 135M\t3.99M")
    with pytest.raises(ParseError, match="unreadable row in the zdb -bb table") as e:
        parse_bytes(data, rel)
    assert e.value.line == 222


@pytest.mark.parametrize("rel", ["fio/3.33/terse_v3_json.txt", "fio/3.33/seq_write_group.txt"])
def test_a_json_document_passed_over_beside_text_output_is_said(rel):
    """r35's low, measured: '"fio version"' damaged in a file of JSON beside text (or terse) output: the JSON passed
    over and the text's rounded values stored, exit 0, no warning (364 of 664 tries; a clat min of 661 ns stored as
    0, a slat min of 3996 ns as 3000). Now a warning names the JSON's line."""
    from conftest import mutated

    from storagelab.parsers import parse_bytes

    parsed, _ = parse_bytes(mutated(rel, '"fio version"', '"fio versiQn"'), rel)
    assert any('without "fio version" is not read' in w for w in parsed.warnings)
