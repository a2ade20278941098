"""Notebook 04's sentences, written only from ``dedup.DedupNumbers`` (and the frames it was computed from): no
arithmetic here beyond putting the named numbers into words."""

from __future__ import annotations

import polars as pl

from ..units import GiB
from . import prose
from .dedup_numbers import (
    DDT_LEAF_BYTES,
    DEDUP_OFF,
    FLAT_PHYS_BYTES,
    L2ARC_HEADER_BYTES,
    LARGE_RECORDSIZE,
    LEGACY_PHYS_BYTES,
    LIVE_ENTRY_BYTES,
    RAM_LABEL,
    SIMULATED,
    TWICE,
    UNNAMED,
    Budget,
    DedupFrames,
    DedupNumbers,
    Estimate,
    Machine,
    Tracked,
    named,
)
from .result import Finding, cite

ARC_COMMANDS = "`cat /proc/spl/kstat/zfs/arcstats` (Linux), `sysctl kstat.zfs.misc.arcstats` (BSD) or `arc_summary`"


def write(res, n: DedupNumbers, frames: DedupFrames, sel) -> None:
    """Every finding, missing line, headline, caveat and the verdict of notebook 04."""
    _budget(res, n)
    _upper_bounds(res, n, frames, sel)
    _unnamed(res, frames)
    _zdb_tables(res, n, frames, sel)
    for e in n.best:
        _best(res, n, e)
    for t in n.tracked:
        _tracked(res, t)
    _savings(res, n, frames)
    _recordsize(res, n)
    for m in n.machines:
        _machine(res, m, _ladder_rows(n, [(e.pool, e.rung) for e in n.best if e.host == m.host]))
    _l2arc(res, n)
    _fast_dedup(res, n)
    _verdict(res, n)


def _tracked(res, t: Tracked) -> None:
    """`zpool list` and zdb -b of one moment: each number links to its line, a computed one to both with its
    arithmetic."""
    both = t.zpool_lines + t.zdb_lines
    tracked = "zdb -b bp deduped / (zpool list DEDUP - 1)"
    res.findings.append(
        Finding(
            f"Pool {t.pool}: `zpool list` ALLOC {prose.size(t.zpool_alloc)} and zdb's allocation "
            f"{prose.size(t.zdb_alloc)} (bp allocated less deduped) differ by {t.alloc_gap:.1%}, so the two "
            f"outputs fit one moment; by DEDUP {t.dedup_ratio:.2f}x the DDT tracks {prose.size(t.tracked_bytes)} "
            f"({prose.size_decimal(t.tracked_bytes)}), {t.tracked_bytes / t.zdb_alloc:.1%} of the pool's allocation: "
            "the rest was written without dedup and has no entry.",
            [
                cite(prose.size(t.zpool_alloc), t.zpool_lines),
                cite(prose.size(t.zdb_alloc), t.zdb_lines, "zdb -b bp allocated - bp deduped"),
                cite(f"{t.alloc_gap:.1%}", both, "|zpool list ALLOC - zdb's allocation| / zdb's allocation"),
                cite(f"{t.dedup_ratio:.2f}x", t.zpool_lines),
                cite(prose.size(t.tracked_bytes), both, tracked),
                cite(f"{t.tracked_bytes / 1e12:.2f} TB", both, tracked),
                cite(f"{t.tracked_bytes / t.zdb_alloc:.1%}", both, f"({tracked}) / zdb's allocation"),
            ],
        )
    )


