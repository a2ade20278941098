"""What a run is, from the h6n new-user trial (/work/h6n-findings.md): fio's misprinted bandwidth (P1), a write-up of
several machines taken as repeats (H1) and its summary commands paired with the first run (P2), one command's repeats
split by a 'Laying out IO file' line (E2), a rate-limited run (R1), a run that leaves its steady band (E4), the disk
card's pooling of setups (F1, F2), a tmpfs target (D1) and the lab's silence before short runs (L1). Real output:
fixtures/fio/published/fio-3.1-vps-writeup-five-machines.txt (dyu/vps-comparison, its .md says where from),
fio-3.25-four-threads-iops0.txt (k8s-homelab) and fixtures/fio/trial-h6n (the trial's fio 3.33 runs, COMMANDS.md)."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from conftest import FIXTURES, ingest_labelled, ingest_unlabelled

from storagelab.analysis import Selection, design, disk_card, explore, fio_runs, fio_views, open_db
from storagelab.lab.cli import short_runs_note
from storagelab.lab.manifest import sanity_flags
from storagelab.lab.presets import PRESETS, build_runs
from storagelab.parsers import parse_bytes

PUB = FIXTURES / "fio" / "published"
VPS = PUB / "fio-3.1-vps-writeup-five-machines.txt"
FOUR = PUB / "fio-3.25-four-threads-iops0.txt"
MACHINES = ("aws ec2 micro - 990M", "gcloud micro - 585M", "vultr - 488M", "linode - 989M")
UPCLOUD = "upcloud - 992M (/usr/bin/python missing, install via: apt-get install python)"


def _parsed(path):
    parsed, _ = parse_bytes(path.read_bytes(), str(path))
    return parsed


def test_p1_a_bandwidth_its_own_io_and_run_cannot_give_is_stored_as_io_over_run():
    """fio 3.1 line 32 'write: IOPS=3068, BW=11.0MiB/s (12.6MB/s)(4096MiB/341704msec)': 4096 MiB / 341.704 s =
    11.99 MiB/s = 12,569,262.57 B/s (its 12.6MB/s agrees); stored was 11.0 x 2^20 = 11,534,336 B/s, 8.3 % low."""
    parsed = _parsed(VPS)
    groups = [
        (g["doc_index"], g["direction"], g["bw_bytes_per_s"], g["bw_max_bytes_per_s"])
        for g in parsed.rows("fio_groups")
    ]
    assert groups[:3] == [
        (0, "write", 12569262.566432, 12569262.566432),  # 4096 x 2^20 x 1000 / 341704
        (1, "read", 12575837.654416, 12575837.654416),  # 3598 x 2^20 x 1000 / 300002
        (2, "write", 20552089.6, 20552089.6),  # 19.6MiB/s (20.6MB/s)(4096MiB/208446msec): printed, agrees
    ]
    assert [r["bw_bytes_per_s"] for r in parsed.rows("fio_results")][:2] == [12569262.566432, 12575837.654416]
    assert [w for w in parsed.warnings if "io/run" in w] == [
        f"line {ln}: bandwidth printed as 11.0MiB/s (12.6MB/s) but the line's io/run gives 11.99MiB/s ({io} in {ms} "
        "ms: +9.0 % on the printed figure); stored io/run (the line's 12.6MB/s agrees with it)"
        for ln, io, ms in (
            (32, "4096MiB", 341704),
            (54, "4096MiB", 341704),
            (74, "3598MiB", 300002),
            (96, "3598MiB", 300002),
        )
    ]


def test_p1_fio_3_25_prints_the_same_carry_wrong():
    """fio 3.25 job 2: 'BW=27.0MiB/s (29.4MB/s)(2368MiB/84578msec)' = 28.00 MiB/s, as its group line's max '28.0MiB/s'
    says; the other three jobs' figures agree with their io/run and stay as printed."""
    parsed = _parsed(FOUR)
    assert [r["bw_bytes_per_s"] for r in parsed.rows("fio_results")] == [
        28626124.8,
        29360128.0,
        29357846.815957,
        28940697.6,
    ]
    assert [w for w in parsed.warnings if "io/run" in w] == [
        "line 54: bandwidth printed as 27.0MiB/s (29.4MB/s) but the line's io/run gives 28.00MiB/s (2368MiB in 84578 ms: "
        "+3.7 % on the printed figure); stored io/run (the line's 29.4MB/s agrees with it)"
    ]


