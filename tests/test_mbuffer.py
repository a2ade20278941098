"""mbuffer summary/status parser: the 2008 Thumper logs (seed 001) and real R20230301 runs."""

import pytest
from conftest import FIXTURES, RAW

from storagelab.parsers import ParseError, decode, detect, mbuffer
from storagelab.units import GiB, KiB, MiB

THUMPER = RAW / "thumper-x4500"
NEW = FIXTURES / "mbuffer" / "20230301"


def read(path):
    return decode(path.read_bytes())  # as the store reads it: a bare \r stays in its line


def parse(path):
    return mbuffer.parse(read(path))


def summary(path):
    rows = parse(path).rows("mbuffer_summaries")
    assert len(rows) == 1
    return rows[0]


def test_2008_summary_with_minutes_legacy_units_are_binary():
    s = summary(THUMPER / "mbuffer-zero-to-null.txt")
    # summary: 170 GByte in 4 min 59.3 sec - average of 583 MB/s
    assert s["bytes"] == 170 * GiB == 182_536_110_080
    assert s["duration_ns"] == pytest.approx(299.3e9)
    assert s["rate_bytes_per_s"] == 583 * MiB == 611_319_808  # MB/s of 2008 = MiB/s, not 583e6
    assert s["rate_bytes_per_s"] != 583e6
    assert s["computed_rate_bytes_per_s"] == pytest.approx(170 * GiB / 299.3)
    assert s["units_binary"] is False and s["suspect"] is False and s["outputs"] == 1
    assert (s["line_start"], s["line_end"]) == (1, 1)


@pytest.mark.parametrize(
    "name, amount, seconds, rate",
    [
        ("mbuffer-ssh-localhost.txt", 678 * MiB, 20.9, 32.5 * MiB),
        ("mbuffer-ssh-blowfish-localhost.txt", 9.9 * GiB, 193.6, 52.5 * MiB),
        ("mbuffer-netcat-receiver.txt", 7410 * MiB, 88.7, 83.5 * MiB),
        ("mbuffer-netcat-sender.txt", 7410 * MiB, 74.9, 98.9 * MiB),
    ],
)
def test_2008_summaries(name, amount, seconds, rate):
    s = summary(THUMPER / name)
    assert s["bytes"] == pytest.approx(amount)
    assert s["duration_ns"] == pytest.approx(seconds * 1e9)
    assert s["rate_bytes_per_s"] == pytest.approx(rate)
    assert s["suspect"] is False


@pytest.mark.parametrize(
    "name, seconds, rate_mib, line",
    [
        ("mbuffer-socat-receiver.txt", 49.0, 204, 1),
        ("mbuffer-socat-network.txt", 32.1, 311, 1),
        ("mbuffer-socat-sender.txt", 43.3, 231, 2),
    ],
)
def test_unitless_1e04_is_stored_as_printed_but_flagged(name, seconds, rate_mib, line):
    p = parse(THUMPER / name)
    s = p.rows("mbuffer_summaries")[0]
    assert s["bytes"] == 10_000.0  # as printed: "1e+04 Byte"
    assert s["suspect"] is True
    assert s["rate_bytes_per_s"] == rate_mib * MiB
    assert s["computed_rate_bytes_per_s"] == pytest.approx(10_000 / seconds)  # exposes the defect
    assert s["line_start"] == line
    assert len(p.warnings) == 1 and "1e+04" in p.warnings[0] and "suspect" in p.warnings[0]
    # rate x time points at ~10000 MiB (dd bs=1024k count=10000)
    implied_mib = rate_mib * seconds
    assert f"= {implied_mib:.0f} MiB" in p.warnings[0]


def test_2008_status_line():
    p = parse(THUMPER / "mbuffer-socat-sender.txt")
    (st,) = p.rows("mbuffer_status")
    # in @ 233 MB/s, out @ 233 MB/s, 7882 MB total, buffer 100% full
    assert st["in_rate_bytes_per_s"] == st["out_rate_bytes_per_s"] == 233 * MiB
    assert st["total_bytes"] == 7882 * MiB
    assert st["buffer_fill_pct"] == 100.0 and st["done_pct"] is None
    assert st["units_binary"] is False and st["outputs"] == 1 and st["seq"] == 0


def test_r2023_unitless_defect_reproduced():
    p = parse(NEW / "stderr-10000m.txt")
    s = p.rows("mbuffer_summaries")[0]
    # summary: 1e+04 Byte in  9.5sec - average of 1057 MiB/s
    assert s["bytes"] == 10_000.0 and s["suspect"] is True
    assert s["duration_ns"] == pytest.approx(9.5e9)
    assert s["rate_bytes_per_s"] == 1057 * MiB
    assert s["units_binary"] is True
    assert "= 10042 MiB" in p.warnings[0]
    st = p.rows("mbuffer_status")
    assert len(st) == 18 and st[-1]["total_bytes"] == 9609 * MiB


