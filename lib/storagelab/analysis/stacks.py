"""Filesystem stacks compared on the same fio workload (notebook 05): bandwidth per run (``fio_runs``' one run
bandwidth), cache-inflation flags, test-design checks (``design``), repeats and their prediction interval
(``stats``), and the cost of a layer (mergerfs, autotier, ...) over the stack beneath it.

Three steps: ``query`` (SQL to frames), ``compute`` (a ``StacksResult`` of named numbers), ``findings`` (sentences
from that result only); ``analyse`` runs them. A flagged run (a plausibility flag other than a weak one, or a
design flag) is marked in every table and chart and never heads a ranking.

Runs are compared only within one workload (``fio_runs.workload``). A layer's cost is measured where
the selection has a run of ``<layer>+<base>`` and one of ``<base>`` with the same workload and ZFS
version (stack labels as in the manifest, e.g. ``mergerfs+zfs`` over ``zfs``).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..units import MiB
from . import arc, design, fio_runs, measures, plausibility, prose, stats
from .db import frame
from .result import Result
from .selection import Selection


def runs(con, study: str | None = None) -> pl.DataFrame:
    """Every fio run of a study (all studies for None/''), with labels and workload (see fio_runs.runs)."""
    return fio_runs.runs(con, Selection(study=study or ""))


def printed_range(bw_bytes_per_s: float | None, exact: bool | None) -> tuple[float | None, float | None]:
    """The bandwidths a printed (rounded) value can stand for: fio's text prints 3-4 significant digits
    (``944MiB/s`` is 943.5-944.5 MiB/s); exact values (JSON, terse) are their own bounds."""
    if bw_bytes_per_s is None or exact:
        return bw_bytes_per_s, bw_bytes_per_s
    v = bw_bytes_per_s / MiB
    for d in range(4):
        if abs(round(v, d) - v) < 1e-9:
            return (v - 0.5 * 10**-d) * MiB, (v + 0.5 * 10**-d) * MiB
    return bw_bytes_per_s, bw_bytes_per_s


FLAGS = (
    "above the device's limit",
    "at the limit, within rounding",
    "direct=1 ignored (ZFS < 2.3)",
    "within the limit",
    "no device limit labelled",
    "just above the labelled limit (weak)",
)
# the flags that say nothing against a run (explore and 08 read them by position: keep 3 and 4)
CLEAN_FLAGS = (FLAGS[3], FLAGS[4])
# the flags that keep a run from heading a ranking (a weak one is shown, but does not)
SUSPECT_FLAGS = (FLAGS[0], FLAGS[1], FLAGS[2])
DESIGN_STATUS = "test design flagged"  # a run whose only flags are design checks (see ``marked``'s ``status``)
SHORT_FLAG = {FLAGS[0]: "above limit", FLAGS[1]: "at limit", FLAGS[2]: "direct ignored", FLAGS[5]: "above limit?"}
# above the labelled limit by less than this factor, a flag rests on how exact the limit is: weak (an 'about
# 170 MB/s' HDD ran at 1.14x it; 18 TB HDD datasheets give 260-270 MB/s)
WEAK_BELOW = 1.25


def with_flags(df: pl.DataFrame, margin: float = 1.0, weak_below: float = WEAK_BELOW) -> pl.DataFrame:
    """Add MiB/s and the plausibility flags of each run:

    * ``inflated``: even the lowest value the printed figure can stand for is above the device's stated limit
      (``device_limit_bytes_per_s`` x margin): if that limit is right, a cache answered (None: no limit);
      ``weak``: inflated, but by less than ``weak_below`` x the limit, so the flag is only as good as the limit;
      ``at_limit``: the limit lies within the printed figure's rounding, so the figure cannot tell;
    * ``direct_ignored``: ``direct=1`` on ZFS before 2.3, which accepts O_DIRECT and still caches
      (``plausibility.direct_ignored``);
    * ``shared_file``: numjobs > 1 all on one ``--filename``: their writes overlap, and a buffered ZFS merges
      them in a transaction group while O_DIRECT stacks send every one to the device.

    ``flag`` is the first of FLAGS that applies."""

    ranges = [printed_range(b, e) for b, e in zip(df["bw_bytes_per_s"], df["exact"], strict=True)]
    ignored = [
        bool(plausibility.direct_ignored(d, s, v))
        for d, s, v in zip(df["wl_direct"], df["stack"], df["zfs_version"], strict=True)
    ]
    shared = [design.shares_one_file(c, j) for c, j in zip(df["command"], df["wl_numjobs"], strict=True)]
    limit = pl.col("device_limit_bytes_per_s")
    return (
        df.with_columns(
            bw_mib_s=pl.col("bw_bytes_per_s") / MiB,
            bw_low_bytes_per_s=pl.Series([r[0] for r in ranges], dtype=pl.Float64),
            bw_high_bytes_per_s=pl.Series([r[1] for r in ranges], dtype=pl.Float64),
            limit=limit * margin,
        )
        .with_columns(
            inflated=pl.when(pl.col("limit").is_null())
            .then(None)
            .otherwise(pl.col("bw_low_bytes_per_s") > pl.col("limit")),
            at_limit=pl.when(pl.col("limit").is_null())
            .then(None)
            .otherwise(
                (pl.col("bw_low_bytes_per_s") <= pl.col("limit")) & (pl.col("bw_high_bytes_per_s") >= pl.col("limit"))
            ),
            direct_ignored=pl.Series(ignored, dtype=pl.Boolean),
            shared_file=pl.Series(shared, dtype=pl.Boolean),
        )
        .with_columns(weak=pl.col("inflated") & (pl.col("bw_low_bytes_per_s") < limit * weak_below))
        .with_columns(
            flag=pl.when(pl.col("inflated") & ~pl.col("weak"))
            .then(pl.lit(FLAGS[0]))
            .when(pl.col("weak"))
            .then(pl.lit(FLAGS[5]))
            .when(pl.col("at_limit"))
            .then(pl.lit(FLAGS[1]))
            .when(pl.col("direct_ignored"))
            .then(pl.lit(FLAGS[2]))
            .when(pl.col("limit").is_not_null())
            .then(pl.lit(FLAGS[3]))
            .otherwise(pl.lit(FLAGS[4])),
        )
        .drop("limit")
    )


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
SELECT coalesce(f.label, f.path) AS label, d.file_id, d.disk, d.write_ios, d.read_ios,
       d.write_ticks_ns / nullif(d.write_ios, 0) / 1e6 AS ms_per_io, d.util_pct, d.line_start
FROM fio_disk_stats d JOIN files f USING (file_id)
WHERE list_contains(?::INTEGER[], d.file_id) AND NOT coalesce(d.has_slaves, false) ORDER BY f.path, d.disk
"""


