"""Issue 29: from a number in a finding to the raw lines it came from. Each analysis attaches the lines of the
numbers it states to its sentence (analysis.result.Finding); present.findings, in a report run, links each number to
the excerpt page a chart's mark opens (excerpts.linked). These tests render the links as a report run does and
read the pages they open: the exact lines highlighted, on the demo data (tests/conftest.py seed_db) and on the
lab's real standard run (fixtures/fio/3.33/lab-standard)."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES
from test_analysis_fio_newuser_h6 import db_b, res_b  # noqa: F401  (h6's published ZFS logs, non-default steady)
from test_fio_knee import mx200  # noqa: F401  (the MX200 sweeps database, a fixture)

from storagelab import excerpts, paths, present
from storagelab.analysis import (
    Selection,
    alignment,
    bonnie_table,
    dedup,
    disk_card,
    fio_views,
    open_db,
    recordsize,
    scaling,
    stacks,
    transports,
)
from storagelab.analysis.result import Finding, Result, cite
from storagelab.store import ingest

LINK = re.compile(r"\[([^\]]+)\]\((raw/[^ )#]+)(?:#L\d+)? \"([^\"]*)\"\)")
HL = re.compile(r'<span id="L(\d+)" class="hl">')
HEAD = re.compile(r"<h[12] style='font-size:1[46]px'>([^<]*?): lines ")


def opened(finding: str, folder: Path) -> list[tuple[str, list[tuple[str, list[int]]]]]:
    """Each link of ``finding`` as a report renders it: (its text, [(file, the line numbers its page highlights)])."""
    out = []
    for text, href, _title in LINK.findall(excerpts.linked(finding, excerpts.Excerpts(folder))):
        page = (folder / href).read_text(encoding="utf-8")
        heads = list(HEAD.finditer(page))  # one per file shown: a computed number's page shows each input
        ends = [h.start() for h in heads[1:]] + [len(page)]
        files = [
            (html.unescape(h.group(1)), [int(n) for n in HL.findall(page, h.end(), e)])
            for h, e in zip(heads, ends, strict=True)
        ]
        out.append((text, files))
    return out


def raw_line(path: str, n: int) -> str:
    return (paths.ROOT / path).read_text(encoding="utf-8").split("\n")[n - 1]


def the(findings: list[str], start: str) -> Finding:
    hits = [f for f in findings if f.startswith(start)]
    assert len(hits) == 1, [f[:80] for f in findings]
    return hits[0]


BONNIE = "data/raw/freebsd-bonnie-dedup/"


def test_01_a_layout_against_one_disk_and_the_layout_tables_ratios_open_their_rows(seed_db, tmp_path):
    with open_db(seed_db) as con:
        bonnie = scaling.analyse(con, Selection(study="freebsd-bonnie-dedup")).findings
        sweep = scaling.analyse(con, Selection(study="thumper-x4500")).findings
    pool, one = (BONNIE + "bonnie-raid1-aligned.txt", [4, 5]), (BONNIE + "bonnie-single-disk.txt", [4, 5])
    assert opened(the(bonnie, "bonnie++ seeks: raid1 (aligned)"), tmp_path) == [
        ("220.6/s", [pool]),
        ("145.7/s", [one]),
        ("1.51x", [pool, one]),
    ]
    csv = "data/raw/thumper-x4500/layout-sweep.csv"
    assert opened(the(sweep, "Layout table, dd_write mirror"), tmp_path) == [
        ("63.2 MiB/s", [(csv, [63])]),  # one vdev (1x46)
        ("2.09x", [(csv, [66]), (csv, [63])]),  # two vdevs over one
        ("342.4 MiB/s", [(csv, [129])]),  # 23x2
        ("5.42x", [(csv, [129]), (csv, [63])]),
    ]
    assert raw_line(csv, 63).split(",")[:2] == ["dd_write", "1x46"] and raw_line(csv, 63).endswith(",63.2")
    assert raw_line(csv, 129).split(",")[:2] == ["dd_write", "23x2"] and raw_line(csv, 129).endswith(",342.4")


def test_02_a_zdb_summary_and_a_block_size_histogram_open_their_lines(ztest_db, tmp_path):
    """The average logical block and allocated / physical: the zdb -b summary; the histogram's sums: its rows (one
    range), the top bucket's share its own row too."""
    with open_db(ztest_db) as con:
        found = recordsize.analyse(con, Selection(study="ztestlab")).findings
    got = _names(opened(the(found, "Measured (ztest, zdb -b)"), tmp_path))
    assert got == [("60.1 KiB", [("ztestlab/zdb-b.txt", list(range(7, 15)))]), ("1.962", got[0][1])]
    rows = [("ztestlab/zdb-bb.txt", list(range(83, 99)))]
    assert _names(opened(the(found, "Measured (ztest, zdb -bb block size histogram)"), tmp_path)) == [
        ("5,089", rows),
        ("310.5 MiB", rows),
        ("61%", rows),
        ("22%", [("ztestlab/zdb-bb.txt", [90]), *rows]),
    ]
    page = excerpts.Excerpts(tmp_path)  # the top bucket's row: zdb's 64K line
    top = LINK.findall(excerpts.linked(the(found, "Measured (ztest, zdb -bb"), page))[-1][1]
    assert "<b>    90</b>      64K:" in (tmp_path / top).read_text(encoding="utf-8")


