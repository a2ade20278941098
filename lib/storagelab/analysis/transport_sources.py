"""Which stream each mbuffer run moved, and the baseline its transports are measured against (notebook 06; pure).

A share of a baseline says what a transport costs only when both moved the same source: a copy of /dev/zero
(memory) says nothing about what ssh costs a ``zfs send`` (the h6 trial: /dev/zero at 1293 MiB/s as 100 % of
zfs send transports). The source is read from the run's ``command`` label, the first stage of its pipeline:

* ``/dev/zero`` (or ``/dev/urandom``) for a stage that reads it (``cat /dev/zero``, ``dd if=/dev/zero ...``,
  ``... < /dev/zero``), whatever the amount;
* ``zfs send ARGS`` for a zfs send;
* ``file NAME`` for ``cat NAME``, ``dd if=NAME``, ``pv ... NAME`` or ``... < NAME``;
* unknown (None) otherwise: no command, a receiver listening on the network (its stream is its sender's: a
  '<name> (receiver)' run takes the source of '<name> (sender)'), free text.

A run whose source is not known is compared with the baseline, and its sentence says so and whether it moved the
baseline's amount (within 1 %, ``SAME_AMOUNT``).

A run with *no transport* is a two-stage pipeline, the source into mbuffer writing to /dev/null (``-o /dev/null``
or ``> /dev/null``): the natural baseline of its source.
"""

from __future__ import annotations

import re

import polars as pl

SAME_AMOUNT = 0.01  # two amounts within 1 % of each other: the same stream, as receiver_waits pairs them
_DEV = re.compile(r"(?:^|[\s<=])(/dev/(?:zero|urandom|random))\b")
_ZFS_SEND = re.compile(r"^\s*(?:sudo\s+)?zfs\s+send\s+(.+?)\s*$")
_FILE = re.compile(
    r"^\s*(?:cat\s+(\S+)|dd\s+.*\bif=(\S+).*|pv\b(?:\s+-\S+(?:\s+\d+\S*)?)*\s+([^\s<-]\S*)\s*|.*<\s*(\S+))\s*$"
)
_TO_NULL = re.compile(r"(?:-o\s*/dev/null|>\s*/dev/null)\s*$")


def stages(command: str | None) -> list[str]:
    """The stages of a shell pipeline (split on ``|``, not ``||``), stripped; [] for no command."""
    if not command or not command.strip():
        return []
    return [s.strip() for s in re.split(r"(?<!\|)\|(?!\|)", command)]


def source_of(command: str | None) -> str | None:
    """The stream a run's pipeline starts from (module doc), or None when the command does not say."""
    parts = stages(command)
    if not parts:
        return None
    first = parts[0]
    dev = _DEV.search(first)
    if dev:
        return dev.group(1)
    send = _ZFS_SEND.match(first)
    if send:
        return "zfs send " + " ".join(send.group(1).split())
    f = _FILE.match(first)
    if f:
        name = next(g for g in f.groups() if g)
        return None if name.startswith("/dev/") else f"file {name}"
    return None


def no_transport(command: str | None) -> bool:
    """A source (``source_of`` knows it: not a receiver listening on the network) piped into mbuffer that writes to
    /dev/null, and nothing else."""
    parts = stages(command)
    return (
        len(parts) == 2
        and source_of(command) is not None
        and parts[1].startswith("mbuffer")
        and bool(_TO_NULL.search(parts[1]))
    )


def with_sources(rates: pl.DataFrame, pair_of: dict[str, str]) -> pl.DataFrame:
    """``rates`` with ``source`` (source_of its command; a paired receiver takes its sender's, ``pair_of``: receiver
    label -> sender label) and ``no_transport``."""
    commands = rates["command"].to_list() if "command" in rates.columns else [None] * rates.height
    own = dict(zip(rates["label"].to_list(), (source_of(c) for c in commands), strict=True))
    src = [own[x] if own[x] is not None else own.get(pair_of.get(x, ""), None) for x in rates["label"]]
    return rates.with_columns(
        source=pl.Series(src, dtype=pl.String),
        no_transport=pl.Series([no_transport(c) for c in commands], dtype=pl.Boolean),
    )


def choose_baseline(r: pl.DataFrame, asked: str) -> tuple[str, str]:
    """(label, why) of the baseline: the run labelled ``asked`` when there is exactly one; else, in the source with
    the most runs, its run with no transport (the fastest of them), or its fastest run; else (no source known) the
    fastest run. ``r``: ``with_sources`` rows."""
    if asked and r.filter(pl.col("label") == asked).height == 1:
        return asked, "asked for"
    known = r.filter(pl.col("source").is_not_null())
    if known.is_empty():
        fastest = r.sort("rate_bytes_per_s", descending=True)["label"][0]
        return fastest, "the fastest run: no run's source is known (label each run's command)"
    counts = known.group_by("source").agg(pl.len().alias("n"), pl.col("rate_bytes_per_s").max().alias("top"))
    source = counts.sort(["n", "top"], descending=True)["source"][0]
    same = known.filter(pl.col("source") == source).sort("rate_bytes_per_s", descending=True)
    bare = same.filter(pl.col("no_transport"))
    if bare.height:
        return bare["label"][0], f"the run of `{source}` with no transport: mbuffer into /dev/null"
    return same["label"][0], f"the fastest run of `{source}`, which has no run without a transport"


def compared(r: pl.DataFrame, base: dict) -> pl.Expr:
    """Which rows of ``r`` are compared with the baseline row ``base``: every row when the baseline's source is not
    known; else the rows of its source and the rows whose source is not known (their sentence says so, and whether
    they moved the baseline's amount: ``same_amount``)."""
    if base["source"] is None:
        return pl.lit(True)
    return (pl.col("source") == base["source"]).fill_null(True)


def same_amount(a: float | None, b: float | None) -> bool:
    """Two amounts within ``SAME_AMOUNT`` of each other (as receiver_waits pairs a sender and its receiver)."""
    return bool(a and b and abs(a / b - 1) <= SAME_AMOUNT)
