"""``ingest``: the stages in order (see the package docstring), and the summary it returns."""

from __future__ import annotations

import gc
import math
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import duckdb
from tqdm import tqdm

from .. import ignore, paths
from ..manifest import LABEL_COLUMNS, Manifest, ManifestError, with_nested
from ..manifest import load as load_manifest
from ..ownership import SharedFolderError
from . import db, documents, faults, filestamps, labels, stream, writer
from .export import export_parquet, parquet_dir_for
from .listing import ListedFile, files_to_read, in_scope, key_for, pinned_key, printable, scopes
from .plan import Action, Plan, Rename, StoredCopy, StoredFile
from .worker import Outcome, error_text, parse_all

FILE_WARNINGS_KEPT = 100  # parser warnings the summary keeps as text (the command line shows 20)


@dataclass
class Summary:
    ingested: int = 0
    replaced: int = 0
    skipped: int = 0
    failed: int = 0
    rows: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    rebuilt_schema: bool = False
    duplicates: int = 0  # of the skipped: copies of a stored file (table duplicates)
    ignored: int = 0  # listed but matched by an ignore file (not read)
    ignore_files: list[str] = field(default_factory=list)
    removed: int = 0  # stored files gone from the listed folders: their rows deleted
    renamed: int = 0  # stored files found under another path (same SHA-256): rows kept, path changed
    relabelled: int = 0  # stored files (or copies) whose manifest labels changed, their rows untouched
    warnings: list[str] = field(default_factory=list)  # manifest rows with no file, files with no row, ...
    # 'path: line N: ...' of the files stored (all of them are in files.warnings): the first FILE_WARNINGS_KEPT, and
    # how many there were (a list of every one grew with the files: 100,000 files of a few warnings each)
    file_warnings: list[str] = field(default_factory=list)
    file_warning_count: int = 0
    parquet_error: str | None = None  # the Parquet export failed (the database is complete)

    def line(self) -> str:
        copies = f" ({self.duplicates} identical to another file)" if self.duplicates else ""
        moved = "".join(
            f", {n} {what}"
            for n, what in ((self.renamed, "renamed"), (self.removed, "removed"), (self.relabelled, "relabelled"))
            if n
        )
        ign = f", ignored {self.ignored} ({', '.join(self.ignore_files)})" if self.ignored else ""
        return (
            f"ingested {self.ingested} (of which {self.replaced} replaced), skipped {self.skipped} unchanged"
            f"{copies}{moved}{ign}, failed {self.failed}; {self.rows} rows in {self.seconds:.2f} s"
        )

    def failure(self, out: Outcome) -> None:
        self.failed += 1
        self.errors.append(error_text(out))


def _pinned(target: Path | str, raw: Path | None = None) -> Path | str:
    """A folder named through a symlink, as the folder it leads to now: the listing's keys, its scan, the reads and
    the removals' scope all take this one path. Reliability-34 (store): `ingest logs/cur` (cur -> A) with `ln -sfn B
    logs/cur` during it: the keys were A's and the scan B's (B's bytes held as A's files), or the listing A's and the
    scope B's (B's files removed as gone, or taken as renamed into A), exit 0. A file named is read in the folder its
    name's folder leads to now (its own name may be a symlink: read through, as listed). Under data/raw/ its ignore
    rules apply to the folder led to, as they apply to data/raw/ itself taken by ``pinned_raw``: a target named under
    data/raw/ is taken under ``raw``, the folder pinned_raw took (reliability-36: `ingest data/raw/sub` with data/raw
    re-pointed from A to B between the two: B/sub was not under A, so B's ignore file and manifest were not read)."""
    p = Path(target)
    named = Path(os.path.abspath(paths.RAW))
    if raw is not None and (given := Path(os.getcwd(), p).parts)[: len(named.parts)] == named.parts:
        if raw == named and os.path.islink(named):  # a real folder when taken, a link now: its name pins nothing
            raise faults.StoreError(f"{named}: a folder when the ingest started, a symlink now: run it again")
        if raw != named:  # not normalized: "sub/.." after data/raw/ is the kernel's, as in the name
            target = p = raw.joinpath(*given[len(named.parts) :])
    folder, name = (p, None) if p.is_dir() else (p.parent, p.name)
    real = folder.resolve()
    if real == Path(os.path.abspath(folder)) and ".." not in folder.parts:  # abspath drops "L/..": L may be a link
        return target
    return real if name is None else real / name


