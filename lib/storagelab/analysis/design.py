"""Test-design checks on every fio run: whether a run could measure what it is used for. A compute step that
every analysis shares: ``check`` returns typed flags per run, ``with_design`` adds them to a runs frame
(``fio_runs.runs``), ``marker`` gives the short mark tables and charts show beside a flagged run, and
``sentences`` writes the findings from the flags alone.

The checks, each with its threshold (a parameter of ``check``/``with_design``):

* **overran** (a stall): the run's elapsed time (``fio_runs``' ``elapsed_ns``, the group's longest job) is more
  than ``OVERRUN_TOLERANCE`` (5 %) above its ``runtime`` option. fio stops issuing at ``runtime``; it finishes
  late only when I/O it had in flight did not complete (the homelab btrfs raid1 run: 76,061 ms against
  ``runtime=60``), or when it ends its write stage with a final fsync (``end_fsync=1`` or ``fsync_on_close=1``:
  fio's ``do_io`` calls it before the run's time is taken, so the time and the bandwidth include it). A run with
  a final fsync whose slowest I/O is no stall (``long_io`` False) overran by that fsync, not by a stall: it is
  ``final_fsync_over``, a note (``notes``), not a flag (the zfs_benchmark_tools sync_seq_write runs: 66,170 ms
  against ``runtime=60``, slowest write 37.7 ms). A run with no runtime limit (fio's default: until its size is
  done) cannot overrun.
* **long_io** (a stall): the slowest I/O's completion latency (clat max, lat max where fio printed no clat) is at
  least ``LONG_IO_SHARE`` (10 %) of the runtime (of the elapsed time where no runtime is known): one I/O waited a
  tenth of the test (the same run: clat max 44,735 ms, 74 % of 60 s).
* **too_short**: elapsed time under ``MIN_ELAPSED_S`` (5 s: shorter than ZFS's default transaction group
  interval, ``zfs_txg_timeout`` = 5 s, and than ten of fio's default 500 ms bandwidth samples); ``sub_second``
  under 1 s. Such a run measures start-up and caches, not a rate the device sustains.
* **fits_in_cache**: the working set (``size`` per job, x numjobs unless the jobs share one ``--filename``)
  fits in what can cache it (``cache_bound``): on ZFS, where the ARC statistics of the run's machine (its study and
  host: ``arc.with_arc_max``) print an ARC maximum, that ``c_max`` (+ L2ARC), cited by its line, since ZFS caches
  file data in the ARC, which stops there whatever the RAM (zfs-fuse's 100 MiB ARC in 23.5 GiB of RAM); where a
  machine's c_max changed over time, both values are said and a working set between them is not checkable;
  elsewhere, or where the filesystem is not labelled, the RAM (+ L2ARC) the run's labels give. Its I/O goes
  through a cache: buffered I/O anywhere, and
  ``direct=1`` where it does not bypass the cache. Both rules live in ``plausibility`` (``against_cache``,
  ``direct_bypasses_page_cache``), used here and nowhere else. Writes made durable as they go (``synced``:
  ``sync=1`` (O_SYNC), ``fsync=N`` or ``fdatasync=N``, or a sync section in the output) are never ``cache``: all
  they write reaches the device within the run, so the device's sync path bounds them, not RAM (the h6 fdatasync=1
  run on ext4: p50 3.19 ms per fdatasync for a 16 MiB file in 23.5 GiB of RAM); ``notes`` says so where the
  working set would fit. A ZFS dataset labelled ``zfs_sync=disabled`` makes those calls no-ops: no credit there.
  Direct I/O that bypasses the cache and synced writes need no RAM: their check is False, not None.
* **direct_ignored**: ``direct=1`` on a filesystem that ignores it (ZFS before 2.3: the ARC still serves it;
  ``plausibility.direct_ignored``).

A check that cannot be made (runtime, size or RAM not in the logs or labels) is None, never False, and
``unknown`` names it.

* **arc_served**: the ARC hit ratio measured during the run (column ``arc_hit_ratio`` of ``fio_runs.runs``, from
  ``arc.with_arc``: arcstat during the run, or arcstats snapshots before and after it) is at least
  ``ARC_HIT_FLAG`` (0.5): the ARC answered most reads from RAM, whatever the size arithmetic says. The sentence
  gives the ratio and its source (``arc_source``). A single snapshot's ratio is since boot, not the run's: it is
  never a flag (``arc.notes`` reports it). No ratio: None.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields

import polars as pl
from polars.datatypes import DataTypeClass

from . import arc, plausibility, prose
from .arc import ARC_HIT_FLAG
from .fio_runs import parse_command
from .result import Finding, cite, lines_of

OVERRUN_TOLERANCE = 0.05
LONG_IO_SHARE = 0.10
MIN_ELAPSED_S = 5.0

# the short name of each flag, in the order a marker lists them
CODES = {
    "overran": "overran",
    "long_io": "stall",
    "sub_second": "sub-second",
    "too_short": "short",
    "fits_in_cache": "cache",
    "arc_served": "ARC",
    "direct_ignored": "direct ignored",
}
MARK = "⚠"
# fio's sync= values that open the file O_SYNC (1, sync) or O_DSYNC (dsync): every write returns once durable
O_SYNC_VALUES = {"1": "O_SYNC", "true": "O_SYNC", "sync": "O_SYNC", "dsync": "O_DSYNC"}
# options that end a job's write stage with an fsync of its files, timed as part of the run (fio's do_io)
FINAL_FSYNC_OPTIONS = ("end_fsync", "fsync_on_close")
_ON = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class DesignFlags:
    """The design checks of one run: the numbers they read (seconds, bytes) and each flag (None: not checkable)."""

    elapsed_s: float | None
    runtime_s: float | None
    slowest_io_s: float | None
    working_set_bytes: float | None
    cache_bytes: float | None
    overran: bool | None
    long_io: bool | None
    too_short: bool | None
    sub_second: bool | None
    fits_in_cache: bool | None
    direct_ignored: bool | None
    arc_served: bool | None = None
    arc_hit_ratio: float | None = None  # the ARC's hits over reads during the run (arc.with_arc)
    arc_source: str | None = None  # how it was measured: 'arcstat, 60 samples, hits and misses summed'
    synced: str | None = None  # how its writes are made durable as they go: 'fdatasync=1', 'sync=1 (O_SYNC)'
    final_fsync: str | None = None  # 'end_fsync=1' / 'fsync_on_close=1' on a run that writes
    final_fsync_over: bool | None = None  # overran, by its final fsync and not by a slow I/O (a note, not a flag)
    # what bounds the cache (``cache_bound``): 'of RAM (+ L2ARC)', or on ZFS the ARC maximum and the line it is on
    cache_where: str | None = None
    cache_high_bytes: float | None = None  # the highest ARC maximum where the machine's c_max changed over time
    cache_lines: str | None = None  # JSON: the c_max lines (path, sha256, line_start, line_end, c_max_bytes)

    @property
    def overrun_ratio(self) -> float | None:
        """elapsed / runtime."""
        return self.elapsed_s / self.runtime_s if self.elapsed_s and self.runtime_s else None

    @property
    def slowest_io_share(self) -> float | None:
        """The slowest I/O over the runtime (the elapsed time where no runtime is known)."""
        span = self.runtime_s or self.elapsed_s
        return self.slowest_io_s / span if self.slowest_io_s is not None and span else None

    @property
    def codes(self) -> tuple[str, ...]:
        """The short names of the flags raised (``CODES``); sub-second implies short, which is left out then."""
        raised = [code for name, code in CODES.items() if getattr(self, name)]
        return tuple(c for c in raised if not (c == "short" and "sub-second" in raised))

    @property
    def flagged(self) -> bool:
        return bool(self.codes)

    @property
    def unknown(self) -> tuple[str, ...]:
        """The checks that could not be made."""
        return tuple(
            name for name in ("overran", "long_io", "too_short", "fits_in_cache") if getattr(self, name) is None
        )


def seconds(runtime) -> float | None:
    """fio's ``runtime`` option in seconds ('60', '60s', '2m', '1h', '500ms'; fio's default unit is seconds)."""
    if runtime is None:
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m|h|d)?\s*", str(runtime).lower())
    if not m:
        return None
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}[m.group(2)]
    value = float(m.group(1)) * scale
    return value or None  # runtime=0: no limit


def shares_one_file(command: str | None, numjobs) -> bool:
    """numjobs > 1 all on one ``--filename`` (no ``filename_format``): the jobs' working set is one file."""

    opts = parse_command(command)
    jobs = int(numjobs) if str(numjobs or "").isdigit() else 1
    return bool(opts.get("filename")) and jobs > 1 and "filename_format" not in opts


