"""Compressed logs: real fixtures compressed with the gzip, xz, bzip2 and zstd command-line tools
parse to exactly the rows of the uncompressed file; the store hashes the compressed bytes;
corrupt, truncated and oversized (bomb) streams are refused with a clear ParseError."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import duckdb
import pytest
from conftest import FIXTURES, RAW, ROOT

from storagelab.errors import ParseError
from storagelab.parsers import compressed, parse_bytes

REAL = [
    RAW / "homelab-mergerfs" / "fio-zfs-mirror-zfs0.8.4.txt",  # fio normal text
    FIXTURES / "fio" / "3.33" / "json_only.txt",  # fio JSON (the fast path)
    FIXTURES / "fio" / "3.33" / "terse_v3.txt",
    RAW / "freebsd-bonnie-dedup" / "bonnie-raid1-aligned.txt",
    RAW / "freebsd-bonnie-dedup" / "zdb-b-raid1.txt",
    RAW / "thumper-x4500" / "mbuffer-socat-receiver.txt",
]
TOOLS = {"gzip": ("gzip", ".gz"), "xz": ("xz", ".xz"), "bzip2": ("bzip2", ".bz2"), "zstd": ("zstd", ".zst")}

try:
    import zstandard  # noqa: F401  (only whether it is there)

    HAVE_ZSTANDARD = True
except ImportError:
    HAVE_ZSTANDARD = False


def _compress(src, tmp_path, kind, suffix=None):
    tool, ext = TOOLS[kind]
    if not shutil.which(tool):
        pytest.skip(f"{tool} command not installed")
    data = subprocess.run([tool, "-c", str(src)], capture_output=True, check=True).stdout
    dest = tmp_path / (src.name + (ext if suffix is None else suffix))
    dest.write_bytes(data)
    return dest


def _rows(parsed):
    return parsed.tool, parsed.tool_version, parsed.format, parsed.warnings, parsed.tables


@pytest.mark.parametrize("kind", list(TOOLS))
@pytest.mark.parametrize("src", REAL, ids=lambda p: p.name)
def test_compressed_fixture_gives_the_same_rows(tmp_path, kind, src):
    if kind == "zstd" and not HAVE_ZSTANDARD:
        pytest.skip("zstandard package not installed (see test_zstd_without_the_package_is_a_clear_error)")
    packed = _compress(src, tmp_path, kind).read_bytes()
    assert compressed.kind_of(packed) == kind
    plain, _ = parse_bytes(src.read_bytes(), str(src))
    got, _ = parse_bytes(packed, "x")
    assert _rows(got) == _rows(plain)


def test_detection_is_by_content_not_name(tmp_path):
    src = REAL[0]
    for kind in ("gzip", "xz", "bzip2"):
        misnamed = _compress(src, tmp_path, kind, suffix=f".{kind}.txt")  # no telling suffix
        got, _ = parse_bytes(misnamed.read_bytes(), str(misnamed))
        assert got.tables == parse_bytes(src.read_bytes())[0].tables
    # a plain text that starts with "BZh" is not taken for bzip2
    assert compressed.kind_of(b"BZh is not a bzip2 stream\n") is None
    assert compressed.decompress(b"plain text\n") == b"plain text\n"


def test_concatenated_gzip_members_are_read_whole(tmp_path):
    a, b = REAL[0].read_bytes(), b"\n"
    import gzip

    data = gzip.compress(a) + gzip.compress(b)
    assert compressed.decompress(data) == a + b


def test_truncated_and_corrupt_streams_are_parse_errors(tmp_path):
    packed = _compress(REAL[0], tmp_path, "gzip").read_bytes()
    with pytest.raises(ParseError) as e:
        parse_bytes(packed[: len(packed) // 2], "half.gz")
    assert str(e.value).startswith("half.gz: truncated: gzip data ends early: the compressed file is cut short")
    assert "after 0 decompressed bytes" not in str(e.value)  # the cut read had decompressed some: never a wrong count
    xz = _compress(REAL[0], tmp_path, "xz").read_bytes()
    bad = xz[:40] + bytes(b ^ 0xFF for b in xz[40:80]) + xz[80:]
    with pytest.raises(ParseError) as e:
        parse_bytes(bad, "bad.xz")
    assert e.value.kind in ("compression", "truncated") and "xz data" in str(e.value)


def test_decompression_bomb_is_refused(monkeypatch):
    import gzip

    bomb = gzip.compress(b"\0" * (8 << 20))  # 8 MiB of zeros in ~8 KiB
    monkeypatch.setattr(compressed, "MAX_DECOMPRESSED_BYTES", 1 << 20)
    with pytest.raises(ParseError) as e:
        parse_bytes(bomb, "bomb.gz")
    assert e.value.kind == "too-large"
    assert str(e.value) == (
        f"bomb.gz: too-large: gzip data decompresses to more than 1,048,576 bytes "
        f"({len(bomb):,} compressed): refused as a possible decompression bomb "
        f"(expected a log of at most 1,048,576 bytes once decompressed)"
    )
    assert compressed.MAX_DECOMPRESSED_BYTES == 1 << 20
    monkeypatch.undo()
    assert compressed.MAX_DECOMPRESSED_BYTES == 2 * 1024**3


@pytest.mark.skipif(HAVE_ZSTANDARD, reason="zstandard is installed")
def test_zstd_without_the_package_is_a_clear_error(tmp_path):
    packed = _compress(REAL[0], tmp_path, "zstd").read_bytes()
    with pytest.raises(ParseError) as e:
        parse_bytes(packed, "x.zst")
    assert e.value.kind == "compression" and "'zstandard' Python package is not installed" in str(e.value)


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    return subprocess.run([sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env)


def test_cli_parse_of_a_gzipped_log(tmp_path):
    src = REAL[0]
    gz = _compress(src, tmp_path, "gzip")
    plain, packed = _cli("parse", str(src)), _cli("parse", str(gz))
    assert packed.returncode == 0 and packed.stderr == "" and "Traceback" not in packed.stderr
    a = [json.loads(x) for x in plain.stdout.splitlines()]
    b = [json.loads(x) for x in packed.stdout.splitlines()]
    assert b[0]["sha256"] == hashlib.sha256(gz.read_bytes()).hexdigest()  # of the stored bytes
    assert b[0]["size_bytes"] == gz.stat().st_size
    assert a[1:] == b[1:] and b[0]["format"] == a[0]["format"]


def test_ingest_stores_the_hash_of_the_compressed_bytes(tmp_path):
    from storagelab.store import ingest

    folder = tmp_path / "logs"
    folder.mkdir()
    kinds = ["gzip", "xz", "bzip2"] + (["zstd"] if HAVE_ZSTANDARD else [])
    made = [_compress(REAL[0], folder, k) for k in kinds[:1]]
    made += [_compress(REAL[i + 1], folder, k) for i, k in enumerate(kinds[1:])]
    db = tmp_path / "c.duckdb"
    s = ingest([folder], db_path=db, manifest_path=RAW / "manifest.csv", parquet_dir=False, progress=False)
    assert s.failed == 0 and s.ingested == len(made), s.errors
    con = duckdb.connect(str(db), read_only=True)
    stored = dict(con.execute("SELECT path, sha256 FROM files").fetchall())
    con.close()
    assert {os.path.basename(p): h for p, h in stored.items()} == {
        f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in made
    }
