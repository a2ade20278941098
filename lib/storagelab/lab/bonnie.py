"""``storagelab lab bonnie``: bonnie++ runs saved, labelled and ingested."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from functools import partial
from pathlib import Path

from ..stopsignals import take_noted
from ..terminal import READER_GONE, say, show, stop_if_reader_gone
from ..units import MiB
from . import leftovers
from .fio import (
    KILLED_WAIT_S,
    StillInTheKernel,
    _catch_stop_signals,
    _dies_with_us,
    _ingest,
    _restore_signals,
    cut_short,
    output_slots,
    saved_commands,
    slot_labels,
)
from .manifest import _notes, append_manifest, manifest_for, manifest_row, sanity_flags
from .outdir import made_ours
from .system import describe_system, describe_target


def run_bonnie(
    *,
    target: Path,
    out: Path,
    size_bytes: int | None,
    db: Path | None,
    files: int = 16,
    bonnie="bonnie++",
    ingest: bool = True,
    labels: dict | None = None,
    repeat: int = 1,
    log=show,
) -> int:
    """``repeat`` bonnie++ runs (file size 2 x RAM unless ``size_bytes``), saved as OUT/bonnie-<size>m-n<files>.txt,
    then -2, -3 ...; an output already saved by the same command counts (a re-run resumes), one made by another
    command (other target) is kept. Ctrl-C discards the running one and keeps, labels and ingests the others."""
    ram = (system := describe_system())["ram_bytes"]
    size = size_bytes or 2 * ram
    size_mib = max(1, size // MiB if size_bytes else -(-size // MiB))  # the default: 2 x RAM, rounded up to MiB
    # bonnie++ refuses a file size below twice the RAM it is told: tell it half the file size
    ram_mib = min(ram // MiB, size_mib // 2) or 1
    target.mkdir(parents=True, exist_ok=True)
    if why := made_ours("bonnie", out):  # made by another user since the command checked it
        say(why)
        return 2
    # bonnie++ works in a folder of its own under the target, removed after each run: a run killed mid-way
    # (Ctrl-C) leaves no Bonnie.NNNN file of twice the RAM behind
    work = target / ".storagelab-bonnie"
    for line in leftovers.clean(work):  # a Bonnie.NNNN a lab run killed outright (SIGKILL) left (leftovers.py)
        log(line)
    argv = [bonnie, "-d", str(work), "-s", str(size_mib), "-r", str(ram_mib), "-n", str(files), "-m", system["host"]]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv += ["-u", "root"]
    tinfo, flags = _target_and_flags(target, size_mib, ram)
    manifest = manifest_for(out)
    stem = f"bonnie-{size_mib}m-n{files}"
    slots = output_slots(stem, out, saved_commands(manifest), repeat, lambda _: shlex.join(argv), "bonnie", log)
    todo = [rid for rid, done in slots if not done]
    labels_of = slot_labels(f"bonnie++ {size_mib} MiB", stem, [rid for rid, _ in slots])
    if len(todo) < len(slots):
        log(f"lab bonnie: {len(slots) - len(todo)} of {len(slots)} runs already saved in {out}: skipped (resume)")
    for f in flags if todo else ():
        log(f"  sanity: {f}")
    saved: list[Path] = []
    rc = 0
    stop: list[int] = []
    running: list[subprocess.Popen] = []

    def on_signal(signum, frame):  # SIGTERM, SIGHUP, Ctrl-C: bonnie++ killed, its run discarded (see _run_bonnie)
        stop.append(signum)
        for p in running:
            p.kill()

    old_handlers = _catch_stop_signals(on_signal)
    try:
        for i, rid in enumerate(todo, 1):
            dest = out / f"{rid}.txt"
            if stop:
                log(f"interrupted: {len(saved)} completed runs kept (a re-run resumes)")
                rc = 128 + stop[0]
                break
            log(f"[{i}/{len(todo)}] lab bonnie: {shlex.join(argv)} > {dest.name}")
            if READER_GONE:  # the reader of its lines gone (| head -1): the runs so far kept, no more
                break
            part = out / f".{rid}.txt.part"  # hidden: an ingest skips it should this process be killed outright
            held, stuck = None, False
            try:
                held = leftovers.claim(work)  # several lab runs on one target share the folder (leftovers.py)
                with open(part, "wb") as fh:  # bonnie++ killed on a stop, and with this process however it dies
                    err = _run_bonnie(argv, fh, stop, running)
            except StillInTheKernel as e:  # the target does not answer: its folder is not touched again
                log(str(e))
                stuck, err = True, None
            finally:
                if held is not None and not stuck:
                    leftovers.release(work, held)  # removed when no other lab run is in it
            if stop:
                part.unlink(missing_ok=True)
                log(f"interrupted: {rid} discarded; {len(saved)} completed runs kept (a re-run resumes)")
                rc = 128 + stop[0]
                break
            if err is not None:
                log(f"bonnie++ failed ({err[0]}): {err[1].decode(errors='replace').strip()[-500:]}")
                part.unlink(missing_ok=True)
                rc = 1
                continue
            keep = partial(
                _keep_bonnie, part, dest, rid, labels_of, size_mib, system, tinfo, flags, argv, manifest, labels
            )
            if (kept := _saved_whole(part, dest, manifest, log, keep)) is None:
                rc = 1  # not whole, or not labelled: kept outside OUT (said)
                continue
            saved.append(kept)
        rc = _said_stop(stop, rc, len(saved), log)
    finally:
        _restore_signals(old_handlers)
    stop_if_reader_gone()  # 141 and its line (cli), before the ingest: a re-run ingests what was saved
    outputs = [out / f"{rid}.txt" for rid, done in slots if (done or out / f"{rid}.txt" in saved)]  # not unlabelled
    ingested = _ingest(outputs, db, manifest) if ingest else 0  # the new ones, and any saved but not yet ingested
    return rc or ingested


def _said_stop(stop: list[int], rc: int, kept: int, log) -> int:
    """``rc``, or 128 + the stop that came while the last run was saved, said (the loop reads a stop only before each
    run: reliability-36, `lab bonnie` given SIGHUP at its last run's rename ended 0 with no line)."""
    if stop and rc != 128 + stop[0]:
        log(f"interrupted: {kept} completed runs kept (a re-run resumes)")
        return 128 + stop[0]
    return rc


WAIT_S = 0.2  # seconds between two looks for a stop while bonnie++ runs


def _run_bonnie(argv: list[str], fh, stop: list[int], running: list[subprocess.Popen]) -> tuple[int, bytes] | None:
    """bonnie++ into ``fh``: None if it ended well, else (its exit code, its stderr). Killed when ``stop`` fills
    (the lab's handler kills it once it is in ``running``; a stop that came while it was started is read here). The
    handler raises nothing (reliability-17): it raised KeyboardInterrupt, and when the signal came while bonnie++
    was forked it ran inside a fork hook, where Python drops an exception, and the stop with it (the lab ran on)."""
    p = subprocess.Popen(argv, stdout=fh, stderr=subprocess.PIPE, preexec_fn=_dies_with_us())
    running.append(p)
    killed = None
    try:
        while True:
            if stop:
                p.kill()
                killed = killed or time.monotonic()
                if time.monotonic() - killed > KILLED_WAIT_S:
                    if p.stderr is not None:
                        p.stderr.close()
                    raise StillInTheKernel(
                        f"note: bonnie++ (pid {p.pid}) still waits for a file system that does not answer, even "
                        "killed, and will end once it answers"
                    )
            try:
                _, err = p.communicate(timeout=WAIT_S)
                break
            except subprocess.TimeoutExpired:  # a stop another thread took: its handler runs here (stopsignals)
                take_noted()
    except StillInTheKernel:
        raise
    except BaseException:
        p.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):  # never for ever: see StillInTheKernel
            p.wait(KILLED_WAIT_S)
        raise
    finally:
        running.clear()
    return None if p.returncode == 0 else (p.returncode, err)


