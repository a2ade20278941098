"""The s35 new-user trial's own runs (tests/fixtures/mbuffer/trial-h6 and tests/fixtures/fio/trial-h6, sources in
their COMMANDS.md; findings in /work/h6-trial-findings.md): 06 judges where a transfer was limited from its steady
status lines, not the drain (S1); 01 ... (S4)."""

from __future__ import annotations

import shutil

import pytest
from conftest import FIXTURES, analyse_study, ingest_labelled

from storagelab.analysis import scaling, transports

SEND = FIXTURES / "mbuffer" / "trial-h6"
FIO = FIXTURES / "fio" / "trial-h6"
STUDY = "zfs-fuse läb"
# the trial's manifest rows (/tmp/h6ds/manifest-h6a.csv), paths flattened
SEND_RUNS = {  # file: (label, command)
    "send-to-null-mbuffer.log": ("send to null", "zfs send single.img@s1 | mbuffer -m 64M -s 128k -o /dev/null"),
    "zero-to-null.mbuffer.log": (
        "/dev/zero to null",
        "dd if=/dev/zero bs=1M count=512 | mbuffer -m 64M -s 128k > /dev/null",
    ),
    "ssh-sender.log": (
        "ssh sender",
        "zfs send single.img@s1 | mbuffer -m 64M -s 128k | ssh -p 2222 root@127.0.0.1 'cat > /dev/null'",
    ),
    "ssh-zero-sender.log": (
        "ssh aes128-gcm zero sender",
        "dd if=/dev/zero bs=1M count=512 | mbuffer -m 64M -s 128k | ssh -c aes128-gcm@openssh.com ... "
        "'mbuffer -m 64M -s 128k -o /dev/null'",
    ),
    "ssh-zero-receiver.log": ("ssh aes128-gcm zero receiver", "ssh ... 'mbuffer -m 64M -s 128k -o /dev/null'"),
    "nc-sender.log": ("netcat (sender)", "zfs send single.img@s1 | mbuffer -m 64M -s 128k | nc -N 127.0.0.1 9091"),
    "nc-receiver.log": ("netcat (receiver)", "nc -l 127.0.0.1 9091 | mbuffer -m 64M -s 128k -o /dev/null"),
    "socat-sender.log": (
        "socat (sender)",
        "zfs send single.img@s1 | mbuffer -m 64M -s 128k | socat -u STDIN TCP:127.0.0.1:9093",
    ),
    "socat-receiver.log": (
        "socat (receiver)",
        "socat -u TCP-LISTEN:9093 STDOUT | mbuffer -m 64M -s 128k -o /dev/null",
    ),
    "mbnet-sender.log": ("mbuffer net (sender)", "zfs send single.img@s1 | mbuffer -m 64M -s 128k -O 127.0.0.1:9092"),
    "mbnet-receiver.log": (
        "mbuffer net (receiver: zfs receive)",
        "mbuffer -I 127.0.0.1:9092 -m 64M -s 128k | zfs receive -v m2/recv",
    ),
    "sink-limited-sender.log": (
        "sink limited 20 MiB/s",
        "dd if=/dev/zero bs=1M count=128 | mbuffer -m 16M -s 128k | pv -q -L 20m > /dev/null",
    ),
    "source-limited.log": ("source limited 10 MiB/s", "pv -q -L 10m < rand40 | mbuffer -m 16M -s 128k -o /dev/null"),
    "dd-sink-sender.log": (
        "dd sink",
        "zfs send single.img@s1 | mbuffer -m 64M -s 128k | dd of=/dev/null bs=1M iflag=fullblock",
    ),
}
SEND_LABELS = {f: label for f, (label, _) in SEND_RUNS.items()}
ZFS = "zfs-fuse 0.7.0 (pool v23),25276510208"
# path, label, pool, vdev_type, vdev_count, vdev_width, devices, ashift, notes
FIO_ROWS = (
    ("seqwrite-on-single.img.log", "1 disk", "single.img", "single", 1, 1, "d1 (256 MiB file)", "", ""),
    ("seqwrite-on-single.img-repeat-2.log", "1 disk run 2", "single.img", "single", 1, 1, "d1 (256 MiB file)", "", ""),
    ("seqwrite-on-m2.log", "mirror", "m2", "mirror", 1, 2, "d2 d3", "", ""),
    ("seqwrite-on-stripe2.log", "2 vdevs", "stripe2", "single", 2, 1, "d4 d5", "", ""),
    ("seqwrite-on-stripe2-repeat-2.log", "2 vdevs run 2", "stripe2", "single", 2, 1, "d4 d5", "", ""),
    ("seqwrite-on-dd.tank.log", "raidz1 dedup", "dd.tank", "raidz1", 1, 2, "d6 d7", "12", "dedup=on"),
)
MANIFEST = (
    "path,study,label,stack,pool,vdev_type,vdev_count,vdev_width,devices,ashift,notes,zfs_version,ram_bytes,command\n"
    + "".join(f'{p},{STUDY},{lab},,,,,,,,,,,"{cmd}"\n' for p, (lab, cmd) in SEND_RUNS.items())
    + "".join(f"{r[0]},{STUDY},{r[1]},zfs,{','.join(map(str, r[2:]))},{ZFS},\n" for r in FIO_ROWS)
)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("h6") / "raw"
    raw.mkdir()
    for f in [*SEND.glob("*.log"), *FIO.glob("*.log")]:
        shutil.copyfile(f, raw / f.name)
    return ingest_labelled(raw, MANIFEST)