def _budget(res, n: DedupNumbers) -> None:
    for host, b in n.budgets.items():
        who = f"host {host}" if host else "the machine (no host label)"
        meta = f" x {b.metadata_fraction:.3g} ({b.rule})" if b.metadata_fraction != 1 else f" ({b.rule})"
        state = (
            f"; the ARC held {prose.size(b.arc_size_bytes)}"
            + (f", {prose.size(b.meta_used_bytes)} of it metadata" if b.meta_used_bytes else "")
            + " when the statistics were taken"
            if b.arc_size_bytes
            else ""
        )
        res.findings.append(
            f"Metadata budget of {who}: ARC maximum (c_max) {prose.size(b.arc_max_bytes)}{meta} = "
            f"{prose.size(b.bytes)} (RAM {prose.size(b.ram_bytes)}, {b.ram_source}; {b.source}){state}."
        )
        _params_replaced(res, n, who, b)
        _ram_label(res, n, who, b)
        _labels_disagree(res, host, who, b)
    hosts = {e.host for e in n.best}
    if set(n.budgets) >= hosts or None in n.budgets:
        return
    b = n.budget
    labelled = b.ram_source == RAM_LABEL
    ram = f"{prose.size(b.ram_bytes)}, the manifest's ram_bytes" if labelled else prose.size(b.ram_bytes)
    res.findings.append(
        f"Metadata budget: {prose.size(b.arc_max_bytes)} ARC max x {b.metadata_fraction:g} = "
        f"{prose.size(b.bytes)} (RAM {ram}; {b.source})."
    )
    if labelled and n.params.ram_gib * GiB != b.ram_bytes:
        res.findings.append(
            f"  RAM: {prose.size(b.ram_bytes)}, the manifest's ram_bytes label of the zdb outputs; the ram_gib "
            f"parameter ({n.params.ram_gib:g} GiB) says otherwise and is not used."
        )
    res.missing.append(
        (
            "the machine's ARC maximum and metadata limit are parameters here (arc_max_gib, metadata_fraction; the RAM "
            "is the manifest's ram_bytes)"
            if labelled
            else "the machine's RAM, ARC maximum and metadata limit are "
            "parameters here (ram_gib, arc_max_gib, metadata_fraction)"
        )
        + f", not read from the machine: {ARC_COMMANDS} on it, saved beside the zdb logs with "
        "the same host label, give them (c_max, arc_meta_limit, physical memory)"
    )


def _params_replaced(res, n: DedupNumbers, who: str, b: Budget) -> None:
    """Which of this run's parameters the machine's own ARC statistics replace for ``who`` (said, not silent)."""
    p = n.params
    unused = [f"arc_max_gib {p.arc_max_gib:g}" + (" (0: RAM less 1 GiB)" if not p.arc_max_gib else "")]
    if b.rule != "metadata_fraction parameter (no arc_meta_limit in the output)":
        unused.append(f"metadata_fraction {p.metadata_fraction:g}")
    if b.ram_source == "memory_all_bytes":
        unused.insert(0, f"ram_gib {p.ram_gib:g}")
    said = unused[0] if len(unused) == 1 else ", ".join(unused[:-1]) + " and " + unused[-1]
    res.findings.append(
        f"  The parameter{'s' if len(unused) > 1 else ''} {said} {'are' if len(unused) > 1 else 'is'} not used for {who}: its ARC statistics "
        f"({b.source.removeprefix('ARC statistics, ')}) measure what they stand for."
    )


def _ram_label(res, n: DedupNumbers, who: str, b: Budget) -> None:
    """The RAM is the manifest's ram_bytes label: say so, and where the ram_gib parameter says otherwise."""
    if b.ram_source != RAM_LABEL:
        return
    param = n.params.ram_gib * GiB
    differs = (
        f"; the ram_gib parameter ({n.params.ram_gib:g} GiB) says otherwise and is not used"
        if param != b.ram_bytes
        else ""
    )
    res.findings.append(
        f"  RAM of {who}: {prose.size(b.ram_bytes)}, the manifest's ram_bytes label of its ARC statistics' file "
        f"(they print no memory_all_bytes){differs}. The budget comes from c_max, not from the RAM."
    )


def _labels_disagree(res, host: str | None, who: str, b: Budget) -> None:
    """The manifest's RAM and ZFS version labels of the statistics' file, where the statistics contradict them."""
    if b.ram_disagrees:
        res.findings.append(
            f"  The manifest labels the RAM of {who} {prose.size(b.ram_label_bytes)} (ram_bytes), its ARC statistics "
            f"show {prose.size(b.ram_bytes)} of memory (memory_all_bytes): the statistics may be of another machine, "
            "or the label is wrong; the budget above uses the statistics."
        )
        res.caveats.append(f"{host or 'the machine'}: RAM label and ARC statistics disagree")
    if b.version_disagrees:
        shown = (
            "an arc_meta_limit (OpenZFS 2.1 and older)"
            if b.rule == "arc_meta_limit"
            else ("no arc_meta_limit and a 'meta' field (OpenZFS 2.2 and newer)")
        )
        res.findings.append(
            f"  The manifest labels {who} ZFS {b.zfs_version_label} (zfs_version), its ARC statistics show {shown}: "
            "the statistics may be of another machine or another ZFS, or the label is wrong."
        )
        res.caveats.append(f"{host or 'the machine'}: ZFS version label and ARC statistics disagree")


