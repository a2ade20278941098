"""zpool iostat -r request-size histograms (issue 25): three published outputs of three column sets (OpenZFS 0.8+
with trim, 2.4.4 with rebuild, and one whose author cut the last columns); tests/fixtures/zpool/published/iostat-r.md."""

import pytest
from conftest import FIXTURES

from storagelab.parsers import ParseError, decode, detect, zpool

PUB = FIXTURES / "zpool" / "published"


def parse(name):
    text = decode((PUB / name).read_bytes())
    mod, fmt = detect(text)
    assert (mod.TOOL, fmt) == ("zpool", "zpool-iostat-r")
    return zpool.parse(text, fmt)


def cells(p):
    return {(r["bucket_bytes"], r["io_class"], r["kind"]): r for r in p.rows("zpool_iostat_req_size")}


def test_rebuild_columns_openzfs_2_4_4():
    p = parse("iostat-r-2.4.4-rebuild-NVME1.txt")
    rows = p.rows("zpool_iostat_req_size")
    assert len(rows) == 16 * 7 * 2 and p.warnings == []
    assert sorted({r["bucket_bytes"] for r in rows}) == [2**j for j in range(9, 25)]  # 512 .. 16M
    assert {r["io_class"] for r in rows} == set(zpool.zpool_hist.CLASSES)
    c = cells(p)
    assert (c[512, "sync_read", "ind"]["count"], c[512, "sync_read", "ind"]["exact"]) == (1.68 * 2**20, False)
    assert (c[8192, "sync_read", "ind"]["count"], c[8192, "sync_read", "agg"]["count"]) == (13.5 * 2**20, 846)
    assert c[32768, "trim", "ind"]["count"] == 1.15 * 2**20 and c[32768, "scrub", "agg"]["count"] == 6
    assert (c[16 * 2**20, "trim", "ind"]["count"], c[16 * 2**20, "trim", "ind"]["bucket_label"]) == (32, "16M")
    assert sum(c[b, "rebuild", k]["count"] for b in [2**j for j in range(9, 25)] for k in ("ind", "agg")) == 0
    assert {(r["name"], r["sample"], r["command"]) for r in rows} == {("NVME1", 0, None)}
    assert (c[4096, "async_write", "agg"]["line_start"], c[4096, "async_write", "agg"]["count"]) == (7, 1.67 * 2**20)


def test_trim_columns_and_exact_counts():
    c = cells(parse("iostat-r-trim-data.txt"))
    assert len(c) == 16 * 6 * 2
    assert (c[4096, "sync_read", "ind"]["count"], c[4096, "async_write", "ind"]["count"]) == (108 * 1024, 1.98 * 2**20)
    assert (c[4096, "scrub", "ind"]["count"], c[4096, "scrub", "ind"]["exact"]) == (116, True)
    assert (c[16384, "sync_read", "ind"]["count"], c[65536, "sync_write", "agg"]["count"]) == (453, 48.4 * 1024)
    assert c[131072, "async_write", "agg"]["count"] == 94.7 * 1024 and c[131072, "async_read", "agg"]["count"] == 54
    assert {k for (b, k, _) in c if b == 512} == {
        "sync_read",
        "sync_write",
        "async_read",
        "async_write",
        "scrub",
        "trim",
    }


def test_columns_cut_by_the_author_and_the_prompt_line():
    p = parse("iostat-r-columns-cut-zfspool.txt")
    c = cells(p)
    assert len(c) == 16 * 4 * 2
    assert {r["command"] for r in p.rows("zpool_iostat_req_size")} == {"zpool iostat -r zfspool"}
    assert (c[8192, "sync_read", "ind"]["count"], c[8192, "async_write", "agg"]["count"]) == (
        54.1 * 2**20,
        9.74 * 2**20,
    )
    assert (c[1 << 20, "sync_write", "agg"]["count"], c[1 << 20, "async_write", "agg"]["count"]) == (
        1.28 * 2**20,
        2.05 * 1024,
    )
    assert c[32768, "sync_write", "agg"]["count"] == 5


def test_interval_blocks_are_numbered_per_name():
    """Interval output repeats the block: two published blocks of different pools, then the first again (text put
    together here, each block verbatim): samples 0, 0, 1."""
    a = (PUB / "iostat-r-trim-data.txt").read_text()
    b = (PUB / "iostat-r-2.4.4-rebuild-NVME1.txt").read_text()
    p = zpool.parse(a + b + "1700000000\n" + a)
    rows = p.rows("zpool_iostat_req_size")
    assert [(n, s) for n, s in dict.fromkeys((r["name"], r["sample"]) for r in rows)] == [
        ("data", 0),
        ("NVME1", 0),
        ("data", 1),
    ]
    assert {r["timestamp"] for r in rows if r["sample"] == 1} == {"1700000000"}


@pytest.mark.parametrize(
    "cut, kind, line",
    [
        (lambda t: t[: t.index("\n8K ") + 1] + "8K          2.56K  1.34K\n", "truncated", 8),
        (lambda t: t.replace("2K    ", "3K    ", 1), "invalid", 6),
        (lambda t: t.replace("trim\n", "discard\n", 1), "invalid", 1),
    ],
)
def test_bad_histograms_name_the_line(cut, kind, line):
    text = cut((PUB / "iostat-r-trim-data.txt").read_text())
    with pytest.raises(ParseError) as e:
        zpool.parse(text, "zpool-iostat-r")
    assert (e.value.kind, e.value.line) == (kind, line)
