"""`storagelab build --study NAME`: the build's plan cut to that study's runs and those over every study (a user who
adds their own logs gets their reports without every other study's notebooks running again; test_any_study builds
its second study so). The whole build is tests/test_any_study.py's and the build `./run test` runs."""

from __future__ import annotations

import argparse

import pytest

from storagelab import cli, report
from storagelab.errors import ParameterError

NBS = {nb.stem: nb for nb in report.list_notebooks()}


def plan() -> list:
    """A build's plan as build_plan makes it: 07 and 10 over every study, 08 with its default study
    (homelab-mergerfs), and a user's study 'mine'."""
    return [
        (NBS["07_explore"], {}),
        (NBS["10_disk_card"], {}),
        (NBS["08_fio"], {}),
        (NBS["03_sector63"], {"study": "mine"}),
        (NBS["08_fio"], {"study": "mine"}),
    ]


def test_a_study_gets_its_own_runs_and_those_over_every_study():
    p = plan()
    assert report.study_runs(p, "mine") == [p[0], p[1], p[3], p[4]]
    # a notebook run with its default parameters is its default study's run
    assert report.study_runs(p, "homelab-mergerfs") == [p[0], p[1], p[2]]


def test_a_study_the_plan_does_not_have_is_a_parameter_error_naming_the_studies_it_has():
    with pytest.raises(ParameterError) as e:
        report.study_runs(plan(), "Mine")
    assert str(e.value) == "no study 'Mine' in the build's plan (its studies: homelab-mergerfs, mine)"


def test_build_study_unknown_is_one_line_exit_2_and_runs_nothing(monkeypatch, capsys):
    monkeypatch.setattr(cli, "cmd_ingest", lambda args: 0)
    monkeypatch.setattr(report, "build_plan", plan)
    monkeypatch.setattr(report, "labelled_studies", lambda: {"homelab-mergerfs", "mine"})
    monkeypatch.setattr(report, "stale_folders", lambda plan, studies: [])
    monkeypatch.setattr(report, "run_notebooks", lambda plans: pytest.fail(f"ran {plans}"))
    assert cli._build(argparse.Namespace(wait=0, study="nope")) == 2
    out, err = capsys.readouterr()
    assert err == "storagelab build: no study 'nope' in the build's plan (its studies: homelab-mergerfs, mine)\n"
    assert out == ""


def test_build_study_runs_the_cut_plan_and_says_so(monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(cli, "cmd_ingest", lambda args: 0)
    monkeypatch.setattr(report, "build_plan", plan)
    monkeypatch.setattr(report, "labelled_studies", lambda: {"homelab-mergerfs", "mine"})
    monkeypatch.setattr(report, "stale_folders", lambda plan, studies: [])
    monkeypatch.setattr(report, "run_notebooks", lambda plans: ran.extend(plans) or [])
    monkeypatch.setattr(report, "render_reports", lambda skip=(): [])
    assert cli._build(argparse.Namespace(wait=0, study="mine")) == 0
    assert ran == [plan()[i] for i in (0, 1, 3, 4)]
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "--study mine: 4 of the build's 5 notebook runs; the other reports are as they were"
