"""Notebook 06 with what engineers paste about a transfer besides mbuffer: pv, dd and zfs receive -v lines matched to
the mbuffer run of their pipeline, a receiver paired with its sender by the stream, a stream's source from zfs send
-v (a second data set, tests/fixtures/transfers/set-h7, made here; published outputs; sources in each COMMANDS.md)."""

from __future__ import annotations

import os
import shutil

import polars as pl
import pytest
from conftest import FIXTURES, analyse_study, ingest_labelled

from storagelab.analysis import Selection, open_db, stream_pairs, transfer_tools, transports
from storagelab.parsers import parse_bytes
from storagelab.store import ingest

SET = FIXTURES / "transfers" / "set-h7"
PUBLISHED = FIXTURES / "zfs-sendrecv" / "published"
MiB = 1024**2
# modification times when the files were made (COMMANDS.md): the end of each run
MTIME = {
    "pv-before-mbuffer.txt": 1795786360294279996,
    "mbuffer-slow-sink.log": 1795786363338279974,
    "nc-tx-mbuffer.log": 1795786364822279964,
    "nc-rx-mbuffer.log": 1795786365070279962,
    "nc-rx-zfs-receive.txt": 1795786365114279962,
    "send-to-null.log": 1795786365298279960,
    "mbuffer-recv-full.log": 1795786144198281516,
    "mbuffer-recv-full-zfs-receive.txt": 1795786145090281509,
}
SINK = "zfs send h7src/data@s1 | pv -f -b -t -r -a | mbuffer -m 80M -s 128k | pv -q -L 20m > /dev/null"
RX = "nc -l 127.0.0.1 9191 | mbuffer -m 16M -s 128k | zfs receive -v h7dst/n1"
LOCAL = "cat s1.stream | mbuffer -m 16M -s 128k | zfs receive -v h7dst/r1"
RUNS = {  # file: (label, command); no label follows the NAME (sender) / NAME (receiver) convention
    "pv-before-mbuffer.txt": ("pv before the buffer", SINK),
    "mbuffer-slow-sink.log": ("slow sink", SINK),
    "nc-rx-mbuffer.log": ("netcat rx", RX),
    "nc-rx-zfs-receive.txt": ("netcat rx zfs receive", RX),
    "nc-tx-mbuffer.log": ("netcat tx", "zfs send h7src/data@s1 | mbuffer -m 16M -s 128k | nc -N 127.0.0.1 9191"),
    "send-to-null.log": ("send to null", "zfs send h7src/data@s1 | mbuffer -m 16M -s 128k -o /dev/null"),
    "mbuffer-recv-full.log": ("local receive", LOCAL),
    "mbuffer-recv-full-zfs-receive.txt": ("local receive zfs", LOCAL),
}
MANIFEST = "path,study,label,command\n" + "".join(f'{f},h7,{lab},"{c}"\n' for f, (lab, c) in RUNS.items())


def _raw(tmp_path, keep_times: bool = True):
    raw = tmp_path / "raw"
    raw.mkdir()
    for name, ns in MTIME.items():
        shutil.copyfile(SET / name, raw / name)
        if keep_times:
            os.utime(raw / name, ns=(ns, ns))
    return raw


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    return ingest_labelled(_raw(tmp_path_factory.mktemp("h7")), MANIFEST)


def _said(res, start: str) -> list[str]:
    return [str(f) for f in res.findings if str(f).startswith(start)]


