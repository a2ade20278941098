"""reliability-37 (input): damage after a zdb -bb table's Total row that 74ef24a1's rule did not think of.

The row after the Total (2.2+'s `Metadata Total`) was lost with exit 0 and no warning when a tab in it became a
newline (the row split in two lines, one byte changed), when 3 of its 7 cells were damaged (fewer than 5 cells with
a digit: not "row-like"), or when the `number of ganged blocks` line before it was damaged in both its words: any
line that was no row ended the table, and the table had seen its Total. zdb ends the table with a blank line; now
a line after the Total that is neither a row, a ganged line, a histogram line nor blank is refused, naming its line.
"""

from __future__ import annotations

import pytest

BBB = "zdb/2.3/bbb.txt"
ROW = " 3.64K\t 135M\t3.99M\t15.7M\t4.31K\t33.79\t 20.92\tMetadata Total"


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        (ROW, ROW.replace("\t15.7M", "\n15.7M"), 222),  # a tab turned into a newline: the row in two lines
        (ROW, ROW.replace("3.64K", "x.xxK").replace("135M", "xxxM").replace("3.99M", "x.xxM"), 222),
        ("\t number of ganged blocks: 3\n 3.64K", "\t nomber af gXnged blocks: 3\n 3.64K", 221),
    ],
)
def test_damage_after_the_zdb_bb_total_row_is_refused(old, new, line):
    """Before: exit 0, no warning, zdb_block_types 49 -> 48 (the `Metadata Total` row lost), both paths."""
    from conftest import mutated

    from storagelab.errors import ParseError
    from storagelab.parsers import parse_bytes, parse_text

    data = mutated(BBB, old, new)
    for parse in (lambda: parse_bytes(data, BBB), lambda: parse_text(data.decode(), BBB)):
        with pytest.raises(ParseError, match="after the zdb -bb table's Total row") as e:
            parse()
        assert e.value.line == line
