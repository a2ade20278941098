"""Durable writes of fio runs with fsync/fdatasync or O_SYNC (notebook 08).

A job run with ``fsync=N`` or ``fdatasync=N`` calls fsync(2)/fdatasync(2) after every N writes; fio times those
calls apart and prints them as the ``fsync/fdatasync/sync_file_range:`` section (JSON ``sync``; stored as
direction ``sync``, kind ``lat``). The write lines of such a run time only ``write()`` (into the page cache of a
local filesystem, into a FUSE daemon on zfs-fuse: where, the output does not say; never a durable write): the
latency of one durable write is the ``sync`` distribution, and the rate of durable writes is the sync calls over
the run's time.

A job run with ``sync=1`` (or ``sync``: O_SYNC; ``dsync``: O_DSYNC) has no sync calls to time: each write()
returns only once it is durable, so the write's own completion latency (clat, else lat) is the latency of one
durable write, and every write is a durable write (fio prints no sync section for it).

* ``load`` (query): one row per job of the final reports that has a sync section, with its write direction, the
  printed sync percentiles, the options and labels.
* ``compute`` (pure): a ``DurableRun`` per job: its percentiles as fio printed them, the sync calls (JSON ``N``,
  else ``total_ios``, else writes / N from the fsync/fdatasync option, else the calls its time holds), durable
  writes per second, the workload they match on, and the ``DurablePair`` comparisons of one workload on two
  configurations (SLOG against none where ``log_devices`` is labelled).
* ``findings``: sentences from those numbers only.

A run whose command line is not in the log (a pasted transcript) is matched by what its output shows: rw, block
size, engine and depth, and a sync section; how many writes each sync covered comes from its time when a single
job at depth 1 leaves no doubt (the run's time = writes x write latency + syncs x sync latency).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

import polars as pl

from . import design, fio_runs, phases
from .db import frame
from .result import Finding, cite, lines_of

SHOWN_PERCENTILES = (50.0, 99.0, 99.9)
# a sync per write from the run's time: the syncs its time holds within this share of its writes
ONE_PER_WRITE = 0.1


@dataclass(frozen=True)
class DurableRun:
    file_id: int
    label: str
    config: str
    workload: str
    percentiles_ns: dict[float, float]  # as fio printed them
    sync_mean_ns: float | None
    sync_max_ns: float | None
    writes: int | None
    syncs: float | None
    syncs_from: str  # 'fio's count', 'writes / N (fdatasync=N)', 'the run's time', 'unknown'
    every: int | None  # writes per sync call
    runtime_ns: float | None
    durable_per_s: float | None
    write_p99_ns: float | None  # write() completion, page cache: not durable
    log_devices: str | None
    pool: str | None = None
    too_short: str | None = None  # the design checks' reason (sub-second, under 5 s), None when long enough
    flag: str = ""  # the design checks' marker ('⚠ sub-second'), '' for a run they do not flag
    inferred: str | None = None  # what its workload took from its output, not an option (fio_runs.with_workloads)
    # sync of its pool's datasets in `zfs get` of the same host and pool (one value), else its zfs_sync label
    zfs_sync: str | None = None
    zfs_logbias: str | None = None  # logbias, likewise (zfs get, else the zfs_logbias label)
    sync_from: str | None = None  # where zfs_sync comes from: 'zfs get' or 'label'
    logbias_from: str | None = None  # likewise for zfs_logbias
    o_sync: str | None = None  # 'sync=1 (O_SYNC)' for a job whose writes are durable as they return: no sync calls
    # the raw lines (result.lines_of) of its durable-write latencies (the sync section; O_SYNC: the write section)
    # and of its write section (writes, run time, write() latency): what a finding's numbers link to
    sync_lines: tuple[dict, ...] = ()
    write_lines: tuple[dict, ...] = ()
    setup: tuple[tuple[str, str], ...] = ()  # its manifest labels of the setup (``phases.SETUP_LABELS``), as text
    phase: str | None = None  # its phase label (before / after)

    @property
    def p99_ns(self) -> float | None:
        return self.percentiles_ns.get(99.0)


@dataclass(frozen=True)
class DurablePair:
    workload: str
    faster: DurableRun
    slower: DurableRun
    p99_ratio: float | None  # slower p99 / faster p99
    rate_ratio: float | None  # faster durable/s / slower durable/s
    slog: bool  # the two differ in their log_devices label (one has a SLOG, the other none)
    setting: str = "SLOG"  # the one setting that differs: 'SLOG', 'sync' or 'logbias'


@dataclass
class Durable:
    runs: list[DurableRun] = field(default_factory=list)
    pairs: list[DurablePair] = field(default_factory=list)


QUERY = """
SELECT f.file_id, f.path, f.sha256, coalesce(f.label, f.path) AS label, f.host, f.stack, f.pool, f.vdev_type,
       f.vdev_count, f.vdev_width, f.log_devices, coalesce(f.command, c.command) AS command, f.os, f.devices,
       f.cache_devices, f.ram_bytes, f.recordsize_bytes, f.ashift, f.zfs_version, f.phase, f.notes,
       j.job_index, j.doc_index, j.jobname, j.rw, j.block_size_bytes, j.ioengine, j.iodepth, coalesce(j.numjobs, j.jobs) AS numjobs, j.jobs,
       j.options_json, j.layout_bytes, s.file_id IS NOT NULL AS has_sync,
       s.lat_mean_ns AS sync_mean_ns, s.lat_max_ns AS sync_max_ns, s.lat_samples AS sync_samples,
       s.total_ios AS sync_total_ios, s.line_start AS sync_line_start, s.line_end AS sync_line_end,
       w.line_start AS write_line_start, w.line_end AS write_line_end,
       w.total_ios AS writes, w.runtime_ns, w.lat_mean_ns AS write_lat_mean_ns, w.clat_mean_ns AS write_clat_mean_ns,
       w.clat_max_ns AS write_clat_max_ns, w.lat_max_ns AS write_lat_max_ns,
       coalesce(z.zfs_sync, f.zfs_sync) AS zfs_sync, coalesce(z.zfs_logbias, f.zfs_logbias) AS zfs_logbias,
       CASE WHEN z.zfs_sync IS NOT NULL THEN 'zfs get' WHEN f.zfs_sync IS NOT NULL THEN 'label' END AS sync_from,
       CASE WHEN z.zfs_logbias IS NOT NULL THEN 'zfs get' WHEN f.zfs_logbias IS NOT NULL THEN 'label' END
           AS logbias_from
