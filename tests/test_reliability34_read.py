"""Reliability-34, the read side (h2): root's reads and runs of files another local user controls."""

from __future__ import annotations

import array
import os
import socket

from storagelab import livewriters, ownership
from storagelab.livewriters import unseen_writer


def _hidden(path) -> socket.socket:
    """A descriptor open for writing on ``path``, sent through a UNIX socket and closed: held only in the queue."""
    fd = os.open(path, os.O_RDWR)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    os.close(fd)
    a.close()
    return b


def test_a_file_held_for_writing_only_in_a_sockets_queue_is_not_ours(tmp_path, monkeypatch):
    # reliability-34: the second user opened root's 0666 notebook for writing, sent the descriptor through a socket of
    # theirs and closed it; root made it 0644, `storagelab run` passed it (/proc showed no holder), and the cell they
    # wrote through the descriptor they took back ran as root
    tmp_path.chmod(0o700)
    nb, mine = tmp_path / "nb.ipynb", tmp_path / "mine.ipynb"
    for p in (nb, mine):
        p.write_text("{}")
        p.chmod(0o644)
    monkeypatch.setattr(livewriters, "_processes", list)  # the visible holders' scan (seconds here): none
    queue = _hidden(nb)
    try:
        assert "where /proc shows no process holding it" in (ownership.file_writers(str(nb)) or "")
        with open(mine, "r+"):  # held for writing by this process (root's own): not another user's
            assert unseen_writer(mine, os.stat(mine)) is None
        assert unseen_writer(mine, os.stat(mine)) is None
    finally:
        queue.close()  # the queued descriptor goes with it
    assert unseen_writer(nb, os.stat(nb)) is None
