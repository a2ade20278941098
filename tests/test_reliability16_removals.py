"""Reliability-16's attacks on the removals reliability-15 added (docs/reliability-16-removals.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import their_folder

from storagelab.lab import leftovers
from storagelab.lab.bonnie import run_bonnie


def test_a_lab_bonnie_ending_leaves_the_live_files_of_another_lab_run_on_the_same_target(tmp_path):
    """Two `lab bonnie` on one target share TARGET/.storagelab-bonnie: the first to end removed the folder with the
    other's live Bonnie.NNNN (its bonnie++ then failed: "Can't delete file"; with --files 0 its file was unlinked
    mid-run). Another run (here: this process) holds the folder; a run that ends leaves it and its files."""
    target, work = tmp_path / "target", tmp_path / "target" / ".storagelab-bonnie"
    work.mkdir(parents=True)
    held = leftovers.claim(work)  # the other, live run
    (work / "Bonnie.999").write_bytes(b"x" * 4096)  # its bonnie++'s file
    fake = tmp_path / "bonnie++"
    fake.write_text('#!/bin/sh\n: > "$2/Bonnie.$$"\nrm -f "$2/Bonnie.$$"\nexit 1\n')  # makes and removes its own
    fake.chmod(0o755)
    lines: list[str] = []
    rc = run_bonnie(
        target=target, out=tmp_path / "out", size_bytes=1 << 20, db=None, files=0, bonnie=str(fake), ingest=False,
        log=lines.append,
    )  # fmt: skip
    assert rc == 1 and any(line.startswith("bonnie++ failed (1)") for line in lines)
    assert (work / "Bonnie.999").read_bytes() == b"x" * 4096
    leftovers.release(work, held)  # the last run to end removes the folder
    assert not work.exists()


def test_a_run_waiting_for_the_folder_while_the_last_removes_it_makes_it_again(tmp_path):
    work = tmp_path / ".storagelab-bonnie"
    first = leftovers.claim(work)
    leftovers.release(work, first)
    assert not work.exists()
    second = leftovers.claim(work)  # made again
    assert Path(work).is_dir() and os.fstat(second).st_ino == os.lstat(work).st_ino
    leftovers.release(work, second)
    assert not work.exists()


def test_a_killed_lab_fio_s_test_files_are_left_while_a_live_lab_run_on_the_target_runs_the_same_job(tmp_path):
    """fio names its test files by the job (RUNID.0.0): a live lab run of the same job on the target (another OUT)
    writes the very files a killed run left; the next lab fio removed them under it."""
    import subprocess  # noqa: PLC0415

    from storagelab.lab.fio import _test_files  # noqa: PLC0415

    run = "randread-4k-qd1-nj1"
    p = subprocess.Popen(["sleep", "30"])
    (tmp_path / f"{leftovers.FIO_MARK}{p.pid}-{leftovers.start_time(p.pid)}").write_text(run)
    p.kill()
    p.wait()
    leftovers.mark_fio(tmp_path, run)  # the live run (this process), in the same job
    (tmp_path / f"{run}.0.0").write_bytes(b"x")
    assert leftovers.clean_fio(tmp_path, _test_files) == []
    assert (tmp_path / f"{run}.0.0").read_bytes() == b"x"
    leftovers.unmark_fio(tmp_path)  # it ended: the next removes what the killed one left
    assert leftovers.clean_fio(tmp_path, _test_files) == [
        f"lab fio: removed {run}.0.0 from {tmp_path}: left by a lab run that was killed"
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a folder of another user's)")
def test_python_and_loader_paths_naming_another_users_folder_are_refused(tmp_path):
    """`PYTHONPATH=...:/tmp/h16h9/pp storagelab run 09_bonnie ...` (pp the user's, with their ipykernel_launcher.py)
    -> rc 0 and "kernel code ran as uid 0": every kernel is `python -m ipykernel_launcher`, found first there. The
    loader's paths (LD_LIBRARY_PATH, LD_PRELOAD) reach every program run (fio, bonnie++, java) the same way."""
    from storagelab import ownership  # noqa: PLC0415

    theirs = their_folder(tmp_path)
    for var, value in (
        ("PYTHONPATH", f"/usr/lib:{theirs}"),
        ("PYTHONHOME", str(theirs)),
        ("PYTHONUSERBASE", str(theirs)),
        ("LD_LIBRARY_PATH", str(theirs)),
        ("LD_PRELOAD", f"libc.so.6 {theirs}/x.so"),
        ("LD_AUDIT", f"{theirs}/a.so"),
    ):
        said = ownership.environment_refusal({var: value})
        assert said is not None and said.startswith(f"the environment's {var} ({theirs}): {theirs} is another user's")
    assert ownership.environment_refusal({"PYTHONPATH": "/usr/lib", "LD_PRELOAD": "libc.so.6"}) is None
