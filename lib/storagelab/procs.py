"""Child processes that end with their parent (Linux: prctl PR_SET_PDEATHSIG)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

from .errors import StoragelabError

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


# The process guard of ``storagelab lab``: run as ``python -I procs.py LAB_PID`` (lab/fio.py starts it; it needs
# only the standard library). It kills a process and all its descendants when the lab dies (SIGTERM from the
# kernel, set up by the lab's preexec_fn): fio's job processes are its forks, each in a session of its own, which
# no signal to fio or its group reaches. The benchmark's pid comes on stdin once the benchmark has started.


def guard(lab_pid: int) -> None:
    """Wait (SIGTERM blocked by the lab's preexec_fn) for the benchmark's pid on stdin, then kill its tree on
    SIGTERM, or at once if the lab died before this guard was ready."""
    target: list[int] = []

    def kill(*_) -> None:
        for pid in [target[0], *descendants(target[0])] if target else []:
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


class WorkerDied(StoragelabError):
    """A process-pool worker ended in the middle of its work (killed, or out of memory): what is known of it."""


def worker_died(pool, doing: str, fewer: str) -> WorkerDied:
    """The error for a pool broken by a worker that ended while ``doing`` (e.g. 'it parsed files'): its pid and
    the signal or exit code that ended it; ``fewer``: how to run fewer at once. The pool has already stopped the
    other workers (SIGTERM), so a worker ended otherwise is named first; when all ended by SIGTERM, which one
    went first is not known. Not only advice about memory: reliability-3 killed a worker by hand and was told
    'out of memory'."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:  # the pool is ending them (its manager thread reaps them): their exit codes, once known
        p.join(timeout=10)
    ended = [(p.pid, p.exitcode) for p in procs]
    ours = (-signal.SIGTERM, 128 + signal.SIGTERM)  # how the pool's own terminate() ends them
    ended.sort(key=lambda pc: (pc[1] is None, pc[1] in ours))
    pid, code = ended[0] if ended else (None, None)
    if code is not None and (code < 0 or code in ours):
        how = f"was killed by {_signal_name(-code if code < 0 else code - 128)}"
    else:
        how = f"exited with code {code}" if code is not None else "ended"
    alike = sorted(p for p, c in ended if c in ours) if code in ours else [pid]
    if pid is None:
        who = "a worker process"
    elif len(alike) > 1:  # which of them went first is not known
        who = f"a worker process (one of pids {', '.join(map(str, alike))})"
    else:
        who = f"a worker process (pid {pid})"
    return WorkerDied(
        f"{who} {how} while {doing}: someone or something killed it, or it ran out of memory (the kernel's "
        f"out-of-memory killer sends SIGKILL); if memory: raise the limit (ulimit -v) or {fewer}"
    )


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


NOTICE_S = 5.0  # how long the pool may take to notice a dead worker itself before pool_result does


def pool_result(future, pool, doing: str, fewer: str, check=None):
    """``future.result()``, or WorkerDied when one of ``pool``'s workers has died. The pool notices a dead
    worker itself, except when the worker died in the middle of sending a result: then the pool's manager
    thread waits for the rest of the message for ever (the other workers keep the pipe open), and so would
    this process, and its exit (seen: 2 of 16 ingests with one worker SIGKILLed). Then the other workers are
    ended and the pipe closed, which lets the pool break and its thread end. ``check``: called at each wait
    (it may raise)."""
    from concurrent.futures import TimeoutError as FutureTimeout  # noqa: PLC0415  (only where a pool runs)
    from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415  (only where a pool runs)

    dead_since = None
    while True:
        try:
            return future.result(timeout=0.5)
        except BrokenProcessPool as e:
            raise worker_died(pool, doing, fewer) from e
        except FutureTimeout:
            if check is not None:
                check()
            procs = list((getattr(pool, "_processes", None) or {}).values())
            if not any(p.exitcode is not None for p in procs):
                dead_since = None
                continue
            dead_since = dead_since or time.monotonic()
            if time.monotonic() - dead_since < NOTICE_S:
                continue
            for p in procs:
                if p.exitcode is None:
                    p.terminate()
            for p in procs:
                p.join(timeout=10)
            died = worker_died(pool, doing, fewer)
            queue = getattr(pool, "_result_queue", None)
            if queue is not None:
                queue._writer.close()  # the pipe's last writer: the stuck read ends (EOF) and the pool breaks
            raise died from None
