"""Notebook 02's sentences, written only from ``recordsize.RecordsizeNumbers``."""

from __future__ import annotations

import polars as pl

from ..units import KiB, MiB
from . import prose, stats
from .dedup_numbers import named
from .recordsize_compare import Pair, TunedComparison
from .recordsize_numbers import RecordsizeFrames, RecordsizeNumbers
from .result import Finding, cite, lines_of


def write(res, n: RecordsizeNumbers, frames: RecordsizeFrames, sel) -> None:
    a, m, rs = n.default_amp, n.model, n.default_recordsize
    res.findings.append(
        f"Model: an uncached 4 KiB read from a {rs // KiB} KiB record reads the whole record "
        f"({a['read_amp']:.0f}x); I/O of a record or more moves what it asks for. For writes, "
        f"{a['write_amp']:.0f}x is the worst case: partial writes to one record within a transaction "
        "group are merged in memory before the record is written once."
    )
    model = (
        f"Model ({m.source}): a 1 MiB block on a {m.width}-wide RAIDz{m.parity} at ashift {m.ashift} takes "
        f"{m.one['data_sectors']} data + {m.one['parity_sectors']} parity + {m.one['pad_sectors']} pad sectors "
        f"({m.one['efficiency']:.1%} efficient), {m.one['max_data_bytes_per_disk'] // KiB} KiB on the busiest disk."
    )
    if m.zdb_note:
        model += f" The selection's {m.zdb_note}: the model uses the parameters instead."
    res.findings.append(Finding(model, [cite("zdb -C", m.zdb_lines)]) if m.zdb_lines else model)
    _pools(res, n, sel)
    _histograms(res, n, sel)
    _tuned(res, n, sel)
    res.headline.update(
        {
            f"model: read amplification 4 KiB at {rs // KiB} KiB records": f"{a['read_amp']:.0f}x",
            f"model: 1 MiB block per disk ({m.width}-wide RAIDz{m.parity})": (
                f"{m.one['max_data_bytes_per_disk'] // KiB} KiB"
            ),
        }
    )
    for r in n.stated.iter_rows(named=True):
        model = (
            f"; model {r['theory']:.3f} ({r['theory_basis']}): measured {r['vs_theory_pct']:+.1f} %"
            if r["theory"] is not None
            else f" ({r['theory_basis']})"
        )
        num, den = n.stated_lines.get(r["numerator"], ()), n.stated_lines.get(r["denominator"], ())
        res.findings.append(
            Finding(
                f"Stated by the study (no raw data), {r['claim']}: {r['numerator_mib_s']:.0f} / "
                f"{r['denominator_mib_s']:.0f} MiB/s = {r['ratio']:.3f}{model}.",
                [
                    cite(f"{r['numerator_mib_s']:.0f}", num),
                    cite(f"{r['denominator_mib_s']:.0f} MiB/s", den),
                    cite(f"{r['ratio']:.3f}", num + den, "the two stated figures' ratio"),
                ],
            )
        )
    res.verdict = _verdict(n)


def _measured(pool: str, what: str) -> str:
    """'Measured (stripe2, zdb -b)'; a pool neither the output nor the manifest names: 'Measured (zdb -b; pool name
    not in the output; label zdb -b stripe2)'."""
    return f"Measured ({pool}, {what})" if named(pool) else f"Measured ({what}; {pool.strip('()')})"


def _ashift_words(p) -> str:
    exp = ", ".join(f"{v:.3f} at ashift {a}" for a, v in p.expected.items())
    if p.nearest is None:
        return f"{exp}: the expectations tie, so the measured {p.measured:.3f} cannot tell the ashift"
    return f"{exp}; the measured {p.measured:.3f} is closest to ashift {p.nearest}"


def _pools(res, n: RecordsizeNumbers, sel) -> None:
    for p in n.pools:
        ratio = cite(f"{p.measured:.3f}", p.lines, "zdb -b bp allocated / bp physical")
        res.findings.append(
            Finding(
                f"{_measured(p.pool, 'zdb -b')}: {p.avg_logical_bytes / KiB:.1f} KiB logical per block pointer on "
                f"average; allocated / physical = {p.measured:.3f} (what allocation adds: parity, padding to whole sectors, "
                "extra copies; this figure alone does not say which).",
                [cite(f"{p.avg_logical_bytes / KiB:.1f} KiB", p.lines, "zdb -b bp logical / bp count"), ratio],
            )
        )
        if p.expected:  # the expectations are arithmetic on the layout labels: only the measured figure links
            res.findings.append(
                Finding(
                    f"  Expected for full {p.recordsize_bytes // KiB} KiB records on this {p.layout}: "
                    f"{_ashift_words(p)}.",
                    [ratio],
                )
            )
    if not n.pools:
        res.missing.append(
            f"no `zdb -b` output for {sel.describe()}: its average block sizes show what recordsize the "
            "data really has (`zdb -b POOL > zdb-b-POOL.txt`, labelled with pool and recordsize_bytes)"
        )