def _target_and_flags(target: Path, size_mib: int, ram: int) -> tuple[dict, list[str]]:
    """The target's description and the run's sanity flags (a file size below 2 x RAM among them)."""
    tinfo = describe_target(target)
    flags = sanity_flags(
        target_info=tinfo,
        direct=0,
        total_bytes=size_mib * MiB,
        ram=ram,
        numjobs=1,
        shared_file=False,
        l2arc_bytes=tinfo.get("l2arc_bytes", 0),
        rw="readwrite",
    )
    if size_mib * MiB < 2 * ram:
        flags.append(f"bonnie++ file size {size_mib} MiB below 2 x RAM ({2 * ram // MiB} MiB), set with --size")
    return tinfo, flags


def _saved_whole(part: Path, dest: Path, manifest: Path, log, keep) -> Path | None:
    """A run bonnie++ ended with 0, saved by ``keep()`` if whole; None (said) when it is kept outside OUT instead.
    Reliability-14: bonnie++'s writes to a full OUT fail without a word (exit 0): its empty output was renamed into
    OUT, the manifest write failed (`[Errno 28]`, exit 2) and left it empty, and the re-run the help advises said
    "1 of 1 runs already saved: skipped (resume)", exit 0: the run lost, as saved."""
    if why := cut_short(dest.parent, part, "bonnie++"):
        failed = Path(tempfile.mkdtemp(prefix="storagelab-lab-failed-")) / dest.name  # a new name, 0700
        shutil.move(str(part), failed)
        log(f"  not kept, output kept in {failed}: {why}")
        return None
    try:
        return keep()
    except OSError as e:  # the manifest could not be written: the run is not kept unlabelled (a re-run runs it)
        dest.unlink(missing_ok=True)
        log(f"  {dest.stem} not kept: {e.filename or manifest}: {e.strerror or e}")
        return None


def _keep_bonnie(part, dest, rid, labels_of, size_mib, system, tinfo, flags, argv, manifest, labels) -> Path:
    """A finished bonnie++ run: its output under its name, its manifest row written."""
    part.rename(dest)
    version = None
    m = re.search(r"Version\s+([0-9][0-9.a-z]*)", dest.read_text(errors="replace"))
    if m:
        version = f"bonnie++ {m.group(1)}"
    notes = _notes(system, tinfo, version, flags, {"file_size_bytes": size_mib * MiB})
    label = labels_of[rid]
    row = manifest_row(dest, manifest.parent, label, system, tinfo, argv, notes, labels)
    size = manifest.stat().st_size if manifest.exists() else None
    try:
        append_manifest(manifest, [row])
    except OSError:  # a row cut short by a full disk would make the whole manifest unreadable: as it was
        with contextlib.suppress(OSError):
            os.truncate(manifest, size) if size is not None else manifest.unlink()
        raise
    return dest