def _upper_bounds(res, n: DedupNumbers, frames: DedupFrames, sel) -> None:
    stats = frames.stats
    if stats.is_empty():
        res.missing.append(
            f"no `zdb -b` output for {sel.describe()}: run `zdb -b POOL > zdb-b-POOL.txt`, add it under "
            "data/raw/<study>/ and label it (study, pool, host) in the manifest"
        )
        return
    bpe = n.params.bytes_per_entry
    for r in n.memory.iter_rows(named=True):
        lines = stats.filter(pl.col("file_id") == r["file_id"]) if "file_id" in stats.columns else stats.head(0)
        res.findings.append(
            Finding(
                f"Pool {r['pool']}: {r['bp_count']:,} block pointers x {bpe:g} B = {prose.size(r['ddt_bytes'])} "
                f"({prose.size_decimal(r['ddt_bytes'])}), an upper bound (bp count includes metadata and embedded bps); "
                + ("fits" if r["fits"] else "does not fit")
                + f" the {prose.size(r['metadata_budget_gib'] * GiB)} budget; it would fit at {r['fits_at_most']:,} B per entry "
                "or less.",
                _bound_cites(r, lines.filter(pl.col("pool") == r["pool"]) if lines.height > 1 else lines, bpe),
            )
        )
        res.headline[f"DDT {r['pool']} (bp count x {bpe:g} B)"] = prose.size(r["ddt_bytes"])
    named = stats.filter(stats["pool_from_manifest"])["pool"].to_list()
    if named:
        res.findings.append(
            f"Pool names from the manifest (the zdb output has no prompt line): {prose.listing(named)}."
        )


def _bound_cites(r: dict, lines, bpe: float) -> list:
    """The upper bound's numbers: the bp count (zdb -b's line) and what the parameters make of it, with its
    arithmetic."""
    times = f"bp count x {bpe:g} B"
    return [
        cite(f"{r['bp_count']:,}", lines),
        cite(prose.size(r["ddt_bytes"]), lines, times),
        cite(f"{r['ddt_bytes'] / 1e9:.3g} GB", lines, times),
        cite(f"{r['fits_at_most']:,} B", lines, f"the {prose.size(r['metadata_budget_gib'] * GiB)} budget / bp count"),
    ]


def _unnamed(res, frames: DedupFrames) -> None:
    """The zdb outputs whose pool neither the log (no prompt line) nor the manifest names."""
    unnamed = [
        r["path"]
        for f, col in ((frames.stats, "pool"), (frames.ddt, "pool_name"), (frames.objects, "pool_name"))
        for r in f.iter_rows(named=True)
        if not r[col] or not named(r[col])
    ]
    if unnamed:
        res.missing.append(
            "the pool of " + prose.listing(list(dict.fromkeys(unnamed))) + " is not in the log nor the "
            "manifest: add the pool name (column pool)"
        )


def _zdb_tables(res, n: DedupNumbers, frames: DedupFrames, sel) -> None:
    bpe = n.params.bytes_per_entry
    for r in frames.ddt.iter_rows(named=True):
        kind = "zdb -S (simulated)" if r["source"] == "simulated" else "zdb -D/-DD (existing DDT)"
        res.findings.append(
            Finding(
                f"Pool {r['pool_name']}, {kind}: {r['alloc_blocks']:,} entries -> "
                f"{prose.size(r['alloc_blocks'] * bpe)} at {bpe:g} B/entry.",
                [cite(f"{r['alloc_blocks']:,}", r)],
            )
        )
        res.headline[f"DDT entries {r['pool_name']} ({r['source']})"] = f"{r['alloc_blocks']:,}"
    if frames.ddt.is_empty() and frames.status.is_empty():
        res.missing.append(
            f"no `zdb -S` or `zdb -DD` output for {sel.describe()} in the database: `zdb -S POOL` (before enabling "
            "dedup) counts the entries a DDT would hold; `zdb -DD POOL` or `zpool status -D POOL` (after) the real "
            "ones with their in-core size" + _failed_words(frames)
        )
    for r in frames.objects.iter_rows(named=True):
        if r["entries"] and r["core_bytes"] is not None:
            res.findings.append(
                Finding(
                    f"Pool {r['pool_name']}, DDT objects: {r['entries']:,} entries use {prose.size(r['core_bytes'])} "
                    f"in core = {r['core_bytes'] / r['entries']:.0f} B per entry (measured"
                    + (", from zdb's truncated per-entry figure" if r["derived"] else "")
                    + ").",
                    [cite(f"{r['entries']:,}", r), cite(prose.size(r["core_bytes"]), r)],
                )
            )
    for r in frames.status.iter_rows(named=True):
        res.findings.append(
            Finding(
                f"Pool {r['pool_name']}, `zpool status -D`: {r['entries']:,} DDT entries, {prose.size(r['core_bytes'])} "
                f"in core = {r['core_bytes'] / r['entries']:.0f} B per entry (measured; "
                + ("printed per entry" if r["ddt_sizes"] == "per_entry" else "printed as a total")
                + ").",
                [cite(f"{r['entries']:,}", r), cite(prose.size(r["core_bytes"]), r)],
            )
        )
    if frames.stats.height and frames.ddt.height:
        both = frames.stats.join(frames.ddt.rename({"pool_name": "pool"}), on="pool", how="inner")
        for r in both.iter_rows(named=True):
            res.findings.append(
                f"Pool {r['pool']}: bp count {r['bp_count']:,} is {r['bp_count'] / r['alloc_blocks']:.1f}x "
                f"the {r['alloc_blocks']:,} entries zdb counted ({r['source']})."
            )


