"""reliability-33, report folders: two report folders exchanged and exchanged back while the index reads them."""

from __future__ import annotations

import json
import re

import nbformat
from test_reliability31_folders import _Page
from test_reliability32_folders import two_studies

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
    two_studies(tmp_path)
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


def test_a_notebook_s_write_while_its_folder_is_exchanged_does_not_make_its_stage_in_the_other(tmp_path, monkeypatch):
    """`build`/`run` of A: A and B exchanged while A's notebook wrote its summary (by the stage's name), then exchanged
    back: ``paths.make_folder`` made the stage itself again inside B (reports/B/.storagelab-run-...) and the summary
    went there; A's stage, back under its name, held none, and the run went on as if the notebook had written none (its
    commit removes A's summary). A notebook's writes make folders under its stage, never the stage: the write fails."""
    import os
    from pathlib import Path

    import papermill

    from storagelab import paths

    out, other = tmp_path / "o", tmp_path / "p"
    out.mkdir()
    other.mkdir()
    nb = Path(paths.NOTEBOOKS) / "07_explore.ipynb"

    def exchange() -> None:
        out.rename(tmp_path / "t")
        other.rename(out)
        (tmp_path / "t").rename(other)

    def exchanged_while_writing(*args, **kw):
        stage = Path(os.environ[paths.REPORT_DIR_ENV])
        exchange()
        try:  # what the kernel's write of its summary does
            rendering.write_whole(stage / "summaries" / "07_explore.json", "{}")
        finally:
            exchange()

    monkeypatch.setattr(papermill, "execute_notebook", exchanged_while_writing)
    result = report._run_one(nb, {"study": "homelab-mergerfs"}, out)
    assert not [p.name for p in other.iterdir()]  # the code before: p/.storagelab-run-.../summaries/07_explore.json
    assert not result.ok


def test_the_reports_folder_swapped_while_the_index_is_made_gets_none_of_the_other_s_index(tmp_path, monkeypatch):
    """`mv reports reports.away; mv reports2 reports` while `report` read the index's summaries: the index of the
    tree rendered was written into the tree swapped in, its cards naming pages that tree does not have (exit 0)."""
    root, other = tmp_path / "reports", tmp_path / "reports2"
    (root / "a" / "executed").mkdir(parents=True)
    (root / "a" / "summaries").mkdir()
    (root / "a" / "summaries" / "nb.json").write_text(json.dumps({"notebook": "nb", "title": "AAA-title"}))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# AAA-page")])
    nbformat.write(nb, str(root / "a" / "executed" / "nb.ipynb"))
    other.mkdir()
    (other / "index.html").write_text("the other tree's index")
    real = rendering.index_html

    def swapped_while_read(*args, **kwargs):
        if other.exists():
            root.rename(tmp_path / "reports.away")
            other.rename(root)
        return real(*args, **kwargs)

    monkeypatch.setattr(rendering, "index_html", swapped_while_read)
    monkeypatch.setattr(rendering, "_exporter", lambda: _Page())
    report.render_reports(root)
    assert (root / "index.html").read_text() == "the other tree's index"  # the code before: a's index in it
    assert "AAA-title" in (tmp_path / "reports.away" / "index.html").read_text()


def test_a_fifo_in_a_report_folder_does_not_hang_the_render_or_the_index(tmp_path, monkeypatch):
    """`mkfifo reports/A/summaries/x.json; storagelab report` waited for a writer for good (also a FIFO as the
    folder's record, an executed notebook or a chart's spec): each is read only when it is a regular file."""
    import os
    import signal

    a = tmp_path / "a"
    (a / "executed").mkdir(parents=True)
    (a / "summaries").mkdir()
    (a / "figures").mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# AAA-page")])
    nbformat.write(nb, str(a / "executed" / "nb.ipynb"))
    for fifo in ("summaries/x.json", ".selection.json", "executed/y.ipynb", "figures/z.vl.json"):
        os.mkfifo(a / fifo)
    monkeypatch.setattr(rendering, "_exporter", lambda: _Page())

    def hung(signum, frame):
        raise TimeoutError("the render waited on a FIFO")

    old = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, 20, 0.5)  # again and again: the code before caught it and waited on the next
    try:
        report.render_reports(tmp_path)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert "AAA-page" in (a / "nb.html").read_text()
    assert "not a regular file" in (a / "y.html").read_text()


