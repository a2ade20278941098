"""reliability-33 (input): a number of a log is stored as printed, or the file is refused (or warned about) with its
line; never a part of a number, and never a line dropped without a word.

Each case is a real fixture with the one change that docs/reliability-33-scripts/input-numforms.py.txt (numbers in
other forms) or input-trunc.py.txt (every fixture cut at every line and inside numbers) found stored wrong with exit
0 and no warning, or raising a traceback out of a parser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import mutated as _mutated

from storagelab.errors import ParseError
from storagelab.parsers import parse_bytes

FIX = Path(__file__).parent / "fixtures"
SYSCTL = "arcstats/freebsd-14/sysctl-kstat.zfs.misc.arcstats.txt"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("10, 5, 1, 4096\n20, 6, 1, 40", 2),  # fio 2.x: block size 4096 cut to 40
        ("10, 5, 0, 4096, 0x2004\n20, 5, 0, 4096, 0x20", 2),  # log_prio=1: priority 0x2004 cut to 0x20
        ("0, 1, 0, 4096, 65", 1),  # one line, offset 65536 cut to 65
    ],
)
def test_a_fio_log_whose_last_line_has_no_line_end_is_refused_as_cut(text, line):
    """Before: the last line's last column, cut short, was stored (4096 -> 40) with exit 0 and no warning."""
    with pytest.raises(ParseError) as e:
        parse_bytes(text.encode(), "x_bw.1.log")
    assert e.value.kind == "truncated" and e.value.line == line


def test_a_fio_log_ending_in_blanks_or_a_lone_cr_is_still_whole():
    for text in ("10, 5, 1, 4096\n20, 6, 1, 4096\n  ", "10, 5, 1, 4096\r\n20, 6, 1, 4096\r"):
        parsed, _ = parse_bytes(text.encode(), "x_bw.1.log")
        assert [r["block_size_bytes"] for r in parsed.rows("fio_log_samples")] == [4096, 4096]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("iohits: 2530", "iohits: 2'530"),  # a Swiss thousands separator
        ("iohits: 2530", "iohits: 2\u202f530"),  # a narrow no-break space (French)
        ("iohits: 2530", "iohits: 2530x"),
        ("iohits: 2530", "iohits: 0x9e2"),
    ],
)
def test_a_sysctl_arcstats_line_with_an_unreadable_value_is_refused_not_dropped(old, new):
    """Before: the counter's line did not match and was skipped: the counter lost with exit 0 and no warning."""
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(SYSCTL, old, new), "x.txt")
    assert e.value.line == 147 and "not an arcstats line" in str(e.value)


@pytest.mark.parametrize("new", ["1 000,4", "1\u2009000.4", "0.4 x"])
def test_an_arcstat_row_with_one_cell_too_many_is_refused_not_skipped(new):
    """Before: under a header without a time column, a row of another width was skipped: 19 values of 38 lost."""
    rel = "arcstats/linux-2.2-arcstat/arcstat-f-600s.txt"
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(rel, "  816   0.4  ", f"  816   {new}  "), "x.txt")
    assert e.value.line == 4


