"""bonnie++ parser.

Real data:
* seed 004 (FreeBSD blog, bonnie++ 1.98 on ZFS): data/raw/freebsd-bonnie-dedup/bonnie-*.txt;
* bonnie++ 2.00a (Debian bookworm) really run here: tests/fixtures/bonnie/2.00a/ (COMMANDS.md there);
* bonnie++ 1.03e / 1.97 / 2.00a samples quoted in docs/formats/log-formats.md C.3/C.4/C.5/C.9 (public real outputs:
  no 1.03 or 1.97 binary can be installed here). They are copied verbatim below; where the reference elides the tail
  of a CSV line with an ellipsis, the tail is rebuilt from the same run's table cells (same values, field order
  of C.9) and labelled so.
Expected numbers were read from the files by hand.
"""

import pytest
from conftest import FIXTURES, RAW

from storagelab.errors import ParseError
from storagelab.parsers import bonnie, detect

SEED = RAW / "freebsd-bonnie-dedup"
B200 = FIXTURES / "bonnie" / "2.00a"
KiB, MiB, GiB = 1024, 1024**2, 1024**3


def parse_text(text):
    return bonnie.parse(text, bonnie.sniff(text))


def parse(path):
    return parse_text(path.read_text())


def runs(p):
    return p.rows("bonnie_runs")


def res(p, run_index=0):
    """test -> result row of one run."""
    out = {}
    for r in p.rows("bonnie_results"):
        if r["run_index"] == run_index:
            assert r["test"] not in out
            out[r["test"]] = r
    return out


def perr(text):
    with pytest.raises(ParseError) as e:
        bonnie.parse(text)
    return e.value


# --- samples quoted in docs/formats/log-formats.md ---------------------------------------------------------------

# C.3 (S:33416923803, bonnie++ 1.03e), table verbatim. The CSV line is elided after `16,+++++,` in the reference:
# its tail (`+++` and five more `+++++,+++`) is rebuilt from the table's file row.
B103_TABLE = """\
Version 1.03e       ------Sequential Output------ --Sequential Input- --Random-
                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP
raid0            2G 83720  95 813061  95 1185231 100 84567  97 2828489  97  1187   0
                    ------Sequential Create------ --------Random Create--------
                    -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--
              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
                 16 +++++ +++ +++++ +++ +++++ +++ +++++ +++ +++++ +++ +++++ +++
"""
B103_CSV = (
    "raid0,2G,83720,95,813061,95,1185231,100,84567,97,2828489,97,1187.5,0,16,+++++" + ",+++" + ",+++++,+++" * 5 + "\n"
)

# C.4 (S:2612236656, bonnie++ 1.97), table verbatim; CSV elided in the middle and at the end in the reference
# (`…,8631us,18055us,…`): fields 11-47 rebuilt from the table (C.9 order: num_files,max,min,,num_dirs).
B197_TABLE = """\
Version  1.97       ------Sequential Output------ --Sequential Input- --Random-
Concurrency   1     -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP
wifo3-02        63G  1905  91 364656  24 119264  12  3457  86 306391  14 439.5  17
Latency              8631us   18055us     184ms   23985us   57565us   83422us
Version  1.97       ------Sequential Create------ --------Random Create--------
wifo3-02            -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--
              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
                 16  8891  13 +++++ +++ 17536  23 11535  17 +++++ +++ 19876  28
Latency               391us     125us     128us     375us      20us      90us
"""
B197_FILE_CSV = "16,,,,,8891,13,+++++,+++,17536,23,11535,17,+++++,+++,19876,28"
B197_FILE_LAT = "391us,125us,128us,375us,20us,90us"
B197_CSV = (
    "1.97,1.97,wifo3-02,1,1438076799,63G,,1905,91,364656,24,119264,12,3457,86,306391,14,439.5,17,"
    + B197_FILE_CSV
    + ",8631us,18055us,184ms,23985us,57565us,83422us,"
    + B197_FILE_LAT
    + "\n"
)

# C.5 (S:47501629860, bonnie++ 2.00a), verbatim.
B200_LENOVO = """\
Version 2.00a       ------Sequential Output------ --Sequential Input- --Random-
                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
lenovo          31G 1975k  99  2.5g  96  1.2g  54 4811k  99  2.4g  66 +++++ +++
Latency              6762us   15395us    9908us    4627us    7630us   37204us
Version 2.00a       ------Sequential Create------ --------Random Create--------
lenovo              -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--
              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
                 16 +++++ +++ +++++ +++ +++++ +++ +++++ +++ +++++ +++ +++++ +++
Latency               252us     179us     679us    1897us      15us     966us
"""

# C.9: CSV lines the reference quotes only up to an ellipsis (the ellipsis dropped): lines cut short.
CUT_CSV = [
    "ubuntu,8G,,,65284,18,39589,8,,,96293,8,7510.9,6,16,+++++",  # 1.03 (S:45319420719)
    "1.97,1.97,nfs-worker1,1,1545782353,2G,,1113,97,78993,7,75546,11,2102,92,271440,13,6863,53,16,,,,,407,7,"
    "+++++,+++",  # 1.97 (S:367687221)
    "1.98,2.00a,ANDREW-PC,1,1731168315,63G,,8192,5,540,99,745124,100,980550,91,2205,99,1203968,58,+++++,+++,16,,,,,"
    "+++++",  # 2.00a (S:4984231739)
]


# --- seed 004: bonnie++ 1.98 on FreeBSD/ZFS ---------------------------------------------------------------------


