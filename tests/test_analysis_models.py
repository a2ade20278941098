"""Review items M2 (serial reader for zfs send), M5 (what the recordsize models explain) and the 03 cache
artefact, pinned on the seed logs."""

import polars as pl
import pytest

from storagelab.analysis import Selection, alignment, open_db, scaling
from storagelab.units import MiB


@pytest.fixture(scope="module")
def con(seed_db):
    c = open_db(seed_db)
    yield c
    c.close()


def test_record_disks_per_layout():
    assert scaling.record_disks("mirror", [2, 2, 2]) == [(1 / 3, 1)] * 3
    assert scaling.record_disks("raidz1", [46]) == [(1.0, 45)]
    assert scaling.record_disks("raidz2", [5, 4]) == [(3 / 5, 3), (2 / 5, 2)]
    with pytest.raises(ValueError, match="needs more than 2 disks"):
        scaling.record_disks("raidz2", [2])


def test_serial_reader_fits_the_thumper_sends(con):
    res = scaling.analyse(con, Selection(study="thumper-x4500"))
    fit = res["serial_reader"]
    assert fit.height == 46  # every zfs send layout with a speed
    mirror = fit.filter(pl.col("vdev_type") == "mirror")["model_bytes_per_s"]
    assert mirror.max() - mirror.min() < 1e-6 * mirror.max()  # one disk per record, whatever the layout
    _, terms = scaling.serial_reader(res["layouts"].filter(pl.col("test") == "zfs_send_read"))
    assert round(terms["fixed_s"] * 1e3, 3) == 0.153
    assert round(terms["per_disk_s"] * 1e3, 4) == 0.0270
    assert round(terms["disk_rate_bytes_per_s"] / MiB, 1) == 54.2
    assert (round(terms["mean_error_pct"], 1), round(terms["worst_error_pct"], 1)) == (7.7, 20.2)
    raidz1 = fit.filter(pl.col("vdev_type") == "raidz1").sort("vdev_count")
    best_measured = raidz1.sort("speed_bytes_per_s", descending=True)["vdev_count"][0]
    best_model = raidz1.sort("model_bytes_per_s", descending=True)["vdev_count"][0]
    assert (best_measured, best_model) == (6, 5)  # rise and fall: the peak within one vdev of the data's
    # the model's ends are below its peak on both sides, as the data's are
    assert raidz1["model_bytes_per_s"][0] < raidz1["model_bytes_per_s"].max() > raidz1["model_bytes_per_s"][-1]
    text = "\n".join(res.findings)
    assert "Model (fitted, not measured), zfs_send_read as one serial reader of 128 KiB records" in text
    assert "mirror: measured 43.2-58.2 MiB/s (best at 23 vdevs), model 50.3 MiB/s at every vdev count." in text


def test_serial_reader_needs_three_geometries():
    one = pl.DataFrame(
        {"vdev_type": ["mirror", "mirror"], "vdev_widths": ["2", "2 2"], "speed_bytes_per_s": [1e8, 1.1e8]}
    )
    with pytest.raises(ValueError, match="three distinct layouts"):
        scaling.serial_reader(one)


def test_get_block_before_is_a_cache_artefact(con):
    res = alignment.analyse(con, Selection(study="freebsd-bonnie-dedup"))
    row = res["ratios"].filter(pl.col("test") == "get_block").row(0, named=True)
    assert row["beyond_disks"] == "before"
    assert row["value_before"] == 2899102924.8  # bonnie 1.98 prints '2.7g': 2.7 GiB/s = 2764.8 MiB/s
    assert row["single_disk_value"] == 187695104.0  # '179m' of the single-disk run
    assert round(row["disk_multiple"], 1) == 15.4  # a 2-way mirror reads at most 2x one disk
    pb = res["ratios"].filter(pl.col("test") == "put_block").row(0, named=True)
    assert pb["beyond_disks"] is None and round(pb["single_disk_value"] / MiB, 1) == 105.0
    assert "block read after/before" not in res.headline  # no headline from a cache artefact
    assert res.headline["block write after/before"] == "7.59x (one 'after' run: noise unknown)"
    assert "a run faster than its disks: cache artefact" in res.caveats
    assert any(
        f.startswith("**Cache artefact**, block read: the before run's 2764.8 MiB/s is 15.4x") for f in res.findings
    )


def test_no_single_disk_run_says_so(con):
    res = alignment.analyse(con, Selection(study="freebsd-bonnie-dedup", vdev_type="mirror"))
    if res.has("ratios"):
        assert res["ratios"]["beyond_disks"].is_null().all()
        assert any("no single-disk bonnie++ run" in m for m in res.missing)


def test_sector63_noise_band_confounders_and_no_cause(con):
    """Review H4: the aligned variants' spread, the pool's state from the same post, the test size, and a verdict
    that names no cause."""
    res = alignment.analyse(con, Selection(study="freebsd-bonnie-dedup"))
    band = {r["test"]: r for r in res["ratios"].iter_rows(named=True)}
    # the cache+log configuration ran once after; no cache and cache are other configurations (analyses-2 N5)
    assert band["seeks"]["after_runs"] == 1 and band["seeks"]["within_noise"] is None
    text = "\n".join(res.findings)
    assert "random seeks: 200.0/s before, 229.2/s after = 1.15x." in text
    assert res.headline["random seeks after/before"] == "1.15x (one 'after' run: noise unknown)"
    # zpool list (before): raid1 CAP 95 %, FRAG 47 %, DEDUP 1.17x
    assert "zpool list (before reorganisation): 95 % full, 47 % fragmented, DEDUP 1.17x" in text
    assert "pool raid1 full, fragmented or deduplicating: confounders" in res.caveats
    # bonnie++ -r 32768: 64 GiB file = 2 x RAM, with the L2ARC label of both runs
    assert (
        "Test size, before and after runs: a 64.00 GiB file, 2.0x the 32.00 GiB of RAM (bonnie++ -r 32768 (MiB))"
        in (text)
    )
    assert "The after run, with the same cache and log device labels, measured 229.0 MiB/s, within what its" in text
    assert res.verdict == (
        "Block writes ran 7.59x faster after than before; the two runs differ in more than the partition offset, "
        "so the data do not show what caused it."
    )