@pytest.mark.parametrize(
    ("rel", "cut", "line"),
    [
        (SYSCTL, "kstat.zfs.misc.arcstats.hits: 14", 148),  # hits 1473806
        ("pv/1.6.20/pv-n-b.txt", "4194304", 4),  # 41943040
        (
            "zfs-sendrecv/published/openzfs-13262-send-receive-2.1.3.txt",
            "send from @1 to POOL/fs1@2 estimated size is 7",
            1,
        ),
    ],
)
def test_a_log_cut_inside_its_last_number_is_named_in_a_warning(rel, cut, line):
    """Before: a log copied while written, its last number cut short, was stored with exit 0 and no word."""
    text = (FIX / rel).read_text()
    lines = text.split("\n")
    assert lines[line - 1].startswith(cut) and lines[line - 1] != cut
    data = "\n".join([*lines[: line - 1], cut]).encode()
    parsed, _ = parse_bytes(data, "x.txt")
    assert any(w.startswith(f"line {line}: the file ends without a line end") for w in parsed.warnings)
    whole, _ = parse_bytes(text.encode(), "x.txt")
    assert not any("ends without a line end" in w for w in whole.warnings)


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        (
            "../../data/raw/homelab-mergerfs/fio-mdadm-raid1-ext4-bitmap-internal.txt",
            "util=54.05%",
            "util=54.05.5.1%",
            6,
        ),
        ("partitions/fdisk-constructed-2.20-sec63.txt", "*          63", "*         -63", 10),
    ],
)
def test_a_corrupt_number_is_a_parse_error_not_a_traceback(rel, old, new, line):
    """Before: ValueError out of the parser (float('54.05.5.1'); sectors.alignment of a negative start)."""
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(rel, old, new), "x.txt")
    assert e.value.line == line


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        ("zfs-fuse/0.7.0/bonnie/bon_csv2txt.out", "974m ", "974MB ", 10),  # a unit in another spelling
        ("zfs-fuse/0.7.0/bonnie/bon_csv2txt.out", "8              0k +++", "8              0KB +++", 16),  # blanks
        ("../../data/raw/freebsd-bonnie-dedup/bonnie-compare-sec63-vs-aligned.txt", " 78.9m", " +78.9m", 6),
    ],
)
def test_a_bonnie_result_row_with_an_unreadable_cell_is_refused_not_dropped(rel, old, new, line):
    """Before: the row ended its table: it and the rows under it were lost (74 results -> 54) with exit 0."""
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(rel, old, new), "x.txt")
    assert e.value.line == line and "unreadable result row" in str(e.value)


@pytest.mark.parametrize(
    ("rel", "old", "new"),
    [
        ("fio/2.2.10/rbd-write-wrapped-diskstats.txt", "bs=256K-256K/256K", "bs=256K-2.56E+02K/256K"),
        ("fio/3.33/normal_only.txt", "(R) 8192B-8192B,", "(R) 8192B-8.192E+03B,"),
    ],
)
def test_a_fio_block_size_range_is_read_whole_or_named_not_understood(rel, old, new):
    """Before: ranges were searched for, so `256K-2.56E+02K` gave the range 256K-2.56E and a block size of
    2,882,303,761,517,117 bytes, exit 0, no warning."""
    whole, _ = parse_bytes((FIX / rel).read_bytes(), "x.txt")
    parsed, _ = parse_bytes(_mutated(rel, old, new), "x.txt")
    assert any("not understood" in w for w in parsed.warnings)
    assert [r["block_size_bytes"] for r in parsed.rows("fio_jobs")] == [
        r["block_size_bytes"] for r in whole.rows("fio_jobs")
    ]


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        ("../../data/raw/freebsd-bonnie-dedup/zdb-b-archiv.txt", "vdev: 1664068", "vdev: 1664068x", 18),
        ("../../data/raw/freebsd-bonnie-dedup/zdb-b-archiv.txt", "vdev: 1664068", "vdev: 1.664068e6", 18),
        ("zdb/2.1/DD.txt", "374 entries", "3.74e2 entries", 1),
        ("zdb/2.1/DD.txt", "374 entries", "374'000 entries", 1),
        ("zdb/2.3/bcc-stderr.txt", "0x45aad400, size 2048", "0x45aad400, size 2.048e3", 64),  # an event lost
        ("zdb/2.1/DD.txt", "compress = 3.18", "compress = 3,18", 17),
        ("zdb/2.3/DD.txt", "rootobj=668", "rootobj=6.68e2", 9),  # ddt_version, flags were NULL
        ("zdb/2.3/DD.txt", "txg=2235", "txg=2.235e3", 16),  # the DDT log lost
    ],
)
def test_a_zdb_line_of_a_known_kind_with_an_unreadable_number_is_refused(rel, old, new, line):
    """Before: the line matched no handler and was ignored as other zdb output: `dittoed_same_vdev` stayed at its
    default 0 (zdb prints the line only when non-zero), a DDT object (5 -> 4 rows) was lost; exit 0, no warning."""
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(rel, old, new), "x.txt")
    assert e.value.line == line and "unreadable zdb line" in str(e.value)


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        ("partitions/util-linux-2.23.2/sfdisk-d.txt", "2099200", "2,099,200", 5),  # read as start=2
        ("partitions/fdisk-constructed-2.20-sec63.txt", "208845   976773167", "208 845   976773167", 11),
        ("partitions/linux-tools/gdisk-l-mbr63.txt", "   32768  ", "   32 768  ", 30),  # Start 32, End 768
    ],
)
def test_a_partition_number_with_a_thousands_separator_is_refused_not_cut(rel, old, new, line):
    """Before: sfdisk -d `start=  2,099,200,` stored start 2 ('099' and '200' taken for flags); fdisk -l `208 845`
    shifted the columns (Start 208, End 845, Id '488282161+'); both exit 0, no warning."""
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(rel, old, new), "x.txt")
    assert e.value.line == line


