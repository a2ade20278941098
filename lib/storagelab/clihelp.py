"""The command line's help texts: an example for every subcommand and the exit codes.

Kept apart from cli.py's option definitions; ``decorate`` adds them to the parsers after they are
built. A new subcommand gets its example here (tests/test_cli_errors.py checks that every
subcommand's --help shows one).
"""

from __future__ import annotations

import argparse
import textwrap

EXIT_CODES = """\
exit codes:
  0    ok
  1    some files failed to parse (the others were processed; see the messages);
       compare: nothing of yours and theirs to put side by side (the lines say what is missing)
  2    usage or environment error (bad option, missing file or database, bad SQL, database busy)
  130  interrupted (Ctrl-C)
  141  build, ingest, run, report, export, spark-ingest, lab: stopped unfinished, the reader of the output went away
A closed output pipe (storagelab parse FILE | head) ends a command that only prints quietly with 0."""

EXAMPLES = {
    "ingest": """\
examples:
  storagelab ingest                              # data/raw/ -> data/parsed/storagelab.duckdb
  storagelab ingest ~/logs --db my.duckdb --quiet
Compressed logs (.gz, .xz, .bz2, .zst) are read as they are; paths matched by
data/raw/.storagelabignore (gitignore syntax) are skipped and counted as ignored.""",
    "parse": """\
examples:
  storagelab parse data/raw/homelab-mergerfs/fio-btrfs-raid1.txt
  storagelab parse run1.log.gz run2.log.xz | jq -c 'select(.table == "fio_groups")'
  storagelab parse data/raw/thumper-x4500        # every file in the folder, as ingest lists them
Output: JSON lines; per file one {"table": "files", ...} record, then one object per row.
A file that cannot be parsed is reported on stderr and the others are still printed (exit 1).""",
    "run": """\
examples:
  storagelab run                                 # every notebook in notebooks/
  storagelab run 05_stacks -p study my-nas""",
    "notebooks": """\
examples:
  storagelab notebooks                           # every notebook in notebooks/
  storagelab notebooks 05_stacks -p study my-nas""",
    "report": """\
example:
  storagelab report                              # reports/executed/*.ipynb -> reports/*.html""",
    "build": """\
examples:
  storagelab build --wait 60                     # ingest, run every notebook, render reports/
  storagelab build --study my-nas                # ingest; only my-nas's notebooks and those over every study""",
    "schema": """\
examples:
  storagelab schema | less
  storagelab schema --write                      # regenerate docs/schema.md""",
    "sql": """\
examples:
  storagelab sql "SELECT label, bw_bytes_per_s/2^20 AS mib_s FROM fio_groups JOIN files USING (file_id)"
  storagelab sql "SELECT * FROM files" --csv > files.csv
  storagelab sql "SELECT * FROM fio_results" --json | jq .bw_bytes_per_s
  storagelab sql "SELECT * FROM fio_percentiles" --parquet pct.parquet
  echo "SELECT count(*) FROM files" | storagelab sql -
On a terminal the table shows 40 rows and cuts long cells; piped or redirected, every row and
column is written in full with no footer.""",
    "export": """\
examples:
  storagelab export --dataset /srv/storagelab-dataset              # data/parsed/storagelab.duckdb -> Parquet dataset
  storagelab ingest ~/logs --dataset /srv/storagelab-dataset       # ingest, then bring the dataset up to date
  storagelab run 05_stacks -p db_path /srv/storagelab-dataset      # a notebook on the dataset
Layout: DIR/<table>/tool=<tool>/study=<study>/month=<YYYY-MM>/part-<generation>.parquet, and
DIR/_storagelab/meta.json, written last: it lists the dataset's part files (a killed run leaves the old dataset).""",
    "spark-ingest": """\
examples:
  storagelab spark-ingest data/raw /srv/storagelab-dataset --manifest data/raw/manifest.csv
  storagelab spark-ingest s3a://bucket/fio-logs/ s3a://bucket/dataset --master spark://head:7077 \
      --conf spark.jars.packages=org.apache.hadoop:hadoop-aws:3.4.1   # S3 needs hadoop-aws (and credentials)
  storagelab run 08_fio -p db_path /srv/storagelab-dataset -p study ''
The output is the dataset `storagelab export --dataset` writes, equal row by row to a local ingest of the
same files (file ids, paths, SHA-256, parser versions, rows, errors, copies); only ingest times and mtime
precision (Spark: milliseconds) differ. Failed files are listed (exit 1), as ingest lists them.""",
    "compare": """\
examples:
  storagelab compare --study homelab-mergerfs --mine lab          # your study 'lab' beside the homelab runs
  storagelab compare --study homelab-mergerfs --mine lab --host nas1 --db my.duckdb
  storagelab compare --mine lab --host nas1 --with study=lab,host=nas2   # one of your hosts beside another
Runs match on the fio workload (rw, bs, iodepth, numjobs, ioengine, direct, sync) at any size and runtime;
bandwidth is compared per disk where both sides label vdev_type, vdev_count and vdev_width.""",
    "lab": """\
examples:
  storagelab lab
  storagelab lab --no-browser --port 8899        # other options are passed to JupyterLab""",
}


def _raw(parser: argparse.ArgumentParser) -> None:
    """Keep our line breaks: a description or epilog written as one line is wrapped here instead."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    for attr in ("description", "epilog"):
        text = getattr(parser, attr)
        if text and "\n" not in text:
            setattr(parser, attr, textwrap.fill(text, 79))


def decorate(parser: argparse.ArgumentParser, subparsers: argparse._SubParsersAction) -> None:
    """Add the exit codes to every help, and an example to each subcommand that has no epilog of its own."""
    _raw(parser)
    parser.epilog = "\n\n".join(x for x in (parser.epilog, EXIT_CODES) if x)
    done = set()
    for name, sub in subparsers.choices.items():
        if id(sub) in done:  # an alias of a command already decorated
            continue
        done.add(id(sub))
        _raw(sub)
        sub.epilog = "\n\n".join(x for x in (sub.epilog or EXAMPLES.get(name), EXIT_CODES) if x)