def test_r2023_stderr_carriage_return_status_lines():
    p = parse(NEW / "stderr-3000m.txt")
    st = p.rows("mbuffer_status")
    assert [r["seq"] for r in st] == [0, 1, 2, 3, 4]
    assert all(r["line_start"] == 1 for r in st)  # one physical line, \r-separated
    assert st[0]["in_rate_bytes_per_s"] == 1275 * MiB and st[0]["total_bytes"] == 894 * MiB
    assert st[-1]["out_rate_bytes_per_s"] == 676 * MiB and st[-1]["buffer_fill_pct"] == 30.0
    s = p.rows("mbuffer_summaries")[0]
    # summary: 3000 MiByte in  2.9sec - average of 1029 MiB/s
    assert s["bytes"] == 3000 * MiB and s["duration_ns"] == pytest.approx(2.9e9)
    assert s["rate_bytes_per_s"] == 1029 * MiB and s["units_binary"] is True
    assert s["line_start"] == 2


def test_r2023_log_file_prefix_and_stderr_agree():
    log = parse(NEW / "log-3000m.txt")
    err = parse(NEW / "log-3000m.stderr.txt")
    assert [r["total_bytes"] for r in log.rows("mbuffer_status")] == [
        r["total_bytes"] for r in err.rows("mbuffer_status")
    ]
    assert log.rows("mbuffer_summaries")[0]["rate_bytes_per_s"] == 931 * MiB
    assert log.rows("mbuffer_status")[0]["total_bytes"] == 215 * MiB


def test_r2023_gib_kib_minutes_and_outputs():
    assert summary(NEW / "stderr-10001m.txt")["bytes"] == pytest.approx(9.8 * GiB)
    s = summary(NEW / "stderr-50k.txt")  # 50.0 kiByte in  0.0sec - average of  115 MiB/s
    assert s["bytes"] == 50 * KiB and s["duration_ns"] == 0.0 and s["computed_rate_bytes_per_s"] is None
    s = summary(NEW / "stderr-ratelimit-65s.txt")  # 260 MiByte in  1min 05.0sec - average of 4096 kiB/s
    assert s["duration_ns"] == pytest.approx(65e9) and s["rate_bytes_per_s"] == 4096 * KiB
    assert s["computed_rate_bytes_per_s"] == pytest.approx(4 * MiB)
    p = parse(NEW / "stderr-2outputs.txt")
    s = p.rows("mbuffer_summaries")[0]
    assert s["outputs"] == 2 and s["computed_rate_bytes_per_s"] == pytest.approx(2 * 300 * MiB / 0.8)
    (st,) = p.rows("mbuffer_status")
    assert st["outputs"] == 2 and st["total_bytes"] == 186 * MiB and st["out_rate_bytes_per_s"] == 744 * MiB
    assert p.warnings == ["line 1: mbuffer: warning: No controlling terminal and no autoloader command specified."]
    st = parse(NEW / "stderr-slow-reader.txt").rows("mbuffer_status")
    assert st[0]["out_rate_bytes_per_s"] == pytest.approx(91.3 * KiB) and st[0]["total_bytes"] == 64 * KiB


def test_source_format_variants():
    text = (
        "summary: 2x  1.5 GiByte in 1h 02min 03.5sec - average of  845 kiB/s, 3x empty, 1x full\n"
        "in @  ??? B/s, out @ 12.5 MiB/s, 2 x  100 MiB total, buffer  42% full,  17% done\n"
    )
    p = mbuffer.parse(text)
    s = p.rows("mbuffer_summaries")[0]
    assert s["duration_ns"] == pytest.approx((3600 + 120 + 3.5) * 1e9)
    assert (s["outputs"], s["empty_count"], s["full_count"]) == (2, 3, 1)
    st = p.rows("mbuffer_status")[0]
    assert st["in_rate_bytes_per_s"] is None and st["done_pct"] == 17.0 and st["suspect"] is False


def test_sniff_and_detect():
    for path in (THUMPER / "mbuffer-socat-sender.txt", NEW / "stderr-3000m.txt", NEW / "log-3000m.txt"):
        assert mbuffer.sniff(read(path)) == "mbuffer-summary"
        assert detect(read(path))[0] is mbuffer
    for other in ("gpart-ada3.txt", "zpool-list-before.txt", "zdb-b-raid1.txt", "bonnie-single-disk.txt"):
        assert mbuffer.sniff(read(RAW / "freebsd-bonnie-dedup" / other)) is None
    fio = next((FIXTURES / "fio").glob("*/seq_write_group.txt"))
    assert mbuffer.sniff(read(fio)) is None


