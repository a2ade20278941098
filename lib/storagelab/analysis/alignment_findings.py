"""Notebook 03's sentences, written only from ``alignment.AlignmentNumbers``."""

from __future__ import annotations

import polars as pl

from ..units import MiB
from . import plausibility, prose
from .alignment_numbers import _TEST_WORDS, HEADLINE_TESTS, ZFS_GET, AlignmentNumbers, Anomalies, Pair, PoolSettings
from .alignment_tables import distinct_partitions
from .result import Finding, cite

_THROUGHPUT = ("putc", "put_block", "rewrite", "getc", "get_block")


def _value(test: str, v: float | None) -> str:
    """A bonnie++ value as a reader expects it: MiB/s for throughput, per second for seeks and file tests."""

    if v is None:
        return "+++++"
    return f"{v / MiB:.1f} MiB/s" if test in _THROUGHPUT else f"{v:.1f}/s"


def write(res, n: AlignmentNumbers, sel) -> None:
    _arithmetic(res, n, sel)
    if n.runs.is_empty():
        res.missing.append(
            f"no bonnie++ runs for {sel.describe()}: run bonnie++ before and after the change "
            "(e.g. `bonnie++ -d /pool/dir -s <2 x RAM>`), save each output under data/raw/<study>/ and "
            "label them in the manifest with phase=before / phase=after (or partition_start_sector)"
        )
        return
    pair = n.pair()
    if pair is None:
        files, runs = len(n.phases), n.runs.select("path", "run_index").n_unique()
        none_before = not any(s == "before" for s in n.phases.values())
        res.missing.append(
            f"{runs} bonnie++ run(s) from {files} file(s) for {sel.describe()}, but "
            + ("none" if none_before else "no 'after' one")
            + " labelled phase=before/after "
            "(nor with a partition_start_sector to tell misaligned from aligned): label the pair in "
            "the manifest"
        )
        return
    _pair_and_noise(res, n, pair)
    _metrics(res, n)
    _cache_artefacts(res, n, pair)
    _memory_reads(res, n)
    _cache_findings(res, pair.before, pair.after)
    _pool_states(res, n, pair.before["pool"])
    _explanations(res, n, pair)
    res.findings.append(
        "A before/after pair measures everything that changed between the two runs (pool contents and "
        "fill, fragmentation, cache state, software), not only the partition offset; the logs alone "
        "cannot attribute the change to alignment."
    )
    if pair.before["partition_start_sector"] is None:
        res.missing.append(
            f"the 'before' run ({pair.before['label']}) has no partition_start_sector label: its offset is unknown"
        )
    _summary(res, n)


def _arithmetic(res, n: AlignmentNumbers, sel) -> None:
    for v in n.arithmetic:
        res.findings.append(
            f"Arithmetic: LBA {v['start_sector']} x {v['sector_bytes']} B = {v['start_bytes']:,} B, "
            f"{v['rem_physical']:,} B past a {v['physical_bytes']} B boundary: "
            + ("aligned." if v["aligned_physical"] else "misaligned (each physical sector write straddles two).")
        )
    parts = n.partitions
    if parts.height:
        distinct = distinct_partitions(parts)
        disks = distinct.unique("table", keep="first", maintain_order=True)
        res.findings.append(
            Finding(
                f"{distinct.height} partition(s) in the selection's {disks.height} partition table(s)"
                + _same_table_words(disks, parts)
                + "; "
                + _alignment_words(distinct, n.arithmetic[0]["physical_bytes"]),
                [cite(f"{distinct.height} partition(s)", parts, "the partition table rows")],
            )
        )
        res.findings += _parted_words(n.parted)
    else:
        res.missing.append(
            f"no partition table for {sel.describe()}: save `gpart show`, `fdisk -l`, `sfdisk -d` or "
            "`parted -m ... print` of the disks beside the benchmark logs"
        )


