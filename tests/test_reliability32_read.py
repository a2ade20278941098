"""Reliability-32, the read side (h2): root's reads and runs of paths another local user controls."""

from __future__ import annotations

import os
import shutil
import struct

import pytest

from storagelab import nbparams, paths
from storagelab.errors import ParameterError


def _acl_for(uid: int) -> bytes:
    """A POSIX access ACL (the xattr's bytes) giving the user ``uid`` read and write: what `setfacl -m u:NAME:rw`
    makes."""
    entries = [
        (0x01, 6, 0xFFFFFFFF),
        (0x02, 6, uid),
        (0x04, 4, 0xFFFFFFFF),
        (0x10, 6, 0xFFFFFFFF),
        (0x20, 4, 0xFFFFFFFF),
    ]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def test_a_notebook_file_another_user_can_write_is_refused(tmp_path):
    # reliability-32: root's own notebook in root's own folder, but writable by another user (mode 0666, or
    # `setfacl -m u:bob:rw`): resolve() looked at its owner and folders only, bob added a cell, and `storagelab run`
    # ran it as root (it copied a root-only file into bob's folder), exit 0
    src = paths.NOTEBOOKS / "07_explore.ipynb"
    ok, ww, acl = tmp_path / "ok.ipynb", tmp_path / "ww.ipynb", tmp_path / "acl.ipynb"
    for p in (ok, ww, acl):
        shutil.copyfile(src, p)
        p.chmod(0o644)
    tmp_path.chmod(0o755)
    ww.chmod(0o666)
    assert nbparams.resolve(str(ok)) == ok.resolve()
    with pytest.raises(ParameterError, match="can be written by every user"):
        nbparams.resolve(str(ww))
    try:
        os.setxattr(acl, "system.posix_acl_access", _acl_for(os.getuid() + 4242))
    except OSError:
        pytest.skip("no POSIX ACLs here")
    with pytest.raises(ParameterError, match="access control list"):
        nbparams.resolve(str(acl))


def test_a_folder_at_the_cache_files_name_is_no_cache(tmp_path, monkeypatch):
    # reliability-32: a folder where the Vega bundle's cache file goes (~/.cache/storagelab/vega-bundle-V.js) raised
    # IsADirectoryError from os.fdopen, and every page with a chart failed ("IsADirectoryError: [Errno 21] Is a
    # directory: 3"); it is no cache: the text is made as if there were none
    from storagelab import usercache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    tmp_path.chmod(0o700)
    (tmp_path / "storagelab" / "t.js").mkdir(parents=True, mode=0o700)
    assert usercache.cached_text("t.js", lambda: "made") == "made"


def test_the_dataset_lock_file_is_this_users_alone(seed_db, tmp_path, monkeypatch):
    # reliability-32: flock needs only a file open for reading; the dataset's _storagelab/.lock was made 0644, another
    # user held a shared flock on root's, and root's `export --dataset` / `ingest --dataset` waited for ever, silent.
    # The lock file is made 0600, and one an older export made 0644 is made 0600
    import stat

    import duckdb

    from storagelab import dataset

    out = tmp_path / "ds"
    lock = out / dataset.META_DIR / ".lock"
    lock.parent.mkdir(parents=True, mode=0o755)
    lock.touch(mode=0o644)  # as older code made it
    lock.chmod(0o644)
    monkeypatch.setattr(dataset, "_export", lambda *a: {})  # the parts: not what is tested (and seconds)
    with duckdb.connect(str(seed_db), read_only=True) as con:
        dataset.export(con, out)
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


def test_the_lab_work_folder_is_this_users_alone(tmp_path):
    # reliability-32: flock needs only a folder open for reading; another user's exclusive flock on the lab's 0755
    # work folder (target/.storagelab-bonnie, left by an earlier run) held root's `lab bonnie` in claim() for good,
    # Ctrl-C and SIGTERM too. It is made 0700, and one made 0755 before is made 0700 before it is locked
    import stat

    from storagelab.lab import leftovers

    for name, before in (("new", None), ("old", 0o755)):
        work = tmp_path / name / ".storagelab-bonnie"
        work.parent.mkdir()
        if before is not None:
            work.mkdir()
            work.chmod(before)
        fd = leftovers.claim(work)
        try:
            assert stat.S_IMODE(work.stat().st_mode) == 0o700
        finally:
            leftovers.release(work, fd)


def test_a_file_named_by_the_environment_that_another_user_can_write_is_refused(tmp_path):
    # reliability-32: root's own PYTHONSTARTUP (0644, in root's 0711 folder) with `setfacl -m u:storagelab-rel5:rw`:
    # environment_refusal looked at its owner alone, the second user wrote a line into it, and `storagelab run`'s
    # kernel ran it as root (it copied a root-only file into their folder), exit 0
    from storagelab import ownership

    tmp_path.chmod(0o700)
    ok, ww, acl = tmp_path / "ok.py", tmp_path / "ww.py", tmp_path / "acl.py"
    for p in (ok, ww, acl):
        p.write_text("pass\n")
        p.chmod(0o644)
    ww.chmod(0o666)
    assert ownership.environment_refusal({"PYTHONSTARTUP": str(ok)}) is None
    assert "is a file that can be written by every user" in (
        ownership.environment_refusal({"PYTHONSTARTUP": str(ww)}) or ""
    )
    try:
        os.setxattr(acl, "system.posix_acl_access", _acl_for(os.getuid() + 4242))
    except OSError:
        pytest.skip("no POSIX ACLs here")
    assert "(its access control list), read as you" in (
        ownership.environment_refusal({"PYTHONSTARTUP": str(acl)}) or ""
    )


def test_a_notebook_path_that_is_not_there_is_not_taken_for_the_projects_notebook(tmp_path):
    """reliability-32 read, Low 1: `run /missing/07_explore.ipynb` ran the project's 07_explore, exit 0."""
    with pytest.raises(ParameterError, match="no such notebook file"):
        nbparams.resolve(str(tmp_path / "missing" / "07_explore.ipynb"))
    assert (
        nbparams.resolve("07_explore") == nbparams.resolve("07_explore.ipynb") == paths.NOTEBOOKS / "07_explore.ipynb"
    )


def test_a_socket_at_a_listed_name_is_said_as_one(tmp_path):
    """reliability-32 store, Low 1: a log replaced by a socket between the listing and the read gave the error row
    "[Errno 6] No such device or address" (its open fails before the regular-file check; a FIFO's is said)."""
    import socket

    from storagelab.ingest_open import open_input

    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "a.txt"))
        with pytest.raises(OSError, match="a socket .*not a regular file"):
            open_input(tmp_path / "a.txt")
