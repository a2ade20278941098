"""fio normal (human) text parser: real seed logs (fio 3.16), real fio 3.33 runs checked against the JSON
of the same run, and hand-made variants of older/newer layouts (tests/fixtures/fio/text-variants, each
with a .md saying where in docs/formats/log-formats.md its lines come from).

Expected values are the printed numbers converted to base units by hand in the test
(e.g. 1240 MiB/s = 1240 * 2**20 B/s).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from storagelab.errors import ParseError
from storagelab.parsers import fio
from storagelab.parsers.fio.text import block_paths, parse_text

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "data" / "raw" / "homelab-mergerfs"
F333 = ROOT / "tests" / "fixtures" / "fio" / "3.33"
VAR = ROOT / "tests" / "fixtures" / "fio" / "text-variants"
KiB, MiB, GiB = 1024, 1024**2, 1024**3
US, MS = 1_000, 1_000_000

BOTH = sorted(p.name for p in F333.glob("*.txt") if fio.sniff(p.read_bytes().decode()) == "fio-json+normal")
TEXT_ONLY = sorted(p.name for p in F333.glob("*.txt") if fio.sniff(p.read_bytes().decode()) == "fio-normal")


def read(path: Path) -> str:
    return path.read_bytes().decode()  # keeps the \r of live status lines (read_text() would not)


def seed(name: str):
    return parse_text(read(SEEDS / name))


def only(rows, **match):
    found = [r for r in rows if all(r[k] == v for k, v in match.items())]
    assert len(found) == 1, (match, found)
    return found[0]


def pct_map(parsed, job_index=0, direction=None, kind="clat"):
    rows = [
        r
        for r in parsed.rows("fio_percentiles")
        if r["job_index"] == job_index and r["kind"] == kind and (direction is None or r["direction"] == direction)
    ]
    return {r["percentile"]: r["latency_ns"] for r in rows}


def buckets(parsed, job_index=0):
    return [
        (b["bucket_lo_ns"], b["bucket_hi_ns"], b["pct"])
        for b in parsed.rows("fio_latency_buckets")
        if b["job_index"] == job_index
    ]


def expect_error(text: str, kind: str, line: int | None = None) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_text(text)
    assert info.value.kind == kind, str(info.value)
    if line is not None:
        assert info.value.line == line, str(info.value)
    return info.value


# ---- seed logs (fio 3.16, data/raw/homelab-mergerfs) ----------------------------------------------


def test_zfs_mirror_run_job_and_write_section():
    p = seed("fio-zfs-mirror-zfs0.8.4.txt")
    assert p.tool == "fio" and p.format == "fio-normal" and p.tool_version is None and p.warnings == []
    job = only(p.rows("fio_jobs"))
    assert job["jobname"] == "fiotest" and job["groupid"] == 0 and job["jobs"] == 8 and job["error"] == 0
    assert job["pid"] == 17709 and job["report_time"] == "Thu Nov  3 23:58:41 2022"
    assert job["doc_index"] == 0 and job["is_final"] is True and job["job_index"] == 0
    # no preamble line in this file: rw and ioengine are unknown (the IO depths line is not the option); the iodepth is
    # fio's 'latency : target=0, window=0, percentile=100.00%, depth=8' (no target: the depth is the iodepth option)
    assert job["iodepth"] == 8 and job["rw"] is None and job["ioengine"] is None
    assert (job["cpu_usr_pct"], job["cpu_sys_pct"], job["ctx"], job["majf"], job["minf"]) == (0.70, 2.84, 671054, 0, 92)
    assert (job["line_start"], job["line_end"]) == (2, 23)

    w = only(p.rows("fio_results"))
    assert w["direction"] == "write" and w["exact"] is False
    assert w["bw_bytes_per_s"] == 1240 * MiB == 1_300_234_240  # BW=1240MiB/s (1300MB/s): not 1.3e9
    assert w["io_bytes"] == pytest.approx(72.7 * GiB, rel=1e-12)
    assert w["iops"] == 1240 and w["runtime_ns"] == 60017 * MS
    assert (w["total_ios"], w["short_ios"], w["dropped_ios"]) == (74429, 0, 0)
    assert (w["slat_min_ns"], w["slat_max_ns"], w["slat_mean_ns"], w["slat_stdev_ns"]) == (
        82 * US,
        103024 * US,
        6447150.0,
        11814990.0,
    )
    assert (w["clat_min_ns"], w["clat_max_ns"], w["clat_mean_ns"], w["clat_stdev_ns"]) == (
        2 * US,
        548443 * US,
        45148970.0,
        80640790.0,
    )
    assert (w["lat_min_ns"], w["lat_max_ns"], w["lat_mean_ns"], w["lat_stdev_ns"]) == (
        1015 * US,
        617530 * US,
        51596520.0,
        91759090.0,
    )
    assert w["clat_samples"] is None  # text never prints N
    # bw (  MiB/s): min=  111, max= 6468, per=99.93%, avg=1239.24, stdev=193.05, samples=960
    assert (w["bw_min_bytes_per_s"], w["bw_max_bytes_per_s"]) == (111 * MiB, 6468 * MiB)
    assert w["bw_mean_bytes_per_s"] == pytest.approx(1239.24 * MiB) and w["bw_agg_pct"] == 99.93
    assert w["bw_stdev_bytes_per_s"] == pytest.approx(193.05 * MiB) and w["bw_samples"] == 960
    assert (w["iops_min"], w["iops_max"], w["iops_mean"], w["iops_stdev"], w["iops_samples"]) == (
        107,
        6468,
        1238.93,
        193.07,
        960,
    )
    assert (w["line_start"], w["line_end"]) == (3, 14)


def test_zfs_mirror_run_percentiles_buckets_depths_group():
    p = seed("fio-zfs-mirror-zfs0.8.4.txt")
    clat = pct_map(p, direction="write")
    assert len(clat) == 17 and clat[99.0] == 380 * MS == 380_000_000
    assert clat[1.0] == 4 * MS and clat[50.0] == 9 * MS and clat[99.99] == 542 * MS
    assert {r["line_start"] for r in p.rows("fio_percentiles")} == {8, 9, 10, 11, 12}
    assert buckets(p) == [
        (2 * US, 4 * US, 0.01),
        (4 * US, 10 * US, 0.01),
        (750 * US, 1000 * US, 0.01),
        (1 * MS, 2 * MS, 0.24),
        (2 * MS, 4 * MS, 1.84),
        (4 * MS, 10 * MS, 63.16),
        (10 * MS, 20 * MS, 6.46),
        (20 * MS, 50 * MS, 6.25),
        (50 * MS, 100 * MS, 6.65),
        (100 * MS, 250 * MS, 11.16),
        (250 * MS, 500 * MS, 4.17),
        (500 * MS, 750 * MS, 0.05),
    ]
    depths = {(d["kind"], d["bucket"]): d["pct"] for d in p.rows("fio_iodepths")}
    assert len(depths) == 21 and depths[("depth", "8")] == 99.9 and depths[("depth", ">=64")] == 0.0
    assert depths[("submit", "4")] == 100.0 and depths[("complete", "8")] == 0.1
    g = only(p.rows("fio_groups"))
    assert (g["groupid"], g["direction"], g["doc_index"], g["derived"], g["exact"]) == (0, "write", 0, False, False)
    assert g["bw_bytes_per_s"] == g["bw_min_bytes_per_s"] == g["bw_max_bytes_per_s"] == 1240 * MiB
    assert g["io_bytes"] == pytest.approx(72.7 * GiB, rel=1e-12)
    assert g["run_min_ns"] == g["run_max_ns"] == 60017 * MS and (g["line_start"], g["line_end"]) == (26, 26)


def test_mergerfs_hdd_preamble_fills_the_job_options():
    p = seed("fio-mergerfs-hdd.txt")
    assert p.tool_version == "fio-3.16"
    job = only(p.rows("fio_jobs"))
    assert (job["rw"], job["block_size_bytes"], job["ioengine"], job["iodepth"]) == ("write", 1024 * KiB, "libaio", 8)
    w = only(p.rows("fio_results"))
    assert w["bw_bytes_per_s"] == 185 * MiB and w["io_bytes"] == pytest.approx(10.8 * GiB, rel=1e-12)
    assert (w["clat_min_ns"], w["clat_max_ns"]) == (23 * MS, 1335 * MS)  # clat (msec) line
    assert (w["slat_min_ns"], w["slat_max_ns"]) == (19 * US, 728722 * US)  # slat (usec) line
    assert buckets(p)[-1] == (1000 * MS, 2000 * MS, 0.33)


def test_btrfs_raid1_k_suffix_is_a_multiple_of_the_line_unit():
    p = seed("fio-btrfs-raid1.txt")
    w = only(p.rows("fio_results"))
    assert w["slat_max_ns"] == 44_590_000_000  # slat (usec): max=44590k
    assert w["clat_max_ns"] == w["lat_max_ns"] == 44_735_000_000
    clat = pct_map(p, direction="write")  # 7-digit values: 3 entries per line
    assert len(clat) == 17 and clat[99.9] == 17112761 * US and clat[1.0] == 644 * US
    assert {r["line_start"] for r in p.rows("fio_percentiles")} == set(range(11, 17))
    assert buckets(p)[-1] == (2000 * MS, None, 0.15)  # lat (msec) : >=2000=0.15%
    assert buckets(p)[0] == (250 * US, 500 * US, 0.05)


def test_mergerfs_zfs_fractional_k_and_usec_buckets():
    p = seed("fio-mergerfs-zfs-mirror-zfs0.8.4.txt")
    w = only(p.rows("fio_results"))
    assert w["slat_max_ns"] == 1_081_400_000 and w["clat_max_ns"] == 2_673_200_000 and w["clat_min_ns"] == 4 * US
    assert buckets(p)[0] == (4 * US, 10 * US, 0.01) and buckets(p)[-1] == (2000 * MS, None, 0.49)
    assert only(p.rows("fio_groups"))["io_bytes"] == pytest.approx(21.9 * GiB, rel=1e-12)


def test_mdadm_disk_stats_with_md_aggregates():
    p = seed("fio-mdadm-raid1-ext4-bitmap-internal.txt")
    assert p.rows("fio_jobs") == [] and p.warnings == []
    g = only(p.rows("fio_groups"))
    assert g["bw_bytes_per_s"] == 478 * MiB and g["io_bytes"] == pytest.approx(28.1 * GiB, rel=1e-12)
    assert g["run_max_ns"] == 60069 * MS
    disks = {d["disk"]: d for d in p.rows("fio_disk_stats")}
    assert list(disks) == ["md127", "nvme0n1", "sdb"]
    md = disks["md127"]
    assert md["has_slaves"] is True and (md["read_ios"], md["write_ios"]) == (0, 228818)
    assert (md["read_ticks_ns"], md["write_ticks_ns"], md["in_queue_ns"], md["util_pct"]) == (0, 0, 0, 0.0)
    assert (md["aggr_read_ios"], md["aggr_write_ios"], md["aggr_read_merges"], md["aggr_write_merges"]) == (
        0,
        230087,
        0,
        27,
    )
    assert md["aggr_write_ticks_ns"] == 6_898_163 * MS and md["aggr_in_queue_ns"] == 6_647_102 * MS
    assert md["aggr_util_pct"] == 94.28 and md["read_sectors"] is None and md["aggr_write_sectors"] is None
    nv = disks["nvme0n1"]
    assert nv["has_slaves"] is False and nv["aggr_write_ios"] is None
    assert (nv["write_ios"], nv["write_merges"], nv["write_ticks_ns"], nv["in_queue_ns"], nv["util_pct"]) == (
        230087,
        27,
        13_717_574 * MS,
        13_258_980 * MS,
        54.05,
    )
    sdb = disks["sdb"]
    assert (sdb["write_ios"], sdb["write_ticks_ns"], sdb["in_queue_ns"], sdb["util_pct"]) == (
        230087,
        78_753 * MS,
        35_224 * MS,
        94.28,
    )
    assert [d["line_start"] for d in disks.values()] == [5, 6, 7]


def test_lone_unindented_write_line_is_group_0_with_a_warning():
    text = read(SEEDS / "fio-mdadm-raid1-ext4-bitmap-none-run2.txt")
    assert fio.sniff(text) == "fio-normal"
    p = parse_text(text)
    g = only(p.rows("fio_groups"))
    assert g["groupid"] == 0 and g["direction"] == "write" and g["bw_bytes_per_s"] == 568 * MiB
    assert g["io_bytes"] == pytest.approx(33.3 * GiB, rel=1e-12) and g["run_min_ns"] == 60034 * MS
    assert len(p.warnings) == 1 and "groupid taken as 0" in p.warnings[0]


@pytest.mark.parametrize("name", sorted(p.name for p in SEEDS.glob("*.txt")))
def test_every_seed_log_parses_with_one_group_line(name):
    p = seed(name)
    g = only(p.rows("fio_groups"))
    line = read(SEEDS / name).split("\n")[g["line_start"] - 1]
    bw = re.search(r"bw=([0-9.]+)MiB/s", line).group(1)
    assert g["bw_bytes_per_s"] == pytest.approx(float(bw) * MiB, rel=1e-12)
    assert len(p.rows("fio_jobs")) == len(p.rows("fio_results")) <= 1


# ---- fio 3.33: the normal text against the JSON part of the same run ----------------------------


def json_part(text: str) -> dict:
    lines = text.split("\n")
    start = lines.index("{")
    return json.loads("\n".join(lines[start : lines.index("}", start) + 1]))


def unit_of(lines: list[str], ln: int, label: str) -> float:
    """The unit printed on the closest line at or above ``ln`` that matches ``label ... (unit)``."""
    for i in range(ln - 1, -1, -1):
        m = re.search(label + r"\s*\((nsec|usec|msec)\)", lines[i])
        if m:
            return {"nsec": 1, "usec": US, "msec": MS}[m.group(1)]
    raise AssertionError(f"no {label} line above {ln}")


def check_latency(row, obj, kind, lines):
    if row[f"{kind}_min_ns"] is None:
        assert obj is None or obj.get("N", 0) == 0
        return
    f = unit_of(lines, row["line_end"], r"(?<![a-z])" + kind)
    for col, key in (("min", "min"), ("max", "max")):
        # min/max are divided by the unit with truncation, then printed with <= 6 digits
        assert abs(row[f"{kind}_{col}_ns"] - obj[key]) <= f + 5e-4 * obj[key], (kind, col)
    for col, key in (("mean", "mean"), ("stdev", "stddev")):
        assert abs(row[f"{kind}_{col}_ns"] - obj[key]) <= 0.005 * f + 1e-9 * obj[key], (kind, col)


@pytest.mark.parametrize("name", BOTH)
def test_text_numbers_match_the_json_of_the_same_run(name):
    text = read(F333 / name)
    lines = text.split("\n")
    doc, p = json_part(text), parse_text(text)
    kb = int(doc.get("global options", {}).get("kb_base", 1024))
    assert p.tool_version == doc["fio version"] == "fio-3.33"
    jobs = p.rows("fio_jobs")
    assert len(jobs) == len(doc["jobs"])
    for job, jj in zip(jobs, doc["jobs"], strict=True):
        assert (job["jobname"], job["groupid"], job["error"]) == (jj["jobname"], jj["groupid"], jj["error"])
        assert abs(job["cpu_usr_pct"] - jj["usr_cpu"]) <= 0.005 + 1e-9
        assert abs(job["cpu_sys_pct"] - jj["sys_cpu"]) <= 0.005 + 1e-9
        assert (job["ctx"], job["majf"], job["minf"]) == (jj["ctx"], jj["majf"], jj["minf"])
        assert job["iodepth"] == int(jj["job options"].get("iodepth", doc.get("global options", {}).get("iodepth", 1)))
        depth_keys = {"depth": "iodepth_level", "submit": "iodepth_submit", "complete": "iodepth_complete"}
        depths = [d for d in p.rows("fio_iodepths") if d["job_index"] == job["job_index"]]
        assert len(depths) == 21
        for d in depths:
            exact = jj[depth_keys[d["kind"]]][d["bucket"]]
            assert abs(d["pct"] - exact) <= 0.05 + 1e-9 or (0 < exact < 0.1 and d["pct"] == 0.1)
        jb = {}
        for fam, f in (("latency_ns", 1), ("latency_us", US), ("latency_ms", MS)):
            for key, v in jj[fam].items():
                jb[(key, f)] = v
        text_buckets = buckets(p, job["job_index"])
        for _lo, hi, pct in text_buckets:
            f = 1 if hi is not None and hi <= 1000 else US if hi is not None and hi <= MS else MS
            key = ">=2000" if hi is None else str(int(hi // f))
            exact = jb.pop((key, f))
            assert abs(pct - exact) <= 0.005 + 1e-9 or (0 < exact < 0.01 and pct == 0.01), (key, f)
        assert all(v == 0 for v in jb.values())  # every non-zero bucket was printed
        results = [r for r in p.rows("fio_results") if r["job_index"] == job["job_index"]]
        assert {r["direction"] for r in results} == {
            d for d in ("read", "write", "trim", "mixed") if d in jj and jj[d]["total_ios"]
        } | ({"sync"} if jj.get("sync", {}).get("total_ios") else set())
        for r in results:
            d = jj[r["direction"]]
            assert r["total_ios"] == d["total_ios"]
            if r["direction"] == "sync":
                check_latency(r, d["lat_ns"], "lat", lines)
                kinds = {"lat": d["lat_ns"]}
            else:
                assert (r["short_ios"], r["dropped_ios"]) == (d["short_ios"], d["drop_ios"])
                assert r["runtime_ns"] == d["runtime"] * MS
                if r["io_bytes"] is not None:
                    assert abs(r["io_bytes"] - d["io_bytes"]) <= 0.005 * d["io_bytes"]
                    assert abs(r["bw_bytes_per_s"] - d["bw_bytes"]) <= 0.005 * d["bw_bytes"]
                    assert abs(r["iops"] - d["iops"]) <= 0.005 * d["iops"] + 1
                for kind in ("slat", "clat", "lat"):
                    check_latency(r, d.get(f"{kind}_ns"), kind, lines)
                kinds = {k: d[f"{k}_ns"] for k in ("slat", "clat", "lat")}
                if d["bw_samples"]:
                    # the JSON per-sample bandwidth is in units of kb_base (KiB, or kB with kb_base=1000)
                    assert (r["bw_min_bytes_per_s"], r["bw_max_bytes_per_s"]) == (d["bw_min"] * kb, d["bw_max"] * kb)
                    assert abs(r["bw_mean_bytes_per_s"] - d["bw_mean"] * kb) <= 0.005 * kb + 1e-6
                    assert abs(r["bw_stdev_bytes_per_s"] - d["bw_dev"] * kb) <= 0.005 * kb + 1e-6
                    assert abs(r["bw_agg_pct"] - d["bw_agg"]) <= 0.005 + 1e-9 and r["bw_samples"] == d["bw_samples"]
                    assert (r["iops_min"], r["iops_max"], r["iops_samples"]) == (
                        d["iops_min"],
                        d["iops_max"],
                        d["iops_samples"],
                    )
                    assert abs(r["iops_mean"] - d["iops_mean"]) <= 0.005 + 1e-9
                else:
                    assert r["bw_mean_bytes_per_s"] is None and r["iops_mean"] is None
            for kind, obj in kinds.items():
                text_p = pct_map(p, job["job_index"], r["direction"], kind)
                exact_p = {float(k): v for k, v in obj.get("percentile", {}).items()}
                assert text_p.keys() == exact_p.keys(), (r["direction"], kind)
                for q, v in text_p.items():
                    row = next(
                        x
                        for x in p.rows("fio_percentiles")
                        if x["job_index"] == job["job_index"]
                        and x["direction"] == r["direction"]
                        and x["kind"] == kind
                        and x["percentile"] == q
                    )
                    f = unit_of(lines, row["line_start"], "percentiles")
                    assert 0 <= v - exact_p[q] < f, (kind, q)  # scaled values are rounded up
    for g in p.rows("fio_groups"):
        members = [j for j in doc["jobs"] if j["groupid"] == g["groupid"]]
        dirs = (g["direction"],)
        if g["direction"] == "mixed" and "read" in members[0]:  # unified_rw_reporting=both
            dirs = ("read", "write", "trim")
        io = sum(j[d]["io_bytes"] for j in members for d in dirs)
        runs = [j[d]["runtime"] for j in members for d in dirs if j[d]["runtime"]]
        assert abs(g["io_bytes"] - io) <= 0.005 * io
        assert (g["run_min_ns"], g["run_max_ns"]) == (min(runs) * MS, max(runs) * MS)
        assert abs(g["bw_bytes_per_s"] - io * 1000 / max(runs)) <= 0.005 * io * 1000 / max(runs)
        if g["direction"] != "mixed":
            per_job = [j[g["direction"]]["bw_bytes"] for j in members]
            assert abs(g["bw_min_bytes_per_s"] - min(per_job)) <= 0.005 * min(per_job)
            assert abs(g["bw_max_bytes_per_s"] - max(per_job)) <= 0.005 * max(per_job)
    disks = {d["name"]: d for d in doc.get("disk_util", [])}
    assert [d["disk"] for d in p.rows("fio_disk_stats")] == list(disks)
    for d in p.rows("fio_disk_stats"):
        j = disks[d["disk"]]
        assert (d["read_ios"], d["write_ios"], d["read_merges"], d["write_merges"]) == (
            j["read_ios"],
            j["write_ios"],
            j["read_merges"],
            j["write_merges"],
        )
        assert (d["read_ticks_ns"], d["write_ticks_ns"], d["in_queue_ns"]) == (
            j["read_ticks"] * MS,
            j["write_ticks"] * MS,
            j["in_queue"] * MS,
        )
        assert abs(d["util_pct"] - j["util"]) <= 0.005 + 1e-9


def test_the_json_comparison_covers_every_mode():
    assert BOTH == [
        "clones_nogroup.txt",
        "kb_base_1000.txt",
        "lat_percentiles.txt",
        "name_colon_fsync.txt",
        "randrw_libaio_jsonplus.txt",
        "seq_read_group_jsonplus.txt",
        "seq_write_group.txt",
        "two_groups.txt",
        "unified_both.txt",
        "unified_mixed.txt",
    ]


def test_unified_both_mixed_line_printed_as_zero_is_null():
    """fio 3.33 prints 'mixed: IOPS=0, BW=0 (0)(0B/47msec)' with unified_rw_reporting=both (JSON: 4 MiB)."""
    p = parse_text(read(F333 / "unified_both.txt"))
    mixed = only(p.rows("fio_results"), direction="mixed")
    assert mixed["io_bytes"] is None and mixed["bw_bytes_per_s"] is None and mixed["iops"] is None
    assert mixed["total_ios"] == 496 + 528 and mixed["runtime_ns"] == 47 * MS
    assert mixed["clat_mean_ns"] == 45110.0
    assert len(p.warnings) == 1 and "display bug" in p.warnings[0]
    group = only(p.rows("fio_groups"), direction="mixed")
    assert group["bw_bytes_per_s"] == pytest.approx(85.1 * MiB) and group["io_bytes"] == 4096 * KiB
    assert group["bw_min_bytes_per_s"] == pytest.approx(41.2 * MiB)


def test_clones_without_group_reporting_share_a_name():
    p = parse_text(read(F333 / "clones_nogroup.txt"))
    jobs = p.rows("fio_jobs")
    assert [(j["job_index"], j["jobname"], j["pid"], j["jobs"]) for j in jobs] == [
        (0, "clone", 5930, 1),
        (1, "clone", 5931, 1),
    ]
    assert [r["job_index"] for r in p.rows("fio_results")] == [0, 1]
    assert [j["block_size_bytes"] for j in jobs] == [64 * KiB, 64 * KiB]


def test_name_with_colons_and_the_fsync_section():
    p = parse_text(read(F333 / "name_colon_fsync.txt"))
    job = only(p.rows("fio_jobs"))
    assert job["jobname"] == "db: log writer 1" and job["block_size_bytes"] == 16 * KiB
    sync = only(p.rows("fio_results"), direction="sync")
    assert sync["total_ios"] == 31 and sync["io_bytes"] is None and sync["short_ios"] is None
    assert (sync["lat_min_ns"], sync["lat_max_ns"], sync["lat_mean_ns"]) == (73 * US, 188 * US, 88950.0)
    assert pct_map(p, direction="sync", kind="lat")[99.0] == 188 * US


def test_two_groups_and_kb_base_1000():
    p = parse_text(read(F333 / "two_groups.txt"))
    assert [(g["groupid"], g["direction"]) for g in p.rows("fio_groups")] == [(0, "write"), (1, "read")]
    assert [j["groupid"] for j in p.rows("fio_jobs")] == [0, 1]
    assert only(p.rows("fio_groups"), groupid=1)["io_bytes"] == 4096 * KiB
    p = parse_text(read(F333 / "kb_base_1000.txt"))
    w = only(p.rows("fio_results"))
    # BW=16.0MB/s (15.2MiB/s)(15.9MB/993msec): SI first; MB is 10**6 here, never 2**20
    assert w["bw_bytes_per_s"] == 16_000_000 and w["io_bytes"] == 15_900_000
    assert w["bw_mean_bytes_per_s"] == 16_000 * 1000  # bw (   kB/s): avg=16000.00
    assert only(p.rows("fio_jobs"))["block_size_bytes"] == 256_000  # bs=(R) 256kB-256kB
    g = only(p.rows("fio_groups"))
    assert g["io_bytes"] == 15_900_000 and g["bw_bytes_per_s"] == 16_000_000


# ---- fio 3.33: text-only runs made for this parser (COMMANDS.md, "Text-parser fixtures") ----------


def test_status_interval_reports_are_documents():
    p = parse_text(read(F333 / "text-status-interval.txt"))
    jobs = p.rows("fio_jobs")
    assert [(j["job_index"], j["doc_index"], j["is_final"]) for j in jobs] == [
        (0, 0, False),
        (1, 1, False),
        (2, 2, True),
    ]
    assert [g["doc_index"] for g in p.rows("fio_groups")] == [0, 1, 2]
    assert [r["total_ios"] for r in p.rows("fio_results")] == [30, 62, 64]
    assert only(p.rows("fio_results"), job_index=2)["io_bytes"] == 16 * MiB
    assert len(p.rows("fio_disk_stats")) == 3 and p.warnings == []


def test_kb_base_1000_large_bw_is_labelled_mib_but_is_mb():
    p = parse_text(read(F333 / "text-kb1000-null.txt"))
    w = only(p.rows("fio_results"))
    assert w["bw_bytes_per_s"] == 306e9 and w["io_bytes"] == 613e9 and w["iops"] == 306_000
    # bw (  MiB/s): min=281562, ..., avg=302572.27 -- fio divided kB/s by kb_base=1000
    assert w["bw_min_bytes_per_s"] == 281562e6 and w["bw_mean_bytes_per_s"] == pytest.approx(302572.27e6)
    assert (w["clat_min_ns"], w["clat_max_ns"], w["lat_max_ns"]) == (10, 830794, 6_416_500)
    assert buckets(p)[:2] == [(10, 20, 0.32), (20, 50, 95.3)]  # lat (nsec)
    assert (1 * US, 2 * US, 0.01) in buckets(p)  # lat (usec): 2= starts at 1 usec


def test_bit_units():
    p = parse_text(read(F333 / "text-bits.txt"))
    r = only(p.rows("fio_results"))
    assert r["bw_bytes_per_s"] == pytest.approx(64.2 * MiB / 8) and r["io_bytes"] == 16 * MiB
    assert r["bw_min_bytes_per_s"] == 8192 * KiB  # this line says KiB/s even so
    assert only(p.rows("fio_groups"))["bw_bytes_per_s"] == pytest.approx(64.2 * MiB / 8)


def test_cmdprio_lines_are_recognised_not_stored():
    p = parse_text(read(F333 / "text-cmdprio.txt"))
    r = only(p.rows("fio_results"))
    assert (r["clat_min_ns"], r["clat_max_ns"]) == (801, 1_998_800)  # clat (nsec): max=1998.8k
    assert (r["lat_min_ns"], r["lat_max_ns"]) == (24 * US, 2002 * US)
    assert len(pct_map(p)) == 17 and pct_map(p)[99.99] == 1991 * US
    assert len(p.rows("fio_percentiles")) == 17
    assert p.warnings == ["line 11: per-priority latency lines and percentiles (cmdprio) are not stored"]


def test_slat_clat_lat_percentiles_description_errors():
    p = parse_text(read(F333 / "text-slat-lat-pct.txt"))
    assert p.warnings == []
    assert [len(pct_map(p, kind=k)) for k in ("slat", "clat", "lat")] == [17, 17, 17]
    assert pct_map(p, kind="slat")[99.95] == 3294 * US and pct_map(p, kind="lat")[1.0] == 51 * US
    assert only(p.rows("fio_results"))["slat_max_ns"] == 3277 * US


def test_trim_with_six_significant_figures():
    p = parse_text(read(F333 / "text-trim-sigfigs.txt"))
    r = only(p.rows("fio_results"))
    assert r["direction"] == "trim" and r["iops"] == 5_461_300 and r["total_ios"] == 16384
    assert r["bw_bytes_per_s"] == 21333 * MiB and r["io_bytes"] == 64 * MiB
    assert only(p.rows("fio_groups"))["direction"] == "trim"


def test_steadystate_and_eta_lines():
    p = parse_text(read(F333 / "text-steadystate.txt"))
    assert p.warnings == [] and only(p.rows("fio_results"))["iops"] == 7_236_000
    text = read(F333 / "text-eta-always.txt")
    assert "\r" in text
    p = parse_text(text)
    assert p.warnings == [] and only(p.rows("fio_jobs"))["line_start"] == 6
    assert only(p.rows("fio_results"))["bw_bytes_per_s"] == 1585 * KiB


def test_failed_job_block_without_io_sections():
    p = parse_text(read(F333 / "text-error-devfull.txt"))
    job = only(p.rows("fio_jobs"))
    assert job["error"] == 28 and job["jobname"] == "full" and job["pid"] == 22508
    assert p.rows("fio_results") == [] and p.rows("fio_groups") == [] and len(p.rows("fio_iodepths")) == 21


@pytest.mark.parametrize("name", TEXT_ONLY)
def test_text_only_fixtures_parse_through_the_dispatcher(name):
    text = read(F333 / name)
    assert fio.parse(text).tables == parse_text(text).tables


# ---- hand-made variants of other versions (tests/fixtures/fio/text-variants/*.md) -----------------


def variant(name: str):
    return parse_text(read(VAR / name))


def test_variant_fio22_legacy_units_and_two_groups():
    """Hand-made from docs/formats/log-formats.md A.3/A.6/A.7/A.8/A.9 samples (not a real output)."""
    p = variant("fio-2.2-two-groups.txt")
    assert p.tool_version == "fio-2.2.10" and p.warnings == []
    w, r = p.rows("fio_results")
    assert (w["direction"], r["direction"]) == ("write", "read")
    assert w["io_bytes"] == 48384 * KiB and w["bw_bytes_per_s"] == pytest.approx(2416.1 * KiB)
    assert r["io_bytes"] == pytest.approx(9920.3 * MiB) and r["bw_bytes_per_s"] == 338589 * KiB  # KB = KiB
    assert r["iops"] == 84647 and r["runtime_ns"] == 30002 * MS
    assert w["clat_max_ns"] == 44_735_000_000  # max=44735K (usec)
    assert (w["total_ios"], w["short_ios"], w["dropped_ios"]) == (12096, 0, 0) and r["total_ios"] == 2539597
    assert w["bw_min_bytes_per_s"] == 0 and w["bw_max_bytes_per_s"] == 5560 * KiB and w["bw_samples"] is None
    assert w["iops_mean"] is None
    assert buckets(p, 0)[-1] == (2000 * MS, None, 0.01)
    assert buckets(p, 1)[0] == (20 * US, 50 * US, 0.01)
    g0, g1 = p.rows("fio_groups")
    assert (g0["groupid"], g0["direction"], g0["io_bytes"], g0["bw_bytes_per_s"]) == (
        0,
        "write",
        48384 * KiB,
        2416 * KiB,
    )
    assert (g1["groupid"], g1["direction"], g1["run_min_ns"]) == (1, "read", 30002 * MS)
    jobs = p.rows("fio_jobs")
    assert [(j["rw"], j["block_size_bytes"], j["iodepth"]) for j in jobs] == [
        ("randwrite", 4096, 1),
        ("read", 4096, 32),
    ]


def test_variant_fio20_trailing_spaces_and_mixed_sections():
    """Hand-made 2.0.x layout (A.3 trailing spaces, A.6 'bw (KB/s)  :', issued without drop=)."""
    p = variant("fio-2.0-randrw.txt")
    assert p.warnings == []
    r, w = p.rows("fio_results")
    assert r["iops"] == 255 and r["bw_bytes_per_s"] == pytest.approx(1023.3 * KiB) and r["io_bytes"] == 61440 * KiB
    assert (r["slat_min_ns"], r["slat_max_ns"]) == (3 * US, 98 * US)
    assert (r["clat_min_ns"], r["clat_max_ns"], r["clat_mean_ns"]) == (1 * MS, 1331 * MS, 14.82 * MS)
    assert w["bw_bytes_per_s"] == 521326 and w["clat_max_ns"] == 1_102_400_000  # 'bw=521326 B/s', 1102.4K
    assert (r["total_ios"], w["total_ios"], w["short_ios"], w["dropped_ios"]) == (15360, 7680, 0, None)
    assert pct_map(p, direction="read")[99.99] == 1335296 * US
    assert r["bw_min_bytes_per_s"] == 212 * KiB and w["bw_mean_bytes_per_s"] == pytest.approx(512.27 * KiB)
    assert [g["bw_bytes_per_s"] for g in p.rows("fio_groups")] == [1023 * KiB, 509 * KiB]


def test_variant_fio20_tag_issued_rwd_then_latency_lines():
    """Hand-made oldest layout: no date, 'issued r/w/d:', distribution lines after the issued line."""
    p = variant("fio-2.0-tag-issued-rwd.txt")
    assert p.tool_version == "fio-2.0" and p.warnings == []
    job = only(p.rows("fio_jobs"))
    assert job["report_time"] is None and job["pid"] == 15205 and job["line_end"] == 19
    w = only(p.rows("fio_results"))
    assert w["total_ios"] == 262144 and w["io_bytes"] == 1024 * MiB and w["iops"] == 4368
    assert w["bw_min_bytes_per_s"] == 16784 * KiB and w["bw_agg_pct"] == 100.01
    assert buckets(p) == [
        (20 * US, 50 * US, 0.01),
        (50 * US, 100 * US, 0.01),
        (100 * US, 250 * US, 99.2),
        (250 * US, 500 * US, 0.79),
        (500 * US, 750 * US, 0.01),
        (750 * US, 1000 * US, 0.01),
        (2 * MS, 4 * MS, 0.01),
    ]


def test_variant_fio221_issued_rwt_and_no_samples():
    p = variant("fio-2.21-issued-rwt.txt")
    assert p.warnings == []
    r = only(p.rows("fio_results"))
    assert (r["total_ios"], r["short_ios"], r["dropped_ios"]) == (131072, 0, 0)
    assert r["bw_bytes_per_s"] == 460 * MiB and r["io_bytes"] == 8192 * MiB and r["iops"] == 7366
    assert r["bw_mean_bytes_per_s"] == pytest.approx(471513.06 * KiB) and r["bw_samples"] is None
    assert buckets(p)[0] == (250 * US, 500 * US, 0.01)
    assert only(p.rows("fio_groups"))["io_bytes"] == 8192 * MiB  # 8192MiB (8590MB): 4 digits each


def test_variant_fio320_prio_lines_and_cachehit():
    p = variant("fio-3.20-prio-cachehit.txt")
    r, w = p.rows("fio_results")
    assert r["bw_bytes_per_s"] == pytest.approx(38.4 * MiB) and r["io_bytes"] == 2304 * MiB and r["iops"] == 9830
    assert (r["slat_min_ns"], r["slat_mean_ns"]) == (1302, 3810.44)
    assert r["clat_max_ns"] == 20331 * US  # not the 'high prio_clat' max
    assert len(pct_map(p, direction="read")) == 17 and pct_map(p, direction="read")[99.99] == 10552 * US
    assert (r["total_ios"], w["total_ios"]) == (589824, 252928)
    assert len(p.warnings) == 1 and "per-priority" in p.warnings[0]
    # io=988MiB (1036MB): the second value has more digits, so it is the more precise one
    assert only(p.rows("fio_groups"), direction="write")["io_bytes"] == 1036e6
    assert w["io_bytes"] == 988 * MiB


def test_variant_fio342_sectors_dm_aggregates_and_latency_units():
    p = variant("fio-3.42-dm-sectors.txt")
    assert p.warnings == [] and p.tool_version == "fio-3.42"
    dm, vda, vdb = p.rows("fio_disk_stats")
    assert dm["disk"] == "dm-0" and dm["has_slaves"] is True
    assert (dm["read_sectors"], dm["write_sectors"], dm["aggr_read_sectors"], dm["aggr_write_sectors"]) == (
        32,
        2097960,
        16,
        1048976,
    )
    assert (dm["aggr_write_ios"], dm["aggr_write_merges"], dm["aggr_write_ticks_ns"], dm["aggr_util_pct"]) == (
        4130,
        1,
        3490 * MS,
        98.12,
    )
    assert (vda["write_sectors"], vda["has_slaves"], vdb["util_pct"]) == (2097952, False, 0.0)
    assert only(p.rows("fio_results"))["bw_bytes_per_s"] == 148 * MiB


# ---- forms made from real files by small, stated edits ------------------------------------------


def test_jobs_status_glued_to_the_next_line():
    text = read(F333 / "normal_only.txt")
    base = parse_text(text)
    header = next(ln for ln in text.split("\n") if "(groupid=" in ln)
    for glue in (
        "Jobs: 1 (f=1): [w(1)][100.0%][w=133MiB/s][w=17.1k IOPS][eta 00m:00s]\r",
        "Jobs: 1 (f=1): [w(1)][-.-%][eta 00m:00s]      \rJobs: 1 (f=1): [w(1)][100.0%][eta 00m:00s]\r",
        "Jobs: 1 (f=1): [w(1)][100.0%][w=133MiB/s][w=17.1k IOPS][eta 00m:00s]   ",
    ):
        p = parse_text(text.replace(header, glue + header))
        assert p.tables == base.tables and p.warnings == []


def test_crlf_line_ends():
    text = read(SEEDS / "fio-zfs-mirror-zfs0.8.4.txt")
    assert parse_text(text.replace("\n", "\r\n")).tables == parse_text(text).tables


def test_json_and_terse_parts_around_the_text_are_skipped():
    text = read(F333 / "normal_only.txt")
    json_doc = "\n".join(ln for ln in read(F333 / "json_only.txt").split("\n"))
    terse = read(F333 / "terse_v3.txt").rstrip("\n")
    base = parse_text(text)
    shifted = parse_text(terse + "\n" + json_doc + "\n" + text + "\n" + json_doc)
    offset = 1 + len(json_doc.split("\n"))
    for table, rows in base.tables.items():
        moved = [
            dict(r, line_start=r["line_start"] + offset, line_end=r["line_end"] + offset) if "line_start" in r else r
            for r in rows
        ]
        assert shifted.rows(table) == moved, table
    assert shifted.warnings == [  # the terse line is named (not stored), the JSON documents pass silently
        "line 1: 1 fio terse line beside the normal output not stored (the normal output is, with its printed rounding)"
    ]


def test_old_2x_bandwidth_labels_are_powers_of_1024():
    text = read(VAR / "fio-2.2-two-groups.txt").replace(
        "bw (KB  /s): min=308224, max=360448, per=100.00%, avg=338590.12, stdev=11437.65",
        "bw (MB  /s): min=  301, max=  352, per=100.00%, avg=330.65, stdev=11.17",
    )
    r = parse_text(text).rows("fio_results")[1]
    assert r["bw_min_bytes_per_s"] == 301 * MiB and r["bw_mean_bytes_per_s"] == pytest.approx(330.65 * MiB)


def test_unknown_line_inside_a_job_block_is_a_warning():
    text = read(SEEDS / "fio-zfs-mirror-zfs0.8.4.txt").replace(
        "  cpu          :", "  future stat  : foo=1, bar=2\n  cpu          :"
    )
    p = parse_text(text)
    assert len(p.warnings) == 1 and "line 18" in p.warnings[0] and "future stat" in p.warnings[0]
    assert only(p.rows("fio_jobs"))["ctx"] == 671054


def test_dispatcher_and_mib_vs_mb():
    text = read(SEEDS / "fio-zfs-mirror-zfs0.8.4.txt")
    assert fio.sniff(text) == "fio-normal"
    assert fio.parse(text).rows("fio_results") == parse_text(text).rows("fio_results")
    swapped = text.replace("BW=1240MiB/s (1300MB/s)", "BW=1300MB/s (1240MiB/s)")  # as kb_base=1000 prints it
    assert only(parse_text(swapped).rows("fio_results"))["bw_bytes_per_s"] == 1_300_000_000


# ---- bad input -----------------------------------------------------------------------------------

ZFS = read(SEEDS / "fio-zfs-mirror-zfs0.8.4.txt")
ZFS_LINES = ZFS.split("\n")


def cut(lines: int, extra: str = "") -> str:
    return "\n".join(ZFS_LINES[:lines]) + extra


def test_empty_and_blank():
    expect_error("", "empty")
    expect_error(" \n\n\t\n", "empty")


@pytest.mark.parametrize(
    "text",
    [
        "hello world\nthis is not fio\n",
        "Version  1.98       ------Sequential Output------ --Sequential Input- --Random-\n",
        "Traversing all blocks to verify nothing leaked ...\n\n\tNo leaks (block sum matches space maps exactly)\n",
        "\x00\x01\x02\xff binary \x00",
    ],
)
def test_other_input_is_rejected(text):
    err = expect_error(text, "invalid", line=1)
    assert "groupid" in err.expected


def test_terse_or_json_only_is_not_normal_text():
    expect_error(read(F333 / "terse_v3.txt"), "invalid")
    expect_error(read(F333 / "json_only.txt"), "invalid")


def test_truncated_after_the_write_line():
    err = expect_error(cut(3), "truncated", line=3)
    assert "issued" in err.expected


def test_truncated_in_the_percentile_block():
    expect_error(cut(10), "truncated", line=10)  # the line ends with ','
    expect_error(cut(9) + "\n     | 30.00th=[    8], 40.00th=[", "truncated", line=10)
    expect_error(cut(7), "truncated", line=7)  # the title only


def test_truncated_mid_line_and_in_the_run_status_line():
    expect_error(cut(2) + "\n  write: IOPS=1240, BW=1240MiB/s (1300MB/s)(72.7GiB/600", "truncated", line=3)
    line = "  WRITE: bw=374MiB/s (392MB/s), 374MiB/s-374MiB/s (392MB/s-392MB/s), io=21.9GiB (23.6GB),"
    expect_error(cut(25) + "\n" + line + "\n", "truncated", line=26)


def test_truncated_after_the_job_block_or_in_disk_stats():
    expect_error(cut(23), "truncated", line=23)
    expect_error(cut(24) + "\n", "truncated", line=23)  # block complete, no Run status group
    # cut inside the disk stats (after the results): the results are kept, the cut line is a warning
    disk = read(SEEDS / "fio-mdadm-raid1-ext4-bitmap-internal.txt").split("\n")
    for last in ("  sdb: ios=0/230087, merge=0/27, ti", "  sd"):
        p = parse_text("\n".join(disk[:6] + [last]))
        assert p.warnings == [f"line 7: disk stats line cut at the end of the file, not stored: {last.strip()!r}"]
        assert [d["disk"] for d in p.rows("fio_disk_stats")] == ["md127", "nvme0n1"]
        assert len(p.rows("fio_groups")) == 1


def test_preamble_only_is_truncated():
    text = read(F333 / "normal_only.txt").split("\n\n")[0] + "\n"
    assert "Starting 1 process" in text
    expect_error(text, "truncated")


@pytest.mark.parametrize(
    "old,new,line",
    [
        ("clat (usec): min=2,", "clat (usec): min=2x,", 5),
        ("IOPS=1240,", "IOPS=12q0,", 3),
        ("(72.7GiB/60017msec)", "(72.7XB/60017msec)", 3),
        ("issued rwts: total=0,74429,0,0", "issued rwts: total=0,7x429,0,0", 22),
        ("99.00th=[  380]", "99.00th=[  3a0]", 11),
        ("ctx=671054", "ctx=6710.54", 18),
        ("IO depths    : 1=0.1%", "IO depths    : 1=0.1.1%", 19),
    ],
)
def test_unreadable_numbers_name_the_line(old, new, line):
    assert old in ZFS
    err = expect_error(ZFS.replace(old, new), "invalid", line=line)
    assert err.expected


def test_malformed_run_status_line():
    bad = ZFS.replace("run=60017-60017msec", "run=60017-msec")
    expect_error(bad, "truncated", line=26)  # the last line: cut short
    mdadm = read(SEEDS / "fio-mdadm-raid1-ext4-bitmap-internal.txt")
    err = expect_error(mdadm.replace("io=28.1GiB (30.1GB)", "io=28.1GiB (30.1GB"), "invalid", line=2)
    assert "run=MIN-MAXmsec" in err.expected


def test_new_header_before_the_block_ended():
    text = cut(12) + "\n" + "\n".join(ZFS_LINES[1:])
    err = expect_error(text, "invalid", line=13)
    assert "issued" in err.expected


def _damaged(rng: random.Random, text: str, most: int, chars: str) -> str:
    """``text`` with 1 to ``most`` random edits: a line deleted, cut, one character made one of ``chars``, or
    a line repeated elsewhere."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, most)):
        k = rng.randrange(len(lines))
        action = rng.randrange(4)
        if action == 0:
            del lines[k]
        elif action == 1:
            lines[k] = lines[k][: rng.randrange(len(lines[k]) + 1)]
        elif action == 2 and lines[k]:
            j = rng.randrange(len(lines[k]))
            lines[k] = lines[k][:j] + rng.choice(chars) + lines[k][j + 1 :]
        else:
            lines.insert(k, rng.choice(lines))
    return "\n".join(lines)


