"""zdb -C and other zdb configurations (zdb POOL, zdb -l): OpenZFS 2.1 and 2.3 ztest pools made here (a log vdev in
2.3's ashift-9 pool), and
published FreeBSD 9.2 and ZFS on Linux 0.6 outputs."""

import pytest
from conftest import FIXTURES

from storagelab.parsers import ParseError, parse_bytes, zdb

ZC = FIXTURES / "zdb-config"


def parse(rel):
    path = ZC / rel
    parsed, mod = parse_bytes(path.read_bytes(), str(path))
    assert mod is zdb and parsed.format == "zdb-C" and parsed.warnings == []
    return parsed.rows("zdb_config_pools"), {r["vdev_key"]: r for r in parsed.rows("zdb_config_vdevs")}


def test_21_mirror_of_raidz_ashift12():
    pools, vdevs = parse("2.1/C-ashift12.txt")
    assert [
        (p["source"], p["pool"], p["pool_guid"], p["version"], p["state"], p["txg"], p["hostname"]) for p in pools
    ] == [("MOS Configuration", "ztest", "3861654312972732974", 5000, 0, 145, "vm")]
    assert (pools[0]["vdev_children"], pools[0]["n_vdevs"], pools[0]["line_start"], pools[0]["line_end"]) == (
        1,
        12,
        3,
        106,
    )
    assert list(vdevs) == [
        "/",
        "/0",
        "/0/0",
        "/0/0/0",
        "/0/0/1",
        "/0/0/2",
        "/0/0/3",
        "/0/1",
        "/0/1/0",
        "/0/1/1",
        "/0/1/2",
        "/0/1/3",
    ]
    root, top = vdevs["/"], vdevs["/0"]
    assert (root["type"], root["parent_key"], root["depth"], root["top_level"], root["n_children"]) == (
        "root",
        None,
        0,
        False,
        1,
    )
    assert (top["type"], top["ashift"], top["asize_bytes"], top["is_log"], top["metaslab_shift"], top["top_level"]) == (
        "mirror",
        12,
        517_996_544,
        False,
        25,
        True,
    )
    assert (top["guid"], top["create_txg"], top["line_start"], top["line_end"]) == ("15454341598619754605", 4, 17, 103)
    rz = vdevs["/0/1"]
    assert (rz["type"], rz["nparity"], rz["parent_key"], rz["ashift"], rz["n_children"]) == ("raidz", 1, "/0", None, 4)
    leaf = vdevs["/0/1/3"]
    assert (leaf["type"], leaf["path"], leaf["vdev_id"], leaf["depth"]) == ("file", "/tmp/zme/pool/ztest.7a", 3, 3)


def test_21_two_top_level_vdevs_ashift9():
    pools, vdevs = parse("2.1/C-ashift9.txt")
    assert (pools[0]["txg"], pools[0]["vdev_children"]) == (1381, 2)
    tops = [v for v in vdevs.values() if v["top_level"]]
    assert [(v["vdev_key"], v["type"], v["ashift"], v["asize_bytes"], v["create_txg"]) for v in tops] == [
        ("/0", "mirror", 9, 129_499_136, 4),
        ("/1", "file", 9, 129_499_136, 1036),
    ]
    assert vdevs["/1"]["path"] == "/tmp/zme/pool2/ztest.1a" and vdevs["/0"]["whole_disk"] is False


def test_23_two_mirrors_of_raidz():
    pools, vdevs = parse("2.3/C-ashift12.txt")
    assert (pools[0]["pool_guid"], pools[0]["txg"], pools[0]["vdev_children"], pools[0]["n_vdevs"]) == (
        "18300703088656608238",
        357,
        2,
        23,
    )
    tops = [v for v in vdevs.values() if v["top_level"]]
    assert [(v["vdev_key"], v["type"], v["ashift"], v["is_log"], v["create_txg"], v["n_children"]) for v in tops] == [
        ("/0", "mirror", 12, False, 4, 2),
        ("/1", "mirror", 12, False, 314, 2),
    ]
    assert vdevs["/0/0/0"]["path"] == "/tmp/zfsapt/cfg-2.3-ashift12/ztest.0a"
    assert (vdevs["/1/1"]["type"], vdevs["/1/1"]["nparity"]) == ("raidz", 1)