def test_01_02_a_figure_the_study_only_states_opens_its_claims_line(seed_db, tmp_path):
    """No raw log behind it: the claims.csv line that states it (as the charts' bars of stated figures link)."""
    claims = "papers/ars-zfs-vs-raid/claims.csv"
    with open_db(seed_db) as con:
        two = scaling.analyse(con, Selection(study="ars-zfs-vs-raid")).findings
        rs = recordsize.analyse(con, Selection(study="ars-zfs-vs-raid")).findings
    assert opened(the(two, "Stated by the study (no raw data): single disk"), tmp_path) == [
        ("202 %", [(claims, [2])]),
        ("2.02x", [(claims, [2])]),
        ("+1.0 %", [(claims, [2])]),
    ]
    assert raw_line(claims, 2).startswith("ars-2vdev-single-pct,")
    assert opened(the(rs, "Stated by the study (no raw data), 1M recordsize speed-up"), tmp_path) == [
        ("950", [(claims, [19])]),
        ("568 MiB/s", [(claims, [18])]),
        ("1.673", [(claims, [19]), (claims, [18])]),
    ]


def test_03_a_ratio_opens_both_runs_and_each_value_its_own_line(seed_db, tmp_path):
    with open_db(seed_db) as con:
        res = alignment.analyse(con, Selection(study="freebsd-bonnie-dedup"))
    before, after = BONNIE + "bonnie-raid1-sec63-cache-log.txt", BONNIE + "bonnie-raid1-aligned-cache-log.txt"
    assert opened(the(res.findings, "block write:"), tmp_path) == [
        ("10.4 MiB/s", [(before, [4])]),
        ("78.9 MiB/s", [(after, [5])]),
        ("7.59x", [(before, [4]), (after, [5])]),
    ]
    assert " 10.4m " in raw_line(before, 4) and " 78.9m " in raw_line(after, 5)  # bonnie++'s own cells
    assert opened(the(res.findings, "2 partition(s)"), tmp_path) == [
        ("2 partition(s)", [(BONNIE + "gpart-ada3.txt", [4]), (BONNIE + "gpart-ada5.txt", [4])])
    ]
    # the test size: the file size each run's bonnie++ line gives, and its ratio to the RAM (-r) with both lines
    runs = [(before, [4]), (after, [5])]
    assert opened(the(res.findings, "Test size, before and after runs"), tmp_path) == [
        ("64.00 GiB", runs),
        ("2.0x", runs),
    ]
    # zpool list states: each figure its pool's line
    z_after, z_before = BONNIE + "zpool-list-after.txt", BONNIE + "zpool-list-before.txt"
    assert [(t, f) for t, f in opened(the(res.findings, "Other logs of pool raid1"), tmp_path)] == [
        ("88 % full", [(z_after, [4])]),
        ("41 % fragmented", [(z_after, [4])]),
        ("DEDUP 1.19x", [(z_after, [4])]),
        ("95 % full", [(z_before, [6])]),
        ("47 % fragmented", [(z_before, [6])]),
        ("DEDUP 1.17x", [(z_before, [6])]),
    ]
    assert raw_line(z_after, 4).split()[6:9] == ["41%", "88%", "1.19x"]
    # another pool's allocated / physical: its zdb -b summary
    assert opened(the(res.findings, "  Evidence from another pool"), tmp_path) == [
        ("1.378x", [(BONNIE + "zdb-b-archiv.txt", list(range(9, 16)))])
    ]
    # the hypothesis: the 'before' values their line, the delete ratio both runs' lines
    assert opened(the(res.findings, "Hypothesis, not tested"), tmp_path) == [
        ("2764.8 MiB/s", [(before, [4])]),
        ("10.4 MiB/s", [(before, [4])]),
        ("22.1x", [(before, [9]), (after, [10])]),
        ("1.19x", [(z_after, [4])]),
    ]
    # the parameters' arithmetic has no raw line: no link
    assert opened(the(res.findings, "Arithmetic: LBA 63"), tmp_path) == []


