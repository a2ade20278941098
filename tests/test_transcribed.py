"""The transcribed-table parser, on the Thumper layout sweep (seed 001) and on bad input."""

from collections import Counter

import pytest
from conftest import RAW, SEEDS

from storagelab.errors import ParseError
from storagelab.parsers import detect, parse_bytes, transcribed
from storagelab.units import MiB

SWEEP = RAW / "thumper-x4500" / "layout-sweep.csv"
SEED = "001_0fa8eb419950c07e.txt"
HEADER = "test,layout,vdev_count,vdev_widths,vdev_type,size_tb,speed_mb_per_s,speed_text"
MARK = "# storagelab transcribed table v1: hand-made test table"


@pytest.fixture(scope="module")
def rows():
    return transcribed.parse(SWEEP.read_text()).rows("thumper_layouts")


def one(rows, test, layout, vdev_type):
    found = [r for r in rows if (r["test"], r["layout"], r["vdev_type"]) == (test, layout, vdev_type)]
    assert len(found) == 1, (test, layout, vdev_type)
    return found[0]


def text(*body):
    return "\n".join([MARK, HEADER, *body]) + "\n"


def fails(data, kind, line):
    with pytest.raises(ParseError) as e:
        transcribed.parse(data)
    assert (e.value.kind, e.value.line) == (kind, line), str(e.value)
    return e.value


# ----------------------------------------------------------------------------- the real table


def test_detected_by_content():
    data = SWEEP.read_bytes()
    mod, fmt = detect(data.decode())
    assert mod is transcribed and fmt == "transcribed-csv"
    parsed, _ = parse_bytes(data)
    assert parsed.tool == "transcribed" and parsed.tool_version == "v1" and parsed.n_rows == 129


def test_sniff_leaves_other_tools_alone():
    for path in [
        "thumper-x4500/mbuffer-zero-to-null.txt",
        "homelab-mergerfs/fio-zfs-mirror-zfs0.8.4.txt",
        "freebsd-bonnie-dedup/zdb-b-raid1.txt",
        "manifest.csv",
    ]:
        assert transcribed.sniff((RAW / path).read_text()) is None, path
    assert transcribed.sniff("test,layout\n# storagelab transcribed table v1: x\n") is None  # marker not first


def test_row_counts_per_test_and_vdev_type(rows):
    counts = Counter((r["test"], r["vdev_type"]) for r in rows)
    assert counts == {
        (t, v): n for t, n in (("zfs_send_read", 20), ("dd_write", 23)) for v in ("mirror", "raidz1", "raidz2")
    }
    measured = Counter((r["test"], r["vdev_type"]) for r in rows if r["measured"])
    assert measured == {
        ("zfs_send_read", "mirror"): 20,
        ("zfs_send_read", "raidz1"): 15,
        ("zfs_send_read", "raidz2"): 11,
        ("dd_write", "mirror"): 23,
        ("dd_write", "raidz1"): 15,
        ("dd_write", "raidz2"): 11,
    }
    # the send table skips the 20-, 21- and 22-vdev layouts; the write table has every count 1..23
    assert sorted({r["vdev_count"] for r in rows if r["test"] == "zfs_send_read"}) == [*range(1, 20), 23]
    assert sorted({r["vdev_count"] for r in rows if r["test"] == "dd_write"}) == list(range(1, 24))


def test_exact_values_mirror_23_vdevs_of_2(rows):
    write = one(rows, "dd_write", "23x2", "mirror")
    send = one(rows, "zfs_send_read", "23x2", "mirror")
    assert write["speed_text"] == "342.4" and send["speed_text"] == "58.2"
    # mbuffer's "MB/s" of 2008 are MiB/s: 342.4 x 2^20, not 342.4 x 10^6
    assert write["speed_bytes_per_s"] == pytest.approx(342.4 * MiB, rel=1e-12)
    assert write["speed_bytes_per_s"] == pytest.approx(359_032_422.4, rel=1e-12)
    assert write["speed_bytes_per_s"] != pytest.approx(342.4e6, rel=1e-3)
    assert send["speed_bytes_per_s"] == pytest.approx(58.2 * MiB, rel=1e-12)
    assert write["size_bytes"] == send["size_bytes"] == 11_500_000_000_000  # 1000-based TB
    assert write["vdev_count"] == 23 and write["vdev_widths"] == " ".join(["2"] * 23)
    assert (write["vdev_width_min"], write["vdev_width_max"], write["disks"]) == (2, 2, 46)


