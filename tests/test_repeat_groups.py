"""Which runs are repeats (``analysis.repeat_groups``), in notebooks 08, 05 and 10, on five real `lab fio
--repeat auto` runs of one test (tests/fixtures/fio/newuser-h6/lab-auto, the h6 trial's; COMMANDS.md): as the lab
labelled them they are five repeats, although the lab's notes differ between them (an empty log dropped on four);
relabelled 'baseline' (runs 1-2) and 'tuned' (runs 3-5), or with different notes, on the same host, stack, layout
and devices they are two configurations, never pooled as repeats (they had been, in 08 and the disk card)."""

from __future__ import annotations

import csv
import io
import shutil

import polars as pl
import pytest
from conftest import FIXTURES

from storagelab.analysis import Selection, disk_card, fio_views, open_db, stacks

SRC = FIXTURES / "fio" / "newuser-h6"
# lab fio --repeat 4, 6 s each (lab-repeat/, COMMANDS.md) and the trial's --repeat auto, 1 s each (lab-auto/)
REPEAT = [f"lab-repeat/randread-4k-qd1-nj1{s}.txt" for s in ("", "-2", "-3", "-4")]
AUTO = [f"lab-auto/read-1m-qd1-nj1{s}.txt" for s in ("", "-2", "-3", "-4", "-5")]
# the lab's own manifest rows of these runs (their manifest.csv), the command left out
NOTES = (
    "kernel=6.18.44-fc-v657; cpu=AMD EPYC x 2; fio_version=3.33; fstype=ext4; mount_options=rw,relatime,discard,"
    "resv_strict,resuid=65534,resgid=65534; /dev/vda: rotational=1 logical_sector_bytes=512 physical_sector_bytes=4096 "
    "transport=None driver=virtio_blk firmware=None device_class=virtual; "
)
SANITY = (
    "sanity: virtual disk (driver virtio_blk (vda)): the host's cache and storage may serve these figures, which "
    "measure the VM's I/O path, not a device (give --device-limit with the real device's figure)"
)
# --repeat auto dropped an empty histogram log on four of its five runs and said so in their notes
AUTO_NOTES = [
    NOTES + (f"empty logs not kept={f[9:].removesuffix('.txt')}_clat_hist.1.log; " if i != 2 else "") + SANITY
    for i, f in enumerate(AUTO)
]
HEAD = ["path", "study", "label", "host", "os", "stack", "vdev_type", "vdev_count", "vdev_width", "devices"]
HEAD += ["ram_bytes", "notes"]
FIXED = ["vm", "Debian GNU/Linux 12 (bookworm) (kernel 6.18.44-fc-v657)", "ext4", "single", "1", "1"]
FIXED += ["/dev/vda (unknown model)", "25276510208"]
SETUP = "vm | ext4 | single 1x1 | /dev/vda (unknown model)"
LAB = [
    "randread-4k-qd1-nj1",
    "randread-4k-qd1-nj1 (run 2)",
    "randread-4k-qd1-nj1 (run 3)",
    "randread-4k-qd1-nj1 (run 4)",
]
GROUPED = (
    "Repeats are runs of one workload with one label once a 'run N' mark is taken out and the same value in every "
    "other column the manifest gives here (host, os, stack, vdev_type, vdev_count, vdev_width, devices, ram_bytes; "
    "not the notes of a label with 'run N' marks, which says its runs are repeats)."
)


def _analyses(tmp_path, files, labels, notes):
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(HEAD)
    for f, label, note in zip(files, labels, notes, strict=True):
        (raw / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SRC / f, raw / f)
        w.writerow([f, "lab", label, *FIXED, note])
    (raw / "manifest.csv").write_text(out.getvalue(), encoding="utf-8")
    db = tmp_path / "lab.duckdb"
    s = ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(db) as con:
        sel = Selection(study="lab")
        f08 = fio_views.analyse(con, sel, steady_rounds=3, knee_gain_pct=20).findings
        f05 = stacks.analyse(con, sel, direction="read", min_elapsed_s=0.5).findings
        card = disk_card.analyse(con, sel)[0].findings
    return [str(f) for f in f08], [str(f) for f in f05], [str(f) for f in card]


@pytest.fixture(scope="module")
def as_the_lab(tmp_path_factory):
    return _analyses(tmp_path_factory.mktemp("lab"), REPEAT, LAB, [NOTES + SANITY] * 4)


@pytest.fixture(scope="module")
def baseline_tuned(tmp_path_factory):
    labels = ["baseline", "baseline (run 2)", "tuned", "tuned (run 2)"]
    return _analyses(tmp_path_factory.mktemp("bt"), REPEAT, labels, [NOTES + SANITY] * 4)


@pytest.fixture(scope="module")
def notes_apart(tmp_path_factory):
    notes = [NOTES + SANITY + ("; after a reboot" if i >= 2 else "") for i in range(4)]
    return _analyses(tmp_path_factory.mktemp("notes"), REPEAT, ["randread-4k"] * 4, notes)


