"""The storagelab command line: `storagelab --help` lists every task."""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import signal
import sys
from contextlib import contextmanager, suppress
from importlib import import_module
from pathlib import Path

from . import _early_interrupt, checks, cli_parser, labstart, memfloor, ownership, paths, reportlock, runoutput, stdfds
from .errors import DatabaseBusyError, ManifestError, ParameterError, ParseError, StoragelabError
from .interrupts import interrupt_all
from .out_of_memory import MEMORY_HINT, is_out_of_memory
from .stopsignals import on_stop_signals, stopped
from .stuck import INGEST_STUCK, exit_when_stuck, run_unstuck
from .terminal import os_error_text, say, say_lines

FILE_WARNINGS_SHOWN = 20  # parser warnings an ingest prints; the others are counted (all are in files.warnings)


def _jsonable(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def cmd_parse(args) -> int:
    """Each file's records as JSON lines; folders are listed as ingest lists them (ignore list
    included). Missing paths: exit 2 before any output; files that fail: reported, exit 1."""
    import hashlib  # noqa: PLC0415  (2.5 ms: kept out of the CLI's start-up)

    from .ingest_open import read_input  # noqa: PLC0415
    from .parsers import parser_version  # noqa: PLC0415  (every parser: kept out of the CLI's start-up (18 ms))
    from .store.listing import printable  # noqa: PLC0415  duckdb and the store: kept out of the CLI's start-up (130 ms); a name that is not UTF-8: \xNN, as ingest stores it
    from .store.worker import parse_as_ingest  # noqa: PLC0415

    files = _parse_targets(args.files)
    if files is None:
        return 2
    out = sys.stdout
    failed = 0
    for name in files:
        path = Path(name)
        try:
            data = read_input(path)  # as ingest opens it: no FIFO, no file of root's through a user's link
            parsed, mod = parse_as_ingest(data, str(path))  # ingest's verdict: a parser bug, a number out of range
        except ParseError as e:
            e.path = printable(str(path))
            say(f"storagelab parse: {e}")
            failed += 1
            continue
        except OSError as e:
            say(f"storagelab parse: {printable(str(path))}: {e.strerror or e}")
            failed += 1
            continue
        head = dict(
            table="files",
            path=printable(str(path)),
            sha256=hashlib.sha256(data).hexdigest(),
            size_bytes=len(data),
            tool=parsed.tool,
            tool_version=parsed.tool_version,
            format=parsed.format,
            parser_version=parser_version(mod),
            n_rows=parsed.n_rows,
            warnings="\n".join(parsed.warnings) or None,
        )
        out.write(json.dumps(head, sort_keys=False) + "\n")
        for table, rows in parsed.tables.items():
            for row in rows:
                rec = {"table": table}
                rec.update({k: _jsonable(v) for k, v in row.items()})
                out.write(json.dumps(rec) + "\n")
        for w in parsed.warnings:
            say(f"warning: {printable(str(path))}: {w}")
    if failed and len(files) > 1:
        say(f"storagelab parse: {failed} of {len(files)} files failed")
    return 1 if failed else 0


def _parse_targets(targets: list[str]) -> list[str] | None:
    """The files to parse, folders walked as ingest walks them; None (after a message) if a path is missing."""
    missing = [t for t in targets if not Path(t).exists()]
    if missing:
        for t in missing:
            say(f"storagelab parse: {t}: no such file or directory")
        return None
    if (special := checks.special_files(targets)) is not None:
        say(f"storagelab parse: {special}")
        return None
    from .store import files_to_read  # noqa: PLC0415  (duckdb and the store: kept out of the CLI's start-up (130 ms))

    files: list[str] = []
    for t in targets:  # one record per file named; a folder's files as ingest reads them (each once, ignore list)
        if Path(t).is_dir():
            found = [f.path for f in files_to_read([t])[0]]
            if not found:
                say(f"storagelab parse: {t}: no log files in this folder")
                return None
            files += found
        else:
            files.append(t)
    return files


@exit_when_stuck(INGEST_STUCK)  # Ctrl-C also ends a read that never returns (a FUSE mount that does not answer)
def cmd_ingest(args) -> int:
    """Exit 0: done; 1: some files failed (the others are in) or the Parquet export failed;
    2: nothing done (bad option, manifest, database, disk); 130: interrupted (Ctrl-C)."""

    def refuse(message: str) -> int:
        say(f"storagelab ingest: {message}")
        return 2

    workers, wait, batch = args.workers, args.wait, args.batch_files
    if workers is not None and workers < 1:
        return refuse(f"--workers must be at least 1, got {workers}")
    if workers is not None and workers > (os.cpu_count() or 1):
        say(f"note: --workers {workers} is more than the {os.cpu_count() or 1} CPUs: using {os.cpu_count() or 1}")
        workers = os.cpu_count() or 1
    if batch is not None and batch < 1:
        return refuse(f"--batch-files must be at least 1, got {batch}")
    if not (math.isfinite(wait) and wait >= 0):
        return refuse(f"--wait takes a number of seconds >= 0, got {wait}")
    if args.manifest is not None and not Path(args.manifest).is_file():
        what = checks.not_a_file(Path(args.manifest))
        return refuse(
            f"--manifest {args.manifest} {what}: check the name, or leave --manifest out to use "
            f"the manifest.csv of the folder you ingest ({paths.MANIFEST} by default)"
        )
    if (special := checks.special_files(args.paths or [])) is not None:
        return refuse(special)
    # imported before the try: a Ctrl-C during the import must not leave StoreError unbound in the except clause
    from .store import StoreError, ingest  # noqa: PLC0415  (duckdb and the store: kept out of the CLI's start-up (130 ms))

    try:
        with _python_sigint():
            s = ingest(
                args.paths or None,
                db_path=args.db,
                manifest_path=args.manifest,
                parquet_dir=False if args.no_parquet else None,
                workers=workers,
                wait=wait,
                batch_files=batch,
                progress=False if args.quiet or not sys.stderr.isatty() else None,
            )  # no bar when piped
    except (DatabaseBusyError, ManifestError, StoreError, FileNotFoundError, NotADirectoryError) as e:
        return refuse(os_error_text(e) if isinstance(e, OSError) else str(e))
    except OSError as e:  # e.g. a folder that cannot be read
        return refuse(f"{e.filename or ''}: {e.strerror or e}")
    except KeyboardInterrupt:
        say(
            "storagelab ingest: interrupted; every file written before the stop is in the database, "
            "run ingest again to finish"
        )
        return 130
    for err in s.errors:
        say(f"error: {err}")
    for w in s.warnings:
        say(f"warning: {w}")
    shown = 0 if getattr(args, "one_warning_line", False) else FILE_WARNINGS_SHOWN  # build: one line, not a list
    for w in s.file_warnings[:shown]:  # what a parser kept aside or had to assume, by file and line
        say(f"warning: {w}")
    if s.file_warning_count > shown:
        what = "more parser warnings" if shown else "parser warnings (what a parser kept aside or assumed, by line)"
        say(
            f"warning: {s.file_warning_count - shown} {what}; all of them: "
            'storagelab sql "SELECT path, warnings FROM files WHERE warnings IS NOT NULL"'
        )
    if s.parquet_error:
        say(f"error: {s.parquet_error}")
    if s.rebuilt_schema:
        say("note: database schema (re)created")
    say(s.line(), sys.stdout)
    rc = 1 if s.failed or s.parquet_error else 0
    if getattr(args, "dataset", None):  # (build calls this without the option)
        rc = max(rc, _export_dataset(args.db, args.dataset, "ingest"))
    return rc


def _export_dataset(db, out: str, verb: str) -> int:
    from . import dataset  # noqa: PLC0415  (duckdb/pyarrow: kept out of the CLI's start-up (80 ms))
    from .store import StoreError, connect  # noqa: PLC0415  (duckdb and the store: kept out of the CLI's start-up (130 ms))

    try:
        con = connect(db or paths.DB, read_only=True, wait=30.0)
    except (FileNotFoundError, DatabaseBusyError, StoreError) as e:
        say(f"storagelab {verb}: {os_error_text(e) if isinstance(e, OSError) else e}")
        return 2
    try:
        c = dataset.export(con, Path(out), db or paths.DB)
    except KeyboardInterrupt:
        if verb != "ingest":
            raise
        return _dataset_interrupted(out)
    except Exception as e:
        if verb != "ingest" or not (_SIGINT_SEEN or _interrupted_error(e)):
            raise
        return _dataset_interrupted(out)
    finally:
        con.close()
    say(
        f"dataset {out}: {c['written']} partition(s) written, {c['removed']} removed, {c['unchanged']} unchanged "
        f"({c['files']} Parquet files)",
        sys.stdout,
    )
    return 0


def _interrupted_error(e: BaseException) -> bool:
    from .store.faults import interrupted  # noqa: PLC0415  (duckdb and the store: kept out of the CLI's start-up (130 ms))

    return interrupted(e)


def _dataset_interrupted(out: str) -> int:
    """Ctrl-C while ``ingest --dataset`` wrote the dataset: the database is complete, the dataset is the former
    one or the new one, each whole (meta.json is the commit point)."""
    say(
        f"storagelab ingest: interrupted while writing the dataset {out}: the database is complete and the dataset "
        f"whole (the former one if the stop came first); run `storagelab export --dataset {out}` to update it"
    )
    return 130


def cmd_export(args) -> int:
    return _export_dataset(args.db, args.dataset, "export")


def cmd_spark_ingest(args) -> int:
    try:
        import pyspark  # noqa: F401, PLC0415  (the optional spark extra: only to say whether it is installed)
    except ImportError:
        say(
            "storagelab spark-ingest: pyspark is not installed: "
            f"{sys.executable} -m pip install -c requirements.lock -e '.[spark]' (./run test does)"
        )
        return 2
    import shutil  # noqa: PLC0415  (2 ms: kept out of the CLI's start-up)

    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        say("storagelab spark-ingest: Spark needs Java 17: apt-get install openjdk-17-jre-headless (Debian)")
        return 2
    if args.manifest and not Path(args.manifest).is_file():
        say(f"storagelab spark-ingest: --manifest {args.manifest} {checks.not_a_file(Path(args.manifest))}")
        return 2
    from .ownership import spark_output  # noqa: PLC0415

    shared, args.output = spark_output(args.output)  # made, resolved once and checked: Spark gets that path only
    if shared:
        say(f"storagelab spark-ingest: {shared}")
        return 2
    conf = {}
    for item in args.conf:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            say(f"storagelab spark-ingest: --conf {item!r}: expected KEY=VALUE")
            return 2
        conf[key.strip()] = value

    counts = _on_spark(args, conf)
    failed = counts.pop("error_lines")
    for line in counts.pop("warning_lines", []):
        say(f"warning: {line}")
    for line in failed:  # as the local ingest lists them; they are also in OUTPUT/ingest_errors
        say(f"error: {line}")
    print(
        f"spark-ingest: {counts.pop('files')} files stored, {counts.pop('duplicates')} copies, "
        f"{counts.pop('errors')} failed; {len(counts)} tool tables written -> {args.output}"
    )
    return 1 if failed else 0


def _on_spark(args, conf: dict) -> dict:
    """``spark_ingest.run`` on a local session. Ctrl-C stays this CLI's: pyspark's SparkContext installs its own
    SIGINT handler, which calls the JVM from inside the py4j call it interrupts (up to 270 lines of py4j
    tracebacks, exit 1; reliability-5), so the handler that was there is put back; the JVM's log is off once the
    session is up, and after Ctrl-C py4j's logged errors are kept off stderr (exit 130, one line)."""

    from . import spark_ingest  # noqa: PLC0415  (pyspark, optional: kept out of the CLI's start-up)

    ours = signal.getsignal(signal.SIGINT)

    def quiet(record) -> bool:
        return not _SIGINT_SEEN

    loggers = [logging.getLogger(), *(logging.getLogger(n) for n in ("py4j.clientserver", "py4j.java_gateway"))]
    for logger in loggers:  # py4j logs both to the root logger and to its own
        logger.addFilter(quiet)
    try:
        # Ctrl-C while the JVM starts waits until the session is there (and pyspark's handler replaced): pyspark
        # gave up on a half-launched JVM, which went on running, orphaned
        with _sigint_held():
            try:
                spark = spark_ingest.session(args.master, conf)
            finally:
                signal.signal(signal.SIGINT, ours)
        # the JVM's log off for the whole run: killed (SIGKILL of this process, SIGTERM or SIGHUP to the group), no
        # handler here can turn it off, and the JVM logged 31 to 110 lines of Java stack traces as it went
        # (reliability-6); a failure of the job still reaches this process as the exception it raises
        spark.sparkContext.setLogLevel("OFF")
        try:
            return spark_ingest.run(spark, args.input, args.output, args.manifest)
        finally:
            try:
                spark_ingest.stop(spark)  # and its private temporary folder
            except Exception:  # noqa: BLE001  (a JVM that Ctrl-C stopped: nothing left to stop)
                if not _SIGINT_SEEN:
                    raise
    finally:
        for logger in loggers:
            logger.removeFilter(quiet)


def cmd_schema(args) -> int:
    from .schema import markdown  # noqa: PLC0415  (kept out of the CLI's start-up (20 ms))

    text = markdown()
    if args.write:
        dest = paths.DOCS / "schema.md"
        dest.write_text(text + "\n")
        print(f"wrote {dest}")
    else:
        print(text)
    return 0


def cmd_sql(args) -> int:
    import duckdb  # noqa: PLC0415  (kept out of the CLI's start-up (65 ms))

    from . import sqlout  # noqa: PLC0415  (kept out of the CLI's start-up (12 ms))
    from .database import sql_error, unfinished_ingest  # noqa: PLC0415  (duckdb: kept out of the CLI's start-up)
    from .store import StoreError, connect  # noqa: PLC0415  (duckdb and the store: kept out of the CLI's start-up (130 ms))

    query = sys.stdin.read() if args.query == "-" else args.query
    pin, args.parquet = sqlout.pinned_target(args.parquet) if args.parquet else (None, args.parquet)
    refused = (
        checks.unreadable(args.db)
        or pin
        or (sqlout.parquet_target_refused(args.parquet, args.db, args.force) if args.parquet else None)
    )
    if refused:
        say(f"storagelab sql: {refused}")
        return 2
    try:
        con = connect(args.db, read_only=True)
    except (FileNotFoundError, DatabaseBusyError, StoreError) as e:
        say(f"storagelab sql: {os_error_text(e) if isinstance(e, OSError) else e}")
        return 2
    stopped = unfinished_ingest(con, args.db or paths.DB)
    if stopped:
        con.close()
        say(f"storagelab sql: {stopped}")
        return 2
    try:
        return sqlout.run(
            con,
            query,
            fmt="csv" if args.csv else "json" if args.json else "table",
            limit=args.limit,
            parquet=args.parquet,
        )
    except (duckdb.Error, ValueError) as e:  # DuckDB's error as its lines (the caret under the place), or why
        say_lines(f"storagelab sql: {sql_error(e, con, args.db or paths.DB)}")
        return 2
    finally:
        con.close()
    return 0


def cmd_compare(args) -> int:
    from .analysis import Selection, compare, open_db  # noqa: PLC0415  (duckdb/polars: kept out of the CLI's start-up (0.5 s))
    from .analysis.prose import rate  # noqa: PLC0415  (duckdb/polars: kept out of the CLI's start-up (0.5 s))

    con = open_db(args.db)
    try:
        if bool(args.study) == bool(args.other):
            raise ValueError("name what to compare with: --study NAME or --with KEY=VALUE[,KEY=VALUE] (one of them)")
        res = compare.analyse(
            con,
            Selection(study=args.mine, stack=args.stack or "", vdev_type=args.vdev_type or "", host=args.host or ""),
            args.study or Selection.parse(args.other),
        )
    except Exception as e:  # reliability-37: CatalogException (a DuckDB file of other tables): a traceback
        if not isinstance(e, ValueError) and type(e).__name__ != "CatalogException":
            raise
        say(f"storagelab compare: {e}".partition("\n")[0])  # DuckDB's own lines: the first
        return 2
    finally:
        con.close()
    if res.has("beside"):
        theirs = args.study or args.other
        side_width = max(len("yours"), len(theirs))  # the whole selection's name, never cut (study=myfleet,host=v)
        for (match, direction), g in res["beside"].group_by("match", "direction", maintain_order=True):
            say(f"{match} ({direction})", sys.stdout)
            for r in g.iter_rows(named=True):
                per_disk = "" if r["per_disk_bytes_per_s"] is None else f"  per disk {rate(r['per_disk_bytes_per_s'])}"
                sd = f" sd {rate(r['bw_sd_bytes_per_s'])}" if r["bw_sd_bytes_per_s"] else ""
                flags = (  # the runs left out of the tests (run_verdicts: the rule of 05, 08 and 10)
                    f"  {r['flagged_runs']} of {r['runs']} flagged, not tested: {'; '.join(r['why']) or 'flagged'}"
                    if r["flagged_runs"]
                    else ""
                )
                say(
                    f"  {'yours' if r['side'] == 'mine' else theirs:<{side_width}} {r['label_set']:<34.34} "
                    f"{r['config']:<40.40} {r['runs']:>2} run(s) {rate(r['bw_mean_bytes_per_s'])}{sd}{per_disk}  "
                    f"size {r['sizes']}{flags}",
                    sys.stdout,
                )
        print()
    for f in res.findings:
        say(f, sys.stdout)
    for m in res.missing:
        say(f"missing: {m}", sys.stdout)
    return 0 if res.has("beside") else 1


def _print_runs(results) -> int:
    failed = [r for r in results if not r.ok]
    for r in failed:
        say(f"failed: {r.notebook} ({r.folder.name}): {r.error}")
    return 1 if failed else 0


def cmd_run(args) -> int:
    from .report import list_notebooks, notebook_listing  # noqa: PLC0415  (notebook running/rendering: kept out of the CLI's start-up (40 ms))

    if args.list:
        print(notebook_listing(list_notebooks()))
        return 0
    params = dict(args.param or [])
    raw = dict(args.raw or [])
    for given in (params, raw):  # a relative database path means from here, not from the notebook's folder
        if given.get("db_path") and not Path(given["db_path"]).is_absolute():
            given["db_path"] = str(Path(given["db_path"]).resolve())
    made = bool(args.output) and not Path(args.output).exists()  # by refusal: removed again if no notebook runs
    mistake = _parameter_mistake({**params, **raw})
    out = None  # --output resolved once, when checked: the run writes there, not through the given path again
    if not mistake and args.output:
        mistake, out = runoutput.refusal(Path(args.output))
    if mistake:  # said before any notebook runs: no failed report is left behind for a typo, nor a shared --output
        say(f"storagelab run: {mistake}")
        return 2
    own = None if out is None or out.is_relative_to(paths.REPORTS.resolve()) else out  # a folder of the user's
    if not (made and out):
        return reportlock.run_holding("run", runoutput.tree(own), lambda: _run(args, params, raw, out, own, made))
    return runoutput.removed_if_unused(
        out,
        lambda begin: reportlock.run_holding("run", runoutput.tree(own), begin),
        lambda: _run(args, params, raw, out, own, made),
    )


def _run(args, params: dict, raw: dict, out: Path | None, own: Path | None, made: bool) -> int:
    """The notebooks run into ``out`` (``--output``, resolved and checked) or reports/; ``own``: ``out`` when it is
    outside reports/."""
    from .report import left_out_of_index, render_reports, run_notebooks  # noqa: PLC0415  (see cmd_run)

    try:
        results = run_notebooks(args.notebooks or None, params, raw_params=raw, out_dir=out)
    except ParameterError as e:
        say(f"storagelab run: {e}")
        runoutput.unused(out) if made and out else None
        return 2
    rc = _print_runs(results)
    if not args.no_report and not (results and all(r.moved for r in results)):  # runoutput.report_lines
        rendered: set = set()  # the folders rendered (own: its pages, no index)
        render_reports(only=own, skip=set() if own else left_out_of_index(), rendered=rendered)
        for line in runoutput.report_lines(results, rendered):
            say(line, sys.stdout)
        rc = 1 if any(not r.moved and runoutput.moved_after(r, rendered) for r in results) else rc
    return rc


def _parameter_mistake(params: dict) -> str | None:
    """What is wrong with the parameters every notebook shares, checked before anything runs: a database that is
    not there, a selection that does not parse."""
    db = params.get("db_path")
    if db and not Path(db).exists():
        return f"-p db_path {db}: no such database (make one with: storagelab ingest DIR --db {db})"
    from .analysis.db import older_database  # noqa: PLC0415  (duckdb/polars: kept out of the CLI's start-up (0.5 s))

    old = older_database(db)
    if old:
        return old
    if params.get("compare_with"):
        from .analysis.selection import Selection  # noqa: PLC0415  (duckdb/polars: kept out of the CLI's start-up (0.5 s))

        try:
            Selection.parse(params["compare_with"])
        except ValueError as e:
            return f"-p compare_with: {e}"
    return None


def cmd_report(args) -> int:
    return reportlock.run_holding("report", paths.REPORTS, _report)


def _report() -> int:
    from .report import left_out_of_index, render_reports  # noqa: PLC0415  (notebook running/rendering: kept out of the CLI's start-up (40 ms))

    failures: list[str] = []
    pages = render_reports(failures=failures, skip=left_out_of_index())
    for f in failures:
        say(f"error: {f} (the executed notebook cannot be read: run the notebook again)")
    print(f"rendered {len(pages)} reports; open {paths.REPORTS.relative_to(paths.ROOT) / 'index.html'}")
    return 1 if failures else 0


def cmd_build(args) -> int:
    retry = "wait for it to end, or retry with --wait SECONDS"
    return reportlock.run_holding("build", paths.REPORTS, lambda: _build(args), args.wait, retry)


def _build(args) -> int:
    rc = cmd_ingest(
        argparse.Namespace(
            paths=None,
            db=None,
            manifest=None,
            no_parquet=False,
            workers=None,
            wait=args.wait,
            quiet=False,
            batch_files=5000,
            one_warning_line=True,  # the main command: one summary line for the parsers' warnings
        )
    )
    if rc == 2:
        say("storagelab build: the ingest did not run; no report was built")
        return 2
    if rc == 130:  # Ctrl-C in the ingest (said): the build ran every notebook on the part stored (reliability-32)
        return 130
    from . import report  # noqa: PLC0415  (notebook running/rendering: kept out of the CLI's start-up (40 ms))

    plan, studies = report.build_plan(), report.labelled_studies()
    for study in report.studies_without_files(plan, studies):  # a paper's study, its files relabelled or removed
        say(f"note: no file is labelled study {study!r}: its reports show papers/{study}/'s claims without data")
    stale = report.stale_folders(plan, studies)
    for folder, study in stale:
        say(report.stale_note(folder, study))
    runs = plan
    if getattr(args, "study", None) is not None:  # --study NAME: that study's runs and those over every study
        try:
            runs = report.study_runs(plan, args.study)
        except ParameterError as e:
            say(f"storagelab build: {e}")
            return 2
        print(
            f"--study {args.study}: {len(runs)} of the build's {len(plan)} notebook runs; the other reports are as they were"
        )
    results = report.run_notebooks(plans=runs)
    run_rc = _print_runs(results)
    pages = report.render_reports(skip={f.name for f, _ in stale})
    n_failed = sum(not r.ok for r in results)
    print(
        f"built {len(pages)} reports ({len(results) - n_failed} notebooks ran, {n_failed} failed); "
        f"open {paths.REPORTS.relative_to(paths.ROOT) / 'index.html'}"
    )
    return rc or run_rc


NEVER_CHECK = "jupyterlab.NeverCheckForUpdate"


def cmd_lab(args) -> int:
    """JupyterLab as a child that ends with this process: SIGTERM/SIGINT/SIGHUP are passed on to it and waited for;
    if this process is killed outright, the kernel ends the server (PR_SET_PDEATHSIG)."""
    import subprocess  # noqa: PLC0415  (4 ms: kept out of the CLI's start-up)

    from .procs import die_with_parent  # noqa: PLC0415  (ctypes, 3.5 ms: kept out of the CLI's start-up)

    env = dict(os.environ, STORAGELAB_ROOT=str(paths.ROOT))
    extra = labstart.loopback(labstart.from_working_folder(args.extra))  # runs in ROOT, on 127.0.0.1: labstart
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        extra.append("--allow-root")  # containers and CI machines often run as root
    # offline: no news feed and no update check from the server (JupyterLab fetches both from the web)
    for option, value in (("--LabApp.news_url", "None"), ("--LabApp.check_for_updates_class", NEVER_CHECK)):
        if not any(e.startswith(option + "=") for e in extra):
            extra.append(f"{option}={value}")
    parent = os.getpid()
    # Ctrl-C reached JupyterLab twice (from the terminal, and passed on by this process) and, before its own handler
    # was set (its start-up: seconds) or without a terminal on stdin (a script, nohup), Python's: a KeyboardInterrupt
    # traceback (reliability-5). It now ignores SIGINT, and this process stops it with SIGTERM, its clean stop (as
    # Ctrl-C twice did: no question asked).
    stopped_by: list[int] = []

    def child_setup():  # SIGHUP too: a closed terminal's, to the group, killed it at once (reliability-37)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        die_with_parent(signal.SIGTERM, parent)

    # -P: not the working folder first on sys.path (r-18: `cd THEIRS; storagelab lab` ran their jupyterlab.py as root)
    argv = [sys.executable, "-P", "-m", "jupyterlab", f"--notebook-dir={paths.ROOT}", *extra]
    proc = subprocess.Popen(argv, env=env, preexec_fn=child_setup, cwd=str(paths.ROOT))  # r-20: kernels' cwd: labstart

    def forward(signum, frame):
        if proc.poll() is None:
            stopped_by.append(signum)
            labstart.pass_on(proc, signum)  # SIGINT as SIGTERM; again while it runs (r-20: one was lost)

    old = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    try:
        rc = labstart.wait(proc)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if proc.poll() is None:  # pragma: no cover - left by an unexpected error
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
    if stopped_by and rc in (0, -signal.SIGTERM, -stopped_by[0]):  # stopped by us: one line, 130/143/129
        return stopped("lab", stopped_by[0])
    return 128 - rc if rc < 0 else rc


def main(argv: list[str] | None = None) -> int:
    p = cli_parser.build(
        {
            "add_ingest": cmd_ingest,
            "add_parse": cmd_parse,
            "add_run": cmd_run,
            "add_report": cmd_report,
            "add_build": cmd_build,
            "add_schema": cmd_schema,
            "add_export": cmd_export,
            "add_spark_ingest": cmd_spark_ingest,
            "add_sql": cmd_sql,
            "add_compare": cmd_compare,
            "add_lab": cmd_lab,
        }
    )
    top = argv is None  # the process's own command line (the console script, python -m): it exits after this
    if top:
        stdfds.fill_closed()  # before anything is opened: a file of ours as descriptor 1 or 2 (`cmd >&-`)
        ownership.no_write_for_others()
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) >= 2 and argv[0] == "lab" and argv[1] in ("fio", "bonnie", "zfs-sweep"):
        lab = argparse.Namespace(cmd="lab " + argv[1], func=lambda _: import_module(".lab", __package__).main(argv[1:]))
        return _guarded(lab, top)  # lab: imported once the environment is checked (r-33: duckdb's import loads OpenSSL)
    args, unknown = p.parse_known_args(argv)
    if args.cmd == "lab":
        args.extra = unknown
    elif unknown:
        p.error(f"unrecognized arguments: {' '.join(unknown)}")
    return _guarded(args, top)


