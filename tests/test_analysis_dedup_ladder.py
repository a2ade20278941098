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
    return res["ladder"].filter((pl.col("pool") == pool) & (pl.col("rung") == n)).row(0, named=True)


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
    assert any(
        f.startswith("Pool raid1: dedup saves 431.81 GiB of disk for about 6.74 GiB of RAM") for f in res.findings
    )
    assert any("An L2ARC of 29.02 GiB is in the data" in f for f in res.findings)


def test_the_break_even_entry_size(res):
    mem = dict(zip(res["memory"]["pool"], res["memory"]["crossover_bytes_per_entry"], strict=True))
    assert round(mem["raid1"]) == 235 and round(mem["archiv"]) == 75  # 7.75 GiB / bp count
    # one rounding rule for the table and the sentences (new-user-2: "fits at 1308617 B" beside "break-even 1308618")
    assert dict(zip(res["memory"]["pool"], res["memory"]["fits_at_most"], strict=True)) == {"raid1": 234, "archiv": 74}
    # in whole bytes, rounded down: 234.94 B fits, 235 would not
    text = "\n".join(res.findings)
    assert "does not fit the 7.75 GiB budget; it would fit at 234 B per entry or less." in text
    assert "does not fit the 7.75 GiB budget; it would fit at 74 B per entry or less." in text


def test_the_verdict_as_a_range_and_where_it_flips(res):
    text = "\n".join(res.findings)
    # raid1: 7.75 GiB / 22,622,993 entries; the DEDUP ratio's rounding (1.165-1.175) moves it by about 3 %
    # at most 367.8 B: 367 in whole bytes (368 would not fit)
    assert "Alone it fits while an entry costs at most 367 B (357-378 B with the ratio's rounding)" in text
    assert "over the in-core sizes seen in zdb -DD outputs (141-392 B per entry) it spans 2.97 GiB to 8.26 GiB" in text
    assert res.verdict == (
        "Best DDT estimate per pool against the 7.75 GiB metadata budget, at 320 B/entry unless measured: host "
        "alpina's archiv + raid1 together do not fit (15.53 GiB (15.04 GiB to 16.06 GiB); they would fit at 159 "
        "B/entry or less; WD14TB, root dedup too, not counted); each pool alone: archiv does not fit (8.49 GiB to "
        "9.12 GiB; it would fit at 282 B/entry or less); raid1 fits (6.55 GiB to 6.95 GiB; not above 367 B/entry)."
    )


def test_one_machine_s_pools_together_against_its_one_arc(res):
    """analyses-2 N3: raid1 and archiv share alpina's ARC: 6.74 + 8.79 = 15.5 GiB against 7.75 GiB."""
    (m,) = res.numbers.machines
    assert (m.host, m.pools, m.fits) == ("alpina", ("archiv", "raid1"), "does not fit")
    assert round(m.ddt_bytes / GiB, 2) == 15.53 and round(m.ddt_bytes / m.budget.bytes, 2) == 2.00
    # 7.75 GiB / (22,622,993 + 29,500,816) entries = 159.66 B
    assert m.fits_at_most == 159
    # zpool list (after), the listing that matched both zdb -b: WD14TB 1.11x and root 1.03x dedup too
    assert m.other_dedup_pools == (("WD14TB", 1.11), ("root", 1.03))
    text = "\n".join(res.findings)
    assert (
        "Host alpina: its pools archiv, raid1 share one ARC. Their best estimates together: 15.53 GiB (15.04 GiB to "
        "16.06 GiB), 2.00x the 7.75 GiB metadata budget: together they do not fit"
    ) in text
    assert "Host alpina: `zpool list` shows WD14TB (1.11x), root (1.03x) deduplicating too." in text
    assert "`zpool status -D WD14TB`, `zpool status -D root`" in res.markdown()
    # the pool alone is still stated, as alone
    assert "22,622,993 entries, 6.55 GiB to 6.95 GiB at 320 B/entry: alone fits the 7.75 GiB budget" in text


