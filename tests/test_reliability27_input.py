"""Reliability-27, odd inputs (issue 26, h5): attacks on e44ef6e with labels, names and compressed logs."""

from __future__ import annotations

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


@pytest.mark.xfail(strict=True, reason="the fix is in parsers/compressed.py: docs/reliability-27-input.md, High 2")
def test_a_zstd_log_cut_short_is_truncated_not_stored_in_part():
    # the attack: a fio bandwidth log of 40,000 lines, `zstd -c`, cut with `head -c 100000` (of 229,958 bytes):
    # ingest stored it with 16,173 samples, no error and no warning; cut at 400 bytes it said "file is empty"
    import zstandard

    data = b"".join(b"%d, %d, 0, 4096\n" % ((i + 1) * 100, 100000 + i * 7 % 99991) for i in range(40000))
    packed = zstandard.ZstdCompressor(level=3).compress(data)
    assert compressed.decompress(packed) == data
    for cut in (400, len(packed) // 2, len(packed) - 1):
        with pytest.raises(ParseError) as e:
            compressed.decompress(packed[:cut])
        assert str(e.value) == (
            "<input>: truncated: zstd data ends early: the compressed file is cut short (expected a complete zstd stream)"
        ), cut


@pytest.mark.xfail(strict=True, reason="the fix is in store/listing.py: docs/reliability-27-input.md, Low 1")
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
    assert sorted(p for p, _ in odd) == [str(tmp_path / n) for n in ("loop1", "loop2", "zero.txt")]
