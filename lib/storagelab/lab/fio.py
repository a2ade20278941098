"""``storagelab lab fio``: the fio matrix (each run saved, labelled, checked against the devices, ingested)."""

from __future__ import annotations

import contextlib
import csv
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from .. import paths, procs
from ..devices import beyond_class
from ..errors import DatabaseBusyError, ParseError
from ..parsers import parse_bytes
from ..procs import die_with_parent
from ..repeat_auto import repeat_until_settled
from ..stopsignals import take_noted
from ..store import ingest
from ..terminal import READER_GONE, say, show, stop_if_reader_gone
from . import leftovers
from .manifest import _notes, append_manifest, manifest_for, manifest_row, sanity_flags
from .outdir import made_ours
from .presets import Run, _size_bytes
from .system import _cmd, describe_system, describe_target


def _dies_with_us():
    """A preexec_fn for a benchmark child: the kernel kills it when this process dies, however it dies (SIGKILL,
    the OOM killer), so no orphaned benchmark goes on writing into OUT after the lab is gone."""
    return partial(die_with_parent, signal.SIGKILL, os.getpid())


def _guard() -> subprocess.Popen:
    """A watcher that kills a process and its descendants when this process dies, however it dies; started
    before the benchmark (so it is ready when fio forks its jobs), then told the benchmark's pid with
    ``_guard_on``; ended with ``.kill()`` (SIGKILL: it does not fire) once the benchmark is over. It ignores
    Ctrl-C (the lab stops fio itself), and SIGTERM is blocked until its handler is set."""
    argv = [sys.executable, "-I", procs.__file__, str(os.getpid())]  # -I: the standard library only, quick to start
    # a session of its own: a signal to the lab's process group (kill -9 -PGID) must not reach the guard
    return subprocess.Popen(argv, stdin=subprocess.PIPE, preexec_fn=_guard_preexec, start_new_session=True)


def _guard_on(guard: subprocess.Popen, pid: int) -> None:
    try:
        guard.stdin.write(f"{pid}\n".encode())
        guard.stdin.close()
    except OSError:  # pragma: no cover - the guard is gone
        pass


def _guard_preexec() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # stays ignored through exec: no KeyboardInterrupt traceback
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    die_with_parent(signal.SIGTERM)


STOP_GRACE_S = 10.0  # seconds fio has to end after SIGTERM (Ctrl-C, kill) before it and its jobs are killed


KILLED_WAIT_S = 5.0  # how long a killed benchmark may take to end before the lab stops waiting for it


class StillInTheKernel(Exception):
    """The benchmark did not end KILLED_WAIT_S after SIGKILL: it waits in the kernel for a file system that does not
    answer (a FUSE mount over a stopped one: reliability-22), which no signal cuts short. The lab waited for it for
    ever, Ctrl-C and SIGTERM ignored: only kill -9 of the lab ended it. The target is not touched again."""


def _wait_for_fio(p: subprocess.Popen, stop: list[int], guard_pid: int | None = None) -> bytes:
    """fio's stderr once it has ended. Once the lab is told to stop (``stop``), fio gets STOP_GRACE_S to end:
    fio signalled during its start-up was seen to hang for ever (main in a futex wait, its job running on), and
    the lab with it; then fio and its jobs are killed. The jobs are found by parent (below fio) and by the guard's
    mark in their environment (``guard_pid``): a SIGHUP to the lab's group (a closed terminal) ended fio's main
    process and not its jobs, which, re-parented to init, held fio's stderr open, so the lab waited for ever and
    they ran on (reliability-6)."""
    stopped_at = killed_at = None
    while True:
        try:
            return p.communicate(timeout=0.5)[1] or b""
        except subprocess.TimeoutExpired:
            take_noted()  # a stop another thread took runs its handler here (stopsignals.take_noted)
            if killed_at is not None and time.monotonic() - killed_at > KILLED_WAIT_S:
                raise StillInTheKernel(
                    f"note: fio (pid {p.pid}) or its jobs still wait for a file system that does not answer, even "
                    "killed, and will end once it answers"
                ) from None
            if stop and stopped_at is None:
                stopped_at = time.monotonic()
            gone = stop and guard_pid and p.poll() is not None  # fio ended, its jobs hold the pipe: no grace
            if gone or (stopped_at is not None and time.monotonic() - stopped_at > STOP_GRACE_S):
                jobs = set(procs.descendants(p.pid))  # taken first: once its jobs die, fio (or a shell) may exit 0 on
                jobs.update(procs.guarded(guard_pid) if guard_pid else ())
                p.kill()  # its own before the kill reaches it, and once it is killed its jobs are no longer below it
                killed_at = killed_at or time.monotonic()
                for pid in jobs:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)