def working_set(row: dict) -> float | None:
    """Bytes a fio run's jobs read or write: ``size`` per job (``wl_size``), once when they share one file."""
    if row.get("wl_size") is None:
        return None
    jobs = int(row["wl_numjobs"]) if str(row.get("wl_numjobs") or "").isdigit() else 1
    return float(row["wl_size"]) * (1 if shares_one_file(row.get("command"), jobs) else jobs)


def _ns_to_s(ns) -> float | None:
    return None if ns is None else float(ns) / 1e9


def _overran(elapsed: float | None, runtime: float | None, option, tolerance: float) -> bool | None:
    """elapsed above runtime x (1 + tolerance); False for a run with no runtime limit (fio's default
    ``runtime=none``: it runs until its size is done, so it cannot overrun); None where either is unknown."""
    if elapsed is None:
        return None
    if runtime is None:
        return False if option is not None and str(option).lower() in ("none", "0") else None
    return elapsed > runtime * (1 + tolerance)


def given_options(row: dict) -> dict[str, str]:
    """The fio options a run was given: its command line, then its JSON job options (which win)."""
    opts = dict(parse_command(row.get("command")))
    if row.get("options_json"):
        try:
            opts.update({k: str(v) for k, v in json.loads(row["options_json"]).items()})
        except (ValueError, AttributeError):
            pass
    return opts