def test_exact_values_single_46_wide_vdev(rows):
    raidz2 = one(rows, "zfs_send_read", "1x46", "raidz2")
    assert raidz2["size_bytes"] == 22_000_000_000_000 and raidz2["speed_bytes_per_s"] == pytest.approx(97.6 * MiB)
    assert one(rows, "dd_write", "1x46", "raidz2")["speed_bytes_per_s"] == pytest.approx(236.8 * MiB)
    assert one(rows, "dd_write", "1x46", "raidz1")["size_bytes"] == 22_500_000_000_000
    assert one(rows, "dd_write", "1x46", "mirror")["size_bytes"] == 500_000_000_000
    mixed = one(rows, "dd_write", "1x16+2x15", "raidz1")
    assert (mixed["vdev_widths"], mixed["speed_text"], mixed["size_bytes"]) == ("16 15 15", "306.8", 21_500_000_000_000)


def test_not_run_cells_are_null_not_zero(rows):
    r = one(rows, "zfs_send_read", "23x2", "raidz2")
    assert (r["measured"], r["size_bytes"], r["speed_bytes_per_s"], r["speed_text"]) == (False, None, None, "---")
    r = one(rows, "dd_write", "14x3+2x2", "raidz1")  # 16 vdevs: the first layout without raidz1
    assert r["measured"] is False and r["speed_bytes_per_s"] is None
    assert one(rows, "dd_write", "10x4+2x3", "raidz1")["speed_text"] == "335.8"  # 12 vdevs: raidz1 still run


def test_sizes_agree_with_46_disks_of_half_a_terabyte(rows):
    """The column order of the transcription: every size is what 0.5 TB disks give for that layout."""
    parity = {"mirror": None, "raidz1": 1, "raidz2": 2}
    for r in rows:
        assert r["disks"] == 46 and r["vdev_count"] == len(r["vdev_widths"].split())
        if not r["measured"]:
            continue
        p = parity[r["vdev_type"]]
        data_disks = r["vdev_count"] if p is None else 46 - p * r["vdev_count"]
        assert r["size_bytes"] == data_disks * 500_000_000_000, r


def test_round_trip_to_the_seed_cells():
    """Rebuilding the seed's one-cell-per-line tables from the CSV gives back the seed's lines exactly."""
    if not SEEDS.exists():
        pytest.skip("shared/seeds not beside the checkout")
    seed = (SEEDS / SEED).read_text().split("\n")
    parsed = transcribed.parse(SWEEP.read_text())
    rows = parsed.rows("thumper_layouts")
    assert rows[0]["source"] == f"{SEED} lines 59-209 (zfs send read) and 216-387 (dd write)"
    for test, first, last in (("zfs_send_read", 59, 209), ("dd_write", 216, 387)):
        cells = []
        mine = [r for r in rows if r["test"] == test]
        for i in range(0, len(mine), 3):
            m, z1, z2 = mine[i : i + 3]
            assert (m["vdev_type"], z1["vdev_type"], z2["vdev_type"]) == ("mirror", "raidz1", "raidz2")
            for r in (m, z1, z2):
                size = r["size_bytes"] / 1e12 if r["size_bytes"] is not None else 0
                cells += [size, r["speed_text"]]
            cells.append(m["vdev_widths"])
        body = [ln.rstrip()[:-1].strip() for ln in seed[first - 1 + 11 : last]]
        assert len(body) == len(cells)
        for got, want in zip(cells, body, strict=True):
            assert (float(want) == got) if isinstance(got, float | int) else (want == got)


def test_line_numbers_point_into_the_csv(rows):
    lines = SWEEP.read_text().split("\n")
    for r in rows:
        assert r["line_start"] == r["line_end"]
        line = lines[r["line_start"] - 1]
        assert line.startswith(f"{r['test']},{r['layout']},") and f",{r['vdev_type']}," in line


def test_ingested_into_duckdb(tmp_path):
    from storagelab.store import connect, ingest

    db = tmp_path / "t.duckdb"
    s = ingest([SWEEP], db_path=db, manifest_path=RAW / "manifest.csv", parquet_dir=False, progress=False)
    assert s.failed == 0, s.errors
    con = connect(db, read_only=True)
    try:
        got = con.execute("""
            SELECT t.speed_bytes_per_s, t.size_bytes, f.study, f.tool FROM thumper_layouts t JOIN files f USING (file_id)
            WHERE t.test = 'dd_write' AND t.vdev_type = 'mirror' AND t.vdev_count = 23""").fetchall()
        best = con.execute("""SELECT layout, speed_text FROM thumper_layouts WHERE test = 'zfs_send_read'
                              ORDER BY speed_bytes_per_s DESC NULLS LAST LIMIT 1""").fetchone()
    finally:
        con.close()
    assert got == [(pytest.approx(342.4 * MiB), 11_500_000_000_000, "thumper-x4500", "transcribed")]
    assert best == ("4x8+2x7", "174.0")  # zfs send read peaks with 6 raidz1 vdevs of 8 8 8 8 7 7 disks


