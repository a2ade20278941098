"""zpool status: published outputs of OpenZFS 2.x, ZFS on Linux 0.6-0.8, TrueNAS SCALE and the Solaris-era layout
of the OpenZFS message pages."""

import pytest
from conftest import FIXTURES

from storagelab.parsers import ParseError, parse_bytes, zpool, zpool_status
from storagelab.units import GiB, KiB, TiB

ZS = FIXTURES / "zpool-status"


def parse(rel):
    path = ZS / rel
    parsed, mod = parse_bytes(path.read_bytes(), str(path))
    assert mod is zpool and parsed.format == "zpool-status"
    return parsed


def pool_and_vdevs(rel):
    parsed = parse(rel)
    (pool,) = parsed.rows("zpool_status_pools")
    return parsed, pool, {v["name"]: v for v in parsed.rows("zpool_status_vdevs")}


def test_degraded_unavail_device_with_checksum_errors():
    p, pool, v = pool_and_vdevs("openzfs-2.x/status-07-unavail.txt")
    assert p.warnings == []
    assert (pool["pool"], pool["state"], pool["see"]) == (
        "mypool", "DEGRADED", "https://openzfs.github.io/openzfs-docs/msg/ZFS-8000-4J",
    )  # fmt: skip
    assert pool["status"].startswith("One or more devices could not be used") and pool["status"].endswith("state.")
    assert (pool["scan_kind"], pool["scan_state"], pool["scan_processed_bytes"], pool["scan_errors"]) == (
        "scrub", "finished", 0, 0,
    )  # fmt: skip
    assert (
        pool["scan_duration_ns"] == (8 * 3600 + 37 * 60 + 48) * 1e9 and pool["scan_time"] == "Sun Nov  3 15:24:53 2024"
    )
    assert (pool["data_errors"], pool["errors_text"]) == (0, "No known data errors")
    gone = v["12345678901234567890"]
    assert (gone["state"], gone["depth"], gone["read_errors"], gone["write_errors"], gone["cksum_errors"]) == (
        "UNAVAIL", 2, 0, 0, 100_980,
    )  # fmt: skip
    assert gone["note"] == "was /dev/disk/by-id/ata-ST8000DM004-xxxxxx_redacted-part1" and gone["leaf"] is True
    assert (v["mirror-0"]["depth"], v["mirror-0"]["state"], v["mirror-0"]["leaf"]) == (1, "DEGRADED", False)
    assert (v["mypool"]["depth"], v["mypool"]["class"], v["mypool"]["line_start"]) == (0, "normal", 12)


def test_report_cut_before_errors_keeps_rows_with_a_warning():
    p, pool, v = pool_and_vdevs("openzfs-2.x/status-01-corrupted.txt")
    assert p.warnings == ["line 18: pool dummy: the report ends before its errors: line (cut?); its vdev rows are kept"]
    assert pool["data_errors"] is None and len(v) == 7
    assert (v["loop3"]["state"], v["loop3"]["note"]) == ("UNAVAIL", "corrupted data")


def test_scrub_in_progress_22():
    _, pool, _ = pool_and_vdevs("openzfs-2.x/status-04-scrub-progress.txt")
    assert (pool["scan_state"], pool["scan_time"]) == ("in_progress", "Sun Feb 11 11:54:20 2024")
    assert pool["scanned_bytes"] == 704 * GiB and pool["scan_total_bytes"] == pytest.approx(1.66 * TiB)
    assert pool["scan_rate_bytes_per_s"] == pytest.approx(5.67 * GiB)
    assert (pool["issued_bytes"], pool["issue_rate_bytes_per_s"], pool["done_pct"], pool["to_go_ns"]) == (
        0,
        None,
        0,
        None,
    )


def test_scrub_canceled_and_never_scanned():
    _, pool, _ = pool_and_vdevs("openzfs-2.x/status-09-scrub-cancel.txt")
    assert (pool["scan_kind"], pool["scan_state"], pool["scan_time"]) == (
        "scrub",
        "canceled",
        "Sun Jan 18 12:18:11 2026",
    )
    _, pool, v = pool_and_vdevs("openzfs-2.x/status-10-new-pool.txt")
    assert (pool["scan_kind"], pool["scan_state"], pool["state"], len(v)) == (None, None, "ONLINE", 4)


def test_data_errors_count_and_old_duration():
    _, pool, _ = pool_and_vdevs("zol-0.8/status-02-online-data-corruption.txt")
    assert pool["scan_duration_ns"] == (14 * 3600 + 7 * 60) * 1e9 and pool["scan_errors"] == 1
    assert pool["data_errors"] == 1
    assert pool["errors_text"] == "List of errors unavailable: permission denied | 1 data errors, use '-v' for a list"


