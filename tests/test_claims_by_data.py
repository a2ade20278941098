"""Claims by data: each claims.csv row names the raw file (target) and the metric that reproduce it, or a formula;
the notebooks' analyses measure every selected file and ``claims.check`` matches them. Pinned on the seed data."""

from __future__ import annotations

import polars as pl
import pytest

from storagelab import claims
from storagelab.analysis import Selection, alignment, dedup, open_db, recordsize, scaling, stacks, transports

ANALYSES = {
    "01_vdev_scaling": scaling.analyse,
    "02_recordsize": recordsize.analyse,
    "03_sector63": alignment.analyse,
    "04_dedup_ddt": dedup.analyse,
    "05_stacks": stacks.analyse,
    "06_zfs_send_transports": transports.analyse,
}
# the claims the data contradict (the study's own numbers are off), with the difference the logs give
DIFFERS = {
    "homelab-btrfs-as-expected": "differs by +5.1 %",
    "homelab-btrfs-raid1-mergerfs-penalty-pct": "differs by +116.1 %",
    "homelab-autotier-ext4-vs-raw": "differs by +9.4 %",
    "ars-rs3m-1m-efficiency-pct": "differs by +49.7 %",
}


@pytest.fixture(scope="module")
def checked(seed_db):
    con = open_db(seed_db)
    every = claims.load_claims()
    tables = []
    for (study, notebook), mine in every.group_by("study", "notebook"):
        res = ANALYSES[notebook](con, Selection(study=study))
        tables.append(claims.check(mine, res.measures, res.reasons, stated_from=every))
    con.close()
    return pl.concat(tables)


def test_every_checkable_claim_is_reproduced_or_differs_as_pinned(checked):
    got = dict(zip(checked["claim_id"], checked["status"], strict=True))
    checkable = claims.load_claims().filter(pl.col("check") != "none")["claim_id"].to_list()
    assert len(checkable) == 78
    for cid in checkable:
        assert got[cid] == DIFFERS.get(cid, "reproduced"), cid


def test_values_are_exact_where_the_log_prints_them(checked):
    v = dict(zip(checked["claim_id"], checked["reproduced"], strict=True))
    assert v["homelab-zfs-mirror-write"] == 1240 * 2**20  # WRITE: bw=1240MiB/s
    assert v["freebsd-bp-count-archiv"] == 111_509_014
    assert v["freebsd-ddt-raid1"] == 35_419_785 * 320  # bp count x the stated 320 B
    assert v["thumper-netcat-wait"] == pytest.approx(13.8e9)  # 88.7 s - 74.9 s
    assert v["thumper-socat-amount"] == 10000 * 2**20  # '1e+04 Byte' resolved by rate x time
    assert v["homelab-fio-size"] == 16 * 2**30  # --size=16Gb from the manifest command (fio: GiB)
    assert v["freebsd-raidz1-disk-size"] == pytest.approx(21.8 * 2**40 / 4)
    basis = dict(zip(checked["claim_id"], checked["basis"], strict=True))
    assert basis["freebsd-recv-rate"] == "arithmetic" and basis["freebsd-bp-count-raid1"] == "raw"


def test_a_missing_target_says_which_file(seed_db):
    con = open_db(seed_db)
    mine = claims.load_claims().filter(pl.col("claim_id") == "homelab-zfs-mirror-write")
    res = stacks.analyse(con, Selection(study="homelab-mergerfs", stack="btrfs"))  # the ZFS run is filtered out
    t = claims.check(mine, res.measures)
    assert t["status"][0] == (
        "cannot be reproduced: homelab-mergerfs/fio-zfs-mirror-zfs0.8.4.txt is not in the "
        "selection (no such raw file ingested)"
    )


@pytest.mark.parametrize(
    "formula, ok",
    [
        ("m('a') / m('b', 'x/y.txt')", True),
        ("stated('c-d') * 2 ** 20", True),
        ("max(1, 2) - abs(-3)", True),
        ("12e12", True),
        ("open('x')", False),
        ("m(a)", False),
        ("().__class__", False),
        ("m('a').real", False),
        ("[1, 2]", False),
        ("1 if 2 else 3", False),
    ],
)
def test_formulas_allow_arithmetic_only(formula, ok):
    if ok:
        claims._formula(formula)
    else:
        with pytest.raises(claims.ClaimsError):
            claims._formula(formula)


def test_metric_names_and_formulas_are_told_apart():
    assert not claims.is_formula("write.bw_bytes_per_s") and not claims.is_formula("pool:WD14TB.size_bytes")
    assert claims.is_formula("8 - 2") and claims.is_formula("12e12") and claims.is_formula("m('x')")
