"""A process-pool worker that died in the middle of its work: what is known of it (pid, signal), a wait on a
pool's result that does not hang when the worker died while it sent that result, and a pool's end that does not
hang when a worker's stop was lost (the ingest's parser pool and the notebook pool of `run` and `build`)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool, _CallItem
from contextlib import contextmanager

from .errors import StoragelabError
from .procs import kill_descendants
from .stopsignals import bounded_write


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
    _settled(procs)
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


def _settled(procs: list, within: float = 1.0) -> None:
    """Wait up to ``within`` s for every ended worker's exit code. A join racing the pool's own (its manager thread
    reaps the workers too) may find the child already reaped (ECHILD) before the other join has stored its exit
    code, and report none: then the SIGKILLed worker was named last, after one the pool had ended by SIGTERM (seen
    once in a loaded test run: `was killed by SIGTERM` for the other worker's pid)."""
    deadline = time.monotonic() + within
    while any(p.exitcode is None for p in procs) and time.monotonic() < deadline:
        time.sleep(0.01)


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
    dead_since = None
    while True:
        try:
            return future.result(timeout=0.5)
        except BrokenProcessPool as e:
            raise worker_died(pool, doing, fewer) from e
        except FutureTimeout:
            if check is not None:
                check()
            _check_feeder(future, pool)
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


class FeederDied(BrokenProcessPool):
    """The pool's queue feeder thread (it pickles each task and sends it to the workers) ended: out of memory."""


def _check_feeder(future, pool) -> None:
    """FeederDied when ``pool``'s queue feeder thread has ended while ``future`` is not done. Under ``ulimit -v`` the
    thread can die of a MemoryError while it pickles a task (and again while the pool formats that error): the task
    is never sent, its future never ends, no worker dies, and the wait was for ever (reliability-4, ulimit -v
    790000). The workers are ended: they wait for work the dead thread will never send, and the pool's shutdown (and
    Python's exit) would wait for them; their ends let the pool's manager thread break the pool and end."""
    feeder = getattr(getattr(pool, "_call_queue", None), "_thread", None)
    if feeder is None or feeder.is_alive() or future.done():
        return
    time.sleep(0.1)  # the pool closes the queue (the thread ends) only after it has ended every future: let it
    if future.done():
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        if p.exitcode is None:
            p.kill()
    for p in procs:
        p.join(timeout=10)
    raise FeederDied(
        "out of memory: the process pool's feeder thread ended (it could not pickle a task to send to the workers)"
    ) from None


NO_THREAD = "can't start new thread"
SHUTDOWN_GRACE_S = 5.0  # a worker's time to finish its task and stop once the feeder sent it its stop


@contextmanager
def stopped_at_the_end(pool) -> Iterator[None]:
    """Run the block with ``pool``, then end the pool without ever hanging (``shut_down``): its queue feeder
    thread ends quietly on an error while it pickles a worker's stop (``_quiet_feeder``), and so do the pool's
    threads that ran out of memory (``_quiet_threads``). Left by an exception (an error, Ctrl-C, a generator
    closed early): the tasks not started are cancelled."""
    _quiet_feeder(pool)
    hook = threading.excepthook
    threading.excepthook = _quiet_threads(hook)
    finished = False
    try:
        yield
        finished = True
    finally:
        shut_down(pool, finished, sys.exc_info()[1])
        threading.excepthook = hook


def shut_down(pool, finished: bool, error: BaseException | None = None) -> None:
    """``pool.shutdown``. Stopped early (``finished`` false): the tasks not started are cancelled and the few in
    flight finish (the workers ignore Ctrl-C, and die with this process however it dies). The pool stops its
    workers by sending each a stop through its queue feeder thread; a feeder that died of a MemoryError while it
    pickled one (ulimit -v 920000) left the manager thread waiting for workers that never stop, and shutdown(wait=True)
    waited for ever. So the manager is awaited in steps: once the feeder has ended and the workers still run
    SHUTDOWN_GRACE_S later, they are ended."""
    # shutdown() drops the pool's references to these: taken first
    manager = getattr(pool, "_executor_manager_thread", None)
    queue = getattr(pool, "_call_queue", None)
    procs = list((getattr(pool, "_processes", None) or {}).values())
    try:
        pool.shutdown(wait=False, cancel_futures=not finished)
    except RuntimeError:  # its manager thread never started (out of memory): nothing to wait for
        kill(procs)
        return
    if manager is None:  # the pool failed before its manager thread started (EMFILE in the first submit under
        kill(procs)  # ulimit -n 16): no one stops the workers it forked, and Python's exit waited for them for ever
        return
    try:  # a further Ctrl-C meanwhile must not cut this short: Python's exit would then wait for the manager
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # thread, for ever (reliability-5: Ctrl-C twice)
    except ValueError:  # not the main thread
        previous = None
    try:
        _await_manager(manager, queue, procs, finished, error)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _await_manager(manager, queue, procs: list, finished: bool, error: BaseException | None = None) -> None:
    """Wait for the pool's manager thread in steps. The workers are killed once the feeder has ended and they still
    run SHUTDOWN_GRACE_S later, and, stopped early, once they still run SHUTDOWN_GRACE_S after the stop whatever the
    feeder does: a worker that never ends (stopped by SIGSTOP, frozen, stuck in I/O) left the run hanging in
    shutdown, 40 s and more (reliability-5). Stopped early (``error``), workers that even SIGKILL does not end end
    the command (``_unkillable``)."""
    feeder_gone, stopped = None, time.monotonic()
    while manager.is_alive():
        manager.join(0.5)
        feeder = getattr(queue, "_thread", None)
        if feeder is not None and not feeder.is_alive():
            feeder_gone = feeder_gone or time.monotonic()
            if time.monotonic() - feeder_gone >= SHUTDOWN_GRACE_S:
                _kill(procs, finished, error)
                feeder_gone = None
        if not finished and stopped is not None and time.monotonic() - stopped >= SHUTDOWN_GRACE_S:
            _kill(procs, finished, error)
            stopped = None


def _kill(procs: list, finished: bool, error: BaseException | None) -> None:
    """``kill``; stopped early, workers that even SIGKILL did not end (within ``kill``'s wait) end the command."""
    kill(procs)
    if not finished and (alive := [p.pid for p in procs if p.exitcode is None and _running(p.pid)]):
        _unkillable(alive, error)


def _running(pid: int) -> bool:
    """Whether process ``pid`` is still there and not a zombie (``exitcode`` is None for a worker the manager
    thread is reaping at that moment)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _unkillable(pids: list[int], error: BaseException | None) -> None:
    """End the command whose workers SIGKILL did not end: each waits in the kernel for the answer of a FUSE or
    network file system it had sent a request to (a stopped bindfs), which no signal cuts short. Reliability-20 (h1):
    root's ingest of 1,500 logs on such a mount, Ctrl-C: nothing said, the manager thread awaited for ever, a second
    Ctrl-C ignored; only SIGTERM ended it. The command's line (its stuck line after Ctrl-C), then ``os._exit``, as
    a SIGTERM ends it (Python's own exit would wait for the manager thread too); what is committed stays."""
    from .stuck import STUCK_TAIL, current_line  # noqa: PLC0415

    who = f"worker process{'es' if len(pids) > 1 else ''} {', '.join(map(str, pids))}"
    if isinstance(error, KeyboardInterrupt):
        said, code = current_line() or f"storagelab: {STUCK_TAIL}", 130
    else:
        said, code = f"storagelab: {str(error).splitlines()[0] if str(error) else type(error).__name__}", 1
    note = (
        f"note: {who} still {'wait' if len(pids) > 1 else 'waits'} for a file system that does not answer, even "
        "killed, and will end once it answers"
    )
    bounded_write(2, f"{said}\n{note}\n".encode())  # a stopped stderr reader must not hold the exit
    os._exit(code)


def kill(procs: list) -> None:
    """SIGKILL each of a pool's worker processes, with what it started (a notebook's kernel runs in a session of its
    own, which no signal to the worker reaches), and reap it."""
    for proc in procs:
        if proc.exitcode is None:
            kill_descendants(proc.pid)
        proc.kill()
        proc.join(5)


def _quiet_feeder(pool) -> None:
    """The pool's queue feeder thread, on an error while it pickles a worker's stop (not a task: the pool gives that
    error to the task's future), printed its traceback (and, out of memory, failed doing it with a second one) and
    went on without the stop. Now it ends quietly (threading.excepthook, _quiet_threads) and shut_down ends the
    workers. Set before the thread starts (the pool's first submit), which takes the handler when it starts."""
    queue = getattr(pool, "_call_queue", None)
    if queue is None:
        return
    loud = queue._on_queue_feeder_error

    def on_error(e: Exception, obj) -> None:
        if isinstance(obj, _CallItem):
            loud(e, obj)
            return
        raise e

    queue._on_queue_feeder_error = on_error


NO_LOCK = "can't allocate"  # CPython's RuntimeError for a lock it could not allocate ("can't allocate read lock")


def _quiet_threads(hook):
    """``hook`` but silent for a pool thread that could not start a thread, that ran out of memory, or the queue
    feeder thread's end (a MemoryError pickling a task, then often a second one, or "can't allocate read lock", as
    the pool formats it): Python printed their tracebacks on stderr; pool_result and shut_down say it in one line.
    The manager thread ends the same way: a MemoryError while it unpickles a result, then "can't allocate read lock"
    while it formats that error (a clean-clone run's `ulimit -v` test printed "Exception in thread Thread-2"). The
    error is kept on the thread (``ended_on``) for the line that names it."""

    def quiet(args) -> None:
        e = args.exc_value
        out_of_memory = isinstance(e, MemoryError) or (
            isinstance(e, RuntimeError) and (NO_THREAD in str(e) or NO_LOCK in str(e))
        )
        if args.thread is not None:
            args.thread.ended_on = e
        if not (out_of_memory or (args.thread is not None and args.thread.name == "QueueFeederThread")):
            hook(args)

    return quiet


def thread_end(thread) -> str:
    """What ended a pool thread that ended quietly (``_quiet_threads``), in a few words."""
    e = getattr(thread, "ended_on", None)
    if e is None:
        return "why is not known"
    if isinstance(e, RuntimeError) and NO_THREAD in str(e):
        return "it could not start a thread"
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