FROM fio_jobs j JOIN files f USING (file_id)
LEFT JOIN fio_results s ON s.file_id = j.file_id AND s.job_index = j.job_index AND s.direction = 'sync'
LEFT JOIN fio_results w ON w.file_id = j.file_id AND w.job_index = j.job_index AND w.direction = 'write'
LEFT JOIN (SELECT *, lead(doc_index) OVER (PARTITION BY file_id ORDER BY doc_index) AS next_doc FROM fio_commands) c
  ON c.file_id = j.file_id AND j.doc_index >= c.doc_index AND (c.next_doc IS NULL OR j.doc_index < c.next_doc)
-- `zfs get` sync and logbias of the files labelled with the same host, pool and study: the value where its datasets
-- agree (several values: unknown)
LEFT JOIN (SELECT zf.host, zf.pool, zf.study,
                  CASE WHEN count(DISTINCT p.value) FILTER (p.property = 'sync') = 1
                       THEN any_value(p.value) FILTER (p.property = 'sync') END AS zfs_sync,
                  CASE WHEN count(DISTINCT p.value) FILTER (p.property = 'logbias') = 1
                       THEN any_value(p.value) FILTER (p.property = 'logbias') END AS zfs_logbias
           FROM zfs_properties p JOIN files zf USING (file_id)
           WHERE p.kind = 'dataset' AND p.property IN ('sync', 'logbias') AND zf.host IS NOT NULL AND zf.pool IS NOT NULL
           GROUP BY zf.host, zf.pool, zf.study) z
  ON z.host = f.host AND z.pool = f.pool AND z.study IS NOT DISTINCT FROM f.study
