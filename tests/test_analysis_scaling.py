import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import RAW, analyse_study

from storagelab.analysis import scaling, scaling_numbers
from storagelab.parsers import transcribed
from storagelab.units import MiB

PUBLISHED = Path(__file__).resolve().parent / "fixtures" / "fio" / "published"


@pytest.fixture(scope="module")
def layouts():
    """The Thumper sweep as the transcribed parser stores it (table thumper_layouts)."""
    text = (RAW / "thumper-x4500" / "layout-sweep.csv").read_text()
    return pl.DataFrame(transcribed.parse(text).rows("thumper_layouts"), infer_schema_length=None)


def test_widths_and_data_disks():
    assert scaling.widths("16 15 15") == [16, 15, 15]
    assert scaling_numbers.data_disks("raidz2", [16, 15, 15]) == 40
    assert scaling_numbers.data_disks("raidz1", [46]) == 45
    assert scaling_numbers.data_disks("mirror", [2] * 23) == 23
    assert scaling_numbers.data_disks("single", [1, 1, 1]) == 3
    assert scaling_numbers.data_disks("raidz3", [11]) == 8
    with pytest.raises(ValueError):
        scaling_numbers.data_disks("raidz2", [2, 2])
    with pytest.raises(ValueError):
        scaling_numbers.data_disks("draid", [10])
    for bad in ("", "3 x", "0 4"):
        with pytest.raises(ValueError):
            scaling.widths(bad)


def test_data_disks_match_the_study_sizes(layouts):
    """The study's size column is data disks x 0.5 TB (500 GB drives): the model reproduces all of them."""
    out = scaling.thumper(layouts).filter(pl.col("measured"))
    assert out.height == 95  # 46 zfs send + 49 dd layouts
    assert (out["data_disks"] * 500e9 == out["size_bytes"].cast(pl.Float64)).all()


def test_thumper_relative_exact(layouts):
    out = scaling.thumper(layouts)
    row = out.filter(
        (pl.col("test") == "zfs_send_read") & (pl.col("vdev_type") == "raidz2") & (pl.col("vdev_count") == 5)
    ).row(0, named=True)
    assert row["layout"] == "1x10+4x9"
    assert row["baseline"] == 97.6 * MiB
    assert row["relative"] == pytest.approx(169.0 / 97.6, rel=1e-12)
    assert row["ideal"] == 5.0
    assert row["efficiency"] == pytest.approx(169.0 / 97.6 / 5, rel=1e-12)
    assert row["data_disks"] == 36 and row["data_disk_ratio"] == pytest.approx(36 / 44, rel=1e-12)
    mirror23 = out.filter(
        (pl.col("test") == "dd_write") & (pl.col("vdev_type") == "mirror") & (pl.col("vdev_count") == 23)
    ).row(0, named=True)
    assert mirror23["relative"] == pytest.approx(342.4 / 63.2, rel=1e-12)
    assert mirror23["data_disk_ratio"] == 23.0
    # layouts not run ('---') keep null ratios, and impossible ones have no data-disk count
    gone = out.filter((pl.col("test") == "dd_write") & (pl.col("vdev_type") == "raidz2") & (pl.col("vdev_count") == 16))
    assert gone["relative"].to_list() == [None] and gone["data_disks"].to_list() == [None]


def test_thumper_best_layouts(layouts):
    b = scaling.best(scaling.thumper(layouts))
    got = {(r["test"], r["vdev_type"]): (r["layout"], round(r["relative"], 4)) for r in b.iter_rows(named=True)}
    assert got == {
        ("dd_write", "mirror"): ("23x2", round(342.4 / 63.2, 4)),
        ("dd_write", "raidz1"): ("2x5+9x4", round(338.0 / 251.2, 4)),
        ("dd_write", "raidz2"): ("1x6+8x5", round(322.8 / 236.8, 4)),
        ("zfs_send_read", "mirror"): ("23x2", round(58.2 / 43.2, 4)),
        ("zfs_send_read", "raidz1"): ("4x8+2x7", round(174.0 / 95.2, 4)),
        ("zfs_send_read", "raidz2"): ("1x10+4x9", round(169.0 / 97.6, 4)),
    }


