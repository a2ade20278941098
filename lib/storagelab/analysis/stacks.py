"""Filesystem stacks compared on the same fio workload (notebook 05): bandwidth per run (``fio_runs``' one run
bandwidth), cache-inflation flags, test-design checks (``design``), repeats and their prediction interval
(``stats``), and the cost of a layer (mergerfs, autotier, ...) over the stack beneath it.

Three steps: ``query`` (SQL to frames), ``compute`` (a ``stacks_numbers.StacksResult`` of named numbers) and
``stacks_findings.write`` (sentences from that result only); ``analyse`` runs them. The flags are in ``stacks_flags``
(re-exported here). Which runs are flagged is the one rule of 05, 08 and 10 (``run_verdicts``: a design flag, two
regimes or dips in the run's logs, a plausibility flag other than a weak one); a flagged run is marked in every table
and chart, never heads a ranking, and is left out of its configuration's mean and repeats where one of its runs is
clean (all count, flagged, where none is).

Runs are compared only within one workload (``fio_runs.workload``). A layer's cost is measured where
the selection has a run of ``<layer>+<base>`` and one of ``<base>`` with the same workload and ZFS
version (stack labels as in the manifest, e.g. ``mergerfs+zfs`` over ``zfs``).
"""

from __future__ import annotations

import polars as pl

from ..units import MiB
from . import (
    arc,
    design,
    fio_failed,
    fio_runs,
    measures,
    phases,
    plausibility,
    repeat_groups,
    run_verdicts,
    stacks_findings,
    stats,
)
from .db import frame
from .result import Result, lines_of
from .selection import Selection
from .stacks_flags import (  # noqa: F401 - re-exported: the flags are read as stacks.FLAGS, stacks.with_flags
    CLEAN_FLAGS,
    DESIGN_STATUS,
    FLAGS,
    SUSPECT_FLAGS,
    file_bytes,
    marked,
    printed_range,
    with_flags,
)
from .stacks_numbers import (
    ConfigRef,
    DeviceSpread,
    LayerCost,
    LeftOut,
    OverLimit,
    PhasePair,
    Ranking,
    RepeatTest,
    RunRef,
    StacksResult,
    TestSizes,
    VerdictDiff,
)


def runs(con, study: str | None = None) -> pl.DataFrame:
    """Every fio run of a study (all studies for None/''), with labels and workload (see fio_runs.runs)."""
    return fio_runs.runs(con, Selection(study=study or ""))


def penalty(df: pl.DataFrame, base_label: str, over_label: str, direction: str = "write") -> dict:
    """Bandwidth of ``over_label`` relative to ``base_label`` (e.g. mergerfs over ZFS vs ZFS direct)."""

    def one(label: str) -> dict:
        sel = df.filter((pl.col("label") == label) & (pl.col("direction") == direction))
        if sel.height != 1:
            raise LookupError(f"expected one {direction} run labelled {label!r}, found {sel.height}")
        return sel.row(0, named=True)

    a, b = one(base_label), one(over_label)
    ratio = b["bw_bytes_per_s"] / a["bw_bytes_per_s"]
    return dict(
        base=base_label,
        over=over_label,
        base_bytes_per_s=a["bw_bytes_per_s"],
        over_bytes_per_s=b["bw_bytes_per_s"],
        ratio=ratio,
        penalty_pct=(1 - ratio) * 100,
        base_file_id=a["file_id"],
        over_file_id=b["file_id"],
    )


DISK_SQL = """
SELECT coalesce(f.label, f.path) AS label, d.file_id,
       -- the run a disk stats line belongs to: the last fio output of the file that starts before it (runs appended
       -- to one log each print their own lines for the same disk)
       coalesce((SELECT max(j.doc_index) FROM fio_jobs j WHERE j.file_id = d.file_id AND j.line_start <= d.line_start),
                0) AS doc_index,
       (SELECT count(DISTINCT j.doc_index) FROM fio_jobs j WHERE j.file_id = d.file_id) AS runs_in_file,
       d.disk, d.write_ios, d.read_ios,
       d.write_ticks_ns / nullif(d.write_ios, 0) / 1e6 AS ms_per_io, d.util_pct, d.line_start, d.line_end, f.path,
       f.sha256, f.stack, f.vdev_type, f.vdev_width, f.devices,
       EXISTS (SELECT 1 FROM fio_disk_stats a WHERE a.file_id = d.file_id AND a.has_slaves) AS array_device
FROM fio_disk_stats d JOIN files f USING (file_id)
WHERE list_contains(?::INTEGER[], d.file_id) AND NOT coalesce(d.has_slaves, false) ORDER BY f.path, d.line_start
"""

