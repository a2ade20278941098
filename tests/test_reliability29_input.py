"""Reliability-29, odd inputs (issue 26, h5): attacks on b485688 with labels, compressed logs and `sql`."""

from __future__ import annotations

import bz2
import io
import re

import pytest
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from storagelab.analysis.result import Result
from storagelab.analysis.selection import Selection
from storagelab.present import escape_html, findings

_IMG = re.compile(r"""<img\b[^>]*?\bsrc="([^"]*)""")


def test_an_image_from_elsewhere_never_loads_whatever_its_text_or_where_its_definition_stands():
    # 7bac7c3 defused an http(s) destination only when a '![' stood before its ']' in the same piece of text: an
    # image whose text holds a code span (the '](' in the piece after the span), or a reference image whose
    # definition comes first or in another list item, still loaded the file when the report opened
    labels = [
        "![a `b` c](https://h45.invalid/a.png)",
        "![a ``b`` c](//h45.invalid/b.png)",
        "![a `<b>` c](https://h45.invalid/c.png)",
    ]
    res = Result(Selection(study="x"))
    res.missing += [f"the pool {h} has no ashift" for h in labels]
    assert _IMG.findall(markdown2html_mistune(findings(res).data)) == []
    for md in ("* [r]: https://h45.invalid/r.png\n* ![r]", "* ![r]\n* x\n\n[r]: //h45.invalid/r.png"):
        assert _IMG.findall(markdown2html_mistune(escape_html(md))) == []
    kept = '[5.0 MiB/s](raw/a.txt-1-L2-2.html "a.txt: line 2") [site](https://example.org/x)'
    # no link at all: a label's http(s) link is text too (reliability-33 input, Low 1), and so is one to the
    # excerpt pages (reliability-34 input, Low 1): present.findings adds the excerpt links after escape_html
    assert re.findall(r'href="([^"]*)"', markdown2html_mistune(escape_html(kept))) == []


def test_a_study_named_as_a_markdown_link_is_text_in_its_commentary_heading(tmp_path, monkeypatch):
    # a study is a folder of data/raw and papers/: `build` of one named "th<img ...>[ST](javascript:alert('SJ'))"
    # wrote <a href="javascript:alert(%27SJ%27)"> into the heading of its commentary in 01 and 06
    from storagelab import paths, present

    study = "th<img src=x onerror=alert('ST')>[ST](javascript:alert('SJ')) ![SI](//h45.invalid/s.png)"
    (tmp_path / study / "commentary").mkdir(parents=True)
    (tmp_path / study / "commentary" / "01_vdev_scaling.md").write_text("Same disks in every layout.\n")
    monkeypatch.setattr(paths, "PAPERS", tmp_path)
    html = markdown2html_mistune(present.commentary("01_vdev_scaling", Selection(study=study)).data)
    assert "<a " not in html and _IMG.findall(html) == [] and "<img" not in html
    assert "[ST](javascript:alert('SJ'))" in html and "Same disks in every layout." in html


def test_sql_refuses_a_copy_in_a_cte_or_behind_comments_and_an_attach(tmp_path):
    # the attack: `storagelab sql "WITH t AS (COPY files TO '/root/h45in/sq/side/w.csv') SELECT 1"` (DuckDB 2.0 lets a
    # CTE's body be a COPY TO; the statement's type is SELECT), "EXPLAIN/**/ANALYZE/**/COPY files TO ..." and
    # "EXPLAIN--x\nANALYZE COPY ..." (the comment between the words: the EXPLAIN pattern did not match) each wrote
    # its file, exit 0; "ATTACH '.../new2.db' (READ_WRITE)" created a database file, "Success"
    import duckdb

    from storagelab import sqlout

    con = duckdb.connect()
    target = tmp_path / "out.csv"
    for q in (
        "WITH t AS (COPY (SELECT 1) TO '{}') SELECT 1",
        "EXPLAIN ANALYZE WITH t AS (COPY (SELECT 1) TO '{}') SELECT 1",
        "EXPLAIN/**/ANALYZE/**/COPY (SELECT 1) TO '{}'",
        "EXPLAIN--x\nANALYZE COPY (SELECT 1) TO '{}'",
        "ATTACH '{}' (READ_WRITE)",
    ):
        with pytest.raises(ValueError, match="sql only reads|sql reads its --db only"):
            sqlout.run(con, q.format(target), out=io.StringIO(), err=io.StringIO(), terminal=False)
        assert not target.exists()
    out = io.StringIO()  # the words in a string, a comment or a quoted name are not refused
    sqlout.run(con, "SELECT 'copy' AS \"copy\" -- COPY x TO 'y'", fmt="csv", out=out, err=io.StringIO(), terminal=False)
    assert out.getvalue().splitlines() == ["copy", "copy"]


def test_a_bzip2_file_cut_in_its_first_ten_bytes_is_truncated_not_text():
    # reliability-28 input, Low 2: of 46,842 cuts, the 8 inside 'BZh91AY&SY' were read as plain text
    # ('unknown-format' later), where every longer cut is 'truncated'; a text that starts with "BZh" stays text
    from storagelab.errors import ParseError
    from storagelab.parsers import compressed

    whole = bz2.compress(b"0, 100, 0, 4096\n" * 50)
    for cut in range(4, 11):
        with pytest.raises(ParseError) as e:
            compressed.decompress(whole[:cut])
        assert e.value.kind == "truncated"
    texts = (b"BZh", b"BZh9", b"BZh9 text", b"BZh0", b"BZhello world\n", b"BZh91AY&SX")
    assert [t for t in texts if compressed.kind_of(t)] == [b"BZh9"]  # 'BZh9' alone: a start of one, cut
