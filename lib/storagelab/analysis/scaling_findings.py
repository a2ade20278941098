"""Notebook 01's sentences, written only from ``scaling_numbers.ScalingNumbers``."""

from __future__ import annotations

import polars as pl

from ..units import MiB
from . import design, phases, prose, stats
from .result import Finding, cite
from .scaling_numbers import ScalingFrames, ScalingNumbers, _data_disks_or_none, direction_of, widths
from .scaling_repeats import Config


def write(res, n: ScalingNumbers, frames: ScalingFrames, sel) -> None:
    if n.scaled.height:
        _layouts(res, n)
    if n.serial:
        _serial(res, n.serial)
    elif n.serial_error:
        res.missing.append(f"no serial-reader fit: {n.serial_error}")
    _fio(res, n, frames, sel)
    _single(res, n, sel)
    _one_mirror(res, n)
    for r in n.stated.iter_rows(named=True):
        line = n.stated_lines.get(r["claim_id"], ())  # the figure as claims.csv states it, with its passage
        res.findings.append(
            Finding(
                f"Stated by the study (no raw data): {r['vdev_class']}, n = 2 {r['n_counts']}: "
                f"{r['pct_of_one']:.0f} % of one = {r['ratio']:.2f}x against the rule's {r['ideal']:.1f}x "
                f"({r['deviation_pct']:+.1f} %).",
                [
                    cite(f"{r['pct_of_one']:.0f} %", line),
                    cite(f"{r['ratio']:.2f}x", line, "the stated % / 100"),
                    cite(
                        f"{r['deviation_pct']:+.1f} %",
                        line,
                        f"(the stated ratio - {r['ideal']:.1f}) / {r['ideal']:.1f}",
                    ),
                ],
            )
        )
    res.verdict = _verdict(n)


def _layouts(res, n: ScalingNumbers) -> None:
    fixed, base = n.fixed_disks is not None, n.baseline
    if fixed:
        res.findings.append(
            f"Every layout uses the same {n.fixed_disks} disks: more vdevs means narrower vdevs, so the "
            "sum-of-vdevs rule (which assumes added disks) is not the model for this sweep. The disk model "
            "per direction is: a write goes to every disk of a mirror (one disk's worth per mirror vdev) and to "
            "the data disks of RAIDZ; a read can come from every disk of a mirror, whatever the layout, and from "
            "the data disks of RAIDZ."
        )
    for r in n.best.iter_rows(named=True):
        two = n.scaled.filter(
            (pl.col("test") == r["test"]) & (pl.col("vdev_type") == r["vdev_type"]) & (pl.col("vdev_count") == base * 2)
        )
        model = (
            f"the disk model's {r['disk_model_ratio']:.2f}x"
            if fixed and r["disk_model_ratio"] is not None
            else f"the sum-of-vdevs rule's {r['ideal']:.0f}x"
        )
        two_txt = (
            f"{two['relative'][0]:.2f}x at {base * 2} vdevs" + ("" if fixed else f" (rule {2:.0f}x)")
            if two.height and two["relative"][0] is not None
            else f"no layout with {base * 2} vdevs"
        )
        res.findings.append(
            Finding(
                f"Layout table, {r['test']} {r['vdev_type']}: {r['baseline'] / MiB:.1f} MiB/s with {base} "
                f"vdev; {two_txt}; best {r['layout']} ({r['vdev_count']} vdevs) {r['speed_bytes_per_s'] / MiB:.1f} "
                f"MiB/s = {r['relative']:.2f}x against {model}.",
                _layout_cites(n, r, two),
            )
        )
        res.headline[f"{r['test']} {r['vdev_type']}"] = f"best {r['layout']}: {r['relative']:.2f}x one vdev" + (
            f" (disk model {r['disk_model_ratio']:.2g}x)" if fixed else f" (rule {r['ideal']:.0f}x)"
        )