# a write time per I/O from fewer writes than this says nothing of the device (the h6n trial: 7-43 stray writes of a
# VPS disk during a read test gave 0.19-3,966 ms per write)
MIN_WRITES = 100


def device_latency(con, sel: Selection, file_ids: list[int]) -> pl.DataFrame:
    """Per run and member device (md/dm aggregates left out): write I/Os and mean write time per I/O (ms),
    from fio's disk statistics."""

    return frame(con, DISK_SQL, [sorted(set(file_ids))])


def repeats(df: pl.DataFrame) -> pl.DataFrame:
    """Repeated runs: the same workload and ``repeat_groups`` key (one label once a 'run N' mark is taken out, a file
    without a label named by its path, and every setup column the manifest gives agreeing). ``config``: the group's
    name (its label, and what tells it from another group of that label: ``repeat_groups.names``).
    Per group of two or more: n, mean, sd, min, max, the spread (sample sd / mean, %: the lab's and 08's and 10's
    spread), and from
    ``stats.summarise`` the 95 % confidence interval of the mean (``ci95_bytes_per_s``, half-width), the 95 %
    prediction interval for one new run (``pi95_bytes_per_s``) and, from five runs, a seeded bootstrap interval of
    the mean (``boot_low/high_bytes_per_s``); ``values``: the runs' bandwidths."""
    g = (
        repeat_groups.with_names(df.with_columns(config_name=fio_runs.config_label(df)), "config_name", "config")
        .group_by(repeat_groups.KEY, "workload", maintain_order=True)
        .agg(
            pl.col("config").first(),
            pl.col("stack").first(),
            n=pl.len(),
            mean=pl.col("bw_bytes_per_s").mean(),
            sd=pl.col("bw_bytes_per_s").std(),
            low=pl.col("bw_bytes_per_s").min(),
            high=pl.col("bw_bytes_per_s").max(),
            labels=pl.col("label"),
            values=pl.col("bw_bytes_per_s"),
        )
    )
    g = g.filter(pl.col("n") > 1)
    summaries = [stats.summarise(v) for v in g["values"].to_list()]
    return g.with_columns(
        # the one meaning of 'spread' in every report (the lab's --repeat auto, 08, 10): sample sd / mean
        spread_pct=pl.col("sd") / pl.col("mean") * 100,
        ci95_bytes_per_s=pl.Series([r.ci and r.ci.half for r in summaries], dtype=pl.Float64),  # n > 1: never None
        pi95_bytes_per_s=pl.Series([r.pi and r.pi.half for r in summaries], dtype=pl.Float64),
        boot_low_bytes_per_s=pl.Series([r.bootstrap and r.bootstrap.low for r in summaries], dtype=pl.Float64),
        boot_high_bytes_per_s=pl.Series([r.bootstrap and r.bootstrap.high for r in summaries], dtype=pl.Float64),
    )


