"""Partition tables: gpart (seed 004 + constructed), fdisk/sfdisk/parted (real util-linux 2.38 / parted 3.5 runs)."""

import pytest
from conftest import FIXTURES, RAW

from storagelab.parsers import ParseError, decode, detect, partitions
from storagelab.parsers.partitions import alignment

PT = FIXTURES / "partitions"
SEED = RAW / "freebsd-bonnie-dedup"


def read(path):
    return decode(path.read_bytes())


def parse(path):
    return partitions.parse(read(path))


def parts(path):
    return parse(path).rows("partitions")


# --- the verdict ------------------------------------------------------------------------------


def test_alignment_lba63_vs_lba2048():
    a = alignment(63, 512)
    assert a == {
        "start_bytes": 32_256,
        "align_4k_rem_bytes": 3_584,
        "align_1m_rem_bytes": 32_256,
        "aligned_4k": False,
        "aligned_1m": False,
    }
    b = alignment(2048)
    assert b == {
        "start_bytes": 1_048_576,
        "align_4k_rem_bytes": 0,
        "align_1m_rem_bytes": 0,
        "aligned_4k": True,
        "aligned_1m": True,
    }
    assert alignment(34)["align_4k_rem_bytes"] == 1024  # GPT's first usable LBA
    c = alignment(63, 4096)  # 4Kn: every LBA is 4K-aligned, not 1M-aligned
    assert c["aligned_4k"] is True and c["aligned_1m"] is False and c["align_1m_rem_bytes"] == 258_048
    assert alignment(256, 4096)["aligned_1m"] is True and alignment(256, 512)["aligned_1m"] is False


@pytest.mark.parametrize("args", [(-1, 512), (63, 0), (63.0, 512), (True, 512), (63, "512")])
def test_alignment_rejects_nonsense(args):
    with pytest.raises(ValueError):
        alignment(*args)


# --- gpart ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, disk", [("gpart-ada3.txt", "ada3"), ("gpart-ada5.txt", "ada5")])
def test_gpart_seed_after_fix_starts_at_2048(name, disk):
    p = parse(SEED / name)
    (d,) = p.rows("disks")
    assert d["disk"] == disk and d["table_type"] == "GPT"
    assert (d["usable_first_sector"], d["usable_sectors"]) == (40, 7_814_037_088)
    assert d["free_sectors"] == 2008 + 1672
    # gpart prints the disk only rounded (3.6T): the size is where the usable area ends, a lower bound
    assert d["size_sectors"] == 40 + 7_814_037_088 and d["size_source"] == "usable-end"
    assert d["size_bytes"] == 7_814_037_128 * 512 == 4_000_787_009_536 and d["media_size_text"] == "3.6T"
    assert d["logical_sector_bytes"] == 512 and d["physical_sector_bytes"] is None
    assert d["logical_sector_source"] == "checked" and d["partitions"] == 1
    assert (d["line_start"], d["line_end"]) == (2, 5)
    (r,) = p.rows("partitions")
    assert (r["index"], r["start_sector"], r["size_sectors"], r["end_sector"]) == (
        1,
        2048,
        7_814_033_408,
        7_814_035_455,
    )
    assert r["type"] == "freebsd-zfs" and r["device"] is None and r["flags"] is None
    assert r["start_bytes"] == 1_048_576 and r["size_bytes"] == 7_814_033_408 * 512
    assert r["aligned_4k"] is True and r["aligned_1m"] is True and r["align_4k_rem_bytes"] == 0
    assert r["physical_sector_bytes"] is None
    assert (r["line_start"], r["line_end"]) == (4, 4)
    assert p.warnings == []


def test_gpart_mbr_slice_at_63_and_nested_bsd_label():
    p = parse(PT / "gpart-constructed-mbr63.txt")
    disks = {d["disk"]: d for d in p.rows("disks")}
    assert disks["ada0"]["table_type"] == "MBR" and disks["ada0s1"]["table_type"] == "BSD"
    rows = p.rows("partitions")
    slice1 = rows[0]
    assert (slice1["disk"], slice1["index"], slice1["start_sector"], slice1["type"], slice1["flags"]) == (
        "ada0",
        1,
        63,
        "freebsd",
        "active",
    )
    assert slice1["start_bytes"] == 32_256 and slice1["align_4k_rem_bytes"] == 3_584 and slice1["aligned_4k"] is False
    bsd = {r["index"]: r for r in rows if r["disk"] == "ada0s1"}
    assert sorted(bsd) == [1, 2, 4]
    # offsets in the label are relative to the slice: 0 is LBA 63 of the disk, still misaligned
    assert bsd[1]["start_sector"] == 0 and bsd[1]["abs_start_sector"] == 63
    assert bsd[1]["start_bytes"] == 32_256 and bsd[1]["aligned_4k"] is False
    assert bsd[2]["abs_start_sector"] == 8_388_608 + 63 and bsd[2]["align_4k_rem_bytes"] == 3_584
    assert bsd[4]["type"] == "freebsd-ufs" and bsd[4]["size_sectors"] == 959_995_889