def test_relative_other_baseline_and_repeats():
    df = pl.DataFrame(
        {
            "g": ["a", "a", "a", "a", "b", "b"],
            "vdev_count": [1, 2, 2, 4, 2, 4],
            "v": [100.0, 190.0, 210.0, 300.0, 50.0, None],
        }
    )
    out = scaling.relative(df, "v", ["g"], baseline_count=2)
    a = out.filter(pl.col("g") == "a")
    assert a["baseline"].to_list() == [200.0] * 4  # mean of the two runs at n=2
    assert a["baseline_runs"].to_list() == [2] * 4
    assert a["relative"].to_list() == [0.5, 0.95, 1.05, 1.5]
    assert a["ideal"].to_list() == [0.5, 1.0, 1.0, 2.0]
    assert a["efficiency"].to_list() == [1.0, 0.95, 1.05, 0.75]
    b = out.filter(pl.col("g") == "b")
    assert b["relative"].to_list() == [1.0, None]
    with pytest.raises(ValueError):
        scaling.relative(df, "v", ["g"], baseline_count=0)


def test_relative_without_baseline_is_null():
    df = pl.DataFrame({"g": ["x", "x"], "vdev_count": [2, 3], "v": [1.0, 2.0]})
    out = scaling.relative(df, "v", ["g"])
    assert out["relative"].to_list() == [None, None]
    assert out["ideal"].to_list() == [2.0, 3.0]


def test_ars_against_sum_rule():
    from storagelab.claims import load_claims

    out = scaling.against_sum_rule(scaling.ars_two_vdevs(load_claims("ars-zfs-vs-raid")))  # read from claims.csv
    assert [round(x, 12) for x in out["ratio"].to_list()] == [2.02, 2.03, 2.07, 1.6]
    assert [round(x, 6) for x in out["deviation_pct"].to_list()] == [1.0, 1.5, 3.5, -20.0]


def _runs(**cols):
    base = dict(stack="zfs", rw="write", block_size_bytes=1 << 20, direction="write", vdev_width=2)
    n = len(cols["vdev_count"])
    return pl.DataFrame({**{k: [v] * n for k, v in base.items()}, **cols})


def test_fio_scaling_of_labelled_runs():
    runs = pl.concat(
        [
            _runs(
                label=["m1", "m2", "m4"],
                vdev_type=["mirror"] * 3,
                vdev_count=[1, 2, 4],
                bw_bytes_per_s=[200.0 * MiB, 404.0 * MiB, 700.0 * MiB],
            ),
            _runs(
                label=["z1", "z2"],
                vdev_type=["raidz2"] * 2,
                vdev_count=[1, 2],
                bw_bytes_per_s=[300.0 * MiB, 621.0 * MiB],
            ).with_columns(vdev_width=pl.lit(4, dtype=pl.Int64)),
            _runs(label=["ext4"], vdev_type=[None], vdev_count=[None], bw_bytes_per_s=[500.0 * MiB]).with_columns(
                vdev_type=pl.col("vdev_type").cast(pl.String), vdev_count=pl.col("vdev_count").cast(pl.Int64)
            ),
        ]
    )
    out = scaling.fio(runs)
    assert out["label"].to_list() == ["m1", "m2", "m4", "z1", "z2"]  # the unlabelled run is left out
    assert out["relative"].to_list() == [1.0, 2.02, 3.5, 1.0, 2.07]
    assert out["efficiency"].to_list() == [1.0, 1.01, 0.875, 1.0, 1.035]
    assert out["vdev_counts_in_group"].to_list() == [3, 3, 3, 2, 2]


def test_fio_scaling_single_vdev_only():
    """The seeds' case: every labelled run has one vdev, so each group holds only its baseline."""
    runs = _runs(
        label=["a", "b"], vdev_type=["mirror", "mirror"], vdev_count=[1, 1], bw_bytes_per_s=[1240.0 * MiB, 374.0 * MiB]
    ).with_columns(stack=pl.Series(["zfs", "mergerfs+zfs"]))
    out = scaling.fio(runs)
    assert out["vdev_counts_in_group"].to_list() == [1, 1]
    assert out["relative"].to_list() == [1.0, 1.0]


def test_chart_frame(layouts):
    cf = scaling.chart_frame(scaling.thumper(layouts))
    assert set(cf["series"]) == {"measured", "sum of vdevs (n x)", "disk model"}
    m = cf.filter((pl.col("series") == "measured") & (pl.col("test") == "dd_write"))
    assert m.height == 49 and m["value"].null_count() == 0
    ideal = cf.filter(pl.col("series") == "sum of vdevs (n x)")
    # reads of one fixed set of 46 disks: the rule is no yardstick, so it is drawn for the writes only
    assert set(ideal["test"]) == {"dd_write"}
    assert ideal["value"].to_list() == [float(n) for n in ideal["vdev_count"]]
    dd = cf.filter(pl.col("series") == "disk model")
    assert dd.filter((pl.col("test") == "dd_write") & (pl.col("vdev_type") == "raidz2") & (pl.col("vdev_count") == 11))[
        "value"
    ].to_list() == [24 / 44]
    # mirrors: a write goes to every disk of a vdev (n vdevs = n disks' worth), a read can use all 46 disks
    mirror = dd.filter(pl.col("vdev_type") == "mirror")
    assert mirror.filter(pl.col("test") == "dd_write").sort("vdev_count")["value"][-1] == 23.0
    assert set(mirror.filter(pl.col("test") == "zfs_send_read")["value"]) == {1.0}


