"""Reliability-31, the read side (h2): root's reads of paths another local user controls."""

from __future__ import annotations

import os
import threading

import pytest

from storagelab import nbparams
from storagelab.errors import ParameterError


def _released(path) -> None:
    """A reader blocked in the FIFO's open (the old code) let go: a writer opens it and closes it."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_a_notebook_path_that_is_a_fifo_or_dev_zero_is_refused_at_once(tmp_path):
    # `storagelab run /tmp/theirs/nb.ipynb`, their FIFO: nbformat's open waited for a writer for ever (Ctrl-C did not
    # end it); their link to /dev/zero was read until memory ran out. Each is one ParameterError now, and a FIFO
    # swapped in after resolve() is refused by the read itself.
    fifo = tmp_path / "nb.ipynb"
    os.mkfifo(fifo)
    zero = tmp_path / "z.ipynb"
    zero.symlink_to("/dev/zero")
    for p in (fifo, zero):
        with pytest.raises(ParameterError, match="not a regular file"):
            nbparams.resolve(str(p))
    got: list = []

    def read() -> None:
        try:
            nbparams.notebook_parameters(fifo)
        except BaseException as e:  # noqa: BLE001
            got.append(e)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(3)
    blocked = t.is_alive()
    _released(fifo)
    t.join(3)
    assert not blocked, "the read of a FIFO notebook waited for a writer"
    assert got and isinstance(got[0], ParameterError) and "FIFO" in str(got[0])
