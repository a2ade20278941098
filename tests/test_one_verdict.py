"""One set of runs, one verdict, in every report: notebooks 05 (stacks), 08 (fio) and 10 (disk card) leave out the
same runs for the same reasons (``run_verdicts``, the one rule), and wherever two of them report the same
configuration they count the same runs and give the same mean. The s34 trial (/work/h7-trial-findings.md T1, T3)
had found one set of runs with two means and two run counts in two reports, and a 60 s run that falls to 82 MiB/s
mid-run shown in 05 unmarked.

Data: the trial's whole fio data set as the trial labelled it (tests/fixtures/fio/newuser-h7 and trial-h7, laid out
as /tmp/h7ds/a/ was, its manifest rows below verbatim, the lab's ten --repeat auto runs in study 'lab'), the seeds'
database (every study), and the h6 trial's logs (tests/fixtures/fio/newuser-h6) labelled here in a way of our own,
read with parameters other than the notebooks' defaults."""

from __future__ import annotations

import csv
import io
import shutil

import polars as pl
import pytest
from conftest import FIXTURES, ingest_labelled

from storagelab.analysis import Selection, disk_card, fio_views, open_db, stacks
from storagelab.analysis import prose as P

SEVEN, TRIAL, H6 = (FIXTURES / "fio" / d for d in ("newuser-h7", "trial-h7", "newuser-h6"))
NOT_LOGS = shutil.ignore_patterns("*.expected.jsonl", "*.md")
SETUP = "h7lab,Debian 12,ext4,single,1,1,loop0 (/dev/shm file),25276510208"
XFS = "h7lab,Debian 12,xfs,single,1,1,loop1 (/dev/shm file),25276510208"
MFS = "h7lab,Debian 12,mergerfs+ext4+xfs,,,,loop0+loop1,25276510208"
R10 = ",,btrfs-raid10,raid10,1,4,4x loop (/dev/shm files),25276510208"
R5 = ",,btrfs-raid5,raid5,1,3,3x loop (/dev/shm files),25276510208"
LONG = [f"long/{f},h7 homelab,ext4 60 s «long»,{SETUP},," for f in (
    "randwrite-60s.json", *(f"long60_{k}.1.log" for k in ("bw", "iops", "lat", "clat", "slat")))]  # fmt: skip
# the trial's manifest rows for its fio runs (/tmp/h7ds/a/manifest.csv, verbatim; its bonnie++ rows left out)
TRIAL_MANIFEST = "\n".join(
    [
        "path,study,label,host,os,stack,vdev_type,vdev_count,vdev_width,devices,ram_bytes,phase,notes",
        *(f"ext4/rr4k-qd16-run{k}.json,h7 homelab,ext4 rr4k run {k},{SETUP},," for k in (1, 2, 3)),
        f"ext4/randwrite-1s.txt,h7 homelab,ext4 écriture 1 s,{SETUP},,",
        f"ext4/seqwrite-buffered-256M.txt,h7 homelab,ext4 buffered 256M,{SETUP},,",
        f"ext4/randread-1200M-direct.json,h7 homelab,ext4 big ENOSPC,{SETUP},,fio failed: ENOSPC",
        f"ext4/randread-900M-direct.json,h7 homelab,ext4 900M 64k,{SETUP},,",
        *LONG,
        f"phase/ext4-fdatasync-before.txt,h7 homelab,ext4 fdatasync,{SETUP},before,barrier=1 commit=5",
        f"phase/ext4-fdatasync-after.txt,h7 homelab,ext4 fdatasync,{SETUP},after,nobarrier commit=30",
        f"xfs/fsync-4k.txt,h7 homelab,xfs fsync 4k,{XFS},,",
        f"xfs/fdatasync-4k.json,h7 homelab,xfs fdatasync 4k,{XFS},,",
        f"xfs/fdatasync-4k-normal.txt,h7 homelab,xfs fdatasync 8k ✓,{XFS},,",
        f"xfs/randrw70.json,h7 homelab,xfs mix 70/30,{XFS},,",
        f"mfs/seqread-1M.txt,h7 homelab,mergerfs ext4+xfs,{MFS},,",
        f"mfs/randread-4k-direct.json,h7 homelab,mergerfs ext4+xfs,{MFS},,",
        *(f"b10/grid-nj{nj}-qd{qd}.txt,h7 raid Ω,btrfs raid10 4 Ω,{R10},," for nj in (1, 4) for qd in (1, 8, 32)),
        f"b5/seqw1M.txt,h7 raid Ω,btrfs raid5 seq,{R5},,",
        *(f"b5/r5seq_{k}.1.log,h7 raid Ω,btrfs raid5 seq,{R5},," for k in ("bw", "lat", "clat", "slat")),
        f"b5/randwrite4k.json,h7 raid Ω,btrfs raid5 rw4k,{R5},,",
    ]
)