def test_h1_p2_a_writeup_holds_one_section_per_machine_and_each_run_its_own_command():
    parsed = _parsed(VPS)
    assert [(s["doc_index"], s["section"], s["line_start"]) for s in parsed.rows("fio_sections")] == [
        (doc, f"fio results (all on ubuntu 16.04 x64) > {name}", ln)
        for doc, name, ln in zip((0, 2, 4, 6, 8), (*MACHINES, UPCLOUD), (10, 102, 196, 290, 384), strict=True)
    ]
    # P2: the summary's two commands (lines 4 and 7, above the first heading) are not the first run's
    commands = [(c["doc_index"], c["line_start"], c["command"][:40]) for c in parsed.rows("fio_commands")]
    assert commands[:2] == [
        (0, 25, "./fio --filename=test4K-aio --rw=write -"),
        (1, 68, "./fio --filename=test4K-aio --rw=read --"),
    ]
    assert not [w for w in parsed.warnings if "different fio commands" in w]


def test_h1_runs_of_different_machines_are_not_repeats(tmp_path):
    """08 said '5 runs of file vps-fio-libaio-4K.txt (host not labelled): mean 87.0 MiB/s ... 95 % confidence interval
    of the mean ±113.4 %': five machines taken as repeats. Each machine's run is now a setup of its own, named by
    its heading, and no mean or interval is stated across them."""
    db = ingest_unlabelled([VPS], tmp_path)
    with open_db(db) as con:
        runs = fio_runs.runs(con, Selection()).sort("doc_index")
        res = fio_views.analyse(con, Selection())
    names = fio_runs.config_label(runs)
    assert runs.select(names.alias("n"))["n"].to_list()[:4] == [
        "fio-3.1-vps-writeup-five-machines.txt § aws ec2 micro - 990M",
        "fio-3.1-vps-writeup-five-machines.txt § aws ec2 micro - 990M",
        "fio-3.1-vps-writeup-five-machines.txt § gcloud micro - 585M",
        "fio-3.1-vps-writeup-five-machines.txt § gcloud micro - 585M",
    ]
    assert (
        "`write bs=4KiB libaio direct=1 size=4GiB runtime=none` write on file fio-3.1-vps-writeup-five-machines.txt § "
        "aws ec2 micro - 990M (host not labelled): one run (fio-3.1-vps-writeup-five-machines.txt, 4 I/Os in flight): "
        "3,069 IOPS, p99 latency 13.4 ms." in res.findings
    )
    assert not [f for f in res.findings if "mean of 5" in f or "5 runs" in f or "confidence interval" in f]


# ----------------------------------------------------------------------------- the trial's own runs (fio 3.33)

TRIAL = FIXTURES / "fio" / "trial-h6n"  # COMMANDS.md there
RR32 = [TRIAL / "ext4" / f"rr32-rep{k}.txt" for k in (1, 2, 3, 4)]
SEQW = [TRIAL / "xfs" / n for n in ("seqw-60s.json", "seqw60_bw.1.log", "seqw-3s.json")]
RATE = TRIAL / "disk" / "rate10m-write.json"
NOT_STEADY = (
    "⚠ not steady: rises to 6352.0 MiB/s (6660.6 MB/s) at 55.055-58.058 s from 2823.1 MiB/s (2960.3 MB/s) in "
    "9.009-13.013 s"
)


@pytest.fixture(scope="module")
def trial_db(tmp_path_factory):
    return ingest_unlabelled([*RR32, *SEQW, RATE], tmp_path_factory.mktemp("h6n"))


