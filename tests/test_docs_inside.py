"""Every reference in the code points inside the repository (issue 14): format facts are cited from
docs/formats/, which exists and holds the sections the docstrings name."""

import re

from conftest import ROOT

LIB = ROOT / "lib" / "storagelab"


def test_no_docstring_points_outside_the_repository():
    offenders = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in LIB.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\.\./shared|shared/(docs|seeds|reviews)", line)
    ]
    assert not offenders, offenders


def test_cited_format_sections_exist():
    facts = (ROOT / "docs" / "formats" / "zfs-facts.md").read_text()
    formats = (ROOT / "docs" / "formats" / "log-formats.md").read_text()
    cited_f, cited_s = set(), set()
    for p in LIB.rglob("*.py"):
        text = p.read_text()
        cited_f |= set(re.findall(r"zfs-facts\.md (F\d+)", text))
        cited_s |= set(re.findall(r"log-formats\.md ([A-E]\.\d+)", text))
    assert cited_f and cited_s
    for f in cited_f:
        assert re.search(rf"\b{f}\b", facts), f
    for s in cited_s:
        assert re.search(rf"\b{re.escape(s)}\b", formats), s
