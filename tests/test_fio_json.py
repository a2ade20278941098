"""fio JSON / JSON+ parser, on real fio 3.33 outputs (tests/fixtures/fio/3.33, see COMMANDS.md).

Expected numbers were read from the fixtures' JSON by hand. Older layouts (fio 2.x: µs latency
objects, io_bytes in KiB, index-keyed JSON+ bins; fio <= 3.3 duplicate "0.00" keys; nan) are
built by editing a real 3.33 document in the test, as each test says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storagelab import units
from storagelab.errors import ParseError
from storagelab.parsers import fio
from storagelab.parsers.fio.fastjson import parse_bytes as fast_path
from storagelab.parsers.fio.json import parse_json

FIX = Path(__file__).parent / "fixtures" / "fio" / "3.33"


def load(name: str) -> str:
    return (FIX / name).read_text()


def json_part(name: str) -> str:
    """The JSON document of a normal,json fixture (from the '{' line to the '}' line)."""
    text = load(name)
    start = text.index("\n{\n") + 1 if not text.startswith("{\n") else 0
    return text[start : text.index("\n}\n", start) + 3]


def one(rows, **where):
    found = [r for r in rows if all(r[k] == v for k, v in where.items())]
    assert len(found) == 1, (where, found)
    return found[0]


# --- real 3.33 documents -------------------------------------------------------------------


def test_group_reporting_write_exact_values_and_mib_vs_mb():
    p = parse_json(load("seq_write_group.txt"))
    assert p.tool == "fio" and p.format == "fio-json" and p.tool_version == "fio-3.33"
    assert p.warnings == []
    job = one(p.rows("fio_jobs"))
    assert job["jobname"] == "seqwrite" and job["groupid"] == 0 and job["error"] == 0
    assert (job["doc_index"], job["is_final"], job["job_index"]) == (0, True, 0)
    assert job["jobs"] is None  # one object for numjobs=2: a group report of unknown size
    assert job["numjobs"] == 2 and job["rw"] == "write" and job["ioengine"] == "psync"
    assert job["block_size_bytes"] == 1024 * 1024  # bs=1M: option sizes are powers of 1024
    assert job["iodepth"] is None  # not set, so not in the JSON options
    assert (job["cpu_usr_pct"], job["cpu_sys_pct"], job["ctx"], job["majf"], job["minf"]) == (
        0.077399,
        0.206398,
        126,
        0,
        28,
    )
    assert job["report_epoch_s"] == 1795263879 and job["report_time"] == "Sat Nov 21 12:24:39 2026"
    assert '"numjobs": "2"' in job["options_json"] and '"direct": "1"' in job["options_json"]

    w = one(p.rows("fio_results"))  # read/trim/sync did no I/O: no rows
    assert w["direction"] == "write" and w["exact"] is True
    assert w["io_bytes"] == 67108864
    assert w["bw_bytes_per_s"] == 34610038  # JSON bw_bytes
    assert w["bw_bytes_per_s"] != 33798 * 1024  # not the rounded "bw" KiB/s field
    # the text part says BW=33.0MiB/s (34.6MB/s): both must hold for bytes/s
    assert round(w["bw_bytes_per_s"] / units.MiB, 1) == 33.0
    assert round(w["bw_bytes_per_s"] / 1e6, 1) == 34.6
    assert w["iops"] == 33.006704 and w["runtime_ns"] == 1939e6 and w["total_ios"] == 64
    assert (w["short_ios"], w["dropped_ios"]) == (0, 0)
    # psync: no submission latency samples (N=0) -> NULL, not 0
    assert (w["slat_min_ns"], w["slat_max_ns"], w["slat_mean_ns"], w["slat_samples"]) == (None, None, None, 0)
    assert (w["clat_min_ns"], w["clat_max_ns"], w["clat_mean_ns"], w["clat_stdev_ns"], w["clat_samples"]) == (
        387065,
        734020,
        529993.6875,
        80139.272782,
        64,
    )
    assert (w["lat_min_ns"], w["lat_max_ns"], w["lat_samples"]) == (415097, 743344, 64)
    # per-sample bandwidth: KiB/s in the JSON (kb_base=1024)
    assert w["bw_min_bytes_per_s"] == 32768 * 1024 and w["bw_max_bytes_per_s"] == 36864 * 1024
    assert w["bw_mean_bytes_per_s"] == pytest.approx(34133.333333 * 1024, abs=1e-6)
    assert (w["bw_agg_pct"], w["bw_samples"], w["iops_min"], w["iops_max"], w["iops_samples"]) == (100.0, 6, 32, 36, 6)

    pct = {r["percentile"]: r["latency_ns"] for r in p.rows("fio_percentiles")}
    assert len(pct) == 17 and {r["kind"] for r in p.rows("fio_percentiles")} == {"clat"}
    assert pct[1.0] == 387072 and pct[50.0] == 509952 and pct[99.9] == 733184 and pct[99.99] == 733184

    buckets = [(r["bucket_lo_ns"], r["bucket_hi_ns"], r["pct"]) for r in p.rows("fio_latency_buckets")]
    assert buckets == [(250e3, 500e3, 45.3125), (500e3, 750e3, 54.6875)]
    depth = {(r["kind"], r["bucket"]): r["pct"] for r in p.rows("fio_iodepths")}
    assert len(depth) == 21 and depth[("depth", "1")] == 100.0 and depth[("submit", "4")] == 100.0
    assert depth[("complete", ">=64")] == 0.0

    g = one(p.rows("fio_groups"))
    assert (g["groupid"], g["direction"], g["derived"], g["exact"]) == (0, "write", True, True)
    assert g["io_bytes"] == 67108864 and g["bw_bytes_per_s"] == 67108864 * 1000 // 1939
    assert g["bw_min_bytes_per_s"] == g["bw_max_bytes_per_s"] == g["bw_bytes_per_s"]
    assert g["run_min_ns"] == g["run_max_ns"] == 1939e6

    d = one(p.rows("fio_disk_stats"))
    assert d["disk"] == "vda" and d["has_slaves"] is False and d["aggr_read_ios"] is None
    assert (d["read_ios"], d["write_ios"], d["read_merges"], d["write_merges"]) == (0, 75, 0, 4)
    assert d["write_ticks_ns"] == 99e6 and d["in_queue_ns"] == 99e6 and d["util_pct"] == 1.202405
    assert d["read_sectors"] is None  # fio >= 3.36 only


def test_line_spans_point_at_the_job_object_after_the_text_preamble():
    text = load("seq_write_group.txt")
    lines = text.split("\n")
    p = parse_json(text)
    job = one(p.rows("fio_jobs"))
    assert lines[job["line_start"] - 1].strip() == "{"
    assert lines[job["line_start"]].strip() == '"jobname" : "seqwrite",'
    assert lines[job["line_end"] - 1].strip() in ("}", "},")
    disk = one(p.rows("fio_disk_stats"))
    assert lines[disk["line_start"]].strip() == '"name" : "vda",'


def test_clones_without_group_reporting_share_a_name():
    p = parse_json(load("clones_nogroup.txt"))
    jobs = p.rows("fio_jobs")
    assert [(j["job_index"], j["jobname"], j["jobs"], j["numjobs"]) for j in jobs] == [
        (0, "clone", 1, 2),
        (1, "clone", 1, 2),
    ]
    assert jobs[0]["line_end"] < jobs[1]["line_start"]
    res = p.rows("fio_results")
    assert [(r["job_index"], r["io_bytes"], r["bw_bytes_per_s"], r["runtime_ns"]) for r in res] == [
        (0, 16777216, 16827699, 997e6),
        (1, 16777216, 16827699, 997e6),
    ]
    g = one(p.rows("fio_groups"))  # text: WRITE: bw=32.1MiB/s (33.7MB/s), 16.0MiB/s-16.0MiB/s
    assert g["io_bytes"] == 2 * 16777216 and g["bw_bytes_per_s"] == 2 * 16777216 * 1000 // 997
    assert g["bw_min_bytes_per_s"] == g["bw_max_bytes_per_s"] == 16827699


def test_two_groups_randrw_and_unified_reporting():
    p = parse_json(load("two_groups.txt"))
    assert [(j["jobname"], j["groupid"], j["block_size_bytes"], j["rw"]) for j in p.rows("fio_jobs")] == [
        ("writer", 0, 128 * 1024, "write"),
        ("reader", 1, 4096, "randread"),
    ]
    assert [(g["groupid"], g["direction"], g["io_bytes"]) for g in p.rows("fio_groups")] == [
        (0, "write", 16777216),
        (1, "read", 4194304),
    ]

    p = parse_json(load("randrw_libaio_jsonplus.txt"))
    assert p.format == "fio-json+"
    r, w = p.rows("fio_results")
    assert (r["direction"], r["io_bytes"], r["total_ios"], r["runtime_ns"]) == ("read", 5840896, 1426, 50e6)
    assert (w["direction"], w["io_bytes"], w["total_ios"]) == ("write", 2547712, 622)
    assert (r["slat_min_ns"], r["slat_max_ns"], r["slat_samples"]) == (3956, 72949, 1426)  # libaio has slat
    assert r["bw_min_bytes_per_s"] is None and r["bw_samples"] == 0  # 50 ms: no bandwidth sample
    job = one(p.rows("fio_jobs"))
    assert (job["ioengine"], job["iodepth"], job["block_size_bytes"]) == ("libaio", 4, 4096)

    p = parse_json(load("unified_mixed.txt"))
    m = one(p.rows("fio_results"))
    assert (m["direction"], m["io_bytes"], m["bw_bytes_per_s"], m["total_ios"]) == ("mixed", 4194304, 93206755, 1024)
    assert [(g["direction"], g["bw_bytes_per_s"]) for g in p.rows("fio_groups")] == [("mixed", 4194304 * 1000 // 45)]

    p = parse_json(load("unified_both.txt"))
    assert [(r["direction"], r["io_bytes"]) for r in p.rows("fio_results")] == [
        ("read", 2031616),
        ("write", 2162688),
        ("mixed", 4194304),
    ]
    groups = {g["direction"]: g for g in p.rows("fio_groups")}
    # text: MIXED: bw=85.1MiB/s (89.2MB/s), 41.2MiB/s-43.9MiB/s: fio sums the READ and WRITE lines
    assert groups["read"]["bw_bytes_per_s"] == 43225872 and groups["write"]["bw_bytes_per_s"] == 46014638
    mixed = groups["mixed"]
    assert mixed["bw_bytes_per_s"] == 43225872 + 46014638 and mixed["io_bytes"] == 4194304
    assert (mixed["bw_min_bytes_per_s"], mixed["bw_max_bytes_per_s"]) == (43225872, 46014638)


def test_json_plus_bins_sum_to_the_io_count():
    p = parse_json(load("randrw_libaio_jsonplus.txt"))
    bins = p.rows("fio_latency_bins")
    assert {(b["direction"], b["kind"]) for b in bins} == {("read", "clat"), ("write", "clat")}
    assert sum(b["count"] for b in bins if b["direction"] == "read") == 1426
    assert sum(b["count"] for b in bins if b["direction"] == "write") == 622
    first = [b for b in bins if b["direction"] == "read"][:3]
    assert [(b["latency_ns"], b["count"]) for b in first] == [(26752, 1), (27520, 1), (29056, 1)]

    p = parse_json(load("seq_read_group_jsonplus.txt"))
    bins = p.rows("fio_latency_bins")
    assert sum(b["count"] for b in bins) == 64 and bins[0]["latency_ns"] == 634880


def test_lat_percentiles_give_clat_and_lat_blocks():
    p = parse_json(load("lat_percentiles.txt"))
    kinds = {}
    for r in p.rows("fio_percentiles"):
        kinds.setdefault(r["kind"], []).append(r)
    assert sorted(kinds) == ["clat", "lat"] and len(kinds["clat"]) == len(kinds["lat"]) == 17


def test_kb_base_1000_sizes_and_bandwidth_samples_are_decimal():
    p = parse_json(load("kb_base_1000.txt"))
    job = one(p.rows("fio_jobs"))
    assert job["block_size_bytes"] == 256000  # bs=256k with kb_base=1000 (the text says 256kB)
    w = one(p.rows("fio_results"))
    assert w["io_bytes"] == 15872000 == 62 * 256000
    assert w["bw_bytes_per_s"] == 15983887  # bw_bytes; the "bw" field (15609) is KiB/s even here
    # per-sample bw is in kb_base units: bw_min 16000 means 16000 kB/s (text: bw (kB/s): min=16000)
    assert w["bw_min_bytes_per_s"] == 16_000_000 and w["bw_mean_bytes_per_s"] == 16_000_000


def test_status_interval_documents():
    p = parse_json(load("status_interval.txt"))
    jobs = p.rows("fio_jobs")
    assert [(j["job_index"], j["doc_index"], j["is_final"]) for j in jobs] == [
        (0, 0, False),
        (1, 1, False),
        (2, 2, False),
        (3, 3, True),
    ]
    assert [j["report_epoch_s"] for j in jobs] == [1795263890, 1795263891, 1795263892, 1795263892]
    assert [(r["job_index"], r["io_bytes"], r["runtime_ns"]) for r in p.rows("fio_results")] == [
        (0, 7536640, 891e6),
        (1, 15925248, 1891e6),
        (2, 24313856, 2891e6),
        (3, 25165824, 3001e6),
    ]
    assert [g["doc_index"] for g in p.rows("fio_groups")] == [0, 1, 2, 3]
    assert p.rows("fio_groups")[-1]["bw_bytes_per_s"] == 25165824 * 1000 // 3001
    disk = one(p.rows("fio_disk_stats"))  # final document only (the table has no doc_index)
    assert (disk["read_ios"], disk["write_ios"], disk["write_merges"]) == (1, 7617, 253)
    assert (disk["read_ticks_ns"], disk["write_ticks_ns"], disk["in_queue_ns"]) == (1e6, 1324e6, 1349e6)
    assert disk["util_pct"] == 7.22408
    assert jobs[1]["line_start"] > jobs[0]["line_end"]


def test_note_line_before_the_json():
    text = load("psync_iodepth_note.txt")
    assert text.startswith("note: both iodepth >= 1 and synchronous I/O engine")
    p = parse_json(text)
    job = one(p.rows("fio_jobs"))
    assert job["jobname"] == "capped" and job["iodepth"] == 4 and job["line_start"] == 13
    assert one(p.rows("fio_results"))["io_bytes"] == 8 * 1024 * 1024
    assert fio.sniff(text) == "fio-json"
    assert one(fio.parse(text).rows("fio_jobs"))["jobname"] == "capped"


def test_live_status_line_glued_to_the_opening_brace():
    # a log captured from a terminal: the last '\r'-terminated eta line precedes the '{' on its line
    doc = json_part("seq_write_group.txt")
    text = "Jobs: 1 (f=1): [W(1)][100.0%][w=16.0MiB/s][w=16 IOPS][eta 00m:00s]\r" + doc
    p = parse_json(text)
    assert one(p.rows("fio_results"))["io_bytes"] == 67108864 and one(p.rows("fio_jobs"))["line_start"] == 12
    assert parse_json(text.replace("\n", "\r\n")).rows("fio_results") == p.rows("fio_results")


def test_name_with_colon_and_fsync_section():
    p = parse_json(load("name_colon_fsync.txt"))
    job = one(p.rows("fio_jobs"))
    assert job["jobname"] == "db: log writer 1" and job["block_size_bytes"] == 16384
    sync = one(p.rows("fio_results"), direction="sync")
    assert sync["total_ios"] == 31 and sync["io_bytes"] is None and sync["bw_bytes_per_s"] is None
    assert (sync["lat_min_ns"], sync["lat_max_ns"], sync["lat_mean_ns"], sync["lat_samples"]) == (
        73870,
        188180,
        88949.16129,
        31,
    )
    assert sync["clat_min_ns"] is None
    sp = {r["percentile"]: r["latency_ns"] for r in p.rows("fio_percentiles") if r["direction"] == "sync"}
    assert {r["kind"] for r in p.rows("fio_percentiles") if r["direction"] == "sync"} == {"lat"}
    assert sp[1.0] == 74240 and sp[99.99] == 187392
    assert one(p.rows("fio_results"), direction="write")["total_ios"] == 128


def test_json_only_file():
    p = parse_json(load("json_only.txt"))
    assert one(p.rows("fio_jobs"))["jobname"] == "jsononly"
    assert one(p.rows("fio_results"))["io_bytes"] == 4 * 1024 * 1024  # size=4M over nrfiles=2


# --- fio's invalid JSON and older layouts (edited real documents) ----------------------------


def test_bare_nan_and_inf_become_null_but_strings_are_untouched():
    doc = json_part("seq_write_group.txt")
    doc = doc.replace('"usr_cpu" : 0.077399', '"usr_cpu" : -nan').replace('"bw_dev" : 1057.582652', '"bw_dev" : inf')
    doc = doc.replace('"jobname" : "seqwrite"', '"jobname" : "x: nan inf"')
    p = parse_json(doc)
    job = one(p.rows("fio_jobs"))
    assert job["jobname"] == "x: nan inf" and job["cpu_usr_pct"] is None and job["cpu_sys_pct"] == 0.206398
    assert one(p.rows("fio_results"))["bw_stdev_bytes_per_s"] is None
    assert any("2 nan/inf value(s)" in w for w in p.warnings)


def test_duplicate_zero_percentile_keys_of_old_fio():
    # fio <= 3.3 padded unused percentile slots with "0.00" : 0 (duplicate keys, fio issue #511)
    doc = json_part("seq_write_group.txt")
    doc = doc.replace('"99.990000" : 733184\n', '"99.990000" : 733184,\n' + '"0.00" : 0,\n' * 2 + '"0.00" : 0\n')
    assert doc.count('"0.00" : 0') == 3
    p = parse_json(doc)
    assert len(p.rows("fio_percentiles")) == 17 and p.warnings == []
    # any other duplicated key is reported (first value kept)
    p = parse_json(doc.replace('"ctx" : 126,', '"ctx" : 126,\n"ctx" : 5,'))
    assert one(p.rows("fio_jobs"))["ctx"] == 126 and any("ctx" in w for w in p.warnings)


def _fio2_document() -> str:
    """seq_write_group's JSON rewritten the way fio 2.2.x printed it: version string, io_bytes in
    KiB, latency objects named slat/clat/lat in µs (values and percentiles divided by 1000),
    no io_kbytes/bw_bytes/N/iops_*/bw_samples, no sync object."""
    doc = json.loads(json_part("seq_write_group.txt"))
    doc["fio version"] = "fio-2.2.10"
    job = doc["jobs"][0]
    del job["sync"]
    for ddir in (job["read"], job["write"], job["trim"]):
        ddir["io_bytes"] = ddir.pop("io_kbytes")
        for key in ["bw_bytes", "bw_samples"] + [k for k in ddir if k.startswith("iops_")]:
            del ddir[key]
        for kind in ("slat", "clat", "lat"):
            obj = ddir.pop(f"{kind}_ns")
            del obj["N"]
            obj.update({k: obj[k] / 1000 for k in ("min", "max", "mean", "stddev")})
            if "percentile" in obj:
                obj["percentile"] = {k: v // 1000 for k, v in obj["percentile"].items()}
            ddir[kind] = obj
    return json.dumps(doc, indent=2)


def test_fio2_layout_microseconds_and_kib():
    doc = _fio2_document()
    assert '"clat": {' in doc and '"io_kbytes"' not in doc and '"N"' not in doc
    p = parse_json(doc)
    assert p.tool_version == "fio-2.2.10"
    w = one(p.rows("fio_results"), direction="write")
    assert w["io_bytes"] == 65536 * 1024  # io_bytes meant KiB before fio 2.21
    assert w["bw_bytes_per_s"] == 33798 * 1024  # only "bw" (KiB/s) exists
    assert (w["clat_min_ns"], w["clat_max_ns"]) == (387065, 734020)  # µs -> ns
    assert w["clat_mean_ns"] == pytest.approx(529993.6875) and w["clat_samples"] is None
    assert w["slat_min_ns"] is None  # all zero and no N: not measured
    pct = {r["percentile"]: r["latency_ns"] for r in p.rows("fio_percentiles")}
    assert pct[1.0] == 387000  # percentile values of a µs object are µs: 387 -> 387000 ns
    g = one(p.rows("fio_groups"))
    assert g["io_bytes"] == 65536 * 1024 and g["exact"] is False
    # 2.21 already had io_bytes in bytes
    p = parse_json(doc.replace('"fio-2.2.10"', '"fio-2.21"'))
    assert one(p.rows("fio_results"), direction="write")["io_bytes"] == 65536
    # no version string: the missing io_kbytes/bw_bytes still say "KiB", with a warning
    p = parse_json(doc.replace('"fio version": "fio-2.2.10",', ""))
    assert one(p.rows("fio_results"), direction="write")["io_bytes"] == 65536 * 1024
    assert any('no "fio version"' in w for w in p.warnings)


def test_json_plus_bins_in_microseconds_and_by_index():
    doc = json_part("seq_read_group_jsonplus.txt")
    # fio 2.20-2.x: bins keyed by µs value inside the µs "clat" object
    old = doc.replace('"fio-3.33"', '"fio-2.20"').replace('"clat_ns"', '"clat"')
    bins = parse_json(old).rows("fio_latency_bins")
    assert bins[0]["latency_ns"] == 634880 * 1000 and sum(b["count"] for b in bins) == 64
    # fio <= 2.19: keyed by bucket index with FIO_IO_U_PLAT_* metadata -> not stored, warned
    indexed = doc.replace('"bins" : {\n', '"bins" : {\n"FIO_IO_U_PLAT_BITS" : 6,\n"FIO_IO_U_PLAT_VAL" : 64,\n')
    p = parse_json(indexed)
    assert p.rows("fio_latency_bins") == [] and any("bucket index" in w for w in p.warnings)


def test_a_json_plus_bin_count_past_a_float_is_one_parse_error_not_a_traceback():
    """Found by fuzzing (h4, session 35): a bin count of 1e999 decodes to inf, and int(inf) was an OverflowError."""
    doc = json_part("seq_read_group_jsonplus.txt").replace('"634880" : 1,', '"634880" : 1e999,', 1)
    with pytest.raises(ParseError) as e:
        parse_json(doc)
    assert (e.value.kind, e.value.line) == ("invalid", 12)
    assert "JSON+ bin count inf of job 0 read clat is not a whole number" in str(e.value)
    assert fast_path(doc.encode()) is None  # the fast path declines it; the general path above decides


# --- bad input ---------------------------------------------------------------------------------


def test_truncated_json_is_reported_as_truncated_with_a_line():
    text = load("seq_write_group.txt")
    cut = text[: text.index('"iodepth_level"')]
    with pytest.raises(ParseError) as e:
        parse_json(cut)
    assert e.value.kind == "truncated" and e.value.line == cut.count("\n") + 1
    assert "cut short" in str(e.value)


@pytest.mark.parametrize(
    "text, kind, line",
    [
        ("", "empty", 1),
        ("   \n\n", "empty", 1),
        ("hello world\nno json here\n", "invalid", 1),
        ('note: x\n{\n  "fio version" : "fio-3.33",\n  "jobs" : [ oops ]\n}\n', "invalid", 4),
        ('{\n  "fio version" : "fio-3.33"\n}\n', "invalid", 1),
        ('{\n  "jobs" : [ { "groupid" : 0 } ]\n}\n', "invalid", 2),
        ('{\n  "jobs" : [\n  ]\n]\n', "invalid", 4),
        ('{\n  "jobs" : [ 1, 2 ]\n}\n', "invalid", 1),
    ],
)
def test_bad_input_gives_parse_error(text, kind, line):
    with pytest.raises(ParseError) as e:
        parse_json(text)
    assert (e.value.kind, e.value.line) == (kind, line)


def test_wrong_types_and_other_tools_give_parse_errors():
    doc = json_part("seq_write_group.txt")
    with pytest.raises(ParseError) as e:
        parse_json(doc.replace('"ctx" : 126', '"ctx" : "many"'))
    assert e.value.kind == "invalid" and e.value.line == 12 and "ctx" in e.value.message
    with pytest.raises(ParseError):
        parse_json(doc.replace('"disk_util" : [', '"disk_util" : [ 5, '))
    with pytest.raises(ParseError):  # terse output is not JSON
        parse_json(load("terse_v3.txt"))
    with pytest.raises(ParseError):
        parse_json(load("normal_only.txt"))


# --- units: fio option sizes --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, kb_base, expected",
    [
        ("4k", 1024, 4096),
        ("4K", 1024, 4096),
        ("4kb", 1024, 4096),
        ("4KiB", 1024, 4000),
        ("1M", 1024, 1048576),
        ("1m", 1024, 1048576),
        ("2g", 1024, 2 * 1024**3),
        ("0x1000", 1024, 4096),
        ("512", 1024, 512),
        ("4k", 1000, 4000),
        ("4KiB", 1000, 4096),
        ("256k", 1000, 256000),
        ("4Ki", 1024, 4096),
    ],
)
def test_fio_option_bytes(text, kb_base, expected):
    # checked against fio 3.33's own preamble: --bs=4kib prints "bs=(R) 4000B-4000B"
    assert units.fio_option_bytes(text, kb_base) == expected


@pytest.mark.parametrize("text", ["", "k", "4x", "1.5M", "4 k b", "50%"])
def test_fio_option_bytes_rejects(text):
    with pytest.raises(units.UnitError):
        units.fio_option_bytes(text)


def test_disk_with_slaves_and_sectors():
    # No md/dm device can be made on the test machine, so the vda entry of a real document is
    # replaced by the md127 + nvme0n1 pair of a real fio-3.16 run (docs/formats/log-formats.md A.10), in the
    # layout fio's stat.c json_array_add_disk_util prints: aggr_* keys, "aggr_write_merge" singular;
    # the *_sectors keys are those of fio >= 3.36.
    md = (
        '{\n      "name" : "md127",\n      "read_ios" : 0,\n      "write_ios" : 228818,\n'
        '      "read_sectors" : 0,\n      "write_sectors" : 1830544,\n'
        '      "read_merges" : 0,\n      "write_merges" : 0,\n      "read_ticks" : 0,\n'
        '      "write_ticks" : 0,\n      "in_queue" : 0,\n      "util" : 0.000000,\n'
        '      "aggr_read_ios" : 0,\n      "aggr_write_ios" : 230087,\n      "aggr_read_sectors" : 0,\n'
        '      "aggr_write_sectors" : 1840696,\n      "aggr_read_merges" : 0,\n      "aggr_write_merge" : 27,\n'
        '      "aggr_read_ticks" : 0,\n      "aggr_write_ticks" : 6898163,\n      "aggr_in_queue" : 6647102,\n'
        '      "aggr_util" : 94.280000\n    },\n    {\n      "name" : "nvme0n1",\n      "read_ios" : 0,\n'
        '      "write_ios" : 230087,\n      "read_merges" : 0,\n      "write_merges" : 27,\n'
        '      "read_ticks" : 0,\n      "write_ticks" : 13717574,\n      "in_queue" : 13258980,\n'
        '      "util" : 54.050000\n    }'
    )
    doc = json_part("seq_write_group.txt")
    start = doc.index("{", doc.index('"disk_util"'))
    doc = doc[:start] + md + doc[doc.index("}", start) + 1 :]
    p = parse_json(doc)
    md127, nvme = p.rows("fio_disk_stats")
    assert (md127["disk"], md127["has_slaves"], md127["write_ios"], md127["write_sectors"]) == (
        "md127",
        True,
        228818,
        1830544,
    )
    assert (md127["aggr_write_ios"], md127["aggr_write_sectors"], md127["aggr_write_merges"]) == (230087, 1840696, 27)
    assert (md127["aggr_write_ticks_ns"], md127["aggr_in_queue_ns"], md127["aggr_util_pct"]) == (
        6898163e6,
        6647102e6,
        94.28,
    )
    assert (nvme["disk"], nvme["has_slaves"], nvme["aggr_write_merges"], nvme["write_ticks_ns"]) == (
        "nvme0n1",
        False,
        None,
        13717574e6,
    )
    lines = doc.split("\n")
    assert lines[md127["line_start"]].strip() == '"name" : "md127",'
    assert lines[nvme["line_start"]].strip() == '"name" : "nvme0n1",'


# --- the bytes fast path (fastjson.parse_bytes) -------------------------------------------------


def _documents():
    """The JSON document of every real fio output that has one (the last, for several)."""
    root = Path(__file__).parents[1]
    for path in sorted([*root.joinpath("tests", "fixtures").rglob("*"), *root.joinpath("data", "raw").rglob("*")]):
        if path.is_file() and path.suffix not in (".md", ".csv", ".jsonl") and b'"fio version"' in path.read_bytes():
            lines = path.read_bytes().split(b"\n")
            opens = [i for i, ln in enumerate(lines) if ln == b"{"]
            if opens:
                end = lines.index(b"}", opens[-1])
                yield path.relative_to(root).as_posix(), b"\n".join(lines[opens[-1] : end + 1]) + b"\n"


DOCUMENTS = dict(_documents())


def test_fast_path_documents_found():
    assert len(DOCUMENTS) >= 15


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_fast_path_equals_general_path_on_real_documents(name):
    """Every real document is taken by the fast path (orjson, spans from fio's indentation) and
    gives exactly the general path's rows, value types included, warnings and format; but those of GENERAL_PATH."""

    data = DOCUMENTS[name]
    if name in GENERAL_PATH:  # a key printed twice: the fast path declines it, the general path reads it
        assert fast_path(data) is None
        return
    _same_or_refused(fast_path(data), data, name)


# real documents with a duplicated key (fio lists an option given twice twice in "job options")
GENERAL_PATH = frozenset(("tests/fixtures/trial-h8/ext4-buffered-read-small.json",))
# real documents the general path refuses (a client/server report of two servers): the fast path declines them
REFUSED = frozenset(("tests/fixtures/fio/3.33/client-server/two-servers.json",))


def _same_or_refused(fast, data: bytes, name: str) -> None:
    from storagelab.parsers import decode

    if name in REFUSED:
        assert fast is None
        with pytest.raises(ParseError, match="client/server report of 2 servers"):
            parse_json(decode(data))
        return
    _same(fast, parse_json(decode(data)))


def _same(fast, slow):
    """Exactly the same Parsed: format, version, warnings, tables in order, every value and its type."""
    assert fast is not None
    assert (fast.format, fast.tool_version, fast.warnings) == (slow.format, slow.tool_version, slow.warnings)
    assert list(fast.tables) == list(slow.tables)
    for table, rows in slow.tables.items():
        got = list(fast.tables[table])
        assert got == list(rows), table
        assert [{k: type(v) for k, v in r.items()} for r in got] == [{k: type(v) for k, v in r.items()} for r in rows]


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
@pytest.mark.parametrize("layout", ["indent=2", "one line", "indent=3, sorted keys"])
def test_both_paths_agree_on_every_document_in_other_layouts(name, layout):
    """Each real document re-serialized (as the benchmark's corpora are): the typed fast path takes it and gives
    exactly the general path's rows."""

    obj = json.loads(DOCUMENTS[name])
    data = {
        "indent=2": lambda: json.dumps(obj, indent=2),
        "one line": lambda: json.dumps(obj),
        "indent=3, sorted keys": lambda: json.dumps(obj, indent=3, sort_keys=True),
    }[layout]().encode()
    _same_or_refused(fast_path(data), data, name)


@pytest.mark.parametrize(
    "change, why",
    [
        (lambda d: d.replace(b'"total_ios" : 1024', b'"total_ios" : 1024.5', 1), "a count that is not whole"),
        (lambda d: d.replace(b'"ctx" : 1020', b'"ctx" : "1020"', 1), "a string where a number belongs"),
        (lambda d: d.replace(b'"jobname" : "jsononly"', b'"jobname" : 7', 1), "a name that is not a string"),
        (lambda d: d.replace(b'"eta" : 2147483647', b'"eta" : 123456789012345678901234', 1), "past 64 bits, unread"),
        (lambda d: d.replace(b'"1.000000" : ', b'"one" : ', 1), "a percentile key that is not a number"),
        (lambda d: d.replace(b'"fio version" : "fio-3.33"', b'"fio version" : "3.33"', 1), "no version"),
    ],
)
def test_typed_fast_path_declines_what_it_cannot_type(change, why):
    """What the Struct types do not hold exactly (or the general path reads with a warning or an error) is
    declined; the general path then gives its rows or its error."""
    from storagelab.parsers import decode

    data = json_part("json_only.txt").encode()
    changed = change(data)
    assert changed != data, why
    assert fast_path(changed) is None, why
    try:
        parse_json(decode(changed))
    except ParseError as e:
        assert e.line is not None, why


@pytest.mark.parametrize(
    "change, why",
    [
        (lambda d: d.replace(b"\n", b"\r\n"), "CRLF"),
        (lambda d: b"note: x\n" + d, "text before the document"),
        (lambda d: d + d, "two documents"),
        (lambda d: d.replace(b'"iops" : 0.000000', b'"iops" : nan', 1), "bare nan"),
        (lambda d: d.replace(b'"error" : 0,', b'"error" : 0,\n      "error" : 0,', 1), "a duplicate key"),
        (lambda d: d.replace(b"\n    {", b"\n  {"), "objects not where fio puts them"),
        (lambda d: d[:-40], "cut short"),
        (lambda d: d.replace(b'"jobs" : [', b'"jobz" : ['), "no jobs array"),
        (lambda d: d.replace(b'"jobname" : "jsononly"', b'"jobname" : "\\u006asononly"'), "a \\u escape"),
        (lambda d: d.replace(b'"total_ios" : 1024', b'"total_ios" : 9007199254740993', 1), "an integer past 2^53"),
    ],
)
def test_fast_path_declines_what_it_does_not_know(change, why):
    """Anything but one document as fio prints it goes to the general path, which gives the same
    rows (or the error) for it."""
    from storagelab.parsers import parse_bytes

    data = json_part("json_only.txt").encode()
    assert fast_path(data) is not None
    changed = change(data)
    assert changed != data, why
    assert fast_path(changed) is None, why
    try:
        parse_bytes(changed)  # the general path still reads it (or says why not)
    except ParseError as e:
        assert e.line is not None, why


def test_four_job_objects_json_plus():
    """numjobs=4 without group_reporting, JSON+ only (many_jobs_jsonplus.txt): four job objects
    of one group, each 1024 x 4 KiB reads; every job's bins count its 1024 completions."""
    p = fio.parse(load("many_jobs_jsonplus.txt"))
    assert (p.format, p.tool_version, p.warnings) == ("fio-json+", "fio-3.33", [])
    jobs = p.rows("fio_jobs")
    assert [(j["jobname"], j["groupid"], j["jobs"], j["iodepth"], j["block_size_bytes"]) for j in jobs] == [
        ("randread", 0, 1, 8, 4096)
    ] * 4
    assert [(j["line_start"], j["line_end"]) for j in jobs] == [(13, 323), (324, 627), (628, 936), (937, 1243)]
    res = p.rows("fio_results")
    assert [(r["direction"], r["io_bytes"], r["total_ios"], r["bw_bytes_per_s"], r["runtime_ns"]) for r in res] == [
        ("read", 4 * units.MiB, 1024, 65536000.0, 64e6)
    ] * 3 + [("read", 4 * units.MiB, 1024, 66576253.0, 63e6)]
    for ji in range(4):
        assert sum(b["count"] for b in p.rows("fio_latency_bins") if b["job_index"] == ji) == 1024
    # the group, recomputed as fio does: 16 MiB over the longest runtime (64 ms)
    (g,) = p.rows("fio_groups")
    assert (g["io_bytes"], g["bw_bytes_per_s"]) == (16 * units.MiB, 16 * units.MiB * 1000 // 64)


def test_three_different_jobs_in_one_group():
    """Three jobs (128k write, 4k randread, 16k randrw) in group 0, JSON only (three_jobs_json.txt)."""
    p = fio.parse(load("three_jobs_json.txt"))
    assert [(j["jobname"], j["rw"], j["block_size_bytes"]) for j in p.rows("fio_jobs")] == [
        ("w", "write", 131072),
        ("r", "randread", 4096),
        ("rw", "randrw", 16384),
    ]
    res = [
        (r["job_index"], r["direction"], r["io_bytes"], r["total_ios"], r["runtime_ns"]) for r in p.rows("fio_results")
    ]
    assert res == [
        (0, "write", 4 * units.MiB, 32, 6e6),
        (1, "read", 4 * units.MiB, 1024, 64e6),
        (2, "read", 2 * units.MiB, 128, 21e6),
        (2, "write", 2 * units.MiB, 128, 21e6),
    ]
    groups = {g["direction"]: g for g in p.rows("fio_groups")}
    # read: 4 MiB + 2 MiB over 64 ms; write: 4 MiB + 2 MiB over 21 ms (integer bytes/s, as fio)
    assert groups["read"]["bw_bytes_per_s"] == 6 * units.MiB * 1000 // 64 == 98304000
    assert groups["write"]["bw_bytes_per_s"] == 6 * units.MiB * 1000 // 21 == 299593142
    (d,) = p.rows("fio_disk_stats")
    assert (d["disk"], d["read_ios"], d["util_pct"]) == ("vda", 0, 0.0)


# --- any layout: one line, json.dumps(indent=2), keys reordered (fixtures/fio/relayout, COMMANDS.md) ---------

RELAYOUT = Path(__file__).parent / "fixtures" / "fio" / "relayout"


def _parse_file(path: Path):
    from storagelab.parsers import parse_bytes

    return parse_bytes(path.read_bytes())[0]


def _without_spans(parsed) -> dict:
    """Rows without line spans, in a canonical order (sorted keys reorder percentiles and options)."""

    def clean(r):
        r = {k: v for k, v in r.items() if k not in ("line_start", "line_end")}
        if r.get("options_json"):
            r["options_json"] = json.loads(r["options_json"])
        return r

    return {t: sorted((clean(r) for r in rows), key=repr) for t, rows in parsed.tables.items()}


# the line spans of job 0's "read" and "write" objects, job 1's, and the group's read and write (job 0's first line to
# job 1's last) in fio's layout (json.dumps(indent=2) keeps its lines)
_INDENTED_BLOCKS = [(25, 86), (87, 148), (291, 352), (353, 414)], [(25, 352), (87, 414)]


@pytest.mark.parametrize(
    "name, job_spans, disk_span, blocks",
    [
        ("fio-layout.json", [(12, 277), (278, 543)], (546, 556), _INDENTED_BLOCKS),
        ("indent2.json", [(12, 277), (278, 543)], (546, 556), _INDENTED_BLOCKS),
        ("oneline.json", [(1, 1), (1, 1)], (1, 1), ([(1, 1)] * 4, [(1, 1)] * 2)),
        ("sorted-compact.json", [(1, 1), (1, 1)], (1, 1), ([(1, 1)] * 4, [(1, 1)] * 2)),
    ],
)
def test_any_layout_is_detected_by_content_and_gives_the_same_rows(name, job_spans, disk_span, blocks):
    """fio 3.33's randrw document (2 jobs, numjobs=2) as fio printed it and re-serialized three ways:
    detected as fio JSON by content, the same rows whatever the layout (sort_keys=True reorders the
    percentile rows and the options), line spans where known: a job's rows its object's, a direction's results
    and percentiles its direction object's (finding 21 of the new-user trial), a group's its jobs' direction
    objects'."""
    from storagelab.parsers import decode, detect

    mod, fmt = detect(decode((RELAYOUT / name).read_bytes()))
    assert (mod.TOOL, fmt) == ("fio", "fio-json")
    p = _parse_file(RELAYOUT / name)
    assert (p.format, p.tool_version, p.warnings) == ("fio-json", "fio-3.33", [])
    assert _without_spans(p) == _without_spans(_parse_file(RELAYOUT / "fio-layout.json"))
    assert [(j["line_start"], j["line_end"]) for j in p.rows("fio_jobs")] == job_spans
    assert [(r["line_start"], r["line_end"]) for r in p.rows("fio_results")] == blocks[0]
    assert [(g["direction"], g["line_start"], g["line_end"]) for g in p.rows("fio_groups")] == [
        ("read", *blocks[1][0]),
        ("write", *blocks[1][1]),
    ]
    by_direction = {(r["job_index"], r["direction"]): (r["line_start"], r["line_end"]) for r in p.rows("fio_results")}
    assert all(
        (r["line_start"], r["line_end"]) == by_direction[r["job_index"], r["direction"]]
        for r in p.rows("fio_percentiles")
    )
    assert {(b["line_start"], b["line_end"]) for b in p.rows("fio_latency_buckets")} == set(job_spans)
    (disk,) = p.rows("fio_disk_stats")
    assert (disk["disk"], disk["line_start"], disk["line_end"]) == ("vda", *disk_span)
    res = [
        (r["job_index"], r["direction"], r["io_bytes"], r["bw_bytes_per_s"], r["total_ios"])
        for r in p.rows("fio_results")
    ]
    assert res == [
        (0, "read", 2031616.0, 28216888.0, 496),
        (0, "write", 2162688.0, 30037333.0, 528),
        (1, "read", 1990656.0, 28037408.0, 486),
        (1, "write", 2203648.0, 31037295.0, 538),
    ]
    assert one(p.rows("fio_percentiles"), job_index=1, direction="write", percentile=99.99)["latency_ns"] == 6389760.0


def test_general_path_gives_the_same_spans_as_the_fast_path_in_every_layout():
    from storagelab.parsers import decode

    for path in sorted(RELAYOUT.glob("*.json")):
        data = path.read_bytes()
        fast, slow = fast_path(data), parse_json(decode(data))
        assert fast is not None, path.name
        assert {t: list(r) for t, r in fast.tables.items()} == {t: list(r) for t, r in slow.tables.items()}, path.name


def test_other_indent_widths_keep_exact_spans():
    """json.dumps(indent=4) puts the job objects 8 columns in: still exact spans on both paths."""
    from storagelab.parsers import decode

    data = json.dumps(json.loads((RELAYOUT / "fio-layout.json").read_bytes()), indent=4).encode()
    fast, slow = fast_path(data), parse_json(decode(data))
    assert fast is not None
    assert [(j["line_start"], j["line_end"]) for j in fast.rows("fio_jobs")] == [(12, 277), (278, 543)]
    assert {t: list(r) for t, r in fast.tables.items()} == {t: list(r) for t, r in slow.tables.items()}


def test_fio_3_1_duplicate_zero_keys_take_the_fast_path():
    """fio-plot's published fio 3.1 JSON (fixtures/fio/3.1): every percentile map ends in nine
    '"0.00" : 0' keys. orjson keeps the last of them, the general path the first; neither is stored,
    so the fast path takes the file and gives the same rows, with no warning."""
    from storagelab.parsers import decode

    path = Path(__file__).parent / "fixtures" / "fio" / "3.1" / "fioplot-randread-1-1.json"
    data = path.read_bytes()
    assert data.count(b'"0.00" : 0') == 9
    fast, slow = fast_path(data), parse_json(decode(data))
    assert fast is not None
    assert (fast.format, fast.tool_version, fast.warnings) == ("fio-json", "fio-3.1", [])
    assert {t: list(r) for t, r in fast.tables.items()} == {t: list(r) for t, r in slow.tables.items()}
    (job,) = fast.rows("fio_jobs")
    assert (job["jobname"], job["rw"], job["iodepth"], job["line_start"], job["line_end"]) == (
        "random-read",
        "randread",
        1,
        7,
        269,
    )
    (res,) = fast.rows("fio_results")
    # fio 3.1 has no bw_bytes: bw (KiB/s) x 1024
    assert (res["io_bytes"], res["bw_bytes_per_s"], res["total_ios"]) == (1625501696.0, 27090944.0, 396851)
    assert len(fast.rows("fio_percentiles")) == 17


def test_what_the_fast_path_declines_reads_the_same_on_the_general_path():
    """The fast path's comparison of the decoded object with the bytes declines a \\u escape (the string comes
    back as its character) and an integer past 2^53 - 1 (orjson's strict encoding): the general path reads both,
    the escaped name as its character and the integer exactly."""
    from storagelab.parsers import parse_bytes

    data = json_part("json_only.txt").encode()
    escaped = data.replace(b'"jobname" : "jsononly"', b'"jobname" : "\\u006asononly"')
    assert fast_path(escaped) is None
    assert parse_bytes(escaped)[0].rows("fio_jobs")[0]["jobname"] == "jsononly"
    big = data.replace(b'"total_ios" : 1024', b'"total_ios" : 9007199254740993', 1)
    assert fast_path(big) is None
    assert parse_bytes(big)[0].rows("fio_results")[0]["total_ios"] == 9007199254740993
    assert fast_path(data.replace(b'"total_ios" : 1024', b'"total_ios" : 9007199254740991', 1)) is not None


def test_a_duplicate_key_other_than_zero_padding_takes_the_general_path():
    from storagelab.parsers import parse_bytes

    data = (RELAYOUT / "oneline.json").read_bytes().replace(b'"error": 0,', b'"error": 0, "error": 7,', 1)
    assert fast_path(data) is None
    p = parse_bytes(data)[0]
    assert p.warnings == ["line 1: duplicate JSON keys kept first value: error"]
    assert p.rows("fio_jobs")[0]["error"] == 0


def test_warning_for_unknown_latency_keys():
    """fio 3.33 with cmdprio_percentage=50 adds a "prios" array of per-priority latencies: not stored, named."""
    p = _parse_file(FIX / "cmdprio_json.txt")
    assert p.warnings == ["line 1: latency keys not understood, not stored: prios"]
    (res,) = p.rows("fio_results")
    assert (res["direction"], res["total_ios"], res["clat_samples"]) == ("read", 1024, 1024)


def test_warning_when_bw_and_bw_bytes_disagree():
    """fio prints bw = bw_bytes // 1024 (all 101 pairs in the fixtures): a document where they disagree
    (edited here from a real one) keeps bw_bytes and says so."""
    data = (RELAYOUT / "fio-layout.json").read_bytes()
    assert b'"bw_bytes" : 28216888,\n        "bw" : 27555,' in data
    p = fio.parse(data.replace(b'"bw" : 27555,', b'"bw" : 2755,', 1).decode())
    assert p.warnings == ["line 12: job 0 read: bw_bytes=2.82169e+07 B/s and bw=2755 KiB/s disagree; bw_bytes stored"]
    assert p.rows("fio_results")[0]["bw_bytes_per_s"] == 28216888.0
    assert fio.parse(data.decode()).warnings == []


def test_damage_inside_the_results_stays_an_error():
    data = (RELAYOUT / "oneline.json").read_bytes()
    cut = data[: data.index(b'"write"')]
    with pytest.raises(ParseError) as e:
        _parse_file_bytes(cut)
    assert (e.value.kind, e.value.line) == ("truncated", 1)
    with pytest.raises(ParseError) as e:
        _parse_file_bytes(data.replace(b'"total_ios": 496', b'"total_ios": "x"', 1))
    assert e.value.kind == "invalid"


def _parse_file_bytes(data: bytes):
    from storagelab.parsers import parse_bytes

    return parse_bytes(data)[0]


def _real_fio_files():
    root = Path(__file__).parents[1]
    for path in sorted([*root.joinpath("tests", "fixtures").rglob("*"), *root.joinpath("data", "raw").rglob("*")]):
        if (
            path.is_file()
            and path.suffix not in (".md", ".csv", ".sh", ".jsonl")
            and b'"fio version"' in path.read_bytes()
        ):
            yield path.relative_to(root).as_posix()


REAL_FIO_FILES = list(_real_fio_files())


@pytest.mark.parametrize("name", REAL_FIO_FILES)
def test_fast_path_equals_general_path_on_every_real_file(name):
    """The whole file (not only its JSON part): taken by the fast path when it is one JSON document,
    and then exactly the general path's result; declined when it also holds text or several documents."""
    from storagelab.parsers import decode, parse_text
    from storagelab.parsers.fio import parse_bytes as fio_fast

    data = (Path(__file__).parents[1] / name).read_bytes()
    fast = fio_fast(data)
    if name in REFUSED:
        assert fast is None
        with pytest.raises(ParseError, match="client/server report of 2 servers"):
            parse_text(decode(data))
        return
    slow = parse_text(decode(data))[0]
    if fast is None:
        # (a blank line before the '{', as fio --client prints: declined, its lines would start one further down)
        text = not data.startswith(b"{") or data.count(b'"fio version"') > 1 or b"(groupid=" in data
        assert text or name in GENERAL_PATH, name
        return
    assert (fast.format, fast.tool_version, fast.warnings) == (slow.format, slow.tool_version, slow.warnings)
    assert list(fast.tables) == list(slow.tables)
    for table, rows in slow.tables.items():
        got = list(fast.tables[table])
        assert got == list(rows), table
        assert [{k: type(v) for k, v in r.items()} for r in got] == [{k: type(v) for k, v in r.items()} for r in rows]


def test_fast_path_takes_the_single_document_files():
    from storagelab.parsers.fio import parse_bytes as fio_fast

    root = Path(__file__).parents[1]
    taken = [n for n in REAL_FIO_FILES if fio_fast((root / n).read_bytes()) is not None]
    assert len(taken) >= 10
    assert {"tests/fixtures/fio/relayout/oneline.json", "tests/fixtures/fio/3.1/fioplot-randread-1-1.json"} <= set(
        taken
    )


def test_registry_offers_every_modules_fast_path_and_names_no_parser(monkeypatch):
    """parsers.parse_bytes tries each module's optional parse_bytes (in MODULES order) before the general
    path; the registry's source names no parser module."""
    import inspect
    import types

    from storagelab import parsers
    from storagelab.parsers.base import Parsed

    assert "fio" not in inspect.getsource(parsers.parse_bytes) + inspect.getsource(parsers._fast_paths)
    fake = types.ModuleType("fake")
    fake.TOOL = "fake"
    fake.parse_bytes = lambda data: Parsed("fake", "fake-fmt") if data == b"FAKE" else None
    monkeypatch.setattr(parsers, "_FAST", [(fake.parse_bytes, fake)] + parsers._fast_paths())
    assert parsers.parse_bytes(b"FAKE")[1] is fake
    data = (RELAYOUT / "oneline.json").read_bytes()
    assert parsers.parse_bytes(data)[1] is fio  # declined by the fake, taken by fio's


def test_keys_in_another_order_keep_each_objects_own_span():
    """json.dumps(indent=2, sort_keys=True) puts "disk_util" before "jobs": each job and disk row still
    points at its own object's lines, on both paths."""
    from storagelab.parsers import decode

    data = json.dumps(json.loads((RELAYOUT / "fio-layout.json").read_bytes()), indent=2, sort_keys=True).encode()
    lines = data.decode().split("\n")
    for p in (fast_path(data), parse_json(decode(data))):
        assert [(j["line_start"], j["line_end"]) for j in p.rows("fio_jobs")] == [(22, 287), (288, 553)]
        (disk,) = p.rows("fio_disk_stats")
        assert (disk["line_start"], disk["line_end"]) == (3, 13)
        assert lines[disk["line_start"]].strip() == '"in_queue": 0,' and lines[22].strip() == '"ctx": 1024,'


def test_fio_2_1_bw_agg_is_the_mean_not_a_percentage():
    """fio 2.1.4 (PerfKitBenchmarker's published test data) wrote the mean bandwidth under bw_agg: 63936.8 was
    stored as a percent of the group. Now no bw_agg_pct, the mean kept (KiB/s -> bytes/s), and a warning."""
    from storagelab.parsers import parse_bytes

    path = Path(__file__).parent / "fixtures" / "fio" / "published" / "pkb-fio-2.1.4-five-jobs.json"
    parsed, _ = parse_bytes(path.read_bytes(), str(path))
    rows = [r for r in parsed.rows("fio_results")]
    assert [(r["job_index"], r["direction"], r["bw_agg_pct"], r["bw_mean_bytes_per_s"]) for r in rows] == [
        (0, "write", None, 63936.8 * 1024),
        (1, "read", None, 130255.2 * 1024),
        (2, "write", None, 6446.55 * 1024),
        (3, "read", None, 1275.52 * 1024),
        (4, "read", None, 1284.71 * 1024),
    ]
    assert len(parsed.warnings) == 5 and parsed.warnings[0] == (
        "line 4: job 0 write: bw_agg=63936.8 is not a percentage (it equals bw_mean or passes 100: fio 2.1 wrote "
        "the mean bandwidth there); bw_agg_pct not stored"
    )
    # a share of the group as later versions write it is kept: two clones of a real fio 3.33 job, ~50 % each
    real = parse_json((FIX / "clones_nogroup.txt").read_text())
    assert [r["bw_agg_pct"] for r in real.rows("fio_results")] == [50.239453, 50.239453]
    assert real.warnings == []


def test_fast_path_warns_for_job_options_every_time():
    """The fast path keeps what it made of a job's options for the next file with the same options, but only
    when they warned of nothing: an option it cannot read warns in every file, as on the general path."""
    from storagelab.parsers import decode

    data = json_part("json_only.txt").encode().replace(b'"bs" : "4k"', b'"bs" : "4q"', 1)
    want = ["line 12: option bs='4q' not understood"]
    for _ in range(2):
        fast = fast_path(data)
        _same(fast, parse_json(decode(data)))
        assert fast.warnings == want
        assert fast.rows("fio_jobs")[0]["block_size_bytes"] is None
    plain = json_part("json_only.txt").encode()
    assert fast_path(plain).rows("fio_jobs")[0]["block_size_bytes"] == 4096
