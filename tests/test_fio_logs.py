"""fio's log files (write_bw_log / write_iops_log / write_lat_log / write_hist_log): real fio 3.33
outputs in tests/fixtures/fio/3.33/logs/ (COMMANDS.md), checked value by value and against the
JSON+ output of the same run."""

from __future__ import annotations

import json
import statistics

import duckdb
import polars as pl
import pytest
from conftest import FIXTURES

from storagelab.errors import ParseError
from storagelab.parsers import detect, parse_bytes
from storagelab.parsers.base import Parsed, lines_of
from storagelab.parsers.fio import logs

LOGS = FIXTURES / "fio" / "3.33" / "logs"


def parse(name: str):
    path = LOGS / name
    parsed, mod = parse_bytes(path.read_bytes(), str(path))
    return parsed


def samples(name: str) -> list[dict]:
    return list(parse(name).rows("fio_log_samples"))


def fio_json(run: str) -> dict:
    text = (LOGS / f"{run}.txt").read_text()
    return json.loads(text[text.index("{") : text.rindex("}") + 1])


def values(name: str, direction: str | None = None) -> list[int]:
    return [r["value"] for r in samples(name) if direction is None or r["direction"] == direction]


def test_every_log_fixture_is_detected_by_content():
    names = sorted(p.name for p in LOGS.glob("*.log"))
    assert len(names) == 26
    for name in names:
        data = (LOGS / name).read_bytes()
        if not data:  # psync has no submission latency: fio writes empty slat logs
            assert name.endswith("_slat.1.log") or name.endswith("_slat.2.log") or name == "single_slat.log"
            with pytest.raises(ParseError) as e:
                parse_bytes(data, name)
            assert e.value.kind == "empty"
            continue
        mod, fmt = detect(data.decode())
        assert mod.TOOL == "fio"
        assert fmt == ("fio-hist-log" if "_hist" in name else "fio-log"), name
        # the fio outputs beside them are still fio's normal + JSON+ output
    for run in ("raw", "avg", "single"):
        assert detect((LOGS / f"{run}.txt").read_text())[1] == "fio-json+normal"


def test_raw_bw_log_first_and_last_sample_exact():
    rows = samples("raw_bw.1.log")
    assert len(rows) == 64
    assert rows[0] == dict(
        prefix="raw",
        kind="bw",
        job_index=1,
        time_ns=0,
        value=37500,
        bw_bytes_per_s=37500 * 1024.0,
        iops=None,
        latency_ns=None,
        direction="read",
        block_size_bytes=4096,
        offset_bytes=12288,
        priority=0,
        windowed=False,
        line_start=1,
        line_end=1,
    )
    last = (LOGS / "raw_bw.1.log").read_text().splitlines()[-1].split(", ")
    t, v, d, bs, off, prio = map(int, last)
    assert rows[-1]["time_ns"] == t * 1_000_000 and rows[-1]["value"] == v
    assert rows[-1]["bw_bytes_per_s"] == v * 1024.0
    assert rows[-1]["direction"] == ("read", "write")[d] and rows[-1]["offset_bytes"] == off
    assert rows[-1]["line_start"] == 64


@pytest.mark.parametrize("kind", ["lat", "clat", "slat"])
@pytest.mark.parametrize("job", [1, 2])
def test_raw_latency_logs_are_every_io_of_the_json(kind, job):
    """Without log_avg_msec fio logs every I/O: count, min, max and mean per direction are the JSON's."""
    js = fio_json("raw")["jobs"][job - 1]
    rows = samples(f"raw_{kind}.{job}.log")
    assert {r["kind"] for r in rows} == {kind} and {r["job_index"] for r in rows} == {job}
    assert all(r["latency_ns"] == float(r["value"]) and r["bw_bytes_per_s"] is None for r in rows)
    for direction in ("read", "write"):
        stat = js[direction][f"{kind}_ns"]
        v = [r["latency_ns"] for r in rows if r["direction"] == direction]
        assert len(v) == js[direction]["total_ios"] == stat["N"]
        assert min(v) == stat["min"] and max(v) == stat["max"]
        assert statistics.mean(v) == pytest.approx(stat["mean"], rel=1e-9)
    # offsets lie in the job's file, block aligned
    assert all(r["offset_bytes"] % 4096 == 0 and 0 <= r["offset_bytes"] < 256 * 1024 for r in rows)


def test_raw_iops_log_is_one_per_io():
    rows = samples("raw_iops.2.log")
    assert [r["iops"] for r in rows] == [1.0] * 64
    js = fio_json("raw")["jobs"][1]
    assert sum(r["direction"] == "read" for r in rows) == js["read"]["total_ios"] == 28