def test_seed_sec63_run_exact_values():
    p = parse(SEED / "bonnie-raid1-sec63-cache-log.txt")
    assert p.tool == "bonnie++" and p.format == "bonnie-text" and p.tool_version == "1.98"
    [run] = runs(p)
    assert run["source"] == "text" and run["version"] == "1.98" and run["format_version"] is None
    assert run["machine"] == "alpinaR1" and run["machine_truncated"] is False
    assert run["size_bytes"] == 64 * GiB == 68_719_476_736
    assert run["chunk_bytes"] == 8192 and run["concurrency"] == 1 and run["seeks"] == 8192
    assert run["seekers"] is None  # not printed: default or a digit 2.00a drops
    assert run["num_files_printed"] == 16 and run["num_files"] == 16 * 1024
    assert run["max_size_bytes"] == 0 and run["min_size_bytes"] == 0 and run["num_dirs"] is None
    assert run["preferred"] is True and run["paired_run_index"] is None
    assert (run["line_start"], run["line_end"]) == (4, 10)
    r = res(p)
    assert list(r) == list(bonnie.IO_TESTS + bonnie.FILE_TESTS)
    # block output 10.4m: MiB/s, not MB/s
    assert r["put_block"]["bytes_per_s"] == pytest.approx(10.4 * 2**20) == pytest.approx(10_905_190.4)
    assert r["put_block"]["bytes_per_s"] != pytest.approx(10.4e6, rel=1e-3)
    assert r["put_block"]["cpu_pct"] == 1 and r["put_block"]["value_text"] == "10.4m"
    assert r["rewrite"]["bytes_per_s"] == 8373 * 1024 == 8_573_952 and r["rewrite"]["cpu_pct"] == 1
    assert r["putc"]["bytes_per_s"] == 287 * 1024 and r["putc"]["cpu_pct"] == 99
    assert r["getc"]["bytes_per_s"] == 720 * 1024 and r["getc"]["cpu_pct"] == 99
    assert r["get_block"]["bytes_per_s"] == pytest.approx(2.7 * 2**30) and r["get_block"]["cpu_pct"] == 99
    assert r["seeks"]["ops_per_s"] == 200.0 and r["seeks"]["bytes_per_s"] is None and r["seeks"]["cpu_pct"] == 4
    # the Latency rows
    assert r["putc"]["latency_ns"] == 29_770_000 and r["putc"]["latency_text"] == "29770us"
    assert r["put_block"]["latency_ns"] == 437e9 and r["rewrite"]["latency_ns"] == 430e9
    assert r["getc"]["latency_ns"] == 14_303_000 and r["get_block"]["latency_ns"] == 391_000
    assert r["seeks"]["latency_ns"] == 859e6
    # file block: +++++ is NULL + too_fast, never 0
    sc = r["seq_create"]
    assert sc["too_fast"] is True and sc["ops_per_s"] is None and sc["cpu_pct"] is None
    assert sc["value_text"] == "+++++" and sc["latency_ns"] == 28_743_000
    sd = r["seq_delete"]
    assert sd["ops_per_s"] == 165.746758 and sd["cpu_pct"] == 0 and sd["too_fast"] is False
    assert sd["latency_ns"] == 54_405e6 and sd["suspect"] is False  # printed with decimals: a %f build
    assert r["ran_delete"]["ops_per_s"] == 566.048702 and r["ran_delete"]["cpu_pct"] == 1
    assert r["ran_delete"]["latency_ns"] == 5952e6 and r["ran_read"]["latency_ns"] == 20_000
    assert (sd["line_start"], sd["line_end"]) == (9, 10)
    assert (r["putc"]["line_start"], r["putc"]["line_end"]) == (4, 5)
    assert all(x["source"] == "text" and x["value_from"] == "text" for x in r.values())
    assert p.warnings == []


@pytest.mark.parametrize(
    "name,machine,block,rewrite,seq_delete",
    [
        ("bonnie-raid1-aligned-cache-log.txt", "alpinaR1_cache_log", "78.9m", "46.4m", 3669.165249),
        ("bonnie-raid1-aligned-cache.txt", "alpinaR1_cache", "68.9m", "39.8m", 2690.164896),
        ("bonnie-raid1-aligned.txt", "alpinaR1", "76.8m", "40.8m", 4145.272690),
        ("bonnie-single-disk.txt", "alpinaR1-single", "105m", "30.1m", 4154.577626),
    ],
)
def test_seed_aligned_runs(name, machine, block, rewrite, seq_delete):
    p = parse(SEED / name)
    [run] = runs(p)
    assert run["machine"] == machine and run["machine_truncated"] is False
    assert run["size_bytes"] == 64 * GiB
    r = res(p)
    num, unit = float(block[:-1]), {"m": MiB, "k": KiB}[block[-1]]
    assert r["put_block"]["bytes_per_s"] == pytest.approx(num * unit)
    assert r["rewrite"]["bytes_per_s"] == pytest.approx(float(rewrite[:-1]) * MiB)
    assert r["seq_delete"]["ops_per_s"] == seq_delete
    assert sum(x["too_fast"] for x in r.values()) == 4


def test_seed_cache_log_name_cut_in_io_row_whole_in_file_row():
    p = parse(SEED / "bonnie-raid1-aligned-cache-log.txt")
    # `alpinaR1_cache_ 64G` (15 characters of room) and `alpinaR1_cache_log` in the file block
    assert runs(p)[0]["machine"] == "alpinaR1_cache_log"
    assert res(p)["put_block"]["bytes_per_s"] == pytest.approx(78.9 * MiB)
    assert res(p)["get_block"]["bytes_per_s"] == 229 * MiB
    assert res(p)["seeks"]["ops_per_s"] == 229.2


