"""reliability-32 (input): hostile and corrupt logs give one ParseError line naming file and line, never a traceback.

Each case is a real fixture with one mutation that the parser fuzz (docs/reliability-32-scripts/rel32-input-fuzz.py.txt)
found raising OverflowError or ValueError out of a parser: `storagelab parse` printed a traceback and stopped,
losing the files after it; ingest stored it as a `parser-bug` without a line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import mutated as _mutated

from storagelab import cli
from storagelab.errors import ParseError
from storagelab.parsers import parse_bytes

FIX = Path(__file__).parent / "fixtures"
HUGE = "9" * 400  # past a double's range: float() gives inf, float(int()) raises OverflowError


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        ("partitions/sfdisk-constructed-2.20-sec63.txt", "start=   208845", "start=   -208845", 5),
        ("zfs-fuse/0.7.0/parts/sfdisk-d-misaligned.txt", "sector-size: 512", "sector-size: 51\u00b2", 5),
        (
            "arcstats/freebsd-14/sysctl-kstat.zfs.misc.arcstats.txt",
            "abd_chunk_waste_size: 626176",
            f"abd_chunk_waste_size: {HUGE}",
            1,
        ),
        ("zdb/2.3-special/DD.txt", "dspace=23040", f"dspace={HUGE}", 2),
        ("zdb/published/zdb-DD-rst-indented.txt", "size 396 on disk", f"size {HUGE} on disk", 2),
        ("zpool/published/iostat-r-then-l-data.txt", "\n2K   ", f"\n{HUGE}   ", 6),
        ("zpool/iostat-vp-openzfs2.txt", "4761823440896", HUGE, 5),
        ("zdb/2.3/DDD.txt", "   37.0M    184K", f"   {HUGE}.5M    184K", 33),  # round(inf): OverflowError
        ("arcstats/linux-2.2-arcstat/arcstat-then-zpool-iostat-vl.log", "   154       0", f"   {HUGE}       0", 4),
        ("zfs-get/truenas-core-13/get-all.txt", "createtxg               3020", f"createtxg               {HUGE}", 26),
    ],
)
def test_a_corrupt_number_is_a_parse_error_with_its_line(rel: str, old: str, new: str, line: int) -> None:
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(rel, old, new), "x.txt")
    assert e.value.line == line


def test_an_fio_block_size_past_a_doubles_range_is_not_understood_not_a_traceback() -> None:
    data = _mutated("fio/published/fio-3.19-m1-randread-8-threads.txt", "bs=(R) 4096B-4096B", f"bs=(R) {HUGE}B-4096B")
    parsed, _ = parse_bytes(data, "x.txt")
    assert any("block size" in w and "not understood" in w for w in parsed.warnings)
    sizes = {r["block_size_bytes"] for rows in parsed.tables.values() for r in rows if "block_size_bytes" in r}
    assert sizes and all(s is None or s < 2**63 for s in sizes)


def test_parse_says_a_parser_bug_in_one_line_and_parses_the_other_files(tmp_path, monkeypatch, capsys) -> None:
    from storagelab.store import worker  # noqa: PLC0415

    bad, good = tmp_path / "a-bad.txt", tmp_path / "b-good.txt"
    bad.write_bytes(b"x")
    good.write_bytes((FIX / "zfs-fuse/0.7.0/parts/sfdisk-d-misaligned.txt").read_bytes())
    real = worker.parse_bytes

    def buggy(data: bytes, path: str | None = None):
        if path and path.endswith("a-bad.txt"):
            raise OverflowError("cannot convert float infinity to integer")
        return real(data, path)

    monkeypatch.setattr(worker, "parse_bytes", buggy)
    assert cli.main(["parse", str(bad), str(good)]) == 1
    out, err = capsys.readouterr()
    assert "b-good.txt" in out and '"table": "files"' in out
    assert "Traceback" not in err and "a-bad.txt: parser-bug: OverflowError" in err


def test_parse_refuses_a_number_its_column_cannot_hold_as_ingest_does(tmp_path, capsys) -> None:
    f = tmp_path / "sgdisk.txt"  # parse printed it, exit 0; ingest: "disks.size_sectors: ... is out of range"
    f.write_bytes(
        _mutated("partitions/linux-tools/sgdisk-p-gpt4k.txt", "65536 sectors", "18446744073709551616 sectors")
    )
    assert cli.main(["parse", str(f)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "sgdisk.txt:1: invalid: disks.size_sectors: 18446744073709551616 is out of range" in err


def test_sql_table_writes_a_names_escape_sequences_as_text() -> None:
    import io  # noqa: PLC0415

    import duckdb  # noqa: PLC0415

    from storagelab.sqlout import write_table  # noqa: PLC0415

    # a log named esc<ESC>]0;TITLE<BEL><ESC>[2K.txt: its stored path set the terminal's title and erased the line
    cur = duckdb.connect().execute(
        "SELECT 'raw/esc' || chr(27) || ']0;T' || chr(7) || chr(27) || '[2K.txt' || chr(10) AS path"
    )
    out = io.StringIO()
    write_table(cur, out, None, terminal=True)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "raw/esc\\x1b]0;T\\x07\\x1b[2K.txt\\n" in text


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        ("partitions/parted-m-gpt-bytes.txt", ":512:512:", ":0:0:", 2),  # was ZeroDivisionError
        ("partitions/linux-tools/sgdisk-p-gpt4k.txt", "4096/4096 bytes", "0/0 bytes", 2),  # was 512 assumed
        ("partitions/fdisk-dos4kn.txt", "4096 bytes / 4096 bytes", "0 bytes / 0 bytes", 3),
        ("partitions/parted-gpt.txt", "512B/512B", "0B/0B", 3),
        ("zfs-fuse/0.7.0/parts/sfdisk-d-misaligned.txt", "sector-size: 512", "sector-size: 0", 5),
    ],
)
def test_a_printed_sector_size_of_0_is_a_parse_error_not_512_assumed(rel: str, old: str, new: str, line: int) -> None:
    with pytest.raises(ParseError, match=r"sector sizes? '?0") as e:
        parse_bytes(_mutated(rel, old, new), "x.txt")
    assert e.value.line == line


def test_an_mbuffer_duration_with_a_decimal_comma_is_refused_not_read_as_its_last_part() -> None:
    data = (Path(__file__).parent.parent / "data/raw/thumper-x4500/mbuffer-ssh-localhost.txt").read_text()
    assert "in 20.9 sec" in data  # '20,9 sec' was stored as 9 s (duration_ns 9e9), exit 0, no warning
    with pytest.raises(ParseError, match="unreadable duration '20,9 sec'") as e:
        parse_bytes(data.replace("in 20.9 sec", "in 20,9 sec").encode(), "x.txt")
    assert e.value.line == 1


@pytest.mark.parametrize("new", ["62,0 GiB", "x62.0 GiB"])
def test_an_arc_summary_size_is_read_whole_not_its_tail(new: str) -> None:
    # '98.7 %   62,0 GiB' was stored as arc size 0 bytes (the search found '0 GiB'), exit 0
    with pytest.raises(ParseError, match="no size in") as e:
        parse_bytes(_mutated("arcstats/linux-2.1/arc_summary.txt", "62.0 GiB", new), "x.txt")
    assert e.value.line == 9


@pytest.mark.parametrize("new", ["stdev=14,47", "avg=56,98, stdev=14.47"])
def test_an_fio_latency_with_a_decimal_comma_is_refused_not_cut(new: str) -> None:
    # 'clat (usec): min=48, max=287, avg=56.98, stdev=14,47' was stored as clat_stdev_ns 14000, exit 0
    old = "avg=56.98, stdev=14.47"
    data = _mutated("fio/3.33/normal_only.txt", old, new if new.startswith("avg") else "avg=56.98, " + new)
    with pytest.raises(ParseError, match="cannot read") as e:
        parse_bytes(data, "x.txt")
    assert e.value.line == 8
