"""fio runs of a selection, with the workload each ran, so that only like is compared with like.

A *run* is one (file, reporting group, direction) of a file's final report (a file saved with
--status-interval holds several reports; the last covers the whole run).

**A run's bandwidth and IOPS** (one definition, used by every analysis): the group's total I/O over the group's
elapsed time, as fio's group line ("Run status group N": ``bw=`` = io / run, with run the longest job's runtime;
stat.c ``show_group_stats``). ``bw_bytes_per_s`` is that figure: printed by fio (text) or recomputed the same way
from the jobs' ``io_bytes`` and ``runtime`` where fio prints no group line (JSON, terse: ``fio_groups.derived``).
``iops`` is the group's completed I/Os (``total_ios`` summed over its jobs) over the same elapsed time
(``elapsed_ns``). Several jobs without ``group_reporting`` are one run: their per-job rates are not added (two jobs
of 128 MiB in 0.113 s and 0.196 s ran at 256 MiB / 0.196 s = 1306 MiB/s, not 653 + 1132 = 1785 MiB/s). fio's
per-sample ``bw`` avg/stdev (``fio_results.bw_mean/stdev``) are the spread of the bandwidth log within one run
(with group_reporting fio even adds the jobs' means and variances, stat.c ``sum_stat``): they are shown only as
per-sample figures, never as a run's bandwidth or as run-to-run noise (that comes from repeats: ``stats``).

The *workload* is what fio was asked to do: rw (and the read share of a mixed mode), bs, iodepth,
numjobs, ioengine, direct, sync/fsync, size and runtime, and a rate cap (rate=, rate_iops=) where one was given. It comes from the output where fio printed it (JSON job options, the text
preamble), and otherwise from the manifest's ``command`` (the fio command line the run was made
with); the size, where no option gives it, from fio's "Laying out IO file (1 file / 22MiB)" line. A run with
neither options nor command (a pasted transcript) takes the one workload of the selection that fits all its output
shows (``match_by_output``: rw, bs, ioengine, iodepth, numjobs, a fsync/fdatasync section), and
``workload_inferred`` says what came from the output. ``workload`` is one string of all of them ("?" for what
neither says); runs are compared
only within one workload (``comparable``), and reports show it.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

import polars as pl
from polars.datatypes import DataTypeClass

from ..units import KiB, fio_option_bytes
from . import arc
from .db import frame
from .selection import Selection

# the options that make two fio runs the same workload, in the order the key shows them
WORKLOAD_OPTIONS = (
    "rw",
    "bs",
    "iodepth",
    "numjobs",
    "ioengine",
    "direct",
    "sync",
    "fsync",
    "fdatasync",
    "size",
    "runtime",
    "rwmixread",  # the read share of a mixed mode (shown for rw/readwrite/randrw only)
    "rate",  # a cap fio was told to keep to (shown where given): a capped run is not the uncapped workload
    "rate_iops",
)
_SIZE_OPTIONS = ("bs", "size")
MIXED_MODES = ("rw", "readwrite", "randrw")
# fio's defaults for the options a JSON job lists only when they were given (HOWTO)
FIO_DEFAULTS = {"iodepth": 1, "numjobs": 1, "direct": 0, "runtime": "none", "rwmixread": 50}


def _read_share(options: dict[str, str]) -> int | None:
    """rwmixread, or 100 - rwmixwrite (fio takes either), as a whole percent; None when neither is given."""
    for key, read in (("rwmixread", True), ("rwmixwrite", False)):
        value = _option_value("rwmixread", options.get(key))
        if isinstance(value, int):
            return value if read else 100 - value
    return None


RUNS_SQL = """
SELECT f.file_id, f.path, f.label, f.study, f.host, f.stack, f.pool, f.vdev_type, f.vdev_count, f.vdev_width,
       f.recordsize_bytes, f.zfs_version, f.zfs_sync, f.device_limit_bytes_per_s, f.devices,
       coalesce(f.command, c.command) AS command, f.notes, f.ram_bytes, f.phase, f.sha256,
       f.tool_version, f.os, f.cache_devices, f.log_devices, f.ashift, f.zfs_logbias, f.partition_start_sector,
       g.doc_index, g.groupid, g.direction, g.bw_bytes_per_s, g.bw_min_bytes_per_s, g.bw_max_bytes_per_s, g.io_bytes,
       g.run_max_ns, g.run_max_ns AS elapsed_ns, g.derived, g.exact, g.line_start, g.line_end,
       r.ios, r.ios / (g.run_max_ns / 1e9) AS iops, r.clat_max_ns, r.lat_max_ns, r.slowest_line_start,
       r.slowest_line_end,
       j.rw, j.block_size_bytes, j.iodepth, j.numjobs, j.jobs, j.ioengine, j.options_json, j.jobname,
       j.layout_bytes, j.has_sync, s.section