@pytest.mark.parametrize(
    ("rel", "old", "new", "warning"),
    [
        ("fio/text-variants/fio-2.0-randrw.txt", "iodepth=4", "iodepth=4e0", "line 2: job preamble not read"),
        ("fio/3.33/text-bits.txt", "/ 16MiB", "/ 1.6e1MiB", "line 4: 'Laying out IO file' line not read"),
    ],
)
def test_a_fio_preamble_or_layout_line_not_read_is_named(rel, old, new, warning):
    """Before: the line matched no shape and was passed over: rw, bs, ioengine, iodepth (or the layout) NULL, no
    warning."""
    parsed, _ = parse_bytes(_mutated(rel, old, new), "x.txt")
    assert any(w.startswith(warning) for w in parsed.warnings)


@pytest.mark.parametrize("new", ["(groupid=0, jobs=8e0)", "(groupid=0x, jobs=8)", "(groupid=0, jobs=8 000)"])
def test_a_damaged_fio_job_header_is_refused_not_passed_over(new):
    """Before: a header whose numbers were not digits was no header: the job's rows (1 of 5 jobs, 17 percentiles,
    21 IO depths ...) were lost, exit 0, no warning."""
    rel = "fio/newuser-h6n-compare/b/do-5bucks-ubuntu/fio_randread.log"
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(rel, "(groupid=0, jobs=8)", new), "x.txt")
    assert e.value.line == 14 and "malformed job header" in str(e.value)


def test_a_zdb_bb_table_row_with_a_damaged_cell_is_refused_not_dropped():
    """Before: the row ended the table (rows 19 -> 18: 'Metadata Total' lost), exit 0, no warning."""
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated("zdb/2.3/bb-stderr.txt", " 3.64K\t 135M", " 3.64e0K\t 135M"), "x.txt")
    assert "unreadable row in the zdb -bb table" in str(e.value)


def test_a_label_s_link_or_url_is_text_in_the_findings_and_the_report_s_own_excerpt_links_stay():
    """reliability-33 input, Low 1: the hostile project's labels, hosts and study name held `[MDL](http://...)`,
    bare URLs and `<http://...>`, and its pages had 477 live links to http://evil.example/ (the http(s) rule kept
    them; the renderer links bare URLs by itself). A finding's only links are now its numbers' excerpt pages."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    from storagelab.analysis.result import Result
    from storagelab.analysis.selection import Selection
    from storagelab.present import escape_html, findings

    labels = [
        "[MDL](http://evil.example/X)",
        "<http://evil.example/AX>",
        "https://evil.example/B and HTTP://evil.example/C",
        "www.evil.example/D",
        "[MS](evil.example)",
        "[R][r]\n\n[r]: https://evil.example/R",
        "[M](mailto:a@evil.example)",
        "[E](&#104;ttps://evil.example/E)",
        "[P](raw/../../x.html)",
        "`https://evil.example/code` [C](https://evil.example/C2)",
    ]
    res = Result(Selection(study="x"))
    res.missing += [f"the pool {h} has no ashift" for h in labels]
    page = markdown2html_mistune(findings(res).data)
    assert re.findall(r"<(?:a|img)\b[^>]*>", page) == []
    assert "http://evil.example/X" in page.replace("&#47;", "/")  # shown as text
    ours = '[5.0 MiB/s](raw/a.txt-1-L2-2.html#L2 "a.txt: line 2") and [lines](raw/from-0123456789abcdef.html "x")'
    assert re.findall(r'href="([^"]*)"', markdown2html_mistune(escape_html(ours))) == []  # see reliability-34's