def _lab_rows() -> str:
    """The lab's manifest rows of its ten --repeat auto runs (as tests/test_newuser_h7.py rebuilds them), in study
    'lab' of the same database, paths under lab/."""
    from test_newuser_h7 import LAB_NOTES, LAB_RUNS

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    fixed = ["vm", "Debian GNU/Linux 12 (bookworm) (kernel 6.18.44-fc-v657)", "ext4", "single", "1", "1"]
    for s in LAB_RUNS:
        label = "randread-4k-qd1-nj1" + (f" (run {s[1:]})" if s else "")
        for f in (f"randread-4k-qd1-nj1{s}.txt", f"randread-4k-qd1-nj1{s}_bw.1.log"):
            w.writerow([f"lab/{f}", "lab", label, *fixed, "/dev/loop0 (unknown model)", "25276510208", "", LAB_NOTES])
    return out.getvalue()


@pytest.fixture(scope="module")
def trial_db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("h7a") / "raw"
    shutil.copytree(SEVEN, raw, ignore=NOT_LOGS)
    for f in TRIAL.iterdir():
        if f.suffix == ".json":
            shutil.copyfile(f, raw / "ext4" / f.name)
    return ingest_labelled(raw, TRIAL_MANIFEST + "\n" + _lab_rows())


# the h6 trial's logs labelled our own way: two studies, hosts and devices named here, a device limit on the VM's
# disk (virtio, labelled 400 MB/s here: an assumption, so that the plausibility flags are at work), 'run N' marks;
# vda-buffered-read.txt, vda-fsync1.txt and b/ (published pools) left without a row: study '(unlabelled)'
H6_MANIFEST = "\n".join(
    [
        "path,study,label,host,stack,devices,device_limit_bytes_per_s,notes",
        *(
            f"a/grid/grid-qd{qd}-nj{nj}.json,h6 own,grid on vda,vm6,ext4,vda (virtio),400000000,"
            for qd in (1, 16)
            for nj in (1, 4)
        ),  # fmt: skip
        "a/shm/shm-randrw70-nj2.json,h6 own,tmpfs mix,vm6,tmpfs,RAM,,",
        "a/shm/shm-seqwrite-jsonplus.json,h6 own,tmpfs seq,vm6,tmpfs,RAM,,",
        "a/vda/vda-fdatasync1.json,h6 own,vda fdatasync,vm6,ext4,vda (virtio),400000000,",
        "a/vda/vda-randread-repeats.txt,h6 own,vda rr4k x3,vm6,ext4,vda (virtio),400000000,three runs appended",
        *(
            f"a/vda/{f},h6 own,vda long write,vm6,ext4,vda (virtio),400000000,"
            for f in ("vda-long-randwrite.txt", "longw_clat.1.log", "longw_iops.1.log", "longw_lat.1.log")
        ),  # fmt: skip
        *(
            f"lab-auto/read-1m-qd1-nj1{s}.txt,h6 own,vda seq read 1M run {k},vm6,ext4,vda (virtio),400000000,lab auto"
            for k, s in enumerate(("", "-2", "-3", "-4", "-5"), 1)
        ),  # fmt: skip
        *(
            f"lab-repeat/randread-4k-qd1-nj1{s}.txt,h6 own,vda rr4k qd1 run {k},vm6,ext4,vda (virtio),400000000,lab"
            for k, s in enumerate(("", "-2", "-3", "-4"), 1)
        ),  # fmt: skip
    ]
)
H6_05 = {"inflation_margin": 1.3, "min_elapsed_s": 1.0}  # 05's parameters, not its defaults (1.1, 5 s)
H6_08 = {"steady_rounds": 4, "excursion_pct": 15.0, "slope_pct": 5.0, "knee_gain_pct": 20.0}  # 08's, not its defaults


