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