def _rows(n: ScalingNumbers, test: str, vdev_type: str, **match) -> pl.DataFrame:
    """The layout rows (``scaled``, with their lines) of one test and vdev type, matching ``match`` (column = value)."""
    if n.scaled.is_empty():
        return n.scaled
    cond = (pl.col("test") == test) & (pl.col("vdev_type") == vdev_type)
    for k, v in match.items():
        cond = cond & (pl.col(k) == v)
    return n.scaled.filter(cond)


def _layout_cites(n: ScalingNumbers, r: dict, two: pl.DataFrame) -> list:
    """A layout sentence's numbers: the baseline (its layout rows), the ratio at twice its vdevs and the best's (both
    rows, over the baseline's), the best's speed (its row)."""
    base = _rows(n, r["test"], r["vdev_type"], vdev_count=n.baseline)
    out = [cite(f"{r['baseline'] / MiB:.1f} MiB/s", base, f"mean of {r['baseline_runs']} row(s)")]
    if two.height and two["relative"][0] is not None:
        out.append(cite(f"{two['relative'][0]:.2f}x", [*two.to_dicts(), *base.to_dicts()], "its speed / the baseline"))
    return out + [
        cite(f"{r['speed_bytes_per_s'] / MiB:.1f} MiB/s", r),
        cite(f"{r['relative']:.2f}x", [r, *base.to_dicts()], "the best's speed / the baseline"),
    ]


def _serial(res, serial: tuple[pl.DataFrame, dict]) -> None:
    fitted, terms = serial
    test = fitted["test"][0]
    res.headline[f"{test} as one serial reader"] = (
        f"fitted model, mean error {terms['mean_error_pct']:.1f} % over {terms['layouts']} layouts"
    )
    rate = terms["disk_rate_bytes_per_s"]
    transfer = f"the bytes each disk reads at {rate / MiB:.1f} MiB/s" if rate else "no transfer term (fitted <= 0)"
    res.findings.append(
        f"Model (fitted, not measured), {test} as one serial reader of {terms['record_bytes'] // 1024} KiB records: "
        f"per record {terms['fixed_s'] * 1e3:.3f} ms + {terms['per_disk_s'] * 1e3:.4f} ms per disk it waits for + "
        f"{transfer}; fitted to {terms['layouts']} layouts, mean error {terms['mean_error_pct']:.1f} %, worst "
        f"{terms['worst_error_pct']:.1f} %."
    )
    for vt in sorted(set(fitted["vdev_type"].to_list())):
        f = fitted.filter(pl.col("vdev_type") == vt).sort("vdev_count")
        top = f.sort("speed_bytes_per_s", descending=True).row(0, named=True)
        models: list[float] = f["model_bytes_per_s"].to_list()
        speeds: list[float] = f["speed_bytes_per_s"].to_list()  # the fit's rows all have a measured speed
        lo, hi = min(models), max(models)
        model = (
            f"model {lo / MiB:.1f} MiB/s at every vdev count"
            if hi - lo < 1e-9 * hi
            else f"model {lo / MiB:.1f}-{hi / MiB:.1f} MiB/s (best at "
            f"{f.sort('model_bytes_per_s', descending=True)['vdev_count'][0]} vdevs)"
        )
        ends = f.filter(pl.col("speed_bytes_per_s").is_in([min(speeds), max(speeds)]))  # the slowest and fastest rows
        res.findings.append(
            Finding(
                f"  {vt}: measured {min(speeds) / MiB:.1f}-{max(speeds) / MiB:.1f} MiB/s "
                f"(best at {top['vdev_count']} vdevs), {model}.",
                [
                    cite(
                        f"{min(speeds) / MiB:.1f}-{max(speeds) / MiB:.1f} MiB/s", ends, "the slowest and fastest layout"
                    )
                ],
            )
        )
    res.findings.append(
        "  A mirror reads each record from one disk, so its reader waits for one disk's transfer "
        "whatever the layout; RAIDZ splits the record over its data disks: wide vdevs wait for many "
        "disks, narrow ones move more bytes per disk, so speed rises and then falls. The fit shows the "
        "shape is consistent with a serial reader; it does not identify the hardware behind each term."
    )