def test_seed_sector63_fix_numbers():
    """The seed's headline: block output 10.4m -> 78.9m, rewrite 8373k -> 46.4m."""
    before = res(parse(SEED / "bonnie-raid1-sec63-cache-log.txt"))
    after = res(parse(SEED / "bonnie-raid1-aligned-cache-log.txt"))
    assert after["put_block"]["bytes_per_s"] / before["put_block"]["bytes_per_s"] == pytest.approx(78.9 / 10.4)
    assert after["rewrite"]["bytes_per_s"] / before["rewrite"]["bytes_per_s"] == pytest.approx(46.4 * 1024 / 8373)


COMPARISONS = [
    ("bonnie-compare-single-vs-raid1.txt", ["bonnie-single-disk.txt", "bonnie-raid1-aligned-cache-log.txt"]),
    ("bonnie-compare-sec63-vs-aligned.txt", ["bonnie-raid1-sec63-cache-log.txt", "bonnie-raid1-aligned-cache-log.txt"]),
]


@pytest.mark.parametrize("compare,singles", COMPARISONS)
def test_seed_comparison_tables_give_the_single_runs_numbers(compare, singles):
    p = parse(SEED / compare)
    assert p.format == "bonnie-text"
    assert len(runs(p)) == 2  # two IO rows under one header, two file rows under one header
    for k, single in enumerate(singles):
        mine, theirs = res(p, k), res(parse(SEED / single))
        assert list(mine) == list(theirs)
        for test in mine:
            a, b = mine[test], theirs[test]
            assert a["too_fast"] == b["too_fast"] and a["cpu_pct"] == b["cpu_pct"], test
            assert a["latency_ns"] == b["latency_ns"], test
            if a["value_text"] == b["value_text"]:
                assert (a["bytes_per_s"], a["ops_per_s"]) == (b["bytes_per_s"], b["ops_per_s"]), test
            else:  # the author cut digits: 3948.9680 for 3948.968091, 3656.1577 for 3656.157708
                assert test == "ran_delete" and b["value_text"].startswith(a["value_text"])
                assert a["ops_per_s"] == pytest.approx(b["ops_per_s"], abs=1e-3)


def test_seed_comparison_structure():
    p = parse(SEED / "bonnie-compare-sec63-vs-aligned.txt")
    r0, r1 = runs(p)
    # the author replaced the names and cut the size cells; the second file row is announced by
    # `alpinaR1_new         /sec %CP ...` instead of a header
    assert (r0["machine"], r1["machine"]) == ("alpinaR1-sec63", "alpinaR1_new")
    assert r0["size_bytes"] is None and r1["size_bytes"] is None and r0["chunk_bytes"] is None
    assert (r0["line_start"], r0["line_end"]) == (4, 13)
    assert (r1["line_start"], r1["line_end"]) == (6, 16)
    assert res(p, 1)["seq_delete"]["ops_per_s"] == 3669.165249
    assert (res(p, 1)["seq_delete"]["line_start"], res(p, 1)["seq_delete"]["line_end"]) == (15, 16)
    assert res(p, 0)["ran_delete"]["value_text"] == "566.048702"  # `566.048702 1`: CPU cell squeezed
    assert res(p, 0)["ran_delete"]["cpu_pct"] == 1
    assert any("line 4: no size cell" in w for w in p.warnings)
    q = parse(SEED / "bonnie-compare-single-vs-raid1.txt")
    assert runs(q)[0]["size_bytes"] == 64 * GiB and runs(q)[1]["size_bytes"] is None
    assert runs(q)[1]["machine"] == "alpinaR1_cache_log"


def test_seed_file_block_alone():
    """A table's second half only (file-creation block, with or without its Version line)."""
    lines = (SEED / "bonnie-raid1-sec63-cache-log.txt").read_text().splitlines(True)
    for first in (5, 6):  # from `Version  1.98 ------Sequential Create------` or from `alpinaR1   -Create--`
        p = parse_text("".join(lines[first:]))
        [run] = runs(p)
        assert run["machine"] == "alpinaR1" and run["size_bytes"] is None and run["num_files"] == 16384
        assert run["version"] == ("1.98" if first == 5 else None)
        r = res(p)
        assert list(r) == list(bonnie.FILE_TESTS)
        assert r["seq_delete"]["ops_per_s"] == 165.746758 and r["ran_delete"]["latency_ns"] == 5952e6
        assert (r["seq_delete"]["line_start"], r["seq_delete"]["line_end"]) == (9 - first, 10 - first)


# --- bonnie++ 2.00a, run here ------------------------------------------------------------------------------------


def test_plain_run_text_and_csv():
    p = parse(B200 / "plain.out.txt")
    assert p.format == "bonnie-text+csv" and p.tool_version == "2.00a"
    t, c = runs(p)
    assert (t["source"], c["source"]) == ("text", "csv")
    assert (t["paired_run_index"], c["paired_run_index"]) == (1, 0)
    assert (t["preferred"], c["preferred"]) == (False, True)
    assert t["machine"] == c["machine"] == "lab" and t["machine_truncated"] is False
    assert c["format_version"] == "1.98" and c["version"] == "2.00a" and c["seed"] == "1795282738"
    assert c["size_bytes"] == t["size_bytes"] == 64 * MiB
    assert c["seeks"] == 8192 and c["seekers"] == 5 and c["concurrency"] == 1
    assert c["chunk_bytes"] == 8192  # the 1.98+ CSV never records it: taken from the text row
    assert (c["line_start"], c["line_end"]) == (11, 11)
    rt, rc = res(p, 0), res(p, 1)
    assert rt["putc"]["value_text"] == "1051k" and rc["putc"]["value_text"] == "1051"
    assert rt["putc"]["bytes_per_s"] == rc["putc"]["bytes_per_s"] == 1051 * 1024
    assert rc["putc"]["cpu_pct"] == 78 and rc["getc"]["bytes_per_s"] == 1871 * 1024
    assert rc["put_block"]["too_fast"] and rc["put_block"]["bytes_per_s"] is None
    assert rc["putc"]["latency_ns"] == 60_230_000 and rc["ran_delete"]["latency_ns"] == 41_000
    assert rc["seq_create"]["too_fast"] and rc["seq_create"]["latency_ns"] == 144_000
    assert p.warnings == []