def test_random_damage_gives_rows_or_parse_error():
    rng = random.Random(20221104)
    sources = [
        read(SEEDS / "fio-btrfs-raid1.txt"),
        read(F333 / "randrw_libaio_jsonplus.txt"),
        read(VAR / "fio-2.2-two-groups.txt"),
        read(F333 / "text-status-interval.txt"),
    ]
    for _ in range(300):
        try:
            parse_text(_damaged(rng, rng.choice(sources), 4, "x9,=:%()[]|-\r "))
        except ParseError as e:
            assert e.kind in ("empty", "truncated", "invalid") and (e.line is None or e.line >= 1)


def test_rows_have_exactly_the_schema_columns():
    from storagelab.parsers.fio.schema import TABLES

    files = [SEEDS / n for n in ("fio-zfs-mirror-zfs0.8.4.txt", "fio-mdadm-raid1-ext4-bitmap-internal.txt")]
    files += [F333 / n for n in ("unified_both.txt", "name_colon_fsync.txt")] + sorted(VAR.glob("*.txt"))
    seen = set()
    for path in files:
        for table, rows in parse_text(read(path)).tables.items():
            want = [c for c in TABLES[table].names if c != "file_id"]
            for row in rows:
                assert list(row) == want, (path.name, table)
            seen.add(table)
    assert seen == {
        "fio_jobs",
        "fio_results",
        "fio_percentiles",
        "fio_latency_buckets",
        "fio_iodepths",
        "fio_groups",
        "fio_disk_stats",
    }


