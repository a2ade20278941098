"""From a number in a chart to the raw lines it came from.

A chart whose data rows carry their provenance (``path`` of the stored file, ``line_start`` and, where known,
``line_end``; ``sha256`` when the frame has it) gets, per row, ``raw_file`` and ``raw_lines`` (what the tooltip
shows) and ``raw_href``: a page beside the report, ``raw/<file>-L<start>-<end>.html``, that shows those lines of
the file highlighted with some context, numbered as the database numbers them (lines of the decompressed text).
The page is written when the chart is saved, from the file on disk; a file whose bytes are no longer the stored
ones (its SHA-256 differs) gets no page, and its rows no link: the excerpt would not be the lines that were
parsed. Every chart's tooltip shows its mark's data (value, labels, raw file and lines).

Excerpts are plain escaped text: nothing in a log can run in the page.
"""

from __future__ import annotations

import codecs
import copy
import hashlib
import html
import io
import os
import re
from pathlib import Path

from . import database, paths
from .chartsource import DERIVATION, SOURCES
from .ingest_open import open_input, too_large
from .parsers import ParseError, decode, head_encoding
from .parsers.compressed import MAX_DECOMPRESSED_BYTES, _Limited, decompress, kind_of

CONTEXT_LINES = 8
MAX_HIGHLIGHT_LINES = 400  # a longer range is shown from its start, with a note
WHOLE_TEXT_MAX = 64 << 20  # a log whose text is larger is streamed for the lines wanted, never split whole
MAX_LINE_CHARS = 4096  # of one line of a streamed log (a 1 GiB line is not shown whole)
HEAD_BYTES = 1 << 20  # what a streamed log's encoding is decided on, as store.stream.HEAD_BYTES


