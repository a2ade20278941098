"""The ARC hit ratio of each fio run, measured during the run where the logs allow it, and what it is.

**Which ARC log belongs to which run** (one rule, from the manifest's labels, never from file names): an ARC log
(``arcstat``, ``cat /proc/spl/kstat/zfs/arcstats``, ``sysctl kstat.zfs.misc.arcstats``, ``arc_summary``) belongs to
the fio output of the same ``study``, the same ``host`` (both unlabelled counts as the same) and the same ``label``.
A label that more than one fio output carries ties the log to none of them (it is named as ambiguous); so does a
log without a label. A run's ratio covers every reading run of its output (reads and mixed runs; a write's
bandwidth is not answered by the ARC's read hits, so writes get none).

**What is measured**, best first:

a. ``arcstat`` output tied to the run: its interval rows, the first left out (arcstat prints its first row from
   counters taken since boot: ``snap_stats`` with an empty ``prev``, OpenZFS 2.3 ``cmd/arcstat``; the Solaris
   arcstat.pl the same, 985M reads in its Thumper output). *Hits and misses summed* where the rows give counts
   (``hits``, else ``read`` - ``miss`` - ``iohs``) over ``read``: Σhits / Σread; else *hit% weighted by reads*
   (``hit%``, or 100 - ``miss%`` - ``ioh%``): Σ(read x hit%) / Σread (hit% is printed whole, so ±0.5 points).
   arcstat's rates are per second of one fixed interval, so sums over the rows are counts over the run up to that
   interval, which cancels in the ratio. One arcstat output per run: two tied to one run are refused as ambiguous.
b. Two or more exact snapshots (kstat or sysctl) tied to the run: the first and the last as Δhits / (Δhits +
   Δiohits + Δmisses) (OpenZFS 2.2+ counts I/O hits, reads that found their block already being read, apart from
   hits and misses; arcstat's ``read`` includes them). Their order: the ``phase`` label (``before`` / ``after``)
   where given, else the counters' own (they only grow within one boot). A pair whose counters went down, or whose
   counter sets differ (``iohits`` in one only: two ZFS releases), is not one machine's boot and is refused.
c. One snapshot (or only ``arc_summary``, whose counts are rounded: a difference of them is no count): the ratio
   since boot, hits / (hits + iohits + misses). It is **not** the run's, is reported as such, and never sets a flag.

``with_arc`` adds ``arc_hit_ratio`` (a or b, else None), ``arc_source`` ("arcstat, 60 samples, hits and misses
summed"), ``arc_since_boot`` (c) and ``arc_note`` (why a log tied to the run gave no ratio) to ``fio_runs.runs``;
``design.check`` flags a run whose ``arc_hit_ratio`` is at least ``ARC_HIT_FLAG``. ``notes`` and ``missing``
give the sentences: what the ARC logs say beyond the flag, and for ZFS reads without a ratio during the run the
exact command that would measure it.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

import polars as pl

from .db import frame
from .selection import Selection

# an ARC hit ratio at or above this: the ARC answered most reads from RAM (``design.check`` flags the run)
ARC_HIT_FLAG = 0.5

ARCSTAT_COMMAND = "arcstat -f time,read,hit%,miss%,arcsz,c 1 > arcstat.txt"
KSTAT_COMMAND = "cat /proc/spl/kstat/zfs/arcstats"
SYSCTL_COMMAND = "sysctl kstat.zfs.misc.arcstats"
READING = ("read", "mixed")  # the directions whose bandwidth the ARC's read hits can answer
COLUMNS = {"arc_hit_ratio": pl.Float64, "arc_source": pl.String, "arc_since_boot": pl.Float64, "arc_note": pl.String}
_EXACT_SNAPSHOTS = ("arcstats-kstat", "arcstats-sysctl")
_ARCSTAT_FIELDS = ("read", "hits", "miss", "iohs", "hit%", "miss%", "ioh%")


@dataclass(frozen=True)
class ArcRatio:
    """What the ARC logs of one fio output say: the hit ratio during the run and how it was measured, the ratio
    since boot of a single snapshot, or why the logs tied to it give neither."""

    ratio: float | None = None
    source: str | None = None
    since_boot: float | None = None
    note: str | None = None


def pct(ratio: float) -> str:
    """'97 %', '99.9 %', '100 %': three significant digits."""
    return f"{100 * ratio:.3g} %"


LOGS_SQL = """
SELECT a.file_id, a.path, a.format, a.study, a.host, a.label, a.phase,
       list(DISTINCT f.file_id ORDER BY f.file_id) FILTER (WHERE f.file_id IS NOT NULL) AS fio_files