def test_e2_one_commands_repeats_are_one_workload_though_only_the_first_laid_out_its_file(trial_db):
    """rr32-rep1..4: one command four times; only rep1 printed 'Laying out IO file (1 file / 256MiB)'. 08 made two
    workloads ('size=256MiB' and 'size=?') and said a 'depth curve' of three runs all at QD 32."""
    with open_db(trial_db) as con:
        runs = fio_runs.runs(con, Selection()).filter(pl.col("path").str.contains("rr32")).sort("path")
        res = fio_views.analyse(con, Selection())
    assert runs["workload"].unique().to_list() == [
        "randread bs=4KiB iodepth=32 numjobs=1 libaio direct=? size=256MiB runtime=?"
    ]
    assert runs["workload_inferred"].to_list()[1] == (
        "size 256MiB from fio's 'Laying out IO file' line of rr32-rep1.txt, job rr32 in the same folder (a later run "
        "finds the file laid out and prints no size)"
    )
    assert (
        "`randread bs=4KiB libaio direct=? size=256MiB runtime=?` read ran on 4 setups (file rr32-rep1.txt (host not "
        "labelled), file rr32-rep2.txt (host not labelled), file rr32-rep3.txt (host not labelled), file rr32-rep4.txt "
        "(host not labelled)), all at one depth: each is shown on its own, never pooled as repeats (label host in the "
        "manifest where they are one machine's)." in res.findings
    )


def test_r1_a_rate_limited_run_is_flagged_and_its_own_workload(trial_db):
    """rate10m-write.json (JSON '"rate" : "10m"'): 10.0 MiB/s, shown unflagged as the disk's bandwidth, and the same
    workload as an uncapped run."""
    with open_db(trial_db) as con:
        runs = fio_runs.runs(con, Selection()).filter(pl.col("path").str.contains("rate10m"))
        res = fio_views.analyse(con, Selection())
        _, cards = disk_card.analyse(con, Selection())
    assert runs["workload"].to_list() == [
        "write bs=1MiB iodepth=1 numjobs=1 libaio direct=1 rate=10m size=128MiB runtime=5s"
    ]
    assert (
        "rate10m-write.json: fio was told to cap it (rate=10m): its rate is that cap, not what the device can do."
        in (res.findings)
    )
    (card,) = [c for c in cards if "rate10m" in c.machine]
    assert card.results[("SEQ1M Q1T1", "write")].flags == (
        "fio was told to cap it (rate=10m): its rate is that cap, not what the device can do",
    )


def test_e4_a_run_that_leaves_its_steady_band_is_flagged_everywhere(trial_db):
    """seqw-60s.json: 2,823 MiB/s in 9-13 s, 6,352 MiB/s at 55-58 s; its 2,962 MiB/s average headed 07 and the card
    unflagged. 08, 10 and 07 now all carry the same verdict."""
    with open_db(trial_db) as con:
        res = fio_views.analyse(con, Selection())
        _, cards = disk_card.analyse(con, Selection())
        best, faster = explore.fastest_unflagged(con, "write", sel=Selection())
        top = explore.flagged_runs(con, "write", sel=Selection()).row(0, named=True)
    assert [f for f in res.findings if "seqw-60s.json (host not labelled): one run" in f][0].endswith(
        f"Flagged run(s) on it: seqw-60s.json ({NOT_STEADY})."
    )
    (card,) = [c for c in cards if "seqw-60s" in c.machine]
    assert card.results[("SEQ1M Q8T1", "write")].flags[-1].endswith(f"seqw-60s.json ({NOT_STEADY})")
    assert (best, faster) == (None, 3)  # every write run here is flagged: 07 names none as the fastest clean one
    assert (top["path"].rsplit("/", 1)[-1], explore.fastest_flags(top)) == ("seqw-60s.json", NOT_STEADY[2:])