def _pinned_all(targets: Iterable[Path | str], raw: Path) -> list[Path | str]:
    """``_pinned`` of each target; a target not spelled under data/raw/'s own name (through a link to the project or
    to data/, `cd data/raw` first, ...) is resolved on its own, so data/raw/ must still lead where ``raw`` was taken:
    else refused in a line. Reliability-37 (store): `ingest /home/u/proj/data/raw/sub` (proj a link to the project)
    with data/raw re-pointed from A to B after pinned_raw: B/sub outside A, B's ignore file not read, its ``*.log``
    and ignored folder stored (and kept for good), exit 0 (hooked: b137df47 mapped only the name data/raw/...)."""
    targets = list(targets)
    out = [_pinned(t, raw) for t in targets]
    named = Path(os.path.abspath(paths.RAW)).parts
    if any(Path(os.getcwd(), t).parts[: len(named)] != named for t in targets) and pinned_raw() != raw:
        raise faults.StoreError(f"{paths.RAW}: re-pointed as the ingest started: run it again")
    return out


def pinned_raw() -> Path:
    """data/raw/ as the folder it is now: itself a symlink (to a mount, a dated folder), re-pointed during an ingest
    of it, it is read as the folder it led to at the start. Reliability-35 (store, High 4): `storagelab ingest` while
    `ln -sfn B data/raw` ran: the keys were A's and the scan B's, or the scope A's and the listing B's: a folder's
    present, unchanged files removed, or B's files taken as renamed into A, exit 0."""
    return Path(os.path.realpath(paths.RAW))


def pinned_input(input_path: str) -> tuple[str, Path]:
    """spark-ingest's INPUT made absolute when local (Spark's JVM runs in its own folder) and, named through a
    symlink, the folder it leads to now, as ``_pinned`` does for ingest (a ``file:`` URI stays one); and data/raw/ as
    pinned_raw took it for that pin, for the run's ignore matcher. Reliability-35 (store): `spark-ingest logs/cur DS`
    with `ln -sfn` flipping cur between A and B (same names and sizes): the keys resolved on the executors while the
    files were read by their names under cur, 18 of 38 files stored with the other folder's bytes, "0 failed", exit 0.
    Reliability-36: data/raw taken again by the matcher, seconds later: `spark-ingest data/raw/sub` with data/raw
    re-pointed from B to A between the two: B/sub outside A, B's ignore file not read (its ``*.log`` stored)."""
    u, raw = urlparse(input_path), pinned_raw()
    if u.scheme not in ("", "file"):
        return input_path, raw
    given = unquote(u.path) if u.scheme else os.path.abspath(input_path)  # a name may hold "%", "?" or "#"
    if not u.scheme and ".." in Path(input_path).parts:  # "L/.." is the kernel's (as ingest's), not abspath's
        given = os.path.join(os.getcwd(), input_path)
    pinned = str(_pinned_all([given], raw)[0])
    if u.scheme:
        return (input_path if pinned == given else Path(pinned).as_uri()), raw
    return pinned, raw