def _writes(row: dict) -> bool:
    """The row is a run's writes: direction write, or fio's unified (mixed) row of a mode that only writes."""
    rw = str(row.get("rw") or "")
    return row.get("direction") == "write" or (row.get("direction") == "mixed" and "read" not in rw and rw != "rw")


def synced_writes(row: dict) -> str | None:
    """How a run's writes are made durable as they go, None where they are not (or the row is not its writes):
    'sync=1 (O_SYNC)', 'fdatasync=1', 'fsync=4', 'fsync or fdatasync (a sync section in its output)'. A ZFS dataset
    labelled zfs_sync=disabled makes those calls no-ops: None. A sync interval above the writes it made: None."""
    if not _writes(row) or str(row.get("zfs_sync") or "").lower() == "disabled":
        return None
    sync = str(row.get("wl_sync") or "").lower()
    if sync in O_SYNC_VALUES:
        return f"sync={row['wl_sync']} ({O_SYNC_VALUES[sync]})"
    for key in ("fdatasync", "fsync"):
        value = str(row.get(f"wl_{key}") or "")
        if value.isdigit() and int(value) > 0 and not (row.get("ios") and int(value) > row["ios"]):
            return f"{key}={value}"
    return "fsync or fdatasync (a sync section in its output)" if row.get("has_sync") else None


def final_fsync(row: dict) -> str | None:
    """'end_fsync=1' or 'fsync_on_close=1' (the option given) on a row of a run's writes, else None."""
    if not _writes(row):
        return None
    opts = given_options(row)
    return next((f"{k}={opts[k]}" for k in FINAL_FSYNC_OPTIONS if str(opts.get(k, "")).lower() in _ON), None)


RAM_WHERE = "of RAM (+ L2ARC)"


def _arc_where(lines: list[dict], l2arc: float) -> str:
    """'ARC maximum (c_max, arcstats.txt line 9)'; with two values, each with its line and that it changed."""
    plus = " + L2ARC" if l2arc else ""
    at = [f"{r['path'].rsplit('/', 1)[-1]} line {r['line_start']}" for r in lines]
    if len({r["c_max_bytes"] for r in lines}) == 1:
        return f"ARC maximum{plus} (c_max, {prose.listing(at)})"
    both = [f"{prose.size(r['c_max_bytes'])} in {w}" for r, w in zip(lines, at, strict=True)]
    return f"ARC maximum{plus} (c_max changed over time: {prose.listing(both)})"


def cache_bound(row: dict, size: float | None) -> dict | None:
    """What can cache a run's working set of ``size`` bytes: on ZFS, where its machine's ARC statistics print an ARC
    maximum (``arc.with_arc_max``), that c_max (+ L2ARC): ZFS caches file data in the ARC, which stops at c_max,
    whatever the RAM; elsewhere (or a filesystem not labelled) the RAM (+ L2ARC) the labels give. Where c_max changed
    over time the set fits if it fits the lowest, does not if it exceeds the highest, and is not checkable between.
    None where the size, or the RAM off ZFS, is unknown."""
    if not size:
        return None
    l2arc = row.get("l2arc_bytes") or 0
    low, high = row.get("arc_max_bytes"), row.get("arc_max_high_bytes")
    if low and high and arc.on_zfs(row):
        fits = True if size <= low + l2arc else False if size > high + l2arc else None
        lines = arc.max_lines(row)
        return dict(cache_bytes=low + l2arc, cache_high_bytes=high + l2arc if high != low else None, fits=fits,
                    where=_arc_where(lines, l2arc), lines=row.get("arc_max_lines"))  # fmt: skip
    ram, _ = plausibility.ram_bytes(row.get("command"), row.get("notes"), row.get("ram_bytes"))
    cache = plausibility.against_cache(size, ram, row.get("l2arc_bytes"))
    if cache is None:
        return None
    return dict(cache_bytes=cache["cache_bytes"], cache_high_bytes=None, fits=cache["fits_in_cache"], where=RAM_WHERE,
                lines=None)  # fmt: skip


