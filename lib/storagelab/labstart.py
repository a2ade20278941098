"""Where `storagelab lab` starts JupyterLab: in the clone's top, never in the working folder (reliability-20).

JupyterLab starts a kernel asked for without a path (``POST /api/kernels``, a console or a kernel an extension asks
for) in its own working folder, and ``python -m ipykernel_launcher`` puts that folder first on the kernel's sys.path:
`cd THEIRS; storagelab lab` and one such kernel ran their ``ipykernel_launcher.py`` as root. JupyterLab now runs in the
clone's top. A relative path the user gives among JupyterLab's options (``--config=mine.py``, ``--notebook-dir sub``)
is made absolute from the working folder first, so it names what it named before."""

from __future__ import annotations

import os
import re
import signal
import socket
import sys
import threading
from typing import TYPE_CHECKING

from .stopsignals import bounded_write

if TYPE_CHECKING:
    import subprocess


# the options that name a file or folder (traitlets' names: ServerApp.root_dir, notebook_dir, config_file,
# certfile, keyfile, file_to_run, ...); another option's value is never taken for a path, even when the working
# folder holds that name (a planted file "8888" must not turn `--port 8888` into a path)
_PATH_OPTION = re.compile(r"(dir|file|paths?|config|file_to_run|client_ca|sock)$", re.IGNORECASE)
# reliability-21: options whose name matches but whose relative value is not from the working folder, or not a path:
# FileCheckpoints.checkpoint_dir is relative to each notebook's folder (made absolute from THEIRS, root's server wrote
# every checkpoint into their folder, through their links), preferred_dir is an API path under root_dir, and the rest
# are flags or a dict (a planted file "True" made `--ServerApp.show_config=True` a path: JupyterLab would not start)
_NOT_FROM_WORKING_FOLDER = frozenset(
    {
        "checkpoint_dir",
        "preferred_dir",
        "show_config",
        "generate_config",
        "logging_config",
        "copy_absolute_path",
        "use_redirect_file",
    }
)


def _names_a_path(option: str) -> bool:
    name = option.lstrip("-").rpartition(".")[2].replace("-", "_")
    return bool(_PATH_OPTION.search(name)) and name.lower() not in _NOT_FROM_WORKING_FOLDER


def from_working_folder(extra: list[str]) -> list[str]:
    """JupyterLab's options ``extra`` with each relative path that exists from the working folder made absolute, so
    that they mean the same once JupyterLab runs in another folder: the value of an option that names a file or
    folder (``--config=mine.py``, ``--notebook-dir sub``), and a positional argument (the file to open). A working
    folder that is gone names nothing: the options are kept as they are."""
    try:
        cwd = os.getcwd()
    except OSError:
        return list(extra)
    out: list[str] = []
    for arg in extra:
        before = out[-1] if out else ""
        if arg.startswith("-"):
            option, eq, value = arg.partition("=")
            pathlike = bool(eq) and _names_a_path(option)
        else:  # the value of the option before it, or a positional argument
            option, eq, value = "", "", arg
            pathlike = _names_a_path(before) if before.startswith("-") and "=" not in before else True
        if pathlike and value and not os.path.isabs(value) and not value.startswith("~"):
            if os.path.lexists(os.path.join(cwd, value)):
                arg = option + eq + os.path.join(cwd, value)
        out.append(arg)
    return out


# reliability-24: JupyterLab's default address is "localhost", which it binds as the system's resolver lists it: on
# a machine whose /etc/hosts names only 127.0.0.1 localhost (Ubuntu's, this one's) it bound 127.0.0.1:8888 while
# another user held [::1]:8888, and printed http://localhost:8888/lab?token=...; a browser takes localhost as ::1
# first (Chromium, curl without /etc/hosts' word), so the second user's listener got the token: root's kernels.
LOOPBACK = "127.0.0.1"


