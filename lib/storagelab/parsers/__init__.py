"""Parser registry and content-based detection.

``detect(text)`` asks each parser module's ``sniff`` in turn; the file name is never used.
``parse_bytes(data)`` decodes, detects and parses one file, raising ``ParseError`` with a
line number and what was expected for anything it cannot read.
"""

from __future__ import annotations

import codecs
import hashlib
import importlib
import os
import re
import sys
from pathlib import Path
from types import ModuleType

from .. import __version__
from ..errors import ParseError
from .base import Parsed, lines_of
from .compressed import decompress

# Order matters only where two tools could both claim a text; each sniffer is specific.
MODULES = (
    "fio", "bonnie", "zdb", "partitions", "zfs_get", "arcstats", "zpool", "mbuffer", "pv", "dd", "zfs_sendrecv",
    "transcribed",
)  # fmt: skip
# control characters other than \t \n \r \x0c (form feed) and \x1b (colour codes)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])  # the same, as bytes
_SAMPLE_CHARS = 65536  # the characters check_sample looks at


_LOADED: list[ModuleType] = []


def modules() -> list[ModuleType]:
    if not _LOADED:
        _LOADED[:] = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return list(_LOADED)


_CODE_HASHES: dict[str, str] = {}


def source_hash(files: list[Path], root: Path, salt: bytes = b"") -> str:
    """The one hash of source code in storagelab: of ``salt`` and each file's path (relative to ``root``)
    and bytes, in the given order. Used for a tool's parser version (``_code_hash``) and for the store's
    code signature (``store.db.code_signature``)."""
    h = hashlib.sha256(salt)
    for f in files:
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _code_hash(module: ModuleType) -> str:
    """Hash of the code that shapes a tool's rows: its module (or package) plus base.py and units.py.

    Part of ``parser_version``, so any change to a parser re-parses that tool's files on the next
    ingest, even when nobody remembered to bump PARSER_VERSION.
    """
    name = module.__name__
    if name not in _CODE_HASHES:
        here = Path(__file__).parent
        assert module.__file__ is not None  # a parser module is a file
        src = Path(module.__file__)
        files = sorted(src.parent.glob("*.py")) if src.name == "__init__.py" and src.parent != here else [src]
        files += [here / f"{m}.py" for m in module.HELPER_MODULES]  # modules a parser is made of
        files += [here / "base.py", here.parent / "units.py"]
        _CODE_HASHES[name] = source_hash(files, here.parent)[:10]
    return _CODE_HASHES[name]


def parser_version(module: ModuleType) -> str:
    return f"storagelab {__version__}; {module.TOOL} parser {module.PARSER_VERSION} (code {_code_hash(module)})"


def decode(data: bytes) -> str:
    """Bytes of a log to text: UTF-8 (with or without BOM), UTF-16 with BOM, else Latin-1.

    Empty files and binary data are refused with a ParseError naming the line. CRLF line ends
    become LF (line numbers do not change); a lone CR (progress output) is kept.
    """
    text = _decode(data)
    return text.replace("\r\n", "\n") if "\r" in text else text


def check_not_empty(data: bytes) -> None:
    """Empty files and files of white space only are refused (ParseError kind ``empty``)."""
    if not data.strip():
        raise ParseError(
            "file is empty" if not data else "file holds only white space",
            kind="empty",
            expected=f"the text output of {', '.join(m.TOOL for m in modules())}",
        )


def _decode(data: bytes) -> str:
    check_not_empty(data)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as e:
            raise ParseError(f"invalid UTF-16 at byte {e.start}", kind="encoding") from None
    nul = data.find(b"\x00")
    if nul >= 0:
        # UTF-16 without BOM: every other byte is NUL in ASCII text
        sample = data[:4096]
        if len(sample) >= 4 and sample.count(b"\x00") * 2 >= len(sample) - 2:
            try:
                enc = "utf-16-le" if sample[1] == 0 else "utf-16-be"
                return data.decode(enc)
            except UnicodeDecodeError:
                pass
        line = data.count(b"\n", 0, nul) + 1
        raise ParseError(f"binary data: NUL byte at offset {nul}", line=line, kind="binary", expected="a text log")
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    # a control character of the text is that byte in UTF-8 and in Latin-1 alike: with none in the bytes that can
    # hold the text's first 64 Ki characters (4 bytes a character at most), the sample is clean (a C-level pass)
    head = data[: 4 * _SAMPLE_CHARS]
    if len(head.translate(None, _CONTROL_BYTES)) != len(head):
        check_sample(text)
    return text


