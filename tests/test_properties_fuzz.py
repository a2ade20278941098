"""Arbitrary input never crashes a parser with anything but ParseError, and what parses is well formed.

Three sources of input, for ``storagelab.parsers.parse_bytes`` and for every parser module's
``parse()`` called directly (with its own format detection and with each format forced):
hypothesis text and bytes, and mutations of the real outputs of each tool (lines deleted,
duplicated, swapped, joined or inserted; characters replaced; ``\\r`` inserted; the text cut).
A result must be a ``Parsed`` whose rows use only the columns of their declared table, hold no
NaN (NaN is NULL) and carry line numbers inside the input.
"""

from __future__ import annotations

import math
from functools import cache

import pytest
from conftest import FIXTURES, RAW, props
from hypothesis import given
from hypothesis import strategies as st

from storagelab.errors import ParseError
from storagelab.parsers import decode, detect, modules, parse_bytes
from storagelab.parsers.base import Parsed, lines_of
from storagelab.parsers.contract import fillable_tables

PROPS = props(150)
FORMATS = {"fio": ("fio-normal", "fio-terse", "fio-json", "fio-json+normal")}
MODULES = {m.TOOL: m for m in modules()}
TOOL_TABLES = {name: tab for m in modules() for name, tab in m.TABLES.items()}


@cache
def real_outputs() -> dict[str, tuple[str, ...]]:
    """Texts of the real outputs in data/raw/ and tests/fixtures/, by the tool that parses them."""
    out: dict[str, list[str]] = {}
    for p in sorted(list(RAW.rglob("*")) + list(FIXTURES.rglob("*"))):
        if not p.is_file() or p.suffix in (".md", ".sh", ".py", ".jsonl") or p.name == "manifest.csv":
            continue
        try:
            text = decode(p.read_bytes())
            mod, fmt = detect(text)
            mod.parse(text, fmt)
        except ParseError:
            continue
        out.setdefault(mod.TOOL, []).append(text)
    return {k: tuple(v) for k, v in out.items()}


def formats(mod) -> tuple:
    return (None, *getattr(mod, "FORMATS", FORMATS.get(mod.TOOL, ())))


def well_formed(parsed: Parsed, mod, text: str) -> None:
    assert isinstance(parsed, Parsed)
    n_lines = len(lines_of(text))
    for table, rows in parsed.tables.items():
        assert table in fillable_tables(mod, modules()), f"{mod.TOOL}: rows for undeclared table {table}"
        names = set(TOOL_TABLES[table].names) - {"file_id"}
        for row in rows:
            assert set(row) <= names, f"{table}: unknown columns {set(row) - names}"
            for k, v in row.items():
                assert not (isinstance(v, float) and math.isnan(v)), f"{table}.{k} is NaN (NaN must be NULL)"
            lo, hi = row.get("line_start"), row.get("line_end")
            if lo is not None:
                assert 1 <= lo <= hi <= n_lines, f"{table}: lines {lo}-{hi} outside 1-{n_lines}"


def parse_or_error(mod, text: str, fmt) -> None:
    try:
        parsed = mod.parse(text, fmt)
    except ParseError as e:
        assert e.kind in (
            "empty",
            "binary",
            "encoding",
            "unknown-format",
            "truncated",
            "invalid",
            "unsupported-version",
        ), e.kind
        assert e.line is None or e.line >= 1
        return
    well_formed(parsed, mod, text)


def bytes_or_error(data: bytes) -> None:
    try:
        parsed, mod = parse_bytes(data, "fuzz.log")
    except ParseError as e:
        assert str(e).startswith("fuzz.log")
        return
    well_formed(parsed, mod, decode(data))


# ----------------------------------------------------------------------------- arbitrary input


@PROPS
@given(st.binary(max_size=4000))
def test_arbitrary_bytes(data):
    bytes_or_error(data)


@PROPS
@given(st.text(max_size=3000))
def test_arbitrary_text_every_module(text):
    bytes_or_error(text.encode("utf-8", "surrogatepass"))
    for mod in MODULES.values():
        for fmt in formats(mod):
            parse_or_error(mod, text, fmt)