def layer_costs(df: pl.DataFrame) -> pl.DataFrame:
    """Every (layer over base) pair in one workload and direction: a run with stack ``L+B`` against the runs
    with stack ``B`` and the same ZFS version. ``ratio`` = over / base, ``penalty_pct`` = (1 - ratio) x 100;
    ``zfs_version_differs`` marks bases found only with another ZFS version (not compared)."""
    rows = []
    with_stack = df.filter(pl.col("stack").is_not_null())
    for r in with_stack.filter(pl.col("stack").str.contains(r"\+")).iter_rows(named=True):
        layer, base_stack = r["stack"].split("+", 1)
        cands = with_stack.filter(
            (pl.col("stack") == base_stack)
            & (pl.col("workload") == r["workload"])
            & (pl.col("direction") == r["direction"])
        )
        same = cands.filter(pl.col("zfs_version").eq_missing(r["zfs_version"]))
        for b in same.iter_rows(named=True):
            ratio = r["bw_bytes_per_s"] / b["bw_bytes_per_s"]
            rows.append(
                dict(
                    layer=layer,
                    over=r["label"],
                    base=b["label"],
                    direction=r["direction"],
                    workload=r["workload"],
                    over_bytes_per_s=r["bw_bytes_per_s"],
                    base_bytes_per_s=b["bw_bytes_per_s"],
                    ratio=ratio,
                    penalty_pct=(1 - ratio) * 100,
                    base_inflated=b.get("inflated"),
                    zfs_version_differs=False,
                )
            )
        if same.is_empty() and cands.height:
            rows.append(
                dict(
                    layer=layer,
                    over=r["label"],
                    base=", ".join(cands["label"].to_list()),
                    direction=r["direction"],
                    workload=r["workload"],
                    over_bytes_per_s=r["bw_bytes_per_s"],
                    base_bytes_per_s=None,
                    ratio=None,
                    penalty_pct=None,
                    base_inflated=None,
                    zfs_version_differs=True,
                )
            )
    schema = {
        "layer": pl.String,
        "over": pl.String,
        "base": pl.String,
        "direction": pl.String,
        "workload": pl.String,
        "over_bytes_per_s": pl.Float64,
        "base_bytes_per_s": pl.Float64,
        "ratio": pl.Float64,
        "penalty_pct": pl.Float64,
        "base_inflated": pl.Boolean,
        "zfs_version_differs": pl.Boolean,
    }
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def query(con, sel: Selection, direction: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, run_verdicts.Logs]:
    """SQL to frames: every fio run of the selection (``fio_runs.runs``, with ``runs_in_workload``), the runs of
    ``direction`` (labels filled from the path where missing), their member devices' write times and their log files
    (``run_verdicts.load_logs``: two regimes or dips in them leave a run out, as in 08 and 10)."""
    all_runs = fio_runs.comparable(fio_runs.runs(con, sel))
    if all_runs.is_empty():
        return all_runs, all_runs, pl.DataFrame(), run_verdicts.Logs()
    d = all_runs.filter(pl.col("direction") == direction).with_columns(
        labelled=pl.col("label").is_not_null(), label=fio_runs.run_label(all_runs)
    )
    d = phases.named(d)
    disks = device_latency(con, sel, d["file_id"].to_list()) if d.height else pl.DataFrame()
    logs = run_verdicts.load_logs(con, d["file_id"].to_list()) if d.height else run_verdicts.Logs()
    return all_runs, d, disks, logs


def _mixed_note(all_runs: pl.DataFrame) -> str:
    """What direction 'mixed' is, and the mixed-mode runs (randrw, readwrite) present, for a selection without
    'mixed' rows: those runs are under read and write."""
    modes = all_runs.filter(pl.col("wl_rw").is_in(list(fio_runs.MIXED_MODES)))
    runs = modes.with_columns(name=fio_runs.run_label(all_runs)).unique(["file_id", "doc_index", "groupid"])
    named = [f"{r['name']} (rw={r['wl_rw']}, rwmixread={r['wl_rwmixread'] or '?'})" for r in runs.iter_rows(named=True)]
    present = (
        f"; the mixed-mode runs here are under read and write: {', '.join(sorted(named))}"
        if named
        else "; no run here is of a mixed mode (randrw, readwrite) either"
    )
    return (
        ". 'mixed' is fio's unified_rw_reporting (reads and writes reported as one row), not a randrw workload"
        + present
    )


def phase_pairs(known: pl.DataFrame) -> list[PhasePair]:
    """The workloads whose runs hold both a phase=before and a phase=after run: those runs, fastest first in each
    phase, and what their setup labels say differs."""
    if "phase" not in known.columns:
        return []
    out = []
    for (w,), g in known.sort("path", "doc_index", "groupid").group_by("workload", maintain_order=True):
        if not phases.paired(g["phase"].to_list()):
            continue
        rows = list(g.sort("bw_bytes_per_s", descending=True).iter_rows(named=True))
        side = {p: tuple(_ref(r) for r in rows if r["phase"] == p) for p in phases.PHASES}
        setups = [phases.setup_of(r) for p in phases.PHASES for r in rows if r["phase"] == p]  # before, then after
        only = g["phase"].is_in(list(phases.PHASES)).all()
        out.append(PhasePair(str(w), side["before"], side["after"], phases.differences(setups), bool(only)))
    return out