def _line(findings, part):
    found = [f for f in findings if part in f]
    assert len(found) == 1, "\n".join(findings)
    return found[0]


def test_runs_as_the_lab_labelled_them_are_repeats_in_08_05_and_the_card(as_the_lab):
    """Four runs of `lab fio --repeat 4` (labels 'randread-4k-qd1-nj1 (run N)', one host, stack and device): 41.6,
    39.3, 33.4, 33.1 MiB/s (63,929 / 60,368 / 51,316 / 50,818 I/Os x 4 KiB over 6.001-6.004 s), mean 36.8."""
    f08, f05, card = as_the_lab
    assert _line(f08, " read at QD 1 x 1: ").endswith(
        f"read at QD 1 x 1: 4 runs of {SETUP}: mean 36.8 MiB/s (38.6 MB/s), range 33.1 MiB/s (34.7 MB/s) to 41.6 "
        "MiB/s (43.6 MB/s); 95 % confidence interval of the mean ±18.5 %, prediction interval for one more run ±41.3 % "
        "(t distribution, 3 degree(s) of freedom). Their spread is 11.6 % (sample sd / mean), above the 5 % tolerance "
        "of the lab's repeat-until-settled: not settled, so their mean is uncertain."
    )
    assert GROUPED in f08 and GROUPED in f05
    assert _line(f05, "repeated runs").startswith("randread-4k-qd1-nj1: 4 repeated runs, mean 36.8 MiB/s (38.6 MB/s)")
    assert "4 runs per test: the spread shown is run to run." in card[0]
    assert not any("pooled as one result" in f for f in card)


def test_labelled_runs_of_two_configurations_on_one_host_are_never_repeats(baseline_tuned):
    """The same four runs labelled baseline (41.6, 39.3) and tuned (33.4, 33.1): 08 had pooled them as '4 runs of
    vm | ext4 | single 1x1' (host | stack | layout | devices, without the label); now two setups, Welch's t test."""
    f08, f05, card = baseline_tuned
    assert _line(f08, " read at QD 1 x 1: ").endswith(
        f"read at QD 1 x 1: {SETUP} (baseline) (2 run(s), mean 40.5 MiB/s (42.4 MB/s)) is 21.7 % faster than {SETUP} "
        "(tuned) (2 run(s), mean 33.2 MiB/s (34.8 MB/s)): not distinguishable from run-to-run noise (Welch's t test on "
        "the repeats of both sides; p = 0.0954, 95 % interval of the difference ±40.6 %)."
    )
    # the depth curve's one depth holds both: said, since its mean is then not a mean of repeats
    # the lab's sanity flags of the curve's runs follow its sentence (h6n E1: 08 carries them as 10 does)
    assert (
        _line(f08, "nothing varies the depth")
        .split(" The lab flagged its runs: ")[0]
        .endswith(
            "nothing varies the depth. One depth pools runs that are not repeats of one another (2 groups: labels, files "
            "or manifest columns apart; compared at that depth below), so its mean mixes them."
        )
    )
    assert _line(f05, "baseline: 2 repeated").startswith("baseline: 2 repeated runs, mean 40.5 MiB/s (42.4 MB/s)")
    assert _line(f05, "tuned: 2 repeated").startswith("tuned: 2 repeated runs, mean 33.2 MiB/s (34.8 MB/s)")
    # the card keeps them apart as 08 does: a card per setup, each with its own two repeats (it had pooled all four
    # as one result, 38.6 MB/s, and said its spread mixed the setups), never a mean of baseline and tuned
    assert [c.split(":**")[0] for c in card if c.startswith("**")] == [
        "**vm, /dev/vda (unknown model) | ext4 | baseline",
        "**vm, /dev/vda (unknown model) | ext4 | tuned",
    ]
    assert (
        "the highest is RND4K Q1T1 read at 42.4 MB/s (flagged: below); 2 runs per test: the spread shown is run to run."
        in card[0]
    )
    assert (
        "the highest is RND4K Q1T1 read at 34.8 MB/s (flagged: below); 2 runs per test: the spread shown is run to run."
        in card[1]
    )
    assert not [c for c in card if "pooled" in c]