def _resolve(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else paths.ROOT / p


# reliability-25 (h8): a row whose sha256 column is NULL. Every stored file has its SHA-256, so such a row is another
# user's word: `export --db THEIRS --dataset ROOTS` carried their rows (path /root/..., sha256 NULL) into root's own
# dataset, where database.THEIRS stays empty, and root's `run 09_bonnie -r db_path ROOTS` wrote a page of root's 0600
# file. Such a row gets no page (a row without the column at all, of an analysis that selects none, is as before).
NULL_SHA = "NULL"


def _sha(row: dict) -> str | None:
    """The row's ``sha256``; NULL_SHA when it has the column and no value."""
    if "sha256" not in row:
        return None
    v = row["sha256"]
    return v if isinstance(v, str) and v else NULL_SHA


def _in_project(path: str) -> bool:
    """Whether ``path`` names a file of the project (relative, no ``..``, nothing hidden such as .env): a study's
    claims.csv, a log of data/raw."""
    return not path.startswith("/") and all(step and not step.startswith(".") for step in path.split("/"))


def _name(path: str, content_sha256: str, start: int, end: int) -> str:
    """The page's name: the file's name, then a hash of its path and of its bytes (a file whose bytes change gets
    new pages: an old page, kept for another report, is never taken for the new bytes' lines), then the lines."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(path).name)[:60]
    digest = hashlib.sha256(path.encode("utf-8", "surrogateescape") + b"\0" + content_sha256.encode()).hexdigest()
    return f"{stem}-{digest[:8]}-L{start}-{end}.html"


STYLE = (
    "body{font:13px DejaVu Sans,Helvetica,Arial,sans-serif;margin:1em 2em}"
    "pre{font:12px DejaVu Sans Mono,monospace;background:#fafafa;border:1px solid #ddd;padding:6px;overflow-x:auto}"
    "pre span{display:block;white-space:pre}pre b{color:#999;font-weight:normal}"
    ".hl{background:#fff3a8}"
)


class _Huge(Exception):
    """A log too large to be decoded and split whole for an excerpt."""


class _Streamed:
    """The lines of a huge log, read as a stream from its checked bytes for each excerpt: only the lines wanted are
    kept (each at most ``MAX_LINE_CHARS`` characters), so an excerpt's memory does not grow with the log. The text is
    decoded as the parser decoded it (``head_encoding`` on its first MiB, then Latin-1 when any later byte is not
    UTF-8: one read of the log, the first time), split at LF only, a CR before the LF dropped, the first line's BOM
    dropped, the empty line after a final LF counted: ``decode``'s lines (reliability-24: lines were decoded one by
    one as UTF-8, a Latin-1 log's `µs` shown as `�s`, a compressed UTF-16 log split at its 0x0A bytes and shown with
    its NULs). ``len`` is known once a read reached the end."""

    def __init__(self, data: bytes):
        self.data, self.lo = data, 0
        self.window: list[str] = []
        self.n: int | None = None
        self.cut = 0  # lines of the window shown cut short
        self.encoding: str | None = None

    def __len__(self) -> int:
        return self.n if self.n is not None else (1 << 62)

    def __getitem__(self, i: int) -> str:
        return self.window[i - self.lo]

    def _bytes(self) -> io.BufferedReader | io.BytesIO:
        kind = kind_of(self.data)
        if kind is None:
            return io.BytesIO(self.data)
        return io.BufferedReader(_Limited(kind, io.BytesIO(self.data), MAX_DECOMPRESSED_BYTES), 1 << 20)

    def _decide(self) -> str:
        """The parser's encoding of the whole text (``head_encoding``; UTF-8 read to the end to be sure)."""
        if self.encoding is None:
            with self._bytes() as raw:
                head = raw.read(HEAD_BYTES)
                encoding = head_encoding(head, whole=len(head) < HEAD_BYTES)
                if encoding in ("utf-8", "utf-8-sig"):
                    decoder = codecs.getincrementaldecoder("utf-8")()
                    try:  # in 64 KiB pieces: an excerpt's memory stays small
                        for i in range(0, len(head), 1 << 16):
                            decoder.decode(head[i : i + (1 << 16)])
                        del head
                        while block := raw.read(1 << 16):
                            decoder.decode(block)
                        decoder.decode(b"", final=True)
                    except UnicodeDecodeError:
                        encoding = "latin-1"
            self.encoding = encoding
        return self.encoding

    def load(self, lo: int, hi: int) -> bool:
        """Lines ``lo..hi`` (1-based) kept; False when the log is unreadable or has fewer than ``lo`` lines."""
        self.window, self.lo, self.cut = [], lo - 1, 0
        n, cap = 0, MAX_LINE_CHARS + 2  # a line's text, its CR and its LF
        try:
            encoding = self._decide()
            with io.TextIOWrapper(self._bytes(), encoding=encoding, errors="replace", newline="\n") as fh:
                ended = True  # the last line read ended with LF: str.split("\n") counts one more, empty line
                while line := fh.readline(cap):
                    ended = line.endswith("\n")
                    whole = ended or len(line) < cap
                    while not ended and (more := fh.readline(1 << 20)):
                        ended = more.endswith("\n")  # the rest of a long line skipped
                    n += 1
                    if lo <= n <= hi:
                        text = line.removesuffix("\n").removesuffix("\r") if line.endswith("\n") else line
                        if n == 1:
                            text = text.removeprefix("\ufeff")
                            text = text.removeprefix("\xef\xbb\xbf") if encoding == "latin-1" else text
                        if not whole or len(text) > MAX_LINE_CHARS:
                            text = text[:MAX_LINE_CHARS] + " [rest of the line not shown]"
                            self.cut += 1
                        self.window.append(text)
                    elif n > hi:
                        return True
        except (ParseError, OSError, EOFError, ValueError):
            return False  # ValueError: a UnicodeDecodeError of invalid UTF-16 (errors="replace" takes the rest)
        self.n = n + 1 if ended else n
        if ended and lo <= self.n <= hi:
            self.window.append("")  # the empty line after the last LF, as split counts it
        return lo <= self.n


