"""analysis.device_iostat: zpool iostat -r/-l/-q beside the fio runs of a selection (issue 25), on published zpool
outputs and a real fio 3.33 JSON run (tests/fixtures), labelled as a user would."""

import polars as pl
import pytest
from conftest import FIXTURES

from storagelab import present
from storagelab.analysis import Selection, device_iostat, device_tables, open_db
from storagelab.store import ingest

PUB = FIXTURES / "zpool" / "published"
FIO = FIXTURES / "fio" / "3.33" / "json_only.txt"  # fio JSON: report_epoch_s 1795263894, runtime 49 ms


def build(tmp_path, files: dict[str, str], host="nas1"):
    raw = tmp_path / "raw"
    (raw / "dev").mkdir(parents=True)
    rows = ["path,study,host,label"]
    for name, text in files.items():
        (raw / "dev" / name).write_text(text, encoding="utf-8")
        rows.append(f"dev/{name},dev,{host},{name[:-4]}")
    (raw / "manifest.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    s = ingest(
        [raw],
        db_path=tmp_path / "d.duckdb",
        manifest_path=raw / "manifest.csv",
        parquet_dir=False,
        progress=False,
        workers=1,
    )
    assert s.failed == 0, s.errors
    with open_db(tmp_path / "d.duckdb") as con:
        return device_iostat.device_beside_fio(con, Selection(study="dev"))


def test_request_sizes_beside_fio_without_time_stamps(tmp_path):
    res = build(
        tmp_path,
        {"r.txt": (PUB / "iostat-r-2.4.4-rebuild-NVME1.txt").read_text(), "fio.txt": FIO.read_text()},
    )
    req = res["req_size"]
    sync_read = req.filter(req["io_class"] == "sync_read").row(0, named=True)
    ind = [1.68 * 2**20, 261 * 1024, 566 * 1024, 730 * 1024, 13.5 * 2**20, 25.6 * 2**20, 167 * 1024, 3.13 * 1024]
    agg = [0, 0, 11, 318, 846, 4.99 * 1024, 5.63 * 1024, 659, 10]
    assert sync_read["ios"] == pytest.approx(sum(ind) + sum(agg))
    assert sync_read["agg_share"] == pytest.approx(sum(agg) / (sum(ind) + sum(agg)))
    small = 1.68 * 2**20 + 261 * 1024 + 566 * 1024 + 730 * 1024 + 11 + 318
    assert sync_read["small_share"] == pytest.approx(small / (sum(ind) + sum(agg)))
    assert sync_read["median_bucket_bytes"] == 16384  # 512..8K hold 39 % of the I/Os, 16K brings them to 99 %
    rebuild = req.filter(req["io_class"] == "rebuild").row(0, named=True)
    assert (rebuild["ios"], rebuild["median_bucket_bytes"]) == (0, None)
    assert res["fio"].height == 1 and res["aligned"].is_empty()
    assert (
        "1 -r block(s) carry no time stamp: a histogram without an interval counts every I/O since the pool was "
        "imported, so it is shown beside the fio runs, not laid over them" in res["lines"]
    )
    assert (
        "no `zpool iostat -l`/`-q` columns: run `zpool iostat -lq -T u POOL 10` for wait times and queues"
        in res["lines"]
    )


def test_a_time_stamped_sample_inside_the_fio_run_is_aligned(tmp_path):
    """-T u time stamps put before two published -r blocks (each verbatim): one at fio's report time, one an hour
    earlier; only the first lies inside the run."""
    block = (PUB / "iostat-r-trim-data.txt").read_text()
    text = "1795260294\n" + block + "1795263894\n" + block
    res = build(
        tmp_path,
        {"r.txt": text, "fio.txt": FIO.read_text(), "lq.txt": (PUB / "iostat-lq-2.0-intervals-pool2.txt").read_text()},
    )
    assert res["aligned"].select("name", "sample", "timestamp", "rw").unique().rows() == [
        ("data", 1, "1795263894", "read")
    ]
    assert (
        "1 zpool sample(s) fall inside a fio run's time span on the same host: their counts are the pool's, fio's "
        "and anything else it served then"
    ) in res["lines"]
    assert res["waits"].height == 20 and res["queues"].height == 12


def test_nothing_to_show_says_what_to_run(tmp_path):
    res = build(tmp_path, {"fio.txt": FIO.read_text()})
    assert (
        "no `zpool iostat -r` output for study dev: run `zpool iostat -r -T u POOL 10` during the fio runs (and keep "
        "its output) to see the request sizes the disks received"
    ) in res["lines"]


