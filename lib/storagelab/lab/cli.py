"""The ``storagelab lab`` command line: its parser, the checks before a run, and ``main``."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import socket
import stat
import sys
from pathlib import Path

from .. import stdfds
from ..analysis.design import MIN_ELAPSED_S
from ..errors import DatabaseBusyError
from ..labhelp import SUBCOMMANDS
from ..ownership import resolved
from ..store import db as store_db
from ..store.faults import StoreError
from ..terminal import READER_GONE, say
from ..units import UnitError
from .bonnie import run_bonnie
from .fio import run_fio_auto, run_fio_matrix
from .manifest import default_out
from .outdir import foreign, movable_by_others, one_run_at_a_time, others_can_write
from .presets import PRESETS, _size_bytes, build_runs, fio_filename_refusal, plan_points
from .sweep import run_sweep, sweep_plan


def _depth_jobs(text: str) -> list[tuple[int, int]]:
    """'1x1,8x8' -> [(1, 1), (8, 8)] (iodepth x numjobs, each at least 1)."""
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*0*([1-9]\d*)\s*x\s*0*([1-9]\d*)\s*", part)
        if not m:
            raise argparse.ArgumentTypeError(f"{part!r}: expected IODEPTHxNUMJOBS, each at least 1, e.g. 8x8")
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def _rate(text: str) -> float:
    """'900MB/s' -> 9e8, '550MiB/s' -> 576716800.0, '900mb/s' -> 9e8, '123456B/s' -> 123456.0 (bytes per second).
    A number without a unit is refused: '900' is far more likely meant as MB/s than as bytes/s."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(?:([kKmMgGtT])?(i?)[bB](?:/s)?)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a rate with its unit, such as 900MB/s, 550MiB/s or 123456B/s"
        )
    value, prefix, binary = float(m.group(1)), (m.group(2) or "").upper(), m.group(3)
    power = " KMGT".index(prefix) if prefix else 0
    return value * (1024 if binary else 1000) ** power


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


FIO_RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite")


def _rw_modes(text: str) -> list[str]:
    """fio rw modes, comma separated, each one fio knows (checked before anything runs)."""
    modes = _csv(text)
    bad = [m for m in modes if m not in FIO_RW_MODES]
    if bad or not modes:
        raise argparse.ArgumentTypeError(
            f"{', '.join(bad) or repr(text)}: not an fio rw mode ({', '.join(FIO_RW_MODES)})"
        )
    return modes


def _fio_size(text: str) -> str:
    """A size in fio's syntax (4k, 512M, 64G), checked before anything runs; kept as written."""
    try:
        if _size_bytes(text) <= 0:
            raise UnitError("not above zero")
    except (UnitError, ValueError) as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size fio takes (e.g. 4k, 512M, 64G): {e}") from None
    return text


def _fio_sizes(text: str) -> list[str]:
    return [_fio_size(t) for t in _csv(text)]


def _repeat(text: str) -> int | str:
    """--repeat: a count, or 'auto'."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a count nor 'auto'") from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of at least 1")
    return value


LAB_EXIT_CODES = """\
exit codes:
  0    every run saved (and ingested)
  1    a run failed (its output is kept outside OUT, named in the messages) or a saved file failed to parse
  2    usage or environment error (bad option, missing tool, target or database; a busy database: the runs
       are saved, and re-running the same command ingests them)
  130  interrupted (Ctrl-C; 143 for SIGTERM): the running benchmark is discarded, the completed runs are kept
       and labelled, and re-running the same command resumes"""


_LAB_EXAMPLES = {
    "fio": """\
examples:
  storagelab lab fio --target /mnt/tank/scratch                      # the smoke preset: a few seconds
  storagelab lab fio --target /mnt/tank/scratch --preset ars-4k --repeat 3
  storagelab lab fio --target /mnt/tank/scratch --rw randread --bs 4k --depth-jobs 1x1,8x1,32x1 \\
      --size 4G --runtime 60 --device-limit 550MB/s
  storagelab lab fio --target /mnt/tank/scratch --preset ars-4k --dry-run   # print the fio commands