def test_a_pv_line_that_disagrees_with_mbuffer_for_the_same_stream_is_said_plainly(labelled):
    """pv before mbuffer's 80 MiB buffer saw 64.2 MiB in under a second; the mbuffer of the same pipeline (same
    command label) took 3.1 s to pass it to a 20 MiB/s sink. Both figures are stated, the disagreement too, no cause."""
    res = analyse_study(labelled, transports.analyse, "h7")
    assert _said(res, "pv before the buffer") == [
        "pv before the buffer (pv, line 1): 64.2 MiB in 0 s on its timer (whole seconds: under 1 s), 659.0 MiB/s "
        "(691.0 MB/s). Its pipeline's mbuffer run is slow sink (the same command label): 64.2 MiB in 3.1 s, 20.4 "
        "MiB/s (21.4 MB/s). **They disagree on the time** for the same stream: two tools at two places of one "
        "pipeline; the data show that their figures differ, not which one is the transfer's nor why."
    ]
    tools = res["tools"].sort("label")
    assert tools.select("label", "tool", "run", "matched_by", "amount_disagrees", "time_disagrees").rows() == [
        ("local receive zfs", "zfs receive", "local receive", "command", False, False),
        ("netcat rx zfs receive", "zfs receive", "netcat rx", "command", False, False),
        ("pv before the buffer", "pv", "slow sink", "command", False, True),
    ]
    assert tools["bytes"].to_list() == [64.2 * MiB, 64.2 * MiB, 64.2 * MiB]
    assert tools["seconds"].to_list() == [2.0, 1.0, 0.0]
    assert tools["printed_rate"].to_list() == [32.1 * MiB, 64.2 * MiB, 659 * MiB]


def test_a_zfs_receive_line_within_its_precision_agrees_and_names_its_stream(labelled):
    res = analyse_study(labelled, transports.analyse, "h7")
    assert _said(res, "netcat rx zfs receive") == [
        "netcat rx zfs receive (zfs receive, line 2): 64.2 MiB in 1 s (whole seconds: within 1 s of that), 64.2 "
        "MiB/s (67.3 MB/s); stream `zfs send h7src/data@s1` (from its zfs receive -v line). Its pipeline's mbuffer "
        "run is netcat rx (the same command label): 64.2 MiB in 1.6 s, 39.0 MiB/s (40.9 MB/s); the two agree within "
        "their printed precision."
    ]


def test_a_receiver_is_paired_with_its_sender_by_the_stream(labelled):
    """'netcat rx' (its command listens: a receiver) and 'netcat tx': no label convention. The same 64.2 MiB, at
    the same time; 'send to null' and 'slow sink' moved it too, the first 30 ms later, but into /dev/null; the local
    receive ran 3.7 minutes earlier. Paired, said as what the data allow, and the wait taken out."""
    res = analyse_study(labelled, transports.analyse, "h7")
    assert _said(res, "netcat rx is paired") == [
        "netcat rx is paired with netcat tx by the stream, not by their labels: the same amount (64.2 MiB and 64.2 "
        "MiB, within 1 %), runs that overlap in time (netcat tx's 0.4 s and netcat rx's 1.6 s, each ending at its "
        "file's modification time; copies that reset modification times void this), and no other run that could "
        "have sent it (a run whose command writes to /dev/null sent nothing). A pairing the data allow, not a proof: "
        "label the two 'NAME (sender)' and 'NAME (receiver)' to state it."
    ]
    w = res["waits"].row(0, named=True)
    assert (w["receiver"], w["sender"], round(w["wait_s"], 1)) == ("netcat rx", "netcat tx", 1.2)
    assert res.headline["netcat rx"] == (
        "160.5 MiB/s without its 1.2 s start-up wait (the sender's rate, by construction; printed 39.0)"
    )
    assert res.verdict == "Slowest transport: slow sink at 20.4 MiB/s, 5.6% of send to null (receivers not ranked)."


def test_copied_files_make_the_times_say_nothing_and_nothing_is_paired_on_them(tmp_path):
    """The same files copied (modification times reset to the copy's): every run 'ends' at once, so two runs could
    have sent what netcat rx received: named, not paired; and no receive line is matched but by its command."""
    db = ingest_labelled(_raw(tmp_path, keep_times=False), MANIFEST)
    res = analyse_study(db, transports.analyse, "h7")
    assert res["waits"].is_empty()
    assert _said(res, "netcat rx: 39.0") == [
        "netcat rx: 39.0 MiB/s (40.9 MB/s), 10.8% of the baseline (its source is not known from its command label: "
        "compared as if it moved the baseline's stream). It is a receiver (its label or command says so) that could "
        "not be paired with a sender (several runs could be its sender (local receive, netcat tx: the same amount, at "
        "its time); label the two 'NAME (sender)' and 'NAME (receiver)'): its printed rate includes any time it "
        "waited for its sender, so it is not ranked."
    ]
    assert res["tools"].sort("label")["run"].to_list() == ["local receive", "netcat rx", "slow sink"]