def test_04_a_bp_count_and_an_estimate_open_their_zdb_and_zpool_lines(seed_db, tmp_path):
    with open_db(seed_db) as con:
        res = dedup.analyse(con, Selection(study="freebsd-bonnie-dedup"))
    zdb, zpool = BONNIE + "zdb-b-raid1.txt", BONNIE + "zpool-list-before.txt"
    # the bp count and what the parameters (320 B per entry, the 7.75 GiB budget) make of it: its zdb -b lines
    one = [(zdb, list(range(9, 16)))]
    assert opened(the(res.findings, "Pool raid1: 35,419,785 block pointers"), tmp_path) == [
        ("35,419,785", one),
        ("10.56 GiB", one),
        ("11.3 GB", one),
        ("234 B", one),
    ]
    assert raw_line(zdb, 9).split() == ["bp", "count:", "35419785"]
    both = [(zdb, list(range(9, 16))), (zpool, [6])]
    assert opened(the(res.findings, "Pool raid1, best estimate"), tmp_path) == [
        ("22,622,993", both),
        ("6.55 GiB to 6.95 GiB", both),
    ]
    assert raw_line(zpool, 6).split()[8] == "1.17x"  # the DEDUP ratio it used
    # the sensitivity arithmetic on the estimate: each number opens both inputs, its arithmetic on its page
    sens = the([f for f in res.findings if "22,622,993" in str(getattr(f, "cites", ""))], "  Alone it fits")
    assert opened(sens, tmp_path) == [
        ("367 B", both),
        ("357-378 B", both),
        ("2.97 GiB", both),
        ("8.26 GiB", both),
    ]
    pages = [href for _, href, _ in LINK.findall(excerpts.linked(sens, excerpts.Excerpts(tmp_path)))]
    assert "Arithmetic: 22,622,993 entries x 392 B." in (tmp_path / pages[-1]).read_text(encoding="utf-8")
    # zpool list against zdb -b: each read number its own line, each computed one both
    tracked = opened(the(res.findings, "Pool raid1: `zpool list` ALLOC"), tmp_path)
    assert tracked == [
        ("3.45 TiB", [(zpool, [6])]),
        ("3.46 TiB", one),
        ("0.3%", [(zpool, [6]), *one]),
        ("1.17x", [(zpool, [6])]),
        ("2.48 TiB", [(zpool, [6]), *one]),
        ("2.73 TB", [(zpool, [6]), *one]),
        ("71.7%", [(zpool, [6]), *one]),
    ]


def test_05_a_ranking_opens_each_runs_group_line(seed_db, tmp_path):
    with open_db(seed_db) as con:
        res = stacks.analyse(con, Selection(study="homelab-mergerfs"))
    fast, slow = "data/raw/homelab-mergerfs/fio-btrfs-single.txt", "data/raw/homelab-mergerfs/fio-autotier-zfs.txt"
    links = opened(the(res.findings, "`write bs=1MiB iodepth=8 numjobs=8"), tmp_path)
    assert links[:3] == [
        ("902.0 MiB/s (945.8 MB/s)", [(fast, [27])]),
        ("184.0 MiB/s (192.9 MB/s)", [(slow, [26])]),
        ("0.20x", [(slow, [26]), (fast, [27])]),
    ]
    assert raw_line(fast, 27).startswith("  WRITE: bw=902MiB/s (946MB/s)")
    assert raw_line(slow, 26).startswith("  WRITE: bw=184MiB/s (193MB/s)")