def _excerpt(lines, start: int, end: int) -> str:
    """Lines ``start..end`` (1-based, inclusive) highlighted, with context, as a <pre> (and a note when cut)."""
    shown_end = min(end, start + MAX_HIGHLIGHT_LINES - 1)
    lo, hi = max(1, start - CONTEXT_LINES), shown_end + CONTEXT_LINES
    if isinstance(lines, _Streamed):
        if not lines.load(lo, hi):
            return "<p>not shown: the log could not be read for these lines</p>"
        note = (
            f"<p>A huge log: these lines were read as a stream; {lines.cut} of them shown cut at "
            f"{MAX_LINE_CHARS} characters.</p>"
            if lines.cut
            else ""
        )
        hi = min(hi, lines.lo + len(lines.window))
        shown_end = min(shown_end, hi)
        end = min(end, hi) if lines.n is not None else end
        return note + _excerpt_rows(lines, start, end, shown_end, lo, hi)
    hi = min(len(lines), hi)
    return _excerpt_rows(lines, start, end, shown_end, lo, hi)


def _excerpt_rows(lines, start: int, end: int, shown_end: int, lo: int, hi: int) -> str:
    rows = []
    for n in range(lo, hi + 1):
        cls = ' class="hl"' if start <= n <= shown_end else ""
        rows.append(f'<span id="L{n}"{cls}><b>{n:>6}</b>  {html.escape(lines[n - 1])}\n</span>')
    cut = (
        f"<p>Lines {shown_end + 1}-{end} of the range are not shown (at most {MAX_HIGHLIGHT_LINES}).</p>"
        if shown_end < end
        else ""
    )
    return f"{cut}<pre>{''.join(rows)}</pre>"


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>"
    )


UNCHECKED = (
    "<p>The number's row does not say which bytes it was read from: these are the file's lines as it is now; if it "
    "changed since it was ingested, they are not the lines behind the number.</p>"
)


def excerpt_page(path: str, sha256: str | None, lines: list[str], start: int, end: int, checked: bool = True) -> str:
    """The page of one excerpt: lines ``start..end`` (1-based, inclusive) highlighted, with context. ``checked``:
    the bytes are those the row's SHA-256 names (else the page says they are the file as it is now)."""
    e = html.escape
    return _page(
        f"{Path(path).name}: lines {start}-{end}",
        f"<h1 style='font-size:16px'>{e(path)}: lines {start}&ndash;{end}</h1>"
        f"<p>SHA-256 <code>{e(sha256 or 'not given')}</code>. Line numbers are the database's (lines of the "
        "decompressed text; a study's claims.csv: its own lines). The highlighted lines are the rows behind the "
        "number you came from.</p>" + ("" if checked else UNCHECKED) + _excerpt(lines, start, end),
    )


def _checked_read(fh, sha256: str | None) -> bytes | None:
    """The file's bytes; with ``sha256``, only when they hash to it, hashed block by block first (None otherwise):
    a stored log another user has since swapped for a 3 GiB sparse file took 3 GiB of the report's memory (and
    20 s) before the hash said it was not the one (reliability-20, h1; 30 GiB would have exhausted the machine's).
    The whole read then stops at the size hashed."""
    if too_large(os.fstat(fh.fileno()).st_size):  # never a stored log's (a 1 TB sparse file: minutes of reading)
        return None
    if not sha256:
        return fh.read()
    h, n = hashlib.sha256(), 0
    while block := fh.read(1 << 20):
        h.update(block)
        n += len(block)
        if too_large(n):
            return None
    if h.hexdigest() != sha256:
        return None
    fh.seek(0)
    return fh.read(n)