# ----------------------------------------------------------------------------- other tables, lenient parts


def test_hand_made_table_with_crlf_blank_and_comment_lines():
    data = text("", "# a note", 'send,2x3,2,3 3,raidz1,4,"12.5",12.5', "send,2x3,2,3 3,mirror,0,,---", "")
    rows = transcribed.parse(data.replace("\n", "\r\n")).rows("thumper_layouts")
    assert [(r["vdev_type"], r["line_start"]) for r in rows] == [("raidz1", 5), ("mirror", 6)]
    assert rows[0]["speed_bytes_per_s"] == 12.5 * MiB and rows[0]["size_bytes"] == 4_000_000_000_000
    assert rows[0]["source"] == "hand-made test table" and rows[1]["measured"] is False


# ----------------------------------------------------------------------------- bad input


def test_empty_and_blank():
    fails("", "empty", 1)
    fails("\n  \n", "empty", 1)


def test_marker_only_and_header_only_are_truncated():
    fails(MARK + "\n", "truncated", 2)
    fails(MARK + "\n" + HEADER + "\n", "truncated", 2)


def test_wrong_first_line_and_version():
    fails("test,layout\n", "invalid", 1)
    fails("# storagelab transcribed table v2: x\n" + HEADER + "\n", "unsupported-version", 1)
    fails("# storagelab transcribed table v1\n" + HEADER + "\n", "invalid", 1)  # no source


def test_unknown_header():
    e = fails(MARK + "\nlayout,speed\n1x46,3\n", "invalid", 2)
    assert HEADER in e.expected


def test_truncated_last_row():
    fails(text("send,1x46,1,46,mirror,0.5,43.2,43.2", "send,2x23,2,23 23,mir"), "truncated", 4)
    fails(text("send,2x23,2,23 23,mir", "send,1x46,1,46,mirror,0.5,43.2,43.2"), "invalid", 3)


def test_numbers_are_checked():
    e = fails(text("send,1x46,1,46,mirror,0.5,4x.2,4x.2"), "invalid", 3)
    assert "speed_mb_per_s" in str(e)
    fails(text("send,1x46,1,46,mirror,half,43.2,43.2"), "invalid", 3)
    fails(text("send,1x46,1,46,mirror,-0.5,43.2,43.2"), "invalid", 3)
    fails(text("send,1x46,1,46,mirror,0.5,nan,nan"), "invalid", 3)
    fails(text("send,1x46,1,46,mirror,0.5,43.2,43.3"), "invalid", 3)  # speed_text disagrees
    fails(text("send,1x46,1,46,mirror,0.5,43.2,---"), "invalid", 3)  # a number for a '---' cell
    fails(text("send,1x46,1,46,mirror,0,43.2,43.2"), "invalid", 3)  # measured but size 0


def test_layout_consistency_is_checked():
    fails(text("send,1x46,2,46,mirror,0.5,43.2,43.2"), "invalid", 3)  # vdev_count
    fails(text("send,2x23,2,23 22,mirror,1,45.0,45.0"), "invalid", 3)  # layout vs widths
    fails(text("send,1x46,1,46 x,mirror,0.5,43.2,43.2"), "invalid", 3)
    fails(text("send,1x0,1,0,mirror,0.5,43.2,43.2"), "invalid", 3)
    fails(text("send,1x46,1,46,raid5,0.5,43.2,43.2"), "invalid", 3)
    fails(text("Send me,1x46,1,46,mirror,0.5,43.2,43.2"), "invalid", 3)


def test_duplicate_rows_and_bad_csv():
    row = "send,1x46,1,46,mirror,0.5,43.2,43.2"
    e = fails(text(row, row), "invalid", 4)
    assert "line 3" in str(e)
    fails(text('send,1x46,1,46,mirror,"0.5,43.2,43.2'), "invalid", 3)


def test_garbage_is_not_claimed_and_parse_says_so():
    junk = "\x00\x01 garbage \xff\n" * 3
    assert transcribed.sniff(junk) is None
    fails(junk, "invalid", 1)
