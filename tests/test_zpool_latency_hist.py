"""zpool iostat -w latency histograms (issue 25): two complete published -wvHp outputs (OpenZFS 0.8, Linux) and the
beginnings of three human ones (0.7, 0.7-rc with -p, 0.8 with trim) whose stored text is cut; sources in
tests/fixtures/zpool/published/iostat-w.md."""

import pytest
from conftest import FIXTURES

from storagelab.parsers import ParseError, decode, detect, zpool
from storagelab.parsers.zpool_latency_hist import nicetime

PUB = FIXTURES / "zpool" / "published"


def text_of(name):
    return decode((PUB / name).read_bytes())


def parse(name):
    text = text_of(name)
    mod, fmt = detect(text)
    assert (mod.TOOL, fmt) == ("zpool", "zpool-iostat-w")
    return zpool.parse(text, fmt)


def cells(p, block=0):
    rows = p.rows("zpool_iostat_latency_hist")
    return {(r["bucket"], r["wait"], r["op"]): r for r in rows if r["block"] == block}


def test_bucket_labels_are_zfs_nicetime_of_the_upper_bound():
    labels = [nicetime(2 ** (j + 1) - 1) for j in range(37)]
    assert labels[:10] == ["1ns", "3ns", "7ns", "15ns", "31ns", "63ns", "127ns", "255ns", "511ns", "1us"]
    assert labels[14:20] == ["32us", "65us", "131us", "262us", "524us", "1ms"]
    assert labels[-5:] == ["8s", "17s", "34s", "68s", "137s"]


def test_scripted_wvhp_concat_mirrors():
    p = parse("iostat-wvHp-0.8-concat-mirrors.txt")
    rows = p.rows("zpool_iostat_latency_hist")
    assert len(rows) == 8 * 37 * 10 and p.warnings == []
    blocks = sorted({(r["block"], r["name"]) for r in rows})
    assert [n for _, n in blocks][:2] == ["tank", "mirror"] and blocks[4] == (4, "mirror")
    assert blocks[7] == (7, "ata-Samsung_SSD_860_EVO_1TB_X599X555X3X9X7X")
    assert {r["sample"] for r in rows} == {0} and {r["exact"] for r in rows} == {True}
    assert {r["wait"] for r in rows} == {"total_wait", "disk_wait", "syncq_wait", "asyncq_wait", "scrub", "trim"}
    tank = cells(p)
    assert tank[7, "syncq_wait", "write"]["count"] == 3213 and tank[7, "asyncq_wait", "write"]["count"] == 15
    assert (tank[7, "syncq_wait", "write"]["bucket_max_ns"], tank[7, "syncq_wait", "write"]["bucket_label"]) == (
        255,
        "255",
    )
    assert tank[18, "disk_wait", "write"]["count"] == 40701351 and tank[18, "disk_wait", "write"]["line_start"] == 21
    assert tank[34, "total_wait", "read"]["count"] == 1183 and tank[34, "scrub", None]["count"] == 1183
    assert tank[36, "total_wait", "read"]["bucket_max_ns"] == 137438953471
    assert sum(r["count"] for r in tank.values() if r["wait"] == "trim") == 0
    ssd = cells(p, 7)
    assert ssd[22, "total_wait", "write"]["count"] == 2670376


def test_scripted_wvhp_three_pools():
    p = parse("iostat-wvHp-0.8-backup-rpool.txt")
    rows = p.rows("zpool_iostat_latency_hist")
    names = [n for _, n in sorted({(r["block"], r["name"]) for r in rows})]
    assert names[0::2] == ["backup", "bpool", "rpool"] and len(rows) == 6 * 37 * 10
    rpool = cells(p, 4)
    assert rpool[34, "total_wait", "write"]["count"] == 18081 and rpool[33, "syncq_wait", "write"]["count"] == 1229
    assert rpool[24, "trim", None]["count"] == 48251


def test_human_0_7_nicenum_and_old_group_names():
    p = parse("iostat-w-0.7-data1-cut.txt")
    c = cells(p)
    assert (c[9, "asyncq_wait", "read"]["count"], c[9, "asyncq_wait", "read"]["exact"]) == (548, True)
    assert (c[10, "asyncq_wait", "read"]["count"], c[10, "asyncq_wait", "read"]["exact"]) == (6.11 * 1024, False)
    assert c[10, "asyncq_wait", "read"]["bucket_max_ns"] == 2047 and c[10, "asyncq_wait", "read"]["line_start"] == 16
    assert {r["wait"] for r in c.values()} == {"total_wait", "disk_wait", "syncq_wait", "asyncq_wait", "scrub"}
    assert {r["command"] for r in c.values()} == {"zpool iostat -y data1 -w 5"}
    assert max(r["bucket"] for r in c.values()) == 10 and len(c) == 11 * 9
    assert p.warnings == [
        "line 17: the last row is cut short ('4us'); left out",
        "line 16: the histogram of 'data1' stops at '2us' (the paste is cut): buckets above it are missing",
    ]


def test_human_p_exact_counts_six_wide():
    c = cells(parse("iostat-wp-0.7rc-mypool-cut.txt"))
    got = [c[9, w, op]["count"] for w, op in (("syncq_wait", "read"), ("syncq_wait", "write"), ("asyncq_wait", "read"))]
    assert got == [28, 1251, 1276] and c[9, "scrub", None]["count"] == 4518
    assert c[8, "asyncq_wait", "write"]["count"] == 3 and all(r["exact"] for r in c.values())
    assert max(r["bucket"] for r in c.values()) == 11


def test_human_0_8_trim_column():
    c = cells(parse("iostat-w-0.8-trim-slag4-cut.txt"))
    assert c[9, "trim", None]["count"] == 44.9 * 1024 and c[10, "syncq_wait", "read"]["count"] == 7.39 * 2**20
    assert c[12, "asyncq_wait", "write"]["count"] == 3.81 * 2**20 and c[8, "asyncq_wait", "read"]["count"] == 22


def test_a_missing_bucket_mid_file_is_an_error_naming_the_line():
    lines = text_of("iostat-wvHp-0.8-backup-rpool.txt").splitlines(keepends=True)
    del lines[10]  # the backup block loses bucket 8 (511 ns)
    with pytest.raises(ParseError) as e:
        zpool.parse("".join(lines), "zpool-iostat-w")
    assert (e.value.line, e.value.kind) == (11, "invalid") and "out of order" in e.value.message


def test_a_short_block_before_the_next_is_an_error():
    lines = text_of("iostat-wvHp-0.8-backup-rpool.txt").splitlines(keepends=True)
    del lines[30:39]  # backup loses its last nine buckets, the next block follows
    with pytest.raises(ParseError) as e:
        zpool.parse("".join(lines), "zpool-iostat-w")
    assert e.value.line == 30 and "stops at bucket '268435455'" in e.value.message


def test_scripted_rows_of_an_unknown_width_are_refused():
    text = "pool\n" + "".join(f"{2 ** (j + 1) - 1}" + "\t0" * 12 + "\n" for j in range(37))
    with pytest.raises(ParseError) as e:
        zpool.parse(text, "zpool-iostat-w")
    assert (e.value.line, e.value.kind) == (2, "unsupported-version")
