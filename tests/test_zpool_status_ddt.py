"""`zpool status -Dv` with its whole DDT histogram (issue 25): a published OpenZFS 2.0-2.2 output of two file-backed
pools, parsed value by value, and notebook 04 taking the measured DDT size from it."""

import shutil

import pytest
from conftest import FIXTURES

from storagelab.analysis import Selection, dedup, open_db
from storagelab.parsers import parse_bytes, zpool
from storagelab.units import KiB, MiB

REL = FIXTURES / "zpool-status" / "openzfs-2.x" / "status-Dv-histograms-two-pools.txt"


@pytest.fixture(scope="module")
def parsed():
    p, mod = parse_bytes(REL.read_bytes(), str(REL))
    assert mod is zpool and p.format == "zpool-status"
    return p


def test_two_reports_with_per_entry_sizes_in_bytes(parsed):
    pools = parsed.rows("zpool_status_pools")
    got = [
        (r["pool"], r["state"], r["ddt_entries"], r["ddt_disk_bytes"], r["ddt_core_bytes"], r["ddt_sizes"])
        for r in pools
    ]
    # ' dedup: DDT entries 12426, size 526B on disk, 169B in core' (no 'cached': before 2.3, sizes per entry)
    assert got == [
        ("tplaindedup", "ONLINE", 12426, 526.0, 169.0, "per_entry"),
        ("tzstddedup", "ONLINE", 12426, 527.0, 169.0, "per_entry"),
    ]
    # the zsh prompt lines and zpool's 'dedup = 2.38, compress = 2.88, ...' line are not status lines
    assert parsed.warnings == ["lines 1, 28, 54: text that is not zpool status output ignored"]


def test_the_histogram_buckets_and_total_in_bytes_and_counts(parsed):
    rows = [r for r in parsed.rows("zpool_status_ddt") if r["pool"] == "tplaindedup"]
    assert [r["refcnt_bucket"] for r in rows] == [1, 2, 4, 8, 16, 32, 64, None]
    one, b64, total = rows[0], rows[6], rows[-1]
    # '     1    5.67K    359M    359M    366M    5.67K    359M    359M    366M'
    assert (one["alloc_blocks"], one["alloc_lsize_bytes"], one["alloc_dsize_bytes"], one["exact"]) == (
        pytest.approx(5.67 * 1024),
        359 * MiB,
        366 * MiB,
        False,
    )
    # '    64        1    512B    512B      4K       82     41K     41K    328K'
    assert (b64["alloc_blocks"], b64["alloc_psize_bytes"], b64["alloc_dsize_bytes"], b64["ref_blocks"]) == (
        1,
        512,
        4 * KiB,
        82,
    )
    assert (b64["ref_lsize_bytes"], b64["ref_dsize_bytes"]) == (41 * KiB, 328 * KiB)
    # ' Total    12.1K    583M    583M    601M    49.6K   1.05G   1.05G   1.15G'
    assert (total["is_total"], total["alloc_blocks"], total["alloc_dsize_bytes"], total["ref_blocks"]) == (
        True,
        pytest.approx(12.1 * 1024),
        601 * MiB,
        pytest.approx(49.6 * 1024),
    )
    z = [r for r in parsed.rows("zpool_status_ddt") if r["pool"] == "tzstddedup"]
    # zstd: the same blocks, smaller physical sizes: '     1    5.67K    359M    109M    112M ...'
    assert (len(z), z[0]["alloc_lsize_bytes"], z[0]["alloc_psize_bytes"]) == (8, 359 * MiB, 109 * MiB)


def _ingested(tmp_path):
    """The fixture ingested as study 'dv' on host 'box'."""
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(REL, raw / "status-Dv.txt")
    (raw / "manifest.csv").write_text("path,study,host\nstatus-Dv.txt,dv,box\n")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    return tmp_path / "x.duckdb"


def test_04_takes_the_measured_ddt_size_of_each_pool(tmp_path):
    _ingested(tmp_path)
    with open_db(tmp_path / "x.duckdb") as con:
        res = dedup.analyse(con, Selection(study="dv"))
    best = {e.pool: e for e in res.numbers.best}
    e = best["tplaindedup"]
    # 12,426 entries x 169 B = 2,099,994 B = 2.0 MiB
    assert (e.rung, e.entries, e.bytes_per_entry, e.ddt_bytes) == (7, 12426, 169.0, 2099994.0)
    assert (
        "Pool tplaindedup, `zpool status -D`: 12,426 DDT entries, 2.0 MiB in core = 169 B per entry (measured; "
        "printed per entry)."
    ) in res.findings
    assert (
        "Pool tplaindedup, `zpool status -D` histogram: dedup ratio 1.96x measured on the pool (referenced / "
        "allocated DSIZE); 5,806 entries (47%) are referenced once: they cost DDT memory and save nothing; 12,390 "
        "entries in its Total, agreeing with the summary line's 12,426 within the printed rounding. It is one "
        "moment's table: it cannot say how the ratio or the unique share will change as data is written."
    ) in res.findings


def test_padded_leaf_lines_are_depth_1_under_the_pool(parsed):
    # '\t       /plaindedup.zfs  ONLINE ...': the author padded the leaf 7 spaces, not zpool's 2 per level
    # (print_status_config: depth + 2); a row sits one level under the nearest open row indented less
    got = [(r["pool"], r["name"], r["depth"], r["leaf"]) for r in parsed.rows("zpool_status_vdevs")]
    assert got == [
        ("tplaindedup", "tplaindedup", 0, False),
        ("tplaindedup", "/plaindedup.zfs", 1, True),
        ("tzstddedup", "tzstddedup", 0, False),
        ("tzstddedup", "/zstddedup.zfs", 1, True),
    ]


def test_the_histogram_measures_ratio_unique_entries_and_agrees_with_the_summary(tmp_path):
    from storagelab.analysis import dedup_histogram

    _ingested(tmp_path)
    with open_db(tmp_path / "x.duckdb") as con:
        m = dedup_histogram.query(con, Selection(study="dv"))
    got = m.select("pool_name", "summary_entries", "entries", "unique_entries", "summary_agrees").rows()
    # ' Total    12.1K ...' stands for 12,339.2 .. 12,441.6 entries; the summary line says 12426: they agree
    # '     1    5.67K ...': 5.67K entries referenced once
    assert got == [
        ("tplaindedup", 12426, pytest.approx(12.1 * 1024), pytest.approx(5.67 * 1024), True),
        ("tzstddedup", 12426, pytest.approx(12.1 * 1024), pytest.approx(5.67 * 1024), True),
    ]
    # tplaindedup Total: referenced DSIZE 1.15G / allocated DSIZE 601M
    assert m["ratio"][0] == pytest.approx(1.15 * 1024 / 601)
    assert m["unique_share"][0] == pytest.approx(5.67 / 12.1)


def test_nicenum_bounds_allow_the_third_digit():
    from storagelab.analysis.dedup_histogram import nicenum_bounds

    assert nicenum_bounds(12.1 * 1024, False) == pytest.approx((12.05 * 1024, 12.15 * 1024))
    assert nicenum_bounds(601 * 1024**2, False) == pytest.approx((600.5 * 1024**2, 601.5 * 1024**2))
    assert nicenum_bounds(12426, True) == (12426, 12426)