def ingest(
    targets: Iterable[Path | str] | None = None,
    *,
    db_path: Path | str | None = None,
    manifest_path: Path | str | None = None,
    parquet_dir: Path | str | None | bool = None,
    workers: int | None = None,
    batch_files: int = 5000,
    batch_rows: int = 100_000,
    wait: float = 0.0,
    progress: Callable[[int, int], None] | bool | None = None,
) -> Summary:
    """Ingest files and folders into the database (see the package docstring). ``parquet_dir``:
    None for the database's own folder (parquet_dir_for), False for none. A folder that is
    listed is mirrored: its stored files that are gone are removed (or renamed, by SHA-256).
    ``manifest_path`` None: the manifest.csv of the one folder listed, else data/raw/manifest.csv.
    Faults of the database or the disk raise StoreError; Ctrl-C raises KeyboardInterrupt, also when
    DuckDB swallowed it."""
    t0 = time.perf_counter()
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if batch_files < 1 or batch_rows < 1:
        raise ValueError(f"batch_files and batch_rows must be at least 1, got {batch_files}, {batch_rows}")
    if not (math.isfinite(wait) and wait >= 0):
        raise ValueError(f"wait must be a number of seconds >= 0, got {wait}")
    raw, named = pinned_raw(), bool(targets)
    targets = _pinned_all(targets, raw) if targets else [raw]
    db_file = Path(db_path or paths.DB)
    manifest = load_manifest(Path(manifest_path) if manifest_path else _default_manifest(targets, raw))
    summary = Summary()
    outside: list[str] = []
    clashes: list[str] = []
    unreadable: list[tuple[str, str, str]] = []
    own = _own_files(db_file, None if parquet_dir is False else Path(parquet_dir or parquet_dir_for(db_file)), targets)
    write_ups: list[ListedFile] = []
    clock = filestamps.clock_ns()  # before the stats: what their ctimes can vouch for (filestamps.settle)
    listing, ignored, summary.ignore_files = files_to_read(
        targets, own, outside, unreadable, clashes, write_ups, raw, pinned=True
    )
    listing = filestamps.settle(listing, clock)
    top = None if manifest_path else manifest
    folders = {Path(f.path).parent for f in (*listing, *ignored)}
    if top:  # the manifests of the files' subfolders too (a lab's DIR/lab/manifest.csv), ignored files' included
        manifest = with_nested(top, sorted(folders))
    if manifest.missing:
        summary.warnings.append(
            f"no manifest at {manifest.path}: the files under {manifest.root} are unlabelled"
            + (f" (except those under {', '.join(str(n.parent) for n in manifest.nested)})" if manifest.nested else "")
        )
    summary.warnings += [
        f"{printable(path)}: cannot read this folder ({why}): its files were not looked at (stored ones stay)"
        for _key, path, why in unreadable
        if not ignore.folder_ignored(path, targets, raw)
    ]
    summary.warnings += clashes
    summary.ignored = len(ignored)
    summary.warnings += outside[: labels.WARN_MAX] + (
        [f"{len(outside) - labels.WARN_MAX} more files not read (symlinks out of their folder, FIFOs, sockets)"]
        if len(outside) > labels.WARN_MAX
        else []
    )
    con = db.connect(db_file, wait=wait, wait_option="--wait")
    gc_was_enabled = gc.isenabled()
    try:
        with faults.CtrlC() as ctrl_c:
            if db.INGEST_MEMORY_MB:
                con.execute(f"SET memory_limit = '{db.INGEST_MEMORY_MB}MB'")
            gc.disable()  # the batches are many small objects without cycles: a collector pass only rescans them
            stream.remove_leftovers(db_file)
            run = _Run(con, db_file, manifest, summary, ctrl_c)
            run.top, run.folders = top, folders
            run.targets = _target_keys(targets, named=named)
            scope = scopes(targets, pinned=True)  # before a write: a pinned folder that leads elsewhere is refused
            # not looked at, so not gone: ignored files, and the files of folders that cannot be read
            run.unread = [key + "/" for key, _, _ in unreadable]
            run.kept = _kept({f.key for f in ignored}, run.unread, targets, raw)
            summary.rebuilt_schema = db.ensure_schema(con, run.code)
            filestamps.ensure(con)
            if said := documents.warning(documents.checked(con, write_ups, run.code)):  # new or changed .md only
                summary.warnings.append(said)
            faults.inject("schema-ready")
            writer.forget_errors(con, [f.key for f in ignored])  # an ignored file's old failure is not listed
            run.ingest(listing, scope, workers, batch_files, batch_rows, progress)
            if parquet_dir is not False:
                run.export(Path(parquet_dir) if parquet_dir else parquet_dir_for(db_file))
    except (duckdb.Error, OSError, RuntimeError) as e:
        if faults.interrupted(e):
            raise KeyboardInterrupt from None
        if isinstance(e, RuntimeError):
            raise
        raise faults.StoreError(faults.describe(db_file, e, opening=False)) from e
    finally:
        try:
            con.close()
        except duckdb.Error:  # pragma: no cover - a connection a disk fault invalidated
            pass
        if gc_was_enabled:
            gc.enable()
    summary.seconds = time.perf_counter() - t0
    return summary