TEXT_CSV = sorted(p.name for p in B200.glob("*.out.txt") if "Version" in p.read_text()) + ["combined_sync.txt"]


def render_rate(kib):
    """How bonnie++ 1.98+ prints a KiB/s value in the table (docs/formats/log-formats.md C.5, bon_time.cpp print_stat)."""
    if kib < 10000:
        return f"{int(kib)}k"
    mib = kib / 1024
    if mib < 1000:
        return f"{mib:.1f}m" if mib < 100 else f"{int(mib + 0.5)}m"
    return f"{mib / 1024:.1f}g"


@pytest.mark.parametrize("name", TEXT_CSV)
def test_text_and_csv_agree(name):
    p = parse(B200 / name)
    assert p.format == "bonnie-text+csv"
    t, c = runs(p)
    assert t["paired_run_index"] == c["run_index"]
    for key in ("size_bytes", "num_files_printed", "max_size_bytes", "min_size_bytes", "num_dirs", "link_mode"):
        assert t[key] == c[key], key
    rt, rc = res(p, t["run_index"]), res(p, c["run_index"])
    assert rt.keys() == rc.keys()
    for test, a in rt.items():
        b = rc[test]
        assert (a["too_fast"], a["cpu_pct"], a["latency_text"]) == (b["too_fast"], b["cpu_pct"], b["latency_text"])
        if a["too_fast"]:
            continue
        if test in bonnie.RATE_TESTS:  # the CSV KiB/s value, printed the table's way, is the table's cell
            assert render_rate(int(b["value_text"])) == a["value_text"], test
            digits = len(a["value_text"][:-1].partition(".")[2])  # half a unit of the last printed digit
            unit = {"k": KiB, "m": MiB, "g": GiB}[a["value_text"][-1]]
            assert abs(a["bytes_per_s"] - b["bytes_per_s"]) <= 0.5 * 10**-digits * unit + KiB
        elif test == "seeks":
            assert a["ops_per_s"] == b["ops_per_s"]
        else:  # 2.00a prints garbage in the table: the text row takes the CSV rate
            assert a["value_from"] == "csv" and a["ops_per_s"] == b["ops_per_s"] and a["suspect"] is False
    assert all(w.endswith("prints them wrongly in the table)") for w in p.warnings), p.warnings


def test_garbage_create_rates_replaced_from_csv():
    p = parse(B200 / "big_n16.out.txt")
    rt, rc = res(p, 0), res(p, 1)
    # text `16 16384  96`: 16 x 1024, the bug; CSV `7186,96`
    assert rt["seq_create"]["value_text"] == "16384" and rt["seq_create"]["ops_per_s"] == 7186
    assert rt["seq_create"]["value_from"] == "csv" and rt["seq_create"]["cpu_pct"] == 96
    assert rc["seq_create"]["ops_per_s"] == 7186 and rc["seq_create"]["value_from"] == "csv"
    assert any("seq_create replaced by the CSV" in w and "text line 4 / CSV line 11" in w for w in p.warnings)
    # m and g cells
    assert rt["put_block"]["value_text"] == "361m" and rt["put_block"]["bytes_per_s"] == 361 * MiB
    assert rc["put_block"]["bytes_per_s"] == 369623 * KiB
    assert rt["rewrite"]["value_text"] == "1.7g" and rt["rewrite"]["bytes_per_s"] == pytest.approx(1.7 * GiB)
    assert rc["rewrite"]["bytes_per_s"] == 1732687 * KiB
    assert "putc" not in rt and "getc" not in rc  # -f: per-char tests not run, no rows
    assert runs(p)[0]["size_bytes"] == GiB and runs(p)[0]["num_files"] == 16384
    n32 = parse(B200 / "n32.out.txt")
    assert [res(n32, 0)[t]["value_text"] for t in ("seq_create", "ran_create")] == ["32768", "32768"]
    assert [res(n32, 0)[t]["ops_per_s"] for t in ("seq_create", "ran_create")] == [4367, 6114]


def test_text_only_garbage_create_rates_are_suspect():
    """-q puts the table on stderr: parsed alone, its create rates cannot be corrected."""
    p = parse(B200 / "quiet.err.txt")
    assert p.format == "bonnie-text"
    [run] = runs(p)
    assert run["preferred"] is True
    r = res(p)
    assert r["seq_create"]["value_text"] == "1024" and r["seq_create"]["ops_per_s"] == 1024
    assert r["seq_create"]["suspect"] is True and r["ran_create"]["suspect"] is True
    assert r["seq_create"]["cpu_pct"] == 77 and r["ran_create"]["cpu_pct"] == 69
    assert r["seq_read"]["suspect"] is False  # +++++
    assert r["putc"]["suspect"] is False and r["putc"]["bytes_per_s"] == 1348 * KiB
    assert any("suspect=true" in w for w in p.warnings)
    q = parse(B200 / "quiet.out.txt")  # the stdout of the same run: the CSV line alone
    assert q.format == "bonnie-csv"
    assert res(q)["seq_create"]["ops_per_s"] == 1402 and res(q)["ran_create"]["ops_per_s"] == 1924
    assert runs(q)[0]["chunk_bytes"] is None  # never in a 1.98+ CSV line, no text to take it from