def _fmt_s(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")


def _ingest(files: list[Path], db: Path | None, manifest: Path) -> int:
    if not files:
        return 0

    db_path = Path(db) if db else paths.DB
    try:
        s = ingest([str(f) for f in files], db_path=db_path, manifest_path=manifest, progress=False)
    except DatabaseBusyError:
        say(
            f"storagelab lab: the runs are saved but not ingested: {db_path} is in use by another process; run this "
            "lab command again when it is free (it ingests the saved runs and runs nothing again)"
        )
        return 2
    say(f"ingest: {s.line()}", sys.stdout)
    for e in s.errors:
        say(f"error: {e}")
    if s.parquet_error:  # as the ingest says it (the lab said nothing: a refused Parquet folder went unnoticed)
        say(f"error: {s.parquet_error}")
    return 1 if s.failed or s.parquet_error else 0


def _test_files(target: Path | None, run_id: str) -> list[Path]:
    """fio's test files of the job ``run_id`` in ``target`` (``<name>.<job>.<file>``, or ``<name>.data`` shared by
    its jobs): a run stopped by a signal that reached fio too (a closed terminal: SIGHUP to the group) left them, as
    large as --size each (reliability-9 Low 3); fio unlinks them only when it ends on its own."""
    if target is None:
        return []
    pattern = re.escape(run_id) + r"(\.\d+\.\d+|\.data)"
    return sorted(p for p in target.glob(f"{glob.escape(run_id)}.*") if re.fullmatch(pattern, p.name) and p.is_file())


def _run_files(out: Path, run_id: str) -> list[Path]:
    return sorted(
        p
        for p in out.glob(f"{run_id}*")
        if p.name == f"{run_id}.txt"
        or re.fullmatch(re.escape(run_id) + r"_(bw|iops|lat|clat|slat|clat_hist)(\.\d+)?\.log", p.name)
    )


def saved_commands(manifest: Path) -> dict[str, str]:
    """path -> command of the manifest's rows (paths relative to the manifest's folder); {} without a manifest."""
    if not manifest.exists():
        return {}
    with open(manifest, newline="", encoding="utf-8") as fh:
        return {(r.get("path") or "").strip(): r.get("command") or "" for r in csv.DictReader(fh)}


def output_slots(
    stem: str, out: Path, saved: dict[str, str], repeat: int, command_of, tool: str, log=show, files_of=None
):
    """Where ``repeat`` outputs of one command go in OUT, and whether each is already saved: ``(id, done)`` for ids
    STEM, STEM-2, STEM-3 ... (output ``OUT/<id>.txt``); an id whose saved output was made by another command (its
    manifest row says) is skipped over; one whose output has no manifest row is run again (reliability-36: a lab
    killed outright between the output's rename and its rows left it so, and the re-run took it as saved: an
    unlabelled run ingested, exit 0), and so is one with a file of ``files_of(id)`` (its logs) that has none
    (reliability-37: killed in the middle of its rows). ``command_of(id)``: the command line that id's run would have."""
    root = manifest_for(out).parent.resolve()
    slots: list[tuple[str, bool]] = []
    k = 1
    while len(slots) < repeat:
        rid = stem if k == 1 else f"{stem}-{k}"
        output = out / f"{rid}.txt"
        k += 1
        if not output.exists():
            slots.append((rid, False))
            continue
        command = saved.get(output.resolve().relative_to(root).as_posix())
        if command is not None and files_of is not None:  # a log without its row: the run was not wholly saved
            output = next((f for f in files_of(rid) if f.resolve().relative_to(root).as_posix() not in saved), output)
        if command is None or output.name != f"{rid}.txt":  # not labelled: made again under this id (files rewritten)
            log(f"lab {tool}: {output.name} in {out} has no manifest row (a run stopped while it was saved): run again")
            slots.append((rid, False))
        elif command == command_of(rid):
            slots.append((rid, True))
        else:
            log(f"lab {tool}: {output.name} in {out} was made by another command: kept, this run gets the next id")
    return slots


def slot_labels(name: str, stem: str, ids: list[str]) -> dict[str, str]:
    """The labels of one command's runs, saved as ``ids`` (its slots, in order): ``name``, then ``name (run 2)``
    ..., the form the analyses take out to find repeats of one configuration (stacks.repeats). When the command's
    first id is not ``stem`` (a run of another command holds it: another target, size ...), its runs are
    ``name [ID]``, ``name [ID] (run 2)`` ...: not taken for repeats of that other command."""
    base = name if not ids or ids[0] == stem else f"{name} [{ids[0]}]"
    return {rid: base if k == 0 else f"{base} (run {k + 1})" for k, rid in enumerate(ids)}


def run_slots(run: Run, out: Path, saved: dict[str, str], repeat: int = 1, log=show) -> list[tuple[Run, bool]]:
    """``output_slots`` of one fio run: the run under each id (its name and logs follow the id)."""

    def named(rid: str) -> Run:
        return run if rid == run.run_id else run.renamed(rid, out)

    slots = output_slots(
        run.run_id,
        out,
        saved,
        repeat,
        lambda rid: shlex.join(named(rid).argv),
        "fio",
        log,
        lambda rid: _run_files(out, rid),
    )
    return [(named(rid), done) for rid, done in slots]


@dataclass
class _Matrix:
    """One ``run_fio_matrix`` call: where runs go, what they are checked against, and what has happened so far."""

    out: Path
    manifest: Path
    label_of: dict[str, str]  # run id -> label of its configuration
    system: dict
    tinfo: dict
    version: str | None
    labels: dict | None
    shared_file: bool
    device_limit: float | None
    log: Callable[[str], object]
    done_files: list[Path] = field(default_factory=list)
    spent: list[float] = field(default_factory=list)  # seconds each completed run took
    failed: list[str] = field(default_factory=list)
    failed_dir: list[Path] = field(default_factory=list)  # where failed runs' output is kept (made at the first)
    stop: list[int] = field(default_factory=list)  # Ctrl-C: the running fio is stopped and its run discarded
    current: list[subprocess.Popen] = field(default_factory=list)
    target: Path | None = None  # where fio's test files are (--directory)
    stop_said: bool = False  # the "interrupted: ..." line printed (by run_one, for the run it discarded)

    def on_signal(self, signum, frame) -> None:
        self.stop.append(signum)
        for proc in self.current:
            if proc.poll() is None:
                proc.terminate()

    def run_one(self, i: int, n: int, run: Run) -> None:
        """Run ``run`` (the ``i``-th of ``n``): save, label and list its files; discard it if stopped, keep its
        output outside OUT if fio failed."""
        est_each = (sum(self.spent) / len(self.spent)) if self.spent else run.runtime_s + 2
        left = n - i
        self.log(f"[{i}/{n}] {run.run_id}: {left} left after this, about {_fmt_s(est_each * (left + 1))} to go")
        if READER_GONE:  # the reader of its lines gone (| head -1): the runs so far kept, no more
            return
        flags = self.sanity(run)
        part = self.out / f".{run.run_id}.txt.part"  # hidden: an ingest skips it should this process be killed
        t0 = time.monotonic()
        if self.target is not None:  # a lab run killed outright leaves its test files: the next removes them
            leftovers.mark_fio(self.target, run.run_id)
        try:
            rc, err, target = *self.execute(run, part), self.target
        except StillInTheKernel as e:  # stopped: the target's test files are left to the next run's sweep
            self.log(str(e))
            rc, err, target = None, b"", None
            self.target = None  # and its mark (reliability-24: its removal at the end waited in the kernel for ever)
        if self.stop:  # fio may have stopped early and still written everything: not a complete run
            for f in _run_files(self.out, run.run_id) + [part] + _test_files(target, run.run_id):
                f.unlink(missing_ok=True)
            self.log(f"interrupted: {run.run_id} discarded; {i - 1} completed runs kept (a re-run resumes)")
            self.stop_said = True
        elif rc != 0:
            self.keep_failed(run, part, rc, err)
        elif why := cut_short(self.out, part):  # fio says nothing of a write it could not make: exit 0, a file cut
            self.keep_failed(run, part, rc, why.encode())
        else:
            part.rename(self.out / f"{run.run_id}.txt")
            self.spent.append(time.monotonic() - t0)
            try:
                self.save(run, flags)
            except OSError as e:  # the manifest could not be written (a full disk): the run is not kept half-labelled
                for f in _run_files(self.out, run.run_id):
                    f.unlink(missing_ok=True)
                self.log(f"  {run.run_id} not kept: {e.filename or self.manifest}: {e.strerror or e}")
                self.failed.append(run.run_id)

    def sanity(self, run: Run) -> list[str]:
        """The run's sanity flags before it runs (its size against RAM and caches, direct I/O, shared file), logged."""
        shared = self.shared_file or run.shared_file
        flags = sanity_flags(
            target_info=self.tinfo,
            direct=run.direct,
            total_bytes=_size_bytes(run.size) * (1 if shared else run.numjobs),
            ram=self.system["ram_bytes"],
            numjobs=run.numjobs,
            shared_file=shared,
            l2arc_bytes=self.tinfo.get("l2arc_bytes", 0),
            rw=run.rw,
        )
        for f in flags:
            self.log(f"  sanity: {f}")
        return flags

    def execute(self, run: Run, part: Path) -> tuple[int | None, bytes]:
        """fio's return code and stderr; its output written to ``part``."""
        with open(part, "wb") as fh:
            # fio and its job processes are killed by a guard should this process be killed outright
            guard = _guard()
            try:
                guarded = dict(os.environ, **{procs.GUARD_ENV: str(guard.pid)})  # inherited by fio's job processes
                p = subprocess.Popen(run.argv, stdout=fh, stderr=subprocess.PIPE, env=guarded)
                _guard_on(guard, p.pid)
                self.current[:] = [p]
                if self.stop:  # a stop that came while fio was started found no fio to end (the handler's)
                    p.terminate()
                err = _wait_for_fio(p, self.stop, guard.pid)
            finally:
                guard.kill()
                guard.wait()
            self.current.clear()
        return p.returncode, err

    def keep_failed(self, run: Run, part: Path, rc: int | None, err: bytes) -> None:
        """A failed run's output moved out of OUT (under data/raw/ every file needs a manifest row and must parse),
        into a folder of this call's own (mkdtemp: a new name, mode 0700): never a fixed path another user could
        plant a symlink at, which the lab (as root) would write through."""
        if not self.failed_dir:
            self.failed_dir.append(Path(tempfile.mkdtemp(prefix="storagelab-lab-failed-")))
        keep = self.failed_dir[0] / f"{run.run_id}.txt"
        shutil.move(str(part), keep)
        what = f"fio failed ({rc})" if rc else "not kept"
        self.log(f"  {what}, output kept in {keep}: {err.decode(errors='replace').strip()[-500:]}")
        self.failed.append(run.run_id)
        for f in _run_files(self.out, run.run_id):
            f.unlink(missing_ok=True)

    def save(self, run: Run, flags: list[str]) -> None:
        """A completed run's files (empty logs dropped) checked against the device limit and given manifest rows."""
        files = _run_files(self.out, run.run_id)
        empty = [f for f in files if f.stat().st_size == 0]
        for f in empty:  # e.g. slat with a synchronous ioengine: fio writes the file, with no line
            f.unlink()
        files = [f for f in files if f not in empty]
        output = self.out / f"{run.run_id}.txt"
        for f in cache_flags(output, self.device_limit, self.tinfo.get("devices"), _size_bytes(run.bs)):
            self.log(f"  sanity: {f}")
            flags.append(f)
        empties = {"empty logs not kept": ",".join(f.name for f in empty)} if empty else None
        notes = _notes(self.system, self.tinfo, self.version, flags, empties)
        limit = {"device_limit_bytes_per_s": self.device_limit} if self.device_limit else {}
        extra = {**limit, **(self.labels or {})}
        root, label = self.manifest.parent, self.label_of[run.run_id]
        rows = [manifest_row(f, root, label, self.system, self.tinfo, run.argv, notes, extra) for f in files]
        size = self.manifest.stat().st_size if self.manifest.exists() else None
        try:
            append_manifest(self.manifest, rows)
        except OSError:  # a row cut short by a full disk would make the whole manifest unreadable: as it was
            with contextlib.suppress(OSError):
                os.truncate(self.manifest, size) if size is not None else self.manifest.unlink()
            raise
        self.done_files.extend(files)


def cut_short(out: Path, part: Path, tool: str = "fio") -> str | None:
    """Why a run ``tool`` (fio, bonnie++) ended with 0 is not whole: its output does not read back as the tool's (its
    own writes to a full disk fail without a word: an empty or cut output, renamed into OUT; reliability-13, and
    bonnie++'s in reliability-14), or OUT's filesystem is full after it (fio's latency logs may be cut at a line)."""
    if os.statvfs(out).f_bfree == 0:
        what = "fio's output and logs" if tool == "fio" else f"{tool}'s output"
        return f"{out} is full: {what} may be cut short; free some space and run it again"
    try:
        parse_bytes(part.read_bytes(), str(part))
    except Exception as e:  # noqa: BLE001 - any reason it does not parse: the run is not kept
        return f"{tool}'s output does not read back whole ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
    return None


def run_fio_matrix(
    runs: list[Run],
    *,
    target: Path,
    out: Path,
    db: Path | None = None,
    labels: dict | None = None,
    ingest: bool = True,
    shared_file: bool = False,
    fio: str = "fio",
    device_limit: float | None = None,
    repeat: int = 1,
    log=show,
) -> int:
    """Run each fio command ``repeat`` times, save and label its files, ingest them. A run already saved in OUT
    with the same command is not run again (a re-run resumes); a saved run of the same id made with another command
    (other size, runtime, target ...) is kept, and this one is saved as ``RUNID-2`` (the next free id).
    ``device_limit``: what the devices can deliver, bytes/s; a run measured faster is flagged (cache)."""
    target.mkdir(parents=True, exist_ok=True)
    if why := made_ours("fio", out):  # made by another user since the command checked it
        say(why)
        return 2
    version = _cmd([fio, "--version"])
    system = describe_system()
    tinfo = describe_target(target)
    manifest = manifest_for(out)
    saved = saved_commands(manifest)
    planned = [(slot, done, r.run_id) for r in runs for slot, done in run_slots(r, out, saved, repeat, log=log)]
    todo = [r for r, done, _ in planned if not done]
    label_of: dict[str, str] = {}
    for stem in dict.fromkeys(stem for _, _, stem in planned):  # each command's slots, in order
        label_of.update(slot_labels(stem, stem, [r.run_id for r, _, s in planned if s == stem]))
    if len(todo) < len(planned):
        log(f"lab fio: {len(planned) - len(todo)} of {len(planned)} runs already saved in {out}: skipped (resume)")
    m = _Matrix(out, manifest, label_of, system, tinfo, version, labels, shared_file, device_limit, log, target=target)
    for line in leftovers.clean_fio(target, _test_files):  # those of a lab run killed outright (leftovers.py)
        log(line)
    started = time.monotonic()
    old_handler = _catch_stop_signals(m.on_signal)
    ran = 0
    try:
        for i, run in enumerate(todo, 1):
            if m.stop or READER_GONE:
                break
            m.run_one(i, len(todo), run)
            ran = i
    finally:
        _restore_signals(old_handler)
        if m.target is not None:  # not a target that does not answer (StillInTheKernel): the next run's sweep
            leftovers.unmark_fio(target)
    if m.stop and not m.stop_said:  # reliability-35: a stop between two runs said nothing (exit 143 alone), as bonnie
        log(f"interrupted: {ran} completed runs kept (a re-run resumes)")
    log(
        f"lab fio: {len(m.done_files)} files from {len(m.spent)} runs in {_fmt_s(time.monotonic() - started)}; "
        + (f"manifest {manifest}" if m.done_files else "nothing new to label")
    )
    # the new runs, and any saved before but not yet in the database (an ingest that failed or was stopped: a
    # re-run resumes it; the ingest skips the files it already has)
    kept = set(m.done_files)  # not a run's files left unlabelled by a kill, which this call did not reach
    saved_files = [
        f
        for slot, done, _ in planned
        if (out / f"{slot.run_id}.txt").exists() and (done or out / f"{slot.run_id}.txt" in kept)
        for f in _run_files(out, slot.run_id)
    ]
    stop_if_reader_gone()  # 141 and its line (cli), before the ingest: a re-run ingests what was saved
    rc = _ingest(saved_files, db, manifest) if ingest else 0
    if m.failed:
        log(f"lab fio: {len(m.failed)} runs failed: {', '.join(m.failed)}")
    return 128 + m.stop[0] if m.stop else (1 if m.failed else rc)  # 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP


def run_fio_auto(
    runs: list[Run],
    *,
    out: Path,
    db: Path | None,
    ingest: bool,
    tolerance_pct: float,
    min_runs: int,
    max_runs: int,
    log=show,
    **matrix,
) -> int:
    """``--repeat auto``: each run repeated until the spread of its bandwidth settles (``repeat_auto``), then the
    saved runs ingested once. ``matrix``: the other arguments of ``run_fio_matrix``."""
    by_id = {r.run_id: r for r in runs}
    manifest = manifest_for(out)

    def run_round(ids: list[str], k: int) -> int:
        return run_fio_matrix([by_id[i] for i in ids], out=out, db=db, ingest=False, repeat=k, log=log, **matrix)

    def outputs_of(rid: str, k: int) -> list[Path]:
        slots = run_slots(by_id[rid], out, saved_commands(manifest), k, log=lambda *_: None)
        return [out / f"{slot.run_id}.txt" for slot, _ in slots if (out / f"{slot.run_id}.txt").exists()]

    rc, states = repeat_until_settled(
        list(by_id),
        run_round=run_round,
        outputs_of=outputs_of,
        tolerance_pct=tolerance_pct,
        min_runs=min_runs,
        max_runs=max_runs,
        log=log,
    )
    if not ingest:
        return rc
    files = [f for s in states for p in outputs_of(s.run_id, s.n) for f in _run_files(out, p.name.removesuffix(".txt"))]
    ingest_rc = _ingest(files, db, manifest) if files else 0
    return rc or ingest_rc


def cache_flags(
    output: Path, device_limit: float | None, devices: list[dict] | None = None, bs_bytes: int | None = None
) -> list[str]:
    """Flags for directions of a saved fio output whose bandwidth exceeds what the devices can deliver: the
    typed ``device_limit`` (bytes/s), and without typing, the physical range of the devices' class (a rotational
    disk, SATA, NVMe ... ``devices.beyond_class``; a virtual disk is said to be one)."""
    if not device_limit and not devices:
        return []

    try:
        parsed, _ = parse_bytes(output.read_bytes(), str(output))
    except (ParseError, OSError) as e:
        return [f"could not read the run's output to check it against the device limit: {e}"]
    final = {r["job_index"] for r in parsed.rows("fio_jobs") if r.get("is_final", True)}
    bw: dict[str, float] = {}
    iops: dict[str, float] = {}
    for r in parsed.rows("fio_results"):
        if r["job_index"] in final and r.get("bw_bytes_per_s"):
            bw[r["direction"]] = bw.get(r["direction"], 0.0) + r["bw_bytes_per_s"]
            iops[r["direction"]] = iops.get(r["direction"], 0.0) + (r.get("iops") or 0.0)
    flags = [
        f"{d} at {v:.0f} B/s, faster than the devices can deliver ({device_limit:.0f} B/s): cache"
        for d, v in sorted(bw.items())
        if device_limit and v > device_limit
    ]
    if devices and not device_limit:  # a typed limit is the exact figure: the class's range only without one
        rw = {r.get("rw") for r in parsed.rows("fio_jobs")} - {None}
        random = any(str(m).startswith("rand") for m in rw)
        for d, v in sorted(bw.items()):
            mode = ("rand" if random else "") + d
            for f in beyond_class(devices, rw=mode, bs_bytes=bs_bytes, bw_bytes_per_s=v, iops=iops.get(d)):
                if f not in flags:
                    flags.append(f)
    return flags


def _catch_stop_signals(handler) -> dict:
    """Install ``handler`` for SIGINT, SIGTERM and SIGHUP (Ctrl-C, kill, a closed terminal: each stops the
    running benchmark and discards its partial output); the former handlers, for ``_restore_signals``.
    Main thread only; elsewhere the signals keep Python's defaults (and {} is returned). ``READER_GONE`` is not
    cleared here: a stdout that failed on a line said before the runs (the resume line, a leftover's, zfs-sweep's
    zpool line) was forgotten, and `lab fio >/dev/full` ran every run and ended 0 with its output lost
    (reliability-16); ``lab.cli.main`` clears it once per command."""
    try:  # not a signal the parent ignores (`nohup`: a lab run's SIGHUP at logout discarded its run, reliability-20)
        sigs = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) != signal.SIG_IGN]
        return {sig: signal.signal(sig, handler) for sig in sigs}
    except ValueError:
        return {}


def _restore_signals(old: dict) -> None:
    for sig, handler in old.items():
        signal.signal(sig, handler)