def _target_keys(targets: list, *, named: bool) -> list[tuple[str, str]]:
    """(key, as named) of each target: a folder's key ends in "/" ("" for the project's root), a file's is its
    stored key; "as named" is its absolute path, or "" for the default folder (``named`` False)."""
    out = []
    for t in targets:
        p = Path(t)
        key = pinned_key(p) if p.is_dir() else key_for(p)
        if p.is_dir():
            key = "" if key == "." else key.rstrip("/") + "/"
        out.append((key, str(p.absolute()) if named else ""))
    return out


def _changes_stored(plan: Plan) -> bool:
    """Whether the run will change what the database holds for paths it already knows: a stored file or a copy read
    again (its rows replaced, or it becomes a copy, a failure, a stored file), a stored file or copy gone (removed,
    or renamed to a new path). Its writes are many transactions (a batch each, then the renames, removals and
    copies), and between two of them one content can be under two paths. A run that only adds new paths cannot mix:
    a first ingest, or the re-run of one that was stopped, stays readable after a stop."""
    if plan.gone or plan.gone_copies:
        return True
    return any(j.key in plan.stored or j.key in plan.copies for j in plan.jobs)


def _own_files(db_file: Path, parquet: Path | None, targets: list) -> Callable[[str], bool]:
    """Whether a listed file is the database's own (a database inside the folder it ingests): the database, its
    write-ahead log, its Parquet folder's files, a staging database of a huge file."""
    folder = os.path.realpath(db_file.parent)
    name = db_file.name
    mine = {os.path.join(folder, name), os.path.join(folder, name + ".wal")}
    pq = os.path.realpath(parquet) + os.sep if parquet else None
    real_dirs: dict[str, str] = {}  # a folder -> its real path: resolved once, not once per file

    def own(path: str) -> bool:
        if os.path.islink(path):
            real = os.path.realpath(path)
        else:
            parent, base = os.path.split(path)
            real_dir = real_dirs.get(parent)
            if real_dir is None:
                real_dir = real_dirs[parent] = os.path.realpath(parent or ".")
            real = os.path.join(real_dir, base)
        if real in mine or (pq and real.startswith(pq)):
            return True
        stage_folder = os.path.dirname(real)  # the staging database lives in a private folder beside it
        return os.path.dirname(stage_folder) == folder and os.path.basename(stage_folder).startswith(
            stream.STAGE_PREFIX + name
        )

    # a folder's listing holds no symlink to a file outside it (list_files): when no folder listed holds the
    # database's folder or its Parquet folder, only a file named itself can be one of them (10,000 files: 0.13 s
    # of realpath saved)
    roots = [os.path.join(os.path.realpath(t), "") for t in targets if os.path.isdir(t)]
    if not any(o.startswith(r) for r in roots for o in [os.path.join(folder, ""), pq or ""] if o):
        named = {str(Path(t)) for t in targets if not os.path.isdir(t)}
        return lambda path: path in named and own(path)
    return own


def _kept(keys: set[str], prefixes: list[str], targets: list, raw: Path) -> Callable[[str], bool]:
    """Whether a stored file that is not listed stays: it is one of ``keys``, under one of ``prefixes``, or a
    path the ignore files exclude (an ignored file that was deleted is not looked at either)."""

    ignored = ignore.path_matcher(targets, raw)

    def kept(key: str) -> bool:
        if key in keys or any(key.startswith(p) for p in prefixes):
            return True
        return ignored(key if key.startswith("/") else paths.ROOT / key)

    return kept