Without --preset the smoke preset is the plan; --rw, --bs, --depth-jobs, --size, --runtime and the log
options replace its parts. A re-run with the same options resumes: saved runs are skipped (and ingested
if they were not).""",
    "bonnie": """\
examples:
  storagelab lab bonnie --target /mnt/tank/scratch                   # file size 2 x RAM
  storagelab lab bonnie --target /mnt/tank/scratch --size 64G --files 0 --repeat 3""",
    "zfs-sweep": """\
examples:
  storagelab lab zfs-sweep --disks /dev/sdb,/dev/sdc                 # print the plan only
  storagelab lab zfs-sweep --disks /dev/sdb,/dev/sdc --yes           # DESTROYS the disks' contents""",
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="storagelab lab", description=("Measure your own disks. `storagelab lab` alone opens JupyterLab.")
    )
    sub = p.add_subparsers(dest="what", required=True)
    presets = "; ".join(f"{k}: {v.doc}" for k, v in PRESETS.items())

    f = sub.add_parser(
        "fio",
        help=SUBCOMMANDS["fio"],
        description=f"Presets - {presets}",
    )
    f.add_argument("--preset", default="smoke", choices=sorted(PRESETS), help="the plan to start from (default smoke)")
    f.add_argument("--target", required=True, help="directory to test (fio's files are created there and deleted)")
    f.add_argument("--out", default=None, help="where the outputs go (default data/raw/lab/<host>/<date>/)")
    f.add_argument("--db", default=None, help="database to ingest into (default data/parsed/storagelab.duckdb)")
    f.add_argument("--rw", type=_rw_modes, help="rw modes, comma separated (overrides the preset)")
    f.add_argument("--bs", type=_fio_sizes, help="block sizes, e.g. 4k,1M")
    f.add_argument("--depth-jobs", type=_depth_jobs, help="IODEPTHxNUMJOBS list, e.g. 1x1,8x8")
    f.add_argument("--size", type=_fio_size, help="file size per job (fio syntax, e.g. 4G)")
    f.add_argument("--runtime", type=_positive_int, help="seconds per run (at least 1)")
    f.add_argument("--direct", type=int, choices=(0, 1))
    f.add_argument("--ioengine", default="libaio")
    f.add_argument(
        "--filename", help="one file in --target shared by all jobs (a name, no folder; flagged when numjobs > 1)"
    )
    f.add_argument(
        "--device-limit",
        type=_rate,
        help="what the devices can deliver, e.g. 900MB/s or 550MiB/s: a faster "
        "run is flagged as cached (and the manifest's device_limit_bytes_per_s set)",
    )
    f.add_argument(
        "--log-avg-msec", type=_positive_int, help="log window, ms (default 500 = fio's bw/iops samples; smoke 250)"
    )
    f.add_argument("--log-hist-msec", type=_positive_int, help="histogram log interval, ms (default 1000; smoke 500)")
    f.add_argument(
        "--repeat",
        type=_repeat,
        default=1,
        help="runs of each matrix point (RUNID, RUNID-2, ...): repeats give the run-to-run noise comparisons need; "
        "'auto': repeat each point until its bandwidth's spread (sd/mean) is at most --repeat-tolerance, "
        "between --repeat-min and --repeat-max runs",
    )
    f.add_argument("--repeat-tolerance", type=float, default=5.0, help="--repeat auto: spread to reach, %% (default 5)")
    f.add_argument("--repeat-min", type=_positive_int, default=3, help="--repeat auto: runs at least (default 3)")
    f.add_argument("--repeat-max", type=_positive_int, default=10, help="--repeat auto: runs at most (default 10)")
    f.add_argument("--no-ingest", action="store_true")
    f.add_argument("--dry-run", action="store_true", help="print the fio commands only")

    b = sub.add_parser("bonnie", help=SUBCOMMANDS["bonnie"])
    b.add_argument("--target", required=True, help="directory to test (bonnie++ works in a folder of its own there)")
    b.add_argument("--out", default=None, help="where the outputs go (default data/raw/lab/<host>/<date>/)")
    b.add_argument("--db", default=None, help="database to ingest into (default data/parsed/storagelab.duckdb)")
    b.add_argument("--size", type=_fio_size, help="file size (e.g. 512M, 64G; default 2 x RAM)")
    b.add_argument(
        "--files", type=int, default=16, help="bonnie++ -n: file creation tests, in 1024s of files (0: none)"
    )
    b.add_argument("--repeat", type=int, default=1, help="runs of bonnie++ (bonnie-...txt, -2, -3 ...)")
    b.add_argument("--no-ingest", action="store_true")

    z = sub.add_parser(
        "zfs-sweep",
        help=SUBCOMMANDS["zfs-sweep"],
    )
    z.add_argument(
        "--disks", type=_csv, required=True, help="disks to DESTROY, comma separated (e.g. /dev/sdb,/dev/sdc)"
    )
    z.add_argument("--pool", default="labsweep")
    z.add_argument("--ashift", type=int, default=12)
    z.add_argument("--recordsizes", type=_csv, default=["4K", "128K", "1M"])
    z.add_argument("--size", type=_fio_size, help="file size per job (default: the presets')")
    z.add_argument("--runtime", type=_positive_int, help="seconds per run (default: the presets')")
    z.add_argument("--out", default=None)
    z.add_argument("--db", default=None)
    z.add_argument("--dry-run", action="store_true", help="print the commands (the default without --yes)")
    z.add_argument("--yes", action="store_true", help="really create and destroy pools on the named disks")
    for name, sub_parser in sub.choices.items():
        sub_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        sub_parser.epilog = _LAB_EXAMPLES[name] + "\n\n" + LAB_EXIT_CODES
    return p


