"""fdisk in other languages on real disks (issue 25): util-linux 2.33+ prints a 'Disk model:' line between the size
and units lines, which the fixtures made here on image files lack; published German and Russian outputs, a listing
and an indented interactive session, get the LC_ALL=C advice, not 'unknown format'. Sources:
tests/fixtures/partitions/published/fdisk-localized-published.md."""

import pytest
from conftest import FIXTURES

from storagelab.parsers import ParseError, parse_bytes

PUB = FIXTURES / "partitions" / "published"


@pytest.mark.parametrize(
    "name, line, first",
    [
        (
            "fdisk-de_DE-l-linux-btrfs-2021.txt",
            2,
            "Festplatte /dev/sda: 238,47 GiB, 256060514304 Bytes, 500118192 Sektoren",
        ),
        (
            "fdisk-de_DE-session-p-sdcard.txt",
            4,
            "Festplatte /dev/sdf: 1,91 GiB, 2032664576 Bytes, 3970048 Sektoren",
        ),
        ("fdisk-ru_RU-l-disk-model.txt", 2, "Диск /dev/sda: 20 GiB, 21474836480 байт, 41943040 секторов"),
    ],
)
def test_localized_fdisk_with_a_model_line_gets_the_c_locale_advice(name, line, first):
    path = PUB / name
    with pytest.raises(ParseError) as e:
        parse_bytes(path.read_bytes(), str(path))
    assert (e.value.kind, e.value.line) == ("unsupported-version", line)
    assert e.value.message == f"fdisk -l output in another language than English: {first!r}"
    assert e.value.expected == (
        "fdisk -l run in the C locale (LC_ALL=C fdisk -l): Disk, Units, Device, Boot, Start, End, ..."
    )