def _bucket(n: int) -> str:
    def one(v: int) -> str:
        return f"{v // MiB} MiB" if v >= MiB else f"{v // KiB} KiB" if v >= KiB else f"{v} B"

    return f"{one(n)} to {one(2 * n)}"


def _histogram_cites(n: RecordsizeNumbers, record: int, b: dict) -> list:
    """A histogram sentence's numbers: sums over its rows (zdb -bb's lines, as one range per file), the top bucket's
    share its row and the whole."""
    rows = n.hist.filter(pl.col("path") == b.get("path")) if n.hist.height and "path" in n.hist.columns else n.hist
    if rows.is_empty() or "line_start" not in rows.columns:
        return []
    span = rows.select(
        "path", "sha256", pl.col("line_start").min(), pl.col("line_end").max()
    ).head(1)  # fmt: skip
    top = rows.filter(pl.col("block_size_bytes") == b["top_bucket_bytes"])
    every = lines_of(span)
    return [
        cite(f"{b['blocks']:,}", every, "the histogram's block counts summed"),
        cite(prose.size(b["logical_bytes"]), every, "the histogram's logical sizes summed"),
        cite(f"{b['full_record_share']:.0%}", every, f"logical bytes in buckets of {record // KiB} KiB and up / all"),
        cite(f"{b['top_bucket_share']:.0%}", lines_of(top) + every, "the top bucket's logical bytes / all"),
    ]


def _histograms(res, n: RecordsizeNumbers, sel) -> None:
    for pool, record, b in n.histograms:
        res.findings.append(
            Finding(
                f"{_measured(pool, 'zdb -bb block size histogram')}: {b['blocks']:,} blocks, "
                f"{prose.size(b['logical_bytes'])} logical; {b['full_record_share']:.0%} of the logical bytes are "
                f"in blocks of at least the {record // KiB} KiB recordsize; the most bytes "
                f"({b['top_bucket_share']:.0%}) sit in blocks of {_bucket(b['top_bucket_bytes'])}"
                + (
                    " (zdb printed K/M suffixes: counts and sizes to 3 significant digits)."
                    if b["approximate"]
                    else "."
                ),
                _histogram_cites(n, record, b),
            )
        )
        res.headline[f"{pool}: logical bytes in full records"] = f"{b['full_record_share']:.0%}"
    if not n.histograms:
        res.missing.append(
            f"no `zdb -bb` block size histogram for {sel.describe()}: it shows how the data's block sizes spread "
            "against the recordsize (`zdb -bb POOL > zdb-bb-POOL.txt`, OpenZFS 2.0+)"
        )


def _runs(labels: tuple[str, ...], bw: float) -> str:
    who = labels[0] if len(labels) == 1 else f"the mean of {len(labels)} runs ({', '.join(labels)})"
    return f"{who} {prose.rate(bw)}"


def _pair_words(p: Pair) -> str:
    size = f"{prose.size(p.working_set_bytes)}: " if p.working_set_bytes is not None else f"{p.workload}: "
    return f"{size}{_runs(p.tuned_labels, p.tuned_bw)} / {_runs(p.default_labels, p.default_bw)} = {p.ratio:.2f}x"


def _noise(c: TunedComparison) -> str:
    if c.untested:
        return (
            "Each side ran once: the run-to-run noise is unknown, so no ratio here can be told from noise (repeat "
            "each run 3 times or more)."
        )
    parts = []
    for p in c.pairs:
        size = prose.size(p.working_set_bytes) if p.working_set_bytes is not None else p.workload
        if p.test.test == stats.NONE:
            parts.append(f"{size}: no repeats on either side, noise unknown")
        else:
            where = "outside" if p.test.differs else "within"
            parts.append(f"{size}: {where} the run-to-run noise ({p.test.test_name}, {p.test.level:.0%})")
    return "Noise: " + "; ".join(parts) + "."


def _size_of(p: Pair) -> str:
    return prose.size(p.working_set_bytes) if p.working_set_bytes is not None else p.workload


def _verdict_words(c: TunedComparison) -> str:
    """The faster/slower verdict by the one rule of 05, 08 and 10 (``Pair.verdict``), or why there is none."""
    left = [f"{label} ({why})" for p in c.pairs for label, why in p.left_out]
    out = f"left out of the means: {prose.listing(left)}. " if left else ""
    rs, default = f"{c.recordsize_bytes // KiB} KiB", f"{c.default_recordsize // KiB} KiB"
    if c.verdict is not None and not c.disagree:
        return out + f"Verdict (the rule of 05, 08 and 10): {rs} records are {c.verdict} than {default} here."
    parts = [f"{_size_of(p)}: {p.verdict or 'none'}" + (f", {p.withheld}" if p.withheld else "") for p in c.pairs]
    return out + "No faster/slower verdict (the rule of 05, 08 and 10): " + "; ".join(parts) + "."