@pytest.fixture(scope="module")
def h6_db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("h6own") / "raw"
    shutil.copytree(H6, raw, ignore=NOT_LOGS)  # b/ (published pools, unlabelled) is read too: study '(unlabelled)'
    return ingest_labelled(raw, H6_MANIFEST + "\n")


STRIPE = FIXTURES / "fio" / "stripe-h5"
# btrfs raid0 over one and over two loop devices (tests/fixtures/fio/stripe-h5/COMMANDS.md), three runs each
STRIPE_MANIFEST = "\n".join(
    [
        "path,study,label,host,stack,vdev_type,vdev_count,vdev_width,devices,ram_bytes",
        *(
            f"{fs}-rr8-run{k}{ext},stripe,btrfs raid0 x{n} run {k},vm5,btrfs-raid0,single,{n},1,{dev},25276510208"
            for fs, n, dev in (("one", 1, "loop0 (/dev/shm file)"), ("two", 2, "loop1+loop2 (/dev/shm files)"))
            for k in (1, 2, 3)
            for ext in (".txt", "_bw.1.log")
        ),
    ]
)


@pytest.fixture(scope="module")
def stripe_db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("stripe") / "raw"
    shutil.copytree(STRIPE, raw, ignore=NOT_LOGS)
    return ingest_labelled(raw, STRIPE_MANIFEST + "\n")


# ----------------------------------------------------------------------------- the one rule, from each report's numbers


def _reports(db, study: str, params05: dict | None = None, params08: dict | None = None):
    """Notebooks 05 (read and write), 08 and 10 on one study, from their analysis functions."""
    with open_db(db) as con:
        sel = Selection(study=study)
        r05 = {d: stacks.analyse(con, sel, direction=d, **(params05 or {})) for d in ("read", "write")}
        r08 = fio_views.analyse(con, sel, **(params08 or {}))
        _, cards = disk_card.analyse(con, sel)
    return r05, r08, cards