def _failed_words(frames: DedupFrames) -> str:
    """Where files failed to parse: how many, those whose error is about a DDT table by file and line, and the
    query that lists them all (as notebook 06 does for mbuffer logs)."""
    count, ddt = frames.failed
    if not count:
        return ""
    on_ddt = [f"{r['path'].split('/')[-1]}:{r['line']} ({r['message']})" for r in ddt.iter_rows(named=True)]
    which = f"; {len(on_ddt)} of them failed on a DDT table: {'; '.join(on_ddt)}" if on_ddt else ""
    return (
        f". {count} file(s) in this database failed to parse{which}; if this study's DDT outputs are among them, "
        '`storagelab sql "SELECT path, line, message FROM ingest_errors"` says why'
    )


def _range(lo: float, mid: float, hi: float) -> str:
    return prose.size(mid) if lo == hi else f"{prose.size(lo)} to {prose.size(hi)}"


def _plural(fits: str) -> str:
    return {"fits": "fit", "does not fit": "do not fit"}.get(fits, fits)


def _total(m: Machine) -> str:
    """A machine's pools together: the sum of their best estimates, with the range their ratios' rounding allows."""
    if m.ddt_low == m.ddt_high:
        return prose.size(m.ddt_bytes)
    return f"{prose.size(m.ddt_bytes)} ({prose.size(m.ddt_low)} to {prose.size(m.ddt_high)})"


def _shared(n: DedupNumbers, e: Estimate) -> Machine | None:
    """The machine whose ARC ``e``'s pool shares with other deduplicating pools (None: it is alone, or unknown)."""
    m = next((m for m in n.machines if m.host == e.host), None)
    return m if m and (len(m.pools) > 1 or m.other_dedup_pools) else None


def _best(res, n: DedupNumbers, e: Estimate) -> None:
    rng = _range(e.ddt_low, e.ddt_bytes, e.ddt_high)
    budget = e.budget_bytes
    alone = " alone" if _shared(n, e) else ""
    rows = _ladder_rows(n, [(e.pool, e.rung)])
    per = f"{e.bytes_per_entry:.0f} B/entry"
    res.findings.append(
        Finding(
            f"Pool {e.pool}, best estimate ({e.estimate}): {e.entries:,.0f} entries, {rng} at {per}: "
            f"{alone.strip() + ' ' if alone else ''}{e.fits} the {prose.size(budget)} budget"
            + (f" (it shares host {e.host}'s ARC: below)." if alone else "."),
            [
                cite(f"{e.entries:,.0f}", rows, e.estimate),
                cite(
                    rng,
                    rows,
                    f"entries x {per}" + (" (the DEDUP ratio's rounding either way)" if " to " in rng else ""),
                ),
            ],
        )
    )
    if e.fits_at_most is not None:  # bytes per entry assumed, not measured: where the verdict flips
        _sensitivity(res, n, e, rows)
    res.headline[f"DDT {e.pool}, best estimate"] = f"{rng} ({e.estimate})"
    if e.rung in (1, 2):
        res.caveats.append(f"{e.pool}: only an upper bound (no zdb -S/-DD, no zpool DEDUP)")