def device_latency(con, sel: Selection, file_ids: list[int]) -> pl.DataFrame:
    """Per run and member device (md/dm aggregates left out): write I/Os and mean write time per I/O (ms),
    from fio's disk statistics."""

    return frame(con, DISK_SQL, [sorted(set(file_ids))])


def repeats(df: pl.DataFrame) -> pl.DataFrame:
    """Repeated runs: the same workload, stack and ZFS version, labels equal once a 'run N' mark is taken out.
    Per group of two or more: n, mean, sd, min, max, the spread (half the range, % of the mean), and from
    ``stats.summarise`` the 95 % confidence interval of the mean (``ci95_bytes_per_s``, half-width), the 95 %
    prediction interval for one new run (``pi95_bytes_per_s``) and, from five runs, a seeded bootstrap interval of
    the mean (``boot_low/high_bytes_per_s``); ``values``: the runs' bandwidths."""
    g = (
        df.with_columns(config=fio_runs.config_label())
        .group_by("config", "workload", "stack", "zfs_version", maintain_order=True)
        .agg(
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
        spread_pct=(pl.col("high") - pl.col("low")) / 2 / pl.col("mean") * 100,
        ci95_bytes_per_s=pl.Series([r.ci.half for r in summaries], dtype=pl.Float64),
        pi95_bytes_per_s=pl.Series([r.pi.half for r in summaries], dtype=pl.Float64),
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


# ---- notebook 05 in three steps: query (SQL -> frames), compute (frames -> StacksResult), findings (-> Result) ----


@dataclass(frozen=True)
class RunRef:
    """One run as a finding names it: label, bandwidth (bytes/s) and its mark ('' or '⚠ ...')."""

    label: str
    bytes_per_s: float
    mark: str = ""


@dataclass(frozen=True)
class Ranking:
    """One workload's runs: the fastest run with no flag (None when every run is flagged), the slowest run, and the
    flagged runs faster than that fastest one (a flagged run never heads the ranking)."""

    workload: str
    runs: int
    fastest: RunRef | None
    slowest: RunRef
    flagged_faster: tuple[RunRef, ...]


@dataclass(frozen=True)
class OverLimit:
    """A run faster than its labelled device limit x margin; ``weak``: by less than WEAK_BELOW x the limit."""

    label: str
    bytes_per_s: float
    limit_bytes_per_s: float
    weak: bool

    @property
    def ratio(self) -> float:
        return self.bytes_per_s / self.limit_bytes_per_s


@dataclass(frozen=True)
class DeviceSpread:
    """Member devices of one run whose write times per I/O differ >= 10x (fio's disk stats)."""

    label: str
    ms_per_io: tuple[tuple[str, float], ...]
    fastest_disk: str
    factor: float


@dataclass(frozen=True)
class TestSizes:
    """Runs whose working set fits the RAM they are labelled with (label, bytes, RAM), runs with RAM but no size,
    and the test sizes of the runs without RAM (size or None -> how many runs)."""

    fits: tuple[tuple[str, float, float], ...]
    sizeless: tuple[str, ...]
    ram_unknown: tuple[tuple[float | None, int], ...]


@dataclass(frozen=True)
class RepeatTest:
    """Repeats of one configuration (``stats.Repeats`` of their bandwidths) and every other run of its workload and
    stack tested against them (``stats.compare``: one run against the prediction interval)."""

    config: str
    workload: str
    labels: tuple[str, ...]
    repeats: stats.Repeats
    spread_pct: float
    peers: tuple[tuple[RunRef, stats.Comparison], ...]


@dataclass(frozen=True)
class LayerCost:
    """A layer over its base stack (``layer_costs``), with both runs' marks."""

    layer: str
    over: RunRef
    base: RunRef | None
    base_labels: str
    penalty_pct: float | None
    zfs_version_differs: bool


@dataclass
class StacksResult:
    """Everything notebook 05 says, as named numbers (the frames are for its tables and chart)."""

    direction: str
    margin: float
    min_elapsed_s: float
    runs: pl.DataFrame
    workloads: pl.DataFrame
    rankings: list[Ranking]
    unknown_workload: list[str]
    over_limit: list[OverLimit]
    at_limit: list[RunRef]
    direct_ignored: list[str]
    shared_file: list[str]
    no_limit: int
    design: list[tuple[str, design.DesignFlags]]  # every run's design checks
    device_spreads: list[DeviceSpread]
    device_latency: pl.DataFrame
    sizes: TestSizes
    repeats: pl.DataFrame
    repeat_tests: list[RepeatTest]
    layer_costs: pl.DataFrame
    costs: list[LayerCost]
    fastest: RunRef  # the fastest run, flagged or not
    best_clean: RunRef | None  # the fastest run with no flag
    flagged_above_best: int  # runs faster than best_clean, all flagged


def query(con, sel: Selection, direction: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """SQL to frames: every fio run of the selection (``fio_runs.runs``, with ``runs_in_workload``), the runs of
    ``direction`` (labels filled from the path where missing) and their member devices' write times."""
    all_runs = fio_runs.comparable(fio_runs.runs(con, sel))
    if all_runs.is_empty():
        return all_runs, all_runs, pl.DataFrame()
    d = all_runs.filter(pl.col("direction") == direction).with_columns(
        label=pl.coalesce("label", pl.col("path").str.split("/").list.last())
    )
    disks = device_latency(con, sel, d["file_id"].to_list()) if d.height else pl.DataFrame()
    return all_runs, d, disks


def marked(d: pl.DataFrame, margin: float, weak_below: float = WEAK_BELOW, **thresholds) -> pl.DataFrame:
    """The runs with plausibility flags (``with_flags``), design checks (``design.with_design``), ``suspect`` (a
    plausibility flag other than a weak one, or a design flag: such a run never heads a ranking), ``mark`` (''
    or '⚠ above limit, overran, stall'), ``label_marked``, ``status`` (the flag, or DESIGN_STATUS for a run flagged
    by design checks alone) and ``rank`` (1 = first in its workload); sorted: per workload, unflagged runs first,
    fastest first."""
    d = design.with_design(with_flags(d, margin, weak_below), **thresholds)
    marks = []
    for flag, codes in zip(d["flag"], d["design_flags"], strict=True):
        parts = [SHORT_FLAG[flag]] if flag in SHORT_FLAG else []
        parts += [c for c in codes if c not in parts]
        marks.append(f"{design.MARK} {', '.join(parts)}" if parts else "")
    d = d.with_columns(
        suspect=pl.col("flag").is_in(SUSPECT_FLAGS) | pl.col("design_flagged"),
        mark=pl.Series(marks, dtype=pl.String),
        status=pl.when(pl.col("flag").is_in(CLEAN_FLAGS) & pl.col("design_flagged"))
        .then(pl.lit(DESIGN_STATUS))
        .otherwise(pl.col("flag")),
    )
    return (
        d.with_columns(
            label_marked=pl.when(pl.col("mark") == "")
            .then(pl.col("label"))
            .otherwise(pl.concat_str(pl.col("label"), pl.lit(" "), pl.col("mark")))
        )
        .sort(["workload", "suspect", "bw_bytes_per_s"], descending=[False, False, True], nulls_last=True)
        .with_columns(rank=pl.int_range(pl.len()).over("workload") + 1)
    )


def _ref(r: dict) -> RunRef:
    return RunRef(r["label"], r["bw_bytes_per_s"], r.get("mark") or "")


def rankings(known: pl.DataFrame) -> tuple[pl.DataFrame, list[Ranking]]:
    """Workloads by number of runs, and each one's ranking (fastest unflagged first)."""
    workloads = (
        known.group_by("workload")
        .agg(pl.len().alias("runs"), pl.col("bw_bytes_per_s").max().alias("best"))
        .sort("runs", "best", descending=True)
    )
    out = []
    for w in workloads["workload"].to_list():
        g = known.filter(pl.col("workload") == w).sort("bw_bytes_per_s", descending=True)
        clean = g.filter(~pl.col("suspect"))
        top = _ref(clean.row(0, named=True)) if clean.height else None
        faster = g.filter(pl.col("suspect") & (pl.col("bw_bytes_per_s") > (top.bytes_per_s if top else -1)))
        out.append(
            Ranking(w, g.height, top, _ref(g.row(-1, named=True)), tuple(map(_ref, faster.iter_rows(named=True))))
        )
    return workloads, out


def device_spreads(disks: pl.DataFrame) -> list[DeviceSpread]:
    """Runs whose member devices' write times per I/O differ by 10x or more."""
    out = []
    if disks.is_empty():
        return out
    for (label,), g in disks.filter(pl.col("ms_per_io").is_not_null()).group_by("label", maintain_order=True):
        if g.height > 1 and g["ms_per_io"].min() > 0 and g["ms_per_io"].max() / g["ms_per_io"].min() >= 10:
            fast = g.sort("ms_per_io").row(0, named=True)
            out.append(
                DeviceSpread(
                    label,
                    tuple(zip(g["disk"].to_list(), g["ms_per_io"].to_list(), strict=True)),
                    fast["disk"],
                    g["ms_per_io"].max() / fast["ms_per_io"],
                )
            )
    return out


def test_sizes(d: pl.DataFrame) -> TestSizes:
    """Each run's working set against the RAM its labels give (the design checks' numbers)."""

    fits, sizeless, unknown = [], [], {}
    for r in d.iter_rows(named=True):
        ram, _ = plausibility.ram_bytes(r["command"], r["notes"], r.get("ram_bytes"))
        size = r["design_working_set_bytes"]
        if not ram:
            unknown[size] = unknown.get(size, 0) + 1
        elif not size:
            sizeless.append(r["label"])
        elif r["design_fits_in_cache"]:
            fits.append((r["label"], size, r["design_cache_bytes"]))
    return TestSizes(tuple(fits), tuple(sizeless), tuple(sorted(unknown.items(), key=lambda kv: -kv[1])))


def repeat_tests(reps: pl.DataFrame, d: pl.DataFrame) -> list[RepeatTest]:
    """Each group of repeats, with every other run of its workload and stack tested against it."""
    out = []
    for r in reps.iter_rows(named=True):
        ref = stats.summarise(r["values"])
        peers = d.filter(
            (pl.col("workload") == r["workload"])
            & pl.col("stack").eq_missing(r["stack"])
            & ~pl.col("label").is_in(r["labels"])
        )
        tested = tuple(
            (_ref(p), stats.compare(stats.summarise([p["bw_bytes_per_s"]]), ref)) for p in peers.iter_rows(named=True)
        )
        out.append(RepeatTest(r["config"], r["workload"], tuple(r["labels"]), ref, r["spread_pct"], tested))
    return out


def costs_of(costs: pl.DataFrame, d: pl.DataFrame) -> list[LayerCost]:
    """``layer_costs`` rows (their own bandwidths) with the marks of the runs they name (a label that several runs
    share, as runs appended to one file do, carries every mark they have)."""
    marks: dict[str, list[str]] = {}
    for label, mark in zip(d["label"], d["mark"], strict=True):
        if mark and mark not in marks.setdefault(label, []):
            marks[label].append(mark)

    def ref(label: str, bw: float) -> RunRef:
        return RunRef(label, bw, "; ".join(marks.get(label, [])))

    out = []
    for c in costs.iter_rows(named=True):
        base = None if c["zfs_version_differs"] else ref(c["base"], c["base_bytes_per_s"])
        over = ref(c["over"], c["over_bytes_per_s"])
        out.append(LayerCost(c["layer"], over, base, c["base"], c["penalty_pct"], c["zfs_version_differs"]))
    return out


def compute(
    d: pl.DataFrame, disks: pl.DataFrame, direction: str, margin: float, min_elapsed_s: float = design.MIN_ELAPSED_S
) -> StacksResult:
    """The pure compute step: flags, design checks, rankings, limits, test sizes, repeats and layer costs of the
    runs ``d`` of one direction (``query``'s second frame, not empty)."""
    d = marked(d, margin, min_elapsed_s=min_elapsed_s)
    known = d.filter(pl.col("workload_known"))  # runs of unknown mode or block size are compared with none
    workloads, ranks = rankings(known)
    reps = repeats(known)
    costs = layer_costs(known)
    over = d.filter(pl.col("inflated").fill_null(False)).sort("bw_bytes_per_s", descending=True)
    clean = d.filter(~pl.col("suspect")).sort("bw_bytes_per_s", descending=True)
    best_clean = _ref(clean.row(0, named=True)) if clean.height else None
    in_files = d.sort("path", "doc_index", "groupid", maintain_order=True)  # lists name runs in file order
    return StacksResult(
        direction=direction,
        margin=margin,
        min_elapsed_s=min_elapsed_s,
        runs=d,
        workloads=workloads,
        rankings=ranks,
        unknown_workload=in_files.filter(~pl.col("workload_known"))["label"].to_list(),
        over_limit=[
            OverLimit(r["label"], r["bw_bytes_per_s"], r["device_limit_bytes_per_s"], bool(r["weak"]))
            for r in over.iter_rows(named=True)
        ],
        at_limit=[_ref(r) for r in d.filter(pl.col("at_limit").fill_null(False)).iter_rows(named=True)],
        direct_ignored=in_files.filter(pl.col("direct_ignored"))["label"].to_list(),
        shared_file=in_files.filter(pl.col("shared_file"))["label"].to_list(),
        no_limit=d.filter(pl.col("device_limit_bytes_per_s").is_null()).height,
        design=[(r["label"], design.flags_of(r)) for r in in_files.iter_rows(named=True)],
        device_spreads=device_spreads(disks),
        device_latency=disks,
        sizes=test_sizes(in_files),
        repeats=reps,
        repeat_tests=repeat_tests(reps, d),
        layer_costs=costs,
        costs=costs_of(costs, d),
        fastest=_ref(d.sort("bw_bytes_per_s", descending=True).row(0, named=True)),
        best_clean=best_clean,
        flagged_above_best=d.filter(pl.col("bw_bytes_per_s") > best_clean.bytes_per_s).height
        if best_clean
        else d.height,
    )


def analyse(
    con,
    sel: Selection,
    direction: str = "write",
    inflation_margin: float = 1.1,
    min_elapsed_s: float = design.MIN_ELAPSED_S,
) -> Result:
    """Notebook 05 on any selection: ``query``, then ``compute``, then ``findings``."""
    if not inflation_margin >= 1:  # below 1 would flag runs slower than the device can deliver
        raise ValueError(
            f"inflation_margin must be 1 or more (how far above its labelled device limit a run must be to be "
            f"flagged as cached), got {inflation_margin}"
        )
    if not min_elapsed_s >= 0:
        raise ValueError(f"min_elapsed_s must be 0 or more (seconds a run must last), got {min_elapsed_s}")
    all_runs, d, disks = query(con, sel, direction)
    res = Result.start(con, sel, measures.per_file(con, sel, all_runs))
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
            f"set the parameter direction to one of them"
        )
        return res
    res = findings(res, compute(d, disks, direction, inflation_margin, min_elapsed_s))
    res.findings += arc.notes(d)  # ARC hit ratios the flag does not show (below it, since boot), and what is missing
    res.missing += arc.missing(d) + arc.untied(con, sel)
    if "workload_inferred" in d.columns:  # what a workload took from the output, not an option (fio_runs)
        inferred = d.filter(pl.col("workload_inferred").is_not_null()).select("label", "workload_inferred")
        res.findings += [f"{label}: {note}." for label, note in inferred.unique(maintain_order=True).iter_rows()]
    return res


# ---- findings: sentences from StacksResult only ---------------------------------------------------------------


def _name(ref: RunRef) -> str:
    return f"{ref.label} ({prose.rate(ref.bytes_per_s)})"


def _ranking_sentences(r: StacksResult) -> list[str]:
    out = []
    for k in r.rankings:
        if k.runs == 1:
            only = k.slowest
            out.append(
                f"`{k.workload}`: one run ({only.label}, {prose.rate(only.bytes_per_s)}"
                f"{', ' + only.mark if only.mark else ''}), nothing to compare it with."
            )
            continue
        if k.fastest is None:
            out.append(
                f"`{k.workload}`: all {k.runs} runs are flagged "
                f"({prose.listing([f'{x.label} {x.mark}' for x in k.flagged_faster])}), so none is ranked first."
            )
            continue
        text = (
            f"`{k.workload}`: fastest run with no flag {k.fastest.label} at {prose.rate(k.fastest.bytes_per_s)}, "
            f"slowest {k.slowest.label} at {prose.rate(k.slowest.bytes_per_s)} "
            f"({k.slowest.bytes_per_s / k.fastest.bytes_per_s:.2f}x of it)"
        )
        if k.flagged_faster:
            text += "; faster but flagged: " + prose.listing(
                [f"{x.label} at {prose.rate(x.bytes_per_s)} {x.mark}" for x in k.flagged_faster]
            )
        out.append(text + ".")
    return out


def _limit_sentences(r: StacksResult) -> list[str]:
    out = []
    strong = [o for o in r.over_limit if not o.weak]
    weak = [o for o in r.over_limit if o.weak]

    def names(items):
        return [
            f"{o.label} {o.bytes_per_s / 1e6:.1f} MB/s = {o.ratio:.2f}x its {o.limit_bytes_per_s / 1e6:.1f} MB/s limit"
            for o in items
        ]

    if strong:
        out.append(
            f"Faster than the device limit labelled in the manifest x {r.margin:g}, even at the lowest value the "
            f"printed figure stands for: {prose.listing(names(strong))}. If the labelled limit is right, a cache "
            "answered, not the device."
        )
    if weak:
        out.append(
            f"Above the labelled limit x {r.margin:g} by less than {WEAK_BELOW:g}x it: {prose.listing(names(weak))}. "
            "A weak flag, only as good as the limit (one quoted as 'about', or a datasheet figure, can be that far "
            "off): marked, but it does not keep the run from a ranking."
        )
    if r.at_limit:
        out.append(
            f"At the device's limit x {r.margin:g} within the printed figure's rounding, so the log cannot tell "
            f"whether a cache helped: {prose.listing([_name(x) for x in r.at_limit])}."
        )
    if r.direct_ignored:
        out.append(
            f"`direct=1` on ZFS before 2.3, which accepts O_DIRECT and still goes through the ARC: "
            f"{prose.listing(r.direct_ignored)}: these measured the cache as much as the disks."
        )
    if r.shared_file:
        out.append(
            f"numjobs > 1 on one `--filename` (the jobs overwrite the same blocks at once; buffered ZFS "
            f"merges them in a transaction group, O_DIRECT stacks write each): {prose.listing(r.shared_file)}."
        )
    return out


def _design_sentences(r: StacksResult) -> tuple[list[str], list[str]]:
    """Findings naming each run whose test design is flagged, and what could not be checked."""
    # direct=1 on ZFS < 2.3 has its own finding (_limit_sentences): a run flagged for that alone is not repeated
    flagged = [
        design.sentence(label, f, r.min_elapsed_s)
        for label, f in r.design
        if f.flagged and f.codes != ("direct ignored",)
    ]
    out = []
    if flagged:
        out.append("Test design: " + " ".join(flagged) + " Such runs are marked ⚠ and never head a ranking.")
    missing = []
    no_runtime = [label for label, f in r.design if f.overran is None and f.elapsed_s is not None]
    if no_runtime:
        missing.append(
            f"the runtime option of {len(no_runtime)} run(s) is not in their output or command "
            f"({prose.listing(no_runtime)}): whether they overran it (a stall) cannot be checked"
        )
    no_slowest = [label for label, f in r.design if f.slowest_io_s is None]
    if no_slowest:
        missing.append(
            f"{len(no_slowest)} run(s) have no completion latency maximum in their output "
            f"({prose.listing(no_slowest)}): a single stalled I/O cannot be seen"
        )
    return out, missing


def _size_sentences(r: StacksResult) -> tuple[list[str], list[str]]:
    found, missing = [], []
    s = r.sizes
    if s.sizeless:
        missing.append(
            f"the test size of {len(s.sizeless)} run(s) is not in their output or command ({prose.listing(list(s.sizeless))}): "
            "whether the file fits in the RAM they are labelled with cannot be checked; give the fio command line "
            "in the manifest's command column (fio prints the size, 'Laying out IO file (1 file / NMiB)', only where "
            "it created the file: their outputs have no such line)"
        )
    if s.fits:
        found.append(
            "Test size below RAM (reads and, on ZFS, writes can be served from the page cache or ARC): "
            + prose.listing([f"{label} ({prose.size(b)} in {prose.size(ram)} of RAM)" for label, b, ram in s.fits])
            + "."
        )
    if s.ram_unknown:
        n = sum(k for _, k in s.ram_unknown)
        missing.append(
            f"the RAM of the machine is not in the logs or labels of {n} run(s) (test size "
            + prose.listing([f"{prose.size(b) if b else 'not known'} for {k}" for b, k in s.ram_unknown])
            + "): whether a file fits in the page cache or ARC cannot be checked; fill the manifest's "
            "ram_bytes column (storagelab lab does)"
        )
    return found, missing


def _repeat_sentences(r: StacksResult) -> list[str]:
    out = []
    for t in r.repeat_tests:
        rep = t.repeats
        boot = (
            f", bootstrap interval of the mean {prose.mib(rep.bootstrap.low)} to {prose.mib(rep.bootstrap.high)}"
            if rep.bootstrap
            else ""
        )
        out.append(
            f"{t.config}: {rep.n} repeated runs, mean {prose.rate(rep.mean)}, spread ±{t.spread_pct:.1f} % (95 % "
            f"confidence interval of the mean ±{prose.figure(rep.ci.half / MiB)} MiB/s, ±{rep.ci.half_pct:.1f} %; "
            f"95 % prediction interval for one new run ±{prose.figure(rep.pi.half / MiB)} MiB/s, "
            f"±{rep.pi.half_pct:.1f} %{boot}"
            f"{'; few runs, so the noise is only roughly known' if rep.n < 5 else ''})."
        )
        for ref, c in t.peers:
            out.append(f"  {ref.label} against it: {prose.comparison(c, ref.label, t.config)}.")
    if not r.repeat_tests:
        out.append(
            "No configuration was run more than once: run-to-run noise is unknown, so small "
            "differences between runs cannot be told from noise."
        )
    return out


def _cost_sentences(r: StacksResult) -> list[str]:
    out = []
    for c in r.costs:
        if c.zfs_version_differs:
            out.append(
                f"{c.over.label}: its base stack ran only with another ZFS version ({c.base_labels}), "
                "so its cost is not measured (not like for like)."
            )
            continue
        caveat = f" (the base run is flagged: {c.base.mark}; the cost is measured against it)" if c.base.mark else ""
        out.append(
            f"{c.over.label} against {c.base.label} (the cost of the {c.layer} layer): "
            f"{prose.change(c.over.bytes_per_s, c.base.bytes_per_s)}{caveat}."
        )
    if not r.costs:
        out.append(
            "No run of a layered stack (`layer+base` in the manifest's stack column) has a base run "
            "of the same workload to measure the layer's cost against."
        )
    return out


def _headline(res: Result, r: StacksResult) -> None:
    d = r.direction
    res.headline = {f"runs ({d})": str(r.runs.height), "workloads": str(r.workloads.height)}
    if r.best_clean:
        res.headline[f"fastest {d} run with no flag"] = (
            f"{r.best_clean.label}: {r.best_clean.bytes_per_s / MiB:.0f} MiB/s"
        )
    if r.fastest.mark:
        res.headline[f"fastest {d} run (flagged)"] = (
            f"{r.fastest.label}: {r.fastest.bytes_per_s / MiB:.0f} MiB/s {r.fastest.mark}"
        )
    for c in r.costs:
        if not c.zfs_version_differs:
            res.headline[f"{c.layer} cost over {c.base.label}"] = f"{c.penalty_pct:.1f} %" + (
                f" (base run flagged: {c.base.mark})" if c.base.mark else ""
            )
    if r.best_clean:
        res.verdict = (
            f"Fastest {d} run with no flag: {r.best_clean.label} at {r.best_clean.bytes_per_s / MiB:.0f} MiB/s"
            + (
                f"; the {r.flagged_above_best} faster run(s) are flagged (cache, rounding, ZFS ignoring direct=1 or "
                "test design)."
                if r.flagged_above_best
                else "."
            )
        )
    else:
        res.verdict = (
            f"Every {d} run is flagged (cache, rounding, ZFS ignoring direct=1 or test design): none is ranked."
        )


def _caveats(res: Result, r: StacksResult) -> None:
    strong = sum(not o.weak for o in r.over_limit)
    if strong:
        res.caveats.append(f"{strong} run(s) above the device's limit")
    if r.direct_ignored:
        res.caveats.append("direct=1 ignored by ZFS < 2.3")
    stalls = sum(bool(f.overran or f.long_io) for _, f in r.design)
    if stalls:
        res.caveats.append(f"{stalls} run(s) stalled")
    short = sum(bool(f.too_short) for _, f in r.design)
    if short:
        res.caveats.append(f"{short} run(s) under {r.min_elapsed_s:g} s")
    if r.sizes.fits:
        res.caveats.append("test size below RAM")
    if not r.repeat_tests:
        res.caveats.append("one run per configuration: noise unknown")


def findings(res: Result, r: StacksResult) -> Result:
    """The findings step: frames, sentences, headline, verdict and caveats, written from ``r`` alone."""
    res.frames.update(
        runs=r.runs,
        workloads=r.workloads,
        device_latency=r.device_latency,
        repeats=r.repeats,
        layer_costs=r.layer_costs,
    )
    res.file_ids = r.runs["file_id"].to_list()
    n, k, u = r.runs.height, r.workloads.height, len(r.unknown_workload)
    res.findings.append(
        f"{n} fio {r.direction} run{'s' if n != 1 else ''} for {res.selection.describe()}, in {k} "
        f"workload{'s' if k != 1 else ''}{f' and {u} of unknown workload' if u else ''}; runs are compared only "
        "within a workload, and a flagged run (⚠) never heads a ranking."
    )
    res.findings += _ranking_sentences(r)
    if u:
        res.missing.append(
            f"{u} run(s) have no rw mode or block size in their output or command "
            f"({prose.listing(r.unknown_workload)}), so they are compared with no other run: add the fio "
            "command line to the manifest column `command`"
        )
    res.findings += _limit_sentences(r)
    if r.no_limit:
        res.missing.append(
            f"{r.no_limit} of {n} runs have no `device_limit_bytes_per_s` label, so cache "
            "inflation cannot be flagged for them: label each run with its device's sequential limit"
        )
    said, lacking = _design_sentences(r)
    res.findings += said
    res.missing += lacking
    for s in r.device_spreads:
        parts = [f"{disk} {ms:.2f} ms" for disk, ms in s.ms_per_io]
        res.findings.append(
            f"{s.label}: fio's disk stats give very different write times per I/O for its devices "
            f"({prose.listing(parts)}; {s.fastest_disk} answers {s.factor:.0f}x "
            "faster): the members are not alike, a mirrored write completes only when its slowest member has "
            f"it, and what lets {s.fastest_disk} answer that fast the logs do not say."
        )
    said, lacking = _size_sentences(r)
    res.findings += said
    res.missing += lacking
    res.findings += _repeat_sentences(r)
    res.findings += _cost_sentences(r)
    _headline(res, r)
    _caveats(res, r)
    return res


def file_bytes(row: dict) -> float | None:
    """Bytes a fio run's jobs read or write: ``size`` per job, once when the jobs share one ``--filename``."""
    if row.get("wl_size") is None:
        return None
    jobs = int(row["wl_numjobs"]) if str(row.get("wl_numjobs") or "").isdigit() else 1
    return float(row["wl_size"]) * (1 if row.get("shared_file") else jobs)


def below_ram(run: dict) -> str | None:
    """'16.0 MiB in 23.54 GiB of RAM' for a run whose working set fits in the RAM its labels give and whose I/O a
    page cache or ARC can serve (``design.check``'s fits_in_cache); None otherwise or when not known."""
    f = design.check(run)
    if not f.fits_in_cache:
        return None
    return f"{prose.size(f.working_set_bytes)} in {prose.size(f.cache_bytes)} of RAM"
