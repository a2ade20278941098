"""Where an mbuffer transfer was limited, from its buffer fill over the whole run (notebook 06; pure compute).

mbuffer's status lines (``in @ ..., out @ ..., ... total, buffer P% full``) report each interval. A buffer that
stays full says the consumer after mbuffer could not take the data as fast as it came; one that stays empty says
the producer before it could not deliver. Two parts of every transfer say neither: the start (the first status
line: the buffer fills, the rates include the start-up) and the end (the last line with input, during which the
input ended, and every line after it: ``in @ 0.0``, the buffer draining into the consumer). A transfer's last
status line is always one of those, so the verdict is taken over the steady lines between them only.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

FULL_PCT = 90.0  # a status line at or above this fill: the buffer was full
EMPTY_PCT = 10.0  # at or below: the buffer was empty
SHARE = 0.8  # a verdict needs this share of the steady lines full (or empty)
MIN_STEADY = 2  # and at least this many steady lines


@dataclass(frozen=True)
class Fill:
    """One transfer's status lines, in the order printed (1-based numbers)."""

    n_lines: int
    start: int  # the start line (always 1)
    end_first: int  # the first line of the end: the last line with input (1 when no line had input)
    n_steady: int  # lines start+1 .. end_first-1
    n_full: int  # steady lines >= FULL_PCT
    n_empty: int  # steady lines <= EMPTY_PCT
    min_pct: float | None  # fill over the steady lines
    max_pct: float | None
    limit: str  # "consumer", "producer", "neither" or "" (too few steady lines)

    @property
    def steady(self) -> tuple[int, int]:
        return (self.start + 1, self.end_first - 1)


def judge(fills: list[float], in_rates: list[float | None]) -> Fill:
    """The verdict for one transfer from its status lines' fill (percent) and input rate (bytes/s, None for ???)."""
    n = len(fills)
    with_input = [i for i, r in enumerate(in_rates, 1) if r]
    end_first = with_input[-1] if with_input else 1
    steady = fills[1 : max(end_first - 1, 1)]
    full = sum(p >= FULL_PCT for p in steady)
    empty = sum(p <= EMPTY_PCT for p in steady)
    limit = ""
    if len(steady) >= MIN_STEADY:
        limit = "consumer" if full >= SHARE * len(steady) else "producer" if empty >= SHARE * len(steady) else "neither"
    return Fill(
        n_lines=n,
        start=1,
        end_first=end_first,
        n_steady=len(steady),
        n_full=full,
        n_empty=empty,
        min_pct=min(steady) if steady else None,
        max_pct=max(steady) if steady else None,
        limit=limit,
    )


def per_transfer(status: pl.DataFrame) -> pl.DataFrame:
    """One row per file of ``status`` (every status line of each file, with ``seq``): the ``Fill`` fields, plus
    ``steady_first``/``steady_last`` (status line numbers) and the file's label and id."""
    rows = []
    for (file_id,), g in status.sort("file_id", "seq").group_by("file_id", maintain_order=True):
        f = judge(g["buffer_fill_pct"].to_list(), g["in_rate_bytes_per_s"].to_list())
        first, last = f.steady
        rows.append(
            {
                "file_id": file_id,
                "label": g["label"][0],
                **{k: getattr(f, k) for k in Fill.__dataclass_fields__},
                "steady_first": first,
                "steady_last": last,
            }
        )
    schema = {"file_id": pl.Int64, "label": pl.Utf8, "min_pct": pl.Float64, "max_pct": pl.Float64}
    return pl.DataFrame(rows, schema_overrides=schema, infer_schema_length=None) if rows else pl.DataFrame()