def test_the_sensitivity_chart_draws_the_verdict_s_estimate(res):
    """analyses-2 low: the chart plotted bp count x bytes while the verdict used the better estimate."""
    s = res["sensitivity"].filter(pl.col("bytes_per_entry") == 320.0)
    got = dict(zip(s["series"], s["ddt_bytes"], strict=True))
    assert got == {
        "archiv": pytest.approx(rung(res, "archiv", 3)["ddt_bytes"]),
        "raid1": pytest.approx(rung(res, "raid1", 3)["ddt_bytes"]),
        "alpina (all its pools)": pytest.approx(
            rung(res, "archiv", 3)["ddt_bytes"] + rung(res, "raid1", 3)["ddt_bytes"]
        ),
    }


def test_the_chart_unit_fits_the_values():
    from storagelab import charts

    assert charts.byte_unit(155_466) == (1024, "KiB") and charts.byte_unit(16.7e9) == (GiB, "GiB")
    # new-user-2: the ztest pool's 151.8 KiB table against a 7.75 GiB budget was drawn in GiB (bars invisible)
    div, unit, draw, note = charts._budget_scale(155_466, 7.75 * GiB)
    assert (div, unit, draw) == (1024, "KiB", False)
    assert note == "metadata budget 7.75 GiB, 53,526x the largest estimate: off the scale"
    assert charts._budget_scale(9.44e9, 7.75 * GiB)[:3] == (GiB, "GiB", True)


def test_the_ddt_tracks_part_of_the_pool_and_both_logs_fit_one_moment(res):
    text = "\n".join(res.findings)
    # zpool list (before) ALLOC 3.45T / 16.8T against zdb's bp allocated - bp deduped (its Normal class)
    assert (
        "Pool raid1: `zpool list` ALLOC 3.45 TiB and zdb's allocation 3.46 TiB (bp allocated less deduped) differ by "
        "0.3%, so the two outputs fit one moment; by DEDUP 1.17x the DDT tracks 2.48 TiB (2.73 TB), 71.7% of the "
        "pool's allocation"
    ) in text
    assert "by DEDUP 1.14x the DDT tracks 4.62 TiB (5.08 TB), 27.5% of the pool's allocation" in text
    assert "`zpool prefetch -t ddt`" in text and "`zpool status -D`" in text


def test_fast_dedup_is_stated_from_what_the_cached_table_is(res):
    """analyses-2 N4: entries x the live ddt_entry_t (216 B) is not the table's RAM, which is ZAP leaf blocks."""
    text = "\n".join(res.findings)
    assert "216 B per in-core entry" not in text and "5.93 GiB" not in text
    assert "The cached table is still ZAP leaf blocks (F2, F3): its RAM is the leaves' bytes" in text
    assert "not the entries x the 216 B of a live `ddt_entry_t`" in text


def test_the_recordsize_gain_is_bounded_by_the_recordsize_ratio(res):
    (r1,) = [g for g in res.numbers.recordsize if g.pool == "raid1"]
    assert (r1.recordsize_bytes, r1.recordsize_source, r1.max_gain) == (131072, "default", 8.0)
    assert "files of 1 MiB and more would need at most 8x fewer entries" in "\n".join(res.findings)


@pytest.fixture(scope="module")
def ztest(ztest_db):
    con = open_db(ztest_db)
    yield dedup.analyse(con, Selection(study="ztestlab"))
    con.close()


def test_zdb_S_and_DD_rungs_on_a_real_pool(ztest):
    """Review H1: the zdb -S / -DD path on real zdb 2.1.11 outputs (pool name from the manifest)."""
    lad = {str(r["rung"]): r for r in ztest["ladder"].iter_rows(named=True)}
    assert sorted(lad) == ["1", "2", "4", "5", "6"]  # no zpool list: no rung 3; -b and -bb of the pool count once
    assert lad["1"]["entries"] == 5321 and lad["4"]["entries"] == 1649 and lad["5"]["entries"] == 659
    # the DDT objects' in-core bytes: 155,466 B for 659 entries
    assert lad["6"]["ddt_bytes"] == 155466 and round(lad["6"]["bytes_per_entry"], 1) == 235.9
    assert round(5321 / 1649, 1) == 3.2 and round(5321 / 659, 1) == 8.1  # bp x 320 is 3.2x to 8.1x too high
    text = "\n".join(ztest.findings)
    assert "Pool ztest: bp count 5,321 is 8.1x the 659 entries zdb counted (ddt)." in text
    assert "Pool ztest, DDT objects: 659 entries use 151.8 KiB in core = 236 B per entry" in text
    assert ztest.verdict.endswith("ztest fits (151.8 KiB, measured bytes per entry).")


