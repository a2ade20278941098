"""fio ``--output-format=json`` / ``json+`` output -> the fio tables (log-formats.md B.1-B.8).

Tolerates what fio really prints: lines before the first ``{`` line (``note:`` lines, errors, a
normal-text part), several documents (``--status-interval``), bare ``nan``/``inf`` values,
duplicate ``"0.00"`` percentile keys (fio <= 3.3), and the 2.x layout (latencies in µs under
``slat``/``clat``/``lat``; ``io_bytes`` in KiB before fio 2.21). Rows carry the line span of
their job object (or document) in the raw file.
"""

from __future__ import annotations

import json as _json
import re
from typing import Any

from ... import units
from ..base import Parsed, ParseError, lines_of

TOOL = "fio"
DIRECTIONS = ("read", "write", "trim", "mixed", "sync")
_LAT_KINDS = ("slat", "clat", "lat")
_LAT_FAMILIES = (("latency_ns", 1.0), ("latency_us", 1e3), ("latency_ms", 1e6))
_DEPTHS = (("iodepth_level", "depth"), ("iodepth_submit", "submit"), ("iodepth_complete", "complete"))

# One pass over a document: strings (kept as they are), bare nan/inf (fio's %f), brackets, newlines.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![\w.])(-?)(nan|inf)\b|[{}\[\]]|\n', re.S)
_VERSION = re.compile(r"fio-(\d+)\.(\d+)(?:\.(\d+))?")
_WS = re.compile(r"[ \t\n\r]*").match  # JSON white space


def parse_json(text: str) -> Parsed:
    """Parse every JSON document of a fio output file (other parts are skipped)."""
    if not text.strip():
        raise ParseError("empty input", line=1, kind="empty", expected="fio JSON output")
    # a document starts on a line that is exactly '{' (after a live status line ending in '\r', if any)
    lines = lines_of(text)
    starts = [i for i, ln in enumerate(lines) if "{" in ln and ln.rsplit("\r", 1)[-1].strip() == "{"]
    if not starts:
        raise ParseError("no JSON document found", line=1,
                         expected="a line that is exactly '{' opening fio's JSON output")
    parsed = Parsed(tool=TOOL, format="fio-json")
    docs = []
    crlf = "\r\n" in text  # lines_of dropped the \r of each CRLF: then offsets from the text itself
    offsets = [0] + [m.end() for m in re.finditer("\n", text)] if crlf else None
    pos = line_at = offset_at = 0
    for start in starts:
        if crlf:
            offset_at = offsets[start]
        else:  # line i starts after the lengths of lines 0..i-1 plus their i newlines
            offset_at += sum(map(len, lines[line_at:start])) + start - line_at
            line_at = start
        brace = offset_at + len(lines[start].rstrip()) - 1
        if brace < pos:
            continue  # a '{' line inside the previous document
        doc = _Document(text, brace, start + 1, parsed.warnings)
        pos = doc.end_offset
        docs.append(doc)
    job_index = 0
    for doc_index, doc in enumerate(docs):
        is_final = doc_index == len(docs) - 1
        job_index = _add_document(parsed, doc, doc_index, is_final, job_index)
    parsed.tool_version = docs[-1].version_string
    if parsed.rows("fio_latency_bins"):
        parsed.format = "fio-json+"
    return parsed


