"""Where a zstd file's frames end, read from their headers as the compressed bytes go by (RFC 8878, section 3).

python-zstandard's stream reader ends quietly where its input ends, even in the middle of a frame: a .zst log cut
short (a copy stopped, a download cut) gave the lines before the cut as the whole log, stored with no error and no
warning (reliability-27 input, High 1: a 40,000-line fio log cut at half its bytes stored 16,173 samples). gzip,
xz and bzip2 say so themselves (EOFError). ``Frames`` walks the frame structure (frame header, block headers, the
optional checksum; skippable frames) without decompressing anything, so that the reader can tell, at the end of its
input, whether the last frame was whole.
"""

from __future__ import annotations

from typing import BinaryIO

ZSTD_MAGIC = 0xFD2FB528
_SKIPPABLE = 0x184D2A50  # 0x184D2A50 to 0x184D2A5F: a skippable frame (its 4-byte size, then that many bytes)


class Frames:
    """Fed every byte of a zstd file in order (chunks of any size); ``whole`` says whether the input so far ends
    where a frame ends. A byte sequence that is not a zstd frame stops the walk (``lost``): the decompressor reports
    it as invalid data."""

    def __init__(self) -> None:
        self._skip = 0  # bytes to pass over before the next header
        self._need, self._buf = 4, bytearray()  # the header being read: how many bytes, and those read
        self._state = "magic"
        self._checksum = False
        self.lost = False
        self.seen = 0

    def feed(self, data: bytes | memoryview) -> None:
        view, at = memoryview(data), 0
        self.seen += len(view)
        while at < len(view) and not self.lost:
            if self._skip:
                step = min(self._skip, len(view) - at)
                self._skip -= step
                at += step
                continue
            step = min(self._need - len(self._buf), len(view) - at)
            self._buf += view[at : at + step]
            at += step
            if len(self._buf) == self._need:
                header, self._buf = bytes(self._buf), bytearray()
                self._header(header)

    def _header(self, h: bytes) -> None:
        if self._state == "magic":
            magic = int.from_bytes(h, "little")
            if magic == ZSTD_MAGIC:
                self._state, self._need = "descriptor", 1
            elif magic & 0xFFFFFFF0 == _SKIPPABLE:
                self._state, self._need = "skippable", 4
            else:
                self.lost = True
        elif self._state == "skippable":
            self._skip = int.from_bytes(h, "little")
            self._state, self._need = "magic", 4
        elif self._state == "descriptor":  # Frame_Header_Descriptor: the sizes of the header's other fields
            d = h[0]
            single_segment = (d >> 5) & 1
            self._checksum = bool((d >> 2) & 1)
            content_size = (single_segment, 2, 4, 8)[d >> 6]
            self._skip = (0 if single_segment else 1) + (0, 1, 2, 4)[d & 3] + content_size
            self._state, self._need = "block", 3
        elif self._state == "block":  # Block_Header: Last_Block (1 bit), Block_Type (2), Block_Size (21)
            value = int.from_bytes(h, "little")
            last, kind, size = value & 1, (value >> 1) & 3, value >> 3
            if kind == 3:  # reserved
                self.lost = True
                return
            self._skip = 1 if kind == 1 else size  # RLE: one byte, repeated Block_Size times
            if last:
                self._skip += 4 if self._checksum else 0
                self._state, self._need = "magic", 4

    @property
    def whole(self) -> bool:
        """True when the bytes fed end exactly where a frame (or a skippable frame) ends."""
        return self.lost or (self._state == "magic" and not self._skip and not self._buf and self.seen > 0)


class Watched:
    """``raw`` read through ``Frames``: what python-zstandard's reader reads of the file, walked as it goes."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw, self.frames = raw, Frames()

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.frames.feed(data)
        return data

    def close(self) -> None:
        self.raw.close()