def _said(res, start: str) -> list[str]:
    return [str(f) for f in res.findings if str(f).startswith(start)]


def test_06_judges_the_limit_from_the_steady_status_lines(db):
    """S1: the last status line is the drain (`in @ 0.0`): a sink-limited run (99 % full on every steady line) was
    called by its 24 % last line, the receiver into `zfs receive` 'producer-limited' by its 7 % drain line."""
    res = analyse_study(db, transports.analyse, STUDY)
    assert _said(res, "sink limited 20 MiB/s: buffer") == [
        "sink limited 20 MiB/s: buffer at least 90 % full on 9 of its 9 steady status lines (status lines 2-10 of 12; "
        "left out: the start (line 1), the last line with input, in which the input ended (line 11) and the drain "
        "after it (`in @ 0`, line 12)): the consumer after mbuffer was the limit."
    ]  # was: "last status line in 0.0 MiB/s (0.0 MB/s), buffer 24 % full." and no verdict
    assert _said(res, "mbuffer net (receiver: zfs receive): no verdict") == [
        "mbuffer net (receiver: zfs receive): no verdict on where the transfer was limited: 0 of its 2 status line(s) "
        "from its steady part, 2 needed (left out: the start (line 1, also the last line with input) and the drain "
        "after it (`in @ 0`, line 2)). Its lines: line 1: in 111.0 MiB/s, out 59.3 MiB/s, 59 % full; line 2: in "
        "0.0 MiB/s, out 66.0 MiB/s, 7 % full. A transfer that lasts longer prints more status lines."
    ]  # was: "buffer 7 % full (empty: the producer before mbuffer was the limit)", from the drain
    assert _said(res, "send to null: buffer") == [
        "send to null: buffer at most 10 % full on 2 of its 2 steady status lines (status lines 2-3 of 4; left out: "
        "the start (line 1) and the last line with input, in which the input ended (line 4)): the producer before "
        "mbuffer was the limit."
    ]
    assert _said(res, "source limited 10 MiB/s: buffer")[0].endswith("the producer before mbuffer was the limit.")
    # the ssh sender's last line says 100 % full, its first 54 %: two lines, no steady part, no verdict
    assert _said(res, "ssh sender: no verdict")
    assert not any("last status line" in str(f) for f in res.findings)
    fill = {r["label"]: r for r in res["fill"].iter_rows(named=True)}
    assert (fill["sink limited 20 MiB/s"]["limit"], fill["sink limited 20 MiB/s"]["n_full"]) == ("consumer", 9)
    # the steady lines are cited: mbuffer wrote them to stderr separated by carriage returns, on raw line 1
    (c,) = [f for f in res.findings if str(f).startswith("sink limited 20 MiB/s: buffer")][0].cites
    assert ([x["line_start"] for x in c.inputs], c.text) == ([1], "9 steady")


def test_fill_verdict_rules():
    """The rules on made-up fills (the real logs are above): the start and the end of the input are left out."""
    from storagelab.analysis.mbuffer_fill import judge

    f = judge([99, 99, 99, 99, 50, 20], [40e6, 20e6, 20e6, 20e6, 5e6, 0.0])
    assert (f.steady, f.n_steady, f.n_full, f.limit) == ((2, 4), 3, 3, "consumer")
    assert judge([0, 95, 0, 0, 0, 0], [1.0] * 6).limit == "neither"  # 3 of 4 empty: below 4 in 5
    assert judge([0, 95, 0, 0, 0, 0, 0], [1.0] * 7).limit == "producer"  # 4 of 5
    assert judge([0, 95, 5, 50, 0], [1.0] * 5).limit == "neither"
    assert judge([0, 99, 0], [1.0, 1.0, 0.0]).limit == ""  # one steady line: too few
    assert judge([0, 0], [None, None]).n_steady == 0  # no line with input


