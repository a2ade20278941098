"""bonnie++ runs side by side, as ``bon_csv2html`` lays them out (notebook 09): one row per run, bonnie++'s
column groups (sequential output per char / block / rewrite, sequential input per char / block, random seeks,
sequential and random create / read / delete), each with its rate, %CPU and latency; each column shaded from
worst to best among the runs shown.

Units are explicit: block and per-char rates in MiB/s (bytes/s / 2^20, the unit bonnie++ itself means by its
K/M/G suffixes), seeks and file operations per second, latency in the unit bonnie++ would choose (us, ms, s).
A cell bonnie++ printed as ``+++++`` (the test ran too fast to measure) stays ``+++++``, never 0; a test the run
did not do is empty.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import polars as pl
from polars.expr.whenthen import ChainedThen, Then

from ..units import MiB
from . import bonnie_repeats, measures, plausibility, prose
from .db import frame
from .fio_runs import file_names, section_names
from .repeat_groups import SETUP_COLUMNS
from .result import Finding, Result, cite
from .selection import Selection

# (group, test, heading) in bon_csv2html's order
COLUMNS = (
    ("Sequential Output", "putc", "Per Chr"),
    ("Sequential Output", "put_block", "Block"),
    ("Sequential Output", "rewrite", "Rewrite"),
    ("Sequential Input", "getc", "Per Chr"),
    ("Sequential Input", "get_block", "Block"),
    ("Random", "seeks", "Seeks"),
    ("Sequential Create", "seq_create", "Create"),
    ("Sequential Create", "seq_read", "Read"),
    ("Sequential Create", "seq_delete", "Delete"),
    ("Random Create", "ran_create", "Create"),
    ("Random Create", "ran_read", "Read"),
    ("Random Create", "ran_delete", "Delete"),
)
RATE_TESTS = {"putc", "put_block", "rewrite", "getc", "get_block"}

RUNS_SQL = """
SELECT f.file_id, f.path, f.sha256, coalesce(f.label, f.path) AS label, f.label AS given_label, f.command, {setup},
       b.run_index, b.machine, b.version, b.section, b.line_start AS run_line,
       b.size_bytes, b.chunk_bytes, b.concurrency, b.num_files, b.max_size_bytes, b.min_size_bytes, b.num_dirs,
       r.test, coalesce(r.bytes_per_s, r.ops_per_s) AS value,
       r.cpu_pct, r.too_fast, r.latency_ns, r.suspect, r.line_start
