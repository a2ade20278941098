"""Whose a FUSE file system is (ingest_open._fuse_mounter) is known from the mount table, and forgotten once the table
changes: a device number is given again to the next mount, so a FUSE file system of root's unmounted and another
user's bindfs -u 0 mounted in a process's lifetime could get the same number, and their links (shown as root's) were
followed as root's for the rest of that process (a cache kept by device number; found when a helper's bindfs mount,
gone since, left its number to the one of reliability-13's test)."""

from __future__ import annotations

import os
import subprocess

import pytest

from storagelab import ingest_open


def test_a_change_of_the_mount_table_forgets_whose_each_device_was(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("mounts a tmpfs: root only")
    monkeypatch.setattr(ingest_open, "_mount_watch", None)
    monkeypatch.setattr(ingest_open, "_fuse_mounters", {})
    root_dev = os.stat("/").st_dev
    assert ingest_open._fuse_mounter(root_dev) is None  # the table read, and watched from now on
    ingest_open._fuse_mounters[12345] = None  # a device seen as root's (or no FUSE file system) before
    assert not ingest_open._mounts_changed()
    (tmp_path / "m").mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "none", str(tmp_path / "m")]).returncode:
        pytest.skip("cannot mount here")
    try:
        assert ingest_open._fuse_mounter(root_dev) is None
        assert 12345 not in ingest_open._fuse_mounters  # the code before: kept for the life of the process
        assert not ingest_open._mounts_changed()  # the mark is read once
    finally:
        subprocess.run(["umount", str(tmp_path / "m")], check=False)
    assert ingest_open._mounts_changed()
