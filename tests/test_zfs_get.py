"""zfs get: published outputs of Solaris (2009), TrueNAS CORE, ZFS on Linux 0.6/0.8 and OpenZFS 2.x."""

import pytest
from conftest import FIXTURES

from storagelab.parsers import ParseError, decode, detect, zfs_get
from storagelab.units import GiB, KiB, MiB

ZG = FIXTURES / "zfs-get"


def rows_of(rel):
    text = decode((ZG / rel).read_bytes())
    mod, fmt = detect(text)
    assert mod is zfs_get
    parsed = zfs_get.parse(text, fmt)
    return parsed, {(r["name"], r["property"]): r for r in parsed.rows("zfs_properties")}


def test_solaris_man_page_get_all():
    p, rows = rows_of("solaris-2009/get-all.txt")
    assert p.format == "zfs-get" and p.warnings == [] and len(rows) == 42
    bob = "pool/home/bob"
    r = rows[(bob, "used")]
    assert (r["value"], r["value_bytes"], r["exact"], r["source"], r["source_kind"]) == (
        "21K",
        21 * KiB,
        False,
        "-",
        "none",
    )
    assert rows[(bob, "available")]["value_bytes"] == pytest.approx(20.0 * GiB)
    assert rows[(bob, "quota")]["value_bytes"] == 20 * GiB and rows[(bob, "quota")]["source"] == "local"
    assert rows[(bob, "reservation")]["value_bytes"] is None and rows[(bob, "reservation")]["value"] == "none"
    assert rows[(bob, "recordsize")]["value_bytes"] == 128 * KiB
    assert rows[(bob, "compressratio")]["value_ratio"] == 1.0
    assert rows[(bob, "creation")]["value"] == "Tue Jul 21 15:53 2009"
    c = rows[(bob, "compression")]
    assert (c["value"], c["source_kind"], c["value_bytes"], c["exact"]) == ("on", "local", None, None)
    assert rows[(bob, "copies")]["value_count"] == 1 and rows[(bob, "version")]["value_count"] == 4
    assert rows[(bob, "primarycache")]["value"] == "all"
    assert rows[(bob, "usedbyrefreservation")]["value_bytes"] == 0
    assert c["command"] == "zfs get all pool/home/bob" and c["kind"] == "dataset"
    assert (c["line_start"], c["line_end"]) == (16, 16)


def test_truenas_core_inherited_and_user_properties():
    p, rows = rows_of("truenas-core-13/get-all.txt")
    assert len(rows) == 74
    ds = "tank/downloads"
    comp = rows[(ds, "compression")]
    assert (comp["value"], comp["source"], comp["source_kind"], comp["inherited_from"]) == (
        "lz4",
        "inherited from tank",
        "inherited",
        "tank",
    )
    assert rows[(ds, "sync")]["value"] == "disabled" and rows[(ds, "sync")]["inherited_from"] == "tank"
    assert rows[(ds, "used")]["value_bytes"] == pytest.approx(5.15 * MiB)
    assert rows[(ds, "compressratio")]["value_ratio"] == 1.21 and rows[(ds, "refcompressratio")]["value_ratio"] == 1.21
    assert rows[(ds, "logicalused")]["value_bytes"] == pytest.approx(6.17 * MiB)
    assert rows[(ds, "guid")]["value"] == "3495570787300485094"  # text: a guid is no quantity
    assert rows[(ds, "createtxg")]["value_count"] == 3020 and rows[(ds, "objsetid")]["value_count"] == 92
    assert rows[(ds, "usedbysnapshots")]["value_bytes"] == 0 and rows[(ds, "usedbysnapshots")]["value"] == "0B"
    assert rows[(ds, "special_small_blocks")]["value_bytes"] == 0
    assert rows[(ds, "filesystem_limit")]["value_count"] is None  # none
    tn = rows[(ds, "org.truenas:managedby")]
    assert (tn["value"], tn["source_kind"]) == ("192.168.11.100", "local")
    assert rows[(ds, "org.freebsd.ioc:active")]["inherited_from"] == "tank"


def test_linux_2x_prompt_with_sudo():
    p, rows = rows_of("linux-2.1/get-all.txt")
    assert len(rows) == 72
    r = rows[("btr/foo", "mountpoint")]
    assert (r["value"], r["inherited_from"], r["command"]) == ("/mnt/btr/foo", "btr", "zfs get all btr/foo")
    assert rows[("btr/foo", "creation")]["value"] == "Sat Jan 13  9:11 2024"  # two spaces kept
    assert rows[("btr/foo", "atime")]["source"] == "local"
    assert rows[("btr/foo", "logbias")]["value"] == "latency" and rows[("btr/foo", "dedup")]["value"] == "off"