def _fio(res, n: ScalingNumbers, frames: ScalingFrames, sel) -> None:
    multi, runs = n.fio_multi, frames.runs
    if runs.height:
        key = phases.grouped(["stack", "vdev_type", "vdev_width", "workload", "direction"], multi)
        groups = multi.select(key).unique().height
        paired = "phase" in runs.columns and phases.paired(runs["phase"].to_list())
        res.findings.append(
            f"{runs.height} fio run(s) for {sel.describe()}, {n.labelled_runs} labelled with vdev_type "
            f"and vdev_count; {groups if multi.height else 0} "
            f"group(s) (same stack, vdev type and width, workload, direction{', phase' if paired else ''}) hold "
            "more than one vdev count"
            + (
                ": runs labelled phase=before and phase=after are never one group (a baseline is never the mean of "
                "a before and an after run)."
                if paired
                else "."
            )
        )
    for c in n.fio_configs:
        res.findings.append(_config(c, n.baseline))
    if n.fio_alone and multi.height:
        res.findings.append(
            f"Not in any comparison: {prose.listing(n.fio_alone)}: no other run of the same workload, vdev type and "
            "width has another vdev count."
        )
    res.findings += _baselines_left(multi, n.baseline)
    if any(c.flagged for c in n.fio_configs):
        res.findings += design.sentences(multi)
        res.findings += [  # flagged by their logs or a plausibility flag, not by a design check
            f"{r['label']}: flagged as notebooks 05, 08 and 10 flag it: {r['why']}."
            for r in multi.iter_rows(named=True)
            if r.get("suspect") and not r.get("design_flagged")
        ]
        res.caveats.append("fio vdev ratios rest on runs the design checks flag")
    if multi.height == 0:
        res.missing.append(
            f"no fio runs of one workload on pools with different vdev counts for {sel.describe()}: run "
            "the same fio job on 1, 2, 4 ... vdevs and label each run with vdev_type, vdev_count and "
            "vdev_width in the manifest" + ("" if n.scaled.height else "; nor a layout table")
        )


def _runs_text(c: Config) -> str:
    """A configuration's runs: the mean of its repeats with their spread and interval, or its one run."""
    r = c.repeats
    names = prose.listing([x["label"] for x in c.counted])
    left = (
        f"; left out as notebooks 05, 08 and 10 leave them out: {prose.listing([x['label'] for x in c.left])}"
        if c.left and not c.is_baseline  # the baseline's are named with why (_baselines_left)
        else ""
    )
    if r.n == 1 or r.ci is None:
        return f"one run ({names}) {prose.rate(r.mean)}{left}"
    return (
        f"mean of {r.n} runs ({names}) {prose.rate(r.mean)}; runs {r.low / MiB:.1f}-{r.high / MiB:.1f} MiB/s, "
        f"{r.level * 100:.0f} % CI of the mean ±{r.ci.half / MiB:.1f} MiB/s (Student's t, {r.n - 1} degree(s) of "
        f"freedom){left}"
    )


