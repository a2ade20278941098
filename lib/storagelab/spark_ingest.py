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

import json
import os
from datetime import datetime, timezone
from pathlib import Path

CHUNK = 256  # files parsed together on an executor (one Arrow table per tool table per chunk)
SPARK_TYPES = {"VARCHAR": "string", "BIGINT": "bigint", "INTEGER": "int", "DOUBLE": "double", "BOOLEAN": "boolean",
               "TIMESTAMPTZ": "timestamp"}


def local_key(uri: str) -> str:
    """The path the local ingest would store for a file Spark names ``uri``."""
    from urllib.parse import unquote, urlparse

    from .store import key_for

    u = urlparse(uri)
    if u.scheme in ("", "file"):
        return key_for(Path(unquote(u.path)))
    return uri


def skipped(key: str) -> bool:
    """Left out as the local ingest's folder walk leaves it out."""
    from .store import SKIP_NAMES

    parts = key.split("/")
    name = parts[-1]
    return any(p.startswith(".") for p in parts if p) or name in SKIP_NAMES or name.endswith((".md", ".ipynb"))


def _sort_key(key: str) -> str:
    return key.replace("/", "\0")  # part by part, as the local listing sorts


def parse_partition(rows):
    """Executor side: (path, modificationTime, length, content) rows -> one record per file: its key, size, mtime,
    outcome fields, error, and its rows per table (lists of tuples in schema column order, file_id left out)."""
    from .schema import all_tables
    from .store import parse_chunk

    tabs = all_tables()
    batch = []

    def flush():
        keys = [b[0] for b in batch]
        jobs = [(k, k, b[2], b[1]) for k, b in zip(keys, batch)]
        outs, tables = parse_chunk(jobs, [b[3] for b in batch])
        offsets = {name: 0 for name in tables}
        for out in outs:
            per_table = {}
            for name, n in (out.table_rows or {}).items():
                tbl = tables[name].slice(offsets[name], n)
                offsets[name] += n
                cols = [c.name for c in tabs[name].columns if c.name != "file_id"]
                data = {c: (tbl.column(c).to_pylist() if c in tbl.column_names else [None] * n) for c in cols}
                per_table[name] = list(zip(*(data[c] for c in cols)))
            yield dict(key=out.key, size=out.size, mtime_ns=out.mtime_ns, sha256=out.sha256, tool=out.tool,
                       tool_version=out.tool_version, format=out.format, parser_version=out.parser_version,
                       warnings=out.warnings, n_rows=out.n_rows, error=out.error, rows=per_table)
        batch.clear()

    for r in rows:
        key = local_key(r["path"])
        if skipped(key):
            continue
        mtime_ns = int(r["modificationTime"].timestamp() * 1000) * 1_000_000
        batch.append((key, mtime_ns, int(r["length"]), bytes(r["content"])))
        if len(batch) >= CHUNK:
            yield from flush()
    if batch:
        yield from flush()


def _spark_schema(columns: list[tuple[str, str]], extra: tuple[str, ...] = ()):
    from pyspark.sql.types import (BooleanType, DoubleType, IntegerType, LongType, StringType, StructField,
                                   StructType, TimestampType)

    types = {"VARCHAR": StringType(), "BIGINT": LongType(), "INTEGER": IntegerType(), "DOUBLE": DoubleType(),
             "BOOLEAN": BooleanType(), "TIMESTAMPTZ": TimestampType()}
    return StructType([StructField(n, types[t], True) for n, t in columns] + [StructField(e, StringType(), True)
                                                                                for e in extra])


def session(master: str = "local[2]"):
    """A Spark session for the job; the Python workers run this interpreter (the one with storagelab)."""
    import sys

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    return (SparkSession.builder.master(master).appName("storagelab-parse")
            .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
            .config("spark.sql.sources.partitionOverwriteMode", "static")
            .getOrCreate())


