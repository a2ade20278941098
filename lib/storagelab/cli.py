"""The storagelab command line: `storagelab --help` lists every task."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from . import __version__, paths


def _jsonable(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def cmd_parse(args) -> int:
    import hashlib

    from .errors import ParseError
    from .parsers import parse_bytes, parser_version

    path = Path(args.file)
    data = path.read_bytes()
    try:
        parsed, mod = parse_bytes(data, str(path))
    except ParseError as e:
        print(f"storagelab parse: {e}", file=sys.stderr)
        return 2
    out = sys.stdout
    head = dict(table="files", path=str(path), sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data),
                tool=parsed.tool, tool_version=parsed.tool_version, format=parsed.format,
                parser_version=parser_version(mod), n_rows=parsed.n_rows, warnings="\n".join(parsed.warnings) or None)
    out.write(json.dumps(head, sort_keys=False) + "\n")
    for table, rows in parsed.tables.items():
        for row in rows:
            rec = {"table": table}
            rec.update({k: _jsonable(v) for k, v in row.items()})
            out.write(json.dumps(rec) + "\n")
    for w in parsed.warnings:
        print(f"warning: {path}: {w}", file=sys.stderr)
    return 0


def cmd_ingest(args) -> int:
    """Exit 0: done; 1: some files failed (the others are in) or the Parquet export failed;
    2: nothing done (bad option, manifest, database, disk); 130: interrupted (Ctrl-C)."""
    import os

    from .errors import DatabaseBusyError, ManifestError

    def refuse(message: str) -> int:
        print(f"storagelab ingest: {message}", file=sys.stderr)
        return 2

    workers, wait, batch = args.workers, args.wait, args.batch_files
    if workers is not None and workers < 1:
        return refuse(f"--workers must be at least 1, got {workers}")
    if workers is not None and workers > (os.cpu_count() or 1):
        print(f"note: --workers {workers} is more than the {os.cpu_count() or 1} CPUs: using {os.cpu_count() or 1}",
              file=sys.stderr)
        workers = os.cpu_count() or 1
    if batch is not None and batch < 1:
        return refuse(f"--batch-files must be at least 1, got {batch}")
    if not (math.isfinite(wait) and wait >= 0):
        return refuse(f"--wait takes a number of seconds >= 0, got {wait}")
    if args.manifest is not None and not Path(args.manifest).is_file():
        what = "is a folder" if Path(args.manifest).is_dir() else "does not exist"
        return refuse(f"--manifest {args.manifest} {what}: check the name, or leave --manifest out to use "
                      f"the manifest.csv of the folder you ingest ({paths.MANIFEST} by default)")
    try:
        from .store import StoreError, ingest

        s = ingest(args.paths or None, db_path=args.db, manifest_path=args.manifest,
                   parquet_dir=False if args.no_parquet else None, workers=workers, wait=wait,
                   batch_files=batch, progress=None if not args.quiet else False)
    except (DatabaseBusyError, ManifestError, StoreError, FileNotFoundError, NotADirectoryError) as e:
        return refuse(str(e))
    except OSError as e:  # e.g. a folder that cannot be read
        return refuse(f"{e.filename or ''}: {e.strerror or e}")
    except KeyboardInterrupt:
        print("storagelab ingest: interrupted; every file written before the stop is in the database, "
              "run ingest again to finish", file=sys.stderr)
        return 130
    for err in s.errors:
        print(f"error: {err}", file=sys.stderr)
    for w in s.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if s.parquet_error:
        print(f"error: {s.parquet_error}", file=sys.stderr)
    if s.rebuilt_schema:
        print("note: database schema (re)created", file=sys.stderr)
    print(s.line())
    return 1 if s.failed or s.parquet_error else 0


def cmd_schema(args) -> int:
    from .schema import markdown

    text = markdown()
    if args.write:
        dest = paths.DOCS / "schema.md"
        dest.write_text(text + "\n")
        print(f"wrote {dest}")
    else:
        print(text)
    return 0


def cmd_sql(args) -> int:
    from .errors import DatabaseBusyError
    from .store import StoreError, connect

    import duckdb

    try:
        con = connect(args.db, read_only=True)
    except (FileNotFoundError, DatabaseBusyError, StoreError) as e:
        print(f"storagelab sql: {e}", file=sys.stderr)
        return 2
    try:
        rel = con.sql(args.query)
        if rel is not None:
            print(rel)
    except duckdb.Error as e:
        print(f"storagelab sql: {e}", file=sys.stderr)
        return 2
    finally:
        con.close()
    return 0


def cmd_run(args) -> int:
    from .errors import ParameterError
    from .report import run_notebooks

    params = {}
    for name, value in args.param or []:
        params[name] = value
    try:
        run_notebooks(args.notebooks or None, params, raw_params=dict(args.raw or []))
    except ParameterError as e:
        print(f"storagelab run: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_report(args) -> int:
    from .report import render_reports

    render_reports()
    return 0


def cmd_build(args) -> int:
    rc = cmd_ingest(argparse.Namespace(paths=None, db=None, manifest=None, no_parquet=False, workers=None,
                                       wait=args.wait, quiet=False, batch_files=5000))
    from .report import render_reports, run_notebooks

    run_notebooks(None, {})
    render_reports()
    return rc


def cmd_lab(args) -> int:
    """JupyterLab as a child that ends with this process: SIGTERM/SIGINT/SIGHUP are passed on to it
    and waited for; if this process is killed outright, the kernel ends the server
    (PR_SET_PDEATHSIG)."""
    import os
    import signal
    import subprocess

    from .procs import die_with_parent

    env = dict(os.environ, STORAGELAB_ROOT=str(paths.ROOT))
    extra = list(args.extra)
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        extra.append("--allow-root")  # containers and CI machines often run as root
    parent = os.getpid()
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", f"--notebook-dir={paths.ROOT}"] + extra, env=env,
                            preexec_fn=lambda: die_with_parent(signal.SIGTERM, parent))

    def forward(signum, frame):
        if proc.poll() is None:
            proc.send_signal(signum)
    old = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    try:
        rc = proc.wait()
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if proc.poll() is None:  # pragma: no cover - left by an unexpected error
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 128 - rc if rc < 0 else rc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="storagelab", description=(
        "Storage benchmark logs (fio, bonnie++, zdb, partition tables, zpool, mbuffer) into DuckDB, "
        "and the studies' analyses as parameterized notebooks."))
    p.add_argument("--version", action="version", version=f"storagelab {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    s = sub.add_parser("ingest", help="parse raw logs into the database (default: data/raw/ -> data/parsed/storagelab.duckdb)")
    s.add_argument("paths", nargs="*", help="files or folders (default data/raw/)")
    s.add_argument("--db", default=None, help=f"database file (default {paths.DB.relative_to(paths.ROOT)})")
    s.add_argument("--manifest", default=None, help="labels CSV (default data/raw/manifest.csv)")
    s.add_argument("--no-parquet", action="store_true", help="do not write data/parsed/*.parquet")
    s.add_argument("--workers", type=int, default=None, help="parser processes (default: CPU count)")
    s.add_argument("--wait", type=float, default=0.0, help="seconds to wait if another process holds the database")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--batch-files", type=int, default=5000,
                   help="most files per transaction batch (default 5000; a batch also ends at 100,000 rows)")
    s.set_defaults(func=cmd_ingest)

    s = sub.add_parser("parse", help="print one file's normalized records as JSON lines (one object per row, key 'table')")
    s.add_argument("file")
    s.set_defaults(func=cmd_parse)

    s = sub.add_parser("run", help="execute notebooks with papermill (all by default); -p NAME VALUE sets a parameter")
    s.add_argument("notebooks", nargs="*", help="notebook names or paths (default: all in notebooks/)")
    s.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="parameter (value parsed as a Python/JSON literal and checked against the default's type)")
    s.add_argument("-r", "--raw", nargs=2, action="append", metavar=("NAME", "VALUE"), help="string parameter, taken as is")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("report", help="render executed notebooks to offline HTML in reports/ (with index.html and figures)")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("build", help="the main job: ingest data/raw/, run every notebook, render reports/")
    s.add_argument("--wait", type=float, default=0.0)
    s.set_defaults(func=cmd_build)

    s = sub.add_parser("schema", help="print the database schema as Markdown (--write updates docs/schema.md)")
    s.add_argument("--write", action="store_true")
    s.set_defaults(func=cmd_schema)

    s = sub.add_parser("sql", help="run a read-only SQL query on the database and print the result")
    s.add_argument("query")
    s.add_argument("--db", default=None)
    s.set_defaults(func=cmd_sql)

    s = sub.add_parser("lab", help="open JupyterLab on the project with its kernel and the database ready "
                                   "(other options go to JupyterLab, e.g. --no-browser --port 8888)")
    s.set_defaults(func=cmd_lab)

    args, unknown = p.parse_known_args(argv)
    if args.cmd == "lab":
        args.extra = unknown
    elif unknown:
        p.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
