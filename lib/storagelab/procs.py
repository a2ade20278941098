"""Child processes that end with their parent (Linux: prctl PR_SET_PDEATHSIG)."""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent dies, however it dies
    (SIGKILL, the OOM killer). ``parent``: the pid of the process this one serves; if it is
    already gone (it died before this ran), exit at once. No-op outside Linux."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass
    if parent is not None and os.getppid() != parent and not _alive(parent):
        os._exit(1)  # (a forkserver's child has another parent: then only a dead ``parent`` counts)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - alive, owned by another user
        return True
    return True


def worker_init(parent: int) -> None:
    """Pool worker initializer: dies with the ingest process, and leaves Ctrl-C to it (the
    terminal sends SIGINT to the whole process group; the parent stops the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(signal.SIGKILL, parent)


def descendants(root: int) -> list[int]:
    """The pids of every process below ``root`` (children, their children, ...), read from /proc; [] where
    there is no /proc."""
    children: dict[int, list[int]] = {}
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:  # pragma: no cover - no /proc
        return []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:  # "pid (comm) state ppid ...": comm may hold ')' and spaces
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def kill_descendants(root: int | None = None) -> None:
    """SIGKILL every process below ``root`` (default: this one), e.g. a notebook's kernel, which runs in a
    session of its own that no signal to our process group reaches."""
    for pid in descendants(os.getpid() if root is None else root):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
