"""Reliability-27 (issue 26), the dataset, Spark and the environment: a fresh campaign on the newest fixes and their
neighbours (docs/reliability-27-spark-env.md)."""

from __future__ import annotations

import os
import tempfile

from conftest import their_folder

from storagelab import ownership


def test_a_variable_of_separators_only_names_a_folder_here_and_is_checked(tmp_path, monkeypatch):
    """`cd THEIRS; TMPDIR=: storagelab run`: the check split ":" into no folder and passed, while tempfile took the
    value whole, "./:" (the second user's): root's kernel folder, its connection file and sockets were made there, and
    their rename put their own folder in its place. Now such a value is the folder of that name, checked; from a
    folder of this user's it passes."""
    theirs = their_folder(tmp_path)
    (theirs / ":").mkdir(mode=0o777)
    os.chown(theirs / ":", 1002, 1002)
    monkeypatch.chdir(theirs)
    monkeypatch.setenv("TMPDIR", ":")
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert tempfile.gettempdir() == str(theirs / ":")  # what tempfile makes of it (as root: the test runs as root)
    for var in ("TMPDIR", "JUPYTER_RUNTIME_DIR", "XDG_RUNTIME_DIR", "IPYTHONDIR", "JUPYTER_DATA_DIR"):
        for value in (":", ",", "::"):
            said = ownership.environment_refusal({var: value})
            assert said is not None and said.startswith(f"the environment's {var} ({value}): "), (var, value)
    monkeypatch.chdir(tmp_path)
    assert ownership.environment_refusal({"TMPDIR": ":", "IPYTHONDIR": ","}) is None