def test_fast_mode_long_name_and_concurrency():
    p = parse(B200 / "fast_longname.out.txt")
    t, c = runs(p)
    # IO row `averyveryv 64M:4k:2`, file block `averyveryverylongma` (19), CSV whole
    assert t["machine"] == "averyveryverylongma" and t["machine_truncated"] is True
    assert c["machine"] == "averyveryverylongmachinename" and c["machine_truncated"] is False
    assert t["chunk_bytes"] == 4096 and t["concurrency"] == 2 and c["concurrency"] == 2
    rt = res(p, 0)
    assert "putc" not in rt and "getc" not in rt  # blank cells
    assert rt["put_block"]["too_fast"] and rt["put_block"]["latency_ns"] == 744_000
    assert rt["get_block"]["latency_ns"] == 190_000 and rt["seeks"]["latency_ns"] == 9_099_000
    alone = parse_text("".join((B200 / "fast_longname.out.txt").read_text().splitlines(True)[:10]))
    assert runs(alone)[0]["machine_truncated"] is None  # both cuts fill their columns: cannot tell


def test_chunk_and_concurrency_in_size_cell():
    p = parse(B200 / "chunk_c2.out.txt")
    t, c = runs(p)
    assert (t["size_bytes"], t["chunk_bytes"], t["concurrency"], t["seeks"]) == (64 * MiB, 4096, 2, 8192)
    assert c["chunk_bytes"] == 4096 and c["concurrency"] == 2


def test_seeks_count_wide_cell_and_lost_seeker_count():
    p = parse(B200 / "seeks_n0.out.txt")
    t, c = runs(p)
    assert t["seeks"] == c["seeks"] == 1_000_000
    assert t["seekers"] is None and c["seekers"] == 2  # `64M:4k::1000000`: 2.00a drops the `:2`
    rt = res(p, 0)
    assert rt["seeks"]["value_text"] == "799059" and rt["seeks"]["ops_per_s"] == 799059
    assert rt["seeks"]["cpu_pct"] == 376  # several seeker processes: over 100 %
    assert t["num_files"] is None and not any(k in rt for k in bonnie.FILE_TESTS)  # -n 0


def test_direct_io_no_file_tests():
    p = parse(B200 / "direct_n0.out.txt")
    t, c = runs(p)
    assert t["size_bytes"] == 256 * MiB and t["num_files_printed"] is None
    assert res(p, 0)["put_block"]["bytes_per_s"] == 132 * MiB
    assert res(p, 1)["put_block"]["bytes_per_s"] == 134917 * KiB
    assert res(p, 1)["seeks"]["latency_ns"] == 159e6
    assert list(res(p, 1)) == ["put_block", "rewrite", "get_block", "seeks"]


def test_file_block_only_with_sizes_and_directories():
    p = parse(B200 / "s0_dirs.out.txt")
    t, c = runs(p)
    # text `1:4096:1024/2`; CSV `1,4096,1024,,2` (num_dirs one slot right of its header name)
    for run in (t, c):
        assert run["size_bytes"] is None and run["chunk_bytes"] is None
        assert (run["num_files_printed"], run["num_files"]) == (1, 1024)
        assert (run["max_size_bytes"], run["min_size_bytes"], run["num_dirs"]) == (4096, 1024, 2)
        assert run["link_mode"] is None
    assert t["machine"] == "lab" and c["concurrency"] == 1
    assert list(res(p, 1)) == list(bonnie.FILE_TESTS)
    assert res(p, 1)["seq_create"]["ops_per_s"] == 1307 and res(p, 1)["ran_create"]["ops_per_s"] == 1376


def test_symlink_runs():
    p = parse(B200 / "s0_symlink.out.txt")
    for run in runs(p):
        assert run["link_mode"] == "symlink" and run["max_size_bytes"] is None and run["min_size_bytes"] is None
        assert run["num_files"] == 1024


def test_x2_csv_with_header_line():
    p = parse(B200 / "x2.out.txt")
    assert p.format == "bonnie-csv"
    a, b = runs(p)
    assert (a["line_start"], b["line_start"]) == (2, 3)  # line 1 is the 48-name header over 50-field lines
    assert a["seed"] == b["seed"] == "1795286269" and a["preferred"] and b["preferred"]
    assert res(p, 0)["putc"]["bytes_per_s"] == 1305 * KiB and res(p, 1)["putc"]["bytes_per_s"] == 869 * KiB
    assert res(p, 1)["putc"]["latency_ns"] == 89_339_000 and res(p, 1)["seq_create"]["ops_per_s"] == 1461
    assert res(p, 0)["seeks"]["too_fast"] is True
    x1 = parse(B200 / "x1.out.txt")
    assert len(runs(x1)) == 1 and res(x1)["getc"]["bytes_per_s"] == 2019 * KiB


def test_combined_streams():
    p = parse(B200 / "combined_sync.txt")
    t, c = runs(p)
    assert (t["line_start"], t["line_end"], c["line_start"]) == (17, 23, 24)  # progress lines before
    assert res(p, 0)["seq_create"]["ops_per_s"] == 816 and res(p, 0)["ran_create"]["ops_per_s"] == 871


CSV2TXT_WARNING = (
    "line 1: a table rebuilt by bon_csv2txt from CSV lines: its size cell is size:chunk:seeks:seekers, and a '0k' "
    "cell is the script's rendering of +++++ (or 0): stored NULL"
)


