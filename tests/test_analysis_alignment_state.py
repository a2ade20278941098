"""Notebook 03 with what the source study lacks (issue 25, analyses-2 N5/N6): repeats of the 'after' configuration
as the noise band (bonnie++ -x 2: two runs appended in one file), the ashift from `zdb -C`, compression and dedup
from `zfs get`; and on the FreeBSD study what is missing, named by its exact command."""

import importlib.util
import shutil

import polars as pl
import pytest
from conftest import FIXTURES

from storagelab.analysis import Selection, alignment, open_db
from storagelab.units import KiB

ZDB_CONFIG = importlib.util.find_spec("storagelab.parsers.zdb_config") is not None  # zdb -C parser (helper h4)


@pytest.fixture(scope="module")
def seed(seed_db):
    with open_db(seed_db) as con:
        yield alignment.analyse(con, Selection(study="freebsd-bonnie-dedup"))


def test_three_configurations_are_no_noise_band(seed):
    """N5: no cache, cache and cache+log were the 'noise band'; the cache+log configuration ran once."""
    assert seed.numbers.noise.repeats == 1 and seed["ratios"]["within_noise"].is_null().all()
    assert seed.numbers.noise.other_configs == ("raid1 (aligned, cache)", "raid1 (aligned)", "single disk (aligned)")
    text = "\n".join(seed.findings)
    assert "The 'after' configuration ran once: there is no run-to-run estimate" in text
    assert "are other configurations: their spread is not run-to-run noise and is not used as such." in text
    assert seed.headline["block write after/before"] == "7.59x (one 'after' run: noise unknown)"


def test_the_block_read_was_served_from_memory(seed):
    """N6: '2.7g' at 99 %CP before, 229 MiB/s at 8 %CP after."""
    (m,) = seed.numbers.memory_reads
    assert (m.side, m.cpu_pct, m.other_cpu_pct) == ("before", 99.0, 8.0)
    assert (
        "The before run's block read of 2764.8 MiB/s ran at 99 %CP (the other run's: 8 %CP): a read that keeps the "
        "CPU busy is copying data from memory, not waiting on disks, so it was served from memory"
    ) in "\n".join(seed.findings)


def test_compression_or_dedup_is_a_hypothesis_with_its_command(seed):
    a = seed.numbers.anomalies
    assert a.slow_write == (10.4 * 2**20, 437e9) and a.slow_delete[0] == "seq_delete"
    assert round(a.slow_delete[1], 1) == 22.1  # 3669 / 166 sequential deletes per second
    text = "\n".join(seed.findings)
    assert (
        "Hypothesis, not tested by these logs: bonnie++ writes near-zero data (docs/formats/zfs-facts.md F24), so "
        "compression or dedup on the 'before' run's dataset would explain at once the 2764.8 MiB/s block read (served "
        "from memory), the 10.4 MiB/s block write with a worst latency of 437 s and 22.1x slower sequential deletes"
    ) in text
    assert "only `zfs get compression,dedup,recordsize,sync raid1/DATASET` says." in text
    assert any(
        m.startswith("the tested dataset's settings: `zfs get compression,dedup,recordsize,sync raid1/DATASET`")
        for m in seed.missing
    )


