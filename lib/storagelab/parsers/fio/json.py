"""fio ``--output-format=json`` / ``json+`` output -> the fio tables (docs/formats/log-formats.md B.1-B.8).

Tolerates what fio really prints: lines before the first ``{`` line (``note:`` lines, errors, a
normal-text part), several documents (``--status-interval``: the last is final; separate runs in a
terminal transcript, a shell prompt and another time between them: the last of each run), bare ``nan``/``inf`` values,
duplicate ``"0.00"`` percentile keys (fio <= 3.3), and the 2.x layout (latencies in µs under
``slat``/``clat``/``lat``; ``io_bytes`` in KiB before fio 2.21). Rows carry the lines they came from:
a job's rows its job object, one direction's results and percentiles its direction object
(``"read": {...}``), a run status group its jobs' direction objects (the first one's first line to the
last one's last).

This is the general path, the reference for every file; a file that is one fio JSON document and
nothing else takes the fast path first (``fastjson.py``), which gives exactly these rows or declines.
"""

from __future__ import annotations

import json as _json
import re
from itertools import repeat
from typing import Any

from ..base import SHELL_PROMPT, Parsed, ParseError, lines_of
from . import clients
from .buckets import add_buckets
from .command import commands_in, paired
from .directions import add_direction, check_direction_keys, io_in_kib
from .groups import add_derived_groups
from .jsondoc import Document
from .jsonrows import Out
from .options import block_size, jobs_in_record, option_int, option_kb_base
from .schema import DIRECTIONS
from .values import check_numbers, int_field, num, nums, object_field, scaled, whole

TOOL = "fio"
_DEPTHS = (("iodepth_level", "depth"), ("iodepth_submit", "submit"), ("iodepth_complete", "complete"))


def parse_json(text: str) -> Parsed:
    """Parse every JSON document of a fio output file (other parts are skipped)."""
    if not text.strip():
        raise ParseError("empty input", line=1, kind="empty", expected="fio JSON output")
    # a document starts on a line whose first character (after a live status line ending in '\r', if any,
    # and blanks) is '{', followed by nothing or by its first key: fio's own layout, json.dumps(indent=N)
    # and a document compacted onto one line alike
    lines = lines_of(text)
    starts = [i for i, ln in enumerate(lines) if "{" in ln and _opens_document(ln)]
    if not starts:
        raise ParseError(
            "no JSON document found", line=1, expected="a line starting with '{' that opens fio's JSON output"
        )
    parsed = Parsed(tool=TOOL, format="fio-json")
    docs: list[Document] = []
    crlf = "\r\n" in text  # lines_of dropped the \r of each CRLF: then offsets from the text itself
    offsets = [0] + [m.end() for m in re.finditer("\n", text)] if crlf else []
    pos = line_at = offset_at = 0
    for start in starts:
        if crlf:
            offset_at = offsets[start]
        else:  # line i starts after the lengths of lines 0..i-1 plus their i newlines
            offset_at += sum(map(len, lines[line_at:start])) + start - line_at
            line_at = start
        line = lines[start]
        brace = offset_at + line.index("{", line.rfind("\r") + 1)
        if brace < pos:
            continue  # a '{' line inside the previous document
        doc = Document(text, brace, start + 1, parsed.warnings)
        before = text[pos:brace].split("\n")  # the lines since the previous document (its last: up to the brace)
        # a shell prompt between two documents of different times (a terminal transcript: `cat out-0`, `cat
        # out-1`) starts another fio run, whose last document is final too; --status-interval prints its documents
        # back to back, and the same report shown twice has one time
        doc.new_run = (
            bool(docs) and _report_time(doc) != _report_time(docs[-1]) and any(SHELL_PROMPT.match(ln) for ln in before)
        )
        # the fio command typed (or pasted in a write-up) before it, if shown: one, never a guess among several
        found = commands_in(before, start + 2 - len(before))
        typed, why = paired(found, start + 1)
        if why:  # a row without a command: the document before it lends it none
            parsed.warnings.append(why)
        if found:
            command, lo, hi = typed or (None, found[0][1], found[-1][2])
            parsed.add("fio_commands", {"doc_index": len(docs), "command": command, "line_start": lo, "line_end": hi})
        pos = doc.end_offset
        docs.append(doc)
    job_index = 0
    for doc_index, doc in enumerate(docs):
        is_final = doc_index == len(docs) - 1 or docs[doc_index + 1].new_run
        job_index = _add_document(parsed, doc, doc_index, is_final, job_index)
    parsed.tool_version = docs[-1].version_string
    if parsed.rows("fio_latency_bins"):
        parsed.format = "fio-json+"
    return parsed


