"""Repeats among notebook 09's bonnie++ runs (a compute step): runs of one setup are repeats, summarised by their
mean and spread and ranked by their mean, never best to worst among themselves.

A *setup* is the repeat rule every notebook uses (``repeat_groups.with_key``: the label less a 'run N' mark, a run
without a label named by its file, so runs appended to one file are repeats; the same value in every manifest
column that says what a run was made on) and the same bonnie++ options the output records (``OPTIONS``: file
size, chunk, concurrency, number and sizes of the small files, machine name). ``with_setups`` adds, per run,
``setup_key``, ``setup`` (the label less its 'run N' mark), ``setup_runs`` and per test ``<test>_rank``: the mean of
the setup's measured, unflagged values (a run alone: its own value), which the table shades and the findings rank.
"""

from __future__ import annotations

import polars as pl

from . import repeat_groups, stats
from .fio_runs import config_label

OPTIONS = ("size_bytes", "chunk_bytes", "concurrency", "num_files", "max_size_bytes", "min_size_bytes", "num_dirs")


def with_setups(tab: pl.DataFrame, tests: list[str]) -> pl.DataFrame:
    """``tab`` (one row per run, ``bonnie_table.table`` + ``flags``; ``setup_label``: the label before a run of a
    multi-run file is named by its line) with the setup columns (module doc)."""
    if tab.is_empty():
        return tab
    base = tab.with_columns(pl.col("label").alias("_shown"), pl.col("setup_label").alias("label"))
    keyed = repeat_groups.with_key(base)
    opts = [pl.col(c).cast(pl.String).fill_null("") for c in (*OPTIONS, "machine") if c in keyed.columns]
    keyed = keyed.with_columns(
        setup_key=pl.concat_str([pl.col(repeat_groups.KEY), *opts], separator="\x1f"),
        setup=config_label(keyed),
    ).with_columns(setup_runs=pl.len().over("setup_key"))
    ranks = [
        pl.when(pl.col(f"{t}_flag").is_null()).then(pl.col(t)).mean().over("setup_key").alias(f"{t}_rank")
        for t in tests
    ]
    return keyed.with_columns(*ranks).with_columns(pl.col("_shown").alias("label")).drop("_shown", repeat_groups.KEY)


SPREAD_SCHEMA = {
    "setup_key": pl.String,
    "test": pl.String,
    "n": pl.Int64,  # runs that measured the test (a number, not +++++)
    "mean": pl.Float64,  # their mean, in the table's display unit
    "sd": pl.Float64,  # their sample sd (None below two)
    "too_fast": pl.Int64,  # runs of the setup that printed +++++ for it
}


def spreads(tab: pl.DataFrame, tests: list[str]) -> pl.DataFrame:
    """Per setup with two or more runs and per test: how many runs measured it, their mean and sample sd
    (``stats.summarise``), and how many printed +++++ (``SPREAD_SCHEMA``)."""
    rows = []
    for g in groups(tab):
        for t in tests:
            vals = [v for v in g[t].to_list() if v is not None]
            s = stats.summarise(vals) if vals else None
            fast = int(g[f"{t}_too_fast"].fill_null(False).sum())
            rows.append((g["setup_key"][0], t, len(vals), s.mean if s else None, s.sd if s else None, fast))
    return pl.DataFrame(rows, schema=SPREAD_SCHEMA, orient="row")


def ranked(col: pl.DataFrame, test: str) -> list[dict]:
    """One entry per setup of the ranked (measured, unflagged) runs ``col`` of ``test``: ``name`` (a run alone: its
    label; repeats: the setup, their count and range), ``value`` (its value, or the setup's mean: ``<test>_rank``)
    and ``rows`` (the runs)."""
    if "setup_key" not in col.columns:
        return [{"name": r["label"], "value": r[test], "rows": [r]} for r in col.iter_rows(named=True)]
    out = []
    for _, g in col.group_by("setup_key", maintain_order=True):
        rows = g.to_dicts()
        first = rows[0]
        if g.height == 1:
            out.append({"name": first["label"], "value": first[test], "rows": rows})
            continue
        out.append(
            {
                "name": first["setup"],
                "value": first[f"{test}_rank"],
                "rows": rows,
                "runs": g.height,
                "low": g[test].min(),
                "high": g[test].max(),
                "more": first["setup_runs"] - g.height,  # runs of the setup not ranked for this test
            }
        )
    return out


def groups(tab: pl.DataFrame) -> list[pl.DataFrame]:
    """The runs of each setup with two or more runs, in the table's order."""
    if tab.is_empty() or "setup_runs" not in tab.columns:
        return []
    return [g for _, g in tab.filter(pl.col("setup_runs") > 1).group_by("setup_key", maintain_order=True)]
