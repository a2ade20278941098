"""The parse step on Spark (``storagelab spark-ingest INPUT OUTPUT``): logs read with Spark's ``binaryFile``
source from any path Spark reads (local, HDFS, S3), parsed on the executors by the same parsers as the local
ingest (``store.parse_chunk``: pure functions of a file's name and bytes), written as the dataset
``storagelab export --dataset`` writes (``dataset.py``: ``<table>/tool=/study=/month=``, errors in
``ingest_errors``, copies in ``duplicates``), with the same provenance: path, SHA-256, parser version.

How it matches a local ingest of the same files into a new database:

* the same files are read: hidden files and folders, ``manifest.csv``, READMEs, ``*.md`` and ``*.ipynb`` are
  left out (``store.SKIP_NAMES``); a ``file:`` path is stored as the local ingest stores it (relative to the
  project root when inside it); other URIs (``s3a://...``) as Spark names them;
* a file whose bytes are those of another (same SHA-256) is stored once, under the first path in the local
  ingest's order, and listed in ``duplicates``;
* ``file_id`` numbers the stored files in that same order from 1, as a new database does;
* ``mtime_ns`` is Spark's modification time, which has millisecond precision; ``ingested_at`` is the job's time;
* zero-length files, for which binaryFile gives no row, are listed on the driver and recorded as 'empty' errors;
  names starting with ``_`` are hidden to Spark's file listing (the local ingest reads them): avoid them.

Labels come from ``--manifest FILE`` (the local manifest format, paths relative to INPUT) when given.
pyspark is an optional extra (``pip install -e .[spark]``) and needs Java 17 (Debian: openjdk-17-jre-headless).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs

from . import dataset, export_ids, ignore, livefolders, paths, sparkjvm
from .errors import StoreError
from .manifest import LABEL_COLUMNS, load
from .schema import all_tables, tool_tables
from .sparkjvm import hadoop_size, jvm_gone, not_started, one_write_job, quiet_accumulators, start_folder, unset_empty
from .store import SKIP_NAMES, current_parser_versions, key_for, labels_by_key, parse_chunk, parse_one, schema_signature
from .store.pipeline import pinned_input

_LOCKS: dict[Path, object] = {}  # a local dataset's lock file, as _one_writer holds it (dataset.still_held)
CHUNK = 256  # files parsed together on an executor (one Arrow table per tool table per chunk)
SPARK_TYPES = {
    "VARCHAR": "string",
    "BIGINT": "bigint",
    "INTEGER": "int",
    "DOUBLE": "double",
    "BOOLEAN": "boolean",
    "TIMESTAMPTZ": "timestamp",
}


def local_key(uri: str) -> str:
    """The path the local ingest would store for a file Spark names ``uri``."""
    u = urlparse(uri)
    if u.scheme in ("", "file"):
        return key_for(Path(unquote(u.path)))
    return uri


def skipped(key: str) -> bool:
    """Left out as the local ingest's folder walk leaves it out."""
    parts = key.split("/")
    name = parts[-1]
    return any(p.startswith(".") for p in parts if p) or name in SKIP_NAMES or name.endswith((".md", ".ipynb"))


def _ignored(input_path: str, raw: Path):
    """Whether the local ingest's ignore file (``.storagelabignore`` at the folder's top, or data/raw's) leaves a key
    out: the dataset then holds what a local ingest of the folder holds. Local folders only (others' are not read)."""

    u = urlparse(input_path)
    if u.scheme not in ("", "file"):
        return lambda key: False
    matcher = ignore.path_matcher([Path(unquote(u.path))], raw)  # data/raw/ as pinned_input took it
    return lambda key: matcher(key if key.startswith("/") else paths.ROOT / key)


def _sort_key(key: str) -> str:
    return key.replace("/", "\0")  # part by part, as the local listing sorts


class Local(NamedTuple):
    """A local INPUT: the name it was given by, and where it led when the run began. Spark's listing follows every
    symlink, to files and into folders, so a file it lists that leads outside ``real`` is left out, as the local
    ingest leaves it; the others are read on the executor by their name under ``given``
    (``ingest_open.open_input``), not from Spark's bytes: reliability-13 had root's spark-ingest of the second user's
    folder store their links' targets, root's 0600 files, exit 0."""

    given: str
    real: str

    def name_of(self, uri: str) -> tuple[str, str | None]:
        """(the name to read the file Spark lists as ``uri`` by, under ``given``; where it leads when that is
        outside the folder, else None)."""
        path = unquote(urlparse(uri).path)
        for top in (self.given.rstrip("/"), self.real.rstrip("/")):
            if path == top or path.startswith(top + "/"):
                path = self.given + path[len(top) :]
                break
        real = os.path.realpath(path)
        inside = real == self.real or real.startswith(self.real.rstrip("/") + "/")
        return path, None if inside else real