def _parted_words(checks: list[dict]) -> list[Finding]:
    """parted's own align-check verdict of each partition it checked, beside the arithmetic on the same grain, and
    whether they disagree."""
    out = []
    for c in checks:
        if c["arithmetic"] is None:  # a listing in parted's rounded units: no sector to check the verdict on
            out.append(
                Finding(
                    f'parted\'s own align-check ({c["kind"]}) of {c["disk"]} p{c["index"]}: "{c["parted"]}" '
                    f"({c['text'].split(': ', 1)[-1]}); its start was printed rounded (parted's default units), so "
                    "the arithmetic here cannot check it.",
                    [cite(c["parted"], c["row"])],
                )
            )
            continue
        here = "a multiple" if c["arithmetic"] else "not a multiple"
        agree = (
            "they agree"
            if c["agree"]
            else "they DISAGREE: check the start sector and the grain (a table printed by another tool, or a disk "
            "reporting other sector sizes to parted)"
        )
        out.append(
            Finding(
                f'parted\'s own align-check ({c["kind"]}) of {c["disk"]} p{c["index"]}: "{c["parted"]}" '
                f"({c['text'].split(': ', 1)[-1]}); by the arithmetic here its start, {c['start_bytes']:,} B, is "
                f"{here} of {prose.size(c['grain_bytes'])} ({c['grain_from']}): {agree}.",
                [cite(c["parted"], c["row"])],
            )
        )
    return out


def _where(rows: pl.DataFrame) -> list[str]:
    return [
        f"{d} p{i} at LBA {lba}" + ("" if lba == absolute else f" of {d} (absolute LBA {absolute})")
        for d, i, lba, absolute in rows.select("disk_name", "index", "start_sector", "abs_start_sector").iter_rows()
    ]


def _alignment_words(distinct: pl.DataFrame, param: int) -> str:
    """Each partition against the physical sector size its table prints ('as the tables print'), else the
    physical_sector_bytes parameter ('the parameter: the table does not print it'); partitions aligned to a printed
    size but not to the parameter are said apart, with what is and is not known."""
    printed = distinct.filter(pl.col("printed_physical_bytes").is_not_null())
    assumed = distinct.filter(pl.col("printed_physical_bytes").is_null())
    out = []
    for (size,), g in printed.group_by("printed_physical_bytes", maintain_order=True):
        bad = g.filter(~pl.col("aligned_physical"))
        out.append(
            f"misaligned to the {size:,} B physical sectors their tables print: {prose.listing(_where(bad))}"
            if bad.height
            else f"{g.height} start on the {size:,} B physical sectors their tables print"
        )
        odd = g.filter(pl.col("aligned_physical") & ~pl.col("aligned_parameter"))
        if odd.height and size < param:
            out.append(
                f"{prose.listing(_where(odd))} would be misaligned on {param:,} B physical sectors (the "
                "physical_sector_bytes parameter): that holds only if the disk's real sectors are larger than its "
                "table prints (a 512e drive behind a bridge or a virtual disk that reports 512 B), which the tables "
                "cannot show"
            )
    bad = assumed.filter(~pl.col("aligned_physical"))
    if assumed.height:
        out.append(
            f"misaligned to {param:,} B physical sectors (the physical_sector_bytes parameter: their tables do not "
            f"print the disk's): {prose.listing(_where(bad))}"
            if bad.height
            else f"{'every one starts' if not printed.height else f'{assumed.height} start'} on a {param:,} B "
            "boundary (the physical_sector_bytes parameter: their tables do not print the disk's)"
        )
    return "; ".join(out) + "."


def _same_table_words(disks: pl.DataFrame, parts: pl.DataFrame) -> str:
    """' (gpt.img: the same table in 4 outputs, also named ...)' for each disk more than one output printed."""
    words = []
    for r in disks.filter(pl.col("outputs") > 1).iter_rows(named=True):
        others = parts.filter((pl.col("table") == r["table"]) & (pl.col("disk") != r["disk_name"]))["disk"]
        aka = sorted(set(others.to_list()))
        words.append(
            f"{r['disk_name']}: the same table in {r['outputs']} outputs ({prose.listing(r['output_files'])})"
            + (f", also named {prose.listing(aka)}" if aka else "")
        )
    return f" ({'; '.join(words)})" if words else ""