def check(
    row: dict,
    min_elapsed_s: float = MIN_ELAPSED_S,
    overrun_tolerance: float = OVERRUN_TOLERANCE,
    long_io_share: float = LONG_IO_SHARE,
) -> DesignFlags:
    """The design checks of one run (a row of ``fio_runs.runs``; see the module doc for each check)."""
    elapsed = _ns_to_s(row.get("elapsed_ns", row.get("run_max_ns")))
    runtime = seconds(row.get("wl_runtime"))
    slowest = _ns_to_s(row.get("clat_max_ns") if row.get("clat_max_ns") is not None else row.get("lat_max_ns"))
    span = runtime or elapsed
    size = working_set(row)
    cache = cache_bound(row, size)
    bypass = plausibility.direct_bypasses_page_cache(row.get("wl_direct"), row.get("stack"), row.get("zfs_version"))
    synced, final = synced_writes(row), final_fsync(row)
    hit = row.get("arc_hit_ratio")
    long_io = None if slowest is None or not span else slowest >= long_io_share * span
    overran = _overran(elapsed, runtime, row.get("wl_runtime"), overrun_tolerance)
    by_fsync = bool(overran and final and long_io is False)
    return DesignFlags(
        elapsed_s=elapsed,
        runtime_s=runtime,
        slowest_io_s=slowest,
        working_set_bytes=size,
        cache_bytes=cache["cache_bytes"] if cache else None,
        overran=False if by_fsync else overran,
        long_io=long_io,
        too_short=None if elapsed is None else elapsed < min_elapsed_s,
        sub_second=None if elapsed is None else elapsed < 1.0,
        # direct= not known (fio's normal text does not print it): whether the I/O went through the cache is not
        # known either: not checkable, never taken as buffered (a working set larger than the cache fits in it
        # either way)
        fits_in_cache=False
        if bypass or synced
        else None
        if cache is None or (row.get("wl_direct") is None and cache["fits"])
        else cache["fits"],
        direct_ignored=plausibility.direct_ignored(row.get("wl_direct"), row.get("stack"), row.get("zfs_version")),
        arc_served=None if hit is None else float(hit) >= ARC_HIT_FLAG,
        arc_hit_ratio=None if hit is None else float(hit),
        arc_source=row.get("arc_source") if hit is not None else None,
        synced=synced,
        final_fsync=final,
        final_fsync_over=by_fsync if overran is not None else None,
        cache_where=cache["where"] if cache else None,
        cache_high_bytes=cache["cache_high_bytes"] if cache else None,
        cache_lines=cache["lines"] if cache else None,
    )


def marker(flags: DesignFlags) -> str:
    """'' for a run with no flag, else '⚠ stall, overran' (the flags' short names): for table cells and chart
    labels."""
    return f"{MARK} {', '.join(flags.codes)}" if flags.flagged else ""


# the columns with_design adds: DesignFlags' fields (prefixed ``design_``) and the summary of its flags
_FIELDS = tuple(f.name for f in fields(DesignFlags))


def _dtype(name: str) -> DataTypeClass:
    if name in ("arc_source", "synced", "final_fsync", "cache_where", "cache_lines"):
        return pl.String
    return pl.Float64 if name.endswith(("_s", "_bytes", "_ratio")) else pl.Boolean


def with_design(df: pl.DataFrame, **thresholds) -> pl.DataFrame:
    """``df`` (rows of ``fio_runs.runs``) with every DesignFlags field as a column ``design_<field>`` (seconds,
    bytes, booleans with None where not checkable), ``design_flags`` (the short names of the flags raised),
    ``design_flagged`` and ``design_marker`` ('' or '⚠ stall, ...'). ``thresholds``: ``check``'s keyword
    arguments. ``flags_of(row)`` gives a row's DesignFlags back."""
    flags = [check(r, **thresholds) for r in df.iter_rows(named=True)]
    return df.with_columns(
        *(pl.Series(f"design_{n}", [getattr(f, n) for f in flags], dtype=_dtype(n)) for n in _FIELDS),
        pl.Series("design_flags", [list(f.codes) for f in flags], dtype=pl.List(pl.String)),
        pl.Series("design_flagged", [f.flagged for f in flags], dtype=pl.Boolean),
        pl.Series("design_marker", [marker(f) for f in flags], dtype=pl.String),
    )