def local_input(input_path: str) -> Local | None:
    """``Local`` for a local INPUT (a path, or a ``file:`` URI); None for other schemes, read through Spark."""
    u = urlparse(input_path)
    if u.scheme not in ("", "file"):
        return None
    return Local(os.path.abspath(unquote(u.path)), os.path.realpath(unquote(u.path)))


def parse_partition(rows, staging: str, local: Local | None = None):
    """Executor side: (path, modificationTime, length, content) rows (no content for a ``local`` INPUT: each file
    is read by its name), parsed ``CHUNK`` files at a time by ``store.parse_chunk``. Each chunk's rows go, one
    Parquet file per table (typed as the database types them, with a ``_key`` column naming the file), to
    ``staging/<table>/``; what comes back is one small record per file: its key, size, mtime, outcome fields and
    error; for a file outside a local INPUT, only ``outside``: its path."""

    filesystem, base = pafs.FileSystem.from_uri(staging)
    batch = []

    def flush():
        jobs = [(b[0], b[4], b[2], b[1], 0, -1, b[5]) for b in batch]  # ListedFile's fields
        outs, tables = parse_chunk(jobs, [b[3] for b in batch])
        for name, tbl in tables.items():
            keys = [out.key for out in outs for _ in range((out.table_rows or {}).get(name, 0))]
            tbl = tbl.append_column("_key", pa.array(keys, pa.string()))
            filesystem.create_dir(f"{base}/{name}", recursive=True)
            pq.write_table(tbl, f"{base}/{name}/{uuid.uuid4().hex}.parquet", filesystem=filesystem)
        for out in outs:
            yield dict(
                key=out.key,
                size=out.size,
                mtime_ns=out.mtime_ns,
                sha256=out.sha256,
                tool=out.tool,
                tool_version=out.tool_version,
                format=out.format,
                parser_version=out.parser_version,
                warnings=out.warnings,
                n_rows=out.n_rows,
                error=out.error,
                tables=sorted((out.table_rows or {}).keys()),
            )
        batch.clear()

    for r in rows:
        mtime_ns = int(r["modificationTime"].timestamp() * 1000) * 1_000_000
        try:
            key = local_key(r["path"])
            if skipped(key):
                continue
            name, outside = (key, None) if local is None else local.name_of(r["path"])
        except OSError as e:  # a link swapped while its name was resolved (EINVAL from realpath's readlink)
            yield _unresolved(r["path"], int(r["length"]), mtime_ns, e)
            continue
        if outside is not None:
            yield dict(outside=f"{name}: a symlink to {outside}, outside {local.given}: not followed")
            continue
        link = local is not None and os.path.islink(name)  # listed as a link: read through it; a file: by its name
        batch.append((key, mtime_ns, int(r["length"]), None if local else bytes(r["content"]), name, link))
        if len(batch) >= CHUNK:
            yield from flush()
    if batch:
        yield from flush()


def _unresolved(uri: str, size: int, mtime_ns: int, error: OSError) -> dict:
    """The record of a file whose name could not be resolved (another user's link swapped meanwhile: on their FUSE
    mount 1 run in 1 failed with a Python and a Java traceback, reliability-15): an 'io' error, not read."""
    path = unquote(urlparse(uri).path)
    message = f"{path}: {error.strerror or error} while its name was resolved (it changed while it was read)"
    return dict(
        key=path,
        size=size,
        mtime_ns=mtime_ns,
        sha256=None,
        tool=None,
        tool_version=None,
        format=None,
        parser_version=None,
        warnings=[],
        n_rows=0,
        error=dict(kind="io", line=None, message=message, expected=None),
        tables=[],
    )