def _promote_copies(con, plan: Plan) -> dict[str, dict]:
    """A stored file that is gone while a copy of it (same bytes, in ``duplicates``) is still on disk: the copy
    becomes the stored file (a rename: the rows stay, the path and labels are the copy's), instead of its rows
    leaving with it and the other study losing them. Adds the renames to ``plan`` and takes the copies out of
    ``duplicates`` (``plan.gone_copies``); returns the copies' own labels by path."""
    if not plan.gone or not plan.copies:
        return {}
    labels_of: dict[str, dict] = {}
    label_sql = ", ".join(f'"{c}"' for c in LABEL_COLUMNS)
    # reliability-25: a copy this run read has been judged by its bytes (stored, a copy, a rename); promoted as well,
    # it was renamed onto the row just stored under its path: every later ingest of the tree failed with "Duplicate
    # key path" (same-size logs of one second, exchanged among two folders, one folder ingested between)
    read = {item.key for item in plan.jobs}
    for gone_key, gone in list(plan.gone.items()):
        for key, copy in plan.copies.items():
            # reliability-28: a path both stored and on record as a copy (a stopped run's mix: it stored the path and
            # was stopped before the copy's row left) is the stored file: promoted onto the gone one's rows as well, every
            # ingest that finished the stopped one failed with 'Duplicate key "path: ..."'
            if copy.same_as != gone_key or key in plan.gone_copies or key in read or key in plan.stored:
                continue
            if not filestamps.holds(key, plan.stamps.get(key), copy.sha256):
                continue  # changed since it was found a copy (or no stamp): the next ingest of its folder reads it
            row = con.execute(f"SELECT {label_sql} FROM duplicates WHERE path = ?", [key]).fetchall()
            labels_of[key] = dict(zip(LABEL_COLUMNS, row[0], strict=True)) if row else {}
            plan.renames.append(Rename(key, copy.size, copy.mtime_ns, gone.file_id, gone_key))
            plan.gone_copies.append(key)  # no longer a copy: the stored file
            del plan.gone[gone_key]
            break
    return labels_of


def _default_manifest(targets: list, raw: Path) -> Path:
    """data/raw/manifest.csv, or the manifest.csv in the one folder listed (logs kept outside
    data/raw/ are labelled by a manifest beside them, and by those of its subfolders: ``with_nested``). Several folders listed, some with a manifest.csv of
    their own: refused (only one manifest labels an ingest, and theirs would silently not be read)."""
    if len(targets) == 1 and Path(targets[0]).is_dir():
        folder = Path(targets[0])
        if (folder / "manifest.csv").is_file() or not (folder.resolve() == raw or raw in folder.resolve().parents):
            return folder / "manifest.csv"  # outside data/raw/ and without one: its files are unlabelled, said so
    own = [
        Path(t) / "manifest.csv"
        for t in targets
        if Path(t).is_dir() and (Path(t) / "manifest.csv").is_file() and Path(t).resolve() != raw
    ]
    if len(targets) > 1 and own:
        raise ManifestError(
            f"{len(targets)} folders listed, and {', '.join(map(str, own))} would not be read: one manifest labels "
            "an ingest; ingest each folder on its own (each with its manifest.csv), or name one with --manifest"
        )
    return raw / "manifest.csv"  # data/raw/'s (paths.MANIFEST), in the folder pinned_raw took