def flags_of(row: dict) -> DesignFlags:
    """The DesignFlags of a row of ``with_design``'s frame."""
    return DesignFlags(**{n: row.get(f"design_{n}") for n in _FIELDS})


def labelled(label: str, flags: DesignFlags) -> str:
    """A run's label with its marker: 'btrfs raid1 ⚠ overran, stall'."""
    m = marker(flags)
    return f"{label} {m}" if m else label


def _gib(n: float) -> str:

    return prose.size(n)


def sentence(label: str, f: DesignFlags, min_elapsed_s: float = MIN_ELAPSED_S) -> str | None:
    """One sentence naming what is wrong with a run's design, from its flags and numbers; None if nothing is."""
    parts = []
    # each flag is raised only from its numbers: the checks below that a flag's numbers are known never fail
    if f.overran and f.elapsed_s is not None:
        fsync = f" (its final fsync, {f.final_fsync}, is timed inside the run too)" if f.final_fsync else ""
        parts.append(
            f"ran {f.elapsed_s * 1000:,.0f} ms against runtime={f.runtime_s:g} s ({f.overrun_ratio:.2f}x): I/O it "
            f"had issued did not complete in time (a stall){fsync}"
        )
    if f.long_io and f.slowest_io_s is not None and f.slowest_io_share is not None:
        parts.append(
            f"its slowest I/O took {prose.ms(f.slowest_io_s * 1e9)} ({100 * f.slowest_io_share:.0f} % of the "
            f"{'runtime' if f.runtime_s else 'run'})"
        )
    if f.sub_second:
        parts.append(f"it ran {f.elapsed_s:.3g} s: sub-second, too short to measure a sustained rate")
    elif f.too_short:
        parts.append(f"it ran {f.elapsed_s:.3g} s, under {min_elapsed_s:g} s: too short to measure a sustained rate")
    if f.fits_in_cache and f.working_set_bytes is not None and f.cache_bytes is not None:
        parts.append(
            f"its working set of {_gib(f.working_set_bytes)} fits in the {_gib(f.cache_bytes)} {f.cache_where or RAM_WHERE} "
            "that can cache it, and its I/O goes through that cache"
        )
    if f.arc_served and f.arc_hit_ratio is not None:
        parts.append(f"the ARC answered {arc.pct(f.arc_hit_ratio)} of reads during the run ({f.arc_source})")
    if f.direct_ignored:
        parts.append("direct=1 on ZFS before 2.3, which ignores it (the ARC still caches)")
    return f"{label}: " + "; ".join(parts) + "." if parts else None


def sentences(df: pl.DataFrame, label: str = "label", min_elapsed_s: float = MIN_ELAPSED_S) -> list[str]:
    """One sentence per flagged run of ``with_design``'s frame, in its order. A flag that rests on a runtime or size
    the run's output does not show (taken from the workload it was matched to: ``fio_runs.match_by_output``) says
    so."""
    out: list[str] = []
    names = _names_apart(df, label)
    for row, name in zip(df.iter_rows(named=True), names, strict=True):
        f = flags_of(row)
        s = sentence(name, f, min_elapsed_s)
        if s and row.get("workload_source") == "output (matched)" and _rests_on_options(f):
            s = s[:-1] + (
                "; the runtime and size these checks use are not in its output: they are the options of the "
                "workload it was matched to (same setup)."
            )
        if s:
            out.append(Finding(s, cites(f, row)))
    return out


