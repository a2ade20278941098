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

import io

from ..errors import ParseError

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
            if name == "bzip2" and not (
                len(data) > 3
                and data[3:4].isdigit()
                and data[4:10] in (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")
            ):
                return None  # a text that merely starts with "BZh"
            return name
    return None


def _reader(kind: str, data: bytes):
    buf = io.BytesIO(data)
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=buf, mode="rb")
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(buf, mode="rb")
    if kind == "bzip2":
        import bz2

        return bz2.BZ2File(buf, mode="rb")
    try:
        import zstandard
    except ImportError:
        raise ParseError(
            "zstd-compressed log, but the 'zstandard' Python package is not installed "
            "(pip install zstandard, or ./run to install the project's dependencies)",
            kind="compression",
            expected="the zstandard package, or a gzip/xz/bzip2 or plain log",
        ) from None
    return zstandard.ZstdDecompressor().stream_reader(buf, read_across_frames=True)


def decompress(data: bytes, limit: int | None = None) -> bytes:
    """The log's bytes with one layer of gzip/xz/bzip2/zstd removed (unchanged if not compressed)."""
    kind = kind_of(data)
    if kind is None:
        return data
    limit = MAX_DECOMPRESSED_BYTES if limit is None else limit
    out = bytearray()
    try:
        with _reader(kind, data) as r:
            while True:
                chunk = r.read(_CHUNK)
                if not chunk:
                    break
                out += chunk
                if len(out) > limit:
                    raise ParseError(
                        f"{kind} data decompresses to more than {limit:,} bytes "
                        f"({len(data):,} compressed): refused as a possible decompression bomb",
                        kind="too-large",
                        expected=f"a log of at most {limit:,} bytes once decompressed",
                    )
    except ParseError:
        raise
    except EOFError:
        raise ParseError(
            f"{kind} data ends early (after {len(out):,} decompressed bytes)",
            kind="truncated",
            expected=f"a complete {kind} stream",
        ) from None
    except Exception as e:  # zlib.error, lzma.LZMAError, OSError, zstandard.ZstdError
        raise ParseError(f"invalid {kind} data: {e}", kind="compression", expected=f"a valid {kind} stream") from None
    return bytes(out)