def test_freebsd_cached_configuration_of_zdb():
    pools, vdevs = parse("published/freebsd-9.2-zdb.txt")
    assert [(p["source"], p["pool"], p["pool_guid"], p["txg"], p["hostname"], p["line_start"]) for p in pools] == [
        ("tub", "tub", "1977524300", 25, "mfsbsd", 3)
    ]
    assert vdevs["/0"]["asize_bytes"] == 1_996_098_633_728 and vdevs["/0"]["ashift"] == 12
    assert [(vdevs[k]["path"], vdevs[k]["whole_disk"]) for k in ("/0/0", "/0/1")] == [
        ("/dev/ada0p3.nop", True),
        ("/dev/ada1p3.nop", True),
    ]


def test_zol_label_tree_starts_at_the_top_level_vdev():
    pools, vdevs = parse("published/zol-0.6-zdb-l-label0.txt")
    assert [(p["source"], p["pool"], p["version"], p["txg"]) for p in pools] == [("LABEL 0", "zpool", 28, 17_281_008)]
    top = vdevs["/"]
    assert (top["type"], top["top_level"], top["ashift"], top["asize_bytes"]) == ("mirror", True, 12, 2_998_440_558_592)
    assert (vdevs["/0"]["path"], vdevs["/0"]["flags"]) == ("/dev/sda2", "not_present")
    assert (vdevs["/1"]["path"], vdevs["/1"]["flags"], vdevs["/1"]["whole_disk"]) == ("/dev/sdh1", None, False)


def test_config_before_other_zdb_output_is_kept():
    """zdb -b output with the configuration printed before it: both are read."""
    config = (ZC / "2.1/C-ashift9.txt").read_text()
    b = (FIXTURES / "zdb/2.1/b.txt").read_text()
    parsed, _ = parse_bytes((config + "\n" + b).encode())
    assert parsed.format == "zdb-b"
    assert len(parsed.rows("zdb_block_stats")) == 1 and len(parsed.rows("zdb_config_vdevs")) == 5


def test_bad_number_names_the_line():
    text = "MOS Configuration:\n        version: 5000\n        name: 'x'\n        vdev_tree:\n            type: 'root'\n            id: zero\n"
    with pytest.raises(ParseError) as e:
        zdb.parse(text)
    assert e.value.line == 6 and "id" in e.value.message


def test_23_default_output_keeps_both_configurations_and_the_ddt():
    """zdb POOL (no option), its first 400 lines: the import and MOS configurations, then the DDT objects."""
    path = ZC / "2.3/default-head.txt"
    parsed, mod = parse_bytes(path.read_bytes(), str(path))
    assert mod is zdb and parsed.format == "zdb-DD"
    pools = parsed.rows("zdb_config_pools")
    assert [
        (p["source"], p["txg"], p["hostname"], p["vdev_children"], p["line_start"], p["line_end"]) for p in pools
    ] == [
        ("Configuration for import", None, None, 5, 3, 74),
        ("MOS Configuration", 832, "vm", 5, 77, 165),
    ]
    assert {p["pool_guid"] for p in pools} == {"10699345930940006399"}
    tops = [v for v in parsed.rows("zdb_config_vdevs") if v["top_level"] and v["config_no"] == 2]
    assert [(v["vdev_key"], v["type"], v["ashift"], v["is_log"]) for v in tops] == [
        ("/0", "file", 9, False),
        ("/1", "file", 9, False),
        ("/2", "file", 9, True),
        ("/3", "file", 9, False),
        ("/4", "file", 9, False),
    ]
    assert len(parsed.rows("zdb_ddt_objects")) > 0


def test_23_five_plain_top_level_vdevs_ashift9():
    pools, vdevs = parse("2.3/C-ashift9.txt")
    assert (pools[0]["pool_guid"], pools[0]["txg"], pools[0]["n_vdevs"]) == ("10699345930940006399", 832, 6)
    assert {v["ashift"] for v in vdevs.values() if v["top_level"]} == {9}
    assert vdevs["/2"]["is_log"] is True and vdevs["/4"]["asize_bytes"] == 129_499_136
