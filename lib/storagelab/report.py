"""Running notebooks (papermill, with strict parameter validation) and rendering offline HTML reports.

This module runs notebooks; it re-exports the names of ``nbparams`` (notebooks and their parameters) and
``rendering`` (HTML pages, summaries, the index), so ``report.<name>`` works for all three.

* ``run_notebooks`` executes notebooks/<name>.ipynb into reports/executed/<name>.ipynb.
  Parameters are checked against the notebook's ``parameters`` cell before anything runs:
  an unknown name or a value of the wrong type is an error (papermill itself only warns).
* ``render_reports`` turns every executed notebook into reports/<name>.html with a template
  that references nothing outside the file (no CDN scripts, styles or fonts), and writes
  reports/index.html from the summaries the notebooks leave in reports/summaries/.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import os
import re
import shutil
import signal
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import livefolders, paths, pinned, readcopies, reportlock, reportstage
from .errors import ParameterError
from .nbparams import (  # noqa: F401  (re-exported: report.<name>)
    _literal_assignments,
    _parameter_cells,
    _title,
    coerce,
    list_notebooks,
    notebook_listing,
    notebook_parameters,
    parameter_docs,
    resolve,
    validate,
    validate_each,
)
from .pool_deaths import FeederDied, pool_result, stopped_at_the_end, worker_died
from .procs import die_with_parent, kill_descendants
from .rendering import (  # noqa: F401  (re-exported)
    _BASIS,
    _STATUS_CLASS,
    _SVG_ID,
    _SVG_NS,
    _SVG_PROLOG,
    _SVG_REF,
    _claim_counts,
    _exporter,
    _failed_page,
    _folder_title,
    _inline_svg,
    _prepare,
    _run_info,
    _spec_text,
    _summaries,
    _thumbnail,
    _unfinished,
    _write_json,
    index_html,
    render_reports,
    report_folders,
    vega_bundle,
    write_summary,
)
from .store.workerio import Relay, relayed_worker_init
from .terminal import say

REPORT_DIR_ENV = paths.REPORT_DIR_ENV


def report_dir(nb_path: Path, params: dict[str, Any]) -> Path:
    """reports/<selection>/: the study (or 'all') and any other label filter; a run whose other parameters
    differ from the notebook's defaults gets a suffix of their hash, so no run overwrites another's report.
    Two selections never share a folder: a name that the folder cannot spell as it is (``my nas``, ``my_nas``'s
    twin; ``(unlabelled)``; a study called ``all``) gets ``~`` and a hash of the selection."""
    return paths.REPORTS / _folder_and_identity(nb_path, params)[0]


def _folder_and_identity(nb_path: Path, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The report folder's name and what it holds: the selection's filters and the run's other parameters."""

    from .analysis.selection import FILTERS, Selection  # noqa: PLC0415  (pulls in duckdb/polars, 0.4 s: kept out of the CLI's start-up)

    def digest(value) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:8]

    defaults = notebook_parameters(nb_path)
    effective = {**defaults, **params}
    selection = Selection.from_params(effective)
    folder = selection.folder()
    filters = selection.filters()
    if len(folder.encode()) > FOLDER_MAX:  # a file name has at most 255 bytes: a 300-byte study failed every run
        folder = folder.encode()[:FOLDER_MAX].decode(errors="ignore") + "~" + digest(filters)
    elif not _spelled_as_is(folder, selection.study, filters):
        folder += "~" + digest(filters)
    other = {k: v for k, v in params.items() if k not in FILTERS and k != "db_path" and v != defaults.get(k)}
    if effective.get("db_path"):
        other["db_path"] = effective["db_path"]
    if other:
        folder += "--" + digest(other)
    return folder, {"selection": filters, "parameters": other}


FOLDER_MAX = 200  # bytes of a report folder's name before ~hash and --hash (255 at most: NAME_MAX)


def _spelled_as_is(folder: str, study: str, filters: dict[str, str]) -> bool:
    """True when ``folder`` names the selection unambiguously: every label kept as it is, none holding the
    separator '--' or ending in '-', no study called 'all' (the folder of no study), and no capital letter: on a
    case-insensitive filesystem (macOS, Windows, an SMB share) ``My_NAS`` and ``my_nas`` are one folder, so a name
    with capitals gets its hash too, and no two folders differ only in case."""
    values = [study or "all", *[v for k, v in filters.items() if k != "study"]]
    readable = "--".join([study or "all", *[f"{k}-{v}" for k, v in filters.items() if k != "study"]])
    unique = folder == readable and folder == folder.lower() and folder not in _TAKEN
    return unique and study != "all" and not any("--" in v or v.endswith("-") for v in values)