FROM fio_groups g JOIN files f USING (file_id)
LEFT JOIN (SELECT file_id, doc_index, groupid, any_value(rw) AS rw, max(block_size_bytes) AS block_size_bytes,
                  -- numjobs: the option (JSON), else the threads fio counted for a job (text: jobs=N of a
                  -- group-reported block, or N blocks of one job name without group_reporting)
                  max(iodepth) AS iodepth, coalesce(max(numjobs), max(threads)) AS numjobs, sum(jobs) AS jobs,
                  any_value(ioengine) AS ioengine, any_value(options_json) AS options_json,
                  max(layout_bytes) AS layout_bytes, bool_or(has_sync) AS has_sync,
                  arg_min(jobname, job_index) AS jobname  -- the group's first job
           FROM (SELECT *, sum(jobs) OVER (PARTITION BY file_id, doc_index, groupid, jobname) AS threads,
                        EXISTS (SELECT 1 FROM fio_results s WHERE s.file_id = fio_jobs.file_id
                                  AND s.job_index = fio_jobs.job_index AND s.direction = 'sync') AS has_sync
                 FROM fio_jobs WHERE is_final)
           GROUP BY file_id, doc_index, groupid) j
       ON j.file_id = g.file_id AND j.doc_index = g.doc_index AND j.groupid = g.groupid
-- the group's completed I/Os and its slowest I/O (final reports' jobs)
LEFT JOIN (SELECT res.file_id, jj.doc_index, jj.groupid, res.direction, sum(res.total_ios) AS ios,
                  max(res.clat_max_ns) AS clat_max_ns, max(res.lat_max_ns) AS lat_max_ns,
                  -- the raw lines of the job section with the slowest I/O (what a design finding links to)
                  arg_max(res.line_start, coalesce(res.clat_max_ns, res.lat_max_ns)) AS slowest_line_start,
                  arg_max(res.line_end, coalesce(res.clat_max_ns, res.lat_max_ns)) AS slowest_line_end
           FROM fio_results res JOIN fio_jobs jj ON jj.file_id = res.file_id AND jj.job_index = res.job_index
           WHERE jj.is_final GROUP BY ALL) r
       ON r.file_id = g.file_id AND r.doc_index = g.doc_index AND r.groupid = g.groupid AND r.direction = g.direction
-- the manifest's command, else the fio command line the log shows before this run (a terminal transcript)
LEFT JOIN (SELECT *, lead(doc_index) OVER (PARTITION BY file_id ORDER BY doc_index) AS next_doc FROM fio_commands) c
       ON c.file_id = g.file_id AND g.doc_index >= c.doc_index AND (c.next_doc IS NULL OR g.doc_index < c.next_doc)
-- the Markdown headings a write-up puts before this run (which machine each run of a write-up is on)
LEFT JOIN (SELECT *, lead(doc_index) OVER (PARTITION BY file_id ORDER BY doc_index) AS next_doc FROM fio_sections) s
       ON s.file_id = g.file_id AND g.doc_index >= s.doc_index AND (s.next_doc IS NULL OR g.doc_index < s.next_doc)
