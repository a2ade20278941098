"""zdb parser: seed outputs (FreeBSD blog, data/raw) and real zdb 2.1.11 / 2.3.2 outputs made with ztest pools
(tests/fixtures/zdb/<version>/, see COMMANDS.md there). Expected numbers were read from the files by hand."""

import math

import pytest

from storagelab.errors import ParseError
from storagelab.parsers import detect, zdb

from conftest import FIXTURES, RAW, SEEDS

Z = FIXTURES / "zdb"
MiB = 1024**2


def read(path):
    return path.read_text()


def parse(path):
    return zdb.parse(read(path))


def one(parsed, table, **where):
    rows = [r for r in parsed.rows(table) if all(r[k] == v for k, v in where.items())]
    assert len(rows) == 1, (table, where, rows)
    return rows[0]


def without_lines(rows):
    return [{k: v for k, v in r.items() if k not in ("line_start", "line_end", "text")} for r in rows]


# --- seed: FreeBSD blog, two `zdb -b` outputs pasted with their prompt lines ----------------------------

def test_seed_raid1_summary():
    p = parse(RAW / "freebsd-bonnie-dedup" / "zdb-b-raid1.txt")
    assert p.tool == "zdb" and p.format == "zdb-b"
    b = one(p, "zdb_block_stats")
    assert b["pool"] == "raid1"  # from `[root@alpina ~]# zdb -b raid1 `
    assert b["bp_count"] == 35_419_785
    assert b["ganged_count"] == 0
    assert b["bp_logical_bytes"] == 4_477_203_583_488
    assert b["bp_logical_avg_bytes"] == 126_404
    assert b["bp_physical_bytes"] == 4_252_535_812_096
    assert b["bp_physical_avg_bytes"] == 120_061
    assert b["compression_physical"] == 1.05
    assert b["bp_allocated_bytes"] == 4_270_123_028_480
    assert b["bp_allocated_avg_bytes"] == 120_557
    assert b["compression_allocated"] == 1.05
    assert b["bp_deduped_bytes"] == 463_651_233_792
    assert b["dedup_ref_gt1_count"] == 1_992_696
    assert b["dedup_ratio"] == 1.11
    assert b["bp_cloned_bytes"] is None and b["bp_cloned_count"] is None
    assert b["embedded_bp_count"] == 132_437
    assert b["dittoed_same_vdev"] == 1_466_474
    assert b["dittoed_same_metaslab"] == 0  # not printed = zero
    assert b["leaks"] == "none" and b["leaked_bytes"] == 0
    assert b["zfs_era"] == "0.8+"
    assert (b["line_start"], b["line_end"]) == (9, 15)  # bp count .. Normal class
    c = one(p, "zdb_classes")
    assert (c["class"], c["allocated_bytes"], c["used_pct"]) == ("Normal", 3_806_470_971_392, 95.50)
    e = one(p, "zdb_embedded_bps")
    assert (e["embedded_type"], e["bp_count"], e["line_start"]) == (0, 132_437, 17)
    # the progress lines (`loading concrete vdev ...`, `3.87T completed ... 277098hr`) gave no rows
    assert set(p.tables) == {"zdb_block_stats", "zdb_classes", "zdb_embedded_bps", "zdb_events"}


def test_seed_archiv_summary():
    p = parse(RAW / "freebsd-bonnie-dedup" / "zdb-b-archiv.txt")
    b = one(p, "zdb_block_stats")
    assert b["pool"] == "archiv"
    assert b["bp_count"] == 111_509_014
    assert b["bp_logical_bytes"] == 14_381_112_954_368
    assert b["bp_physical_bytes"] == 13_922_814_364_672
    assert b["compression_physical"] == 1.03
    assert b["bp_allocated_bytes"] == 19_192_156_401_664
    assert b["bp_allocated_avg_bytes"] == 172_113
    assert b["compression_allocated"] == 0.75
    assert b["bp_deduped_bytes"] == 710_846_349_312
    assert b["dedup_ref_gt1_count"] == 3_355_041
    assert b["dedup_ratio"] == 1.04
    assert b["embedded_bp_count"] == 197_376
    assert b["dittoed_same_vdev"] == 1_664_068
    assert one(p, "zdb_classes")["used_pct"] == 77.06
    assert one(p, "zdb_classes")["allocated_bytes"] == 18_481_309_908_992


