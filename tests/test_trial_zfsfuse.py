"""The s35 new-user trial on zfs-fuse 0.7.0 (/work/h6-trial-findings.md: S5-S12, P1-P3), on its own logs
(tests/fixtures/zfs-fuse/0.7.0, sources in its COMMANDS.md), labelled as the trial labelled them
(/tmp/h6ds/manifest-h6a.csv: host ``vm`` on the zdb/zpool/zfs/arcstats files only)."""

from __future__ import annotations

import shutil

import polars as pl
import pytest
from conftest import FIXTURES

from storagelab.analysis import Selection, open_db

SRC = FIXTURES / "zfs-fuse" / "0.7.0"
STUDY = "zfs-fuse läb"
MANIFEST = """path,study,label,host,stack,pool,vdev_type,vdev_count,vdev_width,recordsize_bytes,ashift,phase,zfs_version,notes,ram_bytes
fio/seqwrite on single.img.log,zfs-fuse läb,1 disk,,zfs,single.img,single,1,1,131072,,,zfs-fuse 0.7.0 (pool v23),,25276510208
fio/seqwrite on single.img (repeat 2).log,zfs-fuse läb,1 disk run 2,,zfs,single.img,single,1,1,131072,,,zfs-fuse 0.7.0 (pool v23),,25276510208
fio/seqwrite on m2.log,zfs-fuse läb,mirror,,zfs,m2,mirror,1,2,131072,,,zfs-fuse 0.7.0 (pool v23),,25276510208
fio/seqwrite on stripe2.log,zfs-fuse läb,2 vdevs,,zfs,stripe2,single,2,1,131072,,,zfs-fuse 0.7.0 (pool v23),,25276510208
fio/seqwrite on stripe2 (repeat 2).log,zfs-fuse läb,2 vdevs run 2,,zfs,stripe2,single,2,1,131072,,,zfs-fuse 0.7.0 (pool v23),,25276510208
fio/seqwrite on dd.tank.log,zfs-fuse läb,raidz1 dedup,,zfs,dd.tank,raidz1,1,2,131072,12,,zfs-fuse 0.7.0 (pool v23),dedup=on,25276510208
fio/randread8k-rs8k-32M.txt,zfs-fuse läb,rs8k 32M file,,zfs,stripe2,single,2,1,8192,,,zfs-fuse 0.7.0 (pool v23),,25276510208
fio/randread8k-rs8k-160M.json,zfs-fuse läb,rs8k 160M file,,zfs,stripe2,single,2,1,8192,,,zfs-fuse 0.7.0 (pool v23),,25276510208
fio/randread8k-rs128k-32M.txt,zfs-fuse läb,rs128k 32M file,,zfs,stripe2,single,2,1,131072,,,zfs-fuse 0.7.0 (pool v23),,25276510208
fio/randread8k-rs128k-160M.json,zfs-fuse läb,rs128k 160M file,,zfs,stripe2,single,2,1,131072,,,zfs-fuse 0.7.0 (pool v23),,25276510208
bonnie/rep-s1G-n16-run1.txt,zfs-fuse läb,ext4 1G run 1,,ext4,,,,,,,before,,,25276510208
bonnie/rep-s1G-n16-run2.txt,zfs-fuse läb,ext4 1G run 2,,ext4,,,,,,,before,,,25276510208
bonnie/rep-s1G-n16-run3.txt,zfs-fuse läb,ext4 1G run 3,,ext4,,,,,,,before,,,25276510208
bonnie/single-s2G-f-n0.txt,zfs-fuse läb,ext4 2G -f,,ext4,,,,,,,,,,25276510208
bonnie/single-s1G-b-n8.txt,zfs-fuse läb,ext4 1G -b,,ext4,,,,,,,,,,25276510208
bonnie/quiet-run.csv,zfs-fuse läb,ext4 -q ünï,,ext4,,,,,,,after,,same -s 1024 -r 512 -n 16 as the before runs with -q,
bonnie/zfsfuse-stripe2-s256M-f.txt,zfs-fuse läb,zfs-fuse stripe2 256M,,zfs,stripe2,single,2,1,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zdb-DD-dd.tank.txt,zfs-fuse läb,zdb -DD dd.tank,vm,zfs,dd.tank,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zdb-S-single.img.txt,zfs-fuse läb,zdb -S single.img,vm,zfs,single.img,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zdb-b-dd.tank.txt,zfs-fuse läb,zdb -b dd.tank,vm,zfs,dd.tank,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zdb-bb-stripe2.txt,zfs-fuse läb,zdb -bb stripe2,vm,zfs,stripe2,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zdb-C-dd.tank.txt,zfs-fuse läb,zdb -C dd.tank,vm,zfs,dd.tank,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zdb-C-stripe2.txt,zfs-fuse läb,zdb -C stripe2,vm,zfs,stripe2,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zpool list.txt,zfs-fuse läb,zpool list,vm,zfs,,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zpool-status-D-dd.tank.txt,zfs-fuse läb,zpool status -D dd.tank,vm,zfs,dd.tank,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zfs-get-all-dd.tank.txt,zfs-fuse läb,zfs get all dd.tank,vm,zfs,dd.tank,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
zfs-get-p-stripe2.txt,zfs-fuse läb,zfs get -p stripe2,vm,zfs,stripe2,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
arcstats-sysctl-style.txt,zfs-fuse läb,arcstats,vm,zfs,,,,,,,,zfs-fuse 0.7.0 (pool v23),,25276510208
parts/gdisk -l loop0 (aligned).txt,zfs-fuse läb,gdisk loop0,,,,,,,,,,,,
parts/sgdisk-p-aligned.txt,zfs-fuse läb,sgdisk loop0,,,,,,,,,,,,
parts/parted-unit-s-aligned.txt,zfs-fuse läb,parted loop0,,,,,,,,,,,,
parts/parted-unit-s-misaligned.txt,zfs-fuse läb,parted loop1,,,,,,,,,,,,
parts/sfdisk-d-aligned.txt,zfs-fuse läb,sfdisk loop0,,,,,,,,,,,,
parts/sfdisk-d-misaligned.txt,zfs-fuse läb,sfdisk loop1,,,,,,,,,,,,
"parts/parted session, print only.txt",zfs-fuse läb,parted session loop1,,,,,,,,,,,,
zpool-iostat-v.txt,zfs-fuse läb,zpool iostat -v,vm,,,,,,,,,,,
zpool-iostat-v-after-fio.txt,zfs-fuse läb,zpool iostat -v after fio,vm,,,,,,,,,,,
zpool_status_all.txt,zfs-fuse läb,zpool status,vm,,,,,,,,,,,
zdb-b-stripe2-after.txt,zfs-fuse läb,zdb -b stripe2,vm,,,,,,,,,,,
"""
NOT_LOGS = shutil.ignore_patterns("*.expected.jsonl", "*.md")


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    from storagelab.store import ingest

    raw = tmp_path_factory.mktemp("zfsfuse") / "raw"
    shutil.copytree(SRC, raw, ignore=NOT_LOGS)
    (raw / "manifest.csv").write_text(MANIFEST, encoding="utf-8")
    dest = raw.parent / "zfsfuse.duckdb"
    s = ingest([raw], db_path=dest, parquet_dir=False, progress=False, workers=1, manifest_path=raw / "manifest.csv")
    assert s.failed == 0, s.errors  # the bon_csv2txt table (P3) and the parted session (P2) failed before
    c = open_db(dest)
    yield c
    c.close()