class _Run:
    """One ingest's stages on an open database."""

    def __init__(self, con, db_file: Path, manifest: Manifest, summary: Summary, ctrl_c: faults.CtrlC):
        self.con, self.db_file, self.manifest, self.summary, self.ctrl_c = con, db_file, manifest, summary, ctrl_c
        self.code = db.code_signature()
        self.labels_of = labels.labels_by_key(manifest)
        self.kept: Callable[[str], bool] = lambda key: False  # stored files not listed that are not gone
        self.top: Manifest | None = None  # the folder's own manifest when subfolders' ones are read too ...
        self.folders: set[Path] = set()  # ... from these folders (with_nested)
        self.targets: list[tuple[str, str]] = []  # (key, as named) of what is ingested: _target_keys
        self.unread: list[str] = []  # key prefixes of the folders that could not be read: their labels stay

    def ingest(self, listing: list[ListedFile], scope_list: list[str], workers, batch_files, batch_rows, progress):
        con, summary = self.con, self.summary
        versions = db.parser_versions(con, self.code)
        stored = {
            r[0]: StoredFile(*r[1:])
            for r in con.execute(
                "SELECT path, sha256, size_bytes, mtime_ns, file_id, tool, parser_version FROM files"
            ).fetchall()
        }
        copies = {
            r[0]: StoredCopy(*r[1:])
            for r in con.execute("SELECT path, sha256, size_bytes, mtime_ns, same_as FROM duplicates").fetchall()
        }
        self._nested_of_kept(listing, [*stored, *copies])
        plan = Plan.make(listing, stored, copies, versions, scope_list, self.kept, filestamps.load(con))
        summary.skipped += plan.skipped
        summary.duplicates += plan.skipped_copies
        if _changes_stored(plan):  # a stop from here on can leave a mix that counts wrong: readers refuse it
            db.mark_unfinished(con, self.targets)
        self._parse_and_write(plan, versions, workers, batch_files, batch_rows, progress)
        writer.touch(con, plan.touched)
        promoted = _promote_copies(con, plan)
        if plan.renames:
            writer.rename(con, plan.renames, {**self.labels_of, **promoted})
            summary.renamed = len(plan.renames) - len(promoted)
        summary.warnings += [
            f"{printable(r.old_key)} is gone: its copy {printable(r.key)} (same bytes) now holds its rows, with its own labels"
            for r in plan.renames
            if r.key in promoted
        ]
        faults.inject("before-removals")
        if plan.gone or plan.gone_copies:
            summary.removed = writer.remove(con, plan.gone, plan.gone_copies)
        if plan.found or plan.unique:
            writer.record_copies(con, plan.found, plan.unique, self.labels_of)
        faults.inject("before-labels")
        summary.relabelled = labels.apply_if_changed(con, self.manifest, self.unread)
        listed = {f.key for f in listing}
        # errors of files no longer in the listed folders are dropped; so are those of files skipped unread: their
        # stamps say they hold the bytes on record (reliability-29: a copy read again with its original hit an I/O
        # error, was skipped at the next ingest, and its error stayed beside its record for good)
        read = {j.key for j in plan.jobs}
        errors = [p for (p,) in con.execute("SELECT path FROM ingest_errors").fetchall()]
        writer.forget_errors(
            con,
            [p for p in errors if (p not in read if p in listed else scope_list and in_scope(p, scope_list))],
        )
        filestamps.save(con, plan.read)
        faults.inject("before-finished")
        run_keys = {k for k, _ in self.targets}
        dirs = [k for k in run_keys if not k or k.endswith("/")]
        covered = lambda key: key in run_keys or in_scope(key, dirs)  # noqa: E731
        if db.finishes_stopped(con, covered):  # what it did not look at can be as the stopped run left it
            if settled := writer.settle_stopped(con, covered, listed):
                summary.warnings.append(
                    f"{len(settled)} file(s) that this ingest did not look at (ignored, or in a folder it cannot "
                    "read) were left half-changed by the stopped ingest it finishes; settled from what the database "
                    f"holds, without reading them: {', '.join(map(printable, settled[:5]))}"
                    + (", ..." if len(settled) > 5 else "")
                )
        summary.warnings += [
            f"{printable(p)} was listed as a copy of {printable(old)}, which now holds other bytes: no longer listed "
            f"as a copy (its own bytes are not stored; ingest its folder to store them)"
            for p, old in writer.drop_stale_copies(con)
        ]
        db.finish_unfinished(con, covered)
        present = (
            listed | plan.stored.keys() | (plan.copies.keys() - set(plan.gone_copies)) | {r.key for r in plan.renames}
        )
        copy_of = {c.key: c.same_as for c in plan.found}
        copy_of.update(
            (k, v.same_as)
            for k, v in plan.copies.items()
            if k not in copy_of and k not in plan.unique and k not in plan.gone_copies
        )
        summary.warnings += labels.manifest_warnings(self.manifest, listing, present, scope_list, copy_of)
        summary.warnings += labels.copy_warnings(self.labels_of, copy_of)
        self.ctrl_c.check()

    def _nested_of_kept(self, listing: list[ListedFile], keys: list[str]) -> None:
        """The manifests of the folders of stored files that are not looked at (ignored, also when deleted since, or in
        a folder that cannot be read) are read too: such a file stays as it was, with the labels of its folder's
        manifest (before, ignoring a folder that has its own manifest.csv wiped its stored files' labels)."""
        if self.top is None:
            return
        listed = {f.key for f in listing}
        folders = {(paths.ROOT / k).parent for k in keys if k not in listed and self.kept(k)}
        if folders - self.folders:
            self.manifest = with_nested(self.top, sorted(self.folders | folders))
            self.labels_of = labels.labels_by_key(self.manifest)

    def _parse_and_write(self, plan: Plan, versions, workers, batch_files, batch_rows, progress) -> None:
        """Parse the plan's files and write the ones to store: the huge ones one at a time as they are
        parsed (``stream``), the others in batches of up to ``batch_files`` files or ``batch_rows`` rows."""
        huge = [j for j in plan.jobs if stream.wants_stream(j)]
        if huge:
            keys = {j.key for j in huge}
            jobs = [j for j in plan.jobs if j.key not in keys]
        else:
            jobs = plan.jobs
        bar = _progress(len(plan.jobs), progress)
        batches = _Batches(self, plan, batch_files, batch_rows)
        outcomes = parse_all(jobs, workers)
        # while the workers parse, they hold the cores: DuckDB's own threads only compete with them for the batches'
        # inserts (10,000 fio JSON files: 0.3 s less CPU in this process); the last batch, the export and the close
        # have the machine to themselves
        self.con.execute("SET threads = 1")
        try:
            for out in outcomes:
                bar(1)
                batches.take(out, versions)
        finally:
            outcomes.close()  # a pool's workers end here, also on an error or Ctrl-C
        self.con.execute("RESET threads")
        for job in huge:
            bar(1)
            out, how = stream.prepare(job)
            if how is None and out.error is None:  # a format that does not stream: parsed whole
                batches.take(_parsed_whole(job), versions)
                continue
            self.summary.bytes_read += out.size
            if not batches.decide(out, versions):
                continue
            batches.write()  # the files before it first: file ids in listing order
            if not stream.write_file(self.con, self.db_file, out, how, plan.stored, batches.next_id, self.labels_of):
                batches.add(_parsed_whole(job))  # not streamable after all
                continue
            if out.error:
                self.summary.failure(out)
            else:
                batches.next_id += 1
                batches.count([out])
            self.ctrl_c.check()
        batches.write()

    def export(self, out_dir: Path) -> None:
        """The Parquet copy of every table; not from a database that an earlier ingest of other paths left unfinished
        (it would copy the mix that every reader refuses: one content counted twice): the copy stays as it was."""
        stopped = db.unfinished_ingest(self.con, self.db_file)
        if stopped:
            self.summary.warnings.append(
                f"the Parquet copy in {out_dir} is not rewritten (it stays as it was): {stopped}"
            )
            return
        try:
            export_parquet(self.con, out_dir)
        except SharedFolderError as e:
            self.summary.parquet_error = f"Parquet export refused: {e} (the database is complete)"
        except (duckdb.Error, OSError) as e:
            if faults.interrupted(e):
                raise KeyboardInterrupt from None
            self.summary.parquet_error = (
                f"Parquet export to {out_dir} failed: {faults.describe(out_dir, e, opening=False)} "
                "(the database is complete; the next ingest rewrites the Parquet files)"
            )


