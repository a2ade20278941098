"""Notebook 08's iodepth x numjobs grid (fio-plot's view: one heatmap per workload, direction and setup, numjobs
against iodepth): which (workload, direction, setup) combinations have a grid to draw, the cells of the ones drawn,
and what is left out, counted for the notebook's prose.

A combination has a grid where its runs measured at least two iodepths or two numjobs; one measured at a single
(iodepth, numjobs) is one cell, drawn nowhere here (the depth table lists it). At most ``MAX_PANELS`` grids are
drawn, those with the most runs (ties in the depth table's order); a selection of every study of tests/fixtures/fio
had drawn every workload | direction against every setup: a 105,666 x 24,970-pixel chart of empty cells."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from ..chartsource import DERIVATION, SOURCES, sha_of, source
from . import prose

MAX_PANELS = 12  # grids one chart draws: three rows of four
LARGE_BLOCK = 64 * 1024  # blocks of 64 KiB and more: the cell is the bandwidth (MiB/s), else the IOPS
KEY = ("workload", "direction", "setup")


@dataclass
class Grid:
    """The grids of a selection's depth rows (``fio_depth.against_depth`` with ``setup`` and ``flag``)."""

    cells: pl.DataFrame = field(default_factory=pl.DataFrame)  # one row per drawn panel, iodepth and numjobs
    drawn: list[str] = field(default_factory=list)  # the panels drawn ('workload | direction | setup'), in order
    not_drawn: list[str] = field(default_factory=list)  # panels with a grid past the cap (or the filter), in order
    not_drawn_runs: int = 0  # runs of those panels
    single: int = 0  # combinations measured at one (iodepth, numjobs) only: one cell, no grid
    single_runs: int = 0
    single_unlabelled: int = 0  # of those, combinations of files without a host label (each file a setup of its own)
    unknown_runs: int = 0  # runs whose iodepth or numjobs the output does not give (fio's normal text prints neither)
    filtered: int = 0  # grids the ``only`` text left out
    max_panels: int = MAX_PANELS
    only: str = ""

    @property
    def grids(self) -> int:
        return len(self.drawn) + len(self.not_drawn) + self.filtered


def _runs(df: pl.DataFrame) -> int:
    return df.select("file_id", "doc_index").n_unique() if df.height else 0


def grid(
    depth: pl.DataFrame | None, max_panels: int = MAX_PANELS, only: str = "", large_block: int = LARGE_BLOCK
) -> Grid:
    """The panels to draw from ``depth``: combinations of workload, direction and setup with at least two iodepths
    or two numjobs, the ``max_panels`` with most runs (stable: ties in ``depth``'s order), only those whose
    'workload | direction | setup' contains ``only`` (case-insensitive) where it is given. Each cell: the mean of its
    runs' IOPS (MiB/s, 2^20 bytes, for a combination of blocks of ``large_block`` and more) with their count, the
    median p99 in ms, whether a flagged run is among them, its share of the panel's highest cell, and every run's
    lines (``sources``)."""
    if max_panels < 1:
        raise ValueError(f"grid_panels must be 1 or more (the grids one chart draws), got {max_panels}")
    out = Grid(max_panels=max_panels, only=only)
    if depth is None or depth.is_empty():
        return out
    known = pl.col("iodepth").is_not_null() & pl.col("numjobs").is_not_null()
    out.unknown_runs = _runs(depth.filter(~known))
    df = depth.filter(known).with_columns(
        panel=pl.concat_str([pl.col(c) for c in KEY], separator=" | "),
        order=pl.int_range(pl.len()),
    )
    if df.is_empty():
        return out
    combos = (
        df.group_by("panel", maintain_order=True)
        .agg(
            pl.struct("iodepth", "numjobs").n_unique().alias("cells"),
            pl.struct("file_id", "doc_index").n_unique().alias("runs"),
            pl.col("order").min(),
            (pl.col("host").is_null().all() if "host" in df.columns else pl.lit(False)).alias("unlabelled"),
        )
        .sort(["runs", "order"], descending=[True, False])
    )
    single = combos.filter(pl.col("cells") < 2)
    out.single, out.single_runs = single.height, int(single["runs"].sum())
    out.single_unlabelled = int(single["unlabelled"].sum())
    grids = combos.filter(pl.col("cells") >= 2)
    if only:
        shown = grids.filter(pl.col("panel").str.to_lowercase().str.contains(only.lower(), literal=True))
        out.filtered = grids.height - shown.height
        grids = shown
    out.drawn = grids["panel"].head(max_panels).to_list()
    out.not_drawn = grids["panel"].slice(max_panels).to_list()
    out.not_drawn_runs = int(grids["runs"].slice(max_panels).sum())
    out.cells = _cells(df.filter(pl.col("panel").is_in(out.drawn)), out.drawn, large_block)
    return out