class _Document:
    """One JSON document: decoded object plus the raw line spans of its job and disk objects."""

    def __init__(self, text: str, offset: int, first_line: int, warnings: list[str]):
        self.line_start = first_line
        self.duplicates: set[str] = set()
        self.nonfinite = 0
        decoder = _json.JSONDecoder(object_pairs_hook=self._pairs, parse_constant=self._constant, strict=False)
        if not self._fast(decoder, text, offset, first_line):
            self.duplicates.clear()
            self.nonfinite = 0
            self._tokens(decoder, text, offset, first_line)
        if not isinstance(self.obj, dict) or not isinstance(self.obj.get("jobs"), list):
            raise ParseError("JSON document has no \"jobs\" array", line=first_line, kind="invalid",
                             expected="a fio JSON report with \"fio version\" and \"jobs\"")
        if self.nonfinite:
            warnings.append(f"line {first_line}: {self.nonfinite} nan/inf value(s) stored as NULL")
        if self.duplicates:
            warnings.append(f"line {first_line}: duplicate JSON keys kept first value: "
                            + ", ".join(sorted(self.duplicates)))
        version = self.obj.get("fio version")
        self.version_string = version if isinstance(version, str) else None
        m = _VERSION.search(self.version_string or "")
        self.version = tuple(int(g) for g in m.groups() if g is not None) if m else None
        if self.version is None:
            warnings.append(f"line {first_line}: no \"fio version\"; io_bytes units inferred from the keys present")

    def _fast(self, decoder: _json.JSONDecoder, text: str, offset: int, first_line: int) -> bool:
        """The usual document, decoded by the C scanner: the top-level object and its arrays are
        walked here (for the line spans of their objects), every value below them is one scanner
        call. Anything that is not valid JSON (bare nan/inf, a cut or broken document) returns
        False and the token pass below does the work, with its error messages. Valid JSON has no
        bare nan/inf for the token pass to rewrite, so both give the same result."""
        scan, ws = decoder.scan_once, _WS
        obj: dict[str, Any] = {}
        ends: list[tuple[int, int]] = []  # offsets of '{' and '}' of each object in a top-level array
        try:
            i = ws(text, offset + 1).end()
            if text[i] == "}":
                end = i + 1
            while text[i] != "}":
                if text[i] != '"':
                    return False
                key, i = scan(text, i)
                i = ws(text, i).end()
                if text[i] != ":":
                    return False
                i = ws(text, i + 1).end()
                if text[i] == "[":
                    value, i = [], ws(text, i + 1).end()
                    while text[i] != "]":
                        item, j = scan(text, i)
                        if text[i] == "{":
                            ends.append((i, j - 1))
                        value.append(item)
                        i = ws(text, j).end()
                        if text[i] == ",":
                            i = ws(text, i + 1).end()
                            if text[i] == "]":
                                return False
                        elif text[i] != "]":
                            return False
                    i += 1
                else:
                    value, i = scan(text, i)
                if key in obj:
                    if key != "0.00":
                        self.duplicates.add(key)
                else:
                    obj[key] = value
                i = ws(text, i).end()
                if text[i] == ",":
                    i = ws(text, i + 1).end()
                    if text[i] == "}":
                        return False
                elif text[i] == "}":
                    end = i + 1
                else:
                    return False
        except (ValueError, StopIteration, IndexError, RecursionError):
            return False
        spans, line, at = [], first_line, offset
        for lo, hi in ends:
            line += text.count("\n", at, lo)
            opened = line
            line += text.count("\n", lo, hi)
            spans.append((opened, line))
            at = hi
        self.obj, self.spans, self.end_offset = obj, spans, end
        self.line_end = line + text.count("\n", at, end)
        return True

    def _tokens(self, decoder: _json.JSONDecoder, text: str, offset: int, first_line: int) -> None:
        """One regex pass over the document: line spans, bare nan/inf made JSON, then decoded."""
        pieces, spans, stack = [], [], []
        line, last, end = first_line, offset, None
        for m in _TOKENS.finditer(text, offset):
            tok = m.group(0)
            if tok == "\n":
                line += 1
            elif tok[0] == '"':
                line += tok.count("\n")
            elif m.group(2):
                pieces += [text[last:m.start()], "NaN" if m.group(2) == "nan" else m.group(1) + "Infinity"]
                last = m.end()
            elif tok in "{[":
                stack.append((tok, line))
            else:
                if not stack or {"}": "{", "]": "["}[tok] != stack[-1][0]:
                    raise ParseError(f"unbalanced '{tok}' in JSON document", line=line, kind="invalid",
                                     expected="well-formed JSON")
                opener, opened_at = stack.pop()
                if opener == "{" and len(stack) == 2 and stack[-1][0] == "[":
                    spans.append((opened_at, line))
                if not stack:
                    end = m.end()
                    break
        if end is None:
            raise ParseError("JSON document is cut short (unclosed '{')", line=line, kind="truncated",
                             expected=f"the '}}' closing the document opened on line {first_line}")
        pieces.append(text[last:end])
        self.end_offset, self.line_end, self.spans = end, line, spans
        try:
            self.obj = decoder.decode("".join(pieces))
        except _json.JSONDecodeError as e:
            raise ParseError(f"invalid JSON: {e.msg}", line=first_line + e.lineno - 1, kind="invalid",
                             expected="fio's JSON syntax") from None
        except RecursionError:
            raise ParseError("JSON nested too deeply", line=first_line, kind="invalid") from None

    def _pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        obj = {}
        for key, value in pairs:
            if key in obj:
                if key != "0.00":  # fio <= 3.3 pads percentile lists with "0.00": 0
                    self.duplicates.add(key)
                continue
            obj[key] = value
        return obj

    def _constant(self, name: str) -> None:
        self.nonfinite += 1
        return None

    def span(self, i: int) -> tuple[int, int]:
        return self.spans[i] if i < len(self.spans) else (self.line_start, self.line_end)