def _name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def disagreements(r05: dict, r08, cards) -> tuple[list[str], list[str]]:
    """Where 05, 08 and 10 judge one run, or count one configuration's runs, differently: each run's verdict (left
    out or not, and why) in 05 and 08 (10 takes ``run_verdicts.left_out``, the same rule); each configuration both
    report (the same runs counted): the runs counted, how many, the runs left out and the mean to the printed digit
    (05 and 08 in MiB/s (MB/s): ``prose.rate``; 05 and 10 in MB/s: ``disk_card.mb_s``). 05's runs judged otherwise by
    its own parameters (``verdict_diffs``) are said by 05 and skipped. Also: what was compared ('05~08 name')."""
    out: list[str] = []
    compared: list[str] = []
    depth = r08["depth"] if r08.has("depth") else pl.DataFrame()
    v08 = {}
    if depth.height:
        for r in depth.unique(["file_id", "doc_index", "direction"], keep="first").iter_rows(named=True):
            v08[(r["file_id"], r["doc_index"], r["direction"])] = (r["suspect"], r["flag"] if r["suspect"] else None)
    said = {v.label for res in r05.values() if res.numbers for v in res.numbers.verdict_diffs}
    configs = []
    for d, res in r05.items():
        if not res.has("runs"):
            continue
        for r in res["runs"].iter_rows(named=True):
            mine = (r["suspect"], r["why"] if r["suspect"] else None)
            theirs = v08.get((r["file_id"], r["doc_index"], d))
            compared += [f"run {d}"] if theirs is not None else []
            if theirs is not None and theirs != mine and r["label"] not in said:
                out.append(f"{r['label']} {d}: 05 {mine}, 08 {theirs}")
        for c in res["configs"].iter_rows(named=True):
            left = {_name(x["path"]) for x in c["left_out"]}
            if not set(c["labels"]) & said:
                configs.append((d, c["workload"], {x["path"] for x in c["runs"]}, c["n"], c["mean"], left, c["config"]))
    for p in r08.numbers.comparisons if r08.numbers else []:
        sides = [(p.a_lines, p.repeats)] if p.repeats else []
        if p.comparison:
            sides = [(p.a_lines, p.comparison.a), (p.b_lines, p.comparison.b)]
        for lines, rep in sides:
            paths = {x["path"] for x in lines}
            for d, _, p05, n05, m05, _, name in configs:
                if d == p.direction and p05 & paths:
                    compared.append(f"05~08 {name} {d}")
                    if (p05, n05, P.rate(m05)) != (paths, rep.n, P.rate(rep.mean)):
                        out.append(f"{name} {d}: 05 {n05} runs {P.rate(m05)}, 08 {rep.n} runs {P.rate(rep.mean)}")
    for card in cards:
        for r in card.results.values():
            if len(r.setups) > 1 or r.left_setups:
                continue  # the card pools several setups in one cell (it says so): no configuration of 05's
            paths = {x[0] for x in r.lines}
            for d, _, p05, n05, m05, left, name in configs:
                if d == r.direction and p05 & paths:
                    compared.append(f"05~10 {name} {d}")
                    of05 = (p05, n05, disk_card.mb_s(m05), left)
                    of10 = (paths, r.n, disk_card.mb_s(r.bw_bytes_per_s), {run for run, _ in r.left_out})
                    if of05 != of10:
                        out.append(f"{name} {d}: 05 {of05[1:]}, 10 {of10[1:]}")
    return out, compared


SEED_STUDIES = ("freebsd-bonnie-dedup", "homelab-mergerfs", "thumper-x4500")


def test_05_08_and_10_agree_on_every_study_of_the_seeds(seed_db):
    compared = []
    for study in SEED_STUDIES:
        problems, seen = disagreements(*_reports(seed_db, study))
        assert problems == [], study
        compared += seen
    # the homelab's write runs both 05 and 08 list, judged alike, and the two configurations 08 compares by mean
    assert sorted({c for c in compared if not c.startswith("run ")}) == [
        "05~08 btrfs (single NVMe) write",
        "05~08 mergerfs over btrfs (single NVMe) write",
    ]
    assert compared.count("run write") == 9


def test_05_08_and_10_agree_on_the_trials_data(trial_db):
    compared = []
    for study in ("h7 homelab", "h7 raid Ω", "lab"):
        problems, seen = disagreements(*_reports(trial_db, study))
        assert problems == [], study
        compared += seen
    assert sorted({c for c in compared if not c.startswith("run ")}) == [
        "05~08 randread-4k-qd1-nj1 read",
        "05~10 btrfs raid5 seq write",
        "05~10 randread-4k-qd1-nj1 read",
    ]
    assert len(compared) == 37  # and 34 runs' verdicts, 05 against 08


