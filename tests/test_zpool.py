"""zpool list / zpool iostat: seed 004 (FreeBSD 12.2, real) and constructed OpenZFS/Solaris layouts."""

import pytest
from conftest import FIXTURES, RAW

from storagelab.parsers import ParseError, decode, detect, zpool
from storagelab.units import GiB, KiB, MiB, TiB

SEED = RAW / "freebsd-bonnie-dedup"
ZP = FIXTURES / "zpool"


def read(path):
    return decode(path.read_bytes())


def parse(path):
    return zpool.parse(read(path))


# --- zpool list -------------------------------------------------------------------------------


def test_seed_list_before_reorganisation():
    p = parse(SEED / "zpool-list-before.txt")
    assert p.format == "zpool-list" and p.warnings == []
    rows = {r["pool"]: r for r in p.rows("zpool_list")}
    assert list(rows) == ["WD14TB", "archiv", "backup3G", "raid1", "root"]
    r = rows["raid1"]
    # raid1     3.62T  3.45T   180G        -         -    47%    95%  1.17x  ONLINE  -
    assert r["size_bytes"] == pytest.approx(3.62 * TiB)
    assert r["alloc_bytes"] == pytest.approx(3.45 * TiB)
    assert r["free_bytes"] == 180 * GiB == 193_273_528_320
    assert r["free_bytes"] != 180e9  # nicenum is binary
    assert (r["ckpoint_bytes"], r["expandsz_bytes"], r["altroot"]) == (None, None, None)
    assert (r["frag_pct"], r["cap_pct"], r["dedup_ratio"], r["health"]) == (47.0, 95.0, 1.17, "ONLINE")
    assert (r["vdev"], r["depth"], r["class"], r["sample"], r["exact"]) == (None, 0, None, 0, False)
    assert r["command"] == "zpool list" and (r["line_start"], r["line_end"]) == (6, 6)
    assert rows["archiv"]["size_bytes"] == pytest.approx(21.8 * TiB)
    assert rows["backup3G"]["alloc_bytes"] == 497 * GiB


def test_seed_list_after_reorganisation():
    rows = {r["pool"]: r for r in parse(SEED / "zpool-list-after.txt").rows("zpool_list")}
    assert list(rows) == ["backup3G", "raid1", "raid5", "root"]
    assert rows["raid1"]["free_bytes"] == 443 * GiB and rows["raid1"]["dedup_ratio"] == 1.19
    assert rows["raid5"]["free_bytes"] == pytest.approx(4.60 * TiB) and rows["raid5"]["frag_pct"] == 6.0


def test_list_v_sections_and_vdev_rows():
    rows = parse(ZP / "list-v-openzfs2.txt").rows("zpool_list")
    assert [(r["vdev"], r["depth"], r["class"]) for r in rows] == [
        (None, 0, None),
        ("mirror-0", 1, "normal"),
        ("sda", 2, "normal"),
        ("sdb", 2, "normal"),
        ("mirror-1", 1, "normal"),
        ("sdc", 2, "normal"),
        ("sdd", 2, "normal"),
        ("nvme0n1p1", 1, "log"),
        ("nvme0n1p2", 1, "cache"),
        ("sde", 1, "spare"),
    ]
    assert all(r["pool"] == "tank" for r in rows)
    assert rows[1]["cap_pct"] == 39.8 and rows[1]["size_bytes"] == pytest.approx(5.45 * TiB)
    assert rows[2]["size_bytes"] is None and rows[2]["health"] == "ONLINE" and rows[2]["altroot"] is None
    assert rows[7]["alloc_bytes"] == pytest.approx(1.20 * MiB) and rows[7]["cap_pct"] == 0.0
    assert rows[9]["health"] == "AVAIL"


def test_list_scripted_exact_and_no_prompt():
    rows = parse(ZP / "list-Hp-openzfs2.txt").rows("zpool_list")
    assert [r["pool"] for r in rows] == ["rpool", "tank"]
    t = rows[1]
    assert (t["size_bytes"], t["alloc_bytes"], t["free_bytes"]) == (
        11_997_996_171_264,
        4_761_823_440_896,
        7_236_172_730_368,
    )
    assert (t["frag_pct"], t["cap_pct"], t["dedup_ratio"], t["altroot"], t["exact"]) == (3.0, 39.0, 1.0, "/mnt", True)
    assert t["command"] == "zpool list -Hp"
    rows = parse(ZP / "list-Hv-noprompt-openzfs2.txt").rows("zpool_list")
    assert [(r["vdev"], r["depth"], r["class"]) for r in rows] == [
        (None, 0, None),
        ("mirror-0", None, "normal"),
        ("sda", None, "normal"),
        ("sdb", None, "normal"),
        ("nvme0n1p1", None, "log"),
    ]
    assert rows[0]["size_bytes"] == pytest.approx(10.9 * TiB) and rows[0]["command"] is None


