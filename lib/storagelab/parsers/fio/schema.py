"""Tables filled by the fio parsers (normal text, JSON, JSON+, terse). Base units only."""

from __future__ import annotations

from ..base import LINES, table

DIRECTIONS = ("read", "write", "trim", "mixed", "sync")  # fio_results.direction, in fio's order

_LAT = []
for _k, _what in (("slat", "submission"), ("clat", "completion"), ("lat", "total")):
    _LAT += [
        (f"{_k}_min_ns", "DOUBLE", f"{_what} latency minimum, ns"),
        (f"{_k}_max_ns", "DOUBLE", f"{_what} latency maximum, ns"),
        (f"{_k}_mean_ns", "DOUBLE", f"{_what} latency mean, ns"),
        (f"{_k}_stdev_ns", "DOUBLE", f"{_what} latency standard deviation, ns"),
        (f"{_k}_samples", "BIGINT", f"{_what} latency sample count (JSON N, fio >= 3.18)"),
    ]

TABLES = {
    "fio_jobs": table(
        "One row per job block (text; one per group with group_reporting), JSON job object or terse line.",
        ("job_index", "INTEGER", "0-based position of the job in the file (across JSON documents)"),
        (
            "doc_index",
            "INTEGER",
            "0-based report number in the file: JSON document or text report (several with --status-interval, "
            "or runs appended to one log)",
        ),
        (
            "is_final",
            "BOOLEAN",
            "true for the last report of each fio run in the file (the ones analyses use): the last of "
            "--status-interval reports; each run of several appended to one log",
        ),
        ("jobname", "VARCHAR", "job name (with group_reporting: the first job's name)"),
        ("groupid", "INTEGER", "reporting group id"),
        (
            "jobs",
            "INTEGER",
            "number of threads summed into this record (text jobs=N; JSON/terse: 1 unless group_reporting)",
        ),
        ("error", "INTEGER", "fio error code (0 = ok)"),
        ("pid", "BIGINT", "process id printed in the text header"),
        ("report_time", "VARCHAR", "time stamp as printed (text ctime, JSON 'time')"),
        ("report_epoch_s", "BIGINT", "JSON 'timestamp' (epoch seconds)"),
        ("rw", "VARCHAR", "rw= mode (from the text preamble line or JSON job options)"),
        ("block_size_bytes", "BIGINT", "bs= block size, bytes (largest of read/write sizes in the preamble)"),
        ("ioengine", "VARCHAR", "ioengine= option"),
        ("iodepth", "INTEGER", "iodepth= option"),
        ("numjobs", "INTEGER", "numjobs= option where known (JSON job options)"),
        ("options_json", "VARCHAR", "all job + global options as a JSON object of strings, where known"),
        (
            "layout_files",
            "INTEGER",
            "files fio laid out for this job before its run (text 'Laying out IO file (1 file / 1024MiB)')",
        ),
        (
            "layout_bytes",
            "BIGINT",
            "bytes fio laid out for this job, as printed (MiB x 2^20, rounded down to a whole MiB by fio; 2.x "
            "prints MB for the same >> 20): the file's size where it did not exist; null where fio printed no such line",
        ),
        ("cpu_usr_pct", "DOUBLE", "user CPU, percent"),
        ("cpu_sys_pct", "DOUBLE", "system CPU, percent"),
        ("ctx", "BIGINT", "context switches"),
        ("majf", "BIGINT", "major page faults"),
        ("minf", "BIGINT", "minor page faults"),
        *LINES,
    ),
    "fio_results": table(
        "One row per (job, direction) that did I/O.",
        ("job_index", "INTEGER", "fio_jobs.job_index"),
        ("direction", "VARCHAR", "read, write, trim, mixed or sync"),
        ("io_bytes", "DOUBLE", "bytes transferred"),
        ("bw_bytes_per_s", "DOUBLE", "bandwidth, bytes per second"),
        ("iops", "DOUBLE", "I/O operations per second"),
        ("runtime_ns", "DOUBLE", "runtime of this direction, ns"),
        ("total_ios", "BIGINT", "completed I/Os (text: issued total)"),
        ("short_ios", "BIGINT", "short I/Os"),
        ("dropped_ios", "BIGINT", "dropped I/Os"),
        *_LAT,
        ("bw_min_bytes_per_s", "DOUBLE", "per-sample bandwidth minimum, bytes/s"),
        ("bw_max_bytes_per_s", "DOUBLE", "per-sample bandwidth maximum, bytes/s"),
        ("bw_mean_bytes_per_s", "DOUBLE", "per-sample bandwidth mean, bytes/s"),
        ("bw_stdev_bytes_per_s", "DOUBLE", "per-sample bandwidth standard deviation, bytes/s"),
        ("bw_agg_pct", "DOUBLE", "this job's share of its group's bandwidth, percent"),
        ("bw_samples", "BIGINT", "number of bandwidth samples"),
        ("iops_min", "DOUBLE", "per-sample IOPS minimum"),
        ("iops_max", "DOUBLE", "per-sample IOPS maximum"),
        ("iops_mean", "DOUBLE", "per-sample IOPS mean"),
        ("iops_stdev", "DOUBLE", "per-sample IOPS standard deviation"),
        ("iops_samples", "BIGINT", "number of IOPS samples"),
        (
            "exact",
            "BOOLEAN",
            "true when the numbers are exact integers (JSON, terse); false for text rounded to 3-4 significant figures",
        ),
        *LINES,
    ),
    "fio_percentiles": table(
        "Latency percentiles in long form.",
        ("job_index", "INTEGER", "fio_jobs.job_index"),
        ("direction", "VARCHAR", "read, write, trim, mixed or sync"),
        ("kind", "VARCHAR", "clat, lat or slat (which latency the percentiles describe)"),
        ("percentile", "DOUBLE", "percentile, e.g. 99.9"),
        ("latency_ns", "DOUBLE", "latency at that percentile, ns"),
        *LINES,
    ),
    "fio_latency_bins": table(
        "JSON+ histogram bins (non-zero only).",
        ("job_index", "INTEGER", "fio_jobs.job_index"),
        ("direction", "VARCHAR", "read, write, trim, mixed or sync"),
        ("kind", "VARCHAR", "clat, lat or slat"),
        ("latency_ns", "DOUBLE", "bin value (fio's bucket midpoint), ns"),
        ("count", "BIGINT", "I/Os in the bin"),
    ),
    "fio_latency_buckets": table(
        "Latency distribution (the 'lat (usec) : 2=1.81%' lines; JSON latency_ns/us/ms). All directions together.",
        ("job_index", "INTEGER", "fio_jobs.job_index"),
        ("bucket_lo_ns", "DOUBLE", "bucket lower edge (exclusive), ns; 0 for the first"),
        ("bucket_hi_ns", "DOUBLE", "bucket upper edge (inclusive), ns; NULL for the open '>=2000' msec bucket"),
        ("pct", "DOUBLE", "share of I/Os, percent"),
        *LINES,
    ),
    "fio_iodepths": table(
        "IO depths / submit / complete distributions.",
        ("job_index", "INTEGER", "fio_jobs.job_index"),
        ("kind", "VARCHAR", "depth, submit or complete"),
        ("bucket", "VARCHAR", "bucket label as printed: 1, 2, 4, ..., >=64"),
        ("pct", "DOUBLE", "percent"),
        *LINES,
    ),
    "fio_groups": table(
        "Run status group summaries (text), or the same aggregate recomputed from JSON/terse jobs (derived=true).",
        ("doc_index", "INTEGER", "0-based report number in the file (as fio_jobs.doc_index)"),
        ("groupid", "INTEGER", "reporting group id"),
        ("direction", "VARCHAR", "read, write, trim or mixed"),
        ("bw_bytes_per_s", "DOUBLE", "aggregate bandwidth, bytes/s"),
        ("bw_min_bytes_per_s", "DOUBLE", "slowest job's bandwidth, bytes/s"),
        ("bw_max_bytes_per_s", "DOUBLE", "fastest job's bandwidth, bytes/s"),
        ("io_bytes", "DOUBLE", "bytes moved by the group"),
        ("run_min_ns", "DOUBLE", "shortest job runtime, ns"),
        ("run_max_ns", "DOUBLE", "longest job runtime, ns"),
        ("derived", "BOOLEAN", "true when computed from job records rather than printed by fio"),
        ("exact", "BOOLEAN", "true when computed from exact integers"),
        *LINES,
    ),
    "fio_disk_stats": table(
        "Disk stats (read/write) lines; JSON disk_util; terse disk fields. ticks are converted from ms to ns.",
        ("disk", "VARCHAR", "device name as fio printed it"),
        ("read_ios", "BIGINT", "completed read I/Os"),
        ("write_ios", "BIGINT", "completed write I/Os"),
        ("read_sectors", "BIGINT", "sectors read (fio >= 3.36)"),
        ("write_sectors", "BIGINT", "sectors written (fio >= 3.36)"),
        ("read_merges", "BIGINT", "read merges"),
        ("write_merges", "BIGINT", "write merges"),
        ("read_ticks_ns", "DOUBLE", "time busy reading, ns"),
        ("write_ticks_ns", "DOUBLE", "time busy writing, ns"),
        ("in_queue_ns", "DOUBLE", "time in queue, ns"),
        ("util_pct", "DOUBLE", "utilisation, percent"),
        ("has_slaves", "BOOLEAN", "md/dm device with aggregate fields of its member disks"),
        ("aggr_read_ios", "BIGINT", "members' average read I/Os"),
        ("aggr_write_ios", "BIGINT", "members' average write I/Os"),
        ("aggr_read_sectors", "BIGINT", "members' average sectors read"),
        ("aggr_write_sectors", "BIGINT", "members' average sectors written"),
        ("aggr_read_merges", "BIGINT", "members' average read merges"),
        ("aggr_write_merges", "BIGINT", "members' average write merges"),
        ("aggr_read_ticks_ns", "DOUBLE", "members' average read ticks, ns"),
        ("aggr_write_ticks_ns", "DOUBLE", "members' average write ticks, ns"),
        ("aggr_in_queue_ns", "DOUBLE", "members' average in-queue time, ns"),
        ("aggr_util_pct", "DOUBLE", "busiest member's utilisation, percent"),
        *LINES,
    ),
}

