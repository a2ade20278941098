"""reliability-31, report folders: a report folder renamed away and another put in its place while `report` (or the
render step of `build` and `run`) renders it."""

from __future__ import annotations

import re

import nbformat

from storagelab import rendering, report


class _Page:
    def from_notebook_node(self, nb, resources):
        return "<html>" + " ".join(c.source for c in nb.cells) + "</html>", {}


def test_a_folder_swapped_in_while_its_pages_render_gets_none_of_the_other_selection_s_pages(tmp_path, monkeypatch):
    """`mv reports/A A.away; mv reports/B reports/A` while `report` rendered A: A's notebook, read from A's folder,
    was written by the name into B's folder (A's page under B's study, exit 0), and the index named A's pages in B's
    folder, where they are not."""
    for name, word in (("a", "AAA-study-page"), ("b", "BBB-study-page")):
        (tmp_path / name / "executed").mkdir(parents=True)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {word}")])
        nbformat.write(nb, str(tmp_path / name / "executed" / f"only_{name}.ipynb"))
    prepare = rendering._prepare

    def swapped(nb, name, folder=None):  # the swap, between reading a's notebook and writing its page
        if name == "only_a" and (tmp_path / "b").exists():
            (tmp_path / "a").rename(tmp_path / "a.away")
            (tmp_path / "b").rename(tmp_path / "a")
        return prepare(nb, name, folder)

    monkeypatch.setattr(rendering, "_prepare", swapped)
    monkeypatch.setattr(rendering, "_exporter", lambda: _Page())  # nbconvert's: 10 s under load, not the concern
    report.render_reports(tmp_path)
    assert "AAA-study-page" in (tmp_path / "a.away" / "only_a.html").read_text()  # a's page in a's folder
    assert not (tmp_path / "a" / "only_a.html").exists()  # none in b's, now called a
    index = (tmp_path / "index.html").read_text()
    for href in re.findall(r"href='([^'#:]+\.html)'", index):
        assert (tmp_path / href).exists(), href
