"""gdisk/sgdisk, BusyBox fdisk (MBR with CHS columns, its GPT listing, its interactive 'p'), interactive parted
sessions, parted's rounded default units and fdisk in other languages (issue 25): real outputs of gdisk 1.0.9,
BusyBox 1.35.0, parted 3.5 and util-linux 2.38.1 made by tests/fixtures/make_partition_fixtures_more.sh, and a
published BusyBox GPT listing (petitboot, 2018)."""

import pytest
from conftest import FIXTURES

from storagelab.parsers import ParseError, decode, partitions

LT = FIXTURES / "partitions" / "linux-tools"
PUB = FIXTURES / "partitions" / "published"


def parse(path):
    return partitions.parse(decode(path.read_bytes()))


def key(rows, *cols):
    return [tuple(r[c] for c in cols) for r in rows]


POS = ("index", "start_sector", "end_sector", "size_sectors", "size_bytes", "align_4k_rem_bytes", "aligned_1m")
GPT = [
    (1, 34, 2047, 2014, 1_031_168, 1024, False),
    (2, 2048, 18431, 16384, 8_388_608, 0, True),
    (3, 18432, 51199, 32768, 16_777_216, 0, True),
]


@pytest.mark.parametrize("name", ["sgdisk-p-gpt.txt", "gdisk-l-gpt.txt", "gdisk-session-p.txt"])
def test_gdisk_gpt(name):
    p = parse(LT / name)
    assert p.format == "gdisk" and p.warnings == []
    rows = p.rows("partitions")
    assert key(rows, *POS) == GPT
    assert key(rows, "type_id", "name", "type", "table_type", "logical_sector_bytes") == [
        ("EF02", "bios boot", None, "GPT", 512),
        ("EF00", "EFI system", None, "GPT", 512),
        ("8300", "my data", None, "GPT", 512),
    ]
    (d,) = p.rows("disks")
    assert (d["disk"], d["label_id"], d["size_sectors"], d["size_bytes"]) == (
        "gpt.img",
        "6B5C0C6E-0000-4000-8000-000000000001",
        131_072,
        67_108_864,
    )
    assert (d["usable_first_sector"], d["usable_sectors"], d["free_sectors"], d["partitions"]) == (
        34,
        131_005,
        79_839,
        3,
    )
    assert (d["physical_sector_bytes"], d["logical_sector_source"], d["size_source"]) == (None, "printed", "printed")


def test_sgdisk_4096_byte_sectors():
    p = parse(LT / "sgdisk-p-gpt4k.txt")
    assert key(p.rows("partitions"), *POS, "type_id", "name", "logical_sector_bytes", "physical_sector_bytes") == [
        (1, 6, 255, 250, 1_024_000, 0, False, "EF02", "grub", 4096, 4096),
        (2, 256, 33023, 32768, 134_217_728, 0, True, "BF01", "zfs", 4096, 4096),
    ]
    (d,) = p.rows("disks")
    assert (d["size_sectors"], d["size_bytes"], d["usable_first_sector"], d["usable_sectors"], d["free_sectors"]) == (
        65_536,
        268_435_456,
        6,
        65_525,
        32_507,
    )


def test_gdisk_lists_an_mbr_converted_in_memory():
    p = parse(LT / "gdisk-l-mbr63.txt")
    assert key(
        p.rows("partitions"), "index", "start_sector", "size_sectors", "align_4k_rem_bytes", "type_id", "type"
    ) == [
        (1, 63, 32705, 3584, "8300", "Linux filesystem"),
        (2, 32768, 98304, 0, "0700", "Microsoft basic data"),
    ]
    assert {r["table_type"] for r in p.rows("partitions")} == {"MBR"} and {r["name"] for r in p.rows("partitions")} == {
        None
    }
    (d,) = p.rows("disks")  # gdisk's made-up GUID and in-memory GPT area are not the disk's
    assert (d["table_type"], d["label_id"], d["usable_first_sector"], d["free_sectors"], d["size_sectors"]) == (
        "MBR",
        None,
        None,
        None,
        131_072,
    )
    assert p.warnings == [
        "line 11: gdisk found an MBR and no GPT and lists the MBR converted to GPT in memory: table_type MBR; the codes "
        "are gdisk's (8300), not MBR ids, and the names are gdisk's type names",
        "line 16: Warning! Secondary partition table overlaps the last partition by 33 blocks!",
        "line 18: You will need to delete this partition or resize it in another utility.",
    ]