# names in reports/ that are not report folders: a study called `index.html` made reports/index.html/ a folder, and
# every later run, report and build failed ("reports/index.html: Is a directory", reliability-25 reports)
_TAKEN = frozenset({"index.html"})


current_report_dir = paths.current_report_dir


class _StderrFilter:
    """Hold the kernel's stderr (it inherits ours) while a notebook runs; pass on all but jupyter's notes that say
    nothing about the user's data: 'Kernel is running over TCP without encryption', and 'KeyboardInterrupt caught
    in kernel', which an idle kernel logs when jupyter_client interrupts it before every shutdown."""

    NOISE = (
        "Kernel is running over TCP without encryption",
        "Unable to parse line",
        "Passed unknown parameter",
        "KeyboardInterrupt caught in kernel",
    )

    def __enter__(self):

        self.tmp = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):

        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = text = self.tmp.read().decode("utf-8", "replace")  # read after a failure (_out_of_files)
        self.tmp.close()
        if exc[0] is not None and any(m in text for m in _EMFILE):
            return False  # the kernel's tracebacks of it: _out_of_files says it in one line
        if exc[0] is not None and issubclass(exc[0], (KeyboardInterrupt, SystemExit)):
            # stopped (Ctrl-C; SIGTERM/SIGHUP while waiting): a kernel shut down in a cell logs its reply's failure
            # ("Exception in message handler ... ZMQError: Socket operation on non-socket", 2 of 15 Ctrl-C under load,
            # reliability-13) before the one line that says the command was interrupted
            return False
        for line in text.splitlines():
            if line.strip() and not any(n in line for n in self.NOISE):
                print(line, file=sys.stderr)
        return False


def _error_of(exc: Exception) -> str:
    """One line for a failed notebook: the exception the cell raised, without the traceback."""
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(exc).__name__}: {exc}"
    return re.sub(r"\x1b\[[0-9;]*m", "", text).strip().splitlines()[0][:500] if text.strip() else type(exc).__name__


_EMFILE = ("Too many open files", "EMFILE", "[Errno 24]", "code: 24,")  # Python's, zmq's and Rust's words for it


def _out_of_files(exc: Exception, kernel_stderr: _StderrFilter) -> str | None:
    """One line for a notebook that failed because a process ran out of file descriptors (``ulimit -n 64``: a panic in
    polars' thread pool, an empty CellExecutionError after zmq's 'Too many open files' on the kernel's stderr). A
    failure that does not say so (a kernel that died before it replied) under a limit below FEW_FILES: its own
    line with the limit named as a possible cause. Otherwise None."""
    import resource  # noqa: PLC0415  (only after a failure)

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    said = f"{exc!r} {getattr(exc, 'evalue', '')} {getattr(kernel_stderr, 'text', '')}"
    if any(m in said for m in _EMFILE):
        limit = "" if soft == resource.RLIM_INFINITY else f" under a limit of {soft}"
        return (
            f"too many open files (EMFILE): the notebook's run ran out of file descriptors{limit} (ulimit -n): "
            "raise the limit (e.g. ulimit -n 1024) and run again"
        )
    if soft != resource.RLIM_INFINITY and soft < FEW_FILES:
        return (
            f"{_error_of(exc)} (the limit of open files is {soft}, ulimit -n: a notebook's run may need more; "
            "raise it, e.g. ulimit -n 1024, and run again)"
        )
    return None


FEW_FILES = (
    256  # open files (ulimit -n) below which a failed notebook names the limit: 09_bonnie failed at 48, ran at 96
)


@dataclass
class RunResult:
    notebook: str
    folder: Path
    executed: Path
    ok: bool
    error: str | None = None
    stage: Path | None = None  # where the run wrote, until its files are moved into ``folder`` (reportstage)
    stage_id: tuple[int, int] | None = None  # its (device, inode) when made: one made again at its path is not it
    moved: bool = False  # its folder moved away or removed while it ran: the page at ``folder`` is not its own
    folder_id: tuple[int, int] | None = None  # the folder's (device, inode) when the run made its stage in it


