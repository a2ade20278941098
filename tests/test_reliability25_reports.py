"""Reliability-25, the report side (issue 26, h4): attacks on 0732662 (the selection each report of a folder holds)."""

from __future__ import annotations

import json

import pytest

from storagelab import paths, report
from storagelab.errors import ParameterError

NB = paths.NOTEBOOKS / "07_explore.ipynb"


def _held(study: str) -> str:
    return json.dumps({"selection": {"study": study}, "parameters": {}})


def test_a_folder_moved_out_of_reports_or_into_it_keeps_its_selection(monkeypatch, tmp_path):
    # the attack: `cp -a reports/homelab-mergerfs keep; run 07_explore -p study thumper-x4500 --output keep` replaced
    # homelab-mergerfs's page with thumper's, exit 0 (outside reports/ only .selection.07_explore.json was read, and
    # keep/ had its folder's .selection.json); `run --output o1` moved to reports/thumper-x4500, then `run 07_explore
    # -p study thumper-x4500 -p stack zfs` replaced its page the same way (only .selection.json was read there)
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / paths.SELECTION_FILE).write_text(_held("homelab-mergerfs"))
    with pytest.raises(ParameterError) as e:
        report._claim_folders([(NB, {"study": "thumper-x4500"})], into=keep)
    assert str(e.value) == (
        f"{keep} holds the reports of study 'homelab-mergerfs', not of study 'thumper-x4500': give --output another "
        "folder"
    )
    assert sorted(p.name for p in keep.iterdir()) == [paths.SELECTION_FILE]  # nothing recorded
    report._claim_folders([(NB, {"study": "homelab-mergerfs"})], into=keep)  # the same selection: its folder still
    assert json.loads((keep / ".selection.07_explore.json").read_text()) == json.loads(_held("homelab-mergerfs"))

    monkeypatch.setattr(paths, "REPORTS", tmp_path / "reports")
    moved = tmp_path / "reports" / "thumper-x4500"
    moved.mkdir(parents=True)
    (moved / ".selection.07_explore.json").write_text(_held("thumper-x4500"))
    with pytest.raises(ParameterError) as e:
        report._claim_folders([(NB, {"study": "thumper-x4500", "stack": "zfs"})], into=moved)
    assert str(e.value) == (
        f"{moved} holds 07_explore's report of study 'thumper-x4500', not of study 'thumper-x4500', stack 'zfs': give "
        "--output another folder"
    )
    assert not (moved / paths.SELECTION_FILE).exists()
    report._claim_folders([(NB, {"study": "thumper-x4500"})])  # its own selection, in the folder named after it
    assert json.loads((moved / paths.SELECTION_FILE).read_text()) == json.loads(_held("thumper-x4500"))


def test_an_output_in_reports_that_is_no_report_folder_is_refused_before_it_is_made(monkeypatch, tmp_path):
    # the attack: `run 07_explore --output reports/homelab-mergerfs/sub` (and `--output reports`, `reports/_x`) ran,
    # said "report: reports/homelab-mergerfs/sub/07_explore.html", exit 0: no such page was written (only the
    # folders of reports/ are rendered) and reports/ got executed/, summaries/, raw/ ... of its own
    from storagelab import runoutput

    reports = tmp_path / "reports"
    (reports / "a").mkdir(parents=True)
    monkeypatch.setattr(paths, "REPORTS", reports)
    for given in (reports / "a" / "sub", reports, reports / "_x"):
        why, _ = runoutput.refusal(given)
        assert why == (
            f"--output {given}: a folder in {reports} is rendered only as a report folder of its own, {reports}/NAME "
            f"(NAME not starting with '_'): give one, or a folder outside {reports}"
        )
    assert sorted(p.name for p in reports.rglob("*")) == ["a"]  # the folders made for the check removed again
    assert runoutput.refusal(reports / "b") == (None, reports / "b")
    assert runoutput.refusal(tmp_path / "o") == (None, tmp_path / "o")


def test_a_study_called_index_html_gets_a_folder_that_is_not_the_index():
    # the attack: study `index.html` (a manifest's label), `run 07_explore -p study index.html`: its report folder was
    # reports/index.html/, and that run and every later run, report and build said "reports/index.html: Is a
    # directory", exit 2, with no index
    name = report.report_dir(NB, {"study": "index.html"}).name
    assert name.startswith("index.html~") and len(name) == len("index.html~") + 8
    assert report.report_dir(NB, {"study": "index.htm"}).name == "index.htm"


