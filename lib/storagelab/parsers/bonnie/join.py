"""Text rows and CSV lines of the same runs, joined by order and checked against each other."""

from __future__ import annotations

import math

from ...units import GiB, KiB, MiB
from .cells import FILE_TESTS, IO_TESTS, RATE_TESTS, Res, Run

# --- joining text and CSV --------------------------------------------------------------


def _tolerance(res: Res) -> float:
    """Half a unit of the text cell's last printed digit, in base units (+1 KiB: the CSV truncates)."""
    t = res.value_text
    factor = 1.0
    if res.test in RATE_TESTS:
        factor = {"k": KiB, "m": MiB, "g": GiB}.get(t[-1:].lower(), KiB)
        t = t.rstrip("kmgKMG")
    decimals = len(t.partition(".")[2])
    return 0.5 * 10.0**-decimals * factor + (KiB if res.test in RATE_TESTS else 0.0) + 1e-9


def _pair(text_runs: list[Run], csv_runs: list[Run], warnings: list[str]) -> None:
    if not text_runs or not csv_runs:
        return
    if len(text_runs) == len(csv_runs):
        pairs = list(zip(text_runs, csv_runs, strict=True))
    else:
        warnings.append(
            f"{len(text_runs)} text result rows but {len(csv_runs)} CSV lines: each text row joined "
            "with the next CSV line before the following table"
        )
        pairs, free = [], list(csv_runs)
        for k, t in enumerate(text_runs):
            limit = text_runs[k + 1].line_start if k + 1 < len(text_runs) else math.inf
            c = next((c for c in free if t.line_end < c.line_start < limit), None)
            if c:
                free.remove(c)
                pairs.append((t, c))
    for t, c in pairs:
        t.pair, c.pair = c, t
        _check_pair(t, c, warnings)


def _check_pair(t: Run, c: Run, warnings: list[str]) -> None:
    where = f"text line {t.line_start} / CSV line {c.line_start}"
    cname, tname = c.info["machine"], t.info["machine"]
    if tname and cname is not None:
        if not cname.startswith(tname):
            warnings.append(f"{where}: machine {tname!r} in the text, {cname!r} in the CSV")
        else:
            t.info["machine_truncated"] = len(cname) > len(tname)
    for key in (
        "size_bytes",
        "num_files_printed",
        "max_size_bytes",
        "min_size_bytes",
        "num_dirs",
        "link_mode",
        "concurrency",
        "seeks",
    ):
        a, b = t.info.get(key), c.info.get(key)
        if a is not None and b is not None and a != b:
            warnings.append(f"{where}: {key} {a} in the text, {b} in the CSV")
    if t.info["version"] and c.info["version"] and t.info["version"] != c.info["version"]:
        warnings.append(f"{where}: version {t.info['version']} in the text, {c.info['version']} in the CSV")
    # what only one side knows
    if c.info["chunk_bytes"] is None and c.info["size_bytes"]:
        c.info["chunk_bytes"] = t.info["chunk_bytes"]
    if c.info["version"] is None:
        c.info["version"] = t.info["version"]
    replaced = []
    for test in IO_TESTS + FILE_TESTS:
        a, b = t.results.get(test), c.results.get(test)
        if a is None or b is None:
            if a is not None or b is not None:
                warnings.append(f"{where}: {test} is in the {'text' if a else 'CSV'} only")
            continue
        if a.too_fast != b.too_fast:
            warnings.append(f"{where}: {test} {a.value_text!r} in the text, {b.value_text!r} in the CSV")
            continue
        if a.value is not None and b.value is not None:
            if test in FILE_TESTS and t.family == "1.98+":
                a.value, a.value_from, a.suspect = b.value, "csv", False
                replaced.append(test)
            elif abs(a.value - b.value) > _tolerance(a):
                warnings.append(
                    f"{where}: {test} {a.value_text!r} in the text, {b.value_text!r} in the CSV "
                    "(beyond the text's printed precision)"
                )
        if a.cpu != b.cpu:
            warnings.append(f"{where}: {test} CPU {a.cpu_text!r} in the text, {b.cpu_text!r} in the CSV")
        if a.latency_ns != b.latency_ns:
            warnings.append(f"{where}: {test} latency {a.latency_text!r} in the text, {b.latency_text!r} in the CSV")
    if replaced:
        warnings.append(
            f"{where}: text rates of {', '.join(replaced)} replaced by the CSV's "
            "(bonnie++ 1.98+ prints them wrongly in the table)"
        )
