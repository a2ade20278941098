"""The ARC hit ratio of a fio run (analysis/arc.py) and its design flag, on real outputs only: the lab's fio 3.33
randread runs (tests/fixtures/fio/3.33/lab-psync, lab-repeats) and the published ARC statistics of
tests/fixtures/arcstats (each with its source in that folder's COMMANDS.md).

The pairing is this test's construction: the fio runs were made on this machine's local disk, and the ARC outputs
come from other machines (ZoL 0.6.5, Solaris 2007, FreeBSD 14, OpenZFS 2.2 ...). A temporary study's manifest gives
them one label (and calls the runs ZFS, so that the missing line is due), which is how a user ties an ARC log to a
run. No published before/after pair of one machine is among the fixtures: the FreeBSD 14 and Linux 2.2 dumps (both
2.2+ releases, with ``iohits``) stand in as before and after, so the arithmetic is what is tested, not a real run's
cache. Every expected figure is worked out by hand from the counters in the fixture files."""

import shutil

import polars as pl
import pytest
from conftest import FIXTURES, analyse_study

from storagelab.analysis import arc, design, fio_runs, open_db
from storagelab.analysis.db import frame

ARC = FIXTURES / "arcstats"
PSYNC = FIXTURES / "fio" / "3.33" / "lab-psync"
REPEATS = FIXTURES / "fio" / "3.33" / "lab-repeats"


