"""A notebook run writes into a private folder beside its report, and its report is replaced only once every run of
the command has ended: a build killed in its notebooks leaves the last good build's reports whole.

A run used to remove its report's summary and figures first and papermill rewrote the executed notebook cell by
cell in place, so a build killed (or stopped by Ctrl-C) in its notebooks left the old pages linking to figures that
were gone, the index saying "No summary", and half-executed notebooks the next ``report`` rendered (reliability-9
Low 6, reliability-11 Low 5, reliability-13). Now each run writes into ``<report folder>/.storagelab-run-<pid>-...``
(``mkdtemp``: 0700, a name no one else chose), and ``commit`` moves what it wrote into the report folder by renames:
figures and raw excerpts first, then the executed notebook, then the summary. A run that does not end (a signal, a
dead worker) leaves its folder to ``discard``, or, killed outright, to the next run's ``sweep`` (its pid is gone).

A folder is named by the process that commits it (the build, not its pool worker): a worker ends before the build
commits, and another command's sweep of the same folder took a finished run's folder for a killed one's in between
(reliability-14 Medium 3). Before the first move, ``commit`` writes what it will move into the folder (``READY``);
a command killed between its moves leaves that record, and the next ``sweep`` (or ``report``, ``finish``) ends the
moves instead of removing the folder: a killed commit no longer leaves a mixed report (new figures under an old
summary, or an old page linking to a figure removed) for ``report`` to render (reliability-14 Low 1).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from . import livefolders, paths, pinned
from .procs import alive

PREFIX = paths.RUN_STAGE_PREFIX
FIGURE_SUFFIXES = (".svg", ".png", ".vl.json")
READY = ".storagelab-ready.json"  # in a run folder whose moves have begun: what they are (see ``commit``)


def new(folder: Path, notebook: str, owner: int | None = None) -> Path:
    """A new private folder in the report folder ``folder`` for one run of ``notebook``, named by ``owner``: the
    process that will commit it (default: this one). ``folder`` is not made: gone, it was moved or removed since the
    run claimed it (FileNotFoundError; reliability-27)."""
    pid = owner or os.getpid()
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{pid}-{paths.slug(notebook)}-", dir=folder))


def sweep(folder: Path) -> list[Path]:
    """Remove the run folders in ``folder`` of processes that are gone (killed outright); this user's only. One
    whose moves had begun (``READY``) has them ended first."""
    try:
        stages = sorted(folder.glob(PREFIX + "*"), key=_started)
    except OSError:
        return []
    return [s for s in stages if removed_if_orphaned(s, s.name[len(PREFIX) :].split("-", 1)[0], finish=True)]


def _started(stage: Path) -> float:
    try:
        return stage.stat().st_mtime
    except OSError:
        return 0.0


def removed_if_orphaned(folder: Path, pid: str, finish: bool = False) -> bool:
    """Remove ``folder`` (a run's or a kernel's, named with the id ``pid`` of the process that made it) if it is this
    user's, a real folder, and that process is gone; whether it was. ``finish``: a run folder whose moves had begun
    has them ended (``commit``) instead."""
    try:
        mine = folder.is_dir() and not folder.is_symlink() and folder.stat().st_uid == os.getuid()
    except OSError:
        return False
    if mine and pid.isdigit() and not alive(int(pid)):
        with _unheld(folder) as free:
            return free and _remove_orphaned(folder, finish)
    return False


@contextmanager
def _unheld(folder: Path) -> Iterator[bool]:
    """Whether no live process holds ``folder`` (``livefolders``: a kernel's folder, whose name's pid may be of another
    pid namespace: another container's run sharing /tmp lost its kernel's folder, reliability-27), kept so meanwhile."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        yield False
        return
    try:
        yield livefolders.taken(fd)
    finally:
        os.close(fd)


def _remove_orphaned(folder: Path, finish: bool) -> bool:
    ready = _ready(folder) if finish else None
    if ready is None:
        shutil.rmtree(folder, ignore_errors=True)
        return True
    # reliability-32 (folders): the report folder renamed away and another put under its name after the rename below
    # had the moves go by the name into the other: its figures of that notebook removed (those this run did not
    # draw), its summary too (a run that wrote none), exit 0. The stage is held first, and its moves and its removal
    # go through that handle, as ``commit``'s; one renamed away before the rename is not found by its name (left)
    with pinned.held(folder) as here:
        if here is None:  # no folder under its name now (reliability-36 folders: ``commit``'s by-name moves): left
            return False
        taken = folder.with_name(f"{PREFIX}{os.getpid()}-finish-{folder.name[-8:]}")
        try:  # taken first, by a rename only one sweeper can make (two workers sweep one folder)
            os.rename(folder, taken)
        except OSError:
            return False
        stage, holder = (here, here / "..") if here != folder else (taken, taken.parent)
        with suppress(OSError):
            _move(stage, holder, ready)
        shutil.rmtree(holder / taken.name, ignore_errors=True)
    return True


