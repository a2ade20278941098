"""sgdisk -p of GPT fdisk 0.8.x (published, 2015; issue 25: a second version beside the sgdisk 1.0.9 fixtures made
here): a 4096-byte-sector disk, checked against fdisk -l of the same disk, and a Ceph OSD disk listed out of order.
Sources: tests/fixtures/partitions/published/sgdisk-published.md."""

from conftest import FIXTURES

from storagelab.parsers import decode, partitions

PUB = FIXTURES / "partitions" / "published"
POS = ("index", "start_sector", "end_sector", "size_sectors", "size_bytes", "type_id", "name", "aligned_1m")


def parse(name):
    return partitions.parse(decode((PUB / name).read_bytes()))


def rows(parsed, table, cols):
    return [tuple(r[c] for c in cols) for r in parsed.rows(table)]


def test_sgdisk_08_on_4096_byte_sectors():
    p = parse("sgdisk-0.8-p-4kn.txt")
    assert p.format == "gdisk" and p.warnings == []
    (disk,) = p.rows("disks")
    # 'Disk /dev/sdb: 732558336 sectors, 2.7 TiB' / 'Logical sector size: 4096 bytes'
    assert (disk["disk"], disk["size_sectors"], disk["size_bytes"], disk["logical_sector_bytes"]) == (
        "/dev/sdb",
        732_558_336,
        732_558_336 * 4096,
        4096,
    )
    assert (disk["usable_first_sector"], disk["free_sectors"], disk["partitions"]) == (6, 250, 8)
    got = rows(p, "partitions", POS)
    # '   1             256           51455   200.0 MiB   EF02  bios_boot': 51,200 sectors of 4096 B
    assert got[0] == (1, 256, 51455, 51_200, 209_715_200, "EF02", "bios_boot", True)
    assert got[2] == (3, 5_294_336, 13_158_655, 7_864_320, 32_212_254_720, "0700", "windows", True)
    assert got[7] == (8, 25_217_280, 732_558_330, 707_341_051, 707_341_051 * 4096, "8300", "data", True)


def test_fdisk_of_the_same_disk_agrees_sector_for_sector():
    s, f = parse("sgdisk-0.8-p-4kn.txt"), parse("fdisk-2.2x-l-gpt-4kn-same-disk.txt")
    assert f.format == "fdisk"
    (fd,) = f.rows("disks")
    assert (fd["table_type"], fd["label_id"], fd["size_bytes"], fd["physical_sector_bytes"]) == (
        "GPT",
        "C4426321-9726-4022-BB20-2EF00B490465",
        3_000_558_944_256,
        4096,
    )
    cols = ("start_sector", "end_sector", "size_sectors", "size_bytes", "logical_sector_bytes")
    assert rows(f, "partitions", cols) == rows(s, "partitions", cols)
    assert [r["type"] for r in f.rows("partitions")][:3] == ["BIOS boot", "Linux filesystem", "Microsoft basic data"]


def test_sgdisk_08_ceph_disk_out_of_order():
    p = parse("sgdisk-0.8-p-ceph.txt")
    (disk,) = p.rows("disks")
    assert (disk["size_sectors"], disk["logical_sector_bytes"], disk["usable_first_sector"]) == (16_780_288, 512, 34)
    # partition 1 (ceph data) lies after partition 2 (ceph journal); 6,292,447 sectors as its `sgdisk --info=1` says
    assert rows(p, "partitions", POS) == [
        (1, 10_487_808, 16_780_254, 6_292_447, 3_221_732_864, "FFFF", "ceph data", True),
        (2, 2048, 10_485_760, 10_483_713, 5_367_661_056, "FFFF", "ceph journal", True),
    ]