def run_notebooks(
    names: list[str] | None = None,
    params: dict[str, Any] | None = None,
    raw_params: dict[str, str] | None = None,
    out_dir: Path | None = None,
    plans: list[tuple[Path, dict[str, Any]]] | None = None,
    jobs: int | None = None,
) -> list[RunResult]:
    """Execute notebooks with papermill; every notebook's parameters are validated before any runs.

    Each run writes into its own report folder (``report_dir``, or ``out_dir``): executed/<nb>.ipynb,
    figures/<nb>/ and summaries/<nb>.json. A notebook that fails does not stop the others: its summary
    records the error, so the index shows it as failed, never with an older headline. ``jobs`` notebooks run at
    a time (default: one per CPU).
    """

    if plans is None:
        nbs = [resolve(n) for n in names] if names else list_notebooks()
        plans, notes = validate_each(nbs, params or {}, raw_params)
        for note in notes:  # a parameter of some of the notebooks: given to those, the others told
            say(note)
        unknown_study({**(params or {}), **(raw_params or {})})
    _claim_folders(plans, into=None if out_dir is None else Path(out_dir).resolve())
    if out_dir is None:
        for folder in report_folders():  # those of a build killed outright, in folders this run does not write
            reportstage.sweep(folder)
    n = max(1, min(jobs if jobs is not None else (os.cpu_count() or 1), len(plans)))
    results: list[RunResult] = []
    try:
        _run_all(plans, out_dir, n, results)
    except BaseException:  # stopped: no report is replaced, those of the last good run stay whole (reportstage)
        for r in results:
            reportstage.discard(r.stage)
        raise
    for r in results:  # every run's moves recorded first: a kill among them leaves them to the next sweep to end
        if r.stage is not None:
            try:
                reportstage.ready(r.stage, r.notebook)
            except FileNotFoundError:  # reliability-33 folders Low 1: its folder replaced (by a link) as it wrote
                if readcopies.identity(r.stage) == r.stage_id:
                    raise
                r.ok, r.error, r.moved, r.stage = False, _moved(r.folder), True, None  # left to that folder's sweep
    for r in results:
        if r.stage is not None:
            moved = readcopies.identity(r.stage) != r.stage_id  # reliability-27: its folder moved away while it ran
            if moved or not reportstage.commit(r.stage, r.folder, r.notebook):  # r-36 folders: or its name held none
                r.ok, r.error, r.moved = False, _moved(r.folder), True  # (its own writes may have made its path again)
                reportstage.discard(r.stage)  # a name only this run's stage has, wherever its folder is now
            r.stage = None
    return results


def _moved(folder: Path) -> str:
    """A run's report folder moved away or removed since the run claimed it: another run may have made a new one of
    that name, for another selection (`mv o o.moved` during `run --output o`: the run said `report: o/...`, exit 0,
    and the page there was another study's)."""
    return f"{folder} was moved or removed while the notebook ran: its report is not there"


def _run_all(plans: list[tuple[Path, dict[str, Any]]], out_dir: Path | None, n: int, results: list[RunResult]) -> None:
    """Run ``plans``, ``n`` at a time, appending each ended run's result to ``results`` in the plans' order."""
    if n == 1:
        for nb, p in plans:
            results.append(_run_one(nb, p, out_dir))
        return

    # each notebook in its own process (a kernel each): the environment variable that tells a notebook its
    # report folder and the stderr filter are per process. Ctrl-C is this process's to handle: it stops the
    # workers, which shut their kernels down.
    relay, out = Relay(), Relay(1)  # the workers' stderr and stdout: never the command's (store/workerio)
    try:
        pool = ProcessPoolExecutor(
            max_workers=n,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_notebook_worker_init,
            initargs=(os.getpid(), relay.fd, out.fd),
        )
        with stopped_at_the_end(pool):  # never hangs on a lost stop (pool_deaths.shut_down)
            try:
                futures = [pool.submit(_run_one, nb, p, out_dir) for nb, p in plans]
                for f in futures:
                    results.append(pool_result(f, pool, "it ran a notebook", _FEWER_NOTEBOOKS, out.check))
                    out.check()  # the lines of the workers lost their reader (| head -1): stopped as before the relay
            except BaseException as e:
                broken = isinstance(e, BrokenProcessPool) and not isinstance(e, FeederDied)  # no worker died
                died = worker_died(pool, "it ran a notebook", _FEWER_NOTEBOOKS) if broken else None
                for proc in list((getattr(pool, "_processes", None) or {}).values()):
                    proc.terminate()
                if died is not None:
                    raise died from e
                raise
    finally:
        out.close()
        relay.close()


SELECTION_FILE = paths.SELECTION_FILE
_FEWER_NOTEBOOKS = "run one notebook at a time (storagelab run NAME)"