def test_02_one_comparison_one_number(con):
    """S6: the 8 KiB vs 128 KiB random reads of stripe2 at two file sizes are one comparison with one number (the
    geometric mean of the two pairs' ratios, sqrt(2.594 x 0.519) = 1.16x), its disagreeing sizes, unknown noise
    (single runs) and no faster/slower verdict by the rule of 05, 08 and 10; not '+159.4 %' and '-48.1 %' as two
    verdicts. The cache check is the shared one, against the ARC maximum of the selection's arcstats (c_max
    104857600 B on line 2), never also against the 23.54 GiB of RAM: the 32 MiB files fit (flagged), the 160 MiB
    files are 1.60x it (not flagged; 62 % of them fits at once, said as arithmetic)."""
    from storagelab.analysis import recordsize

    res = recordsize.analyse(con, Selection(study=STUDY))
    (c,) = res.numbers.comparisons
    assert [round(p.ratio, 3) for p in c.pairs] == [2.594, 0.519]
    assert round(c.ratio, 3) == 1.160 and c.disagree and c.untested
    assert [(p.verdict, p.flagged) for p in c.pairs] == [
        (None, ()),
        (None, (("rs8k 32M file", "⚠ cache"), ("rs128k 32M file", "⚠ cache"))),
    ]
    text = [str(f) for f in res.findings]
    i = next(i for i, f in enumerate(text) if f.startswith("fio, recordsize 8 KiB"))
    arc = "100.0 MiB ARC maximum (c_max, arcstats-sysctl-style.txt line 2)"
    assert text[i:] == [
        "fio, recordsize 8 KiB against 128 KiB records on stripe2 (randread bs=8KiB iodepth=1 numjobs=1 psync "
        "direct=0, read): one comparison at 2 file sizes; its number, the geometric mean of their ratios: 1.16x "
        "(0.52x to 2.59x). 160.0 MiB: rs8k 160M file 118.2 MiB/s (124.0 MB/s) / rs128k 160M file 45.6 MiB/s "
        "(47.8 MB/s) = 2.59x; 32.0 MiB: rs8k 32M file 50.5 MiB/s (53.0 MB/s) / rs128k 32M file 97.3 MiB/s "
        "(102.0 MB/s) = 0.52x.",
        "  The file sizes disagree in direction (0.52x and 2.59x): this data does not say whether 8 KiB records "
        "are faster or slower than 128 KiB for this workload.",
        "  Each side ran once: the run-to-run noise is unknown, so no ratio here can be told from noise (repeat "
        "each run 3 times or more).",
        "  No faster/slower verdict (the rule of 05, 08 and 10): 160.0 MiB: none, one run on each side, so the "
        "run-to-run noise is unknown; 32.0 MiB: none, its runs are flagged (rs8k 32M file ⚠ cache; rs128k 32M file "
        "⚠ cache).",
        f"rs128k 32M file: its working set of 32.0 MiB fits in the {arc} that can cache it, and its I/O goes "
        "through that cache.",
        f"rs8k 32M file: its working set of 32.0 MiB fits in the {arc} that can cache it, and its I/O goes through "
        "that cache.",
        f"rs128k 160M file: its working set of 160.0 MiB is 1.60x the {arc}, which bounds what ZFS caches: the "
        "cache check does not flag it, but the ARC can hold 62 % of it at once (arithmetic), so part of its I/O may "
        "still be answered from memory.",
        f"rs8k 160M file: its working set of 160.0 MiB is 1.60x the {arc}, which bounds what ZFS caches: the cache "
        "check does not flag it, but the ARC can hold 62 % of it at once (arithmetic), so part of its I/O may still "
        "be answered from memory.",
    ]
    assert not any("+159.4 %" in f or "-48.1 %" in f or "of RAM" in f for f in text)
    # the c_max figure links to its line
    (link,) = [x for f in res.findings if str(f).startswith("rs8k 32M") for x in f.cites]
    assert (link.text, link.derivation) == ("100.0 MiB", "c_max of the machine's ARC statistics")
    assert [(s["path"].rsplit("/", 1)[-1], s["line_start"], s["line_end"]) for s in link.inputs] == [
        ("arcstats-sysctl-style.txt", 2, 2)
    ]
    assert res.headline["recordsize 8 KiB vs 128 KiB (stripe2, read)"] == (
        "1.16x (0.52x to 2.59x over 2 file sizes, disagreeing), single runs: noise unknown, 2 run(s) flagged, "
        "no verdict"
    )
    tuned = res["tuned"].filter(pl.col("recordsize_bytes") == 8192).sort("label")
    assert tuned.select("label", "verdict", "verdict_why").rows() == [
        ("rs8k 160M file", None, "one run on each side: the run-to-run noise is unknown"),
        ("rs8k 32M file", None, "flagged: ⚠ cache"),
    ]
    assert "best tuned recordsize vs default" not in res.headline