def _parsed_whole(job: ListedFile) -> Outcome:
    return next(parse_all([job], 1))


class _Batches:
    """Parsed files on their way to the database, written in batches."""

    def __init__(self, run: _Run, plan: Plan, batch_files: int, batch_rows: int):
        self.run, self.plan, self.batch_files, self.batch_rows = run, plan, batch_files, batch_rows
        self.next_id = (run.con.execute("SELECT coalesce(max(file_id), 0) FROM files").fetchone()[0] or 0) + 1
        self.batch: list[Outcome] = []
        self.rows = 0

    def decide(self, out: Outcome, versions: dict) -> bool:
        """Whether a parsed (or hashed) file is to be stored; a failure is recorded, the others counted."""
        summary = self.run.summary
        if out.error:
            self.fail(out)
            return False
        action = self.plan.decide(
            out.key, out.size, out.mtime_ns, out.sha256, out.tool, versions.get(out.tool), out.ctime_ns
        )
        summary.skipped += action in (Action.UNCHANGED, Action.COPY)
        summary.duplicates += action is Action.COPY
        return action is Action.STORE

    def take(self, out: Outcome, versions: dict) -> None:
        self.run.summary.bytes_read += out.size
        if self.decide(out, versions):
            self.add(out)

    def fail(self, out: Outcome) -> None:
        """A file that failed: its error recorded. A stored file whose new bytes fail to parse loses the rows of
        its former bytes (the database mirrors the folder: they no longer describe the file); one that could
        not be read at all (an I/O error) keeps them."""
        self.run.summary.failure(out)
        writer.record_error(self.run.con, out)
        copy = self.plan.copies.get(out.key)
        if copy is not None and (out.error or {}).get("kind") != "io" and copy.sha256 != out.sha256:
            self.plan.unique.append(
                out.key
            )  # a former copy whose new bytes fail: no longer a copy (nor labelled as one)
        old = self.plan.stored.get(out.key)
        if old is not None and (out.error or {}).get("kind") != "io" and old.sha256 != out.sha256:
            writer.remove(self.run.con, {out.key: old}, [])
            del self.plan.stored[out.key]
            self.run.summary.warnings.append(
                f"{printable(out.key)}: its new content failed to parse (above); the rows of its former content "
                f"(SHA-256 {old.sha256[:16]}...) were removed"
            )

    def add(self, out: Outcome) -> None:
        if out.error:
            self.fail(out)
            return
        self.batch.append(out)
        self.rows += out.n_rows
        if len(self.batch) >= self.batch_files or self.rows >= self.batch_rows:
            self.write()

    def write(self) -> None:
        if not self.batch:
            return
        self.next_id, failed = writer.write_batch(
            self.run.con, self.batch, self.plan.stored, self.next_id, self.run.labels_of
        )
        for out in failed:
            self.run.summary.failure(out)
        self.count([out for out in self.batch if out.error is None])
        self.batch, self.rows = [], 0
        self.run.ctrl_c.check()

    def count(self, stored: list[Outcome]) -> None:
        summary = self.run.summary
        for out in stored:
            summary.ingested += 1
            summary.rows += out.n_rows
            summary.replaced += out.key in self.plan.stored
            if out.warnings:
                summary.file_warning_count += len(out.warnings)
                room = FILE_WARNINGS_KEPT - len(summary.file_warnings)
                summary.file_warnings += [f"{printable(out.key)}: {w}" for w in out.warnings[: max(room, 0)]]


def _progress(total: int, progress) -> Callable[[int], None]:
    if callable(progress):
        done = [0]

        def step(n: int) -> None:
            done[0] += n
            progress(done[0], total)

        return step
    if progress is False or total < 20:
        return lambda n: None

    bar = tqdm(total=total, unit="file", file=sys.stderr, mininterval=0.5, leave=False)
    return bar.update
