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


# --- -q queue depths and -l wait times, with intervals ----------------------------------------------------------------


def iostat(name):
    text = decode((PUB / name).read_bytes())
    return zpool.parse(text, detect(text)[1])


def test_queues_with_intervals_zfs_0_7():
    p = iostat("iostat-q-0.7-intervals-data1.txt")
    assert [(r["sample"], r["read_ops_per_s"], r["read_bytes_per_s"]) for r in p.rows("zpool_iostat")] == [
        (0, 8.17 * 1024, 835 * 2**20),
        (1, 8.18 * 1024, 837 * 2**20),
        (2, 7.87 * 1024, 804 * 2**20),
        (3, 7.88 * 1024, 806 * 2**20),
        (4, 7.94 * 1024, 812 * 2**20),
    ]
    q = p.rows("zpool_iostat_queues")
    assert len(q) == 5 * 5 and {r["queue"] for r in q} == {
        "syncq_read",
        "syncq_write",
        "asyncq_read",
        "asyncq_write",
        "scrubq_read",
    }
    active = [(r["sample"], r["active"]) for r in q if r["queue"] == "asyncq_read"]
    assert active == [(0, 39), (1, 41), (2, 35), (3, 36), (4, 39)]
    assert all(r["pending"] == 0 for r in q) and all(r["active"] == 0 for r in q if r["queue"] != "asyncq_read")
    assert {(r["pool"], r["vdev"], r["command"]) for r in q} == {("data1", None, "zpool iostat -y -q data1 10 5")}


def test_queues_zfs_0_8_2_with_trim():
    q = iostat("iostat-q-0.8.2-intervals-fs01.txt").rows("zpool_iostat_queues")
    assert len(q) == 3 * 6
    assert [(r["sample"], r["queue"], r["pending"], r["active"]) for r in q if r["pending"] or r["active"]] == [
        (0, "asyncq_write", 112, 10),
        (1, "syncq_read", 0, 12),
    ]
    assert [r["line_start"] for r in q if r["queue"] == "trimq_write"] == [4, 6, 8]


def test_wait_times_and_queues_together():
    p = iostat("iostat-lq-2.0-intervals-pool2.txt")
    lat = {(r["sample"], r["wait"], r["op"]): r["latency_ns"] for r in p.rows("zpool_iostat_latency")}
    assert len(lat) == 2 * 10
    assert (lat[0, "total_wait", "read"], lat[0, "total_wait", "write"]) == (252_000, 800_000)
    assert (lat[0, "disk_wait", "read"], lat[0, "syncq_wait", "write"], lat[0, "asyncq_wait", "write"]) == (
        242_000,
        1_000,
        732_000,
    )
    assert (lat[0, "scrub", None], lat[0, "trim", None]) == (452_000, 2_000_000)
    assert (lat[1, "total_wait", "write"], lat[1, "scrub", None], lat[1, "trim", None]) == (3_000_000, None, 1_000_000)
    q = {(r["sample"], r["queue"]): (r["pending"], r["active"]) for r in p.rows("zpool_iostat_queues")}
    assert q[0, "trimq_write"] == (7, 2) and q[1, "syncq_read"] == (0, 3) and len(q) == 12


def waits(p, sample, vdev=None):
    rows = p.rows("zpool_iostat_latency")
    return {(r["wait"], r["op"]): r["latency_ns"] for r in rows if r["sample"] == sample and r["vdev"] == vdev}


def test_wait_times_zol_0_7_with_a_rule_before_the_header():
    """Real `zpool iostat -y data3 -L -lv 10` of ZoL 0.7 (openzfs/zfs#7694, cut after sdaf; published/iostat-l.md).
    The paste starts with a rule line before the header, as 0.7 printed it: it used to be refused."""
    p = iostat("iostat-lv-0.7-data3-cut.txt")
    assert p.warnings == []
    rows = p.rows("zpool_iostat")
    assert [(r["vdev"], r["role"], r["line_start"]) for r in rows] == [
        (None, "pool", 6),
        ("raidz2", "vdev", 7),
        ("sdv", "disk", 8),
        ("sdah", "disk", 9),
        ("sdw", "disk", 10),
        ("sdai", "disk", 11),
        ("sdaf", "disk", 12),
    ]
    assert (rows[0]["read_ops_per_s"], rows[0]["read_bytes_per_s"]) == (13.2 * 1024, 1.32 * 2**30)
    assert (rows[4]["read_ops_per_s"], rows[2]["read_ops_per_s"], rows[2]["write_bytes_per_s"]) == (
        1.32 * 1024,
        1012,
        0,
    )
    assert {r["command"] for r in rows} == {"zpool iostat -y data3 -L -lv 10"}
    assert waits(p, 0) == {
        ("total_wait", "read"): 6_000_000,
        ("total_wait", "write"): None,
        ("disk_wait", "read"): 4_000_000,
        ("disk_wait", "write"): None,
        ("syncq_wait", "read"): 133,
        ("syncq_wait", "write"): None,
        ("asyncq_wait", "read"): 1_000_000,
        ("asyncq_wait", "write"): None,
        ("scrub", None): None,
    }  # 0.7: no trim column
    assert waits(p, 0, "sdah")["syncq_wait", "read"] == 105 and waits(p, 0, "sdw")["total_wait", "read"] == 7_000_000
    assert len(p.rows("zpool_iostat_latency")) == 7 * 9


def test_wait_times_openzfs_2_with_rebuild_column_five_reports():
    """Real `zpool iostat -vl 1` of OpenZFS 2.x with the rebuild wait column (Ubuntu 24.04), 5 reports of one NVMe."""
    p = iostat("iostat-vl-2.x-rebuild-nvme-intervals.txt")
    assert p.warnings == []
    rows = p.rows("zpool_iostat")
    assert [(r["sample"], r["role"]) for r in rows] == [(s, k) for s in range(5) for k in ("pool", "vdev")]
    assert rows[1]["vdev"] == "nvme-WD_BLACK_SN850X_4000GB_xxxxxxxxxxx"
    assert [(r["read_ops_per_s"], r["write_ops_per_s"], r["write_bytes_per_s"]) for r in rows[::2]] == [
        (41, 16, 155 * 1024),
        (0, 0, 0),
        (0, 107, 979 * 1024),
        (3, 0, 0),
        (0, 0, 0),
    ]
    assert [r["read_bytes_per_s"] for r in rows[::2]] == [4.61 * 2**20, 91.9 * 1024, 104 * 1024, 363 * 1024, 104 * 1024]
    assert waits(p, 0) == {
        ("total_wait", "read"): 200_000,
        ("total_wait", "write"): 98_000,
        ("disk_wait", "read"): 193_000,
        ("disk_wait", "write"): 36_000,
        ("syncq_wait", "read"): 1_000,
        ("syncq_wait", "write"): 1_000,
        ("asyncq_wait", "read"): 138_000,
        ("asyncq_wait", "write"): 64_000,
        ("scrub", None): 516_000,
        ("trim", None): None,
        ("rebuild", None): None,
    }
    assert waits(p, 2)["total_wait", "write"] == 86_000 and waits(p, 2)["asyncq_wait", "read"] is None
    assert waits(p, 3)["asyncq_wait", "read"] == 1_000 and waits(p, 4) == waits(p, 4, rows[1]["vdev"])
    assert len(p.rows("zpool_iostat_latency")) == 10 * 11