FROM files a
LEFT JOIN (SELECT DISTINCT ff.file_id, ff.study, ff.host, ff.label FROM files ff JOIN fio_groups g USING (file_id)
           WHERE ff.duplicate_of IS NULL AND ff.label IS NOT NULL) f
       ON f.label = a.label AND f.study IS NOT DISTINCT FROM a.study AND f.host IS NOT DISTINCT FROM a.host
WHERE a.tool = 'arcstats' AND {where}
GROUP BY ALL ORDER BY a.file_id
"""


def _why_not_tied(r: dict) -> str | None:
    n = len(r["fio_files"] or [])
    if not r["label"]:
        return f"{r['path']} has no label: give it the label of the fio run it was taken during"
    if n == 0:
        return f"{r['path']}: no fio output of study {r['study']}, host {r['host']} is labelled {r['label']!r}"
    if n > 1:
        return f"{r['path']}: {n} fio outputs are labelled {r['label']!r}; give each run its own label"
    return None


def logs(con, sel: Selection | None = None) -> pl.DataFrame:
    """Every ARC log (of the selection) with its labels and ``fio_files``: the fio outputs its labels tie it to
    (one, or it is not used), and ``tie``: None when tied, else why not."""
    where, params = (sel or Selection()).sql("a")
    df = frame(con, LOGS_SQL.format(where=where), params)
    return df.with_columns(tie=pl.Series([_why_not_tied(r) for r in df.iter_rows(named=True)], dtype=pl.String))


def untied(con, sel: Selection) -> list[str]:
    """A line per ARC log of the selection that its labels tie to no single fio output, saying why."""
    return [f"ARC log not used: {t}" for t in logs(con, sel)["tie"].drop_nulls()]


def _in(ids: list[int]) -> str:
    return ", ".join(str(int(i)) for i in ids) or "NULL"


def _every(values: list[float | None]) -> list[float] | None:
    """The values, or None when any of them is missing."""
    known = [v for v in values if v is not None]
    return known if len(known) == len(values) else None


def arcstat_ratio(rows: pl.DataFrame, method: str | None = None) -> tuple[float | None, str]:
    """Σhits / Σreads of arcstat rows (one per sample: columns of ``_ARCSTAT_FIELDS``, absent or null where the
    output has no such column) and how: 'hits and misses summed' or 'hit% weighted by reads'; (None, why) where
    the columns give neither. ``method`` forces one ('counts' or 'pct')."""
    col: dict[str, list[Any]] = {
        c: rows[c].to_list() if c in rows.columns else [None] * rows.height for c in _ARCSTAT_FIELDS
    }
    reads: list[float | None] = []
    counted: list[float | None] = []
    weighted: list[float | None] = []
    for i in range(rows.height):
        read, hits, miss, iohs = (col[c][i] for c in ("read", "hits", "miss", "iohs"))
        if read is None and hits is not None and miss is not None:
            read = hits + miss + (iohs or 0)
        reads.append(read)
        if hits is None and read is not None and miss is not None:
            hits = read - miss - (iohs or 0)
        counted.append(hits)
        hit_pct = col["hit%"][i]
        if hit_pct is None and col["miss%"][i] is not None:
            hit_pct = 100 - col["miss%"][i] - (col["ioh%"][i] or 0)
        weighted.append(None if read is None or hit_pct is None else read * hit_pct / 100)
    if not rows.height:
        return None, "arcstat printed no interval after its first (since boot) row"
    all_reads = _every(reads)
    for name, hits in (("counts", _every(counted)), ("pct", _every(weighted))):
        if method in (None, name) and hits is not None and all_reads is not None:
            if not sum(all_reads):
                return None, "the ARC had no reads during the run"
            how = "hits and misses summed" if name == "counts" else "hit% weighted by reads"
            return sum(hits) / sum(all_reads), how
    return None, f"arcstat without its read and hit or miss columns: run `{ARCSTAT_COMMAND}`"


def _arcstat(con, ids: list[int]) -> dict[int, ArcRatio]:
    """The ratio of each arcstat output (file id), over its rows after the first."""
    long = frame(
        con,
        f"SELECT file_id, sample, field, value, exact FROM arcstat_samples WHERE file_id IN ({_in(ids)}) "
        "AND sample > 0",
    )
    out = {}
    for fid in ids:
        mine = long.filter(pl.col("file_id") == fid)
        wide = (
            mine.pivot("field", index="sample", values="value").sort("sample")
            if mine.height
            else pl.DataFrame({"sample": []})
        )
        ratio, how = arcstat_ratio(wide)
        if ratio is None:
            out[fid] = ArcRatio(note=how)
            continue
        used = mine.filter(pl.col("field").is_in(_ARCSTAT_FIELDS))
        rounded = ", K/M-rounded rates" if not used["exact"].all() else ""
        out[fid] = ArcRatio(ratio=ratio, source=f"arcstat, {wide.height} samples, {how}{rounded}")
    return out


def _accesses(c: dict) -> float:
    return c["hits"] + c["misses"] + (c.get("iohits") or 0)


def _snapshot_counters(con, ids: list[int]) -> dict[int, dict]:
    df = frame(
        con,
        f"SELECT file_id, name, value FROM arc_stats WHERE file_id IN ({_in(ids)}) "
        "AND name IN ('hits', 'misses', 'iohits')",
    )
    out: dict[int, dict] = {}
    for r in df.iter_rows(named=True):
        out.setdefault(r["file_id"], {})[r["name"]] = r["value"]
    return {k: v for k, v in out.items() if "hits" in v and "misses" in v}


def _ordered(snaps: list[dict]) -> tuple[list[dict] | None, str | None]:
    """Snapshots in time order (phase before/after, else the counters'), or (None, why they are not one boot's)."""
    rank = {"before": 0, "after": 2}
    order = sorted(snaps, key=lambda s: (rank.get((s["phase"] or "").strip().lower(), 1), _accesses(s["counters"])))
    if len({"iohits" in s["counters"] for s in order}) > 1:
        return None, "its arcstats snapshots come from two ZFS releases (iohits in one only): not one machine's boot"
    for a, b in itertools.pairwise(order):
        if any(b["counters"][k] < a["counters"][k] for k in a["counters"]):
            return None, (
                f"its arcstats counters went down from {a['path']} to {b['path']}: a reboot between them, or "
                "the before/after labels swapped"
            )
    return order, None


def _snapshots(con, logs_of_run: list[dict]) -> ArcRatio:
    """A pair (or more) of exact snapshots: the run's ratio; one snapshot (or arc_summary): since boot."""
    counters = _snapshot_counters(con, [s["file_id"] for s in logs_of_run])
    snaps = [{**s, "counters": counters[s["file_id"]]} for s in logs_of_run if s["file_id"] in counters]
    exact = [s for s in snaps if s["format"] in _EXACT_SNAPSHOTS]
    note = None
    if len(exact) >= 2:
        order, note = _ordered(exact)
        if order:
            first, last = order[0]["counters"], order[-1]["counters"]
            delta = {k: last[k] - first[k] for k in first}
            if _accesses(delta):
                return ArcRatio(
                    ratio=delta["hits"] / _accesses(delta),
                    source=f"arcstats before and after the run, {_accesses(delta):,.0f} accesses",
                )
            note = "its arcstats snapshots show no ARC access between them"
    if not snaps:
        return ArcRatio(note=note or "its ARC logs hold no hits and misses counters")
    last = max(snaps, key=lambda s: _accesses(s["counters"]))
    c = last["counters"]
    rounded = ", rounded" if last["format"] == "arc_summary" else ""
    return ArcRatio(
        since_boot=c["hits"] / _accesses(c) if _accesses(c) else None,
        source=f"one {last['format']} snapshot{rounded}: since boot, not the run's",
        note=note,
    )


