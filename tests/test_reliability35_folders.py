"""reliability-35, report folders: a report folder's name held a file (or nothing) for a moment while folders were
exchanged again and again (`renameat2(RENAME_EXCHANGE)` of three study folders and a file, 0.1-0.5 ms apart)."""

from __future__ import annotations

import contextlib
import json
import os

import pytest
from test_reliability31_folders import _Page, render_swapping
from test_reliability32_folders import two_studies
from test_reliability33_folders import _exchange

from storagelab import paths, rendering, report
from storagelab.errors import ParameterError


@contextlib.contextmanager
def _a_file_at_a_when_opened(root, monkeypatch):
    """Every open of the folder a (as a folder) meets a file at its name: `mv a a.t; touch a`, the open, `rm a; mv a.t
    a` (what the exchanges with a file left it in for that moment)."""
    real, on = os.open, [True]

    def opened(path, flags, *args, **kwargs):
        if (
            not on[0] or os.path.basename(path) != "a" or not flags & os.O_DIRECTORY
        ):  # a's name, or through reports/'s handle
            return real(path, flags, *args, **kwargs)
        (root / "a").rename(root / "a.t")
        (root / "a").write_text("x")
        try:
            return real(path, flags, *args, **kwargs)
        finally:
            (root / "a").unlink()
            (root / "a.t").rename(root / "a")

    monkeypatch.setattr(os, "open", opened)
    try:
        yield
    finally:
        on[0] = False


def _sections_of_their_own(index: str) -> None:
    for section in index.split("<h2 id='")[1:]:
        word = section.split("</h2>", 1)[0].rsplit(">", 1)[1]  # the heading: the folder's study
        other = {"AAA": "BBB", "BBB": "AAA"}[word]
        assert other not in section, section


def test_a_name_holding_a_file_when_the_index_opens_it_is_not_read_by_the_name(tmp_path, monkeypatch):
    """The index opened each name to read its folder through the handle; a name holding a file at that moment was
    read by the name instead: its summaries read from one folder, the folders exchanged, its heading read from the
    other (CLI: thumper-x4500's summary under the heading of ars-zfs-vs-raid's record, exit 0). Such a name is left
    out: the index made again, or, still moving, without it."""
    two_studies(tmp_path)
    index_of, summaries = rendering._index_of, rendering._summaries

    def exchanged_after_read(*args, **kwargs):
        try:
            return summaries(*args, **kwargs)
        finally:
            _exchange(tmp_path)

    def index_while_moving(*args, **kwargs):
        with _a_file_at_a_when_opened(tmp_path, monkeypatch):
            monkeypatch.setattr(rendering, "_summaries", exchanged_after_read)
            return index_of(*args, **kwargs)

    monkeypatch.setattr(rendering, "_index_of", index_while_moving)
    monkeypatch.setattr(rendering, "_exporter", lambda: _Page())
    report.render_reports(tmp_path)
    _sections_of_their_own((tmp_path / "index.html").read_text())  # the old code: BBB's heading over AAA's summary


def test_a_name_holding_a_file_when_its_render_opens_it_gets_no_page_of_another_folder(tmp_path, monkeypatch):
    """The render of a folder whose name held a file when it was opened went by the name: its notebooks listed and
    read from one folder, and (the folders exchanged) its pages written into the other (AAA's page in BBB's folder,
    exit 0). A name that holds no folder when opened is not rendered (the next `report` renders it)."""
    two_studies(tmp_path)
    with _a_file_at_a_when_opened(tmp_path, monkeypatch):
        render_swapping(
            tmp_path, monkeypatch, lambda nb, name: "AAA" in nb.cells[0].source, lambda: _exchange(tmp_path)
        )
    for folder in ("a", "b"):
        word = "AAA" if "AAA" in (tmp_path / folder / ".selection.json").read_text() else "BBB"
        other = {"AAA": "BBB", "BBB": "AAA"}[word]
        for page in (tmp_path / folder).glob("*.html"):
            assert other not in page.read_text(), (folder, page.name)  # the old code: AAA's page in BBB's folder


def test_a_new_report_folder_holding_a_file_when_its_claim_opens_it_records_nothing_in_another(tmp_path, monkeypatch):
    """The claim of a new selection's folder (made, then opened to write its record in it) went by the name when the
    name held a file at the open: its record read by the name (none: a file), then written by the name into the
    folder exchanged in meanwhile (thumper-x4500's record replaced by the new study's: its pages claimed by another
    selection, exit 0). The claim now refuses ("was moved or replaced while its selection was checked")."""
    monkeypatch.setattr(paths, "REPORTS", tmp_path)
    (tmp_path / "thumper-x4500").mkdir()
    theirs = json.dumps({"selection": {"study": "thumper-x4500"}, "parameters": {}})
    (tmp_path / "thumper-x4500" / paths.SELECTION_FILE).write_text(theirs)
    new, real, state = tmp_path / "newstudy", os.open, [0]

    def opened(path, flags, *args, **kwargs):
        if state[0] == 0 and os.path.basename(path) == "newstudy" and flags & os.O_DIRECTORY:
            new.rename(tmp_path / "newstudy.t")
            new.write_text("x")  # a file at its name when opened
            state[0] = 1
        elif state[0] == 1 and str(path) == str(new / paths.SELECTION_FILE):
            state[0] = 2
            try:
                return real(path, flags, *args, **kwargs)  # its record read by the name: a file there, none
            finally:
                new.unlink()
                (tmp_path / "thumper-x4500").rename(new)  # thumper-x4500's folder at its name
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", opened)
    with pytest.raises(ParameterError, match="was moved or replaced while its selection was checked"):
        report._claim_folders([(paths.NOTEBOOKS / "07_explore.ipynb", {"study": "newstudy"})])
    monkeypatch.setattr(os, "open", real)
    folder = new if new.is_dir() else tmp_path / "thumper-x4500"  # thumper-x4500's folder, wherever it is now
    assert (folder / paths.SELECTION_FILE).read_text() == theirs  # the old code: newstudy's record in it
