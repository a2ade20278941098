"""The design checks and durable writes on the new-user trial's logs (tests/fixtures/fio/newuser-h6/COMMANDS.md;
/work/h6-findings.md): an fdatasync=1 run is not 'cache' (F3), a buffered run without RAM says the cache check was
not made (F4), an end_fsync=1 run's overrun is its final fsync, not a stall (F10), an O_SYNC (sync=1) run is a
durable-write test (F11), a text fsync run says how often it synced from fio's counts (F16)."""

import shutil

import polars as pl
import pytest
from conftest import FIXTURES, analyse_study

from storagelab.analysis import design, fio_durable, fio_runs, fio_views

H6 = FIXTURES / "fio" / "newuser-h6"
RAM = 25275924480  # the trial VM's RAM, as its manifest labels it
# path, study, label, stack, ram_bytes: labelled as the trial labelled them (RAM on the fdatasync run only); the
# published runs get their pool folder as label (the files have one name per test)
ROWS = (
    ("a/vda/vda-fdatasync1.json", "h6", "vda-fdatasync1", "ext4/virtio", RAM),
    ("a/vda/vda-fsync1.txt", "h6", "vda-fsync1", "ext4/virtio", ""),
    ("a/shm/shm-seqwrite-jsonplus.json", "h6", "shm-seqwrite", "tmpfs", ""),
    ("b/tank_raidz2_nospecial_noslog/sync_seq_write/sync_seq_write.log", "zbt", "noslog sync_seq_write", "", ""),
    ("b/tank_raidz2_nospecial_slog/sync_seq_write/sync_seq_write.log", "zbt", "slog sync_seq_write", "", ""),
    ("b/tank_raidz2_nospecial_noslog/slog_punisher/slog_punisher.log", "zbt", "noslog slog_punisher", "", ""),
    ("b/tank_raidz2_nospecial_slog/slog_punisher/slog_punisher.log", "zbt", "slog slog_punisher", "", ""),
)


