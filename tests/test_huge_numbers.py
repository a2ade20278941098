"""Numbers no measurement has (reliability review cases 34 and 35): a 5,000-digit integer and a zdb bp count past
64 bits, in real outputs. Each is a clear error naming the file and line, from `parse` and from `ingest`, and the
other files are still ingested."""

from __future__ import annotations

import re

import duckdb
import pytest
from conftest import FIXTURES
from conftest import storagelab_cli as cli

from storagelab.errors import ParseError
from storagelab.parsers import parse_bytes

ZDB = FIXTURES / "zdb" / "2.3" / "b.txt"
FIO_JSON = FIXTURES / "fio" / "3.1" / "fioplot-randread-1-1.json"


def edited(path, pattern, digits):
    text = path.read_text()
    out, n = re.subn(pattern, lambda m: m.group(1) + digits, text, count=1)
    assert n == 1
    line = text[: re.search(pattern, text).start()].count("\n") + 1
    return out, line


@pytest.fixture
def logs(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    zdb, zdb_line = edited(ZDB, r"(bp count:\s+)\d+", "9" * 5000)
    (raw / "zdb-b-5000-digits.txt").write_text(zdb)
    fio, fio_line = edited(FIO_JSON, r'("total_ios" ?: ?)\d+', "7" * 5000)
    (raw / "fio-5000-digits.json").write_text(fio)
    big, big_line = edited(ZDB, r"(bp count:\s+)\d+", "99999999999999999999")  # > 2^64
    (raw / "zdb-b-past-64-bits.txt").write_text(big)
    io, io_line = edited(FIO_JSON, r'("io_bytes" ?: ?)\d+', "12345678901234567890123")  # a DOUBLE column
    (raw / "fio-io-bytes-past-64-bits.json").write_text(io)
    (raw / "zdb-b-good.txt").write_bytes(ZDB.read_bytes())
    return raw, {
        "zdb-b-5000-digits.txt": zdb_line,
        "fio-5000-digits.json": fio_line,
        "zdb-b-past-64-bits.txt": big_line,
        "fio-io-bytes-past-64-bits.json": io_line,
    }


def test_parse_bytes_names_the_line(logs):
    raw, lines = logs
    for name in ("zdb-b-5000-digits.txt", "fio-5000-digits.json"):
        with pytest.raises(ParseError) as e:
            parse_bytes((raw / name).read_bytes(), name)
        assert (e.value.kind, e.value.line) == ("invalid", lines[name])
        assert e.value.message == "a number with 5000 digits: no measurement has that many"


def test_parse_command_reports_file_and_line_without_traceback(logs):
    raw, lines = logs
    r = cli("parse", str(raw / "zdb-b-5000-digits.txt"))
    assert r.returncode == 1
    assert f"zdb-b-5000-digits.txt:{lines['zdb-b-5000-digits.txt']}: invalid: a number with 5000 digits" in r.stderr
    assert "Traceback" not in r.stderr


def test_ingest_refuses_each_bad_file_and_keeps_the_good_one(logs, tmp_path):
    raw, lines = logs
    db = tmp_path / "x.duckdb"
    r = cli("ingest", str(raw), "--db", str(db))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    for name, line in lines.items():
        assert f"{name}:{line}: invalid" in r.stderr, name
    assert "99999999999999999999 is out of range (expected a number that fits a BIGINT)" in r.stderr
    assert (
        "fio-io-bytes-past-64-bits.json:31: invalid: field 'io_bytes': 12345678901234567890123 is out of range "
        "(expected an integer of at most 64 bits)" in r.stderr
    )
    con = duckdb.connect(str(db), read_only=True)
    assert [p.rsplit("/", 1)[-1] for (p,) in con.sql("SELECT path FROM files").fetchall()] == ["zdb-b-good.txt"]
    assert con.sql("SELECT bp_count FROM zdb_block_stats").fetchall() == [(6409,)]
    errors = dict(con.sql("SELECT regexp_extract(path, '[^/]+$'), line FROM ingest_errors").fetchall())
    assert errors == lines


@pytest.mark.parametrize("digits", ["9223372036854775808", "12345678901234567890123", "1" + "0" * 400])
def test_fio_json_integer_past_64_bits_refused_in_every_layout(digits):
    """orjson (the fast path) turns such an integer into a float, or inf: the fast path declines it and the
    general path refuses it on its line, in fio's own layout and compacted onto one line alike."""
    import json

    fio, line = edited(FIO_JSON, r'("io_bytes" ?: ?)\d+', digits)
    oneline = json.dumps(json.loads(fio, object_pairs_hook=lambda pairs: dict(reversed(pairs))))
    for text, want_line in ((fio, line), (oneline, 1)):
        with pytest.raises(ParseError) as e:
            parse_bytes(text.encode(), "x.json")
        assert (e.value.kind, e.value.line) == ("invalid", want_line)
        shown = digits if len(digits) <= 30 else f"{digits[:12]}... ({len(digits)} digits)"
        assert e.value.message == f"field 'io_bytes': {shown} is out of range"


def test_fio_json_largest_64_bit_integer_kept_exactly():
    fio, _ = edited(FIO_JSON, r'("total_ios" ?: ?)\d+', str(2**63 - 1))
    parsed, _ = parse_bytes(fio.encode(), "x.json")
    assert parsed.rows("fio_results")[0]["total_ios"] == 2**63 - 1


def test_double_column_refuses_an_integer_past_64_bits_and_rounds_below():
    from storagelab.store import arrow

    assert arrow.array([1.5, 2**60 + 1], "DOUBLE").to_pylist() == [1.5, float(2**60)]
    with pytest.raises(arrow.UNFIT):
        arrow.array([1.5, 2**70], "DOUBLE")
