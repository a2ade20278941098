"""The ingest's pool workers hold none of the command's standard streams (reliability-21, h6).

A worker that waits in the kernel for a FUSE or network file system that does not answer cannot be ended, even by
SIGKILL (``pool_deaths._unkillable``): the command ends, and the worker stays until the mount answers. Holding the
command's stdout and stderr, it kept the user's pipeline open: ``storagelab ingest ... | cat`` did not end when the
command did (a stopped bindfs under a second one, Ctrl-C: the command gone in 10 s, ``cat`` waiting until the mount
was resumed). The workers' stdout and stderr are now a pipe of the pool's own, whose bytes a thread of this process
copies to its stderr, their stdin is /dev/null, and they close the other descriptors of the command's streams that a
fork gave them: once this process is gone, a stuck worker holds nothing of the user's."""

from __future__ import annotations

import os
import select
import threading

from ..procs import worker_init


class Relay:
    """A pipe for the workers' output and the thread copying it to this process's stderr (``fd`` None: no thread
    could be started, out of memory under ``ulimit -v``, and the workers keep the command's streams)."""

    def __init__(self, target: int = 2) -> None:
        r, w = os.pipe()
        self.fd: int | None = w
        self.gone = False  # the target (stdout) has lost its reader: see check
        self.thread = threading.Thread(
            target=self._copy, args=(r, target), name="storagelab-worker-output", daemon=True
        )
        try:
            self.thread.start()
        except RuntimeError:  # can't start new thread
            os.close(r)
            os.close(w)
            self.fd = None

    def _copy(self, r: int, target: int) -> None:
        try:
            while data := os.read(r, 1 << 16):
                try:
                    _write_all(target, data)
                except BrokenPipeError:
                    if target != 2:  # stdout's reader gone (| head -1): the command stops, as a worker's write did
                        self.gone = True
                        return
                except OSError:  # this stderr closed: the workers' output is dropped, never left to block them
                    pass
        finally:
            os.close(r)

    def check(self) -> None:
        """BrokenPipeError once the target (stdout) has lost its reader: the command stops unfinished (141)."""
        if self.gone:
            raise BrokenPipeError(32, "Broken pipe")

    def close(self) -> None:
        """After the pool has ended: the output of its workers is copied (waited for at most a second)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
            self.thread.join(1)


def _write_all(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to ``fd``: a write can be short (a signal that lands in the relay's thread mid-write,
    a pipe with less room than the chunk on a non-blocking stderr) and fail with EAGAIN (a stderr some other program
    made non-blocking: its file description is shared), and the rest of the workers' chunk was dropped
    (reliability-23 medium; reliability-24: a 64 KiB chunk to a non-blocking stderr pipe of 4 KiB arrived as 4 KiB).
    A non-blocking ``fd`` is waited for as a blocking one would be."""
    view = memoryview(data)
    room = select.poll()
    room.register(fd, select.POLLOUT)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            room.poll(1000)


def relayed_worker_init(parent: int, fd: int | None, out: int | None = None) -> None:
    """``procs.worker_init``, then stdin from /dev/null, stdout and stderr to the relay's pipe, and every other
    descriptor of the command's stdin, stdout or stderr closed (``stopsignals`` keeps a copy of its stderr, which a
    fork inherits: the stuck worker of the attack held the user's pipe through it)."""
    worker_init(parent)
    if fd is None:
        return
    theirs = set()
    for std in (0, 1, 2):
        try:
            st = os.fstat(std)
        except OSError:
            continue
        theirs.add((st.st_dev, st.st_ino))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(fd if out is None else out, 1)
    os.dup2(fd, 2)
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:  # pragma: no cover - no /proc
        return
    for other in fds:
        if other <= 2 or other == fd:
            continue
        try:
            st = os.fstat(other)
        except OSError:  # the listing's own descriptor, closed since
            continue
        if (st.st_dev, st.st_ino) in theirs and not any(os.path.samestat(st, os.fstat(k)) for k in (1, 2)):
            os.close(other)