@pytest.mark.parametrize("job", [1, 2])
def test_windowed_bw_and_iops_logs_are_fios_own_samples(job):
    """log_avg_msec=500 = fio's bw/iops sampling window: the log holds exactly the samples behind the
    JSON's bw_min/max/mean/dev and iops_mean (KiB/s in fio, bytes/s here)."""
    w = fio_json("avg")["jobs"][job - 1]["write"]
    bw = samples(f"avg_bw.{job}.log")
    assert all(r["windowed"] and r["block_size_bytes"] is None and r["offset_bytes"] is None for r in bw)
    kib = [r["value"] for r in bw]
    assert len(kib) == w["bw_samples"] == 5
    assert min(kib) == w["bw_min"] and max(kib) == w["bw_max"]
    assert statistics.mean(kib) == pytest.approx(w["bw_mean"], abs=1e-9)
    assert statistics.stdev(kib) == pytest.approx(w["bw_dev"], abs=1e-6)
    assert [r["bw_bytes_per_s"] for r in bw] == [v * 1024.0 for v in kib]
    iops = [r["iops"] for r in samples(f"avg_iops.{job}.log")]
    assert len(iops) == w["iops_samples"] and statistics.mean(iops) == pytest.approx(w["iops_mean"], abs=1e-9)


def test_windowed_logs_exact_values():
    assert [(r["time_ns"], r["value"]) for r in samples("avg_bw.1.log")] == [
        (500_000_000, 4096),
        (1_000_000_000, 4104),
        (1_500_000_000, 4096),
        (2_000_000_000, 4104),
        (2_503_000_000, 4071),
    ]
    clat = samples("avg_clat.1.log")
    assert len(clat) == 6 and clat[0]["latency_ns"] == 1280014.0 and clat[-1]["time_ns"] == 3_003_000_000
    assert clat[0]["priority"] == 0 and clat[0]["direction"] == "write"


def test_per_job_logs_off_and_log_max_value():
    """per_job_logs=0: no .N suffix (job_index NULL); log_max_value=1: each window's maximum."""
    r = fio_json("single")["jobs"][0]["read"]
    iops = samples("single_iops.log")
    assert [(x["time_ns"], x["iops"]) for x in iops] == [
        (250_000_000, 14752.0),
        (500_000_000, 12393.0),
        (750_000_000, 12980.0),
    ]
    assert {x["job_index"] for x in iops} == {None} and {x["prefix"] for x in iops} == {"single"}
    assert max(x["iops"] for x in iops) == r["iops_max"]
    clat = samples("single_clat.log")
    assert max(x["latency_ns"] for x in clat) == r["clat_ns"]["max"] == 19202388


@pytest.mark.parametrize("job", [1, 2])
def test_histogram_log_bins_are_json_plus_bins(job):
    """Each line is the clat histogram of the I/Os since the previous one (1856 bins of fio >= 3).
    The bins' values are the JSON+ bin keys, and no bin holds more than the whole run's."""
    parsed = parse(f"avg_clat_hist.{job}.log")
    rows = list(parsed.rows("fio_hist_samples"))
    assert parsed.format == "fio-hist-log"
    first = (LOGS / f"avg_clat_hist.{job}.log").read_text().splitlines()[0].split(", ")
    assert len(first) == 3 + 1856
    bins = {float(k): v for k, v in fio_json("avg")["jobs"][job - 1]["write"]["clat_ns"]["bins"].items()}
    total: dict[float, int] = {}
    for r in rows:
        assert r["prefix"] == "avg" and r["job_index"] == job and r["block_size_bytes"] == 65536
        assert r["latency_lo_ns"] <= r["latency_ns"] < r["latency_hi_ns"]
        total[r["latency_ns"]] = total.get(r["latency_ns"], 0) + r["count"]
    assert set(total) <= set(bins)
    assert all(total[k] <= bins[k] for k in total)
    # two whole intervals of log_hist_msec=1000 (the last partial one is not written)
    assert sorted({r["time_ns"] for r in rows}) == [
        int(first[0]) * 1_000_000,
        [1_000_000 * int(ln.split(", ")[0]) for ln in (LOGS / f"avg_clat_hist.{job}.log").read_text().splitlines()][1],
    ]
    assert sum(total.values()) == 130


def test_histogram_first_row_exact():
    rows = list(parse("avg_clat_hist.1.log").rows("fio_hist_samples"))
    assert rows[0] == dict(
        prefix="avg",
        job_index=1,
        time_ns=1_019_000_000,
        direction="write",
        block_size_bytes=65536,
        bin_index=824,
        latency_lo_ns=245760.0,
        latency_ns=246784.0,
        latency_hi_ns=247808.0,
        count=1,
        line_start=1,
        line_end=1,
    )