def cites(f: DesignFlags, row: dict) -> list:
    """The numbers of a run's design sentence read from its output: the elapsed time and its ratio to the runtime
    option (the group's line, where fio prints run=...msec), the slowest I/O (its job's section). The runtime, the
    working set and the RAM are options and labels: plain."""
    group = lines_of(row)
    slowest = lines_of(
        {
            "path": row.get("path"),
            "sha256": row.get("sha256"),
            "line_start": row.get("slowest_line_start"),
            "line_end": row.get("slowest_line_end"),
        }
    )
    out = []
    if f.overran and f.elapsed_s is not None:
        out += [
            cite(f"{f.elapsed_s * 1000:,.0f} ms", group),
            cite(f"{f.overrun_ratio:.2f}x", group, f"elapsed / runtime={f.runtime_s:g} s (the option)"),
        ]
    if f.long_io and f.slowest_io_s is not None and f.slowest_io_share is not None:
        out += [
            cite(prose.ms(f.slowest_io_s * 1e9), slowest),
            cite(
                f"{100 * f.slowest_io_share:.0f} %", slowest, f"slowest I/O / {'runtime' if f.runtime_s else 'elapsed'}"
            ),
        ]
    if f.too_short and f.elapsed_s is not None:
        out.append(cite(f"{f.elapsed_s:.3g} s", group))
    if f.fits_in_cache and f.cache_lines and f.cache_bytes is not None:
        out.append(cite(_gib(f.cache_bytes), json.loads(f.cache_lines), "c_max of the machine's ARC statistics"))
    return out


def _names_apart(df: pl.DataFrame, label: str = "label") -> list[str]:
    """Each row's label, and where one label holds several runs (fio runs appended to one file: several reports,
    ``doc_index``), which run it is: 'btr-after-qd8-repeats.txt (run 2 of 3)'."""
    if df.is_empty() or "doc_index" not in df.columns:
        return [str(v) for v in df[label].to_list()] if label in df.columns else []
    key = [c for c in ("file_id", "doc_index") if c in df.columns]
    runs = df.select(label, *key).unique(maintain_order=True)
    order: dict[tuple, tuple[int, int]] = {}
    for _, g in runs.group_by(label, maintain_order=True):
        for i, r in enumerate(g.sort(key).iter_rows()):
            order[r] = (i + 1, g.height)
    out = []
    for r in df.select(label, *key).iter_rows():
        i, n = order[r]
        out.append(f"{r[0]} (run {i} of {n})" if n > 1 else str(r[0]))
    return out


def _rests_on_options(f: DesignFlags) -> bool:
    """A flag raised from the runtime or size option: overran, a long I/O against the runtime, a cached working set."""
    return bool(f.overran or f.fits_in_cache or (f.long_io and f.runtime_s))


def not_checked(df: pl.DataFrame, label: str = "label") -> dict[str, list[str]]:
    """Check name -> labels of the runs it could not be made on (what the logs or labels lack)."""
    out: dict[str, list[str]] = {}
    for row in df.iter_rows(named=True):
        for check_name in flags_of(row).unknown:
            out.setdefault(check_name, []).append(str(row[label]))
    return out


def _how_synced(synced: str) -> str:
    if synced.startswith("sync="):
        return f"every write returns only once it is durable ({synced})"
    key, _, n = synced.partition("=")
    if n == "1":
        return f"every write is followed by {key} ({synced})"
    return f"{key} follows every {n} writes ({synced})" if n else f"{synced} ran during it"


def note(label: str, f: DesignFlags, bw_bytes_per_s: float | None = None, direct=None) -> list[str]:
    """What a run's design shows that is not a flag: writes synced as they go on a working set that would fit in
    RAM (why it is not ``cache``), an overrun that is the run's final fsync (why it is not a stall; with ``direct``
    '1', that its direct writes had left data to flush)."""
    out = []
    ws, cache = f.working_set_bytes, f.cache_bytes
    if f.synced and ws is not None and cache is not None and ws <= cache:
        out.append(
            f"{label}: its working set of {_gib(ws)} fits in the {_gib(cache)} {f.cache_where or RAM_WHERE}, but "
            f"{_how_synced(f.synced)}: all it writes reaches the device within the run, so the device's sync path "
            "bounds its writes, not RAM; the cache check does not flag it."
        )
    if over := beyond_arc(label, f):
        out.append(over)
    if f.final_fsync_over and f.elapsed_s is not None and f.runtime_s and f.slowest_io_s is not None:
        text = (
            f"{label}: ran {f.elapsed_s * 1000:,.0f} ms against runtime={f.runtime_s:g} s: the "
            f"{f.elapsed_s - f.runtime_s:.3g} s over are its final fsync ({f.final_fsync}, which fio times inside "
            f"the run), not a stall: its slowest I/O took {f.slowest_io_s * 1000:,.1f} ms."
        )
        if bw_bytes_per_s is not None:
            text += (
                f" Its bandwidth, {prose.rate(bw_bytes_per_s)}, is fio's: its I/O over all {f.elapsed_s:.4g} s, "
                "that fsync included."
            )
        if str(direct) == "1":
            text += (
                " It wrote with direct=1, yet its final fsync had seconds of work: its writes were not all on the "
                "device when fio counted them complete (so where a filesystem accepts direct=1 and buffers anyway, "
                "as ZFS before 2.3 does)."
            )
        out.append(text)
    return out