def test_05_repeats_a_run_against_them_and_a_layers_cost_open_their_runs(seed_db, tmp_path):
    """The repeats' mean and intervals: both runs' group lines with the arithmetic; a run against their prediction
    interval: the change both sides', the interval the repeats'; a layer's cost: the layered and the base run."""
    with open_db(seed_db) as con:
        res = stacks.analyse(con, Selection(study="homelab-mergerfs"))
    d = "data/raw/homelab-mergerfs/"
    reps = [
        (d + "fio-mdadm-raid1-ext4-bitmap-none-run2.txt", [1]),
        (d + "fio-mdadm-raid1-ext4-bitmap-none-run1.txt", [2]),
    ]
    assert opened(the(res.findings, "mdadm raid1 ext4 (bitmap none): 2 repeated runs"), tmp_path) == [
        ("554.0 MiB/s (580.9 MB/s)", reps),
        ("3.6 %", reps),  # the spread: sample sd / mean (19.8 / 554), as the lab, 08 and 10 say it (h6n M1)
        ("±178 MiB/s", reps),
        ("±32.1 %", reps),
        ("±308 MiB/s", reps),
        ("±55.6 %", reps),
    ]
    # their group lines: 568 and 540 MiB/s, mean 554
    assert [raw_line(f, lines[0]).strip().split(",")[0] for f, lines in reps] == [
        "WRITE: bw=568MiB/s (596MB/s)",
        "WRITE: bw=540MiB/s (567MB/s)",
    ]
    peer = the(res.findings, "  mdadm raid1 ext4 (bitmap internal) against it")
    assert opened(peer, tmp_path) == [
        ("-13.7 % (0.86x)", [(d + "fio-mdadm-raid1-ext4-bitmap-internal.txt", [2]), *reps]),
        ("245.9 MiB/s", reps),
        ("862.1 MiB/s", reps),
        ("±55.6 %", reps),
    ]
    # the stall (as 08 links it) and a mirror's members' disk stats: each device its line, their ratio both
    raid1 = d + "fio-btrfs-raid1.txt"
    assert [t for t, _ in opened(the(res.findings, "Test design: btrfs raid1"), tmp_path)] == [
        "76,061 ms",
        "1.27x",
        "44,735 ms",
        "75 %",
    ]
    assert opened(the(res.findings, "Test design: btrfs raid1"), tmp_path)[0] == ("76,061 ms", [(raid1, [31])])
    internal = d + "fio-mdadm-raid1-ext4-bitmap-internal.txt"
    assert opened(the(res.findings, "mdadm raid1 ext4 (bitmap internal): fio's disk stats"), tmp_path) == [
        ("59.62 ms", [(internal, [6])]),
        ("0.34 ms", [(internal, [7])]),
        ("174x", [(internal, [6]), (internal, [7])]),
    ]
    assert raw_line(internal, 6).strip().startswith("nvme0n1:") and raw_line(internal, 7).strip().startswith("sdb:")
    cost = the(res.findings, "mergerfs over btrfs (single NVMe) against btrfs (single NVMe)")
    assert opened(cost, tmp_path) == [
        ("-14.5 % (0.85x)", [(d + "fio-mergerfs-btrfs-single.txt", [27]), (d + "fio-btrfs-single.txt", [27])])
    ]


def test_06_a_rate_its_summary_line_and_a_receivers_wait_both_runs(seed_db, tmp_path):
    with open_db(seed_db) as con:
        res = transports.analyse(con, Selection(study="thumper-x4500"))
    d = "data/raw/thumper-x4500/"
    base, net = (d + "mbuffer-zero-to-null.txt", [1]), (d + "mbuffer-socat-network.txt", [1])
    assert opened(the(res.findings, "socat (network): "), tmp_path) == [
        ("311.0 MiB/s (326.1 MB/s)", [net]),
        ("53.3%", [net, base]),
    ]
    assert raw_line(net[0], 1) == "summary: 1e+04 Byte in 32.1 sec - average of 311 MB/s"  # mbuffer's MB/s: MiB/s
    rx, tx = (d + "mbuffer-socat-receiver.txt", [1]), (d + "mbuffer-socat-sender.txt", [2])
    assert opened(the(res.findings, "socat (receiver): its clock ran"), tmp_path) == [
        ("5.7 s", [rx, tx]),
        ("9.77 GiB", [rx]),
        ("230.9 MiB/s (242.2 MB/s)", [rx, tx]),
        ("204.0 MiB/s (213.9 MB/s)", [rx]),
    ]