def test_disk_model_per_direction():
    assert scaling.direction_of("zfs_send_read") == "read" and scaling.direction_of("dd_write") == "write"
    assert scaling.direction_of("mixed") is None
    assert scaling.disk_worth("write", "mirror", [2] * 23) == 23
    assert scaling.disk_worth("read", "mirror", [2] * 23) == 46 == scaling.disk_worth("read", "mirror", [46])
    assert scaling.disk_worth("read", "raidz1", [46]) == 45 == scaling.disk_worth("write", "raidz1", [46])
    assert scaling.disk_worth("read", "raidz2", [2]) is None


def test_thumper_verdict_and_headline_use_the_disk_model(seed_db):
    """Review M2: on one fixed set of disks the sum-of-vdevs rule is not the yardstick for reads."""
    res = analyse_study(seed_db, scaling.analyse, "thumper-x4500")
    assert res.headline["zfs_send_read mirror"] == "best 23x2: 1.35x one vdev (disk model 1x)"
    assert res.headline["dd_write mirror"] == "best 23x2: 5.42x one vdev (disk model 23x)"
    assert res.headline["zfs_send_read as one serial reader"] == "fitted model, mean error 7.7 % over 46 layouts"
    assert res.verdict == (
        "Measured: dd_write at best 342.4 MiB/s (mirror 23x2), 5.42x its one-vdev layout against the disk model's "
        "23x; zfs_send_read fits a serial-reader model (fitted, mean error 7.7 %)."
    )
    assert not any("sum-of-vdevs rule's 23x" in f for f in res.findings)
    # review M3: the 46-way mirror's dd write (63.2 MiB/s) is one disk's speed
    text = "\n".join(res.findings)
    assert "so its dd write (63.2 MiB/s) is one disk's speed" in text
    assert "mirror 23x2 (23 vdevs): 5.4 disks' worth of writes (23 in theory)." in text
    assert "raidz1 1x46 (1 vdev): 4.0 disks' worth of writes (45 in theory)." in text


@pytest.mark.parametrize(
    "study, expected",
    [
        # FreeBSD bonnie++: the aligned raid1 mirror against the single disk (both without cache or log devices)
        (
            "freebsd-bonnie-dedup",
            {
                ("raid1 (aligned)", "write"): (76.8 / 105.0, 1, 1),
                ("raid1 (aligned)", "read"): (232.0 / 179.0, 1, 2),
                ("raid1 (aligned)", "seeks"): (220.6 / 145.7, 1, 2),
            },
        ),
        # homelab fio: btrfs raid1 (NVMe + virtual disk) against btrfs on the NVMe alone, same workload
        (
            "homelab-mergerfs",
            {
                # a mirror of unequal legs writes at its slower leg: at most 1x the NVMe (analyses-2 low)
                ("btrfs raid1", "write"): (438 / 902, 0, 1),
                ("mergerfs over btrfs raid1", "write"): (296 / 771, 0, 1),
            },
        ),
    ],
)
def test_layouts_against_one_disk(seed_db, study, expected):
    """Review M3: a single-disk baseline wherever the data have one, with the model's range."""
    res = analyse_study(seed_db, scaling.analyse, study)
    got = {(r["label"], r["direction"]): r for r in res["single_disk"].iter_rows(named=True)}
    assert set(got) == set(expected)
    for key, (ratio, low, high) in expected.items():
        assert got[key]["ratio"] == pytest.approx(ratio, abs=5e-4)
        assert (got[key]["model_low"], got[key]["model_high"]) == (low, high)
    assert res.verdict.startswith("Measured: against one disk: ")
    if study == "homelab-mergerfs":
        text = "\n".join(res.findings)
        assert "model at most 1x (a mirror of unequal disks (nvme0n1 (Samsung SSD 950 PRO 256GB) + sdb (QEMU" in text
        assert "outside the model" not in text


RAIDZ2X6, OPTANE = (
    "k8s-homelab-zfs-raidz2x6-noslog-scale-fio3.25-randwrite4k.txt",
    "k8s-homelab-zfs-optane-single-scale-fio3.25-randwrite4k.txt",
)


