"""reliability-31, report folders: a report folder renamed away and another put in its place while `report` (or the
render step of `build` and `run`) renders it."""

from __future__ import annotations

import os
import re

import nbformat

from storagelab import rendering, report


class _Page:
    def from_notebook_node(self, nb, resources):
        return "<html>" + " ".join(c.source for c in nb.cells) + "</html>", {}


def render_swapping(root, monkeypatch, when, swap) -> None:
    """``report.render_reports(root)``, with ``swap()`` done once, as the render prepares the first page for which
    ``when(nb, name)`` holds (nbconvert's exporter replaced by ``_Page``: 10 s under load, not the concern)."""
    prepare, done = rendering._prepare, []

    def hooked(nb, name, folder=None):
        if not done and when(nb, name):
            done.append(swap())
        return prepare(nb, name, folder)

    monkeypatch.setattr(rendering, "_prepare", hooked)
    monkeypatch.setattr(rendering, "_exporter", lambda: _Page())
    report.render_reports(root)


def swap_folders(root) -> None:
    """`mv a a.away; mv b a`"""
    (root / "a").rename(root / "a.away")
    (root / "b").rename(root / "a")


def test_a_folder_swapped_in_while_its_pages_render_gets_none_of_the_other_selection_s_pages(tmp_path, monkeypatch):
    """`mv reports/A A.away; mv reports/B reports/A` while `report` rendered A: A's notebook, read from A's folder,
    was written by the name into B's folder (A's page under B's study, exit 0), and the index named A's pages in B's
    folder, where they are not."""
    for name, word in (("a", "AAA-study-page"), ("b", "BBB-study-page")):
        (tmp_path / name / "executed").mkdir(parents=True)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {word}")])
        nbformat.write(nb, str(tmp_path / name / "executed" / f"only_{name}.ipynb"))
    # the swap, between reading a's notebook and writing its page
    render_swapping(tmp_path, monkeypatch, lambda nb, name: name == "only_a", lambda: swap_folders(tmp_path))
    assert "AAA-study-page" in (tmp_path / "a.away" / "only_a.html").read_text()  # a's page in a's folder
    assert not (tmp_path / "a" / "only_a.html").exists()  # none in b's, now called a
    index = (tmp_path / "index.html").read_text()
    for href in re.findall(r"href='([^'#:]+\.html)'", index):
        assert (tmp_path / href).exists(), href


def test_a_folder_swapped_in_while_a_run_commits_keeps_its_own_figures(tmp_path, monkeypatch):
    """The window the folders part read and left (reliability-31): after `run` checked that its stage was still in its
    report folder, `mv reports/A A.away; mv reports/B reports/A` had the commit's moves go by the name into B's
    folder: B's figures of that notebook removed (those this run did not draw) and replaced. Through a handle of the
    stage, they go into the folder that holds it (A, wherever it is now), and B is left as it was."""
    from storagelab import paths, reportstage

    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        (folder / "executed").mkdir(parents=True)
    slug = paths.slug("nb")
    (b / "figures" / slug).mkdir(parents=True)
    (b / "figures" / slug / "b-only.svg").write_text("<svg>B</svg>")
    (b / "executed" / "nb.ipynb").write_text("B's notebook")
    stage = reportstage.new(a, "nb")
    (stage / "figures" / slug).mkdir(parents=True)
    (stage / "figures" / slug / "a.svg").write_text("<svg>A</svg>")
    (stage / "executed").mkdir()
    (stage / "executed" / "nb.ipynb").write_text("A's notebook")
    real = reportstage._ready

    def read_then_swap(where):  # the swap, after the caller's check, once the commit has read what it moves
        record = real(where)
        if b.exists():
            a.rename(tmp_path / "a.away")
            b.rename(a)
        return record

    reportstage.ready(stage, "nb")  # as run_notebooks does for every run before the commits
    monkeypatch.setattr(reportstage, "_ready", read_then_swap)
    reportstage.commit(stage, a, "nb")
    moved = tmp_path / "a.away"
    assert (a / "figures" / slug / "b-only.svg").read_text() == "<svg>B</svg>"  # the old code removed it
    assert not (a / "figures" / slug / "a.svg").exists() and (a / "executed" / "nb.ipynb").read_text() == "B's notebook"
    assert (moved / "figures" / slug / "a.svg").read_text() == "<svg>A</svg>"
    assert (moved / "executed" / "nb.ipynb").read_text() == "A's notebook"
    assert not any(p.name.startswith(reportstage.PREFIX) for p in moved.iterdir())  # the stage removed