def _on_arc(f: DesignFlags) -> bool:
    return bool(f.cache_where and f.cache_where.startswith("ARC"))


def beyond_arc(label: str, f: DesignFlags) -> str | None:
    """Why a ZFS run whose working set exceeds its machine's ARC maximum is not ``cache``, with the share of it the
    ARC can hold at once (arithmetic); None for any other run."""
    ws, cache = f.working_set_bytes, f.cache_high_bytes or f.cache_bytes
    if not _on_arc(f) or f.synced or f.fits_in_cache is not False or ws is None or not cache or ws <= cache:
        return None
    return (
        f"{label}: its working set of {_gib(ws)} is {prose.times(ws / cache)} the {_gib(cache)} {f.cache_where}, "
        f"which bounds what ZFS caches: the cache check does not flag it, but the ARC can hold {100 * cache / ws:.0f} % of "
        "it at once (arithmetic), so part of its I/O may still be answered from memory."
    )


def notes(df: pl.DataFrame, label: str = "label") -> list[str]:
    """``note`` for every row of ``with_design``'s frame, each sentence once."""
    out = []
    for row in df.iter_rows(named=True):
        out += note(str(row[label]), flags_of(row), row.get("bw_bytes_per_s"), row.get("wl_direct"))
    return list(dict.fromkeys(out))


def _through_cache(row: dict) -> str:
    """How a run whose cache check was not made may go through a cache."""
    direct = str(row.get("wl_direct") or "")
    if direct != "1":
        return "buffered I/O" if direct == "0" else "direct= not known"
    if not row.get("stack"):
        return "direct=1 on a stack not labelled"
    if row.get("zfs_version"):
        return f"direct=1 on ZFS {row['zfs_version']}, which ignores it"
    return "direct=1 on ZFS of a version not labelled (before 2.3 ZFS ignores it)"


def direct_unknown(f: DesignFlags) -> tuple[float, float] | None:
    """(working set, RAM + L2ARC) of a run whose cache check waits on direct= alone: its working set fits, but
    whether its I/O went through the page cache is not known (fio's normal text does not print direct=). None for
    any other run (checked, or lacking its size or RAM). Notebooks 05 and 08 both judge by this."""
    ws, cache = f.working_set_bytes, f.cache_bytes
    if f.fits_in_cache is None and ws is not None and cache is not None and ws <= cache:
        return ws, cache
    return None


def direct_unknown_sentence(runs: Sequence[tuple[str, float, float]]) -> str:
    """What 05 and 08 say of the runs ``direct_unknown`` finds: (name, working set, RAM + L2ARC) each."""
    counts: dict[tuple[str, float, float], int] = {}
    for run in runs:  # runs appended to one file share its name: named once, with their count
        counts[run] = counts.get(run, 0) + 1
    named = prose.listing(
        [
            f"{name} ({f'{n} runs, ' if n > 1 else ''}{_gib(ws)} in {_gib(cache)} of RAM + L2ARC)"
            for (name, ws, cache), n in counts.items()
        ]
    )
    return (
        f"the page cache may or may not have served {named}: the working set fits in the RAM, but direct= is not in "
        "the output (fio's normal text does not print it), so whether the I/O went through the page cache is not "
        "known. Put fio's command line (with --direct=) in the manifest's command column, or save fio's output as "
        "JSON (its job options list direct)"
    )