def test_gpart_p_providers_attributes_and_corrupt_state():
    p = parse(PT / "gpart-constructed-gpt-p.txt")
    (d,) = p.rows("disks")
    assert d["state"] == "CORRUPT" and d["free_sectors"] == 984 + 1416 and d["media_size_text"] == "932G"
    rows = p.rows("partitions")
    assert [(r["device"], r["index"]) for r in rows] == [("ada1p1", 1), ("ada1p2", 2), ("ada1p3", 3)]
    assert rows[0]["flags"] == "bootme" and rows[0]["type"] == "freebsd-boot"
    assert rows[0]["aligned_4k"] is True and rows[0]["aligned_1m"] is False  # LBA 40 = 20 KiB
    assert rows[2]["start_sector"] == 4_196_352 and rows[2]["aligned_1m"] is True


def test_gpart_4kn_sector_size_inferred_from_human_sizes():
    p = parse(PT / "gpart-constructed-4kn.txt")
    (r,) = p.rows("partitions")
    assert r["logical_sector_bytes"] == 4096 and r["logical_sector_source"] == "inferred"
    assert r["start_sector"] == 256 and r["start_bytes"] == 1_048_576 and r["aligned_1m"] is True
    assert r["size_bytes"] == 976_754_176 * 4096
    assert len(p.warnings) == 1 and "4096" in p.warnings[0]


# --- fdisk ------------------------------------------------------------------------------------


def test_fdisk_sector63_vs_2048_real():
    p = parse(PT / "fdisk-dos63.txt")
    (d,) = p.rows("disks")
    assert d == {
        **d,
        "disk": "dos63.img",
        "table_type": "MBR",
        "label_id": "0x0d050063",
        "size_sectors": 131_072,
        "size_bytes": 67_108_864,
        "size_source": "printed",
        "logical_sector_bytes": 512,
        "physical_sector_bytes": 512,
        "logical_sector_source": "printed",
        "partitions": 2,
        "line_start": 1,
        "line_end": 10,
    }
    p1, p2 = p.rows("partitions")
    assert (p1["device"], p1["index"], p1["start_sector"], p1["end_sector"], p1["size_sectors"]) == (
        "dos63.img1",
        1,
        63,
        32_767,
        32_705,
    )
    assert (p1["type"], p1["type_id"], p1["flags"]) == ("Linux", "83", "boot")
    assert p1["start_bytes"] == 32_256 and p1["align_4k_rem_bytes"] == 3_584 and p1["aligned_4k"] is False
    assert (p2["start_sector"], p2["type"], p2["type_id"], p2["flags"]) == (32_768, "HPFS/NTFS/exFAT", "7", None)
    assert p2["aligned_4k"] is True and p2["aligned_1m"] is True and p2["line_start"] == 10


def test_fdisk_extended_logical_and_types_with_spaces():
    rows = parts(PT / "fdisk-dos2048.txt")
    assert [r["index"] for r in rows] == [1, 2, 3, 5, 6]
    assert [r["type"] for r in rows] == ["Linux", "Linux swap / Solaris", "Extended", "Linux", "W95 FAT32 (LBA)"]
    assert [r["type_id"] for r in rows] == ["83", "82", "5", "83", "c"]
    assert all(r["aligned_1m"] for r in rows)
    assert rows[2]["size_sectors"] == 88_064 and rows[2]["size_bytes"] == 88_064 * 512