def _dedup(con, **sel):
    from storagelab.analysis import dedup

    return dedup.analyse(con, Selection(**sel), bytes_per_entry=400, metadata_fraction=0.75)


def test_04_host_sums_only_real_tables(con):
    """S12: host vm's table is dd.tank's alone: single.img's `zdb -S` (a simulation; nothing shows dedup on), stripe2's
    bp count (`zfs get -p` says dedup off on stripe2 and both children) and the unnamed second `zdb -b` of stripe2
    are left out, each said; no 'together' sum of four pools."""
    res = _dedup(con, study=STUDY, host="vm")
    (m,) = res.numbers.machines
    assert m.pools == ("dd.tank",)
    assert [(o.pool, o.why) for o in m.left_out] == [
        ("(pool name not in the output; label zdb -b stripe2)", "unnamed"),
        ("single.img", "simulated"),
        ("stripe2", "dedup off"),
    ]
    assert [(o["line_start"], o["line_end"]) for o in m.left_out[2].lines] == [(4, 4), (8, 8), (12, 12)]
    text = [str(f) for f in res.findings]
    assert (
        "Host vm: its one dedup table is dd.tank's. Left out of its sum: (pool name not in the output; label zdb -b "
        "stripe2) (its pool is not named, so it may be one of the pools counted); single.img (`zdb -S` simulates the table dedup "
        "would build; nothing in the selection shows dedup on for it); stripe2 (`zfs get dedup` says off on every "
        "dataset of it)." in text
    )
    assert not any("share one ARC" in f for f in text)


def test_04_ram_from_the_manifest(con):
    """S7: the ARC statistics print no memory_all_bytes: the RAM is the manifest's ram_bytes (25276510208 B =
    23.54 GiB), not the 32 GiB default parameter, and the conflict is said."""
    res = _dedup(con, study=STUDY, host="vm")
    b = res.numbers.budgets["vm"]
    assert (b.ram_bytes, b.ram_source, b.bytes) == (25276510208.0, "the manifest's ram_bytes", 104857600 * 0.75)
    text = [str(f) for f in res.findings]
    assert text[0].endswith(
        "= 75.0 MiB (RAM 23.54 GiB, the manifest's ram_bytes; ARC statistics, arcstats-sysctl-style.txt); the ARC "
        "held 100.1 MiB when the statistics were taken."
    )
    assert (
        "  RAM of host vm: 23.54 GiB, the manifest's ram_bytes label of its ARC statistics' file (they print no "
        "memory_all_bytes); the ram_gib parameter (32 GiB) says otherwise and is not used. The budget comes from "
        "c_max, not from the RAM." in text
    )


