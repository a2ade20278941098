"""The command line's argument parser: one function per subcommand, each given the function that runs it."""

from __future__ import annotations

import argparse
import re

from . import __version__, clihelp, paths
from .labhelp import DESCRIPTION as LAB_DESCRIPTION


def _run_options(s, func) -> None:
    s.add_argument("notebooks", nargs="*", help="notebook names or paths (default: all in notebooks/)")
    s.add_argument(
        "--list", action="store_true", help="list every notebook with its parameters, types, defaults and meaning"
    )
    s.add_argument(
        "-p",
        "--param",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUE"),
        help="parameter (value parsed as a Python/JSON literal and checked against the default's type; "
        "string parameters are taken as is)",
    )
    s.add_argument(
        "-r", "--raw", nargs=2, action="append", metavar=("NAME", "VALUE"), help="string parameter, taken as is"
    )
    s.add_argument("--output", default=None, help="report folder (default reports/<study>/, one per selection)")
    s.add_argument("--no-report", action="store_true", help="do not render HTML after running")
    s.set_defaults(func=func)


class Parser(argparse.ArgumentParser):
    """argparse, but ``-p threshold -1e5`` and ``-p floor -inf`` read as values: argparse takes only
    ``-5`` and ``-.5`` for negative numbers, any other word starting with '-' for an option (this
    program has no option that looks like a number)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$|^-inf(inity)?$", re.I)


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return n


def add_ingest(sub, func) -> None:
    s = sub.add_parser(
        "ingest", help="parse raw logs into the database (default: data/raw/ -> data/parsed/storagelab.duckdb)"
    )
    s.add_argument("paths", nargs="*", help="files or folders (default data/raw/)")
    s.add_argument("--db", default=None, help=f"database file (default {paths.DB.relative_to(paths.ROOT)})")
    s.add_argument("--manifest", default=None, help="labels CSV (default data/raw/manifest.csv)")
    s.add_argument("--no-parquet", action="store_true", help="do not write data/parsed/*.parquet")
    s.add_argument("--workers", type=int, default=None, help="parser processes (default: CPU count)")
    s.add_argument("--wait", type=float, default=0.0, help="seconds to wait if another process holds the database")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--dataset", metavar="DIR", help="also bring this Parquet dataset up to date (see `export`)")
    s.add_argument(
        "--batch-files",
        type=int,
        default=5000,
        help="most files per transaction batch (default 5000; a batch also ends at 100,000 rows)",
    )
    s.set_defaults(func=func)


def add_parse(sub, func) -> None:
    s = sub.add_parser("parse", help="print files' normalized records as JSON lines (one object per row, key 'table')")
    s.add_argument(
        "files",
        nargs="+",
        metavar="PATH",
        help="log files (plain or .gz/.xz/.bz2/.zst) or folders (walked as ingest walks them)",
    )
    s.set_defaults(func=func)


def add_run(sub, func) -> None:
    for verb in ("run", "notebooks"):
        s = sub.add_parser(
            verb,
            help="execute notebooks with papermill (all by default) into reports/<study>/; "
            "-p NAME VALUE sets a parameter; --list shows every notebook's parameters",
            epilog="examples: storagelab run --list; storagelab run 05_stacks -p study mylab; "
            "storagelab run 03_sector63 -p study mylab -p stack zfs",
        )
        _run_options(s, func)


def add_report(sub, func) -> None:
    s = sub.add_parser(
        "report", help="render executed notebooks to offline HTML in reports/ (with index.html and figures)"
    )
    s.set_defaults(func=func)


def add_build(sub, func) -> None:
    s = sub.add_parser("build", help="the main job: ingest data/raw/, run every notebook, render reports/")
    s.add_argument("--wait", type=float, default=0.0)
    s.add_argument(
        "--study",
        metavar="NAME",
        default=None,
        help="run only study NAME's notebooks and those over every study (they read its logs too); the other "
        "studies' reports are left as they are",
    )
    s.set_defaults(func=func)


def add_schema(sub, func) -> None:
    s = sub.add_parser("schema", help="print the database schema as Markdown (--write updates docs/schema.md)")
    s.add_argument("--write", action="store_true")
    s.set_defaults(func=func)


def add_export(sub, func) -> None:
    s = sub.add_parser(
        "export",
        help="write the database as a hive-partitioned Parquet dataset (tool=/study=/month=) "
        "that DuckDB, Spark and Trino read; incremental",
    )
    s.add_argument("--dataset", required=True, metavar="DIR", help="the dataset folder (created or brought up to date)")
    s.add_argument("--db", default=None, help=f"database file (default {paths.DB.relative_to(paths.ROOT)})")
    s.set_defaults(func=func)


def add_spark_ingest(sub, func) -> None:
    s = sub.add_parser(
        "spark-ingest",
        help="parse logs on Spark (binaryFile source: local, HDFS, S3) into the "
        "Parquet dataset `export --dataset` writes (needs the spark extra and Java)",
    )
    s.add_argument("input", help="folder (or any path Spark reads) with the logs")
    s.add_argument("output", help="the dataset folder (replaced)")
    s.add_argument("--manifest", default=None, help="labels CSV, paths relative to INPUT (as data/raw/manifest.csv)")
    s.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    s.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, as spark-submit's --conf (repeatable), e.g. "
        "spark.jars.packages=org.apache.hadoop:hadoop-aws:3.4.1 to read s3a:// paths",
    )
    s.set_defaults(func=func)


def add_sql(sub, func) -> None:
    s = sub.add_parser("sql", help="run a read-only SQL query on the database: a table, CSV, JSON lines or Parquet")
    s.add_argument("query", help="the SQL (DuckDB dialect); - reads it from standard input")
    s.add_argument("--db", default=None, help=f"database file (default {paths.DB.relative_to(paths.ROOT)})")
    fmt = s.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="CSV with a header row (NULL as an empty field)")
    fmt.add_argument("--json", action="store_true", help="JSON lines: one object per row, keys in column order")
    fmt.add_argument("--parquet", metavar="FILE", help="write the result to a Parquet file (nothing on stdout)")
    s.add_argument(
        "--force",
        action="store_true",
        help="let --parquet replace an existing file (never the database, a dataset's files or its Parquet copies)",
    )
    s.add_argument(
        "--limit",
        type=_count,
        metavar="N",
        help="at most N rows (0: all). Default: all rows, except the table on a terminal (40)",
    )
    s.set_defaults(func=func)


def add_compare(sub, func) -> None:
    s = sub.add_parser(
        "compare",
        help="your fio runs beside a study's (or another selection's) runs of the same workload, per disk, with noise",
    )
    s.add_argument("--study", help="the study to compare with (e.g. homelab-mergerfs)")
    s.add_argument(
        "--with",
        dest="other",
        help="or another selection to compare with, as key=value pairs (e.g. host=nas2,stack=zfs)",
    )
    s.add_argument("--mine", default="", help="your runs: the study label of your files ('' = every study)")
    s.add_argument("--stack", help="only your files with this stack label")
    s.add_argument("--vdev-type", dest="vdev_type", help="only your files with this vdev_type label")
    s.add_argument("--host", help="only your files with this host label")
    s.add_argument("--db", default=None, help=f"database file (default {paths.DB.relative_to(paths.ROOT)})")
    s.set_defaults(func=func)


def add_lab(sub, func) -> None:
    s = sub.add_parser(
        "lab",
        help="open JupyterLab on the project with its kernel and the database ready "
        "(other options go to JupyterLab, e.g. --no-browser --port 8888); "
        "`lab fio|bonnie|zfs-sweep --help`: measure your own disks",
        description=LAB_DESCRIPTION,
    )
    s.set_defaults(func=func)


def build(commands: dict) -> argparse.ArgumentParser:
    """The parser of every subcommand; ``commands`` maps each subcommand's adder (``add_ingest``...) to its
    ``cmd_*`` function."""
    p = Parser(
        prog="storagelab",
        description=(
            "Storage benchmark logs (fio, bonnie++, zdb, partition tables, zpool, mbuffer) into DuckDB, "
            "and the studies' analyses as parameterized notebooks."
        ),
    )
    p.add_argument("--version", action="version", version=f"storagelab {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    add_ingest(sub, commands["add_ingest"])
    add_parse(sub, commands["add_parse"])
    add_run(sub, commands["add_run"])
    add_report(sub, commands["add_report"])
    add_build(sub, commands["add_build"])
    add_schema(sub, commands["add_schema"])
    add_export(sub, commands["add_export"])
    add_spark_ingest(sub, commands["add_spark_ingest"])
    add_sql(sub, commands["add_sql"])
    add_compare(sub, commands["add_compare"])
    add_lab(sub, commands["add_lab"])
    clihelp.decorate(p, sub)
    return p