def loopback(extra: list[str]) -> list[str]:
    """JupyterLab's options ``extra``, with ``--ServerApp.ip=127.0.0.1`` unless they name an address (``--ip``,
    ``--ServerApp.ip``): the address its URLs print is then the one it holds."""
    # reliability-25: by its full name only; `--KernelManager.ip=127.0.0.1` (the kernels' address), `--LabApp.ip`,
    # `-ip` (which traitlets ignores) were taken for the server's and left it on "localhost" (reliability-24's High 3)
    given = any(a.startswith("--") and a[2:].partition("=")[0] in ("ip", "ServerApp.ip") for a in extra)
    return extra if given else [*extra, f"--ServerApp.ip={loopback_address()}"]


def loopback_address() -> str:
    """LOOPBACK, or "::1" on a host whose loopback has no 127.0.0.1 (reliability-25: on an IPv6-only loopback
    JupyterLab stopped with tornado's traceback, "OSError: [Errno 99] Cannot assign requested address", exit 1)."""
    for family, address in ((socket.AF_INET, LOOPBACK), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.bind((address, 0))
        except OSError:
            continue
        return address
    return LOOPBACK


# reliability-20: a stop signal JupyterLab took while it restarted a kernel that died at its start was lost: its
# shutdown failed (asyncio's InvalidStateError, a traceback in its log) and the server went on serving: `storagelab
# lab` stayed 20 s and more after its SIGTERM, and after a SIGHUP (the terminal closed) nobody would send another.
# JupyterLab stops at the second: each stop passed on is passed on again every AGAIN_AFTER seconds while it runs.
# Reliability-21: a JupyterLab that never ended (its stop stuck: an extension's or a kernel's shutdown that never
# returns, a server stopped with SIGSTOP) was sent SIGTERM for ever, `storagelab lab` needed kill -9, and then the
# server (a SIGTERM from PR_SET_PDEATHSIG it took the same way) stayed, holding the terminal's or a pipe's end and its
# port. After KILL_AFTER more tries it is killed (its kernels end with it: ipykernel polls its parent, JPY_PARENT_PID).
AGAIN_AFTER = 10.0
KILL_AFTER = 3
_again: list[threading.Timer] = []


def pass_on(proc: subprocess.Popen, signum: int) -> None:
    """Send JupyterLab (``proc``) the stop signal ``signum``, SIGINT and SIGHUP as SIGTERM (its clean stop: it has no
    handler for SIGHUP, which killed it at once, its kernels left to notice alone and its runtime files left behind,
    reliability-37); SIGTERM again each AGAIN_AFTER seconds while it still runs, until ``wait`` has its status;
    SIGKILL after KILL_AFTER such tries."""
    proc.send_signal(signal.SIGTERM if signum in (signal.SIGINT, signal.SIGHUP) else signum)
    tries = [0]

    def again() -> None:
        if proc.poll() is None and _again:
            if tries[0] >= KILL_AFTER:
                waited = (KILL_AFTER + 1) * AGAIN_AFTER
                # killed before its line, which is dropped when stderr has no room: JupyterLab waiting in a write to
                # a full stderr (`2>&1 | less`, less no longer reading) never ends its stop, and the line waited
                # there too, for ever, before the kill (reliability-24: `storagelab lab` needed kill -9)
                proc.kill()
                _say(f"storagelab lab: JupyterLab still ran {waited:g} s after the stop signal: killed\n")
                return
            tries[0] += 1
            proc.send_signal(signal.SIGTERM)
            _arm(again)

    _arm(again)


def _say(text: str) -> None:
    """``text`` to stderr from the timer's thread, never waiting for a stderr without room (stopsignals)."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):  # not a file (a test's capture): it never blocks
        print(text, end="", file=sys.stderr)
        return
    bounded_write(fd, text.encode())


def _arm(again) -> None:
    timer = threading.Timer(AGAIN_AFTER, again)
    timer.daemon = True
    _again[:] = [timer]
    timer.start()


def wait(proc: subprocess.Popen) -> int:
    """JupyterLab's exit status; no stop signal is sent again after it."""
    try:
        return proc.wait()
    finally:
        for timer in _again:
            timer.cancel()
        _again.clear()