def test_the_recordsize_gain_on_a_pool_of_small_blocks(ztest):
    """analyses-2 N4: the ztest pool averages 60.1 KiB per block; 1 MiB / 60.1 KiB = 17x is no gain it can have:
    at most 1 MiB / 128 KiB = 8x, for files of 1 MiB and more."""
    (g,) = ztest.numbers.recordsize
    assert (round(g.avg_logical_bytes / 1024, 1), g.max_gain, round(g.naive_gain)) == (60.1, 8.0, 17)
    text = "\n".join(ztest.findings)
    assert "would need at most 8x fewer entries" in text
    assert "1 MiB / that average (17x) is not a gain it can have" in text
    assert "about 17x fewer" not in text


def test_pools_without_a_host_label_are_judged_alone(ztest):
    assert ztest.numbers.machines == [] and ztest.numbers.unhosted == ["ztest"]


def test_the_arc_maximum_follows_the_ram_unless_given():
    """arc_max_gib 0 (the default) is RAM less 1 GiB, FreeBSD's legacy default: a user who sets only ram_gib gets a
    budget from it (the default had been a fixed 31 GiB, refused for any RAM under 31 GiB)."""
    from storagelab.analysis import dedup

    assert (dedup.arc_max(16.0, 0.0), dedup.arc_max(32.0, 0.0), dedup.arc_max(16.0, 8.0)) == (15.0, 31.0, 8.0)


def test_an_arc_maximum_above_the_ram_is_refused_with_the_values_given(seed_db):
    con = open_db(seed_db)
    try:
        with pytest.raises(ValueError) as e:
            dedup.analyse(con, Selection(study="freebsd-bonnie-dedup"), ram_gib=16.0, arc_max_gib=20.0)
    finally:
        con.close()
    assert str(e.value) == (
        "need ram_gib > 0, 0 < arc_max_gib <= ram_gib (0: RAM less 1 GiB), 0 < metadata_fraction <= 1, "
        "bytes_per_entry > 0; got ram_gib 16, arc_max_gib 20, metadata_fraction 0.25, bytes_per_entry 320"
    )


def test_l2arc_arithmetic_links_its_measured_inputs(res):
    """04's L2ARC sentence: the cache device's size links to its `zpool iostat -v` line; the header RAM is
    arithmetic on the best estimate (said in the sentence and in its link's derivation), linked to the estimate's
    inputs."""
    (f,) = [f for f in res.findings if f.startswith("An L2ARC of")]
    assert f == (
        "An L2ARC of 29.02 GiB is in the data: DDT blocks it holds leave the ARC but keep a header in RAM each (about "
        "96 B per 4 KiB DDT block), about 372.8 MiB for a 15.53 GiB table (arithmetic on the estimate, not measured): "
        "it relieves RAM, at the price of reads from the cache device."
    )
    cites = {c.text: c for c in f.cites}
    (iostat,) = cites["29.02 GiB"].inputs
    assert (iostat["path"].rsplit("/", 1)[-1], iostat["line_start"]) == (
        "zpool-iostat-raid5-1.txt",
        13,
    )  # nvd0p7 19.5G alloc + 9.52G free
    assert cites["372.8 MiB"].derivation.startswith("arithmetic: the 15.53 GiB table / 4,096 B per DDT block x 96 B")
    # 6.74 GiB (raid1) + 8.79 GiB (archiv), one host's ARC: their zdb -b summaries and zpool list DEDUP lines
    got = sorted({x["path"].rsplit("/", 1)[-1] for x in cites["15.53 GiB"].inputs})
    assert got == ["zdb-b-archiv.txt", "zdb-b-raid1.txt", "zpool-list-before.txt"]