def test_run_names_no_page_of_a_folder_exchanged_with_another_and_back_while_rendered(tmp_path, monkeypatch):
    """Low 3 of the folders part: `run` into reports/a, a and b exchanged as the render opened a, and back once it
    had rendered: b's pages were rendered (into b), a's not, and `run` said `report: reports/a/only_a.html`, exit 0.
    The render now says which folders it rendered, and a run's page is named only if its folder is one."""
    from types import SimpleNamespace

    from storagelab import readcopies, reportstage, runoutput

    for name, word in (("a", "AAA-study-page"), ("b", "BBB-study-page")):
        (tmp_path / name / "executed").mkdir(parents=True)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {word}")])
        nbformat.write(nb, str(tmp_path / name / "executed" / f"only_{name}.ipynb"))
    a_id, b_id = readcopies.identity(tmp_path / "a"), readcopies.identity(tmp_path / "b")
    finish, render_folder, exchanged = reportstage.finish, rendering._render_folder, []

    def exchange_at_a(named):  # as the render comes to a: a exchanged with b
        if named.name == "a" and not exchanged:
            _exchange(tmp_path)
            exchanged.append(1)
        return finish(named)

    def back_after(exp, built, named, folder, *rest):  # and back once that folder is rendered
        render_folder(exp, built, named, folder, *rest)
        if named.name == "a" and len(exchanged) == 1:
            _exchange(tmp_path)
            exchanged.append(2)

    monkeypatch.setattr(reportstage, "finish", exchange_at_a)
    monkeypatch.setattr(rendering, "_render_folder", back_after)
    monkeypatch.setattr(rendering, "_exporter", lambda: _Page())
    rendered: set = set()
    report.render_reports(tmp_path, rendered=rendered)
    assert exchanged == [1, 2] and readcopies.identity(tmp_path / "a") == a_id  # a is back under its name
    assert a_id not in rendered and not (tmp_path / "a" / "only_a.html").exists()  # b's folder was rendered as a
    run_a = SimpleNamespace(moved=False, ok=True, folder=tmp_path / "a", folder_id=a_id, notebook="only_a")
    assert runoutput.moved_after(run_a, rendered)  # before: False, and `report: .../a/only_a.html`, exit 0
    assert runoutput.report_lines([run_a], rendered)[0].startswith("report: not rendered: ")
    run_b = SimpleNamespace(moved=False, ok=True, folder=tmp_path / "b", folder_id=b_id, notebook="only_b")
    assert b_id in rendered and not runoutput.moved_after(run_b, rendered)


def test_a_link_put_at_the_folder_s_name_as_its_ready_record_is_renamed_fails_the_run_in_one_line(
    tmp_path, monkeypatch
):
    """reliability-33 folders, Low 1: `build`, the report folder moved away and a link to another folder put at its
    name between the READY record's write and its rename (audit hook, event 248): `storagelab build: .../.storagelab-
    ready.json.part: No such file or directory`, exit 2, not storagelab's line. Now the run is failed as moved, the
    other folder untouched, and its stage left to its folder's next sweep."""
    import os
    from pathlib import Path

    from storagelab import readcopies, reportstage

    out, other = tmp_path / "o", tmp_path / "other"
    other.mkdir()
    (other / "mine.html").write_text("theirs")
    nb = Path(report.paths.NOTEBOOKS) / "07_explore.ipynb"
    real_ready, real_replace = reportstage.ready, os.replace

    def run_all(plans, out_dir, n, results):  # the notebook ran into its stage
        stage = reportstage.new(out_dir, "07_explore")
        (stage / "executed").mkdir()
        (stage / "executed" / "07_explore.ipynb").write_text("{}")
        results.append(report.RunResult("07_explore", out_dir, out_dir / "executed" / "07_explore.ipynb", True))
        results[-1].stage, results[-1].stage_id = stage, readcopies.identity(stage)

    def link_in_at_the_rename(src, dst):
        os.rename(out, tmp_path / "o.away")
        os.symlink(other, out)
        return real_replace(src, dst)

    def ready(stage, notebook):
        monkeypatch.setattr(os, "replace", link_in_at_the_rename)
        try:
            return real_ready(stage, notebook)
        finally:
            monkeypatch.setattr(os, "replace", real_replace)

    monkeypatch.setattr(report, "_run_all", run_all)
    monkeypatch.setattr(reportstage, "ready", ready)
    out.mkdir()
    (result,) = report.run_notebooks(plans=[(nb, {"study": "homelab-mergerfs"})], out_dir=out, jobs=1)
    assert (result.ok, result.error, result.stage) == (
        False,
        f"{out} was moved or removed while the notebook ran: its report is not there",
        None,
    )
    assert sorted(p.name for p in other.iterdir()) == ["mine.html"]
    assert [p.name for p in (tmp_path / "o.away").iterdir() if p.name.startswith(".storagelab-run-")]  # for its sweep
