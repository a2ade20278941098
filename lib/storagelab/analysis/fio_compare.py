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


def point_comparisons(summ: pl.DataFrame, zfs_of: dict | None = None) -> list[str]:
    """Runs of one workload at one iodepth x numjobs (``summary`` rows with ``workload``, ``config`` and the
    run's bandwidth), compared with their noise, one sentence per point:

    * two or more configurations (host | stack | layout): the two fastest by mean bandwidth, against the spread of
      repeated runs when both have repeats (run-to-run noise), else against fio's per-sample bandwidth stdev of
      their runs (sample-to-sample noise, which says less: it is not the spread between runs);
    * one configuration run more than once: the mean and the run-to-run spread (sample stdev / mean) of its repeats.

    ``zfs_of``: file_id -> ZFS version; two configurations on different ZFS versions are said not to be like for
    like.
    """
    from . import prose

    out = []
    key = ["workload", "direction", "iodepth", "numjobs"]
    rows = summ.filter(pl.col("bw_bytes_per_s").is_not_null())
    zfs_of = zfs_of or {}
    rows = rows.with_columns(
        pl.col("file_id").map_elements(lambda f: zfs_of.get(f) or "", return_dtype=pl.String).alias("zfs")
    )
    for k, g in rows.group_by(key, maintain_order=True):
        workload, direction, qd, nj = k
        if g["file_id"].n_unique() < 2:
            continue
        point = f"`{workload}` {direction} at QD {qd_label(qd, nj)}"
        per = (
            g.group_by("config", maintain_order=True)
            .agg(
                pl.col("file_id").n_unique().alias("runs"),
                pl.col("bw_bytes_per_s").mean().alias("mean"),
                pl.col("bw_bytes_per_s").std().alias("sd"),
                pl.col("bw_stdev_bytes_per_s").mean().alias("sample_sd"),
                pl.col("bw_mean_bytes_per_s").mean().alias("sample_mean"),
                pl.col("zfs").filter(pl.col("zfs") != "").unique().sort().str.join("/").alias("zfs"),
            )
            .sort("mean", descending=True)
        )
        if per.height == 1:
            r = per.row(0, named=True)
            out.append(
                f"{point}: {r['runs']} runs of {r['config']}: mean {prose.rate(r['mean'])}, run-to-run spread "
                f"±{100 * r['sd'] / r['mean']:.1f} % (sample standard deviation of the runs' bandwidth)."
            )
            continue
        a, b = per.row(0, named=True), per.row(1, named=True)
        if a["runs"] > 1 and b["runs"] > 1:
            c = compare(a["mean"], a["sd"], b["mean"], b["sd"], a=a["config"], b=b["config"])
            how = f"{a['runs']} and {b['runs']} runs"
        elif a["sample_mean"] is not None and b["sample_mean"] is not None:
            c = compare(
                a["sample_mean"],
                a["sample_sd"] or 0.0,
                b["sample_mean"],
                b["sample_sd"] or 0.0,
                a=a["config"],
                b=b["config"],
                noise=SAMPLE_NOISE,
            )
            how = "fio's bandwidth samples; repeat the runs (`storagelab lab fio --repeat 3`) for run-to-run noise"
        else:
            continue
        more = f" ({per.height} configurations, the two fastest)" if per.height > 2 else ""
        va, vb = a["zfs"], b["zfs"]
        unlike = f"; not like for like: ZFS {va} against {vb}" if va and vb and va != vb else ""
        out.append(f"{point}{more}: {c['text']} ({how}{unlike}).")
    return out