-- a sync section, or writes that may be O_SYNC (sync= among the options: ``compute`` keeps the O_SYNC ones)
WHERE j.is_final AND (s.file_id IS NOT NULL OR (w.total_ios > 0 AND (j.options_json ILIKE '%"sync"%'
      OR coalesce(f.command, c.command) ILIKE '%sync=%' OR coalesce(f.command, c.command) ILIKE '%sync %')))
  AND {where}
ORDER BY f.path, j.job_index
"""


def load(con, sel) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The jobs with a sync section or writes that may be O_SYNC (``QUERY``) and their printed sync and write
    percentiles (long form)."""

    where, params = sel.sql("f")
    jobs = frame(con, QUERY.format(where=where), params)
    pct = frame(
        con,
        f"""
        SELECT p.file_id, p.job_index, p.direction, p.kind, p.percentile, p.latency_ns
        FROM fio_percentiles p JOIN fio_jobs j USING (file_id, job_index) JOIN files f USING (file_id)
        WHERE j.is_final AND ((p.direction = 'sync' AND p.kind = 'lat') OR (p.direction = 'write' AND p.kind IN ('clat', 'lat')))
          AND {where}""",
        params,
    )
    return jobs, pct


def _options(row: dict) -> dict[str, str]:
    opts = {}
    if row.get("options_json"):
        try:
            opts = {k: str(v) for k, v in json.loads(row["options_json"]).items()}
        except ValueError:
            opts = {}
    return {**fio_runs.parse_command(row.get("command")), **opts}


def _every(opts: dict[str, str]) -> tuple[int | None, str | None]:
    """Writes per sync call and the option that says so (fsync=N, fdatasync=N), or (None, None)."""
    for key in ("fdatasync", "fsync"):
        try:
            n = int(opts.get(key, ""))
        except ValueError:
            continue
        if n > 0:
            return n, f"{key}={n}"
    return None, None


def _syncs(row: dict, every: int | None, option: str | None) -> tuple[float | None, str, int | None]:
    """The sync calls of one job, where the count comes from, and the writes per call."""
    writes = row.get("writes")
    for col, src in (("sync_samples", "fio's count"), ("sync_total_ios", "fio's count")):
        if row.get(col):
            n = float(row[col])
            return n, src, every if every else (round(writes / n) if writes and n else None)
    if every and writes:
        return writes / every, f"writes / {every} ({option})", every
    single = (row.get("jobs") or 1) == 1 and (row.get("iodepth") or 1) == 1
    runtime, wlat, slat = row.get("runtime_ns"), row.get("write_lat_mean_ns"), row.get("sync_mean_ns")
    if single and runtime and writes and wlat and slat:
        implied = (runtime - writes * wlat) / slat
        if abs(implied - writes) <= ONE_PER_WRITE * writes:
            return float(writes), "the run's time", 1
    return None, "unknown", every


def _marker(flags) -> str:

    return "" if flags is None else design.marker(flags)


def _too_short(flags) -> str | None:

    if flags is None or not flags.too_short:
        return None
    what = "sub-second" if flags.sub_second else f"under {design.MIN_ELAPSED_S:g} s"
    return (
        f"it ran {flags.elapsed_s * 1000:,.0f} ms ({what}): its tail percentiles rest on few calls, and a rate over "
        "so short a time is not one the device sustains"
    )


def _config(row: dict) -> str:
    """host | stack | layout | log devices, naming what is not labelled."""
    layout = (
        f"{row['vdev_type']} {row['vdev_count']}x{row['vdev_width']}"
        if row.get("vdev_type") and row.get("vdev_count") and row.get("vdev_width")
        else (row.get("vdev_type") or "layout not labelled")
    )
    slog = f"SLOG {row['log_devices']}" if row.get("log_devices") else "no log device labelled"
    return " | ".join([row.get("host") or "host not labelled", row.get("stack") or "stack not labelled", layout, slog])