WL = "write bs=1MiB iodepth=1 numjobs=1 psync direct=0 size=48MiB runtime=none"


def test_01_pools_repeats_of_a_vdev_count_and_says_the_runs_are_flagged(db):
    """S4: 01 had stated '2 vdevs run 2 = 2.37x (rule 2.0x)' and '1 disk run 2 = 1.11x' of the baseline, one line per
    run, from 113-302 ms writes of 48 MiB through the cache, with no spread and no design check."""
    res = analyse_study(db, scaling.analyse, STUDY)
    text = [str(f) for f in res.findings]
    assert not any("1.11x" in t or "2.37x the" in t for t in text)
    # (200 + 159) / 2 = 179.5; sd 29.0; t(0.975, 1) = 12.706: ±12.706 x 29.0 / sqrt(2) = ±260.5
    assert (
        f"fio `{WL}` on single vdevs, the baseline, 1 vdev: mean of 2 runs (1 disk run 2, 1 disk) 179.5 MiB/s "
        "(188.2 MB/s); runs 159.0-200.0 MiB/s, 95 % CI of the mean ±260.5 MiB/s (Student's t, 1 degree(s) of "
        "freedom): the runs of one vdev count are repeats of the baseline, not points of the scaling."
    ) in text
    # (425 + 312) / 2 = 368.5 = 2.05x 179.5; 312 / 179.5 = 1.74, 425 / 179.5 = 2.37; Welch: +105 %, -160 % to +371 %
    assert (
        f"fio `{WL}`: 2 x single, mean of 2 runs (2 vdevs run 2, 2 vdevs) 368.5 MiB/s (386.4 MB/s); runs "
        "312.0-425.0 MiB/s, 95 % CI of the mean ±717.9 MiB/s (Student's t, 1 degree(s) of freedom) = 2.05x the "
        "1-vdev mean (rule 2.0x); its runs give 1.74x-2.37x of that mean; Welch's t test on the repeats of both "
        "sides: the difference of the means is +105 % of the baseline's, 95 % interval -160 % to +371 %; it holds "
        "0 % (no scaling) and the rule's +100 %: these repeats cannot tell scaling from none. It rests on flagged "
        "runs: 4 of the 4 runs it is taken from (this configuration's and the baseline's) are flagged as notebooks "
        "05, 08 and 10 flag them (stall, sub-second, cache; each run's reasons below), so it does not show how the "
        "vdevs scale."
    ) in text
    # the design checks 05 and 08 make (design.sentences), one per run
    assert (
        "2 vdevs run 2: its slowest I/O took 30 ms (27 % of the run); it ran 0.113 s: sub-second, too short to "
        "measure a sustained rate; its working set of 48.0 MiB fits in the 23.54 GiB of RAM (+ L2ARC) that can "
        "cache it, and its I/O goes through that cache."
    ) in text
    assert "fio vdev ratios rest on runs the design checks flag" in res.caveats
    # S4 (5): the runs outside every comparison are named; S4 (4): a stripe of 2 single vdevs is not 'one disk'
    assert (
        "Not in any comparison: mirror, raidz1 dedup: no other run of the same workload, vdev type and width has "
        "another vdev count."
    ) in text
    assert not any("single-disk run 2 vdevs" in t for t in text)
    configs = res["fio_configs"]
    assert configs.select("vdev_count", "runs", "flagged_runs").rows() == [(1, 2, 2), (2, 2, 2)]
    assert [round(x, 4) for x in configs["relative"]] == [1.0, round(368.5 / 179.5, 4)]


def test_07_headline_promotes_no_run_the_design_checks_flag(db):
    """S13: 07's index had 'fastest write run with no plausibility flag | 2 vdevs run 2: 425.0 MiB/s', the 113 ms run."""
    from storagelab.analysis import Selection, explore, open_db

    with open_db(db) as con:
        best, flagged = explore.fastest_unflagged(con, "write", sel=Selection(study=STUDY))
        top = explore.flagged_runs(con, "write", sel=Selection(study=STUDY)).row(0, named=True)
    assert (best, flagged) == (None, 6)
    assert (top["label"], top["bw_mib_s"], explore.fastest_flags(top)) == (
        "2 vdevs run 2",
        425.0,
        "stall, sub-second, cache",
    )