def test_linux_p_exact_numbers():
    p, rows = rows_of("linux-0.8/get-all-p.txt")
    assert p.warnings == [] and len(rows) == 21
    z = "zpool1"
    assert rows[(z, "used")]["value_bytes"] == 111_378_432 and rows[(z, "used")]["exact"] is True
    assert rows[(z, "available")]["value_bytes"] == 358_383_616
    assert rows[(z, "referenced")]["value_bytes"] == 139_264
    assert rows[(z, "recordsize")]["value_bytes"] == 131_072 and rows[(z, "recordsize")]["exact"] is True
    assert rows[(z, "quota")]["value_bytes"] == 0
    assert rows[(z, "compressratio")]["value"] == "1.00" and rows[(z, "compressratio")]["value_ratio"] == 1.0
    assert rows[(z, "creation")]["value"] == "1567769661"
    assert rows[(z, "atime")]["command"] == "zfs get all zpool1 -p"


def test_several_datasets_one_property():
    p, rows = rows_of("linux-2.0/get-compressratio-two-datasets.txt")
    assert [(n, r["value_ratio"], r["line_start"]) for (n, _), r in rows.items()] == [
        ("home2/lz4", 1.03, 3),
        ("home2/zstd", 1.17, 4),
    ]


def test_scripted_H():
    p, rows = rows_of("linux-0.6/get-H-all.txt")
    assert p.format == "zfs-get-H" and len(rows) == 56
    r = rows[("test2", "used")]
    assert (r["value_bytes"], r["exact"], r["source"], r["command"]) == (pytest.approx(3.16 * GiB), False, "-", None)
    assert rows[("test2", "creation")]["value"] == "Thu Aug 28 17:28 2014"
    assert rows[("test2", "usedbychildren")]["value_bytes"] == 386 * KiB
    assert rows[("test2", "sync")]["value"] == "standard" and rows[("test2", "sync")]["source_kind"] == "default"
    assert rows[("test2", "redundant_metadata")]["line_start"] == 56


def test_zpool_get_kind_and_percent():
    text = (
        "NAME  PROPERTY       VALUE   SOURCE\n"
        "tank  size           4.53T   -\n"
        "tank  capacity       18%     -\n"
        "tank  dedupratio     1.00x   -\n"
        "tank  fragmentation  3%      -\n"
    )
    rows = zfs_get.parse(text).rows("zfs_properties")
    assert {r["kind"] for r in rows} == {"pool"}
    assert [r["value_pct"] for r in rows] == [None, 18.0, None, 3.0]
    assert rows[0]["value_bytes"] == pytest.approx(4.53 * 1024**4)


def test_refusals_name_the_line():
    with pytest.raises(ParseError) as e:
        zfs_get.parse("NAME  PROPERTY  VALUE  SOURCE\ntank  used      lots   -\n")
    assert e.value.line == 2 and "used" in e.value.message
    with pytest.raises(ParseError) as e:
        zfs_get.parse("NAME  PROPERTY  VALUE  SOURCE\ntank  used      1.5G   fromsomewhere\n")
    assert e.value.line == 2
    with pytest.raises(ParseError) as e:
        zfs_get.parse("NAME  PROPERTY  VALUE  SOURCE\n")
    assert e.value.kind == "truncated"
    assert zfs_get.sniff("NAME   SIZE  ALLOC   FREE  HEALTH\ntank  1T  1G  1T  ONLINE\n") is None


def test_zpool_get_all_of_zol_065():
    p, rows = rows_of("zol-0.6.5/zpool-get-all.txt")
    assert len(rows) == 12 and {r["kind"] for r in rows.values()} == {"pool"}
    assert rows[("pool", "size")]["value_bytes"] == pytest.approx(79.5 * GiB)
    assert rows[("pool", "capacity")]["value_pct"] == 0 and rows[("pool", "health")]["value"] == "ONLINE"
    assert rows[("pool", "guid")]["value"] == "15250584081627153650" and rows[("pool", "guid")]["source"] == "default"
    assert rows[("pool", "altroot")]["value"] == "-" and rows[("pool", "altroot")]["source_kind"] == "default"
    assert rows[("pool", "failmode")]["command"] == "zpool get all"


def test_H_o_value_takes_name_and_property_from_the_command():
    p, rows = rows_of("solaris-2009/get-H-o-value.txt")
    assert p.format == "zfs-get-H"
    assert [(k, r["value"], r["source"], r["line_start"]) for k, r in rows.items()] == [
        (("pool/home/bob", "compression"), "on", None, 2)
    ]
    with pytest.raises(ParseError) as e:  # -o value of several properties: which is which cannot be known
        zfs_get.parse("# zfs get -H -o value all tank\nlz4\n")
    assert e.value.line == 2 and "property" in e.value.expected