def test_05_08_and_10_agree_on_our_own_labels_with_other_parameters(h6_db):
    """05 with inflation_margin 1.3 and min_elapsed_s 1 s judges some runs otherwise than 08 and 10 (their
    defaults): 05 names each one, and they are the only disagreements; with 05's defaults there are none."""
    problems, seen = disagreements(*_reports(h6_db, "h6 own", H6_05, H6_08))
    assert problems == []
    # the card's RND4K Q1T1 read cell holds a flagged grid run besides them (another setup, said): not compared
    assert sorted(set(seen)) == ["05~08 vda rr4k qd1 read", "run read", "run write"] and len(seen) == 22
    problems, _ = disagreements(*_reports(h6_db, "h6 own"))
    assert problems == []
    # b/, the published ZFS pools' runs, unlabelled: six configurations of one run each (same-named files in three
    # pools' folders, each its own), judged and counted alike; large_read's two regimes leave it out in both
    problems, seen = disagreements(*_reports(h6_db, "(unlabelled)"))
    assert problems == [] and len(seen) == 16
    assert sum(c.startswith("05~08 ") for c in seen) == 6
    with open_db(h6_db) as con:
        res = stacks.analyse(con, Selection(study="h6 own"), direction="write", **H6_05)
        card, _ = disk_card.analyse(con, Selection(study="h6 own"))
    # the card's RND4K Q1T1 read cell: the four 'vda rr4k qd1' runs counted (05's and 08's configuration, 38.6
    # MB/s), and a short run of another setup left out: said, since 05 and 08 count it apart
    assert (
        "RND4K Q1T1 read on vm6, vda (virtio) | ext4: 1 of its 5 runs left out of its mean, as notebooks 05 and 08 "
        "leave them out of their repeats: grid-qd1-nj1.json (⚠ short). The runs left out include another setup than "
        "the runs counted ('grid on vda'): notebooks 05 and 08 count them apart."
    ) in [str(f) for f in card.findings]
    # a configuration every run of which is flagged: 05 and 10 count them all and show the mean flagged, 08 compares
    # none; each says so (the five 1-s 'vda seq read 1M' runs, short and above the 400 MB/s labelled)
    with open_db(h6_db) as con:
        r08 = fio_views.analyse(con, Selection(study="h6 own"))
        r05 = stacks.analyse(con, Selection(study="h6 own"), direction="read")
        _, (c,) = disk_card.analyse(con, Selection(study="h6 own"))
    assert (
        "`read bs=1MiB libaio direct=1 size=32MiB runtime=1s` read at QD 1 x 1: every run is flagged, so none is "
        "compared (notebooks 05 and 10 show the mean of a configuration whose runs are all flagged, marked flagged). 5 "
        "flagged run(s) left out (vda seq read 1M run 1, vda seq read 1M run 2, vda seq read 1M run 3, vda seq read 1M "
        "run 4, vda seq read 1M run 5)."
    ) in [str(f) for f in r08.findings]
    flags = c.results[("SEQ1M Q1T1", "read")].flags
    assert flags[-1].startswith(
        "5 of 5 runs flagged as notebooks 05 and 08 flag them (08 compares none of them): read-1m-qd1-nj1-2.txt (⚠ "
        "short; above the device's limit);"
    )
    (said,) = [str(f) for f in r05.findings if str(f).startswith("vda seq read 1M (")]
    assert said.startswith(
        "vda seq read 1M (`read bs=1MiB iodepth=1 numjobs=1 libaio direct=1 size=32MiB runtime=1s`): all 5 of its "
        "runs are flagged as in notebooks 08 and 10 (vda seq read 1M run 2 at 1670.3 MiB/s (1751.5 MB/s) (⚠ short; "
        "above the device's limit);"
    )
    assert said.endswith(
        "so all count in its mean, 1221.5 MiB/s (1280.8 MB/s), shown flagged: it heads no ranking and no headline; "
        "notebook 08 compares none of them, the disk card (10) shows their mean flagged."
    )
    assert disk_card.mb_s(c.results[("SEQ1M Q1T1", "read")].bw_bytes_per_s) == "1,281"  # 1280.8 MB/s, the same 5
    assert (
        "With inflation_margin 1.3 and min_elapsed_s 1 s, 3 run(s) are judged here otherwise than in notebooks 08 and "
        "10 (which judge with 1.1 and 5 s): tmpfs mix: counted here; left out there (⚠ short); tmpfs seq: counted "
        "here; left out there (⚠ short); vda fdatasync: counted here; left out there (⚠ short)."
    ) in [str(f) for f in res.findings]


