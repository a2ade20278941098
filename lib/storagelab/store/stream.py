"""Huge logs in bounded memory: a file past STREAM_MIN_BYTES (or a compressed one past
STREAM_MIN_COMPRESSED_BYTES) is not read whole. It is hashed block by block, its tool and format
detected from its first MiB, and, when its parser can stream (``STREAM_FORMATS``: fio's normal output
and its bw/iops/lat/hist logs), parsed a line at a time in this process while its rows are committed in
batches to a staging database beside the database (``Stage``); then one transaction moves them in with
the file's ``files`` row and labels: the file is wholly in the database or not at all, as with every
other file, and a kill leaves only the staging file, which the next ingest deletes. Any other format (or a fio file holding a JSON
document) is parsed whole.

The rows are exactly those of the whole-file parse (one code path; tests/test_stream.py checks every real
fixture both ways). The text is decoded as ``parsers.decode`` decodes it: UTF-16 by its BOM or NUL pattern,
UTF-8 (with or without BOM), else Latin-1 - a UTF-8 error met midway starts the parse again as Latin-1."""

from __future__ import annotations

import codecs
import glob
import hashlib
import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import duckdb
import pyarrow as pa

from ..errors import ParseError
from ..ingest_open import open_input, too_large
from ..parsers import check_not_empty, check_sample, common_indent, detect, head_encoding, too_many_digits_in
from ..parsers.base import NotStreamable, Parsed
from ..parsers.compressed import Tap, kind_of, open_decompressed
from ..schema import all_tables, tool_tables
from . import arrow, db, faults, filestamps, writer
from .listing import ListedFile, led_elsewhere, stamp_of_read
from .plan import StoredFile
from .worker import Outcome, tool_table_columns, version_of

# a plain log this large is streamed, and a compressed one this large (text compresses about 10:1);
# STORAGELAB_STREAM_MIN_BYTES sets the first (and an eighth of it the second): 0 streams every file that can be
STREAM_MIN_BYTES = int(os.environ.get("STORAGELAB_STREAM_MIN_BYTES") or 64 * 2**20)
STREAM_MIN_COMPRESSED_BYTES = STREAM_MIN_BYTES // 8
STREAM_BATCH_ROWS = 50_000  # rows handed to the database at a time
HEAD_BYTES = 1 << 20  # what detection and the encoding are decided on
_BLOCK = 1 << 20


def wants_stream(f: ListedFile) -> bool:
    if f.size >= STREAM_MIN_BYTES:
        return True
    if f.size < STREAM_MIN_COMPRESSED_BYTES:
        return False
    try:
        with open_input(f.path, last_link=f.link) as fh:
            return kind_of(fh.read(10)) is not None
    except OSError:
        return False  # the whole-file path reports it


@dataclass
class StreamJob:
    """How a huge file is parsed: its parser module, format and text encoding."""

    module: ModuleType
    fmt: str
    encoding: str
    identity: tuple | None = None  # ``identity`` of the descriptor whose bytes were hashed
    sha256: str | None = None  # their SHA-256, which every read of the file to its end must find again
    whole_reads: int = 0  # reads of the file to its end, each checked against ``sha256``