def test_08_a_curve_opens_its_job_and_a_knee_the_runs_of_its_numjobs(seed_db, mx200, tmp_path):  # noqa: F811
    with open_db(seed_db) as con:
        res = fio_views.analyse(con, Selection(study="homelab-mergerfs"))
    ext4 = "data/raw/homelab-mergerfs/fio-autotier-ext4.txt"
    one = the(res.findings, "`write bs=1MiB libaio direct=1 size=16GiB runtime=60s` write on nas | autotier+ext4")
    # the figure and the p99 of its one run: both the job's lines
    job = [(ext4, list(range(5, 27)))]
    assert opened(one, tmp_path) == [("658.0 MiB/s (690.0 MB/s)", job), ("355 ms", job)]
    assert raw_line(ext4, 5).startswith("fiotest: (groupid=0, jobs=8)")
    with open_db(mx200) as con:
        knees = fio_views.analyse(con, Selection()).findings
    knee = the(knees, "Saturation knee of `randread bs=4KiB libaio direct=1 size=? runtime=60s` read on HPDL380G8 "
               "| stack not labelled | layout not labelled | MX200, numjobs 1")  # fmt: skip
    assert [(text, [Path(f).name for f, _ in files]) for text, files in opened(knee, tmp_path)] == [
        ("47,423 IOPS", ["mx200-randread-16-1.json"]),
        ("47,336 IOPS", ["mx200-randread-32-1.json"]),
    ]


