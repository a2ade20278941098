"""pv, dd and zfs send/receive -v parsers on real outputs (tests/fixtures/{pv,dd,zfs-sendrecv}, sources in each
folder's COMMANDS.md; grammar in docs/formats/transfers.md). Exact values; MB is 10^6 B in GNU dd and 2^20 B in
BusyBox dd and old zfs receive, MiB always 2^20 B."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from storagelab.errors import ParseError
from storagelab.parsers import dd, parse_bytes, pv, zfs_sendrecv

PV = FIXTURES / "pv" / "1.6.20"
DD = FIXTURES / "dd"
ZFS = FIXTURES / "zfs-sendrecv"
MiB = 1024**2


def _parse(path):
    parsed, mod = parse_bytes(path.read_bytes(), str(path))
    return parsed, mod


def _last(parsed, table):
    return dict(parsed.rows(table)[-1])


# ---------------------------------------------------------------------------------------------------------- pv


def test_pv_default_components_with_bar_and_eta():
    parsed, mod = _parse(PV / "pv-default-L20m.txt")
    assert mod is pv and parsed.format == "pv"
    rows = [dict(r) for r in parsed.rows("pv_updates")]
    assert len(rows) == 7  # seven \r-separated updates on one physical line
    assert rows[0] == {
        "seq": 0, "name": None, "bytes": 10 * MiB, "elapsed_ns": 0.0, "rate_bytes_per_s": 18.3 * MiB,
        "average_rate_bytes_per_s": None, "pct": 15.0, "eta_ns": 0.0, "numeric": False, "units_iec": True,
        "is_last": False, "line_start": 1, "line_end": 1,
    }  # fmt: skip
    last = rows[-1]
    assert (last["bytes"], last["elapsed_ns"], last["pct"], last["eta_ns"], last["is_last"]) == (
        64.2 * MiB, 3e9, 100.0, None, True  # the last update's ETA is blank
    )  # fmt: skip
    assert rows[1]["eta_ns"] == 2e9  # ETA 0:00:02


def test_pv_two_bracketed_rates_are_current_then_average():
    parsed, _ = _parse(PV / "pv-btra-L30m.txt")
    r = [dict(x) for x in parsed.rows("pv_updates")]
    assert (r[1]["bytes"], r[1]["elapsed_ns"], r[1]["rate_bytes_per_s"], r[1]["average_rate_bytes_per_s"]) == (
        30 * MiB, 1e9, 33.0 * MiB, 29.5 * MiB
    )  # fmt: skip
    assert [x["is_last"] for x in r] == [False] * 4 + [True]


def test_pv_name_prefix_and_no_amount():
    parsed, _ = _parse(PV / "pv-N-t-r.txt")
    r = [dict(x) for x in parsed.rows("pv_updates")]
    assert [(x["name"], x["bytes"], x["elapsed_ns"], x["rate_bytes_per_s"]) for x in r] == [
        ("s1", None, 1e9, 24.1 * MiB), ("s1", None, 2e9, 24.9 * MiB), ("s1", None, 2e9, 25.6 * MiB),
    ]  # fmt: skip


def test_pv_numeric_percentages_and_bytes():
    pct, mod = _parse(PV / "pv-n-size.txt")
    assert mod is pv and pct.format == "pv-numeric"
    assert [x["pct"] for x in pct.rows("pv_updates")] == [15.0, 31.0, 46.0, 62.0, 77.0, 93.0, 100.0]
    assert {x["bytes"] for x in pct.rows("pv_updates")} == {None}
    b, _ = _parse(PV / "pv-n-b.txt")
    assert [x["bytes"] for x in b.rows("pv_updates")][-2:] == [62914560.0, 67279512.0]  # exact bytes, no unit
    assert (b.rows("pv_updates")[-1]["line_start"], b.rows("pv_updates")[-1]["is_last"]) == (7, True)


def test_pv_plain_bytes_and_the_trial_log():
    small, _ = _parse(PV / "pv-3bytes.txt")
    assert _last(small, "pv_updates")["bytes"] == 3.0  # `3.00 B`: no prefix
    assert _last(small, "pv_updates")["rate_bytes_per_s"] == 133 * 1024
    trial, _ = _parse(PV / "trial-h6-pv-zero.log")
    assert (_last(trial, "pv_updates")["bytes"], _last(trial, "pv_updates")["rate_bytes_per_s"]) == (
        256 * MiB, 3.01 * 1024**3
    )  # fmt: skip


def test_pv_before_1_3_printed_mb_for_mib():
    """Published pastes of old pv: `611MB`, `[58.3MB/s]` are powers of 1024 (pv < 1.3.0), read so and warned."""
    parsed, mod = _parse(FIXTURES / "pv" / "published" / "pv-old-mb-gzip.txt")
    x = _last(parsed, "pv_updates")
    assert mod is pv
    assert (x["bytes"], x["elapsed_ns"], x["rate_bytes_per_s"], x["pct"], x["eta_ns"], x["units_iec"]) == (
        611 * MiB, 11e9, 58.3 * MiB, 15.0, 59e9, False
    )  # fmt: skip
    assert parsed.warnings == [
        "line 1: units without the 'i' (kB, MB): read as powers of 1024, as pv before 1.3.0 printed them; pv 1.8+ "
        "with --si means powers of 1000 by them (then 2.3 % (k) to 6.9 % (G) less)"
    ]
    moving, _ = _parse(FIXTURES / "pv" / "published" / "pv-old-mb-ubuntu14.txt")
    y = _last(moving, "pv_updates")
    assert (y["bytes"], y["elapsed_ns"], y["rate_bytes_per_s"], y["pct"]) == (64.4 * MiB, 42e9, 1.53 * MiB, None)


def test_pv_bad_update_names_its_line():
    text = (PV / "pv-btra-L30m.txt").read_bytes().decode().replace("[29.5MiB/s]", "[29.5MiB/s] garbled")
    with pytest.raises(ParseError) as e:
        pv.parse(text)  # the updates are \r-separated on line 1
    assert e.value.line == 1
    assert "not a pv update: '30.0MiB 0:00:01 [33.0MiB/s] [29.5MiB/s] garbled'" in str(e.value)


# ---------------------------------------------------------------------------------------------------------- dd


def test_gnu_dd_amount_is_exact_and_mb_is_si():
    parsed, mod = _parse(DD / "coreutils-9.1" / "trial-h6-dd-sink.txt")
    assert mod is dd
    assert _last(parsed, "dd_transfers") == {
        "seq": 0, "flavour": "gnu", "progress": False, "records_in_full": 80, "records_in_partial": 1,
        "records_out_full": 80, "records_out_partial": 1, "bytes": 84096664.0, "duration_ns": 993853000.0,
        "rate_bytes_per_s": 84.6e6, "computed_rate_bytes_per_s": 84096664 / 0.993853, "line_start": 1, "line_end": 3,
    }  # fmt: skip  # `(84 MB, 80 MiB)`, `84.6 MB/s`: MB = 10^6 B


def test_gnu_dd_small_amounts_and_exponent_times():
    three, _ = _parse(DD / "coreutils-9.1" / "dd-gnu-3bytes.txt")
    x = _last(three, "dd_transfers")
    assert (x["bytes"], x["duration_ns"], x["rate_bytes_per_s"]) == (3.0, pytest.approx(37536.0), 79.9e3)
    one, _ = _parse(DD / "coreutils-9.1" / "dd-gnu-1byte.txt")
    assert _last(one, "dd_transfers")["bytes"] == 1.0  # `1 byte copied`
    k, _ = _parse(DD / "coreutils-9.1" / "dd-gnu-1000.txt")
    assert (_last(k, "dd_transfers")["bytes"], _last(k, "dd_transfers")["rate_bytes_per_s"]) == (1000.0, 25.4e6)


def test_gnu_dd_status_progress_lines():
    parsed, _ = _parse(DD / "coreutils-9.1" / "dd-gnu-status-progress.txt")
    r = [dict(x) for x in parsed.rows("dd_transfers")]
    assert [(x["progress"], x["bytes"], x["duration_ns"], x["line_start"]) for x in r] == [
        (True, 22020096.0, 1e9, 1), (True, 42991616.0, 2e9, 1), (True, 63963136.0, 3e9, 1),
        (False, 67279512.0, pytest.approx(3.2204e9), 2),
    ]  # fmt: skip
    assert r[-1]["line_end"] == 4 and r[-1]["records_in_full"] == 64


def test_dd_records_only():
    for path in (DD / "coreutils-9.1" / "dd-gnu-noxfer.txt", DD / "busybox-1.35.0" / "dd-busybox-bs1M.txt"):
        parsed, mod = _parse(path)
        x = _last(parsed, "dd_transfers")
        assert mod is dd and (x["flavour"], x["bytes"], x["duration_ns"]) == (None, None, None)
        assert (x["records_out_full"], x["line_start"], x["line_end"]) in ((3, 1, 3), (64, 1, 3))


def test_busybox_mb_is_mib_and_bsd_bytes():
    bb, _ = _parse(DD / "published" / "busybox-openbmc-883.txt")
    x = _last(bb, "dd_transfers")
    assert (x["flavour"], x["bytes"], x["duration_ns"]) == ("busybox", 8388608.0, pytest.approx(10029590000.0))
    assert x["rate_bytes_per_s"] == pytest.approx(816.8 * 1024)  # `816.8KB/s`: powers of 1024
    assert (x["records_in_full"], x["records_out_full"]) == (2048, 8192)
    bsd, _ = _parse(DD / "published" / "macos-dd-bs1024.txt")
    y = _last(bsd, "dd_transfers")
    assert (y["flavour"], y["bytes"], y["duration_ns"], y["rate_bytes_per_s"]) == (
        "bsd", 102400000.0, pytest.approx(339715000.0), 301429136.0
    )  # fmt: skip


def test_dd_unknown_line_names_its_line():
    text = (DD / "coreutils-9.1" / "dd-gnu-bs1M.txt").read_text().replace(" copied,", " kopiert,")
    with pytest.raises(ParseError) as e:
        dd.parse(text)
    assert e.value.line == 3 and "not a dd line: '67279512 bytes (67 MB, 64 MiB) kopiert" in str(e.value)


# ------------------------------------------------------------------------------------------ zfs send / receive -v


def test_zfs_fuse_receive_whole_seconds_and_old_mb_is_mib():
    parsed, mod = _parse(ZFS / "zfs-fuse-0.7.0" / "zfs-recv-v-full.txt")
    assert mod is zfs_sendrecv
    assert _last(parsed, "zfs_receives") == {
        "seq": 0, "kind": "full", "dry_run": False, "snapshot": "h7src/data@s1", "target": "h7dst/r1@s1",
        "bytes": 64.2 * MiB, "duration_ns": 2e9, "rate_bytes_per_s": 32.1 * MiB, "whole_seconds": True,
        "line_start": 1, "line_end": 2,
    }  # fmt: skip
    incr, _ = _parse(ZFS / "zfs-fuse-0.7.0" / "zfs-recv-v-incr.txt")
    assert (_last(incr, "zfs_receives")["kind"], _last(incr, "zfs_receives")["bytes"]) == ("incremental", 8.03 * MiB)


def test_published_receive_lines_nicebytes():
    parsed, _ = _parse(ZFS / "published" / "openzfs-10514-receive-0.8.4.txt")
    r = [dict(x) for x in parsed.rows("zfs_receives")]
    assert [x["bytes"] for x in r] == [
        809 * 1024, 809 * 1024, 267 * MiB, 215 * MiB, 159 * MiB, 1009 * MiB, 1.57 * 1024**3, 312.0, 264 * 1024,
    ]  # fmt: skip
    assert (r[6]["duration_ns"], r[6]["rate_bytes_per_s"], r[6]["kind"]) == (83e9, 19.3 * MiB, None)
    old, _ = _parse(ZFS / "published" / "openzfs-5027-receive-0.6.txt")
    assert _last(old, "zfs_receives")["bytes"] == 312.0
    assert dict(old.rows("zfs_receives")[0])["bytes"] == 44.2 * 1024  # `44.2KB`: K = 1024


def test_send_estimates_and_receives_in_one_paste():
    parsed, _ = _parse(ZFS / "published" / "openzfs-13262-send-receive-2.1.3.txt")
    s = [dict(x) for x in parsed.rows("zfs_send_streams")]
    assert [(x["kind"], x["from_snapshot"], x["snapshot"], x["estimated_bytes"]) for x in s] == [
        ("incremental", "@1", "POOL/fs1@2", 7.61 * 1024), ("incremental", "@2", "POOL/fs1@3", 7.61 * 1024),
        ("incremental", "@3", "POOL/fs1@4", 624.0), ("incremental", "@4", "POOL/fs1@5", 7.61 * 1024),
        ("incremental", "@5", "POOL/fs1@6", 8.61 * 1024), ("total", None, None, 32.0 * 1024),
    ]  # fmt: skip
    r = [dict(x) for x in parsed.rows("zfs_receives")]
    assert [(x["snapshot"], x["target"], x["bytes"], x["line_start"], x["line_end"]) for x in r][0] == (
        "POOL/fs1@2", "POOL/fs2@2", 0.0, 7, 9
    )  # fmt: skip
    assert len(r) == 4  # @5 is not received: the paste shows it, 06 need not guess
    assert parsed.warnings[0] == "line 8: snap POOL/fs2@2 already exists; ignoring"


def test_send_parsable_progress_and_human_header():
    parsed, _ = _parse(ZFS / "published" / "openzfs-10215-send-Pv.txt")
    assert [(x["kind"], x["snapshot"], x["estimated_bytes"], x["parsable"]) for x in parsed.rows("zfs_send_streams")] == [
        ("full", "zfs/test@1", 39223560952.0, True), ("total", None, 39223560952.0, True),
    ]  # fmt: skip
    p = [dict(x) for x in parsed.rows("zfs_send_progress")]
    assert (len(p), p[0]["clock"], p[-1]["bytes"], p[-1]["snapshot"]) == (
        7, "15:15:40", 1042684032.0, "zfs/test@2020-03-31_15:15:39_host"
    )  # fmt: skip
    human, _ = _parse(ZFS / "published" / "openzfs-6029-send-v.txt")
    assert [x["estimated_bytes"] for x in human.rows("zfs_send_streams")] == [1.01 * MiB, 1.01 * MiB]
    assert human.warnings == ["line 5: not a zfs send/receive -v line, skipped: '1098368'"]  # wc -c's count


def test_zfs_bad_size_names_its_line():
    text = "receiving full stream of a@s into b@s\nreceived 64.2XB stream in 2 seconds (32.1MB/sec)\n"
    parsed = zfs_sendrecv.parse(text)  # not a received line: kept as a warning, the receiving line stays
    assert parsed.warnings == [
        "line 2: not a zfs send/receive -v line, skipped: 'received 64.2XB stream in 2 seconds (32.1MB/sec)'"
    ]
    assert _last(parsed, "zfs_receives")["bytes"] is None
    with pytest.raises(ParseError) as e:
        zfs_sendrecv.parse("cannot receive: specified fs (h7dst/rr) does not exist\n")
    assert e.value.line == 1