def _of_run(con, tied: list[dict], from_arcstat: dict[int, ArcRatio]) -> ArcRatio:
    """What the ARC logs tied to one fio output say: arcstat first, then a pair of snapshots, else since boot."""
    stats = [r for r in tied if r["format"] == "arcstat"]
    snaps = _snapshots(con, [r for r in tied if r["format"] != "arcstat"]) if len(stats) < len(tied) else ArcRatio()
    if len(stats) > 1:
        during = ArcRatio(note=f"{len(stats)} arcstat outputs are labelled as this run: give each run its own label")
    else:
        during = from_arcstat[stats[0]["file_id"]] if stats else ArcRatio()
    for measured in (during, snaps):
        if measured.ratio is not None:
            return measured
    why = "; ".join(n for n in (during.note, snaps.note) if n) or None
    return ArcRatio(since_boot=snaps.since_boot, source=snaps.source, note=why)


def ratios(con) -> dict[int, ArcRatio]:
    """fio output file id -> what its tied ARC logs say (module doc); outputs without a tied log are absent."""
    stored = con.execute("SELECT count(*) FROM files WHERE tool = 'arcstats'").fetchall()  # whole: no result left open
    if not stored[0][0]:
        return {}
    by_run: dict[int, list[dict]] = {}
    for r in logs(con).filter(pl.col("tie").is_null()).iter_rows(named=True):
        by_run.setdefault(r["fio_files"][0], []).append(r)
    stat_ids = [r["file_id"] for rs in by_run.values() for r in rs if r["format"] == "arcstat"]
    from_arcstat = _arcstat(con, stat_ids) if stat_ids else {}
    return {run: _of_run(con, tied, from_arcstat) for run, tied in by_run.items()}