def prepare(job: ListedFile) -> tuple[Outcome, StreamJob | None]:
    """Hash the file and detect its format: its Outcome (with ``error`` when it cannot be read, or is
    no known tool's output) and how to stream it (None: parse it whole)."""
    out = Outcome(*job[:4], ino=job.ino, ctime_ns=job.ctime_ns)
    if why := too_large(job.size):  # listed size: not opened, not hashed (issue 26's campaigns, Low)
        out.error = dict(kind="io", line=None, message=why, expected=None)
        return out, None
    try:
        h, n = hashlib.sha256(), 0
        with open_input(job.path, last_link=job.link) as fh:
            # reliability-19 (h8): the identity is taken before the hash's first read and must be the same after
            # its last: taken after it only, a rewrite in place (same inode, size and mtime) between the last read
            # and the fstat gave the new content's identity, which every later open matched, and the first
            # content's SHA-256 was stored with the second's rows (a write changes the ctime, which no user sets)
            opened = os.fstat(fh.fileno())
            if moved := led_elsewhere(job, opened):
                raise moved
            hashed, first, out.ctime_ns = identity(opened), None, stamp_of_read(job, opened)
            while block := fh.read(_BLOCK):
                h.update(block)
                n += len(block)
                first = block if first is None else first
            if identity(os.fstat(fh.fileno())) != hashed:
                raise _Swapped
        out.sha256 = h.hexdigest()
        if (changed := _changed(job, n, hashed)) is not None:
            out.error = changed
            return out, None
        # the head the format is detected on is the hashed bytes' own (a plain file; a compressed one's is checked
        # against the SHA-256): a rewrite between the hash and a second open could make the parse read the hashed
        # bytes as another format or in another encoding
        head, encoding = _head(job.path, hashed, first, n <= HEAD_BYTES, out.sha256)
        module, fmt = detect(head)
    except _Swapped:
        out.error = _changed(job, n, hashed, swapped=True)
        return out, None
    except OSError as e:
        out.error = dict(kind="io", line=None, message=str(e), expected=None)
        return out, None
    except ParseError as e:
        if e.kind == "unknown-format" and (common_indent(head)[0] or common_indent(head, skip_first=True)[0]):
            # a pasted code block (every line indented alike, or a command line indented one way above output
            # indented another): the whole-file parse reads it without the indent, as detection does
            return out, None
        out.error = dict(kind=e.kind, line=e.line, message=e.message, expected=e.expected)
        return out, None
    if fmt not in module.STREAM_FORMATS:
        return out, None
    out.tool, out.format, out.parser_version = module.TOOL, fmt, version_of(module)
    return out, StreamJob(module, fmt, encoding, hashed, out.sha256)


def identity(st: os.stat_result) -> tuple:
    """What tells one file's bytes from another's at a name: the inode and its change time (which no user can set:
    a rewrite, a rename or a link changes it), with size and mtime."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class _Swapped(Exception):
    """The file opened again for its rows is not the one hashed (its ``identity`` differs)."""


def _same(hashed: tuple | None):
    """The check ``open_decompressed`` makes on each new descriptor: the bytes hashed, not another file's."""

    def check(st: os.stat_result) -> None:
        if hashed is not None and identity(st) != hashed:
            raise _Swapped

    return check


def _changed(
    job: ListedFile | Outcome, n_read: int | None = None, hashed: tuple | None = None, swapped: bool = False
) -> dict | None:
    """The error of a file that changed while it was read (an appended log): its size or mtime is no longer
    the listed one (or not the bytes hashed); None when it did not. ``hashed``: the ``identity`` of the descriptor
    hashed, which the name must still have (reliability-18, h6: the hash and the rows come from separate opens by
    name; the user exchanged their log with a file of the same size and mtime meanwhile, and root's ingest stored
    one content's SHA-256 with the other's rows, exit 0, in 20 of 40 runs)."""
    try:
        st = os.stat(job.path)
        now = (st.st_size, st.st_mtime_ns)
    except OSError:
        st, now = None, None
    same = hashed is None or (st is not None and identity(st) == hashed)
    if now == (job.size, job.mtime_ns) and n_read in (None, job.size) and same and not swapped:
        return None
    return dict(
        kind="io",
        line=None,
        expected=None,
        message=f"the file changed while it was read ({job.size:,} bytes when listed, "
        + ("rewritten or another file put at its name since" if now and now[0] == job.size else "")
        + (f"{now[0]:,} now" if now and now[0] != job.size else "" if now else "gone now")
        + "): not stored this time; the next ingest reads it again",
    )


