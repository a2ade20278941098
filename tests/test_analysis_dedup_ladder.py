"""The ladder of DDT estimates (notebook 04) on the FreeBSD study's zdb -b and zpool list, and on the ztest pools'
zdb -S / -DD: values pinned from the raw logs (review H3)."""

import polars as pl
import pytest

from storagelab.analysis import Selection, dedup, open_db
from storagelab.units import GiB


@pytest.fixture(scope="module")
def res(seed_db):
    con = open_db(seed_db)
    yield dedup.analyse(con, Selection(study="freebsd-bonnie-dedup"))
    con.close()


def rung(res, pool, n):
    return res["ladder"].filter((pl.col("pool") == pool) & pl.col("rung").str.starts_with(f"{n}.")).row(0, named=True)


def test_bp_count_and_crude_fix(res):
    assert rung(res, "raid1", 1)["ddt_bytes"] == 35_419_785 * 320
    # bp count - embedded (132,437) - deduped / average ASIZE (463,651,233,792 / 120,557)
    assert rung(res, "raid1", 2)["entries"] == pytest.approx(35_419_785 - 132_437 - 463_651_233_792 / 120_557)
    assert round(rung(res, "raid1", 2)["ddt_bytes"] / GiB, 2) == 9.37
    assert round(rung(res, "archiv", 2)["ddt_bytes"] / GiB, 2) == 31.94


def test_ddt_tracked_blocks_from_zpool_dedup(res):
    r1, ar = rung(res, "raid1", 3), rung(res, "archiv", 3)
    # zpool list (before): raid1 DEDUP 1.17x, archiv 1.14x; deduped / (ratio - 1) / average ASIZE
    assert r1["entries"] == pytest.approx(463_651_233_792 / 0.17 / 120_557)
    assert (
        round(r1["ddt_bytes_low"] / GiB, 2),
        round(r1["ddt_bytes"] / GiB, 2),
        round(r1["ddt_bytes_high"] / GiB, 2),
    ) == (6.55, 6.74, 6.95)
    assert (
        round(ar["ddt_bytes_low"] / GiB, 2),
        round(ar["ddt_bytes"] / GiB, 2),
        round(ar["ddt_bytes_high"] / GiB, 2),
    ) == (8.49, 8.79, 9.12)
    assert res.verdict == (
        "Best DDT estimate per pool against the 7.75 GiB metadata budget: archiv does not fit; raid1 fits."
    )
    assert any(
        f.startswith("Pool raid1: dedup saves 431.81 GiB of disk for about 6.74 GiB of RAM") for f in res.findings
    )
    assert any("An L2ARC of 29.02 GiB is in the data" in f for f in res.findings)


def test_the_break_even_entry_size(res):
    mem = dict(zip(res["memory"]["pool"], res["memory"]["crossover_bytes_per_entry"]))
    assert round(mem["raid1"]) == 235 and round(mem["archiv"]) == 75  # 7.75 GiB / bp count
