"""Reliability-24 (issue 26), environment: the programs storagelab starts, the paths they are given and what they find
from the working folder (docs/reliability-24-env.md)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from storagelab.lab.presets import PRESETS, build_runs


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_a_target_with_a_colon_is_one_folder_to_fio(tmp_path, monkeypatch):
    """`lab fio --target ROOT/t:b`: fio reads ":" in --directory as a list, so it put job 1's files in "b" relative to
    its working folder (another user's: their symlink b/<run>.1.0 had fio overwrite a file of root's). The command's
    --directory, given to fio itself (two jobs, from a folder holding b/, with ROOT/t beside ROOT/t:b), now keeps
    every file in ROOT/t:b."""
    target, beside, theirs = tmp_path / "t:b", tmp_path / "t", tmp_path / "w"
    for folder in (target, beside, theirs / "b"):
        folder.mkdir(parents=True)
    run = build_runs(PRESETS["smoke"], target=target, out=tmp_path / "out", rw=["write"], depth_jobs=[(1, 2)])[0]
    (directory,) = [a for a in run.argv if a.startswith("--directory=")]
    monkeypatch.chdir(theirs)
    argv = ["fio", "--name=j", directory, "--rw=write", "--bs=4k", "--size=4k", "--numjobs=2", "--output=/dev/null"]
    assert subprocess.run([*argv, "--unlink=0"], capture_output=True).returncode == 0
    assert sorted(p.name for p in target.iterdir()) == ["j.0.0", "j.1.0"]
    assert list(beside.iterdir()) == [] and list((theirs / "b").iterdir()) == []
