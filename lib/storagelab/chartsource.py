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


# A number computed from several inputs (a ratio of two runs, an estimate from three outputs, a model's line) has
# no one raw line: its row carries ``sources``, the list of its inputs' lines (each {path, line_start, line_end,
# sha256}: the file's SHA-256 as stored, so an excerpt of a file rewritten since is refused; null where unknown),
# and ``derivation``, the arithmetic in words. excerpts.enrich names them in the tooltip ("from: a.txt:12-40,
# b.txt:3-9") and links the mark to one page with every input's lines.
SOURCES, DERIVATION = "sources", "derivation"
SOURCE_STRUCT = pl.Struct({"path": pl.String, "line_start": pl.Int64, "line_end": pl.Int64, "sha256": pl.String})


def source(path: str, line_start=None, line_end=None, sha256=None) -> pl.Expr:
    """One input's lines as a struct (column names or expressions; a missing end is the start). ``sha256`` is the
    file's as stored (``files.sha256``) or as read (a file read outside the database, e.g. a study's claims.csv): its
    excerpt is shown only while the file's bytes are those; None leaves it null (unchecked: "the file as it is now")."""

    def col(v):
        return pl.col(v) if isinstance(v, str) else (v if isinstance(v, pl.Expr) else pl.lit(v))

    start = col(line_start).cast(pl.Int64)
    end = pl.coalesce(col(line_end).cast(pl.Int64), start) if line_end is not None else start
    sha = col(sha256).cast(pl.String) if sha256 is not None else pl.lit(None, dtype=pl.String)
    return pl.struct(path=col(path).cast(pl.String), line_start=start, line_end=end, sha256=sha)


def sha_of(df, path: str = "path") -> str | None:
    """The column of ``df`` holding the SHA-256 of ``path``'s file ("path" -> "sha256", "num_path" -> "num_sha256",
    "path_before" -> "sha256_before"); None where ``df`` has none."""
    name = path.replace("path", "sha256")
    return name if name in df.columns else None


def sources(*inputs: pl.Expr) -> pl.Expr:
    """The ``sources`` column from ``source(...)`` structs: every input with a path, in order."""
    return pl.concat_list(*inputs).list.eval(pl.element().filter(pl.element().struct.field("path").is_not_null()))


def source_rows(df) -> list[dict]:
    """Every row's own lines in ``df`` (path, line_start, line_end, sha256), once each, in order: the inputs of a
    number computed from all of them (a model fitted to these points)."""
    if "path" not in df.columns or "line_start" not in df.columns:
        return []
    end = pl.col("line_end") if "line_end" in df.columns else pl.col("line_start")
    sha = pl.col("sha256") if "sha256" in df.columns else pl.lit(None, dtype=pl.String)
    rows = df.select(
        pl.col("path").cast(pl.String),
        pl.col("line_start").cast(pl.Int64),
        end.cast(pl.Int64).alias("line_end"),
        sha.cast(pl.String).alias("sha256"),
    )
    return rows.drop_nulls(["path"]).unique(maintain_order=True).to_dicts()


def derived(df, how, inputs: pl.Expr | list[dict] | None = None):
    """``df`` with ``derivation`` (``how``: words, or an expression per row) and, given, ``sources``: an expression,
    or one list of inputs for every row (a model line's measured points)."""
    out = df.with_columns((how if isinstance(how, pl.Expr) else pl.lit(how)).alias(DERIVATION))
    if isinstance(inputs, pl.Expr):
        return out.with_columns(inputs.alias(SOURCES))
    if inputs is not None:
        return out.with_columns(pl.lit(inputs, dtype=pl.List(SOURCE_STRUCT)).alias(SOURCES))
    return out


def sources_by(frame, src, on: list[str], where: pl.Expr | None = None):
    """``frame`` with ``sources``: the lines of every row of ``src`` with the same key ``on`` (the rows a model's
    point at that key was computed from), on the rows ``where`` holds (None: every row)."""
    if "path" not in src.columns or "line_start" not in src.columns:
        return frame
    end = "line_end" if "line_end" in src.columns else None
    agg = src.group_by(on).agg(
        source("path", "line_start", end, sha_of(src)).unique(maintain_order=True).alias(SOURCES)
    )
    out = frame.join(agg, on=on, how="left", nulls_equal=True)
    return out if where is None else out.with_columns(pl.when(where).then(pl.col(SOURCES)).alias(SOURCES))


def no_source(df, why: str | pl.Expr):
    """``df`` (a reference line, a model on the parameters alone) with ``raw_file`` saying why no log is behind it
    (``why``: words, or an expression per row)."""
    return df.with_columns(
        pl.concat_str(pl.lit("none: "), why if isinstance(why, pl.Expr) else pl.lit(why)).alias("raw_file")
    )