def test_unlabelled_files_are_matched_by_amount_and_time_or_said_ambiguous(tmp_path):
    """No manifest at all: no command, no label. pv's line is matched to the one run of its amount at its time; the
    netcat receive line's 1 s (whole seconds) overlaps four runs of 64.2 MiB: named, not matched."""
    raw = _raw(tmp_path)
    ingest([raw], db_path=tmp_path / "u.duckdb", parquet_dir=False, progress=False, workers=1)
    with open_db(tmp_path / "u.duckdb") as con:
        res = transports.analyse(con, Selection(), baseline_label="")
    tools = {x["label"].rsplit("/", 1)[-1]: x for x in res["tools"].iter_rows(named=True)}
    assert tools["pv-before-mbuffer.txt"]["run"].endswith("/mbuffer-slow-sink.log")
    assert (tools["pv-before-mbuffer.txt"]["matched_by"], tools["pv-before-mbuffer.txt"]["time_disagrees"]) == (
        "stream",
        True,
    )
    rx = tools["nc-rx-zfs-receive.txt"]
    assert rx["run"] is None
    assert [c.rsplit("/", 1)[-1] for c in rx["candidates"]] == [
        "mbuffer-slow-sink.log",
        "nc-rx-mbuffer.log",
        "nc-tx-mbuffer.log",
        "send-to-null.log",
    ]
    said = [str(f) for f in res.findings if "nc-rx-zfs-receive.txt (zfs receive" in str(f)][0]
    assert "Several mbuffer runs could be its pipeline's (" in said and said.endswith("send-to-null.log): not matched.")
    assert str(res.findings[0]).endswith("(the fastest run: no run's source is known (label each run's command)).")


def test_a_baseline_asked_for_keeps_the_tool_lines(labelled):
    """Non-default parameter: baseline 'netcat tx'. The shares change, the tool lines and the pairing do not."""
    res = analyse_study(labelled, transports.analyse, "h7", baseline_label="netcat tx")
    assert str(res.findings[0]).endswith("(asked for; source `zfs send h7src/data@s1`).")
    assert _said(res, "send to null: 362.0") == [
        "send to null: 362.0 MiB/s (379.6 MB/s), 222.1% of the baseline. **Above 100 %**: faster than the baseline "
        "netcat tx (`zfs send h7src/data@s1`): that baseline is not comparable for it (the data show that the "
        "baseline was slower, not why)."
    ]
    assert len(_said(res, "pv before the buffer (pv, line 1)")) == 1
    assert len(_said(res, "netcat rx is paired with netcat tx")) == 1