def test_ashift_unknown_with_the_other_pool_as_evidence(seed):
    """N6: archiv (same host, 4-wide raidz1) allocates 1.378x its physical bytes: 1.375 expected at ashift 12."""
    (e,) = seed.numbers.other_ashift
    assert (e.pool, e.nearest, round(e.measured, 3), round(e.expected[12], 3), round(e.expected[9], 3)) == (
        "archiv",
        12,
        1.378,
        1.375,
        1.336,
    )
    text = "\n".join(seed.findings)
    assert "ashift of pool raid1 is not in the data (no `ashift` label; no `zdb -C` output)" in text
    assert "it is evidence about archiv, not proof for raid1." in text
    assert "the ashift of pool raid1: `zdb -C raid1` (its `ashift:` lines), or an `ashift` label" in "\n".join(
        seed.missing
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """bonnie++ 2.00a runs of one machine (x1: one run, before; x2: two runs appended, after), as pool ztest with its
    `zdb -C` (ashift 9), and again as pool test2 with a published `zfs get -H all test2` (compression and dedup
    off)."""
    from storagelab.store import ingest

    root = tmp_path_factory.mktemp("t03")
    raw = root / "raw"
    raw.mkdir()
    bonnie = FIXTURES / "bonnie" / "2.00a"
    rows = ["path,study,label,host,pool,phase"]
    for study, pool in (("zs", "ztest"), ("zg", "test2")):
        (raw / study).mkdir()
        for name, phase in (("x1.out.txt", "before"), ("x2.out.txt", "after")):
            # the same bytes in two studies are stored once: a trailing newline less keeps each study's own file
            text = (bonnie / name).read_text()
            (raw / study / name).write_text(text if study == "zs" else text.rstrip("\n"))
            rows.append(f"{study}/{name},{study},{name[:2]},lab,{pool},{phase}")
    if ZDB_CONFIG:
        shutil.copy(FIXTURES / "zdb-config" / "2.1" / "C-ashift9.txt", raw / "zs" / "zdb-C.txt")
        rows.append("zs/zdb-C.txt,zs,zdb -C,lab,ztest,")
    shutil.copy(FIXTURES / "zfs-get" / "linux-0.6" / "get-H-all.txt", raw / "zg" / "zfs-get.txt")
    rows.append("zg/zfs-get.txt,zg,zfs get,lab,test2,")
    (raw / "manifest.csv").write_text("\n".join(rows) + "\n")
    s = ingest([raw], db_path=root / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(root / "x.duckdb") as con:
        yield {st: alignment.analyse(con, Selection(study=st)) for st in ("zs", "zg")}


def test_repeats_appended_in_one_file_are_the_noise_band(lab):
    res = lab["zs"]
    assert res.numbers.noise.repeats == 2 and res.numbers.noise.other_configs == ()
    pb = res["ratios"].filter(pl.col("test") == "putc").row(0, named=True)
    # x2's per-char writes: 1305 and 869 KiB/s (its block tests are '+++++'); t(0.975, 1) = 12.706, sd 308.30:
    # PI = 1087 +- 12.706 x 308.30 x sqrt(1 + 1/2) = 1087 +- 4797.7 KiB/s
    assert (pb["after_runs"], pb["after_mean"]) == (2, 1087 * KiB)
    assert round(pb["pi_high"] / KiB, 1) == 5884.7 and round(pb["pi_low"] / KiB, 1) == -3710.7
    # the interval reaches below zero: it bounds nothing (finding 6 of the h7 trial), so no 'within noise'
    assert pb["value_before"] == 1278 * KiB and pb["band_too_wide"] is True and pb["within_noise"] is None
    # the ratio is the after configuration's mean over the before one's (it was x2's first run over x1: 1.02x)
    assert (pb["value_after"], round(pb["ratio"], 4)) == (1087 * KiB, round(1087 / 1278, 4))
    text = "\n".join(res.findings)
    assert (
        "2 runs of the 'after' configuration give the noise band: the 95% prediction interval for one new run" in text
    )
    assert (
        "per-char write: 1.2 MiB/s before, 1.1 MiB/s after = 0.85x; the 2 'after' runs are too few or too far apart "
        "to bound the noise: their 95% prediction interval reaches below zero (up to 5.7 MiB/s), and a rate cannot be "
        "negative, so the data cannot tell the 'before' value from noise."
    ) in res.findings
    assert "-3.6 MiB/s" not in text
    assert res.headline == {}  # the block tests are '+++++' (too fast to measure): no headline ratio


@pytest.mark.skipif(not ZDB_CONFIG, reason="the zdb -C parser has not landed on this branch")
def test_ashift_from_zdb_C(lab):
    s = lab["zs"].numbers.settings
    assert (s.pool, s.ashift) == ("ztest", 9) and s.ashift_source.startswith("zdb -C, zdb-C.txt")
    # both runs are labelled pool ztest: one ashift on both sides cannot explain their difference
    assert (
        "ashift of pool ztest: 9 (zdb -C, zdb-C.txt). The 'after' run (x2) ran on the same pool, also at ashift 9 "
        "(zdb -C, zdb-C.txt): ashift is the same on both sides, so it cannot explain the difference between them."
    ) in "\n".join(lab["zs"].findings)
    assert not any("`zdb -C" in m for m in lab["zs"].missing)


def test_compression_and_dedup_from_zfs_get(lab):
    (d,) = lab["zg"].numbers.settings.datasets
    assert (d.name, d.compression, d.dedup, d.recordsize, d.sync, d.shrinks_data) == (
        "test2",
        "off",
        "off",
        "128K",
        "standard",
        False,
    )
    text = "\n".join(lab["zg"].findings)
    assert (
        "`zfs get` of pool test2's datasets: test2: compression=off, dedup=off, recordsize=128K, sync=standard. So "
        "compression and dedup are off for test2: the data exclude them as the explanation of"
    ) in text
    assert not any("zfs get" in m for m in lab["zg"].missing)


def test_an_ashift_label_is_used(seed_db, tmp_path):
    """The FreeBSD study's runs labelled ashift=12 (as `zdb -C raid1` would show): 03 says the data exclude ashift=9
    and asks for no zdb -C."""
    import csv

    from conftest import RAW

    from storagelab.store import ingest

    raw = tmp_path / "raw"
    shutil.copytree(RAW / "freebsd-bonnie-dedup", raw / "freebsd-bonnie-dedup")
    with open(RAW / "manifest.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["study"] == "freebsd-bonnie-dedup"]
    for r in rows:
        if r["path"].split("/")[-1].startswith("bonnie-raid1"):
            r["ashift"] = "12"
    with open(raw / "manifest.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = alignment.analyse(con, Selection(study="freebsd-bonnie-dedup"))
    s = res.numbers.settings
    assert (s.pool, s.ashift, s.ashift_source) == ("raid1", 12, "the manifest's ashift label")
    assert (
        "ashift of pool raid1: 12 (the manifest's ashift label). ashift 12 writes blocks of 4,096 B, whole 4,096 B "
        "physical sectors (physical_sector_bytes, a parameter: the logs do not show the drives' sector size): the data "
        "exclude a too-small ashift as the cause."
    ) in res.findings
    assert not any("`zdb -C raid1`" in m for m in res.missing)
    # 8 KiB physical sectors (h7 finding 2): 4 KiB blocks are half sectors, so ashift 12 is not excluded; both sides
    # of the pair are labelled ashift 12 on pool raid1, so it cannot explain their difference either
    with open_db(tmp_path / "x.duckdb") as con:
        big = alignment.analyse(con, Selection(study="freebsd-bonnie-dedup"), physical_sector_bytes=8192)
    (judged,) = [f for f in big.findings if f.startswith("ashift of pool raid1")]
    assert judged == (
        "ashift of pool raid1: 12 (the manifest's ashift label). The 'after' run (raid1 (aligned, cache+log)) ran on "
        "the same pool, also at ashift 12 (the manifest's ashift label): ashift is the same on both sides, so it cannot "
        "explain the difference between them."
    )
    assert "exclude" not in judged


def test_ashift_9_before_supports_the_explanation_only_on_larger_physical_sectors(tmp_path):
    """The 'before' run on pool ztest (zdb -C: ashift 9), the 'after' run on another pool whose ashift is not in
    the data: ashift 9 supports the read-modify-write explanation if the drives are 512e (physical_sector_bytes
    4096, a parameter), and is excluded with 512 B physical sectors."""
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    bonnie = FIXTURES / "bonnie" / "2.00a"
    shutil.copy(bonnie / "x1.out.txt", raw / "x1.out.txt")
    shutil.copy(bonnie / "x2.out.txt", raw / "x2.out.txt")
    shutil.copy(FIXTURES / "zdb-config" / "2.1" / "C-ashift9.txt", raw / "zdb-C.txt")
    (raw / "manifest.csv").write_text(
        "path,study,label,host,pool,phase\n"
        "x1.out.txt,a9,x1,lab,ztest,before\nx2.out.txt,a9,x2,lab,newpool,after\nzdb-C.txt,a9,zdb -C,lab,ztest,\n"
    )
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = alignment.analyse(con, Selection(study="a9"))
        res512 = alignment.analyse(con, Selection(study="a9"), physical_sector_bytes=512)
    assert (res.numbers.after_settings.pool, res.numbers.after_settings.ashift) == ("newpool", None)
    assert (
        "ashift of pool ztest: 9 (zdb -C, zdb-C.txt). ashift 9 writes blocks of 512 B; on drives with 4,096 B physical "
        "sectors (physical_sector_bytes, a parameter: the logs do not show the drives' sector size) every write of less "
        "than 4,096 B is a read-modify-write inside the drive (docs/formats/zfs-facts.md F11): if the drives' sectors "
        "are that large, the data support that explanation beside the partition offset; the 'after' run's pool's "
        "ashift is not in the data."
    ) in res.findings
    assert (
        "ashift of pool ztest: 9 (zdb -C, zdb-C.txt). ashift 9 writes blocks of 512 B, whole 512 B physical sectors "
        "(physical_sector_bytes, a parameter: the logs do not show the drives' sector size): the data exclude a "
        "too-small ashift as the cause."
    ) in res512.findings


def test_settings_and_noise_sentences_link_their_lines(lab):
    """03's ashift (zdb -C), `zfs get` and noise-band sentences carry their raw lines (Finding cites): each value
    links to the lines it was read from, as 08's numbers do."""

    def cited(res, start: str) -> list[tuple[str, list[tuple[str, int, int]]]]:
        (f,) = [f for f in res.findings if f.startswith(start)]
        return [
            (c.text, [(x["path"].rsplit("/", 1)[-1], x["line_start"], x["line_end"]) for x in c.inputs])
            for c in f.cites
        ]

    noise = cited(lab["zs"], "Before: x1")
    assert noise == [("2 runs", [("x2.out.txt", 2, 2), ("x2.out.txt", 3, 3)])]  # its two CSV lines
    if ZDB_CONFIG:
        assert cited(lab["zs"], "ashift of pool ztest") == [  # its two top-level vdevs, each with ashift: 9
            ("9 (zdb -C, zdb-C.txt)", [("zdb-C.txt", 17, 44), ("zdb-C.txt", 45, 58)])
        ]
    assert cited(lab["zg"], "`zfs get` of pool test2") == [
        (  # its recordsize, compression, dedup and sync lines
            "test2: compression=off, dedup=off, recordsize=128K, sync=standard",
            [("zfs-get.txt", 10, 10), ("zfs-get.txt", 14, 14), ("zfs-get.txt", 42, 42), ("zfs-get.txt", 44, 44)],
        )
    ]