def _judged(c: Config) -> str:
    """How the ratio was judged against the baseline: the test the repeats allow and what its interval holds (as a
    difference in percent of the baseline's mean: 0 % is no scaling, the rule's n x is (n - 1) x 100 %)."""
    cmp_ = c.comparison
    assert cmp_ is not None and c.baseline is not None  # not the baseline itself
    if cmp_.test == stats.WELCH and cmp_.interval is not None:
        lo, hi = (100 * x / c.baseline.mean for x in (cmp_.interval.low, cmp_.interval.high))
        rule = 100 * (c.ideal - 1)
        holds = [
            x
            for x, inside in (("0 % (no scaling)", lo <= 0 <= hi), (f"the rule's {rule:+.0f} %", lo <= rule <= hi))
            if inside
        ]
        said = (
            f"it holds {' and '.join(holds)}"
            + (": these repeats cannot tell scaling from none" if len(holds) == 2 else "")
            if holds
            else f"it holds neither 0 % nor the rule's {rule:+.0f} %"
        )
        return (
            f"{cmp_.test_name}: the difference of the means is {cmp_.diff_pct:+.0f} % of the baseline's, "
            f"{cmp_.level * 100:.0f} % interval {lo:+.0f} % to {hi:+.0f} %; {said}"
        )
    if cmp_.test == stats.PREDICTION:
        return f"{cmp_.test_name}: {'outside' if cmp_.differs else 'inside'} it"
    return cmp_.test_name


def _rests_on(c: Config) -> str:
    """What the ratio rests on, said plainly: flagged runs, single runs."""
    base_runs = [] if c.is_baseline else [r for r in c.baseline_runs if r.get("counted", True)]
    runs = [*c.counted, *base_runs]
    flagged = sum(r["suspect"] if r.get("suspect") is not None else bool(r.get("design_flagged")) for r in runs)
    out = []
    if flagged:
        codes = sorted({x for r in runs for x in (r.get("design_flags") or [])}, key=list(design.CODES.values()).index)
        out.append(
            f" It rests on flagged runs: {flagged} of the {len(runs)} runs it is taken from (this configuration's and "
            f"the baseline's) are flagged as notebooks 05, 08 and 10 flag them ({', '.join(codes) or 'see below'}; "
            "each run's reasons below), so it does not show how the vdevs scale."
        )
    singles = [w for w, k in (("this configuration", c.repeats.n), ("the baseline", len(base_runs))) if k == 1]
    if singles and not c.is_baseline:
        out.append(f" {' and '.join(singles).capitalize()} ran once: no run-to-run estimate for that side.")
    return "".join(out)


def _config(c: Config, baseline: int) -> Finding:
    """One configuration of a fio group: the baseline's repeats, or a vdev count against the baseline's mean."""
    wl = c.key.get("workload") or "workload"
    runs_cite = cite(prose.rate(c.repeats.mean), c.counted, "mean of the runs" if c.repeats.n > 1 else None)
    if c.is_baseline:
        tail = (
            ": the runs of one vdev count are repeats of the baseline, not points of the scaling"
            if c.repeats.n > 1
            else ""
        )
        return Finding(
            f"fio `{wl}` on {c.key.get('vdev_type')} vdevs, the baseline, {c.vdev_count} vdev{'s' if c.vdev_count > 1 else ''}: "
            f"{_runs_text(c)}{tail}.",
            [runs_cite],
        )
    both = [*c.counted, *(r for r in c.baseline_runs if r.get("counted", True))]
    spread = (
        f"; its runs give {c.run_ratios[0]:.2f}x-{c.run_ratios[1]:.2f}x of that mean"
        if c.run_ratios and c.repeats.n > 1
        else ""
    )
    return Finding(
        f"fio `{wl}`: {c.vdev_count} x {c.key.get('vdev_type')}, {_runs_text(c)} = {c.ratio:.2f}x the "
        f"{baseline}-vdev mean (rule {c.ideal:.1f}x){spread}; {_judged(c)}.{_rests_on(c)}",
        [
            runs_cite,
            cite(f"{c.ratio:.2f}x", both, "the mean of this configuration's runs / the mean of the baseline's"),
        ],
    )