@pytest.mark.parametrize("name", ["zdb-b-raid1.txt", "zdb-b-archiv.txt"])
def test_seed_cross_checks(name):
    b = one(parse(RAW / "freebsd-bonnie-dedup" / name), "zdb_block_stats")
    n = b["bp_count"]
    for what in ("logical", "physical", "allocated"):  # avg = total / count, integer division
        assert b[f"bp_{what}_avg_bytes"] == b[f"bp_{what}_bytes"] // n
    assert b["compression_physical"] == round(b["bp_logical_bytes"] / b["bp_physical_bytes"], 2)
    assert b["compression_allocated"] == round(b["bp_logical_bytes"] / b["bp_allocated_bytes"], 2)
    assert b["dedup_ratio"] == round(1 + b["bp_deduped_bytes"] / b["bp_allocated_bytes"], 2)


def test_seed_file_with_both_outputs_and_prose():
    """The whole blog text: two prompts, two summaries, German prose (`(bp count: 35419785 x 320bytes)`) ignored."""
    text = read(SEEDS / "004_de9bc2236b7eeadc.txt")
    assert zdb.sniff(text) == "zdb-b"
    p = zdb.parse(text)
    blocks = p.rows("zdb_block_stats")
    assert [(b["block_no"], b["pool"], b["bp_count"]) for b in blocks] == [(1, "raid1", 35_419_785),
                                                                         (2, "archiv", 111_509_014)]
    assert (blocks[0]["line_start"], blocks[1]["line_start"]) == (239, 258)
    assert [e["block_no"] for e in p.rows("zdb_embedded_bps")] == [1, 2]
    # DDT memory rule of thumb of the blog: bp count x 320 B
    assert blocks[0]["bp_count"] * 320 == 11_334_331_200


# --- bad input ------------------------------------------------------------------------------------------

def test_empty_and_blank():
    for text in ("", "\n\n  \n"):
        with pytest.raises(ParseError) as e:
            zdb.parse(text)
        assert e.value.kind == "empty"


def test_fio_output_is_not_zdb():
    fio = next((FIXTURES / "fio").rglob("*.txt"))
    text = read(fio)
    assert zdb.sniff(text) is None
    with pytest.raises(ParseError) as e:
        zdb.parse(text)
    assert e.value.kind == "invalid" and e.value.line is not None


def test_other_tools_are_not_claimed():
    for path in RAW.rglob("*.txt"):
        if not path.name.startswith("zdb-"):
            assert zdb.sniff(read(path)) is None, path


def test_truncated_mid_summary():
    lines = read(RAW / "freebsd-bonnie-dedup" / "zdb-b-raid1.txt").split("\n")
    cut = "\n".join(lines[:12]) + "\n"  # ends after `bp physical:`
    with pytest.raises(ParseError) as e:
        zdb.parse(cut)
    assert e.value.kind == "truncated"
    assert e.value.line == 12 and "bp allocated" in e.value.message
    # cut in the middle of a line
    with pytest.raises(ParseError) as e:
        zdb.parse("\n".join(lines[:11]) + "\n\tbp physical:      42525358")
    assert e.value.kind == "truncated" and e.value.line == 12
    # only the banner and progress: the run never printed its summary
    with pytest.raises(ParseError) as e:
        zdb.parse("\n".join(lines[:7]))
    assert e.value.kind == "truncated" and e.value.line == 3


def test_garbage_number_in_summary():
    text = read(RAW / "freebsd-bonnie-dedup" / "zdb-b-raid1.txt").replace("35419785", "3541978x")
    with pytest.raises(ParseError) as e:
        zdb.parse(text)
    assert e.value.kind == "invalid" and e.value.line == 9


def test_summary_followed_by_other_text_is_invalid_not_truncated():
    lines = read(RAW / "freebsd-bonnie-dedup" / "zdb-b-raid1.txt").split("\n")
    text = "\n".join(lines[:12] + ["some other text", "more"])
    with pytest.raises(ParseError) as e:
        zdb.parse(text)
    assert e.value.kind == "invalid" and e.value.line == 13


def test_unknown_format_name():
    with pytest.raises(ParseError):
        zdb.parse(read(RAW / "freebsd-bonnie-dedup" / "zdb-b-raid1.txt"), "zdb-x")


# --- hand-made variants (constructed by editing real output; labelled as such) ----------------------