def test_f1_f2_unlabelled_files_are_cards_of_their_own_and_no_cell_pools_setups(trial_db, tmp_path):
    """Without host labels the card had drawn one card for five filesystems and a 'SEQ1M Q8T1 write 1,644 MB/s, n=2 (2
    setups pooled)' cell (a 60 s xfs run's 3,106 and a 5 s btrfs run's 182 MB/s). Unlabelled: one card per file.
    Labelled one machine and device: one card per setup (runtime 3 s and 60 s here), never their mean."""
    with open_db(trial_db) as con:
        _, cards = disk_card.analyse(con, Selection())
    assert [(c.machine, c.device, sorted(c.results)) for c in cards] == [
        ("file rate10m-write.json (host not labelled)", "device not labelled", [("SEQ1M Q1T1", "write")]),
        ("file seqw-3s.json (host not labelled)", "device not labelled", [("SEQ1M Q8T1", "write")]),
        ("file seqw-60s.json (host not labelled)", "device not labelled", [("SEQ1M Q8T1", "write")]),
        ("host not labelled", "device not labelled", []),  # the four rr32 runs kept off (direct= unknown)
    ]
    raw = tmp_path / "raw"
    (raw / "xfs").mkdir(parents=True)
    for f in SEQW:
        shutil.copy(f, raw / "xfs" / f.name)
    manifest = "path,study,host,stack,devices\n" + "".join(
        f"xfs/{f.name},h6n,vm,xfs,/dev/loop1 (unknown model)\n" for f in SEQW
    )
    with open_db(ingest_labelled(raw, manifest)) as con:
        _, cards = disk_card.analyse(con, Selection(study="h6n"))
    assert [
        (
            c.device,
            c.results[("SEQ1M Q8T1", "write")].n,
            disk_card.mb_s(c.results[("SEQ1M Q8T1", "write")].bw_bytes_per_s),
        )
        for c in cards
    ] == [
        ("/dev/loop1 (unknown model) | xfs | libaio direct=1 size=512MiB runtime=3s", 1, "2,116"),
        ("/dev/loop1 (unknown model) | xfs | libaio direct=1 size=512MiB runtime=60s", 1, "3,106"),
    ]


def test_d1_a_tmpfs_target_is_ram_not_a_disk(tmp_path):
    """The lab's tmpfs run (notes 'fstype=tmpfs', no sanity line): its card cell showed 1,286 MB/s flagged only for
    its 3 s. The design checks now say RAM wherever the run is shown; the lab flags it before it runs."""
    raw = tmp_path / "raw"
    (raw / "lab").mkdir(parents=True)
    shutil.copy(TRIAL / "tmpfs" / "read-1m-qd8-nj1-12.txt", raw / "lab")
    notes = "kernel=6.18.44-fc-v657; cpu=AMD EPYC x 2; fio_version=3.33; fstype=tmpfs; mount_options=rw,relatime"
    manifest = f'path,study,host,stack,ram_bytes,notes\nlab/read-1m-qd8-nj1-12.txt,lab,vm,tmpfs,25276510208,"{notes}"\n'
    with open_db(ingest_labelled(raw, manifest)) as con:
        res, (card,) = disk_card.analyse(con, Selection(study="lab"))
    # the card had asked for 'device, model, firmware, class' of tmpfs, which has none
    assert [m for m in res.missing if "system table" in m] == [
        "vm, device not labelled | tmpfs: the system table lacks os (the lab records them; for other "
        "logs add host/devices/os/notes columns to the manifest)"
    ]
    r = card.results[("SEQ1M Q8T1", "read")]
    assert (disk_card.mb_s(r.bw_bytes_per_s), r.flags) == (
        "1,286",
        (
            "it ran 3.01 s, under 5 s: too short to measure a sustained rate; its target is RAM, not a disk (stack tmpfs)",
        ),
    )
    assert design.ram_target({"notes": notes}) == "fstype=tmpfs (the lab's notes)"
    assert design.ram_target({"command": "fio --name=x --directory=/dev/shm/fio --rw=read"}) == (
        "directory=/dev/shm/fio (Linux's shared-memory tmpfs)"
    )
    assert design.ram_target({"stack": "ext4", "command": "fio --name=x --directory=/mnt/shm"}) is None
    flags = sanity_flags(
        target_info={"fstype": "tmpfs"}, direct=1, total_bytes=256 * 2**20, ram=0, numjobs=1, shared_file=False
    )
    assert flags == [
        "RAM, not a disk: the target is on tmpfs, whose files live in memory: these figures measure memory, not a device"
    ]