def with_arc(con, runs: pl.DataFrame) -> pl.DataFrame:
    """``runs`` (rows of ``fio_runs.runs``) with ``COLUMNS``: the ARC hit ratio during each reading run, its
    source, the since-boot ratio of a single snapshot and why a tied log gave nothing (None without ARC logs)."""
    found = ratios(con) if not runs.is_empty() else {}
    rows = (
        [
            found.get(fid) if direction in READING else None
            for fid, direction in zip(runs["file_id"], runs["direction"], strict=True)
        ]
        if found
        else [None] * runs.height
    )
    return runs.with_columns(
        pl.Series("arc_hit_ratio", [r and r.ratio for r in rows], dtype=pl.Float64),
        pl.Series("arc_source", [r and r.source for r in rows], dtype=pl.String),
        pl.Series("arc_since_boot", [r and r.since_boot for r in rows], dtype=pl.Float64),
        pl.Series("arc_note", [r and r.note for r in rows], dtype=pl.String),
    )


def on_zfs(row: dict) -> bool:
    """The run is on ZFS: its stack label names zfs, or it has a zfs_version label."""
    return "zfs" in (row.get("stack") or "").lower() or bool(row.get("zfs_version"))


def _names(labels: list[str], most: int = 4) -> str:
    shown = ", ".join(labels[:most])
    return shown + (f" and {len(labels) - most} more" if len(labels) > most else "")


def notes(df: pl.DataFrame, label: str = "label") -> list[str]:
    """Sentences for reading runs whose ARC logs say something the flag does not: a ratio below the flag, a
    since-boot ratio (not the run's), or why a log tied to the run gave no ratio."""
    out = []
    for r in df.iter_rows(named=True) if "arc_source" in df.columns else ():
        name = str(r[label])
        if r["arc_hit_ratio"] is not None and r["arc_hit_ratio"] < ARC_HIT_FLAG:
            out.append(
                f"{name}: the ARC answered {pct(r['arc_hit_ratio'])} of reads during the run ({r['arc_source']})."
            )
        elif r["arc_since_boot"] is not None:
            out.append(
                f"{name}: the ARC's hit ratio since boot was {pct(r['arc_since_boot'])} ({r['arc_source']}): it says "
                "nothing of this run; a second snapshot after the run would."
            )
        if r["arc_hit_ratio"] is None and r["arc_note"]:
            out.append(f"{name}: no ARC hit ratio during the run: {r['arc_note']}.")
    return out


def missing(df: pl.DataFrame, label: str = "label") -> list[str]:
    """One line naming the reading runs on ZFS with no ARC hit ratio measured during them, and the exact commands
    that would measure it; [] when every such run has one (or none is on ZFS)."""
    if df.is_empty() or "direction" not in df.columns:
        return []
    lacking = []
    for r in df.iter_rows(named=True):
        if r["direction"] in READING and on_zfs(r) and r.get("arc_hit_ratio") is None:
            if str(r[label]) not in lacking:
                lacking.append(str(r[label]))
    if not lacking:
        return []
    return [
        f"no ARC hit ratio measured during {_names(lacking)} (ZFS reads, which the ARC may have answered from RAM): "
        f"run `{ARCSTAT_COMMAND}` during the run, or `{KSTAT_COMMAND}` before and after it (FreeBSD: "
        f"`{SYSCTL_COMMAND}`), and label the output with the run's label (and its host; phase before/after for "
        "snapshots)"
    ]


