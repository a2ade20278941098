"""Reliability-28, odd inputs (issue 26, h5): attacks on 893a20f with labels and compressed logs."""

from __future__ import annotations

import bz2
import io
import lzma
import random
import re

import pytest
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from storagelab.analysis.result import Result
from storagelab.analysis.selection import Selection
from storagelab.errors import ParseError
from storagelab.parsers import compressed
from storagelab.present import escape_html, findings

_URL = re.compile(r"""<(a|img)\b[^>]*?\b(?:href|src)="([^"]*)""")


def _loads_or_runs(html: str) -> list[tuple[str, str]]:
    """Links a click runs as script, and images loaded from elsewhere, as the browser reads their URLs."""
    bad = []
    for tag, url in _URL.findall(html):
        url = re.sub(r"[\t\n\r]", "", url.replace("&amp;", "&")).strip("\x00 ").lower()
        scheme = re.match(r"[a-z][a-z0-9+.-]*:", url)
        if (tag == "a" and scheme and scheme.group() not in ("http:", "https:", "mailto:")) or (
            tag == "img" and (scheme or url.startswith("//"))
        ):
            bad.append((tag, url))
    return bad


def test_a_label_that_is_a_markdown_link_never_runs_script_or_loads_from_elsewhere():
    # the attack: manifest labels such as [L25](javascript:alert('L25')), [P32](&#106;avascript:alert('PJ32')), a
    # reference definition [h0]: javascript:..., and ![im](https://h44.invalid/0.png) in the host label; `build`:
    # 8 reports held javascript: links (a click on "L25" in 01_vdev_scaling.html fired alert('L25') in Chromium) and
    # 01 fetched https://h44.invalid/25.png on opening. Links with a scheme other than http(s)/mailto, and images
    # from elsewhere, are now text; relative links (the excerpt pages') and http(s) links stay
    hostile = [
        "[L25](javascript:alert('L25'))",
        "[P32](&#106;avascript:alert('PJ32'))",
        "[a](&amp;#x6A;avascript&amp;colon;alert(1))",
        "[a](java\tscript:alert(1))",
        "[a](javascript\\:alert(1))",
        "[a](\n JaVaScRiPt:alert(1))",
        "[H0][h0] [h0]: javascript:alert('H0')",
        "[N](data:text/html;base64,PHNjcmlwdD4=)",
        "[C](vbscript:msgbox)",
        "[`x`](javascript:alert(2))",
        "![im0](https://h44.invalid/0.png)",
        "![i [j]](//h44.invalid/1.png)",
        "[x[L\\](javascript:alert(3))",  # mistune ends the link at an escaped ']'
    ]
    res = Result(Selection(study="x"))
    res.missing += [f"the pool {h} has no ashift: `zdb -C {h}`" for h in hostile]
    # the first fix's miss, in the same build: two labels "[L](javascript:...) `<img ...>` ``x`" in one finding, the
    # link of the second inside what escape_html took for a code span ("``x` ... ``x`"), written as <code>...</code>,
    # where mistune still makes links
    two = [f"[L{i}](javascript:alert('L{i}')) `<img src=x onerror=alert('LB{i}')>` ``x` <b>B{i}</b>" for i in (25, 26)]
    res.missing.append(f"run {two[0]} is not used as one disk for {two[1]}: it ran on host x")
    html = markdown2html_mistune(findings(res).data)
    assert _loads_or_runs(html) == []
    assert "javascript:alert('L25')" in html  # shown as text
    pieces = ["[", "]", "](", "![", "[L](javascript:alert(1))", "``x`", "`<img src=x>`", "\\", "&#106;", "&amp;", " ",
              "\n* ", "https://x/y.png", "javascript:", "(", ")", "`", "]:"]  # fmt: skip
    rnd = random.Random(28)
    texts = ["* " + "".join(rnd.choice(pieces) for _ in range(rnd.randint(2, 16))) for _ in range(300)]
    assert [t for t in texts if _loads_or_runs(markdown2html_mistune(escape_html(t)))] == []
    kept = '[5.0 MiB/s](raw/a.txt-1-L2-2.html "a.txt: line 2") [site](https://example.org/x)'
    # no link at all: a label's http(s) link is text too (reliability-33 input, Low 1), and so is one to the
    # excerpt pages (reliability-34 input, Low 1): present.findings adds the excerpt links after escape_html
    assert re.findall(r'href="([^"]*)"', markdown2html_mistune(escape_html(kept))) == []


