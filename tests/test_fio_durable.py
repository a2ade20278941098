"""Durable writes (notebook 08, fio_durable) on real fsync/fdatasync runs the project had not seen
(tests/fixtures/fio/durable/COMMANDS.md): ZFS on an Optane, two raw NVMe devices, NTFS on Windows (published), and
NTFS (ntfs-3g) and ext4 run here. Each run's durable-write percentiles are fio's sync percentiles as printed, to
three significant figures; sub-second runs are called too short."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from storagelab.analysis import Selection, fio_durable, fio_views, open_db
from storagelab.store import ingest

DURABLE = Path(__file__).resolve().parent / "fixtures" / "fio" / "durable"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    names = sorted(p.name for p in DURABLE.glob("*.txt"))
    for name in names:
        shutil.copy(DURABLE / name, raw / name)
    (raw / "manifest.csv").write_text("path,study\n" + "".join(f"{n},durable\n" for n in names))
    s = ingest([raw], db_path=raw.parent / "d.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (8, 0), s.errors
    with open_db(raw.parent / "d.duckdb") as con:
        yield fio_views.analyse(con, Selection(study="durable"))


def _run(result, name):
    (r,) = [r for r in result.numbers.durable.runs if r.label == name]
    return r


@pytest.mark.parametrize(
    "name, p50_p99_p999, writes_per_s, counted_from, short",
    [
        # ZFS on an Optane M10, 961 ms: sync p50/p99/p99.9 153/206/239 usec as printed
        (
            "fio-3.25-zfs-optane-fdatasync.txt",
            ("0.153 ms", "0.206 ms", "0.239 ms"),
            5860.6,
            "writes / 1 (fdatasync=1)",
            "961 ms (sub-second)",
        ),
        # the same Optane raw (/dev/nvme1n1), 302 ms: 47/68/94 usec
        (
            "fio-3.25-raw-nvme-optane-fdatasync.txt",
            ("0.0470 ms", "0.0680 ms", "0.0940 ms"),
            18649.0,
            "writes / 1 (fdatasync=1)",
            "302 ms (sub-second)",
        ),
        # a T-FORCE NVMe raw (/dev/nvme0n1), 39 s: 6783/11731/16188 usec
        (
            "fio-3.25-raw-nvme-tforce-fdatasync.txt",
            ("6.78 ms", "11.7 ms", "16.2 ms"),
            144.1,
            "writes / 1 (fdatasync=1)",
            None,
        ),
        # NTFS on Windows (fio 3.35, a pasted transcript, CRLF): 963/1975/4113 usec, 5,737 ms
        (
            "fio-3.35-windows-ntfs-970evo-fdatasync.txt",
            ("0.963 ms", "1.98 ms", "4.11 ms"),
            981.7,
            "writes / 1 (fdatasync=1)",
            None,
        ),
        # NTFS through ntfs-3g here: fdatasync=1, 850 ms, JSON lat_ns N = 2047 calls
        (
            "fio-3.33-ntfs-fdatasync.txt",
            ("0.247 ms", "2.34 ms", "6.65 ms"),
            2408.2,
            "fio's count",
            "850 ms (sub-second)",
        ),
        ("fio-3.33-ntfs-fsync-5s.txt", ("0.251 ms", "2.80 ms", "8.09 ms"), 2388.1, "fio's count", None),
        ("fio-3.33-ext4-fsync.txt", ("0.125 ms", "0.469 ms", "3.59 ms"), 6457.4, "fio's count", "317 ms (sub-second)"),
        # fdatasync=4: one sync per 4 writes (9,799 syncs of 39,197 writes in 3,001 ms: under the design checks' 5 s)
        (
            "fio-3.33-ext4-fdatasync4-3s.txt",
            ("0.132 ms", "3.10 ms", "19.8 ms"),
            3265.2,
            "fio's count",
            "3,001 ms (under 5 s)",
        ),
    ],
)
def test_each_runs_durable_write_percentiles_as_fio_printed_them(
    result, name, p50_p99_p999, writes_per_s, counted_from, short
):
    r = _run(result, name)
    assert tuple(fio_durable.fmt_latency(r.percentiles_ns[p]) for p in (50.0, 99.0, 99.9)) == p50_p99_p999
    assert (round(r.durable_per_s, 1), r.syncs_from) == (writes_per_s, counted_from)
    sentence = [f for f in result.findings if f.startswith(f"{name} (")][0]
    pcts = "/".join(v.split(" ")[0] for v in p50_p99_p999)
    assert f"p50/p99/p99.9 {pcts} " in sentence
    if short is None:
        assert "Too short" not in sentence
    else:
        assert sentence.endswith(
            f"**Too short to judge:** it ran {short}: its tail percentiles rest on few calls, and a "
            "rate over so short a time is not one the device sustains."
        )


def test_fdatasync_every_four_writes(result):
    r = _run(result, "fio-3.33-ext4-fdatasync4-3s.txt")
    assert (r.every, r.writes, r.syncs) == (4, 39197, 9799.0)
    assert r.workload == "write bs=4KiB ioengine=sync iodepth=1, a sync per 4 writes"


def test_runs_of_different_devices_are_ranked_not_set_against_each_other(result):
    assert result.numbers.durable.pairs == []  # no pool labelled with and without a SLOG
    assert (
        "`write bs=4KiB ioengine=sync iodepth=1, a sync after every write`: 7 runs, durable-write p99 from 0.0680 ms "
        "(fio-3.25-raw-nvme-optane-fdatasync.txt) to 11.7 ms (fio-3.25-raw-nvme-tforce-fdatasync.txt). Set side by "
        "side only (no label says their setups (host, stack, devices), so what differs between them is not known): "
        "no ratio is stated as the effect of one change." in result.findings
    )
    assert list(result["durable"].columns) == [
        "run",
        "configuration",
        "workload",
        "sync p50",
        "sync p99",
        "sync p99.9",
        "sync max",
        "durable writes/s",
        "syncs counted from",
        "run time (s)",
        "write() p99 (not durable)",
        "flag",
    ]
    flags = dict(zip(result["durable"]["run"], result["durable"]["flag"], strict=True))
    assert flags["fio-3.25-zfs-optane-fdatasync.txt"] == "⚠ sub-second"
    assert flags["fio-3.33-ext4-fdatasync4-3s.txt"] == "⚠ short"
    assert flags["fio-3.25-raw-nvme-tforce-fdatasync.txt"] == ""
    # the raw Optane's 0.0680 ms is lower, but from a 302 ms run (flagged sub-second): it heads nothing
    assert result.headline["lowest durable-write p99"] == "fio-3.35-windows-ntfs-970evo-fdatasync.txt: 1.98 ms"


def test_three_significant_figures():
    assert [fio_durable.fmt_latency(ns) for ns in (62e6, 260e3, 47e3, 818e6, 4244636e3, 2376e3)] == [
        "62.0 ms",
        "0.260 ms",
        "0.0470 ms",
        "818 ms",
        "4.24 s",
        "2.38 ms",
    ]


def test_a_pair_that_differs_in_sync_is_compared_naming_the_setting(tmp_path):
    """O7 (issue 24): durable writes were compared only by the SLOG label. Here the pairing is CONSTRUCTED: the two
    real TrueNAS fdatasync=1 runs (fixtures/fio/published) and two real published `zfs get all` outputs
    (fixtures/zfs-get: TrueNAS tank/downloads sync=disabled, OpenZFS 2.x btr/foo sync=standard) are tied by
    host/pool labels of a made-up study, so the pair differs in `sync` only (no log device labelled on either,
    logbias latency on both). The ratio is the two runs' own; it is not a measured effect of sync."""
    fixtures = Path(__file__).resolve().parent / "fixtures"
    raw = tmp_path / "raw"
    raw.mkdir()
    files = {
        "noslog.txt": (fixtures / "fio/published/fio-3.25-fsync-raidz2-noslog.txt", "standard run", "hostA"),
        "slog.txt": (fixtures / "fio/published/fio-3.25-fsync-raidz2-slog.txt", "disabled run", "hostB"),
        "get-standard.txt": (fixtures / "zfs-get/linux-2.1/get-all.txt", "zfs get A", "hostA"),
        "get-disabled.txt": (fixtures / "zfs-get/truenas-core-13/get-all.txt", "zfs get B", "hostB"),
    }
    for name, (src, _, _) in files.items():
        shutil.copy(src, raw / name)
    (raw / "manifest.csv").write_text(
        "path,study,label,host,stack,pool\n"
        + "".join(f"{n},o7,{label},{host},zfs,main\n" for n, (_, label, host) in files.items())
    )
    s = ingest([raw], db_path=tmp_path / "o7.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (4, 0), s.errors
    with open_db(tmp_path / "o7.duckdb") as con:
        res = fio_views.analyse(con, Selection(study="o7"))
    got = {r.label: (r.zfs_sync, r.zfs_logbias, r.log_devices) for r in res.numbers.durable.runs}
    assert got == {"standard run": ("standard", "latency", None), "disabled run": ("disabled", "latency", None)}
    (pair,) = res.numbers.durable.pairs
    assert (pair.setting, pair.slog, pair.faster.label, round(pair.p99_ratio)) == ("sync", False, "disabled run", 238)
    assert (
        "`write bs=4KiB ioengine=sync iodepth=1, a sync after every write`, pool main with sync=disabled against "
        "sync=standard (`zfs get` of the same host and pool; the only setting that differs): disabled run (hostB | "
        "zfs | layout not labelled | no log device labelled) has a durable-write p99 of 0.260 ms against 62.0 ms for "
        "standard run (hostA | zfs | layout not labelled | no log device labelled): 238x lower, and 50.3x the "
        "durable writes per second. One run each: no run-to-run spread to judge the difference by."
    ) in res.findings


def test_a_pair_labelled_with_sync_and_no_zfs_get_is_compared_naming_the_labels(tmp_path):
    """O7's label route: the same two real TrueNAS fdatasync=1 runs, with no `zfs get` output, labelled zfs_sync in
    the manifest (a CONSTRUCTED pairing, as above); the sentence says the setting comes from the labels."""
    fixtures = Path(__file__).resolve().parent / "fixtures"
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(fixtures / "fio/published/fio-3.25-fsync-raidz2-noslog.txt", raw / "a.txt")
    shutil.copy(fixtures / "fio/published/fio-3.25-fsync-raidz2-slog.txt", raw / "b.txt")
    (raw / "manifest.csv").write_text(
        "path,study,label,host,stack,pool,zfs_sync,zfs_logbias\n"
        "a.txt,o7l,standard run,hostA,zfs,main,standard,latency\n"
        "b.txt,o7l,disabled run,hostB,zfs,main,Disabled,latency\n"
    )
    s = ingest([raw], db_path=tmp_path / "o7l.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (2, 0), s.errors
    with open_db(tmp_path / "o7l.duckdb") as con:
        res = fio_views.analyse(con, Selection(study="o7l"))
    got = {r.label: (r.zfs_sync, r.sync_from, r.zfs_logbias) for r in res.numbers.durable.runs}
    assert got == {"standard run": ("standard", "label", "latency"), "disabled run": ("disabled", "label", "latency")}
    (pair,) = res.numbers.durable.pairs
    assert (pair.setting, pair.faster.label, round(pair.p99_ratio)) == ("sync", "disabled run", 238)
    assert any(
        "pool main with sync=disabled against sync=standard (the manifest's zfs_sync labels, not `zfs get`; the only "
        "setting that differs): disabled run" in f
        for f in res.findings
    )


def test_a_sync_label_outside_its_values_is_refused(tmp_path):
    from storagelab.manifest import ManifestError, load

    (tmp_path / "manifest.csv").write_text("path,zfs_sync\na.txt,sometimes\n")
    with pytest.raises(ManifestError) as e:
        load(tmp_path / "manifest.csv")
    assert "column zfs_sync must be one of standard, always, disabled, got 'sometimes'" in str(e.value)