def test_bon_csv2txt_table_is_read_and_agrees_with_its_csv():
    """bon_csv2txt of x2.out.txt (2.00a; issue 25: it was refused). Every value is the CSV's: rates the script printed
    as '1305k' are 1305 KiB/s; its '0k' cells (+++++ in the CSV, CPU '+++' kept) are NULL and too_fast."""
    text = (B200 / "csv2txt_x2.txt").read_text()
    assert bonnie.sniff(text) == "bonnie-text"
    p = parse_text(text)
    assert p.warnings == [CSV2TXT_WARNING]
    csv = parse(B200 / "x2.out.txt")
    cols = ("bytes_per_s", "ops_per_s", "cpu_pct", "too_fast", "latency_ns")
    for k in (0, 1):
        got, want = res(p, k), res(csv, k)
        assert sorted(got) == sorted(want)
        assert {t: tuple(got[t][c] for c in cols) for t in got} == {t: tuple(want[t][c] for c in cols) for t in want}
    assert [
        (r["machine"], r["size_bytes"], r["seeks"], r["seekers"], r["num_files"], r["concurrency"]) for r in runs(p)
    ] == [
        ("lab", 67_108_864, 8192, 5, 1024, None),  # concurrency: bon_csv2txt does not print it
        ("lab", 67_108_864, 8192, 5, 1024, None),
    ]
    r0 = res(p, 0)
    assert (r0["putc"]["bytes_per_s"], r0["putc"]["value_text"]) == (1305 * 1024, "1305k")
    assert (r0["put_block"]["value_text"], r0["put_block"]["bytes_per_s"], r0["put_block"]["too_fast"]) == (
        "0k",
        None,
        True,
    )
    assert r0["seq_create"]["suspect"] is False  # the script prints the CSV's rate, not 2.00a's text garbage


def test_bon_csv2txt_rates_in_m_and_g_blank_cells_and_cut_names():
    p = parse(B200 / "csv2txt_big_n16.txt")
    r = res(p, 0)
    assert sorted(r) == [
        "get_block",
        "put_block",
        "ran_create",
        "ran_delete",
        "ran_read",
        "rewrite",
        "seeks",
        "seq_create",
        "seq_delete",
        "seq_read",
    ]  # -f: no putc/getc
    assert (r["put_block"]["bytes_per_s"], r["rewrite"]["bytes_per_s"]) == (361 * 1024**2, 1.7 * 1024**3)
    assert (r["get_block"]["value_text"], r["get_block"]["bytes_per_s"], r["get_block"]["too_fast"]) == (
        "0k",
        None,
        True,
    )
    assert (r["seq_create"]["ops_per_s"], r["seq_create"]["latency_ns"]) == (7186, 35_269_000)
    assert [(x["size_bytes"], x["num_files"]) for x in runs(p)] == [(1_073_741_824, 16_384)]
    p = parse(B200 / "csv2txt_fast_longname.txt")
    (run,) = runs(p)
    assert (run["machine"], run["machine_truncated"]) == ("averyveryverylong", None)  # the CSV has 28 characters
    assert [t for t, x in res(p, 0).items() if x["too_fast"]] == [
        "put_block",
        "rewrite",
        "get_block",
        "seeks",
        "seq_create",
        "seq_read",
        "seq_delete",
        "ran_create",
        "ran_read",
        "ran_delete",
    ]
    p = parse(B200 / "csv2txt_chunk_c2.txt")
    assert p.warnings == [CSV2TXT_WARNING]
    assert (res(p, 0)["getc"]["bytes_per_s"], res(p, 0)["getc"]["cpu_pct"]) == (2158 * 1024, 98)


# --- older versions and the 2.00a sample (docs/formats/log-formats.md) -------------------------------------------------------


def test_103_table_and_csv():
    p = parse_text(B103_TABLE + B103_CSV)
    assert p.format == "bonnie-text+csv" and p.tool_version == "1.03e"
    t, c = runs(p)
    assert t["version"] == "1.03e" and c["version"] == "1.03e"  # the 1.03 CSV has none: from the text
    assert c["format_version"] is None and t["concurrency"] is None and c["seed"] is None
    assert t["machine"] == c["machine"] == "raid0"
    assert t["size_bytes"] == c["size_bytes"] == 2 * GiB and c["chunk_bytes"] == 8192
    assert t["num_files"] == c["num_files"] == 16384
    rt, rc = res(p, 0), res(p, 1)
    assert rt["putc"]["bytes_per_s"] == 83720 * KiB and rt["putc"]["value_text"] == "83720"  # K/sec column
    assert rt["put_block"]["bytes_per_s"] == 813061 * KiB and rt["rewrite"]["cpu_pct"] == 100
    assert rt["get_block"]["bytes_per_s"] == 2828489 * KiB == rc["get_block"]["bytes_per_s"]
    assert rt["seeks"]["ops_per_s"] == 1187 and rc["seeks"]["ops_per_s"] == 1187.5  # %5.0f vs %.1f
    assert all(r["latency_ns"] is None for r in rt.values())  # 1.03 has no latency rows
    assert all(rt[k]["too_fast"] and rt[k]["ops_per_s"] is None for k in bonnie.FILE_TESTS)
    assert p.warnings == []  # text and CSV agree within the text's precision


def test_103_csv_alone_and_cut():
    p = parse_text(B103_CSV)
    assert p.format == "bonnie-csv" and runs(p)[0]["version"] is None
    assert res(p)["seeks"]["ops_per_s"] == 1187.5
    e = perr(CUT_CSV[0])
    assert e.kind == "truncated" and e.line == 1