def _two_streams(compress, damage: bool) -> tuple[bytes, bytes, bytes]:
    a = b"".join(b"%d, %d, 0, 4096\n" % (i * 10, 1000 + i % 97) for i in range(2000))
    b = a.replace(b", 0, 4096", b", 1, 8192")
    second = compress(b)
    return a, b, compress(a) + (bytes([second[0] ^ 1]) + second[1:] if damage else second)


@pytest.mark.parametrize("compress", [bz2.compress, lzma.compress], ids=["bzip2", "xz"])
def test_a_damaged_second_stream_is_an_error_not_dropped(tmp_path, compress):
    # the attack: a fio bandwidth log of 40,000 lines as two bzip2 (or xz) streams (pbzip2 writes one per 900 kB,
    # `cat a.xz b.xz`), the second stream's first byte flipped: `ingest` stored 20,222 of 40,000 samples, exit 0,
    # no warning. The standard library's readers take whatever follows a stream and is not a valid one for trailing
    # junk and stop there; gzip refuses it ("invalid gzip data: Not a gzipped file")
    a, b, whole = _two_streams(compress, damage=False)
    assert compressed.decompress(whole) == a + b
    _, _, damaged = _two_streams(compress, damage=True)
    with pytest.raises(ParseError, match=r"^<input>: compression: invalid (bzip2|xz) data"):
        compressed.decompress(damaged)
    (tmp_path / "bw.log.x").write_bytes(damaged)
    with pytest.raises(ParseError), compressed.open_decompressed(str(tmp_path / "bw.log.x")) as f:
        f.read()


def test_sql_refuses_explain_analyze_of_a_copy(tmp_path):
    # the attack: `storagelab sql "EXPLAIN ANALYZE COPY files TO '/root/h44in/sq/side/n11.csv'"` (also
    # "EXPLAIN (ANALYZE) COPY ...", lower case, after a comment): exit 0 and the file written (38,948 bytes), where
    # "COPY files TO ..." is refused ("COPY writes files: sql only reads"): the statement's type is EXPLAIN
    import duckdb

    from storagelab import sqlout

    con = duckdb.connect()
    for q in ("EXPLAIN ANALYZE COPY (SELECT 1) TO '{}'", "/* c */ explain (analyze) copy (select 1) to '{}'"):
        target = tmp_path / "out.csv"
        with pytest.raises(ValueError, match="writes files: sql only reads"):
            sqlout.run(con, q.format(target), out=io.StringIO(), err=io.StringIO(), terminal=False)
        assert not target.exists()


def test_sql_refuses_a_setting_that_changes_nothing():
    # the attack: `storagelab sql "SET threads = 1000000"` (or "PRAGMA threads=1000000") as root printed "Success"
    # and started threads until `timeout` ended it after 60 s (the second try: SIGKILL, exit 137); as the second
    # user under `ulimit -u 5000`, 2,027 threads and 250 MB in 1 s. One statement per process: a SET changes
    # nothing any later statement sees, so nothing is lost by refusing it (3 threads here, not a million)
    import duckdb

    from storagelab import sqlout

    con = duckdb.connect()
    for q in ("SET threads = 3", "PRAGMA threads=3", "RESET threads"):
        with pytest.raises(ValueError, match="^SET changes nothing here"):
            sqlout.run(con, q, out=io.StringIO(), err=io.StringIO(), terminal=False)
