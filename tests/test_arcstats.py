"""ARC statistics: Linux kstat (ZoL 0.7/0.8 era and OpenZFS 2.2+), FreeBSD 14 sysctl, arc_summary (OpenZFS 2.1 and
arc_summary.py of ZoL 0.7) and arcstat (0.6 and 2.2+), all published outputs."""

import pytest
from conftest import FIXTURES

from storagelab.parsers import ParseError, arcstats, parse_bytes
from storagelab.units import GiB, MiB

ARC = FIXTURES / "arcstats"


def parse(rel):
    path = ARC / rel
    parsed, mod = parse_bytes(path.read_bytes(), str(path))
    assert mod is arcstats and parsed.warnings == []
    return parsed


def stats(rel):
    parsed = parse(rel)
    return parsed, {r["name"]: r for r in parsed.rows("arc_stats")}


def test_linux_kstat_with_meta_limit():
    p, s = stats("linux-0.8/arcstats")
    assert p.format == "arcstats-kstat" and len(s) == 92
    got = {k: s[k]["value"] for k in ("size", "c", "c_min", "c_max", "arc_meta_limit", "arc_meta_used", "p")}
    assert got == {
        "size": 1_603_939_792,
        "c": 1_643_208_777,
        "c_min": 33_554_432,
        "c_max": 8_367_976_448,
        "arc_meta_limit": 6_275_982_336,
        "arc_meta_used": 308_103_632,
        "p": 516_395_305,
    }
    assert (s["hits"]["value"], s["misses"]["value"], s["l2_size"]["value"]) == (8_772_612, 604_635, 0)
    assert s["hits"]["value"] / (s["hits"]["value"] + s["misses"]["value"]) == pytest.approx(0.9355, abs=1e-4)
    h = s["hits"]
    assert (h["unit"], h["exact"], h["kstat_type"], h["label"], h["line_start"]) == ("count", True, 4, None, 40)
    assert s["size"]["unit"] == "bytes" and s["hash_chain_max"]["unit"] == "count"
    assert s["anon_evictable_data"]["unit"] == "bytes" and s["mfu_ghost_hits"]["unit"] == "count"


def test_linux_kstat_22_without_meta_limit():
    p, s = stats("linux-2.2/arcstats")
    assert len(s) == 147 and "arc_meta_limit" not in s and "p" not in s
    assert (s["hits"]["value"], s["iohits"]["value"], s["misses"]["value"]) == (33_266_704_081, 1_992_434, 30_882_817)
    assert (s["size"]["value"], s["c"]["value"], s["c_max"]["value"]) == (
        14_960_038_920,
        15_590_628_496,
        32_458_756_096,
    )
    assert (s["meta"]["unit"], s["meta"]["value"]) == ("fraction_2_32", 1_353_044_739)
    assert s["memory_available_bytes"]["kstat_type"] == 3  # int64
    assert s["l2_size"]["line_start"] == 107


def test_freebsd_sysctl():
    p, s = stats("freebsd-14/sysctl-kstat.zfs.misc.arcstats.txt")
    assert p.format == "arcstats-sysctl" and len(s) == 148
    assert (s["size"]["value"], s["c"]["value"], s["c_min"]["value"], s["c_max"]["value"]) == (
        137_512_848,
        176_014_976,
        132_892_288,
        3_178_811_392,
    )
    assert (s["hits"]["value"], s["misses"]["value"], s["hits"]["line_start"]) == (1_473_806, 63_001, 148)
    assert s["arc_meta_used"]["value"] == 80_185_232 and s["c_max"]["kstat_type"] is None


def test_arc_summary_openzfs_21():
    p, s = stats("linux-2.1/arc_summary.txt")
    assert p.format == "arc_summary" and p.tool_version == "2.1.11-pve1"
    assert sorted(s) == sorted(
        ["size", "c", "c_min", "c_max", "mfu_size", "mru_size", "arc_meta_limit", "arc_meta_used",
         "arc_dnode_limit", "dnode_size", "hits", "misses"]
    )  # fmt: skip
    assert s["size"]["value"] == pytest.approx(62.0 * GiB) and s["size"]["exact"] is False
    assert s["c_min"]["value"] == pytest.approx(3.9 * GiB) and s["c_max"]["value"] == pytest.approx(62.9 * GiB)
    assert s["arc_meta_limit"]["value"] == pytest.approx(47.2 * GiB)
    assert s["dnode_size"]["value"] == pytest.approx(54.2 * MiB)
    assert (s["hits"]["value"], s["misses"]["value"]) == (106_500_000, 2_100_000)  # 106.5M, 2.1M: powers of 1000
    assert (s["hits"]["label"], s["hits"]["line_start"]) == ("Cache hit ratio", 39)
    # "DMU prefetch efficiency: Hit ratio" is not the ARC's, nor the L2ARC's (the report says L2ARC not detected)
    assert "l2_hits" not in s


