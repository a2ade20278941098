"""One fio JSON document as the general path decodes it: decoded in C with the line spans of the job and disk
objects from its brackets, else (bare nan/inf made JSON, malformed JSON) the regex token pass; duplicate keys,
integers past 64 bits, fio's version."""

from __future__ import annotations

import json as _json
import re
from typing import Any

from ..base import ParseError

# One pass over a document: strings (kept as they are), bare nan/inf (fio's %f), brackets, newlines.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![\w.])(-?)(nan|inf)\b|[{}\[\]]|\n', re.S)
_VERSION = re.compile(r"fio-(\d+)\.(\d+)(?:\.(\d+))?")


def _refuse_past_64_bits(obj: Any, text: str, offset: int, first_line: int) -> None:
    """A ParseError on the line of the first integer no 64-bit column holds (every quantity is stored as
    BIGINT or DOUBLE, and a DOUBLE would keep only its first 16 digits)."""
    found = _past_64_bits(obj, None)
    if found is None:
        return
    key, value = found
    digits = str(value)
    at = text.find(digits, offset)
    shown = digits if len(digits) <= 30 else f"{digits[:12]}... ({len(digits)} digits)"
    raise ParseError(
        f"field {key!r}: {shown} is out of range",
        line=first_line + text.count("\n", offset, max(at, offset)),
        kind="invalid",
        expected="an integer of at most 64 bits",
    )


def _past_64_bits(value: Any, key: str | None) -> tuple[str | None, int] | None:
    """(key, value) of the first integer inside value whose magnitude needs more than 63 bits, else None."""
    t = type(value)
    if t is int:
        return (key, value) if value.bit_length() > 63 else None
    if t is dict:
        for k, v in value.items():
            if type(v) is not float and type(v) is not str:
                found = _past_64_bits(v, k)
                if found is not None:
                    return found
    elif t is list:
        for v in value:
            found = _past_64_bits(v, key)
            if found is not None:
                return found
    return None


# the keys whose object lists fio's options as given (a repeated option: fio used the last)
_OPTION_KEYS = frozenset(("job options", "global options"))

# the keys of a job object whose object value is one direction's results (fio/schema.py DIRECTIONS)
_DIRECTION_KEYS = frozenset(("read", "write", "trim", "mixed", "sync"))


