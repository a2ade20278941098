"""DDT estimates and stack comparisons on the seeds' real logs (ingested once, session fixture)."""

import polars as pl
import pytest

from storagelab.analysis import dedup, frame, open_db, stacks
from storagelab.units import GiB, MiB


@pytest.fixture(scope="module")
def con(seed_db):
    c = open_db(seed_db)
    yield c
    c.close()


@pytest.fixture(scope="module")
def stats(con):
    return frame(
        con,
        "SELECT s.* FROM zdb_block_stats s JOIN files f USING (file_id) "
        "WHERE f.study = 'freebsd-bonnie-dedup' ORDER BY s.bp_count",
    )


def test_ddt_from_bp_count_reproduces_the_study(stats):
    est = dedup.from_bp_count(stats, 320.0)
    got = {r["pool"]: r for r in est.iter_rows(named=True)}
    assert got["raid1"]["ddt_bytes"] == 35_419_785 * 320 == 11_334_331_200
    assert got["archiv"]["ddt_bytes"] == 111_509_014 * 320 == 35_682_884_480
    assert round(got["raid1"]["ddt_gib"], 2) == 10.56 and round(got["archiv"]["ddt_gib"], 2) == 33.23
    assert round(got["raid1"]["ddt_gb"], 2) == 11.33  # the GB/GiB trap, both shown
    assert got["raid1"]["entries_less_embedded"] == 35_419_785 - 132_437


def test_memory_table_against_a_quarter_metadata_cap(stats):
    t = dedup.memory_table(stats, 320.0, 32 * GiB, 31 / 32, 0.25)
    rows = {r["pool"]: r for r in t.iter_rows(named=True)}
    assert round(rows["raid1"]["arc_needed_gib"], 2) == 42.22
    assert round(rows["archiv"]["arc_needed_gib"], 2) == 132.93
    assert rows["raid1"]["metadata_budget_gib"] == pytest.approx(7.75)
    assert not rows["raid1"]["fits"] and not rows["archiv"]["fits"]
    roomy = dedup.memory_table(stats, 320.0, 512 * GiB, 0.5, 0.75)
    assert roomy.filter(pl.col("pool") == "raid1")["fits"].item()


def test_sensitivity_range(stats):
    s = dedup.sensitivity(stats, [141.0, 392.0])
    r = s.filter(pl.col("pool") == "raid1").sort("bytes_per_entry")["ddt_gib"].to_list()
    assert [round(x, 2) for x in r] == [4.65, 12.93]


def test_runs_are_the_final_group_lines_with_labels(con):
    runs = stacks.with_flags(stacks.runs(con, "homelab-mergerfs"), 1.1)
    assert runs.height == 14 and set(runs["direction"]) == {"write"}
    zfs = runs.filter(pl.col("label") == "ZFS mirror (0.8.4)").row(0, named=True)
    assert zfs["bw_bytes_per_s"] == 1240 * MiB and zfs["inflated"] is True
    btrfs = runs.filter(pl.col("label") == "btrfs (single NVMe)").row(0, named=True)
    assert btrfs["bw_mib_s"] == 902.0 and btrfs["inflated"] is False  # 945.8 MB/s is within 10 % of ~900 MB/s


def test_mergerfs_penalty(con):
    runs = stacks.runs(con, "homelab-mergerfs")
    p = stacks.penalty(runs, "ZFS mirror (0.8.4)", "mergerfs over ZFS mirror (0.8.4)")
    assert p["ratio"] == pytest.approx(374 / 1240) and round(p["penalty_pct"], 1) == 69.8
    with pytest.raises(LookupError, match="no such run|found 0"):
        stacks.penalty(runs, "ZFS mirror (0.8.4)", "no such run")
