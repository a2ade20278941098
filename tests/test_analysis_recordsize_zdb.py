"""Notebook 02 beside a zdb -C (the h5 new-user trial, finding A7): published `zdb` of pool lxd, three single-disk
vdevs at ashift 9 (tests/fixtures/zdb-config/published/ubuntu-zdb-lxd-loop.txt, source in its COMMANDS.md)."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from conftest import FIXTURES, analyse_study, ingest_labelled

from storagelab.analysis import recordsize

ZDB = FIXTURES / "zdb-config" / "published" / "ubuntu-zdb-lxd-loop.txt"


def _zdb_db(tmp_path_factory, src, row: str):
    """``src`` as the one log of a study (its manifest ``row``: path,study,host,stack,pool), ingested."""
    raw = tmp_path_factory.mktemp("zdb") / "raw"
    dest = raw / row.split(",")[0]
    dest.parent.mkdir(parents=True)
    shutil.copyfile(src, dest)
    return ingest_labelled(raw, f"path,study,host,stack,pool\n{row}\n")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return _zdb_db(tmp_path_factory, ZDB, "zfsbox/zdb-lxd.txt,H5 zfsbox,zfsbox,zfs,lxd")


def test_model_says_what_zdb_shows_when_it_has_no_raidz(db):
    res = analyse_study(db, recordsize.analyse, "H5 zfsbox")
    m = res.numbers.model
    assert (m.width, m.parity, m.ashift, m.source) == (8, 2, 12, "parameters")
    sentence = next(f for f in res.findings if "RAIDz" in str(f))
    assert str(sentence) == (
        "Model (parameters): a 1 MiB block on a 8-wide RAIDz2 at ashift 12 takes 256 data + 86 parity + 0 pad "
        "sectors (74.9% efficient), 172 KiB on the busiest disk. The selection's zdb -C of pool lxd shows ashift 9 "
        "and 3 top-level vdev(s) (disk, disk, disk), no raidz vdev: the model uses the parameters instead."
    )
    assert [(c["line_start"], c["line_end"]) for c in sentence.cites[0].inputs] == [(15, 26), (27, 38), (39, 50)]


def test_model_takes_a_raidz_vdev_from_zdb(db):
    """The same rows as if zdb -C had printed one raidz2 vdev of its three children: the model takes its width,
    parity and ashift (a real zdb -C of a raidz pool: test_model_takes_the_raidz_layout_of_a_real_zdb_C)."""
    from storagelab.analysis import Selection, open_db

    con = open_db(db)
    try:
        frames = recordsize.query(con, Selection(study="H5 zfsbox"))
    finally:
        con.close()
    assert frames.vdevs.select("type", "ashift").rows() == [("disk", 9)] * 3
    vdevs = frames.vdevs.head(1).with_columns(type=pl.lit("raidz"), nparity=pl.lit(2), n_children=pl.lit(6))
    m = recordsize.raidz_model(frames.layouts, 8, 2, 12, vdevs)
    assert (m.width, m.parity, m.ashift, m.source, m.zdb_note) == (6, 2, 9, "zdb -C of pool lxd", "")
    assert (m.one["data_sectors"], m.one["parity_sectors"], m.one["pad_sectors"]) == (2048, 1024, 0)
    # parameters other than the default win over zdb -C, which is then said
    p = recordsize.raidz_model(frames.layouts, 4, 1, 12, frames.vdevs)
    assert (p.width, p.parity, p.ashift, p.source) == (4, 1, 12, "parameters")
    assert p.zdb_note == "zdb -C of pool lxd shows ashift 9 and 3 top-level vdev(s) (disk, disk, disk), no raidz vdev"


RAIDZ2 = FIXTURES / "zdb-config" / "2.3" / "C-raidz2.txt"


@pytest.fixture(scope="module")
def raidz_db(tmp_path_factory):
    """A real `zdb -C` of a raidz pool (ztest's pool of two 6-wide raidz2 top-level vdevs at ashift 12, made here:
    tests/fixtures/zdb-config/COMMANDS.md), labelled as the pool's only log."""
    return _zdb_db(tmp_path_factory, RAIDZ2, "vm/zdb-C.txt,R,vm,zfs,ztest")


def test_model_takes_the_raidz_layout_of_a_real_zdb_C(raidz_db):
    res = analyse_study(raidz_db, recordsize.analyse, "R")
    m = res.numbers.model
    assert (m.width, m.parity, m.ashift, m.source, m.zdb_note) == (6, 2, 12, "zdb -C of pool ztest", "")
    # 1 MiB at ashift 12: 256 data sectors in rows of 4 data + 2 parity = 64 rows x 2 = 128 parity, no pad
    assert (m.one["data_sectors"], m.one["parity_sectors"], m.one["pad_sectors"]) == (256, 128, 0)
    sentence = next(f for f in res.findings if "RAIDz" in str(f))
    assert str(sentence) == (
        "Model (zdb -C of pool ztest): a 1 MiB block on a 6-wide RAIDz2 at ashift 12 takes 256 data + 128 parity + 0 "
        "pad sectors (66.7% efficient), 256 KiB on the busiest disk."
    )  # 384 sectors over 6 disks = 64 x 4 KiB
    assert [(c["line_start"], c["line_end"]) for c in sentence.cites[0].inputs] == [(18, 71)]  # the raidz2 it models