def test_06_baseline_is_a_run_of_the_same_source_and_shares_above_100_are_flagged(db):
    """S3: the default baseline had been the fastest run whatever its source: /dev/zero to null (1293 MiB/s) as 100 %
    of zfs send transports; with `-p baseline_label "send to null"` shares of 141-757 % passed without a word."""
    res = analyse_study(db, transports.analyse, STUDY)
    assert str(res.findings[0]) == (
        "14 mbuffer run(s) for study zfs-fuse läb; baseline send to null at 36.2 MiB/s (38.0 MB/s) (the run of "
        "`zfs send single.img@s1` with no transport: mbuffer into /dev/null)."
    )
    assert str(res.findings[1]) == (
        "Not compared with the baseline, another source than `zfs send single.img@s1`: /dev/zero to null "
        "(`/dev/zero`, 1293.0 MiB/s (1355.8 MB/s)), ssh aes128-gcm zero receiver (`/dev/zero`, 103.0 MiB/s "
        "(108.0 MB/s)), ssh aes128-gcm zero sender (`/dev/zero`, 86.0 MiB/s (90.2 MB/s)), "
        "sink limited 20 MiB/s (`/dev/zero`, 20.2 MiB/s (21.2 MB/s)), source limited 10 MiB/s (`file rand40`, "
        "10.1 MiB/s (10.6 MB/s)); a share of another stream's rate would not say what the transport costs."
    )
    # 274.0 / 36.2 = 7.569: the cold first send is slower than the same stream through netcat
    assert _said(res, "netcat (sender):") == [
        "netcat (sender): 274.0 MiB/s (287.3 MB/s), 756.9% of the baseline. **Above 100 %**: faster than the baseline "
        "send to null (`zfs send single.img@s1`, no transport): that baseline is not comparable for it (the data show "
        "that the baseline was slower, not why)."
    ]
    assert _said(res, "socat (receiver): 33.1") == ["socat (receiver): 33.1 MiB/s (34.7 MB/s), 91.4% of the baseline."]
    assert res.verdict == (
        "Slowest transport: ssh sender at 51.2 MiB/s, 141.4% of send to null (receivers not ranked). 7 run(s) above "
        "100 % of send to null: that baseline is not comparable for them."
    )
    assert res.headline["/dev/zero to null"] == "1293.0 MiB/s (another source: /dev/zero)"
    # asked for: the same baseline, said to be asked for
    asked = analyse_study(db, transports.analyse, STUDY, baseline_label="send to null")
    assert str(asked.findings[0]).endswith("(asked for; source `zfs send single.img@s1`).")
    assert [str(f) for f in asked.findings[1:]] == [str(f) for f in res.findings[1:]]


def test_06_pairs_a_receiver_outside_the_label_convention_by_its_stream(db):
    """S2: a receiver outside the 'NAME (sender)' / 'NAME (receiver)' convention (the trial's 'ssh aes128-gcm zero
    receiver', command `ssh ... 'mbuffer ... -o /dev/null'`; it had been said unpaired and ranked at 284.5 % of a zfs
    send baseline) is paired with the one run that could have sent it: the same 512 MiB at the same time; '/dev/zero
    to null' moved 512 MiB too but into /dev/null. Said as a pairing the data allow; it then takes its sender's source
    and is not compared with the zfs send baseline; its clock ran shorter than its sender's, so no wait is taken out."""
    res = analyse_study(db, transports.analyse, STUDY)
    assert _said(res, "ssh aes128-gcm zero receiver: 103.0") == []  # not compared: another source
    assert _said(res, "ssh aes128-gcm zero receiver is paired") == [
        "ssh aes128-gcm zero receiver is paired with ssh aes128-gcm zero sender by the stream, not by their labels: "
        "the same amount (512.0 MiB and 512.0 MiB, within 1 %), runs that overlap in time (ssh aes128-gcm zero "
        "sender's 6.0 s and ssh aes128-gcm zero receiver's 5.0 s, each ending at its file's modification time; copies "
        "that reset modification times void this), and no other run that could have sent it (a run whose command "
        "writes to /dev/null sent nothing). A pairing the data allow, not a proof: label the two 'NAME (sender)' and "
        "'NAME (receiver)' to state it."
    ]
    assert _said(res, "ssh aes128-gcm zero receiver: its clock") == [
        "ssh aes128-gcm zero receiver: its clock ran 1.0 s shorter than ssh aes128-gcm zero sender's for the same "
        "512.0 MiB: its printed rate (103.0 MiB/s (108.0 MB/s)) holds no start-up wait to take out; the data show the "
        "two times, not why they differ."
    ]
    assert res.headline["ssh aes128-gcm zero receiver"] == "103.0 MiB/s (another source: /dev/zero)"
    rates = res["rates"]
    assert rates.filter(rates["label"] == "ssh aes128-gcm zero receiver")["source_from"][0] == (
        "its sender's command label"
    )
    paired = dict(zip(rates["label"], rates["paired"], strict=True))
    assert [k for k, v in paired.items() if v] == [
        "ssh aes128-gcm zero receiver",
        "netcat (receiver)",
        "mbuffer net (receiver: zfs receive)",
        "socat (receiver)",
    ]
    assert sorted(rates.filter(rates["receiver"])["label"]) == [
        "mbuffer net (receiver: zfs receive)",
        "netcat (receiver)",
        "socat (receiver)",
        "ssh aes128-gcm zero receiver",
    ]