def _num(obj: dict, key: str, where: int, scale: float = 1.0) -> float | None:
    """A numeric field (None when missing or nan); anything else is a ParseError."""
    return _value(obj.get(key), key, where, scale)


def _value(value: Any, key: str, where: int, scale: float = 1.0) -> float | None:
    """The value of field ``key`` as a number times ``scale`` (see _num)."""
    if type(value) is int or type(value) is float:
        return value * scale
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"field {key!r} is not a number: {value!r}", line=where, kind="invalid",
                         expected="a number")
    return value * scale


def _int(obj: dict, key: str, where: int) -> int | None:
    value = _num(obj, key, where)
    return None if value is None else int(value)


def _dict(obj: dict, key: str, where: int) -> dict:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParseError(f"field {key!r} is not an object", line=where, kind="invalid",
                         expected="a JSON object")
    return value


def _io_in_kib(doc: _Document, ddir: dict) -> bool:
    """io_bytes held KiB before fio 2.21 (log-formats.md B.7); by version, else by the keys present."""
    if doc.version is not None:
        return doc.version < (2, 21)
    return "io_kbytes" not in ddir and "clat_ns" not in ddir


def _add_document(parsed: Parsed, doc: _Document, doc_index: int, is_final: bool, job_index: int) -> int:
    top = doc.obj
    where = doc.line_start
    global_opts = _dict(top, "global options", where)
    jobs = top["jobs"]
    group_sizes: dict[Any, int] = {}
    for job in jobs:
        if isinstance(job, dict):
            group_sizes[job.get("groupid")] = group_sizes.get(job.get("groupid"), 0) + 1
    group_results: list[tuple[int, str, dict, bool]] = []  # (groupid, direction, row, io in KiB)
    for i, job in enumerate(jobs):
        lo, hi = doc.span(i)
        if not isinstance(job, dict):
            raise ParseError("job entry is not an object", line=lo, kind="invalid", expected="a job object")
        if not isinstance(job.get("jobname"), str) or _int(job, "groupid", lo) is None:
            raise ParseError("job object without jobname/groupid", line=lo, kind="invalid",
                             expected='"jobname" and "groupid"')
        options = {**{k: str(v) for k, v in global_opts.items()},
                   **{k: str(v) for k, v in _dict(job, "job options", lo).items()}}
        kb_base = _kb_base(options, lo, parsed.warnings)
        numjobs = _option_int(options, ("numjobs",), kb_base, lo, parsed.warnings)
        groupid = _int(job, "groupid", lo)
        parsed.add("fio_jobs", {
            "job_index": job_index, "doc_index": doc_index, "is_final": is_final,
            "jobname": job["jobname"], "groupid": groupid,
            "jobs": _jobs_in_record(group_sizes[job.get("groupid")], numjobs),
            "error": _int(job, "error", lo), "pid": None,
            "report_time": top.get("time") if isinstance(top.get("time"), str) else None,
            "report_epoch_s": _int(top, "timestamp", where),
            "rw": options.get("rw", options.get("readwrite")),
            "block_size_bytes": _block_size(options, kb_base, lo, parsed.warnings),
            "ioengine": options.get("ioengine"),
            "iodepth": _option_int(options, ("iodepth",), kb_base, lo, parsed.warnings),
            "numjobs": numjobs,
            "options_json": _json.dumps(options) if options else None,
            "cpu_usr_pct": _num(job, "usr_cpu", lo), "cpu_sys_pct": _num(job, "sys_cpu", lo),
            "ctx": _int(job, "ctx", lo), "majf": _int(job, "majf", lo), "minf": _int(job, "minf", lo),
            "line_start": lo, "line_end": hi,
        })
        for direction in DIRECTIONS:
            ddir = _dict(job, direction, lo)
            row = _add_direction(parsed, doc, job_index, direction, ddir, kb_base, lo, hi)
            if row is not None and direction != "sync":
                group_results.append((groupid, direction, row, _io_in_kib(doc, ddir)))
        _add_buckets(parsed, job, job_index, lo, hi)
        for key, kind in _DEPTHS:
            for bucket, pct in _dict(job, key, lo).items():
                parsed.add("fio_iodepths", {"job_index": job_index, "kind": kind, "bucket": bucket,
                                            "pct": _value(pct, bucket, lo),
                                            "line_start": lo, "line_end": hi})
        job_index += 1
    add_derived_groups(parsed, doc_index, group_results, doc.line_start, doc.line_end)
    if is_final:
        disks = top.get("disk_util") or []
        if not isinstance(disks, list):
            raise ParseError("disk_util is not an array", line=where, kind="invalid", expected="an array")
        for i, disk in enumerate(disks):
            _add_disk(parsed, disk, doc.span(len(jobs) + i))
    return job_index


