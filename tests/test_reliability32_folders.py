"""reliability-32, report folders: a report folder renamed away and another put in its place while `report` (or the
render step of `build` and `run`) renders a *later* folder, after the first one's pages were written."""

from __future__ import annotations

import json
import re

import nbformat

from storagelab import rendering, report


class _Page:
    def from_notebook_node(self, nb, resources):
        return "<html>" + " ".join(c.source for c in nb.cells) + "</html>", {}


def test_a_folder_swapped_after_its_render_leaves_none_of_its_runs_in_the_index_under_the_other(tmp_path, monkeypatch):
    """`mv reports/a a.away; mv reports/b reports/a` while `report` rendered b (after a): a's runs stayed keyed by the
    name a, and the index joined them to b's summary under b's heading (a's title and parameters on b's card) and named
    a's pages under a/, where they are not (exit 0)."""
    for name, word in (("a", "AAA"), ("b", "BBB")):
        (tmp_path / name / "executed").mkdir(parents=True)
        (tmp_path / name / ".selection.json").write_text(json.dumps({"selection": {"study": word}, "parameters": {}}))
        (tmp_path / name / "summaries").mkdir()
        summary = {"notebook": "nb", "title": f"{word}-title", "study": word, "answers": f"{word}-answers"}
        (tmp_path / name / "summaries" / "nb.json").write_text(json.dumps(summary))
        for nb_name in ("nb", f"only_{name}"):
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {word}-page")])
            nb.metadata["title"] = f"{word}-title"
            nbformat.write(nb, str(tmp_path / name / "executed" / f"{nb_name}.ipynb"))
    prepare = rendering._prepare

    def swapped(nb, name, folder=None):  # the swap, once a is rendered, while b renders
        if "BBB" in nb.cells[0].source and (tmp_path / "a").exists() and not (tmp_path / "a.away").exists():
            (tmp_path / "a").rename(tmp_path / "a.away")
            (tmp_path / "b").rename(tmp_path / "a")
        return prepare(nb, name, folder)

    monkeypatch.setattr(rendering, "_prepare", swapped)
    monkeypatch.setattr(rendering, "_exporter", lambda: _Page())  # nbconvert's: 10 s under load, not the concern
    report.render_reports(tmp_path)
    assert "AAA-page" in (tmp_path / "a.away" / "only_a.html").read_text()  # each folder's pages its own
    assert "BBB-page" in (tmp_path / "a" / "nb.html").read_text()
    index = (tmp_path / "index.html").read_text()
    for href in re.findall(r"href='([^'#:]+\.html)'", index):
        assert (tmp_path / href).exists(), href  # the old code named a/only_a.html
    under_b = index.split(">BBB</h2>", 1)[1].split("<h2", 1)[0]
    assert "AAA" not in under_b  # the old code: a's title on the cards under b's heading