def missing(df: pl.DataFrame, label: str = "label") -> list[str]:
    """The cache check that could not be made, per thing lacking (direct=, the RAM, the working set), naming the
    runs, how their I/O may go through a cache, and the label or log that would give what is lacking."""
    no_ram: dict[str, str] = {}
    no_size: dict[str, str] = {}
    no_direct: list[tuple[str, float, float]] = []  # size and RAM known and the set fits: only direct= is lacking
    changed: dict[str, str] = {}  # between the two ARC maximums of a machine whose c_max changed
    for row in df.iter_rows(named=True):
        f = flags_of(row)
        if (known := direct_unknown(f)) is not None:
            no_direct.append((str(row[label]), *known))
        elif f.fits_in_cache is None and f.cache_high_bytes is not None and f.working_set_bytes is not None:
            changed[str(row[label])] = f"{_gib(f.working_set_bytes)}, {f.cache_where}"
        elif f.fits_in_cache is None:
            (no_size if f.working_set_bytes is None else no_ram)[str(row[label])] = _through_cache(row)
    out = [direct_unknown_sentence(no_direct)] if no_direct else []
    if changed:
        out.append(
            "the cache check (working set against the ARC maximum) could not be made for "
            + prose.listing([f"{k} ({v})" for k, v in changed.items()])
            + ": its machine's c_max changed over time and the working set lies between its values, so whether the "
            "ARC could hold it during the run is not known. Take the ARC statistics (`cat /proc/spl/kstat/zfs/"
            "arcstats`) just before the run and label them with its study and host"
        )
    why = (
        (
            no_ram,
            "the RAM of the machine is not in the labels. Add a ram_bytes column (bytes) to the manifest (`storagelab "
            "lab` records it; on Linux MemTotal in /proc/meminfo, in KiB, or `free -b`), or ram_bytes=N in its notes",
        ),
        (
            no_size,
            "its size is not in its output or command. Put fio's command line (with size=) in the manifest's command "
            "column",
        ),
    )
    for runs, reason in why:
        if runs:
            named = prose.listing([f"{k} ({v})" for k, v in runs.items()])
            out.append(f"the cache check (working set against RAM) could not be made for {named}: {reason}")
    return out


def _workload_fields(workload: str) -> dict[str, str]:
    """'randread bs=4KiB libaio direct=? size=16MiB' -> {'rw': 'randread', 'bs': '4KiB', 'ioengine': 'libaio', ...}
    (``fio_runs.workload_key``'s form: the first word is rw, a bare word the ioengine)."""
    words = workload.split()
    out = {"rw": words[0]} if words else {}
    for w in words[1:]:
        key, eq, value = w.partition("=")
        out[key if eq else "ioengine"] = value if eq else w
    return out


def unknown_splits(workloads: list[str]) -> list[str]:
    """Pairs of workloads that differ only in fields one of them does not show ('?'): one fio command may be cut in
    two where one output lacks a line the other has (btr-grid-qd8-nj2.txt has no 'Laying out IO file' line, so its
    size is '?' beside its siblings' size=16MiB). Said, not merged: the unknown value may differ."""
    return [
        f"`{a}` and `{b}` differ only in what one of them does not show ({', '.join(apart)}): they may be "
        "one workload cut in two, and are kept apart (a depth curve or a mean never joins them). Put fio's "
        "command line in the manifest's command column (or save fio's output as JSON) to tell"
        for a, b, apart in unknown_pairs(workloads)
    ]


def unknown_pairs(workloads: list[str]) -> list[tuple[str, str, list[str]]]:
    """(a, b, the fields apart) of the workloads that differ only in fields one of them does not show ('?')."""
    fields_of = {w: _workload_fields(w) for w in dict.fromkeys(workloads)}
    out = []
    for a, b in itertools.combinations(fields_of, 2):
        fa, fb = fields_of[a], fields_of[b]
        if fa.keys() != fb.keys():
            continue
        apart = [k for k in fa if fa[k] != fb[k]]
        if apart and all("?" in (fa[k], fb[k]) for k in apart):
            out.append((a, b, apart))
    return out


def block_size_arithmetic(depth: pl.DataFrame) -> list[str]:
    """Runs whose block size fio did not print (an output cut before its preamble line), with bandwidth over IOPS
    beside them: arithmetic on fio's rounded figures, said so, never taken as the run's bs (rawstor's randread:
    35.0 MiB/s over 8,962 IOPS is 4,095 B)."""
    need = {"block_size_bytes", "bw_bytes_per_s", "iops", "label", "direction"}
    if depth.is_empty() or not need <= set(depth.columns):
        return []
    out = []
    for r in depth.filter(pl.col("block_size_bytes").is_null() & (pl.col("iops") > 0)).iter_rows(named=True):
        if r["bw_bytes_per_s"]:
            job = f" (job {r['jobname']})" if r.get("jobname") else ""
            out.append(
                f"{r['label']}{job} {r['direction']}: its block size is not in its output; its bandwidth over its "
                f"IOPS is {r['bw_bytes_per_s'] / r['iops']:,.0f} B ({prose.rate(r['bw_bytes_per_s'])} / "
                f"{r['iops']:,.0f} IOPS): arithmetic on fio's rounded figures, not a setting it printed, so the run "
                "keeps bs=?. Put fio's command line in the manifest's command column"
            )
    return out