def _head(
    path: str,
    hashed: tuple | None = None,
    first: bytes | None = None,
    all_of_it: bool = False,
    sha256: str | None = None,
) -> tuple[str, str]:
    """The first HEAD_BYTES decoded (up to the last whole line), and the file's encoding. ``first``: the file's
    first bytes as hashed (at least HEAD_BYTES, or ``all_of_it``), used when they are not compressed. A compressed
    file's head is decompressed from a second read, whose bytes (read on to the end, not decompressed) must hash to
    ``sha256`` (else ``_Swapped``): reliability-21, h6: on a file system with 1-second times, a gzip log rewritten in
    place for that read alone (the mtime put back) had its UTF-8 text decoded as Latin-1, its job name stored as
    'lecture-alÃ©atoire' beside the SHA-256 of the bytes that say 'lecture-aléatoire'."""
    if first is not None and kind_of(first[:10]) is None:
        data, whole = first[:HEAD_BYTES], all_of_it
    else:
        tap = Tap() if sha256 else None
        with open_decompressed(path, check=_same(hashed), tap=tap) as fh:
            data = fh.read(HEAD_BYTES)
            whole = not fh.read(1)
            if tap is not None and tap.hexdigest() != sha256:
                raise _Swapped
    if whole:
        check_not_empty(data)
    encoding = head_encoding(data, whole)
    text = codecs.getincrementaldecoder(encoding)(errors="replace").decode(data, final=whole)
    if not whole:
        text = text[: text.rfind("\n") + 1] or text
    text = text.replace("\r\n", "\n")
    check_sample(text)
    return text, encoding


def lines(path: str, encoding: str, hashed: tuple | None = None, how: StreamJob | None = None) -> Iterator[str]:
    """The file's lines as ``lines_of(decode(bytes))`` gives them, read one at a time (from the file hashed, of
    ``identity`` ``hashed``). ``how``: a read to the end must find its ``sha256`` again (else ``_Swapped``, before
    the last line is given): the rows are of the bytes hashed whatever the file system's change times."""
    tap = Tap() if how is not None and how.sha256 else None
    raw = open_decompressed(path, check=_same(hashed), tap=tap)
    with io.TextIOWrapper(raw, encoding=encoding, newline="\n") as fh:
        ended = True
        for n, line in enumerate(fh, 1):
            ended = line.endswith("\n")
            if ended:
                line = line[:-2] if line.endswith("\r\n") else line[:-1]  # a lone CR at the end stays, as in decode
            if n == 1 and encoding == "latin-1":
                line = line.removeprefix("\xef\xbb\xbf")  # a UTF-8 BOM, which ``decode`` drops before Latin-1 too
            if "\x00" in line and not encoding.startswith("utf-16"):
                raise ParseError(f"binary data: NUL byte in line {n}", line=n, kind="binary", expected="a text log")
            yield line
        if tap is not None and how is not None:
            if tap.hexdigest() != how.sha256:
                raise _Swapped
            how.whole_reads += 1
    if ended:
        yield ""


class _Unfit(Exception):
    """Rows the database cannot take (a column the table lacks, a number past 64 bits): the file's error."""

    def __init__(self, error: dict):
        super().__init__(error["message"])
        self.error = error


def _bug(message: str) -> dict:
    return dict(kind="parser-bug", line=None, expected=None, message=message)


# + the database file's name + pid + a random part: a private folder (mkdtemp: made new, mode 0700) beside the
# database that holds the staging database. Never a fixed name: in a folder other users can write to (--db
# /tmp/x.duckdb), a name they can predict could be planted first as a symlink that DuckDB would follow.
STAGE_PREFIX = ".stream-stage-"
STAGE_FILE = "stage.duckdb"


def remove_leftovers(db_file: Path) -> None:
    """Staging folders (and, from older versions, staging files) of earlier ingests that were killed (only one
    ingest holds the database at a time); never followed through a symlink."""
    for f in db_file.parent.glob(f"{STAGE_PREFIX}{glob.escape(db_file.name)}.*"):
        if f.is_dir() and not f.is_symlink():
            shutil.rmtree(f, ignore_errors=True)
        else:
            f.unlink(missing_ok=True)