WHERE {where}
  AND (j.file_id IS NOT NULL  -- the final report of each run in the file (fio runs appended to one log)
       OR (g.doc_index = (SELECT max(doc_index) FROM fio_groups g2 WHERE g2.file_id = g.file_id)
           AND NOT EXISTS (SELECT 1 FROM fio_jobs j2 WHERE j2.file_id = g.file_id AND j2.is_final)))
ORDER BY f.path, g.doc_index, g.groupid, g.direction
"""


def run_bandwidth(io_bytes: float | None, elapsed_ns: float | None) -> float | None:
    """A run's bandwidth, bytes/s: the group's total I/O over its elapsed time (the longest job's runtime), as
    fio's group line (module doc). None when either is unknown or the time is zero."""
    if io_bytes is None or not elapsed_ns:
        return None
    return float(io_bytes) / (float(elapsed_ns) / 1e9)


def run_iops(ios: float | None, elapsed_ns: float | None) -> float | None:
    """A run's IOPS: the group's completed I/Os over its elapsed time (the same time as ``run_bandwidth``)."""
    return run_bandwidth(ios, elapsed_ns)


def parse_command(command: str | None) -> dict[str, str]:
    """fio options of a command line (``fio --rw=write --bs=1M --direct=1 ...``), as fio's strings.

    Only ``--name=value`` and bare ``--flag`` words count (a bare flag is "1"); the first job's
    options and the global ones (fio applies later ones to later jobs: the first wins here).
    Anything that is not fio's command line gives {}.
    """
    if not command:
        return {}
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if not words or not words[0].rsplit("/", 1)[-1].startswith("fio"):
        return {}
    out: dict[str, str] = {}
    names = 0
    for w in words[1:]:
        if not w.startswith("--"):
            continue
        key, _, value = w[2:].partition("=")
        if key == "name":
            names += 1
            if names > 1:
                break
            continue
        out.setdefault(key, value if value else "1")
    return out


def job_on_command_line(command: str | None) -> bool:
    """True for a fio command that defines its job on the command line (``--name=...`` and no job file):
    then an option it does not give has fio's default. A job file's options are not in the command."""
    if command is None or not parse_command(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    args = []
    for w in words[1:]:  # up to a shell redirection or pipe (a manifest may hold "fio ... > run.txt")
        if w[:1] in (">", "|", ";", "&") or w[:2] in ("2>", "1>"):
            break
        args.append(w)
    return any(w.startswith("--name=") for w in args) and not any(not w.startswith("-") for w in args)


def _option_value(key: str, text: str | None):
    """An option's value in the key's base unit: sizes in bytes, counts as ints, the rest as strings."""
    if text is None or text == "":
        return None
    text = str(text).strip()
    if key in _SIZE_OPTIONS:
        try:
            return fio_option_bytes(text.split(",")[0].split("-")[0])
        except Exception:  # noqa: BLE001 - an option fio would read and we cannot: leave it unknown
            return None
    if key in ("iodepth", "numjobs", "direct", "sync", "fsync", "fdatasync", "rwmixread"):
        try:
            return int(text)
        except ValueError:
            return {"true": 1, "false": 0}.get(text.lower(), text)
    if key == "runtime":
        try:
            return int(text.rstrip("s"))
        except ValueError:
            return text
    return text


# the columns of a run that workload_of reads
WORKLOAD_INPUTS = (
    "options_json",
    "rw",
    "block_size_bytes",
    "iodepth",
    "numjobs",
    "ioengine",
    "command",
    "layout_bytes",  # the file fio laid out ("Laying out IO file (1 file / 22MiB)"): the size where no option says
    "has_sync",  # the output has a fsync/fdatasync section: fsync or fdatasync was on
    "jobname",  # a size laid out by a run of this job name in this folder (``match_by_output``)
)


def workload_of(row: dict) -> tuple[dict, str]:
    """The workload options of one run (output first, then the manifest command) and where they came from."""
    opts = {}
    if row.get("options_json"):
        try:
            opts = {k: str(v) for k, v in json.loads(row["options_json"]).items()}
        except (ValueError, AttributeError):
            opts = {}
    from_output = {
        "rw": row.get("rw") or opts.get("rw") or opts.get("readwrite"),
        "bs": row.get("block_size_bytes")
        if row.get("block_size_bytes") is not None
        else _option_value("bs", opts.get("bs")),
        "iodepth": row.get("iodepth")
        if row.get("iodepth") is not None
        else _option_value("iodepth", opts.get("iodepth")),
        "numjobs": row.get("numjobs")
        if row.get("numjobs") is not None
        else _option_value("numjobs", opts.get("numjobs")),
        "ioengine": row.get("ioengine") or opts.get("ioengine"),
    }
    for k in ("direct", "sync", "fsync", "fdatasync", "size", "runtime", "rate", "rate_iops"):
        from_output[k] = _option_value(k, opts.get(k))
    from_output["rwmixread"] = _read_share(opts)
    if opts:  # fio lists every option it was given: an absent one took fio's default
        for k, default in FIO_DEFAULTS.items():
            if from_output.get(k) is None:
                from_output[k] = default
    given = parse_command(row.get("command"))
    cmd = {k: _option_value(k, v) for k, v in given.items()}
    cmd["rwmixread"] = _read_share(given)
    if "readwrite" in cmd:
        cmd.setdefault("rw", cmd.pop("readwrite"))
    if job_on_command_line(row.get("command")):  # it lists every option given: an absent one took fio's default
        for k, default in FIO_DEFAULTS.items():
            cmd.setdefault(k, default)
    if from_output["size"] is None and cmd.get("size") is None and row.get("layout_bytes"):
        from_output["size"] = int(row["layout_bytes"])  # 0 MiB printed (under 1 MiB): not a size
    out, sources = {}, set()
    for k in WORKLOAD_OPTIONS:
        if from_output.get(k) is not None:
            out[k] = from_output[k]
            sources.add("output")
        elif cmd.get(k) is not None:
            out[k] = cmd[k]
            sources.add("command")
        else:
            out[k] = None
    source = "+".join(sorted(sources)) if sources else "unknown"
    if row.get("has_sync") and not out.get("fsync") and not out.get("fdatasync"):
        out["sync_section"] = True  # neither option known, but fio timed sync calls: one of them was on
    return out, source


def output_notes(row: dict, w: dict) -> list[str]:
    """What ``workload_of`` read from the output's other lines rather than from an option (said with the workload)."""
    notes = []
    if w.get("sync_section"):
        notes.append(
            "its output has a fsync/fdatasync section: fsync or fdatasync was on (which, and how often, "
            "its output does not say)"
        )
    if row.get("layout_bytes") and w.get("size") == int(row["layout_bytes"]):
        if not parse_command(row.get("command")).get("size") and not _json_size(row.get("options_json")):
            notes.append(f"size {fmt_bytes(w['size'])} {LAID_OUT} (whole MiB, rounded down)")
    return notes


def _json_size(options_json: str | None) -> str | None:
    try:
        return json.loads(options_json).get("size") if options_json else None
    except (ValueError, AttributeError):
        return None


def fmt_bytes(n: int) -> str:
    for unit, size in (("GiB", KiB**3), ("MiB", KiB**2), ("KiB", KiB)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return f"{n}B"


def workload_key(w: dict, without: tuple[str, ...] = ()) -> str:
    """One string for a workload: 'write bs=1MiB iodepth=8 numjobs=8 libaio direct=1 size=16GiB runtime=60s';
    '?' for what is not known."""

    def show(k):
        v = w.get(k)
        if v is None:
            return "?"
        if k in _SIZE_OPTIONS and isinstance(v, int):
            return fmt_bytes(v)
        return f"{v}s" if k == "runtime" and isinstance(v, int) else str(v)

    parts = [show("rw")]
    if w.get("rw") in MIXED_MODES:  # randrw at 70 % reads is not randrw at 30 %
        parts.append(f"rwmixread={show('rwmixread')}")
    parts.append(f"bs={show('bs')}")
    parts += [f"{k}={show(k)}" for k in ("iodepth", "numjobs") if k not in without]
    parts += [show("ioengine") if w.get("ioengine") else "ioengine=?", f"direct={show('direct')}"]
    if w.get("sync"):
        parts.append(f"sync={show('sync')}")
    if w.get("fsync"):
        parts.append(f"fsync={show('fsync')}")
    if w.get("fdatasync"):
        parts.append(f"fdatasync={show('fdatasync')}")
    if w.get("sync_section"):
        parts.append("fsync/fdatasync=on")
    parts += [f"{k}={w[k]}" for k in ("rate", "rate_iops") if w.get(k) not in (None, "", "0")]
    parts += [f"{k}={show(k)}" for k in ("size", "runtime") if k not in without]
    return " ".join(parts)


def file_names(paths) -> dict[str, str]:
    """Each path's name as reports show a file without a label: its base name, or as many of its last folders as
    tell it from every other path of ``paths`` (three pools' 'sync_rand_write.log' are
    'tank_a/sync_rand_write/sync_rand_write.log', ...). The folder is part of an unlabelled file's identity: two
    files of one name in different folders may be two machines or two pools."""
    parts = {p: p.split("/") for p in set(paths) if p is not None}
    names = {}
    for path, words in parts.items():
        for k in range(1, len(words) + 1):
            tail = words[-k:]
            if not any(o != path and other[-k:] == tail for o, other in parts.items()):
                break
        names[path] = "/".join(tail)
    return names


def short_name(df: pl.DataFrame, column: str = "path") -> pl.Expr:
    """``file_names`` of ``df``'s paths, as an expression over ``column``; with ``df``'s ``section``s (a write-up's
    headings, ``fio_sections``), where one file's runs lie under different headings, the file's name and the run's
    section ('vps-fio-libaio-4K.txt § aws ec2 micro - 990M'): a write-up of five machines is five configurations,
    never five repeats of one."""
    names = file_names(df[column].to_list()) if column in df.columns and df.height else {}
    base = pl.col(column).replace_strict(names, default=None, return_dtype=pl.String)
    if column != "path" or "section" not in df.columns or df["section"].is_null().all():
        return base
    shown = {
        f"{path}\x1f{section}": f"{names.get(path, path)} § {short}"
        for path, sections in section_names(df).items()
        for section, short in sections.items()
    }
    key = pl.concat_str([pl.col("path"), pl.col("section").fill_null("")], separator="\x1f")
    return key.replace_strict(shown, default=base, return_dtype=pl.String)


def section_names(df: pl.DataFrame) -> dict[str, dict[str, str]]:
    """For each file of ``df`` whose runs lie under more than one section: {section ('' before the first heading):
    its name without the headings every section of the file shares ('before its first heading' for '')}."""
    out: dict[str, dict[str, str]] = {}
    pairs = df.select("path", pl.col("section").fill_null("")).unique(maintain_order=True)
    for (path,), g in pairs.group_by("path", maintain_order=True):
        sections = g["section"].to_list()
        if len(sections) < 2:
            continue
        split = [s.split(" > ") if s else [] for s in sections]
        common = 0
        while all(len(p) > common + 1 and p[common] == split[0][common] for p in split):
            common += 1
        out[path] = {
            s: " > ".join(p[common:]) if p else "before its first heading" for s, p in zip(sections, split, strict=True)
        }
    return out


def run_label(df: pl.DataFrame) -> pl.Expr:
    """A run's name in a report: its label, else its file's ``short_name`` among ``df``'s files; where one file's
    runs lie under different headings of a write-up (``section``: fio's ``fio_sections``, bonnie++'s
    ``bonnie_runs.section``), the label and the run's section ('nas § aws ec2 micro'): the manifest labels a file,
    and the sections of one labelled write-up are as many machines, never repeats of one (``config_label``)."""
    if "label" not in df.columns or "section" not in df.columns or "path" not in df.columns or df.is_empty():
        return pl.coalesce(pl.col("label"), short_name(df))
    shown = {
        f"{path}\x1f{section}": short
        for path, sections in section_names(df).items()
        for section, short in sections.items()
    }
    key = pl.concat_str([pl.col("path"), pl.col("section").fill_null("")], separator="\x1f")
    part = key.replace_strict(shown, default=None, return_dtype=pl.String)
    labelled = pl.col("label").is_not_null() & part.is_not_null()
    return (
        pl.when(labelled)
        .then(pl.format("{} § {}", "label", part))
        .otherwise(pl.coalesce(pl.col("label"), short_name(df)))
    )


def groups_apart(df: pl.DataFrame) -> pl.DataFrame:
    """Several reporting groups of one fio run (one file and report) are different jobs run by one command,
    not repeats of one run: each gets its group in its label ('ceph.out (group 2: kern-replicated)'), so that
    no analysis takes them for repeated runs or names two of them alike."""
    if df.is_empty():
        return df
    several = pl.col("groupid").n_unique().over("file_id", "doc_index") > 1
    named = pl.concat_str(
        run_label(df),
        pl.lit(" (group "),
        pl.col("groupid").cast(pl.String),
        pl.when(pl.col("jobname").is_not_null()).then(pl.lit(": ") + pl.col("jobname")).otherwise(pl.lit("")),
        pl.lit(")"),
    )
    return df.with_columns(label=pl.when(several).then(named).otherwise(pl.col("label")))


def runs(con, sel: Selection) -> pl.DataFrame:
    """Every fio run of the selection with its labels, workload options (``wl_*``), ``workload`` key,
    ``workload_source`` (output, command, output+command or unknown) and the ARC hit ratio during each reading run
    where ARC logs are tied to it (``arc.COLUMNS``: ``arc.with_arc``), and the ARC maximum of its machine
    (``arc.MAX_COLUMNS``: ``arc.with_arc_max``), which bounds what ZFS caches."""
    where, params = sel.sql("f")
    df = groups_apart(frame(con, RUNS_SQL.format(where=where), params))
    if df.is_empty():
        return df.with_columns(
            *(pl.lit(None).alias(f"wl_{k}") for k in WORKLOAD_OPTIONS),
            *(pl.lit(None, dtype).alias(name) for name, dtype in (arc.COLUMNS | arc.MAX_COLUMNS).items()),
            workload_known=pl.lit(None, pl.Boolean),
            workload=pl.lit(None, pl.String),
            workload_source=pl.lit(None, pl.String),
            workload_at_any_depth=pl.lit(None, pl.String),
            workload_at_any_size=pl.lit(None, pl.String),
            workload_inferred=pl.lit(None, pl.String),
        )
    return arc.with_arc_max(con, sel, arc.with_arc(con, with_workloads(df)))


def with_workloads(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` (rows holding the WORKLOAD_INPUTS columns: one per run, or per job) with each row's workload options
    (``wl_*``), ``workload`` key, ``workload_source``, the keys without the depth and without the size,
    ``workload_known`` (rw mode and block size known: runs are compared only then) and ``workload_inferred`` (what
    was read from the output rather than an option: ``output_notes``, ``match_by_output``). Worked out once per
    distinct set of inputs (a study of 100,000 runs has a few dozen), then joined back to every row."""
    given_setup = "setup_of_options" in df.columns  # a frame without host or pool labels (fio_depth) brings it
    df = df if given_setup else df.with_columns(_setup_expr(df.columns))
    inputs = [c for c in (*WORKLOAD_INPUTS, "setup_of_options") if c in df.columns]
    distinct = df.select(inputs).unique(maintain_order=True)
    entries = []
    for values in distinct.iter_rows():
        row = dict(zip(inputs, values, strict=True))
        w, src = workload_of(row)
        notes = output_notes(row, w)
        # options given (JSON, a command line), or a size fio printed laying out the file: a workload to match
        given = bool(row.get("options_json")) or bool(parse_command(row.get("command")))
        given = given or any(n.startswith("size ") for n in notes)
        entries.append(WorkloadEntry(values, w, src, notes, given, row["setup_of_options"], row.get("jobname")))
    match_by_output(entries)
    size_from_folder(entries)
    rows = []
    for e in entries:
        w = e.w
        options = [None if w.get(k) is None else str(w[k]) for k in WORKLOAD_OPTIONS]
        rows.append(
            [
                *e.values,
                *options,
                # '? bs=?' runs are not one workload: compared only where the mode and block size are known
                options[0] is not None and options[1] is not None,
                workload_key(w),
                e.source,
                workload_key(w, without=("iodepth", "numjobs")),
                workload_key(w, without=("size", "runtime")),
                "; ".join(e.notes) or None,
            ]
        )
    names = [
        *inputs,
        *(f"wl_{k}" for k in WORKLOAD_OPTIONS),
        "workload_known",
        "workload",
        "workload_source",
        "workload_at_any_depth",
        "workload_at_any_size",
        "workload_inferred",
    ]
    schema: dict[str, pl.DataType | DataTypeClass] = {
        **distinct.schema,
        **{n: pl.String for n in names[len(inputs) :]},
        "workload_known": pl.Boolean,
    }
    table = pl.DataFrame(rows, schema=schema, orient="row")
    out = df.drop([c for c in names[len(inputs) :] if c in df.columns])
    out = out.join(table, on=inputs, how="left", nulls_equal=True, maintain_order="left")
    return out if given_setup else out.drop("setup_of_options")


# what a run's output always shows of its workload (the text preamble, a JSON job): the least a match needs
SHOWN_BY_OUTPUT = ("rw", "bs", "ioengine", "iodepth")

SETUP_OF_OPTIONS_SQL = (
    "coalesce('host ' || f.host, 'pool ' || f.pool || ' (no host label)', 'file ' || f.path) AS setup_of_options"
)


def _setup_expr(columns: list[str]) -> pl.Expr:
    """``setup_of_options``: the runs a run may borrow options from (``match_by_output``): 'host X' (its host
    label), 'pool Y (no host label)' where only a pool is labelled, else 'file F' (its own file: other runs appended
    to one log); None where the frame has none of these. Another machine's options are never a run's own.
    ``SETUP_OF_OPTIONS_SQL`` is the same for a query over ``files f``."""
    parts = []
    if "host" in columns:
        parts.append(pl.concat_str(pl.lit("host "), pl.col("host")))
    if "pool" in columns:
        parts.append(pl.concat_str(pl.lit("pool "), pl.col("pool"), pl.lit(" (no host label)")))
    if "path" in columns:
        parts.append(pl.concat_str(pl.lit("file "), pl.col("path")))
    return (pl.coalesce(parts) if parts else pl.lit(None, pl.String)).alias("setup_of_options")


def _synced(w: dict) -> bool:
    return bool(w.get("fsync") or w.get("fdatasync") or w.get("sync_section"))


@dataclass
class WorkloadEntry:
    """One distinct set of a run's workload inputs (``values``, in ``WORKLOAD_INPUTS`` order) and what was made of
    it: the workload ``w`` (``workload_of``), where it came from (``source``), ``notes`` on what was read from the
    output, and ``given``: whether its options were given (JSON, a command line) or its size printed."""

    values: tuple
    w: dict
    source: str
    notes: list[str]
    given: bool
    setup: str | None = None  # _setup_expr: the runs it may borrow options from share it
    jobname: str | None = None  # the job's name (a size laid out in one folder: ``size_from_folder``)


def match_by_output(entries: list[WorkloadEntry]) -> None:
    """A run with no options but its output's (no command line, manifest or JSON options: a pasted transcript) takes
    the workload of the runs of the same setup (host label; pool label where no host is labelled; else its own
    file: another machine's options are not its own) whose options are given (or whose size fio printed
    laying out the file: a later run of one log finds the file laid out and prints no size) where exactly one such
    workload fits all it shows: rw, bs,
    ioengine and iodepth (required), every other option its output gives (numjobs, a laid-out size), and a sync
    section exactly where fsync/fdatasync was on. ``entries`` are changed in place; what came from the match is said in ``notes``."""
    given = [e for e in entries if e.given]
    for e in entries:
        w = e.w
        if e.given or e.setup is None or any(w.get(k) is None for k in SHOWN_BY_OUTPUT):
            continue
        shown = [k for k in WORKLOAD_OPTIONS if w.get(k) is not None]
        fits = {
            workload_key(g.w): g.w
            for g in given
            if g.setup == e.setup and _synced(g.w) == _synced(w) and all(str(g.w.get(k)) == str(w[k]) for k in shown)
        }
        if len(fits) != 1:
            continue
        ((key, match),) = fits.items()
        taken = [k for k in WORKLOAD_OPTIONS if w.get(k) is None and match.get(k) is not None]
        e.w = dict(match)
        e.source = "output (matched)"
        sync = ", a fsync/fdatasync section" if w.get("sync_section") else ""
        e.notes = [
            f"no command line or options: matched by what its output shows ({', '.join(shown)}{sync}) to `{key}`, the "
            f"one workload of {e.setup} it fits; {', '.join(taken)} taken from that workload (not in its output)",
            *(n for n in e.notes if not n.startswith("its output has a fsync")),
        ]


LAID_OUT = "from fio's 'Laying out IO file' line"


def size_from_folder(entries: list[WorkloadEntry]) -> None:
    """A run whose output shows no size (no options, no command, no 'Laying out IO file' line) of a file without a host
    label takes the size another file of its folder printed laying out its file (``output_notes``), where that run
    has its job name and the same workload otherwise: fio lays out a job's file (named after the job) in its
    directory once, and a later run finds it there and prints no size (the h6n trial's rr32-rep1..4.txt: one command
    four times, only the first printed 'rr32: Laying out IO file (1 file / 256MiB)', and 08 made two workloads of
    them). Said in ``notes``; the runs stay setups of their own (no host label), as ever."""

    def folder(x: WorkloadEntry) -> str | None:  # the folder of an unlabelled run's own file ('file F' setups)
        return x.setup.rsplit("/", 1)[0] if x.setup and x.setup.startswith("file ") else None

    laid = [e for e in entries if e.jobname and folder(e) and any(LAID_OUT in n for n in e.notes)]
    for e in entries:
        if e.w.get("size") is not None or not e.jobname or folder(e) is None:
            continue
        shown = [k for k in WORKLOAD_OPTIONS if k != "size" and e.w.get(k) is not None]
        fits = {
            int(g.w["size"]): g
            for g in laid
            if g.jobname == e.jobname
            and folder(g) == folder(e)
            and all(str(g.w.get(k)) == str(e.w[k]) for k in shown)
            and all(g.w.get(k) is None for k in WORKLOAD_OPTIONS if k not in shown and k != "size")
        }
        if len(fits) != 1:
            continue
        ((size, g),) = fits.items()
        e.w = {**e.w, "size": size}
        e.notes = [
            *e.notes,
            f"size {fmt_bytes(size)} {LAID_OUT} of {str(g.setup).rsplit('/', 1)[-1]}, job "
            f"{e.jobname} in the same folder (a later run finds the file laid out and prints no size)",
        ]


# a 'run N' mark in a label ('x (run 2)', 'x, run 3', as ``storagelab lab --repeat`` writes them)
RUN_MARK = r"(?i)\s*\(run\s*#?\d+\)|[,;]?\s*\brun\s*#?\d+\b"


def config_label(df: pl.DataFrame) -> pl.Expr:
    """What repeats of one configuration share: the run's label (its file's path where it has none: ``run_label``)
    with a 'run N' mark taken out. Runs appended in one file share their label, so they are repeats; two files
    without labels are two configurations (also two of one name in different folders), never pooled as repeats."""
    return run_label(df).str.replace_all(RUN_MARK, "").str.replace_all(r"\(\s*\)", "").str.strip_chars(" ,")


def comparable(df: pl.DataFrame, by: tuple[str, ...] = ("workload", "direction")) -> pl.DataFrame:
    """Add ``runs_in_workload``: how many runs share this run's workload and direction (1 = nothing to compare)."""
    if df.is_empty():
        return df.with_columns(runs_in_workload=pl.lit(None, pl.UInt32))
    return df.with_columns(runs_in_workload=pl.len().over(list(by)))
