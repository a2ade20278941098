"""Whether ``storagelab run --output OUT`` may write into OUT: only when no other user can write there."""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from . import paths, readcopies, stopsignals
from .reportlock import LOCK


def refusal(out: Path) -> tuple[str | None, Path]:
    """Why ``run --output OUT`` is refused (``_refusal``), else None; and the folder the run writes to: OUT resolved
    once, when it was checked. A folder made for the check and refused is removed again (rmdir: only while empty).
    The run must write to that resolved folder, never to OUT again: a symlink in OUT's path that another user owns
    (/tmp/theirs -> a folder of root's) passed the check, was turned to a folder of theirs once the run started, and
    the executed notebook overwrote a root-only file through their symlinks (reliability-8)."""
    made = not out.exists()
    above = _missing_above(out)
    why, real = _refusal(out)
    if why:  # every folder made for the check, deepest first (a refused `--output new/a/b` left new/a/b behind)
        for folder in [real] * made + above:
            with suppress(OSError):
                folder.rmdir()
    return why, real


def _missing_above(out: Path) -> list[Path]:
    """The folders above OUT that ``mkdir(parents=True)`` makes, deepest first: those missing up to OUT's first "..".
    Past a "..", a name made missing may be a folder that exists by another path (`new/../theirs`), never removed."""
    try:
        parts = Path(os.path.join(os.getcwd(), out)).parts
    except OSError:  # a working folder removed: a relative OUT is not made either
        return []
    cut = parts.index("..") if ".." in parts else len(parts) - 1
    missing = []
    for n in range(cut, 1, -1):
        folder = Path(*parts[:n])
        if os.path.lexists(folder):
            break
        missing.append(folder)
    return missing


def _refusal(out: Path) -> tuple[str | None, Path]:
    """Why ``run --output OUT`` is refused when another user can write into OUT or a folder in it, else None.
    papermill and the report write there by names known in advance (executed/<notebook>.ipynb, <notebook>.html,
    .<name>.<pid>.tmp), following a symlink another user planted under such a name: as root, any file would be
    overwritten with the notebook (reliability-7). OUT is made first when missing, then checked: another user may
    have made it first in a shared parent such as /tmp."""
    from .ownership import foreign_link, movable_by_others, others_can_write, resolved  # noqa: PLC0415

    link = foreign_link(out)  # anywhere on its way, not only OUT itself: /tmp/theirs-link/rep too
    if link:
        return f"--output {out}: {link}, who could turn it once it is checked: give a folder of your own", out
    out.mkdir(parents=True, exist_ok=True)
    gone = foreign_link(out, strict=True)  # a link of theirs followed by the mkdir, or removed since (reliability-12)
    if gone:
        return f"--output {out}: {gone}, who could turn it once it is checked: give a folder of your own", out
    try:  # strictly: a name missing again was their link, and OUT unresolved would be theirs to make (reliability-12)
        real = resolved(out, strict=True)  # checked below, and the only path the run uses
    except OSError as e:
        return f"--output {out}: {e.strerror or e} once made (another user may have removed a link of theirs)", out
    for folder, _, _ in os.walk(real):  # its folders too: one of another user's would hold that user's symlinks
        st = os.stat(folder)
        owner = others_can_write(st, folder)
        if owner:
            return (
                f"--output {folder} {owner} (mode {stat.filemode(st.st_mode)}): another user could put a symlink "
                "there under a name the run writes (executed/<notebook>.ipynb, <notebook>.html), and have it "
                "overwrite any file you can write; give a folder of your own (e.g. a new folder under it)"
            ), real
    movable = movable_by_others(real)
    if movable:
        return (
            f"--output {out} {movable}, with symlinks under the names the run writes that would overwrite any file "
            "you can write; give a folder whose parent folders only you (or root) can change"
        ), real
    if steady := foreign_link(out, strict=True, steady=True):  # reliability-13: a folder and a link of theirs swapped
        return f"--output {out}: {steady}, who could swap it once it is checked: give a folder of your own", real
    return _not_a_report_folder(out, real), real


def _not_a_report_folder(out: Path, real: Path) -> str | None:
    """Why ``real`` (OUT resolved), a folder in reports/, is no report folder, else None. Only reports/NAME is
    rendered and indexed: `run --output reports/A/sub` (or reports/ itself, or reports/_x, which the index leaves
    out) ran, said "report: reports/A/sub/07_explore.html", exit 0, and no such page was ever written
    (reliability-25 reports)."""
    reports = paths.REPORTS.resolve()
    if not real.is_relative_to(reports) or (real.parent == reports and not real.name.startswith("_")):
        return None
    return (
        f"--output {out}: a folder in {paths.REPORTS} is rendered only as a report folder of its own, "
        f"{paths.REPORTS}/NAME (NAME not starting with '_'): give one, or a folder outside {paths.REPORTS}"
    )