def test_fdisk_gpt_and_multiple_disks():
    p = parse(PT / "fdisk-multi.txt")
    disks = p.rows("disks")
    assert [d["disk"] for d in disks] == ["dos63.img", "blank.img", "gpt.img"]
    assert disks[1]["table_type"] is None and disks[1]["partitions"] == 0 and disks[1]["size_sectors"] == 16_384
    assert (disks[1]["line_start"], disks[1]["line_end"]) == (13, 16)
    gpt = [r for r in p.rows("partitions") if r["disk"] == "gpt.img"]
    assert [r["type"] for r in gpt] == ["BIOS boot", "EFI System", "Linux filesystem", "Linux swap"]
    assert gpt[0]["start_sector"] == 34 and gpt[0]["align_4k_rem_bytes"] == 1024 and gpt[0]["aligned_4k"] is False
    assert gpt[0]["table_type"] == "GPT" and gpt[0]["type_id"] is None and gpt[0]["line_start"] == 27


def test_fdisk_4096_byte_sectors():
    p = parse(PT / "fdisk-dos4kn.txt")
    (d,) = p.rows("disks")
    assert (d["size_sectors"], d["size_bytes"], d["logical_sector_bytes"], d["physical_sector_bytes"]) == (
        16_384,
        67_108_864,
        4096,
        4096,
    )
    p1, p2 = p.rows("partitions")
    assert p1["start_sector"] == 256 and p1["start_bytes"] == 1_048_576 and p1["aligned_1m"] is True
    assert p1["size_bytes"] == 7936 * 4096 and p2["start_bytes"] == 8192 * 4096


def test_fdisk_util_linux_2_20_layout_512e_disk():
    p = parse(PT / "fdisk-constructed-2.20-sec63.txt")
    sda, sdb = p.rows("disks")
    assert (sda["disk"], sda["table_type"], sda["size_sectors"], sda["size_bytes"]) == (
        "/dev/sda",
        "MBR",
        976_773_168,
        500_107_862_016,
    )
    assert (sda["logical_sector_bytes"], sda["physical_sector_bytes"]) == (512, 4096)
    assert sdb["table_type"] is None and sdb["partitions"] == 0
    p1, p2 = p.rows("partitions")
    assert (p1["start_sector"], p1["size_sectors"], p1["flags"], p1["type"], p1["type_id"]) == (
        63,
        208_782,
        "boot",
        "Linux",
        "83",
    )
    assert p1["align_4k_rem_bytes"] == 3_584 and p1["physical_sector_bytes"] == 4096
    assert (p2["start_sector"], p2["size_sectors"], p2["type"]) == (208_845, 976_564_323, "Linux LVM")
    assert p2["align_4k_rem_bytes"] == 208_845 * 512 % 4096 == 2_560
    assert "line 12: Partition 1 does not start on physical sector boundary." in p.warnings


# --- sfdisk -----------------------------------------------------------------------------------


def test_sfdisk_dump_dos_and_gpt():
    p1, p2 = parts(PT / "sfdisk-dos63.txt")
    assert (p1["device"], p1["start_sector"], p1["size_sectors"], p1["type_id"], p1["flags"]) == (
        "dos63.img1",
        63,
        32_705,
        "83",
        "boot",
    )
    assert p1["aligned_4k"] is False and p2["aligned_1m"] is True and p1["logical_sector_source"] == "printed"
    p = parse(PT / "sfdisk-gpt.txt")
    (d,) = p.rows("disks")
    assert (d["disk"], d["table_type"], d["usable_first_sector"], d["usable_sectors"]) == (
        "gpt.img",
        "GPT",
        34,
        131_005,
    )
    assert (d["size_sectors"], d["size_source"]) == (131_039, "usable-end")  # the image has 131072
    dos = parse(PT / "sfdisk-dos63.txt").rows("disks")[0]
    assert (dos["size_sectors"], dos["size_bytes"], dos["size_source"]) == (None, None, None)
    assert d["label_id"] == "6B5C0C6E-0000-4000-8000-000000000001"
    rows = p.rows("partitions")
    assert [r["name"] for r in rows] == ["bios boot", "EFI system", "my data", "swap"]
    assert rows[1]["type_id"] == "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
    assert rows[0]["start_bytes"] == 17_408 and rows[0]["aligned_4k"] is False


def test_sfdisk_old_format_assumes_512_and_skips_unused_slots():
    p = parse(PT / "sfdisk-constructed-2.20-sec63.txt")
    rows = p.rows("partitions")
    assert [(r["index"], r["start_sector"], r["size_sectors"], r["type_id"]) for r in rows] == [
        (1, 63, 208_782, "83"),
        (2, 208_845, 976_564_323, "8e"),
    ]
    assert rows[0]["flags"] == "boot" and rows[0]["logical_sector_source"] == "assumed"
    assert p.rows("disks")[0]["disk"] == "/dev/sda"
    assert p.warnings == ["line 1: sfdisk printed no sector-size: 512 assumed"]