FROM bonnie_results r JOIN bonnie_runs b USING (file_id, run_index, source) JOIN files f USING (file_id)
WHERE {where} AND b.preferred
ORDER BY f.path, b.run_index
"""
IDENT = (
    "label",
    "given_label",
    "machine",
    "version",
    "size_bytes",
    "chunk_bytes",
    "concurrency",
    "num_files",
    "max_size_bytes",
    "min_size_bytes",
    "num_dirs",
    "path",
    "run_line",
    "section",
    *SETUP_COLUMNS,
)


def _value(x: float, sep: str = "") -> str:
    """One decimal (25.1 MiB/s), but two significant digits below 1: a per-char rate of 53 K/s is 0.052 MiB/s,
    not '0.1' (three runs of 53, 115 and 139 K/s had all read 0.1)."""
    return f"{x:{sep}.1f}" if abs(x) >= 1 or x == 0 else f"{x:.2g}"


def unit(test: str) -> str:
    return "MiB/s" if test in RATE_TESTS else ("seeks/s" if test == "seeks" else "files/s")


def _latency(ns: float | None) -> str:
    """A latency as bonnie++ prints it (docs/formats/log-formats.md, bonnie++ latency cells): whole us under
    0.1 s, whole ms from 0.1 s to 100 s, whole s above."""
    if ns is None:
        return ""
    if ns < 1e8:
        return f"{ns / 1e3:.0f}us"
    if ns < 1e11:
        return f"{ns / 1e6:.0f}ms"
    return f"{ns / 1e9:.0f}s"


def _shade(values: list[float | None], higher_is_better: bool) -> list[float | None]:
    """0 (worst) .. 1 (best) within the column; None where there is no number."""
    nums = [v for v in values if v is not None]
    if len(nums) < 2 or max(nums) == min(nums):
        return [None if v is None else 0.5 for v in values]
    lo, hi = min(nums), max(nums)
    return [None if v is None else ((v - lo) / (hi - lo) if higher_is_better else (hi - v) / (hi - lo)) for v in values]


def named_runs(ident: pl.DataFrame) -> pl.DataFrame:
    """Runs that share a file and its label (a CSV of one line per run, a log of appended runs) named apart by their
    line and machine: 'bonnie/all.csv:3 vm-ext4' unlabelled, 'label (all.csv:3 vm-ext4)' labelled, and the run's
    section where the file's runs lie under different headings of a write-up ('notes.txt:18 ceph-admin § node 1');
    ``setup_label`` is the label the manifest gives (None: the file names the run), what tells repeats with the
    section (``bonnie_repeats``: runs under different headings are never repeats)."""
    files = file_names(ident["path"].to_list()) if "path" in ident.columns and ident.height else {}
    sections = {
        f"{path}\x1f{s}": short
        for path, shorts in (section_names(ident) if "section" in ident.columns and ident.height else {}).items()
        for s, short in shorts.items()
    }
    key = pl.concat_str([pl.col("path"), pl.col("section").fill_null("")], separator="\x1f")
    part = key.replace_strict(sections, default=None, return_dtype=pl.String) if sections else pl.lit(None, pl.String)
    where = pl.format(
        "{}:{}{}{}",
        pl.col("path").replace_strict(files, default=None, return_dtype=pl.String),
        pl.col("run_line"),
        pl.when(pl.col("machine").is_not_null()).then(pl.lit(" ") + pl.col("machine")).otherwise(pl.lit("")),
        pl.when(part.is_not_null()).then(pl.lit(" § ") + part).otherwise(pl.lit("")),
    )
    shared = (pl.len().over("file_id", "label") > 1) & pl.col("run_line").is_not_null()
    named = pl.when(pl.col("given_label").is_null()).then(where).otherwise(pl.format("{} ({})", "label", where))
    return ident.with_columns(setup_label=pl.col("given_label")).with_columns(
        label=pl.when(shared).then(named).otherwise(pl.col("label"))
    )


def table(results: pl.DataFrame) -> pl.DataFrame:
    """One row per run (file, run index): identity columns, then per test ``<test>`` (value in its display unit),
    ``<test>_cpu``, ``<test>_latency_ns``, ``<test>_too_fast``."""
    if results.is_empty():
        return pl.DataFrame()
    keys = ["file_id", "run_index"]
    ident = named_runs(
        results.unique(keys, keep="first", maintain_order=True).select(
            *keys, *(c for c in IDENT if c in results.columns)
        )
    )
    disp = results.with_columns(
        shown=pl.when(pl.col("test").is_in(list(RATE_TESTS))).then(pl.col("value") / MiB).otherwise(pl.col("value"))
    )
    out = ident
    for _, test, _ in COLUMNS:
        t = disp.filter(pl.col("test") == test).select(
            *keys,
            pl.col("shown").alias(test),
            pl.col("cpu_pct").alias(f"{test}_cpu"),
            pl.col("latency_ns").alias(f"{test}_latency_ns"),
            pl.col("too_fast").alias(f"{test}_too_fast"),
            pl.col("suspect").fill_null(False).alias(f"{test}_suspect"),
        )
        out = out.join(t, on=keys, how="left")
    return out


MEMORY_CPU_PCT = 90.0  # a block read at this %CP or more copies from memory (notebook 03's rule)
BLOCK_TESTS = ("put_block", "rewrite", "get_block")


def flags(tab: pl.DataFrame, small_files: set[tuple[int, int]] | None = None) -> pl.DataFrame:
    """Per test a ``<test>_flag``: why a value is not ranked (None: it is). 'from memory': a block read at
    MEMORY_CPU_PCT %CP or more; 'cache': a block test of a run whose file is below twice the RAM (``small_files``:
    (file_id, run_index)); 'unreliable': a rate the ingest warned about (bonnie++ 1.98+ prints file-creation rates
    through an integer conversion, and no CSV line corrects it)."""
    small = pl.struct("file_id", "run_index").map_elements(
        lambda k: (k["file_id"], k["run_index"]) in (small_files or set()), return_dtype=pl.Boolean
    )
    out = tab.with_columns(_small=small) if tab.height else tab.with_columns(_small=pl.lit(False))
    for _, t, _ in COLUMNS:
        flag: Then | ChainedThen = pl.when(pl.col(f"{t}_suspect").fill_null(False)).then(pl.lit("unreliable"))
        if t == "get_block":
            flag = flag.when(pl.col(f"{t}_cpu") >= MEMORY_CPU_PCT).then(pl.lit("from memory"))
        if t in BLOCK_TESTS:
            flag = flag.when(pl.col("_small")).then(pl.lit("cache"))
        out = out.with_columns(flag.otherwise(pl.lit(None, pl.String)).alias(f"{t}_flag"))
    return out.drop("_small")


def block_lines(tab: pl.DataFrame) -> list[str]:
    """Per run, block write and block read in MiB/s: '+++++' where bonnie++ was too fast to measure, 'n/a' where
    the test did not run; a run with no file size (bonnie++ -s 0) says it ran no block tests."""

    def shown(r: dict, test: str, width: int) -> str:
        if r[f"{test}_too_fast"]:
            return f"{'+++++':>{width}}"
        return f"{'n/a':>{width}}" if r[test] is None else f"{r[test]:{width}.1f}"

    def line(r: dict) -> str:
        name = f"{(r['label'] or r['path'])[:34]:<34}"
        if not r["size_bytes"] and all(r[t] is None and not r[f"{t}_too_fast"] for t in ("put_block", "get_block")):
            return f"{name} no block tests: no file size (bonnie++ -s 0 runs only the file creation tests)"
        return f"{name} block write {shown(r, 'put_block', 6)} MiB/s, block read {shown(r, 'get_block', 7)} MiB/s"

    return [line(r) for r in tab.iter_rows(named=True)]


def html_table(tab: pl.DataFrame) -> str:
    """The bon_csv2html layout as an HTML table (labels escaped: they come from a user's manifest)."""
    if tab.is_empty():
        return "<p>No bonnie++ runs.</p>"
    groups: list[tuple[str, int]] = []
    for group, _, _ in COLUMNS:
        if groups and groups[-1][0] == group:
            groups[-1] = (group, groups[-1][1] + 1)
        else:
            groups.append((group, 1))
    e = html.escape
    head1 = "".join(f'<th colspan="{n * 2}">{e(g)}</th>' for g, n in groups)
    head2 = "".join(f'<th colspan="2">{e(h)}</th>' for _, _, h in COLUMNS)
    head3 = "".join(f"<th>{e(unit(t))}</th><th>%CP</th>" for _, t, _ in COLUMNS)
    shades = {t: _shade(_ranked(tab, t), True) for _, t, _ in COLUMNS}
    cpu_shades = {t: _shade(tab[f"{t}_cpu"].to_list(), False) for _, t, _ in COLUMNS}
    lat_shades = {t: _shade(tab[f"{t}_latency_ns"].to_list(), False) for _, t, _ in COLUMNS}

    def cell(text: str, shade: float | None) -> str:
        style = "" if shade is None else f' style="background: hsl({int(shade * 120)}, 60%, 85%)"'
        return f"<td{style}>{e(text)}</td>"

    body = []
    for i, r in enumerate(tab.iter_rows(named=True)):
        size = prose.size(r["size_bytes"]) if r["size_bytes"] else ""
        row = [f"<td>{e(str(r['label']))}</td><td>{e(str(r['machine'] or ''))}</td><td>{e(size)}</td>"]
        lat = ["<td></td><td></td><td>latency</td>"]
        for _, t, _ in COLUMNS:
            if r[f"{t}_too_fast"]:
                row.append(cell("+++++", None) + cell("+++", None))
            elif r[t] is None:
                row.append("<td></td><td></td>")
            else:
                value = _value(r[t]) if t in RATE_TESTS or r[t] < 1000 else f"{r[t]:,.0f}"
                cpu = "" if r[f"{t}_cpu"] is None else f"{r[f'{t}_cpu']:g}"
                flag = r.get(f"{t}_flag")
                if flag:  # not ranked: no green or red, and the reason beside the value
                    row.append(f'<td class="flagged" title="{e(flag)}">{e(value)} ({e(flag)})</td>{cell(cpu, None)}')
                else:
                    row.append(cell(value, shades[t][i]) + cell(cpu, cpu_shades[t][i]))
            lat.append(cell(_latency(r[f"{t}_latency_ns"]), lat_shades[t][i]).replace("<td", '<td colspan="2"', 1))
        body.append("<tr>" + "".join(row) + "</tr>")
        if any(r[f"{t}_latency_ns"] is not None for _, t, _ in COLUMNS):
            body.append('<tr class="latency">' + "".join(lat) + "</tr>")
    return (
        '<table class="bonnie"><thead>'
        f'<tr><th rowspan="3">run</th><th rowspan="3">machine</th><th rowspan="3">size</th>{head1}</tr>'
        f"<tr>{head2}</tr><tr>{head3}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        "<p>Shading per column among these runs: green best, red worst (rates: higher; %CP and latency: lower); "
        "the runs of one setup (repeats: one label less its 'run N', the same bonnie++ options) share the shade of "
        "their mean. "
        "+++++: too fast for bonnie++ to measure. Not shaded nor ranked: a value marked (from memory), a block read "
        "at 90 %CP or more; (cache), a block test of a file below twice the RAM; (unreliable), a rate the ingest "
        "warned about.</p>"
    )


def _ranked(tab: pl.DataFrame, test: str) -> list[float | None]:
    """A column's values with the flagged ones left out (None), each run of a repeated setup as its setup's mean
    (``bonnie_repeats``): what shading and 'best' rank."""
    if f"{test}_flag" not in tab.columns:
        return tab[test].to_list()
    values = tab[f"{test}_rank"].to_list() if f"{test}_rank" in tab.columns else tab[test].to_list()
    return [
        None if f or v is None else r
        for v, r, f in zip(tab[test].to_list(), values, tab[f"{test}_flag"].to_list(), strict=True)
    ]


def small_files(results: pl.DataFrame) -> set[tuple[int, int]]:
    """(file_id, run_index) of the runs whose file is below twice the RAM they were labelled or told (-r)."""

    out = set()
    for r in results.unique(["file_id", "run_index"], keep="first").iter_rows(named=True):
        ram, _ = plausibility.ram_bytes(r["command"], r["notes"], r["ram_bytes"])
        if ram and r["size_bytes"] and r["size_bytes"] < 2 * ram:
            out.add((r["file_id"], r["run_index"]))
    return out


def _size_findings(res, results: pl.DataFrame, tab: pl.DataFrame) -> None:
    """Each run's file size against twice the RAM (bonnie++'s own rule: a smaller file is answered from cache),
    with the RAM from the manifest (ram_bytes, as `storagelab lab` writes it) or bonnie++'s -r; runs whose
    block tests were all too fast to measure; what is missing where the RAM is unknown."""

    runs = results.unique(["file_id", "run_index"], keep="first", maintain_order=True)
    unknown = []
    small: dict[tuple, int] = {}  # (label, size, RAM, where the RAM is from) -> runs: one sentence for repeats
    for r in runs.iter_rows(named=True):
        ram, where = plausibility.ram_bytes(r["command"], r["notes"], r["ram_bytes"])
        size = r["size_bytes"]
        if not size:
            continue
        if ram is None:
            unknown.append(r["label"])
        elif size < 2 * ram:
            key = (r["label"], size, ram, where)
            small[key] = small.get(key, 0) + 1
    for (label, size, ram, where), n in small.items():
        res.findings.append(
            f"{label}{f' ({n} runs)' if n > 1 else ''}: a {prose.size(size)} file, {prose.times(size / ram)} the "
            f"{prose.size(ram)} of RAM ({where}): below twice the RAM (bonnie++'s own rule), so "
            f"{'their' if n > 1 else 'its'} block rates can be cache speeds, not the disks'."
        )
    if unknown:
        res.missing.append(
            f"the machine's RAM for {len(unknown)} run(s) ({', '.join(unknown[:3])}{', ...' if len(unknown) > 3 else ''}): "
            "label ram_bytes in the manifest (storagelab lab does) to check each file size against twice the RAM"
        )
    blocks = [t for t in ("put_block", "rewrite", "get_block") if f"{t}_too_fast" in tab.columns]
    for r in tab.iter_rows(named=True):
        fast = [t for t in blocks if r[f"{t}_too_fast"]]
        if fast and len(fast) == len([t for t in blocks if r[t] is not None or r[f"{t}_too_fast"]]):
            res.findings.append(
                f"{r['label']}: every block test ({', '.join(fast)}) too fast for bonnie++ to measure (+++++): "
                "the file is too small for this machine; run it with at least twice the RAM."
            )


_FLAG_WORDS = {
    "from memory": "a block read at 90 %CP or more, served from memory",
    "cache": "a file below twice the RAM",
    "unreliable": "a rate bonnie++ printed through an integer conversion, with no CSV line to correct it",
}


def _lines(results: pl.DataFrame | None, row: dict, test: str) -> pl.DataFrame:
    """The raw line of one run's value of ``test`` (its results row: file, run index, test)."""
    if results is None or "line_start" not in results.columns:
        return pl.DataFrame()
    return results.filter(
        (pl.col("file_id") == row["file_id"]) & (pl.col("run_index") == row["run_index"]) & (pl.col("test") == test)
    )


def _ranked_name(e: dict) -> str:
    """A ranked entry's name: a run's label, or repeats by their setup, count and range (``bonnie_repeats.ranked``)."""
    if "runs" not in e:
        return e["name"]
    more = f", {e['more']} more run(s) not in it" if e["more"] else ""
    return f"{e['name']}, mean of {e['runs']} runs, {_value(e['low'], ',')} to {_value(e['high'], ',')}{more}"


def _rows_lines(results: pl.DataFrame | None, rows: list[dict], test: str) -> pl.DataFrame:
    found = [_lines(results, r, test) for r in rows]
    found = [f for f in found if f.height]
    return pl.concat(found) if found else pl.DataFrame()


def _column_finding(res, tab: pl.DataFrame, test: str, heading: str, results: pl.DataFrame | None = None) -> None:
    """The range of one column over the runs it can rank (each value linked to its line); the flagged values named
    apart, with why."""
    col = tab.filter(pl.col(test).is_not_null() & pl.col(f"{test}_flag").is_null())
    flagged = tab.filter(pl.col(test).is_not_null() & pl.col(f"{test}_flag").is_not_null())
    fast = tab.filter(pl.col(f"{test}_too_fast").fill_null(False)).height
    aside = (
        "; not ranked: "
        + "; ".join(
            f"{_value(r[test], ',')} ({r['label']}: {_FLAG_WORDS[r[f'{test}_flag']]})"
            for r in flagged.iter_rows(named=True)
        )
        if flagged.height
        else ""
    )
    setups = bonnie_repeats.ranked(col, test)
    if len(setups) > 1:
        worst, best = min(setups, key=lambda e: e["value"]), max(setups, key=lambda e: e["value"])
        low, high = _value(worst["value"], ","), _value(best["value"], ",")
        res.findings.append(
            Finding(
                f"{test} ({heading}, {unit(test)}): {low} ({_ranked_name(worst)}) to {high} ({_ranked_name(best)})"
                + (f"; {fast} run(s) too fast to measure" if fast else "")
                + aside
                + ".",
                [
                    cite(low, _rows_lines(results, worst["rows"], test)),
                    cite(high, _rows_lines(results, best["rows"], test)),
                ]
                + [cite(_value(r[test], ","), _lines(results, r, test)) for r in flagged.iter_rows(named=True)],
            )
        )
    elif flagged.height:
        res.findings.append(
            Finding(
                f"{test} ({heading}, {unit(test)}): {aside[2:]}.",
                [cite(_value(r[test], ","), _lines(results, r, test)) for r in flagged.iter_rows(named=True)],
            )
        )


def _repeats(res, tab: pl.DataFrame, spreads: pl.DataFrame) -> None:
    """Per setup with two or more runs: that they are repeats, and each test's mean and run-to-run spread (sample
    sd) over the runs that measured it (``bonnie_repeats.spreads``)."""
    for g in bonnie_repeats.groups(tab):
        first = g.row(0, named=True)
        size = f"a {prose.size(first['size_bytes'])} file" if first["size_bytes"] else "no file size"
        files = f", {first['num_files']:,} small files" if first["num_files"] else ""
        parts = []
        for r in spreads.filter((pl.col("setup_key") == first["setup_key"]) & (pl.col("n") >= 2)).iter_rows(named=True):
            t, mean, sd = r["test"], r["mean"], r["sd"]
            cv = f" ({100 * sd / mean:.0f} %)" if mean else ""
            more = f", {r['too_fast']} more too fast to measure" if r["too_fast"] else ""
            parts.append(f"{t} {_value(mean, ',')} ± {_value(sd, ',')} {unit(t)}{cv}{more}")
        res.findings.append(
            f"{first['setup']}: {g.height} runs of one setup ({', '.join(g['label'].to_list())}; {size}{files}, "
            f"machine {first['machine']}): repeats, ranked by their mean and never against each other. Mean ± "
            "sample sd over the runs that measured each test (% of the mean): "
            + ("; ".join(parts) if parts else "no test measured twice")
            + "."
        )


@dataclass
class BonnieNumbers:
    results: pl.DataFrame  # every preferred run's results (RUNS_SQL)
    table: pl.DataFrame  # one row per run, flagged (table + flags)
    file_ids: list[int]
    sizes: list[int]  # the distinct file sizes of the runs, bytes
    fastest_block_write: dict | None  # the table row with the highest unflagged block write
    suspect_rates: int  # file-operation rates printed as whole numbers with no CSV line to check them
    spreads: pl.DataFrame = field(default_factory=pl.DataFrame)  # bonnie_repeats.spreads: repeats' mean and sd


def query(con, sel: Selection) -> pl.DataFrame:
    where, params = sel.sql("f")
    setup = ", ".join(f"f.{c}" for c in SETUP_COLUMNS)
    return frame(con, RUNS_SQL.format(where=where, setup=setup), params)


def compute(results: pl.DataFrame) -> BonnieNumbers:
    tab = bonnie_repeats.with_setups(flags(table(results), small_files(results)), [t for _, t, _ in COLUMNS])
    blocks = tab.filter(pl.col("put_block").is_not_null() & pl.col("put_block_flag").is_null())
    # a repeated setup competes by its mean, named as such
    blocks = (
        blocks.with_columns(_n=pl.len().over("setup_key"))
        .unique("setup_key", keep="first", maintain_order=True)
        .with_columns(
            put_block=pl.col("put_block_rank"),
            label=pl.when(pl.col("_n") > 1)
            .then(pl.format("{} (mean of {} runs)", "setup", "_n"))
            .otherwise(pl.col("label")),
        )
    )
    return BonnieNumbers(
        results=results,
        table=tab,
        file_ids=sorted(set(results["file_id"].to_list())),
        sizes=sorted({s for s in tab["size_bytes"].to_list() if s}),
        fastest_block_write=blocks.sort("put_block", descending=True).row(0, named=True) if blocks.height else None,
        suspect_rates=results.filter(pl.col("suspect").fill_null(False)).height,
        spreads=bonnie_repeats.spreads(tab, [t for _, t, _ in COLUMNS]),
    )


def findings(res: Result, n: BonnieNumbers, sel: Selection) -> None:
    """Sentences, headline and verdict from the numbers only."""
    tab = n.table
    res.findings.append(f"{tab.height} bonnie++ run(s) from {len(n.file_ids)} file(s) for {sel.describe()}.")
    if len(n.sizes) > 1:
        res.findings.append(
            "The runs use different file sizes ("
            + ", ".join(prose.size(s) for s in n.sizes)
            + "): a size below twice the RAM can be answered from cache, so compare like sizes."
        )
    _repeats(res, tab, n.spreads)
    for _, test, heading in COLUMNS:
        _column_finding(res, tab, test, heading, n.results)
    res.headline["bonnie++ runs"] = str(tab.height)
    best = n.fastest_block_write
    if best is not None:
        res.headline["fastest block write"] = f"{best['label']}: {best['put_block']:.1f} MiB/s"
        res.verdict = (
            f"{tab.height} bonnie++ run(s) side by side; fastest block write {best['label']} at "
            f"{best['put_block']:.1f} MiB/s (measured, one run each unless repeated; values read from memory, cache "
            "or flagged unreliable are not ranked)."
        )
    _size_findings(res, n.results, tab)
    if n.suspect_rates:
        res.findings.append(
            f"{n.suspect_rates} file-operation rate(s) printed as whole numbers without a CSV line to "
            "check them against: shown as printed, marked unreliable and not ranked (bonnie++ 1.98+ prints them "
            "through an integer conversion in its text table)."
        )


def analyse(con, sel: Selection) -> Result:
    """Notebook 09 on any selection: every preferred bonnie++ run as one row of a bon_csv2html table.
    query -> compute -> findings."""
    res = Result.start(con, sel, measures.per_file(con, sel))
    results = query(con, sel)
    if results.is_empty():
        res.missing.append(
            f"no bonnie++ runs for {sel.describe()}: run bonnie++ (e.g. `storagelab lab bonnie --target "
            "DIR`), save its output under data/raw/<study>/ and label it"
        )
        return res
    n = compute(results)
    res.frames.update(results=n.results, table=n.table)
    res.file_ids = n.file_ids
    findings(res, n, sel)
    return res