@pytest.mark.parametrize(
    "text, kind, line",
    [
        ("", "empty", None),
        ("   \n", "empty", None),
        ("summary: 170 GByte in 4 min 59.3 sec - average of 583 MB/s\nhello world\n", "invalid", 2),
        ("summary: 170 GByte in 4 min 59.3 sec - aver", "truncated", 1),
        ("in @ 233 MB/s, out @ 233 MB/s, 7882 MB tot\n", "truncated", 1),
        ("in @ 233 MB/s, out @ 2\nsummary: 170 GByte in 4 min 59.3 sec - average of 583 MB/s\n", "invalid", 1),
        ("summary: 170 GByte in forever - average of 583 MB/s\n", "invalid", 1),
        ("mbuffer: warning: something\n", "invalid", 1),
        ("Sector size (logical/physical): 512 bytes / 4096 bytes\n", "invalid", 1),
    ],
)
def test_bad_input(text, kind, line):
    with pytest.raises(ParseError) as e:
        mbuffer.parse(text)
    assert e.value.kind == kind and e.value.line == line and e.value.expected


def test_every_truncation_gives_rows_or_parse_error():
    for path in sorted(NEW.glob("*.txt")) + sorted(THUMPER.glob("*.txt")):
        text = read(path)
        for cut in range(0, len(text), max(1, len(text) // 40)):
            try:
                mbuffer.parse(text[:cut])
            except ParseError as e:
                assert e.kind in ("empty", "truncated", "invalid")


def test_a_terminal_transcript_with_prompts_and_a_leftover_status_tail():
    """Two `zfs send | mbuffer | zfs recv` runs pasted from a terminal (published): the prompt lines are skipped,
    both summaries stored, and the status line ending in 'fullll' (the tail of an overwritten longer line) kept,
    its leftover named in a warning."""
    p = parse(FIXTURES / "mbuffer" / "published" / "mbuffer-zfs-send-transcript.txt")
    got = [(s["bytes"], s["duration_ns"], s["rate_bytes_per_s"], s["line_start"]) for s in p.rows("mbuffer_summaries")]
    assert got == [(227 * MiB, 3.4e9, 67.8 * MiB, 4), (24.4 * GiB, 656.1e9, 38.1 * MiB, 8)]
    status = [(s["seq"], s["in_rate_bytes_per_s"], s["total_bytes"], s["line_start"]) for s in p.rows("mbuffer_status")]
    assert status == [(0, 71.9 * MiB, 216 * MiB, 3), (1, 0.0, 24.4 * GiB, 7)]
    assert p.warnings == [
        "line 7: 'll' after the status line ignored (left over from a longer status line the \\r overwrote)"
    ]


def test_an_elision_line_is_skipped_with_a_warning():
    """A README's pasted mbuffer output ending in '...' (published: fixtures/mbuffer/published): the four real lines
    are stored (43.6 MiB total at 14.3 MiB/s; 46.7 MiByte in 3.4 s), the '...' is named in a warning."""
    p = mbuffer.parse(decode((FIXTURES / "mbuffer" / "published" / "mbuffer-udp-cast-elided.txt").read_bytes()))
    status = list(p.rows("mbuffer_status"))
    assert [(s["out_rate_bytes_per_s"], s["total_bytes"], s["done_pct"]) for s in status] == [
        (14.3 * MiB, 43.6 * MiB, 93.0),
        (14.4 * MiB, 44.0 * MiB, 94.0),
    ]
    assert [(s["bytes"], s["duration_ns"], s["rate_bytes_per_s"]) for s in p.rows("mbuffer_summaries")] == [
        (46.7 * MiB, 3.4e9, 13.6 * MiB),
        (46.7 * MiB, 3.4e9, 13.8 * MiB),
    ]
    assert p.warnings == ["line 5: '...': lines left out where the log was pasted"]


def test_mbuffer_in_the_system_journal():
    """mbuffer run by a service, read from the journal (published): the 'Sep 11 15:38:29 host bash[1614]: ' prefix
    is taken off, the two summaries stored (46.7 MiByte in 17.9 s at 2667 KiB/s; in 17.8 s at 2688 KiB/s), the
    other programs' lines and journalctl's '[1.9K blob data]' lines counted in warnings."""
    path = FIXTURES / "mbuffer" / "published" / "mbuffer-udp-cast-journal.txt"
    text = decode(path.read_bytes())
    assert detect(text)[0] is mbuffer
    p = mbuffer.parse(text)
    assert [
        (s["bytes"], s["duration_ns"], s["rate_bytes_per_s"], s["line_start"]) for s in p.rows("mbuffer_summaries")
    ] == [
        (46.7 * MiB, 17.9e9, 2667 * KiB, 7),
        (46.7 * MiB, 17.8e9, 2688 * KiB, 14),
    ]
    assert p.warnings == [
        "line 15: '...': lines left out where the log was pasted",
        "8 journal line(s) of other programs' output skipped",
        "4 journal line(s) shown as '[... blob data]' (lines with control characters: mbuffer's live status lines, "
        "not in the text) skipped; `journalctl --all` shows them",
    ]