def _pair_and_noise(res, n: AlignmentNumbers, pair: Pair) -> None:
    how = (
        "the 'after' run with the same layout labels (vdev type, count, width, cache, log)"
        if n.same_layout
        else "the first 'after' run (none has the same layout labels)"
    )
    noise = pair.noise
    others = (
        f" The other 'after' runs ({prose.listing(list(noise.other_configs))}) are other configurations: their "
        "spread is not run-to-run noise and is not used as such."
        if noise.other_configs
        else ""
    )
    if n.before_others:
        others += (
            f" The other 'before' runs ({prose.listing(list(n.before_others))}) have other host or layout labels: "
            "other configurations, not used."
        )
    sides = [
        f"{side} {len(files)} files ({prose.listing(list(files))})" if len(files) > 1 else f"{side} {files[0]}"
        for side, files in (("before:", n.before_files), ("after:", n.after_files))
        if files and (len(files) > 1 or files[0].endswith(" runs)"))
    ]
    if sides:  # a side with repeats: its value is their mean (its runs share the host and layout labels)
        others += (
            f" Each value below is the mean of its configuration's runs ({'; '.join(sides)}; runs with the same host "
            "and layout labels), and each ratio is after mean / before mean."
        )
    cites = []
    if noise.repeats >= 2:
        judged = n.before_files if noise.side == "after" else n.after_files
        cites.append(cite(f"{noise.repeats} runs", noise.lines, f"the '{noise.side}' configuration's runs"))
        band = (
            f"{noise.repeats} runs of the '{noise.side}' configuration give the noise band: the {noise.level:.0%} "
            "prediction interval for one new run (t distribution, analysis/stats.py)"
            + (
                f", or for the mean of as many new runs as the '{noise.judged}' configuration has."
                if len(judged) > 1 or any(f.endswith(" runs)") for f in judged)
                else f"; the '{noise.judged}' run is judged against it"
                + (" (the 'after' configuration ran once)." if noise.side == "before" else ".")
            )
        )
    else:
        band = (
            "The 'after' configuration ran once: there is no run-to-run estimate, so no difference below can be told "
            "from noise (repeat bonnie++ on it, or append the repeats to one file, to get one)."
        )
    res.findings.append(
        Finding(
            f"Before: {_side_name(pair.before, n.side_runs.get('before', 1))}; after: {_side_name(pair.after, n.side_runs.get('after', 1))} "
            f"({how}). {band}{others}",
            cites,
        )
    )


def _side_name(run: dict, runs: int) -> str:
    """A side by its first run's label, with its repeats where it has several: 'ext4 1G run 1 and 2 more run(s) of
    its configuration'."""
    return run["label"] + (f" and {runs - 1} more run(s) of its configuration" if runs > 1 else "")


