"""Compressed logs, read transparently: gzip, xz, bzip2 and zstd, recognized by their magic bytes
(never by the file name).

``decompress(data)`` returns the bytes unchanged when they are not compressed, else the
decompressed bytes, read at most ``MAX_DECOMPRESSED_BYTES`` (a decompression bomb guard). gzip,
xz and bzip2 use the standard library; zstd needs the ``zstandard`` package (a dependency of the
project; without it a zstd file is refused with a message saying so). Concatenated streams
(``cat a.gz b.gz``) are read whole. Only one layer is removed: a .gz inside a .gz is refused as
binary data by the decoder.

The store hashes the bytes as stored (compressed); line numbers in errors and records are lines
of the decompressed text.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
from typing import BinaryIO

from ..errors import ParseError
from ..ingest_open import open_input
from .zstdframes import Watched

MAX_DECOMPRESSED_BYTES = 2 * 1024**3  # 2 GiB: far above any benchmark log, far below the machine's memory
_CHUNK = 1 << 20

# name, magic bytes at offset 0
MAGIC = (
    ("gzip", b"\x1f\x8b"),
    ("xz", b"\xfd7zXZ\x00"),
    ("bzip2", b"BZh"),
    ("zstd", b"\x28\xb5\x2f\xfd"),
)


def kind_of(data: bytes) -> str | None:
    """'gzip', 'xz', 'bzip2', 'zstd' or None, from the first bytes."""
    for name, magic in MAGIC:
        if data.startswith(magic):
            if name == "bzip2" and not _bzip2(data):
                return None  # a text that merely starts with "BZh"
            return name
    return None


_BZIP2_BLOCKS = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")  # a block's magic, or the end's


def _bzip2(head: bytes) -> bool:
    """'BZh', a block size 1-9, then a block's (or the end's) magic; of a file shorter than that, a start of one: a
    bzip2 file cut inside its first 10 bytes was read as text ('unknown-format'), where a longer cut is 'truncated'
    (reliability-28 input, Low 2)."""
    if len(head) < 4 or head[3] not in b"123456789":
        return False
    if len(head) >= 10:
        return head[4:10] in _BZIP2_BLOCKS
    return any(m.startswith(head[4:]) for m in _BZIP2_BLOCKS)


def _reader(kind: str, data: bytes | BinaryIO):
    buf = io.BytesIO(data) if isinstance(data, bytes) else data
    if kind == "gzip":
        return gzip.GzipFile(fileobj=buf, mode="rb")
    if kind == "xz":
        return _Streams(buf, lzma.LZMADecompressor)
    if kind == "bzip2":
        return _Streams(buf, bz2.BZ2Decompressor)
    try:
        import zstandard  # noqa: PLC0415 - optional: without it only zstd logs are refused (the message below)
    except ImportError:
        raise ParseError(
            "zstd-compressed log, but the 'zstandard' Python package is not installed "
            "(pip install zstandard, or ./run to install the project's dependencies)",
            kind="compression",
            expected="the zstandard package, or a gzip/xz/bzip2 or plain log",
        ) from None
    return zstandard.ZstdDecompressor().stream_reader(buf, read_across_frames=True)


class _Streams(io.RawIOBase):
    """Concatenated xz or bzip2 streams (pbzip2 writes one per 900 kB, `cat a.xz b.xz`), each read whole: what
    follows a stream is another stream, or zero bytes (xz's stream padding), and anything else is invalid data. The
    standard library's LZMAFile and BZ2File take bytes after a stream that do not start a valid one for trailing
    junk and end there without a word: a log whose second stream had one byte damaged was stored with the first
    stream's rows only (reliability-28 input: 20,222 of 40,000 samples, exit 0), where gzip refuses it."""

    def __init__(self, raw: BinaryIO, factory) -> None:
        self.raw, self.factory, self.d = raw, factory, factory()

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while self.d is not None:
            if self.d.eof:  # the next stream, after any zero padding; none: the end
                data = self.d.unused_data
                while not (data := data.lstrip(b"\0")):
                    if not (data := self.raw.read(_CHUNK)):
                        self.d = None
                        return 0
                self.d = self.factory()
            elif self.d.needs_input:
                if not (data := self.raw.read(_CHUNK)):
                    raise EOFError  # the input ends inside a stream: 'truncated'
            else:
                data = b""
            if out := self.d.decompress(data, len(b)):
                b[: len(out)] = out
                return len(out)
        return 0


def decompress(data: bytes, limit: int | None = None) -> bytes:
    """The log's bytes with one layer of gzip/xz/bzip2/zstd removed (unchanged if not compressed)."""
    kind = kind_of(data)
    if kind is None:
        return data
    out = bytearray()
    with _Limited(kind, io.BytesIO(data), MAX_DECOMPRESSED_BYTES if limit is None else limit, len(data)) as r:
        while chunk := r.read(_CHUNK):
            out += chunk
    return bytes(out)


class _Limited(io.RawIOBase):
    """A decompressing reader that refuses to give more than ``limit`` bytes (a bomb guard) and turns
    a broken stream into ParseError, as ``decompress`` does."""

    def __init__(self, kind: str, raw: BinaryIO, limit: int, compressed_size: int | None = None):
        self.kind, self.raw, self.limit, self.n, self.size = kind, raw, limit, 0, compressed_size
        # zstd's reader ends quietly where its input does, in a frame or not: its frames are walked as it reads
        self.frames = Watched(raw) if kind == "zstd" else None
        self.inner = _reader(kind, self.frames or raw)  # type: ignore[arg-type]

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            data = self.inner.read(len(b))
            if not data and len(b) and self.frames is not None and not self._zstd_whole(self.frames):
                raise EOFError
        except EOFError:
            raise ParseError(
                f"{self.kind} data ends early: the compressed file is cut short"
                + (f" (at least {self.n:,} bytes decompressed before the cut)" if self.n else ""),
                kind="truncated",
                expected=f"a complete {self.kind} stream",
            ) from None
        except Exception as e:  # zlib.error, lzma.LZMAError, OSError, zstandard.ZstdError
            raise ParseError(
                f"invalid {self.kind} data: {e}", kind="compression", expected=f"a valid {self.kind} stream"
            ) from None
        self.n += len(data)
        if self.n > self.limit:
            size = f" ({self.size:,} compressed)" if self.size is not None else ""
            raise ParseError(
                f"{self.kind} data decompresses to more than {self.limit:,} bytes{size}: refused as a possible "
                "decompression bomb",
                kind="too-large",
                expected=f"a log of at most {self.limit:,} bytes once decompressed",
            )
        b[: len(data)] = data
        return len(data)

    @staticmethod
    def _zstd_whole(frames: Watched) -> bool:
        """At the end of the decompressed bytes: the zstd input (all of it, read to its end) ends with a whole
        frame."""
        while frames.read(_CHUNK):
            pass
        return frames.frames.whole

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.raw.close()
            super().close()


class Tap:
    """The SHA-256 of every byte read from the file as stored (compressed or not), as it is read: the store checks
    that the bytes a streamed parse read are the bytes it hashed (reliability-20, h1: with 1-second change times,
    ext2/ext3's 128-byte inodes, a rewrite in place in the same second kept the file's identity)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.raw: _Tapped | None = None

    def hexdigest(self) -> str:
        """The SHA-256 of the whole file: what is left after the decompressor's end is read (and hashed) first."""
        if self.raw is not None:
            while self.raw.read(_CHUNK):
                pass
        return self.h.hexdigest()


class _Tapped(io.RawIOBase):
    def __init__(self, raw: BinaryIO, tap: Tap):
        self.raw, self.tap = raw, tap
        tap.raw = self

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self.raw.readinto(b)  # type: ignore[attr-defined]
        self.tap.h.update(memoryview(b)[:n])
        return n

    def close(self) -> None:
        try:
            self.raw.close()
        finally:
            super().close()


def open_decompressed(path: str, limit: int | None = None, check=None, tap: Tap | None = None) -> BinaryIO:
    """The file's bytes as a buffered stream, one layer of gzip/xz/bzip2/zstd removed as it is read (the
    same bytes ``decompress`` gives, in bounded memory). ``check``: called with the stat of the descriptor opened
    before anything is read (it raises when that is not the file wanted). ``tap``: hashes the bytes read."""
    raw = open_input(path)  # closed by the stream returned; a FIFO swapped in since the listing: OSError
    try:
        if check is not None:
            check(os.fstat(raw.fileno()))
        kind = kind_of(raw.read(10))
        raw.seek(0)
        if tap is not None:
            raw = io.BufferedReader(_Tapped(raw, tap))
        if kind is None:
            return raw
        return io.BufferedReader(_Limited(kind, raw, MAX_DECOMPRESSED_BYTES if limit is None else limit), _CHUNK)
    except BaseException:
        raw.close()
        raise