def run(spark, input_path: str, output: str, manifest: str | None = None) -> dict:
    """Parse every log under ``input_path`` on ``spark`` and write the dataset to ``output`` (replaced)."""
    from pyspark import StorageLevel

    from . import dataset
    from .schema import all_tables, tool_tables
    from .manifest import LABEL_COLUMNS
    from .store import _current_parser_versions, _labels_by_key, schema_signature

    tabs = all_tables()
    owner = {name: tool for name, (tool, _t) in tool_tables().items()}
    files = (spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(input_path)
             .select("path", "modificationTime", "length", "content"))
    parsed = files.rdd.mapPartitions(parse_partition).persist(StorageLevel.MEMORY_AND_DISK)
    info = parsed.map(lambda r: {k: v for k, v in r.items() if k != "rows"}).collect()
    info += _empty_files(spark, input_path)

    # which files are stored (first path per SHA-256, in the local order), their ids, the copies and the errors
    now = datetime.now(timezone.utc)
    month = now.strftime("%Y-%m")
    ok = sorted((r for r in info if not r["error"]), key=lambda r: _sort_key(r["key"]))
    stored, copies, first = [], [], {}
    for r in ok:
        if r["sha256"] in first:
            copies.append((r["key"], r["sha256"], r["size"], r["mtime_ns"], first[r["sha256"]], now))
        else:
            first[r["sha256"]] = r["key"]
            stored.append(r)
    ids = {r["key"]: i for i, r in enumerate(stored, start=1)}
    labels_of = {}
    if manifest:
        from .manifest import load

        labels_of = _labels_by_key(load(Path(manifest)))
    study_of = {r["key"]: (labels_of.get(r["key"]) or {}).get("study") for r in stored}
    tool_of = {r["key"]: r["tool"] for r in stored}

    file_rows = []
    for r in stored:
        lab = labels_of.get(r["key"]) or {}
        given = dict(file_id=ids[r["key"]], path=r["key"], sha256=r["sha256"], size_bytes=r["size"],
                     mtime_ns=r["mtime_ns"], tool=r["tool"], tool_version=r["tool_version"], format=r["format"],
                     parser_version=r["parser_version"], ingested_at=now, n_rows=r["n_rows"],
                     warnings="\n".join(r["warnings"]) or None, **{c: lab.get(c) for c in LABEL_COLUMNS})
        file_rows.append(tuple(given.get(c.name) for c in tabs["files"].columns) + (month,))
    cols = [(c.name, c.type) for c in tabs["files"].columns]
    _write(spark.createDataFrame(file_rows, _spark_schema(cols, ("month",))), output, "files")

    id_map = spark.sparkContext.broadcast({k: (ids[k], tool_of[k], study_of[k]) for k in ids})
    counts = {"files": len(stored)}
    for name in (n for n in tabs if n in owner):
        names = [c.name for c in tabs[name].columns]
        cols = [(c.name, c.type) for c in tabs[name].columns]

        def rows_of(rec, name=name, names=names):
            hit = id_map.value.get(rec["key"])
            if hit is None or name not in rec["rows"]:
                return []
            fid, tool, study = hit
            out = []
            for row in rec["rows"][name]:
                values = dict(zip([n for n in names if n != "file_id"], row))
                values["file_id"] = fid
                out.append(tuple(values[n] for n in names) + (tool, study, month))
            return out

        rdd = parsed.flatMap(rows_of)
        if rdd.isEmpty():
            continue
        df = spark.createDataFrame(rdd, _spark_schema(cols, ("tool", "study", "month")))
        _write(df, output, name)
        counts[name] = df.count()
    errors = [(r["key"], r["sha256"], r["error"]["kind"], r["error"]["line"], r["error"]["message"],
               r["error"]["expected"], now) for r in info if r["error"]]
    for name, data in (("ingest_errors", errors), ("duplicates", copies)):
        if data:
            df = spark.createDataFrame(data, _spark_schema([(c.name, c.type) for c in tabs[name].columns]))
            df.coalesce(1).write.mode("overwrite").parquet(f"{output.rstrip('/')}/{name}")
    parsed.unpersist()
    _write_meta(output, dict(
        format="storagelab-dataset/1", schema_signature=schema_signature(), parser_versions=_current_parser_versions(),
        partition_keys=list(dataset.PARTITION_KEYS), null_partition=dataset.NULL_PARTITION, written_by="spark-ingest",
        tables={n: [[c.name, c.type] for c in t.columns] for n, t in tabs.items()}))
    counts.update(errors=len(errors), duplicates=len(copies))
    return counts


def _empty_files(spark, input_path: str) -> list[dict]:
    """binaryFile gives no row for a zero-length file; the local ingest records it as an 'empty' error. The
    driver lists them through Hadoop's file system (any scheme Spark reads) and records the same error."""
    from .store import parse_one

    jvm = spark.sparkContext._jvm
    root = jvm.org.apache.hadoop.fs.Path(input_path)
    fs = root.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    found, it = [], fs.listFiles(root, True)
    while it.hasNext():
        st = it.next()
        if st.getLen() == 0:
            key = local_key(st.getPath().toString())
            if not skipped(key):
                out = parse_one((key, key, 0, int(st.getModificationTime()) * 1_000_000), b"")
                found.append(dict(key=key, size=0, mtime_ns=out.mtime_ns, sha256=out.sha256, tool=None,
                                  tool_version=None, format=None, parser_version=None, warnings=[], n_rows=0,
                                  error=out.error))
    return found


def _write(df, output: str, name: str) -> None:
    (df.write.mode("overwrite").partitionBy(*("tool", "study", "month"))
     .parquet(f"{output.rstrip('/')}/{name}"))


def _write_meta(output: str, meta: dict) -> None:
    """meta.json beside the tables (on a local or mounted output; for HDFS/S3 outputs, copy it there yourself)."""
    from urllib.parse import urlparse

    u = urlparse(output)
    if u.scheme not in ("", "file"):
        return
    folder = Path(u.path) / "_storagelab"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".meta.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(meta, indent=1, sort_keys=True))
    os.replace(tmp, folder / "meta.json")