def test_busybox_gpt_listing_published():
    p = parse(PUB / "busybox-fdisk-gpt-petitboot.txt")
    assert p.format == "gdisk" and p.warnings == []
    assert key(p.rows("partitions"), "index", "start_sector", "end_sector", "size_sectors", "type_id", "name") == [
        (1, 40, 10_485_799, 10_485_760, None, None),
        (2, 10_485_800, 27_263_015, 16_777_216, None, None),
        (3, 27_263_016, 1_953_525_127, 1_926_262_112, None, None),
    ]
    assert [r["aligned_4k"] for r in p.rows("partitions")] == [True, True, True]
    (d,) = p.rows("disks")
    assert (d["disk"], d["size_sectors"], d["size_bytes"], d["label_id"], d["usable_sectors"]) == (
        "/dev/sdb",
        1_953_525_168,
        1_000_204_886_016,  # the sectors; BusyBox printed '3597M'
        "796cfd49-c5b4-11e8-af8d-a0423f284769",
        1_953_525_088,
    )


DOS2048 = [
    (5, "dos2048.img5", 45056, 53247, 8192, "83", "Linux"),
    (6, "dos2048.img6", 55296, 131071, 75776, "c", "Win95 FAT32 (LBA)"),
]


@pytest.mark.parametrize("name", ["busybox-fdisk-l-dos2048.txt", "busybox-fdisk-session-p.txt"])
def test_busybox_fdisk_mbr(name):
    p = parse(LT / name)
    assert p.format == "fdisk" and p.warnings == []
    rows = p.rows("partitions")
    assert key(rows, "index", "start_sector", "size_sectors", "type_id")[:3] == [
        (1, 2048, 20480, "83"),
        (2, 22528, 20480, "82"),
        (3, 43008, 88064, "5"),
    ]
    assert key(rows, "index", "device", "start_sector", "end_sector", "size_sectors", "type_id", "type")[3:] == DOS2048
    (d,) = p.rows("disks")
    assert (d["size_sectors"], d["size_bytes"], d["table_type"], d["logical_sector_bytes"]) == (
        131_072,
        67_108_864,
        "MBR",
        512,
    )


def test_busybox_fdisk_sector_63():
    rows = parse(LT / "busybox-fdisk-l-dos63.txt").rows("partitions")
    assert key(rows, "start_sector", "size_sectors", "flags", "start_bytes", "align_4k_rem_bytes", "type") == [
        (63, 32705, "boot", 32256, 3584, "Linux"),
        (32768, 98304, None, 16_777_216, 0, "HPFS/NTFS"),
    ]


def test_busybox_fdisk_on_gpt_and_4096_byte_sectors():
    p = parse(LT / "busybox-fdisk-l-gpt.txt")
    assert key(p.rows("partitions"), "start_sector", "size_sectors", "type_id", "type") == [
        (1, 131071, "ee", "EFI GPT")
    ]
    assert p.warnings[-1] == (
        "line 6: gpt.img holds a GPT: this is its protective MBR (one type-ee partition); run gdisk -l or sgdisk -p "
        "(or a fdisk that reads GPT) for its partitions"
    )
    p = parse(LT / "busybox-fdisk-l-4k.txt")
    (d,) = p.rows("disks")
    assert (d["size_sectors"], d["size_bytes"], d["logical_sector_bytes"]) == (65_536, 268_435_456, 4096)
    assert (
        "line 2: 524288 sectors of 4096 bytes are not the 268435456 bytes printed: 65536 sectors (the bytes) kept"
        in p.warnings
    )


def test_parted_session_keeps_the_exact_listing():
    p = parse(LT / "parted-session-gpt.txt")
    rows = p.rows("partitions")
    assert key(rows, *POS) == GPT
    assert key(rows, "name", "flags", "rounded_to_bytes") == [
        ("bios boot", "bios_grub", None),
        ("EFI system", "boot, esp", None),
        ("my data", None, None),
    ]
    (d,) = p.rows("disks")
    assert (d["disk"], d["size_sectors"], d["size_rounded_to_bytes"], d["line_start"]) == (
        "/tmp/storagelab-pt2/gpt.img",
        131_072,
        None,
        18,
    )
    assert (
        p.warnings[-1]
        == "line 5: /tmp/storagelab-pt2/gpt.img is printed again at line 18 in exact units: that listing is kept"
    )
    p = parse(LT / "parted-session-dos63.txt")
    assert key(p.rows("partitions"), "start_sector", "size_sectors", "type", "flags") == [
        (63, 32705, "primary", "boot"),
        (32768, 98304, "primary", None),
    ]
    assert p.warnings == []


