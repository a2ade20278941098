"""Notebook 05's findings step: frames, sentences, headline, verdict and caveats, from a ``StacksResult`` alone."""

from __future__ import annotations

import polars as pl

from ..units import MiB
from . import design, prose, repeat_groups, run_verdicts, stats
from .result import Cite, Finding, Result, cite
from .stacks_flags import WEAK_BELOW
from .stacks_numbers import ConfigRef, RunRef, StacksResult


def _name(ref: RunRef) -> str:
    return f"{ref.label} ({prose.rate(ref.bytes_per_s)})"


def _of(ref: ConfigRef) -> str:
    """' (mean of 3 runs, 95 % CI ±195 MiB/s)' for a configuration run more than once, else ''."""
    if ref.n < 2 or ref.ci95 is None:
        return ""
    return f" (mean of {ref.n} runs, 95 % CI ±{prose.figure(ref.ci95 / MiB)} MiB/s)"


def _rate_cite(ref: ConfigRef) -> Cite:
    return cite(prose.rate(ref.bytes_per_s), ref.lines, f"mean of {ref.n} runs" if ref.n > 1 else None)


def _one_config(k) -> Finding:
    """A workload of one configuration: its run, or its repeats' mean (never ranked against each other)."""
    only = k.slowest
    mark = f", {only.mark}" if only.mark else ""
    if only.n == 1:
        return Finding(
            f"`{k.workload}`: one run ({only.label}, {prose.rate(only.bytes_per_s)}{mark}), nothing to compare it with.",
            [cite(prose.rate(only.bytes_per_s), only.lines)],
        )
    return Finding(
        f"`{k.workload}`: {only.n} repeats of one configuration ({only.label}, mean {prose.rate(only.bytes_per_s)}"
        f"{mark}), no other configuration to compare it with; repeats are not ranked against each other (their "
        "spread is under the repeats below).",
        [_rate_cite(only)],
    )


def _ranking_sentences(r: StacksResult) -> list[str]:
    out: list[str] = []
    paired = {p.workload for p in r.phase_pairs if p.only_pair}  # a before/after pair, not stacks to rank
    for k in r.rankings:
        if k.workload in paired:
            continue
        if k.configs == 1:
            out.append(_one_config(k))
            continue
        if k.fastest is None:
            out.append(
                f"`{k.workload}`: all {k.configs} configurations are flagged "
                f"({prose.listing([f'{x.label} {x.mark}' for x in k.flagged_faster])}), so none is ranked first."
            )
            continue
        fast, slow = prose.rate(k.fastest.bytes_per_s), prose.rate(k.slowest.bytes_per_s)
        share = f"{k.slowest.bytes_per_s / k.fastest.bytes_per_s:.2f}x"
        text = (
            f"`{k.workload}`: fastest configuration with no flag {k.fastest.label} at {fast}{_of(k.fastest)}, "
            f"slowest {k.slowest.label} at {slow}{_of(k.slowest)} ({share} of it)"
        )
        cites = [
            _rate_cite(k.fastest),
            _rate_cite(k.slowest),
            cite(share, k.slowest.lines + k.fastest.lines, "slowest / fastest configuration's bandwidth"),
        ]
        if k.flagged_faster:
            text += "; faster but flagged: " + prose.listing(
                [f"{x.label} at {prose.rate(x.bytes_per_s)} {x.mark}" for x in k.flagged_faster]
            )
            cites += [_rate_cite(x) for x in k.flagged_faster]
        out.append(Finding(text + ".", cites))
    return out


def _runs_cites(runs) -> list[Cite]:
    return [cite(prose.rate(bw), lines) for _, _, bw, lines in runs]