# ---- fio 2.2.10 with the dm-0 disk stats line wrapped or cut (fixtures/fio/2.2.10, COMMANDS.md) ----------

F2210 = ROOT / "tests" / "fixtures" / "fio" / "2.2.10"


def test_wrapped_disk_stats_line_is_joined_with_its_continuation():
    p = parse_text((F2210 / "rbd-write-wrapped-diskstats.txt").read_text())
    assert (p.format, p.tool_version, p.warnings) == ("fio-normal", "fio-2.2.10", [])
    dm, sda = p.rows("fio_disk_stats")
    assert (
        dm["disk"],
        dm["write_ios"],
        dm["util_pct"],
        dm["has_slaves"],
        dm["aggr_write_ios"],
        dm["aggr_write_merges"],
        dm["aggr_write_ticks_ns"],
        dm["aggr_in_queue_ns"],
        dm["aggr_util_pct"],
        dm["line_start"],
        dm["line_end"],
    ) == ("dm-0", 464, 0.38, True, 1091, 18, 12747e6, 12746e6, 1.11, 32, 33)
    assert (sda["disk"], sda["write_ios"], sda["write_merges"], sda["line_start"], sda["line_end"]) == (
        "sda",
        1091,
        18,
        34,
        34,
    )
    (res,) = p.rows("fio_results")
    # write: io=1024.0MB, bw=26099KB/s, iops=101, runt= 40177msec (KB = KiB before fio 2.17)
    assert (
        res["direction"],
        res["io_bytes"],
        res["bw_bytes_per_s"],
        res["iops"],
        res["runtime_ns"],
        res["total_ios"],
    ) == ("write", 1024 * 2**20, 26099 * 1024.0, 101.0, 40177e6, 4096)