def test_receive_lines_without_mbuffer_are_read_with_their_streams(tmp_path):
    """Published pastes only (no mbuffer): 06 says what is missing and still states each receive's amount and time,
    its stream from the zfs send -v header or progress line pasted with it (the FreeBSD study's 303 GiB line)."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for f in ("openzfs-13262-send-receive-2.1.3.txt", "seed-004-freebsd-send-receive.txt"):
        shutil.copyfile(PUBLISHED / f, raw / f)
    db = ingest_labelled(
        raw,
        "path,study,label\nopenzfs-13262-send-receive-2.1.3.txt,pub,13262 replication\n"
        "seed-004-freebsd-send-receive.txt,pub,raid1 to raid5\n",
    )
    res = analyse_study(db, transports.analyse, "pub")
    assert res.missing[-1].startswith("no mbuffer summary for study pub")
    assert _said(res, "raid1 to raid5") == [
        "raid1 to raid5 (zfs receive, line 2): 303.00 GiB in 5217 s (whole seconds: within 1 s of that), 59.5 MiB/s "
        "(62.4 MB/s); stream `zfs send raid1/backup@backup` (from its zfs send -v progress line). No mbuffer run of "
        "the selection is of its pipeline."
    ]
    replication = res["tools"].filter(pl.col("label") == "13262 replication")
    assert replication.select("line_end", "bytes", "source").rows() == [
        (9, 0.0, "zfs send -i @1 POOL/fs1@2"),
        (12, 0.0, "zfs send -i @2 POOL/fs1@3"),
        (15, 0.0, "zfs send -i @3 POOL/fs1@4"),
        (18, 0.0, "zfs send -i @5 POOL/fs1@6"),
    ]


def _rows(name: str, table: str, **labels) -> list[dict]:
    parsed, _ = parse_bytes((SET / name).read_bytes(), name)
    return [dict(r, **labels) for r in parsed.rows(table)]


def test_stream_pair_rules():
    """The pure rules: amounts within 1 %, overlap with 0.1 s of slack, runs into /dev/null deliver nothing."""
    assert stream_pairs.same_amount(64.2 * MiB, 64.5 * MiB) and not stream_pairs.same_amount(64.2 * MiB, 65 * MiB)
    assert stream_pairs.overlaps((0.0, 1.0), (1.05, 2.0)) and not stream_pairs.overlaps((0.0, 1.0), (1.2, 2.0))
    assert stream_pairs.span({"mtime_ns": 10_000_000_000, "seconds": 3.1}) == (6.9, 10.0)
    assert stream_pairs.span({"mtime_ns": 10_000_000_000, "seconds": 0.0}, 1.0) == (9.0, 10.0)
    assert stream_pairs.span({"mtime_ns": None, "seconds": 1.0}) is None
    assert [stream_pairs.delivers_nothing(c) for c in (SINK, RX, LOCAL, "dd if=x of=/dev/null", None)] == [
        True,
        False,
        False,
        True,
        False,
    ]


def test_header_sources_and_their_runs():
    """A zfs send -v header names the stream of the run of the same command label (parsed rows of real outputs)."""
    headers = [
        dict(h, file_id=1, command="zfs send -v -I @1 POOL/fs1@6 | mbuffer | zfs recv -v POOL/fs2")
        for h in parse_bytes((PUBLISHED / "openzfs-13262-send-receive-2.1.3.txt").read_bytes(), "x")[0].rows(
            "zfs_send_streams"
        )
        if h["kind"] != "total"
    ]
    assert [transfer_tools.header_source(h) for h in headers][:2] == [
        "zfs send -i @1 POOL/fs1@2",
        "zfs send -i @2 POOL/fs1@3",
    ]
    runs = pl.DataFrame(
        [{"label": "replication", "command": headers[0]["command"]}, {"label": "other", "command": "cat x | mbuffer"}]
    )
    one = pl.DataFrame(headers[:1])
    assert transfer_tools.run_sources(pl.DataFrame(), one, runs) == {
        "replication": ("zfs send -i @1 POOL/fs1@2", "zfs send -v header")
    }
    assert transfer_tools.run_sources(pl.DataFrame(), pl.DataFrame(headers), runs) == {}  # five streams: none named


def test_a_line_is_matched_only_to_a_run_of_its_host():
    """Same amount at the same time on another host (host labels on both): not the same pipeline."""
    pv_row = _rows("pv-before-mbuffer.txt", "pv_updates")[-1]
    line = {"bytes": pv_row["bytes"], "seconds": 0.0, "resolution_s": 1.0, "mtime_ns": MTIME["pv-before-mbuffer.txt"]}
    mb = _rows("mbuffer-slow-sink.log", "mbuffer_summaries")[0]
    run = {"label": "slow sink", "resolved_bytes": mb["bytes"], "seconds": mb["duration_ns"] / 1e9}
    run["mtime_ns"] = MTIME["mbuffer-slow-sink.log"]
    assert stream_pairs.line_candidates(dict(line, host="nas1"), [dict(run, host="nas1")]) == (
        [dict(run, host="nas1")],
        "stream",
    )
    assert stream_pairs.line_candidates(dict(line, host="nas1"), [dict(run, host="nas2")]) == ([], "")
    assert stream_pairs.line_candidates(line, [dict(run, host="nas2")])[1] == "stream"  # one host unknown: allowed
    # both with command labels: only the same command matches, whatever the amounts and times
    assert stream_pairs.line_candidates(dict(line, command="a | b"), [dict(run, command="c | d")]) == ([], "")