def _workload(row: dict, every: int | None, osync: str | None = None) -> str:
    """'write bs=4KiB ioengine=sync iodepth=1, a sync after every write' ('ioengine=': fio's sync engine is not
    O_SYNC, which is 'every write O_SYNC (sync=1)')."""
    bs = row.get("block_size_bytes")
    size = fio_runs.fmt_bytes(int(bs)) if bs else "?"
    per = (
        f"every write {osync.split(' ')[-1].strip('()')} ({osync.split(' ')[0]})"
        if osync
        else "a sync per ? writes"
        if not every
        else ("a sync after every write" if every == 1 else f"a sync per {every} writes")
    )
    depth = row.get("iodepth") or (1 if row.get("options_json") else "?")  # a JSON job lists the options given
    jobs = f" numjobs={row['numjobs']}" if (row.get("numjobs") or 1) > 1 else ""
    return f"{row.get('rw') or '?'} bs={size} ioengine={row.get('ioengine') or '?'} iodepth={depth}{jobs}, {per}"


# fio_runs.output_notes' words for a text run's sync section, where fio's own counts say how often it synced
SECTION_NOTE = "(which, and how often, its output does not say)"


def inferred_note(r: DurableRun) -> str | None:
    """The run's workload note (``fio_runs.output_notes``), saying how often it synced where fio counted its sync
    calls (the count beside its writes is what says 'a sync after every write')."""
    if r.inferred and r.every == 1 and r.syncs_from == "the run's time" and SECTION_NOTE in r.inferred:
        return r.inferred.replace(  # 'a sync after every write' is inferred: said how, beside 'does not say'
            SECTION_NOTE,
            "(which, its output does not say; how often, it does not print either: one per write is inferred "
            "from the run's time, which that many writes and syncs at their mean latencies fill)",
        )
    if not (r.inferred and r.every and r.syncs_from == "fio's count" and r.syncs and r.writes):
        return r.inferred
    per = "one per write" if r.every == 1 else f"one per {r.every} writes"
    return r.inferred.replace(
        SECTION_NOTE,
        f"(which, its output does not say; how often: fio counted {r.syncs:,.0f} syncs for {r.writes:,} writes, {per})",
    )


def o_sync(opts: dict[str, str]) -> str | None:
    """'sync=1 (O_SYNC)' / 'sync=dsync (O_DSYNC)' where fio's sync option opens the files so, else None."""
    value = str(opts.get("sync", "")).lower()
    return f"sync={opts['sync']} ({design.O_SYNC_VALUES[value]})" if value in design.O_SYNC_VALUES else None


def _printed(pct: pl.DataFrame) -> tuple[dict[tuple, dict[float, float]], dict[tuple, dict[str, dict]]]:
    """(file_id, job_index) -> the sync percentiles; and -> {'clat'/'lat': the write percentiles}."""
    sync: dict[tuple, dict[float, float]] = {}
    write: dict[tuple, dict[str, dict]] = {}
    for r in pct.iter_rows(named=True):
        key = (r["file_id"], r["job_index"])
        if r["direction"] == "sync":
            sync.setdefault(key, {})[r["percentile"]] = r["latency_ns"]
        else:
            write.setdefault(key, {}).setdefault(r["kind"], {})[r["percentile"]] = r["latency_ns"]
    return sync, write