ARC_MAX_SQL = """
SELECT a.file_id, f.path, f.sha256, f.study, f.host, a.value AS c_max_bytes, a.line_start, a.line_end
FROM arc_stats a JOIN files f USING (file_id) WHERE {where} AND a.name = 'c_max' ORDER BY f.path, a.line_start
"""
# the columns ``with_arc_max`` adds to ``fio_runs.runs``: the ARC maximum that bounds each run's cache
MAX_COLUMNS = {"arc_max_bytes": pl.Float64, "arc_max_high_bytes": pl.Float64, "arc_max_lines": pl.String}


def arc_max(con, sel: Selection) -> pl.DataFrame:
    """The ARC maximum (``c_max``: arcstats, sysctl kstat, arc_summary's 'Max size') of every ARC statistics output
    of the machines ``sel`` names (its study and host: an ARC belongs to a machine, not to a pool or a stack label):
    path, study, host, c_max_bytes and its line. The size a working set is judged against where ZFS caches it (a
    FUSE or tuned ARC far smaller than the RAM)."""
    where, params = Selection(study=sel.study, host=sel.host).sql("f")
    return frame(con, ARC_MAX_SQL.format(where=where), params)


def arc_max_of(maxima: pl.DataFrame, study: str | None, host: str | None) -> pl.DataFrame:
    """The ``arc_max`` rows that bound a run of ``study`` and ``host``: the outputs of the same study and host
    (both unlabelled count as the same); for a run with a host, else the study's outputs without one; for a run
    without, else the study's outputs when they all come from one host. Empty when none is the run's machine. Two
    different c_max values among them: the ARC maximum changed over time (both are kept: ``bound``)."""
    if maxima.is_empty():
        return maxima
    mine = maxima.filter(pl.col("study").eq_missing(study))
    own = mine.filter(pl.col("host").eq_missing(host))
    if own.height:
        return own
    if host is not None:
        return mine.filter(pl.col("host").is_null())
    return mine if mine["host"].n_unique() == 1 else mine.clear()


def bound(rows: pl.DataFrame) -> tuple[float | None, float | None, str | None]:
    """(lowest c_max, highest c_max, their lines as JSON) of ``arc_max_of``'s rows; (None, None, None) for none."""
    if rows.is_empty():
        return None, None, None
    keep = ("path", "sha256", "line_start", "line_end", "c_max_bytes")
    lines = rows.select(keep).unique(maintain_order=True).to_dicts()
    sizes = rows["c_max_bytes"].cast(pl.Float64).to_list()
    return min(sizes), max(sizes), json.dumps(lines)


def with_arc_max(con, sel: Selection, runs: pl.DataFrame) -> pl.DataFrame:
    """``runs`` (rows of ``fio_runs.runs``, with study and host) with ``MAX_COLUMNS``: the lowest and highest c_max
    of the ARC statistics of each run's machine (``arc_max_of``; equal where the machine has one value) and the
    lines they are printed on (JSON: path, sha256, line_start, line_end, c_max_bytes); None where there are none.
    ``design.check`` bounds a ZFS run's cache by them instead of the RAM."""
    maxima = arc_max(con, sel) if not runs.is_empty() else pl.DataFrame()
    if maxima.is_empty():
        return runs.with_columns(*(pl.lit(None, t).alias(c) for c, t in MAX_COLUMNS.items()))
    keys = runs.select("study", "host").unique(maintain_order=True)
    found = [(study, host, *bound(arc_max_of(maxima, study, host))) for study, host in keys.iter_rows()]
    table = pl.DataFrame(found, schema={"study": pl.String, "host": pl.String, **MAX_COLUMNS}, orient="row")
    return runs.drop([c for c in MAX_COLUMNS if c in runs.columns]).join(
        table, on=["study", "host"], how="left", nulls_equal=True
    )


def max_lines(row: dict) -> list[dict]:
    """The c_max lines of a run (``with_arc_max``'s ``arc_max_lines``): path, sha256, line_start, line_end,
    c_max_bytes each."""
    return json.loads(row["arc_max_lines"]) if row.get("arc_max_lines") else []