def _ladder_rows(n: DedupNumbers, keys: list[tuple[str, int]]) -> pl.DataFrame:
    """The ladder rows (with the lines of their inputs: ``sources``) of the given (pool, rung)s: what an estimate, or
    a machine's sum of estimates, was computed from."""
    if not n.ladder.height:
        return n.ladder
    wanted = pl.lit(False)
    for pool, rung in keys:
        wanted = wanted | ((pl.col("pool") == pool) & (pl.col("rung") == rung))
    return n.ladder.filter(wanted)


def _sensitivity(res, n: DedupNumbers, e: Estimate, rows) -> None:
    """Where the verdict flips, and the estimate over the in-core sizes seen: each computed from the estimate's
    entries (its inputs' lines) and the bytes per entry, with that arithmetic."""
    assert e.fits_at_most is not None
    flips = f"{e.fits_at_most:,} B" + (
        f" ({e.fits_at_most_low:,}-{e.fits_at_most_high:,} B with the ratio's rounding)"
        if e.fits_at_most_low is not None
        else ""
    )
    sizes = sorted(n.params.per_entry_sizes)
    low, high = prose.size(e.entries * sizes[0]), prose.size(e.entries * sizes[-1])
    res.findings.append(
        Finding(
            f"  Alone it fits while an entry costs at most {flips}; over the in-core sizes seen in zdb -DD "
            f"outputs ({sizes[0]:g}-{sizes[-1]:g} B per entry) it spans {low} "
            f"to {high}: the verdict rests on the bytes per entry, which "
            + (
                f"only `zdb -DD {e.pool}` or `zpool status -D {e.pool}` on the pool itself measure."
                if named(e.pool)
                else "only `zdb -DD POOL` or `zpool status -D POOL` on the pool itself measure (its name is in "
                "neither the log nor the manifest)."
            ),
            [
                cite(
                    f"{e.fits_at_most:,} B",
                    rows,
                    f"the {prose.size(e.budget_bytes)} budget / {e.entries:,.0f} entries",
                ),
                *(
                    [
                        cite(
                            f"{e.fits_at_most_low:,}-{e.fits_at_most_high:,} B",
                            rows,
                            "the same with the DEDUP ratio ± 0.005",
                        )
                    ]
                    if e.fits_at_most_low is not None
                    else []
                ),
                cite(low, rows, f"{e.entries:,.0f} entries x {sizes[0]:g} B"),
                cite(high, rows, f"{e.entries:,.0f} entries x {sizes[-1]:g} B"),
            ],
        )
    )


def _savings(res, n: DedupNumbers, frames: DedupFrames) -> None:
    best = {e.pool: e for e in n.best}
    for s in frames.stats.iter_rows(named=True) if frames.stats.height else []:
        if s["bp_deduped_bytes"] and s["pool"] in best:
            res.findings.append(
                Finding(
                    f"Pool {s['pool']}: dedup saves {prose.size(s['bp_deduped_bytes'])} of disk for about "
                    f"{prose.size(best[s['pool']].ddt_bytes)} of RAM.",
                    [
                        cite(prose.size(s["bp_deduped_bytes"]), s),
                        cite(
                            prose.size(best[s["pool"]].ddt_bytes),
                            _ladder_rows(n, [(s["pool"], best[s["pool"]].rung)]),
                            f"the best estimate's entries x {best[s['pool']].bytes_per_entry:.0f} B",
                        ),
                    ],
                )
            )


def _recordsize(res, n: DedupNumbers) -> None:
    for g in n.recordsize:
        source = {
            "zfs get": "`zfs get recordsize` of its datasets",
            "label": "its recordsize label",
        }.get(
            g.recordsize_source,
            "ZFS's default; no recordsize label nor `zfs get recordsize "
            + (g.pool if named(g.pool) else "POOL")
            + "` output says otherwise",
        )
        cites = [cite(prose.size(g.avg_logical_bytes), g.lines)]
        if g.avg_logical_bytes < g.recordsize_bytes * 0.9:  # the sentence states the naive gain too
            cites.append(cite(f"{g.naive_gain:.0f}x", g.lines, "1 MiB / zdb -b's average logical block"))
        below = (
            f"; its average logical block, {prose.size(g.avg_logical_bytes)}, is below the recordsize, so many of "
            f"its blocks are small files or file tails that keep one entry each: 1 MiB / that average "
            f"({g.naive_gain:.0f}x) is not a gain it can have"
            if g.avg_logical_bytes < g.recordsize_bytes * 0.9
            else f"; its average logical block is {prose.size(g.avg_logical_bytes)}"
        )
        if g.recordsize_bytes >= LARGE_RECORDSIZE:
            res.findings.append(
                f"Pool {g.pool}: its recordsize is already {prose.size(g.recordsize_bytes)} ({source}): a larger "
                "recordsize has nothing to save here."
            )
            continue
        res.findings.append(
            Finding(
                f"Pool {g.pool}: at recordsize={LARGE_RECORDSIZE // 1024 // 1024}M, files of 1 MiB and more would "
                f"need at most {g.max_gain:.0f}x fewer entries (1 MiB / the {prose.size(g.recordsize_bytes)} "
                f"recordsize, {source}){below}. Small files and metadata do not shrink, and only data written after "
                "the change gets the larger records, so the pool as a whole gains less.",
                cites,
            )
        )