def _verdict_sentences(r: StacksResult) -> list[Finding | str]:
    """The runs the one rule of 05, 08 and 10 (``run_verdicts``) leaves out of a configuration's mean, those of a
    configuration flagged whole, and the runs 05's own parameters judge otherwise than 08 and 10."""
    out: list[Finding | str] = []
    for x in r.left_out:
        k = len(x.runs)
        each = "; ".join(f"{label} at {prose.rate(bw)} ({why})" for label, why, bw, _ in x.runs)
        out.append(
            Finding(
                f"{x.config} (`{x.workload}`): {k} of its {x.counted + k} runs left out of its mean, the ranking and "
                f"the headline, as notebooks 08 and 10 leave them out: {each}. Its mean, "
                f"{prose.rate(x.mean)}, is of the other {x.counted}.",
                [*_runs_cites(x.runs), cite(prose.rate(x.mean), x.lines, f"mean of {x.counted} run(s)")],
            )
        )
    for x in r.all_flagged:
        head = f"{x.config} (`{x.workload}`)"
        if x.counted == 1:
            ((_, why, bw, lines),) = x.runs
            text = (
                f"{head}: its one run, at {prose.rate(bw)}, is flagged as in notebooks 08 and 10 ({why}): it heads no "
                "ranking and no headline."
            )
        else:
            each = "; ".join(f"{label} at {prose.rate(bw)} ({why})" for label, why, bw, _ in x.runs)
            text = (
                f"{head}: all {x.counted} of its runs are flagged as in notebooks 08 and 10 ({each}), so all count in "
                f"its mean, {prose.rate(x.mean)}, shown flagged: it heads no ranking and no headline; notebook 08 "
                "compares none of them, the disk card (10) shows their mean flagged."
            )
        out.append(Finding(text, _runs_cites(x.runs)))
    if r.verdict_diffs:
        each = "; ".join(
            f"{v.label}: {f'left out here ({v.here})' if v.here else 'counted here'}; "
            f"{f'left out there ({v.there})' if v.there else 'counted there'}"
            for v in r.verdict_diffs
        )
        out.append(
            f"With inflation_margin {r.margin:g} and min_elapsed_s {r.min_elapsed_s:g} s, {len(r.verdict_diffs)} "
            f"run(s) are judged here otherwise than in notebooks 08 and 10 (which judge with "
            f"{run_verdicts.MARGIN:g} and {design.MIN_ELAPSED_S:g} s): {each}."
        )
    return out


def _phase_sentences(r: StacksResult) -> list[Finding]:
    """Each workload whose runs the phase labels pair: before and after, the ratio where one unflagged run each."""
    out = []
    for p in r.phase_pairs:

        def side(refs: tuple[RunRef, ...]) -> str:
            return prose.listing(
                [f"{x.label} at {prose.rate(x.bytes_per_s)}{' ' + x.mark if x.mark else ''}" for x in refs]
            )

        text = (
            f"`{p.workload}`: the phase labels pair its runs as before and after a change ({p.differences}), not "
            f"as two stacks or as repeats of one: before {side(p.before)}; after {side(p.after)}"
        )
        cites = [cite(prose.rate(x.bytes_per_s), x.lines) for x in p.before + p.after]
        one_each = len(p.before) == 1 and len(p.after) == 1
        if any(x.mark for x in p.before + p.after):
            text += ". A flagged run (⚠) is set beside the other only: no ratio is stated"
        elif one_each:
            (b,), (a,) = p.before, p.after
            ratio = f"{a.bytes_per_s / b.bytes_per_s:.2f}x"
            text += f" (after / before: {ratio})"
            cites.append(cite(ratio, a.lines + b.lines, "after / before bandwidth"))
        if one_each:
            text += "; one run per phase: run-to-run noise is unknown, so the change cannot be told from noise"
        out.append(Finding(text + ".", cites))
    return out