def test_parted_rounded_units_human_and_4096():
    rows = parse(LT / "parted-default-units-gpt.txt").rows("partitions")
    assert key(rows, "start_bytes", "size_bytes", "rounded_to_bytes", "start_sector", "aligned_4k") == [
        (17_400, 1_031_000, 1000, None, None),
        (1_049_000, 8_389_000, 1000, None, None),
        (9_437_000, 16_800_000, 100_000, None, None),
    ]
    # each printed value is within half its last digit of the exact one (unit s listing of the same disk)
    for r, (_, start, _, _, size, _, _) in zip(rows, GPT, strict=True):
        assert abs(r["start_bytes"] - start * 512) <= r["rounded_to_bytes"] / 2
        assert abs(r["size_bytes"] - size) <= r["rounded_to_bytes"] / 2
    p = parse(LT / "parted-m-default-units-4k.txt")
    assert key(p.rows("partitions"), "start_bytes", "size_bytes", "rounded_to_bytes", "logical_sector_bytes") == [
        (24_600, 1_024_000, 1000, 4096),
        (1_049_000, 134_000_000, 1_000_000, 4096),
    ]
    (d,) = p.rows("disks")
    assert (d["size_bytes"], d["size_rounded_to_bytes"], d["size_sectors"]) == (268_000_000, 1_000_000, None)


@pytest.mark.parametrize(
    "lang, first",
    [
        ("de_DE", "Festplatte dos63.img: 64 MiB, 67108864 Bytes, 131072 Sektoren"),
        ("fr_FR", "Disque dos63.img\xa0: 64 MiB, 67108864\xa0octets, 131072\xa0secteurs"),
        ("ru_RU", "Диск dos63.img: 64 MiB, 67108864 байт, 131072 секторов"),
    ],
)
def test_fdisk_in_another_language_is_refused_with_the_c_locale_advice(lang, first):
    with pytest.raises(ParseError) as e:
        parse(LT / f"fdisk-l-dos63-{lang}.txt")
    assert (e.value.kind, e.value.line) == ("unsupported-version", 1)
    assert e.value.message == f"fdisk -l output in another language than English: {first!r}"
    assert "LC_ALL=C fdisk -l" in e.value.expected


# --- published parted sessions of other versions (published/parted-sessions.md) -----------------------------------


def test_parted_3_5_session_published_keeps_the_unit_s_listing():
    p = parse(PUB / "parted-3.5-session-print-unit-s.txt")
    assert key(p.rows("partitions"), "index", "start_sector", "end_sector", "size_sectors", "filesystem", "flags") == [
        (1, 34, 2047, 2014, None, "bios_grub"),
        (2, 2048, 2099199, 2097152, "fat32", "boot, esp"),
        (3, 2099200, 976773134, 974673935, "zfs", None),
    ]
    assert [r["align_4k_rem_bytes"] for r in p.rows("partitions")] == [1024, 0, 0]
    (d,) = p.rows("disks")
    assert (d["disk"], d["size_sectors"], d["size_bytes"], d["line_start"]) == ("/dev/sda", 976773168, 500107862016, 18)
    assert p.warnings[-1] == "line 6: /dev/sda is printed again at line 18 in exact units: that listing is kept"


def test_parted_3_2_and_2_3_sessions_in_rounded_units():
    p = parse(PUB / "parted-3.2-session-msdos.txt")
    assert key(p.rows("partitions"), "start_bytes", "size_bytes", "rounded_to_bytes", "type", "filesystem") == [
        (1_049_000, 512_000_000, 1_000_000, "primary", "ext3"),
        (513_000_000, 512_000_000, 1_000_000, "primary", "linux-swap(v1)"),
        (1_025_000_000, 3_500_000_000, 1_000_000, "primary", "ext4"),
    ]
    (d,) = p.rows("disks")
    assert (d["size_bytes"], d["size_rounded_to_bytes"], d["table_type"]) == (15_900_000_000, 100_000_000, "MBR")
    p = parse(PUB / "parted-2.3-session-no-disk-flags.txt")  # parted < 3 prints no 'Disk Flags:' line
    assert key(p.rows("partitions"), "index", "start_bytes", "size_bytes", "flags", "filesystem") == [
        (1, 32_800, 2_988_000_000, "boot, hidden", None),
        (2, 2_988_000_000, 64_900_000, None, "fat16"),
        (3, 3_050_000_000, 6_947_000_000, None, None),
    ]
    assert p.warnings[-1] == "line 18: Information: You may need to update /etc/fstab."