# fio's log files (write_bw_log / write_iops_log / write_lat_log / write_hist_log): parsers/fio/logs.py
TABLES["fio_commands"] = table(
    "The fio command line a terminal transcript shows before a run's report (``root@host:~# fio --name=x ...``, "
    "or a bare ``fio --name=...`` line, or a Markdown write-up's ``Command: `fio ...` ``): what the user typed, kept because fio's own text output does not "
    "print every option (direct, size, ...). The analyses use it for the runs from doc_index on when the "
    "manifest gives no command.",
    ("doc_index", "INTEGER", "the first report of the run it started (fio_jobs.doc_index)"),
    (
        "command",
        "VARCHAR",
        "the command from its fio word on, as typed (sudo, time, VAR=value before it dropped); NULL where several "
        "different commands come before the run and none is paired with it (the file's warning names their lines)",
    ),
    *LINES,
)
TABLES["fio_sections"] = table(
    "The Markdown headings a write-up puts before a run's report (``## aws ec2 micro``, outside the fenced blocks, in "
    "a file that has fenced blocks): a write-up of several machines says which machine each run is on only there. "
    "The analyses name a run by its section where its file's runs lie under different ones, and never take runs "
    "of different sections for repeats.",
    ("doc_index", "INTEGER", "the first report after the heading (fio_jobs.doc_index)"),
    (
        "section",
        "VARCHAR",
        "the headings that hold the run, outer to inner, as printed without their '#' marks, joined by ' > '",
    ),
    *LINES,
)
TABLES["fio_log_samples"] = table(
    "One row per line of a fio bw/iops/lat/clat/slat log (`PREFIX_KIND.N.log`). The kind is only in the file "
    "name: NULL when the name does not say it. Join to the run's output: same folder, `prefix` = the "
    "write_*_log= value (the jobname by default), `job_index` = N (1-based, the job's position).",
    (
        "prefix",
        "VARCHAR",
        "file name before _bw/_iops/_lat/_clat/_slat (the write_*_log= value); NULL when the name does not follow fio's pattern",
    ),
    ("kind", "VARCHAR", "bw, iops, lat, clat or slat (from the file name); NULL when unknown"),
    ("job_index", "INTEGER", "N of the .N.log suffix (1-based job number); NULL with per_job_logs=0"),
    (
        "time_ns",
        "BIGINT",
        "when fio logged the entry, ns since the job started (since the epoch with log_unix_epoch; fio prints ms): "
        "without log_avg_msec an I/O's completion (slat: its submission); with it (windowed) the end of the window "
        "the entry averages, as fio logs a window when it closes, within a few ms of a multiple of log_avg_msec",
    ),
    ("value", "BIGINT", "the value exactly as fio printed it (KiB/s, IOPS or ns)"),
    ("bw_bytes_per_s", "DOUBLE", "bw logs: bandwidth, bytes/s (fio logs KiB/s)"),
    ("iops", "DOUBLE", "iops logs: I/O operations per second (1 per line without log_avg_msec)"),
    (
        "latency_ns",
        "DOUBLE",
        "lat/clat/slat logs: latency, ns (fio >= 3.0 logs ns); NULL for a log without the priority column (4 "
        "columns, or 5 with offsets): fio 2.x logged usec there, early 3.x ns, and the log does not say which",
    ),
    ("direction", "VARCHAR", "read, write, trim or sync (fio's 0/1/2/3)"),
    ("block_size_bytes", "BIGINT", "I/O size, bytes; NULL for windowed entries (log_avg_msec: fio prints 0)"),
    ("offset_bytes", "BIGINT", "I/O offset, bytes (log_offset=1); NULL when not logged or windowed"),
    (
        "priority",
        "INTEGER",
        "command priority column (0/1: real-time class; the ioprio value with log_prio=1); NULL when absent (fio < 3.x)",
    ),
    ("windowed", "BOOLEAN", "true for an entry averaged (or maximum) over log_avg_msec (block size printed as 0)"),
    *LINES,
)
TABLES["fio_hist_samples"] = table(
    "write_hist_log completion latency histograms (`PREFIX_clat_hist.N.log`), long form: one row per "
    "non-zero bin of each interval. Counts are the I/Os completed since the previous line.",
    ("prefix", "VARCHAR", "file name before _clat_hist (the write_hist_log= value); NULL when unknown"),
    ("job_index", "INTEGER", "N of the .N.log suffix; NULL with per_job_logs=0"),
    ("time_ns", "BIGINT", "end of the interval, ns (fio logs ms)"),
    ("direction", "VARCHAR", "read, write, trim or sync"),
    ("block_size_bytes", "BIGINT", "block size fio printed for the interval, bytes"),
    ("bin_index", "INTEGER", "bin number as fio printed it (0-based; coarse bins with log_hist_coarseness)"),
    ("latency_lo_ns", "DOUBLE", "bin lower edge, ns"),
    ("latency_ns", "DOUBLE", "bin value, ns: fio's plat_idx_to_val midpoint (the key JSON+ uses for its bins)"),
    ("latency_hi_ns", "DOUBLE", "bin upper edge (exclusive), ns"),
    ("count", "BIGINT", "I/Os completed in the interval with a latency in the bin"),
    *LINES,
)