# --- parted -----------------------------------------------------------------------------------


def test_parted_machine_and_human():
    p = parse(PT / "parted-m-gpt.txt")
    (d,) = p.rows("disks")
    assert (d["disk"], d["size_sectors"], d["logical_sector_bytes"], d["physical_sector_bytes"], d["table_type"]) == (
        "/tmp/storagelab-pt/gpt.img",
        131_072,
        512,
        512,
        "GPT",
    )
    rows = p.rows("partitions")
    assert [(r["index"], r["name"], r["flags"]) for r in rows] == [
        (1, "bios boot", "bios_grub"),
        (2, "EFI system", "boot, esp"),
        (3, "my data", None),
        (4, "swap", "swap"),
    ]
    h = parse(PT / "parted-dos2048.txt").rows("partitions")
    assert [(r["index"], r["type"], r["flags"]) for r in h] == [
        (1, "primary", None),
        (2, "primary", "swap"),
        (3, "extended", None),
        (5, "logical", None),
        (6, "logical", "lba"),
    ]
    h63 = parse(PT / "parted-dos63.txt").rows("partitions")
    assert h63[0]["start_sector"] == 63 and h63[0]["flags"] == "boot" and h63[0]["aligned_4k"] is False


def test_parted_bytes_free_rows_and_rounded_units():
    b = parts(PT / "parted-m-gpt-bytes.txt")
    s = parts(PT / "parted-m-gpt.txt")
    assert [(r["start_sector"], r["size_sectors"]) for r in b] == [(r["start_sector"], r["size_sectors"]) for r in s]
    assert parse(PT / "parted-m-gpt-bytes.txt").rows("disks")[0]["size_bytes"] == 67_108_864
    assert parse(PT / "parted-m-gpt-free.txt").rows("disks")[0]["free_sectors"] == 71_647
    # parted's default unit: rounded values are stored as printed, with the bytes their coarsest last digit stands
    # for; sectors and alignment unknown (issue 25: they were refused)
    c = parse(PT / "parted-m-compact.txt")
    rows = c.rows("partitions")
    assert [(r["start_bytes"], r["size_bytes"], r["rounded_to_bytes"]) for r in rows] == [
        (32_300, 16_700_000, 100_000),
        (16_800_000, 50_300_000, 100_000),
    ]
    assert all(r[k] is None for r in rows for k in ("start_sector", "end_sector", "size_sectors", "aligned_4k"))
    assert abs(rows[0]["start_bytes"] - 63 * 512) <= 50  # 32.3kB: LBA 63 is 32,256 bytes, within half the last digit
    disk = c.rows("disks")[0]
    assert (disk["size_bytes"], disk["size_rounded_to_bytes"], disk["size_sectors"]) == (67_100_000, 100_000, None)
    assert c.warnings == [
        "line 3: parted printed rounded sizes (its default unit): start_bytes/size_bytes are stored as printed, with "
        "rounded_to_bytes; their sectors and alignment are not known (run parted DEV unit s print)"
    ]


@pytest.mark.parametrize("image", ["dos63", "dos2048", "gpt"])
def test_all_tools_agree_on_the_same_image(image):
    def key(path):
        return [(r["index"], r["start_sector"], r["size_sectors"], r["aligned_4k"]) for r in parts(path)]

    ref = key(PT / f"fdisk-{image}.txt")
    others = [key(PT / f"{tool}-{image}.txt") for tool in ("sfdisk", "parted-m", "parted")]
    assert others == [ref, ref, ref]


# --- detection and bad input ------------------------------------------------------------------


def test_sniff_each_fixture_and_not_others():
    for path in sorted(PT.glob("*.txt")) + [SEED / "gpart-ada3.txt"]:
        fmt = path.name.split("-")[0]
        assert partitions.sniff(read(path)) == fmt, path.name
        mod, found = detect(read(path))
        assert mod is partitions and found == fmt
    for other in ("zpool-list-before.txt", "zpool-iostat-raid5-1.txt", "zdb-b-raid1.txt", "bonnie-single-disk.txt"):
        assert partitions.sniff(read(SEED / other)) is None
    assert partitions.sniff(read(RAW / "thumper-x4500" / "mbuffer-socat-sender.txt")) is None
    fio = next((FIXTURES / "fio").glob("*/seq_write_group.txt"))
    assert partitions.sniff(read(fio)) is None


