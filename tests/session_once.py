"""A module fixture's costly build, made once per test session even under pytest-xdist (issue 28).

Under xdist (`./run test`: -n 2) the tests of one module are handed to both workers, and a module-scoped fixture
is built on each (test_reliability_old_versions' two old trees, test_reports' hostile project, test_compare's lab
run: each built twice, on both cores). ``once_per_session`` builds the value in the session's shared folder (the
controller makes it for the BACKGROUND functions, tests/conftest.py) under a file lock: the first worker to ask
builds it, the other waits for the lock and gets the same value (pickled beside it). A build that raised raises
again on the other worker, without building a second time. In a serial run (`-n 0`, `-p no:xdist`) it is the
fixture's own temporary folder, as before.

The value must pickle (paths, tuples, dicts of rows) and its files are read-only for the tests that use it: two
workers read them at once.
"""

from __future__ import annotations

import fcntl
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def shared_folder(config: pytest.Config) -> Path | None:
    """The session's folder shared by the xdist controller and its workers (conftest.pytest_configure_node), or
    None in a serial run."""
    shared = getattr(config, "workerinput", {}).get("storagelab_shared")
    return Path(shared) if shared else None


def once_per_session(
    config: pytest.Config, tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]
) -> T:
    """``build(folder)``'s value, built once per session: ``folder`` is new and empty, named after ``name``."""
    shared = shared_folder(config)
    if shared is None:
        return build(tmp_path_factory.mktemp(name))
    value = shared / f"once-{name}.value"  # not *.pickle: the BACKGROUND functions' outcomes (conftest)
    with open(shared / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, and by the kernel if the worker dies
        if not value.exists():
            folder = Path(tempfile.mkdtemp(prefix=f"once-{name}-", dir=shared))
            try:
                outcome: tuple[str, object] = ("returned", build(folder))
            except Exception as e:  # not a Ctrl-C (nothing is published: the other worker builds it then)
                outcome = ("raised", e)
            try:
                value.write_bytes(pickle.dumps(outcome))
            except Exception as e:  # an exception that does not pickle: its description
                value.write_bytes(pickle.dumps(("raised", RuntimeError(f"{name}: {outcome[1]!r} ({e})"))))
            if outcome[0] == "raised":
                raise outcome[1]  # type: ignore[misc]
            return outcome[1]  # type: ignore[return-value]
    how, got = pickle.loads(value.read_bytes())
    if how == "raised":
        raise got
    return got