def test_wrap_after_another_comma():
    p = parse_text((F2210 / "rbd-read-wrapped-diskstats.txt").read_text())
    assert p.warnings == []
    dm, sda = p.rows("fio_disk_stats")
    assert (
        dm["disk"],
        dm["write_ios"],
        dm["aggr_write_ios"],
        dm["aggr_write_merges"],
        dm["aggr_write_ticks_ns"],
        dm["aggr_util_pct"],
        dm["line_start"],
        dm["line_end"],
    ) == ("dm-0", 126, 370, 5, 7720e6, 1.71, 32, 33)
    assert p.rows("fio_results")[0]["bw_bytes_per_s"] == 99278 * 1024.0


def test_disk_stats_cut_at_the_end_keep_the_results_with_a_warning():
    """The file ends after 'aggrios=0/1091,': the job, its results and the group are kept; the cut
    disk line is not stored, and a warning says so."""
    cut = parse_text((F2210 / "rbd-write-cut-diskstats.txt").read_text())
    whole = parse_text((F2210 / "rbd-write-wrapped-diskstats.txt").read_text())
    assert cut.warnings == [
        "line 32: disk stats line cut at the end of the file, not stored: "
        "'dm-0: ios=0/464, merge=0/0, ticks=0/213, in_queue=213, util='"
    ]
    assert cut.rows("fio_disk_stats") == []
    for table in ("fio_jobs", "fio_results", "fio_percentiles", "fio_latency_buckets", "fio_iodepths", "fio_groups"):
        assert list(cut.rows(table)) == list(whole.rows(table)), table
    # a disk line cut anywhere else in its last line is the same damage
    text = (F2210 / "rbd-write-wrapped-diskstats.txt").read_text()
    p = parse_text(text[: text.index("in_queue=12746, util=1.11%")])
    assert [d["disk"] for d in p.rows("fio_disk_stats")] == ["dm-0"]
    assert p.warnings == [
        "line 34: disk stats line cut at the end of the file, not stored: 'sda: ios=0/1091, merge=0/18, ticks=0/12747,'"
    ]


