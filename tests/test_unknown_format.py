"""The unknown-format message (what a user sees when no parser claims a file) is built from the parser registry:
every registered parser's tool and every format it stores, so a new parser or format can never be missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storagelab import parsers
from storagelab.errors import ParseError

ROOT = Path(__file__).resolve().parents[1]
NOT_A_LOG = ROOT / "tests/fixtures/bonnie/2.00a/x1.err.txt"  # bonnie++'s stderr: no tool output


def _message() -> str:
    with pytest.raises(ParseError) as e:
        parsers.parse_bytes(NOT_A_LOG.read_bytes())
    assert e.value.kind == "unknown-format"
    return e.value.expected or ""


def test_every_registered_parser_and_format_is_in_the_message():
    msg = _message()
    assert len(parsers.modules()) == len(parsers.MODULES) == 12
    for mod in parsers.modules():
        assert f"{mod.TOOL} (" in msg, mod.TOOL
        for name in mod.READS.values():
            assert name in msg, (mod.TOOL, name)
    # the formats added lately, as a user knows them
    for words in ("pv (", "dd (", "zfs send -v, zfs receive -v", "/proc/spl/kstat/zfs/arcstats", "zpool iostat -w",
                  "zfs get", "-C/-l", "zpool status", "gdisk/sgdisk -p", "parted print/-m/interactive"):  # fmt: skip
        assert words in msg, words


def test_every_format_a_fixture_is_stored_as_is_named_by_its_parser():
    """The golden file of every fixture starts with its ``files`` record: its tool and format. Each format is a key
    of its parser's READS (a format added to a parser without words for the message fails here)."""
    by_tool = {m.TOOL: m for m in parsers.modules()}
    seen: dict[str, set[str]] = {}
    for golden in (ROOT / "tests/fixtures").rglob("*.expected.jsonl"):
        with golden.open() as f:
            rec = json.loads(f.readline())
        if rec.get("table") == "files":
            seen.setdefault(rec["tool"], set()).add(rec["format"])
    assert set(seen) == set(by_tool) - {"transcribed"}  # transcribed tables live in data/raw only
    for tool, formats in seen.items():
        assert formats <= set(by_tool[tool].READS), (tool, formats - set(by_tool[tool].READS))
    assert sum(map(len, seen.values())) == 35


def test_a_parser_s_declared_formats_are_all_named():
    for mod in parsers.modules():
        declared = getattr(mod, "FORMATS", ())
        assert set(declared) <= set(mod.READS), mod.TOOL


def test_an_empty_file_names_every_tool():
    with pytest.raises(ParseError) as e:
        parsers.parse_bytes(b"\n \n")
    assert e.value.expected == "the text output of " + ", ".join(m.TOOL for m in parsers.modules())
    assert "zfs send/receive" in (e.value.expected or "") and "arcstats" in (e.value.expected or "")