def test_05_marks_the_60_s_run_that_dips_as_08_does(trial_db):
    """T1 in 05: long60 (randwrite-60s.json with its 1-s logs) falls to 82.8 MiB/s at 24-25 s; 05 read no logs and
    showed it at 335.3 MiB/s unmarked. It is now marked as 08 marks it and heads nothing."""
    with open_db(trial_db) as con:
        r05 = stacks.analyse(con, Selection(study="h7 homelab"), direction="write")
        r08 = fio_views.analyse(con, Selection(study="h7 homelab"))
    why = "⚠ dips: 82.8 MiB/s (86.8 MB/s) at 24-25 s (median 364.2 MiB/s (381.9 MB/s))"
    run = r05["runs"].filter(pl.col("label") == "ext4 60 s «long»").row(0, named=True)
    assert (run["suspect"], run["why"], run["mark"], round(run["bw_bytes_per_s"] / 2**20, 1)) == (
        True, why, "⚠ dips", 335.3,
    )  # fmt: skip
    assert r08["depth"].filter(pl.col("label") == "ext4 60 s «long»")["flag"].to_list() == [why]
    assert (
        "  1. ext4 60 s «long»                              335.3 MiB/s =    351.5 MB/s  1 run  no device limit "
        "labelled  ⚠ dips"
    ) in stacks.table_lines(r05["configs"])
    assert (
        "ext4 60 s «long» (`randwrite bs=4KiB iodepth=4 numjobs=1 libaio direct=1 size=64MiB runtime=60s`): its one "
        f"run, at 335.3 MiB/s (351.5 MB/s), is flagged as in notebooks 08 and 10 ({why}): it heads no ranking and no "
        "headline."
    ) in [str(f) for f in r05.findings]
    assert r05.verdict == (
        "Every write run is flagged (cache, rounding, ZFS ignoring direct=1, test design or their logs): none is "
        "ranked."
    )


def test_05_counts_the_lab_repeats_as_08_and_10_do(trial_db):
    """T3 in 05: the lab's ten randread-4k-qd1-nj1 runs; 08 and 10 count five (run 4's two regimes, four runs' dips
    left out) at 106.3 MiB/s (111.5 MB/s); 05 now counts the same five, gives the same mean and says why."""
    with open_db(trial_db) as con:
        res = stacks.analyse(con, Selection(study="lab"), direction="read")
        _, (card,) = disk_card.analyse(con, Selection(study="lab"))
    (c,) = res["configs"].iter_rows(named=True)
    cell = card.results[("RND4K Q1T1", "read")]
    assert (c["n"], P.rate(c["mean"]), len(c["left_out"])) == (5, "106.3 MiB/s (111.5 MB/s)", 5)
    assert (cell.n, disk_card.mb_s(cell.bw_bytes_per_s)) == (5, disk_card.mb_s(c["mean"]))
    text = [str(f) for f in res.findings]
    (said,) = [t for t in text if "5 of its 10 runs left out" in t]
    assert said.startswith(
        "randread-4k-qd1-nj1 (`randread bs=4KiB iodepth=1 numjobs=1 libaio direct=1 size=1GiB runtime=5s`): 5 of its "
        "10 runs left out of its mean, the ranking and the headline, as notebooks 08 and 10 leave them out: "
        "randread-4k-qd1-nj1 (run 2) at 224.6 MiB/s (235.5 MB/s) (⚠ dips: 70.3 MiB/s (73.8 MB/s) at 3.5 s (median "
        "274.2 MiB/s (287.5 MB/s)));"
    )
    assert (
        "randread-4k-qd1-nj1 (run 4) at 59.4 MiB/s (62.3 MB/s) (⚠ two regimes: 155.8 MiB/s (163.3 MB/s) for 3 " in said
    )
    assert said.endswith("Its mean, 106.3 MiB/s (111.5 MB/s), is of the other 5.")
    assert not any("against it" in t for t in text)  # a run left out is not tested against its own repeats
    assert res.verdict == "Fastest read run with no flag: randread-4k-qd1-nj1 at 106 MiB/s (mean of 5 runs)."


