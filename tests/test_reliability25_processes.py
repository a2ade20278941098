"""Reliability-25, processes (issue 26): see docs/reliability-25-processes.md."""

from __future__ import annotations

import fcntl
import os

from storagelab.lab.outdir import LOCK, one_run_at_a_time


def test_another_process_locking_the_out_folder_itself_does_not_stop_the_lab_and_its_lock_is_its_own(tmp_path):
    """Attack: root's `lab fio --out O` (O root's, 0755); the second user opened O (read is enough) and held an
    exclusive flock on it: every lab run of root there was refused, 'is being written by another lab run'. The lab
    now locks a file of its own in O (0600: no other user can open it); a lock file that is a symlink or a FIFO, or
    not this user's, is refused in one line."""
    out = tmp_path / "o"
    out.mkdir()
    theirs = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(theirs, fcntl.LOCK_EX)  # as the second user held it
    try:
        with one_run_at_a_time("fio", out) as refused:
            assert refused is None
            assert oct((out / LOCK).stat().st_mode & 0o777) == "0o600"
            with one_run_at_a_time("fio", out) as second:  # a second lab run on O is still refused
                assert second.endswith(
                    "is being written by another lab run (their runs would overwrite each "
                    "other's files); wait for it to end, or give another --out"
                )
    finally:
        os.close(theirs)
    assert not (out / LOCK).exists()  # removed at the end (OUT as the lab leaves it)
    (out / LOCK).symlink_to(tmp_path / "elsewhere")
    with one_run_at_a_time("bonnie", out) as refused:
        assert refused == (
            f"storagelab lab bonnie: --out {out}: cannot use {LOCK} there (Too many levels of symbolic links): remove it"
        )
    assert not (tmp_path / "elsewhere").exists()
    (out / LOCK).unlink()
    os.mkfifo(out / LOCK)
    with one_run_at_a_time("fio", out) as refused:
        assert refused == f"storagelab lab fio: --out {out}: {LOCK} there is not a file of yours: remove it"