def tree(own: Path | None) -> Path:
    """The report tree ``run`` holds while it writes: reports/ (``own`` None: --output inside it, or none), else
    ``own``'s parent when that is another clone's report tree (its writer lock there, this user's, in a folder of
    this user's that only they can write), else ``own``. A `run --output OTHER/reports/X` from another clone held
    X's lock while OTHER's build held reports/'s: both wrote X at once, and the run's sweep took the build's
    finished runs for a killed run's (reliability-14 Medium 3)."""
    if own is None:
        return paths.REPORTS
    try:
        lock, parent = os.lstat(own.parent / LOCK), os.lstat(own.parent)
    except OSError:
        return paths.REPORTS if _shows_reports(own) else own
    mine = lock.st_uid == parent.st_uid == os.getuid() and stat.S_ISREG(lock.st_mode) and stat.S_ISDIR(parent.st_mode)
    chosen = own.parent if mine and not parent.st_mode & 0o022 else own
    return paths.REPORTS if _shows_reports(chosen) else chosen


def _shows_reports(folder: Path) -> bool:
    """Whether ``folder`` is this clone's reports/ (or a folder in it) under another name that shares no inode with
    it: a FUSE view (bindfs) of reports/. `run --output VIEW/all` held VIEW's lock, which the build's lock on
    reports/ does not meet, and both wrote reports/all at once (reliability-16 Medium 2, reliability-17). A new file
    made in ``folder`` is looked for in reports/ and its folders, then removed."""
    name = f".storagelab-same-{os.getpid()}-{os.urandom(6).hex()}"
    try:
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return False  # not a folder this user can write: nothing to learn
    os.close(fd)
    try:
        return (paths.REPORTS / name).exists() or any(paths.REPORTS.glob(f"*/{name}"))
    finally:
        with suppress(OSError):
            os.unlink(folder / name)


def unused(out: Path) -> None:
    """OUT, made by ``refusal`` for a run that then refused its parameters: its lock file and the folder go, so a
    typo leaves no empty folder behind (the folder stays if anything else is in it)."""
    with suppress(OSError):
        (out / LOCK).unlink()  # none when the run waited for the report tree's lock instead (OUT inside reports/)
    with suppress(OSError):
        out.rmdir()


def removed_if_unused(out: Path, holding: Callable[[Callable[[], int]], int], work: Callable[[], int]) -> int:
    """``holding(work)`` for a run whose --output folder ``out`` it made: stopped while it waits for the report tree
    (Ctrl-C, SIGTERM from `timeout`, SIGHUP), before any notebook ran, the folder goes again (reliability-9 Low 4:
    an empty folder was left). Once the work starts, the signals are the system's again."""
    started = []

    def stop(signum, frame):
        stopsignals.line("run", signum)  # the one line of every command stopped by SIGTERM or SIGHUP
        raise SystemExit(128 + signum)

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}

    def begin() -> int:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        started.append(True)
        return work()

    try:
        return holding(begin)
    finally:
        if not started:
            unused(out)
            for sig, handler in old.items():
                signal.signal(sig, handler)


def report_lines(results: list, rendered: set | None = None) -> list[str]:
    """`run`'s closing lines, one per notebook run (``report.RunResult``), naming its page. None for a run whose folder
    was moved away or removed while it ran (reliability-28): `run 07_explore -p study A --output o` and `-p study B
    --output o` at once, o moved away meanwhile: A failed ("o was moved or removed while the notebook ran") and then
    said `report: o/07_explore.html (failed)`, the page there B's, of study B; and A rendered o's pages, B's, without
    holding o (its lock had moved with the folder). `run` renders nothing when every run's folder was moved."""
    lines = []
    for r in results:
        if not r.moved:
            shown = r.folder.relative_to(paths.ROOT) if r.folder.is_relative_to(paths.ROOT) else r.folder
            if moved_after(r, rendered):
                lines.append(f"report: not rendered: {shown} was moved or removed after {r.notebook} ran")
            else:
                lines.append(f"report: {shown}/{r.notebook}.html" + ("" if r.ok else " (failed)"))
    return lines


def moved_after(r, rendered: set | None = None) -> bool:
    """Whether the run's report folder was moved away or removed (or its name given to another) after the run put its
    notebook there: its page is not at the folder's name (reliability-31 folders, Low 3: `report: reports/A/x.html`,
    exit 0, for a page that was not there). ``rendered``: the folders the render took (render_reports), of which the
    run's must be one (reliability-33 folders, Low 3: A exchanged with B while rendered and back: B's pages were
    rendered, A's not, and `run` named A's page, exit 0)."""
    if r.folder_id is None:
        return False
    return readcopies.identity(r.folder) != r.folder_id or (rendered is not None and r.folder_id not in rendered)