def _cells(df: pl.DataFrame, order: list[str], large_block: int) -> pl.DataFrame:
    """One row per panel, iodepth and numjobs (``grid``'s cells), the panels in ``order``."""
    bandwidth = pl.col("block_size_bytes").max().over("panel") >= large_block
    df = df.with_columns(
        metric=pl.when(bandwidth).then(pl.lit("MiB/s")).otherwise(pl.lit("IOPS")),
        value=pl.when(bandwidth.fill_null(False)).then(pl.col("bw_bytes_per_s") / 2**20).otherwise(pl.col("iops")),
    )
    cells = df.group_by("panel", *KEY, "metric", "iodepth", "numjobs", maintain_order=True).agg(
        pl.col("value").mean(),
        pl.col("p99_ns").median().truediv(1e6).alias("p99_ms"),
        pl.struct("file_id", "doc_index").n_unique().alias("runs"),
        pl.col("flag").is_not_null().any().alias("flagged"),
        pl.col("flag").drop_nulls().unique(maintain_order=True).str.join("; ").alias("flags"),
        *_sources(df),
    )
    rank = {p: i for i, p in enumerate(order)}
    return cells.with_columns(
        share=pl.col("value") / pl.col("value").max().over("panel"),
        panel_rank=pl.col("panel").replace_strict(rank, return_dtype=pl.Int64),
    ).sort("panel_rank", "numjobs", "iodepth")


def _sources(df: pl.DataFrame) -> list[pl.Expr]:
    """A cell's provenance: every run's lines (``sources``) and 'mean of N rows' (``derivation``) where several."""
    if "path" not in df.columns or "line_start" not in df.columns:
        return []
    end = "line_end" if "line_end" in df.columns else None
    return [
        source("path", "line_start", end, sha_of(df)).unique(maintain_order=True).alias(SOURCES),
        pl.when(pl.len() > 1).then(pl.format("mean of {} runs", pl.len())).alias(DERIVATION),
    ]


def sentences(g: Grid) -> list[str]:
    """What the grid chart shows and leaves out, with the counts: the notebook prints them under it."""
    if not g.grids and not g.single:
        return [
            "no iodepth x numjobs grid: no run of the selection gives both its iodepth and numjobs (fio's normal "
            "output prints neither; the fio command line shown before the output, or the manifest's command column, "
            "does)"
        ]
    out = []
    if g.drawn:
        out.append(
            f"{len(g.drawn)} of the {g.grids} workload | direction | setup combination(s) with a grid (two iodepths "
            "or two numjobs measured, or more) drawn"
            + (", those with the most runs" if g.not_drawn else "")
            + "; a cell is the mean of its runs (their count beside it where more than one), outlined in red where "
            "one of them is flagged."
        )
    else:
        out.append("no workload | direction | setup combination of the selection measured two iodepths or two numjobs.")
    if g.not_drawn:
        names = prose.listing([f"`{p}`" for p in g.not_drawn], limit=5)
        out.append(
            f"{len(g.not_drawn)} grid(s) not drawn ({g.not_drawn_runs} run(s)): one chart draws {g.max_panels} "
            f"(grid_panels): {names}; the runs listed under 'Against I/Os in flight' include theirs; re-run with "
            "`-p grid_panels N` (more panels) "
            "or `-p grid_only TEXT` (only the combinations whose name contains TEXT) to draw them."
        )
    if g.filtered:
        out.append(f"{g.filtered} grid(s) left out by grid_only {g.only!r} (re-run without it to draw them).")
    if g.single:
        out.append(
            f"{g.single} combination(s) ({g.single_runs} run(s)) measured at one iodepth x numjobs only: one cell, "
            "no grid; the runs listed under 'Against I/Os in flight' include theirs."
            + (
                f" {g.single_unlabelled} of them are of files without a host label, each file a setup of its own (two "
                "unlabelled files may be two machines): label host (and stack, vdev_type) in the manifest to put one "
                "machine's sweep in one grid."
                if g.single_unlabelled
                else ""
            )
        )
    if g.unknown_runs:
        out.append(
            f"{g.unknown_runs} run(s) give no iodepth or no numjobs (fio's normal output prints neither; the fio "
            "command line shown before the output, or the manifest's command column, does): in no grid."
        )
    return out