def test_an_unreadable_notebook_is_named_by_its_folder_not_by_the_folders_handle(tmp_path):
    """Since the folder is read through a handle of it (/proc/self/fd/N), a notebook that cannot be read must still be
    named under the folder's own name in the failure line and the page that says so."""
    folder = tmp_path / "rep"
    (folder / "executed").mkdir(parents=True)
    (folder / "executed" / "gone.ipynb").symlink_to(tmp_path / "nowhere.ipynb")
    failures: list[str] = []
    rendering.render_reports(only=folder, failures=failures)
    assert len(failures) == 1 and str(folder / "executed" / "gone.ipynb") in failures[0], failures
    assert "/proc/self/fd" not in failures[0] + (folder / "gone.html").read_text()


def test_a_folder_moved_while_a_later_folder_renders_is_not_indexed_under_its_old_name(tmp_path, monkeypatch):
    """reliability-31 folders, Low 5: `mv reports/A A.away; ln -s B reports/A` while B (a later folder) rendered left
    A's runs in the index under A's name, now B's: "No summary" cards under B's heading, linking to pages not there."""
    for name, word in (("a", "AAA-study-page"), ("b", "BBB-study-page")):
        (tmp_path / name / "executed").mkdir(parents=True)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {word}")])
        nbformat.write(nb, str(tmp_path / name / "executed" / f"only_{name}.ipynb"))

    def moved():  # while b renders, a (rendered already) is moved away and its name is b's
        (tmp_path / "a").rename(tmp_path / "a.away")
        (tmp_path / "a").symlink_to("b")

    render_swapping(tmp_path, monkeypatch, lambda nb, name: name == "only_b", moved)
    index = (tmp_path / "index.html").read_text()
    assert "a/only_a.html" not in index  # the code before: its card, "No summary", under b's heading
    for href in re.findall(r"href='([^'#:]+\.html)'", index):
        assert (tmp_path / href).exists(), href
    assert "AAA-study-page" in (tmp_path / "a.away" / "only_a.html").read_text()


def test_a_failed_run_whose_folder_moved_away_does_not_make_it_again(tmp_path, monkeypatch):
    """reliability-31 folders, Low 2: `mv reports/A A.away` while A's notebook ran, and the notebook failed: its failed
    summary was written with mkdir(parents=True), which made reports/A/<stage>/summaries again, and an empty
    reports/A was left behind. A notebook's writes (summary, figures, raw pages) make folders inside the stage only."""
    from pathlib import Path

    import papermill

    from storagelab import paths

    out = tmp_path / "o"
    out.mkdir()
    nb = Path(paths.NOTEBOOKS) / "07_explore.ipynb"

    def moved_then_failed(*args, **kw):
        os.rename(out, tmp_path / "o.moved")
        stage = Path(os.environ[paths.REPORT_DIR_ENV])
        try:  # what the kernel's write of a figure or its summary does
            rendering.write_whole(stage / "figures" / "x" / "a.vl.json", "{}")
        except FileNotFoundError:
            pass
        raise RuntimeError("the notebook failed")

    monkeypatch.setattr(papermill, "execute_notebook", moved_then_failed)
    result = report._run_one(nb, {"study": "homelab-mergerfs"}, out)
    assert not result.ok
    assert not out.exists()  # the code before: o/ made again (with the stage's summaries/ in it, then left empty)
    assert [p.name for p in (tmp_path / "o.moved").iterdir()] == [result.stage.name]  # run_notebooks removes it


def test_run_does_not_name_a_page_whose_folder_was_moved_after_its_notebook_ran(tmp_path):
    """reliability-31 folders, Low 3: reports/A moved away (or replaced by a link) after `run` put its notebook there
    and before its pages were rendered: `run` said `report: reports/A/07_explore.html`, exit 0, a page not there."""
    from storagelab import readcopies, runoutput

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    runs = [
        report.RunResult(nb, folder, folder / "executed" / f"{nb}.ipynb", True, folder_id=readcopies.identity(folder))
        for nb, folder in (("07_explore", a), ("08_fio", b))
    ]
    a.rename(tmp_path / "a.away")
    a.symlink_to("b")
    assert runoutput.report_lines(runs) == [
        f"report: not rendered: {a} was moved or removed after 07_explore ran",  # the code before: report: a/07_...
        f"report: {b}/08_fio.html",
    ]
    assert not runoutput.moved_after(runs[1])