def test_bin_edges():
    # below 128 a bin is one ns wide and its value is its index
    assert logs.bin_edges(5, 1856) == (5.0, 5.0, 6.0)
    assert logs.bin_edges(127, 1856) == (127.0, 127.0, 128.0)
    assert logs.bin_edges(128, 1856) == (128.0, 129.0, 130.0)
    assert logs.bin_edges(1855, 1856)[2] == float(1 << 34)  # the last bin ends at 2^34 ns (~17 s)
    # coarseness 1: a bin spans two of fio's
    lo, mid, hi = logs.bin_edges(412, 928)
    assert lo == logs.bin_edges(824, 1856)[0] and hi == logs.bin_edges(825, 1856)[2] and mid == (lo + hi) / 2
    # fio 2.x: 1216 bins in usec
    assert logs.bin_edges(128, 1216) == (128_000.0, 129_000.0, 130_000.0)
    with pytest.raises(ValueError):
        logs.bin_edges(0, 1000)


@pytest.mark.parametrize(
    "name,parts",
    [
        ("raw_bw.1.log", ("raw", "bw", 1)),
        ("/x/y/my_job_clat.12.log", ("my_job", "clat", 12)),
        ("a_lat_slat.3.log", ("a_lat", "slat", 3)),
        ("avg_clat_hist.2.log", ("avg", "clat_hist", 2)),
        ("single_iops.log", ("single", "iops", None)),
        ("bw.1.log", (None, None, None)),
        ("samples.txt", (None, None, None)),
        (None, (None, None, None)),
    ],
)
def test_name_parts(name, parts):
    assert logs.name_parts(name) == parts


def test_unknown_kind_when_the_name_does_not_say():
    parsed, _ = parse_bytes((LOGS / "avg_bw.1.log").read_bytes(), "/tmp/renamed.txt")
    rows = list(parsed.rows("fio_log_samples"))
    assert {r["kind"] for r in rows} == {None} and rows[0]["value"] == 4096
    assert rows[0]["bw_bytes_per_s"] is None and rows[0]["iops"] is None and rows[0]["latency_ns"] is None


def test_latency_log_without_priority_column_has_no_unit():
    """A real 4-column clat log (fio 2.2.10 era, chris-sanders/ceph-fio-results): usec, as the run's output
    says (avg=1929.49 usec), but fio 3.x before its priority column wrote ns in the same layout: the numbers
    are kept as printed, latency_ns is NULL, and a warning says why (it had been stored as 1901 ns)."""
    path = FIXTURES / "fio" / "published" / "fio-2.2.10-ceph-randread-4k-KERNEL_clat.log"
    parsed, _ = parse_bytes(path.read_bytes(), str(path))
    rows = list(parsed.rows("fio_log_samples"))
    assert len(rows) == 241 and {r["kind"] for r in rows} == {"clat"}
    assert (rows[0]["time_ns"], rows[0]["value"], rows[0]["latency_ns"], rows[0]["windowed"]) == (
        250_000_000,
        1901,
        None,
        True,
    )
    assert all(r["latency_ns"] is None for r in rows)
    assert parsed.warnings == [
        "line 1: a clat log without fio's priority column: fio 2.x logged usec here, early fio 3.x ns, and the log "
        "does not say which; latency_ns not stored (the numbers as printed are in value)"
    ]
    # 5 columns holding offsets: no priority column either; 5 with a 0/1 priority and 6 columns are fio 3.x: ns
    p = logs.parse_log("10, 5, 1, 4096, 8192\n20, 6, 1, 4096, 0\n", "fio-log", "j_lat.1.log")
    assert [r["latency_ns"] for r in p.rows("fio_log_samples")] == [None, None] and p.warnings
    p = logs.parse_log("10, 5, 1, 4096, 0\n", "fio-log", "j_lat.1.log")
    assert p.rows("fio_log_samples")[0]["latency_ns"] == 5.0 and not p.warnings
    p = logs.parse_log("10, 5, 1, 4096, 8192, 1\n", "fio-log", "j_clat.1.log")
    assert p.rows("fio_log_samples")[0]["latency_ns"] == 5.0 and not p.warnings
    # bandwidth and IOPS logs have one unit in every version
    p = logs.parse_log("10, 5, 1, 4096\n", "fio-log", "j_bw.1.log")
    assert p.rows("fio_log_samples")[0]["bw_bytes_per_s"] == 5 * 1024 and not p.warnings