def _ref(r: dict) -> RunRef:
    return RunRef(r["label"], r["bw_bytes_per_s"], r.get("mark") or "", lines_of(r))


def with_counted(known: pl.DataFrame) -> pl.DataFrame:
    """``counted``: the run counts in its configuration's mean, repeats and ranking, as in notebooks 08 and 10 (the
    one rule, ``run_verdicts``): it is not ``suspect``, or every run of its configuration (``repeat_groups``, one
    workload) is (then all count and the configuration is flagged: it heads no ranking)."""
    keyed = repeat_groups.with_key(known)
    flagged = pl.col("suspect").all().over(repeat_groups.KEY, "workload")
    return keyed.with_columns(counted=~pl.col("suspect") | flagged).drop(repeat_groups.KEY)


def configurations(known: pl.DataFrame) -> pl.DataFrame:
    """One row per workload and configuration (``repeat_groups``: its repeats pooled, never ranked against each
    other), of its ``counted`` runs (``with_counted``): ``config`` (its name), ``n`` runs, ``mean`` bandwidth,
    ``ci95`` (half-width of the 95 % interval of the mean; None for one run), ``suspect`` (every run flagged: it never
    heads a ranking), ``mark`` (its runs' marks), ``flag`` (its runs' plausibility flags: ``with_flags``), ``runs``
    (its rows, for their lines), ``left_out`` (the runs left out: label, why, lines) and ``rank`` in its workload
    (unflagged first, fastest first)."""
    named = repeat_groups.with_names(
        known.with_columns(config_name=fio_runs.config_label(known)), "config_name", "config"
    )
    lines = [c for c in ("path", "sha256", "line_start", "line_end") if c in named.columns]
    counted = pl.col("counted")
    g = named.group_by(repeat_groups.KEY, "workload", maintain_order=True).agg(
        pl.col("config").first(),
        n=counted.sum(),
        mean=pl.col("bw_bytes_per_s").filter(counted).mean(),
        values=pl.col("bw_bytes_per_s").filter(counted),
        suspect=pl.col("suspect").all(),
        mark=pl.col("mark").filter(counted & (pl.col("mark") != "")).unique(maintain_order=True).str.join("; "),
        flag=pl.col("flag").filter(counted).drop_nulls().unique(maintain_order=True).str.join("; "),
        runs=pl.struct(lines).filter(counted),
        left_out=pl.struct("label", "why", "bw_bytes_per_s", *lines).filter(~counted),
        labels=pl.col("label").unique(maintain_order=True),
    )
    ci = [(s.ci.half if s.ci else None) for s in map(stats.summarise, g["values"].to_list())]
    return (
        g.with_columns(
            ci95=pl.Series(ci, dtype=pl.Float64), mark=pl.col("mark").fill_null(""), flag=pl.col("flag").fill_null("")
        )
        .sort(["workload", "suspect", "mean"], descending=[False, False, True])
        .with_columns(rank=pl.int_range(pl.len()).over("workload") + 1)
    )


def left_out(configs: pl.DataFrame) -> list[LeftOut]:
    """The configurations with runs left out of their mean (``with_counted``), each run with why."""
    out = []
    for r in configs.filter(pl.col("left_out").list.len() > 0).iter_rows(named=True):
        runs = tuple((x["label"], x["why"] or "flagged", x["bw_bytes_per_s"], lines_of(x)) for x in r["left_out"])
        out.append(LeftOut(r["config"], r["workload"], r["n"], r["mean"], runs, lines_of(list(r["runs"]))))
    return out


def all_flagged(configs: pl.DataFrame, known: pl.DataFrame) -> list[LeftOut]:
    """The configurations every run of which is flagged (all count: ``with_counted``) that 05 says nothing else of:
    those of several runs (notebook 08 compares none of them, 10 shows their mean flagged) and those flagged by
    their logs (two regimes, dips: ``run_verdicts.regimes``); each run with why."""
    logged = (
        set(known.filter(pl.col("regime").is_not_null())["label"].to_list()) if "regime" in known.columns else set()
    )
    out = []
    for r in configs.filter(pl.col("suspect")).iter_rows(named=True):
        runs = known.filter(pl.col("label").is_in(list(r["labels"])) & (pl.col("workload") == r["workload"]))
        if r["n"] < 2 and not logged & set(r["labels"]):
            continue
        each = tuple(
            (x["label"], x["why"] or "flagged", x["bw_bytes_per_s"], lines_of(x)) for x in runs.iter_rows(named=True)
        )
        out.append(LeftOut(r["config"], r["workload"], r["n"], r["mean"], each, lines_of(list(r["runs"]))))
    return out