@pytest.fixture(scope="module")
def h6_db(tmp_path_factory):
    from storagelab.store import ingest

    root = tmp_path_factory.mktemp("h6")
    raw = root / "raw"
    lines = ["path,study,label,stack,ram_bytes"]
    for path, study, label, stack, ram in ROWS:
        (raw / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(H6 / path, raw / path)
        lines.append(f"{path},{study},{label},{stack},{ram}")
    (raw / "manifest.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = root / "h6.duckdb"
    summary = ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False)
    assert summary.failed == 0, summary.errors
    return db


def _design(db, study):
    df = analyse_study(db, lambda con, sel: design.with_design(fio_runs.runs(con, sel)), study)
    return df, {r["label"]: design.flags_of(r) for r in df.iter_rows(named=True)}


def test_a_sync_after_every_write_is_not_cache(h6_db):
    """F3: fdatasync=1 on a 16 MiB file in 23.5 GiB of RAM: fio's own numbers are the device's (897 fdatasync
    calls in 3.002 s, p50 3.19 ms), so the cache flag must not fire; it stays short (3 s)."""
    df, by = _design(h6_db, "h6")
    f = by["vda-fdatasync1"]
    assert f.synced == "fdatasync=1" and f.working_set_bytes == 16 * 2**20 and f.cache_bytes == RAM
    assert f.fits_in_cache is False and f.codes == ("short",)
    assert design.notes(df.filter(pl.col("label") == "vda-fdatasync1")) == [
        "vda-fdatasync1: its working set of 16.0 MiB fits in the 23.54 GiB of RAM (+ L2ARC), but every write is "
        "followed by fdatasync (fdatasync=1): all it writes reaches the device within the run, so the device's sync "
        "path bounds its writes, not RAM; the cache check does not flag it."
    ]
    # the text fsync=1 run: its output has a sync section (which call, its text does not say); no RAM is needed
    assert by["vda-fsync1"].synced == "fsync or fdatasync (a sync section in its output)"
    assert by["vda-fsync1"].fits_in_cache is False and "fits_in_cache" not in by["vda-fsync1"].unknown


def test_a_buffered_run_without_ram_says_the_cache_check_was_not_made(h6_db):
    """F4: buffered 1 MiB writes of 2 x 64 MiB into tmpfs, its row without ram_bytes."""
    df, by = _design(h6_db, "h6")
    f = by["shm-seqwrite"]
    assert f.fits_in_cache is None and f.working_set_bytes == 128 * 2**20 and f.unknown == ("fits_in_cache",)
    assert design.missing(df) == [
        "the cache check (working set against RAM) could not be made for shm-seqwrite (buffered I/O): the RAM of the "
        "machine is not in the labels. Add a ram_bytes column (bytes) to the manifest (`storagelab lab` records it; "
        "on Linux MemTotal in /proc/meminfo, in KiB, or `free -b`), or ram_bytes=N in its notes"
    ]


DIRECT = (
    " It wrote with direct=1, yet its final fsync had seconds of work: its writes were not all on the device when fio "
    "counted them complete (so where a filesystem accepts direct=1 and buffers anyway, as ZFS before 2.3 does)."
)


def test_an_end_fsync_overrun_is_the_final_fsync_not_a_stall(h6_db):
    """F10: sync_seq_write (end_fsync=1, runtime=60, 4 x 10 GiB) ran 66,170 and 65,422 ms; its slowest writes took
    37.7 and 88.3 ms; fio's bandwidth 508,845,392 B/s = 33,670,299,648 B / 66.170 s: the fsync is inside it."""
    df, by = _design(h6_db, "zbt")
    f = by["noslog sync_seq_write"]
    assert f.final_fsync == "end_fsync=1" and f.elapsed_s == 66.17 and f.runtime_s == 60
    assert f.slowest_io_s == 0.037722653 and f.long_io is False
    assert f.final_fsync_over and f.overran is False and not f.flagged
    row = df.filter(pl.col("label") == "noslog sync_seq_write").row(0, named=True)
    assert row["bw_bytes_per_s"] == 508845392 and row["io_bytes"] == 33670299648
    assert design.notes(df.filter(pl.col("label").str.ends_with("sync_seq_write"))) == [
        "noslog sync_seq_write: ran 66,170 ms against runtime=60 s: the 6.17 s over are its final fsync (end_fsync=1, "
        "which fio times inside the run), not a stall: its slowest I/O took 37.7 ms. Its bandwidth, 485.3 MiB/s "
        "(508.8 MB/s), is fio's: its I/O over all 66.17 s, that fsync included." + DIRECT,
        "slog sync_seq_write: ran 65,422 ms against runtime=60 s: the 5.42 s over are its final fsync (end_fsync=1, "
        "which fio times inside the run), not a stall: its slowest I/O took 88.3 ms. Its bandwidth, 490.0 MiB/s "
        "(513.8 MB/s), is fio's: its I/O over all 65.42 s, that fsync included." + DIRECT,
    ]
    # a slow I/O still makes a stall, final fsync or not: the same run judged with a 1 % share of the runtime
    strict = design.check(row, long_io_share=0.0005)
    assert strict.long_io and strict.overran and not strict.final_fsync_over
    assert design.sentence("x", strict).startswith(
        "x: ran 66,170 ms against runtime=60 s (1.10x): I/O it had issued did not complete in time (a stall) (its "
        "final fsync, end_fsync=1, is timed inside the run too)"
    )


def test_08_names_the_notes_and_the_missing_ram(h6_db):
    res = analyse_study(h6_db, fio_views.analyse, "h6")
    assert any(s.startswith("vda-fdatasync1: its working set of 16.0 MiB fits") for s in res.findings)
    assert "vda-fdatasync1: it ran 3 s, under 5 s: too short to measure a sustained rate." in res.findings
    assert sum(s.startswith("the cache check (working set against RAM) could not be made") for s in res.missing) == 1
    zbt = analyse_study(h6_db, fio_views.analyse, "zbt")
    assert not any("(a stall)" in s for s in zbt.findings)
    assert sum("are its final fsync (end_fsync=1" in s for s in zbt.findings) == 2


def test_an_o_sync_run_is_a_durable_write_test(h6_db):
    """F11: slog_punisher (rw=write bs=8k sync=1 direct=1 numjobs=8 ioengine=sync, 60 s) without and with an NVMe
    SLOG: fio prints no sync section for O_SYNC (JSON sync.total_ios 0); each write's clat is the durable latency:
    p99 8,978,432 ns and 1,433,600 ns; 527,234 and 571,989 writes in 60.002 s."""
    res = analyse_study(h6_db, fio_views.analyse, "zbt")
    runs = {r.label: r for r in res.numbers.durable.runs}
    assert sorted(runs) == ["noslog slog_punisher", "slog slog_punisher"]  # sync_seq_write (end_fsync only) is not
    no, yes = runs["noslog slog_punisher"], runs["slog slog_punisher"]
    assert no.o_sync == "sync=1 (O_SYNC)" and no.every == 1 and no.write_p99_ns is None
    assert no.percentiles_ns[99.0] == 8978432 and yes.percentiles_ns[99.0] == 1433600
    assert no.syncs == 527234 and round(no.durable_per_s, 2) == 8786.94 and round(yes.durable_per_s, 2) == 9532.83
    assert fio_durable.run_sentence(no, no.too_short) == (
        "noslog slog_punisher (`write bs=8KiB ioengine=sync iodepth=1 numjobs=8, every write O_SYNC (sync=1)`): "
        "latency per durable write (the writes' own completion latency: with sync=1 (O_SYNC) a write returns once it "
        "is durable) p50/p99/p99.9 0.602/8.98/19.5 ms, max 163 ms; 8,786.9 durable writes/s (each write, O_SYNC)."
    )
    assert (
        res.findings.count(
            "Durable writes (2 job(s) with O_SYNC (fio's sync=1): each write returns once it is durable, so its own "
            "completion latency is the latency of one durable write and every write is one (fio prints no sync "
            "percentiles for them))."
        )
        == 1
    )
    # no pool or log device labelled: the two are set side by side, not called the SLOG's effect
    assert not res.numbers.durable.pairs
    assert res.headline["lowest durable-write p99"] == "slog slog_punisher: 1.43 ms"
    # write()'s histogram is the page cache's only for fsync/fdatasync runs: none here
    assert not any(s.startswith("For the ") and "fsync/fdatasync run(s)" in s for s in res.findings)


def test_a_text_fsync_run_says_how_often_from_fios_counts(h6_db):
    """F16: vda-fsync1.txt (fio 3.33 text, fsync=1 not in the output): 'issued rwts: total=0,1022,0,1022'."""
    res = analyse_study(h6_db, fio_views.analyse, "h6")
    (r,) = [r for r in res.numbers.durable.runs if r.label == "vda-fsync1"]
    assert r.every == 1 and r.syncs == 1022 and r.writes == 1022 and r.syncs_from == "fio's count"
    note = (
        "its output has a fsync/fdatasync section: fsync or fdatasync was on (which, its output does not say; how "
        "often: fio counted 1,022 syncs for 1,022 writes, one per write)"
    )
    assert fio_durable.inferred_note(r).startswith(note)
    assert not any("how often, its output does not say" in s for s in res.findings)
    assert any(s.startswith(f"vda-fsync1: {note}") for s in res.findings)


def test_the_depth_chart_joins_no_flagged_run(h6_db):
    """F8: in study h6 every run is flagged (short): the chart drew a line through them; now crosses only, in the
    rate panels and in the latency panel."""
    import vl_convert as vlc

    from storagelab import charts
    from storagelab.analysis import Selection

    res = analyse_study(h6_db, fio_views.analyse, "h6")
    depth = res["depth"]
    assert depth.height == 3 and depth["flag"].is_not_null().all()
    spec = charts.fio_depth(depth, Selection(study="h6")).to_dict()
    datasets = spec["datasets"]

    def rows(layer):
        return len(datasets[layer["data"]["name"]])

    iops, _bw, lat = spec["hconcat"]
    line, points = iops["layer"]
    assert line["mark"]["type"] == "line" and rows(line) == 0 and rows(points) == 3
    lat_line, crosses = lat["layer"]
    assert rows(lat_line) == 0 and crosses["mark"]["shape"] == "cross" and rows(crosses) == 9  # 3 runs x 3 pcts
    assert "joined by no line" in vlc.vegalite_to_svg(spec)
