"""The general path's JSON document reader (parsers/fio/jsondoc.py): the C decoder first, spans from the brackets
alone, a cut-short document refused without a token pass; everything else by ``Document._tokens``, the reference
pass. Both ways give the same rows, line spans, warnings and errors (the project's rule for fast paths)."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, RAW, ROOT

from storagelab.errors import ParseError
from storagelab.parsers import decode
from storagelab.parsers.fio import jsondoc
from storagelab.parsers.fio.json import parse_json

FIO_JSON = sorted(
    p
    for p in list((FIXTURES / "fio").rglob("*")) + list(RAW.rglob("*"))
    if p.is_file() and p.suffix not in (".md", ".sh", ".py", ".csv") and b'"fio version"' in p.read_bytes()
)


def _outcome(text: str):
    """parse_json's rows (line spans included), warnings, format and version, or its error."""
    try:
        p = parse_json(text)
    except ParseError as e:
        return ("error", str(e), e.kind, e.line)
    return ("rows", {t: list(r) for t, r in p.tables.items()}, p.warnings, p.format, p.tool_version)


def _both(text: str, monkeypatch) -> tuple:
    """(this reader's outcome, the token pass's outcome, how many documents this reader gave the token pass)."""
    passes = []
    tokens = jsondoc.Document._tokens
    with monkeypatch.context() as m:
        m.setattr(jsondoc.Document, "_tokens", lambda *a: passes.append(1) or tokens(*a))
        got = _outcome(text)
    with monkeypatch.context() as m:
        m.setattr(jsondoc.Document, "_read", tokens)
        return got, _outcome(text), len(passes)


def test_there_are_many_real_fio_json_files():
    assert len(FIO_JSON) >= 100


@pytest.mark.parametrize("path", FIO_JSON, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_real_fio_json_file_whole_and_cut_reads_as_the_token_pass_reads_it(path, monkeypatch):
    """The whole file (its rows, with their line spans) and the file cut short at 12 line ends and in the middle
    of those lines: the same outcome both ways. (test_robustness cuts every file at every line and checks that
    each cut is read or named.)"""
    text = decode(path.read_bytes())
    got, want, passes = _both(text, monkeypatch)
    refused = path.name == "two-servers.json"  # a fio --client report of two servers, refused (test_fio_client.py)
    assert want[0] == ("error" if refused else "rows") and got == want and passes == 0
    lines = text.split("\n")
    for i in range(1, len(lines), max(1, len(lines) // 12)):
        for cut in ("\n".join(lines[:i]) + "\n", "\n".join(lines[: i - 1] + [lines[i - 1][: len(lines[i - 1]) // 2]])):
            got, want, _ = _both(cut, monkeypatch)
            assert got == want, f"{path.name} cut at line {i}"


DOC = (FIXTURES / "fio" / "3.33" / "three_jobs_json.txt").read_text()  # the document opens on line 3
FIRST = DOC.index('"jobname" : "w"')  # the first job's name, line 16
SECOND = DOC.index('"jobname" : "r"')  # the second job's, line 261
NAN = DOC.replace('"usr_cpu" : 20.', '"usr_cpu" : nan, "x" : 20.')  # a bare nan on line 185


@pytest.mark.parametrize(
    "text,outcome",
    [
        # cut short: the text's last line, decided without the token pass ...
        (DOC[: DOC.index('"read" : {') + 10], ("truncated", 26, 0)),
        (DOC[: FIRST + 14], ("truncated", 16, 0)),  # in the string "w"
        (NAN[: NAN.index('"iodepth_level"')], ("truncated", 190, 0)),  # a bare nan, but no bracket after it
        # ... and by the token pass wherever a bracket follows the point where the decoder stopped: a string never
        # closed holding one (the token pass sees a bracket there) ...
        (DOC[:FIRST] + '"jobname" : "w]x', ("invalid", 16, 1)),
        # ... a bare nan before the cut, a bracket that does not match, an escape JSON does not have, nesting
        (NAN[: NAN.index('"jobname" : "r"')], ("truncated", 261, 1)),  # the cut: line 261's indentation
        (DOC.replace('"job options" : {', '"job options" : [', 1), ("invalid", 25, 1)),
        (DOC.replace('"jobname" : "w"', '"jobname" : "w\\q"'), ("invalid", 16, 1)),
        ('{"a":' * 5000 + "1" + "}" * 5000 + "\n", ("invalid", 1, 1)),  # too deep for the C decoder
    ],
    ids=[
        "cut-in-an-object",
        "cut-in-a-string",
        "nan-no-bracket-after",
        "string-never-closed",
        "nan-then-cut",
        "mismatch",
        "escape",
        "deep",
    ],
)
def test_what_the_decoder_does_not_end_is_the_token_pass_error(text, outcome, monkeypatch):
    got, want, passes = _both(text, monkeypatch)
    assert got == want
    assert (got[0], got[2], got[3], passes) == ("error", *outcome), got


def test_nan_and_duplicate_keys_are_counted_once_when_the_token_pass_reads_the_document(monkeypatch):
    """A bare nan in the second job: the C decoder stops there, after it has counted the first job's NaN literal
    and duplicate key, and the token pass reads the document again: each is counted once. The same document
    without the bare nan is read by the decoder alone, with the same counts."""
    doc = DOC[:SECOND].replace('"usr_cpu" : 20.', '"usr_cpu" : NaN, "usr_cpu" : 20.') + DOC[SECOND:]
    bare = doc[:SECOND] + doc[SECOND:].replace('"usr_cpu" : 0.', '"usr_cpu" : -nan, "x" : 0.', 1)
    for text, nonfinite, passes in ((bare, 2, 1), (doc, 1, 0)):
        got, want, took = _both(text, monkeypatch)
        assert got == want and took == passes
        assert [w for w in got[2] if w.startswith("line 3:")] == [
            f"line 3: {nonfinite} nan/inf value(s) stored as NULL",
            "line 3: duplicate JSON keys kept first value: usr_cpu",
        ]


SORTED_SPANS = [(23, 267), (268, 512), (513, 776)]  # each job object from its "{" line to its "}" line


def test_spans_of_a_compacted_and_a_reindented_document(monkeypatch):
    """Layouts fio does not print (one line; json.dumps(indent=1) with keys sorted): the same spans both ways."""
    obj = json.loads(DOC[DOC.index("{") :])
    compact, sorted_ = json.dumps(obj), json.dumps(obj, indent=1, sort_keys=True)
    for text, spans in ((compact, [(1, 1)] * 3), (sorted_, SORTED_SPANS)):
        got, want, passes = _both(text, monkeypatch)
        assert got == want and passes == 0
        assert [(j["line_start"], j["line_end"]) for j in got[1]["fio_jobs"]] == spans