def _report_time(doc: Document):
    """When fio wrote the report (timestamp_ms, else timestamp): None when it does not say."""
    return doc.obj.get("timestamp_ms", doc.obj.get("timestamp"))


def _opens_document(line: str) -> bool:
    rest = line.rsplit("\r", 1)[-1].lstrip(" \t")
    return rest[:1] == "{" and rest[1:].lstrip(" \t")[:1] in ("", '"')


def _add_document(parsed: Parsed, doc: Document, doc_index: int, is_final: bool, job_index: int) -> int:
    top = doc.obj
    where = doc.line_start
    out = Out(parsed)
    global_opts = {k: str(v) for k, v in object_field(top, "global options", where).items()}
    report_time = top.get("time") if isinstance(top.get("time"), str) else None
    report_epoch_s = int_field(top, "timestamp", where)
    jobs, array = top[doc.jobs_key], doc.jobs_key
    summed = _client_sum(parsed, doc) if array == "client_stats" else None
    group_sizes: dict[Any, int] = {}
    for i, job in enumerate(jobs):
        if type(job) is dict and type(job.get("groupid")) in (int, float, type(None)) and i != summed:
            group_sizes[job.get("groupid")] = group_sizes.get(job.get("groupid"), 0) + 1  # a {} or [] is refused
    group_results: list[tuple[int, str, dict, bool]] = []  # (groupid, direction, row, io in KiB)
    for i, job in enumerate(jobs):
        if i == summed:
            continue
        lo, hi = doc.span(array, i)
        if type(job) is not dict:
            raise ParseError("job entry is not an object", line=lo, kind="invalid", expected="a job object")
        if not isinstance(job.get("jobname"), str) or (groupid := int_field(job, "groupid", lo)) is None:
            raise ParseError(
                "job object without jobname/groupid", line=lo, kind="invalid", expected='"jobname" and "groupid"'
            )
        options = {**global_opts, **{k: str(v) for k, v in object_field(job, "job options", lo).items()}}
        kb_base = option_kb_base(options, lo, parsed.warnings)
        numjobs = option_int(options, ("numjobs",), kb_base, lo, parsed.warnings)
        usr, sys_, error, ctx, majf, minf = nums(job, ("usr_cpu", "sys_cpu", "error", "ctx", "majf", "minf"), lo)
        out.jobs.append(
            (
                job_index,
                doc_index,
                is_final,
                job["jobname"],
                groupid,
                jobs_in_record(group_sizes[job.get("groupid")], numjobs),
                whole(error, "error", lo),
                None,
                report_time,
                report_epoch_s,
                options.get("rw", options.get("readwrite")),
                block_size(options, kb_base, lo, parsed.warnings),
                options.get("ioengine"),
                option_int(options, ("iodepth",), kb_base, lo, parsed.warnings),
                numjobs,
                _json.dumps(options) if options else None,
                None,  # layout_files, layout_bytes: text output only
                None,
                None if usr is None else usr * 1.0,
                None if sys_ is None else sys_ * 1.0,
                whole(ctx, "ctx", lo),
                whole(majf, "majf", lo),
                whole(minf, "minf", lo),
                lo,
                hi,
            )
        )
        check_direction_keys(job, lo)
        for direction in DIRECTIONS:
            ddir = object_field(job, direction, lo)
            if not ddir:
                continue
            row = add_direction(out, doc, job_index, direction, ddir, kb_base, lo, doc.block(array, i, direction))
            if row is not None and direction != "sync":
                group_results.append((groupid, direction, row, io_in_kib(doc, ddir)))
        add_buckets(out, job, job_index, lo, hi)
        for key, kind in _DEPTHS:
            depths = object_field(job, key, lo)
            if depths:
                pcts = scaled(check_numbers(depths, lo), 1.0)
                out.iodepths.extend(zip(repeat(job_index), repeat(kind), depths, pcts, repeat(lo), repeat(hi)))
        job_index += 1
    if out.unknown_latency:
        parsed.warnings.append(
            f"line {where}: latency keys not understood, not stored: " + ", ".join(sorted(out.unknown_latency))
        )
    add_derived_groups(parsed, doc_index, group_results, doc.line_start, doc.line_end)
    if is_final:
        disks = top.get("disk_util") or []
        if not isinstance(disks, list):
            raise ParseError("disk_util is not an array", line=where, kind="invalid", expected="an array")
        for i, disk in enumerate(disks):
            _add_disk(parsed, disk, doc.span("disk_util", i))
    for name in ("fio_jobs", "fio_results", "fio_percentiles", "fio_latency_buckets", "fio_iodepths"):
        if not parsed.tables[name]:
            del parsed.tables[name]
    return job_index