def _claim_folders(plans: list[tuple[Path, dict[str, Any]]], into: Path | None = None) -> None:
    """Check, before anything runs, that no report would be replaced by another selection's (two in this run, or
    this run's and the one a folder already holds), and record each report's selection. A collision is a
    ParameterError, never a silent overwrite. A folder of reports/ holds one selection (SELECTION_FILE); ``into``,
    the folder every plan writes (``--output``: `run 01_vdev_scaling -p study A --output reports/B` put A's report in
    B's folder, under B's name in the index), holds one per notebook when it is outside reports/ (reliability-25:
    `run 07_explore -p study A --output o` then `-p study B --output o` replaced A's page with B's, exit 0; `run
    --output o` of every notebook, each with its own default study, is one run)."""
    claimed: dict[Path, dict[str, Any]] = {}
    for nb, p in plans:
        name, identity = _folder_and_identity(nb, p)
        marker = _selection_file(into or paths.REPORTS / name, nb)
        if claimed.setdefault(marker, identity) != identity:
            raise ParameterError(
                f"{_named(marker.parent)} would hold the reports of two selections, {_shown(claimed[marker])} and "
                f"{_shown(identity)}: run them one at a time with --output"
            )
    new: list[tuple[Path, dict[str, Any]]] = []
    ids: dict[Path, tuple[int, int] | None] = {}  # each folder as it was when its record was read (reliability-32)
    for marker, identity in claimed.items():
        ids[marker.parent] = readcopies.identity(marker.parent)
        held = _held(marker)
        for other in _other_markers(marker):  # the folder's record of the other kind (a folder moved in or out)
            theirs = _held(other)
            if theirs is not None and theirs != identity:
                held, marker = theirs, other
                break
        if held is not None and held != identity:
            raise ParameterError(
                f"{marker.parent} holds {_whose(marker)} of {_shown(held)}, not of {_shown(identity)}: "
                + ("give --output another folder" if into else "move that folder away, or run with --output")
            )
        if held is None:
            new.append((marker, identity))
    for marker, identity in new:  # only once every report is checked: a refused run records no selection
        marker.parent.mkdir(parents=True, exist_ok=True)
        with pinned.held(marker.parent) as here:  # written in the folder checked to hold none, or the one made
            if here is None or _held(here / marker.name) not in (None, identity):  # None: by the name (r-35)
                raise ParameterError(_replaced(marker.parent))
            _write_json(here / marker.name, identity)
            ids[marker.parent] = readcopies.identity(here)
    # reliability-32 (folders): `mv reports/A A.away; mv reports/B reports/A` once A's record was read and before its
    # identity was taken had A's runs claim B's folder and replace its pages (exit 0); each folder is taken as it was
    # when its record was read, and must still be under its name now
    for folder, was in ids.items():
        if readcopies.identity(folder) != was:
            raise ParameterError(_replaced(folder))
    _CLAIMED.clear()  # reliability-28: each folder as claimed, (device, inode), for its runs to check (_run_one)
    _CLAIMED.update(ids)


def _replaced(folder: Path) -> str:
    return f"{_named(folder)} was moved or replaced while its selection was checked: nothing ran; run again"


def _held(marker: Path) -> dict[str, Any] | None:
    """The selection ``marker`` records, or None: a new folder, one written before folders recorded theirs, or a
    record that is not one (`{}` in it: a traceback, KeyError 'selection', for every later run there)."""
    try:
        held = json.loads(pinned.read_text(marker))
    except (OSError, ValueError):
        return None
    ok = isinstance(held, dict) and isinstance(held.get("selection"), dict) and isinstance(held.get("parameters"), dict)
    return held if ok else None


def _other_markers(marker: Path) -> list[Path]:
    """The records of the other kind in ``marker``'s folder, which hold for its reports as well: a folder of
    reports/ moved out (`mv reports/A keep`) keeps its SELECTION_FILE, and `run 07_explore -p study B --output keep`
    replaced A's page, exit 0; a folder of another --output moved into reports/ keeps its notebooks' records, and
    a run of another selection there replaced theirs (reliability-25 reports)."""
    if marker.name != SELECTION_FILE:
        return [marker.parent / SELECTION_FILE]
    try:
        return sorted(marker.parent.glob(".selection.*.json"))
    except OSError:
        return []


def _selection_file(folder: Path, notebook: Path) -> Path:
    """Where ``folder`` records the selection of its reports: one file in a folder of reports/, one per notebook
    in another folder (``--output``)."""
    if _of_reports(folder):
        return folder / SELECTION_FILE
    return folder / f".selection.{notebook.stem}.json"


def _whose(marker: Path) -> str:
    """Whose reports ``marker`` records: the folder's, or one notebook's."""
    if marker.name == SELECTION_FILE:
        return "the reports"
    return marker.name.removeprefix(".selection.").removesuffix(".json") + "'s report"


def _named(folder: Path) -> str:
    """reports/NAME/ for a folder of reports/, else the folder as it is."""
    return f"reports/{folder.name}/" if _of_reports(folder) else str(folder)


def _of_reports(folder: Path) -> bool:
    """Whether ``folder`` is a report folder of reports/ (reports/NAME, through links too)."""
    return folder.resolve().parent == paths.REPORTS.resolve()


