"""Runs the manifest's ``phase`` labels pair as before/after a change (notebooks 05 and 08; 03 pairs bonnie++ runs
its own way): what their setup labels say differs, and which runs are before and which after.

Runs of two phases are never repeats of one configuration (``repeat_groups`` keys on the phase) and never two
stacks set side by side: the phase labels say they are one setup measured before and after a change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import polars as pl

PHASES = ("before", "after")
# the manifest labels that describe a run's setup: what two runs set side by side are compared by
SETUP_LABELS = (
    "host", "os", "stack", "pool", "vdev_type", "vdev_count", "vdev_width", "devices", "cache_devices",
    "log_devices", "ram_bytes", "recordsize_bytes", "ashift", "zfs_version", "zfs_sync", "zfs_logbias",
)  # fmt: skip
# the user's own words on a run: a pair whose labels or notes differ says what changed in them ('nobarrier')
SAID_LABELS = ("label", "notes")
_PHASE_NAMED = re.compile(r" \((?:before|after)\)$")  # ``named``'s mark, not part of what the user wrote


def named(d: pl.DataFrame) -> pl.DataFrame:
    """Runs of one label in both phases named with their phase ('fsync1 (before)', 'fsync1 (after)'), so that a
    table holding both rows tells them apart."""
    if "phase" not in d.columns or "label" not in d.columns or d.is_empty():
        return d
    clash = pl.col("phase").drop_nulls().n_unique().over("label") > 1
    mark = pl.concat_str(pl.col("label"), pl.lit(" ("), pl.col("phase"), pl.lit(")"))
    return d.with_columns(label=pl.when(clash & pl.col("phase").is_not_null()).then(mark).otherwise(pl.col("label")))


def grouped(by: Sequence[str], runs) -> list[str]:
    """``by`` and the ``phase`` column where ``runs`` (a frame) has one: runs of two phases are never one group."""
    return [*by, "phase"] if "phase" in runs.columns and "phase" not in by else list(by)


def setup_of(row: Mapping) -> dict[str, str]:
    """A run's ``SETUP_LABELS`` and ``SAID_LABELS`` that its row gives, as text: its label only where the row says
    it is the user's (``labelled``; not a file's name standing in for one), without ``named``'s phase mark."""
    out = {c: str(row[c]) for c in (*SETUP_LABELS, *SAID_LABELS) if row.get(c) not in (None, "")}
    if not row.get("labelled"):
        out.pop("label", None)
    if "label" in out:
        out["label"] = _PHASE_NAMED.sub("", out["label"])
    return out


def paired(phases: Sequence[str | None]) -> bool:
    """Whether runs with these phase labels hold both a before and an after run."""
    return all(p in phases for p in PHASES)


def differences(setups: Sequence[Mapping[str, str]]) -> str:
    """What the runs' setup labels, label and notes (``setup_of``) say differs between them, the notes and labels
    quoted in the runs' order ('notes: 'barrier=1 commit=5', 'nobarrier commit=30''), and what they share (host,
    stack)."""
    differ = [c for c in (*SETUP_LABELS, *SAID_LABELS) if len({s.get(c) for s in setups}) > 1]
    first = setups[0] if setups else {}
    shared = [f"{c} {first[c]}" for c in ("host", "stack") if c not in differ and first.get(c)]
    if differ:
        words = [c for c in differ if c not in SAID_LABELS]
        for c in (c for c in SAID_LABELS if c in differ):
            values = list(dict.fromkeys(s.get(c) or "none" for s in setups))
            words.append(f"{c} ({' / '.join(repr(v) if v != 'none' else v for v in values)})")
        return f"their labels differ in {', '.join(words)}" + (f" (the same {' and '.join(shared)})" if shared else "")
    if any(setups):
        return "their labels do not say what differs between them" + (
            f" (the same {' and '.join(shared)})" if shared else ""
        )
    return "no label says their setups (host, stack, devices), so what differs between them is not known"


def pairing(names: Sequence[str], phases: Sequence[str | None]) -> str | None:
    """'the phase labels pair them: before A, after B' for runs of both phases (None otherwise)."""
    if not paired(phases):
        return None
    by = {p: [n for n, q in zip(names, phases, strict=True) if q == p] for p in PHASES}
    return f"the phase labels pair them: before {', '.join(by['before'])}, after {', '.join(by['after'])}"
