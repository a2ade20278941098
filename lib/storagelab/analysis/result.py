"""What an analysis hands its notebook: frames, sentences computed from them, what is missing, and the
named values its claims are checked against. A notebook shows these; it computes nothing itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from .selection import Selection

# the long form of ``measures.per_file``: one named value per raw file
MEASURE_SCHEMA = {
    "target": pl.String,
    "metric": pl.String,
    "value": pl.Float64,
    "file_id": pl.Int64,
    # the raw lines the value was read from (files.path and its lines), where the producer knows them
    "path": pl.String,
    "line_start": pl.Int64,
    "line_end": pl.Int64,
    "sha256": pl.String,  # the file's as stored: an excerpt of it rewritten since is refused
}


@dataclass(frozen=True)
class Cite:
    """A number a finding states (``text``, as the sentence writes it; empty: the sentence as a whole) and the raw
    lines it came from (``inputs``: each {path, line_start, line_end}, sha256 where known) with, for a number
    computed from several inputs, its arithmetic in words (``derivation``)."""

    text: str
    inputs: tuple[dict, ...]
    derivation: str | None = None


class Finding(str):
    """A finding's sentence (Markdown, readable as it is) that carries the raw lines of the numbers it states
    (``cites``): present.findings turns them into links to the excerpt pages beside a report. The sentence holds
    no link itself: any str operation on it gives back the plain sentence."""

    cites: tuple[Cite, ...]

    def __new__(cls, text: str, cites: Iterable[Cite] = ()):
        out = super().__new__(cls, text)
        out.cites = tuple(c for c in cites if c.inputs)
        return out


def lines_of(rows) -> tuple[dict, ...]:
    """The raw lines of ``rows`` (dicts, or one dict, or a polars frame) as cite inputs: each row's path,
    line_start, line_end (sha256 where it has one), or the rows of its ``sources`` list; rows without a path or a
    line_start are left out, a row seen twice is named once."""
    if isinstance(rows, pl.DataFrame):
        rows = rows.to_dicts()
    elif isinstance(rows, dict):
        rows = [rows]
    out: list[dict] = []
    for r in rows or ():
        if not isinstance(r, dict):
            continue
        if r.get("sources"):
            out += [s for s in lines_of(list(r["sources"])) if s not in out]
            continue
        if r.get("path") is None or r.get("line_start") is None:
            continue
        s = {"path": str(r["path"]), "line_start": int(r["line_start"])}
        s["line_end"] = int(r["line_end"]) if r.get("line_end") is not None else s["line_start"]
        if r.get("sha256"):
            s["sha256"] = r["sha256"]
        if s not in out:
            out.append(s)
    return tuple(out)


def cite(text: str, rows, derivation: str | None = None) -> Cite:
    """The number ``text`` of a sentence, drawn from ``rows`` (see lines_of)."""
    return Cite(text, lines_of(rows), derivation)


@dataclass
class Result:
    selection: Selection
    frames: dict[str, pl.DataFrame] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)  # Markdown sentences computed from the data
    missing: list[str] = field(default_factory=list)  # what the selection lacks, and which log would answer it
    headline: dict[str, str] = field(default_factory=dict)
    verdict: str = ""
    caveats: list[str] = field(default_factory=list)  # short badges for the index: what limits the verdict
    measures: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=MEASURE_SCHEMA))
    reasons: dict[str, str] = field(default_factory=dict)  # metric -> why it cannot be computed
    file_ids: list[int] = field(default_factory=list)
    numbers: Any = None  # the analysis's typed result (a dataclass of named numbers), when it has one

    @classmethod
    def start(cls, con, sel: Selection, measures: pl.DataFrame) -> Result:
        """An analysis's Result, which first says so when no stored file has the selection's labels."""
        res = cls(sel, measures=measures)
        for note in (sel.unmatched(con), sel.copies_left_out(con)):
            if note:
                res.missing.append(note)
        return res

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.frames[name]

    def has(self, name: str) -> bool:
        return name in self.frames and self.frames[name].height > 0

    def markdown(self, link: Callable[[str], str] | None = None, text: Callable[[str], str] = str) -> str:
        """The findings and the missing data as one Markdown block (what the notebook displays). ``text`` is applied
        to every sentence (present.escape_html); ``link`` (a finding -> its Markdown with links to its raw lines),
        given, to each finding instead."""
        parts = [f"* {link(s) if link else text(s)}" for s in self.findings]
        parts += [f"* **Missing:** {text(m)}" for m in self.missing]
        return "\n".join(parts) if parts else f"* Nothing to report for {text(self.selection.describe())}."