def compute(
    jobs: pl.DataFrame, pct: pl.DataFrame, design_of: dict | None = None, paths: list[str] | None = None
) -> Durable:
    """Each job's ``DurableRun`` (a job with sync calls, or with O_SYNC writes); then per workload a pool with and
    without a SLOG (``DurablePair``). ``design_of``: file_id -> ``design.DesignFlags`` (a sub-second or short run is
    said to be too short). A file without a label is named by as much of its path as tells it from ``paths`` (the
    selection's fio files; default: ``jobs``' own: ``fio_runs.file_names``)."""
    design_of = design_of or {}
    out = Durable()
    printed, write_pct = _printed(pct)
    if not jobs.is_empty():  # the workload as 05 and 08 see it: a run without a command matched by its output
        jobs = fio_runs.with_workloads(jobs)
        names = fio_runs.file_names([*(paths or []), *jobs["path"].to_list()])
        unlabelled = pl.col("label") == pl.col("path")  # QUERY's label is the path where the file has none
        named = pl.col("path").replace_strict(names, default=None, return_dtype=pl.String)
        jobs = jobs.with_columns(labelled=~unlabelled, label=pl.when(unlabelled).then(named).otherwise(pl.col("label")))
        jobs = phases.named(jobs)  # the two runs of a before/after pair of one label: told apart in every table
    for row in jobs.iter_rows(named=True):
        key = (row["file_id"], row["job_index"])
        opts = _options(row)
        osync = None if row.get("has_sync") else o_sync(opts)
        if not row.get("has_sync") and not osync:
            continue  # sync= was among the options, but not O_SYNC (sync=0, none)
        writes_pct = write_pct.get(key, {})
        every: int | None
        if osync:  # every write returns once durable: its own latency is the durable one, each write counts
            syncs, source, every = (float(row["writes"]) if row.get("writes") else None), "each write, O_SYNC", 1
            percentiles = writes_pct.get("clat") or writes_pct.get("lat") or {}
            mean = row.get("write_clat_mean_ns") or row.get("write_lat_mean_ns")
            peak = row.get("write_clat_max_ns") or row.get("write_lat_max_ns")
        else:
            every, option = _every(opts)
            syncs, source, every = _syncs(row, every, option)
            percentiles, mean, peak = printed.get(key, {}), row.get("sync_mean_ns"), row.get("sync_max_ns")
        out.runs.append(
            _durable_run(
                row,
                design_of.get(row["file_id"]),
                osync,
                every,
                percentiles,
                mean,
                peak,
                syncs,
                source,
                None if osync else writes_pct.get("clat", {}).get(99.0),
            )
        )
    out.pairs = pairs(out.runs)
    return out


def _durable_run(row, flags, osync, every, percentiles, mean, peak, syncs, source, write_p99) -> DurableRun:
    runtime = row.get("runtime_ns")
    return DurableRun(
        file_id=row["file_id"],
        label=row["label"],
        config=_config(row),
        workload=_workload(row, every, osync),
        percentiles_ns=percentiles,
        sync_mean_ns=mean,
        sync_max_ns=peak,
        writes=row.get("writes"),
        syncs=syncs,
        syncs_from=source,
        every=every,
        runtime_ns=runtime,
        durable_per_s=syncs / (runtime / 1e9) if syncs and runtime else None,
        write_p99_ns=write_p99,
        log_devices=row.get("log_devices"),
        pool=row.get("pool"),
        too_short=_too_short(flags),
        flag=_marker(flags),
        inferred=row.get("workload_inferred"),
        zfs_sync=row.get("zfs_sync"),
        zfs_logbias=row.get("zfs_logbias"),
        sync_from=row.get("sync_from"),
        logbias_from=row.get("logbias_from"),
        o_sync=osync,
        sync_lines=_lines(row, "write" if osync else "sync"),
        write_lines=_lines(row, "write"),
        setup=tuple(phases.setup_of(row).items()),
        phase=row.get("phase"),
    )


def _lines(row: dict, section: str) -> tuple[dict, ...]:
    """The raw lines of a job's ``section`` ('sync', 'write') as cite inputs (none where it has no such section)."""
    return lines_of(
        {
            "path": row.get("path"),
            "sha256": row.get("sha256"),
            "line_start": row.get(f"{section}_line_start"),
            "line_end": row.get(f"{section}_line_end"),
        }
    )


# the settings a durable-write pair may differ in, and how each run states it (None: not known)
SETTINGS = (
    ("SLOG", lambda r: "a SLOG" if r.log_devices else "no SLOG"),
    ("sync", lambda r: r.zfs_sync),
    ("logbias", lambda r: r.zfs_logbias),
)


def _one_difference(a: DurableRun, b: DurableRun) -> str | None:
    """The one setting (``SETTINGS``) two runs differ in, None where they differ in none or in more than one (a
    setting not known for either is not counted as a difference)."""
    differ = [name for name, of in SETTINGS if of(a) is not None and of(b) is not None and of(a) != of(b)]
    return differ[0] if len(differ) == 1 else None


