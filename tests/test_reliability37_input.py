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


def test_a_figure_draws_series_whose_long_names_its_colour_scale_names():
    """ea276464 cut the data texts over 300 characters for vl-convert but not the colour scale's domain that
    chartkit.top_categories builds from the whole names (08_fio's depth chart: workload | direction | setup):
    the cut rows matched no domain value and the static figure (the report page's picture, the thumbnail) drew
    their lines and points with no colour (gone: 60 of 60 marks of a hostile build's iops-latency-vs-depth), the
    legend still listing them, exit 0. Every cut row's name must be in the cut domain (vl-convert's drawing of it:
    docs/reliability-37-scripts/input-cutdomain.py.txt)."""
    import altair as alt
    import polars as pl

    from storagelab.chartkit import top_categories
    from storagelab.spectexts import short_texts

    a, b = "w" * 310 + " | read | setup A", "w" * 310 + " | read | setup B"
    df = pl.DataFrame({"series": [b, b, a, a], "x": [1, 2, 1, 2], "y": [1, 2, 5, 6]})
    df, colours = top_categories(df, "series", "other series")
    chart = alt.Chart(df).mark_line().encode(x="x:Q", y="y:Q", color=alt.Color("series_colour:N", scale=colours))
    spec = short_texts(chart.to_dict())
    names = {r["series_colour"] for rows in spec["datasets"].values() for r in rows}
    assert len(names) == 2 and all(len(n) == 300 for n in names)  # cut, and still two
    assert names == set(spec["encoding"]["color"]["scale"]["domain"])


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        ("zpool-status/docs-solaris/status-x-resilver-in-progress.txt", "0h0m to go", "0h" + "9" * 400 + "m to go", 7),
        ("partitions/gpart-constructed-gpt-p.txt", "  40        1024  ada1p1", "  40  " + "9" * 400 + "  ada1p1", 2),
    ],
)
def test_a_400_digit_number_is_a_clear_error_not_a_parser_bug(rel, old, new, line):
    """Parser fuzz seed 573 ('huge'): 'parser-bug: OverflowError: int too large to convert to float' (zpool status'
    duration, gpart's human size check), `parse` and `ingest` alike."""
    from conftest import mutated

    from storagelab.errors import ParseError
    from storagelab.store.worker import parse_as_ingest

    with pytest.raises(ParseError) as e:
        parse_as_ingest(mutated(rel, old, new), rel)  # `parse`'s and `ingest`'s verdict
    assert e.value.line == line


def test_a_gpart_listing_cut_at_a_line_end_is_said():
    """A gpart listing cut after its first row (a log copied while written): 0 partitions and 2,008 free sectors
    stored for a disk of one partition and 3,680 free, exit 0, no warning (cuts seed 1). gpart's rows cover the
    range its '=>' header names; now the gap is said."""
    from storagelab.parsers import parse_bytes

    text = "=>        40  7814037088  ada3  GPT  (3.6T)\n          40        2008        - free -  (1.0M)\n"
    parsed, _ = parse_bytes(text.encode(), "gpart-ada3.txt")
    assert any("lists 2008 of its 7814037088 sectors" in w for w in parsed.warnings)
    whole = (
        text + "        2048  7814033408     1  freebsd-zfs  (3.6T)\n  7814035456        1672        - free -  (836K)\n"
    )
    parsed, _ = parse_bytes(whole.encode(), "gpart-ada3.txt")
    assert not any("rows are missing" in w for w in parsed.warnings)


def test_a_zdb_vdev_tree_cut_at_a_line_end_is_said():
    """Cuts seed 1: `zdb -C` cut inside its vdev tree (a line end after the root's `id: 0`) stored the pool with
    no top-level vdev (or the first of many), exit 0, no warning; the pool's `vdev_children` says how many."""
    from conftest import FIXTURES

    from storagelab.parsers import parse_bytes

    data = (FIXTURES / "zdb-config/2.3/C-ashift12.txt").read_bytes()
    parsed, _ = parse_bytes(data[:304], "C-ashift12.txt")
    assert any("lists 0 of its 2 top-level vdevs" in w for w in parsed.warnings)
    parsed, _ = parse_bytes(data, "C-ashift12.txt")
    assert not any("top-level vdevs" in w for w in parsed.warnings)


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ('"total_ios" : 2845400,', '"total_ios" : 1.5,', "'total_ios' is not a whole number: 1.5"),
        ('"total_ios" : 2845400,', '"total_ios" : 0.5,', "'total_ios' is not a whole number: 0.5"),
        ('"ctx" : 475464,', '"ctx" : 0.5,', "'ctx' is not a whole number: 0.5"),
    ],
)
def test_a_fio_count_that_is_no_whole_number_is_refused(old, new, match):
    """valdamage seed 3: `"total_ios": 1.5` was stored as 1 (0.5 as 0; ctx, majf, minf, error, short_ios,
    drop_ios and a latency's N the same), exit 0: a value taken in part, as r36's groupid 1.5 was; fio prints each
    with %llu or %d. Both paths (the fast one declines a fraction to the plain one)."""
    from conftest import mutated

    from storagelab.errors import ParseError
    from storagelab.parsers import parse_bytes, parse_text

    rel = "fio/3.1/fioplot-mx200-sweep/mx200-randread-16-1.json"
    data = mutated(rel, old, new)
    for parse in (lambda: parse_bytes(data, rel), lambda: parse_text(data.decode(), rel)):
        with pytest.raises(ParseError, match=match):
            parse()
