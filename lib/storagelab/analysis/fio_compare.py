"""Comparing fio runs of one workload at one depth (notebook 08), with run-to-run noise from repeats only
(``stats``): fio's per-sample bandwidth spread within a run is never used as noise."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..repeat_auto import not_settled
from . import prose, stats
from .fio_depth import qd_label
from .result import Finding, cite, lines_of


@dataclass(frozen=True)
class Point:
    """The runs of one workload at one iodepth x numjobs, as the comparison found them (named numbers)."""

    workload: str
    direction: str
    iodepth: int | None
    numjobs: int | None
    flagged: list[str]  # labels of the flagged runs left out
    flagged_runs: int
    setups: int  # setups with unflagged runs
    a: str | None = None  # the fastest setup (or the one setup)
    b: str | None = None  # the second fastest
    repeats: stats.Repeats | None = None  # of ``a`` when it is the only setup
    comparison: stats.Comparison | None = None  # of a against b
    zfs_a: str = ""
    zfs_b: str = ""
    a_lines: tuple[dict, ...] = ()  # the raw lines (result.lines_of) of a's and b's unflagged runs
    b_lines: tuple[dict, ...] = ()


def points(depth: pl.DataFrame, zfs_of: dict | None = None) -> list[Point]:
    """Runs of one workload at one iodepth x numjobs (``fio_depth`` rows with ``workload``, ``setup``, ``flag``
    and the run's bandwidth: its reporting group's):

    * a run is one fio run (file and report): repeats are the runs of one ``repeats_of`` group (its setup, one
      label less a 'run N' mark, every manifest column agreeing: ``repeat_groups``; ``setup`` where the frame has
      none), whether in several files or appended to one (``doc_index``);
    * two or more setups: the two fastest by mean bandwidth, by the test their repeats allow (``stats.compare``:
      Welch's t test where both have repeats, a single run against the other's prediction interval, else no test);
      fio's per-sample bandwidth spread is never used as noise;
    * one setup run more than once: its ``stats.Repeats`` (mean, confidence and prediction intervals);
    * flagged runs (``suspect``: a design flag, or 05's plausibility flag unless it is weak) are left out, and
      counted.

    ``zfs_of``: file_id -> ZFS version (two setups on different versions are not like for like).
    """

    out = []
    key = ["workload", "direction", "iodepth", "numjobs"]
    zfs_of = zfs_of or {}
    rows = depth.filter(pl.col("bw_bytes_per_s").is_not_null()).with_columns(
        pl.col("file_id").map_elements(lambda f: zfs_of.get(f) or "", return_dtype=pl.String).alias("zfs")
    )
    by = "repeats_of" if "repeats_of" in rows.columns else "setup"  # a group of repeats (``repeat_groups``)
    for (workload, direction, qd, nj), g in rows.group_by(key, maintain_order=True):
        if g.select("file_id", "doc_index").n_unique() < 2:
            continue
        suspect = pl.col("suspect") if "suspect" in g.columns else pl.col("flag").is_not_null()
        flagged = g.filter(suspect)
        per = (
            g.filter(~suspect)
            .group_by(by, "file_id", "doc_index", maintain_order=True)
            .agg(pl.col("bw_bytes_per_s").sum(), pl.col("zfs").first())  # one figure per run and direction
            .group_by(by, maintain_order=True)
            .agg(
                pl.col("bw_bytes_per_s").alias("values"),
                pl.col("zfs").filter(pl.col("zfs") != "").unique().sort().str.join("/").alias("zfs"),
            )
            .with_columns(mean=pl.col("values").list.mean())
            .sort("mean", descending=True)
        )
        p = dict(
            workload=workload,
            direction=direction,
            iodepth=qd,
            numjobs=nj,
            flagged=_named_runs(flagged),
            flagged_runs=flagged.select("file_id", "doc_index").n_unique(),
            setups=per.height,
        )
        clean = g.filter(~suspect)
        if per.height == 1 and per["values"].list.len()[0] >= 2:
            r = per.row(0, named=True)
            p.update(a=r[by], repeats=stats.summarise(r["values"]), a_lines=lines_of(clean))
        elif per.height >= 2:
            a, b = per.row(0, named=True), per.row(1, named=True)
            c = stats.compare(stats.summarise(a["values"]), stats.summarise(b["values"]))
            p.update(a=a[by], b=b[by], comparison=c, zfs_a=a["zfs"], zfs_b=b["zfs"])
            p.update(a_lines=lines_of(clean.filter(pl.col(by) == a[by])))
            p.update(b_lines=lines_of(clean.filter(pl.col(by) == b[by])))
        elif not p["flagged"]:
            continue
        out.append(Point(**p))
    return out


def point_sentence(p: Point) -> str:
    """One sentence per ``Point``, naming the test its comparison used; its numbers link to the runs' lines."""

    head = f"`{p.workload}` {p.direction} at QD {qd_label(p.iodepth, p.numjobs)}"
    left_out = f" {p.flagged_runs} flagged run(s) left out ({', '.join(p.flagged)})." if p.flagged else ""
    if p.repeats is not None and p.a is not None:
        return Finding(f"{head}: {repeats_sentence(p.a, p.repeats)}{left_out}", repeats_cites(p.repeats, p.a_lines))
    c = p.comparison
    if c is None or p.a is None or p.b is None:
        if not p.setups:  # every run flagged: 05 and the card show such a configuration's mean, flagged
            return (
                f"{head}: every run is flagged, so none is compared (notebooks 05 and 10 show the mean of a "
                f"configuration whose runs are all flagged, marked flagged).{left_out}"
            )
        return f"{head}: nothing left to compare.{left_out}"
    more = f" ({p.setups} setups, the two fastest)" if p.setups > 2 else ""
    unlike = (
        f" Not like for like: ZFS {p.zfs_a} against {p.zfs_b}." if p.zfs_a and p.zfs_b and p.zfs_a != p.zfs_b else ""
    )
    repeat = (
        " Repeat the runs (`storagelab lab fio --repeat 3`) for a run-to-run estimate." if c.test == stats.NONE else ""
    )
    text = f"{head}{more}: {comparison_sentence(p.a, p.b, c)}{unlike}{repeat}{left_out}"
    return Finding(text, comparison_cites(c, p.a_lines, p.b_lines))


def comparison_cites(c: stats.Comparison, a: tuple[dict, ...], b: tuple[dict, ...]) -> list:
    """``comparison_sentence``'s numbers and the runs' lines: each mean its side's runs, the difference and the
    test's figures both sides', with their arithmetic."""
    both = a + tuple(x for x in b if x not in a)
    diff = c.diff_pct is not None and c.diff != 0
    out = [
        cite(prose.rate(c.a.mean), a, f"mean of {c.a.n} run(s)"),
        *([cite(prose.percent(abs(c.diff_pct or 0)), both, "difference of the means / the second's mean")] * diff),
        cite(prose.rate(c.b.mean), b, f"mean of {c.b.n} run(s)"),
    ]
    if c.test == stats.WELCH:
        out.append(cite(f"p = {c.p_value:.3g}", both, "Welch's t test on both sides' runs"))
    if c.test != stats.NONE:
        out.append(cite(f"±{c.interval_pct:.1f} %", both, f"{c.test_name} on both sides' runs"))
    return out


def repeats_cites(r: stats.Repeats, lines: tuple[dict, ...]) -> list:
    """``repeats_sentence``'s numbers, each from the runs' lines with its arithmetic."""
    out = [cite(prose.rate(r.mean), lines, f"mean of {r.n} run(s)")]
    if r.ci is None or r.pi is None:
        return out
    out += [
        cite(prose.rate(r.low), lines, "the lowest run"),
        cite(prose.rate(r.high), lines, "the highest run"),
        cite(f"±{r.ci.half_pct:.1f} %", lines, f"t interval of the mean of {r.n} runs"),
        cite(f"±{r.pi.half_pct:.1f} %", lines, f"t prediction interval from {r.n} runs"),
    ]
    if r.bootstrap is not None:
        out += [
            cite(prose.rate(r.bootstrap.low), lines, "bootstrap interval of the mean, low end"),
            cite(prose.rate(r.bootstrap.high), lines, "bootstrap interval of the mean, high end"),
        ]
    return out


def point_comparisons(depth: pl.DataFrame, zfs_of: dict | None = None) -> list[str]:
    """``points`` as sentences (``point_sentence``)."""
    return [point_sentence(p) for p in points(depth, zfs_of)]


def repeats_sentence(setup: str, r: stats.Repeats) -> str:
    """'3 runs of SETUP: mean 8.0 MiB/s (...), 95 % confidence interval of the mean ±x %, prediction interval for
    one more run ±y %'."""

    text = f"{r.n} runs of {setup}: mean {prose.rate(r.mean)}"
    if r.ci is None or r.pi is None:  # one run: both are None
        return text + "."
    boot = (
        ""
        if r.bootstrap is None
        else f"; bootstrap interval of the mean {prose.rate(r.bootstrap.low)} to {prose.rate(r.bootstrap.high)}"
    )
    return (
        f"{text}, range {prose.rate(r.low)} to {prose.rate(r.high)}; {100 * r.level:.0f} % confidence interval of the "
        f"mean ±{r.ci.half_pct:.1f} %{prose.clipped(r.ci, prose.rate)}, prediction interval for one more run ±{r.pi.half_pct:.1f} %"
        f"{prose.clipped(r.pi, prose.rate)} (t distribution, "
        f"{r.n - 1} degree(s) of freedom){boot}." + not_settled(r.n, r.mean, r.sd)
    )


def comparison_sentence(a: str, b: str, c: stats.Comparison) -> str:
    """A against B from a ``stats.Comparison``, naming the test."""

    # '< 0.1 %' where a difference rounds to nothing (prose.percent), and no direction for equal means
    by = "" if c.diff_pct is None else f"{prose.percent(abs(c.diff_pct))} "  # None: B's mean is 0, no percentage of it
    if c.test == stats.NONE:
        # no test, no verdict (the rule of 02, 05, 08 and 10): the difference of the means as arithmetic, no 'faster'
        than = "measured the same mean as" if c.diff == 0 else f"measured {by}{'more' if c.diff > 0 else 'less'} than"
        head = f"{a} ({c.a.n} run(s), mean {prose.rate(c.a.mean)}) {than} {b} ({c.b.n} run(s), mean {prose.rate(c.b.mean)})"
        return f"{head}, arithmetic on the means only; no faster/slower verdict: {stats.TESTS[stats.NONE][len('no test: ') :]}."
    than = "has the same mean as" if c.diff == 0 else f"is {by}{'faster' if c.diff > 0 else 'slower'} than"
    head = f"{a} ({c.a.n} run(s), mean {prose.rate(c.a.mean)}) {than} {b} ({c.b.n} run(s), mean {prose.rate(c.b.mean)})"
    verdict = "a difference beyond run-to-run noise" if c.differs else "not distinguishable from run-to-run noise"
    if c.test == stats.WELCH:
        detail = f"p = {c.p_value:.3g}, {100 * c.level:.0f} % interval of the difference ±{c.interval_pct:.1f} %"
    else:
        detail = (
            f"{100 * c.level:.0f} % prediction interval ±{c.interval_pct:.1f} %{prose.clipped(c.interval, prose.rate)}"
        )
    return f"{head}: {verdict} ({c.test_name}; {detail})."


def _named_runs(rows: pl.DataFrame) -> list[str]:
    """The runs of ``rows`` by label, a label that holds several runs (fio runs appended to one file) with their
    count: 'btr-after-qd8-repeats.txt (3 runs)', so that the names add up to the runs counted."""
    runs = rows.group_by("label").agg(pl.struct("file_id", "doc_index").n_unique().alias("n"))
    return sorted(f"{label} ({n} runs)" if n > 1 else str(label) for label, n in runs.iter_rows())