def _shown(identity: dict[str, Any]) -> str:
    sel = ", ".join(f"{k} {v!r}" for k, v in identity["selection"].items()) or "every study"
    other = ", ".join(f"{k}={v!r}" for k, v in identity["parameters"].items())
    return sel + (f" ({other})" if other else "")


def _notebook_worker_init(parent: int, relay: int | None = None, out: int | None = None) -> None:
    """A notebook worker leaves Ctrl-C to the build, and ends on SIGTERM: sent by the build when it stops
    (Ctrl-C), and by the kernel when the build dies, however it dies (PR_SET_PDEATHSIG). It holds none of the
    command's streams (its output goes through ``relay`` and ``out``) nor the report tree's lock: stuck on a stopped FUSE mount,
    a worker outlives the command, and with them kept the user's pipe open and every later build waiting
    (reliability-21-read, Medium 2)."""

    relayed_worker_init(parent, relay, out)
    if relay is not None:  # sys.stdout and sys.stderr on descriptors 1 and 2 (a copy of theirs is closed now)
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    reportlock.close_inherited()
    signal.signal(signal.SIGTERM, _end_notebook_worker)
    signal.signal(signal.SIGHUP, _end_notebook_worker)  # a closed terminal's SIGHUP to the group (reliability-32)
    die_with_parent(signal.SIGTERM, parent)
    _COMMITTER[:] = [parent]  # the build commits its runs' folders once this worker has ended (reportstage)


def _end_notebook_worker(signum, frame) -> None:
    """Kill this worker's kernel (and whatever it started) and exit at once. Never sys.exit: the pool's worker
    loop would take the SystemExit for the notebook's result and wait for the next notebook, for ever, holding
    the build's stdout (the reliability campaign's `build | tee` that never ended)."""

    kill_descendants()
    for folder in list(_KERNEL_DIRS) + list(_STAGES):
        shutil.rmtree(folder, ignore_errors=True)
    os._exit(128 + signum)


UNIX_SOCKET_PATH_MAX = 100  # bytes of a Unix socket's path (Linux: 108 with the final NUL; macOS: 104)


def _new_kernel_dir() -> str:
    """A new private folder (mkdtemp, 0700) for a kernel's Unix sockets, named with this process id (see
    sweep_kernel_dirs); in /tmp when $TMPDIR is too long a path for a socket ("File name too long")."""

    prefix = f"storagelab-kernel-{os.getpid()}-"
    folder = livefolders.mkdtemp_held(prefix)  # reliability-27: held, not judged by a pid another namespace reads
    if len(os.path.join(folder, "kernel-ipc-99").encode()) > UNIX_SOCKET_PATH_MAX:
        os.rmdir(folder)
        livefolders.release(folder)
        folder = livefolders.mkdtemp_held(prefix, "/tmp")
    return folder


def sweep_kernel_dirs() -> list[Path]:
    """Remove the kernel folders (see _kernel_manager) of storagelab processes that are gone: one killed outright
    (SIGKILL) could not remove its own. Only this user's; the folder's name holds its process id. Returns those
    removed."""

    places = {Path(tempfile.gettempdir()), Path("/tmp")}
    folders = (f for place in sorted(places) for f in place.glob("storagelab-kernel-*-*"))
    return [f for f in folders if reportstage.removed_if_orphaned(f, f.name.split("-")[2])]


_KERNEL_DIRS: list[str] = []  # the private folders of this process's running kernels (see _kernel_manager)
_STAGES: list[Path] = []  # the folders this process's running notebooks write into (see reportstage)
_COMMITTER: list[int] = []  # in a notebook worker: the build's pid, which names its runs' folders (reportstage)
_CLAIMED: dict[Path, tuple[int, int] | None] = {}  # each report folder the command claimed, as it was then


def _kernel_manager(folder: str):
    """A kernel manager class whose kernel talks over Unix sockets in ``folder`` (private: mkdtemp, 0700), with
    its connection file there too. TCP would need free ports, which jupyter_client finds by binding and
    releasing them before the kernel binds them again: two builds at once raced for them ("Address already in
    use", issue 28)."""

    from jupyter_client import AsyncKernelManager  # noqa: PLC0415  (heavy: only when a notebook runs)

    class IpcKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.transport = "ipc"
            self.connection_file = os.path.join(folder, "kernel.json")
            self.ip = os.path.join(folder, "kernel-ipc")

    return IpcKernelManager


def papermill_literal(path: Path) -> str:
    """``path`` as papermill reads it back: it formats both paths with the run's parameters (``str.format``), so a
    brace in a folder's name (`run --output '/root/o{study}'`) failed every run with "Missing parameter 'study'", and
    a parameter's name in braces sent the notebook elsewhere (reliability-24)."""
    return str(path).replace("{", "{{").replace("}", "}}")