def test_damage_inside_the_results_or_mid_disk_stats_stays_an_error():
    text = (F2210 / "rbd-write-wrapped-diskstats.txt").read_text()
    with pytest.raises(ParseError) as e:
        parse_text(text[: text.index("    lat (msec) : 10=")])  # cut inside the job block
    assert e.value.kind == "truncated"
    with pytest.raises(ParseError) as e:  # a wrapped line whose continuation is missing, then another disk
        parse_text(text.replace("    aggrmerge=0/18, aggrticks=0/12747, aggrin_queue=12746, aggrutil=1.11%\n", ""))
    assert (e.value.kind, e.value.line) == ("invalid", 32)


def _fio_text_outputs() -> list[Path]:
    """Every real fio output with a normal-text part (fixtures of every version and the seed logs)."""
    out = []
    for p in sorted([*(ROOT / "tests" / "fixtures" / "fio").rglob("*"), *(ROOT / "data" / "raw").rglob("*")]):
        if p.is_file() and p.suffix not in (".md", ".jsonl", ".csv", ".sh"):
            try:
                text = read(p)
            except UnicodeDecodeError:
                continue
            if fio.sniff(text) in ("fio-normal", "fio-json+normal"):
                out.append(p)
    return out


def _parse_or_error(text: str, fast: bool):
    try:
        return parse_text(text, fast=fast)
    except ParseError as e:
        return (e.kind, e.line, str(e))


