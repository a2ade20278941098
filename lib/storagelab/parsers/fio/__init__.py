"""fio output in every format: normal text (2.x, 3.x), JSON, JSON+, terse (v2-v5).

``sniff`` decides the format from content; ``parse`` returns one normalized ``Parsed``
whatever the format. A file saved with ``--output-format=normal,json`` (or json,normal /
terse,json,...) holds several parts: the exact JSON part is stored, and the text part is
parsed too and checked against it (disagreement beyond the text's printed precision is
a warning in ``Parsed.warnings``).
"""

from __future__ import annotations

import re

from ..base import Parsed, ParseError
from . import failed
from .agree import check_text_against_json
from .fastjson import parse_bytes as parse_json_bytes
from .json import parse_json
from .logs import parse_log, sniff_log
from .logs import parse_stream as parse_log_stream
from .schema import TABLES  # noqa: F401  (the parser contract: each tool module names its TABLES)
from .terse import parse_terse
from .text import parse_lines, parse_text

TOOL = "fio"
# 2: fio_jobs.layout_files, layout_bytes ("Laying out IO file" line); 3: a JSON direction's rows (fio_results,
# fio_percentiles, derived fio_groups) on the lines of its direction object, not its job's or document's
# 4: a text bandwidth its own io/run cannot give is stored as io/run (warned); fio_sections (Markdown headings)
PARSER_VERSION = 4
# what the unknown-format message lists (parsers.expected_formats): every format this parser stores, as a user knows it
READS: dict[str, str] = {
    "fio-normal": "normal text",
    "fio-json": "JSON",
    "fio-json+": "JSON+",
    "fio-json+normal": "JSON beside normal text",
    "fio-terse": "terse",
    "fio-log": "--write_bw_log/iops/lat logs",
    "fio-hist-log": "--write_hist_log logs",
}
HELPER_MODULES: tuple[str, ...] = ()  # a package: its own files are its code
FORMATS = ("fio-normal", "fio-terse", "fio-json", "fio-json+normal", "fio-log", "fio-hist-log")
PARSE_TAKES_NAME = True  # parse(text, fmt, name): log files say their kind only in their name
STREAM_FORMATS = ("fio-normal", "fio-log", "fio-hist-log")  # parse_stream reads these a line at a time

_TEXT_CUES = re.compile(
    r"\(groupid=\d+, jobs=\d+\): err=|^Run status group \d+ \(all jobs\):|^\s*(READ|WRITE|TRIM|MIXED): (bw|io)=",
    re.M,
)
_JOB_CUE = re.compile(r"\(groupid=\d+, jobs=\d+\): err=")  # the first of _TEXT_CUES
_TEXT_LITERALS = ("(groupid=", "Run status group ", "bw=", "io=")
_TERSE = re.compile(r"^(?:[2-5];fio-[^;\n]*;|2;)[^;\n]*;\d+;\d+;", re.M)
# a JSON document opens with '{' first on a line, whatever follows on that line (fio's own layout has it
# alone, json.dumps(indent=2) too, a compacted document holds all of itself); the line may follow a live
# status line ending in '\r' on the same physical line (eta output). Its keys may come in any order:
# "fio version" is looked for anywhere in the text.
_JSON_CUE = re.compile(r'^(?:[^\n]*\r)?[ \t]*\{[ \t]*(?:"|$)', re.M)


def _job_header_in(head: str) -> bool:
    """Whether ``head`` holds _TEXT_CUES' first cue, a job header's '(groupid=N, jobs=N): err=': found from the
    literal (the search of all three cues at every character costs more than the rest of sniff)."""
    at = head.find("(groupid=")
    while at >= 0:
        if _JOB_CUE.match(head, at):
            return True
        at = head.find("(groupid=", at + 1)
    return False


def sniff(text: str) -> str | None:
    head = text[:200_000]
    # each pattern needs a literal that a plain substring test rules out quickly (a full regex scan
    # of a JSON file for the text cues costs more than decoding the JSON)
    has_json = '"fio version"' in text and bool(_JSON_CUE.search(head))
    has_text = _job_header_in(head) or (any(cue in head for cue in _TEXT_LITERALS) and bool(_TEXT_CUES.search(head)))
    if has_json and has_text:
        return "fio-json+normal"
    if has_json:
        return "fio-json"
    if has_text:  # terse lines beside normal output: the normal output is read (it names them in a warning)
        return "fio-normal"
    if ";" in head and _TERSE.search(head):
        return "fio-terse"
    return sniff_log(text)  # write_bw_log/..._hist_log files: lines of numbers


def _json_passed_over(text: str, parsed: Parsed) -> Parsed:
    """Text or terse output beside a JSON document this did not read (its '"fio version"' key damaged): the values
    stored are the text's, which fio rounds (a 661 ns latency printed as 0 usec), so a warning says so
    (reliability-36 input: exit 0 and no word of the JSON passed over)."""
    m = _JSON_CUE.search(text[:200_000])
    if m and '"jobs"' in text[m.start() : m.start() + 200_000]:
        parsed.warnings.append(
            f'line {text.count(chr(10), 0, m.start()) + 1}: a JSON document without "fio version" is not read: '
            "the values stored are the text output's (fio rounds them)"
        )
    return parsed


def parse_bytes(data: bytes) -> Parsed | None:
    """The fast path (see ``parsers.parse_bytes``): one fio JSON document, whatever its layout, decoded
    and typed from the bytes (fastjson.py); None (decline) for anything else, which then takes ``sniff``/``parse``."""
    if data[:1] != b"{":
        return None
    parsed = parse_json_bytes(data)
    return None if parsed is None else failed.warn(parsed)


def parse_stream(open_lines, fmt: str, parsed: Parsed, name: str | None = None) -> Parsed:
    """A log of any size in bounded memory (base.py "Streaming"): normal output and the log files."""
    if fmt == "fio-normal":
        return failed.warn(parse_lines(open_lines(), parsed))  # the jobs still held (a huge file's first are flushed)
    return parse_log_stream(open_lines, fmt, parsed, name)


def parse(text: str, fmt: str | None = None, name: str | None = None) -> Parsed:
    """``name``: the file's name, which alone says what a log file measures (``x_bw.1.log``)."""
    fmt = fmt or sniff(text)
    if fmt in ("fio-log", "fio-hist-log"):
        return parse_log(text, fmt, name)
    if fmt is None:
        raise ParseError(
            "no fio output found",
            line=1,
            expected="a fio job header '(groupid=N, jobs=N)', a 'Run status group' line, "
            'a JSON document with "fio version", or a terse line',
        )
    if fmt == "fio-normal":
        return failed.warn(_json_passed_over(text, parse_text(text)))
    if fmt == "fio-terse":
        return failed.warn(_json_passed_over(text, parse_terse(text)))
    if fmt in ("fio-json", "fio-json+normal"):
        parsed = parse_json(text)
        if fmt == "fio-json+normal":
            check_text_against_json(text, parsed)
        return failed.warn(parsed)
    raise ParseError(f"unknown fio format {fmt!r}")