def _they_could_read(fh, uids: set[int]) -> bool:
    """Whether each user of ``uids`` (-1: any user) could read the file open as ``fh`` themselves: the file readable
    and every folder above it searchable by them, by its mode bits (an ACL's extra grants are not counted). Reliability-27
    (h2): a SHA-256 is no secret (every excerpt page prints its file's), and the second user's database named root's
    0600 file with its SHA-256 as printed in a page of root's report: root's `run 09_bonnie -r db_path THEIRS` wrote
    that file's lines into the report, as many as their rows' line numbers asked for."""
    import pwd  # noqa: PLC0415

    try:
        real = os.readlink(f"/proc/self/fd/{fh.fileno()}")
        if not real.startswith("/"):
            return False
        chain, folder = [os.fstat(fh.fileno())], real
        acls = [_has_acl(fh.fileno())]
        while folder != "/":
            folder = os.path.dirname(folder)
            chain.append(os.stat(folder))
            acls.append(_has_acl(folder))
    except OSError:
        return False
    for uid in uids:
        try:
            user = pwd.getpwuid(uid) if uid >= 0 else None
            groups = set(os.getgrouplist(user.pw_name, user.pw_gid)) if user else set()
        except KeyError:
            groups = set()
        for i, st in enumerate(chain):
            if acls[i] and not (uid >= 0 and st.st_uid == uid):
                return False  # an ACL's entry may deny them what "other" allows (u:them:--- on a 0644 file)
            shift = 6 if uid >= 0 and st.st_uid == uid else 3 if st.st_gid in groups else 0
            if not st.st_mode >> shift & (4 if i == 0 else 1):  # read the file, search each folder
                return False
    return True


def _has_acl(where: int | str) -> bool:
    """Whether the file (a descriptor) or folder has an access ACL (its mode bits alone do not say who may read it)."""
    try:
        os.getxattr(where, "system.posix_acl_access")
    except OSError:
        return False
    return True