_TARGET_WRITES = {
    "bonnie": "under the name of bonnie++'s work folder (.storagelab-bonnie)",
    "fio": "under the name of fio's test files (<run>.0.0)",
}
_OUT_WRITES = "under a name the lab or fio writes"


def _made_and_not_shared(target: Path, out: Path, what: str) -> bool:
    """--target and --out made (when missing, as this user), then checked: made first, so that another user who makes
    one of them first in a shared parent is seen. Called once every option is checked: a refused option leaves no
    folder behind."""
    return _not_shared(target, what, "--target", _TARGET_WRITES[what], make=True) and _not_shared(
        out, what, "--out", _OUT_WRITES, make=True
    )


def _target_ok(target: Path, what: str) -> bool:
    """A target folder that exists, or whose parent does (it is created there): a mistyped mount point whose
    parent is missing is refused rather than benchmarking whatever filesystem would hold it."""
    if target.is_dir() or (not target.exists() and target.parent.is_dir()):
        return _not_shared(target, what, "--target", _TARGET_WRITES[what])
    if target.exists():
        say(f"storagelab lab {what}: --target {target} is a file, not a folder: give the folder to test")
        return False
    why = "does not exist, nor does its parent folder (a mistyped mount point?)"
    say(f"storagelab lab {what}: --target {target} {why}; create it on the filesystem to test")
    return False


def _out_ok(out: Path, what: str) -> bool:
    """--out is a folder, or can be made one (not an existing file), and no other user can write into it: the lab and
    fio write there by names known in advance (``.<run>.txt.part``, fio's ``<run>_bw.1.log``), so a symlink another
    user planted under such a name was written through, as this user (root: any file; reliability-5)."""
    if out.exists() and not out.is_dir():
        say(f"storagelab lab {what}: --out {out} is a file, not a folder: give the folder for the outputs")
        return False
    return _not_shared(out, what, "--out", _OUT_WRITES)


