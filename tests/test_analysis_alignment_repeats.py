"""Notebook 03 on a second data set labelled its own way (the h7 new-user trial, findings 1, 2, 6 and 12): repeats on
both sides (two 'before' files with one label, an 'after' file of two appended runs and a `-s 0` file-only run),
8 KiB physical sectors, and an unlabelled FreeBSD MBR+BSD partition table."""

import shutil

import polars as pl
import pytest
from conftest import FIXTURES

from storagelab.analysis import Selection, alignment, open_db
from storagelab.store import ingest

BONNIE = FIXTURES / "bonnie" / "2.00a"
# bonnie++ 2.00a per-char writes (K/sec as printed): plain 1051 (its one preferred run), x1 1278, x2 1305 and 869;
# n32 (-s 0) has no per-char tests at all
LAYOUT = "atlas,tank,raidz2,1,6,12"


def _study(root, names: dict):
    raw = root / "raw"
    raw.mkdir()
    rows = ["path,study,label,host,pool,vdev_type,vdev_count,vdev_width,ashift,partition_start_sector,phase"]
    for fixture, (name, label, start, phase, *layout) in names.items():
        shutil.copy(BONNIE / fixture, raw / name)
        rows.append(f"{name},c,{label},{layout[0] if layout else LAYOUT},{start},{phase}")
    (raw / "manifest.csv").write_text("\n".join(rows) + "\n")
    s = ingest([raw], db_path=root / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    return root / "x.duckdb"


def _pair(r1_name: str):
    return {
        "plain.out.txt": (r1_name, "before realign", 63, "before"),
        "x1.out.txt": ("bonnie-r2.txt", "before realign", 63, "before"),
        "x2.out.txt": ("bonnie-r3.txt", "after realign", 2048, "after"),
        "n32.out.txt": ("bonnie-r4.txt", "after realign", 2048, "after"),
    }


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The same study twice: the first 'before' file named bonnie-r1.txt, then bonnie-r9.txt (it had changed the
    ratio from 1.24x to 1.02x); the second also has a 'before' run of another layout (mirror)."""
    out = {}
    for r1 in ("bonnie-r1.txt", "bonnie-r9.txt"):
        root = tmp_path_factory.mktemp(r1.split(".")[0])
        names = _pair(r1)
        if r1 == "bonnie-r9.txt":
            names["fast_longname.out.txt"] = ("bonnie-m.txt", "mirror before", 63, "before", "atlas,tank,mirror,1,2,12")
        db = _study(root, names)
        with open_db(db) as con:
            out[r1] = alignment.analyse(con, Selection(study="c"), physical_sector_bytes=8192, legacy_start_sector=34)
    return out


def test_the_ratio_is_of_the_configurations_means_whatever_the_files_are_called(both):
    for res in both.values():
        r = res["ratios"].filter(pl.col("test") == "putc").row(0, named=True)
        # before: (1051 + 1278) / 2 KiB/s; after: (1305 + 869) / 2 KiB/s (n32 has no per-char write)
        assert (r["value_before"], r["value_after"]) == ((1051 + 1278) / 2 * 1024, (1305 + 869) / 2 * 1024)
        assert (r["before_runs"], r["after_runs"], round(r["ratio"], 4)) == (2, 2, 0.9334)
        assert r["after_without"] == ["bonnie-r4.txt"]
    kept = ("test", "value_before", "value_after", "ratio", "before_runs", "after_runs", "pi_low", "pi_high")
    a, b = (both[k]["ratios"].select(kept) for k in both)
    assert a.equals(b)  # renaming a file (or adding a run of another layout) changes none of the numbers


def test_the_pair_sentence_names_every_run_and_the_runs_without_a_value(both):
    res = both["bonnie-r9.txt"]
    (pair,) = [f for f in res.findings if f.startswith("Before: before realign")]
    assert pair == (
        "Before: before realign and 1 more run(s) of its configuration; after: after realign and 2 more run(s) of its "
        "configuration (the 'after' run with the same layout labels (vdev type, count, width, cache, log)). 3 runs of the 'after' configuration give the noise band: the 95% prediction interval "
        "for one new run (t distribution, analysis/stats.py), or for the mean of as many new runs as the 'before' "
        "configuration has. The other 'before' runs (mirror before) have other host or layout labels: other "
        "configurations, not used. Each value below is the mean of its configuration's runs (before: 2 files "
        "(bonnie-r2.txt, bonnie-r9.txt); after: 2 files (bonnie-r3.txt (2 runs), bonnie-r4.txt); runs with the same "
        "host and layout labels), and each ratio is after mean / before mean."
    )
    assert (
        "per-char write: 1.1 MiB/s before, 1.1 MiB/s after = 0.93x; the 2 'after' runs are too few or too far apart "
        "to bound the noise: their 95% prediction interval reaches below zero (up to 4.9 MiB/s), and a rate cannot be "
        "negative, so the data cannot tell the 'before' value from noise (bonnie-r4.txt of the 'after' configuration "
        "has no per-char write value, so 2 of its 3 runs count here)."
    ) in res.findings
    assert not any("MiB/s to" in f and "-" in f.split("MiB/s to")[0][-8:] for f in res.findings)  # no negative rate


def test_ashift_12_on_8k_sectors_is_not_excluded(both):
    (judged,) = [f for f in both["bonnie-r1.txt"].findings if f.startswith("ashift of pool tank")]
    assert judged == (
        "ashift of pool tank: 12 (the manifest's ashift label). The 'after' run (after realign) ran on the same pool, "
        "also at ashift 12 (the manifest's ashift label): ashift is the same on both sides, so it cannot explain the "
        "difference between them."
    )


def test_the_chart_bar_opens_every_run_it_is_the_mean_of(both):
    from storagelab.charts_pools import before_after

    res = both["bonnie-r1.txt"]
    chart = before_after(res["ratios"], Selection(study="c"), "before realign", "after realign")
    rows = pl.DataFrame(chart.data if not hasattr(chart, "layer") else chart.layer[0].data)
    putc = rows.filter(pl.col("test") == "putc").row(0, named=True)
    assert putc["derivation"] == ("putc: after / before (1.06 MiB/s, mean of 2 runs / 1.14 MiB/s, mean of 2 runs)")
    assert sorted((s["path"].split("/")[-1], s["line_start"]) for s in putc["sources"]) == [
        ("bonnie-r1.txt", 11),  # plain.out.txt's CSV line (its preferred run)
        ("bonnie-r2.txt", 1),
        ("bonnie-r3.txt", 2),
        ("bonnie-r3.txt", 3),
    ]


def test_slice_relative_lbas_are_named_with_their_absolute_lba(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(FIXTURES / "partitions" / "gpart-constructed-mbr63.txt", raw / "gpart-constructed-mbr63.txt")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = alignment.analyse(con, Selection(study="(unlabelled)"))
    assert (
        "4 partition(s) in the selection's 2 partition table(s); misaligned to 4,096 B physical sectors (the "
        "physical_sector_bytes parameter: their tables do not print the disk's): ada0 p1 at LBA "
        "63, ada0s1 p1 at LBA 0 of ada0s1 (absolute LBA 63), ada0s1 p2 at LBA 8388608 of ada0s1 (absolute LBA "
        "8388671), ada0s1 p4 at LBA 16777216 of ada0s1 (absolute LBA 16777279)."
    ) in res.findings