@pytest.fixture(scope="module")
def durable(tmp_path_factory):
    """08 on the real fsync/fdatasync runs of fixtures/fio/durable (its own database: test_fio_durable's fixture
    writes beside its raw copy, so a second use of it in one session would find the first one's)."""
    raw = tmp_path_factory.mktemp("durable") / "raw"
    shutil.copytree(FIXTURES / "fio" / "durable", raw, ignore=shutil.ignore_patterns("*.expected.jsonl", "*.md"))
    names = sorted(p.name for p in raw.glob("*.txt"))
    (raw / "manifest.csv").write_text("path,study\n" + "".join(f"{n},durable\n" for n in names), encoding="utf-8")
    s = ingest([raw], db_path=raw.parent / "d.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (8, 0), s.errors
    with open_db(raw.parent / "d.duckdb") as con:
        return fio_views.analyse(con, Selection(study="durable"))


def _names(links):
    """``opened``'s links with each file as its folder and name (a test's raw copy lives in a temporary folder)."""
    return [(text, [(f"{Path(f).parent.name}/{Path(f).name}", lines) for f, lines in files]) for text, files in links]


def test_08_a_durable_writes_numbers_open_its_sync_and_write_sections(durable, tmp_path):
    """fio's sync percentiles and max: the job's sync section; durable writes/s (syncs over the write section's run
    time): both sections, its arithmetic on the page; write()'s p99: the write section."""
    (run,) = [f for f in durable.findings if f.startswith("fio-3.33-ext4-fsync.txt (`write")]
    sync, write = list(range(174, 203)), list(range(69, 131))
    links = [(t, [(Path(f).name, lines) for f, lines in files]) for t, files in opened(run, tmp_path)]
    name = "fio-3.33-ext4-fsync.txt"
    assert links == [
        ("0.125/0.469/3.59 ms", [(name, sync)]),
        ("6.52 ms", [(name, sync)]),
        ("6,457.4 durable writes/s", [(name, sync), (name, write)]),
        ("0.0165 ms", [(name, write)]),
    ]
    log = (tmp_path / "raw").glob("from-*.html")
    assert any(
        "Arithmetic: durable writes (fio&#x27;s count) / the write section&#x27;s run time." in p.read_text()
        for p in log
    )
    # the ranking of the runs: each end its run's sync section
    (ranked,) = [f for f in durable.findings if "runs, durable-write p99 from" in f]
    assert [(t, [Path(f).name for f, _ in files]) for t, files in opened(ranked, tmp_path)] == [
        ("0.0680 ms", ["fio-3.25-raw-nvme-optane-fdatasync.txt"]),
        ("11.7 ms", ["fio-3.25-raw-nvme-tforce-fdatasync.txt"]),
    ]


def test_08_a_steady_window_and_two_regimes_open_their_log_windows(res_b, tmp_path):  # noqa: F811
    """Non-default steady_rounds=6: the window's six log lines; two regimes: the high segment's lines, the rest's, and
    the ratio both (one line per 1-s window in the first job's bw log)."""
    log = "large_read/large_read_bw_bw.1.log"
    two = the(res_b.findings, "large_read_bw bw read: two regimes")
    rest = [(log, list(range(1, 22))), (log, list(range(31, 60)))]
    assert _names(opened(two, tmp_path)) == [
        ("2486.0 MiB/s (2606.7 MB/s)", [(log, list(range(22, 31)))]),
        ("6.1x", [(log, list(range(22, 31))), *rest]),
        ("410.0 MiB/s (429.9 MB/s)", rest),
    ]
    steady = the(res_b.findings, "tank_raidz2_nospecial_slog/slog_punisher/slog_punisher_bw bw write: steady")
    window = [("slog_punisher/slog_punisher_bw_bw.1.log", list(range(7, 13)))]
    assert _names(opened(steady, tmp_path)) == [
        ("76.9 MiB/s (80.6 MB/s)", window),
        ("16.6 %", window),
        ("0.1 %", window),
    ]


def test_08_a_stall_and_a_grid_comparison_open_their_runs(seed_db, tmp_path):
    with open_db(seed_db) as con:
        res = fio_views.analyse(con, Selection(study="homelab-mergerfs"))
    raid1 = "data/raw/homelab-mergerfs/fio-btrfs-raid1.txt"
    # the elapsed time: the group line (run=...msec); the slowest I/O: its job's section (clat max)
    assert opened(the(res.findings, "btrfs raid1: ran"), tmp_path) == [
        ("76,061 ms", [(raid1, [31])]),
        ("1.27x", [(raid1, [31])]),
        ("44,735 ms", [(raid1, list(range(6, 19)))]),
        ("75 %", [(raid1, list(range(6, 19)))]),
    ]
    assert "76061msec" in raw_line(raid1, 31) and "max=44735" in "".join(raw_line(raid1, n) for n in range(6, 19))
    fast, slow = (
        "data/raw/homelab-mergerfs/fio-btrfs-single.txt",
        "data/raw/homelab-mergerfs/fio-mergerfs-btrfs-single.txt",
    )
    grid = the(res.findings, "`write bs=1MiB libaio direct=1 size=16GiB runtime=60s` write at QD 8 x 8")
    assert opened(grid, tmp_path) == [
        ("902.0 MiB/s (945.8 MB/s)", [(fast, list(range(4, 25)))]),
        ("17.0 %", [(fast, list(range(4, 25))), (slow, list(range(4, 25)))]),
        ("771.0 MiB/s (808.5 MB/s)", [(slow, list(range(4, 25)))]),
    ]


def test_09_a_columns_range_opens_its_lowest_and_highest_run(seed_db, tmp_path):
    with open_db(seed_db) as con:
        res = bonnie_table.analyse(con, Selection(study="freebsd-bonnie-dedup"))
    assert opened(the(res.findings, "put_block (Block, MiB/s)"), tmp_path) == [
        ("10.4", [(BONNIE + "bonnie-raid1-sec63-cache-log.txt", [4])]),
        ("105.0", [(BONNIE + "bonnie-single-disk.txt", [4])]),
    ]
    # a value left out of the range (a read served from memory) links to its line too
    assert opened(the(res.findings, "get_block (Block, MiB/s)"), tmp_path)[-1] == (
        "2,764.8",
        [(BONNIE + "bonnie-raid1-sec63-cache-log.txt", [4])],
    )


def test_10_the_cards_highest_result_opens_its_job(tmp_path):
    from test_disk_card import _ingest_standard

    with open_db(_ingest_standard(tmp_path)) as con:
        res, _ = disk_card.analyse(con, Selection(study="lab"))
    links = opened(the(res.findings, "**vm, /dev/vda"), tmp_path / "report")
    # the direction's block of the job in fio's JSON document (its "write": {...} or "read": {...} object)
    got = [(text, [(Path(f).name, lines[0], lines[-1]) for f, lines in files]) for text, files in links]
    assert got == [
        ("3,096 MB/s", [("write-1m-qd1-nj1.txt", 79, 370)]),
        ("RND4K Q1T1 read", [("randread-4k-qd1-nj1.txt", 36, 332)]),
    ]
    for name, first in (("write-1m-qd1-nj1.txt", '"write" : {'), ("randread-4k-qd1-nj1.txt", '"read" : {')):
        (start, end) = next((a, b) for _, files in got for n, a, b in files if n == name)
        text = (tmp_path / "raw" / name).read_text(encoding="utf-8").split("\n")
        assert text[start - 1].strip() == first, (name, start, text[start - 1])


def test_a_finding_links_only_in_a_report_run_and_reads_as_its_sentence(tmp_path, monkeypatch):
    """The sentence is the finding (a str); a report run (its folder set) links the cited number, a notebook run by
    hand (JupyterLab: no report folder beside it) shows the same sentence without a link that would lead nowhere."""
    log = tmp_path / "run.txt"
    log.write_text("header\n  WRITE: bw=10.5MiB/s\nfooter\n", encoding="utf-8")
    f = Finding(
        "A 0.5x share of 10.5x; 10.5 MiB/s measured.", [cite("10.5 MiB/s", {"path": str(log), "line_start": 2})]
    )
    assert f == "A 0.5x share of 10.5x; 10.5 MiB/s measured." and isinstance(f, str)
    res = Result(Selection(), findings=[f, "A plain sentence."])
    monkeypatch.delenv(paths.REPORT_DIR_ENV, raising=False)
    assert present.findings(res).data == "* A 0.5x share of 10.5x; 10.5 MiB/s measured.\n* A plain sentence."
    monkeypatch.setenv(paths.REPORT_DIR_ENV, str(tmp_path / "report"))
    shown = present.findings(res).data
    href = f"raw/{excerpts._name(str(log), excerpts.hashlib.sha256(log.read_bytes()).hexdigest(), 2, 2)}#L2"
    assert shown == f'* A 0.5x share of 10.5x; [10.5 MiB/s]({href} "from: run.txt:2") measured.\n* A plain sentence.'
    assert opened(f, tmp_path / "report") == [("10.5 MiB/s", [(str(log), [2])])]


def test_a_number_is_linked_whole_and_a_cite_without_one_gets_a_lines_link(tmp_path):
    log = tmp_path / "zdb.txt"
    log.write_text("a\n\tbp count: 7\nb\n", encoding="utf-8")
    line = {"path": str(log), "line_start": 2, "line_end": 2}
    # '0.5x' is not the end of '10.5x'; the number searched is the first after the previous link
    f = Finding("10.5x then 0.5x", [cite("0.5x", line)])
    assert LINK.findall(excerpts.linked(f, excerpts.Excerpts(tmp_path)))[0][0] == "0.5x"
    assert excerpts.linked(f, excerpts.Excerpts(tmp_path)).startswith("10.5x then [0.5x](raw/")
    # a cite whose number the sentence does not write, or without one: a 'lines' link at the end
    g = excerpts.linked(Finding("Seven pointers.", [cite("", line)]), excerpts.Excerpts(tmp_path))
    assert re.fullmatch(r"Seven pointers\. \(\[lines\]\(raw/zdb\.txt-\w{8}-L2-2\.html#L2 \"from: zdb\.txt:2\"\)\)", g)
    # a file whose bytes are not the ones parsed (its SHA-256 differs) gets no link: it would show other lines
    moved = Finding("7 pointers", [cite("7", {**line, "sha256": "0" * 64})])
    assert excerpts.linked(moved, excerpts.Excerpts(tmp_path)) == "7 pointers"
