"""fio's run status groups recomputed from the jobs' results (JSON and terse print no group lines)."""

from __future__ import annotations

from ... import units
from ...errors import ParseError
from ..base import Parsed
from .schema import DIRECTIONS


def add_derived_groups(
    parsed: Parsed, doc_index: int, results: list[tuple[int, str, dict, bool]], line_start: int, line_end: int
) -> None:
    """Recompute fio's run status groups (stat.c): per group and direction, io = sum of the jobs'
    bytes, bw = io * 1000 / longest runtime (integer, as fio does), min/max of the per-job bw.
    With unified_rw_reporting=both the MIXED line aggregates the group's read/write/trim lines.
    ``results`` holds (groupid, direction, fio_results row, io given in whole KiB); rows computed
    from KiB counts (terse, fio < 2.21 JSON) are not exact, since fio itself summed bytes.

    A group row's lines are those of its jobs' rows of its direction (a row's ``lines``, JSON: the direction
    objects), from the first one's first line to the last one's last; ``line_start``/``line_end`` where the
    rows have none (terse)."""
    groups: dict[tuple[int, str], dict] = {}
    exact = True
    for groupid, direction, row, in_kib in results:
        if (row["runtime_ns"] is None and row["io_bytes"]) or (row["io_bytes"] is None and row["runtime_ns"]):
            raise ParseError(  # reliability-35: a damaged "runtime" or "io_bytes" key left the job out of its group's
                f"a job's {direction} results hold "  # sum: the group's bytes and bw were stored halved, exit 0
                + ("bytes but no runtime" if row["runtime_ns"] is None else "a runtime but no bytes")
                + ": its group's totals cannot be computed",
                line=(row.get("lines") or (line_start, line_end))[0],
                expected='"runtime" and "io_bytes"',
            )
        runtime_ms = row["runtime_ns"] / 1e6 if row["runtime_ns"] else 0
        io_ = row["io_bytes"] or 0  # reliability-36: a runtime of 0.4 or 1e308 ms was a parser-bug (ZeroDivisionError,
        for what, v in (("runtime", runtime_ms), ("io_bytes", io_)):  # OverflowError); io 1.5 bytes summed as 1
            if not (0 <= v < 1e30 and v == int(v)):  # fio prints both as unsigned integers
                raise ParseError(
                    f"a job's {direction} {what} is {v!r}: its group's totals cannot be computed",
                    line=(row.get("lines") or (line_start, line_end))[0],
                    expected=f'"{what}": a whole number, not negative',
                )
        if not runtime_ms or row["io_bytes"] is None:
            continue
        exact = exact and not in_kib
        io = int(row["io_bytes"])
        bw = io * 1000 // int(runtime_ms)
        g = groups.setdefault((groupid, direction), {"io": 0, "bws": [], "runs": [], "lines": []})
        g["lines"].append(row.get("lines") or (line_start, line_end))
        g["io"] += io
        g["bws"].append(bw)
        g["runs"].append(int(runtime_ms))
    rows = {}
    for (groupid, direction), g in groups.items():
        rows[(groupid, direction)] = {
            "io": g["io"],
            "bw": g["io"] * 1000 // max(g["runs"]),
            "min": min(g["bws"]),
            "max": max(g["bws"]),
            "run_min": min(g["runs"]),
            "run_max": max(g["runs"]),
            "lines": (min(lo for lo, _ in g["lines"]), max(hi for _, hi in g["lines"])),
        }
    for groupid in sorted({gid for gid, _ in rows}):
        parts = [rows[(groupid, d)] for d in ("read", "write", "trim") if (groupid, d) in rows]
        if (groupid, "mixed") in rows and parts:  # unified_rw_reporting=both
            rows[(groupid, "mixed")] = {
                "io": sum(p["io"] for p in parts),
                "bw": sum(p["bw"] for p in parts),
                "min": min(p["min"] for p in parts),
                "max": max(p["max"] for p in parts),
                "run_min": min(p["run_min"] for p in parts),
                "run_max": max(p["run_max"] for p in parts),
                "lines": (
                    min(p["lines"][0] for p in (*parts, rows[(groupid, "mixed")])),
                    max(p["lines"][1] for p in (*parts, rows[(groupid, "mixed")])),
                ),
            }
    for (groupid, direction), g in sorted(rows.items(), key=lambda kv: (kv[0][0], DIRECTIONS.index(kv[0][1]))):
        parsed.add(
            "fio_groups",
            {
                "doc_index": doc_index,
                "groupid": groupid,
                "direction": direction,
                "bw_bytes_per_s": float(g["bw"]),
                "bw_min_bytes_per_s": float(g["min"]),
                "bw_max_bytes_per_s": float(g["max"]),
                "io_bytes": float(g["io"]),
                "run_min_ns": units.time_to_ns(g["run_min"], "ms"),
                "run_max_ns": units.time_to_ns(g["run_max"], "ms"),
                "derived": True,
                "exact": exact,
                "line_start": g["lines"][0],
                "line_end": g["lines"][1],
            },
        )