def judge(d: pl.DataFrame, logs: run_verdicts.Logs, margin: float, min_elapsed_s: float) -> pl.DataFrame:
    """``d`` judged by the one rule of 05, 08 and 10 (``run_verdicts``) with these parameters."""
    checked = run_verdicts.checked(d, margin, min_elapsed_s)
    return run_verdicts.judged(checked, run_verdicts.log_regimes(logs, run_verdicts.design_by_file(checked)))


def verdict_diffs(
    d: pl.DataFrame, here: pl.DataFrame, logs: run_verdicts.Logs, margin: float, min_elapsed_s: float
) -> list[VerdictDiff]:
    """With parameters other than the defaults 08 and 10 judge with (``run_verdicts.MARGIN``,
    ``design.MIN_ELAPSED_S``): the runs ``here`` (``judge`` with them) left out or counted where 08 and 10 do the
    other, or left out for other reasons, with why on each side."""
    if (margin, min_elapsed_s) == (run_verdicts.MARGIN, design.MIN_ELAPSED_S):
        return []
    key = list(run_verdicts.KEY)
    there = judge(d, logs, run_verdicts.MARGIN, design.MIN_ELAPSED_S).select(
        *key, pl.col("suspect").alias("there_suspect"), pl.col("why").alias("there_why")
    )
    differ = (pl.col("suspect") != pl.col("there_suspect")) | ~pl.col("why").eq_missing(pl.col("there_why"))
    both = here.join(there, on=key, how="left").filter(differ)
    return [
        VerdictDiff(r["label"], r["why"] if r["suspect"] else None, r["there_why"] if r["there_suspect"] else None)
        for r in both.sort("path", "doc_index", "groupid").iter_rows(named=True)
    ]


def _config_ref(r: dict) -> ConfigRef:
    return ConfigRef(r["config"], r["mean"], r["mark"], lines_of(list(r["runs"])), r["n"], r["ci95"])


def table_lines(configs: pl.DataFrame) -> list[str]:
    """05's table: one line per configuration in ranking order, its mean and the interval its repeats give."""
    out = []
    for r in configs.iter_rows(named=True):
        runs = f"mean of {r['n']} runs, ±{r['ci95'] / MiB:.1f} MiB/s (95 % CI)" if r["n"] > 1 else "1 run"
        runs += f" ({len(r['left_out'])} left out)" if r.get("left_out") else ""
        line = f"{r['rank']:>3}. {r['config']:<42} {r['mean'] / MiB:8.1f} MiB/s = {r['mean'] / 1e6:8.1f} MB/s  {runs}"
        out.append(f"{line}  {r['flag']}  {r['mark']}".rstrip())
    return out


def rankings(configs: pl.DataFrame) -> tuple[pl.DataFrame, list[Ranking]]:
    """Workloads by number of runs, and each one's configurations ranked (fastest unflagged first); the repeats of
    one configuration are its mean, never ranked against each other."""
    workloads = (
        configs.group_by("workload")
        .agg(pl.col("n").sum().alias("runs"), pl.col("mean").max().alias("best"))
        .sort("runs", "best", descending=True)
    )
    out = []
    for w, runs in workloads.select("workload", "runs").iter_rows():
        g = configs.filter(pl.col("workload") == w).sort("mean", descending=True)
        clean = g.filter(~pl.col("suspect"))
        top = _config_ref(clean.row(0, named=True)) if clean.height else None
        faster = g.filter(pl.col("suspect") & (pl.col("mean") > (top.bytes_per_s if top else -1)))
        refs = tuple(map(_config_ref, faster.iter_rows(named=True)))
        out.append(Ranking(w, runs, top, _config_ref(g.row(-1, named=True)), refs, g.height))
    return workloads, out