def test_one_label_with_different_notes_is_two_setups(notes_apart):
    """One label without a 'run N' mark on all four, 'after a reboot' added to the notes of runs 3 and 4: two setups
    in 08 (curves and comparison) and 05, named by the notes entry that differs. (With 'run N' marks the label says
    they are repeats and free-text notes do not part them: test_analysis_flags' 'bitmap none, run 1/2'.)"""
    f08, f05, card = notes_apart
    after, before = f"{SETUP} (notes 'after a reboot')", f"{SETUP} (notes without 'after a reboot')"
    assert _line(f08, " read at QD 1 x 1: ").endswith(
        f"read at QD 1 x 1: {before} (2 run(s), mean 40.5 MiB/s (42.4 MB/s)) is 21.7 % faster than {after} (2 run(s), "
        "mean 33.2 MiB/s (34.8 MB/s)): not distinguishable from run-to-run noise (Welch's t test on the repeats of "
        "both sides; p = 0.0954, 95 % interval of the difference ±40.6 %)."
    )
    assert (
        _line(f08, f"read on {after}: ")
        .split(" The lab flagged its runs: ")[0]
        .endswith(
            "2 runs, all with 1 I/Os in flight: 8,508 IOPS (mean of 2 runs, 8,464-8,551); nothing varies the depth."
        )
    )
    assert _line(f05, "(notes 'after a reboot'): 2 repeated").startswith(
        "randread-4k (notes 'after a reboot'): 2 repeated runs, mean 33.2 MiB/s (34.8 MB/s)"
    )
    assert [c.split(":**")[0] for c in card if c.startswith("**")] == [
        "**vm, /dev/vda (unknown model) | ext4 | randread-4k (notes 'after a reboot')",
        "**vm, /dev/vda (unknown model) | ext4 | randread-4k (notes without 'after a reboot')",
    ]
    assert (
        "Repeats are runs of one workload with one label once a 'run N' mark is taken out and the same value in every "
        "other column the manifest gives here (host, os, stack, vdev_type, vdev_count, vdev_width, devices, "
        "ram_bytes, notes; the lab's notes on one run alone, its sanity flags and dropped logs, aside)." in f05
    )


def test_the_labs_notes_on_one_run_alone_do_not_part_repeats(tmp_path):
    """--repeat auto dropped an empty histogram log on four of five runs and wrote so in their notes ('empty logs
    not kept=...'): they stay five repeats in 05 (1257, 1670, 1481, 992, 707 MiB/s, mean 1221.5) and the card."""
    labels = ["read-1m-qd1-nj1", *(f"read-1m-qd1-nj1 (run {i})" for i in range(2, 6))]
    f08, f05, card = _analyses(tmp_path, AUTO, labels, AUTO_NOTES)
    assert _line(f05, "repeated runs").startswith("read-1m-qd1-nj1: 5 repeated runs, mean 1221.5 MiB/s (1280.8 MB/s)")
    assert GROUPED in f05
    assert "5 runs per test: the spread shown is run to run." in card[0]


def test_bonnie_runs_of_one_label_in_two_folders_are_named_by_their_folders():
    """09's names (bonnie_rates.run_names) had taken the base name of a shared label's files: two 'bonnie.txt' of
    one label in two folders were both 'x (bonnie.txt)'; now as much of the path as tells them apart."""
    from storagelab.analysis import bonnie_rates

    tab = pl.DataFrame(
        {
            "file_id": [1, 2, 3],
            "run_index": [0, 0, 0],
            "path": ["/d/tank_a/bonnie.txt", "/d/tank_b/bonnie.txt", "/d/solo.txt"],
            "label": ["x", "x", None],
        }
    )
    assert bonnie_rates.run_names(tab)["run"].to_list() == [
        "x (tank_a/bonnie.txt)",
        "x (tank_b/bonnie.txt)",
        "/d/solo.txt",
    ]


def test_the_card_says_which_spreads_are_run_to_run(tmp_path):
    """F17: a card with one result of one setup run five times (SEQ1M Q1T1 read, the lab's labels) and one pooling
    two setups (RND4K Q1T1 read, baseline and tuned) says the spread is run to run for the first only."""
    labels = ["baseline", "baseline (run 2)", "tuned", "tuned (run 2)"]
    labels += ["read-1m-qd1-nj1", *(f"read-1m-qd1-nj1 (run {i})" for i in range(2, 6))]
    _, _, card = _analyses(tmp_path, REPEAT + AUTO, labels, [NOTES + SANITY] * 4 + AUTO_NOTES)
    # two cards since the h6n trial (runtime 1 s and 6 s are two setups: ``disk_card.variant_of``), and the 6 s one
    # a card per label (baseline and tuned are not repeats): every spread shown is run to run (F17's card had pooled
    # baseline and tuned and said its spread was not)
    heads = [c for c in card if c.startswith("**")]
    assert [c.split(":**")[0] for c in heads] == [
        "**vm, /dev/vda (unknown model) | ext4 | libaio direct=1 size=32MiB runtime=1s",
        "**vm, /dev/vda (unknown model) | ext4 | libaio direct=1 size=32MiB runtime=6s | baseline",
        "**vm, /dev/vda (unknown model) | ext4 | libaio direct=1 size=32MiB runtime=6s | tuned",
    ]
    assert "; 5 runs per test: the spread shown is run to run." in heads[0]
    assert all("; 2 runs per test: the spread shown is run to run." in c for c in heads[1:])
    assert not [c for c in card if "pooled" in c]