def _client_sum(parsed: Parsed, doc: Document) -> int | None:
    """A client/server report's "All clients" index (not stored), its warning added; one of several servers refused
    (``clients``)."""
    jobs = doc.obj["client_stats"]
    summed = clients.summed_index(jobs)
    found = clients.servers(jobs, summed)
    if error := clients.refusal(found, doc.line_start):
        raise error
    parsed.warnings.append(clients.warning(doc.line_start, found, summed))
    return summed


def _add_disk(parsed: Parsed, disk: Any, span: tuple[int, int]) -> None:
    lo, hi = span
    if not isinstance(disk, dict) or not isinstance(disk.get("name"), str):
        raise ParseError("disk_util entry without a name", line=lo, kind="invalid", expected='"name"')
    ms = 1e6
    slaves = any(k.startswith("aggr_") for k in disk)
    row = {
        "disk": disk["name"],
        "read_ios": int_field(disk, "read_ios", lo),
        "write_ios": int_field(disk, "write_ios", lo),
        "read_sectors": int_field(disk, "read_sectors", lo),
        "write_sectors": int_field(disk, "write_sectors", lo),
        "read_merges": int_field(disk, "read_merges", lo),
        "write_merges": int_field(disk, "write_merges", lo),
        "read_ticks_ns": num(disk, "read_ticks", lo, ms),
        "write_ticks_ns": num(disk, "write_ticks", lo, ms),
        "in_queue_ns": num(disk, "in_queue", lo, ms),
        "util_pct": num(disk, "util", lo),
        "has_slaves": slaves,
    }
    for col, keys, scale in (
        ("aggr_read_ios", ("aggr_read_ios",), None),
        ("aggr_write_ios", ("aggr_write_ios",), None),
        ("aggr_read_sectors", ("aggr_read_sectors",), None),
        ("aggr_write_sectors", ("aggr_write_sectors",), None),
        ("aggr_read_merges", ("aggr_read_merges",), None),
        ("aggr_write_merges", ("aggr_write_merge", "aggr_write_merges"), None),  # fio spells it singular
        ("aggr_read_ticks_ns", ("aggr_read_ticks",), ms),
        ("aggr_write_ticks_ns", ("aggr_write_ticks",), ms),
        ("aggr_in_queue_ns", ("aggr_in_queue",), ms),
        ("aggr_util_pct", ("aggr_util",), 1.0),
    ):
        key = next((k for k in keys if k in disk), keys[0])
        row[col] = int_field(disk, key, lo) if scale is None else num(disk, key, lo, scale)
    row.update(line_start=lo, line_end=hi)
    parsed.add("fio_disk_stats", row)