def test_latency_histograms_beside_fio(tmp_path):
    """The published -wvHp output (verbatim, no time stamps) beside a fio JSON run: bucket bounds of the median and
    99th-percentile I/O per wait kind, and the plain statement that it cannot be laid over the run."""
    res = build(
        tmp_path,
        {"w.txt": (PUB / "iostat-wvHp-0.8-backup-rpool.txt").read_text(), "fio.txt": FIO.read_text()},
    )
    lat = res["latency"]
    backup = {(r["wait"], r["op"]): r for r in lat.filter(lat["block"] == 0).iter_rows(named=True)}
    w = backup["disk_wait", "write"]
    # disk_wait write of pool backup, summed by hand (awk) over its 37 rows: 2,173,279; half of it is reached in
    # the bucket up to 4194303 ns (1,862,742 by then), 99 % in the one up to 8388607 ns (2,167,733)
    assert w["ios"] == 2173279 and (w["median_max_ns"], w["p99_max_ns"]) == (4194303, 8388607)
    r = backup["total_wait", "read"]
    assert (r["ios"], r["median_max_ns"], r["p99_max_ns"]) == (608312, 2097151, 8388607)
    assert lat.height == 6 * 10 and res["latency_cells"].height == 6 * 37 * 10
    assert (
        "backup (report 0), disk_wait write: 2,173,279 I/Os counted; the median one took at most 4.19 ms, 99 % at "
        "most 8.39 ms (bucket bounds)" in res["lines"]
    )
    assert (
        "6 -w block(s) carry no time stamp: without `-T u` (or `-T d`) a block cannot be placed in time, and the "
        "first report of `zpool iostat -w` counts every I/O since the pool was imported" in res["lines"]
    )
    assert res["aligned"].is_empty()


def test_a_time_stamped_w_block_inside_the_fio_run_is_aligned(tmp_path):
    """-T u time stamps put before two copies of a published -w block (each verbatim): one at fio's report time, one
    an hour earlier; only the second report lies inside the run."""
    lines = (PUB / "iostat-wvHp-0.8-concat-mirrors.txt").read_text().splitlines(keepends=True)
    block = "".join(lines[1:39])  # tank: its name line and 37 buckets
    res = build(tmp_path, {"w.txt": "1795260294\n" + block + "1795263894\n" + block, "fio.txt": FIO.read_text()})
    assert res["aligned"].select("name", "sample", "timestamp").unique().rows() == [("tank", 1, "1795263894")]
    assert res["latency"].select("sample").unique().sort("sample")["sample"].to_list() == [0, 1]


def test_no_w_output_names_the_command(tmp_path):
    res = build(tmp_path, {"fio.txt": FIO.read_text()})
    assert res["lines"][0] == (
        "no `zpool iostat -w` output for study dev: run `zpool iostat -wv -T u POOL 5` during the fio runs (and keep "
        "its output) to see the latency each I/O had in the queues and on the disks"
    )


def test_the_latency_chart_draws_each_column_share_per_bucket(tmp_path):
    from storagelab import charts_device
    from storagelab.analysis import Selection

    res = build(tmp_path, {"w.txt": (PUB / "iostat-wvHp-0.8-backup-rpool.txt").read_text()})
    chart = charts_device.zpool_latency_histogram(res["latency_cells"], Selection(study="dev"))
    rows = chart.data.to_dicts() if hasattr(chart.data, "to_dicts") else chart.to_dict()["datasets"]
    panel = [r for r in rows if r["panel"] == "backup | report 0 | disk_wait | write"]
    bucket = next(r for r in panel if r["hi_ms"] == 4194304 / 1e6)
    assert bucket["count"] == 1327446 and bucket["pct"] == pytest.approx(1327446 / 2173279 * 100)
    assert bucket["lo_ms"] == 2097152 / 1e6 and bucket["line_start"] == 24
    assert len({r["panel"] for r in rows}) == 10  # all ten of backup's columns counted something (asyncq read: 19)


def test_the_tables_show_whole_counts_and_shares_as_percentages(tmp_path):
    """Finding 20 of the new-user trial: 08's -r table showed the published -r output's counts rebuilt from zpool's
    nicenum values with decimals (3867873.28 I/Os), its shares as raw floats (0.24991763339055642) and the share of
    the trim class, which counted nothing, as 'nan'. Shown (analysis.device_tables, which replaced h5's
    device_iostat.shown): counts to the precision zpool printed, percentages, and an em dash."""
    res = build(tmp_path, {"r.txt": (PUB / "iostat-r-trim-data.txt").read_text(), "fio.txt": FIO.read_text()})
    raw = res["req_size"].filter(pl.col("io_class").is_in(["async_read", "async_write", "trim"]))
    assert raw.select("io_class", "ios").rows() == [
        ("async_read", pytest.approx(4613.52)),
        ("async_write", pytest.approx(3867873.28)),
        ("trim", 0.0),
    ]
    shown = device_tables.req_size(raw)  # counts to zpool's 3 significant digits unless printed whole
    assert shown.select("I/O class", "I/Os counted", "aggregated by ZFS", "of at most 4 KiB").rows() == [
        ("async_read", "about 4,610", "25.0 %", "66.1 %"),
        ("async_write", "about 3,870,000", "42.6 %", "53.7 %"),
        ("trim", "0", "\u2014", "\u2014"),
    ]
    assert "nan" not in present.table(shown)._repr_html_()