def test_list_old_solaris_labels_and_reordered_columns():
    (r,) = parse(ZP / "list-solaris-2008.txt").rows("zpool_list")
    assert r["alloc_bytes"] == pytest.approx(1.42 * TiB) and r["free_bytes"] == pytest.approx(19.4 * TiB)
    assert r["cap_pct"] == 6.0 and r["frag_pct"] is None and r["dedup_ratio"] is None
    p = zpool.parse("NAME   HEALTH  CAP   SIZE  GUID\ntank   ONLINE  39%  10.9T  1234\n")
    (r,) = p.rows("zpool_list")
    assert (r["health"], r["cap_pct"], r["size_bytes"]) == ("ONLINE", 39.0, pytest.approx(10.9 * TiB))
    assert p.warnings == ["line 1: zpool list columns not stored: GUID"]
    p = zpool.parse("$ zpool list -H -o name,health,size\ntank\tONLINE\t10.9T\n")
    assert p.rows("zpool_list")[0]["size_bytes"] == pytest.approx(10.9 * TiB)


# --- zpool iostat -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["zpool-iostat-raid5-1.txt", "zpool-iostat-raid5-2.txt"])
def test_seed_iostat_tree_roles(name):
    p = parse(SEED / name)
    rows = p.rows("zpool_iostat")
    assert [(r["vdev"], r["depth"], r["role"], r["class"], r["leaf"]) for r in rows] == [
        (None, 0, "pool", None, False),
        ("raidz1", 1, "vdev", "normal", False),
        ("ada0p1", 2, "disk", "normal", True),
        ("ada1p1", 2, "disk", "normal", True),
        ("ada2p1", 2, "disk", "normal", True),
        ("ada4p1", 2, "disk", "normal", True),
        # the ZIL device: no "logs" line in the author's paste, so it is what the output says, a top-level vdev
        ("nvd0p6", 1, "vdev", "normal", True),
        ("nvd0p7", 1, "cache", "cache", True),
    ]
    assert all(r["pool"] == "raid5" and r["sample"] == 0 and r["exact"] is False for r in rows)
    assert rows[0]["command"] == "zpool iostat -v raid5"
    assert [r["line_start"] for r in rows] == [5, 6, 7, 8, 9, 10, 11, 13]
    assert p.warnings == ["line 16: text that is not zpool output ignored"]  # the author's prose


def test_seed_iostat_values_powers_of_1024():
    rows = parse(SEED / "zpool-iostat-raid5-1.txt").rows("zpool_iostat")
    pool = rows[0]
    # raid5       4.93T  16.9T    177  2.77K  5.32M  72.4M
    assert pool["alloc_bytes"] == pytest.approx(4.93 * TiB) and pool["free_bytes"] == pytest.approx(16.9 * TiB)
    assert pool["read_ops_per_s"] == 177.0
    assert pool["write_ops_per_s"] == pytest.approx(2.77 * 1024) == 2836.48  # K of a count is 1024 too
    assert pool["read_bytes_per_s"] == pytest.approx(5.32 * MiB)
    assert pool["write_bytes_per_s"] == pytest.approx(72.4 * MiB)
    disk = rows[2]
    assert disk["alloc_bytes"] is None and disk["free_bytes"] is None  # "-"
    assert disk["write_bytes_per_s"] == pytest.approx(26.3 * MiB)
    log = rows[6]
    assert log["alloc_bytes"] == 128 * KiB and log["free_bytes"] == 960 * MiB
    assert log["read_bytes_per_s"] == 1.0 and log["write_bytes_per_s"] == pytest.approx(24.9 * KiB)
    cache = rows[7]
    assert cache["alloc_bytes"] == pytest.approx(19.5 * GiB) and cache["read_ops_per_s"] == 504.0
    rows2 = parse(SEED / "zpool-iostat-raid5-2.txt").rows("zpool_iostat")
    assert rows2[6]["alloc_bytes"] == 256 * KiB and rows2[7]["alloc_bytes"] == pytest.approx(18.6 * GiB)


