"""Notebook 03 on one GPT disk printed by four tools and one MBR disk (the h5 new-user trial, finding A4; real
outputs in tests/fixtures/partitions/newuser-h5, sources in its COMMANDS.md), labelled as that user labelled them."""

from __future__ import annotations

import shutil

import pytest
from conftest import FIXTURES, analyse_study, ingest_labelled

from storagelab.analysis import alignment

SRC = FIXTURES / "partitions" / "newuser-h5"
STUDY = "H5 btrfs/raid: pre→post"
FILES = ("fdisk-l-gpt.txt", "fdisk-l-mbr.txt", "gdisk-l-gpt.txt", "parted-print-gpt.txt", "sgdisk-p-gpt.txt")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("h5parts") / "raw"
    (raw / "parts").mkdir(parents=True)
    rows = ["path,study,host,notes"]
    for name in FILES:
        shutil.copyfile(SRC / name, raw / "parts" / name)
        rows.append(f"parts/{name},{STUDY},kestrel,disk image file on tmpfs")
    return ingest_labelled(raw, "\n".join(rows) + "\n")


def test_one_disk_printed_by_four_tools_is_one_table(db):
    res = analyse_study(db, alignment.analyse, STUDY)
    parts = res.numbers.partitions
    assert parts.height == 14  # every printed row is kept (the cited sources)
    assert sorted(set(parts["disk"])) == ["/dev/shm/h5/gpt.img", "gpt.img", "mbr.img"]
    assert sorted(set(parts["disk_name"])) == ["/dev/shm/h5/gpt.img", "mbr.img"]
    sentence = next(f for f in res.findings if "partition(s)" in str(f))
    assert str(sentence) == (
        "5 partition(s) in the selection's 2 partition table(s) (/dev/shm/h5/gpt.img: the same table in 4 "
        "outputs (fdisk-l-gpt.txt, gdisk-l-gpt.txt, parted-print-gpt.txt, sgdisk-p-gpt.txt), also named gpt.img); "
        "5 start on the 512 B physical sectors their tables print; /dev/shm/h5/gpt.img p1 at LBA 34, "
        "/dev/shm/h5/gpt.img p2 at LBA 204834, mbr.img p1 at LBA 63 would be misaligned on 4,096 B physical sectors "
        "(the physical_sector_bytes parameter): that holds only if the disk's real sectors are larger than its table "
        "prints (a 512e drive behind a bridge or a virtual disk that reports 512 B), which the tables cannot show."
    )


def test_same_name_different_identity_stays_two_disks(db):
    """The GPT disk's GUID against another GUID: two disks, however alike their tables (and the MBR disk apart)."""
    from storagelab.analysis import Selection, open_db
    from storagelab.analysis.alignment_tables import same_tables

    con = open_db(db)
    try:
        frames = alignment.query(con, Selection(study=STUDY))
    finally:
        con.close()
    import polars as pl

    parts = frames.partitions.with_columns(
        disk_id=pl.when(pl.col("path").str.ends_with("sgdisk-p-gpt.txt")).then(pl.lit("0B0B")).otherwise("disk_id")
    )
    out = same_tables(parts)
    tables = out.unique(["path", "disk"]).sort("path").select("path", "table", "outputs")
    names = [p.rsplit("/", 1)[-1] for p in tables["path"]]
    by_file = dict(zip(names, zip(tables["table"], tables["outputs"], strict=True), strict=True))
    assert by_file == {
        "fdisk-l-gpt.txt": (0, 3),
        "fdisk-l-mbr.txt": (1, 1),
        "gdisk-l-gpt.txt": (0, 3),
        "parted-print-gpt.txt": (0, 3),
        "sgdisk-p-gpt.txt": (2, 1),
    }


def test_runs_and_files_counted_as_09_counts_them(tmp_path):
    """h5 L2: 03 said '2 bonnie++ run(s)' of 3 runs in 2 files (tests/fixtures/bonnie/newuser-h5), all phase=before."""
    raw = tmp_path / "raw"
    (raw / "kestrel").mkdir(parents=True)
    rows = ["path,study,host,stack,vdev_type,phase"]
    for name in ("bonnie-btr.txt", "bonnie-btr-x2.csv"):
        shutil.copyfile(FIXTURES / "bonnie" / "newuser-h5" / name, raw / "kestrel" / name)
        rows.append(f"kestrel/{name},{STUDY},kestrel,btrfs-raid1,mirror,before")
    res = analyse_study(ingest_labelled(raw, "\n".join(rows) + "\n"), alignment.analyse, STUDY)
    assert [m for m in res.missing if "bonnie++ run(s)" in m] == [
        "3 bonnie++ run(s) from 2 file(s) for study H5 btrfs/raid: pre→post, but no 'after' one labelled "
        "phase=before/after (nor with a partition_start_sector to tell misaligned from aligned): label the pair in "
        "the manifest"
    ]
