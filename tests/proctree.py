"""A process's tree on Linux, read from /proc (no psutil): its children and everything below them, whether a
process still runs, waiting for a pool to start and for a tree to die. Shared by the tests that kill commands
and check that nothing is left running."""

from __future__ import annotations

import os
import signal
import subprocess
import time


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` ([] once it has gone)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(c) for c in fh.read().split()]
    except OSError:
        return []


def below(pid: int) -> list[int]:
    """Every process under ``pid`` (children, their children, ...)."""
    kids = children(pid)
    return kids + [g for k in kids for g in below(k)]


def alive(pid: int) -> bool:
    """``pid`` exists and is neither a zombie nor dead."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def wait_for_children(p: subprocess.Popen, n: int, pause: float, seconds: float = 60) -> list[int]:
    """Poll until ``p`` has ``n`` children, it ends, or ``seconds`` pass: its children then."""
    kids: list[int] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and p.poll() is None and len(kids) < n:
        kids = children(p.pid)
        time.sleep(pause)
    return kids


def survivors(pids: list[int], seconds: float = 10) -> list[int]:
    """Wait up to ``seconds`` for ``pids`` to end; those still alive then, each killed with SIGKILL so that no test
    leaves one behind, even when it fails."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(map(alive, pids)):
        time.sleep(0.05)
    left = [q for q in pids if alive(q)]
    for q in left:
        os.kill(q, signal.SIGKILL)
    return left