def test_04_points_to_ddt_outputs_that_failed(tmp_path):
    """S10: the cut `zdb -DD` of issue #12255 and `zdb -S` of issue #15420 fail at ingest; 04 names them by file and
    line with the ingest's reason and the query, instead of 'no zdb -S or zdb -DD output'."""
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("zdb-DD-issue12255-cut.log", "zdb-S-issue15420-cut.txt"):
        shutil.copy(FIXTURES / "zdb" / "published" / name, raw / name)
    s = ingest([raw], db_path=tmp_path / "db.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 2
    c = open_db(tmp_path / "db.duckdb")
    try:
        res = _dedup(c, study="(unlabelled)")
    finally:
        c.close()
    assert res.missing[-1].endswith(
        "in the database: `zdb -S POOL` (before enabling dedup) counts the entries a DDT would hold; `zdb -DD POOL` "
        "or `zpool status -D POOL` (after) the real ones with their in-core size. 2 file(s) in this database failed "
        "to parse; 2 of them failed on a DDT table: zdb-DD-issue12255-cut.log:24 (DDT histogram row has 7 fields); "
        "zdb-S-issue15420-cut.txt:8 (DDT histogram ends before its Total row); if this study's DDT outputs are "
        'among them, `storagelab sql "SELECT path, line, message FROM ingest_errors"` says why'
    )


def test_09_repeats_are_one_setup(con):
    """S5: 'ext4 1G run 1/2/3' (bonnie++ -s 1024 -r 512 -n 16, three times) are repeats: one sentence with each test's
    mean and sample sd, ranked by their mean (seq_create 2,220.7 = (4,790 + 531 + 1,341) / 3), never 4,790 against
    531; the table shades each run by its setup's mean."""
    from storagelab.analysis import bonnie_table

    res = bonnie_table.analyse(con, Selection(study=STUDY))
    text = [str(f) for f in res.findings]
    assert text[2] == (
        "ext4 1G: 3 runs of one setup (ext4 1G run 1, ext4 1G run 2, ext4 1G run 3; a 1.00 GiB file, 16,384 small "
        "files, machine vm-ext4): repeats, ranked by their mean and never against each other. Mean ± sample sd over "
        "the runs that measured each test (% of the mean): putc 0.6 ± 0.13 MiB/s (21 %); put_block 705.4 ± 62.8 "
        "MiB/s (9 %); rewrite 760.3 ± 375.0 MiB/s (49 %); getc 0.86 ± 0.21 MiB/s (24 %); seeks 8,322.0 ± 1,915.2 "
        "seeks/s (23 %); seq_create 2,220.7 ± 2,261.7 files/s (102 %); seq_delete 27,339.7 ± 3,526.7 files/s (13 %); "
        "ran_create 2,401.7 ± 2,118.0 files/s (88 %); ran_delete 16,509.0 ± 1,100.3 files/s (7 %), 1 more too fast "
        "to measure."
    )
    assert (
        "seq_create (Create, files/s): 170.0 (ext4 1G -b) to 2,220.7 (ext4 1G, mean of 3 runs, 531.0 to 4,790.0); "
        "1 run(s) too fast to measure." in text
    )
    tab = res["table"].filter(pl.col("setup") == "ext4 1G")
    assert tab["seq_create"].to_list() == [4790.0, 531.0, 1341.0]
    assert [round(v, 1) for v in tab["seq_create_rank"].to_list()] == [2220.7] * 3


def test_bon_csv2txt_with_a_machine_name_with_spaces(con):
    """P3: bon_csv2txt pads by bytes ('vm ext4 ünï' is 13 bytes for 11 characters) and prints no file row for the
    -n 0 run: all 7 runs are read, each file row paired with its IO row by machine name, the create rates from
    the CSV the table was made from (1834 files/s, not a 2.00a text figure)."""
    runs = con.execute(
        "SELECT b.run_index, b.machine, b.size_bytes, b.num_files, b.line_start FROM bonnie_runs b JOIN files f "
        "USING (file_id) WHERE f.path LIKE '%bon_csv2txt.out' ORDER BY b.run_index"
    ).fetchall()
    assert runs == [
        (0, "vm-ext4", 2**30, 16384, 4),
        (1, "vm-ext4", 2**30, 16384, 6),
        (2, "vm-ext4", 2**30, 16384, 8),
        (3, "vm-ext4", 2**30, 8192, 10),
        (4, "vm-ext4", 2 * 2**30, None, 12),
        (5, "vm ext4 ünï", 2**30, 16384, 14),
        (6, "stripe2-zfs", 256 * 2**20, 4096, 16),
    ]
    got = con.execute(
        "SELECT r.test, r.ops_per_s, r.line_start FROM bonnie_results r JOIN files f USING (file_id) "
        "WHERE f.path LIKE '%bon_csv2txt.out' AND r.run_index = 5 AND r.test IN ('seq_create', 'ran_delete') "
        "ORDER BY r.test"
    ).fetchall()
    assert got == [("ran_delete", 26001.0, 29), ("seq_create", 1834.0, 29)]


def test_09_runs_of_one_csv_named_by_line(con):
    """S11: the seven runs of all.csv (one CSV line each, no label) are named by file, line and machine, not all
    'all.csv'; its three runs of one setup (lines 1-3) are repeats."""
    from storagelab.analysis import bonnie_table

    res = bonnie_table.analyse(con, Selection(study="(unlabelled)"))
    names = res["table"].filter(pl.col("path").str.ends_with("all.csv"))["label"].to_list()
    assert names == [
        "all.csv:1 vm-ext4",
        "all.csv:2 vm-ext4",
        "all.csv:3 vm-ext4",
        "all.csv:4 vm-ext4",
        "all.csv:5 vm-ext4",
        "all.csv:6 vm ext4 ünï",
        "all.csv:7 stripe2-zfs",
    ]
    text = [str(f) for f in res.findings]
    assert any(
        f.startswith("all.csv: 3 runs of one setup (all.csv:1 vm-ext4, all.csv:2 vm-ext4, all.csv:3 vm-ext4;")
        for f in text
    )
    # the same seven runs through bon_csv2txt (P3: a machine name with spaces and non-ASCII letters) join them
    assert (
        "seeks (Seeks, seeks/s): 6,874.0 (all.csv:5 vm-ext4) to 13,100.0 (all.csv:6 vm ext4 ünï); 2 run(s) too fast "
        "to measure." in text
    )


def test_03_before_repeats_give_the_noise_and_tables_the_sector_size(con):
    """S8: the 'after' run ran once, the 'before' side three times: the 'before' repeats give the prediction interval
    (rewrite 800.0, 1,113.8, 367.0 MiB/s: 760.3 ± t(2) 4.303 x 375.0 x sqrt(4/3) reaches below zero); block write
    813.2 lies within 393.4-1,017.4. S9: loop1's tables print 512 B physical sectors, so LBA 63 is only 'misaligned'
    under the 4,096 B parameter, said as such; the runs are ext4, so no ashift question and no literal 'POOL'."""
    from storagelab.analysis import alignment

    res = alignment.analyse(con, Selection(study=STUDY))
    n = res.numbers
    assert (n.noise.side, n.noise.repeats) == ("before", 3)
    text = [str(f) for f in res.findings]
    assert text[3].startswith(
        "Before: ext4 1G run 1 and 2 more run(s) of its configuration; after: ext4 -q ünï (the 'after' run with the "
        "same layout labels (vdev type, count, width, cache, log)). 3 runs of the 'before' configuration give the "
        "noise band: the 95% prediction interval for one new run (t distribution, analysis/stats.py); the 'after' run "
        "is judged against it (the 'after' configuration ran once)."
    )
    assert (
        "block write: 705.4 MiB/s before, 813.2 MiB/s after = 1.15x; the 3 'before' runs predict 393.4 MiB/s to "
        "1017.4 MiB/s for a new run, so the 'after' value is **within noise**." in text
    )
    assert (
        "rewrite: 760.3 MiB/s before, 1134.6 MiB/s after = 1.49x; the 3 'before' runs are too few or too far apart "
        "to bound the noise: their 95% prediction interval reaches below zero (up to 2623.5 MiB/s), and a rate cannot "
        "be negative, so the data cannot tell the 'after' value from noise." in text
    )
    assert text[2].endswith(
        "4 start on the 512 B physical sectors their tables print; /dev/loop1 p1 at LBA 63, /dev/loop1 p2 at LBA "
        "100001 would be misaligned on 4,096 B physical sectors (the physical_sector_bytes parameter): that holds only "
        "if the disk's real sectors are larger than its table prints (a 512e drive behind a bridge or a virtual disk "
        "that reports 512 B), which the tables cannot show."
    )
    assert (
        "The 'before' run is labelled stack ext4, not ZFS: ashift and the dataset settings (compression, dedup) of a "
        "pool do not apply to it." in text
    )
    assert not any("ashift" in m or "POOL" in m for m in res.missing)
    assert res.headline["block write after/before"] == "1.15x (within noise)"


def test_parted_session_with_align_check(con):
    """P2: an interactive `parted /dev/loop1` session (print, unit s, print, align-check optimal 1 and 2) is read:
    the exact listing kept, parted's own verdicts stored with their partitions."""
    got = con.execute(
        "SELECT p.index, p.start_sector, p.physical_sector_bytes, p.align_check, p.line_start FROM partitions p "
        "JOIN files f USING (file_id) WHERE f.path LIKE '%parted session (as on screen).txt' ORDER BY p.index"
    ).fetchall()
    assert got == [
        (1, 63, 512, "optimal: not aligned: 63s % 2048s != 0s", 24),
        (2, 100001, 512, "optimal: not aligned: 100001s % 2048s != 0s", 25),
    ]
    others = con.execute("SELECT count(*) FROM partitions WHERE align_check IS NOT NULL").fetchone()[0]
    assert others == 2  # no other output ran align-check


def test_parted_align_check_before_3_4():
    """parted before 3.4 answers without a reason ('1 aligned'): the two lines published in
    huataihuang/cloud-atlas-draft os/linux/storage/disk/align_partitions_for_best_performance.md (a session on
    /dev/sdb), with the prompt's trailing spaces as published."""
    from storagelab.parsers.base import Parsed
    from storagelab.parsers.partitions.parted import _align_check, _Disk

    disk, asked, parsed = _Disk("/dev/sdb", 1), {}, Parsed("partitions", "parted")
    disk.parts.append({"index": 1})
    lines = ["(parted) align-check optimal 1                                            ", "1 aligned"]
    assert [_align_check(disk, asked, s.strip(), n, parsed) for n, s in enumerate(lines, 1)] == [True, True]
    assert disk.parts[0]["align_check"] == "optimal: aligned" and not parsed.warnings


def test_zpool_status_D_of_pool_version_23(con):
    """P1: zfs-fuse (pool v23) prints 'DDT entries 448, size 438 on disk, 118 in core' without ' dedup: ': the
    summary and its histogram are kept (no 'not zpool status output' warning) and 04 uses them as the pool's
    measured in-core size (448 x 118 B = 52,864 B)."""
    row = con.execute(
        "SELECT z.ddt_entries, z.ddt_disk_bytes, z.ddt_core_bytes, z.ddt_sizes, f.warnings FROM zpool_status_pools z "
        "JOIN files f USING (file_id) WHERE f.path LIKE '%zpool-status-D-dd.tank.txt'"
    ).fetchone()
    assert row == (448, 438.0, 118.0, "per_entry", None)
    rows = con.execute(
        "SELECT refcnt_bucket, alloc_blocks, ref_blocks, line_start FROM zpool_status_ddt ORDER BY line_start"
    ).fetchall()
    assert rows == [(1, 128.0, 128.0, 20), (2, 320.0, 960.0, 21), (None, 448.0, 1085.44, 22)]
    res = _dedup(con, study=STUDY, host="vm")
    text = [str(f) for f in res.findings]
    assert (
        "Pool dd.tank, `zpool status -D`: 448 DDT entries, 51.6 KiB in core = 118 B per entry (measured; printed per "
        "entry)." in text
    )
    assert (
        "Pool dd.tank, best estimate (zpool status -D entries x measured in-core size): 448 entries, 51.6 KiB at "
        "118 B/entry: fits the 75.0 MiB budget." in text
    )


def test_04_ram_from_the_manifest_without_arc_statistics(tmp_path):
    """S7, without ARC statistics: the budget's RAM is the zdb outputs' ram_bytes label (23.54 GiB), the ARC maximum
    RAM less 1 GiB (arc_max_gib 0), and the 32 GiB ram_gib parameter is said unused."""
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("zdb-DD-dd.tank.txt", "zdb-b-dd.tank.txt"):
        shutil.copy(SRC / name, raw / name)
    rows = [r for r in MANIFEST.splitlines() if r.startswith(("path,", "zdb-DD-dd.tank.txt", "zdb-b-dd.tank.txt"))]
    (raw / "manifest.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    s = ingest([raw], db_path=tmp_path / "db.duckdb", parquet_dir=False, progress=False, workers=1,
               manifest_path=raw / "manifest.csv")  # fmt: skip
    assert s.failed == 0, s.errors
    c = open_db(tmp_path / "db.duckdb")
    try:
        res = _dedup(c, study=STUDY)
    finally:
        c.close()
    b = res.numbers.budget
    assert (b.ram_bytes, b.ram_source, b.arc_max_bytes) == (
        25276510208.0,
        "the manifest's ram_bytes",
        25276510208.0 - 2**30,
    )
    text = [str(f) for f in res.findings]
    assert (
        "Metadata budget: 22.54 GiB ARC max x 0.75 = 16.91 GiB (RAM 23.54 GiB, the manifest's ram_bytes; "
        "parameters)." in text
    )
    assert (
        "  RAM: 23.54 GiB, the manifest's ram_bytes label of the zdb outputs; the ram_gib parameter (32 GiB) says "
        "otherwise and is not used." in text
    )


def test_03_cites_parted_align_check_beside_its_arithmetic(con):
    """The interactive parted session (unlabelled here) ran `align-check optimal 1` and `2`: 03 cites parted's own
    verdicts (lines 24 and 25) beside the arithmetic on the grain parted printed (2048 s x 512 B = 1 MiB): LBA 63 =
    32,256 B and LBA 100001 = 51,200,512 B are not multiples of it, so they agree."""
    from storagelab.analysis import alignment

    res = alignment.analyse(con, Selection(study="(unlabelled)"))
    assert [(c["index"], c["agree"], c["grain_bytes"]) for c in res.numbers.parted] == [
        (1, True, 2**20),
        (2, True, 2**20),
    ]
    said = [f for f in res.findings if str(f).startswith("parted's own align-check")]
    assert [str(f) for f in said] == [
        'parted\'s own align-check (optimal) of /dev/loop1 p1: "not aligned" (not aligned: 63s % 2048s != 0s); by the '
        "arithmetic here its start, 32,256 B, is not a multiple of 1.0 MiB (the grain parted printed): they agree.",
        'parted\'s own align-check (optimal) of /dev/loop1 p2: "not aligned" (not aligned: 100001s % 2048s != 0s); by '
        "the arithmetic here its start, 51,200,512 B, is not a multiple of 1.0 MiB (the grain parted printed): they "
        "agree.",
    ]
    assert [(s["path"].rsplit("/", 1)[-1], s["line_start"]) for f in said for c in f.cites for s in c.inputs] == [
        ("parted session (as on screen).txt", 24),
        ("parted session (as on screen).txt", 25),
    ]


def test_parted_checks_disagree_is_said():
    """parted before 3.4 answers 'aligned' without its grain (stored 'optimal: aligned'): the arithmetic takes 1 MiB,
    parted's usual optimal grain, and a start of LBA 63 contradicts the verdict: said as a disagreement."""
    from storagelab.analysis import alignment_findings, alignment_tables

    parts = pl.DataFrame(
        {"disk": ["/dev/sdb"], "disk_name": ["/dev/sdb"], "index": [1], "abs_start_sector": [63],
         "logical_sector_bytes": [512], "physical_bytes": [512], "align_check": ["optimal: aligned"],
         "path": ["s.txt"], "sha256": ["x"], "line_start": [3], "line_end": [3]}
    )  # fmt: skip
    (c,) = alignment_tables.parted_checks(parts)
    assert (c["parted"], c["grain_bytes"], c["arithmetic"], c["agree"]) == ("aligned", 2**20, False, False)
    assert [str(f) for f in alignment_findings._parted_words([c])] == [
        'parted\'s own align-check (optimal) of /dev/sdb p1: "aligned" (aligned); by the arithmetic here its start, '
        "32,256 B, is not a multiple of 1.0 MiB (1 MiB (parted's usual optimal grain; it printed none)): they "
        "DISAGREE: check the start sector and the grain (a table printed by another tool, or a disk reporting other "
        "sector sizes to parted)."
    ]


def _bounds(tmp_path, rows: str, extra: tuple = (), frame: bool = False):
    """The design flags of the trial's fio runs labelled by ``rows`` (manifest lines after the header), beside the
    trial's arcstats labelled study s, host vm: label -> DesignFlags."""
    from storagelab.analysis import design, fio_runs
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    for name in ("fio/randread8k-rs8k-32M.txt", "fio/randread8k-rs8k-160M.json", "arcstats-sysctl-style.txt"):
        (raw / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SRC / name, raw / name)
    for src, name in extra:  # other ARC statistics: (fixture, name in raw/)
        shutil.copy(src, raw / name)
    head = "path,study,label,host,stack,zfs_version,ram_bytes\narcstats-sysctl-style.txt,s,arcstats,vm,zfs,,\n"
    (raw / "manifest.csv").write_text(head + rows, encoding="utf-8")
    s = ingest([raw], db_path=tmp_path / "db.duckdb", parquet_dir=False, progress=False, workers=1,
               manifest_path=raw / "manifest.csv")  # fmt: skip
    assert s.failed == 0, s.errors
    c = open_db(tmp_path / "db.duckdb")
    try:
        df = design.with_design(fio_runs.runs(c, Selection(study="s")))
    finally:
        c.close()
    return df if frame else {r["label"]: design.flags_of(r) for r in df.iter_rows(named=True)}


def test_the_arc_bounds_zfs_runs_only(tmp_path):
    """One 32 MiB random-read run of the trial, labelled four ways beside the arcstats of host vm (c_max 100 MiB on
    line 2): on ZFS (stack zfs, or a zfs_version label) of host vm, or with no host (the study's ARC statistics all
    come from vm), the ARC maximum bounds it; labelled ext4, or with no stack, or of another host, the RAM does
    (23.54 GiB). The 160 MiB run on ZFS is 1.60x c_max: not flagged, though it would fit in the RAM."""
    from storagelab.analysis import design

    ram = 25276510208
    by = _bounds(
        tmp_path,
        f"fio/randread8k-rs8k-32M.txt,s,zfs vm,vm,zfs,,{ram}\n"
        f"fio/randread8k-rs8k-160M.json,s,zfs 160M,,,zfs-fuse 0.7.0,{ram}\n",
    )
    arc = "ARC maximum (c_max, arcstats-sysctl-style.txt line 2)"
    assert (by["zfs vm"].cache_bytes, by["zfs vm"].cache_where, by["zfs vm"].codes) == (104857600, arc, ("cache",))
    f = by["zfs 160M"]
    assert (f.cache_bytes, f.cache_where, f.fits_in_cache, f.codes) == (104857600, arc, False, ())
    for i, rows in enumerate(
        (
            f"fio/randread8k-rs8k-32M.txt,s,ext4,vm,ext4,,{ram}\n",
            f"fio/randread8k-rs8k-32M.txt,s,no stack,vm,,,{ram}\n",
            f"fio/randread8k-rs8k-32M.txt,s,other host,nas,zfs,,{ram}\n",
        )
    ):
        tmp = tmp_path / f"labels{i}"
        tmp.mkdir()
        ((label, g),) = _bounds(tmp, rows).items()
        assert (label, g.cache_bytes, g.cache_where, g.codes) == (label, ram, "of RAM (+ L2ARC)", ("cache",))
        assert design.sentence(label, g) == (
            f"{label}: its working set of 32.0 MiB fits in the 23.54 GiB of RAM (+ L2ARC) that can cache it, and its "
            "I/O goes through that cache."
        )


def test_09_sizes_in_binary_units_with_three_figures(tmp_path):
    """09 printed the published MYSERVER run's 7888M as '7.70312 GiB' and '7.70312G', the trial's 256M as '0.25G':
    sizes go through prose.size, as everywhere (7888 MiB = 8,271,167,488 B = 7.70 GiB)."""
    from storagelab.analysis import bonnie_table
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(FIXTURES / "bonnie" / "published" / "bonnie-1.96-myserver-forum-7888M.txt", raw / "myserver.txt")
    shutil.copy(SRC / "bonnie" / "zfsfuse-stripe2-s256M-f.txt", raw / "stripe2.txt")
    s = ingest([raw], db_path=tmp_path / "db.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    c = open_db(tmp_path / "db.duckdb")
    try:
        res = bonnie_table.analyse(c, Selection(study="(unlabelled)"))
    finally:
        c.close()
    assert (
        "The runs use different file sizes (256.0 MiB, 7.70 GiB): a size below twice the RAM can be answered from "
        "cache, so compare like sizes." in [str(f) for f in res.findings]
    )
    html = bonnie_table.html_table(res["table"])
    assert "<td>7.70 GiB</td>" in html and "<td>256.0 MiB</td>" in html and "7.70312" not in html


def test_02_leaves_out_what_05_08_and_10_leave_out(con):
    """The one verdict: the runs 02's tuned-vs-default frame marks suspect are those run_verdicts.left_out gives
    every other notebook, with the same reasons (the 32 MiB pair in the ARC; the 48 MiB sub-second writes)."""
    from storagelab.analysis import recordsize, run_verdicts

    sel = Selection(study=STUDY)
    left = run_verdicts.left_out(con, sel)
    tuned = recordsize.analyse(con, sel)["tuned"]
    mine = {
        (r["file_id"], r["doc_index"], r["direction"]): r["why"] for r in tuned.iter_rows(named=True) if r["suspect"]
    }
    assert mine == {k: v for k, v in left.items() if k[0] in set(tuned["file_id"].to_list())}
    assert sorted(set(mine.values())) == ["⚠ cache", "⚠ stall, sub-second, cache"]
    assert tuned.filter(~pl.col("suspect"))["label"].sort().to_list() == ["rs128k 160M file", "rs8k 160M file"]


def test_a_machine_whose_arc_maximum_changed(tmp_path):
    """Host vm's ARC statistics print two c_max values (the trial's 100 MiB, and a FreeBSD 14 snapshot's 2.96 GiB
    labelled as the same host: an ARC resized between them): the 160 MiB working set lies between them, so the
    cache check is not made, and 02/05/08 say why, naming both values and their lines, instead of picking one."""
    from storagelab.analysis import design

    freebsd = FIXTURES / "arcstats" / "freebsd-14" / "sysctl-kstat.zfs.misc.arcstats.txt"
    df = _bounds(
        tmp_path,
        "arcstats-later.txt,s,arcstats later,vm,zfs,,\nfio/randread8k-rs8k-160M.json,s,zfs 160M,vm,zfs,,25276510208\n",
        extra=((freebsd, "arcstats-later.txt"),),
        frame=True,
    )
    f = design.flags_of(df.row(0, named=True))
    assert (f.working_set_bytes, f.cache_bytes, f.cache_high_bytes, f.fits_in_cache) == (
        160 * 2**20,
        104857600,
        3178811392,
        None,
    )
    assert design.missing(df) == [
        "the cache check (working set against the ARC maximum) could not be made for zfs 160M (160.0 MiB, ARC "
        "maximum (c_max changed over time: 2.96 GiB in arcstats-later.txt line 107, 100.0 MiB in "
        "arcstats-sysctl-style.txt line 2)): its machine's c_max changed over time and the working set lies between "
        "its values, so whether the ARC could hold it during the run is not known. Take the ARC statistics (`cat "
        "/proc/spl/kstat/zfs/arcstats`) just before the run and label them with its study and host"
    ]
    assert design.notes(df) == [] and design.sentences(df) == []