def _limit_sentences(r: StacksResult) -> list[str]:
    out: list[str] = []
    strong = [o for o in r.over_limit if not o.weak]
    weak = [o for o in r.over_limit if o.weak]

    def names(items):
        return [
            f"{o.label} {o.bytes_per_s / 1e6:.1f} MB/s = {o.ratio:.2f}x its {o.limit_bytes_per_s / 1e6:.1f} MB/s limit"
            for o in items
        ]

    def cites(items):  # each run's measured bandwidth, linked to its line; its ratio to the label the same line
        return [
            c
            for o in items
            for c in (
                cite(f"{o.bytes_per_s / 1e6:.1f} MB/s", o.lines),
                cite(f"{o.ratio:.2f}x", o.lines, "its bandwidth / the device_limit_bytes_per_s label"),
            )
        ]

    if strong:
        out.append(
            Finding(
                f"Faster than the device limit labelled in the manifest x {r.margin:g}, even at the lowest value the "
                f"printed figure stands for: {prose.listing(names(strong))}. If the labelled limit is right, a cache "
                "answered, not the device.",
                cites(strong),
            )
        )
    if weak:
        out.append(
            Finding(
                f"Above the labelled limit x {r.margin:g} by less than {WEAK_BELOW:g}x it: "
                f"{prose.listing(names(weak))}. A weak flag, only as good as the limit (one quoted as 'about', or a "
                "datasheet figure, can be that far off): marked, but it does not keep the run from a ranking.",
                cites(weak),
            )
        )
    if r.at_limit:
        out.append(
            Finding(
                f"At the device's limit x {r.margin:g} within the printed figure's rounding, so the log cannot tell "
                f"whether a cache helped: {prose.listing([_name(x) for x in r.at_limit])}.",
                [cite(prose.rate(x.bytes_per_s), x.lines) for x in r.at_limit],
            )
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
    rows = r.design_rows or [{} for _ in r.design]
    said = [
        (design.sentence(label, f, r.min_elapsed_s), design.cites(f, row))
        for (label, f), row in zip(r.design, rows, strict=True)
        if f.flagged and f.codes != ("direct ignored",)
    ]
    flagged = [(s, c) for s, c in said if s]  # a flagged run always has its sentence
    out: list[str] = []
    if flagged:
        text = "Test design: " + " ".join(s for s, _ in flagged) + " Such runs are marked ⚠ and never head a ranking."
        out.append(Finding(text, [c for _, cs in flagged for c in cs]))
    # what is not a flag: a final fsync's overrun (not a stall), synced writes on a working set RAM could hold
    out += list(dict.fromkeys(s for label, f in r.design for s in design.note(label, f)))
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


def _fits_words(label: str, size: float, cache: float, where: str) -> str:
    """'run (32.0 MiB in 16.00 GiB of RAM)'; on ZFS 'run (32.0 MiB in the 100.0 MiB ARC maximum (c_max, ...))'."""
    if where == design.RAM_WHERE:
        return f"{label} ({prose.size(size)} in {prose.size(cache)} of RAM)"
    return f"{label} ({prose.size(size)} in the {prose.size(cache)} {where})"


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
        below = "RAM" if all(w == design.RAM_WHERE for *_, w in s.fits) else "the RAM or, on ZFS, the ARC maximum"
        found.append(
            f"Test size below {below} (reads and, on ZFS, writes can be served from the page cache or ARC): "
            + prose.listing([_fits_words(label, b, cache, where) for label, b, cache, where in s.fits])
            + "."
        )
    if s.direct_unknown:  # the same verdict and sentence as 08's (design.direct_unknown)
        missing.append(design.direct_unknown_sentence(s.direct_unknown))
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
    out: list[str] = []
    for t in r.repeat_tests:
        rep, ci, pi = t.repeats, t.repeats.ci, t.repeats.pi
        assert ci is not None and pi is not None, "repeats are two or more runs: both intervals are known"
        boot = (
            f", bootstrap interval of the mean {prose.mib(rep.bootstrap.low)} to {prose.mib(rep.bootstrap.high)}"
            if rep.bootstrap
            else ""
        )
        out.append(
            Finding(
                f"{t.config}: {rep.n} repeated runs, mean {prose.rate(rep.mean)}, spread {t.spread_pct:.1f} % (sample sd / mean; 95 % "
                f"confidence interval of the mean ±{prose.figure(ci.half / MiB)} MiB/s, ±{ci.half_pct:.1f} %"
                f"{prose.clipped(ci)}; "
                f"95 % prediction interval for one new run ±{prose.figure(pi.half / MiB)} MiB/s, "
                f"±{pi.half_pct:.1f} %{prose.clipped(pi)}{boot}"
                f"{'; few runs, so the noise is only roughly known' if rep.n < 5 else ''}).",
                _repeat_cites(t),
            )
        )
        for ref, c in t.peers:
            out.append(
                Finding(
                    f"  {ref.label} against it: {prose.comparison(c, ref.label, t.config)}.",
                    _peer_cites(ref, c, t),
                )
            )
    if not r.repeat_tests:
        out.append(
            "No configuration was run more than once: run-to-run noise is unknown, so small "
            "differences between runs cannot be told from noise."
        )
    unlabelled = r.runs.filter(~pl.col("labelled")).height if "labelled" in r.runs.columns else 0
    if unlabelled or r.repeat_tests:  # how the runs were grouped into repeats, wherever it matters
        out.append(repeat_groups.sentence(r.runs))
    return out


def _repeat_cites(t) -> list:
    """A repeat group's numbers, each from the repeats' lines with its arithmetic (t distribution, ``stats``)."""
    rep, ci, pi, lines = t.repeats, t.repeats.ci, t.repeats.pi, t.lines
    n = f"{rep.n} runs"
    out = [
        cite(prose.rate(rep.mean), lines, f"mean of {n}"),
        cite(f"{t.spread_pct:.1f} %", lines, f"sample sd of {n} / their mean"),
        cite(f"±{prose.figure(ci.half / MiB)} MiB/s", lines, f"95 % t interval of the mean of {n}"),
        cite(f"±{ci.half_pct:.1f} %", lines, f"95 % t interval of the mean of {n} / the mean"),
        cite(f"±{prose.figure(pi.half / MiB)} MiB/s", lines, f"95 % t prediction interval from {n}"),
        cite(f"±{pi.half_pct:.1f} %", lines, f"95 % t prediction interval from {n} / the mean"),
    ]
    if rep.bootstrap:
        out += [
            cite(prose.mib(rep.bootstrap.low), lines, f"bootstrap interval of the mean of {n}, low end"),
            cite(prose.mib(rep.bootstrap.high), lines, f"bootstrap interval of the mean of {n}, high end"),
        ]
    return out


def _peer_cites(ref, c, t) -> list:
    """A run against a repeat group (``prose.comparison``): the change both sides' lines, the interval the group's."""
    both = ref.lines + tuple(x for x in t.lines if x not in ref.lines)
    out = [cite(prose.change(c.a.mean, c.b.mean), both, f"{ref.label} / the mean of {t.config}")]
    if c.test in (stats.PREDICTION, stats.WELCH):
        out += [
            cite(prose.mib(c.interval.low), t.lines if c.test == stats.PREDICTION else both, f"{c.test_name}: low end"),
            cite(
                prose.mib(c.interval.high), t.lines if c.test == stats.PREDICTION else both, f"{c.test_name}: high end"
            ),
        ]
    if c.test == stats.PREDICTION:
        out.append(cite(f"±{c.interval_pct:.1f} %", t.lines, f"{c.test_name}, half-width / the mean"))
    return out


def _cost_sentences(r: StacksResult) -> list[str]:
    out: list[str] = []
    for c in r.costs:
        if c.base is None:  # its base ran only with another ZFS version
            out.append(
                f"{c.over.label}: its base stack ran only with another ZFS version ({c.base_labels}), "
                "so its cost is not measured (not like for like)."
            )
            continue
        caveat = f" (the base run is flagged: {c.base.mark}; the cost is measured against it)" if c.base.mark else ""
        change = prose.change(c.over.bytes_per_s, c.base.bytes_per_s)
        out.append(
            Finding(
                f"{c.over.label} against {c.base.label} (the cost of the {c.layer} layer): {change}{caveat}.",
                [cite(change, c.over.lines + c.base.lines, f"{c.over.label} / {c.base.label} bandwidth")],
            )
        )
    if not r.costs:
        out.append(
            "No run of a layered stack (`layer+base` in the manifest's stack column) has a base run "
            "of the same workload to measure the layer's cost against."
        )
    return out


def _mean(ref: ConfigRef) -> str:
    return f"{ref.bytes_per_s / MiB:.0f} MiB/s" + (f" (mean of {ref.n} runs)" if ref.n > 1 else "")


def _headline(res: Result, r: StacksResult) -> None:
    d = r.direction
    res.headline = {f"runs ({d})": str(r.runs.height), "workloads": str(r.workloads.height)}
    if r.unranked:
        res.headline[f"fastest {d} run with no flag"] = (
            f"not ranked: the unflagged runs are of {r.unranked} workloads; runs are compared within one workload "
            "only (the findings above, per workload)"
        )
    if r.best_clean:
        res.headline[f"fastest {d} run with no flag"] = f"{r.best_clean.label}: {_mean(r.best_clean)}"
    if r.fastest and r.fastest.mark:
        res.headline[f"fastest {d} run (flagged)"] = f"{r.fastest.label}: {_mean(r.fastest)} {r.fastest.mark}"
    for c in r.costs:
        if c.base is not None:  # None: its base ran only with another ZFS version
            res.headline[f"{c.layer} cost over {c.base.label}"] = f"{c.penalty_pct:.1f} %" + (
                f" (base run flagged: {c.base.mark})" if c.base.mark else ""
            )
    if r.unranked:
        res.verdict = (
            f"Not ranked across {r.unranked} workloads: runs are compared within one workload only (each "
            "workload's ranking is in the findings)."
        )
    elif r.best_clean:
        res.verdict = f"Fastest {d} run with no flag: {r.best_clean.label} at {_mean(r.best_clean)}" + (
            f"; the {r.flagged_above_best} faster run(s) are flagged (cache, rounding, ZFS ignoring direct=1, test "
            "design or their logs)."
            if r.flagged_above_best
            else "."
        )
    else:
        res.verdict = f"Every {d} run is flagged (cache, rounding, ZFS ignoring direct=1, test design or their logs): none is ranked."


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


def write(res: Result, r: StacksResult) -> Result:
    """The findings step: frames, sentences, headline, verdict and caveats, written from ``r`` alone."""
    res.numbers = r
    res.frames.update(
        runs=r.runs,
        configs=r.configs,
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
    res.findings += _phase_sentences(r)
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
        shown = zip(s.ms_per_io, s.lines or [()] * len(s.ms_per_io), strict=True)
        each = [cite(f"{ms:.2f} ms", lines, "write ticks / write I/Os") for (_, ms), lines in shown]
        every = tuple(x for lines in s.lines for x in lines)
        res.findings.append(
            Finding(
                f"{s.label}: fio's disk stats give very different write times per I/O for its devices "
                f"({prose.listing(parts)}; {s.fastest_disk} answers {s.factor:.0f}x faster): the members are not "
                "alike, "
                + (
                    "a mirrored write completes only when its slowest member has it, and "
                    if s.mirror
                    else "and how the array spreads a write over them its labels do not say (no mirror label); "
                )
                + f"what lets {s.fastest_disk} answer that fast the logs do not say.",
                [*each, cite(f"{s.factor:.0f}x", every, "slowest device's ms per I/O / the fastest's")],
            )
        )
    said, lacking = _size_sentences(r)
    res.findings += said
    res.missing += lacking
    res.findings += _verdict_sentences(r)
    res.findings += _repeat_sentences(r)
    res.findings += _cost_sentences(r)
    _headline(res, r)
    _caveats(res, r)
    return res
