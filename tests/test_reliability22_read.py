"""Reliability-22, the read side (issue 26, h11): reliability-21 Medium 1, an excerpt of a huge stored log."""

import gzip
import hashlib
import re
import tracemalloc

from storagelab import excerpts


def test_an_excerpt_of_a_huge_log_streams_the_lines_wanted_and_says_what_was_cut(tmp_path, monkeypatch):
    # 1 GiB of text (a 6 MB gzip) took 5.6 GiB of the report's memory for one excerpt: read, decoded and split whole
    monkeypatch.setattr(excerpts, "WHOLE_TEXT_MAX", 64 << 10, raising=False)  # "huge" made small: 2.3 MiB of text
    p = tmp_path / "run_clat.1.log.gz"
    body = b"".join(b"%d, 4890, 0, 4096, 0\n" % i for i in range(100_000))
    long_line = b"x" * 10_000 + b"\n"
    p.write_bytes(gzip.compress(b"\xef\xbb\xbf" + body + long_line + b"7, 8, 0, 4096, 0\r\n", compresslevel=1))
    sha = hashlib.sha256(p.read_bytes()).hexdigest()
    w = excerpts.Excerpts(tmp_path / "rep")
    tracemalloc.start()
    try:
        href = w.href(str(p), sha, 50_000, 50_001)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 << 20, peak  # main: the 2.3 MiB text, its bytes and its 100,000 lines: > 10 MiB
    assert href == f"raw/{excerpts._name(str(p), sha, 50_000, 50_001)}#L50000"
    page = (tmp_path / "rep" / href.split("#")[0]).read_text()
    rows = re.findall(r'<span id="L(\d+)"( class="hl")?><b>\s*\d+</b>  ([^\n]*)', page)
    assert rows[0] == ("49992", "", "49991, 4890, 0, 4096, 0")
    assert rows[8:10] == [
        ("50000", ' class="hl"', "49999, 4890, 0, 4096, 0"),
        ("50001", ' class="hl"', "50000, 4890, 0, 4096, 0"),
    ]
    assert len(rows) == 18
    end = w.href(str(p), sha, 100_002, None)  # the last lines: the long one cut, in one line; CRLF and BOM as decode
    page = (tmp_path / "rep" / end.split("#")[0]).read_text()
    assert "1 of them shown cut at 4096 characters" in page
    rows = re.findall(r'<span id="L(\d+)"( class="hl")?><b>\s*\d+</b>  ([^\n]*)', page)
    assert rows[-3:] == [
        ("100001", "", "x" * 4096 + " [rest of the line not shown]"),
        ("100002", ' class="hl"', "7, 8, 0, 4096, 0"),
        ("100003", "", ""),
    ]
    assert w.href(str(p), sha, 100_004, None) is None  # past the end: no page
    assert w.href(str(p), sha, 1, None) is not None
    first = (tmp_path / "rep" / w.href(str(p), sha, 1, None).split("#")[0]).read_text()
    assert "<b>     1</b>  0, 4890, 0, 4096, 0" in first  # the BOM not shown