def pairs(runs: list[DurableRun]) -> list[DurablePair]:
    """Runs of one durable workload (whose sync interval is known) on one pool (``pool`` label) that differ in one
    setting: a SLOG (``log_devices`` labelled on one, not on the other), or the dataset's ``sync`` or ``logbias``
    (``zfs get`` of the same host and pool, else the ``zfs_sync``/``zfs_logbias`` manifest labels), the lower p99
    first. Runs on other pools or machines are only ranked
    (``ranking``): what differs between them is not one change."""
    out = []
    for workload, rs in _by_workload(runs).items():
        for a, b in itertools.combinations(rs, 2):
            setting = _one_difference(a, b)
            if setting is None or a.pool is None or a.pool != b.pool:
                continue
            fast, slow = (a, b) if _p99(a) <= _p99(b) else (b, a)
            out.append(
                DurablePair(
                    workload=workload,
                    faster=fast,
                    slower=slow,
                    p99_ratio=_p99(slow) / _p99(fast),
                    rate_ratio=fast.durable_per_s / slow.durable_per_s
                    if fast.durable_per_s and slow.durable_per_s
                    else None,
                    slog=setting == "SLOG",
                    setting=setting,
                )
            )
    return out


def _by_workload(runs: list[DurableRun]) -> dict[str, list[DurableRun]]:
    out: dict[str, list[DurableRun]] = {}
    for r in runs:
        if r.every is not None and r.p99_ns:
            out.setdefault(r.workload, []).append(r)
    return out


def _p99(r: DurableRun) -> float:
    """The durable p99 of a run ``_by_workload`` kept (it keeps only runs that have one)."""
    assert r.p99_ns is not None
    return r.p99_ns


def ranking(runs: list[DurableRun]) -> list[tuple[str, list[DurableRun]]]:
    """Per durable workload with more than one run: its runs by durable-write p99, lowest first."""
    return [(w, sorted(rs, key=_p99)) for w, rs in _by_workload(runs).items() if len(rs) > 1]


def fmt_latency(ns: float | None) -> str:
    """A latency to three significant figures, in ms (s from 1,000 ms): fio prints its percentiles to about
    three (its histogram bins are ~1.6 % wide), so more digits would claim what it did not measure."""
    if ns is None:
        return "n/a"
    ms = ns / 1e6
    if ms >= 1000:
        return f"{_sig3(ms / 1000)} s"
    return f"{_sig3(ms)} ms"


def _sig3(v: float) -> str:
    text = f"{v:#.3g}"
    if "e" in text:
        return f"{v:,.0f}"
    return text.rstrip(".")


def table(d: Durable) -> pl.DataFrame:
    """The runs for a reader: one row per run, latencies in ms as strings of three significant figures."""
    rows = [
        {
            "run": r.label,
            "configuration": r.config,
            "workload": r.workload,
            **{f"sync p{p:g}": fmt_latency(r.percentiles_ns.get(p)) for p in SHOWN_PERCENTILES},
            "sync max": fmt_latency(r.sync_max_ns),
            "durable writes/s": None if r.durable_per_s is None else round(r.durable_per_s, 1),
            "syncs counted from": r.syncs_from,
            "run time (s)": None if r.runtime_ns is None else round(r.runtime_ns / 1e9, 3),
            "write() p99 (not durable)": fmt_latency(r.write_p99_ns),
            "flag": r.flag,
        }
        for r in d.runs
    ]
    return pl.DataFrame(rows) if rows else pl.DataFrame()