def _metrics(res, n: AlignmentNumbers) -> None:
    for r in n.ratios.filter(pl.col("test").is_in(list(_TEST_WORDS))).iter_rows(named=True):
        if r["ratio"] is None:
            continue
        test = r["test"]
        ref, judged = (n.noise.side, n.noise.judged) if n.noise else ("after", "before")
        runs = f"the {r['after_runs']} '{ref}' runs"
        noise = ""
        if r["band_too_wide"]:
            noise = (
                f"; {runs} are too few or too far apart to bound the noise: their {_level(n)}prediction "
                f"interval reaches below zero (up to {_value(test, r['pi_high'])}), and a rate cannot be negative, so "
                f"the data cannot tell the '{judged}' value from noise"
            )
        elif r["within_noise"] is not None:
            what = "a new run" if r["before_runs"] <= 1 else f"the mean of {r['before_runs']} new runs"
            noise = (
                f"; {runs} predict {_value(test, r['pi_low'])} to {_value(test, r['pi_high'])} for {what}, so the "
                f"'{judged}' value is " + ("**within noise**" if r["within_noise"] else "outside that interval")
            )
        lacking = r["after_without"] or []
        if lacking and n.noise and n.noise.repeats > 1:
            noise += (
                f" ({prose.listing(lacking)} of the '{ref}' configuration {'has' if len(lacking) == 1 else 'have'} "
                f"no {_TEST_WORDS[test]} value, so {r['after_runs']} of its {n.noise.repeats} runs count here)"
            )
        for side, bias in (("before", "the ratio high"), ("after", "the ratio low")):
            if r[f"too_fast_{side}"] and r[f"value_{side}"] is not None:
                noise += (
                    f"; a '{side}' run printed +++++ (faster than bonnie++ can measure) and is not in its mean: "
                    f"that mean is biased low, {bias}"
                )
        before, after, ratio = _value(test, r["value_before"]), _value(test, r["value_after"]), f"{r['ratio']:.2f}x"
        res.findings.append(
            Finding(f"{_TEST_WORDS[test]}: {before} before, {after} after = {ratio}{noise}.", _ratio_cites(r, ratio))
        )


def _ratio_cites(r: dict, ratio: str) -> list:
    """A ratio row's numbers and their lines: each side's value (every run it is the mean of) and the ratio (both)."""
    test = r["test"]
    both = [*(r.get("sources_before") or ()), *(r.get("sources_after") or ())]
    return [
        cite(_value(test, r["value_before"]), r.get("sources_before") or ()),
        cite(_value(test, r["value_after"]), r.get("sources_after") or ()),
        cite(ratio, both, f"{test}: after / before"),
    ]


def _cache_artefacts(res, n: AlignmentNumbers, pair: Pair) -> None:
    b, a = pair.before, pair.after
    ba = n.ratios
    for r in ba.filter(pl.col("beyond_disks").is_not_null()).iter_rows(named=True):
        side = r["beyond_disks"]
        fast = _value(r["test"], r["value_" + side])
        res.findings.append(
            Finding(
                f"**Cache artefact**, {_TEST_WORDS.get(r['test'], r['test'])}: the {side} run's "
                f"{fast} is {r['disk_multiple']:.1f}x the single-disk "
                f"run's {_value(r['test'], r['single_disk_value'])}, more than its layout can draw from its disks "
                f"({r['disk_model']}): a cache answered, so its ratio ({r['ratio']:.2f}x) says nothing about the disks.",
                _artefact_cites(r, side, fast),
            )
        )
        other, mine = ("after", a) if r["beyond_disks"] == "before" else ("before", b)
        theirs = a if other == "after" else b
        if r["both_beyond"]:
            res.findings.append(
                f"  The {other} run measured {_value(r['test'], r['value_' + other])}, beyond its disks too: both "
                "runs measured a cache, and their ratio says nothing about the partition offset."
            )
        elif all(theirs[c] == mine[c] for c in ("cache_devices", "log_devices")):
            measured = _value(r["test"], r["value_" + other])
            res.findings.append(
                Finding(
                    f"  The {other} run, with the same cache and log device labels, measured {measured}, within what "
                    "its disks can draw: why a cache answered one run and not the other, the logs do not say.",
                    [cite(measured, r.get("sources_" + other) or ())],
                )
            )
    if "single_disk_value" in ba.columns and ba["single_disk_value"].is_null().all():
        host = b.get("host") if b.get("host") == a.get("host") else None
        res.missing.append(
            (
                f"no single-disk bonnie++ run of host {host} for {res.selection.describe()}"
                if host
                else "the before and after runs have no (or different) host labels, so no single-disk run can be "
                "matched to their machine"
            )
            + ": without one, block speeds cannot be checked against what the disks can deliver (a run of one of "
            "its disks, labelled with the same host and vdev_count=1, vdev_width=1)"
        )


