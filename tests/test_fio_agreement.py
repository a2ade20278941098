"""The normal-text and JSON parts of one fio run must agree within the text's printed precision.

Every fixture saved with --output-format=normal,json(+) (tests/fixtures/fio/3.33, COMMANDS.md) is
parsed by both parsers. The negative tests edit one number of a real file (as each says) and
expect exactly that disagreement to be reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from storagelab import units
from storagelab.parsers import fio
from storagelab.parsers.fio import agree
from storagelab.parsers.fio.json import parse_json

pytest.importorskip("storagelab.parsers.fio.text")  # the normal-text parser (another module)

FIX = Path(__file__).parent / "fixtures" / "fio" / "3.33"
BOTH = sorted(p.name for p in FIX.glob("*.txt") if fio.sniff(p.read_text()) == "fio-json+normal")


def load(name: str) -> str:
    return (FIX / name).read_text()


def test_the_fixtures_with_both_parts():
    assert BOTH == [
        "clones_nogroup.txt",
        "kb_base_1000.txt",
        "lat_percentiles.txt",
        "name_colon_fsync.txt",
        "randrw_libaio_jsonplus.txt",
        "seq_read_group_jsonplus.txt",
        "seq_write_group.txt",
        "two_groups.txt",
        "unified_both.txt",
        "unified_mixed.txt",
    ]


@pytest.mark.parametrize("name", BOTH)
def test_text_and_json_agree(name):
    assert agree.compare_text_and_json(load(name)) == []


@pytest.mark.parametrize("name", BOTH)
def test_parse_dispatch_runs_the_check(name):
    text = load(name)
    parsed = fio.parse(text)
    assert parsed.format in ("fio-json", "fio-json+") and parsed.warnings == []
    assert parsed.rows("fio_results") == parse_json(text).rows("fio_results")  # the JSON rows are stored


def test_the_check_compares_many_numbers(monkeypatch):
    """Guard against a check that silently compares nothing: count compared pairs per table."""
    seen: dict[str, int] = {}
    real = agree._cmp

    def counting(out, where, col, text_value, json_value, tol):
        if text_value is not None and json_value is not None:
            seen[where.split()[0]] = seen.get(where.split()[0], 0) + 1
        real(out, where, col, text_value, json_value, tol)

    monkeypatch.setattr(agree, "_cmp", counting)
    assert agree.compare_text_and_json(load("randrw_libaio_jsonplus.txt")) == []
    assert seen["fio_results"] >= 2 * 18 and seen["fio_percentiles"] == 34 and seen["fio_groups"] == 12
    assert seen["fio_jobs"] >= 10 and seen["fio_iodepths"] == 21 and seen["fio_latency_buckets"] == 8
    assert seen["fio_disk_stats"] == 9


# --- disagreements are found (real files with one number edited) ---------------------------------


def _edit(name: str, old: str, new: str) -> str:
    text = load(name)
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_kib_vs_kb_bandwidth_is_a_disagreement():
    # as if bw_bytes had been computed from bw (KiB/s) times 1000 instead of 1024
    text = _edit("seq_write_group.txt", '"bw_bytes" : 34610038', f'"bw_bytes" : {33798 * 1000}')
    found = agree.compare_text_and_json(text)
    assert len(found) == 1 and "fio_results" in found[0] and "bw_bytes_per_s" in found[0]


def test_mib_vs_mb_size_in_the_text_is_a_disagreement():
    # text says 64.0MiB; a 64.0MB would be 4.9 % less
    text = _edit("seq_write_group.txt", "(64.0MiB/1939msec)", "(64.0MB/1939msec)")
    found = agree.compare_text_and_json(text)
    assert len(found) == 1 and "io_bytes" in found[0] and "text 64000000.0" in found[0]


def test_latency_beyond_one_printed_unit_is_a_disagreement():
    # clat line is in usec (min=387): 387065 -> 388100 ns is more than 1 usec away; 387900 is not
    assert agree.compare_text_and_json(_edit("seq_write_group.txt", '"min" : 387065', '"min" : 387900')) == []
    found = agree.compare_text_and_json(_edit("seq_write_group.txt", '"min" : 387065', '"min" : 388100'))
    assert len(found) == 1 and "clat_min_ns" in found[0]


def test_percentile_rounded_up_within_its_unit_only():
    # text 50.00th=[  510] usec for 509952 ns; 509001 still prints 510, 508000 would print 508
    assert (
        agree.compare_text_and_json(_edit("seq_write_group.txt", '"50.000000" : 509952', '"50.000000" : 509001')) == []
    )
    found = agree.compare_text_and_json(_edit("seq_write_group.txt", '"50.000000" : 509952', '"50.000000" : 508000'))
    assert len(found) == 1 and "'percentile': 50.0" in found[0]


def test_exact_fields_and_missing_records():
    found = agree.compare_text_and_json(_edit("seq_write_group.txt", "run=1939-1939msec", "run=1939-1940msec"))
    assert len(found) == 1 and "run_max_ns" in found[0]
    found = agree.compare_text_and_json(_edit("seq_write_group.txt", "ctx=126,", "ctx=127,"))
    assert len(found) == 1 and "ctx" in found[0]
    found = agree.compare_text_and_json(load("two_groups.txt").replace('"jobname" : "reader"', '"jobname" : "rdr"'))
    assert len(found) == 1 and "jobname text 'reader' vs JSON 'rdr'" in found[0]
    # the text's second run status group deleted: that group is then in the JSON report only
    text = load("two_groups.txt")
    start = text.index("Run status group 1 (all jobs):")
    text = text[:start] + text[text.index("\n\n", start) + 2 :]
    found = agree.compare_text_and_json(text)
    assert found == ["fio_groups {'groupid': 1, 'direction': 'read'}: in the JSON report only"]


def test_check_text_against_json_appends_warnings():
    text = _edit("seq_write_group.txt", "ctx=126,", "ctx=127,")
    parsed = parse_json(text)
    found = agree.check_text_against_json(text, parsed)
    assert found and parsed.warnings == found
    assert fio.parse(text).warnings == found


# --- the precision model ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, maxlen, base, ulp",
    [
        (93206755, 4, 1024, 0.1 * units.MiB),  # 88.9MiB/s
        (93206755, 4, 1000, 0.1e6),  # 93.2MB/s
        (4194304, 4, 1024, units.KiB),  # 4096KiB
        (67108864, 4, 1024, 0.1 * units.MiB),  # 64.0MiB
        (22755.56, 4, 1000, 100),  # IOPS=22.8k
        (9018, 4, 1000, 1),  # IOPS=9018
        (4237300, 6, 1000, 100),  # max=4237.3k
        (282, 6, 1000, 1),  # max=282
    ],
)
def test_num2str_precision(value, maxlen, base, ulp):
    assert agree._num2str_ulp(value, maxlen, base) == pytest.approx(ulp)


def test_latency_and_percentile_units_follow_fio():
    assert agree._lat_unit(387065, 734020, 80139, legacy=False) == 1e3  # usec
    assert agree._lat_unit(1420, 4237300, 49191, legacy=False) == 1.0  # nsec: min too small
    assert agree._lat_unit(3e6, 2e8, 2e6, legacy=False) == 1e6  # msec
    assert agree._lat_unit(1420, 4237300, 49191, legacy=True) == 1e3  # fio 2.x had no nsec
    assert agree._percentile_unit([387072, 733184], legacy=False) == 1e3
    assert agree._percentile_unit([1800, 733184], legacy=False) == 1.0
