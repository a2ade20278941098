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


def with_flags(df: pl.DataFrame, margin: float = 1.0) -> pl.DataFrame:
    """Add MiB/s and a cache-inflation flag: bandwidth above the device's own stated limit
    (``device_limit_bytes_per_s`` x margin) cannot come from the device (zfs-facts F23)."""
    return df.with_columns(
        bw_mib_s=pl.col("bw_bytes_per_s") / MiB,
        inflated=pl.when(pl.col("device_limit_bytes_per_s").is_null()).then(None)
        .otherwise(pl.col("bw_bytes_per_s") > pl.col("device_limit_bytes_per_s") * margin),
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
    return dict(base=base_label, over=over_label, base_bytes_per_s=a["bw_bytes_per_s"],
                over_bytes_per_s=b["bw_bytes_per_s"], ratio=ratio, penalty_pct=(1 - ratio) * 100,
                base_file_id=a["file_id"], over_file_id=b["file_id"])


def layer_costs(df: pl.DataFrame) -> pl.DataFrame:
    """Every (layer over base) pair in one workload and direction: a run with stack ``L+B`` against the runs
    with stack ``B`` and the same ZFS version. ``ratio`` = over / base, ``penalty_pct`` = (1 - ratio) x 100;
    ``zfs_version_differs`` marks bases found only with another ZFS version (not compared)."""
    rows = []
    with_stack = df.filter(pl.col("stack").is_not_null())
    for r in with_stack.filter(pl.col("stack").str.contains(r"\+")).iter_rows(named=True):
        layer, base_stack = r["stack"].split("+", 1)
        cands = with_stack.filter((pl.col("stack") == base_stack) & (pl.col("workload") == r["workload"])
                                  & (pl.col("direction") == r["direction"]))
        same = cands.filter(pl.col("zfs_version").eq_missing(r["zfs_version"]))
        for b in same.iter_rows(named=True):
            ratio = r["bw_bytes_per_s"] / b["bw_bytes_per_s"]
            rows.append(dict(layer=layer, over=r["label"], base=b["label"], direction=r["direction"],
                             workload=r["workload"], over_bytes_per_s=r["bw_bytes_per_s"],
                             base_bytes_per_s=b["bw_bytes_per_s"], ratio=ratio, penalty_pct=(1 - ratio) * 100,
                             base_inflated=b.get("inflated"), zfs_version_differs=False))
        if same.is_empty() and cands.height:
            rows.append(dict(layer=layer, over=r["label"], base=", ".join(cands["label"].to_list()),
                             direction=r["direction"], workload=r["workload"], over_bytes_per_s=r["bw_bytes_per_s"],
                             base_bytes_per_s=None, ratio=None, penalty_pct=None, base_inflated=None,
                             zfs_version_differs=True))
    schema = {"layer": pl.String, "over": pl.String, "base": pl.String, "direction": pl.String, "workload": pl.String,
              "over_bytes_per_s": pl.Float64, "base_bytes_per_s": pl.Float64, "ratio": pl.Float64,
              "penalty_pct": pl.Float64, "base_inflated": pl.Boolean, "zfs_version_differs": pl.Boolean}
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def analyse(con, sel: Selection, direction: str = "write", inflation_margin: float = 1.1) -> Result:
    """Notebook 05 on any selection: runs of one direction by workload, flags, layer costs, findings."""
    all_runs = fio_runs.comparable(fio_runs.runs(con, sel))
    res = Result(sel, measures=measures.per_file(con, sel, all_runs))
    if all_runs.is_empty():
        res.missing.append(
            f"no fio runs for {sel.describe()}: run fio (e.g. `fio --name=seq --rw=write --bs=1M --size=4G "
            "--output-format=normal,json+ > run.txt`), put the output under data/raw/<study>/, give it a row in "
            "data/raw/manifest.csv (study, label, stack) and run ./run ingest")
        return res
    d = with_flags(all_runs.filter(pl.col("direction") == direction), inflation_margin).with_columns(
        label=pl.coalesce("label", pl.col("path").str.split("/").list.last()))
    if d.is_empty():
        dirs = ", ".join(sorted(set(all_runs["direction"].to_list())))
        res.missing.append(f"no fio {direction} runs for {sel.describe()} (the runs there are {dirs}): "
                           f"set the parameter direction to one of them")
        return res
    res.frames["runs"] = d
    res.file_ids = d["file_id"].to_list()
    workloads = d.group_by("workload").agg(pl.len().alias("runs"), pl.col("bw_bytes_per_s").max().alias("best"))
    workloads = workloads.sort("runs", "best", descending=True)
    res.frames["workloads"] = workloads
    n, k = d.height, workloads.height
    res.findings.append(f"{n} fio {direction} run{'s' if n != 1 else ''} for {sel.describe()}, in {k} "
                        f"workload{'s' if k != 1 else ''}; runs are compared only within a workload.")
    for w in workloads.iter_rows(named=True):
        g = d.filter(pl.col("workload") == w["workload"]).sort("bw_bytes_per_s", descending=True)
        if g.height == 1:
            res.findings.append(f"`{w['workload']}`: one run ({g['label'][0]}, {prose.rate(g['bw_bytes_per_s'][0])}), "
                                "nothing to compare it with.")
            continue
        top, low = g.row(0, named=True), g.row(-1, named=True)
        res.findings.append(f"`{w['workload']}`: fastest {top['label']} at {prose.rate(top['bw_bytes_per_s'])}, "
                            f"slowest {low['label']} at {prose.rate(low['bw_bytes_per_s'])} "
                            f"({low['bw_bytes_per_s'] / top['bw_bytes_per_s']:.2f}x of the fastest).")
    unknown = d.filter(pl.col("workload_source") == "unknown")
    if unknown.height:
        res.missing.append(f"{unknown.height} run(s) have no workload options in their output or manifest command "
                           f"({prose.listing(unknown['label'].to_list())}): add the fio command line to the manifest "
                           "column `command` so they can be compared like with like")
    flagged = d.filter(pl.col("inflated").fill_null(False))
    if flagged.height:
        names = [f"{r['label']} ({prose.rate(r['bw_bytes_per_s'])})" for r in flagged.iter_rows(named=True)]
        res.findings.append(f"Above the device's stated limit x {inflation_margin:g} (cannot come from the device: "
                            f"a cache answered): {prose.listing(names)}.")
    no_limit = d.filter(pl.col("device_limit_bytes_per_s").is_null())
    if no_limit.height:
        res.missing.append(f"{no_limit.height} of {n} runs have no `device_limit_bytes_per_s` label, so cache "
                           "inflation cannot be flagged for them: label each run with its device's sequential limit")
    costs = layer_costs(d)
    res.frames["layer_costs"] = costs
    for c in costs.iter_rows(named=True):
        if c["zfs_version_differs"]:
            res.findings.append(f"{c['over']}: its base stack ran only with another ZFS version ({c['base']}), "
                                "so its cost is not measured (not like for like).")
        else:
            caveat = " (the base run is above its device's limit: the cost includes the cache's help)" if c["base_inflated"] else ""
            res.findings.append(f"{c['over']} against {c['base']} (the cost of the {c['layer']} layer): "
                                f"{prose.change(c['over_bytes_per_s'], c['base_bytes_per_s'])}{caveat}.")
    if costs.is_empty():
        res.findings.append("No run of a layered stack (`layer+base` in the manifest's stack column) has a base run "
                            "of the same workload to measure the layer's cost against.")
    best = d.sort("bw_bytes_per_s", descending=True).row(0, named=True)
    res.headline = {f"runs ({direction})": str(n), "workloads": str(k),
                    f"fastest {direction} run": f"{best['label']}: {best['bw_mib_s']:.0f} MiB/s"
                    + (" (above the device's limit: cache)" if best["inflated"] else "")}
    for c in costs.filter(~pl.col("zfs_version_differs")).iter_rows(named=True):
        res.headline[f"{c['layer']} cost over {c['base']}"] = f"{c['penalty_pct']:.1f} %"
    honest = d.filter(~pl.col("inflated").fill_null(False)).sort("bw_bytes_per_s", descending=True)
    if honest.height:
        h = honest.row(0, named=True)
        res.verdict = (f"Fastest {direction} run not flagged as cache-inflated: {h['label']} at {h['bw_mib_s']:.0f} MiB/s"
                       + (f"; {flagged.height} faster run(s) are cache-inflated." if flagged.height else "."))
    return res