def test_fast_paths_give_the_plain_paths_rows_on_every_real_output():
    """The text parser reads a whole job block of fio 3.x's or 2.x's usual layout at once (text_fast.py), and
    else the usual form of each job-block line (direction, latency, percentile title and full percentile lines,
    bw, iops, latency distribution, cpu, IO depths/submit/complete, issued) with one regular expression each,
    picked by the line's first character (fast paths); every other form goes the general way. On every real
    output with a text part, the plain path alone (fast=False) gives the same rows, row for row and value for
    value (line numbers included), the same warnings and the same tool version (or the same error).

    Which path each output's job blocks took is printed (``pytest -s``) and pinned: every real output is read
    whole, block by block (per-priority (cmdprio) lines and 2.0's 'bw (KB/s)  :' spacing included)."""
    outputs = _fio_text_outputs()
    assert len(outputs) >= 40
    compared = 0
    paths: dict[str, tuple[str | None, int, int]] = {}
    for p in outputs:
        text = read(p)
        fast, plain = _parse_or_error(text, True), _parse_or_error(text, False)
        if isinstance(plain, tuple):
            assert fast == plain, p
            continue
        assert {k: list(v) for k, v in fast.tables.items()} == {k: list(v) for k, v in plain.tables.items()}, p
        assert (fast.warnings, fast.tool_version) == (plain.warnings, plain.tool_version), p
        compared += sum(len(v) for v in plain.tables.values())
        paths[str(p.relative_to(ROOT))] = (plain.tool_version, *block_paths(text))
    assert compared > 5_000  # rows compared (the outputs are not all refused)
    for name, (version, whole, blocks) in paths.items():
        print(f"{whole}/{blocks} job blocks read whole  {version}  {name}")
    declined = {Path(name).name for name, (_v, whole, blocks) in paths.items() if whole < blocks}
    assert declined == set()  # (fio 2.0's latency lines after 'issued' go line by line, after the block read whole)
    v3 = [(whole, blocks) for version, whole, blocks in paths.values() if version and version.startswith("fio-3")]
    assert len(v3) >= 20 and sum(whole == blocks for whole, blocks in v3) >= 0.85 * len(v3)
    assert sum(whole for _v, whole, _b in paths.values()) >= 45  # job blocks read whole


