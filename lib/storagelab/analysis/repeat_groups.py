"""Which runs are repeats of one another, and how reports name each group of repeats (notebooks 05, 08, 10).

Runs of one workload are repeats where their label agrees once a 'run N' mark is taken out
(``fio_runs.config_label``: a run without a label is named by as much of its file's path as tells it apart, so
runs appended to one file are repeats and same-named files in different folders never are) **and** every other
column the manifest gives that says what a run was made on agrees (``SETUP_COLUMNS``: host, stack, pool, layout,
devices, recordsize, notes, ...). Two runs labelled 'baseline' and 'tuned', or with different notes or
recordsize, are two configurations, never pooled as repeats, whatever host and stack they share.

Not compared: where a file came from (study, seed, ...), the command (each repeat's names its own output); in the
notes, what the lab appends about one run alone (its ``sanity:`` flags, the empty logs it dropped: outcomes of a
run, not its setup); and the notes of a label whose runs carry a 'run N' mark ('x, run 2'): the label itself says
they are repeats, and free-text notes often describe one run ('second run with bitmap none').
"""

from __future__ import annotations

import polars as pl

from ..manifest import LABEL_COLUMNS
from .fio_runs import RUN_MARK, config_label, section_names

NOT_SETUP = ("study", "seed", "seed_lines", "also_in", "label", "command", "duplicate_of")
SETUP_COLUMNS = tuple(c for c in LABEL_COLUMNS if c not in NOT_SETUP)
# what `storagelab lab` appends to a run's notes about that run alone (``lab.manifest._notes``)
LAB_OUTCOMES = r"(?:^|;\s*)(?:sanity: |empty logs not kept=)[^;]*"
KEY = "repeat_key"
NAME_CHARS = 40  # a differing value (notes) is shown up to this many characters
NOT_COMPARED = "\x00"  # the notes of a label with 'run N' marks: not compared (``marked``), and never shown


def _setup_values(df: pl.DataFrame) -> list[pl.Expr]:
    """Each ``SETUP_COLUMNS`` column ``df`` has, as text ('' where not labelled), named after the column; the notes
    without the lab's per-run outcomes, and ``NOT_COMPARED`` for a label whose runs carry a 'run N' mark."""
    out = []
    for c in SETUP_COLUMNS:
        if c not in df.columns:
            continue
        v = pl.col(c).cast(pl.String).fill_null("")
        if c == "notes":
            cleaned = v.str.replace_all(LAB_OUTCOMES, "").str.strip_chars("; ")
            v = pl.when(marked(df)).then(pl.lit(NOT_COMPARED)).otherwise(cleaned)
        out.append(v.alias(c))
    return out


def marked(df: pl.DataFrame) -> pl.Expr:
    """True for the runs of a label one of whose runs carries a 'run N' mark ('x, run 2', the lab's 'x (run 2)'):
    the label itself says they are repeats of x, so their notes (free text, often about one run) do not part them."""
    if "label" not in df.columns:
        return pl.lit(False)
    return pl.col("label").str.contains(RUN_MARK).fill_null(False).any().over(config_label(df).fill_null(""))


def given(df: pl.DataFrame) -> list[str]:
    """The ``SETUP_COLUMNS`` the manifest gives for at least one of ``df``'s runs (the notes: besides the lab's
    per-run outcomes), in the manifest's order."""
    if df.is_empty():
        return []
    values = df.select(_setup_values(df))
    return [c for c in values.columns if (~values[c].is_in(["", NOT_COMPARED])).any()]


