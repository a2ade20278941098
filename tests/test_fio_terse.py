"""fio terse parser (v2-v5) on real fio 3.33 outputs (tests/fixtures/fio/3.33, see COMMANDS.md).

terse_v3_json.txt and terse_v5_json.txt hold the terse line and the JSON report of one run
(--output-format=terse,json), so the terse numbers are checked against the exact JSON ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from storagelab.errors import ParseError
from storagelab.parsers import fio
from storagelab.parsers.fio.json import parse_json
from storagelab.parsers.fio.terse import parse_terse

FIX = Path(__file__).parent / "fixtures" / "fio" / "3.33"


def load(name: str) -> str:
    return (FIX / name).read_text()


def one(rows, **where):
    found = [r for r in rows if all(r[k] == v for k, v in where.items())]
    assert len(found) == 1, (where, found)
    return found[0]


def test_v3_exact_values():
    text = load("terse_v3.txt")
    assert fio.sniff(text) == "fio-terse"
    p = parse_terse(text)
    assert (p.tool, p.format, p.tool_version, p.warnings) == ("fio", "fio-terse", "fio-3.33", [])
    job = one(p.rows("fio_jobs"))
    assert (job["jobname"], job["groupid"], job["error"], job["line_start"], job["line_end"]) == (
        "tersejob",
        0,
        0,
        1,
        1,
    )
    assert (job["cpu_usr_pct"], job["cpu_sys_pct"], job["ctx"], job["majf"], job["minf"]) == (
        3.921569,
        33.333333,
        1030,
        0,
        12,
    )
    assert job["jobs"] is None and job["options_json"] is None

    r = one(p.rows("fio_results"), direction="read")
    assert r["io_bytes"] == 1984 * 1024 and r["bw_bytes_per_s"] == 38153 * 1024  # KiB, KiB/s
    assert r["bw_bytes_per_s"] != 38153 * 1000
    assert (r["iops"], r["runtime_ns"], r["exact"]) == (9538, 52e6, True)
    assert r["total_ios"] is None  # terse has no I/O count
    assert (r["slat_min_ns"], r["slat_mean_ns"]) == (None, None)  # 0;0;0.000000;0.000000: no samples
    assert (r["clat_min_ns"], r["clat_max_ns"]) == (22_000, 208_000)  # µs -> ns
    assert r["clat_mean_ns"] == pytest.approx(51351.905) and r["clat_stdev_ns"] == pytest.approx(21689.46)
    assert (r["lat_min_ns"], r["lat_max_ns"]) == (22_000, 208_000)
    assert r["bw_min_bytes_per_s"] is None and r["bw_agg_pct"] is None  # all zero in v3: not sampled
    w = one(p.rows("fio_results"), direction="write")
    assert (w["io_bytes"], w["bw_bytes_per_s"], w["iops"]) == (2112 * 1024, 40615 * 1024, 10153)
    assert [r["direction"] for r in p.rows("fio_results")] == ["read", "write"]  # v3 has no trim block

    pct = {(r["direction"], r["percentile"]): r["latency_ns"] for r in p.rows("fio_percentiles")}
    assert len(pct) == 34 and {r["kind"] for r in p.rows("fio_percentiles")} == {"clat"}
    assert pct[("read", 1.0)] == 32_000 and pct[("read", 99.9)] == 207_000 and pct[("write", 50.0)] == 40_000
    buckets = [(b["bucket_lo_ns"], b["bucket_hi_ns"], b["pct"]) for b in p.rows("fio_latency_buckets")]
    assert buckets == [(20e3, 50e3, 70.51), (50e3, 100e3, 25.0), (100e3, 250e3, 4.39), (250e3, 500e3, 0.10)]
    depths = [(d["bucket"], d["pct"]) for d in p.rows("fio_iodepths")]
    assert depths == [("1", 100.0), ("2", 0.0), ("4", 0.0), ("8", 0.0), ("16", 0.0), ("32", 0.0), (">=64", 0.0)]
    d = one(p.rows("fio_disk_stats"))
    assert (d["disk"], d["read_ios"], d["write_ios"], d["util_pct"], d["has_slaves"]) == ("vda", 0, 0, 0.0, False)
    groups = p.rows("fio_groups")
    assert [(g["direction"], g["io_bytes"], g["derived"], g["exact"]) for g in groups] == [
        ("read", 1984 * 1024, True, False),
        ("write", 2112 * 1024, True, False),
    ]
    assert groups[0]["bw_bytes_per_s"] == 1984 * 1024 * 1000 // 52


def test_v3_group_reporting_and_disk_ticks():
    p = parse_terse(load("terse_v3_group.txt"))
    w = one(p.rows("fio_results"))
    assert (w["direction"], w["io_bytes"], w["bw_bytes_per_s"], w["iops"], w["runtime_ns"]) == (
        "write",
        16384 * 1024,
        16633 * 1024,
        129,
        985e6,
    )
    assert (w["lat_min_ns"], w["lat_max_ns"]) == (105_000, 615_000)
    assert (w["bw_min_bytes_per_s"], w["bw_max_bytes_per_s"], w["bw_agg_pct"]) == (16400 * 1024, 16400 * 1024, 98.59917)
    d = one(p.rows("fio_disk_stats"))
    assert (d["write_ios"], d["write_merges"], d["write_ticks_ns"], d["in_queue_ns"], d["util_pct"]) == (
        6457,
        284,
        1003e6,
        1024e6,
        15.18,
    )


def test_v2_description_on_the_next_line_and_v4_trim_block():
    p = parse_terse(load("terse_v2_desc.txt"))
    assert p.tool_version is None  # v2 has no version field
    job = one(p.rows("fio_jobs"))
    assert (job["jobname"], job["options_json"], job["line_start"], job["line_end"]) == (
        "tersev2",
        '{"description": "a v2 job"}',
        1,
        2,
    )
    w = one(p.rows("fio_results"))
    assert (w["direction"], w["io_bytes"], w["bw_bytes_per_s"], w["iops"], w["runtime_ns"]) == (
        "write",
        4096 * 1024,
        315076 * 1024,
        4923,
        13e6,
    )
    assert p.rows("fio_disk_stats") == []  # v2 prints no disk fields

    p = parse_terse(load("terse_v4.txt"))
    r = one(p.rows("fio_results"))
    assert (r["direction"], r["io_bytes"], r["clat_min_ns"], r["clat_max_ns"]) == ("read", 4096 * 1024, 56e3, 422e3)
    assert one(p.rows("fio_jobs"))["cpu_usr_pct"] == 33.333333
    assert one(p.rows("fio_disk_stats"))["disk"] == "vda"


def test_v3_continue_on_error_and_description_with_semicolon():
    p = parse_terse(load("terse_v3_errors_desc.txt"))
    job = one(p.rows("fio_jobs"))
    assert job["options_json"] == '{"description": "desc; with semicolon"}'
    assert job["cpu_sys_pct"] == 33.333333 and one(p.rows("fio_disk_stats"))["disk"] == "vda"
    assert p.warnings == []  # total_err=0
    line = load("terse_v3_errors_desc.txt").replace("0.00%;0;0;desc", "0.00%;3;5;desc")
    p = parse_terse(line)
    assert p.warnings == ["line 1: job 'terseerr' had 3 I/O errors (continue_on_error), first error 5"]


def _same_run(name: str):
    text = load(name)
    return parse_terse(text), parse_json(text)


@pytest.mark.parametrize("name", ["terse_v3_json.txt", "terse_v5_json.txt"])
def test_terse_matches_the_json_of_the_same_run(name):
    t, j = _same_run(name)
    assert [r["direction"] for r in t.rows("fio_results")] == [r["direction"] for r in j.rows("fio_results")]
    for tr, jr in zip(t.rows("fio_results"), j.rows("fio_results"), strict=True):
        assert tr["io_bytes"] == jr["io_bytes"] // 1024 * 1024
        assert tr["bw_bytes_per_s"] == jr["bw_bytes_per_s"] // 1024 * 1024
        assert tr["iops"] == int(jr["iops"]) and tr["runtime_ns"] == jr["runtime_ns"]
        for kind in ("slat", "clat", "lat"):  # terse µs = ns // 1000
            assert tr[f"{kind}_min_ns"] == jr[f"{kind}_min_ns"] // 1000 * 1000
            assert tr[f"{kind}_max_ns"] == jr[f"{kind}_max_ns"] // 1000 * 1000
            assert tr[f"{kind}_mean_ns"] == pytest.approx(jr[f"{kind}_mean_ns"], abs=0.001)
            assert tr[f"{kind}_stdev_ns"] == pytest.approx(jr[f"{kind}_stdev_ns"], abs=0.001)
        for col in ("bw_samples", "iops_min", "iops_max", "iops_samples"):
            if name == "terse_v5_json.txt":
                assert tr[col] == jr[col], col
            else:
                assert tr[col] is None
    tp = {(r["direction"], r["percentile"]): r["latency_ns"] for r in t.rows("fio_percentiles")}
    jp = {(r["direction"], r["percentile"]): r["latency_ns"] for r in j.rows("fio_percentiles")}
    assert tp == {k: v // 1000 * 1000 for k, v in jp.items()}
    tj, jj = one(t.rows("fio_jobs")), one(j.rows("fio_jobs"))
    for col in ("jobname", "groupid", "error", "ctx", "majf", "minf"):
        assert tj[col] == jj[col]
    assert tj["cpu_sys_pct"] == jj["cpu_sys_pct"] and tj["cpu_usr_pct"] == jj["cpu_usr_pct"]
    assert [d["pct"] for d in t.rows("fio_iodepths")] == pytest.approx(
        [d["pct"] for d in j.rows("fio_iodepths") if d["kind"] == "depth"], abs=0.05
    )  # %3.1f
    # terse folds the nanosecond buckets into its first (<= 2 µs) cell, rounded to 2 decimals
    jb = {b["bucket_hi_ns"]: b["pct"] for b in j.rows("fio_latency_buckets")}
    tb = {b["bucket_hi_ns"]: b["pct"] for b in t.rows("fio_latency_buckets")}
    first = sum(v for hi, v in jb.items() if hi is not None and hi <= 2000)
    assert tb.get(2000.0, 0.0) == pytest.approx(first, abs=0.005)
    assert {hi: v for hi, v in tb.items() if hi != 2000.0} == pytest.approx(
        {hi: v for hi, v in jb.items() if hi is None or hi > 2000}, abs=0.005
    )
    td, jd = one(t.rows("fio_disk_stats")), one(j.rows("fio_disk_stats"))
    for col in (
        "disk",
        "read_ios",
        "write_ios",
        "read_merges",
        "write_merges",
        "read_ticks_ns",
        "write_ticks_ns",
        "in_queue_ns",
    ):
        assert td[col] == jd[col], col
    assert td["util_pct"] == pytest.approx(jd["util_pct"], abs=0.005)


def test_v5_line_made_v3_gives_the_same_numbers():
    """terse v3 and v5 of one run: the v3 line is the real v5 line with the version set to 3, the
    trim block dropped and the six v5-only fields of each block removed (the layout of B.9)."""
    v5 = load("terse_v5_json.txt").split("\n")[0]
    f = v5.split(";")
    assert len(f) == 189 and f[0] == "5"
    blocks = [f[5 + 47 * i : 5 + 47 * (i + 1)] for i in range(3)]
    v3 = ";".join(["3"] + f[1:5] + blocks[0][:41] + blocks[1][:41] + f[5 + 47 * 3 :]) + "\n"
    assert len(v3.split(";")) == 130
    a, b = parse_terse(v5 + "\n"), parse_terse(v3)
    v5_only = {"bw_samples", "iops_min", "iops_max", "iops_mean", "iops_stdev", "iops_samples"}
    for ra, rb in zip(a.rows("fio_results"), b.rows("fio_results"), strict=True):
        assert {k: v for k, v in ra.items() if k not in v5_only} == {k: v for k, v in rb.items() if k not in v5_only}
        assert ra["iops_samples"] is not None and rb["iops_samples"] is None
    for table in ("fio_percentiles", "fio_latency_buckets", "fio_iodepths", "fio_disk_stats", "fio_jobs"):
        assert a.rows(table) == b.rows(table), table


def test_v5_sample_statistics():
    p = parse_terse(load("terse_v5.txt"))
    r = one(p.rows("fio_results"), direction="read")
    assert (r["bw_samples"], r["iops_samples"], r["iops_min"], r["bw_min_bytes_per_s"]) == (0, 0, None, None)
    assert [x["direction"] for x in p.rows("fio_results")] == ["read", "write"]  # trim block: no I/O
    assert r["io_bytes"] == 1984 * 1024 and r["bw_bytes_per_s"] == 40489 * 1024


def test_terse_lines_mixed_with_other_output_and_crlf():
    text = "note: something fio said\n" + load("terse_v3.txt").replace("\n", "\r\n")
    p = parse_terse(text)
    assert one(p.rows("fio_jobs"))["line_start"] == 2
    assert one(p.rows("fio_results"), direction="read")["io_bytes"] == 1984 * 1024


# --- bad input -----------------------------------------------------------------------------------


def test_line_cut_short_is_truncated():
    line = load("terse_v3.txt").rstrip("\n")
    fields = line.split(";")
    with pytest.raises(ParseError) as e:  # lost its last 40 fields
        parse_terse(";".join(fields[:90]) + "\n")
    assert (e.value.kind, e.value.line) == ("truncated", 1) and "fewer than the 121" in e.value.message
    with pytest.raises(ParseError) as e:  # cut inside the disk section
        parse_terse(line[: line.index(";vda;") + 9])
    assert e.value.kind == "truncated"
    with pytest.raises(ParseError) as e:  # cut inside the last field
        parse_terse(line[:-2])
    assert e.value.kind == "truncated"


def test_wrong_field_count_or_garbage_fields_are_invalid():
    fields = load("terse_v3.txt").rstrip("\n").split(";")
    extra = fields[:20] + ["7"] + fields[20:]  # one field too many inside the read block
    with pytest.raises(ParseError) as e:
        parse_terse(";".join(extra) + "\n")
    assert (e.value.kind, e.value.line) == ("invalid", 1) and "percentile cell" in e.value.message
    missing = fields[:6] + fields[7:]  # one field missing in the read block
    with pytest.raises(ParseError) as e:
        parse_terse("x\n" + ";".join(missing) + "\n")
    assert (e.value.kind, e.value.line) == ("invalid", 2)
    bad = fields[:]
    bad[8] = "55ms"  # runtime
    with pytest.raises(ParseError) as e:
        parse_terse(";".join(bad) + "\n")
    assert e.value.kind == "invalid" and "runtime ms" in e.value.message


@pytest.mark.parametrize(
    "text, kind",
    [
        ("", "empty"),
        ("\n\n", "empty"),
        ("hello\nworld\n", "invalid"),
        ("3;fio-3.33;x;0;0\n", "truncated"),
        ("3;fio-3.33;x;zero;0;" + "0;" * 130 + "\n", "invalid"),
    ],
)
def test_bad_input(text, kind):
    with pytest.raises(ParseError) as e:
        parse_terse(text)
    assert e.value.kind == kind and e.value.line is not None


def test_other_formats_are_refused():
    with pytest.raises(ParseError):
        parse_terse(load("normal_only.txt"))
    with pytest.raises(ParseError):
        parse_terse(load("json_only.txt"))


def test_disks_with_slaves():
    # No md device can be made here: the real line's vda section is replaced by an md127 with
    # slaves and its member in the layout of fio's stat.c (show_agg_stats: ";slaves;" then
    # ios r/w, merges r/w, ticks r/w, in_queue, util%), numbers from a real fio-3.16 run.
    line = load("terse_v3.txt").replace(
        ";vda;0;0;0;0;0;0;0;0.00%",
        ";md127;0;228818;0;0;0;0;0;0.00%;slaves;0;230087;0;27;0;6898163;6647102;94.28%"
        ";nvme0n1;0;230087;0;27;0;13717574;13258980;54.05%",
    )
    md, nvme = parse_terse(line).rows("fio_disk_stats")
    assert (md["disk"], md["write_ios"], md["has_slaves"], md["aggr_write_ios"], md["aggr_write_merges"]) == (
        "md127",
        228818,
        True,
        230087,
        27,
    )
    assert (md["aggr_write_ticks_ns"], md["aggr_in_queue_ns"], md["aggr_util_pct"]) == (6898163e6, 6647102e6, 94.28)
    assert (nvme["disk"], nvme["write_merges"], nvme["write_ticks_ns"], nvme["util_pct"], nvme["has_slaves"]) == (
        "nvme0n1",
        27,
        13717574e6,
        54.05,
        False,
    )
    with pytest.raises(ParseError) as e:
        parse_terse(line[: line.index(";slaves;") + 14])
    assert e.value.kind == "truncated"


def test_nan_and_inf_are_stored_null_with_a_warning_and_other_notations_are_refused():
    # reliability-36 input (Low D): a clat min of 'inf' was stored as Infinity and 'nan' as NaN, exit 0, no word;
    # the JSON path stores them NULL and says so. fio prints printf's nan/inf (a NaN's sign too), never 1_000 or +5
    fields = (FIX / "terse_v3.txt").read_text().splitlines()[0].split(";")
    assert fields[13:17] == ["22", "208", "51.351905", "21.689460"]  # the read direction's clat, usec
    damaged = [*fields[:13], "inf", "208", "-nan", *fields[16:]]
    parsed = parse_terse(";".join(damaged) + "\n")
    (read,) = [r for r in parsed.rows("fio_results") if r["direction"] == "read"]
    assert (read["clat_min_ns"], read["clat_max_ns"], read["clat_mean_ns"]) == (None, 208000.0, None)
    assert parsed.warnings == ["line 1: 2 nan/inf value(s) stored as NULL"]
    for token in ("1_000", "+5", "\u0663", "0x10", "1e", "Infinity", "NaN"):
        with pytest.raises(ParseError, match=r"field 7 \(bw KiB/s \(a number\)\)") as e:
            parse_terse(";".join([*fields[:6], token, *fields[7:]]) + "\n")
        assert (e.value.kind, e.value.line) == ("invalid", 1), token