def test_column_layouts_of_other_versions():
    # fio 2.x: 4 columns; 5 with log_offset=1 (offsets, not 0/1 priorities)
    p = logs.parse_log("10, 5, 1, 4096\n20, 6, 1, 4096\n", "fio-log", "j_iops.1.log")
    assert [r["priority"] for r in p.rows("fio_log_samples")] == [None, None]
    p = logs.parse_log("10, 5, 1, 4096, 8192\n20, 6, 1, 4096, 0\n", "fio-log", "j_iops.1.log")
    assert [r["offset_bytes"] for r in p.rows("fio_log_samples")] == [8192, 0]
    # log_prio=1 (fio >= 3.30): the ioprio value in hex
    p = logs.parse_log("10, 5, 0, 4096, 0x2004\n", "fio-log", "j_lat.1.log")
    assert p.rows("fio_log_samples")[0]["priority"] == 0x2004
    # log_issue_time: a 7th column (ignored)
    p = logs.parse_log("10, 5, 0, 4096, 0, 0, 9\n", "fio-log", "j_lat.1.log")
    assert p.rows("fio_log_samples")[0]["offset_bytes"] == 0


@pytest.mark.parametrize(
    "text,kind,line",
    [
        ("0, 1, 0, 4096, 0\n0, 1, 0, 40", "truncated", 2),
        ("0, 1, 0, 4096, 0\n0, 1, 0\n0, 1, 0, 4096, 0\n", "invalid", 2),
        ("0, 1, 0, 4096, 0\n0, x, 0, 4096, 0\n", "invalid", 2),
        ("0, 1, 0, 4096, 0, 0, 0, 0\n", "unsupported-version", 1),
    ],
)
def test_bad_logs_are_parse_errors(text, kind, line):
    with pytest.raises(ParseError) as e:
        logs.parse_log(text, "fio-log", "x_bw.1.log")
    assert e.value.kind == kind and e.value.line == line


def test_hist_with_unknown_bin_count():
    with pytest.raises(ParseError) as e:
        logs.parse_log("0, 1, 4096, " + ", ".join(["0"] * 100) + "\n", "fio-hist-log", "x_clat_hist.1.log")
    assert e.value.kind == "unsupported-version"


@pytest.mark.parametrize(
    "text",
    [
        "1,2,3,4\n",
        "0, 1, 7, 4096\n",
        "hello\n",
        "1.98,1.98,host,1,1234\n",
        "0, 1\n",
        "{\n",
        "0, 1, 0, 4096\nfoo\n",
    ],
)
def test_sniff_declines(text):
    assert logs.sniff_log(text) is None


