"""What a chart's mark came from: the columns that tie a row to its raw lines, for one file's lines or for a
number computed from several (see excerpts.enrich, which turns them into the tooltip and the link)."""

from __future__ import annotations

import polars as pl

# the columns that tie a chart's row to its raw lines: excerpts.enrich turns them into the tooltip's raw file and
# lines, and a link to the excerpt (a builder that selects its columns keeps these)
PROVENANCE = ("path", "sha256", "line_start", "line_end")


def provenance(df) -> list[str]:
    """The provenance columns ``df`` has, to add to a builder's selection."""
    return [c for c in PROVENANCE if c in df.columns]


def with_provenance(frame, source, on: list[str], where=None):
    """``frame`` with the provenance columns of ``source``'s row per key ``on`` (a mark drawn from one row of a
    file: its lines), on the rows ``where`` holds (a polars expression; None: every row). A key with several rows in
    ``source`` (two layouts of one vdev count) gets none, as do the rows ``where`` leaves out (a model's line,
    arithmetic on stated numbers): they have no one raw line."""
    cols = [c for c in provenance(source) if c not in on]
    if not cols:
        return frame
    only = source.filter(pl.len().over(on) == 1).select(*on, *cols)
    out = frame.join(only, on=on, how="left", nulls_equal=True)
    if where is None:
        return out
    return out.with_columns(pl.when(where).then(pl.col(c)).alias(c) for c in cols)
