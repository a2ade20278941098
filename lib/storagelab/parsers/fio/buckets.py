"""A fio JSON job's latency_ns/us/ms families -> fio_latency_buckets rows, (lo, hi] edges in ns."""

from __future__ import annotations

from collections.abc import Sequence

from ..base import ParseError
from .jsonrows import Out
from .values import check_numbers, object_field

_LAT_FAMILIES = (("latency_ns", 1.0), ("latency_us", 1e3), ("latency_ms", 1e6))


def add_buckets(out: Out, job: dict, job_index: int, lo: int, hi: int) -> None:
    """The job's latency_ns/us/ms families, checked to be maps of numbers, as bucket rows."""
    families = []
    for key, scale in _LAT_FAMILIES:
        family = object_field(job, key, lo)
        if family:
            families.append((list(family), check_numbers(family, lo), scale))
    bucket_rows(out.buckets, families, job_index, lo, hi)


def bucket_rows(
    rows: list, families: Sequence[tuple[Sequence[str], Sequence, float]], job_index: int, lo: int, hi: int
) -> None:
    """(labels, percentages, scale to ns) of latency_ns/us/ms -> bucket rows, (lo, hi] edges in ns. The edges
    depend on the labels only, which every job of a fio version repeats: they are worked out once."""
    key = tuple((tuple(labels), scale) for labels, _, scale in families)
    plan = _BUCKET_PLANS.get(key)
    if plan is None:
        plan = _bucket_plan(families, lo)
        if len(_BUCKET_PLANS) < 1024:
            _BUCKET_PLANS[key] = plan
    order, edges = plan
    pcts = [p for _, values, _ in families for p in values]
    if order is not None:
        pcts = [pcts[i] for i in order]
    rows.extend(
        (job_index, b_lo, b_hi, pct * 1.0, lo, hi) for (b_lo, b_hi), pct in zip(edges, pcts, strict=True) if pct
    )


_BUCKET_PLANS: dict[tuple, tuple] = {}


def _bucket_plan(families: Sequence[tuple[Sequence[str], Sequence, float]], where: int) -> tuple[list | None, list]:
    """(the order of the percentages, None when it is the labels' own; the (lo, hi) edges in ns in that order):
    a bucket starts where the previous one ended."""
    edge, offset = 0.0, 0
    order: list[int] = []
    out: list[tuple[float, float | None]] = []
    for labels, _, scale in families:
        try:  # the usual family: plain edges, in order, then at most one '>=' label last
            tail = labels[-1].startswith(">=")
            edges = list(map(float, labels[:-1] if tail else labels))
            if edges != sorted(edges):
                raise ValueError
            if tail:
                edges.append(float(labels[-1][2:]))
            at_least = [False] * len(edges)
            if tail:
                at_least[-1] = True
            order += range(offset, offset + len(labels))
        except ValueError:  # anything else: by (is '>=', edge), ties in file order
            ordered = sorted((label.startswith(">="), _edge(label, where), i) for i, label in enumerate(labels))
            order += [offset + i for _, _, i in ordered]
            edges = [e for _, e, _ in ordered]
            at_least = [a for a, _, _ in ordered]
        offset += len(labels)
        for is_at_least, label_edge in zip(at_least, edges, strict=True):
            if is_at_least:
                out.append((label_edge * scale, None))
            else:
                out.append((edge, label_edge * scale))
                edge = label_edge * scale
    return (None if order == list(range(offset)) else order), out


def _edge(label: str, where: int) -> float:
    try:
        return float(label.removeprefix(">="))
    except ValueError:
        raise ParseError(
            f"latency bucket {label!r} is not a number",
            line=where,
            kind="invalid",
            expected='a bucket edge like "250" or ">=2000"',
        ) from None