GPART = "=>        40  7814037088  ada3  GPT  (3.6T)\n          40        2008        - free -  (1.0M)\n"
FDISK = (
    "Disk x.img: 64 MiB, 67108864 bytes, 131072 sectors\nUnits: sectors of 1 * 512 = 512 bytes\n"
    "Sector size (logical/physical): 512 bytes / 512 bytes\nDisklabel type: dos\n\n"
    "Device     Boot Start    End Sectors Size Id Type\n"
)


@pytest.mark.parametrize(
    "text, fmt, kind, line",
    [
        ("", None, "empty", None),
        ("hello\nworld\n", None, "invalid", 1),
        (GPART + "        2048  78140", "gpart", "truncated", 3),
        (GPART + "        2048  78140\n        9999  1  2  x (1K)\n", "gpart", "invalid", 3),
        ("=>        40  7814037088  ada3  GPT  (3.6T)\n", "gpart", "truncated", 1),
        ("gpart show\nnonsense\n", "gpart", "invalid", 2),
        (FDISK, "fdisk", "truncated", 6),
        (FDISK + "x.img1 *  63  131071\n", "fdisk", "truncated", 7),
        (FDISK + "x.img1 *  63  131071  5  64M 83 Linux\n", "fdisk", "invalid", 7),
        (FDISK + "x.img1 *  63  13x071  131009  64M 83 Linux\nmore\n", "fdisk", "invalid", 7),
        (
            FDISK.replace("Units: sectors of 1 * 512 = 512", "Units = cylinders of 16065 * 512 = 8225280"),
            "fdisk",
            "unsupported-version",
            2,
        ),
        ("label: dos\nunit: cylinders\n", "sfdisk", "unsupported-version", 2),
        ("label: dos\nunit: sectors\n\nx.img1 : start=   63, size=", "sfdisk", "truncated", 4),
        ('label: gpt\nx.img1 : start=34, size=10, name="abc\n', "sfdisk", "truncated", 2),
        ("BYT;\n/x.img:131072s:file:512:512:msdos::;\n1:63s:131071s", "parted", "truncated", 3),
        ("CHS;\n/x.img:1,2,3:file:512:512:msdos::;\n", "parted", "unsupported-version", 1),
        (
            "BYT;\n/x.img:131072s:file:512:512:msdos::;\n1:63s:131071s:131009s:::;\nbogus;\n2:1s:2s:2s:::;\n",
            "parted",
            "invalid",
            4,
        ),
    ],
)
def test_bad_input(text, fmt, kind, line):
    with pytest.raises(ParseError) as e:
        partitions.parse(text, fmt)
    assert e.value.kind == kind and e.value.line == line and e.value.expected