def test_two_pools_and_write_error():
    p = parse("openzfs-2.x/status-two-pools-scrubbed.txt")
    pools = p.rows("zpool_status_pools")
    assert [(r["report_no"], r["pool"], r["scan_time"], r["command"], r["line_start"]) for r in pools] == [
        (1, "btr", "Thu Jan  4 17:37:18 2024", "zpool status", 2),
        (2, "tank", "Thu Jan  4 17:37:36 2024", "zpool status", 15),
    ]
    assert [v["name"] for v in p.rows("zpool_status_vdevs") if v["pool"] == "tank"] == [
        "tank",
        "mirror-0",
        "sdc1",
        "sdd1",
    ]
    _, pool, v = pool_and_vdevs("truenas-scale/status-write-error.txt")
    assert (v["sda"]["read_errors"], v["sda"]["write_errors"], v["sda"]["cksum_errors"]) == (0, 1, 0)
    assert pool["scan_duration_ns"] == (7 * 3600 + 12 * 60 + 57) * 1e9 and pool["command"] == "zpool status tank"


def test_dedup_summary_per_entry_before_23():
    _, pool, _ = pool_and_vdevs("zol-0.7/status-D.txt")
    assert (pool["ddt_entries"], pool["ddt_disk_bytes"], pool["ddt_core_bytes"], pool["ddt_sizes"]) == (
        2873, 390, 302, "per_entry",
    )  # fmt: skip
    _, pool, _ = pool_and_vdevs("zol-0.6/status-D.txt")
    assert (pool["ddt_entries"], pool["ddt_disk_bytes"], pool["ddt_core_bytes"], pool["command"]) == (
        3_255_693, 311, 179, "zpool status -D",
    )  # fmt: skip


def test_solaris_layout_resilver_and_permanent_errors():
    _, pool, v = pool_and_vdevs("docs-solaris/status-x-resilver-in-progress.txt")
    assert (pool["scan_kind"], pool["scan_state"], pool["done_pct"], pool["to_go_ns"]) == (
        "resilver",
        "in_progress",
        0.14,
        0,
    )
    assert (v["replacing"]["depth"], v["sda"]["depth"], v["sda"]["cksum_errors"]) == (2, 3, 3)
    assert v["sdc"]["note"] == "58.5K resilvered" and v["sdb"]["depth"] == 2
    p, pool, v = pool_and_vdevs("docs-solaris/status-xv-permanent-errors.txt")
    assert [(f["path"], f["line_start"]) for f in p.rows("zpool_status_error_files")] == [("/export/example/foo", 19)]
    assert pool["data_errors"] == 1 and v["test"]["cksum_errors"] == 2 and pool["command"] == "zpool status -xv"


def test_log_class_lines():
    _, pool, v = pool_and_vdevs("docs-solaris/status-x-faulted-log.txt")
    assert (v["logs"]["class"], v["logs"]["state"], v["logs"]["note"]) == ("log", "FAULTED", "bad intent log")
    assert (v["c5t3d0"]["class"], v["c5t3d0"]["note"], v["c3t2d0"]["class"]) == ("log", "cannot open", "normal")
    p, pool, v = pool_and_vdevs("docs-solaris/status-logs-after-clear.txt")
    assert pool["command"] == "zpool status test" and pool["line_start"] == 4 and p.warnings == []
    assert [(n, r["class"], r["depth"]) for n, r in v.items()] == [
        ("test", "normal", 0), ("c3t2d0", "normal", 1), ("logs", "log", 0), ("c5t3d0", "log", 1),
    ]  # fmt: skip


