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


USER = "storagelab-rel5"


def _uid() -> int:
    import pwd  # noqa: PLC0415

    try:
        return pwd.getpwnam(USER).pw_uid
    except KeyError:
        return 1002  # root can chown to a uid that has no user


def _notebook(path) -> None:
    import nbformat  # noqa: PLC0415

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}))
    nbformat.write(nb, str(path))


@pytest.mark.skipif(os.getuid() != 0, reason="makes files of another user's (root only)")
def test_a_notebook_another_user_could_change_or_swap_is_refused(tmp_path):
    """The rest of reliability-31's read High 1: `storagelab run /tmp/theirs/nb.ipynb` read the notebook checked, but
    papermill opened it by its name again when it ran it; their FIFO swapped in between hung the run for good (2 of 6
    runs at a swap every 1.5 s). A notebook is their code run as root, too: one they own, or could swap (their folder,
    a folder every user can write), is refused in one line; root's own in a folder of root's runs."""
    tmp_path.chmod(0o755)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    _notebook(theirs / "nb.ipynb")
    os.chown(theirs / "nb.ipynb", _uid(), _uid())
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # no sticky bit: anyone may rename root's notebook away and put a FIFO in its place
    _notebook(shared / "nb.ipynb")
    their_folder = tmp_path / "their-folder"
    their_folder.mkdir()
    _notebook(their_folder / "nb.ipynb")
    os.chown(their_folder, _uid(), _uid())
    for path, said in (
        (theirs / "nb.ipynb", "is another user's file"),
        (shared / "nb.ipynb", "can be written by every user"),
        (their_folder / "nb.ipynb", "is another user's"),
    ):
        with pytest.raises(ParameterError) as e:
            nbparams.resolve(str(path))
        assert str(e.value).startswith(f"{path}: ") and said in str(e.value), str(e.value)
        assert str(e.value).endswith("copy it into a folder of yours")
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o700)
    _notebook(ours / "nb.ipynb")
    assert nbparams.resolve(str(ours / "nb.ipynb")) == (ours / "nb.ipynb").resolve()
    assert nbparams.notebook_parameters(ours / "nb.ipynb") == {"x": 1}
