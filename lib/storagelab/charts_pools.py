"""Charts of pools and transfers (notebooks 03, 04, 06): bonnie++ after/before, DDT estimates against the
metadata budget, mbuffer rates."""

from __future__ import annotations

import altair as alt
import polars as pl

from .analysis import prose
from .analysis.alignment import TESTS_ORDER
from .chartkit import byte_unit, caption
from .chartsource import SOURCE_STRUCT, SOURCES, derived, no_source, provenance, sha_of, source, sources
from .units import MiB

# bonnie++'s throughput tests are stored in bytes/s, the others (seeks, file creates/reads/deletes) in operations/s
_BYTE_TESTS = ("putc", "put_block", "rewrite", "getc", "get_block")


def _rate(column: str) -> pl.Expr:
    """A bonnie++ value with its unit for a tooltip: MiB/s for the throughput tests, /s for the rest."""
    mib = pl.format("{} MiB/s", (pl.col(column) / MiB).round(2))
    ops = pl.format("{}/s", pl.col(column).round(1))
    return pl.when(pl.col("test").is_in(_BYTE_TESTS)).then(mib).otherwise(ops)


def _of(column: str) -> pl.Expr:
    """', mean of N runs' where a side's value is the mean of two runs or more."""
    return pl.when(pl.col(column) > 1).then(pl.format(", mean of {} runs", pl.col(column))).otherwise(pl.lit(""))