def _artefact_cites(r: dict, side: str, fast: str) -> list:
    """A cache artefact's numbers: the fast run's value (its line), its multiple of the single disk (both lines), the
    single disk's value (its line) and the ratio of the pair (both runs' lines)."""
    mine, single = tuple(r.get("sources_" + side) or ()), tuple(r.get("single_sources") or ())
    pair = tuple(r.get("sources_before") or ()) + tuple(r.get("sources_after") or ())
    return [
        cite(fast, mine),
        cite(f"{r['disk_multiple']:.1f}x", mine + single, f"the {side} run's / the single disk's"),
        cite(_value(r["test"], r["single_disk_value"]), single),
        cite(f"{r['ratio']:.2f}x", pair, f"{r['test']}: after / before"),
    ]


def _memory_reads(res, n: AlignmentNumbers) -> None:
    reads = n.ratios.filter(pl.col("test") == "get_block").to_dicts() if "sources_before" in n.ratios.columns else []
    for m in n.memory_reads:
        other = "" if m.other_cpu_pct is None else f" (the other run's: {m.other_cpu_pct:.0f} %CP)"
        lines = (reads[0].get(f"sources_{m.side}") or ()) if reads else ()
        res.findings.append(
            Finding(
                f"The {m.side} run's block read of {_value('get_block', m.value)} ran at {m.cpu_pct:.0f} %CP{other}: "
                "a read that keeps the CPU busy is copying data from memory, not waiting on disks, so it was served "
                "from memory (the ARC), not read from the pool's disks.",
                [cite(_value("get_block", m.value), lines), cite(f"{m.cpu_pct:.0f} %CP", lines)]
                + (
                    []
                    if m.other_cpu_pct is None or not reads
                    else [cite(f"{m.other_cpu_pct:.0f} %CP", reads[0].get(f"sources_{_other(m.side)}") or ())]
                ),
            )
        )


def _other(side: str) -> str:
    return "after" if side == "before" else "before"


def _cache_findings(res, before: dict, after: dict) -> None:
    """Each run's bonnie++ file against the RAM it was told (-r) or labelled with, and its L2ARC label."""

    seen: dict[tuple, list[str]] = {}  # (size, RAM, where it is from, L2ARC) -> the sides that have it
    checks: dict[tuple, dict] = {}  # the same -> plausibility.against_cache
    rows: dict[tuple, list[dict]] = {}  # the same -> the runs' rows (their bonnie++ lines: the file size)
    for side, r in (("before", before), ("after", after)):
        ram, where = plausibility.ram_bytes(r["command"], r["notes"], r.get("ram_bytes"))
        check = plausibility.against_cache(r["file_size_bytes"], ram)
        if check is not None:
            key = (r["file_size_bytes"], ram, where, r["cache_devices"])
            seen.setdefault(key, []).append(side)
            checks[key] = check
            rows.setdefault(key, []).append(r)
    for key, sides in seen.items():
        (size, ram, where, l2arc), check = key, checks[key]
        runs = rows[key]
        res.findings.append(
            Finding(
                f"Test size, {' and '.join(sides)} run{'s' if len(sides) > 1 else ''}: a {prose.size(size)} file, "
                f"{prose.times(check['size_over_ram'], 1)} the {prose.size(ram)} of RAM ({where})"
                + (f"; an L2ARC (labelled {l2arc}) adds to what can be cached" if l2arc else "")
                + ": "
                + (
                    "the whole file fits in memory, so the block numbers can be cache speeds."
                    if check["fits_in_cache"]
                    else "the file is larger than RAM, yet reads of recently written data can still come partly from cache."
                ),
                [
                    cite(prose.size(size), runs),
                    cite(prose.times(check["size_over_ram"], 1), runs, f"bonnie++'s file size / the RAM ({where})"),
                ],
            )
        )


