"""Comparing fio runs of one workload at one depth (notebook 08)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from .fio_depth import qd_label

SAMPLE_NOISE = "the runs' sample-to-sample noise"


def stats(values: Sequence[float]) -> tuple[float, float, int]:
    """(mean, sample standard deviation, n) of per-sample values (stdev 0 for one sample)."""
    v = [float(x) for x in values if x is not None]
    if not v:
        raise ValueError("no samples")
    mean = sum(v) / len(v)
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return mean, sd, len(v)


def compare(
    a_mean: float,
    a_sd: float,
    b_mean: float,
    b_sd: float,
    *,
    higher_is_better: bool = True,
    a: str = "A",
    b: str = "B",
    noise: str = "run-to-run noise",
) -> dict:
    """A against B: difference in percent of B, the noise in percent of B (the two standard deviations
    combined), and a sentence. ``higher_is_better`` False for latencies ("lower latency" instead of "faster").
    ``noise`` names what the standard deviations are: run-to-run (of repeated runs' means) by default; "the
    runs' sample-to-sample noise" for fio's per-sample stdev within single runs."""
    if not b_mean:
        raise ValueError("B's mean is zero: no relative difference")
    diff = a_mean - b_mean
    sd = math.sqrt(a_sd**2 + b_sd**2)
    diff_pct = 100.0 * diff / b_mean
    noise_pct = 100.0 * sd / abs(b_mean)
    within = abs(diff) <= sd
    better = (diff > 0) == higher_is_better
    if diff == 0:
        text = f"{a} and {b} are equal"
    elif higher_is_better:
        text = f"{a} is {abs(diff_pct):.0f} % {'faster' if better else 'slower'} than {b}"
    else:
        text = f"{a}'s latency is {abs(diff_pct):.0f} % {'lower' if better else 'higher'} than {b}'s"
    claim = text  # the difference alone (where there is no noise to judge it by)
    text += f", {'within' if within else 'outside'} {noise} (±{noise_pct:.0f} %)"
    return dict(
        diff_pct=diff_pct,
        noise_pct=noise_pct,
        within_noise=within,
        a_better=better and diff != 0,
        text=text,
        claim=claim,
    )


def compare_samples(a: Sequence[float], b: Sequence[float], **kw) -> dict:
    """``compare`` from two runs' log samples (e.g. the steady-state part of their bw series)."""
    am, asd, an = stats(a)
    bm, bsd, bn = stats(b)
    kw.setdefault("noise", SAMPLE_NOISE)
    return {**compare(am, asd, bm, bsd, **kw), "a_mean": am, "b_mean": bm, "a_n": an, "b_n": bn}


def compare_results(a: dict, b: dict, metric: str = "bw", **kw) -> dict:
    """``compare`` from two rows of ``summary`` (fio's own per-sample mean and stdev of bw or iops,
    for runs without logs): bw uses bw_mean/bw_stdev_bytes_per_s, iops iops_mean/iops_stdev."""
    mean, sd = {"bw": ("bw_mean_bytes_per_s", "bw_stdev_bytes_per_s"), "iops": ("iops_mean", "iops_stdev")}[metric]
    if a.get(mean) is None or b.get(mean) is None:
        raise ValueError(f"no {metric} samples in one of the runs")
    kw.setdefault("noise", SAMPLE_NOISE)
    return compare(a[mean], a.get(sd) or 0.0, b[mean], b.get(sd) or 0.0, **kw)


def point_comparisons(depth: pl.DataFrame, zfs_of: dict | None = None) -> list[str]:
    """Runs of one workload at one iodepth x numjobs (``fio_depth`` rows with ``workload``, ``setup``, ``flag``
    and the run's bandwidth: its reporting group's), one sentence per point:

    * a run is one fio run (file and report): repeats are the runs of one setup, whether in several files or
      appended to one (``doc_index``);
    * two or more setups: the two fastest by mean bandwidth, by the test their repeats allow (``stats.compare``:
      Welch's t test where both have repeats, a single run against the other's prediction interval, else no test)
      and the sentence names it; fio's per-sample bandwidth spread is never used as noise;
    * one setup run more than once: its mean, the 95 % confidence interval of the mean and the prediction
      interval for one more run;
    * flagged runs (design checks, a cache) are left out, and the sentence says how many.

    ``zfs_of``: file_id -> ZFS version; two setups on different ZFS versions are said not to be like for like.
    """
    from . import stats

    out = []
    key = ["workload", "direction", "iodepth", "numjobs"]
    rows = depth.filter(pl.col("bw_bytes_per_s").is_not_null())
    zfs_of = zfs_of or {}
    rows = rows.with_columns(
        pl.col("file_id").map_elements(lambda f: zfs_of.get(f) or "", return_dtype=pl.String).alias("zfs")
    )
    for k, g in rows.group_by(key, maintain_order=True):
        workload, direction, qd, nj = k
        if g.select("file_id", "doc_index").n_unique() < 2:
            continue
        point = f"`{workload}` {direction} at QD {qd_label(qd, nj)}"
        flagged = g.filter(pl.col("flag").is_not_null())
        left_out = (
            f" {flagged.select('file_id', 'doc_index').n_unique()} flagged run(s) left out "
            f"({', '.join(sorted(set(flagged['label'].to_list())))})."
            if flagged.height
            else ""
        )
        per = (
            g.filter(pl.col("flag").is_null())
            .group_by("setup", "file_id", "doc_index", maintain_order=True)
            .agg(pl.col("bw_bytes_per_s").sum(), pl.col("zfs").first())  # one figure per run and direction
            .group_by("setup", maintain_order=True)
            .agg(
                pl.col("bw_bytes_per_s").alias("values"),
                pl.col("zfs").filter(pl.col("zfs") != "").unique().sort().str.join("/").alias("zfs"),
            )
            .with_columns(mean=pl.col("values").list.mean())
            .sort("mean", descending=True)
        )
        if per.height == 0 or (per.height == 1 and per["values"].list.len()[0] < 2):
            if left_out:
                out.append(f"{point}: nothing left to compare.{left_out}")
            continue
        if per.height == 1:
            r = per.row(0, named=True)
            out.append(f"{point}: {repeats_sentence(r['setup'], stats.summarise(r['values']))}{left_out}")
            continue
        a, b = per.row(0, named=True), per.row(1, named=True)
        c = stats.compare(stats.summarise(a["values"]), stats.summarise(b["values"]))
        more = f" ({per.height} setups, the two fastest)" if per.height > 2 else ""
        va, vb = a["zfs"], b["zfs"]
        unlike = f" Not like for like: ZFS {va} against {vb}." if va and vb and va != vb else ""
        repeat = (
            " Repeat the runs (`storagelab lab fio --repeat 3`) for a run-to-run estimate."
            if c.test == stats.NONE
            else ""
        )
        out.append(f"{point}{more}: {comparison_sentence(a['setup'], b['setup'], c)}{unlike}{repeat}{left_out}")
    return out


def repeats_sentence(setup: str, r) -> str:
    """'3 runs of SETUP: mean 8.0 MiB/s (...), 95 % confidence interval of the mean ±x %, prediction interval for
    one more run ±y %'."""
    from . import prose

    text = f"{r.n} runs of {setup}: mean {prose.rate(r.mean)}"
    if r.ci is None:
        return text + "."
    return (
        f"{text}, range {prose.rate(r.low)} to {prose.rate(r.high)}; {100 * r.level:.0f} % confidence interval of the "
        f"mean ±{r.ci.half_pct:.1f} %, prediction interval for one more run ±{r.pi.half_pct:.1f} % (t distribution, "
        f"{r.n - 1} degree(s) of freedom)."
    )


def comparison_sentence(a: str, b: str, c) -> str:
    """A against B from a ``stats.Comparison``, naming the test."""
    from . import prose, stats

    faster = "faster" if c.diff > 0 else "slower"
    head = (
        f"{a} ({c.a.n} run(s), mean {prose.rate(c.a.mean)}) is {abs(c.diff_pct):.1f} % {faster} than {b} "
        f"({c.b.n} run(s), mean {prose.rate(c.b.mean)})"
    )
    if c.test == stats.NONE:
        return f"{head}; {stats.TESTS[stats.NONE]}."
    verdict = "a difference beyond run-to-run noise" if c.differs else "not distinguishable from run-to-run noise"
    if c.test == stats.WELCH:
        detail = f"p = {c.p_value:.3g}, {100 * c.level:.0f} % interval of the difference ±{c.interval_pct:.1f} %"
    else:
        detail = f"{100 * c.level:.0f} % prediction interval ±{c.interval_pct:.1f} %"
    return f"{head}: {verdict} ({c.test_name}; {detail})."
