"""The parser contract, written down: what every module in ``parsers.MODULES`` declares.

``READS`` maps every ``files.format`` a parser stores to the words a user knows it by (a command, an option,
the output's look); ``parsers.expected_formats`` builds the unknown-format message from them, so a new parser
or format can never be missing from it (``tests/test_unknown_format.py``).

``ParserModule`` is a ``typing.Protocol`` a module satisfies structurally (modules are checked by
``tests/test_parser_contract.py``: every name present, with a value of the declared type). The
optional hooks are declared by every module too, with their "not offered" value, so the registry
reads attributes and never guesses with ``getattr``/``hasattr``:

* ``PARSE_TAKES_NAME = False``: ``parse(text, fmt, name=...)`` wants the file's name (fio log files
  say what they measure only in their name);
* ``parse_bytes = None``: a fast path, bytes in, the same ``Parsed`` as ``parse`` or None to decline;
* ``STREAM_FORMATS = ()`` and ``parse_stream = None``: formats read a line at a time in bounded memory
  (``base.py`` "Streaming");
* ``HELPER_MODULES = ()``: sibling modules (``parsers/<name>.py``) the parser is made of, hashed into its
  parser version with it (a package's own files always are). A helper that is another tool's parser reads a
  later section of a transcript (``parsers/handover.py``: ``arcstat`` then ``zpool iostat``), so its tables
  are tables this parser's rows may fill too (``fillable_tables``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from .base import Parsed, Table

# the signatures of the hooks (a module's functions are checked against these by the contract test)
Sniff = Callable[[str], "str | None"]
ParseBytes = Callable[[bytes], "Parsed | None"]
OpenLines = Callable[[], Iterable[str]]
ParseStream = Callable[..., Parsed]  # (open_lines, fmt, parsed, name=None) -> Parsed


@runtime_checkable
class ParserModule(Protocol):
    """One tool's parser. Required: TOOL, PARSER_VERSION, TABLES, sniff, parse. Optional hooks are
    declared explicitly with their "not offered" value (see the module docstring)."""

    TOOL: str  # files.tool
    PARSER_VERSION: int  # bump when rows change meaning (the code hash catches the rest)
    READS: dict[str, str]  # every files.format it stores -> how a user knows it (the unknown-format message)
    TABLES: dict[str, Table]  # the tables this tool fills
    PARSE_TAKES_NAME: bool
    STREAM_FORMATS: tuple[str, ...]
    HELPER_MODULES: tuple[str, ...]

    def sniff(self, text: str) -> str | None: ...

    def parse(self, text: str, fmt: str | None = None, *args: Any, **kwargs: Any) -> Parsed: ...

    # None when not offered
    parse_bytes: ParseBytes | None
    parse_stream: ParseStream | None


REQUIRED_FUNCTIONS = ("sniff", "parse")
OPTIONAL_FUNCTIONS = ("parse_bytes", "parse_stream")


def fillable_tables(module: Any, parsers: Iterable[Any]) -> set[str]:
    """The tables a parser module's ``parse`` may return rows for: its own ``TABLES`` and those of the parser
    modules among its ``HELPER_MODULES`` (the later section of a transcript it hands to them)."""
    helpers = set(module.HELPER_MODULES)
    out = set(module.TABLES)
    for other in parsers:
        if other.__name__.rsplit(".", 1)[-1] in helpers:
            out |= set(other.TABLES)
    return out