def _pool_states(res, n: AlignmentNumbers, pool: str | None) -> None:
    """What other logs of the selection say about the 'before' run's pool (fill, fragmentation, dedup)."""
    parts, cites = [], []
    for r in n.pool_states.iter_rows(named=True):
        shown = [f"{r['cap_pct']:.0f} % full"]
        shown.append("fragmentation unknown" if r["frag_pct"] is None else f"{r['frag_pct']:.0f} % fragmented")
        shown += [] if r["dedup_ratio"] is None else [f"DEDUP {r['dedup_ratio']:.2f}x"]
        parts.append(f"{r['label']}: {', '.join(shown)}")
        cites += [cite(x, r) for x in shown if x != "fragmentation unknown"]  # each read from its zpool list line
    if parts:
        res.findings.append(
            Finding(
                f"Other logs of pool {pool} in the selection (`zpool list`): {'; '.join(parts)}. A full, "
                "fragmented or deduplicating pool writes slower; when these were taken relative to the benchmark "
                "runs the logs do not say, so they are possible causes beside the change, not measured ones.",
                cites,
            )
        )
        res.caveats.append(f"pool {pool} full, fragmented or deduplicating: confounders")


def _anomaly_words(a: Anomalies) -> list[str]:
    words = []
    if a.fast_read:
        words.append(f"the {_value('get_block', a.fast_read.value)} block read (served from memory)")
    if a.slow_write:
        words.append(
            f"the {_value('put_block', a.slow_write[0])} block write with a worst latency of "
            f"{a.slow_write[1] / 1e9:,.0f} s"
        )
    if a.slow_delete:
        test, ratio = a.slow_delete
        words.append(f"{ratio:.1f}x slower {'sequential' if test == 'seq_delete' else 'random'} deletes")
    return words


def _explanations(res, n: AlignmentNumbers, pair: Pair) -> None:
    """Which explanations the data supports or excludes: ashift, compression and dedup of the tested dataset."""
    s, pool = pair.settings, pair.before.get("pool")
    if n.not_zfs:
        res.findings.append(
            f"The 'before' run is labelled stack {n.not_zfs}, not ZFS: ashift and the dataset settings "
            "(compression, dedup) of a pool do not apply to it."
        )
        return
    if s.ashift:
        res.findings.append(
            Finding(
                f"ashift of pool {pool or '(unnamed)'}: {s.ashift} ({s.ashift_source}). " + _ashift_judged(n, pair),
                [cite(f"{s.ashift} ({s.ashift_source})", s.ashift_lines)],
            )
        )
    else:
        _ashift_unknown(res, n, pool)
    a = n.anomalies
    if s.datasets:
        _dataset_settings(res, s, n.anomalies, pool)
    elif a and a.any():
        target = f"{pool}/DATASET" if pool else "POOL/DATASET"
        dedup_seen = [r["dedup_ratio"] for r in n.pool_states.iter_rows(named=True) if (r["dedup_ratio"] or 0) > 1]
        res.findings.append(
            Finding(
                "Hypothesis, not tested by these logs: bonnie++ writes near-zero data (docs/formats/zfs-facts.md F24), so "
                f"compression or dedup on the 'before' run's dataset would explain at once {_anomaly_list(a)} (frees of "
                "deduplicated blocks update the dedup table). "
                + (
                    f"`zpool list` shows pool {pool} deduplicating (DEDUP {max(dedup_seen):.2f}x), so dedup was on for "
                    "some of its data; whether for the dataset bonnie++ wrote to, "
                    if dedup_seen
                    else "Whether either was on, "
                )
                + f"only `{ZFS_GET} {target}` says.",
                _anomaly_cites(n, a, max(dedup_seen) if dedup_seen else None),
            )
        )
        res.missing.append(
            f"the tested dataset's settings: `{ZFS_GET} {target}` (the dataset bonnie++ wrote to) would settle "
            "whether compression or dedup explains the anomalies above"
        )