def _machine(res, m: Machine, rows) -> None:
    """A host's pools together (``rows``: the ladder rows of their best estimates), and its other deduplicating
    pools (each ratio linked to its `zpool list` line)."""
    others = [f"{p} ({r:.2f}x)" for p, r in m.other_dedup_pools]
    _left_out(res, m)
    if len(m.pools) > 1:
        b = m.budget.bytes
        total = "the sum of its pools' best estimates"
        res.findings.append(
            Finding(
                f"Host {m.host}: its pools {prose.listing(list(m.pools))} share one ARC. Their best estimates "
                f"together: {_total(m)}, {prose.times(m.ddt_bytes / b)} the {prose.size(b)} metadata "
                f"budget: together they {_plural(m.fits)}"
                f" (they would fit at {m.fits_at_most:,} B per entry or less).",
                [
                    cite(_total(m), rows, total),
                    cite(prose.times(m.ddt_bytes / b), rows, f"({total}) / the {prose.size(b)} budget"),
                    cite(f"{m.fits_at_most:,} B", rows, f"the budget / {m.entries:,.0f} entries of its pools"),
                ],
            )
        )
    if others:
        res.findings.append(
            Finding(
                f"Host {m.host}: `zpool list` shows {prose.listing(others)} deduplicating too. Their tables share "
                "the same ARC and have no estimate here (no zdb output of them), so the machine's total above is a "
                "lower bound.",
                [
                    cite(f"{r:.2f}x", lines)
                    for (_, r), lines in zip(m.other_dedup_pools, m.other_dedup_lines, strict=False)
                ],
            )
        )
        res.missing.append(
            f"DDT sizes of host {m.host}'s other deduplicating pools: "
            + ", ".join(f"`zpool status -D {p}`" for p, _ in m.other_dedup_pools)
            + " (or `zdb -DD POOL`) print their entries and in-core size"
        )
        res.caveats.append(f"{m.host}: {len(others)} more deduplicating pool(s) not counted")
    if len(m.pools) > 1:
        res.headline[f"DDT host {m.host} ({' + '.join(m.pools)})"] = (
            f"{_total(m)} vs {prose.size(m.budget.bytes)}: {_plural(m.fits)}"
        )


LEFT_OUT_WORDS = {
    SIMULATED: "`zdb -S` simulates the table dedup would build; nothing in the selection shows dedup on for it",
    DEDUP_OFF: "`zfs get dedup` says off on every dataset of it",
    UNNAMED: "its pool is not named, so it may be one of the pools counted",
}


def _left_out(res, m: Machine) -> None:
    """The host's estimated pools not summed into its tables, each with why (each reason linked to its lines)."""
    if not m.left_out:
        return
    parts = [
        f"{o.pool} ({f'a second summary of {o.other}' if o.why == TWICE else LEFT_OUT_WORDS[o.why]})"
        for o in m.left_out
    ]
    kept = (
        f"its one dedup table is {m.pools[0]}'s"
        if len(m.pools) == 1
        else f"its dedup tables are those of {prose.listing(list(m.pools))}"
        if m.pools
        else "none of its estimated pools is shown holding a dedup table"
    )
    res.findings.append(
        Finding(
            f"Host {m.host}: {kept}. Left out of its sum: {'; '.join(parts)}.",
            [cite("says off", o.lines) for o in m.left_out if o.lines][:1],
        )
    )