def _baselines_left(multi, baseline: int) -> list[str]:
    """Each baseline with runs left out of its mean (the one rule of 05, 08 and 10: ``run_verdicts``), each run
    with why."""
    if multi.is_empty() or "baseline_left" not in multi.columns:
        return []
    out = []
    left = multi.filter((pl.col("vdev_count") == baseline) & ~pl.col("counted"))
    for (workload,), g in left.group_by("workload", maintain_order=True):
        kept = multi.filter((pl.col("vdev_count") == baseline) & pl.col("counted") & (pl.col("workload") == workload))
        each = "; ".join(
            f"{r['label']} at {prose.rate(r['bw_bytes_per_s'])} ({r['why']})" for r in g.iter_rows(named=True)
        )
        out.append(
            f"`{workload}`: the {baseline}-vdev baseline is the mean of its {kept.height} run(s) that count, "
            f"{prose.rate(kept['bw_bytes_per_s'].mean())}; {g.height} left out as notebooks 05, 08 and 10 leave them "
            f"out: {each}."
        )
    return out


def _model(r: dict) -> str:
    lo, hi = r["model_low"], r["model_high"]
    if lo == 0:
        return f"at most {hi:g}x"
    return f"{lo:g}x" if lo == hi else f"{lo:g}-{hi:g}x"


def _single(res, n: ScalingNumbers, sel) -> None:
    for r in n.single.iter_rows(named=True):
        unit = (lambda v: f"{v:.1f}/s") if r["direction"] == "seeks" else prose.rate
        pool = {k: r.get(k) for k in ("path", "line_start", "line_end", "sha256")}
        one = {
            "path": r["single_path"],
            "line_start": r["single_line_start"],
            "line_end": r["single_line_end"],
            "sha256": r.get("single_sha256"),
        }
        res.findings.append(
            Finding(
                f"{r['tool']} {r['direction']}: {r['label']} {unit(r['value'])} against one disk "
                f"({r['single']}) {unit(r['single_value'])} = {r['ratio']:.2f}x; model {_model(r)} ({r['model']})"
                + ("." if r["within_model"] else ": **outside the model**, something else limits it."),
                [
                    cite(unit(r["value"]), pool),
                    cite(unit(r["single_value"]), one),
                    cite(f"{r['ratio']:.2f}x", [pool, one], f"{r['direction']}: the layout's / the one disk's"),
                ],
            )
        )
    if n.single.height and not n.single["within_model"].all():
        res.caveats.append("layouts outside the disk model: another limit")
    for r in n.rejected.iter_rows(named=True):
        against = f" for {r['layout']}" if r["layout"] else ""
        res.findings.append(
            f"{r['tool']} single-disk run {r['single']} is not used as one disk{against}: {r['reason']}."
        )
    if n.scaled.is_empty() and n.single.is_empty():
        if n.rejected.height:
            res.missing.append(
                f"no single-disk run of the pools' own disks for {sel.describe()}: the single-disk run(s) "
                f"{prose.listing(n.rejected['single'].to_list())} stand for none of them (why: above); benchmark one "
                "of the pool's disks alone on its host with the same workload"
            )
        else:
            res.missing.append(
                f"no single-disk run to compare layouts with for {sel.describe()}: benchmark one of the disks "
                "alone with the same workload and label it vdev_type=single (or vdev_count=1, vdev_width=1)"
            )


def _physical(res, n: ScalingNumbers) -> None:
    p = n.physical
    if not p or p["one_physical"] <= p["fastest_physical"] * 1.1:
        return
    one = _rows(n, "dd_write", "mirror", layout=p["one_layout"])
    fast = _rows(n, "dd_write", "mirror", layout=p["fastest_layout"])
    both = [*one.to_dicts(), *fast.to_dicts()]
    res.findings.append(
        Finding(
            f"Physical writes: the one-vdev mirror ({p['one_layout']}) sent every block to all {p['one_disks']} "
            f"disks, {p['one_disks']} x {p['one_speed'] / MiB:.1f} = {p['one_physical'] / MiB:,.1f} MiB/s to its "
            f"disks; the fastest mirror layout ({p['fastest_layout']}) sends {p['fastest_copies']:g} x "
            f"{p['fastest_speed'] / MiB:.1f} = {p['fastest_physical'] / MiB:,.1f} MiB/s, "
            f"{p['one_physical'] / p['fastest_physical']:.1f}x less. The controllers and bus carried more, so they do "
            "not cap the plateau: the limit lies on the logical path (one writer stream, CPU, checksums, transaction "
            "groups), which these logs do not separate.",
            [
                cite(f"{p['one_speed'] / MiB:.1f}", one),
                cite(f"{p['one_physical'] / MiB:,.1f} MiB/s", one, f"{p['one_disks']} disks x its dd write"),
                cite(f"{p['fastest_speed'] / MiB:.1f}", fast),
                cite(
                    f"{p['fastest_physical'] / MiB:,.1f} MiB/s", fast, f"{p['fastest_copies']:g} copies x its dd write"
                ),
                cite(
                    f"{p['one_physical'] / p['fastest_physical']:.1f}x", both, "the one-vdev mirror's / the fastest's"
                ),
            ],
        )
    )