def test_06_without_the_label_convention_receivers_are_named_and_not_ranked(tmp_path):
    """S2, the trial's first run: labels 'netcat sender' / 'netcat receiver' and no command. Two runs moved the
    receiver's 80.2 MiB at its time (copied files: the same modification time) and without commands neither can be
    ruled out: the receiver (its label says so) is said to be unpaired, its candidates named, and never the slowest
    transport."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for f in ("nc-sender.log", "nc-receiver.log", "send-to-null-mbuffer.log"):
        shutil.copyfile(SEND / f, raw / f)
    manifest = "path,study,label\nnc-sender.log,t,netcat sender\nnc-receiver.log,t,netcat receiver\n"
    db = ingest_labelled(raw, manifest + "send-to-null-mbuffer.log,t,send to null\n")
    res = analyse_study(db, transports.analyse, "t")
    assert str(res.findings[0]) == (
        "3 mbuffer run(s) for study t; baseline netcat sender at 274.0 MiB/s (287.3 MB/s) (the fastest run: no run's "
        "source is known (label each run's command))."
    )
    assert _said(res, "netcat receiver: 61.6") == [
        "netcat receiver: 61.6 MiB/s (64.6 MB/s), 22.5% of the baseline. It is a receiver (its label or command says "
        "so) that could not be paired with a sender (several runs could be its sender (netcat sender, send to null: "
        "the same amount, at its time); label the two 'NAME (sender)' and 'NAME (receiver)'): its printed rate "
        "includes any time it waited for its sender, so it is not ranked."
    ]
    assert res["waits"].is_empty()
    assert (
        res.verdict == "Slowest transport: send to null at 36.2 MiB/s, 13.2% of netcat sender (receivers not ranked)."
    )


def test_sources_from_the_command_labels():
    """The first stage of each run's pipeline (the trial's and seed 001's manifest commands)."""
    from storagelab.analysis.transport_sources import no_transport, source_of

    got = {label: (source_of(cmd), no_transport(cmd)) for label, cmd in SEND_RUNS.values()}
    assert got == {
        "send to null": ("zfs send single.img@s1", True),
        "/dev/zero to null": ("/dev/zero", True),
        "ssh sender": ("zfs send single.img@s1", False),
        "ssh aes128-gcm zero sender": ("/dev/zero", False),
        "ssh aes128-gcm zero receiver": (None, False),
        "netcat (sender)": ("zfs send single.img@s1", False),
        "netcat (receiver)": (None, False),  # listens: its stream is its sender's (paired by label)
        "socat (sender)": ("zfs send single.img@s1", False),
        "socat (receiver)": (None, False),
        "mbuffer net (sender)": ("zfs send single.img@s1", False),
        "mbuffer net (receiver: zfs receive)": (None, False),
        "sink limited 20 MiB/s": ("/dev/zero", False),
        "source limited 10 MiB/s": ("file rand40", True),
        "dd sink": ("zfs send single.img@s1", False),
    }
    assert source_of("cat /dev/zero | mbuffer -m 2048M > /dev/null") == "/dev/zero"  # seed 001
    assert no_transport("cat /dev/zero | mbuffer -m 2048M > /dev/null")
    assert source_of("socat over the network (command as above)") is None
    assert (source_of(None), source_of(""), no_transport(None)) == (None, None, False)