def one_array(g: pl.DataFrame) -> bool:
    """Whether the devices of one run (``device_latency`` rows) are members of one array: two or more device names,
    and evidence of the array (an md/dm device with members in fio's disk stats, a layout label: vdev_type or a
    vdev_width over 1, or a devices label naming several)."""
    r = g.row(0, named=True)
    labelled = bool(r["vdev_type"]) or (r["vdev_width"] or 0) > 1 or any(c in (r["devices"] or "") for c in "+,")
    return g["disk"].n_unique() >= 2 and (bool(r["array_device"]) or labelled)


def mirrored(r: dict) -> bool:
    """A mirror by its labels (vdev_type mirror, or a stack named raid1 or mirror)."""
    words = f"{r.get('vdev_type') or ''} {r.get('stack') or ''}".lower()
    return "mirror" in words or "raid1" in words


def device_spreads(disks: pl.DataFrame) -> list[DeviceSpread]:
    """Runs whose member devices' write times per I/O differ by 10x or more: within one run (a file of appended runs
    prints one line per run for the same disk: those are runs, not members), of the devices of one array
    (``one_array``), each with ``MIN_WRITES`` writes or more."""
    out: list[DeviceSpread] = []
    if disks.is_empty():
        return out
    timed = disks.filter(pl.col("ms_per_io").is_not_null() & (pl.col("write_ios") >= MIN_WRITES))
    for _, g in timed.group_by("file_id", "doc_index", maintain_order=True):
        ms: list[float] = g["ms_per_io"].to_list()
        if not one_array(g) or min(ms) <= 0 or max(ms) / min(ms) < 10:
            continue
        fast, r = g.sort("ms_per_io").row(0, named=True), g.row(0, named=True)
        label = str(r["label"]) + (f" (run {r['doc_index'] + 1} of the file)" if r["runs_in_file"] > 1 else "")
        out.append(
            DeviceSpread(
                label,
                tuple(zip(g["disk"].to_list(), ms, strict=True)),
                fast["disk"],
                max(ms) / fast["ms_per_io"],
                tuple(lines_of(x) for x in g.iter_rows(named=True)),
                mirror=mirrored(r),
            )
        )
    return out


def test_sizes(d: pl.DataFrame) -> TestSizes:
    """Each run's working set against what can cache it (the design checks' numbers: the RAM its labels give, or on
    ZFS its machine's ARC maximum, ``design.cache_bound``)."""

    fits: list[tuple[str, float, float, str]] = []
    direct_unknown: list[tuple[str, float, float]] = []
    sizeless: list[str] = []
    unknown: dict[float | None, int] = {}
    for r in d.iter_rows(named=True):
        ram, _ = plausibility.ram_bytes(r["command"], r["notes"], r.get("ram_bytes"))
        size, where = r["design_working_set_bytes"], r.get("design_cache_where") or design.RAM_WHERE
        if not ram and where == design.RAM_WHERE:
            unknown[size] = unknown.get(size, 0) + 1
        elif not size:
            sizeless.append(r["label"])
        elif r["design_fits_in_cache"]:
            fits.append((r["label"], size, r["design_cache_bytes"], where))
        elif (known := design.direct_unknown(design.flags_of(r))) is not None:
            direct_unknown.append((r["label"], *known))
    ram_unknown = tuple(sorted(unknown.items(), key=lambda kv: -kv[1]))
    return TestSizes(tuple(fits), tuple(sizeless), ram_unknown, tuple(direct_unknown))


def _group_ref(g: pl.DataFrame) -> RunRef:
    """A configuration's runs as a finding names them: one run by its label, several (repeats, or runs appended to
    one file) by the configuration's name with their mean, every mark they carry, all their lines."""
    if g.height == 1:
        return _ref(g.row(0, named=True))
    marks = (
        [m for m in g["mark"].fill_null("").unique(maintain_order=True).to_list() if m] if "mark" in g.columns else []
    )
    values = g["bw_bytes_per_s"].to_list()
    return RunRef(str(g["config"][0]), sum(values) / len(values), "; ".join(marks), lines_of(g))


