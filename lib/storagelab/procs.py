"""Child processes that end with their parent (Linux: prctl PR_SET_PDEATHSIG).

This file is also run as a script, outside the package (``python -I procs.py PID``: the lab's fio guard), so it
imports the standard library only; a pool worker's death is told by pool_deaths.py."""

from __future__ import annotations

import ctypes
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
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass
    if parent is not None and os.getppid() != parent and not alive(parent):
        os._exit(1)  # (a forkserver's child has another parent: then only a dead ``parent`` counts)


def alive(pid: int) -> bool:
    """True while process ``pid`` exists (a zombie counts)."""
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


# The process guard of ``storagelab lab``: run as ``python -I procs.py LAB_PID`` (lab/fio.py starts it, in a session
# of its own; it needs only the standard library). It kills a process and all its descendants when the lab dies
# (SIGTERM from the kernel, set up by the lab's preexec_fn): fio's job processes are its forks, each in a session of
# its own, which no signal to fio or its group reaches. The benchmark's pid comes on stdin once it has started. The
# benchmark runs with GUARD_ENV=<this guard's pid> in its environment, which its forks inherit: a SIGKILL to the lab's
# whole process group kills fio's main process with the lab, and its job processes, re-parented to init, are no
# longer anyone's descendants when the guard acts (reliability-5: two fio jobs ran on for 30 s and more); the guard
# finds them by that variable.

GUARD_ENV = "STORAGELAB_GUARDED_BY"


def guarded(guard_pid: int) -> list[int]:
    """The pids of this user's processes whose environment holds GUARD_ENV=``guard_pid`` (read from /proc)."""
    mark = f"{GUARD_ENV}={guard_pid}".encode()
    found = []
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if mark in fh.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            continue
    return found


def guard(lab_pid: int) -> None:
    """Wait (SIGTERM blocked by the lab's preexec_fn) for the benchmark's pid on stdin, then kill its tree and every
    process it marked on SIGTERM, or at once if the lab died before this guard was ready."""
    target: list[int] = []

    def kill(*_) -> None:
        for pid in [*target, *(descendants(target[0]) if target else []), *guarded(os.getpid())]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(0)

    line = sys.stdin.readline()  # SIGTERM is still blocked: a lab killed meanwhile is seen below
    if line.strip().isdigit():
        target.append(int(line))
    signal.signal(signal.SIGTERM, kill)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # blocked until now: a SIGTERM sent meanwhile waited
    if not target or os.getppid() != lab_pid:  # the lab died before this guard was ready
        kill()
    while True:
        signal.pause()


if __name__ == "__main__":
    guard(int(sys.argv[1]))