def test_every_truncation_gives_rows_or_parse_error():
    for path in sorted(PT.glob("*.txt")):
        text = read(path)
        fmt = partitions.sniff(text)
        for cut in range(0, len(text), max(1, len(text) // 40)):
            try:
                partitions.parse(text[:cut], fmt)
            except ParseError as e:
                assert e.kind in ("empty", "truncated", "invalid", "unsupported-version")


# --- legacy sfdisk -l (util-linux 2.23.2, CentOS 7.7; fixtures/partitions/util-linux-2.23.2/COMMANDS.md) ------

LEGACY = PT / "util-linux-2.23.2"


@pytest.mark.parametrize(
    "name, source", [("sfdisk-luS.txt", "printed"), ("sfdisk-luB.txt", "assumed"), ("sfdisk-luM.txt", "assumed")]
)
def test_legacy_sfdisk_l_in_sectors_blocks_and_mib_gives_exact_starts(name, source):
    assert detect(read(LEGACY / name))[1] == "sfdisk-l"
    p = parse(LEGACY / name)
    assert (p.format, p.warnings) == ("sfdisk-l", [])
    rows = [
        (
            r["disk"],
            r["device"],
            r["index"],
            r["start_sector"],
            r["end_sector"],
            r["size_sectors"],
            r["type_id"],
            r["type"],
            r["flags"],
            r["logical_sector_bytes"],
            r["logical_sector_source"],
            r["table_type"],
            r["start_bytes"],
            r["aligned_4k"],
            r["aligned_1m"],
            r["line_start"],
        )
        for r in p.rows("partitions")
    ]
    assert rows == [
        (
            "/dev/sda",
            "/dev/sda1",
            1,
            2048,
            2099199,
            2097152,
            "83",
            "Linux",
            "boot",
            512,
            source,
            "MBR",
            1048576,
            True,
            True,
            6,
        ),
        (
            "/dev/sda",
            "/dev/sda2",
            2,
            2099200,
            41943039,
            39843840,
            "8e",
            "Linux LVM",
            None,
            512,
            source,
            "MBR",
            2099200 * 512,
            True,
            True,
            7,
        ),
    ]
    disks = [(d["disk"], d["table_type"], d["partitions"], d["size_sectors"], d["line_start"]) for d in p.rows("disks")]
    assert disks == [
        ("/dev/sda", "MBR", 2, None, 2),
        ("/dev/mapper/centos-root", None, 0, None, 11),
        ("/dev/mapper/centos-swap", None, 0, None, 13),
    ]


def test_legacy_sfdisk_l_in_cylinders_keeps_sizes_but_not_unknown_starts():
    """The default unit: starts '0+' and '130+' lie inside a cylinder, so their sector (and alignment)
    is not known; the #blocks column still gives the exact size (2 x blocks; '+' would add a sector)."""
    p = parse(LEGACY / "sfdisk-l.txt")
    assert p.format == "sfdisk-l"
    assert p.warnings == [
        "starts not on a unit boundary ('N+'), so their sector and alignment are unknown "
        "(sfdisk -luS prints sectors): /dev/sda1 (0+), /dev/sda2 (130+)"
    ]
    rows = [
        (
            r["device"],
            r["start_sector"],
            r["end_sector"],
            r["size_sectors"],
            r["start_bytes"],
            r["aligned_4k"],
            r["aligned_1m"],
            r["size_bytes"],
        )
        for r in p.rows("partitions")
    ]
    assert rows == [
        ("/dev/sda1", None, None, 2097152, None, None, None, 1073741824),
        ("/dev/sda2", None, None, 39843840, None, None, None, 39843840 * 512),
    ]


def test_legacy_sfdisk_cylinder_start_on_a_boundary_is_exact():
    """A start printed without '+' is the first sector of its cylinder (255 x 63 = 16065 sectors each)."""
    text = read(LEGACY / "sfdisk-l.txt").replace("/dev/sda2        130+", "/dev/sda2        131 ")
    row = partitions.parse(text).rows("partitions")[1]
    assert (row["start_sector"], row["start_bytes"], row["aligned_4k"], row["align_4k_rem_bytes"]) == (
        131 * 16065,
        131 * 16065 * 512,
        False,
        (131 * 16065 * 512) % 4096,
    )


def test_legacy_sfdisk_damage():
    text = read(LEGACY / "sfdisk-luS.txt")
    with pytest.raises(ParseError) as e:
        partitions.parse(text.replace("2099200  41943039", "2099200  4194x039"))
    assert (e.value.kind, e.value.line) == ("invalid", 7)
    cut = text[: text.index("/dev/sda2") + 20]
    with pytest.raises(ParseError) as e:
        partitions.parse(cut)
    assert (e.value.kind, e.value.line) == ("truncated", 7)


def test_legacy_sfdisk_d_old_dump():
    p = parse(LEGACY / "sfdisk-d.txt")
    assert p.format == "sfdisk"
    assert [
        (r["device"], r["start_sector"], r["size_sectors"], r["type_id"], r["flags"], r["aligned_1m"])
        for r in p.rows("partitions")
    ] == [("/dev/sda1", 2048, 2097152, "83", "boot", True), ("/dev/sda2", 2099200, 39843840, "8e", None, True)]


def test_legacy_sfdisk_luS_with_warnings_extended_and_sector_63():
    """sfdisk -l -uS of util-linux 2.20 (Ubuntu 12.04), quoted from a 2013 Ubuntu Forums post ("Recover NTFS
    partition deleted by Windows 8 upgrade"): the old 'Units =' spelling, two warning lines between the disk
    line and the units, an extended partition with logical ones, sda1 at the DOS-era sector 63."""
    text = """fred@A105-Precise:~$ sudo sfdisk -l -uS

Disk /dev/sda: 19457 cylinders, 255 heads, 63 sectors/track
Warning: extended partition does not start at a cylinder boundary.
DOS and Linux will interpret the contents differently.
Units = sectors of 512 bytes, counting from 0

   Device Boot    Start       End   #sectors  Id  System
/dev/sda1   *        63 113595614  113595552   7  HPFS/NTFS/exFAT
/dev/sda2     113595615 175028174   61432560   7  HPFS/NTFS/exFAT
/dev/sda3     175028236 312062624  137034389   5  Extended
/dev/sda4             0         -          0   0  Empty
/dev/sda5     175028238 205744454   30716217  83  Linux
/dev/sda6     205744518 211881284    6136767  82  Linux swap / Solaris
/dev/sda7     211881348 312062624  100181277  83  Linux
"""
    assert detect(text)[1] == "sfdisk-l"
    p = partitions.parse(text)
    assert p.warnings == []
    rows = [
        (
            r["index"],
            r["start_sector"],
            r["end_sector"],
            r["type_id"],
            r["type"],
            r["align_4k_rem_bytes"],
            r["aligned_4k"],
        )
        for r in p.rows("partitions")
    ]
    assert rows == [
        (1, 63, 113595614, "7", "HPFS/NTFS/exFAT", 3584, False),
        (2, 113595615, 175028174, "7", "HPFS/NTFS/exFAT", (113595615 * 512) % 4096, False),
        (3, 175028236, 312062624, "5", "Extended", (175028236 * 512) % 4096, False),
        (5, 175028238, 205744454, "83", "Linux", (175028238 * 512) % 4096, False),
        (6, 205744518, 211881284, "82", "Linux swap / Solaris", (205744518 * 512) % 4096, False),
        (7, 211881348, 312062624, "83", "Linux", (211881348 * 512) % 4096, False),
    ]


def test_fdisk_2_23_disk_label_type():
    """util-linux 2.23-2.25 print 'Disk label type: dos' (later 'Disklabel type:'): CentOS 7, published
    (fixtures/partitions/published), two disks, the second without a partition table."""
    text = decode((FIXTURES / "partitions" / "published" / "fdisk-2.23-disk-label-type.txt").read_bytes())
    assert detect(text)[1] == "fdisk"
    p = partitions.parse(text, "fdisk")
    disks = {d["disk"]: d for d in p.rows("disks")}
    assert (disks["/dev/vda"]["table_type"], disks["/dev/vda"]["label_id"]) == ("MBR", "0x000a42f4")
    assert disks["/dev/vda"]["size_bytes"] == 42949672960 and disks["/dev/vdb"]["size_sectors"] == 41943040
    assert (disks["/dev/vdb"]["table_type"], disks["/dev/vdb"]["partitions"]) == (None, 0)
    (part,) = p.rows("partitions")
    assert (part["device"], part["start_sector"], part["end_sector"]) == ("/dev/vda1", 2048, 83884031)


def test_gpart_show_l_gives_labels_and_joins_the_table_shown_before():
    """`gpart show da1` then `gpart show -l da1` (published, command lines kept): one disk, its partition with
    type freebsd-zfs from the first table and label ttt from the second, not a second disk whose type is 'ttt'."""
    text = decode((FIXTURES / "partitions" / "published" / "gpart-show-and-show-l.txt").read_bytes())
    p = partitions.parse(text, "gpart")
    (disk,) = p.rows("disks")
    assert (disk["disk"], disk["table_type"], disk["size_sectors"], disk["free_sectors"]) == (
        "da1",
        "GPT",
        40 + 312581728,
        304193120,
    )
    (part,) = p.rows("partitions")
    assert (part["index"], part["type"], part["name"], part["start_sector"], part["size_sectors"]) == (
        1,
        "freebsd-zfs",
        "ttt",
        40,
        8388608,
    )
    only_l = "\n".join(text.split("\n")[5:])  # the -l table alone, with its command line
    (part,) = partitions.parse(only_l, "gpart").rows("partitions")
    assert (part["type"], part["name"]) == (None, "ttt")
    bare = "\n".join(text.split("\n")[6:])  # without the command line -l cannot be known: the label reads as a type
    (part,) = partitions.parse(bare, "gpart").rows("partitions")
    assert (part["type"], part["name"]) == ("ttt", None)


PUBLISHED = FIXTURES / "partitions" / "published"


def test_transcript_with_other_commands_keeps_the_table():
    """`sudo fdisk -l` then `sudo swapoff /dev/sda5` and a bare prompt (published Debian 9 transcript): the other
    command's lines are not fdisk output and are skipped; they had refused the file."""
    p = partitions.parse(decode((PUBLISHED / "fdisk-2.29-transcript-other-commands.txt").read_bytes()), "fdisk")
    (disk,) = p.rows("disks")
    assert (disk["disk"], disk["table_type"], disk["size_sectors"], disk["partitions"]) == (
        "/dev/sda",
        "MBR",
        41943040,
        3,
    )
    assert [(r["device"], r["start_sector"], r["size_sectors"], r["type_id"]) for r in p.rows("partitions")] == [
        ("/dev/sda1", 2048, 39843840, "83"),
        ("/dev/sda2", 39847934, 2093058, "5"),
        ("/dev/sda5", 39847936, 2093056, "82"),
    ]
    assert p.warnings == []
    # another command's output between two fdisk tables is skipped too, up to the next fdisk command line
    text = "$ sudo fdisk -l\nDisk /dev/sdb: 1 GiB, 1073741824 bytes, 2097152 sectors\nUnits: sectors of 1 * 512 = 512 bytes\n\n"
    text += "$ lsblk\nNAME MAJ:MIN RM SIZE RO TYPE MOUNTPOINT\nsdb 8:16 0 1G 0 disk\n"
    assert [d["disk"] for d in partitions.parse(text, "fdisk").rows("disks")] == ["/dev/sdb"]


def test_gpart_bare_prompt_at_the_end():
    """`gpart show` and `gpart show -l` of two disks, then a bare `$` (published): two disks, labels joined."""
    p = partitions.parse(decode((PUBLISHED / "gpart-show-l-two-disks-bare-prompt.txt").read_bytes()), "gpart")
    assert [(d["disk"], d["usable_sectors"]) for d in p.rows("disks")] == [("ada1", 3907029088), ("ada2", 3907029088)]
    assert [(r["disk"], r["type"], r["name"], r["start_sector"]) for r in p.rows("partitions")] == [
        ("ada1", "freebsd-zfs", "ndisk1", 40),
        ("ada2", "freebsd-zfs", "ndisk2", 40),
    ]


def test_fdisk_in_another_language_is_refused_with_the_remedy():
    """fdisk under zh_CN (published): sudo's password prompt is skipped; the translated column header cannot be
    mapped, and the message says so and names LC_ALL=C, instead of 'unexpected line'."""
    with pytest.raises(ParseError) as e:
        partitions.parse(decode((PUBLISHED / "fdisk-zh_CN-locale.txt").read_bytes()), "fdisk")
    assert (e.value.kind, e.value.line) == ("unsupported-version", 10)
    assert "not in English" in str(e.value) and "LC_ALL=C fdisk -l" in e.value.expected


def test_old_sfdisk_dump_comment_is_not_a_prompt():
    """`# partition table of /dev/sda` opens old sfdisk -d output: it is not another command's prompt."""
    text = (
        "# partition table of /dev/sda\nunit: sectors\n\n"
        "/dev/sda1 : start=     2048, size=  1024000, Id=83, bootable\n"
        "/dev/sda2 : start=  1026048, size=  2048000, Id=82\n"
    )
    fmt = detect(text)[1]
    rows = partitions.parse(text, fmt).rows("partitions")
    assert [(r["device"], r["start_sector"]) for r in rows] == [("/dev/sda1", 2048), ("/dev/sda2", 1026048)]


def test_old_gpart_lowercase_k_and_truncated_sizes_fit_512_byte_sectors():
    """An older FreeBSD gpart (published transcript): '(3.0k)', '(64k)' and '(11M)' for 11.89 MiB had made both
    disks 'fit neither 512- nor 4096-byte sectors'; they fit 512 (checked), with no warning, and the other
    commands of the transcript (ls, mount, a line of prose) are skipped."""
    p = partitions.parse(decode((PUBLISHED / "gpart-old-freebsd-lowercase-k-transcript.txt").read_bytes()), "gpart")
    assert [(d["disk"], d["logical_sector_bytes"], d["logical_sector_source"]) for d in p.rows("disks")] == [
        ("ada1", 512, "checked"),
        ("ada0", 512, "checked"),
    ]
    assert p.warnings == []
    (slice63,) = [r for r in p.rows("partitions") if r["disk"] == "ada0"]
    assert (slice63["start_sector"], slice63["aligned_4k"], slice63["align_4k_rem_bytes"]) == (63, False, 3584)