def _spark_schema(columns: list[tuple[str, str]], extra: tuple[str, ...] = ()):
    from pyspark.sql.types import (  # noqa: PLC0415 - optional dependency (spark extra)
        BooleanType,
        DoubleType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    types = {
        "VARCHAR": StringType(),
        "BIGINT": LongType(),
        "INTEGER": IntegerType(),
        "DOUBLE": DoubleType(),
        "BOOLEAN": BooleanType(),
        "TIMESTAMPTZ": TimestampType(),
    }
    return StructType(
        [StructField(n, types[t], True) for n, t in columns] + [StructField(e, StringType(), True) for e in extra]
    )


def session(master: str = "local[2]", conf: dict[str, str] | None = None):
    """A Spark session for the job, its Python workers on this interpreter; ``conf``: ``--conf`` settings (S3: jars)."""

    from pyspark.sql import SparkSession  # noqa: PLC0415 - optional dependency (spark extra)

    if why := _spark_elsewhere(os.environ):
        raise StoreError(why)
    unset_empty(os.environ)  # reliability-21: SPARK_LOCAL_DIRS= and its kind (sparkjvm)
    sparkjvm.tie_jvm_to_this_process()  # reliability-30: no JVM left starting, holding the pipes, after a stop
    # set but empty is unset to this run: pyspark runs os.path.join(SPARK_HOME, "./bin/spark-submit") and the JVM
    # the program "" (reliability-20: `cd THEIRS; SPARK_HOME= storagelab spark-ingest` ran their bin/spark-submit)
    for var in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        os.environ[var] = os.environ.get(var) or sys.executable
    if not os.environ.get("SPARK_HOME"):  # reliability-19: else pyspark's first guess is the working folder's parent
        os.environ["SPARK_HOME"] = _spark_home()

    # reliability-24: where Spark's processes start; a relative path out of it in Spark's settings is refused
    start, top = start_folder(conf or {}, os.path.join(os.path.realpath(tempfile.gettempdir()), SPARK_TMP))
    tmp = private_tmp()
    builder = SparkSession.builder
    for key, value in private_conf(master, conf or {}, tmp).items():
        builder = builder.config(key, value)
    here = os.open(".", os.O_PATH | os.O_DIRECTORY)
    try:
        # reliability-20: spark-submit's shells, the launcher's JVM, Spark's JVM and its Python workers start in this
        # run's own folder, not the working folder: they resolve relative names there (`cd THEIRS;
        # JAVA_TOOL_OPTIONS=-Dlog4j2.configurationFile=log4j2.properties storagelab spark-ingest` read theirs;
        # -Xlog:...:file=x, hs_err_pid<pid>.log, "hive-jackson/*" would be written or read there too)
        os.chdir(start if top else tmp)
        spark = (
            builder.master(master)
            .appName("storagelab-parse")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
            .config("spark.sql.sources.partitionOverwriteMode", "static")
            # reliability-18: the Python workers (`python -m pyspark.daemon`) run in the working folder, first on
            # their sys.path: `cd THEIRS; storagelab spark-ingest` imported their pyspark/ as uid 0
            .config("spark.executorEnv.PYTHONSAFEPATH", "1")
            # reliability-19: SPARK_API_MODE=connect or SPARK_CONNECT_MODE=1 made it a Spark Connect client (a traceback)
            .config("spark.api.mode", "classic")
            # reliability-19: Spark 4's launcher puts its default "hive-jackson/*" first on the JVM's class path,
            # which the JVM reads from the working folder: `cd THEIRS; storagelab spark-ingest` ran their
            # org.apache.spark.deploy.SparkSubmit as root. It is meant under Spark's home: named there
            .config("spark.driver.defaultExtraClassPath", os.path.join(os.environ["SPARK_HOME"], "hive-jackson", "*"))
            .config("spark.executor.defaultExtraClassPath", os.path.join(os.environ["SPARK_HOME"], "hive-jackson", "*"))
            .getOrCreate()
        )
    except BaseException as e:
        for gone in (tmp, top or tmp):
            shutil.rmtree(gone, ignore_errors=True)
            livefolders.release(gone)
        if (why := not_started(e)) is not None:
            raise StoreError(why) from None
        raise
    finally:
        os.fchdir(here)
        os.close(here)
    _TMP[id(spark)] = tmp
    _TMP[-id(spark)] = top or tmp
    quiet_accumulators(spark)
    return spark


def _spark_home() -> str:
    """The Spark beside pyspark. pyspark's own search (and bin/spark-submit's, which runs it again) tries the working
    folder's parent first: `cd THEIRS/sub; storagelab spark-ingest` ran their bin/spark-submit as root (a jars/
    folder beside it was all it took; /tmp/bin and /tmp/jars, which anyone can make, serve every folder in /tmp)."""
    from importlib.util import find_spec  # noqa: PLC0415

    spec = find_spec("pyspark")
    module_home = os.path.dirname(os.path.abspath(spec.origin)) if spec and spec.origin else ""
    for home in (os.path.join(module_home, "spark-distribution"), module_home, os.path.join(module_home, "..", "..")):
        home = os.path.abspath(home)
        if os.path.isfile(os.path.join(home, "bin", "spark-submit")) and any(
            os.path.isdir(os.path.join(home, d)) for d in ("jars", "assembly")
        ):
            return home
    raise StoreError("no Spark (bin/spark-submit and jars/) beside pyspark: set SPARK_HOME to your Spark's folder")


# pyspark's variables that make a session use a Spark it did not start: a running JVM's gateway (its port and secret,
# as spark-submit gives them to the Python it runs), or a Spark Connect server (reliability-17)
ELSEWHERE = ("PYSPARK_GATEWAY_PORT", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE", "SPARK_CONNECT_MODE_ENABLED")


def _spark_elsewhere(environ) -> str | None:
    """Why spark-ingest must not start with ``environ``, as one line; None when it starts its own Spark. With
    PYSPARK_GATEWAY_PORT root's spark-ingest connected to whatever listened on that port, the second user's process
    (any user can take a free port), handed it root's gateway secret and took its answers as its JVM's (pyspark
    unpickles what its JVM sends: accumulator updates, collected rows); SPARK_REMOTE and SPARK_CONNECT_MODE_ENABLED
    ended in a Python traceback (reliability-17)."""
    for var in ELSEWHERE:
        if var in environ:
            return (
                f"the environment's {var} ({environ[var][:80]}) would have this run use a Spark it did not start "
                "(another user's program, if it holds that port); spark-ingest starts its own (--master): unset it"
            )
    return None


SPARK_TMP = "storagelab-spark-"
_TMP: dict[int, str] = {}  # id(session) -> its private temporary folder (removed by ``stop``)


def private_tmp() -> str:
    """A new 0700 folder in the temporary folder (TMPDIR, checked by the environment check) for the JVM's own
    temporary files (``java.io.tmpdir``: snappy's and lz4's libraries, ``artifacts-*``) and Spark's (``spark.local.dir``:
    ``blockmgr-*``, ``spark-*``), named after this process (``readcopies.dead_reader_prefix``): the folders of runs
    that were killed (SIGKILL: no shutdown hook ran) are removed first. Spark and the JVM wrote them straight into
    /tmp, and every killed run left its own there (reliability-15 Low 4: 62 on the campaign machine)."""
    from . import readcopies  # noqa: PLC0415

    readcopies.remove_dead(prefix=SPARK_TMP)
    return livefolders.mkdtemp_held(readcopies.dead_reader_prefix(SPARK_TMP))  # reliability-27: held while it lives


def private_conf(master: str, conf: dict[str, str], tmp: str) -> dict[str, str]:
    """``conf`` with the driver's JVM given ``tmp`` as its java.io.tmpdir (``--conf`` options kept: after it, they
    win) and, on a local master (executors in this JVM), Spark's local folder ``tmp`` and ``LOCAL_ONLY`` unless
    ``conf`` sets them."""
    out = dict(conf)
    out["spark.driver.extraJavaOptions"] = " ".join(
        x for x in (f"-Djava.io.tmpdir={tmp}", conf.get("spark.driver.extraJavaOptions", "")) if x
    )
    if master.startswith("local"):
        out.setdefault("spark.local.dir", tmp)
        # the driver's RPC and block manager ports listened on the host's address, for anyone, with no
        # authentication (reliability-17): on this machine only, and a secret Spark makes for a local master
        for key, value in LOCAL_ONLY.items():
            out.setdefault(key, value)
    return out


LOCAL_ONLY = {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1", "spark.authenticate": "true"}


def stop(spark) -> None:
    """``spark.stop()``, then its private temporary folder removed (whatever the stop did). A JVM that has ended
    cannot be stopped: nothing to do then."""
    try:
        spark.stop()
    except Exception:
        if not jvm_gone(spark):
            raise
    finally:
        for tmp in (_TMP.pop(id(spark), ""), _TMP.pop(-id(spark), "")):  # and Spark's start folder (reliability-24)
            shutil.rmtree(tmp, ignore_errors=True) if tmp else None
            livefolders.release(tmp)


def run(spark, input_path: str, output: str, manifest: str | None = None) -> dict:
    """Parse every log under ``input_path`` on ``spark`` and write the dataset to ``output`` (replaced).

    One pass parses (executors, Python); the driver then numbers the stored files as a new database would (a file
    the dataset already holds, same path and bytes, keeps its file_id); each table is joined to those numbers and
    written partitioned by Spark alone (JVM, no Python rows). As ``export --dataset`` does (dataset.py): the new
    part files are added beside the old ones, ``_storagelab/meta.json`` listing them is written last, then the old
    ones go; a run killed before that leaves the old dataset whole."""

    out_root = output.rstrip("/")
    input_path, raw = pinned_input(input_path)  # relative: ours (the JVM runs in its own folder); a link: pinned
    ignored = _ignored(input_path, raw)  # now, with the data/raw pinned_input took, not after the parse (r-36)
    with _one_writer(out_root):
        old = _old_meta(spark, out_root)
        old_ids = _old_file_ids(spark, out_root, old)
        sparkjvm.drop_unfinished_jobs(spark, out_root, all_table_names())  # a killed run's tasks: its job took them
        staging = f"{out_root}/_storagelab/staging-{uuid.uuid4().hex[:12]}"
        if "://" not in staging:
            staging = Path(staging).resolve().as_uri()
        try:
            return _job(spark, input_path, output, manifest, old_ids, staging, ignored)
        except BaseException as e:  # Ctrl-C, a failed job: the rows parsed so far are no one's (reliability-13 Low 3)
            _drop_staging(staging)
            if isinstance(e, Exception) and (why := sparkjvm.failed(spark, e, out_root)):
                raise StoreError(why) from None
            raise


def _job(spark, input_path: str, output: str, manifest: str | None, old_ids: dict, staging: str, ignored) -> dict:
    """``run``'s job, under the dataset's lock, its rows parsed into ``staging``."""

    from pyspark.sql import functions as F  # noqa: PLC0415 - optional dependency (spark extra)

    tabs = all_tables()
    owner = {name: tool for name, (tool, _t) in tool_tables().items()}
    out_root = output.rstrip("/")
    local = local_input(input_path)
    with _changing_input(input_path):
        files = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .option("ignoreMissingFiles", "true")  # a file gone since the listing (renamed, rotated): left out
            .load(input_path)
            .select("path", "modificationTime", "length", *([] if local else ["content"]))
        )
        info = files.rdd.mapPartitions(lambda rows: parse_partition(rows, staging, local)).collect()
        info += _empty_files(spark, input_path, local, parsed={r.get("key") for r in info})
    outside = sorted(r["outside"] for r in info if "outside" in r)
    info = [r for r in info if "outside" not in r]
    info = [r for r in info if not ignored(r["key"])]  # their staged rows are left out by the join below

    # which files are stored (first path per SHA-256, in the local order), their ids, the copies and the errors
    now = datetime.now(UTC)
    ok = sorted((r for r in info if not r["error"]), key=lambda r: _sort_key(r["key"]))
    labels_of = labels_by_key(load(Path(manifest))) if manifest else {}
    stored, copies = _stored_and_copies(ok, labels_of, now)
    file_rows, id_rows = _file_rows(stored, old_ids, labels_of, tabs["files"], now)
    cols = [(c.name, c.type) for c in tabs["files"].columns]
    parts = {}
    parts["files"] = _write(spark, spark.createDataFrame(file_rows, _spark_schema(cols, ("month",))), out_root, "files")
    ids = F.broadcast(
        spark.createDataFrame(id_rows, "_key string, file_id int, tool string, study string, month string")
    )

    present = {t for r in stored for t in r["tables"]}
    counts = {"files": len(stored)}
    for name in (n for n in tabs if n in owner and n in present):
        rows = spark.read.parquet(f"{staging}/{name}").drop("file_id").join(ids, "_key")
        select = [F.col(c.name).cast(SPARK_TYPES[c.type]).alias(c.name) for c in tabs[name].columns]
        parts[name] = _write(spark, rows.select(*select, "tool", "study", "month"), out_root, name)
        counts[name] = sum(1 for r in stored if name in r["tables"])
    errors = [
        (
            r["key"],
            r["sha256"],
            r["error"]["kind"],
            r["error"]["line"],
            r["error"]["message"],
            r["error"]["expected"],
            now,
        )
        for r in info
        if r["error"]
    ]
    for name, data in (("ingest_errors", errors), ("duplicates", copies)):
        if data:
            df = spark.createDataFrame(data, _spark_schema([(c.name, c.type) for c in tabs[name].columns]))
            parts[name] = _write(spark, df.coalesce(1), out_root, name, partitioned=False)
    _delete(spark, staging)
    _write_meta(
        spark,
        output,
        dict(
            format=dataset.FORMAT,
            generation=uuid.uuid4().hex[:16],
            parts=parts,
            study_folders=dataset.study_folders({(labels_of.get(r["key"]) or {}).get("study") for r in stored}),
            schema_signature=schema_signature(),
            parser_versions=current_parser_versions(),
            partition_keys=list(dataset.PARTITION_KEYS),
            null_partition=dataset.NULL_PARTITION,
            written_by="spark-ingest",
            tables={n: [[c.name, c.type] for c in t.columns] for n, t in tabs.items()},
        ),
    )
    _sweep(spark, out_root, parts)
    counts.update(errors=len(errors), duplicates=len(copies))
    counts["error_lines"] = sorted(_error_line(r["key"], r["error"]) for r in info if r["error"])
    counts["warning_lines"] = [f"{line} (copy the file in instead)" for line in outside]
    return counts


@contextlib.contextmanager
def _one_writer(output: str):
    """One writer of a local dataset at a time: the lock ``export --dataset`` takes (``_storagelab/.lock``). Two at
    once, each one's sweep deleted the part files and the staging folder the other had not committed yet."""
    u = urlparse(output)
    if u.scheme not in ("", "file"):
        yield
        return
    if why := dataset.not_ours(unquote(u.path), "output"):  # reliability-27: the sweep deleted a user's part-*, *.tmp
        raise StoreError(why)
    folder = Path(unquote(u.path)) / dataset.META_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with dataset.writer_lock(folder / ".lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _LOCKS[Path(unquote(u.path))] = lock
        yield


def _drop_staging(staging: str) -> None:
    """Remove a local staging folder (in Python: after Ctrl-C the JVM is gone); another scheme's is left to the next
    run's sweep. The Python workers had Ctrl-C too, but one may finish the chunk it was writing, and make the folder
    again (``create_dir``) after it was removed: removed until it stays gone for two looks 0.25 s apart (at most 3 s)."""
    u = urlparse(staging)
    if u.scheme not in ("", "file"):
        return
    folder, gone, deadline = unquote(u.path), 0, time.monotonic() + 3
    while gone < 2 and time.monotonic() < deadline:
        shutil.rmtree(folder, ignore_errors=True)
        time.sleep(0.25)
        gone = gone + 1 if not os.path.lexists(folder) else 0


_GONE = re.compile(
    r"(File \S+ does not exist|file \S+\. File does not exist|cannot access '[^']+': No such file or directory"
    r"|FileSystemException: \S+: Invalid argument)"  # a link swapped as the JVM resolved it (the user's bindfs)
)


@contextlib.contextmanager
def _changing_input(input_path: str):
    """A file or folder of INPUT renamed or removed while Spark listed or read it (a log rotated, another user's
    swaps) failed the job with Spark's Java stack trace (reliability-15): one line instead; nothing was written."""
    from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]  # noqa: PLC0415 - optional (spark extra)

    try:
        yield
    except Py4JJavaError as e:
        found = _GONE.search(str(e))
        if not found:
            raise
        raise StoreError(
            f"{input_path} changed while Spark read it ({found.group(1)}): the dataset is as it was; run again"
        ) from None


def _stored_and_copies(ok: list[dict], labels_of: dict, now: datetime) -> tuple[list[dict], list[tuple]]:
    """The files stored (the first path of each SHA-256, in the local order) and the ``duplicates`` rows."""

    stored, copies, first = [], [], {}
    for r in ok:
        if r["sha256"] in first:
            own = labels_of.get(r["key"]) or {}
            copies.append(
                (r["key"], r["sha256"], r["size"], r["mtime_ns"], first[r["sha256"]], now)
                + tuple(own.get(c) for c in LABEL_COLUMNS)
            )
        else:
            first[r["sha256"]] = r["key"]
            stored.append(r)
    return stored, copies


def _file_rows(stored: list[dict], old_ids: dict, labels_of: dict, files_table, now: datetime) -> tuple[list, list]:
    """The ``files`` rows of the stored files (with their month) and (key, file_id, tool, study folder, month) per
    file: a file the dataset held (same path and SHA-256) keeps its file_id, the others take the next ones."""

    month = now.strftime("%Y-%m")
    file_rows, id_rows = [], []
    next_id = max(old_ids.values(), default=0) + 1
    for r in stored:
        lab = labels_of.get(r["key"]) or {}
        file_id = old_ids.get((r["key"], r["sha256"]))
        if file_id is None:
            file_id, next_id = next_id, next_id + 1
        given = dict(
            file_id=file_id,
            path=r["key"],
            sha256=r["sha256"],
            size_bytes=r["size"],
            mtime_ns=r["mtime_ns"],
            tool=r["tool"],
            tool_version=r["tool_version"],
            format=r["format"],
            parser_version=r["parser_version"],
            ingested_at=now,
            n_rows=r["n_rows"],
            warnings="\n".join(r["warnings"]) or None,
            **{c: lab.get(c) for c in LABEL_COLUMNS},
        )
        given["study"] = dataset.folder_value(lab.get("study"))  # the partition folder's (open_dataset maps back)
        file_rows.append(tuple(given.get(c.name) for c in files_table.columns) + (month,))
        id_rows.append((r["key"], file_id, r["tool"], given["study"], month))
    return file_rows, id_rows


def _error_line(path: str, error: dict) -> str:
    """One failed file as the local ingest prints it: ``path:line: kind: message (expected ...)``."""
    where = path if error["line"] is None else f"{path}:{error['line']}"
    text = f"{where}: {error['kind']}: {error['message']}"
    return text + (f" (expected {error['expected']})" if error["expected"] else "")


def _delete(spark, target: str) -> None:
    """Remove a folder through Hadoop's file system (any scheme Spark writes); nothing if it is not there."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(target)
    path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(path, True)


def _empty_files(spark, input_path: str, local: Local | None = None, parsed=frozenset()) -> list[dict]:
    """binaryFile gives no row for a zero-length file; the local ingest records it as an 'empty' error. The
    driver lists them (a local INPUT in Python, ``_local_empty``; another scheme through Hadoop's file system) and
    records the same error (not for one outside a ``local`` INPUT: see ``Local``, nor one ``parsed``, since cut)."""

    found = []
    for uri, mtime_ms in _local_empty(local) if local else _hadoop_empty(spark, input_path):
        try:
            key = local_key(uri)
            inside = local is None or local.name_of(uri)[1] is None
        except OSError:  # changing while it is listed (as in parse_partition): the next run sees it
            continue
        if not skipped(key) and inside and key not in parsed:
            out = parse_one((key, key, 0, mtime_ms * 1_000_000), b"")
            found.append(
                dict(
                    key=key,
                    size=0,
                    mtime_ns=out.mtime_ns,
                    sha256=out.sha256,
                    **dict.fromkeys(("tool", "tool_version", "format", "parser_version")),
                    warnings=[],
                    n_rows=0,
                    error=out.error,
                )
            )
    return found


def _hadoop_empty(spark, input_path: str):
    """(URI, mtime in ms) of the zero-length files under ``input_path``, listed by Hadoop."""
    jvm = spark.sparkContext._jvm
    root = jvm.org.apache.hadoop.fs.Path(input_path)
    fs = root.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    it = fs.listFiles(root, True)
    while it.hasNext():
        st = it.next()
        if st.getLen() == 0:
            yield st.getPath().toString(), int(st.getModificationTime())


def _local_empty(local: Local):
    """(URI, mtime in ms) of the zero-length regular files under a local INPUT, as Spark's listing finds them
    (symlinks followed, each folder once), leaving out what leads outside it and what went while it was listed:
    Hadoop's local listing runs ``ls`` per file, and a file renamed meanwhile failed the whole run with a Java
    stack trace (reliability-15)."""
    seen, todo = set(), [local.given]
    while todo:
        folder = todo.pop()
        try:
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                if local.name_of(Path(entry.path).as_uri())[1] is not None:
                    continue  # leads outside INPUT: not followed (nor looked at)
                st = os.stat(entry.path)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                todo.append(entry.path)
            elif stat.S_ISREG(st.st_mode) and st.st_size == 0:
                yield Path(entry.path).as_uri(), st.st_mtime_ns // 1_000_000


def _write(spark, df, output: str, name: str, partitioned: bool = True) -> dict[str, int]:
    """Add ``df``'s part files to the table's folder (beside the ones the dataset lists now); returns them (path
    relative to ``output``: size)."""
    before = _listing(spark, output, name)
    writer = df.write.mode("append")
    if partitioned:
        writer = writer.partitionBy(*dataset.PARTITION_KEYS)
    writer.parquet(f"{output}/{name}")
    return one_write_job(
        {r: n for r, n in _listing(spark, output, name).items() if r not in before}, f"{output}/{name}"
    )


def _fs(spark, target: str):
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(target)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    return fs, fs.makeQualified(path)


def _listing(spark, output: str, name: str) -> dict[str, int]:
    """The part files under ``output/name`` (not Spark's hidden ``_``/``.`` files): path relative to output, as
    named on the storage (decoded) -> size."""
    fs, root = _fs(spark, output)
    top = root.toUri().getPath().rstrip("/")
    table = root.suffix(f"/{name}")
    found: dict[str, int] = {}
    if not fs.exists(table):
        return found
    it = fs.listFiles(table, True)
    while it.hasNext():
        st = it.next()
        rel = st.getPath().toUri().getPath()[len(top) + 1 :]
        if not any(p.startswith(("_", ".")) for p in rel.split("/")):
            found[rel] = st.getLen()
    return found


def _old_meta(spark, output: str) -> dict:
    """The meta.json of the dataset already at ``output``, when this version wrote it; else {}."""
    fs, root = _fs(spark, output)
    target = root.suffix("/_storagelab/meta.json")
    if not fs.exists(target):
        return {}
    stream = fs.open(target)
    try:
        data = bytes(spark.sparkContext._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
    finally:
        stream.close()
    try:
        info = json.loads(data)
    except ValueError:
        return {}
    ok = isinstance(info, dict) and info.get("format") == dataset.FORMAT and isinstance(info.get("parts"), dict)
    return info if ok and all(isinstance(v, dict) for v in info["parts"].values()) else {}  # r-27: hand-edited


def _old_file_ids(spark, output: str, old: dict) -> dict[tuple[str, str], int]:
    """(path, sha256) -> file_id of the files the dataset at ``output`` holds (kept by a re-run: ``export_ids``), from its
    ``files`` parts there at the size meta.json lists (reliability-27: a lost one failed every re-run with PATH_NOT_FOUND)."""
    listed = (old.get("parts") or {}).get("files") or {}
    intact = [f"{output}/{r}" for r, size in sorted(listed.items()) if hadoop_size(spark, f"{output}/{r}") == size]
    if not intact:
        return {}
    read = spark.read.option("ignoreCorruptFiles", "true")  # one of the listed size that is not Parquet: left out
    rows = read.parquet(*intact).select("path", "sha256", "file_id").collect()
    return export_ids.kept_file_ids(rows, old)


def _sweep(spark, output: str, parts: dict) -> None:
    """After meta.json: the part files it does not list go (a former run's, a killed run's), and Spark's _temporary."""
    u = urlparse(output)
    if u.scheme in ("", "file"):
        dataset.sweep(out := Path(unquote(u.path)), parts, _LOCKS.get(out))  # in the held folder (r-37)
        return
    fs, root = _fs(spark, output)
    for name in all_table_names():
        listed = parts.get(name) or {}
        for rel in _listing(spark, output, name):
            if rel not in listed:
                fs.delete(root.suffix(f"/{rel}"), False)
        fs.delete(root.suffix(f"/{name}/_temporary"), True)


def all_table_names() -> list[str]:
    return list(all_tables())


def _write_meta(spark, output: str, meta: dict) -> None:
    """meta.json beside the tables, the dataset's commit point: for a local path or a ``file:`` URI written under
    a temporary name, fsynced and renamed (dataset.save_json); on other schemes (hdfs://, s3a:// ...) through
    Hadoop's file system: a temporary file, then renamed over the old one."""

    u = urlparse(output)
    if u.scheme in ("", "file"):
        folder = Path(unquote(u.path)) / dataset.META_DIR
        folder.mkdir(parents=True, exist_ok=True)
        with dataset.held(_LOCKS.get(folder.parent), folder.parent, meta["parts"]) as (_top, meta_dir):
            dataset.save_json_at(meta_dir, "meta.json", meta)
        return
    text = json.dumps(meta, indent=1, sort_keys=True)
    tmp = f"{output.rstrip('/')}/_storagelab/.meta.json.tmp"
    _hadoop_write(spark, tmp, text.encode())
    fs, root = _fs(spark, output)
    target = root.suffix("/_storagelab/meta.json")
    fs.delete(target, False)
    fs.rename(root.suffix("/_storagelab/.meta.json.tmp"), target)


def _hadoop_write(spark, target: str, data: bytes) -> None:
    """Write (replace) one file through Hadoop's file system, on any scheme Spark writes."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(target)
    stream = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).create(path, True)
    try:
        stream.write(bytearray(data))
    finally:
        stream.close()