def test_fast_and_plain_paths_agree_on_damaged_outputs():
    """Real outputs of fio 3.16, 3.25 (fsync), 3.33 and 2.2.10 damaged at random (lines deleted, cut, a character
    changed, a line repeated): the whole-block fast path gives the plain path's rows, warnings and version, or
    the same error at the same line. 2,000 cases: 1,220 refused by both, 780 read alike (1,215 and 785 before
    reliability-32 refused a stray piece, as the `47` of a decimal comma's `stdev=14,47`). (It found the per-line
    fast path reading a cut 'lat (usec): min=...' line as a latency distribution line: a different error.)"""
    rng = random.Random(27)
    sources = [
        read(SEEDS / "fio-btrfs-raid1.txt"),
        read(ROOT / "tests" / "fixtures" / "fio" / "published" / "fio-3.25-fsync-raidz2-slog.txt"),
        read(F333 / "text-slat-lat-pct.txt"),
        read(F333 / "text-status-interval.txt"),
        read(ROOT / "tests" / "fixtures" / "fio" / "published" / "fio-2.2.10-five-runs-appended.txt"),
    ]
    # 1220 -> 1222 (reliability-33: a job header with a damaged number is refused, not passed over); -> 1273
    # (reliability-34: a job's lines after a deleted or damaged header, a damaged run status line, are refused)
    assert _fast_agrees_on_damaged(rng, sources, 2000, "x9,=:%()[]|-. \t") == 1273