def _ready(stage: Path) -> dict | None:
    """What a commit killed in its moves was moving (``READY``), or None: not begun, or not readable whole."""
    try:
        ready = json.loads(pinned.read_text(stage / READY))
    except (OSError, ValueError):
        return None
    ok = isinstance(ready, dict) and isinstance(ready.get("notebook"), str) and isinstance(ready.get("figures"), list)
    return ready if ok and _name(ready["notebook"]) else None


def _name(name: object) -> bool:
    """A file name of the record's: one name, no folder in it (nor a NUL: Python's ValueError, which the sweep's
    OSError guard let through, a traceback for every later command in the folder: reliability-16)."""
    return isinstance(name, str) and not ("/" in name or "\x00" in name or name in ("", ".", ".."))


def discard(stage: Path | None) -> None:
    if stage is not None:
        shutil.rmtree(stage, ignore_errors=True)


def ready(stage: Path, notebook: str) -> None:
    """Record in ``stage`` that its moves begin, and what they are (``READY``, written whole by a rename): from now
    on a command killed before ``commit`` ends leaves the moves to the next ``sweep``, not a mixed report."""
    if not stage.is_dir():  # swept by another command (it was taken for a killed run's): nothing to move
        return
    new_figs = stage / "figures" / paths.slug(notebook)
    made = sorted(f.name for f in new_figs.iterdir()) if new_figs.is_dir() else []
    record = dict(notebook=notebook, figures=made, summary=(stage / "summaries" / f"{notebook}.json").exists())
    part = stage / (READY + ".part")
    part.write_text(json.dumps(record))
    os.replace(part, stage / READY)


def commit(stage: Path, folder: Path, notebook: str) -> bool:
    """Move one ended run's files from ``stage`` into its report folder ``folder``: the notebook's figures replace
    its old ones (those it no longer draws are removed), raw excerpt pages are added, then the executed notebook and
    the summary replace theirs (a run that wrote no summary leaves none). Each file is replaced by a rename. A
    stage that is gone (another command's sweep) changes nothing: the report stays as it was. False: the stage could
    not be opened (its report folder's name held no folder at that moment), nothing moved."""
    if not stage.is_dir():
        return True
    # reliability-31 (folders): the folder renamed away and another put under its name after the caller's check of
    # the stage would have had this run's figures replace (and remove) the other's, by the name; through a handle of
    # the stage, its moves go into the folder that holds it, wherever that is now
    with pinned.held(stage) as here:
        if here is None:  # reliability-36 (folders): by the name, its removals went into the next folder put under it
            return False
        holder = here / ".." if here != stage else folder
        with pinned.named_in_errors({holder: folder}):
            record = _ready(here)
            if record is None:
                ready(here, notebook)
                record = _ready(here)
            if record is not None:
                _move(here, holder, record)
            shutil.rmtree(holder / stage.name, ignore_errors=True)
    return True


def finish(folder: Path) -> None:
    """End the moves of run folders in the report folder ``folder`` whose command was killed in them (``sweep``)."""
    sweep(folder)


def _move(stage: Path, folder: Path, record: dict) -> None:
    """The moves of ``commit``, as recorded in ``READY``: run again after a kill in them, they end the same."""
    notebook = record["notebook"]
    slug = paths.slug(notebook)
    new_figs, old_figs = stage / "figures" / slug, folder / "figures" / slug
    made = {n for n in record["figures"] if _name(n)}
    if old_figs.is_dir():
        for f in old_figs.iterdir():
            if f.is_file() and f.name.endswith(FIGURE_SUFFIXES) and f.name not in made:
                f.unlink()
    if made:
        old_figs.mkdir(parents=True, exist_ok=True)
        for name in sorted(made):
            if (new_figs / name).is_file():  # moved already by the commit that was killed
                os.replace(new_figs / name, old_figs / name)
    if (stage / "raw").is_dir():
        (folder / "raw").mkdir(exist_ok=True)
        for f in (stage / "raw").iterdir():
            os.replace(f, folder / "raw" / f.name)
    executed = stage / "executed" / f"{notebook}.ipynb"
    if executed.exists():
        (folder / "executed").mkdir(exist_ok=True)
        os.replace(executed, folder / "executed" / executed.name)
    summary = stage / "summaries" / f"{notebook}.json"
    if summary.exists():
        (folder / "summaries").mkdir(exist_ok=True)
        os.replace(summary, folder / "summaries" / summary.name)
    elif not record.get("summary"):
        (folder / "summaries" / summary.name).unlink(missing_ok=True)
