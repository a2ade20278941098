"""Notebook 09's chart frame (issue 29): per bonnie++ run, the block write, rewrite and block read rates (MiB/s,
bytes/s / 2^20) and the random seeks (seeks/s), each with the run's flag (bonnie_table.flags: from memory, cache,
unreliable), whether bonnie++ printed ``+++++`` (too fast to measure: no number, so no bar), and the raw line it
was read from (path, sha256, line_start, line_end: the chart's tooltip and link)."""

from __future__ import annotations

import polars as pl

from .fio_runs import file_names

# test -> what the chart calls it, in bon_csv2html's order
CHART_TESTS = {"put_block": "block write", "rewrite": "rewrite", "get_block": "block read", "seeks": "random seeks"}
KEYS = ["file_id", "run_index"]
COLUMNS = {
    "run": pl.String,
    "test": pl.String,
    "measure": pl.String,
    "unit": pl.String,
    "value": pl.Float64,
    "cpu_pct": pl.Float64,
    "too_fast": pl.Boolean,
    "flag": pl.String,
    "path": pl.String,
    "sha256": pl.String,  # of the bytes read: an excerpt of a file rewritten since is refused (reliability-24)
    "line_start": pl.Int64,
    "line_end": pl.Int64,
}


def run_names(tab: pl.DataFrame) -> pl.DataFrame:
    """(file_id, run_index, run): the run's label, or its path when unlabelled; a label several runs share gets
    the file's name and, in a file of several runs, 'run N' (1-based) after it."""
    named = tab.select(*KEYS, "path", base=pl.coalesce("label", "path").cast(pl.String))
    runs_in_file = pl.len().over("file_id")
    # the file as much of its path as tells it from the others (two 'bonnie.txt' in two folders are two files)
    file_name = pl.col("path").replace_strict(file_names(tab["path"].to_list()), default=None, return_dtype=pl.String)
    where = (
        pl.when(runs_in_file > 1).then(pl.format("{} run {}", file_name, pl.col("run_index") + 1)).otherwise(file_name)
    )
    shared = pl.len().over("base") > 1
    return named.select(*KEYS, run=pl.when(shared).then(pl.format("{} ({})", "base", where)).otherwise("base"))


def chart_frame(results: pl.DataFrame, tab: pl.DataFrame) -> pl.DataFrame:
    """One row per run and charted test that bonnie++ printed (a number, or ``+++++``): ``COLUMNS``. ``results`` and
    ``tab`` are bonnie_table's ``results`` and flagged ``table``."""
    if tab.is_empty():
        return pl.DataFrame(schema=COLUMNS)
    long = pl.concat(
        tab.select(
            *KEYS,
            test=pl.lit(test),
            measure=pl.lit(name),
            unit=pl.lit("seeks/s" if test == "seeks" else "MiB/s"),
            value=pl.col(test).cast(pl.Float64),
            cpu_pct=pl.col(f"{test}_cpu").cast(pl.Float64),
            too_fast=pl.col(f"{test}_too_fast").fill_null(False),
            flag=pl.col(f"{test}_flag"),
        )
        for test, name in CHART_TESTS.items()
    )
    lines = results.select(*KEYS, "test", "path", "sha256", pl.col("line_start").cast(pl.Int64)).unique(
        [*KEYS, "test"], keep="first"
    )
    out = long.join(run_names(tab), on=KEYS).join(lines, on=[*KEYS, "test"], how="left")
    printed = pl.col("value").is_not_null() | pl.col("too_fast")
    return out.filter(printed).with_columns(line_end=pl.col("line_start")).select(list(COLUMNS))
