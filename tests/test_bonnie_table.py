"""Notebook 09's bon_csv2html-style table of bonnie++ runs, on the FreeBSD study's real outputs."""

import polars as pl
import pytest

from storagelab.analysis import Selection, bonnie_table, open_db


@pytest.fixture(scope="module")
def res(seed_db):
    con = open_db(seed_db)
    yield bonnie_table.analyse(con, Selection(study="freebsd-bonnie-dedup"))
    con.close()


def test_one_row_per_run_in_display_units(res):
    tab = res["table"]
    assert tab.height == 5
    rows = {r["label"]: r for r in tab.iter_rows(named=True)}
    single = rows["single disk (aligned)"]
    assert (single["put_block"], single["get_block"], single["seeks"]) == (105.0, 179.0, 145.7)  # '105m', '179m'
    assert single["put_block_cpu"] == 7.0 and single["size_bytes"] == 64 * 2**30
    sec63 = rows["raid1, sector 63 (cache+log)"]
    assert sec63["put_block"] == 10.4 and round(sec63["get_block"], 1) == 2764.8  # '10.4m', '2.7g'
    assert round(sec63["seq_delete"], 6) == 165.746758  # files/s
    assert sec63["seq_create"] is None and sec63["seq_create_too_fast"] is True  # '+++++'


def test_html_keeps_too_fast_and_units(res):
    page = bonnie_table.html_table(res["table"])
    assert page.count("<td>+++++</td>") == 5 * 4  # seq/ran create and read: too fast in every run
    assert ">0.0<" not in page  # no rate shown as zero (a 0 %CP is bonnie++'s own)
    assert "<th>MiB/s</th><th>%CP</th>" in page and "<th>seeks/s</th>" in page and "<th>files/s</th>" in page
    assert '<th colspan="6">Sequential Output</th>' in page and '<th colspan="4">Sequential Input</th>' in page
    assert ">105.0<" in page and ">2764.8 (from memory)<" in page


def test_shading_best_green_worst_red(res):
    page = bonnie_table.html_table(res["table"])
    assert 'hsl(120, 60%, 85%)"><td style="background: hsl(' not in page  # a value cell, then its %CP cell
    assert '<td style="background: hsl(120, 60%, 85%)">105.0</td>' in page  # best block write
    assert '<td style="background: hsl(0, 60%, 85%)">10.4</td>' in page  # worst block write


def test_the_cache_artefact_is_not_shaded_best(res):
    """analyses-2 low: the '2.7g' block read (99 %CP) had been shaded green as the best block read."""
    tab = res["table"]
    flagged = tab.filter(pl.col("get_block_flag").is_not_null())
    assert flagged["label"].to_list() == ["raid1, sector 63 (cache+log)"] and flagged["get_block_cpu"][0] == 99.0
    page = bonnie_table.html_table(tab)
    assert '<td class="flagged" title="from memory">2764.8 (from memory)</td>' in page
    assert '<td style="background: hsl(120, 60%, 85%)">235.0</td>' in page  # the best block read ranked
    assert (
        "get_block (Block, MiB/s): 179.0 (single disk (aligned)) to 235.0 (raid1 (aligned, cache)); not ranked: "
        "2,764.8 (raid1, sector 63 (cache+log): a block read at 90 %CP or more, served from memory)."
    ) in res.findings


def test_a_rate_the_ingest_warned_about_is_not_named_best(tmp_path):
    """new-user-2 low: bonnie++ 2.00a -q prints the text table (stderr) with file-creation rates through an integer
    conversion (1024 for 1924/s in its CSV); without the CSV line the ingest flags them, and 09 ranks them no more
    (combined_sync's 871 random creates/s is the only rankable one)."""
    from conftest import FIXTURES, ingest_unlabelled

    src = FIXTURES / "bonnie" / "2.00a"
    db = ingest_unlabelled([src / "quiet.err.txt", src / "combined_sync.txt"], tmp_path)
    with open_db(db) as con:
        res = bonnie_table.analyse(con, Selection(study=""))
    rows = {r["path"].split("/")[-1]: r for r in res["table"].iter_rows(named=True)}
    assert (rows["quiet.err.txt"]["ran_create"], rows["quiet.err.txt"]["ran_create_flag"]) == (1024.0, "unreliable")
    assert (rows["combined_sync.txt"]["ran_create"], rows["combined_sync.txt"]["ran_create_flag"]) == (871.0, None)
    text = "\n".join(res.findings)
    assert "ran_create (Create, files/s): not ranked: 1,024.0 (tests/fixtures/bonnie/2.00a/quiet.err.txt: " in text
    assert "a rate bonnie++ printed through an integer conversion, with no CSV line to correct it)." in text
    page = bonnie_table.html_table(res["table"])
    assert '<td class="flagged" title="unreliable">1,024 (unreliable)</td>' in page