def test_197_table_and_csv():
    p = parse_text(B197_TABLE + B197_CSV)
    t, c = runs(p)
    assert t["version"] == "1.97" and c["format_version"] == "1.97" and c["version"] == "1.97"
    assert t["concurrency"] == 1 and c["concurrency"] == 1 and c["seed"] == "1438076799"
    assert t["size_bytes"] == 63 * GiB and c["chunk_bytes"] == 8192 and t["seeks"] is None
    assert t["machine_truncated"] is False
    rt, rc = res(p, 0), res(p, 1)
    assert rt["put_block"]["bytes_per_s"] == 364656 * KiB and rt["put_block"]["cpu_pct"] == 24
    assert rt["seeks"]["ops_per_s"] == 439.5 and rt["seeks"]["cpu_pct"] == 17
    assert rt["rewrite"]["latency_ns"] == 184e6 and rt["putc"]["latency_ns"] == 8_631_000
    # 1.9x prints integer create rates correctly: taken as printed, not suspect
    assert rt["seq_create"]["ops_per_s"] == 8891 and rt["seq_create"]["suspect"] is False
    assert rt["seq_create"]["value_from"] == "text"
    assert rt["ran_delete"]["ops_per_s"] == 19876 and rt["ran_delete"]["latency_ns"] == 90_000
    assert rc["seq_delete"]["ops_per_s"] == 17536 and rc["seq_read"]["too_fast"]
    assert p.warnings == []
    assert perr(CUT_CSV[1]).kind == "truncated"


def test_196_s0_comma_bug_is_repaired():
    # synthetic (no real 1.96 -s 0 line is available): the 1.97 sample's file part behind a 1.96 IO
    # placeholder with one comma too few, as docs/formats/log-formats.md C.9 describes the bug
    fields = ["1.96", "1.96", "wifo3-02", "1", "1438076799"] + [""] * 13 + B197_FILE_CSV.split(",")
    fields += [""] * 6 + B197_FILE_LAT.split(",")
    line = ",".join(fields)
    assert len(fields) == 47 and bonnie.sniff(line) == "bonnie-csv"
    p = parse_text(line)
    [run] = runs(p)
    assert run["format_version"] == "1.96" and run["size_bytes"] is None and run["num_files_printed"] == 16
    r = res(p)
    assert list(r) == list(bonnie.FILE_TESTS)
    assert r["seq_create"]["ops_per_s"] == 8891 and r["ran_delete"]["latency_ns"] == 90_000
    assert any("comma bug" in w for w in p.warnings)


def test_200a_sample_table():
    p = parse_text(B200_LENOVO)
    [run] = runs(p)
    assert run["machine"] == "lenovo" and run["size_bytes"] == 31 * GiB
    r = res(p)
    assert r["putc"]["bytes_per_s"] == 1975 * KiB
    assert r["put_block"]["bytes_per_s"] == pytest.approx(2.5 * GiB) and r["rewrite"]["cpu_pct"] == 54
    assert r["get_block"]["bytes_per_s"] == pytest.approx(2.4 * GiB)
    assert r["seeks"]["too_fast"] and r["seeks"]["latency_ns"] == 37_204_000
    assert perr(CUT_CSV[2]).kind == "truncated"


# --- text/CSV disagreement, bad input ----------------------------------------------------------------------------


def test_disagreement_between_text_and_csv_is_a_warning():
    text = (B200 / "plain.out.txt").read_text()
    p = parse_text(text.replace(",lab,1,1795282738,64M,,8192,5,1051,78,", ",other,1,1795282738,64M,,8192,5,1151,79,"))
    w = "\n".join(p.warnings)
    assert "machine 'lab' in the text, 'other' in the CSV" in w
    assert "putc '1051k' in the text, '1151' in the CSV" in w and "putc CPU '78' in the text, '79'" in w
    # `361m` (%4dm, rounded) = 369664 KiB/s: agrees with 369664 -/+ (512 + 1) KiB/s (the CSV truncates)
    big = (B200 / "big_n16.out.txt").read_text()
    assert ",369623,84," in big
    for kib, ok in ((369623, True), (370177, True), (369151, True), (370178, False), (369150, False)):
        q = parse_text(big.replace(",369623,84,", f",{kib},84,"))
        assert any("put_block '361m'" in w for w in q.warnings) != ok, kib


def test_sniff_is_specific():
    for p in list(B200.glob("*.txt")):
        fmt = bonnie.sniff(p.read_text())
        if p.name.endswith(".err.txt") and p.name != "quiet.err.txt":
            assert fmt is None, p.name  # progress messages only
        else:
            assert fmt in bonnie.FORMATS, p.name
    for p in SEED.glob("bonnie-*.txt"):
        assert bonnie.sniff(p.read_text()) == "bonnie-text"
    others = [
        SEED / "zdb-b-raid1.txt",
        SEED / "gpart-ada3.txt",
        SEED / "zpool-list-before.txt",
        *sorted((FIXTURES / "fio" / "3.33").glob("*.txt")),
    ]
    assert len(others) > 10
    for p in others:
        assert bonnie.sniff(p.read_text()) is None, p.name
    assert bonnie.sniff("a,b,c\n1,2,3\n") is None
    assert detect((B200 / "plain.out.txt").read_text())[0] is bonnie


@pytest.mark.parametrize(
    "text,kind,line",
    [
        ("", "empty", 1),
        ("   \n\n", "empty", 1),
        ("hello world\nnothing here\n", "invalid", 1),
    ],
)
def test_bad_input(text, kind, line):
    e = perr(text)
    assert (e.kind, e.line) == (kind, line)