def _anomaly_cites(n: AlignmentNumbers, a: Anomalies, dedup: float | None) -> list:
    """The anomalies' numbers (``_anomaly_words``, in its order) and the highest DEDUP ratio, each from its lines: a
    'before' run's value its bonnie++ line, a ratio both runs' with its arithmetic, DEDUP its `zpool list` line."""
    rows = {r["test"]: r for r in n.ratios.iter_rows(named=True)} if n.ratios.height else {}

    def side(test: str, which: str = "before") -> tuple:
        return tuple(rows.get(test, {}).get(f"sources_{which}") or ())

    out = []
    if a.fast_read:
        out.append(cite(_value("get_block", a.fast_read.value), side("get_block")))
    if a.slow_write:  # its latency stays plain: the database records the value's line, not the Latency row's
        out.append(cite(_value("put_block", a.slow_write[0]), side("put_block")))
    if a.slow_delete:
        test, ratio = a.slow_delete
        out.append(cite(f"{ratio:.1f}x", side(test) + side(test, "after"), f"{test}: after / before"))
    if dedup is not None:
        states = n.pool_states.filter(pl.col("dedup_ratio") == dedup)
        out.append(cite(f"{dedup:.2f}x", states.head(1)))
    return out


def _level(n: AlignmentNumbers) -> str:
    """The prediction interval's confidence level, as a sentence says it ("95% "), or nothing when unknown."""
    return f"{n.noise.level:.0%} " if n.noise is not None and n.noise.level is not None else ""


def _ashift_judged(n: AlignmentNumbers, pair: Pair) -> str:
    """What a known 'before' ashift says against the drives' physical sector size (physical_sector_bytes, a
    parameter: the logs do not show it): blocks of 2^ashift bytes that are whole sectors exclude a too-small ashift;
    smaller blocks support it, unless the 'after' run's pool has the same ashift."""
    s = pair.settings
    if s.ashift is None:  # the caller judges only a known ashift
        return ""
    physical = n.arithmetic[0]["physical_bytes"] if n.arithmetic else 4096
    block, where = 2**s.ashift, "(physical_sector_bytes, a parameter: the logs do not show the drives' sector size)"
    if block >= physical and block % physical == 0:
        return (
            f"ashift {s.ashift} writes blocks of {block:,} B, whole {physical:,} B physical sectors {where}: the data "
            "exclude a too-small ashift as the cause."
        )
    after, after_pool = n.after_settings, pair.after.get("pool")
    if after is not None and after.ashift == s.ashift:
        where_after = "the same pool" if after_pool == pair.before.get("pool") else f"pool {after_pool}"
        return (
            f"The 'after' run ({pair.after['label']}) ran on {where_after}, also at ashift {s.ashift} "
            f"({after.ashift_source}): ashift is the same on both sides, so it cannot explain the difference between "
            "them."
        )
    return (
        f"ashift {s.ashift} writes blocks of {block:,} B; on drives with {physical:,} B physical sectors {where} every "
        f"write of less than {physical:,} B is a read-modify-write inside the drive (docs/formats/zfs-facts.md F11): "
        "if the drives' sectors are that large, the data support that explanation beside the partition offset"
        + (
            f"; the 'after' run's pool has ashift {after.ashift} ({after.ashift_source})."
            if after is not None and after.ashift
            else "; the 'after' run's pool's ashift is not in the data."
        )
    )


def _anomaly_list(a: Anomalies) -> str:
    words = _anomaly_words(a)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _dataset_settings(res, s: PoolSettings, a: Anomalies | None, pool: str | None) -> None:
    """zfs get output of the pool's datasets: whether compression or dedup can explain the anomalies."""
    each = [
        f"{d.name}: compression={d.compression or '?'}, dedup={d.dedup or '?'}, recordsize={d.recordsize or '?'}, "
        f"sync={d.sync or '?'}"
        for d in s.datasets
    ]
    shown = "; ".join(each)
    on = [d.name for d in s.datasets if d.shrinks_data]
    off = [d.name for d in s.datasets if d.shrinks_data is False]
    what = _anomaly_list(a) if a and a.any() else "the block speeds"
    if on and not off:
        judged = (
            f"compression or dedup is on for {prose.listing(on)}: bonnie++'s near-zero data (F24) shrink to almost "
            f"nothing on disk, so the data support that explanation of {what}"
        )
    elif off and not on:
        judged = (
            f"compression and dedup are off for {prose.listing(off)}: the data exclude them as the explanation of "
            f"{what}"
        )
    else:
        judged = (
            f"compression or dedup is on for {prose.listing(on)} and off for {prose.listing(off)}: which dataset "
            "bonnie++ wrote to, the logs do not say"
        )
    res.findings.append(
        Finding(
            f"`zfs get` of pool {pool}'s datasets: {shown}. So {judged} (if the settings were the same when the runs "
            "were made: the output does not say when it was taken).",
            [cite(text, d.lines) for text, d in zip(each, s.datasets, strict=True)],
        )
    )