def _scaling_of_pool_and_single(raw: Path, labels: tuple[str, str], single_devices: str):
    """01's result on two published runs (k8s-homelab): a 6-HDD raidz2 and a single disk labelled with
    ``single_devices``, with the run labels ``labels`` (raidz2's, single's; empty: no label)."""
    from storagelab.analysis import Selection, open_db, scaling
    from storagelab.store import ingest

    raw.mkdir(exist_ok=True)
    for name in (RAIDZ2X6, OPTANE):
        shutil.copy(PUBLISHED / name, raw / name)
    (raw / "manifest.csv").write_text(
        "path,study,label,host,stack,vdev_type,vdev_count,vdev_width,devices\n"
        f"{RAIDZ2X6},t,{labels[0]},truenas,zfs,raidz2,1,6,6x HDD\n"
        f"{OPTANE},t,{labels[1]},truenas,zfs,single,1,1,{single_devices}\n"
    )
    ingest([raw], db_path=raw / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    with open_db(raw / "x.duckdb") as con:
        return scaling.analyse(con, Selection(study="t"))


def test_01_sets_a_pool_only_against_one_of_its_own_disks(tmp_path):
    """A 6-HDD raidz2 and an Optane M10 alone, both 4 KiB random writes at QD 1 (published, k8s-homelab): 01 had
    said 'raidz2 ... against one disk (the Optane) = 0.05x; model 4x (4 data disks): outside the model'. The Optane
    is not one of the pool's disks: no comparison. Labelled as one of its disks, the model is random I/O's, one
    disk per raidz vdev, not the data disks streaming."""
    found, why = {}, {}
    for case, single_devices in (("other device", "Intel Optane M10 16GB"), ("one of its disks", "HDD")):
        res = _scaling_of_pool_and_single(tmp_path / case.replace(" ", "-"), ("raidz2x6", "one disk"), single_devices)
        found[case] = [f for f in res.findings if "against one disk" in f]
        why[case] = res.findings + res.missing
    assert found["other device"] == []
    # new-user-2 #6: a run labelled single/1/1 is there; 01 says why it was not used, not "label it single"
    assert (
        "fio single-disk run one disk is not used as one disk for raidz2x6: its disk (Intel Optane M10 16GB) is not one "
        "of the pool's (6x HDD)."
    ) in why["other device"]
    assert not any("label it vdev_type=single" in m for m in why["other device"])
    assert any(
        m.startswith("no single-disk run of the pools' own disks for study t: the single-disk run(s) one disk stand")
        for m in why["other device"]
    )
    (line,) = found["one of its disks"]
    assert "model 1x (random I/O: 1 raidz2 vdev(s), about one disk's I/O each)" in line, line


def test_thumper_plateau_is_not_controllers_or_bus(seed_db):
    """analyses-2 N8: the 46-way mirror sent 46 x 63.2 MiB/s to its disks, four times what 23x2 mirrors send at the
    ~340 MiB/s plateau: controllers and bus are not the limit."""
    res = analyse_study(seed_db, scaling.analyse, "thumper-x4500")
    p = res.numbers.physical
    assert (p["one_layout"], p["one_disks"], p["fastest_layout"], p["fastest_copies"]) == ("1x46", 46, "23x2", 2)
    assert round(p["one_physical"] / MiB, 1) == round(46 * 63.2, 1) and round(p["fastest_physical"] / MiB, 1) == 684.8
    text = "\n".join(res.findings)
    assert (
        "46 x 63.2 = 2,907.2 MiB/s to its disks; the fastest mirror layout (23x2) sends 2 x 342.4 = 684.8 MiB/s" in text
    )
    assert "The controllers and bus carried more, so they do not cap the plateau" in text


def test_01_names_an_unlabelled_single_disk_run_by_its_file(tmp_path):
    """new user h5 A1: a manifest whose label column is empty (all columns are optional) made 01 fail with
    "TypeError: sequence item 0: expected str instance, NoneType found" when a single-disk run stood for no pool's
    disk: its name was its missing label. It is named by its file, as reports name every unlabelled run."""
    res = _scaling_of_pool_and_single(tmp_path, ("", ""), "Intel Optane M10 16GB")
    assert (
        f"fio single-disk run {OPTANE} is not used as one disk for {RAIDZ2X6}: its disk (Intel Optane M10 16GB) is "
        "not one of the pool's (6x HDD)."
    ) in res.findings
    assert any(
        m.startswith(f"no single-disk run of the pools' own disks for study t: the single-disk run(s) {OPTANE} stand")
        for m in res.missing
    )