class Excerpts:
    """Writes excerpt pages into ``folder``/raw/ (the report folder), each file read once."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self._lines: dict[str, list[str] | None] = {}
        self._sha256: dict[str, str] = {}  # path -> SHA-256 of the bytes its lines were read from

    def _file_lines(self, path: str, sha256: str | None) -> list[str] | None:
        if sha256 == NULL_SHA:
            return None
        if not sha256 and database.THEIRS and not _in_project(path):
            # reliability-24 (h1): a path is the database's word, and another user's database says any: its bonnie
            # rows (no SHA-256 in the chart) named /etc/shadow, and root's `run 09_bonnie -r db_path theirs` wrote
            # shadow's lines into the report. Read from such a database, without the bytes' SHA-256, only a file of
            # the project is shown.
            return None
        if path not in self._lines:
            try:
                # not through another user's link to a file of root's (reliability-13), nor from a FIFO
                with open_input(_resolve(path)) as fh:
                    if database.THEIRS and not _they_could_read(fh, database.their_writers()):  # the project's too
                        raise PermissionError(path)
                    data = _checked_read(fh, sha256)
            except OSError:
                self._lines[path] = None
                return None
            if data is None:
                self._lines[path] = None  # not the bytes that were parsed
                return None
            self._sha256[path] = hashlib.sha256(data).hexdigest()
            if sha256 and self._sha256[path] != sha256:
                self._lines[path] = None  # rewritten since it was hashed above
                return None
            try:
                if len(data) > WHOLE_TEXT_MAX:
                    raise _Huge
                text = decode(decompress(data, WHOLE_TEXT_MAX))  # as the parsers decode it: the same line numbers
            except (_Huge, ParseError) as e:
                if isinstance(e, ParseError) and e.kind != "too-large":
                    self._lines[path] = None
                    return None
                # a huge log (1 GiB of text took 5.6 GiB of the report's memory: reliability-21 Medium 1): its
                # checked bytes are kept and streamed for the lines each excerpt wants (_Streamed)
                self._lines[path] = _Streamed(data)  # type: ignore[assignment]
                return self._lines[path]
            except Exception:  # noqa: BLE001 - an unreadable file gets no excerpt, the chart still draws
                self._lines[path] = None
                return None
            self._lines[path] = text.split("\n")
        if sha256 and self._sha256.get(path) != sha256:
            return None  # another stored version of this path: never the lines of the bytes read first (rel-23)
        return self._lines[path]

    def href(self, path: str, sha256: str | None, start: int, end: int | None) -> str | None:
        """``raw/<page>#L<start>`` for the lines, written if missing; None when the file cannot be shown."""
        end = end if end is not None and end >= start else start
        lines = self._file_lines(path, sha256)
        if lines is None or start < 1 or start > len(lines):
            return None
        # reliability-24 (h1): a row without its SHA-256 (the bonnie and disk-card charts') was shown the file as it
        # is now under the current bytes' SHA-256, as if checked: its page says so (one written first for a row with
        # the SHA-256 of these same bytes is kept: the same lines)
        name = _name(path, self._sha256[path], start, end)
        dest = self.folder / "raw" / name
        if not dest.exists():
            page = excerpt_page(path, sha256 or self._sha256[path], lines, start, min(end, len(lines)), bool(sha256))
            _write_whole(dest, page)
        return f"raw/{name}#L{start}"

    def href_many(self, inputs: list[dict], derivation: str | None) -> str | None:
        """``raw/<page>`` of one page with every input's lines (each {path, line_start, line_end}) and the
        arithmetic (``derivation``), written if missing; None when no input's file can be shown. One page per
        computed number: its name hashes the inputs and the arithmetic."""
        parts = []
        for s in inputs:
            start = _int(s.get("line_start"))
            end = _int(s.get("line_end"))
            end = end if end is not None and start is not None and end >= start else start
            lines = self._file_lines(str(s["path"]), _sha(s))
            head = f"<h2 style='font-size:14px'>{html.escape(str(s['path']))}: lines {start}&ndash;{end}</h2>"
            if lines is None or start is None or not 1 <= start <= len(lines):
                parts.append(head + "<p>not shown: the file is not readable here, or its lines are not recorded</p>")
                continue
            parts.append(head + ("" if s.get("sha256") else UNCHECKED) + _excerpt(lines, start, min(end, len(lines))))
        if not any("<pre>" in p for p in parts):
            return None
        # the arithmetic is part of the page: numbers computed differently from the same inputs get pages of their own;
        # so are the bytes shown (reliability-25 reports: a page of a file's new bytes, written by one notebook of the
        # folder, replaced the page another notebook's number, computed from the old bytes, linked to)
        key = "\n".join(
            f"{s['path']}:{s.get('line_start')}-{s.get('line_end')}:{self._sha256.get(str(s['path']), '')}"
            for s in inputs
        )
        key += f"\n= {derivation or ''}"
        name = f"from-{hashlib.sha256(key.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}.html"
        dest = self.folder / "raw" / name
        if not dest.exists():
            how = f"<p>Arithmetic: {html.escape(derivation)}.</p>" if derivation else ""
            body = (
                f"<h1 style='font-size:16px'>The {len(inputs)} inputs of one computed number</h1>{how}"
                "<p>Line numbers are the database's (lines of the decompressed text); highlighted: the rows each "
                "input came from.</p>" + "".join(parts)
            )
            _write_whole(dest, _page(f"{len(inputs)} inputs", body))
        return f"raw/{name}"


def _write_whole(dest: Path, text: str) -> None:
    """``text`` into ``dest`` whole or not at all (a temporary name, then a rename): the pages are written only when
    missing, so a page that exists must be complete. The inputs' page was written in place, and a full disk left it
    cut short for good (reliability-6)."""
    paths.make_folder(dest.parent)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _int(v) -> int | None:
    try:
        return None if v is None else int(v)
    except (TypeError, ValueError):
        return None


MAX_FILES, MAX_SPANS = 4, 4  # files named in a tooltip, line ranges per file; the rest counted


def _span(s: dict) -> str:
    start, end = _int(s.get("line_start")), _int(s.get("line_end"))
    if start is None:
        return "?"
    return f"{start}-{end}" if end is not None and end != start else f"{start}"


