"""Every parser module meets ``parsers.contract.ParserModule``: each declared name present, with a value
of the declared type, and the optional hooks consistent with each other."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from storagelab import parsers
from storagelab.parsers.base import Table
from storagelab.parsers.contract import ParserModule

MODULES = parsers.modules()
IDS = [m.__name__.rsplit(".", 1)[1] for m in MODULES]


def _declared() -> set[str]:
    names = set(ParserModule.__annotations__)
    names |= {n for n, v in vars(ParserModule).items() if inspect.isfunction(v) and not n.startswith("_")}
    return names


def test_the_protocol_names_the_whole_contract():
    assert _declared() == {
        "TOOL",
        "PARSER_VERSION",
        "READS",
        "TABLES",
        "PARSE_TAKES_NAME",
        "STREAM_FORMATS",
        "HELPER_MODULES",
        "sniff",
        "parse",
        "parse_bytes",
        "parse_stream",
    }


@pytest.mark.parametrize("mod", MODULES, ids=IDS)
def test_module_declares_every_name(mod):
    missing = sorted(n for n in _declared() if not hasattr(mod, n))
    assert missing == []
    assert isinstance(mod, ParserModule)


@pytest.mark.parametrize("mod", MODULES, ids=IDS)
def test_module_values_have_the_declared_types(mod):
    assert isinstance(mod.TOOL, str) and mod.TOOL
    assert type(mod.PARSER_VERSION) is int and mod.PARSER_VERSION >= 1
    assert isinstance(mod.TABLES, dict) and mod.TABLES
    assert all(isinstance(k, str) and isinstance(v, Table) for k, v in mod.TABLES.items())
    assert type(mod.PARSE_TAKES_NAME) is bool
    for names in (mod.STREAM_FORMATS, mod.HELPER_MODULES):
        assert isinstance(names, tuple) and all(isinstance(n, str) for n in names)
    here = Path(parsers.__file__).parent
    assert [m for m in mod.HELPER_MODULES if not (here / f"{m}.py").is_file()] == []


@pytest.mark.parametrize("mod", MODULES, ids=IDS)
def test_module_functions_have_the_declared_signatures(mod):
    assert list(inspect.signature(mod.sniff).parameters) == ["text"]
    params = inspect.signature(mod.parse).parameters
    assert list(params)[:2] == ["text", "fmt"] and params["fmt"].default is None
    assert ("name" in params) is mod.PARSE_TAKES_NAME
    if mod.parse_bytes is not None:
        assert list(inspect.signature(mod.parse_bytes).parameters) == ["data"]
    # a stream hook exactly when there are formats to stream
    assert (mod.parse_stream is None) is (mod.STREAM_FORMATS == ())
    if mod.parse_stream is not None:
        assert list(inspect.signature(mod.parse_stream).parameters) == ["open_lines", "fmt", "parsed", "name"]


def test_tools_are_distinct():
    assert len({m.TOOL for m in MODULES}) == len(MODULES)


KINDS = (
    "empty",
    "binary",
    "encoding",
    "unknown-format",
    "truncated",
    "invalid",
    "unsupported-version",
    "compression",
    "too-large",
)


def test_the_nine_error_kinds_are_the_ones_parse_error_documents():
    from storagelab.errors import ParseError

    doc = " ".join(ParseError.__doc__.split())
    assert [k for k in KINDS if k not in doc] == []


def test_writing_a_parser_names_the_whole_contract_and_every_error_kind():
    text = (Path(__file__).parent.parent / "docs" / "writing-a-parser.md").read_text()
    assert [k for k in KINDS if f"| `{k}` |" not in text] == []
    assert [n for n in sorted(_declared()) if f"`{n}" not in text] == []
    assert "ParserModule" in text and "../" not in text  # no file outside the repository
