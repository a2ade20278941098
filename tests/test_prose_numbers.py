"""analysis/prose.py's number formats (finding 20 of the new-user trial): the values the trial's reports showed as
'0.0x', '0.00x', '0.0 %', '0 ms', each with the digits it needs."""

import pytest

from storagelab.analysis import prose
from storagelab.units import GiB, MiB


@pytest.mark.parametrize(
    "x, decimals, shown",
    [
        (64 * MiB / (16 * GiB), 1, "0.0039x"),  # 03: a 64 MiB bonnie++ file against 16 GiB of RAM (was '0.0x')
        (64 * MiB / (16 * GiB), 2, "0.0039x"),  # 09: the same (was '0.00x')
        (4.2 * MiB / (30.23 * GiB), 2, "0.00014x"),  # 04: 4.2 MiB of DDT against a 30.23 GiB budget (was '0.00x')
        (64 * MiB / (4 * GiB), 2, "0.02x"),  # two places are enough: unchanged
        (2.0, 1, "2.0x"),
        (15_250.0, 0, "15,250x"),
        (0.0, 2, "0.00x"),  # 0 is 0
    ],
)
def test_times_keeps_two_significant_digits_of_a_small_ratio(x, decimals, shown):
    assert prose.times(x, decimals) == shown


def test_percent_and_ms():
    assert [prose.percent(x) for x in (0.04, -0.04, 0.0, 0.06, 10.94)] == [
        "< 0.1 %",
        "< 0.1 %",
        "0 %",
        "0.1 %",
        "10.9 %",
    ]
    assert prose.percent(0.004, 2) == "< 0.01 %"
    # design.py's "its slowest I/O took ..": 0.42 ms was '0 ms'
    assert [prose.ms(ns) for ns in (0.42e6, 44_735e6, 12.4e6, 0.0, None)] == [
        "0.42 ms",
        "44,735 ms",
        "12 ms",
        "0 ms",
        "n/a",
    ]