def _run_one(nb: Path, p: dict[str, Any], out_dir: Path | None) -> RunResult:
    """Execute one notebook into its report folder (see run_notebooks)."""

    folder = Path(out_dir) if out_dir else report_dir(nb, p)
    # the run writes its executed notebook, figures, summary and raw excerpts into a folder of its own, moved into
    # the report folder when every run of the command has ended (reportstage): a build stopped or killed in its
    # notebooks leaves the reports as the last good build left them, figures and summaries included
    reportstage.sweep(folder)
    try:
        stage = reportstage.new(folder, nb.stem, _COMMITTER[0] if _COMMITTER else None)  # named by who commits it
    except FileNotFoundError:  # reliability-27: claimed (made) before the runs began, moved away since: not made again
        return RunResult(nb.stem, folder, folder / "executed" / nb.name, False, _moved(folder), moved=True)
    stage_id, folder_id = readcopies.identity(stage), readcopies.identity(stage / "..")
    if folder in _CLAIMED and folder_id != _CLAIMED[folder]:
        # reliability-28: the folder claimed was moved away and its name made another folder, or a link to one, since
        # (`ln -s thumper-x4500 reports/homelab-mergerfs` during a build put homelab's pages in thumper's folder)
        reportstage.discard(stage)
        return RunResult(nb.stem, folder, folder / "executed" / nb.name, False, _moved(folder), moved=True)
    import papermill as pm  # noqa: PLC0415  (3 s to import: only when a notebook runs)

    _STAGES.append(stage)
    dest = stage / "executed" / nb.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    summary = stage / "summaries" / f"{nb.stem}.json"
    shown = os.path.relpath(folder, paths.ROOT) if folder.is_relative_to(paths.ROOT) else str(folder)
    say(f"==> running {nb.name}" + (f" with {p}" if p else "") + f" -> {shown}/", sys.stdout)
    old = os.environ.get(REPORT_DIR_ENV)
    os.environ[REPORT_DIR_ENV] = str(stage)
    sweep_kernel_dirs()
    kernel_dir = _new_kernel_dir()
    _KERNEL_DIRS.append(kernel_dir)
    kernel_stderr = _StderrFilter()
    try:
        with kernel_stderr:
            pm.execute_notebook(
                papermill_literal(nb),
                papermill_literal(dest),
                parameters=p,
                cwd=str(paths.NOTEBOOKS),
                progress_bar=False,
                kernel_name="python3",
                log_output=False,
                kernel_manager_class=_kernel_manager(kernel_dir),
            )
        ok, error = True, None
    except Exception as e:  # noqa: BLE001 - any failure of one notebook is reported, the others still run
        ok, error = False, _out_of_files(e, kernel_stderr) or _error_of(e)
        say(f"    FAILED: {error}")
        failed = dict(notebook=nb.stem, title=nb.stem, answers="", study=p.get("study"), status="failed", error=error)
        try:
            _write_json(
                summary,
                failed | dict(headline={}, claims=[], written_at=datetime.now(UTC).isoformat(timespec="seconds")),
            )
        except FileNotFoundError:
            if readcopies.identity(stage) == stage_id:
                raise  # else: its folder moved away while it ran, said as such (run_notebooks); not made again
    except BaseException:  # Ctrl-C, SIGTERM/SIGHUP (SystemExit): nothing of this run is kept
        reportstage.discard(stage)
        # the command is stopping: nbclient's cell task, left with "DeadKernelError: Kernel died", is logged by
        # asyncio when it is collected at exit, after the command's one line (1 of 15 Ctrl-C under load, reliability-13)
        logging.getLogger("asyncio").disabled = True
        raise
    finally:
        shutil.rmtree(kernel_dir, ignore_errors=True)
        livefolders.release(kernel_dir)
        _KERNEL_DIRS.remove(kernel_dir)
        _STAGES.remove(stage)
        if old is None:
            os.environ.pop(REPORT_DIR_ENV, None)
        else:
            os.environ[REPORT_DIR_ENV] = old
    return RunResult(nb.stem, folder, folder / "executed" / nb.name, ok, error, stage, stage_id, folder_id=folder_id)


