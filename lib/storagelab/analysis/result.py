"""What an analysis hands its notebook: frames, sentences computed from them, what is missing, and the
named values its claims are checked against. A notebook shows these; it computes nothing itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from .selection import Selection

# the long form of ``measures.per_file``: one named value per raw file
MEASURE_SCHEMA = {"target": pl.String, "metric": pl.String, "value": pl.Float64, "file_id": pl.Int64}


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
        note = sel.unmatched(con)
        if note:
            res.missing.append(note)
        return res

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.frames[name]

    def has(self, name: str) -> bool:
        return name in self.frames and self.frames[name].height > 0

    def markdown(self) -> str:
        """The findings and the missing data as one Markdown block (what the notebook displays)."""
        parts = [f"* {s}" for s in self.findings]
        parts += [f"* **Missing:** {m}" for m in self.missing]
        return "\n".join(parts) if parts else f"* Nothing to report for {self.selection.describe()}."
