"""reliability-36, report folders: a report folder's name held a file for a moment while folders were exchanged
(`renameat2(RENAME_EXCHANGE)` of study folders and a file), at the open of a run's stage by its commit or a sweep."""

from __future__ import annotations

import json
import os

from storagelab import paths, reportstage


def _two_folders(tmp_path):
    """a (whose run's stage holds a.svg) and b (whose figures of the notebook are b-only.svg, its summary too)."""
    a, b, slug = tmp_path / "a", tmp_path / "b", paths.slug("nb")
    (a / "executed").mkdir(parents=True)
    (b / "figures" / slug).mkdir(parents=True)
    (b / "figures" / slug / "b-only.svg").write_text("<svg>B</svg>")
    (b / "summaries").mkdir()
    (b / "summaries" / "nb.json").write_text("B's summary")
    (b / "whose").write_text("b")
    return a, b, slug


def _b_as_it_was(tmp_path, slug):
    """b's folder (under whichever name it is now) holds its figure and summary, and nothing of a's run."""
    here = next(f for f in (tmp_path / "a", tmp_path / "b") if (f / "whose").exists())
    assert (here / "figures" / slug / "b-only.svg").read_text() == "<svg>B</svg>"  # the old code removed it
    assert (here / "summaries" / "nb.json").read_text() == "B's summary"  # and this (the run wrote none)
    assert not (here / "figures" / slug / "a.svg").exists()


def _a_file_at_a_when_the_stage_opens(tmp_path, monkeypatch, then, nth=1):
    """The ``nth`` open of the stage as a folder meets a file at a's name (`mv a a.t; touch a`, the open, `rm a; mv a.t a`),
    and ``then`` (the folders a and b exchanged) once the stage's record has been read by the name."""
    a, real_open, real_ready, state, opens = tmp_path / "a", os.open, reportstage._ready, [0], [0]

    def opened(path, flags, *args, **kwargs):
        stage = str(path).startswith(str(a / reportstage.PREFIX)) and flags & os.O_DIRECTORY
        opens[0] += bool(stage)
        if state[0] == 0 and stage and opens[0] == nth:
            state[0] = 1
            a.rename(tmp_path / "a.t")
            a.write_text("x")
            try:
                return real_open(path, flags, *args, **kwargs)
            finally:
                a.unlink()
                (tmp_path / "a.t").rename(a)
        return real_open(path, flags, *args, **kwargs)

    def read_then(where):
        try:
            return real_ready(where)
        finally:
            if state[0] == 1:
                state[0] = 2
                then()

    monkeypatch.setattr(os, "open", opened)
    monkeypatch.setattr(reportstage, "_ready", read_then)


def _exchanged(tmp_path):
    def exchange():
        (tmp_path / "a").rename(tmp_path / "a.x")
        (tmp_path / "b").rename(tmp_path / "a")
        (tmp_path / "a.x").rename(tmp_path / "b")

    return exchange


def test_a_file_at_the_report_folder_s_name_when_the_commit_opens_the_stage_removes_nothing_of_another(
    tmp_path, monkeypatch
):
    """CLI (hook-timed): `run 01_vdev_scaling -p study homelab-mergerfs`, its name a file as the commit opened the
    stage, its folder back for the record's read, then exchanged with thumper-x4500's (and back before the render):
    the moves went by the name, thumper-x4500's six figures of the notebook removed, its page rendered without them,
    and `report: reports/homelab-mergerfs/01_vdev_scaling.html` of the old page, exit 0. Now nothing moves: the
    commit says so (False) and b keeps its figures and summary."""
    a, b, slug = _two_folders(tmp_path)
    stage = reportstage.new(a, "nb")
    (stage / "figures" / slug).mkdir(parents=True)
    (stage / "figures" / slug / "a.svg").write_text("<svg>A</svg>")
    reportstage.ready(stage, "nb")  # as run_notebooks does for every run before the commits: no summary written
    _a_file_at_a_when_the_stage_opens(tmp_path, monkeypatch, _exchanged(tmp_path))
    assert not reportstage.commit(stage, a, "nb")  # nothing moved, said
    _b_as_it_was(tmp_path, slug)


def test_a_file_at_the_report_folder_s_name_when_a_sweep_opens_a_killed_commit_s_stage_removes_nothing_of_another(
    tmp_path, monkeypatch
):
    """The same for the next command's sweep of a killed commit's stage: the stage opened (after the check that no
    process holds it) while a's name held a file, its moves went by the name into b (exchanged in meanwhile): b's
    figures of the notebook and its summary removed. Now the stage is left (to a later sweep), b as it was."""
    a, b, slug = _two_folders(tmp_path)
    stage = a / f"{reportstage.PREFIX}4194305-nb-h53fabcd"  # a pid no process has (above Linux's pid_max)
    (stage / "figures" / slug).mkdir(parents=True)
    (stage / "figures" / slug / "a.svg").write_text("<svg>A</svg>")
    (stage / reportstage.READY).write_text(json.dumps({"notebook": "nb", "figures": ["a.svg"], "summary": False}))
    exchange = _exchanged(tmp_path)
    _a_file_at_a_when_the_stage_opens(tmp_path, monkeypatch, lambda: None, nth=2)  # its first: no live holder
    real_move = reportstage._move

    def exchanged_then_moved(*args):
        exchange()
        return real_move(*args)

    monkeypatch.setattr(reportstage, "_move", exchanged_then_moved)
    reportstage.sweep(a)
    _b_as_it_was(tmp_path, slug)


def test_a_stale_folder_s_study_is_read_once_not_again_by_the_name_for_its_note(tmp_path, monkeypatch):
    """`report` (and `run`, `build`) left a folder of a study no file carries out of the index, its note saying the
    study read again by the name; the folder of every study exchanged under that name in between: `KeyError: 'study'`,
    a traceback (CLI, flipper of four folders); a folder whose record is a FIFO: `build` waited for good
    (`cli._recorded_study`, read plainly). The study is the one read when the folder was judged stale."""
    from storagelab import report

    for name, record in (("a", {"study": "gone"}), ("b", {})):
        (tmp_path / name / "executed").mkdir(parents=True)
        (tmp_path / name / paths.SELECTION_FILE).write_text(json.dumps({"selection": record, "parameters": record}))
    (tmp_path / "db.duckdb").write_text("")
    monkeypatch.setattr(paths, "DB", tmp_path / "db.duckdb")
    monkeypatch.setattr(report, "labelled_studies", lambda wait: {"kept"})
    monkeypatch.setattr(report, "report_folders", lambda: [tmp_path / "a"])
    real, seen = os.open, [0]

    def opened(path, flags, *args, **kwargs):
        if str(path) == str(tmp_path / "a" / paths.SELECTION_FILE):
            seen[0] += 1
            if seen[0] == 2:  # the second read: b's folder under a's name
                _exchanged(tmp_path)()
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", opened)
    assert report.left_out_of_index() == {"a"}  # the old code: KeyError 'study'
