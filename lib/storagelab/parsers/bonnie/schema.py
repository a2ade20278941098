"""The tables bonnie++ results fill (docs/schema.md is generated from them)."""

from __future__ import annotations

from ..base import LINES, table

TABLES = {
    "bonnie_runs": table(
        "One row per bonnie++ result row: a text-table row (its IO row and file row joined) or a CSV line. "
        "A run printed both ways appears twice, linked by paired_run_index; `preferred` marks one row per run.",
        ("run_index", "INTEGER", "0-based order of the result row in the file"),
        ("source", "VARCHAR", "'text' (table row) or 'csv' (CSV line)"),
        (
            "machine",
            "VARCHAR",
            "machine name as printed (the text cuts it to its column, the CSV has it whole); NULL when not printed",
        ),
        (
            "machine_truncated",
            "BOOLEAN",
            "true when the text cut the name (known from the paired CSV line), false "
            "when it is known whole, NULL when it fills its column and cannot be checked",
        ),
        (
            "version",
            "VARCHAR",
            "bonnie++ version (text `Version` line or CSV bonnie_version): 1.03e, 1.97, 1.98, 2.00a",
        ),
        ("format_version", "VARCHAR", "CSV field 0 (1.96, 1.97, 1.98); NULL for 1.03 CSV and for text rows"),
        (
            "size_bytes",
            "BIGINT",
            "IO test file size in bytes (size cell `64G` = 64 GiB, `8196M` = 8196 MiB); "
            "NULL when the IO tests did not run or the cell was cut",
        ),
        (
            "chunk_bytes",
            "BIGINT",
            "IO chunk size in bytes (8192 when not printed, which means the default); NULL in "
            "a 1.98+ CSV line without paired text (that CSV never records it)",
        ),
        (
            "concurrency",
            "INTEGER",
            "-c value (1.9x `Concurrency` row, 1.98+ size cell part 3, CSV field 3); NULL for 1.03",
        ),
        (
            "seeks",
            "BIGINT",
            "number of seeks (1.98+ size cell part 4 or CSV field 7; 8192 = default); NULL before 1.98",
        ),
        (
            "seekers",
            "INTEGER",
            "number of seeker processes (1.98+ CSV field 8, or text size cell part 5 when "
            "printed: 2.00a drops a one-digit value from the text, so NULL there); "
            "NULL before 1.98",
        ),
        ("num_files_printed", "INTEGER", "files count as printed (the -n value, in units of 1024 files)"),
        ("num_files", "BIGINT", "real number of files = num_files_printed x 1024"),
        ("max_size_bytes", "BIGINT", "largest file size in bytes (0 = empty files, the default); NULL for links"),
        ("min_size_bytes", "BIGINT", "smallest file size in bytes (0 when not printed); NULL for links"),
        ("link_mode", "VARCHAR", "'link' or 'symlink' when -n ...:-1/-2 made links instead of files, else NULL"),
        ("num_dirs", "INTEGER", "number of directories the files are spread over; NULL when not printed (<= 1)"),
        ("seed", "VARCHAR", "random seed (1.9x+ CSV field 4); NULL in text"),
        (
            "paired_run_index",
            "INTEGER",
            "run_index of the other representation of the same run (text row <-> CSV line), NULL if none",
        ),
        (
            "preferred",
            "BOOLEAN",
            "true for one row per run: the CSV line when both exist (exact integers, whole name), else the text row",
        ),
        (
            "section",
            "VARCHAR",
            "the Markdown headings that hold the run, outer to inner, joined by ' > ' (outside the fenced blocks of "
            "a file that has them: a write-up of several machines says which machine each run is on only there); "
            "NULL before the first heading and in a file without fences. Runs of different sections are never "
            "taken for repeats",
        ),
        *LINES,
    ),
    "bonnie_results": table(
        "Long form: one row per (run, test) that ran. Tests: putc, put_block, rewrite, getc, get_block, seeks, "
        "seq_create, seq_read, seq_delete, ran_create, ran_read, ran_delete (seq_read/ran_read are bonnie's 'stat').",
        ("run_index", "INTEGER", "bonnie_runs.run_index"),
        ("test", "VARCHAR", "test name (see table doc)"),
        (
            "bytes_per_s",
            "DOUBLE",
            "throughput in bytes/s (putc, put_block, rewrite, getc, get_block); NULL for other tests or too_fast",
        ),
        ("ops_per_s", "DOUBLE", "seeks/s (seeks) or files/s (file tests); NULL for throughput tests or too_fast"),
        ("cpu_pct", "DOUBLE", "CPU use in percent (can exceed 100 with several processes); NULL when too_fast"),
        (
            "too_fast",
            "BOOLEAN",
            "true when printed +++++: the test took < 0.5 s and bonnie++ gave no rate (value NULL, never 0)",
        ),
        (
            "latency_ns",
            "DOUBLE",
            "longest single-operation latency in ns (1.9x+ Latency row / CSV latency field); NULL when empty",
        ),
        (
            "suspect",
            "BOOLEAN",
            "true for a 1.98+ text create/stat/delete rate printed as an integer with no CSV "
            "line to correct it (bonnie++ 1.98-2.00a print garbage there)",
        ),
        (
            "value_from",
            "VARCHAR",
            "'text' or 'csv': where bytes_per_s/ops_per_s came from (a 1.98+ text row takes "
            "its file rates from the paired CSV line)",
        ),
        ("source", "VARCHAR", "'text' or 'csv' (as in bonnie_runs)"),
        ("value_text", "VARCHAR", "the value cell as printed, e.g. '10.4m', '+++++', '165.746758'"),
        ("latency_text", "VARCHAR", "the latency cell as printed, e.g. '437s'"),
        *LINES,
    ),
}