def test_fast_and_plain_paths_read_a_varied_output_alike():
    """The same on fio 3.33's normal output with every number of two or more digits redrawn (as the benchmark's
    corpus varies it): percentile and IO depth keys that fio never prints take the fast path too, with the same
    values."""
    text = read(ROOT / "tests" / "fixtures" / "fio" / "3.33" / "normal_only.txt")
    varied = re.sub(
        r"(?<![\w.])([1-9][0-9]+)(?![\w])", lambda m: str(int(m[1]) * 7 % 10 ** len(m[1])).rjust(len(m[1]), "1"), text
    )
    assert varied != text
    fast, plain = parse_text(varied), parse_text(varied, fast=False)
    assert fast.tables == plain.tables and fast.warnings == plain.warnings
    assert len(fast.tables["fio_iodepths"]) == 21 and len(fast.tables["fio_percentiles"]) == 17


def test_terse_lines_beside_the_normal_output_are_named_not_stored():
    """--output-format=terse,normal (fio 3.1, published): the normal report is stored, with a warning naming the
    terse line it leaves aside (its 14790 KiB/s is more exact than the text's 14.4MiB/s)."""
    p = parse_text(read(ROOT / "tests" / "fixtures" / "fio" / "published" / "fio-3.1-terse-and-normal.txt"))
    assert p.warnings == [
        "line 5: 1 fio terse line beside the normal output not stored (the normal output is, with its printed rounding)"
    ]
    (res,) = p.rows("fio_results")
    assert (res["direction"], res["bw_bytes_per_s"], res["iops"]) == ("read", 14.4 * MiB, 3697.0)


def test_laid_out_file_size_is_the_jobs_size_in_mib():
    """O8 (issue 24): "Laying out IO file (1 file / 22MiB)" (3.x) and "Laying out IO file(s) (1 file(s) / 512MB)" (2.x,
    the same extend_size >> 20 of filesetup.c: MiB) are stored in bytes, for the run that printed them only: of five
    runs appended to one log only the first laid the file out (the others found it)."""
    pub = Path(__file__).resolve().parent / "fixtures" / "fio" / "published"
    noslog = parse_text(read(pub / "fio-3.25-fsync-raidz2-noslog.txt")).rows("fio_jobs")
    assert [(j["layout_files"], j["layout_bytes"]) for j in noslog] == [(1, 22 * 2**20)]
    slog = parse_text(read(pub / "fio-3.25-fsync-raidz2-slog.txt")).rows("fio_jobs")
    assert [(j["layout_files"], j["layout_bytes"]) for j in slog] == [(None, None)]  # the file was there already
    five = parse_text(read(pub / "fio-2.2.10-five-runs-appended.txt")).rows("fio_jobs")
    assert [(j["doc_index"], j["layout_bytes"]) for j in five] == [(0, 512 * 2**20)] + [(i, None) for i in range(1, 5)]


def test_fast_and_plain_paths_agree_on_damaged_cmdprio_and_fio_2_0_outputs():
    """The layouts the whole-block fast path took on last (issue 27): per-priority (cmdprio) lines of fio 3.33 and
    3.20, and fio 2.0's 'bw (KB/s)  : min=' spacing, damaged at random as above: the plain path's rows, warnings
    (the cmdprio warning at its line) and version, or the same error at the same line. 1,000 cases: 636 refused by
    both, 364 read alike (240 of them every block whole, 109 of those with per-priority lines)."""
    rng = random.Random(2027)
    variants = ROOT / "tests" / "fixtures" / "fio" / "text-variants"
    sources = [
        read(F333 / "text-cmdprio.txt"),
        read(variants / "fio-3.20-prio-cachehit.txt"),
        read(variants / "fio-2.0-randrw.txt"),
        read(variants / "fio-2.0-tag-issued-rwd.txt"),
    ]
    # 636 -> 640 (reliability-33: a job header with a damaged number is refused, not passed over); -> 676
    # (reliability-34: a job's lines after a deleted or damaged header are refused)
    assert _fast_agrees_on_damaged(rng, sources, 1000, "x9,=:%()[]|-./ \t") == 676


def _fast_agrees_on_damaged(rng: random.Random, sources: list[str], cases: int, chars: str) -> int:
    """``cases`` damaged copies of the sources (_damaged: up to 3 changes, with ``chars``), each parsed with the fast
    paths and without: the same error, or the same rows, warnings and version. Returns how many both refused."""
    refused = 0
    for _ in range(cases):
        text = _damaged(rng, rng.choice(sources), 3, chars)
        fast, plain = _parse_or_error(text, True), _parse_or_error(text, False)
        if isinstance(plain, tuple):
            assert fast == plain, text
            refused += 1
            continue
        assert not isinstance(fast, tuple), (fast, text)
        assert {k: list(v) for k, v in fast.tables.items()} == {k: list(v) for k, v in plain.tables.items()}, text
        assert (fast.warnings, fast.tool_version) == (plain.warnings, plain.tool_version), text
    return refused
