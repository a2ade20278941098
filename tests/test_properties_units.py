"""Property tests for storagelab.units: every tool's own number printing, read back, gives the number
printed, within the printed precision of the one generated, and the IEC (powers of 1024) and SI
(powers of 1000) families are never confused. The renderers are those of the tools' property tests
(fio num2str, bonnie++ print_stat/print_latency, zfs_nicenum_format, mbuffer kb2str and durations)."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from conftest import props
from hypothesis import given
from hypothesis import strategies as st
from test_properties_bonnie import latency_text, rate_cell
from test_properties_fio import num2str, num2str_legacy, value_of
from test_properties_mbuffer import duration, kb2str
from test_properties_zdb import nice_value, nicenum

from storagelab import units as u

PROPS = props(300)
numbers = st.integers(0, 18).flatmap(lambda e: st.integers(10**e if e else 0, 10 ** (e + 1) - 1))
IEC = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
SI = ["k", "M", "G", "T", "P", "E"]


@PROPS
@given(numbers, st.booleans(), st.sampled_from(["B", "B/s", "bit", "bit/s"]))
def test_fio_bytes_reads_num2str(n, pow2, unit):
    text, tol = num2str(n, 4, pow2, unit)
    got = u.fio_bytes(text)
    assert got == pytest.approx(float(value_of(text)), rel=1e-12)
    assert abs(got - n) <= tol + 1e-9 * n + 1e-9, (text, n)


@PROPS
@given(numbers)
def test_fio_si_counts_read_back(n):
    text, tol = num2str(n, 6, pow2=False)
    assert abs(u.si_number(text) - n) <= tol + 1e-9 * n
    legacy = num2str_legacy(n, 6, pow2=False)  # fio <= 2.16 latency counts: K (upper case) = 1000
    assert u.si_number(legacy) == pytest.approx(float(value_of(legacy)), rel=1e-12)


@PROPS
@given(st.integers(0, 99999).map(lambda v: Decimal(v) / 10), st.integers(0, 5), st.sampled_from(["B", "B/s"]))
def test_fio_iec_and_si_are_never_confused(m, step, unit):
    iec, si = u.fio_bytes(f"{m}{IEC[step]}{unit}"), u.fio_bytes(f"{m}{SI[step]}{unit}")
    assert iec == pytest.approx(float(m * 1024 ** (step + 1)), rel=1e-12)
    assert si == pytest.approx(float(m * 1000 ** (step + 1)), rel=1e-12)
    if m:
        assert iec / si == pytest.approx((1024 / 1000) ** (step + 1), rel=1e-12)
    # fio <= 2.16: KB/MB/GB mean KiB/MiB/GiB. (Its P and E are one step lower than IEC's, as 2.x has no T:
    # the fio text parser maps them itself before calling fio_bytes, whose legacy mode covers K/M/G only.)
    if step < 3:
        legacy = "KMG"[step]
        assert u.fio_bytes(f"{m}{legacy}{unit}", legacy=True) == pytest.approx(float(m * 1024 ** (step + 1)), rel=1e-12)


@PROPS
@given(st.floats(0, 1e12, allow_nan=False), st.sampled_from(list(u._TIME_NS)))
def test_time_to_ns(v, unit):
    factor = {"n": 1, "u": 1e3, "µ": 1e3, "μ": 1e3, "m": 1e6, "s": 1e9}[unit[0]]
    assert u.time_to_ns(v, unit) == v * factor
    assert u.time_to_ns(repr(v), f" {unit} ") == v * factor


@PROPS
@given(st.floats(0.5, 1e9), st.booleans())
def test_bonnie_rate_reads_print_stat(kib_per_s, new):
    text, printed, tol = rate_cell(kib_per_s, new)
    got = u.bonnie_rate(text)
    assert got == printed
    assert abs(got - kib_per_s * 1024) <= tol + 1e-9 * kib_per_s * 1024
    assert u.bonnie_rate(text.strip().upper()) == got  # the suffix letter is KiB/MiB/GiB in either case


@PROPS
@given(st.floats(1e-6, 1e5))
def test_bonnie_latency_reads_print_latency(seconds):
    text = latency_text(seconds)
    got = u.bonnie_latency_ns(text)
    unit = {"us": 1e3, "ms": 1e6, "s": 1e9}[text.lstrip("0123456789")]
    assert 0 <= seconds * 1e9 - got < unit * (1 + 1e-9) + 1


@PROPS
@given(numbers, st.booleans())
def test_zfs_nicenum_reads_nicenum(n, nbytes):
    text = nicenum(n, nbytes)
    got = u.zfs_nicenum(text)
    printed, tol = nice_value(text)
    assert round(got) == printed
    assert abs(got - n) <= tol
    assert not math.isnan(got)


@PROPS
@given(st.floats(0, 4e12), st.booleans())
def test_mbuffer_units_read_kb2str(kib, iec):
    text, printed, tol, has_unit = kb2str(kib, iec)
    number, _, letter = text.strip().partition(" ")
    assert u.mbuffer_bytes(number, letter + "Byte") == printed
    assert u.mbuffer_rate(number, letter + "B/s") == printed
    if has_unit:
        assert abs(printed - kib * 1024) <= tol


@PROPS
@given(st.floats(0.1, 400000), st.booleans())
def test_mbuffer_durations(secs, new):
    text, ns = duration(secs, new)
    assert u.duration_to_ns(text) == pytest.approx(ns, rel=1e-12)
    assert abs(ns - secs * 1e9) <= 0.05e9 * (1 + 1e-9) + 1e-3 * secs


@PROPS
@given(
    st.integers(0, 10**6),
    st.sampled_from(["", "k", "m", "g", "t", "p"]),
    st.sampled_from(["", "b", "ib", "i"]),
    st.sampled_from([1024, 1000]),
    st.booleans(),
)
def test_fio_option_sizes(n, prefix, tail, kb_base, upper):
    text = f"{n}{prefix}{tail if prefix else ''}"
    if upper:
        text = text.upper()
    power = "kmgtp".find(prefix) + 1 if prefix else 0
    base = (2024 - kb_base) if prefix and tail == "ib" else kb_base  # 4KiB is 4000 with the default kb_base
    assert u.fio_option_bytes(text, kb_base) == n * base**power


@given(
    st.sampled_from(
        ["KiB/s", "MiB/s", "GiB/s", "TiB/s", "kB/s", "MB/s", "GB/s", "TB/s", "Kibit/s", "Mibit/s", "kbit/s", "Mbit/s"]
    ),
    st.integers(0, 3),
)
@props(50)
def test_fio_bandwidth_labels(label, pad):
    step = {"k": 1, "K": 1, "M": 2, "G": 3, "T": 4}[label[0]]
    base = 1024 if "i" in label[:2] else 1000
    bits = 8 if "bit" in label else 1
    assert u.fio_bw_label_factor(" " * pad + label) == base**step / bits