def test_leak_lines_hand_made():
    """Leak lines as zdb_leak()/dump_block_stats print them, placed before the real raid1 summary."""
    real = read(RAW / "freebsd-bonnie-dedup" / "zdb-b-raid1.txt")
    text = real.replace("\tNo leaks (block sum matches space maps exactly)\n",
                        "leaked space: vdev 0, offset 0x2000, size 4096\n"
                        "leaked space: vdev 1, offset 0x1f000, size 8192\n"
                        "block traversal size 4270123016192 != alloc 4270123028480 (leaked 12288)\n")
    p = zdb.parse(text)
    b = one(p, "zdb_block_stats")
    assert (b["leaks"], b["leaked_bytes"]) == ("leaked", 12288)
    assert (b["traversal_bytes"], b["alloc_bytes"]) == (4_270_123_016_192, 4_270_123_028_480)
    ev = p.rows("zdb_events")
    assert [(e["kind"], e["vdev"], e["offset_bytes"], e["size_bytes"], e["block_no"]) for e in ev] == [
        ("leaked_space", 0, 0x2000, 4096, 1), ("leaked_space", 1, 0x1F000, 8192, 1),
        ("size_mismatch", None, None, 12288, 1)]
    neg = real.replace("\tNo leaks (block sum matches space maps exactly)\n",
                       "block traversal size 200 != alloc 100 (leaked -100)\n")
    assert one(zdb.parse(neg), "zdb_block_stats")["leaked_bytes"] == -100


def test_old_zfs_06_layout_hand_made():
    """0.6/0.7 layout written with the printf formats of that zdb.c (`SPA allocated:`, 10-wide values)."""
    text = ("\n\tbp count:         1000\n"
            "\tganged count:          0\n"
            "\tbp logical:     131072000      avg: 131072\n"
            "\tbp physical:     65536000      avg:  65536     compression:   2.00\n"
            "\tbp allocated:    98304000      avg:  98304     compression:   1.33\n"
            "\tbp deduped:             0    ref>1:      0   deduplication:   1.00\n"
            "\tSPA allocated:   98304000     used:  9.16%\n")
    p = zdb.parse(text)
    b = one(p, "zdb_block_stats")
    assert (b["zfs_era"], b["dittoed_same_metaslab"], b["leaks"], b["pool"]) == ("0.6/0.7", None, None, None)
    assert one(p, "zdb_classes")["class"] == "SPA allocated"
    # before dedup (OpenSolaris): no `bp deduped:` and no `ganged count:`
    pre = text.replace("\tganged count:          0\n", "").replace(
        "\tbp deduped:             0    ref>1:      0   deduplication:   1.00\n", "")
    b = one(zdb.parse(pre), "zdb_block_stats")
    assert (b["zfs_era"], b["ganged_count"], b["bp_deduped_bytes"]) == ("pre-dedup", None, None)


def test_all_ddts_empty_and_invocation_pool():
    p = zdb.parse("# zdb -e -p /tmp/pooldir -DD tank\nAll DDTs are empty\n")
    assert p.format == "zdb-DD"
    r = one(p, "zdb_ddt_objects")
    assert (r["kind"], r["pool"], r["entries"]) == ("all_empty", "tank", None)


@pytest.mark.parametrize("line,pool", [
    ("[root@alpina ~]# zdb -b raid1 ", "raid1"),
    ("$ sudo zdb -e -p /tmp/x -U /tmp/x/zpool.cache -bb ztest 2>&1 | tee out", "ztest"),
    ("# /sbin/zdb -bbP -t 1234 tank/fs", "tank"),
    ("$ zdb -bcsv", None),
])
def test_pool_from_prompt(line, pool):
    text = line + "\n" + read(RAW / "freebsd-bonnie-dedup" / "zdb-b-raid1.txt").split("\n", 1)[1]
    assert one(zdb.parse(text), "zdb_block_stats")["pool"] == pool


def test_strip_progress():
    s = zdb.strip_progress
    assert s("\rloading concrete vdev 0, metaslab 0 of 15 ...\rloading concrete vdev 0, metaslab 1 of 15 ...") == ""
    assert s("\r 3.30G completed (  64MB/s) estimated time remaining: 0hr 00min 12sec        ") == ""
    assert s("17.0T completed (331016MB/s) estimated time remaining: 0hr 00min 00sec        bp count:  5") \
        == "bp count:  5"
    assert s("\r25.5M completed (  25MB/s) estimated time remaining: 4294838926hr 4294967255min 4294967294sec   "
             "     \tbp count:  5") == "\tbp count:  5"
    assert s("\tbp count:  5") == "\tbp count:  5"