def from_text(inputs: list[dict]) -> str:
    """'from: a.txt:12-40, b.txt:3-9' (base names where they tell the files apart, else paths; a study's claims.csv:
    its path, papers/<study>/claims.csv), each file once with
    its line ranges; the first ``MAX_FILES`` files and ``MAX_SPANS`` ranges each, with a count of the rest."""
    spans: dict[str, list[str]] = {}
    for s in inputs:
        spans.setdefault(str(s["path"]), []).append(_span(s))
    names = {p: p if p.startswith("papers/") else Path(p).name for p in spans}  # every study's file is claims.csv
    if len(set(names.values())) < len(names):
        names = {p: p for p in spans}
    parts = []
    for p, lines in list(spans.items())[:MAX_FILES]:
        more = f" and {len(lines) - MAX_SPANS} more" if len(lines) > MAX_SPANS else ""
        parts.append(f"{names[p]}:{', '.join(lines[:MAX_SPANS])}{more}")
    rest = len(spans) - MAX_FILES
    return "from: " + "; ".join(parts) + (f"; and {rest} more files ({len(spans)} in all)" if rest > 0 else "")


def _one_source(row: dict, writer: Excerpts | None) -> bool:
    """A row drawn from one file's lines: its raw file, lines and link. Whether it got a link."""
    start, end = _int(row["line_start"]), _int(row.get("line_end"))
    row["raw_file"] = row["path"]
    row["raw_lines"] = f"{start}-{end}" if end is not None and end != start else str(start)
    href = writer.href(str(row["path"]), _sha(row), start, end) if writer else None
    if href:
        row["raw_href"] = href
    return bool(href)


def _many_sources(row: dict, writer: Excerpts | None) -> bool:
    """A row computed from several inputs (``sources``): 'from: ...' as its raw file, the count as its lines, a link
    to one page of every input's lines (one input: its file, lines and excerpt). Whether it got a link."""
    inputs = [s for s in row.pop(SOURCES) or () if isinstance(s, dict) and s.get("path")]
    if not inputs:
        return False
    if len(inputs) == 1 and _int(inputs[0].get("line_start")) is not None:  # one input: as a row of one file
        row.update({k: inputs[0].get(k) for k in ("path", "line_start", "line_end", "sha256") if k in inputs[0]})
        return _one_source(row, writer)
    row["raw_file"] = from_text(inputs)
    row["raw_lines"] = f"{len(inputs)} input{'s' if len(inputs) > 1 else ''}"
    href = writer.href_many(inputs, row.get(DERIVATION)) if writer else None
    if href:
        row["raw_href"] = href
    return bool(href)


def enrich(spec: dict, folder: Path | None) -> dict:
    """A copy of a Vega-Lite spec whose data rows with provenance carry ``raw_file``, ``raw_lines`` and
    ``raw_href`` (their excerpt pages written under ``folder``/raw/), whose marks link to them, and whose every
    mark's tooltip shows its data. A row drawn from one file's lines has ``path`` and ``line_start``; a row computed
    from several inputs has ``sources`` (chartsource.derived) and names them all. ``folder`` None: tooltips only."""
    spec = copy.deepcopy(spec)
    writer = Excerpts(folder) if folder is not None else None
    linked = False
    for rows in (spec.get("datasets") or {}).values():
        for row in rows if isinstance(rows, list) else ():
            if not isinstance(row, dict):
                continue
            if row.get(SOURCES):
                linked = _many_sources(row, writer) or linked
            elif row.get("path") and _int(row.get("line_start")) is not None:
                linked = _one_source(row, writer) or linked
            row.pop(SOURCES, None)
    config = spec.setdefault("config", {})
    config.setdefault("mark", {}).setdefault("tooltip", {"content": "data"})
    every = [row for rows in (spec.get("datasets") or {}).values() for row in rows or () if isinstance(row, dict)]
    if any("raw_file" in row for row in every):
        _link_marks(spec, linked, any(DERIVATION in row for row in every))
    return spec


RAW_TOOLTIP = [
    {"field": "raw_file", "type": "nominal", "title": "raw file"},
    {"field": "raw_lines", "type": "nominal", "title": "lines"},
]


HOW_TOOLTIP = {"field": DERIVATION, "type": "nominal", "title": "arithmetic"}


