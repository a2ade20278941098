"""A notebook run writes into a private folder beside its report, and its report is replaced only once every run of
the command has ended: a build killed in its notebooks leaves the last good build's reports whole.

A run used to remove its report's summary and figures first and papermill rewrote the executed notebook cell by
cell in place, so a build killed (or stopped by Ctrl-C) in its notebooks left the old pages linking to figures that
were gone, the index saying "No summary", and half-executed notebooks the next ``report`` rendered (reliability-9
Low 6, reliability-11 Low 5, reliability-13). Now each run writes into ``<report folder>/.storagelab-run-<pid>-...``
(``mkdtemp``: 0700, a name no one else chose), and ``commit`` moves what it wrote into the report folder by renames:
figures and raw excerpts first, then the executed notebook, then the summary. A run that does not end (a signal, a
dead worker) leaves its folder to ``discard``, or, killed outright, to the next run's ``sweep`` (its pid is gone).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from . import paths
from .procs import alive

PREFIX = ".storagelab-run-"
FIGURE_SUFFIXES = (".svg", ".png", ".vl.json")


def new(folder: Path, notebook: str) -> Path:
    """A new private folder in the report folder ``folder`` for one run of ``notebook``."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{paths.slug(notebook)}-", dir=folder))


def sweep(folder: Path) -> list[Path]:
    """Remove the run folders in ``folder`` of processes that are gone (killed outright); this user's only."""
    try:
        stages = list(folder.glob(PREFIX + "*"))
    except OSError:
        return []
    return [s for s in stages if removed_if_orphaned(s, s.name[len(PREFIX) :].split("-", 1)[0])]


def removed_if_orphaned(folder: Path, pid: str) -> bool:
    """Remove ``folder`` (a run's or a kernel's, named with the id ``pid`` of the process that made it) if it is this
    user's, a real folder, and that process is gone; whether it was."""
    try:
        mine = folder.is_dir() and not folder.is_symlink() and folder.stat().st_uid == os.getuid()
    except OSError:
        return False
    if mine and pid.isdigit() and not alive(int(pid)):
        shutil.rmtree(folder, ignore_errors=True)
        return True
    return False


def discard(stage: Path | None) -> None:
    if stage is not None:
        shutil.rmtree(stage, ignore_errors=True)


def commit(stage: Path, folder: Path, notebook: str) -> None:
    """Move one ended run's files from ``stage`` into its report folder ``folder``: the notebook's figures replace
    its old ones (those it no longer draws are removed), raw excerpt pages are added, then the executed notebook and
    the summary replace theirs (a run that wrote no summary leaves none). Each file is replaced by a rename."""
    slug = paths.slug(notebook)
    new_figs, old_figs = stage / "figures" / slug, folder / "figures" / slug
    made = {f.name for f in new_figs.iterdir()} if new_figs.is_dir() else set()
    if old_figs.is_dir():
        for f in old_figs.iterdir():
            if f.is_file() and f.name.endswith(FIGURE_SUFFIXES) and f.name not in made:
                f.unlink()
    if made:
        old_figs.mkdir(parents=True, exist_ok=True)
        for name in sorted(made):
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
    else:
        (folder / "summaries" / summary.name).unlink(missing_ok=True)
    shutil.rmtree(stage, ignore_errors=True)
