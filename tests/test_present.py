"""Claims tables for reading: display units in their own column, no scientific notation, no quoted strings."""

import re

from storagelab import present
from storagelab.analysis import Selection, alignment, open_db


def test_display_parts():
    assert present.display_parts(2899102924.8, "bytes/s") == ("2,764.8", "MiB/s")  # bonnie++ '2.7g'
    assert present.display_parts(124 * 1024, "bytes") == ("124.0", "KiB")  # not 0.121 MiB
    assert present.display_parts(31138512896, "bytes") == ("29.00", "GiB")
    assert present.display_parts(60030000000, "ns") == ("60.030", "s")  # not 6.0030e10 ns
    assert present.display_parts(14.5233, "% (~)") == ("14.5", "%")  # the stated unit's qualifier left out
    assert present.display_parts(0.7295, "ratio") == ("0.73", "x")
    assert present.display_parts(None, "bytes") == ("", "")
    assert present.display_value(229.2, "1/s") == "229.2 /s"


def test_claims_table_has_a_unit_column_and_plain_values(seed_db):
    con = open_db(seed_db)
    sel = Selection(study="freebsd-bonnie-dedup")
    res = alignment.analyse(con, sel)
    con.close()
    table, _ = present.claims_for("03_sector63", sel, res)
    shown = present.claims_display(table)
    assert shown.df.columns == ["claim", "quantity", "stated", "reproduced", "unit", "basis", "status"]
    rows = {r["claim"]: r for r in shown.df.iter_rows(named=True)}
    assert (rows["freebsd-sec63-block-read-before"]["reproduced"], rows["freebsd-sec63-block-read-before"]["unit"]) == (
        "2,764.8",
        "MiB/s",
    )
    html = shown._repr_html_()
    assert not re.search(r"\d[eE][+-]?\d", html) and "&quot;" not in html  # no 6.003e10, no quoted strings


def test_the_study_commentary_states_no_cause_the_data_cannot_carry():
    """Review H4 in the report's own words: no sector-63 offset on a whole-disk vdev, the confounders, and the
    DDT figure notebook 04 now gives (not 'larger than the budget')."""
    text = present.commentary("03_sector63", Selection(study="freebsd-bonnie-dedup")).data
    assert "whole-disk vdev starts allocating past its labels and boot area, so it cannot have a sector-63" in text
    # analyses-2 N6: archiv's ratio as evidence for the other pool, the read served from memory, the zfs get asked for
    assert "archiv, made by the same admin on the same FreeBSD\nmachine, allocates 1.378x" in text
    assert "evidence, not proof" in text and "ran at 99 %CP (8 %CP after): it was served from memory" in text
    assert "`zfs get compression,dedup,recordsize,sync` of the dataset was not posted" in text
    assert "6.6-7.0 GiB by the" in text and "SMR" in text and "95 % full and 47 %" in text
    assert "The logs cannot show which of\nthese, if any, caused the difference." in text
    assert present.commentary("03_sector63", Selection(study="fixturelab")) is None  # another study: none


def test_findings_show_angle_brackets_as_text_not_html():
    """'data/raw/<study>/' in a finding reached the HTML report as a <study> tag that browsers drop
    (new-user trial); a label with markup is shown, not run. Code spans are left to Markdown, but one holding '<' is
    written as <code> with its text escaped (reliability-27: backticks in a label paired otherwise)."""
    from storagelab.analysis.result import Result
    from storagelab.analysis.selection import Selection
    from storagelab.present import escape_html, findings

    res = Result(Selection(study="x"))
    res.findings.append("IOPS 1,000 -> 2,000 for <b>my</b> & `fio --size <2 x RAM>`")
    res.missing.append("put the output under data/raw/<study>/ and label it")
    assert findings(res).data == (
        "* IOPS 1,000 -&gt; 2,000 for &lt;b&gt;my&lt;/b&gt; &amp; <code>fio --size &lt;2 x RAM&gt;</code>\n"
        "* **Missing:** put the output under data/raw/&lt;study&gt;/ and label it"
    )
    assert escape_html("a ``x<y`` b<c `z` d") == "a <code>x&lt;y</code> b&lt;c `z` d"
