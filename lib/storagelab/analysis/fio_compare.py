"""Comparing fio runs of one workload at one depth (notebook 08), with run-to-run noise from repeats only
(``stats``): fio's per-sample bandwidth spread within a run is never used as noise."""

from __future__ import annotations

import polars as pl

from .fio_depth import qd_label


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
    boot = (
        ""
        if r.bootstrap is None
        else f"; bootstrap interval of the mean {prose.rate(r.bootstrap.low)} to {prose.rate(r.bootstrap.high)}"
    )
    return (
        f"{text}, range {prose.rate(r.low)} to {prose.rate(r.high)}; {100 * r.level:.0f} % confidence interval of the "
        f"mean ±{r.ci.half_pct:.1f} %, prediction interval for one more run ±{r.pi.half_pct:.1f} % (t distribution, "
        f"{r.n - 1} degree(s) of freedom){boot}."
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