def parse_pasted(path):
    """As ``storagelab parse`` reads it: a code block indented alike is read without its indent."""
    from storagelab.parsers import parse_text

    return parse_text(decode(path.read_bytes()))[0]


def test_gdisk_0_8_published():
    p = parse(PUB / "gdisk-0.8.8-ubuntu-forums.txt")
    assert key(p.rows("partitions"), "index", "start_sector", "end_sector", "size_bytes", "type_id", "name") == [
        (1, 2048, 3907028991, 2_000_397_795_328, "EF01", "Basic data partition")
    ]
    (d,) = p.rows("disks")
    assert (d["size_sectors"], d["usable_sectors"], d["free_sectors"], d["label_id"]) == (
        3907029168,
        3907029101,
        2157,
        "63F838F7-82F6-11E0-9417-001F1F71F5A3",
    )
    p = parse_pasted(PUB / "gdisk-0.8.5-rst-indented.txt")
    assert key(
        p.rows("partitions"), "index", "start_sector", "end_sector", "type_id", "name", "aligned_4k", "aligned_1m"
    ) == [
        (1, 40, 2048, "EF02", "primary", True, False),
        (2, 4096, 40962047, "FD00", "primary", True, True),
        (3, 40962048, 42008575, "8200", None, True, True),
        (4, 42008576, 7814037134, "FD00", None, True, True),
    ]
    assert p.warnings == ["line 1: every line is indented by 4 spaces (a pasted code block): read without it"]
    assert p.rows("disks")[0]["size_bytes"] == 7814037168 * 512


def test_busybox_fdisk_published():
    p = parse_pasted(PUB / "busybox-fdisk-session-mmcblk1.txt")  # interactive, its cylinder note, indented 7 spaces
    assert key(p.rows("partitions"), "device", "start_sector", "end_sector", "size_sectors", "flags", "type_id") == [
        ("/dev/mmcblk1p1", 2048, 16383, 14336, "boot", "c"),
        ("/dev/mmcblk1p2", 16384, 409600, 393217, "boot", "83"),
    ]
    (d,) = p.rows("disks")
    assert (d["disk"], d["size_sectors"], d["size_bytes"]) == ("/dev/mmcblk1", 31116288, 15931539456)
    assert p.warnings == ["line 1: every line is indented by 7 spaces (a pasted code block): read without it"]
    p = parse(PUB / "busybox-fdisk-l-sd-card.txt")
    assert key(p.rows("partitions"), "start_sector", "size_sectors", "start_bytes", "aligned_4k", "type") == [
        (1, 61067262, 512, False, "Win95 FAT32 (LBA)")
    ]
    assert p.rows("disks")[0]["size_sectors"] == 61067264


def test_busybox_fdisk_lists_gpt_and_mbr_disks_together():
    p = parse(PUB / "busybox-fdisk-l-gpt-and-mbr.txt")
    assert p.format == "gdisk" and p.warnings == []
    rows = p.rows("partitions")
    assert key(rows, "disk", "table_type", "index", "start_sector", "end_sector", "name")[::7] == [
        ("/dev/mmcblk0", "GPT", 1, 16384, 24575, "uboot"),
        ("/dev/mmcblk0", "GPT", 8, 13336576, 15269823, "userdata"),
    ]
    assert key(rows, "disk", "device", "start_sector", "size_sectors", "flags", "type_id", "line_start")[8:] == [
        ("/dev/sda", "/dev/sda1", 1449728, 123372759, "boot", "7", 24)
    ]
    assert key(p.rows("disks"), "disk", "table_type", "size_sectors", "size_bytes") == [
        ("/dev/mmcblk0", "GPT", 15269888, 15269888 * 512),
        ("/dev/sda", "MBR", 124822487, 63909113344),
    ]


@pytest.mark.parametrize("index", ["9999999999999999999999", "1114200"])
def test_a_partition_index_past_any_letter_is_no_crash(index):
    """Found by test_properties_fuzz (hypothesis): the published `gpart show` with a partition index far past
    'z' made the slice-name lookup fail with OverflowError or ValueError from chr() instead of parsing or a
    ParseError. A BSD label's letters stop at z: larger indexes name slices and partitions only (da1s<N>, da1p<N>)."""
    text = decode((PUB / "gpart-show-and-show-l.txt").read_bytes())
    mutated = text.replace(
        "         40    8388608    1  freebsd-zfs", f"         40    8388608    {index}  freebsd-zfs", 1
    )
    assert mutated != text
    p = partitions.parse(mutated, partitions.sniff(mutated))
    rows = p.tables["partitions"]
    assert [r["index"] for r in rows if r["start_sector"] == 40][0] == int(index)