def _comparison(res, c: TunedComparison) -> None:
    head = (
        f"fio, recordsize {c.recordsize_bytes // KiB} KiB against {c.default_recordsize // KiB} KiB records on "
        f"{c.pool or 'the unnamed pool'} ({c.workload}, {c.direction}): "
    )
    if len(c.pairs) == 1:
        p = c.pairs[0]
        head += f"{_pair_words(p)} ({prose.change(p.tuned_bw, p.default_bw)})."
    else:
        head += (
            f"one comparison at {len(c.pairs)} file sizes; its number, the geometric mean of their ratios: "
            f"{c.ratio:.2f}x ({c.low:.2f}x to {c.high:.2f}x). " + "; ".join(_pair_words(p) for p in c.pairs) + "."
        )
    cites = [cite(f"{p.ratio:.2f}x", p.lines, "tuned mean bandwidth / default mean bandwidth") for p in c.pairs]
    res.findings.append(Finding(head, cites))
    if c.disagree:
        res.findings.append(
            f"  The file sizes disagree in direction ({c.low:.2f}x and {c.high:.2f}x): this data does not say "
            f"whether {c.recordsize_bytes // KiB} KiB records are faster or slower than "
            f"{c.default_recordsize // KiB} KiB for this workload."
        )
    res.findings.append("  " + _noise(c))
    res.findings.append("  " + _verdict_words(c)[0].upper() + _verdict_words(c)[1:])
    res.findings += list(c.design_notes)


def _headline(c: TunedComparison) -> tuple[str, str]:
    key = f"recordsize {c.recordsize_bytes // KiB} KiB vs {c.default_recordsize // KiB} KiB ({c.pool}, {c.direction})"
    value = f"{c.ratio:.2f}x"
    if len(c.pairs) > 1:
        value += (
            f" ({c.low:.2f}x to {c.high:.2f}x over {len(c.pairs)} file sizes{', disagreeing' if c.disagree else ''})"
        )
    if c.untested:
        value += ", single runs: noise unknown"
    flagged = {label for p in c.pairs for label, _ in (*p.flagged, *p.left_out)}
    if flagged:
        value += f", {len(flagged)} run(s) flagged"
    value += f", {c.verdict}" if c.verdict is not None and not c.disagree else ", no verdict"
    return key, value


def _tuned(res, n: RecordsizeNumbers, sel) -> None:
    rs = n.default_recordsize
    for c in n.comparisons:
        _comparison(res, c)
        key, value = _headline(c)
        res.headline[key] = value
    if not n.comparisons:
        stacks = f"labelled stack(s) {', '.join(n.other_stacks)}, not ZFS" if n.other_stacks else ""
        if n.unlabelled_runs:
            also = f"; the others are on {stacks}" if stacks else ""
            why = f" ({n.unlabelled_runs} fio run(s) carry no recordsize label{also})"
            advice = ": label each ZFS run's recordsize_bytes in the manifest"
        else:
            why = f" (its fio runs are on {stacks})" if stacks else ""
            advice = ": recordsize is a property of ZFS datasets" if stacks else ""
        res.missing.append(
            f"no fio runs of one workload at two recordsizes, one of them the default {rs // KiB} KiB, for "
            f"{sel.describe()}{why}{advice}"
        )


def _verdict(n: RecordsizeNumbers) -> str:
    if n.comparisons:
        return (
            "Measured (fio, tuned against default recordsize): "
            + "; ".join(f"{k}: {v}" for k, v in map(_headline, n.comparisons))
            + "."
        )
    if n.pools:
        parts = []
        for p in n.pools:
            s = f"{p.pool} holds {p.avg_logical_bytes / KiB:.1f} KiB per block pointer"
            if p.expected and p.nearest is not None:
                s += (
                    f", allocated / physical {p.measured:.3f} against {p.expected[p.nearest]:.3f} expected for full "
                    f"records at ashift {p.nearest}"
                )
            elif p.expected:
                s += f", allocated / physical {p.measured:.3f} (the ashift expectations tie)"
            parts.append(s)
        return "Measured (zdb): " + "; ".join(parts) + "."
    if n.stated.height:
        w = n.stated.row(0, named=True)
        return (
            f"Stated by the study, not measured here: {w['claim']} {w['ratio']:.3f}x, of which the models explain "
            f"{w['theory']:.3f}x; the remaining {w['unexplained']:.2f}x is not explained by them."
        )
    return ""