def test_the_inputs_page_of_a_computed_number_is_named_by_the_bytes_it_shows(monkeypatch, tmp_path):
    # the attack: two notebooks of one report folder link one computed number (the same inputs and arithmetic: a
    # claim's metric in two notebooks' claims tables) to raw/from-<hash>.html, named by the inputs' paths and lines
    # only. The log rewritten and ingested again, and one notebook run again: its page of the new bytes' lines
    # replaced the other's, whose number came from the old bytes (an href page is named by its bytes' SHA-256)
    import hashlib

    from storagelab import excerpts

    monkeypatch.setattr(paths, "ROOT", tmp_path)
    log = tmp_path / "a.log"
    names = []
    for text in ("old 1\nold 2\n", "new 1\nnew 2\n"):
        log.write_text(text)
        sha = hashlib.sha256(text.encode()).hexdigest()
        inputs = [{"path": "a.log", "line_start": 1, "line_end": 1, "sha256": sha}, {**_line(2), "sha256": sha}]
        names.append(excerpts.Excerpts(tmp_path / "report").href_many(inputs, "a + b"))
    assert names[0] != names[1]
    pages = [(tmp_path / "report" / n).read_text() for n in names]
    assert "old 1" in pages[0] and "new 1" not in pages[0] and "new 1" in pages[1]


def _line(n: int) -> dict:
    return {"path": "a.log", "line_start": n, "line_end": n}


def test_a_refused_run_records_no_selection(tmp_path):
    # the attack: `run 07_explore 08_fio -p study B --output o`, o holding 08_fio's report of study A: refused (exit
    # 2), nothing ran, but o/.selection.07_explore.json recorded B, and `run 07_explore -p study A --output o` was then
    # refused: "o holds 07_explore's report of study 'B'", a report that was never written
    out = tmp_path / "o"
    out.mkdir()
    (out / ".selection.08_fio.json").write_text(_held("homelab-mergerfs"))
    both = [(NB, {"study": "thumper-x4500"}), (paths.NOTEBOOKS / "08_fio.ipynb", {"study": "thumper-x4500"})]
    with pytest.raises(ParameterError):
        report._claim_folders(both, into=out)
    assert sorted(p.name for p in out.iterdir()) == [".selection.08_fio.json"]
    report._claim_folders([(NB, {"study": "homelab-mergerfs"})], into=out)


def test_report_leaves_out_of_the_index_the_folders_the_build_left_out(monkeypatch, tmp_path, capsys):
    # the attack: study homelab-two relabelled homelab-three, `build` -> "note: reports/homelab-two holds reports of
    # study 'homelab-two', which no file is labelled with now: left out of index.html"; then `storagelab report`
    # listed it again in the index, as current (its numbers under two studies' names), without a word; `run` alike
    from storagelab import cli

    reports = tmp_path / "reports"
    for name in ("homelab-two", "homelab-three"):
        (reports / name / "executed").mkdir(parents=True)
        (reports / name / "summaries").mkdir()
        (reports / name / "summaries" / "07_explore.json").write_text(json.dumps({"status": "ok"}))
        (reports / name / paths.SELECTION_FILE).write_text(_held(name))
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    monkeypatch.setattr(paths, "REPORTS", reports)
    monkeypatch.setattr(paths, "DB", tmp_path / "db.duckdb")
    (tmp_path / "db.duckdb").touch()
    monkeypatch.setattr(report, "labelled_studies", lambda db_path=None, wait=30.0: {"homelab-three"})
    assert cli._report() == 0
    index = (reports / "index.html").read_text()
    assert "<h2 id='homelab-three'>" in index and "homelab-two" not in index
    assert capsys.readouterr().err == (
        f"note: {reports / 'homelab-two'} holds reports of study 'homelab-two', which no file is labelled with now: "
        "left out of index.html (delete the folder if it is not needed)\n"
    )


def test_a_selection_record_that_is_not_one_is_rewritten_not_a_traceback(tmp_path):
    # the attack: `{}` in o/.selection.07_explore.json, then `run 07_explore --output o`: KeyError 'selection', a
    # traceback (and in every later run there)
    out = tmp_path / "o"
    out.mkdir()
    for text in ("{}", "[]", '{"selection": 1, "parameters": {}}'):
        (out / ".selection.07_explore.json").write_text(text)
        report._claim_folders([(NB, {"study": "thumper-x4500"})], into=out)
        assert json.loads((out / ".selection.07_explore.json").read_text()) == json.loads(_held("thumper-x4500"))
