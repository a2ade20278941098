"""reliability-35 (input): a finding's excerpt link whose title is a log's file name. Where the link did not form
(a label holding the cited number after a backslash, which escaped the link's '['; a cited text from a log holding a
']', '`' or '$' that paired with the sentence's), its title was read as Markdown and HTML: a file named
'<img src=x onerror=alert(1)>[X](javascript:alert(2)).txt' ran its script when the report opened (05_stacks on the
demo data, the label 'mergerfs\\944.0 MiB/s (989.9 MB/s)': 2 dialogs in Chromium). Now every character of the
title but letters, digits and spaces is an entity, and a cited text that could break its link is linked at the
sentence's end ('lines'), as one not found is.
"""

from __future__ import annotations

import re

import pytest

NAME = "<img src=x onerror=alert(1)>[X](javascript:alert(2)) `$_*.txt"


@pytest.mark.parametrize(
    ("sentence", "cited"),
    [
        # a manifest label holding the cited number right after a backslash (05_stacks: the label, then the number)
        ("cache helped: mergerfs\\944.0 MiB/s (989.9 MB/s) (944.0 MiB/s (989.9 MB/s)).", "944.0 MiB/s (989.9 MB/s)"),
        # the same after '!': the link was an image of the excerpt page
        ("one run (x!512 MB/s, 512 MB/s)", "512 MB/s"),
        # a cited text from a log (compare: fio's error) holding ']' or a backtick or '$' that pairs with the sentence's
        ("failed: fio reported err=5 a]b (line 5): it stopped there.", "err=5 a]b"),
        ("x @-~` err`   y", "err`"),
        ("x `&% err` _ y", "err`"),
        ("x $-;  err$ \\]) y", "err$"),
        ("x  err\\ [ <* y", "err\\"),
        # the cited number inside a code span, the title's backticks closing it (the link is code text: no link)
        ("a `512` b", "512"),
    ],
)
def test_a_file_name_in_a_link_title_stays_text_where_the_link_breaks(monkeypatch, sentence, cited):
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    from storagelab import excerpts
    from storagelab.analysis.result import Cite, Finding
    from storagelab.present import escape_html

    monkeypatch.setattr(excerpts, "href_of", lambda writer, inputs, derivation=None: "raw/a.html#L5")
    inputs = ({"path": f"data/raw/s/{NAME}", "line_start": 5, "line_end": 5},)
    md = excerpts.linked(Finding(escape_html(sentence), [Cite(escape_html(cited), inputs)]), object())  # type: ignore[arg-type]
    page = markdown2html_mistune(md)
    assert "<img" not in page and 'href="javascript' not in page
    links = re.findall(r'<a href="([^"]*)" title="([^"]*)">', page)
    if f"`{cited}`" in sentence:  # a code span around the number: shown as code, no link
        assert links == [] and "<code>" in page
        return
    assert [h for h, _ in links] == ["raw/a.html#L5"]  # the one excerpt link, formed
    assert links[0][1] == "from: " + NAME.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + ":5"


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        # labelflip seed 4: a damaged line under a -bb row ended the table; the `Metadata Total` row after it was lost
        ("zdb/2.3/bbb.txt", "L0 Total\n\t number of ganged blocks: 3", "L0 Total\n\t number of ganged qlocks: 3", 219),
        ("zdb/2.3/bbb.txt", "L0 Total\n\t number of ganged blocks: 3", "L0 Total\n\t number of ganged blocks: 3x", 219),
        (
            "zdb/2.3-special/bbbb.txt",
            "psize (in 512-byte sectors): number",
            "psize  (in 512-byte sectors): number",
            None,
        ),
    ],
)
def test_a_damaged_line_inside_a_zdb_bb_table_is_refused_not_the_table_ended(rel, old, new, line):
    """Before: exit 0, no warning, the rows after the line (here `Metadata Total`, 49 -> 48) not stored."""
    from conftest import mutated

    from storagelab.errors import ParseError
    from storagelab.parsers import parse_bytes

    with pytest.raises(ParseError, match="unreadable line in the zdb -bb table") as e:
        parse_bytes(mutated(rel, old, new), rel)
    if line is not None:
        assert e.value.line == line


@pytest.mark.parametrize(
    ("rel", "old", "new"),
    [
        # keydamage seed 1: the group's bytes 5509427200 -> 2773663744 and bw halved, exit 0, no warning
        ("fio/newuser-h6/a/shm/shm-randrw70-nj2.json", '"runtime" : 2001,', '"runtiie" : 2001,'),
        ("fio/3.33/many_jobs_jsonplus.txt", '"runtime" : 64,', '"rcntime" : 64,'),
        # keydamage seed 2: the same with '"io_bytes"' damaged: the group's bw 2747843990 -> 1367198128
        ("fio/newuser-h6/a/shm/shm-randrw70-nj2.json", '"io_bytes" : 2773663744,', '"io_byes" : 2773663744,'),
    ],
)
def test_a_fio_json_job_without_its_runtime_is_refused_not_left_out_of_its_group(rel, old, new):
    """A job direction with bytes but no "runtime" (a damaged key) was left out of the run status group fio's JSON
    does not print and the parser recomputes (groups.add_derived_groups): the group's bytes and bandwidth were stored
    as the other jobs' alone. Now a ParseError names the direction's object, on the fast and the plain path."""
    from conftest import mutated

    from storagelab.errors import ParseError
    from storagelab.parsers import parse_bytes, parse_text

    data = mutated(rel, old, new)
    with pytest.raises(ParseError, match="but no (runtime|bytes)"):
        parse_bytes(data, rel)
    with pytest.raises(ParseError, match="but no (runtime|bytes)"):
        parse_text(data.decode(), rel)


def test_a_fio_json_direction_under_a_damaged_name_is_refused_not_left_out():
    """keydamage seed 2: '"read" : {' -> '"vead" : {' lost the job's read rows and stored its group's bytes as the
    other jobs' alone (16777216 -> 12582912), exit 0, no warning. Now a ParseError on the job's line, both paths."""
    from conftest import mutated

    from storagelab.errors import ParseError
    from storagelab.parsers import parse_bytes, parse_text

    rel = "fio/3.33/many_jobs_jsonplus.txt"
    data = mutated(rel, '"read" : {', '"vead" : {')
    for parse in (lambda: parse_bytes(data, rel), lambda: parse_text(data.decode(), rel)):
        with pytest.raises(ParseError, match="'vead', no direction") as e:
            parse()
        assert e.value.line == 13