def head_encoding(data: bytes, whole: bool) -> str:
    """The encoding a log read as a stream is decoded with, decided on its first bytes as ``decode`` decides on all
    of them: 'utf-16' (a BOM), 'utf-16-le'/'utf-16-be' (NULs every other byte), 'utf-8-sig' (a UTF-8 BOM), 'utf-8'
    (valid so far: a byte met later that is not UTF-8 makes the whole log Latin-1, as in ``decode``) or 'latin-1'.
    ``whole``: ``data`` is all of the log. Binary data (other NULs): ParseError. The streamed parse
    (``store.stream``) and the streamed excerpt (``excerpts``) both decide here: the same text, the same lines."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    nul = data.find(b"\x00")
    if nul >= 0:
        sample = data[:4096]
        if len(sample) >= 4 and sample.count(b"\x00") * 2 >= len(sample) - 2:
            return "utf-16-le" if sample[1] == 0 else "utf-16-be"
        line = data.count(b"\n", 0, nul) + 1
        raise ParseError(f"binary data: NUL byte at offset {nul}", line=line, kind="binary", expected="a text log")
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=whole)
    except UnicodeDecodeError:
        return "latin-1"
    return "utf-8"


def check_sample(text: str) -> None:
    """A text log has few control characters besides \t \r \n \x1b (colour codes): its first 64 Ki
    characters with many others are binary data (ParseError)."""
    sample = text[:_SAMPLE_CHARS]
    first = _CONTROL.search(sample)
    ctrl = len(_CONTROL.findall(sample)) if first else 0
    if first is not None and ctrl > max(8, len(sample) // 100):
        at = first.start()
        raise ParseError(
            f"binary data: {ctrl} control characters in the first {len(sample)} characters",
            line=sample.count("\n", 0, at) + 1,
            kind="binary",
            expected="a text log",
        )


def detect(text: str) -> tuple[ModuleType, str]:
    """The parser module and format name for a text, by content."""
    for mod in modules():
        fmt = mod.sniff(text)
        if fmt:
            return mod, fmt
    first = next((i for i, ln in enumerate(text.splitlines(), 1) if ln.strip()), 1)
    other = next((what for what, pattern in _NOT_READ if pattern.search(text[:_SAMPLE_CHARS])), None)
    raise ParseError(
        other or "no known tool output found",
        line=first,
        kind="unknown-format",
        expected=expected_formats(),
    )


def expected_formats() -> str:
    """What the unknown-format message says is read: every registered parser's tool and the formats it stores
    (each module's ``READS``), from the registry itself so that a new parser or format is listed with no edit here."""
    parts = []
    for mod in modules():
        names = list(dict.fromkeys(mod.READS.values()))
        parts.append(f"{mod.TOOL} ({', '.join(names)})")
    return "output of " + "; ".join(parts)


# outputs engineers paste beside those that no parser reads: named, so that the refusal is not taken for a
# damaged file of a tool that is read
_NOT_READ = tuple(
    (f"{what}: storagelab does not read this tool's output" if ":" not in what else what, re.compile(pattern, re.M))
    for what, pattern in (
        ("/proc/mdstat", r"^Personalities : "),
        ("mdadm --detail/--examine", r"^\s*Raid Level : "),
        ("smartctl", r"^smartctl \d|\"smartctl\": \{"),
        # lsblk's own columns only: `zpool list` and `zfs list` headers also start NAME SIZE / NAME USED
        ("lsblk", r"^NAME\s.*(?:MAJ:MIN|PHY-SEC|LOG-SEC|FSTYPE|KNAME|\sRM\s|\sRO\s)"),
        ("zpool status -x: 'all pools are healthy' names no pool: nothing to store", r"\Aall pools are healthy\s*\Z"),
        ("zpool: 'no pools available': nothing to store", r"\Ano pools available\s*\Z"),
    )
)


def parse_text(text: str, name: str | None = None) -> tuple[Parsed, ModuleType]:
    try:
        mod, fmt = detect(text)
    except ParseError as e:
        # a pasted code block (markdown, reST): every line indented alike; read it without the indent, same lines
        indent, dedented = common_indent(text)
        what = None
        if not indent:  # a command line indented one way above output indented another (4 spaces, then tabs)
            indent, dedented = common_indent(text, skip_first=True)
            what = "every line after the first" if indent else None
        if e.kind != "unknown-format" or not indent:
            raise
        try:
            mod, fmt = detect(dedented)
        except ParseError:
            raise e from None
        parsed, mod = _parse_detected(dedented, mod, fmt, name)
        how = (
            "a tab"
            if indent == "\t"
            else f"{len(indent)} tabs"
            if indent.strip("\t") == ""
            else f"{len(indent)} spaces"
            if indent.strip(" ") == ""
            else repr(indent)
        )
        parsed.warnings.insert(
            0, f"line 1: {what or 'every line'} is indented by {how} (a pasted code block): read without it"
        )
        return parsed, mod
    return _parse_detected(text, mod, fmt, name)


def common_indent(text: str, skip_first: bool = False) -> tuple[str, str]:
    """The blanks that start every non-blank line, and the text without them ('' and the text when none). With
    ``skip_first``, those of every non-blank line after the first, which must itself be indented (a command line
    indented by 4 spaces above output indented by tabs): the first line loses its own blanks."""
    lines = text.split("\n")
    heads = [ln[: len(ln) - len(ln.lstrip(" \t"))] for ln in lines if ln.strip()]
    if skip_first:
        if len(heads) < 2 or not heads[0]:
            return "", text
        heads = heads[1:]
    indent = os.path.commonprefix(heads) if heads else ""
    if not indent:
        return "", text
    return indent, "\n".join(ln[len(indent) :] if ln.startswith(indent) else ln.strip(" \t") for ln in lines)


def _parse_detected(text: str, mod: ModuleType, fmt: str, name: str | None) -> tuple[Parsed, ModuleType]:
    try:
        if name is not None and mod.PARSE_TAKES_NAME:
            return mod.parse(text, fmt, name=name), mod  # fio log files: the kind is in the name only
        parsed = mod.parse(text, fmt)
    except ValueError as e:
        if isinstance(e, ParseError) or _TOO_MANY_DIGITS not in str(e):
            raise
        raise too_many_digits(text) from None
    last = text[text.rfind("\n") + 1 :].rstrip(" \t")
    if mod.TOOL != "fio" and _CUT_END.search(last):  # fio's parsers refuse a cut line themselves
        # reliability-33: a log copied while written, its last number cut (`hits: 14` of `hits: 1473806`), was
        # stored with no word; every tool ends its lines, so a last line without one is named
        parsed.warnings.append(
            f"line {text.count(chr(10)) + 1}: the file ends without a line end (a log cut short?): its last line "
            f"{last.strip()[:60]!r} may be incomplete"
        )
    return parsed, mod


_CUT_END = re.compile(r"[0-9.,]\Z")  # a last line that may stop inside a number


# Python refuses to convert integers of more than sys.get_int_max_str_digits() (4300) digits: no measurement has
# that many, so such a number is the file's fault, reported with its line.
_TOO_MANY_DIGITS = "integer string conversion"


def too_many_digits(text: str) -> ParseError:
    """The error for a number too long to convert, naming the first line that holds one."""
    return too_many_digits_in(lines_of(text))


def too_many_digits_in(lines) -> ParseError:
    """``too_many_digits`` over the lines of a log (``lines_of``'s, read one at a time)."""
    limit = sys.get_int_max_str_digits() or 4300
    long_number = re.compile(r"\d{%d,}" % (limit + 1))
    line = digits = None
    for n, text in enumerate(lines, 1):
        found = long_number.search(text)
        if found:
            line, digits = n, len(found.group())
            break
    return ParseError(
        f"a number with {digits or 'too many'} digits: no measurement has that many",
        line=line,
        kind="invalid",
        expected=f"numbers of at most {limit} digits",
    )


def parse_bytes(data: bytes, path: str | None = None) -> tuple[Parsed, ModuleType]:
    """Decompress (gzip/xz/bzip2/zstd, by magic bytes: ``compressed.py``), decode, detect and parse. A parser
    module may offer a fast path, ``parse_bytes(data)``: bytes in, exactly the Parsed its general path gives, or
    None to decline (cheaply) anything it does not know; each is offered the file first, in ``MODULES`` order,
    and the first Parsed wins."""
    try:
        data = decompress(data)
        for fast, mod in _fast_paths():
            try:
                parsed = fast(data)
            except ValueError as e:
                if isinstance(e, ParseError) or _TOO_MANY_DIGITS not in str(e):
                    raise
                raise too_many_digits(decode(data)) from None
            if parsed is not None:
                return parsed, mod
        return parse_text(decode(data), path)
    except ParseError as e:
        if path is not None:
            e.with_path(path)
        raise


_FAST: list[tuple] | None = None  # (parse_bytes, module) of the parser modules that offer one


def _fast_paths() -> list[tuple]:
    """The ``parse_bytes`` functions of the parser modules that have one, with their module, in ``MODULES`` order."""
    global _FAST
    if _FAST is None:
        _FAST = [(mod.parse_bytes, mod) for mod in modules() if mod.parse_bytes is not None]
    return _FAST
