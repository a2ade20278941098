"""Filesystem stacks compared on the same fio workload (notebook 05): bandwidth per run, cache-inflation
flags, and the cost of a layer (mergerfs, autotier, ...) over the stack beneath it.

Runs are compared only within one workload (``fio_runs.workload``). A layer's cost is measured where
the selection has a run of ``<layer>+<base>`` and one of ``<base>`` with the same workload and ZFS
version (stack labels as in the manifest, e.g. ``mergerfs+zfs`` over ``zfs``).
"""

from __future__ import annotations

import polars as pl

from ..units import MiB
from . import fio_runs, measures, prose
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
)


def _zfs_before_2_3(version: str | None) -> bool | None:
    if not version:
        return None
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        return None
    return (major, minor) < (2, 3)


def with_flags(df: pl.DataFrame, margin: float = 1.0) -> pl.DataFrame:
    """Add MiB/s and the plausibility flags of each run:

    * ``inflated``: even the lowest value the printed figure can stand for is above the device's stated limit
      (``device_limit_bytes_per_s`` x margin): if that limit is right, a cache answered (None: no limit);
      ``at_limit``: the limit lies within the printed figure's rounding, so the figure cannot tell;
    * ``direct_ignored``: ``direct=1`` on ZFS before 2.3, which accepts O_DIRECT and still caches;
    * ``shared_file``: numjobs > 1 all on one ``--filename``: their writes overlap, and a buffered ZFS merges
      them in a transaction group while O_DIRECT stacks send every one to the device.
    """
    ranges = [printed_range(b, e) for b, e in zip(df["bw_bytes_per_s"], df["exact"])]
    zfs_old = [("zfs" in (s or "")) and bool(_zfs_before_2_3(v)) for s, v in zip(df["stack"], df["zfs_version"])]
    shared = []
    for cmd, jobs in zip(df["command"], df["wl_numjobs"]):
        from .fio_runs import parse_command

        opts = parse_command(cmd)
        shared.append(
            bool(opts.get("filename"))
            and jobs is not None
            and str(jobs).isdigit()
            and int(jobs) > 1
            and "filename_format" not in opts
        )
    return (
        df.with_columns(
            bw_mib_s=pl.col("bw_bytes_per_s") / MiB,
            bw_low_bytes_per_s=pl.Series([r[0] for r in ranges], dtype=pl.Float64),
            bw_high_bytes_per_s=pl.Series([r[1] for r in ranges], dtype=pl.Float64),
            limit=pl.col("device_limit_bytes_per_s") * margin,
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
            direct_ignored=pl.Series(zfs_old, dtype=pl.Boolean) & (pl.col("wl_direct") == "1").fill_null(False),
            shared_file=pl.Series(shared, dtype=pl.Boolean),
        )
        .with_columns(
            flag=pl.when(pl.col("inflated"))
            .then(pl.lit(FLAGS[0]))
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
    from .db import frame

    return frame(con, DISK_SQL, [sorted(set(file_ids))])


_RUN_MARK = r"(?i)\s*\(run\s*#?\d+\)|[,;]?\s*\brun\s*#?\d+\b"
T95 = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306, 10: 2.262}


def repeats(df: pl.DataFrame) -> pl.DataFrame:
    """Repeated runs: the same workload, stack and ZFS version, labels equal once a 'run N' mark is taken out.
    Per group: n, mean, min, max, the spread (half the range, % of the mean) and a 95 % confidence interval of
    the mean (Student's t; wide for few runs)."""
    import math

    g = (
        df.with_columns(
            config=pl.col("label").str.replace_all(_RUN_MARK, "").str.replace_all(r"\(\s*\)", "").str.strip_chars(" ,")
        )
        .group_by("config", "workload", "stack", "zfs_version", maintain_order=True)
        .agg(
            n=pl.len(),
            mean=pl.col("bw_bytes_per_s").mean(),
            sd=pl.col("bw_bytes_per_s").std(),
            low=pl.col("bw_bytes_per_s").min(),
            high=pl.col("bw_bytes_per_s").max(),
            labels=pl.col("label"),
        )
    )
    g = g.filter(pl.col("n") > 1)
    ci = [T95.get(n, 1.96) * sd / math.sqrt(n) if sd is not None else None for n, sd in zip(g["n"], g["sd"])]
    return g.with_columns(
        spread_pct=(pl.col("high") - pl.col("low")) / 2 / pl.col("mean") * 100,
        ci95_bytes_per_s=pl.Series(ci, dtype=pl.Float64),
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


def analyse(con, sel: Selection, direction: str = "write", inflation_margin: float = 1.1) -> Result:
    """Notebook 05 on any selection: runs of one direction by workload, flags, layer costs, findings."""
    if not inflation_margin >= 1:  # below 1 would flag runs slower than the device can deliver
        raise ValueError(
            f"inflation_margin must be 1 or more (how far above its labelled device limit a run must be to be "
            f"flagged as cached), got {inflation_margin}"
        )
    all_runs = fio_runs.comparable(fio_runs.runs(con, sel))
    res = Result.start(con, sel, measures.per_file(con, sel, all_runs))
    if all_runs.is_empty():
        res.missing.append(
            f"no fio runs for {sel.describe()}: run fio (e.g. `fio --name=seq --rw=write --bs=1M --size=4G "
            "--output-format=normal,json+ > run.txt`), put the output under data/raw/<study>/, give it a row in "
            "data/raw/manifest.csv (study, label, stack) and run ./run ingest"
        )
        return res
    d = with_flags(all_runs.filter(pl.col("direction") == direction), inflation_margin).with_columns(
        label=pl.coalesce("label", pl.col("path").str.split("/").list.last())
    )
    if d.is_empty():
        dirs = ", ".join(sorted(set(all_runs["direction"].to_list())))
        res.missing.append(
            f"no fio {direction} runs for {sel.describe()} (the runs there are {dirs}): "
            f"set the parameter direction to one of them"
        )
        return res
    res.frames["runs"] = d
    res.file_ids = d["file_id"].to_list()
    known = d.filter(pl.col("workload_known"))  # runs whose mode or block size is unknown are compared with none
    workloads = known.group_by("workload").agg(pl.len().alias("runs"), pl.col("bw_bytes_per_s").max().alias("best"))
    workloads = workloads.sort("runs", "best", descending=True)
    res.frames["workloads"] = workloads
    n, k, u = d.height, workloads.height, d.height - known.height
    res.findings.append(
        f"{n} fio {direction} run{'s' if n != 1 else ''} for {sel.describe()}, in {k} "
        f"workload{'s' if k != 1 else ''}{f' and {u} of unknown workload' if u else ''}; runs are compared only "
        "within a workload."
    )
    for w in workloads.iter_rows(named=True):
        g = known.filter(pl.col("workload") == w["workload"]).sort("bw_bytes_per_s", descending=True)
        if g.height == 1:
            res.findings.append(
                f"`{w['workload']}`: one run ({g['label'][0]}, {prose.rate(g['bw_bytes_per_s'][0])}), "
                "nothing to compare it with."
            )
            continue
        top, low = g.row(0, named=True), g.row(-1, named=True)
        res.findings.append(
            f"`{w['workload']}`: fastest {top['label']} at {prose.rate(top['bw_bytes_per_s'])}, "
            f"slowest {low['label']} at {prose.rate(low['bw_bytes_per_s'])} "
            f"({low['bw_bytes_per_s'] / top['bw_bytes_per_s']:.2f}x of the fastest)."
        )
    unknown = d.filter(~pl.col("workload_known"))
    if unknown.height:
        res.missing.append(
            f"{unknown.height} run(s) have no rw mode or block size in their output or command "
            f"({prose.listing(unknown['label'].to_list())}), so they are compared with no other run: add the fio "
            "command line to the manifest column `command`"
        )
    flagged = d.filter(pl.col("inflated").fill_null(False))
    if flagged.height:
        names = [
            f"{r['label']} {r['bw_bytes_per_s'] / 1e6:.1f} MB/s = {r['bw_bytes_per_s'] / r['device_limit_bytes_per_s']:.2f}x "
            f"its {r['device_limit_bytes_per_s'] / 1e6:.1f} MB/s limit"
            for r in flagged.sort("bw_bytes_per_s", descending=True).iter_rows(named=True)
        ]
        res.findings.append(
            f"Faster than the device limit labelled in the manifest x {inflation_margin:g}, even at the lowest value "
            f"the printed figure stands for: {prose.listing(names)}. If the labelled limit is right, a cache "
            "answered, not the device; the further above it, the less the limit's own accuracy matters (a limit "
            "quoted as 'about' supports a flag just above it only weakly)."
        )
    edge = d.filter(pl.col("at_limit").fill_null(False))
    if edge.height:
        names = [f"{r['label']} ({prose.rate(r['bw_bytes_per_s'])})" for r in edge.iter_rows(named=True)]
        res.findings.append(
            f"At the device's limit x {inflation_margin:g} within the printed figure's rounding, so the "
            f"log cannot tell whether a cache helped: {prose.listing(names)}."
        )
    ignored = d.filter(pl.col("direct_ignored"))
    if ignored.height:
        res.findings.append(
            f"`direct=1` on ZFS before 2.3, which accepts O_DIRECT and still goes through the ARC: "
            f"{prose.listing(ignored['label'].to_list())}: these measured the cache as much as the disks."
        )
    shared = d.filter(pl.col("shared_file"))
    if shared.height:
        res.findings.append(
            f"numjobs > 1 on one `--filename` (the jobs overwrite the same blocks at once; buffered ZFS "
            f"merges them in a transaction group, O_DIRECT stacks write each): "
            f"{prose.listing(shared['label'].to_list())}."
        )
    no_limit = d.filter(pl.col("device_limit_bytes_per_s").is_null())
    if no_limit.height:
        res.missing.append(
            f"{no_limit.height} of {n} runs have no `device_limit_bytes_per_s` label, so cache "
            "inflation cannot be flagged for them: label each run with its device's sequential limit"
        )
    disks = device_latency(con, sel, d["file_id"].to_list())
    res.frames["device_latency"] = disks
    for (label,), g in disks.filter(pl.col("ms_per_io").is_not_null()).group_by("label", maintain_order=True):
        if g.height > 1 and g["ms_per_io"].min() > 0 and g["ms_per_io"].max() / g["ms_per_io"].min() >= 10:
            parts = [f"{r['disk']} {r['ms_per_io']:.2f} ms" for r in g.iter_rows(named=True)]
            fast = g.sort("ms_per_io").row(0, named=True)
            res.findings.append(
                f"{label}: fio's disk stats give very different write times per I/O for its devices "
                f"({prose.listing(parts)}; {fast['disk']} answers {g['ms_per_io'].max() / fast['ms_per_io']:.0f}x "
                "faster): the members are not alike, a mirrored write completes only when its slowest member has "
                f"it, and what lets {fast['disk']} answer that fast the logs do not say."
            )
    _test_size_findings(res, d)
    reps = repeats(known)
    res.frames["repeats"] = reps
    for r in reps.iter_rows(named=True):
        res.findings.append(
            f"{r['config']}: {r['n']} repeated runs, mean {prose.rate(r['mean'])}, spread ±{r['spread_pct']:.1f} %"
            f" (95 % confidence interval of the mean ±{prose.figure(r['ci95_bytes_per_s'] / MiB)} MiB/s with "
            f"{r['n']} runs{': few runs, so the spread is only a rough noise estimate' if r['n'] < 5 else ''})."
        )
        ci_pct = r["ci95_bytes_per_s"] / r["mean"] * 100 if r["ci95_bytes_per_s"] is not None else None
        peers = d.filter(
            (pl.col("workload") == r["workload"])
            & pl.col("stack").eq_missing(r["stack"])
            & ~pl.col("label").is_in(r["labels"])
        )
        for p in peers.iter_rows(named=True):
            res.findings.append(
                f"  {p['label']} against it: "
                f"{prose.compared(p['bw_bytes_per_s'], r['mean'], r['spread_pct'], ci_pct, r['n'])}."
            )
    if reps.is_empty():
        res.findings.append(
            "No configuration was run more than once: run-to-run noise is unknown, so small "
            "differences between runs cannot be told from noise."
        )
    costs = layer_costs(known)
    res.frames["layer_costs"] = costs
    for c in costs.iter_rows(named=True):
        if c["zfs_version_differs"]:
            res.findings.append(
                f"{c['over']}: its base stack ran only with another ZFS version ({c['base']}), "
                "so its cost is not measured (not like for like)."
            )
        else:
            caveat = (
                " (the base run is above its device's limit: the cost includes the cache's help)"
                if c["base_inflated"]
                else ""
            )
            res.findings.append(
                f"{c['over']} against {c['base']} (the cost of the {c['layer']} layer): "
                f"{prose.change(c['over_bytes_per_s'], c['base_bytes_per_s'])}{caveat}."
            )
    if costs.is_empty():
        res.findings.append(
            "No run of a layered stack (`layer+base` in the manifest's stack column) has a base run "
            "of the same workload to measure the layer's cost against."
        )
    best = d.sort("bw_bytes_per_s", descending=True).row(0, named=True)
    res.headline = {
        f"runs ({direction})": str(n),
        "workloads": str(k),
        f"fastest {direction} run": f"{best['label']}: {best['bw_mib_s']:.0f} MiB/s"
        + (
            f" ({best['bw_bytes_per_s'] / best['device_limit_bytes_per_s']:.2f}x the labelled device limit)"
            if best["inflated"]
            else f" ({best['flag']})"
            if best["flag"] not in (FLAGS[3], FLAGS[4])
            else ""
        ),
    }
    flag_of = dict(zip(d["label"], d["flag"]))
    for c in costs.filter(~pl.col("zfs_version_differs")).iter_rows(named=True):
        base_flag = flag_of.get(c["base"])
        res.headline[f"{c['layer']} cost over {c['base']}"] = f"{c['penalty_pct']:.1f} %" + (
            f" (base run flagged: {base_flag})" if base_flag not in (FLAGS[3], FLAGS[4], None) else ""
        )
    if flagged.height:
        res.caveats.append(f"{flagged.height} run(s) above the device's limit")
    if d["direct_ignored"].any():
        res.caveats.append("direct=1 ignored by ZFS < 2.3")
    if reps.is_empty():
        res.caveats.append("one run per configuration: noise unknown")
    honest = d.filter(pl.col("flag") == FLAGS[3]).sort("bw_bytes_per_s", descending=True)
    if honest.height:
        h = honest.row(0, named=True)
        faster = d.filter(pl.col("bw_bytes_per_s") > h["bw_bytes_per_s"])
        res.verdict = (
            f"Fastest {direction} run with no plausibility flag: {h['label']} at {h['bw_mib_s']:.0f} MiB/s"
            + (
                f"; the {faster.height} faster run(s) are flagged (cache, rounding or ZFS ignoring direct=1)."
                if faster.height
                else "."
            )
        )
    return res


def file_bytes(row: dict) -> float | None:
    """Bytes a fio run's jobs read or write: ``size`` per job, once when the jobs share one ``--filename``."""
    if row.get("wl_size") is None:
        return None
    jobs = int(row["wl_numjobs"]) if str(row.get("wl_numjobs") or "").isdigit() else 1
    return float(row["wl_size"]) * (1 if row.get("shared_file") else jobs)


def below_ram(run: dict) -> str | None:
    """'16.0 MiB in 23.54 GiB of RAM' for a run whose file fits in the RAM its labels give and whose I/O a page
    cache or ARC can serve (not O_DIRECT where it goes around the cache); None otherwise or when not known."""
    from . import plausibility

    ram, _ = plausibility.ram_bytes(run["command"], run["notes"], run.get("ram_bytes"))
    check = plausibility.against_cache(file_bytes(run), ram)
    bypass = plausibility.direct_bypasses_page_cache(run.get("wl_direct"), run.get("stack"), run.get("zfs_version"))
    if check is None or not check["fits_in_cache"] or bypass:
        return None
    return f"{prose.size(check['size_bytes'])} in {prose.size(ram)} of RAM"


def _test_size_findings(res: Result, d: pl.DataFrame) -> None:
    """Each run's file against the RAM its labels give (plausibility.ram_bytes), or what is missing to check it."""
    from . import plausibility

    fits, unknown, sizeless = [], [], []
    for r in d.iter_rows(named=True):
        ram, _ = plausibility.ram_bytes(r["command"], r["notes"], r.get("ram_bytes"))
        if not ram:
            unknown.append(r["label"])
        elif not file_bytes(r):
            sizeless.append(r["label"])
        elif (fit := below_ram(r)) is not None:
            fits.append(f"{r['label']} ({fit})")
    if sizeless:
        res.missing.append(
            f"the test size of {len(sizeless)} run(s) is not in their output or command ({prose.listing(sizeless)}): "
            "whether the file fits in the RAM they are labelled with cannot be checked; give the fio command line "
            "in the manifest's command column"
        )
    if fits:
        res.findings.append(
            f"Test size below RAM (reads and, on ZFS, writes can be served from the page cache or ARC): "
            f"{prose.listing(fits)}."
        )
        res.caveats.append("test size below RAM")
    if unknown:
        sizes: dict[str, int] = {}  # the test sizes of the runs whose RAM is not known, and how many have each
        for r in d.filter(pl.col("label").is_in(unknown)).iter_rows(named=True):
            b = file_bytes(r)
            key = prose.size(b) if b else "not known"
            sizes[key] = sizes.get(key, 0) + 1
        res.missing.append(
            f"the RAM of the machine is not in the logs or labels of {len(unknown)} run(s) (test size "
            + prose.listing([f"{size} for {k}" for size, k in sorted(sizes.items(), key=lambda kv: -kv[1])])
            + "): whether a file fits in the page cache or ARC cannot be checked; fill the manifest's "
            "ram_bytes column (storagelab lab does)"
        )