class Stage:
    """A staging database beside the database (DuckDB keeps about 10 bytes a row in memory for every row a
    transaction appends until it commits, so a huge file's rows are first committed there in batches, then
    copied into the database by one INSERT ... SELECT per table, which DuckDB streams)."""

    SCHEMA = "storagelab_stage"

    def __init__(self, con, db_file: Path, tool: str):
        self.con = con
        prefix = f"{STAGE_PREFIX}{db_file.name}.{os.getpid()}."
        self.folder = Path(tempfile.mkdtemp(prefix=prefix, dir=db_file.parent))
        self.path = self.folder / STAGE_FILE
        con.execute(f"ATTACH '{self.path.as_posix().replace(chr(39), chr(39) * 2)}' AS {self.SCHEMA}")
        self.tables = [name for name, (t, _tab) in tool_tables().items() if t == tool]
        for name in self.tables:
            con.execute(f'CREATE TABLE {self.SCHEMA}."{name}" AS SELECT * FROM main."{name}" LIMIT 0')

    def close(self) -> None:
        try:
            self.con.execute(f"DETACH {self.SCHEMA}")
        except duckdb.Error:  # pragma: no cover - a connection a fault invalidated
            pass
        self.close_files()

    def close_files(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class StageSink:
    """The rows of one file, committed into the staging database as the parser hands them over."""

    def __init__(self, stage: Stage, file_id: int):
        self.stage, self.file_id = stage, file_id
        self.tables: set[str] = set()  # tables that received rows

    def _target(self, name: str) -> str:
        return f'{Stage.SCHEMA}."{name}"'

    def write(self, tables: dict) -> None:
        cols, tabs = tool_table_columns(), all_tables()
        con = self.stage.con
        for name, rows in tables.items():
            if name not in self.stage.tables:
                raise _Unfit(_bug(f"parser produced unknown table {name}"))
            try:
                part = arrow.table(tabs[name], arrow.columns(name, [rows], cols[name]))
            except arrow.RowShapeError as e:
                raise _Unfit(_bug(str(e))) from None
            except KeyError as e:
                raise _Unfit(_bug(f"parser produced unknown columns {e.args[0]} for {name}")) from None
            except arrow.UNFIT as e:
                raise _Unfit(arrow.unfit_error(tabs[name], name, rows, e)) from None
            ids = pa.array([self.file_id] * part.num_rows, type=pa.int32())
            db.insert(con, self._target(name), writer.with_file_id(tabs[name], part, ids))
            self.tables.add(name)

    def discard(self) -> None:
        for name in self.tables:
            self.stage.con.execute(f"DELETE FROM {self._target(name)}")
        self.tables.clear()

    def update(self, table: str, values: dict, where: dict) -> None:
        sets = ", ".join(f'"{c}" = ?' for c in values)
        conds = "".join(f' AND "{c}" = ?' for c in where)
        self.stage.con.execute(
            f"UPDATE {self._target(table)} SET {sets} WHERE file_id = ?{conds}",
            [*values.values(), self.file_id, *where.values()],
        )


def _undecodable(path: str, encoding: str, how: StreamJob) -> bool:
    """Whether the bytes hashed (read again to the end, checked against ``how.sha256``, else ``_Swapped``) are not
    ``encoding`` text: the read that met a byte that is not (and stopped there) was never checked (reliability-21,
    h6: a log rewritten in place for that read alone, on a file system with 1-second times, had its UTF-8 text read
    again as Latin-1 and a wrong job name stored beside the SHA-256 of the UTF-8 bytes)."""
    tap, decoder, good = Tap(), codecs.getincrementaldecoder(encoding)(), True
    with open_decompressed(path, check=_same(how.identity), tap=tap) as fh:
        while block := fh.read(_BLOCK):
            good = good and _decodes(decoder, block)
        good = good and _decodes(decoder, b"", final=True)
        if tap.hexdigest() != how.sha256:
            raise _Swapped
    return not good


def _decodes(decoder: codecs.IncrementalDecoder, data: bytes, final: bool = False) -> bool:
    try:
        decoder.decode(data, final)
    except UnicodeDecodeError:
        return False
    return True


def _parse(out: Outcome, how: StreamJob, sink: StageSink, batch_rows: int) -> Parsed:
    encodings = [how.encoding] + (["latin-1"] if how.encoding in ("utf-8", "utf-8-sig") else [])
    for encoding in encodings:
        parsed = Parsed(tool=how.module.TOOL, format=how.fmt, sink=sink, batch_rows=batch_rows)

        def open_lines(encoding: str = encoding) -> Iterator[str]:
            return lines(out.path, encoding, how.identity, how)

        try:
            how.module.parse_stream(open_lines, how.fmt, parsed, name=out.path)
            if how.sha256 and not how.whole_reads:  # a parser that stopped before the end: the file read through
                for _ in open_lines():
                    pass
            parsed.flush()
            return parsed
        except UnicodeDecodeError:
            if encoding == encodings[-1]:  # pragma: no cover - Latin-1 decodes any byte
                raise
            if how.sha256 and not _undecodable(out.path, encoding, how):
                raise _Swapped from None
            parsed.restart()
        except ValueError as e:
            if isinstance(e, ParseError) or "integer string conversion" not in str(e):
                raise
            raise too_many_digits_in(open_lines()) from None
    raise AssertionError("unreachable")  # pragma: no cover


def write_file(
    con,
    db_file: Path,
    out: Outcome,
    how: StreamJob,
    stored: dict[str, StoredFile],
    file_id: int,
    labels_of: dict,
    batch_rows: int | None = None,
) -> bool:
    """Parse a huge file into the database: its rows are staged, then its old rows out, its rows, its
    ``files`` row and labels in, in one transaction. Returns False when the file is not streamable
    after all (the caller parses it whole); a file that fails has ``out.error`` set (recorded in
    ``ingest_errors``). Faults of the database or the disk, and Ctrl-C, go on up."""
    stage = Stage(con, db_file, how.module.TOOL)
    try:
        sink = StageSink(stage, file_id)
        try:
            parsed = _parse(out, how, sink, batch_rows or STREAM_BATCH_ROWS)
        except NotStreamable:
            return False
        except _Swapped:
            out.error = _changed(out, hashed=how.identity, swapped=True)
        except (ParseError, _Unfit) as e:
            if isinstance(e, _Unfit):
                out.error = e.error
            else:
                out.error = dict(kind=e.kind, line=e.line, message=e.message, expected=e.expected)
        except Exception as e:
            if faults.interrupted(e):
                raise KeyboardInterrupt from None
            if faults.environmental(e) or isinstance(e, duckdb.Error):
                raise
            out.error = _bug(f"{type(e).__name__}: {e}")  # a parser bug must not lose the others
        if not out.error:
            out.error = _changed(out, hashed=how.identity)  # changed while parsed: its rows are not its SHA-256's
        if out.error:
            writer.record_error(con, out)
            return True
        out.tool_version, out.warnings = parsed.tool_version, list(parsed.warnings)
        out.n_rows = sum(parsed.flushed.values())
        con.execute("BEGIN")
        try:
            changed = {"files", "ingest_errors"} | sink.tables
            old = stored.get(out.key)
            if old:
                tables = writer.tables_of({old.tool}) + ["files"]
                writer.delete_rows(con, [old.file_id], tables)
                changed.update(tables)
            con.execute("DELETE FROM ingest_errors WHERE path = ?", [out.key])
            for name in sorted(sink.tables):
                con.execute(f'INSERT INTO main."{name}" SELECT * FROM {sink._target(name)}')
            db.register_insert(con, "files", writer.files_rows([out], [file_id], labels_of))
            filestamps.put(con, [out])
            db.bump(con, changed)
            faults.inject("stream-rows")
            con.execute("COMMIT")
        except BaseException:
            faults.rollback(con)
            raise
        return True
    finally:
        stage.close()