def run_sentence(r: DurableRun, too_short: str | None) -> Finding:
    """A run's durable-write latencies, max, rate and write() p99; each number links to the section it was read from
    (the rate: the sync and write sections, its arithmetic)."""
    pcts = "/".join(fmt_latency(r.percentiles_ns.get(p)).split(" ")[0] for p in SHOWN_PERCENTILES)
    unit = fmt_latency(r.percentiles_ns.get(99.9)).split(" ")[-1] if r.percentiles_ns else ""
    shown_rate = f"{r.durable_per_s:,.1f} durable writes/s" if r.durable_per_s is not None else ""
    rate = (
        f"{shown_rate} ({r.syncs_from})"
        if r.durable_per_s is not None
        else "durable writes/s unknown (neither the command nor the output says how many writes each sync covered)"
    )
    wp99 = (
        ""
        if r.write_p99_ns is None
        else f"; its write() p99 {fmt_latency(r.write_p99_ns)} is write()'s own latency, not a durable write"
    )
    short = f" **Too short to judge:** {too_short}." if too_short else ""
    note = inferred_note(r)
    inferred = f" Its workload: {note}." if note else ""
    source = (
        f"the writes' own completion latency: with {r.o_sync} a write returns once it is durable"
        if r.o_sync
        else "fio's sync percentiles"
    )
    cites = [cite(f"{pcts} {unit}", r.sync_lines)] if r.percentiles_ns else []
    if r.sync_max_ns is not None:
        cites.append(cite(fmt_latency(r.sync_max_ns), r.sync_lines))
    if shown_rate:
        both = r.sync_lines + tuple(x for x in r.write_lines if x not in r.sync_lines)
        cites.append(cite(shown_rate, both, f"durable writes ({r.syncs_from}) / the write section's run time"))
    if wp99:
        cites.append(cite(fmt_latency(r.write_p99_ns), r.write_lines))
    return Finding(
        f"{r.label} (`{r.workload}`): latency per durable write ({source}) p50/p99/p99.9 "
        f"{pcts} {unit}, max {fmt_latency(r.sync_max_ns)}; {rate}{wp99}.{short}{inferred}",
        cites,
    )


def _setting_source(p: DurablePair) -> str:
    """Where a pair's differing setting was read: `zfs get` of the same host and pool, the manifest label, or both."""
    froms = {getattr(r, f"{p.setting}_from") for r in (p.faster, p.slower)}
    if froms == {"zfs get"}:
        return "`zfs get` of the same host and pool"
    if froms == {"label"}:
        return f"the manifest's zfs_{p.setting} labels, not `zfs get`"
    return f"`zfs get` for one run, the manifest's zfs_{p.setting} label for the other"


def pair_sentence(p: DurablePair) -> Finding:
    if p.slog:
        what = f"pool {p.faster.pool} with a SLOG against without"
    else:
        of = dict(SETTINGS)[p.setting]
        what = (
            f"pool {p.faster.pool} with {p.setting}={of(p.faster)} against {p.setting}={of(p.slower)} "
            f"({_setting_source(p)}; the only setting that differs)"
        )
    rate = "" if p.rate_ratio is None else f", and {p.rate_ratio:.3g}x the durable writes per second"
    fast, slow = p.faster, p.slower
    cites = [
        cite(fmt_latency(fast.p99_ns), fast.sync_lines),
        cite(fmt_latency(slow.p99_ns), slow.sync_lines),
        cite(f"{p.p99_ratio:.3g}x", slow.sync_lines + fast.sync_lines, "durable-write p99: slower / faster run"),
    ]
    if rate:
        every = fast.sync_lines + fast.write_lines + slow.sync_lines + slow.write_lines
        cites.append(cite(f"{p.rate_ratio:.3g}x", every, "durable writes per second: faster / slower run"))
    return Finding(
        f"`{p.workload}`, {what}: {fast.label} ({fast.config}) has a durable-write p99 of "
        f"{fmt_latency(fast.p99_ns)} against {fmt_latency(slow.p99_ns)} for {slow.label} "
        f"({slow.config}): {p.p99_ratio:.3g}x lower{rate}. One run each: no run-to-run spread to judge "
        "the difference by.",
        cites,
    )


def ranking_sentence(workload: str, rs: list[DurableRun]) -> Finding:
    low, high = rs[0], rs[-1]
    return Finding(
        f"`{workload}`: {len(rs)} runs, durable-write p99 from {fmt_latency(low.p99_ns)} ({low.label}) to "
        f"{fmt_latency(high.p99_ns)} ({high.label}). Set side by side only ({_differences(rs)}): no ratio is stated "
        "as the effect of one change.",
        [cite(fmt_latency(low.p99_ns), low.sync_lines), cite(fmt_latency(high.p99_ns), high.sync_lines)],
    )


def _differences(rs: list[DurableRun]) -> str:
    """What the runs' labels say differs between them (and what they share), and how the phase labels pair them."""
    words = phases.differences([dict(r.setup) for r in rs])
    pair = phases.pairing([r.label for r in rs], [r.phase for r in rs])
    return f"{words}; {pair}" if pair else words