def _study(root, name, rows):
    """Ingest ``rows`` ((fixture, label, phase)) into a new database of study ``name``; its path."""
    from storagelab.store import ingest

    raw = root / "raw" / name
    raw.mkdir(parents=True)
    lines = ["path,study,label,host,stack,phase"]
    for k, (src, label, phase) in enumerate(rows):
        dest = f"{k:02d}-{src.name}"
        shutil.copyfile(src, raw / dest)
        stack = "zfs" if src.suffix == ".txt" and "fio" in src.parts else ""
        lines.append(f"{name}/{dest},{name},{label},nas,{stack},{phase}")
    (root / "raw" / "manifest.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = root / f"{name}.duckdb"
    summary = ingest([root / "raw"], db_path=db, manifest_path=root / "raw" / "manifest.csv", parquet_dir=False)
    assert summary.failed == 0, summary.errors
    return db


@pytest.fixture(scope="module")
def arc_db(tmp_path_factory):
    return _study(
        tmp_path_factory.mktemp("arc"),
        "arclab",
        [
            (PSYNC / "randread-4k-qd1-nj1.txt", "qd1 arcstat", ""),
            (ARC / "linux-0.6" / "arcstat-2s.txt", "qd1 arcstat", ""),
            (PSYNC / "randread-4k-qd16-nj1.txt", "qd16 cached", ""),
            (ARC / "solaris-arcstat.pl" / "arcstat-thumper-cached-read.txt", "qd16 cached", ""),
            (REPEATS / "randread-4k-qd4-nj1.txt", "qd4 pair", ""),
            (ARC / "freebsd-14" / "sysctl-kstat.zfs.misc.arcstats.txt", "qd4 pair", "before"),
            (ARC / "linux-2.2" / "arcstats", "qd4 pair", "after"),
            (REPEATS / "randread-4k-qd4-nj1-2.txt", "qd4 one snapshot", ""),
            (ARC / "linux-0.8" / "arcstats", "qd4 one snapshot", ""),
            (REPEATS / "randread-4k-qd4-nj1-3.txt", "qd4 sizes only", ""),
            (ARC / "linux-2.2-arcstat" / "arcstat-f-600s.txt", "qd4 sizes only", ""),
            (REPEATS / "randread-4k-qd16-nj1-2.txt", "qd16 no arc", ""),
            (ARC / "linux-2.1" / "arc_summary.txt", "a run nobody made", ""),
            (ARC / "linux-0.7" / "arc_summary.py.txt", "", ""),
        ],
    )


def _runs(db, study="arclab"):
    frame = analyse_study(db, lambda con, sel: design.with_design(fio_runs.runs(con, sel)), study)
    return {r["label"]: r for r in frame.iter_rows(named=True)}, frame


def test_arcstat_during_the_run_hits_and_misses_summed(arc_db):
    runs, _ = _runs(arc_db)
    r = runs["qd1 arcstat"]
    # arcstat.py 2 (ZoL 0.6.5): rows 2-14 (the first, 21:16:06, left out): read 519+4+...+8 = 1297, miss
    # 42+1+...+2 = 338, hits = read - miss = 959
    assert r["arc_hit_ratio"] == 959 / 1297
    assert r["arc_source"] == "arcstat, 13 samples, hits and misses summed"
    assert r["arc_since_boot"] is None and r["arc_note"] is None
    f = design.flags_of(r)
    assert f.arc_served and "ARC" in f.codes and r["design_flagged"]
    assert design.sentence("qd1 arcstat", f).endswith(
        "the ARC answered 73.9 % of reads during the run (arcstat, 13 samples, hits and misses summed)."
    )


def test_arcstat_hit_percent_weighted_by_reads_on_the_same_rows(arc_db):
    con = open_db(arc_db)
    try:
        fid = con.execute("SELECT file_id FROM files WHERE path LIKE '%arcstat-2s.txt'").fetchone()[0]
        rows = frame(con, "SELECT sample, field, value FROM arcstat_samples WHERE file_id = ? AND sample > 0", [fid])
        wide = rows.pivot("field", index="sample", values="value").sort("sample")
    finally:
        con.close()
    # sum of read x (100 - miss%) / 100: 519 x 92 + 4 x 75 + ... + 8 x 77 = 95,935 / 100, over 1297 reads
    assert arc.arcstat_ratio(wide, method="pct") == (pytest.approx(959.35 / 1297, rel=1e-12), "hit% weighted by reads")
    assert arc.arcstat_ratio(wide) == (959 / 1297, "hits and misses summed")


def test_a_cached_read_with_rounded_rates(arc_db):
    r = _runs(arc_db)[0]["qd16 cached"]
    # arcstat.pl on the Thumper: after the first row (985M reads since boot) every miss is 0 over 11 rows
    assert r["arc_hit_ratio"] == 1.0
    assert r["arc_source"] == "arcstat, 11 samples, hits and misses summed, K/M-rounded rates"
    assert r["design_marker"].startswith(design.MARK) and "ARC" in r["design_flags"]
    assert "the ARC answered 100 % of reads during the run" in design.sentence("x", design.flags_of(r))


def test_two_snapshots_before_and_after(arc_db):
    r = _runs(arc_db)[0]["qd4 pair"]
    # FreeBSD 14 (before): hits 1,473,806, iohits 2,530, misses 63,001; Linux 2.2 (after): hits 33,266,704,081,
    # iohits 1,992,434, misses 30,882,817
    dh, di, dm = 33266704081 - 1473806, 1992434 - 2530, 30882817 - 63001
    assert r["arc_hit_ratio"] == dh / (dh + di + dm)
    assert round(100 * r["arc_hit_ratio"], 1) == 99.9
    assert r["arc_source"] == "arcstats before and after the run, 33,298,039,995 accesses"
    assert design.flags_of(r).arc_served


def test_one_snapshot_is_since_boot_and_never_a_flag(arc_db):
    runs, frame = _runs(arc_db)
    r = runs["qd4 one snapshot"]
    assert r["arc_hit_ratio"] is None and r["design_arc_served"] is None
    assert r["arc_since_boot"] == 8772612 / (8772612 + 604635)  # linux-0.8 arcstats: hits, misses
    assert r["arc_source"] == "one arcstats-kstat snapshot: since boot, not the run's"
    assert "ARC" not in r["design_flags"]
    notes = arc.notes(frame)
    assert (
        "qd4 one snapshot: the ARC's hit ratio since boot was 93.6 % (one arcstats-kstat snapshot: since boot, not "
        "the run's): it says nothing of this run; a second snapshot after the run would."
    ) in notes


def test_arcstat_without_read_columns_and_runs_without_arc_logs_name_the_command(arc_db):
    runs, frame = _runs(arc_db)
    r = runs["qd4 sizes only"]
    assert r["arc_hit_ratio"] is None and r["arc_since_boot"] is None
    assert r["arc_note"] == (
        "arcstat without its read and hit or miss columns: run `arcstat -f time,read,hit%,miss%,arcsz,c 1 > "
        "arcstat.txt`"
    )
    none = runs["qd16 no arc"]
    assert none["arc_hit_ratio"] is None and none["arc_source"] is None and none["arc_note"] is None
    assert arc.missing(frame) == [
        "no ARC hit ratio measured during qd4 one snapshot, qd4 sizes only, qd16 no arc (ZFS reads, which the ARC "
        "may have answered from RAM): run `arcstat -f time,read,hit%,miss%,arcsz,c 1 > arcstat.txt` during the "
        "run, or `cat /proc/spl/kstat/zfs/arcstats` before and after it (FreeBSD: `sysctl kstat.zfs.misc.arcstats`), "
        "and label the output with the run's label (and its host; phase before/after for snapshots)"
    ]
    assert arc.missing(frame.filter(pl.col("arc_hit_ratio").is_not_null())) == []


def test_logs_not_tied_say_why(arc_db):
    from storagelab.analysis import Selection

    con = open_db(arc_db)
    try:
        ties = {r["path"].rsplit("/", 1)[-1]: r["tie"] for r in arc.logs(con).iter_rows(named=True)}
        lines = arc.untied(con, Selection(study="arclab"))
        elsewhere = arc.untied(con, Selection(study="another"))
    finally:
        con.close()
    assert ties["01-arcstat-2s.txt"] is None and sum(t is None for t in ties.values()) == 6
    folder = arc_db.parent / "raw" / "arclab"  # outside the project: stored as an absolute path
    assert lines == [
        f"ARC log not used: {folder}/12-arc_summary.txt: no fio output of study arclab, host nas is labelled "
        "'a run nobody made'",
        f"ARC log not used: {folder}/13-arc_summary.py.txt has no label: give it the label of the fio run it was "
        "taken during",
    ]
    assert elsewhere == []


def _one_run(root, name, fio, snapshots):
    """The row of ``fio`` (a lab-repeats output, label 'qd1') in a study of its own with ``snapshots`` ((ARC output,
    phase)) tied to it."""
    db = _study(root, name, [(REPEATS / fio, "qd1", ""), *((ARC / p, "qd1", phase) for p, phase in snapshots)])
    return _runs(db, name)[0]["qd1"]


def test_pairs_that_are_not_one_boot_are_refused(tmp_path):
    freebsd, linux_22 = "freebsd-14/sysctl-kstat.zfs.misc.arcstats.txt", "linux-2.2/arcstats"
    r = _one_run(tmp_path / "a", "swapped", "randread-4k-qd1-nj1-2.txt", [(freebsd, "after"), (linux_22, "before")])
    assert r["arc_hit_ratio"] is None and "ARC" not in r["design_flags"]  # no ratio: no ARC flag
    # the two snapshots (labelled host nas, one machine) print two c_max values: both said, the working set judged
    # against each (it fits the lower: 'cache'; the RAM is not labelled and not needed on ZFS)
    assert (r["arc_max_bytes"], r["arc_max_high_bytes"]) == (3178811392.0, 32458756096.0)
    assert r["design_flags"] == ["short", "cache"] and r["design_cache_bytes"] == 3178811392.0
    assert r["design_cache_where"] == (
        "ARC maximum (c_max changed over time: 2.96 GiB in 01-sysctl-kstat.zfs.misc.arcstats.txt line 107, 30.23 GiB "
        "in 02-arcstats line 44)"
    )
    assert r["arc_note"].startswith("its arcstats counters went down from ") and r["arc_note"].endswith(
        "a reboot between them, or the before/after labels swapped"
    )
    # the snapshot with the most accesses stands as since boot: Linux 2.2's hits / (hits + iohits + misses)
    assert r["arc_since_boot"] == 33266704081 / (33266704081 + 1992434 + 30882817)
    r = _one_run(tmp_path / "b", "releases", "randread-4k-qd1-nj1-3.txt", [("linux-0.8/arcstats", ""), (linux_22, "")])
    assert r["arc_hit_ratio"] is None
    assert r["arc_note"] == (
        "its arcstats snapshots come from two ZFS releases (iohits in one only): not one machine's boot"
    )


def test_notebooks_05_08_and_the_disk_card_flag_the_arc_served_run_unchanged(arc_db):
    from storagelab.analysis import Selection, disk_card, fio_views, stacks

    con = open_db(arc_db)
    try:
        found = stacks.analyse(con, Selection(study="arclab"), direction="read").findings
        found_08 = fio_views.analyse(con, Selection(study="arclab")).findings
        cards = disk_card.query(con, Selection(study="arclab")).filter(pl.col("label") == "qd16 cached")
    finally:
        con.close()
    said = "the ARC answered 100 % of reads during the run (arcstat, 11 samples, hits and misses summed, K/M-rounded rates)"
    assert any(said in f for f in found), found
    assert any(said in f for f in found_08), found_08
    assert any(said in flag for flag in disk_card.flags_of(cards.row(0, named=True)))


def test_a_write_gets_no_read_hit_ratio(tmp_path):
    """randrw 70/30 (fio 3.33, libaio): its read row gets the arcstat's ratio, its write row none."""
    fio = FIXTURES / "fio" / "3.33" / "randrw_libaio_jsonplus.txt"
    db = _study(tmp_path, "mixed", [(fio, "rw70", ""), (ARC / "linux-0.6" / "arcstat-2s.txt", "rw70", "")])
    rows = {r["direction"]: r for r in _runs(db, "mixed")[1].iter_rows(named=True)}
    assert rows["read"]["arc_hit_ratio"] == 959 / 1297 and "ARC" in rows["read"]["design_flags"]
    write = rows["write"]
    assert write["arc_hit_ratio"] is None and write["arc_source"] is None and "ARC" not in write["design_flags"]