class Document:
    """One JSON document: decoded object plus the raw line spans of its job and disk objects, and of the
    direction objects ("read": {...}, "write": {...}) inside each job."""

    def __init__(self, text: str, offset: int, first_line: int, warnings: list[str]):
        self._by_key: dict[str, tuple[int, int]] | None = None
        self.new_run = False  # set by parse_json: a later fio run in the same file starts here
        self.line_start = first_line
        self.duplicates: set[str] = set()
        self.option_repeats: dict[str, Any] = {}  # an option given twice to fio: its last value, the one fio used
        self._last_wins: dict[int, tuple[dict[str, Any], set[str]]] = {}
        self.nonfinite = 0
        decoder = _json.JSONDecoder(object_pairs_hook=self._pairs, parse_constant=self._constant, strict=False)
        self._read(decoder, text, offset, first_line)
        _refuse_past_64_bits(self.obj, text, offset, first_line)
        # fio's client/server mode (--client) names the array "client_stats" (fio client.c)
        self.jobs_key = "jobs" if isinstance(self.obj, dict) and "jobs" in self.obj else "client_stats"
        if not isinstance(self.obj, dict) or not isinstance(self.obj.get(self.jobs_key), list):
            raise ParseError(
                'JSON document has no "jobs" array',
                line=first_line,
                kind="invalid",
                expected='a fio JSON report with "fio version" and "jobs" (or "client_stats")',
            )
        if self.nonfinite:
            warnings.append(f"line {first_line}: {self.nonfinite} nan/inf value(s) stored as NULL")
        for _, repeated in self._last_wins.values():  # objects other than options: their first value kept
            self.duplicates |= repeated
        self._last_wins.clear()
        if self.duplicates:
            warnings.append(
                f"line {first_line}: duplicate JSON keys kept first value: " + ", ".join(sorted(self.duplicates))
            )
        if self.option_repeats:
            warnings.append(
                f"line {first_line}: options given twice, kept the last value as fio does: "
                + ", ".join(f"{k}={v}" for k, v in sorted(self.option_repeats.items()))
            )
        self._versions(warnings)

    def _versions(self, warnings: list[str]) -> None:
        first_line = self.line_start
        version = self.obj.get("fio version")
        self.version_string = version if isinstance(version, str) else None
        m = _VERSION.search(self.version_string or "")
        self.version = tuple(int(g) for g in m.groups() if g is not None) if m else None
        if self.version is None:
            warnings.append(f'line {first_line}: no "fio version"; io_bytes units inferred from the keys present')

    def _read(self, decoder: _json.JSONDecoder, text: str, offset: int, first_line: int) -> None:
        """The document decoded in C first: when it is JSON as written (no bare nan/inf, nothing malformed), the
        line spans come from its brackets alone (``_bracket_spans``); a document cut short at the end of the text
        is refused on the text's last line, as ``_tokens`` refuses it. Anything else takes ``_tokens``, the
        reference, whose errors and nan/inf handling this gives exactly (tests/test_fio_jsondoc.py)."""
        try:
            obj, end = decoder.raw_decode(text, offset)
        except _json.JSONDecodeError as e:
            if _cut_short_after(text, e):
                raise _cut_short(text.count("\n", offset) + first_line, first_line) from None
        except RecursionError:
            pass
        else:
            self.obj, self.end_offset = obj, end
            self.line_end, self.spans, self.blocks = _bracket_spans(text, offset, end, first_line)
            return
        # what the partial decode saw: _tokens decodes it all again
        self.duplicates, self.nonfinite, self.option_repeats = set(), 0, {}
        self._last_wins.clear()
        self._tokens(decoder, text, offset, first_line)

    def _tokens(self, decoder: _json.JSONDecoder, text: str, offset: int, first_line: int) -> None:
        """One regex pass over the document: line spans, bare nan/inf made JSON, then decoded. ``blocks`` holds
        the spans of the direction objects one level inside the objects of the top-level arrays, by (index in
        ``spans``, key); the first of a duplicated key, as the decoder keeps."""
        pieces: list[str] = []
        spans: list[tuple[int, int]] = []
        stack: list[tuple[str, int]] = []
        blocks: dict[tuple[int, str], tuple[int, int]] = {}
        inner = None  # (key, line) of the direction object open inside a top-level array's object
        line, last, end = first_line, offset, None
        for m in _TOKENS.finditer(text, offset):
            tok = m.group(0)
            if tok == "\n":
                line += 1
            elif tok[0] == '"':
                line += tok.count("\n")
            elif m.group(2):
                pieces += [text[last : m.start()], "NaN" if m.group(2) == "nan" else m.group(1) + "Infinity"]
                last = m.end()
            elif tok in "{[":
                if len(stack) == 3 and tok == "{" and stack[2][0] == "{" and stack[1][0] == "[":
                    key = _key_before(text, m.start())
                    inner = (key, line) if key in _DIRECTION_KEYS else None
                stack.append((tok, line))
            else:
                if not stack or {"}": "{", "]": "["}[tok] != stack[-1][0]:
                    raise ParseError(
                        f"unbalanced '{tok}' in JSON document", line=line, kind="invalid", expected="well-formed JSON"
                    )
                opener, opened_at = stack.pop()
                if opener == "{" and len(stack) == 2 and stack[-1][0] == "[":
                    spans.append((opened_at, line))
                elif inner is not None and len(stack) == 3:
                    blocks.setdefault((len(spans), inner[0]), (inner[1], line))
                    inner = None
                if not stack:
                    end = m.end()
                    break
        if end is None:
            raise _cut_short(line, first_line)
        pieces.append(text[last:end])
        self.end_offset, self.line_end, self.spans, self.blocks = end, line, spans, blocks
        try:
            self.obj = decoder.decode("".join(pieces))
        except _json.JSONDecodeError as e:
            raise ParseError(
                f"invalid JSON: {e.msg}", line=first_line + e.lineno - 1, kind="invalid", expected="fio's JSON syntax"
            ) from None
        except RecursionError:
            raise ParseError("JSON nested too deeply", line=first_line, kind="invalid") from None

    def _pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """An object as fio meant it. A key printed twice keeps its first value (warned), except in fio's
        "job options"/"global options", which list the options as given: an option given twice (``--ioengine=libaio
        ... --ioengine=psync``) is listed twice, and fio ran with the last (later options override earlier ones)."""
        obj = dict(pairs)  # the last value of a repeated key
        if self._last_wins:
            for key in _OPTION_KEYS.intersection(obj):
                value = obj[key]
                last = self._last_wins.pop(id(value), None) if isinstance(value, dict) else None
                if last is not None:
                    obj[key] = last[0]
                    self.option_repeats.update((k, last[0][k]) for k in last[1])
        if len(obj) == len(pairs):
            return obj
        first: dict[str, Any] = {}
        repeated = set()
        for key, value in pairs:
            if key in first:
                if key != "0.00":  # fio <= 3.3 pads percentile lists with "0.00": 0
                    repeated.add(key)
                continue
            first[key] = value
        for key in _OPTION_KEYS.intersection(first):  # the options objects as fixed above
            first[key] = obj[key]
        if repeated:
            # an options object is known by its parent's key: the parent fixes it (above) and takes its keys back
            self._last_wins[id(first)] = (obj, repeated)
        return first

    def _constant(self, name: str) -> None:
        self.nonfinite += 1
        return None

    def span(self, key: str, i: int) -> tuple[int, int]:
        """Lines of object i of the top-level array ``key`` ("jobs", "disk_util"), else the document's."""
        at = self._index(key, i)
        return (self.line_start, self.line_end) if at is None else self.spans[at]

    def block(self, key: str, i: int, direction: str) -> tuple[int, int]:
        """Lines of the ``direction`` object ("read": {...}) of object i of the top-level array ``key``, else
        those of object i (``span``)."""
        at = self._index(key, i)
        found = None if at is None else self.blocks.get((at, direction))
        return self.span(key, i) if found is None else found

    def _index(self, key: str, i: int) -> int | None:
        """The index in ``spans`` of object i of the top-level array ``key``, None when there is none.

        ``spans`` holds the objects of all top-level arrays in file order, which is the decoded dict's
        order (keys may come in any order: json.dumps(sort_keys=True) puts "disk_util" before "jobs")."""
        by_key = self._by_key
        if by_key is None:
            by_key, k = {}, 0
            for name, value in self.obj.items():
                if type(value) is list:
                    n = sum(1 for x in value if type(x) is dict)
                    by_key[name], k = (min(k, len(self.spans)), min(k + n, len(self.spans))), k + n
            self._by_key = by_key
        first, stop = by_key.get(key, (0, 0))
        return first + i if first + i < stop else None