def test_01s_baseline_counts_the_runs_08_counts(stripe_db):
    """01's fio baseline (the mean of the 1-vdev runs) had been the mean of all three btrfs raid0 x1 runs, 133.0
    MiB/s, while 08 leaves run 3 out (its bandwidth log dips to 26.2 MiB/s at 2.5 s) and gives the other two's
    139.6 MiB/s: two means for one set of runs. 01 now counts the runs 08 counts, flags run 3 and says why."""
    from storagelab.analysis import scaling

    with open_db(stripe_db) as con:
        r01 = scaling.analyse(con, Selection(study="stripe"))
        r08 = fio_views.analyse(con, Selection(study="stripe"))
    # 2.505 s: the window end at this run's own log gap (501 ms), not the other runs' (h6n K1)
    why = "⚠ dips: 26.2 MiB/s (27.5 MB/s) at 2.505 s (median 142.9 MiB/s (149.8 MB/s))"
    base = r01["fio"].filter(pl.col("vdev_count") == 1)
    assert base.select("label", "counted", "why").rows() == [
        ("btrfs raid0 x1 run 1", True, None),
        ("btrfs raid0 x1 run 2", True, None),
        ("btrfs raid0 x1 run 3", False, why),
    ]
    assert (base["baseline_runs"][0], base["baseline_left"][0], P.rate(base["baseline"][0])) == (
        2, 1, "139.6 MiB/s (146.4 MB/s)",
    )  # fmt: skip
    (point,) = [p for p in r08.numbers.comparisons if p.a and "x1" in p.a or p.b and "x1" in p.b]
    one = point.comparison.b if "x1" in (point.b or "") else point.comparison.a
    assert (one.n, P.rate(one.mean)) == (2, "139.6 MiB/s (146.4 MB/s)")  # 08's mean of the same two runs
    text = [str(f) for f in r01.findings]
    # the runs of one vdev count are one configuration (h6 trial S4): its mean is over the runs that count
    assert (
        "fio `randread bs=4KiB iodepth=8 numjobs=1 libaio direct=1 size=128MiB runtime=6s` on single vdevs, the "
        "baseline, 1 vdev: mean of 2 runs (btrfs raid0 x1 run 1, btrfs raid0 x1 run 2) 139.6 MiB/s (146.4 MB/s); runs "
        "124.8-154.4 MiB/s, 95 % CI of the mean ±188.3 MiB/s (Student's t, 1 degree(s) of freedom): the runs of one "
        "vdev count are repeats of the baseline, not points of the scaling." in text
    )
    assert (
        "`randread bs=4KiB iodepth=8 numjobs=1 libaio direct=1 size=128MiB runtime=6s`: the 1-vdev baseline is the "
        "mean of its 2 run(s) that count, 139.6 MiB/s (146.4 MB/s); 1 left out as notebooks 05, 08 and 10 leave them "
        f"out: btrfs raid0 x1 run 3 at 119.9 MiB/s (125.7 MB/s) ({why})." in text
    )
    problems, seen = disagreements(*_reports(stripe_db, "stripe"))
    assert problems == [] and sorted(set(seen) - {"run read"}) == [
        "05~08 btrfs raid0 x1 read",
        "05~08 btrfs raid0 x2 read",
    ]
