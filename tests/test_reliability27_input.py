"""Reliability-27, odd inputs (issue 26, h5): attacks on e44ef6e with labels, names and compressed logs."""

from __future__ import annotations

import os
import random
import re

import pytest
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from storagelab.analysis.result import Result
from storagelab.analysis.selection import Selection
from storagelab.errors import ParseError
from storagelab.parsers import compressed
from storagelab.present import escape_html, findings

_TAG = re.compile(r"<(img|script)\b", re.I)
_LABEL = "<script>alert(100)</script>\"'><img src=x onerror=alert(100)>`${100}`"


def test_a_label_with_backticks_never_reaches_the_report_as_html():
    # the attack: manifest labels `<script>alert(N)</script>"'><img src=x onerror=alert(N)>`${N}`` on a study's
    # bonnie++ and fio runs; `build`: 03_sector63.html fired alert(100), (102), (104), (105) in Chromium. 03 puts the
    # pool label inside a code span of its advice (`zdb -C POOL`); the label's backticks made escape_html's pattern
    # take three lines as one code span, and the "Missing:" lines between were left as HTML
    res = Result(Selection(study="x"))
    res.missing += [
        f"the ashift of pool {_LABEL}: `zdb -C {_LABEL}` (its `ashift:` lines), or an `ashift` label",
        f"the 'before' run ({_LABEL}) has no partition_start_sector label: its offset is unknown",
    ]
    html = markdown2html_mistune(findings(res).data)
    assert _TAG.findall(html) == []
    assert "&lt;img src=x onerror=alert(100)&gt;" in html  # shown as text
    # any text: 400 strings of backticks, tags, escapes and block starts (the old pattern: 562 of 20,000 ran a tag)
    pieces = ["`", "``", "```", "<img src=x onerror=1>", "<script>", "a", " ", "\\", "*", "\n* ", "\n", "&", "\n```",
              "\n~~~", "\n<pre>", "\n# ", "\n> ", "[", "](u \"t\")", "<code>", "<!--"]  # fmt: skip
    rnd = random.Random(27)
    texts = ["* " + "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 14))) for _ in range(400)]
    assert [t for t in texts if _TAG.search(markdown2html_mistune(escape_html(t)))] == []


def test_a_zstd_log_cut_short_is_truncated_not_stored_in_part(tmp_path):
    # the attack: a fio bandwidth log of 40,000 lines, `zstd -c`, cut with `head -c 100000` (of 229,958 bytes):
    # ingest stored it with 16,173 samples, no error and no warning; cut at 400 bytes it said "file is empty".
    # python-zstandard's reader ends quietly where its input does; the frames are now walked as it reads
    # (parsers/zstdframes.py), and a file that ends inside one is 'truncated', as gzip, xz and bzip2 say themselves
    import zstandard

    data = b"".join(b"%d, %d, 0, 4096\n" % ((i + 1) * 100, 100000 + i * 7 % 99991) for i in range(40000))
    packed = zstandard.ZstdCompressor(level=3).compress(data)
    assert compressed.decompress(packed) == data
    start = "<input>: truncated: zstd data ends early: the compressed file is cut short"
    for cut in (400, len(packed) // 2, len(packed) - 1):
        with pytest.raises(ParseError) as e:
            compressed.decompress(packed[:cut])
        got = re.fullmatch(re.escape(start) + r"(?: \(at least ([\d,]+) bytes decompressed before the cut\))? "
                           r"\(expected a complete zstd stream\)", str(e.value))  # fmt: skip
        assert got, str(e.value)
        assert cut == 400 or 0 < int(got.group(1).replace(",", "")) < len(data), str(e.value)
        (tmp_path / "cut.log.zst").write_bytes(packed[:cut])  # the streamed read, as an ingest reads a file
        with pytest.raises(ParseError) as e, compressed.open_decompressed(str(tmp_path / "cut.log.zst")) as f:
            f.read()
        assert str(e.value).startswith(start), str(e.value)
    # whole files of every frame and block kind still read whole: raw blocks (random bytes), RLE blocks (zeros),
    # no content size (a streamed compressor), a checksum, two frames and a skippable frame between them
    rnd = random.Random(5).randbytes(300_000)
    streamed = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    frames = [
        zstandard.ZstdCompressor(level=1).compress(rnd),
        zstandard.ZstdCompressor(write_checksum=True).compress(bytes(500_000)),
        streamed.compress(data[:99_999]) + streamed.flush(),
    ]
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"12345"
    whole = frames[0] + skippable + frames[1] + frames[2]
    assert compressed.decompress(whole) == rnd + bytes(500_000) + data[:99_999]
    for cut in (len(frames[0]) + 3, len(frames[0]) + len(skippable) + 10, len(whole) - 2):
        with pytest.raises(ParseError, match="^<input>: truncated: zstd data ends early"):
            compressed.decompress(whole[:cut])


def test_a_symlink_to_a_device_or_in_a_loop_is_named_not_skipped_silently(tmp_path):
    # the attack: in an ingested folder, zero.txt -> /dev/zero, tty.txt -> /dev/tty, loop1 <-> loop2: the ingest said
    # nothing of them (the README: "Inside a folder such entries (and sockets) are skipped, each named in a warning";
    # a FIFO, a socket and links to /proc and /etc/shadow beside them were named)
    from storagelab.store import listing

    (tmp_path / "zero.txt").symlink_to("/dev/zero")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    odd: list = []
    assert listing._scan(tmp_path, odd=odd) == []
    assert sorted(odd) == [
        (str(tmp_path / "loop1"), "a symlink loop"),
        (str(tmp_path / "loop2"), "a symlink loop"),
        (str(tmp_path / "zero.txt"), "a symlink to a device"),
    ]
    (tmp_path / "gone.txt").symlink_to(tmp_path / "nothing")  # a broken link: not a log, nothing to say
    (tmp_path / "fifo.txt").symlink_to(tmp_path / "f")
    os.mkfifo(tmp_path / "f")
    odd.clear()
    assert listing._scan(tmp_path, odd=odd) == []
    assert [w for p, w in sorted(odd) if p.endswith(("f", "fifo.txt", "gone.txt"))] == ["a FIFO", "a symlink to a FIFO"]
