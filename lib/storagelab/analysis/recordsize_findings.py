"""Notebook 02's sentences, written only from ``recordsize.RecordsizeNumbers``."""

from __future__ import annotations

import polars as pl

from ..units import KiB, MiB
from . import prose
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
    res.findings.append(
        f"Model ({m.source}): a 1 MiB block on a {m.width}-wide RAIDz{m.parity} at ashift {m.ashift} takes "
        f"{m.one['data_sectors']} data + {m.one['parity_sectors']} parity + {m.one['pad_sectors']} pad sectors "
        f"({m.one['efficiency']:.1%} efficient), {m.one['max_data_bytes_per_disk'] // KiB} KiB on the busiest disk."
    )
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
                f"Measured ({p.pool}, zdb -b): {p.avg_logical_bytes / KiB:.1f} KiB logical per block pointer on "
                f"average; allocated / physical = {p.measured:.3f} (parity, padding and copies).",
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
                f"Measured ({pool}, zdb -bb block size histogram): {b['blocks']:,} blocks, "
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


def _tuned(res, n: RecordsizeNumbers, sel) -> None:
    rs = n.default_recordsize
    for r in n.compared.iter_rows(named=True):
        res.findings.append(
            f"fio {r['label']}: recordsize {r['recordsize_bytes'] // KiB} KiB, "
            f"{prose.rate(r['bw_bytes_per_s'])} = {prose.change(r['bw_bytes_per_s'], r['default_bw_bytes_per_s'])} "
            f"against {rs // KiB} KiB records in the same workload."
        )
    if n.compared.is_empty():
        res.missing.append(
            f"no fio runs of one workload at two recordsizes, one of them the default {rs // KiB} KiB, for "
            f"{sel.describe()}"
            + (f" ({n.unlabelled_runs} fio run(s) carry no recordsize label)" if n.unlabelled_runs else "")
            + ": label each run's recordsize_bytes in the manifest"
        )
    else:
        best = n.compared.sort("ratio", descending=True).row(0, named=True)
        res.headline["best tuned recordsize vs default"] = f"{best['label']}: {best['ratio']:.2f}x"


def _verdict(n: RecordsizeNumbers) -> str:
    if n.compared.height:
        best = n.compared.sort("ratio", descending=True).row(0, named=True)
        return f"Measured: {best['label']} at {best['ratio']:.2f}x the default-recordsize run of the same workload."
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
