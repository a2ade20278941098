"""Notebook 06's other witnesses of a transfer: the pv, dd and ``zfs receive -v`` lines of the selection (each
transfer's amount and time as the tool that printed them saw it) and ``zfs send -v``'s headers (the stream's
snapshot). query (SQL) -> compute (pure: which mbuffer run each line belongs to, ``stream_pairs``; where they
disagree; each run's source) -> findings (sentences from those numbers). Grammar: docs/formats/transfers.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from . import prose, stream_pairs
from .measures import _q
from .result import Finding, cite
from .selection import Selection

_FILE = "f.path, f.sha256, coalesce(f.label, f.path) AS label, f.host, f.command, f.mtime_ns, t.file_id"
# each tool's end-of-run line: amount (bytes), time (s), printed rate (bytes/s), the time's resolution (s)
_LINES = f"""
WITH sel AS (SELECT * FROM files f WHERE {{where}})
SELECT 'pv' AS tool, {_FILE}, t.line_start, t.line_end, t.bytes, t.elapsed_ns / 1e9 AS seconds,
       coalesce(t.average_rate_bytes_per_s, t.rate_bytes_per_s) AS printed_rate, 1.0::DOUBLE AS resolution_s,
       NULL::VARCHAR AS snapshot, NULL::VARCHAR AS kind
FROM pv_updates t JOIN sel f USING (file_id) WHERE t.is_last AND t.bytes IS NOT NULL
UNION ALL
SELECT 'dd', {_FILE}, t.line_start, t.line_end, t.bytes, t.duration_ns / 1e9, t.rate_bytes_per_s, 0.0::DOUBLE, NULL, NULL
FROM dd_transfers t JOIN sel f USING (file_id) WHERE NOT t.progress AND t.bytes IS NOT NULL
UNION ALL
SELECT 'zfs receive', {_FILE}, t.line_start, t.line_end, t.bytes, t.duration_ns / 1e9, t.rate_bytes_per_s,
       CASE WHEN t.whole_seconds THEN 1.0::DOUBLE ELSE 0.01::DOUBLE END, t.snapshot, t.kind