def repeat_tests(reps: pl.DataFrame, d: pl.DataFrame) -> list[RepeatTest]:
    """Each group of repeats, with every other configuration of its workload and stack (``repeat_groups``: its runs
    pooled, as notebook 08 pools them) tested against it once, by the test both sides' runs allow
    (``stats.compare``: Welch's t test where the other has repeats too, its one run against the prediction
    interval for one new run where it has one); a pair of repeat groups is tested once, under the first."""
    keyed = repeat_groups.with_names(d.with_columns(config_name=fio_runs.config_label(d)), "config_name", "config")
    key = repeat_groups.KEY
    done: set[tuple[str, str, str]] = set()
    out = []
    for r in reps.iter_rows(named=True):
        ref = stats.summarise(r["values"])
        same = keyed.filter((pl.col("workload") == r["workload"]) & pl.col("stack").eq_missing(r["stack"]))
        tested = []
        for (other,), g in same.filter(pl.col(key) != r[key]).group_by(key, maintain_order=True):
            if (r["workload"], *sorted((r[key], other))) in done:
                continue
            done.add((r["workload"], *sorted((r[key], other))))
            tested.append((_group_ref(g), stats.compare(stats.summarise(g["bw_bytes_per_s"].to_list()), ref)))
        mine = same.filter(pl.col(key) == r[key])
        out.append(
            RepeatTest(
                r["config"], r["workload"], tuple(r["labels"]), ref, r["spread_pct"], tuple(tested), lines_of(mine)
            )
        )
    return out


def costs_of(costs: pl.DataFrame, d: pl.DataFrame) -> list[LayerCost]:
    """``layer_costs`` rows (their own bandwidths) with the marks of the runs they name (a label that several runs
    share, as runs appended to one file do, carries every mark they have)."""
    marks: dict[str, list[str]] = {}
    for label, mark in zip(d["label"], d["mark"], strict=True):
        if mark and mark not in marks.setdefault(label, []):
            marks[label].append(mark)

    def ref(label: str, bw: float) -> RunRef:
        runs = d.filter((pl.col("label") == label) & (pl.col("bw_bytes_per_s") == bw))  # the run of that bandwidth
        return RunRef(label, bw, "; ".join(marks.get(label, [])), lines_of(runs))

    out = []
    for c in costs.iter_rows(named=True):
        base = None if c["zfs_version_differs"] else ref(c["base"], c["base_bytes_per_s"])
        over = ref(c["over"], c["over_bytes_per_s"])
        out.append(LayerCost(c["layer"], over, base, c["base"], c["penalty_pct"], c["zfs_version_differs"]))
    return out


def compute(
    d: pl.DataFrame,
    disks: pl.DataFrame,
    direction: str,
    margin: float,
    min_elapsed_s: float = design.MIN_ELAPSED_S,
    logs: run_verdicts.Logs | None = None,
) -> StacksResult:
    """The pure compute step: flags, design checks, rankings, limits, test sizes, repeats and layer costs of the
    runs ``d`` of one direction (``query``'s second frame, not empty); ``logs``: their log files (``query``)."""
    logs = logs or run_verdicts.Logs()
    judged = judge(d, logs, margin, min_elapsed_s)
    diffs = verdict_diffs(d, judged, logs, margin, min_elapsed_s)
    d = with_counted(marked(judged))
    known = d.filter(pl.col("workload_known"))  # runs of unknown mode or block size are compared with none
    configs = configurations(known)
    workloads, ranks = rankings(configs)
    reps = repeats(known.filter(pl.col("counted")))
    costs = layer_costs(known)
    over = d.filter(pl.col("inflated").fill_null(False)).sort("bw_bytes_per_s", descending=True)
    head = headline_ranking(ranks)
    in_files = d.sort("path", "doc_index", "groupid", maintain_order=True)  # lists name runs in file order
    return StacksResult(
        direction=direction,
        margin=margin,
        min_elapsed_s=min_elapsed_s,
        runs=d,
        workloads=workloads,
        rankings=ranks,
        configs=configs,
        unknown_workload=in_files.filter(~pl.col("workload_known"))["label"].to_list(),
        over_limit=[
            OverLimit(r["label"], r["bw_bytes_per_s"], r["device_limit_bytes_per_s"], bool(r["weak"]), lines_of(r))
            for r in over.iter_rows(named=True)
        ],
        at_limit=[_ref(r) for r in d.filter(pl.col("at_limit").fill_null(False)).iter_rows(named=True)],
        direct_ignored=in_files.filter(pl.col("direct_ignored"))["label"].to_list(),
        shared_file=in_files.filter(pl.col("shared_file"))["label"].to_list(),
        no_limit=d.filter(pl.col("device_limit_bytes_per_s").is_null()).height,
        design=[(r["label"], design.flags_of(r)) for r in in_files.iter_rows(named=True)],
        phase_pairs=phase_pairs(known),
        design_rows=in_files.select(
            c
            for c in ("path", "sha256", "line_start", "line_end", "slowest_line_start", "slowest_line_end")
            if c in in_files.columns
        ).to_dicts(),
        device_spreads=device_spreads(disks),
        device_latency=disks,
        sizes=test_sizes(in_files),
        repeats=reps,
        repeat_tests=repeat_tests(reps, d.filter(pl.col("counted"))),  # a run left out is no peer
        layer_costs=costs,
        costs=costs_of(costs, d),
        fastest=head.flagged_faster[0] if head and head.flagged_faster else None,
        best_clean=head.fastest if head else None,
        flagged_above_best=len(head.flagged_faster) if head else 0,
        unranked=0 if head or len(ranks) < 2 else sum(k.fastest is not None for k in ranks),
        left_out=left_out(configs),
        all_flagged=all_flagged(configs, known),
        verdict_diffs=diffs,
    )