# words and fragments of the tools' own output, so that the parsers get past their first checks
FRAGMENTS = [
    "read:",
    "write:",
    " IOPS=",
    "BW=",
    "(groupid=0, jobs=1): err= 0: pid=1",
    "Run status group 0 (all jobs):",
    "  WRITE: bw=",
    "clat (usec): min=",
    "percentiles (usec):",
    "|  1.00th=[   32],",
    "issued rwts: total=",
    '{\n  "fio version" : "fio-3.33",\n  "jobs" : [',
    "3;fio-3.33;job;0;0;",
    "bp count:",
    "\tbp logical:",
    "Normal class:",
    "Blocks\tLSIZE\tPSIZE\tASIZE\t  avg\t comp\t%Total\tType",
    "Simulated DDT histogram:",
    "refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE",
    " Total",
    "dedup = 1.00,",
    "DDT-sha256-zap-unique: 12 entries, size 5 on disk, 3 in core",
    "Version 2.00a       ------Sequential Output------",
    "Name:Size etc        /sec %CP",
    "Latency ",
    "1.98,2.00a,lab,1,",
    "=>       40  7814037088  ada3  GPT  (3.6T)",
    "Disk /dev/sda: 64 MiB, 67108864 bytes, 131072 sectors",
    "Units: sectors of 1 * 512 = 512 bytes",
    "Device     Start   End Sectors  Size Type",
    "label: gpt",
    "sda1 : start=        2048, size=",
    "BYT;",
    "NAME    SIZE  ALLOC   FREE",
    "               capacity     operations    bandwidth",
    "pool        alloc   free",
    "summary: 3000 MiByte in  2.9sec - average of 1029 MiB/s",
    "in @ 1275 MiB/s, out @ 1275 MiB/s,",
    "# storagelab transcribed table v1: x",
    "test,layout,vdev_count,vdev_widths,vdev_type,size_tb,speed_mb_per_s,speed_text",
    "12.5k",
    "nan",
    "-nan%",
    "+++++",
    "\r",
    "\t",
    "\n",
    " ",
    "0",
    "99999999999999999999",
    "1e+04",
    ":",
    ";",
    ",",
]


@PROPS
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=60).map("".join))
def test_fragments_of_real_output(text):
    bytes_or_error(text.encode("utf-8", "surrogatepass"))
    for mod in MODULES.values():
        for fmt in formats(mod):
            parse_or_error(mod, text, fmt)


# ----------------------------------------------------------------------------- mutated real outputs

CHARS = st.sampled_from(list('0123456789.,:;%=-+/()[]{}|# \t\rkKMGTmgiBs"\u00b5\u00e9x\x00\x1b') + ["\r\n", "nan"])


@st.composite
def mutation(draw, text: str) -> str:
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            lines = [""]
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "join", "insert", "replace", "cr", "cut", "digits"]))
        if op == "delete":
            del lines[i : i + draw(st.integers(1, 5))]
        elif op == "duplicate":
            lines[i:i] = lines[i : i + draw(st.integers(1, 5))]
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "join" and i + 1 < len(lines):
            lines[i : i + 2] = [lines[i] + lines[i + 1]]
        elif op == "insert":
            lines.insert(i, draw(st.sampled_from(lines + FRAGMENTS)))
        elif op in ("replace", "cr", "digits") and lines[i]:
            k = draw(st.integers(0, len(lines[i]) - 1))
            new = {
                "replace": draw(CHARS),
                "cr": "\r",
                "digits": draw(st.sampled_from(["0", "9", "99999999999", "-1", "1.5", "0.0", ""])),
            }[op]
            lines[i] = lines[i][:k] + new + lines[i][k + (op != "cr") :]
        elif op == "cut":
            lines = lines[:i] + [lines[i][: draw(st.integers(0, len(lines[i])))]]
    return "\n".join(lines)


@pytest.mark.parametrize("tool", sorted(MODULES))
@props(80)
@given(data=st.data())
def test_mutated_real_outputs(tool, data):
    texts = real_outputs().get(tool)
    assert texts, f"no real output of {tool}"
    text = data.draw(mutation(data.draw(st.sampled_from(texts))))
    mod = MODULES[tool]
    for fmt in formats(mod):
        parse_or_error(mod, text, fmt)
    bytes_or_error(text.encode("utf-8", "surrogatepass"))