def _jobs_in_record(objects_in_group: int, numjobs: int | None) -> int | None:
    """Threads summed into one JSON job object. JSON does not say whether group_reporting was on
    (the flag is not listed in "job options"): several objects in a group mean one thread each;
    a lone object with numjobs > 1 is a group report of unknown size (None)."""
    if objects_in_group > 1 or (numjobs or 1) == 1:
        return 1
    return None


def _kb_base(options: dict[str, str], where: int, warnings: list[str]) -> int:
    value = options.get("kb_base", "1024").strip()
    if value in ("1000", "1024"):
        return int(value)
    warnings.append(f"line {where}: kb_base={value!r} not understood, assuming 1024")
    return 1024


def _option_int(options: dict[str, str], names: tuple[str, ...], kb_base: int, where: int,
                warnings: list[str]) -> int | None:
    for name in names:
        if name in options:
            try:
                return units.fio_option_bytes(options[name], kb_base)
            except units.UnitError:
                warnings.append(f"line {where}: option {name}={options[name]!r} not understood")
                return None
    return None


def _block_size(options: dict[str, str], kb_base: int, where: int, warnings: list[str]) -> int | None:
    """Largest size in bs= (``4k``, ``1m,4k`` per direction) or a bs range (``4k-16k``, ``4k:16k``)."""
    for name in ("bs", "blocksize", "bsrange", "blocksize_range"):
        if name in options:
            try:
                sizes = [units.fio_option_bytes(t, kb_base)
                         for t in re.split(r"[,:-]", options[name]) if t.strip()]
            except units.UnitError:
                warnings.append(f"line {where}: option {name}={options[name]!r} not understood")
                return None
            return max(sizes) if sizes else None
    return None


def _latency(ddir: dict, kind: str, where: int) -> tuple[dict, float] | None:
    """The latency object of a kind with its unit in ns: ``clat_ns`` (2.99+) or ``clat`` (µs, 2.x)."""
    if f"{kind}_ns" in ddir:
        return _dict(ddir, f"{kind}_ns", where), 1.0
    if kind in ddir:
        return _dict(ddir, kind, where), 1e3
    return None


def _add_direction(parsed: Parsed, doc: _Document, job_index: int, direction: str, ddir: dict,
                   kb_base: int, lo: int, hi: int) -> dict | None:
    total_ios = _int(ddir, "total_ios", lo)
    io = _num(ddir, "io_bytes", lo)
    if not (total_ios or io):
        return None
    if io is not None and _io_in_kib(doc, ddir):
        io *= units.KiB
    bw = _num(ddir, "bw_bytes", lo)
    if bw is None:
        bw = _num(ddir, "bw", lo, units.KiB)
    runtime = _num(ddir, "runtime", lo)
    row: dict[str, Any] = {
        "job_index": job_index, "direction": direction, "io_bytes": io, "bw_bytes_per_s": bw,
        "iops": _num(ddir, "iops", lo),
        "runtime_ns": None if runtime is None else units.time_to_ns(runtime, "ms"),
        "total_ios": total_ios, "short_ios": _int(ddir, "short_ios", lo),
        "dropped_ios": _int(ddir, "drop_ios", lo),
    }
    for kind in _LAT_KINDS:
        found = _latency(ddir, kind, lo)
        obj, scale = found if found else ({}, 1.0)
        samples = _int(obj, "N", lo)
        empty = samples == 0 or (samples is None and not any(obj.get(k) for k in ("min", "max", "mean")))
        for col, key in (("min", "min"), ("max", "max"), ("mean", "mean"), ("stdev", "stddev")):
            row[f"{kind}_{col}_ns"] = None if empty else _num(obj, key, lo, scale)
        row[f"{kind}_samples"] = samples
        if found:
            _add_percentiles(parsed, job_index, direction, kind, obj, scale, lo, hi)
            _add_bins(parsed, job_index, direction, kind, obj, scale, lo)
    # per-sample bandwidth statistics are in units of kb_base bytes/s (KiB/s, or kB/s with kb_base=1000)
    bw_measured = _int(ddir, "bw_samples", lo) != 0
    for col, key in (("min", "bw_min"), ("max", "bw_max"), ("mean", "bw_mean"), ("stdev", "bw_dev")):
        row[f"bw_{col}_bytes_per_s"] = _num(ddir, key, lo, kb_base) if bw_measured else None
    row["bw_agg_pct"] = _num(ddir, "bw_agg", lo) if bw_measured else None
    row["bw_samples"] = _int(ddir, "bw_samples", lo)
    iops_measured = _int(ddir, "iops_samples", lo) != 0
    for col, key in (("min", "iops_min"), ("max", "iops_max"), ("mean", "iops_mean"), ("stdev", "iops_stddev")):
        row[f"iops_{col}"] = _num(ddir, key, lo) if iops_measured else None
    row["iops_samples"] = _int(ddir, "iops_samples", lo)
    row.update(exact=True, line_start=lo, line_end=hi)
    parsed.add("fio_results", row)
    return row