def test_truncated_tables():
    lines = (B200 / "plain.out.txt").read_text().splitlines(True)
    e = perr("".join(lines[:3]))  # the header without its row
    assert (e.kind, e.line) == ("truncated", 3) and "result row" in e.expected
    e = perr("".join(lines[:3]) + lines[3][:40] + "\n")  # a row cut short
    assert (e.kind, e.line) == ("truncated", 4)
    e = perr("".join(lines[:4]))  # 2.00a prints a Latency row under every result row
    assert (e.kind, e.line) == ("truncated", 4) and "Latency" in e.expected
    e = perr("".join(lines[:4]) + lines[4][:30])  # a Latency row cut short
    assert (e.kind, e.line) == ("truncated", 5)
    e = perr("".join(lines[:1]))  # a Version line alone
    assert (e.kind, e.line) == ("truncated", 1)
    e = perr("".join(lines[:7]))  # the file block's header without its row
    assert e.kind == "truncated"
    e = perr("".join(lines[:10]) + lines[10][:100])  # the CSV line cut short
    assert (e.kind, e.line) == ("truncated", 11) and "50 fields" in e.expected


def test_bad_cells_name_their_line():
    text = (SEED / "bonnie-raid1-sec63-cache-log.txt").read_text()
    e = perr(text.replace("10.4m", "10.4x"))
    assert (e.kind, e.line) == ("invalid", 4)
    e = perr(text.replace("  437s", "  437y"))
    assert (e.kind, e.line) == ("invalid", 5) and "latenc" in e.expected
    e = perr(text.replace("165.746758", "165.7k4675"))
    assert (e.kind, e.line) == ("invalid", 9)
    csv = (B200 / "x1.out.txt").read_text()
    e = perr(csv.replace(",1278,95,", ",12x8,95,"))
    assert (e.kind, e.line) == ("invalid", 1)
    e = perr(csv.replace("1.98,2.00a,", "1.50,2.00a,"))
    assert (e.kind, e.line) == ("unsupported-version", 1)
    e = perr(csv.strip() + ",extra\n")
    assert (e.kind, e.line) == ("invalid", 1)


def test_cuts_at_every_line_give_rows_or_parse_errors():
    text = (SEED / "bonnie-compare-sec63-vs-aligned.txt").read_text() + (B200 / "plain.out.txt").read_text()
    lines = text.split("\n")
    for i in range(len(lines)):
        for cut in ("\n".join(lines[:i]), "\n".join(lines[:i] + [lines[i][: len(lines[i]) // 2]])):
            try:
                bonnie.parse(cut)
            except ParseError as e:
                assert e.kind in ("empty", "truncated", "invalid") and e.line is not None


def test_bon_csv2txt_of_two_machines_names_each_on_its_file_row():
    """bonnie++ 1.97 `bon_csv2txt` of two runs (published: fixtures/bonnie/published): the machine's name is on each
    file-creation row too ('inez(old)        16 15257  77 ...'); it had been read as a bad files cell."""
    p = bonnie.parse((FIXTURES / "bonnie" / "published" / "bonnie-1.97-csv2txt-two-machines.txt").read_text())
    runs = list(p.rows("bonnie_runs"))
    assert [(r["machine"], r["version"], r["size_bytes"], r["num_files"]) for r in runs] == [
        ("inez(old)", "1.97", 2 * 1024**3, 16 * 1024),
        ("inez(new)", "1.97", 2 * 1024**3, 16 * 1024),
    ]
    res = {(r["run_index"], r["test"]): r for r in p.rows("bonnie_results")}
    assert res[(0, "put_block")]["bytes_per_s"] == 35513 * 1024 and res[(0, "put_block")]["latency_ns"] == 2113e6
    assert res[(1, "get_block")]["bytes_per_s"] == 102046 * 1024 and res[(1, "get_block")]["latency_ns"] == 7650e3
    assert res[(0, "seq_create")]["ops_per_s"] == 15257 and res[(0, "seq_create")]["latency_ns"] == 669e3
    assert res[(1, "ran_delete")]["ops_per_s"] == 21245 and res[(1, "ran_delete")]["latency_ns"] == 840e3
    assert res[(0, "seq_read")]["too_fast"] and res[(0, "seq_read")]["ops_per_s"] is None
    assert p.warnings == []


def test_row_with_squeezed_spaces_is_read_by_its_tokens():
    """bonnie++ 1.03 pasted in a forum (published): 'ubuntu   2G 25694  86 34366 ...' has lost the spaces that
    put the first value after column 19; every pair is there, so the row is read by its tokens and agrees with
    the CSV line that follows. It had been refused as 'result row cut short (5 of 6 tests)'."""
    p = bonnie.parse((FIXTURES / "bonnie" / "published" / "bonnie-1.03-forum-squeezed-row.txt").read_text())
    runs = list(p.rows("bonnie_runs"))
    assert [(r["source"], r["machine"], r["size_bytes"]) for r in runs] == [
        ("text", "ubuntu", 2 * 1024**3),
        ("csv", "ubuntu", 2 * 1024**3),
    ]
    text = {r["test"]: r for r in p.rows("bonnie_results") if r["run_index"] == 0}
    assert (text["putc"]["bytes_per_s"], text["putc"]["cpu_pct"]) == (25694 * 1024, 86.0)
    assert text["get_block"]["bytes_per_s"] == 26306 * 1024 and text["seeks"]["ops_per_s"] == 84.4
    assert text["seq_create"]["ops_per_s"] == 1083 and text["seq_read"]["too_fast"]
    csv = {r["test"]: r for r in p.rows("bonnie_results") if r["run_index"] == 1}
    assert all(text[t]["bytes_per_s"] == csv[t]["bytes_per_s"] for t in text)
    # a row that lost a cell is still cut short: tokens cannot say which test is missing
    with pytest.raises(ParseError):
        bonnie.parse(
            "Version  1.03       ------Sequential Output------ --Sequential Input- --Random-\n"
            "                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n"
            "Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP\n"
            "ubuntu   2G 25694  86 34366  20 12165   5 14105  61 26306   4\n"
        )