def headline_ranking(ranks: list[Ranking]) -> Ranking | None:
    """The one workload a headline may rank (as 08: runs are compared within one workload only): the workload
    holding every unflagged configuration, or the only workload; None where the unflagged configurations are of
    several workloads (or none is unflagged in several)."""
    clean = [k for k in ranks if k.fastest is not None]
    if len(clean) == 1:
        return clean[0]
    return ranks[0] if len(ranks) == 1 else None


def analyse(
    con,
    sel: Selection,
    direction: str = "write",
    inflation_margin: float = run_verdicts.MARGIN,
    min_elapsed_s: float = design.MIN_ELAPSED_S,
) -> Result:
    """Notebook 05 on any selection: ``query``, then ``compute``, then ``stacks_findings.write``."""
    if not inflation_margin >= 1:  # below 1 would flag runs slower than the device can deliver
        raise ValueError(
            f"inflation_margin must be 1 or more (how far above its labelled device limit a run must be to be "
            f"flagged as cached), got {inflation_margin}"
        )
    if not min_elapsed_s >= 0:
        raise ValueError(f"min_elapsed_s must be 0 or more (seconds a run must last), got {min_elapsed_s}")
    all_runs, d, disks, logs = query(con, sel, direction)
    res = Result.start(con, sel, measures.per_file(con, sel, all_runs))
    res.missing += fio_failed.sentences(con, sel)  # runs fio stopped on an error: named, never silently gone
    if all_runs.is_empty():
        res.missing.append(
            f"no fio runs for {sel.describe()}: run fio (e.g. `fio --name=seq --rw=write --bs=1M --size=4G "
            "--output-format=normal,json+ > run.txt`), put the output under data/raw/<study>/, give it a row in "
            "data/raw/manifest.csv (study, label, stack) and run ./run ingest"
        )
        return res
    if d.is_empty():
        dirs = ", ".join(sorted(set(all_runs["direction"].to_list())))
        res.missing.append(
            f"no fio {direction} runs for {sel.describe()} (the runs there are {dirs}): "
            f"set the parameter direction to one of them{_mixed_note(all_runs) if direction == 'mixed' else ''}"
        )
        return res
    res = stacks_findings.write(res, compute(d, disks, direction, inflation_margin, min_elapsed_s, logs))
    res.findings += arc.notes(d)  # ARC hit ratios the flag does not show (below it, since boot), and what is missing
    res.missing += arc.missing(d) + arc.untied(con, sel)
    if "workload_inferred" in d.columns:  # what a workload took from the output, not an option (fio_runs)
        inferred = d.filter(pl.col("workload_inferred").is_not_null()).select("label", "workload_inferred")
        res.findings += [f"{label}: {note}." for label, note in inferred.unique(maintain_order=True).iter_rows()]
    return res