def _l2arc(res, n: DedupNumbers) -> None:
    if n.l2arc_bytes is None or not n.best:
        return
    # the largest table: a machine's sum of its pools' best estimates, or one pool's best estimate
    sums = [(m.ddt_bytes, [(e.pool, e.rung) for e in n.best if e.host == m.host]) for m in n.machines]
    table, keys = max(sums + [(e.ddt_bytes, [(e.pool, e.rung)]) for e in n.best], key=lambda t: t[0])
    rows = _ladder_rows(n, keys)
    headers = table / DDT_LEAF_BYTES * L2ARC_HEADER_BYTES
    res.findings.append(
        Finding(
            f"An L2ARC of {prose.size(n.l2arc_bytes)} is in the data: DDT blocks it holds leave "
            f"the ARC but keep a header in RAM each (about {L2ARC_HEADER_BYTES} B per "
            f"{DDT_LEAF_BYTES // 1024} KiB DDT block), about {prose.size(headers)} for a {prose.size(table)} table "
            "(arithmetic on the estimate, not measured): it relieves RAM, at the price of reads from the cache "
            "device.",
            [
                cite(prose.size(n.l2arc_bytes), n.l2arc_lines, "zpool iostat -v: the cache device's alloc + free"),
                cite(
                    prose.size(headers),
                    rows,
                    f"arithmetic: the {prose.size(table)} table / {DDT_LEAF_BYTES:,} B per DDT block x "
                    f"{L2ARC_HEADER_BYTES} B per header (a constant, not measured)",
                ),
                cite(prose.size(table), rows, "the best estimate's table (the ladder's rows)"),
            ],
        )
    )


def _fast_dedup(res, n: DedupNumbers) -> None:
    res.findings.append(
        "OpenZFS 2.3 fast dedup (new tables only; docs/formats/zfs-facts.md F6): an entry's phys part is one "
        f"{FLAT_PHYS_BYTES} B slot instead of four 64 B slots ({LEGACY_PHYS_BYTES} B), a dedup log batches table "
        "updates, `dedup_table_quota` caps the table, `zpool ddtprune` drops old unique entries and "
        "`zpool prefetch -t ddt` loads the table into the ARC. The cached table is still ZAP leaf blocks (F2, F3): "
        "its RAM is the leaves' bytes, what `zdb -DD` and `zpool status -D` print as 'in core', not the entries x "
        f"the {LIVE_ENTRY_BYTES} B of a live `ddt_entry_t` (only entries being changed in the current transaction "
        "group are held as such). How many flat entries a leaf holds, and so a 2.3 table's RAM, these logs "
        "cannot say: `zpool status -D POOL` on a pool with a 2.3 table measures it."
    )


def _verdict(res, n: DedupNumbers) -> None:
    if not n.best:
        return
    bpe = n.params.bytes_per_entry
    parts = []
    for m in n.machines:
        if len(m.pools) > 1:
            others = (
                f"; {prose.listing([p for p, _ in m.other_dedup_pools])} dedup too, not counted"
                if (m.other_dedup_pools)
                else ""
            )
            parts.append(
                f"host {m.host}'s {' + '.join(m.pools)} together {_plural(m.fits)} "
                f"({_total(m)}; they would fit at {m.fits_at_most:,} B/entry or less{others})"
            )
    pools = []
    for e in n.best:
        rng = _range(e.ddt_low, e.ddt_bytes, e.ddt_high)
        if e.fits_at_most is None:
            pools.append(f"{e.pool} {e.fits} ({rng}, measured bytes per entry)")
        elif e.fits == "does not fit":
            pools.append(f"{e.pool} {e.fits} ({rng}; it would fit at {e.fits_at_most:,} B/entry or less)")
        else:
            pools.append(f"{e.pool} {e.fits} ({rng}; not above {e.fits_at_most:,} B/entry)")
    each = "each pool alone: " if parts else ""
    budgets = sorted({e.budget_bytes for e in n.best})
    against = f"the {prose.size(budgets[0])} metadata budget" if len(budgets) == 1 else "each machine's metadata budget"
    res.verdict = (
        f"Best DDT estimate per pool against {against}, at {bpe:g} B/entry "
        "unless measured: " + "; ".join(parts + [each + "; ".join(pools)]) + "."
    )
    if n.unhosted and len(n.best) > 1:
        res.missing.append(
            f"pools {prose.listing(n.unhosted)} have no host label: each is judged alone against a whole ARC; "
            "label the host of each log so that the pools of one machine are summed against its one ARC"
        )
