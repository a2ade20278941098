"""analysis.device_tables: 08's device tables formatted at the edge (h7-audit gap 4), on real zpool outputs."""

import polars as pl
from test_analysis_device_iostat import PUB, build

from storagelab.analysis import device_tables


def test_device_tables_are_formatted_for_reading(tmp_path):
    """h7-audit gap 4: the tables showed raw floats (2683186.2800000003, 0.22730195236388878, nan). On real outputs:
    -r of 2.4.4 (nicenum counts), -w -p of 0.8 (exact), -l of ZoL 0.7 run with -y, -lq of 2.0."""
    res = build(
        tmp_path,
        {
            "r.txt": (PUB / "iostat-r-2.4.4-rebuild-NVME1.txt").read_text(),
            "w.txt": (PUB / "iostat-wvHp-0.8-backup-rpool.txt").read_text(),
            "l.txt": (PUB / "iostat-lv-0.7-data3-cut.txt").read_text(),
            "lq.txt": (PUB / "iostat-lq-2.0-intervals-pool2.txt").read_text(),
        },
    )
    req = device_tables.req_size(res["req_size"])
    assert req.columns[5:] == ["I/Os counted", "aggregated by ZFS", "of at most 4 KiB", "median request bucket"]
    rows = {r[4]: r[5:] for r in req.rows()}
    assert rows["async_read"] == ("about 2,680,000", "22.7 %", "14.0 %", "16 KiB")  # sum 2,683,186.28 of 1.68M, ...
    assert rows["rebuild"] == ("0", "\u2014", "\u2014", "\u2014")  # 0 of 0: no share, no median (was nan)
    assert rows["scrub"] == ("28", "64.3 %", "46.4 %", "8 KiB")  # every count below 1024: printed whole
    lat = device_tables.latency(res["latency"]).filter(pl.col("pool/vdev") == "backup")
    assert lat.filter(pl.col("wait") == "total_wait", pl.col("op") == "write").row(0)[7:] == (
        "2,173,279",
        "33.6 ms",
        "2.15 s",
        "\u2014",
    )
    assert lat.filter(pl.col("wait") == "trim").row(0)[3:8] == ("\u2014", 0, "trim", "\u2014", "43,439")
    waits = device_tables.waits(res["waits_table"]).filter(pl.col("file") == "l.txt")
    assert waits.rows()[:5] == [
        ("l.txt", "data3", "\u2014", 0, "\u2014", "total_wait", "6 ms", "not printed ('-')", "\u2014"),
        ("l.txt", "data3", "\u2014", 0, "\u2014", "disk_wait", "4 ms", "not printed ('-')", "\u2014"),
        ("l.txt", "data3", "\u2014", 0, "\u2014", "syncq_wait", "133 ns", "not printed ('-')", "\u2014"),
        ("l.txt", "data3", "\u2014", 0, "\u2014", "asyncq_wait", "1 ms", "not printed ('-')", "\u2014"),
        ("l.txt", "data3", "\u2014", 0, "\u2014", "scrub", "\u2014", "\u2014", "not printed ('-')"),
    ]
    assert waits["vdev"].unique(maintain_order=True).to_list() == [
        "\u2014",
        "raidz2",
        "sdv",
        "sdah",
        "sdw",
        "sdai",
        "sdaf",
    ]
    q = device_tables.queues(res["queues_table"])
    assert q.filter(pl.col("queue") == "trimq_write", pl.col("report") == 0).row(0)[6:] == ("7", "2")
    lines = res["lines"]
    assert (
        "NVME1 (sample 0, async_read): about 2,680,000 I/Os counted (zpool printed the counts to 3 significant "
        "digits; `-p` prints them whole), 22.7 % of them aggregated by ZFS, 14.0 % of at most 4 KiB, median request in the "
        "16 KiB bucket" in lines
    )
    assert "NVME1 (sample 0, scrub): 28 I/Os counted, 64.3 % of them aggregated by ZFS" in "\n".join(lines)
    assert any(line.startswith("backup (report 0), total_wait write: 2,173,279 I/Os counted;") for line in lines)
    # -y skips the since-import report: report 0 of l.txt is the first 10 s interval, not an average since import
    assert any(line.startswith("data3 (pool row, report 0 of l.txt, no time stamp): average waits") for line in lines)
    assert any("report 0 of lq.txt, no time stamp: averages since the pool was imported" in line for line in lines)
    assert "\u2014" not in "".join(lines) and "nan" not in " ".join(lines)
