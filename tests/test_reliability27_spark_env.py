"""Reliability-27 (issue 26), the dataset, Spark and the environment: a fresh campaign on the newest fixes and their
neighbours (docs/reliability-27-spark-env.md)."""

from __future__ import annotations

import os
import tempfile

import pytest
from conftest import their_folder

from storagelab import ownership


def test_a_variable_with_a_separator_is_also_checked_whole(tmp_path, monkeypatch):
    """`TMPDIR=/tmp/: storagelab run` (or `cd THEIRS; TMPDIR=:`): the check split the value at ":" and passed its
    pieces ("/tmp/", a sticky folder; none at all), while tempfile took it whole, the second user's "/tmp/:" ("./:"):
    root's kernel folder, its connection file and sockets were made there, and their rename put their own folder in
    its place. Now the whole value is checked too; from a folder of this user's, or its own, it passes."""
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    their_folder(sticky, ":").chmod(0o777)
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
    said = ownership.environment_refusal({"TMPDIR": f"{sticky}/:"})
    assert said is not None and said.startswith(f"the environment's TMPDIR ({sticky}/:): {sticky}/: is another user's")
    monkeypatch.chdir(tmp_path)
    assert (
        ownership.environment_refusal({"TMPDIR": ":", "IPYTHONDIR": ",", "XDG_DATA_DIRS": "/usr/share:/usr/lib"})
        is None
    )


def test_spark_start_folder_is_never_on_a_file_system_another_user_serves(tmp_path, monkeypatch):
    """Root's spark-ingest with "/", /run and the home read-only, from a folder that is the second user's bindfs (shown
    as root's, 0700, under a folder of root's): the chain was made there, in their backing folder, where their process
    answers every name a relative path of root's settings climbs to. Now a base on a FUSE file system another user
    mounted is passed over (here: every base but "/" said to be one, in the list of mounts the check reads)."""
    from storagelab import ownership, sparkjvm  # noqa: PLC0415

    bases = [b for b in sparkjvm._bases() if b != "/"]
    if not bases:
        pytest.skip("no base but / on this machine")
    table = tmp_path / "mountinfo"
    table.write_text(
        "1 0 0:1 / / rw - ext4 /dev/vda1 rw\n"
        + "".join(
            f"9{k} 1 0:5{k} / {b} rw - fuse.bindfs /tmp/x rw,user_id=1002,group_id=1002\n" for k, b in enumerate(bases)
        )
    )
    monkeypatch.setattr(ownership, "MOUNTINFO", str(table))
    assert sparkjvm._bases() == ["/"]