_SIGINT_SEEN: list[int] = []  # Ctrl-C arrived (see _guarded)


def _on_sigint(signum, frame) -> None:
    """Python's Ctrl-C (KeyboardInterrupt), remembered: DuckDB turns it into RuntimeError('Query interrupted')
    and other libraries into their own errors; the command still ends as interrupted (130)."""
    _SIGINT_SEEN.append(signum)
    interrupt_all()  # the statement's DuckDB worker threads stop too, not only the main thread
    raise KeyboardInterrupt


@contextmanager
def _python_sigint():
    """Python's own Ctrl-C handler for a block that installs its latch over it (the ingest's store.faults.CtrlC
    takes over only Python's default handler)."""

    old = signal.getsignal(signal.SIGINT)
    if old is _on_sigint:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if old is _on_sigint:
            signal.signal(signal.SIGINT, old)


@contextmanager
def _sigint_held():
    """Ctrl-C waits until the block is done: in duckdb's native import it became an ImportError, or a nanobind
    "Critical error" abort (exit -6); delivered after it, it is the usual KeyboardInterrupt."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:  # not a Ctrl-C that the parent held (a wrapper's mask): it got it at once (reliability-20)
        signal.pthread_sigmask(signal.SIG_BLOCK if signal.SIGINT in held else signal.SIG_UNBLOCK, {signal.SIGINT})


def _guarded(args, top: bool = False) -> int:
    """Run a command; a closed pipe, Ctrl-C (whatever error a library made of it), or a storagelab error or
    OSError (missing database, unreadable file) that the command did not catch is a clean exit (0, 130, 2) with
    at most one line, never a traceback; running out of memory is one line and 2. ``top``: the process exits
    after it; once it has been interrupted, a further Ctrl-C is ignored: Python's exit puts SIGINT back to the
    system's default, and a second Ctrl-C within half a second killed `build` and `lab fio` by SIGINT (exit -2)
    before their exit 130, their line said or not (reliability-6 processes, Low 8)."""

    _SIGINT_SEEN.clear()  # a command run in this process before (tests, the build's ingest) is not this one
    on_stop_signals(args.cmd) if top else None  # SIGTERM and SIGHUP: one line and 143/129, as Ctrl-C's 130
    previous = signal.getsignal(signal.SIGINT)
    if previous is _early_interrupt:  # the program's own start-up handler (storagelab/__init__): Python's from now
        previous = signal.default_int_handler
    installed = previous is signal.default_int_handler
    if installed:
        try:
            signal.signal(signal.SIGINT, _on_sigint)
        except ValueError:  # not the main thread, where alone handlers can be set (no threading import: start-up)
            installed = False
    rc = None
    try:
        rc = _run_guarded(args)
        return rc
    finally:
        if top and (_SIGINT_SEEN or rc == 130):
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # stopping: the exit is 130 whatever comes now
        elif installed:  # the caller's own Ctrl-C handling again (a library or test that calls main())
            signal.signal(signal.SIGINT, previous)


# commands whose work is more than their output: stopped by a reader that went away, they have not done it
WORKS = frozenset({"build", "ingest", "run", "notebooks", "report", "export", "spark-ingest", "lab"})


def _reader_gone(cmd: str) -> int:
    """The exit of a command whose output's reader went away (``| head -1``): 0 for one that only prints (its reader
    had what it wanted). One that works (WORKS) is stopped with its work unfinished: `build | head -1` ended 0 after
    ten seconds with no report built (reliability-6), so it says so on stderr and ends as a writer killed by
    SIGPIPE would (141)."""
    if cmd.split()[0] not in WORKS:  # `lab fio`, `lab bonnie`: the lab's (its runs not all made: reliability-15)
        return 0
    with suppress(OSError):
        say(f"storagelab {cmd}: stopped unfinished: the program reading its output ended (| head?); run it again "
            "with its output on the terminal, in a file, or through | tail")  # fmt: skip
    return 128 + signal.SIGPIPE


def _run_guarded(args) -> int:
    """``_guarded``'s body, with its Ctrl-C latch installed."""
    try:  # Ctrl-C during this import (duckdb and the store: about 0.3 s) is an interruption too, not a traceback
        low = stdfds.refusal(args) or memfloor.too_low(args.cmd) or checks.too_low_limits(args.cmd)
        low = low or ownership.environment_refusal() or checks.given_refusal(args)  # a --db not UTF-8 (r13)
        if not low:  # r-33: checked first: duckdb's import loads OpenSSL, and the .so files OPENSSL_CONF's file names
            with _sigint_held():
                from .store.faults import interrupted  # noqa: PLC0415  (kept out of the CLI's start-up (130 ms))
    except KeyboardInterrupt:
        return _interrupted(args)
    if low:
        say(f"storagelab {args.cmd}: {low}")
        return 2
    try:
        rc = run_unstuck(args)  # sql, parse, export, compare: Ctrl-C ends a read of a FUSE mount that does not answer
    except BrokenPipeError:
        # the reader went away (| head): stop quietly, and keep Python's exit-time flush quiet too

        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return _reader_gone(args.cmd)
    except KeyboardInterrupt:
        return _interrupted(args)
    except Exception as e:
        if _SIGINT_SEEN or interrupted(e):
            return _interrupted(args)
        if isinstance(e, StoragelabError):
            say(f"storagelab {args.cmd}: {e}")
            return 2
        if isinstance(e, OSError):  # a missing, unreadable or unwritable file or folder named by the user
            say(f"storagelab {args.cmd}: {os_error_text(e)}")
            return 2
        if isinstance(e, MemoryError) or is_out_of_memory(e):
            say(f"storagelab {args.cmd}: out of memory ({_one_line(e)}): {MEMORY_HINT}")
            return 2
        raise
    if _SIGINT_SEEN and rc != 130:  # the command caught what Ctrl-C became and said so: still interrupted
        return 130
    return rc


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _interrupted(args) -> int:
    say(f"storagelab {args.cmd}: interrupted")
    return 130


if __name__ == "__main__":
    sys.exit(main())
