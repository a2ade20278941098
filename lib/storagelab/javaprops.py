"""java.util.Properties' file syntax, as Spark reads spark-defaults.conf and a --properties-file."""

from __future__ import annotations

import re

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    """``text`` with Properties' escapes read: ``\\uXXXX``, ``\\t``..., and any other ``\\c`` as ``c``."""

    def one(m: re.Match[str]) -> str:
        c = m.group(1)
        if c.startswith("u"):
            return chr(int(c[1:], 16)) if len(c) == 5 else c[1:]
        return _ESCAPES.get(c, c)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|u|.)", one, text, flags=re.S)


def _logical_lines(text: str) -> list[str]:
    """Properties' logical lines: comments dropped, a line ending in an odd number of backslashes joined to the next
    (whose leading blanks are dropped). Lines end at \\n, \\r or \\r\\n only (not at \\f, as str.splitlines does)."""
    out: list[str] = []
    natural = re.split(r"\r\n|\r|\n", text)
    i = 0
    while i < len(natural):
        line = natural[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        while len(line) - len(line.rstrip("\\")) & 1 and i < len(natural):
            line = line[:-1] + natural[i].lstrip(" \t\f")
            i += 1
        if len(line) - len(line.rstrip("\\")) & 1:
            line = line[:-1]  # a last line's lone backslash is dropped
        out.append(line)
    return out


def load(text: str) -> dict[str, str]:
    """The settings of a properties file's ``text``, as ``java.util.Properties.load`` reads them (Spark trims the
    values)."""
    settings = {}
    for line in _logical_lines(text):
        m = re.match(r"((?:\\.|[^\\=:\s])*)[ \t\f]*[=:]?[ \t\f]*(.*)", line, flags=re.S)
        if m:
            settings[_unescape(m.group(1))] = _unescape(m.group(2)).strip()
    return settings