def test_labels_are_escaped():
    tab = pl.DataFrame(
        {
            "file_id": [1],
            "run_index": [0],
            "label": ["<script>alert(1)</script>"],
            "machine": ["m&m"],
            "version": ["1.98"],
            "size_bytes": [2**30],
            "chunk_bytes": [None],
            "concurrency": [1],
            "num_files": [16],
            "path": ["x"],
        }
    )
    for _, t, _ in bonnie_table.COLUMNS:
        tab = tab.with_columns(
            pl.lit(None, pl.Float64).alias(t),
            pl.lit(None, pl.Float64).alias(f"{t}_cpu"),
            pl.lit(None, pl.Float64).alias(f"{t}_latency_ns"),
            pl.lit(None, pl.Boolean).alias(f"{t}_too_fast"),
        )
    page = bonnie_table.html_table(tab)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "m&amp;m" in page


def test_findings_and_no_runs(seed_db, res):
    assert res.findings[0] == "5 bonnie++ run(s) from 5 file(s) for study freebsd-bonnie-dedup."
    assert (
        "put_block (Block, MiB/s): 10.4 (raid1, sector 63 (cache+log)) to 105.0 (single disk (aligned))."
        in res.findings
    )
    assert res.headline["fastest block write"] == "single disk (aligned): 105.0 MiB/s"
    con = open_db(seed_db)
    empty = bonnie_table.analyse(con, Selection(study="thumper-x4500"))
    con.close()
    assert not empty.has("table") and empty.missing[0].startswith("no bonnie++ runs for study thumper-x4500")


def test_block_lines_keep_too_fast(tmp_path, res):
    """Real bonnie++ 2.00a runs: '+++++' stays '+++++' in the notebook's printed lines, never 'n/a' or 0."""
    from conftest import FIXTURES, ingest_unlabelled

    src = FIXTURES / "bonnie" / "2.00a"
    db = ingest_unlabelled([src / "direct_n0.out.txt", src / "plain.out.txt"], tmp_path)
    con = open_db(db)
    tab = bonnie_table.analyse(con, Selection(study=""))["table"]
    con.close()
    assert bonnie_table.block_lines(tab) == [
        "tests/fixtures/bonnie/2.00a/direct block write  131.8 MiB/s, block read   +++++ MiB/s",  # CSV 134917 K/s
        "tests/fixtures/bonnie/2.00a/plain. block write  +++++ MiB/s, block read   +++++ MiB/s",
    ]
    assert bonnie_table.block_lines(res["table"])[-1] == (
        "single disk (aligned)              block write  105.0 MiB/s, block read   179.0 MiB/s"
    )


def test_file_size_against_twice_the_ram_and_block_tests_too_fast(tmp_path):
    """Notebook 09 checks each run's file against twice the RAM (bonnie++'s rule), from the manifest's ram_bytes or
    bonnie++ -r, says where the RAM is unknown, and names runs whose block tests were all too fast (new-user trial:
    a 256 MiB run on a 47 GiB machine, all '+++++', gave no word of it)."""
    import shutil

    from conftest import FIXTURES

    from storagelab.store import ingest

    src = FIXTURES / "bonnie" / "2.00a"
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("plain.out.txt", "big_n16.out.txt", "chunk_c2.out.txt"):
        shutil.copy(src / name, raw / name)
    (raw / "manifest.csv").write_text(
        "path,study,label,ram_bytes,command\n"
        f"plain.out.txt,mine,small file,{4 * 2**30},\n"
        "big_n16.out.txt,mine,no ram known,,\n"
        "chunk_c2.out.txt,mine,told -r 32,,bonnie++ -d /w -u root -s 64M:4k -r 32 -n 1 -c 2 -m lab\n"
    )
    db = tmp_path / "b.duckdb"
    ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False, workers=1)
    con = open_db(db)
    res = bonnie_table.analyse(con, Selection(study="mine"))
    con.close()
    assert (
        "small file: a 64.0 MiB file, 0.02x the 4.00 GiB of RAM (the manifest's ram_bytes): below twice the RAM "
        "(bonnie++'s own rule), so its block rates can be cache speeds, not the disks'." in res.findings
    )
    assert not [f for f in res.findings if f.startswith("told -r 32: a ")]  # 64 MiB = 2 x 32 MiB: not below
    assert res.missing == [
        "the machine's RAM for 1 run(s) (no ram known): label ram_bytes in the manifest (storagelab lab does) to "
        "check each file size against twice the RAM"
    ]
    assert (
        "small file: every block test (put_block, rewrite, get_block) too fast for bonnie++ to measure (+++++): "
        "the file is too small for this machine; run it with at least twice the RAM." in res.findings
    )