FROM zfs_receives t JOIN sel f USING (file_id) WHERE NOT t.dry_run AND t.bytes IS NOT NULL
ORDER BY path, line_start"""
# zfs send -v's stream headers, and (kind 'progress') each snapshot its progress lines name, at its first line
_HEADERS = f"""
WITH sel AS (SELECT * FROM files f WHERE {{where}})
SELECT {_FILE}, t.line_start, t.line_end, t.kind, t.from_snapshot, t.snapshot, t.estimated_bytes
FROM zfs_send_streams t JOIN sel f USING (file_id) WHERE t.kind <> 'total'
UNION ALL
SELECT {_FILE}, min(t.line_start), min(t.line_end), 'progress', NULL, t.snapshot, NULL
FROM zfs_send_progress t JOIN sel f USING (file_id) GROUP BY ALL
ORDER BY path, line_start"""


@dataclass
class ToolFrames:
    lines: pl.DataFrame  # one end-of-run line per pv/dd/zfs receive transfer (_LINES)
    headers: pl.DataFrame  # zfs send -v stream headers (_HEADERS)


def query(con, sel: Selection) -> ToolFrames:
    return ToolFrames(_q(con, sel, _LINES), _q(con, sel, _HEADERS))


def header_source(h: dict) -> str:
    """The stream a ``zfs send -v`` header (or progress line) names, as ``transport_sources`` writes a source."""
    if h["kind"] == "incremental":
        return f"zfs send -i {h['from_snapshot']} {h['snapshot']}"
    return f"zfs send {h['snapshot']}"


def _sources(lines: list[dict], headers: list[dict]) -> list[tuple[str | None, str | None]]:
    """(source, where from) of each tool line: a zfs send -v header in its file or in a file of the same command
    label (the one header, or the one naming the snapshot it received); else its own ``receiving ... stream of``."""
    out: list[tuple[str | None, str | None]] = []
    for x in lines:
        mine = [
            h
            for h in headers
            if h["file_id"] == x["file_id"] or (x.get("command") and h.get("command") == x["command"])
        ]
        heads = [h for h in mine if h["kind"] != "progress"] or mine  # a header, else the progress lines' snapshot
        named = [h for h in heads if x.get("snapshot") and h["snapshot"] == x["snapshot"]] or heads
        if len(named) == 1:
            how = "zfs send -v header" if named[0]["kind"] != "progress" else "zfs send -v progress"
            out.append((header_source(named[0]), how))
        elif x.get("snapshot"):
            kind = "" if x.get("kind") != "incremental" else "(incremental) "
            out.append((f"zfs send {kind}{x['snapshot']}", "zfs receive -v"))
        else:
            out.append((None, None))
    return out


def _verdict(x: dict, m: dict) -> tuple[bool, bool]:
    """(amounts disagree, times disagree) of a tool line ``x`` and the mbuffer run ``m`` of its pipeline: amounts
    beyond ``TOLERANCE``; times whose ranges (the printed figure and its resolution; mbuffer's 0.1 s) do not meet."""
    amount = not stream_pairs.same_amount(x["bytes"], m["resolved_bytes"])
    if x["seconds"] is None or m["seconds"] is None:
        return amount, False
    s, res = x["seconds"], x["resolution_s"]
    # pv's timer counts whole seconds elapsed (the run took [t, t + 1)); zfs receive's whole seconds are a difference
    # of two wall-clock seconds (within 1 s of the figure)
    lo, hi = (s, s + 1.0) if x["tool"] == "pv" else (s - res, s + res)
    return amount, not (lo <= m["seconds"] + 0.05 and m["seconds"] - 0.05 <= hi)


def compute(frames: ToolFrames, rates: pl.DataFrame) -> pl.DataFrame:
    """One row per tool line: its own amount and time, its source, the mbuffer run(s) of its pipeline and how they
    were matched (``stream_pairs.line_candidates``), and whether it disagrees with that run (one run only)."""
    lines = frames.lines.to_dicts()
    runs = rates.to_dicts() if rates.height else []
    srcs = _sources(lines, frames.headers.to_dicts())
    out = []
    for x, (src, src_from) in zip(lines, srcs, strict=True):
        found, how = stream_pairs.line_candidates(x, runs)
        m = found[0] if len(found) == 1 else None
        amount_off, time_off = _verdict(x, m) if m else (False, False)
        out.append(
            {
                **x,
                "source": src,
                "source_from": src_from,
                "run": m["label"] if m else None,
                "matched_by": how,
                "candidates": [r["label"] for r in found],
                "run_bytes": m["resolved_bytes"] if m else None,
                "run_seconds": m["seconds"] if m else None,
                "run_rate": m["rate_bytes_per_s"] if m else None,
                "run_path": m["path"] if m else None,
                "run_line": m["line_start"] if m else None,
                "amount_disagrees": amount_off,
                "time_disagrees": time_off,
            }  # fmt: skip
        )
    return pl.DataFrame(out, infer_schema_length=None) if out else pl.DataFrame()


def run_sources(tools: pl.DataFrame, headers: pl.DataFrame, rates: pl.DataFrame) -> dict[str, tuple[str, str]]:
    """mbuffer run label -> (source, where from) for runs a zfs send -v header names: a header of the same command
    label, else the header of a tool line matched to the run. (A zfs receive -v line's ``stream of SNAP`` names the
    snapshot but not how it was sent, a stored stream read back included: it stays in that line's sentence.)"""
    out: dict[str, tuple[str, str]] = {}
    for r in rates.iter_rows(named=True):
        hs = [
            h
            for h in headers.iter_rows(named=True)
            if r.get("command") and h.get("command") == r["command"] and h["kind"] != "progress"
        ]
        if len(hs) == 1:
            out[r["label"]] = (header_source(hs[0]), "zfs send -v header")
    if tools.height:
        heard = tools.filter(pl.col("run").is_not_null() & (pl.col("source_from") == "zfs send -v header"))
        for x in heard.iter_rows(named=True):
            out.setdefault(x["run"], (x["source"], x["source_from"]))
    return out


def _what(x: dict) -> str:
    if x["seconds"] is None:
        return f"{prose.size(x['bytes'])} (no time printed)"
    if x["tool"] == "pv":
        t = f"{int(x['seconds'])} s on its timer (whole seconds: under {int(x['seconds']) + 1} s)"
    elif x["resolution_s"] >= 1:
        t = f"{x['seconds']:.0f} s (whole seconds: within 1 s of that)"
    else:
        t = f"{x['seconds']:.3g} s"
    return f"{prose.size(x['bytes'])} in {t}, {prose.rate(x['printed_rate'])}"


def findings(tools: pl.DataFrame) -> list[Finding]:
    """One sentence per tool line: what it measured, which run of the selection it belongs to and on what evidence,
    and a disagreement with that run's mbuffer figures said plainly."""
    out = []
    for x in tools.iter_rows(named=True) if tools.height else ():
        text = f"{x['label']} ({x['tool']}, line {x['line_end']}): {_what(x)}"
        if x["source"]:
            text += f"; stream `{x['source']}` (from its {x['source_from']} line)"
        cites = [cite(prose.size(x["bytes"]), x)]
        if x["run"] is None:
            text += (
                f". Several mbuffer runs could be its pipeline's ({prose.listing(x['candidates'])}): not matched"
                if x["candidates"]
                else ". No mbuffer run of the selection is of its pipeline"
            )
        else:
            text += ". " + _match_sentence(x)
            cites.append(cite(prose.size(x["run_bytes"]), {"path": x["run_path"], "line_start": x["run_line"],
                                                            "line_end": x["run_line"]}))  # fmt: skip
        out.append(Finding(text + ".", cites))
    return out


def _match_sentence(x: dict) -> str:
    why = (
        "the same command label"
        if x["matched_by"] == "command"
        else "the same amount within 1 % and overlapping times by the files' modification times (copies that reset "
        "them void this), no other run matching"
    )
    run = f"{prose.size(x['run_bytes'])} in {x['run_seconds']:.1f} s, {prose.rate(x['run_rate'])}"
    head = f"Its pipeline's mbuffer run is {x['run']} ({why}): {run}"
    off = [w for w, bad in (("amount", x["amount_disagrees"]), ("time", x["time_disagrees"])) if bad]
    if not off:
        return head + "; the two agree within their printed precision"
    return (
        f"{head}. **They disagree on the {' and the '.join(off)}** for the same stream: two tools at two places of "
        "one pipeline; the data show that their figures differ, not which one is the transfer's nor why"
    )
