"""reliability-33, report folders: two report folders exchanged and exchanged back while the index reads them."""

from __future__ import annotations

import json
import re

import nbformat
from test_reliability31_folders import _Page

from storagelab import rendering, report


def _exchange(root) -> None:
    """`mv a t; mv b a; mv t b`"""
    (root / "a").rename(root / "t")
    (root / "b").rename(root / "a")
    (root / "t").rename(root / "b")


def test_folders_exchanged_and_back_while_the_index_reads_them_are_indexed_as_they_were_rendered(tmp_path, monkeypatch):
    """`report` of a and b: a and b exchanged once both were rendered, and exchanged back once the index had read the
    summaries and headings by the names. Each name held its own folder again when the index checked it, so a's runs
    (its title, its parameters, its pages) were joined to b's summary under b's selection heading in a's section, and
    b's to a's (exit 0). The index reads each folder through a handle of the folder as rendered."""
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
    real = rendering.index_html

    def exchanged_while_read(*args, **kwargs):
        _exchange(tmp_path)
        try:
            return real(*args, **kwargs)
        finally:
            _exchange(tmp_path)

    monkeypatch.setattr(rendering, "index_html", exchanged_while_read)
    monkeypatch.setattr(rendering, "_exporter", lambda: _Page())
    report.render_reports(tmp_path)
    index = (tmp_path / "index.html").read_text()
    for href in re.findall(r"href='([^'#:]+\.html)'", index):
        assert (tmp_path / href).exists(), href  # the old code named a/only_b.html
    for mine, other in (("a", "BBB"), ("b", "AAA")):
        section = index.split(f"<h2 id='{mine}'>", 1)[1].split("<h2", 1)[0]
        assert other not in section, (mine, section)  # the old code: the other's heading and summary in it