def test_iostat_v_interval_sections_samples_timestamps():
    rows = parse(ZP / "iostat-v-interval-openzfs2.txt").rows("zpool_iostat")
    assert len(rows) == 18
    first, second = rows[:9], rows[9:]
    assert {r["sample"] for r in first} == {0} and {r["sample"] for r in second} == {1}
    assert {r["timestamp"] for r in first} == {"1700000000"} and {r["timestamp"] for r in second} == {"1700000005"}
    assert [(r["vdev"], r["role"]) for r in first] == [
        (None, "pool"),
        ("mirror-0", "vdev"),
        ("sda", "disk"),
        ("sdb", "disk"),
        ("mirror-1", "vdev"),
        ("sdc", "disk"),
        ("sdd", "disk"),
        ("nvme0n1p1", "log"),
        ("nvme0n1p2", "cache"),
    ]
    assert first[7]["class"] == "log" and first[7]["read_bytes_per_s"] == 12.0
    assert second[0]["write_ops_per_s"] == pytest.approx(1.02 * 1024) and second[0]["write_bytes_per_s"] == 127 * MiB
    assert second[0]["line_start"] == 23


def test_iostat_exact_scripted_latency_and_solaris():
    rows = parse(ZP / "iostat-vp-openzfs2.txt").rows("zpool_iostat")
    assert all(r["exact"] for r in rows)
    assert rows[0]["alloc_bytes"] == 4_761_823_440_896 and rows[0]["write_bytes_per_s"] == 10_349_568
    assert rows[2]["vdev"] == "sda" and rows[2]["alloc_bytes"] is None  # -p prints 0 for "not applicable"
    h = parse(ZP / "iostat-H-openzfs2.txt").rows("zpool_iostat")
    assert [(r["pool"], r["role"], r["depth"]) for r in h] == [("rpool", "pool", 0), ("tank", "pool", 0)]
    assert h[0]["read_bytes_per_s"] == pytest.approx(7.11 * KiB)
    (lat,) = parse(ZP / "iostat-l-openzfs2.txt").rows("zpool_iostat")  # CONSTRUCTED; real -l: test_zpool_hist
    assert lat["write_bytes_per_s"] == pytest.approx(9.87 * MiB) and lat["read_ops_per_s"] == 12.0
    (sol,) = parse(ZP / "iostat-solaris-2008.txt").rows("zpool_iostat")
    assert sol["alloc_bytes"] == pytest.approx(1.42 * TiB) and sol["write_ops_per_s"] == pytest.approx(1044.48)
    assert sol["read_bytes_per_s"] == pytest.approx(1.2 * KiB)


def test_iostat_unsupported_layouts():
    with pytest.raises(ParseError) as e:
        zpool.parse("$ zpool iostat -Hv tank\ntank\t1T\t1T\t0\t0\t0\t0\n", "zpool-iostat")
    assert e.value.kind == "unsupported-version" and e.value.line == 1
    histo = "              total_wait     disk_wait\npool        alloc   free   read  write   read  write\n"
    with pytest.raises(ParseError) as e:
        zpool.parse(histo, "zpool-iostat")
    assert e.value.kind == "unsupported-version" and e.value.line == 1
    req = (
        "$ zpool iostat -r tank\n"
        "tank          sync_read    sync_write    async_read    async_write      scrub         trim\n"
        "req_size      ind    agg    ind    agg    ind    agg    ind    agg    ind    agg    ind    agg\n"
    )
    with pytest.raises(ParseError) as e:
        zpool.parse(req, "zpool-iostat")
    assert e.value.kind == "unsupported-version" and e.value.line == 2


# --- detection and bad input ------------------------------------------------------------------