def _theirs_said(args: argparse.Namespace, out: Path) -> bool:
    """A --target or --out that is itself a folder of another user's, said as _not_shared says it (what they could do
    there, and to give a folder of one's own) before the walk after it would name it only as a folder of theirs on the
    way (reliability-6's words kept where reliability-13's walk came first). True when said."""
    pairs = [("--out", out, _OUT_WRITES)]
    if getattr(args, "target", None) and args.what in _TARGET_WRITES:
        pairs.insert(0, ("--target", Path(args.target), _TARGET_WRITES[args.what]))
    for option, path, writes in pairs:
        try:
            st = path.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid not in (0, os.getuid()):
            if not _not_shared(path, args.what, option, writes):
                return True
    return False


def _made_where_resolved(folder: Path, what: str, option: str) -> bool:
    """``folder`` (resolved at the lab's start) made, and still resolving to itself: a free name on its way that
    another user made their symlink before the mkdir (which follows it) would have the checks pass on a folder of
    root's and fio write through their link, turned by then (reliability-9 High 3). Said when not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        real = resolved(folder, strict=True)  # missing again: a link of theirs removed since the mkdir
    except OSError as e:
        say(f"storagelab lab {what}: {option} {folder}: {e.strerror or e}")
        return False
    if real != folder:
        say(
            f"storagelab lab {what}: {option} {folder} led elsewhere once made ({real}): a symlink appeared on its "
            "way after the lab began, which another user could turn to a folder of theirs; give a folder of your own"
        )
        return False
    return True


def _not_shared(folder: Path, what: str, option: str, writes: str, make: bool = False) -> bool:
    """No other user can write into ``folder`` (missing: fine, unless ``make``: then it is made first): the lab and
    its tools write there by names known in advance, so a symlink another user planted under such a name was written
    through, as this user (root: any file; reliability-5 for --out; reliability-6 for --target, where fio wrote its
    test data into a root-only file)."""
    if make and not os.path.lexists(folder) and (movable := _movable(folder)):  # refused before anything is made
        return _said_movable(what, option, folder, movable, writes)
    if make and not _made_where_resolved(folder, what, option):
        return False
    try:
        st = folder.stat()
    except FileNotFoundError:
        return True
    except OSError as e:
        say(f"storagelab lab {what}: {option} {folder}: {e.strerror}")
        return False
    owner = others_can_write(st, folder)
    if owner:
        say(
            f"storagelab lab {what}: {option} {folder} {owner} (mode {stat.filemode(st.st_mode)}): another user could "
            f"put a symlink there {writes}, and have them overwrite any file you can "
            "write; give a folder of your own (e.g. a new folder under it)"
        )
        return False
    movable = movable_by_others(resolved(folder))
    return _said_movable(what, option, folder, movable, writes) if movable else True


def _movable(folder: Path) -> str | None:
    """``movable_by_others`` of a folder still to be made: a folder above it that another user can swap refuses it
    made or not, so it is not made (reliability-18: `lab fio --out /tmp/0777-of-root's/a/b` left root's a/b there,
    which no other user can remove). A name on its way changing as it is resolved: left to the checks after."""
    try:
        return movable_by_others(resolved(folder))
    except OSError:
        return None


def _said_movable(what: str, option: str, folder: Path, movable: str, writes: str) -> bool:
    say(
        f"storagelab lab {what}: {option} {folder} {movable}, with symlinks {writes} that would overwrite any "
        "file you can write; give a folder whose parent folders only you (or root) can change"
    )
    return False


def _db_ok(db: Path | None, what: str) -> bool:
    """The database the runs will be ingested into can be opened for writing (checked before any run: a run
    of minutes is not wasted on a mistyped --db). A database busy now is only said: a re-run ingests what
    this one could not."""
    try:
        store_db.connect(db).close()
    except DatabaseBusyError as e:
        say(f"storagelab lab {what}: note: {e}; the runs will be saved and ingested by a re-run")
    except StoreError as e:
        say(f"storagelab lab {what}: {e}")
        return False
    return True


def main(argv: list[str]) -> int:
    READER_GONE.clear()  # a reader gone is this command's own (an earlier command in this process said its own)
    p = parser()
    args, extra = p.parse_known_args(argv)
    if extra:  # named by the subcommand that was given them ('storagelab lab fio: error: ...')
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices[args.what].error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "dry_run", False) and (closed := stdfds.closed_stdout()):
        say(f"storagelab lab {args.what}: {closed}")  # the dry run's list is its result (reliability-17)
        return 2
    host = socket.gethostname()
    out = Path(args.out) if getattr(args, "out", None) else default_out(host)
    db = Path(args.db) if getattr(args, "db", None) else None
    given = [("--out", out), ("--db", db), ("--target", Path(getattr(args, "target", None) or "."))]
    if not getattr(args, "dry_run", False) and (why := next(filter(None, (foreign(o, p) for o, p in given)), None)):
        say(f"storagelab lab {args.what}: {why}")
        return 2
    out = resolved(out)  # resolved once: checked, then written (a path walked again may lead elsewhere by then)
    if getattr(args, "target", None):
        args.target = str(resolved(Path(args.target)))
    if not getattr(args, "dry_run", False) and _theirs_said(args, out):
        return 2
    # walked again once resolved: a folder and a link of the user's swapped (RENAME_EXCHANGE) passed the walk above
    # and resolved to a folder of root's of their choosing (reliability-13: 18 of 2000 tries)
    if not getattr(args, "dry_run", False) and (
        why := next(filter(None, (foreign(o, p, steady=True) for o, p in given)), None)
    ):
        say(f"storagelab lab {args.what}: {why}")
        return 2
    if args.what == "fio":
        return _main_fio(args, out, db)
    if args.what == "bonnie":
        return _main_bonnie(args, out, db)
    return _main_sweep(args, out, db)


def short_runs_note(preset: str, runs: list) -> str | None:
    """A warning before runs shorter than the design checks' minimum (05, 08 and 10 flag every one of them 'short'
    and compare none: the h6n trial's `--preset standard --repeat auto --runtime 2` made 80 such runs), or None; the
    smoke preset tests the plumbing and is short on purpose."""
    under = sorted({r.runtime_s for r in runs if r.runtime_s < MIN_ELAPSED_S})
    if preset == "smoke" or not under:
        return None
    return (
        f"storagelab lab fio: warning: --runtime {under[0]} s is under the {MIN_ELAPSED_S:g} s the reports' design "
        f"checks require: every run of these {len(runs)} tests will be flagged 'short', and the reports compare none "
        f"of them (--runtime {MIN_ELAPSED_S:g} or more measures a sustained rate)"
    )


def _main_fio(args: argparse.Namespace, out: Path, db: Path | None) -> int:
    if not args.dry_run and not shutil.which("fio"):
        say("storagelab lab fio: fio is not installed (Debian: apt-get install fio)")
        return 2
    target = Path(args.target)
    if args.filename and "/" in args.filename:  # fio puts it under --directory: /a/b would become TARGET/a/b
        say(
            f"storagelab lab fio: --filename {args.filename}: a file name inside --target, without a folder; "
            f"for a file elsewhere give its folder as --target (--target {Path(args.filename).parent} "
            f"--filename {Path(args.filename).name})"
        )
        return 2
    if args.filename and (why := fio_filename_refusal(args.filename)):
        say(f"storagelab lab fio: {why}")
        return 2
    if not args.dry_run and not (_target_ok(target, "fio") and _out_ok(out, "fio")):
        return 2
    if not args.dry_run and not args.no_ingest and not _db_ok(db, "fio"):
        return 2
    runs = build_runs(
        PRESETS[args.preset],
        target=target,
        out=out,
        rw=args.rw,
        bs=args.bs,
        depth_jobs=args.depth_jobs,
        size=args.size,
        runtime_s=args.runtime,
        direct=args.direct,
        ioengine=args.ioengine,
        filename=args.filename,
        log_avg_msec=args.log_avg_msec,
        log_hist_msec=args.log_hist_msec,
    )
    if not runs:
        say(
            f"storagelab lab fio: no test of the {args.preset} preset matches --rw/--bs/--depth-jobs "
            f"(its tests: {', '.join(f'{r} {b} {q}x{j}' for r, b, q, j in plan_points(PRESETS[args.preset]))})"
        )
        return 2
    auto = args.repeat == "auto"
    if not auto and args.repeat < 1:
        say("storagelab lab fio: --repeat must be 1 or more, or auto")
        return 2
    if auto and not (args.repeat_min <= args.repeat_max and args.repeat_tolerance > 0):
        say("storagelab lab fio: --repeat auto needs --repeat-min <= --repeat-max and --repeat-tolerance > 0")
        return 2
    small = sorted({(r.size, r.bs) for r in runs if _size_bytes(r.size) < _size_bytes(r.bs.split(",")[-1])})
    if small:  # fio would refuse each run after it started ("size too small")
        say(
            f"storagelab lab fio: --size {small[0][0]} is below the block size {small[0][1]}: each job's file must "
            "hold at least one block"
        )
        return 2
    short = short_runs_note(args.preset, runs)
    if short:
        say(short)
    if args.dry_run:
        for r in runs:
            say(shlex.join(r.argv), sys.stdout)
        if auto:
            say(
                f"# each {args.repeat_min} to {args.repeat_max} times, until its spread is at most "
                f"{args.repeat_tolerance:g} % (RUNID, RUNID-2, ...)"
            )
        elif args.repeat > 1:
            say(f"# each {args.repeat} times (RUNID, RUNID-2, ...)")
        return 0
    if not _made_and_not_shared(target, out, "fio"):
        return 2
    common = dict(target=target, shared_file=bool(args.filename), device_limit=args.device_limit)
    with one_run_at_a_time("fio", out) as refused:
        if refused:
            say(refused)
            return 2
        if auto:
            return run_fio_auto(
                runs,
                out=out,
                db=db,
                ingest=not args.no_ingest,
                tolerance_pct=args.repeat_tolerance,
                min_runs=args.repeat_min,
                max_runs=args.repeat_max,
                **common,
            )
        return run_fio_matrix(runs, out=out, db=db, ingest=not args.no_ingest, repeat=args.repeat, **common)


def _main_bonnie(args: argparse.Namespace, out: Path, db: Path | None) -> int:
    if not shutil.which("bonnie++"):
        say("storagelab lab bonnie: bonnie++ is not installed (Debian: apt-get install bonnie++)")
        return 2
    if args.repeat < 1:
        say("storagelab lab bonnie: --repeat must be 1 or more")
        return 2
    size = _size_bytes(args.size) if args.size else None
    if not (_target_ok(Path(args.target), "bonnie") and _out_ok(out, "bonnie")):
        return 2
    if not args.no_ingest and not _db_ok(db, "bonnie"):
        return 2
    if not _made_and_not_shared(Path(args.target), out, "bonnie"):
        return 2
    with one_run_at_a_time("bonnie", out) as refused:
        if refused:
            say(refused)
            return 2
        return run_bonnie(
            target=Path(args.target),
            out=out,
            size_bytes=size,
            db=db,
            files=args.files,
            ingest=not args.no_ingest,
            repeat=args.repeat,
        )


def _main_sweep(args: argparse.Namespace, out: Path, db: Path | None) -> int:
    plan = sweep_plan(
        args.disks,
        pool=args.pool,
        ashift=args.ashift,
        recordsizes=args.recordsizes,
        out=out / "zfs-sweep",
        size=args.size,
        runtime_s=args.runtime,
    )
    if args.dry_run or not args.yes:
        for item in plan:
            say(f"# {item['name']}", sys.stdout)
            for _kind, a in item["steps"]:
                say(shlex.join(a), sys.stdout)
        if not args.yes:
            say("# dry run: nothing was run. --yes runs it, destroying everything on " + ", ".join(args.disks))
        return 0
    for tool in ("zpool", "zfs", "fio"):
        if not shutil.which(tool):
            say(f"storagelab lab zfs-sweep: {tool} not found")
            return 2
    if not _not_shared(out / "zfs-sweep", "zfs-sweep", "--out", _OUT_WRITES, make=True):
        return 2
    return run_sweep(plan, pool=args.pool, ashift=args.ashift, db=db)
