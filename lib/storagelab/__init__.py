"""storagelab: storage benchmark logs (fio, bonnie++, zdb, ...) into DuckDB, with provenance."""

import _signal  # not `signal`: it imports enum first, and 5 of 260 Ctrl-Cs at 0.05-0.16 s landed there (reliability-32)
import os
import sys


def _early_interrupt(signum, frame) -> None:
    """Ctrl-C while the command line program loads (before ``cli._guarded`` takes Ctrl-C over): one line and 130,
    not a traceback from whatever module was being imported (reliability-11: 40 of 40 Ctrl-Cs 30-106 ms after the
    console script started printed one; 10 of 40 after this, all before this line: Python's start-up and site)."""
    os.write(2, b"storagelab: interrupted\n")
    os._exit(130)


_EARLY_STOP = {
    _signal.SIGTERM: b"storagelab: terminated (SIGTERM)\n",
    _signal.SIGHUP: b"storagelab: hung up (SIGHUP: its terminal closed?)\n",
}
_OWNER: list[int] = []


def _early_stop(signum, frame) -> None:
    """SIGTERM or SIGHUP while the program loads (before ``cli._guarded`` installs ``stopsignals.on_stop_signals``):
    its one line and 143 or 129, as Ctrl-C's above (reliability-33: 27 of 105 SIGTERMs in the first 0.05-0.8 s ended
    -15 without a word). A process forked meanwhile gets the signal's default."""
    if os.getpid() not in _OWNER:
        _signal.signal(signum, _signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    try:
        os.write(2, _EARLY_STOP[signum])
    except OSError:  # a closed terminal or stderr: nowhere to say it
        pass
    os._exit(128 + signum)


# only as the program itself (`python -m storagelab`: argv[0] is "-m" while runpy imports it; the console script):
# imported by a notebook's kernel, Ctrl-C must stay the kernel's interrupt
if (sys.argv[:1] == ["-m"] or os.path.basename(sys.argv[0] if sys.argv else "") == "storagelab") and (
    _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler
):
    _signal.signal(_signal.SIGINT, _early_interrupt)
    _OWNER.append(os.getpid())
    for _sig in _EARLY_STOP:
        if _signal.getsignal(_sig) == _signal.SIG_DFL:
            _signal.signal(_sig, _early_stop)
    from storagelab import polars_sigint

    polars_sigint.watch()  # polars' handler (SA_RESTART) let Ctrl-C wait on a blocking call for ever

from storagelab.deferred import defer_slow_imports  # noqa: E402

__version__ = "0.1.0"

defer_slow_imports()  # before anything imports jsonschema (papermill, nbformat, altair): 0.8 s less per process