def test_latency_in_the_unit_bonnie_prints():
    """bonnie++ prints whole us under 0.1 s, ms up to 100 s, s above (it printed 15491us; the table said 15ms)."""
    from storagelab.analysis.bonnie_table import _latency

    assert [_latency(v) for v in (92e3, 15_491e3, 99_999e3, 184e6, 12_422e6, 99_999e6, 437e9, None)] == [
        "92us",
        "15491us",
        "99999us",
        "184ms",
        "12422ms",
        "99999ms",
        "437s",
        "",
    ]


def test_small_per_char_rates_keep_two_significant_digits():
    """53, 115 and 139 K/s per-char rates had all been shown as '0.1' MiB/s."""
    assert [bonnie_table._value(k * 1024 / 2**20) for k in (53, 115, 139)] == ["0.052", "0.11", "0.14"]
    assert bonnie_table._value(2764.8) == "2764.8" and bonnie_table._value(2764.8, ",") == "2,764.8"


def test_a_small_file_against_a_large_ram_keeps_its_digits_and_repeats_say_so_once(tmp_path):
    """Finding 20 of the new-user trial: 03 and 09 said a 64 MiB file was '0.0x' / '0.00x the 16.00 GiB of RAM', and
    09 printed the same caveat once per run under the same label, and 'n/a MiB/s' for a -s 0 run. The trial's four
    bonnie++ 2.00a outputs (two 'before realign', two 'after realign', 16 GiB of RAM in the manifest) now give the
    ratio's digits, one sentence per label that counts its runs, and why a run has no block rates."""
    import shutil

    from conftest import FIXTURES

    from storagelab.analysis import alignment
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    rows = ["path,study,label,host,phase,partition_start_sector,ram_bytes"]
    for name, label, phase, sector in (
        ("plain.out.txt", "before realign", "before", 63),
        ("x1.out.txt", "before realign", "before", 63),
        ("x2.out.txt", "after realign", "after", 2048),
        ("n32.out.txt", "after realign", "after", 2048),
    ):
        shutil.copy(FIXTURES / "bonnie" / "2.00a" / name, raw / name)
        rows.append(f"{name},cold,{label},atlas,{phase},{sector},{16 * 2**30}")
    (raw / "manifest.csv").write_text("\n".join(rows) + "\n")
    db = tmp_path / "b.duckdb"
    ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False, workers=1)
    with open_db(db) as con:
        sizes_03 = [f for f in alignment.analyse(con, Selection(study="cold")).findings if "of RAM" in f]
        res09 = bonnie_table.analyse(con, Selection(study="cold"))
    sizes_09 = [f for f in res09.findings if "of RAM" in f]
    assert sizes_03 == [  # 64 MiB / 16 GiB = 1/256 = 0.0039
        "Test size, before run: a 64.0 MiB file, 0.0039x the 16.00 GiB of RAM (the manifest's ram_bytes): the whole "
        "file fits in memory, so the block numbers can be cache speeds."
    ]
    assert sizes_09 == [
        f"{label} (2 runs): a 64.0 MiB file, 0.0039x the 16.00 GiB of RAM (the manifest's ram_bytes): below twice the "
        "RAM (bonnie++'s own rule), so their block rates can be cache speeds, not the disks'."
        for label in ("before realign", "after realign")
    ]
    # n32.out.txt ran with -s 0: no block tests, said so (the trial saw 'block write n/a MiB/s' without a reason)
    assert (
        "after realign                      no block tests: no file size (bonnie++ -s 0 runs only the file creation "
        "tests)" in bonnie_table.block_lines(res09["table"])
    )