def _ashift_unknown(res, n: AlignmentNumbers, pool: str | None) -> None:
    others = [p for p in n.zdb_pools if p != pool]
    zdb = (
        f"the selection's `zdb -C` outputs are of {prose.listing(others)}"
        + (", and the run's pool is not labelled" if not pool else "")
        if others
        else "no `zdb -C` output"
    )
    res.findings.append(
        f"ashift of pool {pool or '(unnamed)'} is not in the data (no `ashift` label; {zdb}), so "
        "whether ashift=9 on 512e drives (every sub-4 KiB write a read-modify-write inside the drive) explains the "
        "'before' run cannot be settled from its own logs."
    )
    for e in n.other_ashift:
        exp = ", ".join(f"{v:.3f} at ashift {k}" for k, v in e.expected.items())
        match = (
            "the expectations tie, so it says nothing about ashift"
            if e.nearest is None
            else f"it matches ashift {e.nearest}"
        )
        res.findings.append(
            Finding(
                f"  Evidence from another pool of host {e.host}: {e.pool} ({e.layout}) allocates {e.measured:.3f}x "
                f"its physical bytes by zdb -b, against {exp} for full records: {match}. A pool created on the same "
                f"machine (same OS, likely the same admin) suggests how pools were created there; it is evidence "
                f"about {e.pool}, not proof for {pool or 'this pool'}.",
                [cite(f"{e.measured:.3f}x", e.lines, "zdb -b bp allocated / bp physical")],
            )
        )
    res.missing.append(
        f"the ashift of pool {pool}: `zdb -C {pool}` (its `ashift:` lines), or an `ashift` label on the runs in the "
        "manifest"
        if pool
        else "the 'before' run's pool and its ashift: a `pool` label on the runs (then `zdb -C` of that pool, its "
        "`ashift:` lines), or an `ashift` label"
    )


def _summary(res, n: AlignmentNumbers) -> None:
    ba = n.ratios
    repeats = n.noise.repeats if n.noise else 0
    side = n.noise.side if n.noise else "after"
    res.headline = {
        f"{_TEST_WORDS[r['test']]} after/before": f"{r['ratio']:.2f}x"
        + (
            f" (too few '{side}' runs to bound the noise)"
            if r["band_too_wide"]
            else (" (within noise)" if r["within_noise"] else f" (outside the {side} runs' prediction interval)")
            if r["within_noise"] is not None
            else " (one 'after' run: noise unknown)"
        )
        for r in ba.iter_rows(named=True)
        if r["ratio"] is not None and r["test"] in HEADLINE_TESTS and r["beyond_disks"] is None
    }
    if ba["beyond_disks"].is_not_null().any():
        res.caveats.append("a run faster than its disks: cache artefact")
    if repeats < 2:
        res.caveats.append("no repeats of either configuration: noise unknown")
    res.caveats.append("the runs differ in more than the change: no cause shown")
    pb = ba.filter(pl.col("test") == "put_block")
    if pb.height and pb["ratio"][0] is not None:
        res.verdict = (
            f"Block writes ran {pb['ratio'][0]:.2f}x faster after than before; the two runs differ in "
            "more than the partition offset, so the data do not show what caused it."
        )
