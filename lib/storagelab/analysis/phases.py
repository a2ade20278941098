"""Runs the manifest's ``phase`` labels pair as before/after a change (notebooks 05 and 08; 03 pairs bonnie++ runs
its own way): what their setup labels say differs, and which runs are before and which after.

Runs of two phases are never repeats of one configuration (``repeat_groups`` keys on the phase) and never two
stacks set side by side: the phase labels say they are one setup measured before and after a change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

PHASES = ("before", "after")
# the manifest labels that describe a run's setup: what two runs set side by side are compared by
SETUP_LABELS = (
    "host", "os", "stack", "pool", "vdev_type", "vdev_count", "vdev_width", "devices", "cache_devices",
    "log_devices", "ram_bytes", "recordsize_bytes", "ashift", "zfs_version", "zfs_sync", "zfs_logbias",
)  # fmt: skip


def grouped(by: Sequence[str], runs) -> list[str]:
    """``by`` and the ``phase`` column where ``runs`` (a frame) has one: runs of two phases are never one group."""
    return [*by, "phase"] if "phase" in runs.columns and "phase" not in by else list(by)


def setup_of(row: Mapping) -> dict[str, str]:
    """A run's ``SETUP_LABELS`` that its row gives, as text."""
    return {c: str(row[c]) for c in SETUP_LABELS if row.get(c) is not None}


def paired(phases: Sequence[str | None]) -> bool:
    """Whether runs with these phase labels hold both a before and an after run."""
    return all(p in phases for p in PHASES)


def differences(setups: Sequence[Mapping[str, str]]) -> str:
    """What the runs' setup labels (``setup_of``) say differs between them, and what they share (host, stack)."""
    differ = [c for c in SETUP_LABELS if len({s.get(c) for s in setups}) > 1]
    first = setups[0] if setups else {}
    shared = [f"{c} {first[c]}" for c in ("host", "stack") if c not in differ and first.get(c)]
    if differ:
        return f"their labels differ in {', '.join(differ)}" + (f" (the same {' and '.join(shared)})" if shared else "")
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