def test_l1_the_lab_warns_before_runs_the_reports_will_all_flag_short(tmp_path):
    """`lab fio --preset standard --repeat auto --runtime 2` made 80 runs, every one then '⚠ short', without a word."""
    standard = build_runs(PRESETS["standard"], target=tmp_path, out=tmp_path, runtime_s=2)
    assert short_runs_note("standard", standard) == (
        "storagelab lab fio: warning: --runtime 2 s is under the 5 s the reports' design checks require: every run of "
        "these 8 tests will be flagged 'short', and the reports compare none of them (--runtime 5 or more measures a "
        "sustained rate)"
    )
    assert short_runs_note("standard", build_runs(PRESETS["standard"], target=tmp_path, out=tmp_path)) is None
    smoke = build_runs(PRESETS["smoke"], target=tmp_path, out=tmp_path)
    assert short_runs_note("smoke", smoke) is None  # a plumbing test, short on purpose


def test_g1_p2_the_ingest_says_what_it_did_with_a_copy_and_a_writeup(tmp_path):
    """G1: eight byte-identical copies with no manifest row were announced 'stored without labels', then not stored
    ('8 identical to another file'). P2: the manifest row of a .md write-up the ingest had just left out said 'no such
    file ... (a typo, or a file that was moved or deleted?)'."""
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    (raw / "h6nb").mkdir(parents=True)
    (raw / "h6nodd").mkdir()
    shutil.copy(VPS, raw / "h6nb" / "vps-fio-libaio-4K.md")
    shutil.copy(RR32[0], raw / "h6nb" / "rr32-rep1.txt")
    shutil.copy(RR32[0], raw / "h6nodd" / "Disk test (final).txt")
    m = raw / "manifest.csv"
    m.write_text("path,study\nh6nb/vps-fio-libaio-4K.md,h6nb\nh6nb/rr32-rep1.txt,h6nb\n", encoding="utf-8")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", manifest_path=m, parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0 and s.duplicates == 1
    assert [w for w in s.warnings if "manifest.csv" in w] == [
        f"{m}:2: h6nb/vps-fio-libaio-4K.md: the file is there but was not stored (left out: the lines above say why; a "
        ".md write-up is read as documentation, rename it to .txt to have its tool output stored)",
        f"{raw / 'h6nodd' / 'Disk test (final).txt'}: no row in {m}; the same bytes as {raw / 'h6nb' / 'rr32-rep1.txt'}: "
        "not stored again (its rows are that file's, with that file's labels)",
    ]


def test_d2_a_runs_own_latency_note_names_its_run_and_the_median_p99_is_said(tmp_path):
    """The card's 'submission holds the I/O's time (... QD 1 x 1 / 80,267 IOPS = 12.5 us per I/O)' was one run of
    ten beside their mean of 23,906 IOPS, and the cell's p99 (the median of the runs' p99s) was unsaid."""
    raw = tmp_path / "raw"
    (raw / "lab").mkdir(parents=True)
    rows = "path,study,label,host,stack,devices\n"
    for n, label in (("", "randread-4k-qd1-nj1"), ("-2", "randread-4k-qd1-nj1 (run 2)")):
        shutil.copy(TRIAL / "ext4-lab" / f"randread-4k-qd1-nj1{n}.txt", raw / "lab")
        rows += f"lab/randread-4k-qd1-nj1{n}.txt,lab,{label},vm,ext4,/dev/loop0 (unknown model)\n"
    with open_db(ingest_labelled(raw, rows)) as con:
        res, (card,) = disk_card.analyse(con, Selection(study="lab"))
    findings = [str(f) for f in res.findings]
    assert findings[0].startswith(
        "**vm, /dev/loop0 (unknown model) | ext4:** 1 of 8 results; the highest is RND4K Q1T1 read at 239 MB/s "
        "(flagged: below); 2 runs per test: the spread shown is run to run. The latency of a result of several runs is the median of its runs' "
        "own figures."
    )
    assert findings[2] == (
        "RND4K Q1T1 read on vm, /dev/loop0 (unknown model) | ext4: randread-4k-qd1-nj1-2.txt, one of its 2 runs: "
        "submission holds the I/O's time (slat mean 6.53 us against clat mean 5.7 us, lat mean 12.2 us; QD 1 x 1 / "
        "80,267 IOPS = 12.5 us per I/O): its latency is lat, whose percentiles fio printed."
    )
    assert "  RND4K Q1T1 read: 239 MB/s, 58,447 IOPS, p99 0.054 ms, n=2, FLAGGED" in disk_card.card_lines([card])