def test_progress_lines_of_07_and_ddt_histogram_rows():
    """Lines of real outputs: ZoL 0.7's scan progress (issue 8715) and a 2.x -D histogram (PR 10169)."""
    rep = zpool_status._Report(1, "storage", 1, None)
    zpool_status._scan_first(rep, "resilver in progress since Mon May  6 18:06:10 2019")
    zpool_status._scan_progress(rep, "85.5G scanned out of 91.4T at 48.6M/s, 547h25m to go")
    zpool_status._scan_progress(rep, "6.79G resilvered, 0.09% done")
    r = rep.row
    assert (r["scanned_bytes"], r["scan_total_bytes"], r["scan_rate_bytes_per_s"]) == pytest.approx(
        (85.5 * GiB, 91.4 * TiB, 48.6 * 1024**2)
    )
    assert (r["to_go_ns"], r["scan_processed_bytes"], r["done_pct"]) == (
        (547 * 3600 + 25 * 60) * 1e9,
        pytest.approx(6.79 * GiB),
        0.09,
    )
    assert zpool_status._ddt_row(rep, "   16M        1    512B    512B    512B    18.8M   9.42G   9.42G   9.42G", 7)
    assert zpool_status._ddt_row(rep, " Total     259K    130M    130M    130M    37.6M   18.8G   18.8G   18.8G", 8)
    row, total = rep.ddt
    assert (row["refcnt_bucket"], row["alloc_blocks"], row["alloc_dsize_bytes"], row["ref_blocks"]) == (
        16 * 1024**2, 1, 512, pytest.approx(18.8 * 1024**2),
    )  # fmt: skip
    assert (total["is_total"], total["refcnt_bucket"], total["alloc_blocks"], total["exact"]) == (
        True,
        None,
        259 * KiB,
        False,
    )
    zpool_status._dedup(rep, "dedup: DDT entries 265611, size 82.9M on disk, 51.0M in core, 51.0M cached (100.00%)", 3)
    assert (r["ddt_entries"], r["ddt_sizes"], r["ddt_disk_bytes"]) == (265_611, "total", pytest.approx(82.9 * 1024**2))


def test_refusals_name_the_line():
    text = "  pool: tank\n state: ONLINE\nconfig:\n\n\tNAME STATE READ WRITE CKSUM\n\ttank ONLINE 0 0 x\n\nerrors: No known data errors\n"
    with pytest.raises(ParseError) as e:
        zpool.parse(text)
    assert e.value.line == 6
    with pytest.raises(ParseError) as e:
        zpool.parse("  pool: tank\n state: ONLINE\n  scan: scrub did something odd\n")
    assert e.value.line == 3 and e.value.kind == "truncated"
    with pytest.raises(ParseError) as e:
        zpool.parse("  pool: tank\n state: ONLINE\n\n dedup: DDT entries many\n")
    assert e.value.line == 4


def test_vdev_rows_with_rounded_counts_and_spares():
    """Rows of a real draid pool (GitHub openzfs/zfs issue 12090, OpenZFS 2.1): a 1.88K CKSUM count, spares."""
    rep = zpool_status._Report(1, "pool-oss0", 1, None)
    rep.base = 8
    for k, line in enumerate(
        [
            "        pool-oss0                    DEGRADED     0     0     0",
            "          draid2:11d:15c:2s-0        DEGRADED     0     0     0",
            "            /root/test/files/file1   DEGRADED     0     0 1.88K  too many errors",
            "            /root/test/files/file2   ONLINE       0     0     0",
            "        spares",
            "          draid2-0-0                 AVAIL",
        ],
        10,
    ):
        zpool_status._vdev_row(rep, line, k)
    pool, draid, f1, f2, spare = rep.vdevs
    assert (draid["name"], draid["depth"], draid["leaf"]) == ("draid2:11d:15c:2s-0", 1, False)
    assert (f1["cksum_errors"], f1["exact"], f1["note"], f1["line_start"]) == (
        pytest.approx(1.88 * 1024),
        False,
        "too many errors",
        12,
    )
    assert (spare["class"], spare["state"], spare["read_errors"], spare["depth"], spare["exact"]) == (
        "spare",
        "AVAIL",
        None,
        1,
        True,
    )
    assert f2["class"] == "normal" and f2["leaf"] is True


def test_freebsd_truenas_core_13_two_pools_with_gptid_leaf():
    """A FreeBSD `zpool status` (TrueNAS CORE 13.0-U5.3): GEOM `gptid/<uuid>` and `ada0p2` device names, no scan."""
    p = parse("truenas-core/status-13.0-U5.3-two-pools.txt")
    assert p.warnings == []
    pools = p.rows("zpool_status_pools")
    assert [
        (r["report_no"], r["pool"], r["state"], r["scan_kind"], r["data_errors"], r["line_start"]) for r in pools
    ] == [
        (1, "boot-pool", "ONLINE", None, 0, 2),
        (2, "data", "ONLINE", None, 0, 12),
    ]
    assert {r["command"] for r in pools} == {"zpool status"}
    vdevs = [(v["pool"], v["name"], v["depth"], v["leaf"], v["line_start"]) for v in p.rows("zpool_status_vdevs")]
    assert vdevs == [
        ("boot-pool", "boot-pool", 0, False, 7),
        ("boot-pool", "ada0p2", 1, True, 8),
        ("data", "data", 0, False, 17),
        ("data", "gptid/48061457-88a9-11ee-99a1-08002767d85d", 1, True, 18),
    ]
    assert all(
        (v["read_errors"], v["write_errors"], v["cksum_errors"], v["exact"]) == (0, 0, 0, True)
        for v in p.rows("zpool_status_vdevs")
    )