def _key_before(text: str, at: int) -> str | None:
    """The key whose value opens at ``at`` (``"read" : {``): the string that ends before it, or None when the
    text between them is not a bare colon, or the string holds an escaped quote."""
    close = text.rfind('"', 0, at)
    if close < 0 or text[close + 1 : at].strip() != ":":
        return None
    start = text.rfind('"', 0, close)
    return None if start < 0 or text[start - 1] == "\\" else text[start + 1 : close]


def _cut_short(line: int, first_line: int) -> ParseError:
    return ParseError(
        "JSON document is cut short (unclosed '{')",
        line=line,
        kind="truncated",
        expected=f"the '}}' closing the document opened on line {first_line}",
    )


# what the C decoder says between two tokens or at the quote opening a string (never inside one)
_BETWEEN_TOKENS = ("Expecting ", "Unterminated string starting at")


def _cut_short_after(text: str, e: _json.JSONDecodeError) -> bool:
    """Whether ``_tokens`` would find the document cut short: the decoder stopped between two tokens (or at
    the quote of a string that never ends) with no bracket after that point. Up to it the text is JSON, so
    ``_tokens`` reads the same strings and brackets there (none closing the document, or the decoder would have
    ended); after it no bracket can close or mismatch one, so its pass ends with the document still open."""
    if not e.msg.startswith(_BETWEEN_TOKENS):
        return False
    return _ANY_BRACKET.search(text, e.pos) is None


_ANY_BRACKET = re.compile(r"[{}\[\]]")
# from one bracket to the next outside strings: everything else, strings whole, then the bracket (possessive:
# JSON the decoder has read never needs a step back)
_NEXT_BRACKET = re.compile(r'(?:[^"{}\[\]]++|"(?:[^"\\]++|\\.)*+")*+([{}\[\]])', re.S)


def _bracket_spans(
    text: str, offset: int, end: int, first_line: int
) -> tuple[int, list[tuple[int, int]], dict[tuple[int, str], tuple[int, int]]]:
    """``_tokens``' line_end, spans and blocks for ``text[offset:end]``, a document the decoder has read whole:
    from its brackets alone (JSON holds no bare nan/inf and nothing unbalanced), the lines between them
    counted in C."""
    spans: list[tuple[int, int]] = []
    blocks: dict[tuple[int, str], tuple[int, int]] = {}
    stack: list[tuple[str, int]] = []
    inner = None  # (key, line) of the direction object open inside a top-level array's object
    line, last = first_line, offset
    for m in _NEXT_BRACKET.finditer(text, offset, end):
        at = m.start(1)
        line += text.count("\n", last, at)
        last = at
        tok = m.group(1)
        if tok == "{" or tok == "[":
            if tok == "{" and len(stack) == 3 and stack[2][0] == "{" and stack[1][0] == "[":
                key = _key_before(text, at)
                inner = (key, line) if key in _DIRECTION_KEYS else None
            stack.append((tok, line))
            continue
        opener, opened_at = stack.pop()
        if opener == "{" and len(stack) == 2 and stack[1][0] == "[":
            spans.append((opened_at, line))
        elif inner is not None and len(stack) == 3:
            blocks.setdefault((len(spans), inner[0]), (inner[1], line))
            inner = None
    return line, spans, blocks