def with_key(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with ``repeat_key``: equal for runs that may be repeats (module doc; the workload is the caller's)."""
    parts = [config_label(df).fill_null(""), *_setup_values(df)]
    return df.with_columns(pl.concat_str(parts, separator="\x1f").alias(KEY))


def names(df: pl.DataFrame, base: str, label: bool = True) -> dict[str, str]:
    """``repeat_key`` -> a name: the group's ``base`` column (08's setup 'host | stack | layout', 05's label), and
    where several groups share that base and a workload, what tells them apart: the label (or file) and each setup
    column whose value differs between them ('vm | ext4 | single 1x1 (tuned, notes hot)'). ``df`` has
    ``with_key``'s column. ``label`` False: the label neither names nor parts the groups (08's depth curves: a lab
    label names the depth)."""
    labels = (config_label(df).fill_null("") if label else pl.lit("")).alias("_label")
    within = [c for c in ("workload", "direction") if c in df.columns]
    rows = df.select(
        KEY, *within, pl.col(base).cast(pl.String).fill_null("").alias("_base"), labels, *_setup_values(df)
    ).unique([KEY, *within], keep="first", maintain_order=True)
    shown: dict[str, list[str]] = {}  # key -> the columns that tell it from another group of its base and workload
    for _, g in rows.group_by("_base", *within, maintain_order=True):
        differ = [
            c
            for c in g.columns
            if c not in (KEY, "_base", *within) and g.filter(pl.col(c) != NOT_COMPARED)[c].n_unique() > 1
        ]
        for k in g[KEY].to_list():
            shown[k] = [*shown.get(k, []), *(c for c in differ if c not in shown.get(k, []))]
    keys = rows.unique(KEY, keep="first", maintain_order=True)
    entries = {v: _entries(v) for v in keys["notes"].to_list() if v != NOT_COMPARED} if "notes" in keys.columns else {}
    out: dict[str, str] = {}
    for r in keys.iter_rows(named=True):
        cols = [c for c in keys.columns if c in shown.get(r[KEY], [])]
        bits = [_notes_shown(r[c], entries) if c == "notes" else _shown(c, r[c]) for c in cols]
        bits = [bit for bit in bits if bit]
        out[r[KEY]] = f"{r['_base']} ({', '.join(bits)})" if bits else str(r["_base"])
    return out


def _short(value: str) -> str:
    return value if len(value) <= NAME_CHARS else value[: NAME_CHARS - 1] + "…"


def _shown(column: str, value: str) -> str:
    if column == "_label":
        return value or "no label"
    return f"{column} {_short(value)}" if value else f"{column} not labelled"


def _entries(notes: str) -> set[str]:
    return {e.strip() for e in notes.split(";") if e.strip()}


def _notes_shown(value: str, entries: dict[str, set[str]]) -> str:
    """Notes by what sets them apart: the entries ('a; b') this group has and not every other notes have; '' for
    notes not compared."""
    if value == NOT_COMPARED:
        return ""
    common = set.intersection(*entries.values()) if entries else set()
    own = sorted(entries[value] - common)
    if own:
        return f"notes '{_short('; '.join(own))}'"
    others = sorted(set().union(*entries.values()) - common)
    return f"notes without '{_short('; '.join(others))}'" if value else "notes not labelled"


def with_names(df: pl.DataFrame, base: str, to: str, label: bool = True) -> pl.DataFrame:
    """``with_key`` and the group's name (``names``) in column ``to``."""
    keyed = with_key(df)
    if keyed.is_empty():
        return keyed.with_columns(pl.lit(None, pl.String).alias(to))
    named = names(keyed, base, label)
    return keyed.with_columns(pl.col(KEY).replace_strict(named, return_dtype=pl.String).alias(to))


def sentence(df: pl.DataFrame) -> str:
    """How the repeats of ``df``'s runs were grouped, with the manifest columns given and the runs without a
    label (``labelled`` False, or no label)."""
    cols = given(df)
    notes = pl.col("notes").fill_null("") if "notes" in df.columns else pl.lit("")
    lab = df.select(notes.str.contains(LAB_OUTCOMES).any()).item()
    runs_marked = df.select(marked(df) & (notes != "")).to_series().any()
    if runs_marked:  # the label says they are repeats: free-text notes do not part them
        aside = "; not the notes of a label with 'run N' marks, which says its runs are repeats"
    else:
        aside = "; the lab's notes on one run alone, its sanity flags and dropped logs, aside" if lab else ""
    agree = (
        f"and the same value in every other column the manifest gives here ({', '.join(cols)}{aside})"
        if cols
        else "(the manifest gives no other column here)"
    )
    head = f"Repeats are runs of one workload with one label once a 'run N' mark is taken out {agree}"
    if "labelled" in df.columns:  # 05's runs: ``label`` already holds the file's name where there was none
        no_label = df.filter(~pl.col("labelled"))
    else:
        no_label = df.filter(pl.col("label").is_null()) if "label" in df.columns else df
    run = [c for c in ("file_id", "doc_index") if c in no_label.columns]
    files = no_label.select(run).n_unique() if no_label.height and run else no_label.height
    if not files:
        return head + "."
    headed = section_names(no_label) if {"path", "section"} <= set(no_label.columns) else {}
    sections = (
        f", nor are runs under different Markdown headings of one write-up ({len(headed)} file(s), "
        f"{sum(len(v) for v in headed.values())} sections: a write-up's sections may be different machines; runs "
        "under one heading are repeats)"
        if headed
        else ""
    )
    return (
        f"{head}; {files} run(s) have no label and are named by their file (as much of its path as tells it from the "
        f"others): runs appended to one file are repeats, files of one name in different folders are not{sections}. "
        "Labels in the manifest would make the grouping certain."
    )