def test_arc_summary_py_07():
    p, s = stats("linux-0.7/arc_summary.py.txt")
    assert {k: r["value"] for k, r in s.items()} == {
        "size": 80 * GiB,
        "c": pytest.approx(80.01 * GiB),
        "c_min": 80 * GiB,
        "c_max": 100 * GiB,
        # arc_summary.py's 'Recently Used Cache Size' is the MRU target p (get_arc_summary: mru_size = arcstats.p),
        # its 'Frequently Used Cache Size' size - p: no kstat (not stored; they were mru_size and mfu_size)
        "p": pytest.approx(172.15 * MiB),
    }
    assert s["c"]["label"] == "Target Size: (Adaptive)" and s["c_max"]["line_start"] == 13


def test_arcstat_intervals():
    p = parse("linux-0.6/arcstat-2s.txt")
    rows = p.rows("arcstat_samples")
    assert p.format == "arcstat" and len(rows) == 14 * 11
    first = {r["field"]: r for r in rows if r["sample"] == 1}
    assert first["read"]["time"] == "21:16:08" and first["read"]["value"] == 519 and first["read"]["unit"] == "per_s"
    assert (first["miss"]["value"], first["miss%"]["value"], first["miss%"]["unit"]) == (42, 8, "pct")
    assert (first["arcsz"]["value"], first["arcsz"]["unit"], first["arcsz"]["exact"]) == (4.0 * GiB, "bytes", False)
    zero = {r["field"]: r["value"] for r in rows if r["sample"] == 0}
    assert zero["arcsz"] == pytest.approx(4.1 * GiB) and zero["c"] == 4.0 * GiB
    assert max(r["sample"] for r in rows) == 13 and rows[-1]["line_start"] == 16


def test_arcstat_selected_fields_without_time():
    rows = parse("linux-2.2-arcstat/arcstat-f-600s.txt").rows("arcstat_samples")
    s1 = {r["field"]: r for r in rows if r["sample"] == 1}
    assert s1["c"]["time"] is None and s1["c"]["value"] == 48 * GiB
    assert s1["mfu"]["value"] == 2500 and s1["mfu"]["unit"] == "per_s"  # 2.5K hits/s: powers of 1000
    assert s1["mrume"]["value"] == 146 * MiB and s1["l2hits"]["value"] == 13 and s1["mrug"]["value"] == 0.4


def test_refusals():
    with pytest.raises(ParseError) as e:
        arcstats.parse("    time  read  miss  arcsz     c\n12:00:01   1.5X    0   1G   1G\n")
    assert e.value.line == 2 and "read" in e.value.message
    text = (
        "6 1 0x01 3 144 1 2\nname                            type data\nhits 4 1\nmisses 4 2\nc_max 4 3\nbroken line\n"
    )
    with pytest.raises(ParseError) as e:
        arcstats.parse(text)
    assert e.value.line == 6
    assert arcstats.sniff("name type data\nfoo 4 1\n") is None  # another kstat (no hits, misses, c_max)


def test_solaris_arcstat_pl_on_a_thumper():
    p = parse("solaris-arcstat.pl/arcstat-thumper-cached-read.txt")
    rows = p.rows("arcstat_samples")
    assert len(rows) == 12 * 11
    first = {r["field"]: r for r in rows if r["sample"] == 0}
    assert (first["read"]["time"], first["read"]["value"], first["read"]["exact"]) == ("18:15:21", 985e6, False)
    assert (first["miss%"]["value"], first["dmis"]["value"], first["arcsz"]["value"]) == (10, 47e6, 11 * GiB)
    last = {r["field"]: r["value"] for r in rows if r["sample"] == 11}
    assert (last["read"], last["miss"]) == (33e3, 0)