def build_plan(db_path: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """What `storagelab build` runs: every analysis notebook once per study it has something to say about.

    * a source study (papers/<study>/README.md): the notebooks its claims.csv names (the defaults among them) and
      those its data can feed (``analysis.relevance``);
    * any other study in the database (the user's own logs), and the files no study label covers:
      every analysis notebook, each saying what its data lack;
    * the notebooks without a study parameter (07_explore), or whose default is every study (10_disk_card), once.
    """
    from .analysis import open_db  # noqa: PLC0415  (duckdb/polars, 0.5 s: only when a build is planned)
    from .analysis.selection import UNLABELLED  # noqa: PLC0415  (pulls in duckdb/polars, 0.4 s: kept out of the CLI's start-up)
    from .claims import load_claims  # noqa: PLC0415  (polars, 0.4 s: only when a build is planned)

    nbs = {nb.stem: nb for nb in list_notebooks()}
    claims = load_claims()
    curated = {p.parent.name for p in paths.PAPERS.glob("*/README.md")}
    from .analysis.relevance import RELEVANT  # noqa: PLC0415  (duckdb/polars: only when a build is planned)
    from .analysis.selection import Selection  # noqa: PLC0415  (pulls in duckdb/polars, 0.4 s: kept out of the CLI's start-up)

    con = open_db(db_path)
    try:
        rows = con.execute(
            "SELECT DISTINCT coalesce(study, ?) FROM files WHERE duplicate_of IS NULL "
            "UNION SELECT study FROM duplicates WHERE study IS NOT NULL AND duplicate_of IS NULL ORDER BY 1",
            [UNLABELLED],
        ).fetchall()
        relevant = {
            study: {stem for stem, f in RELEVANT.items() if f(con, Selection(study=study))} for study in curated
        }
    finally:
        con.close()
    in_db = [r[0] for r in rows]
    plan: list[tuple[Path, dict[str, Any]]] = []
    seen = set()

    def add(stem, params):
        key = (stem, json.dumps(params, sort_keys=True))
        if stem in nbs and key not in seen:
            seen.add(key)
            plan.append((nbs[stem], params))

    studies = sorted(set(curated) | set(in_db), key=lambda s: (s == UNLABELLED, s))
    for stem, nb in nbs.items():
        if notebook_parameters(nb).get("study", "") == "":  # no study parameter, or every study by default (10)
            add(stem, {})
    for study in studies:
        if study in curated:
            named = set(claims.filter(claims["study"] == study)["notebook"].to_list())
            targets = sorted(named | relevant[study])
        else:
            targets = [s for s, nb in nbs.items() if "study" in notebook_parameters(nb)]
        for stem in targets:
            if stem not in nbs:  # named by a study's claims.csv, but not in notebooks/ (removed or renamed)
                continue
            default = notebook_parameters(nbs[stem]).get("study")
            add(stem, {} if study == default else {"study": study})
    return sorted(plan, key=lambda t: (report_dir(t[0], t[1]).name, t[0].stem))


def study_runs(plan: list[tuple[Path, dict[str, Any]]], study: str) -> list[tuple[Path, dict[str, Any]]]:
    """The runs of ``plan`` that `storagelab build --study STUDY` makes: those of ``study``, and those over every
    study (07_explore, 10_disk_card: they read its logs too). A ParameterError naming the plan's studies when it
    has no run of ``study``."""

    def of(nb: Path, p: dict[str, Any]) -> str | None:
        return _folder_and_identity(nb, p)[1]["selection"].get("study")

    named = sorted({s for nb, p in plan if (s := of(nb, p)) is not None})
    if study not in named:
        raise ParameterError(f"no study {study!r} in the build's plan (its studies: {', '.join(named) or 'none'})")
    return [(nb, p) for nb, p in plan if of(nb, p) in (study, None)]


def labelled_studies(db_path: Path | None = None, wait: float = 30.0) -> set[str]:
    """The study labels the database's files carry now."""
    from .analysis import open_db  # noqa: PLC0415  (duckdb/polars, 0.5 s: only when a build is planned)

    con = open_db(db_path, wait=wait)
    try:
        rows = con.execute(
            "SELECT study FROM files WHERE study IS NOT NULL UNION SELECT study FROM duplicates WHERE study IS NOT NULL"
        ).fetchall()
    finally:
        con.close()
    return {r[0] for r in rows}


def unknown_study(given: dict[str, Any]) -> None:
    """A ParameterError for a `-p study` that no file of the database is labelled with and no paper is (a typo ran
    every notebook on no data, exit 0, said only inside the reports: issue 26's campaigns, Low); a database that
    cannot be read now is left to the notebooks to say so."""
    study = given.get("study")
    if not isinstance(study, str) or study in ("", "(unlabelled)") or _is_paper(study):
        return
    db = Path(given["db_path"]) if given.get("db_path") else paths.DB
    try:
        studies = labelled_studies(db) if db.is_file() else None
    except Exception as e:  # noqa: BLE001 - held by an ingest, or not a database: the notebooks say it
        _ctrl_c_stops(e)
        studies = None
    if studies is not None and study not in studies:
        papers = {p.name for p in paths.PAPERS.iterdir() if p.is_dir()} if paths.PAPERS.is_dir() else set()
        labelled, shipped = ", ".join(sorted(studies)) or "none", ", ".join(sorted(papers)) or "none"
        raise ParameterError(
            f"-p study {study!r}: no file in {db} is labelled with this study, and no paper is "
            f"(studies labelled in it: {labelled}; papers: {shipped})"
        )


def _is_paper(study: str) -> bool:
    """Whether papers/<study>/ is a folder; a label no file name can hold (longer than the file system allows, a
    '/' or NUL in it) is no paper's."""
    try:
        return (paths.PAPERS / study).is_dir()
    except (OSError, ValueError):
        return False


def studies_without_files(plan: list[tuple[Path, dict[str, Any]]], studies: set[str]) -> list[str]:
    """The studies the build runs notebooks for (a paper's, papers/<study>/) whose logs folder data/raw/<study>/
    exists but whose files no file is labelled with (relabelled or removed). A paper's study that ships no logs
    (no data/raw/<study>/: its claims alone, as ars-zfs-vs-raid) is built as it always is, without a note."""
    named = {_folder_and_identity(nb, p)[1]["selection"].get("study") for nb, p in plan}
    return sorted(s for s in named if s and s not in studies and (paths.RAW / s).is_dir())


def recorded_db(folder: Path) -> str | None:
    """The database a report folder's reports were made from when it is not the default one (``-p db_path``)."""
    try:
        db = json.loads(pinned.read_text(folder / SELECTION_FILE))["parameters"].get("db_path")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return str(db) if db and Path(db).resolve() != paths.DB.resolve() else None


def _studies_of(db: str, cache: dict[str, set[str] | None]) -> set[str] | None:
    """The study labels of another database (None: it cannot be read now, e.g. ingest holds it)."""
    if db not in cache:
        try:
            cache[db] = labelled_studies(Path(db)) if Path(db).exists() else set()
        except Exception as e:  # noqa: BLE001 - a database that cannot be opened now: its folders are kept as they are
            _ctrl_c_stops(e)
            cache[db] = None
    return cache[db]


def stale_folders(plan: list[tuple[Path, dict[str, Any]]], studies: set[str]) -> list[tuple[Path, str]]:
    """Report folders under reports/ that this build does not fill, each with the study its record names (read once:
    reliability-36 folders, read again by the name for the note, a FIFO there had `build` wait for good), a study no
    file carries any more (relabelled or removed since the build or run that made them): not current, so left out of
    the index. A folder made from another database (``-p db_path``) is judged by that database's labels."""
    planned = {_folder_and_identity(nb, p)[0] for nb, p in plan}
    stale, others = [], {}
    for folder in report_folders():
        try:
            study = json.loads(pinned.read_text(folder / SELECTION_FILE))["selection"].get("study")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # no recorded selection: kept as it was
        db = recorded_db(folder)
        carried = studies if db is None else _studies_of(db, others)
        if folder.name not in planned and study and carried is not None and study not in carried:
            stale.append((folder, study))
    return stale


def stale_note(folder: Path, study: str) -> str:
    """The build's one line on a folder ``stale_folders`` leaves out of the index."""
    db = recorded_db(folder)
    why = (
        "which no file is labelled with now"
        if db is None
        else f"made from another database, {db}, "
        + ("which no file of it is labelled with now" if Path(db).exists() else "which does not exist now")
    )
    return f"note: {folder} holds reports of study {study!r}, {why}: left out of index.html (delete the folder if it is not needed)"


def left_out_of_index() -> set[str]:
    """The report folders that `report` and `run` leave out of the index, as the build does (``stale_folders``), each
    said in a line: `build` left reports/homelab-two/ out (its files relabelled homelab-three), and the next `report`
    or `run` listed it again, as current, with every number shown under two studies' names (reliability-25 reports).
    A paper's study is the build's to judge (its reports show its claims without data); with no database, or one that
    cannot be read at once (an ingest holds it), every folder is listed as before."""
    if not paths.DB.exists():
        return set()
    try:
        studies = labelled_studies(wait=0)
    except Exception as e:  # noqa: BLE001 - no index is worth a failed command: every folder listed, as before
        _ctrl_c_stops(e)  # r-34: Ctrl-C made 'Query interrupted' here: the report rendered on (35 s), no line
        return set()
    left = set()
    for folder, study in stale_folders([], studies):
        if not _is_paper(str(study)):
            say(stale_note(folder, study))
            left.add(folder.name)
    return left


def _ctrl_c_stops(e: BaseException) -> None:
    """KeyboardInterrupt for a Ctrl-C that DuckDB made an error while a database's study labels were read: the
    callers take any other error as "cannot be read now" and carry on (reliability-34 processes, Medium 2)."""
    from .database import stopped_by_ctrl_c  # noqa: PLC0415  (duckdb: only where a database was read)

    stopped_by_ctrl_c(e)