def test_ingest_and_join_to_the_run(tmp_path):
    """Logs land in the database and join to their run: same folder, prefix = jobname, N = job_index + 1."""
    import shutil

    from storagelab.store import ingest

    db = tmp_path / "t.duckdb"
    logs = tmp_path / "logs"  # the fixtures as fio wrote them (their golden .expected.jsonl files left out)
    shutil.copytree(LOGS, logs, ignore=shutil.ignore_patterns("*.expected.jsonl", "COMMANDS.md"))
    s = ingest([logs], db_path=db, manifest_path=tmp_path / "none.csv", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 3  # the three empty slat logs of the psync runs
    con = duckdb.connect(str(db), read_only=True)
    n = con.execute("SELECT count(*) FROM fio_log_samples").fetchone()[0]
    assert n == 10 * 64 + 2 * (5 + 5 + 6 + 6) + 3 + 4 + 4
    rows = con.execute("""
        SELECT l.job_index, l.direction, count(*), any_value(r.total_ios)
        FROM fio_log_samples l JOIN files lf ON lf.file_id = l.file_id
        JOIN files rf ON rf.tool = 'fio' AND rf.format NOT IN ('fio-log', 'fio-hist-log')
             AND parse_dirpath(rf.path) = parse_dirpath(lf.path)
        JOIN fio_jobs j ON j.file_id = rf.file_id AND j.jobname = l.prefix AND j.job_index = l.job_index - 1
        JOIN fio_results r ON r.file_id = j.file_id AND r.job_index = j.job_index AND r.direction = l.direction
        WHERE l.kind = 'clat' AND l.prefix = 'raw'
        GROUP BY ALL ORDER BY ALL""").fetchall()
    assert rows == [(1, "read", 29, 29), (1, "write", 35, 35), (2, "read", 28, 28), (2, "write", 36, 36)]
    con.close()


VARIANTS = [
    "10, 5, 1, 4096\n20, 6, 1, 4096\n",  # fio 2.x
    "10, 5, 1, 4096, 8192\n20, 6, 1, 4096, 0\n",  # fio 2.x, log_offset=1
    "10, 5, 0, 4096, 0x2004\n",  # log_prio=1
    "10, 5, 0, 4096, 0, 0, 9\n",  # log_issue_time
    "0, 1, 0, 4096, 0\n0, 1, 0, 40",  # truncated
    "1, 2, 7, 4096\n",  # unknown direction
    "99999999999999, 1, 0, 4\n",  # out of range
    " 0, 1, 0, 4096, 0\r\n",  # spaces and CR
]


@pytest.mark.parametrize(
    "text", [*(p.name for p in sorted(LOGS.glob("*.log")) if p.stat().st_size and "_hist" not in p.name), *VARIANTS]
)
def test_fast_path_gives_the_general_paths_rows(text, monkeypatch):
    """The fast path (fio 3.x logs as fio writes them) returns exactly the general path's rows, or declines."""
    name = "x_clat.3.log"
    if text.endswith(".log"):
        name, text = text, (LOGS / text).read_text()
    try:
        fast = list(logs.parse_log(text, "fio-log", name).rows("fio_log_samples"))
    except ParseError as e:
        fast = e
    monkeypatch.setattr(logs, "_fast_samples", lambda *a: False)
    try:
        general = list(logs.parse_log(text, "fio-log", name).rows("fio_log_samples"))
    except ParseError as e:
        general = e
    if isinstance(general, ParseError):
        assert isinstance(fast, ParseError) and (fast.kind, fast.line) == (general.kind, general.line)
    else:
        assert fast == general and len(general) > 0


def _fast(text: str) -> bool:
    return logs._fast_samples(lines_of(text), "x", "bw", 1, Parsed(tool="fio", format="fio-log"))


def test_fast_path_takes_fio_3_logs():
    for p in sorted(LOGS.glob("*.log")):
        if p.stat().st_size and "_hist" not in p.name:
            assert _fast(p.read_text()), p.name
    assert not _fast(VARIANTS[1])  # fio 2.x offsets: the general path decides


def test_notebook_08_names_the_latency_log_without_a_unit(tmp_path):
    """08's time series leave out a latency log whose unit is unknown and say so (it had reported the NULLs as
    'never steady over 240 samples'); the bandwidth log beside it is charted."""
    import shutil

    from storagelab.analysis import Selection, fio_views, open_db
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(FIXTURES / "fio" / "published" / "fio-2.2.10-ceph-randread-4k-KERNEL_clat.log", raw)
    shutil.copy(LOGS / "avg_bw.1.log", raw)
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (2, 0), s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = fio_views.analyse(con, Selection())
    assert set(res["series"]["kind"].unique()) == {"bw"}
    assert res.missing[-1] == (
        "fio-2.2.10-ceph-randread-4k-KERNEL clat: latency logs without fio's priority column (fio 2.x logged "
        "usec, early fio 3.x ns; the log does not say which), not charted"
    )
    assert not any("clat" in f for f in res.findings)


def test_notebook_08_leaves_out_windows_that_only_some_jobs_logged(tmp_path):
    """A real lab run of 2 jobs (fixtures/fio/3.33/logs-partial): job 1 logged a sample at 2001 ms, job 2 none
    after 1750 ms. The summed window at 2.0 s holds one job: it is left out (and said), not shown as a drop."""
    import shutil

    from storagelab.analysis import Selection, fio_views, open_db
    from storagelab.store import ingest

    src = FIXTURES / "fio" / "3.33" / "logs-partial"
    raw = tmp_path / "raw"
    shutil.copytree(src, raw, ignore=shutil.ignore_patterns("*.md", "*.jsonl"))
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (5, 0), s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = fio_views.analyse(con, Selection())
    bw = res["series"].filter(pl.col("kind") == "bw")
    # 250 ms windows: 0.25 ... 1.75 s from both jobs; the 2.0 s window (job 1 alone, 105936 KiB/s) is gone
    assert bw["time_ns"].to_list() == [250_000_000 * k for k in range(1, 8)]
    assert bw["jobs"].to_list() == [2] * 7
    assert bw["value"][0] == (95056 + 95088) * 1024 and bw["value"][-1] == (106768 + 105072) * 1024
    assert (
        "2 window(s) of summed bandwidth or IOPS in which only some of the run's jobs logged a sample "
        "(write-4k-qd2-nj2; fio logs each job's last sample when that job ends) are left out: their sum is not the "
        "run's total." in res.findings
    )