def _add_percentiles(parsed: Parsed, job_index: int, direction: str, kind: str, obj: dict, scale: float,
                     lo: int, hi: int) -> None:
    for key, value in _dict(obj, "percentile", lo).items():
        try:
            pct = float(key)
        except ValueError:
            raise ParseError(f"percentile key {key!r} is not a number", line=lo, kind="invalid",
                             expected='a key like "99.900000"') from None
        if pct == 0.0:
            continue  # unused slot ("0.00" padding of fio <= 3.3)
        parsed.add("fio_percentiles", {"job_index": job_index, "direction": direction, "kind": kind,
                                       "percentile": pct, "latency_ns": _value(value, key, lo, scale),
                                       "line_start": lo, "line_end": hi})


def _add_bins(parsed: Parsed, job_index: int, direction: str, kind: str, obj: dict, scale: float,
              lo: int) -> None:
    bins = _dict(obj, "bins", lo)
    if any(k.startswith("FIO_IO_U_PLAT") for k in bins):
        parsed.warnings.append(f"line {lo}: JSON+ bins of job {job_index} {direction} {kind} are keyed by "
                               "bucket index (fio < 2.20); not stored")
        return
    for key, count in bins.items():
        try:
            value = float(key) * scale
        except ValueError:
            raise ParseError(f"JSON+ bin key {key!r} is not a number", line=lo, kind="invalid",
                             expected="a latency value") from None
        n = _value(count, key, lo)
        n = None if n is None else int(n)
        if n:
            parsed.add("fio_latency_bins", {"job_index": job_index, "direction": direction, "kind": kind,
                                            "latency_ns": value, "count": n})


def _add_buckets(parsed: Parsed, job: dict, job_index: int, lo: int, hi: int) -> None:
    """latency_ns/us/ms -> (lo, hi] edges in ns; a bucket starts where the previous one ended."""
    edge = 0.0
    for key, scale in _LAT_FAMILIES:
        family = _dict(job, key, lo)
        # by (is '>=', edge), ties in file order
        ordered = sorted((label.startswith(">="), _edge(label, lo), i, label, pct)
                         for i, (label, pct) in enumerate(family.items()))
        for at_least, label_edge, _, label, pct in ordered:
            value = _value(pct, label, lo)
            if at_least:
                bucket_lo, bucket_hi = label_edge * scale, None
            else:
                bucket_lo, bucket_hi = edge, label_edge * scale
                edge = bucket_hi
            if value:
                parsed.add("fio_latency_buckets", {"job_index": job_index, "bucket_lo_ns": bucket_lo,
                                                   "bucket_hi_ns": bucket_hi, "pct": value,
                                                   "line_start": lo, "line_end": hi})


def _edge(label: str, where: int) -> float:
    try:
        return float(label.removeprefix(">="))
    except ValueError:
        raise ParseError(f"latency bucket {label!r} is not a number", line=where, kind="invalid",
                         expected='a bucket edge like "250" or ">=2000"') from None