def _link_marks(node, linked: bool, how: bool = False) -> None:
    """Each unit spec (one with a mark): a tooltip it lists itself gains the raw file and lines, and its marks link
    to ``raw_href`` (where its rows have one)."""
    if isinstance(node, dict):
        if "mark" in node:
            enc = node.setdefault("encoding", {})
            tip = enc.get("tooltip")
            if isinstance(tip, dict) and "field" in tip:
                tip = [tip]
            if isinstance(tip, list):
                extra = [*RAW_TOOLTIP, HOW_TOOLTIP] if how else RAW_TOOLTIP
                enc["tooltip"] = tip + [t for t in extra if t not in tip]
            if linked:
                enc.setdefault("href", {"field": "raw_href", "type": "nominal"})
        for key, value in node.items():
            if key not in ("datasets", "data", "encoding"):
                _link_marks(value, linked, how)
    elif isinstance(node, list):
        for item in node:
            _link_marks(item, linked, how)


def href_of(writer: Excerpts, inputs, derivation: str | None = None) -> str | None:
    """The link to the raw lines of a number drawn from ``inputs`` (each {path, line_start, line_end}): one input,
    its file's page at its lines; several, the one page of every input's lines with the arithmetic (as a chart's
    computed mark). None when no input's file can be shown."""
    inputs = [s for s in inputs if isinstance(s, dict) and s.get("path") and _int(s.get("line_start")) is not None]
    if len(inputs) == 1:
        s = inputs[0]
        return writer.href(str(s["path"]), _sha(s), _int(s["line_start"]), _int(s.get("line_end")))
    return writer.href_many(inputs, derivation) if inputs else None


def _title(inputs, derivation: str | None) -> str:
    """A link's title (shown on hover): the files and lines, and the arithmetic; on one line, every character that
    Markdown or HTML could read as markup written as an entity (the hover shows it as it is): all but letters,
    digits, spaces and '.,:;-+=%()', and the '.' of 'www.'. The title holds file names, which are anyone's text:
    where the link around it did not form (a backslash before its '[', a ']', '`' or '$' in its text pairing with
    the sentence's), the title was read as Markdown and HTML, and a file named '<img src=x onerror=...>' ran its
    script when the report opened (reliability-35 input)."""
    text = from_text(list(inputs)) + (f" ({derivation})" if derivation and len(inputs) > 1 else "")
    return _MARKUP_IN_TITLE.sub(lambda m: f"&#{ord(m.group())};", re.sub(r"\s+", " ", text))


_MARKUP_IN_TITLE = re.compile(r"(?i)(?<=www)\.|[^A-Za-z0-9 .,:;+=%()-]")  # a bare 'www.' a renderer would link


_NUMBER_AFTER = r"(?<![\w.,\\!])"  # not inside a word or a number, nor after '\\' (an escaped '[') or '!' (an image)
_LINK_BREAKERS = re.compile(r"[\[\]`$\\]")  # in a link's text these may pair or escape past its end


def linked(finding: str, writer: Excerpts) -> str:
    """A finding (analysis.result.Finding) as Markdown whose cited numbers link to their raw lines (the excerpt
    pages, written under the writer's folder as a chart's are): each cited number where the sentence first writes it
    after the previous one, else (a cite without a number, or a number not found) a 'lines' link at the end. A plain
    str, or a number whose file cannot be shown, stays as it is."""
    out, at, tail = [], 0, []
    for c in getattr(finding, "cites", ()):
        href = href_of(writer, c.inputs, c.derivation)
        if not href:
            continue
        title = _title(c.inputs, c.derivation)
        m = re.compile(rf"{_NUMBER_AFTER}{re.escape(c.text)}(?!\w)").search(finding, at) if c.text else None
        if m is None or _LINK_BREAKERS.search(m.group(0)):
            tail.append(f'[lines]({href} "{title}")')
            continue
        out.append(str.__str__(finding)[at : m.start()] + f'[{m.group(0)}]({href} "{title}")')
        at = m.end()
    text = "".join(out) + str.__str__(finding)[at:]
    return text + (f" ({', '.join(tail)})" if tail else "")