def test_sniff_and_detect():
    for path in sorted(ZP.glob("*.txt")) + sorted(SEED.glob("zpool-*.txt")):
        fmt = "zpool-iostat" if "iostat" in path.name else "zpool-list"
        assert zpool.sniff(read(path)) == fmt, path.name
        assert detect(read(path)) == (zpool, fmt)
    status = (
        "  pool: tank\n state: ONLINE\nconfig:\n\n\tNAME        STATE     READ WRITE CKSUM\n"
        "\ttank        ONLINE       0     0     0\n\t  sda       ONLINE       0     0     0\n"
    )
    zfs_list = "NAME   USED  AVAIL  REFER  MOUNTPOINT\ntank  4.33T  6.4T    96K  /tank\n"
    assert zpool.sniff(status) == "zpool-status" and zpool.sniff(zfs_list) is None  # status: zpool_status.py
    for other in ("gpart-ada3.txt", "zdb-b-raid1.txt", "bonnie-single-disk.txt"):
        assert zpool.sniff(read(SEED / other)) is None
    assert zpool.sniff(read(RAW / "thumper-x4500" / "mbuffer-socat-sender.txt")) is None
    fio = next((FIXTURES / "fio").glob("*/seq_write_group.txt"))
    assert zpool.sniff(read(fio)) is None


LIST = "NAME       SIZE  ALLOC   FREE  CKPOINT  EXPANDSZ   FRAG    CAP  DEDUP  HEALTH  ALTROOT\n"
IOSTAT = (
    "               capacity     operations    bandwidth\n"
    "pool        alloc   free   read  write   read  write\n"
    "----------  -----  -----  -----  -----  -----  -----\n"
)


@pytest.mark.parametrize(
    "text, fmt, kind, line",
    [
        ("", None, "empty", None),
        ("hello world\n", None, "invalid", 1),
        ("hello world\n", "zpool-list", "invalid", 1),
        (LIST, "zpool-list", "truncated", 1),
        (LIST + "raid1     3.62T  3.45T   180G        -         -    47%", "zpool-list", "truncated", 2),
        (
            LIST + "raid1     3.62T  3.45T   180G        -         -    47%\n"
            "root  1G  1G  1G  -  -  1%  1%  1.00x  ONLINE  -\n",
            "zpool-list",
            "invalid",
            2,
        ),
        (
            LIST + "raid1     3.62X  3.45T   180G        -         -    47%    95%  1.17x  ONLINE  -\n",
            "zpool-list",
            "truncated",
            2,
        ),
        (
            LIST + "raid1     3.62T  3.45T   180G        -         -    47%    95%  1.17x  HAPPY  -\n",
            "zpool-list",
            "truncated",
            2,
        ),
        (IOSTAT + "raid5       4.93T  16.9T    177  2.77K", "zpool-iostat", "truncated", 4),
        (
            IOSTAT + "raid5       4.93T  16.9T    177  2.77K  5.32M  72.4M\n"
            "  raidz1    4.93T  16.9T    abc  2.77K  5.32M  72.4M\n"
            "    ada0p1      -      -    46    532  1.30M  26.3M\n",
            "zpool-iostat",
            "invalid",
            5,
        ),
        ("  raidz1    4.93T  16.9T    177  2.77K  5.32M  72.4M\n", "zpool-iostat", "invalid", 1),
        (IOSTAT.replace("read  write   read  write\n", "read  write   read\n"), "zpool-iostat", "invalid", 2),
    ],
)
def test_bad_input(text, fmt, kind, line):
    with pytest.raises(ParseError) as e:
        zpool.parse(text, fmt)
    assert e.value.kind == kind and e.value.line == line and e.value.expected


def test_every_truncation_gives_rows_or_parse_error():
    for path in sorted(ZP.glob("*.txt")) + sorted(SEED.glob("zpool-*.txt")):
        text = read(path)
        fmt = zpool.sniff(text)
        for cut in range(0, len(text), max(1, len(text) // 40)):
            try:
                zpool.parse(text[:cut], fmt)
            except ParseError as e:
                assert e.kind in ("empty", "truncated", "invalid", "unsupported-version")


def test_a_bare_prompt_after_the_output_is_not_a_row():
    """A transcript that ends with the next prompt ('root@host:~# ') or another command: the rows before it are
    kept; the other command's output is ignored with a warning."""
    text = read(ZP / "list-v-openzfs2.txt").rstrip("\n")
    base = zpool.parse(text).rows("zpool_list")
    assert zpool.parse(text + "\nroot@host:~# \n").rows("zpool_list") == base
    p = zpool.parse(text + "\n$ zfs list\nNAME   USED  AVAIL\ntank  4.33T  6.4T\n")
    assert p.rows("zpool_list") == base
    n = len(text.split("\n"))
    assert p.warnings == [f"lines {n + 2}-{n + 3}: text that is not zpool output ignored"]