def _one_mirror(res, n: ScalingNumbers) -> None:
    _physical(res, n)
    if n.one_mirror_disk is None:
        return
    disk = n.one_mirror_disk
    one = _rows(n, "dd_write", "mirror", vdev_count=1)
    res.findings.append(
        Finding(
            f"A one-vdev mirror writes every block to all its disks, so its dd write "
            f"({disk / MiB:.1f} MiB/s) is one disk's speed. Against it:",
            [cite(f"{disk / MiB:.1f} MiB/s", one)],
        )
    )
    for r in n.one_disk_picks.iter_rows(named=True):
        dd = _data_disks_or_none(r["vdev_type"], widths(r["vdev_widths"]))
        res.findings.append(
            Finding(
                f"  {r['vdev_type']} {r['layout']} ({r['vdev_count']} vdev{'s' if r['vdev_count'] > 1 else ''}): "
                f"{r['speed_bytes_per_s'] / disk:.1f} disks' worth of writes ({dd} in theory).",
                [
                    cite(
                        f"{r['speed_bytes_per_s'] / disk:.1f}",
                        [r, *one.to_dicts()],
                        "its dd write / the one-vdev mirror's",
                    )
                ],
            )
        )


def _verdict(n: ScalingNumbers) -> str:
    """One sentence from what the selection measured: the fastest layout of each write test against the disk model,
    the serial-reader fit, the layouts against one disk; else the study's stated figures (said to be stated)."""
    parts = []
    if n.best.height:
        writes = n.best.filter(pl.col("test").map_elements(direction_of, return_dtype=pl.String) == "write")
        for (test,), g in writes.group_by("test", maintain_order=True):
            r = g.sort("speed_bytes_per_s", descending=True).row(0, named=True)
            model = (
                f"the disk model's {r['disk_model_ratio']:.2g}x"
                if r["layouts_disks"] == 1
                else f"the sum-of-vdevs rule's {r['ideal']:.0f}x"
            )
            parts.append(
                f"{test} at best {r['speed_bytes_per_s'] / MiB:.1f} MiB/s ({r['vdev_type']} {r['layout']}), "
                f"{r['relative']:.2f}x its one-vdev layout against {model}"
            )
    if n.serial:
        fit, terms = n.serial
        parts.append(
            f"{fit['test'][0]} fits a serial-reader model (fitted, mean error {terms['mean_error_pct']:.1f} %)"
        )
    if n.single.height:
        items = [
            f"{r['label']} {r['direction']} {r['ratio']:.2f}x (model {_model(r)})"
            for r in n.single.iter_rows(named=True)
        ]
        parts.append("against one disk: " + prose.listing(items, limit=4))
    if parts:
        return "Measured: " + "; ".join(parts) + "."
    if n.stated.height:
        items = [f"{r['vdev_class']} n = 2 {r['ratio']:.2f}x ({r['n_counts']})" for r in n.stated.iter_rows(named=True)]
        return "Stated by the study, not measured here: " + prose.listing(items) + " against the rule's 2x."
    return ""
