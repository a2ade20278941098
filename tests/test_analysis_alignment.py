import polars as pl
import pytest
from conftest import FIXTURES

from storagelab.analysis import alignment


def test_lba63_is_misaligned_by_3584_bytes():
    assert 63 * 512 == 32256
    assert alignment.offset_remainder(63) == 3584
    v = alignment.verdict(63)
    assert v["aligned_physical"] is False and v["rem_4k"] == 3584 and v["rem_1m"] == 32256


def test_lba2048_is_aligned_to_4k_and_1m():
    v = alignment.verdict(2048)
    assert v["start_bytes"] == 1_048_576
    assert v["aligned_physical"] and v["aligned_1m"] and v["rem_4k"] == 0


def test_4kn_sectors_are_always_4k_aligned():
    assert alignment.offset_remainder(63, sector_bytes=4096) == 0
    assert alignment.verdict(63, sector_bytes=4096)["aligned_1m"] is False


def test_offset_rejects_nonsense():
    with pytest.raises(ValueError):
        alignment.offset_remainder(-1)


def test_before_after_ratios_and_too_fast():
    df = pl.DataFrame(
        {
            "run": ["old", "old", "old", "new", "new", "new"],
            "test": ["put_block", "rewrite", "seq_create", "put_block", "rewrite", "seq_create"],
            "value": [10.4 * 2**20, 8373 * 1024, None, 78.9 * 2**20, 46.4 * 2**20, None],
            "too_fast": [False, False, True, False, False, True],
            "cpu_pct": [1.0, 1.0, None, 6.0, 4.0, None],
            "latency_ns": [437e9, 430e9, 28743e3, 7278e6, 567e6, 1560e3],
        }
    )
    out = alignment.before_after(df, "old", "new")
    assert out["test"].to_list() == ["put_block", "rewrite", "seq_create"]
    r = dict(zip(out["test"], out["ratio"], strict=True))
    assert r["put_block"] == pytest.approx(78.9 / 10.4)
    assert r["rewrite"] == pytest.approx(46.4 * 1024 / 8373)
    assert r["seq_create"] is None
    lat = dict(zip(out["test"], out["latency_ratio"], strict=True))
    assert lat["put_block"] == pytest.approx(7278e6 / 437e9)


def test_before_after_unknown_run():
    df = pl.DataFrame(
        {"run": ["a"], "test": ["putc"], "value": [1.0], "too_fast": [False], "cpu_pct": [1.0], "latency_ns": [1.0]}
    )
    with pytest.raises(LookupError):
        alignment.before_after(df, "a", "b")


def test_verdict_is_the_parsers_verdict():
    from storagelab.parsers.partitions import alignment as stored

    for lba in (0, 34, 63, 2048, 4095):
        v, p = alignment.verdict(lba), stored(lba)
        assert (v["start_bytes"], v["rem_4k"], v["rem_1m"], v["aligned_1m"]) == (
            p["start_bytes"],
            p["align_4k_rem_bytes"],
            p["align_1m_rem_bytes"],
            p["aligned_1m"],
        )
        assert v["aligned_physical"] == p["aligned_4k"]


def test_03_takes_no_other_machine_for_the_single_disk_and_says_what_is_missing(tmp_path):
    """A before/after pair of host ceph-admin (published bonnie++ 1.97) with a single-disk run of another machine
    (inez, a G4 Mac mini with an IDE disk) in the study: 03 had set the pair against inez's disk, called both a
    cache artefact ('one and not the other', though both were 3.2x) and spoken of a noise band it did not have.
    With physical_sector_bytes 512, sector 63 is aligned (it had still said 'misaligned to 4 KiB')."""
    import shutil

    from storagelab.analysis import Selection, alignment, open_db
    from storagelab.store import ingest

    pub = FIXTURES / "bonnie" / "published"
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in (
        "bonnie-1.97-ceph-admin-run1.txt",
        "bonnie-1.97-ceph-admin-run2.txt",
        "bonnie-1.97-csv2txt-two-machines.txt",
    ):
        shutil.copy(pub / name, raw / name)
    shutil.copy(
        FIXTURES / "partitions" / "published" / "gpart-old-freebsd-lowercase-k-transcript.txt", raw / "gpart.txt"
    )
    (raw / "manifest.csv").write_text(
        "path,study,label,host,vdev_type,vdev_count,vdev_width,partition_start_sector,phase\n"
        "bonnie-1.97-ceph-admin-run1.txt,t,run 1,ceph-admin,,,,63,before\n"
        "bonnie-1.97-ceph-admin-run2.txt,t,run 2,ceph-admin,,,,,after\n"
        "bonnie-1.97-csv2txt-two-machines.txt,t,inez,inez,single,1,1,,\n"
        "gpart.txt,t,gpart,,,,,,\n"
    )
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = alignment.analyse(con, Selection(study="t"), physical_sector_bytes=512)
    text = "\n".join(res.findings + res.missing)
    assert "Cache artefact" not in text and res["ratios"]["single_disk_value"].is_null().all()
    assert (
        "no single-disk bonnie++ run of host ceph-admin for study t: without one, block speeds cannot be checked "
        "against what the disks can deliver" in text
    )
    assert "The 'after' configuration ran once: there is no run-to-run estimate" in text
    assert (
        "5 partition(s) in the selection's 2 partition table(s); every one starts on a 512 B boundary (the "
        "physical_sector_bytes parameter: their tables do not print the disk's)." in text
    )
    with open_db(tmp_path / "x.duckdb") as con:
        default = alignment.analyse(con, Selection(study="t"))
    assert any(
        f.startswith(
            "5 partition(s) in the selection's 2 partition table(s); misaligned to 4,096 B physical sectors (the "
            "physical_sector_bytes parameter: their tables do not print the disk's): ada0 p1 at LBA 63"
        )
        for f in default.findings
    )