def add_derived_groups(parsed: Parsed, doc_index: int, results: list[tuple[int, str, dict, bool]],
                       line_start: int, line_end: int) -> None:
    """Recompute fio's run status groups (stat.c): per group and direction, io = sum of the jobs'
    bytes, bw = io * 1000 / longest runtime (integer, as fio does), min/max of the per-job bw.
    With unified_rw_reporting=both the MIXED line aggregates the group's read/write/trim lines.
    ``results`` holds (groupid, direction, fio_results row, io given in whole KiB); rows computed
    from KiB counts (terse, fio < 2.21 JSON) are not exact, since fio itself summed bytes."""
    groups: dict[tuple[int, str], dict] = {}
    exact = True
    for groupid, direction, row, in_kib in results:
        runtime_ms = row["runtime_ns"] / 1e6 if row["runtime_ns"] else 0
        if not runtime_ms or row["io_bytes"] is None:
            continue
        exact = exact and not in_kib
        io = int(row["io_bytes"])
        bw = io * 1000 // int(runtime_ms)
        g = groups.setdefault((groupid, direction), {"io": 0, "bws": [], "runs": []})
        g["io"] += io
        g["bws"].append(bw)
        g["runs"].append(int(runtime_ms))
    rows = {}
    for (groupid, direction), g in groups.items():
        rows[(groupid, direction)] = {
            "io": g["io"], "bw": g["io"] * 1000 // max(g["runs"]), "min": min(g["bws"]),
            "max": max(g["bws"]), "run_min": min(g["runs"]), "run_max": max(g["runs"])}
    for groupid in sorted({gid for gid, _ in rows}):
        parts = [rows[(groupid, d)] for d in ("read", "write", "trim") if (groupid, d) in rows]
        if (groupid, "mixed") in rows and parts:  # unified_rw_reporting=both
            rows[(groupid, "mixed")] = {
                "io": sum(p["io"] for p in parts), "bw": sum(p["bw"] for p in parts),
                "min": min(p["min"] for p in parts), "max": max(p["max"] for p in parts),
                "run_min": min(p["run_min"] for p in parts), "run_max": max(p["run_max"] for p in parts)}
    for (groupid, direction), g in sorted(rows.items(), key=lambda kv: (kv[0][0], DIRECTIONS.index(kv[0][1]))):
        parsed.add("fio_groups", {
            "doc_index": doc_index, "groupid": groupid, "direction": direction,
            "bw_bytes_per_s": float(g["bw"]), "bw_min_bytes_per_s": float(g["min"]),
            "bw_max_bytes_per_s": float(g["max"]), "io_bytes": float(g["io"]),
            "run_min_ns": units.time_to_ns(g["run_min"], "ms"), "run_max_ns": units.time_to_ns(g["run_max"], "ms"),
            "derived": True, "exact": exact, "line_start": line_start, "line_end": line_end})


def _add_disk(parsed: Parsed, disk: Any, span: tuple[int, int]) -> None:
    lo, hi = span
    if not isinstance(disk, dict) or not isinstance(disk.get("name"), str):
        raise ParseError("disk_util entry without a name", line=lo, kind="invalid", expected='"name"')
    ms = 1e6
    slaves = any(k.startswith("aggr_") for k in disk)
    row = {
        "disk": disk["name"], "read_ios": _int(disk, "read_ios", lo), "write_ios": _int(disk, "write_ios", lo),
        "read_sectors": _int(disk, "read_sectors", lo), "write_sectors": _int(disk, "write_sectors", lo),
        "read_merges": _int(disk, "read_merges", lo), "write_merges": _int(disk, "write_merges", lo),
        "read_ticks_ns": _num(disk, "read_ticks", lo, ms), "write_ticks_ns": _num(disk, "write_ticks", lo, ms),
        "in_queue_ns": _num(disk, "in_queue", lo, ms), "util_pct": _num(disk, "util", lo),
        "has_slaves": slaves,
    }
    for col, keys, scale in (
            ("aggr_read_ios", ("aggr_read_ios",), None), ("aggr_write_ios", ("aggr_write_ios",), None),
            ("aggr_read_sectors", ("aggr_read_sectors",), None),
            ("aggr_write_sectors", ("aggr_write_sectors",), None),
            ("aggr_read_merges", ("aggr_read_merges",), None),
            ("aggr_write_merges", ("aggr_write_merge", "aggr_write_merges"), None),  # fio spells it singular
            ("aggr_read_ticks_ns", ("aggr_read_ticks",), ms), ("aggr_write_ticks_ns", ("aggr_write_ticks",), ms),
            ("aggr_in_queue_ns", ("aggr_in_queue",), ms), ("aggr_util_pct", ("aggr_util",), 1.0)):
        key = next((k for k in keys if k in disk), keys[0])
        row[col] = _int(disk, key, lo) if scale is None else _num(disk, key, lo, scale)
    row.update(line_start=lo, line_end=hi)
    parsed.add("fio_disk_stats", row)
