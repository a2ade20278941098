"""Unit conversions: the MiB-vs-MB bugs of this field, pinned down."""

import math

import pytest

from storagelab import units as u


def test_fio_iec_vs_si():
    assert u.fio_bytes("1240MiB/s") == 1240 * 2**20 == 1_300_234_240
    assert u.fio_bytes("1300MB/s") == 1_300_000_000
    assert u.fio_bytes("72.7GiB") == pytest.approx(72.7 * 2**30)
    assert u.fio_bytes("78.0GB") == pytest.approx(78.0e9)
    assert u.fio_bytes("405434B/s") == 405434


def test_fio_legacy_kb_means_kib():
    assert u.fio_bytes("338589KB/s", legacy=True) == 338589 * 1024
    assert u.fio_bytes("9920.3MB", legacy=True) == pytest.approx(9920.3 * 2**20)
    assert u.fio_bytes("338589KB/s") == 338589 * 1000  # modern fio: kB/KB are SI


def test_fio_bits():
    assert u.fio_bytes("800Mibit/s") == pytest.approx(100 * 2**20)
    assert u.fio_bw_label_factor("(Kibit/s)".strip("()")) == 128


def test_si_counts_and_latency_multipliers():
    assert u.si_number("23.6k") == pytest.approx(23600)
    assert u.si_number("44735k") == 44_735_000
    assert u.time_to_ns(u.si_number("44735k"), "usec") == pytest.approx(44.735e9)
    assert u.time_to_ns("380", "msec") == 380_000_000


def test_bonnie_suffixes_are_binary():
    assert u.bonnie_rate("10.4m") == pytest.approx(10.4 * 2**20)
    assert u.bonnie_rate("8373k") == 8373 * 1024
    assert u.bonnie_rate("2.7g") == pytest.approx(2.7 * 2**30)
    assert u.bonnie_rate("83720") == 83720 * 1024  # K/sec column
    assert u.bonnie_latency_ns("437s") == 437e9
    assert u.bonnie_latency_ns("29770us") == 29_770_000


def test_zfs_nicenum_is_binary():
    assert u.zfs_nicenum("2.27M") == pytest.approx(2_380_267.52)
    assert u.zfs_nicenum("1.5G") == 1.5 * 2**30
    assert u.zfs_nicenum("512B") == 512
    assert math.isnan(u.zfs_nicenum("-"))


def test_mbuffer_units_are_binary():
    assert u.mbuffer_bytes("170", "GByte") == 170 * 2**30
    assert u.mbuffer_rate("583", "MB/s") == 583 * 2**20
    assert u.duration_to_ns("4 min 59.3 sec") == pytest.approx(299.3e9)


def test_display_helpers():
    assert u.human_bytes(1_300_234_240) == "1.21 GiB"
    assert u.human_bytes(1_300_000_000, binary=False) == "1.30 GB"
    assert u.to_mib(1_300_234_240) == 1240


def test_garbage_raises_unit_error():
    for bad in ("", "abc", "12 apples"):
        with pytest.raises(u.UnitError):
            u.fio_bytes(bad)