def before_after(ratios, sel, before_label: str, after_label: str):
    """bonnie++ after / before per test, bars from 1x on a log axis. A bar is a ratio of two configurations' means:
    a click opens every run's line behind it (``sources_before``/``sources_after``; ``path_before``/``line_before``
    and ``path_after``/``line_after`` where a frame has only those)."""
    artefact = pl.col("beyond_disks").is_not_null() if "beyond_disks" in ratios.columns else pl.lit(False)
    both = "sources_before" in ratios.columns  # each side's mean: every run it is computed from
    plot = derived(
        ratios.filter(pl.col("ratio").is_not_null()),
        pl.format(
            "{}: after / before ({}{} / {}{})",
            "test",
            _rate("value_after"),
            _of("after_runs") if both else pl.lit(""),
            _rate("value_before"),
            _of("before_runs") if both else pl.lit(""),
        ),
        sources(pl.col("sources_before"), pl.col("sources_after"))
        if both
        else sources(
            source("path_before", "line_before", None, sha_of(ratios, "path_before")),
            source("path_after", "line_after", None, sha_of(ratios, "path_after")),
        ),
    ).select(
        "test",
        "ratio",
        "derivation",
        "sources",
        reading=pl.when(artefact)
        .then(pl.lit("cache artefact (faster than the disks)"))
        .when(pl.col("ratio") >= 1)
        .then(pl.lit("faster after"))
        .otherwise(pl.lit("slower after")),
    )
    kinds = ["faster after", "slower after", "cache artefact (faster than the disks)"]
    chart = (
        alt.Chart(plot)
        .mark_bar()
        .encode(
            y=alt.Y("test:N", sort=TESTS_ORDER, title="bonnie++ test"),
            x=alt.X("ratio:Q", scale=alt.Scale(type="log"), title="after / before (log scale; >1 = faster after)"),
            x2=alt.datum(1.0),
            color=alt.Color(
                "reading:N",
                title=None,
                scale=alt.Scale(domain=kinds, range=["#2ca02c", "#d62728", "#9e9e9e"]),
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=["test", alt.Tooltip("ratio:Q", format=".2f"), "reading"],
        )
        .properties(
            width=460,
            title=alt.TitleParams(f"{after_label} vs {before_label}", subtitle=[caption(sel, "bonnie++ runs")]),
        )
    )
    rule = alt.Chart(no_source(pl.DataFrame({"x": [1.0]}), "reference line (1x: no change)")).mark_rule()
    return chart + rule.encode(x="x:Q")


def _budget_scale(largest: float, budget_bytes: float) -> tuple[float, str, bool, str]:
    """(divisor, unit, draw the budget line, subtitle) for DDT sizes up to ``largest`` against a budget: the unit fits
    the values; a budget more than 10x the largest value is named in the subtitle, not drawn (it would flatten them)."""
    draw = budget_bytes <= 10 * largest
    div, unit = byte_unit(max(largest, budget_bytes) if draw else largest)
    note = (
        f"dashed: metadata budget {budget_bytes / div:.2f} {unit}"
        if draw
        else f"metadata budget {prose.size(budget_bytes)}, {budget_bytes / largest:,.0f}x the largest estimate: off the "
        "scale"
    )
    return div, unit, draw, note


def ddt_sensitivity(sens, budget_bytes: float, sel):
    """The estimate the verdict uses (each pool's best, a machine's pools together) over bytes per entry, in a unit
    that fits the values, against the metadata budget. A model over bytes per entry: each point names the inputs of
    its estimate (``sources``, from the ladder) and its arithmetic."""
    div, unit, draw, note = _budget_scale(sens["ddt_bytes"].max() or 1, budget_bytes)
    df = derived(
        sens.with_columns(ddt=pl.col("ddt_bytes") / div),
        pl.format("{} entries x {} bytes per entry", pl.col("entries").round(0), "bytes_per_entry")
        if "entries" in sens.columns
        else pl.lit("entries x bytes per entry"),
    )
    chart = (
        alt.Chart(df)
        .mark_line(point=True)
        .encode(
            x=alt.X("bytes_per_entry:Q", title="ARC bytes per DDT entry (B)"),
            y=alt.Y("ddt:Q", title=f"DDT in RAM ({unit})"),
            color=alt.Color("series:N", title="best estimate of"),
        )
        .properties(
            title=alt.TitleParams(
                "DDT memory (best estimate of the entries) vs bytes per entry",
                subtitle=[caption(sel, "zdb -b, zpool list, zdb -S/-DD"), note],
            )
        )
    )
    budget = no_source(pl.DataFrame({"y": [budget_bytes / div]}), "the metadata budget (ARC statistics or parameters)")
    rule = alt.Chart(budget).mark_rule(strokeDash=[4, 4], color="#a31515")
    return chart + rule.encode(y="y:Q")


def ddt_ladder(ladder, budget_bytes: float, sel):
    """Every DDT estimate per pool (bars; whiskers: the range a rounded ratio allows) against the budget, in a unit
    that fits the values. An estimate is arithmetic on counts from several outputs (zdb -b, zpool list, zdb -S/-DD):
    each bar names its inputs' lines (``sources``) and its arithmetic (``basis``)."""
    div, unit, draw, note = _budget_scale(ladder["ddt_bytes"].max() or 1, budget_bytes)
    df = derived(
        ladder.with_columns(
            size=pl.col("ddt_bytes") / div, low=pl.col("ddt_bytes_low") / div, high=pl.col("ddt_bytes_high") / div
        ),
        pl.format("{} x {} bytes per entry", "basis", "bytes_per_entry"),
    )
    base = alt.Chart(df).encode(y=alt.Y("estimate:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)))
    bars = base.mark_bar().encode(
        x=alt.X("size:Q", title=f"DDT in RAM ({unit})"), color=alt.Color("pool:N", legend=None)
    )
    whisk = base.mark_rule(color="#222").encode(x="low:Q", x2="high:Q")
    budget = no_source(pl.DataFrame({"x": [budget_bytes / div]}), "the metadata budget (ARC statistics or parameters)")
    rule = alt.Chart(budget).mark_rule(strokeDash=[4, 4], color="#a31515")
    return (
        ((bars + whisk + rule.encode(x="x:Q")) if draw else (bars + whisk))
        .properties(width=420)
        .facet(row=alt.Row("pool:N", title=None))
        .properties(
            title=alt.TitleParams(
                "DDT size per pool, crude to good estimates",
                subtitle=[caption(sel, "zdb -b, zpool list, zdb -S/-DD"), note],
            )
        )
    )


def _receiver_sources(corrected, rates):
    """The corrected receivers with their arithmetic and both runs' lines (the receiver's and the sender's)."""
    lines = {
        r["label"]: {
            "path": r["path"],
            "line_start": r["line_start"],
            "line_end": r.get("line_end") or r["line_start"],
            "sha256": r.get("sha256"),
        }
        for r in (rates.iter_rows(named=True) if "path" in rates.columns and "line_start" in rates.columns else ())
    }
    inputs = [[lines[x] for x in (r["receiver"], r["sender"]) if x in lines] for r in corrected.iter_rows(named=True)]
    return derived(corrected, "the receiver's bytes over the sender's seconds").with_columns(
        pl.Series(SOURCES, inputs, dtype=pl.List(SOURCE_STRUCT))
    )


def transport_rates(rates, waits, baseline_label: str, sel):
    """mbuffer rates per run (label: share of the baseline); receivers also without their start-up wait."""
    df = rates.select(
        "label", *provenance(rates), rate_mib_s=pl.col("rate_bytes_per_s") / MiB, kind=pl.lit("as printed")
    )
    if waits.height:
        df = pl.concat(
            [
                df,
                _receiver_sources(  # arithmetic on two files' lines (receiver's bytes over sender's time): both named
                    waits.select(
                        "receiver",
                        "sender",
                        label="receiver",
                        rate_mib_s=pl.col("corrected_rate_bytes_per_s") / MiB,
                        kind=pl.lit("receiver without its start-up wait"),
                    ),
                    rates,
                ),
            ],
            how="diagonal",
        )
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y("label:N", title=None, sort="-x"),
            yOffset="kind:N",
            x=alt.X("rate_mib_s:Q", title="mbuffer average rate (MiB/s)"),
            color=alt.Color("kind:N", title=None, legend=alt.Legend(orient="bottom")),
        )
        .properties(
            width=440,
            title=alt.TitleParams(
                f"Transfer rates through mbuffer (baseline: {baseline_label})",
                subtitle=[caption(sel, "mbuffer summary lines"), "mbuffer before 2018 prints 'MB/s' for MiB/s"],
            ),
        )
    )
