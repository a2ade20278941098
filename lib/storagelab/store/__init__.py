"""The DuckDB store: schema, incremental ingest with per-file atomicity, provenance, Parquet export.

An ingest runs these stages, each a module with one job:

1. ``listing``: list the files (folders are walked; manifest/README/hidden files are skipped), each
   under its canonical path, once;
2. ``plan``: skip a file listed with the stamp (``filestamps``: size, mtime, inode, ctime) it had when the bytes
   its record holds were read by the same parser version (no read at all), or that is a known copy of a stored
   file (``duplicates``) on the same terms; once
   a file is read, decide from its SHA-256 whether to store it, keep it, treat it as a rename of a
   gone file, or list it as a copy (a file whose bytes are already stored is not stored twice);
3. ``worker``: read, hash and parse the rest, in chunks, on a process pool for large sets; rows
   come back as Arrow tables; parsing is pure and never touches the database;
4. ``writer``: write the parsed files in batches (up to ``batch_files`` files or ``batch_rows`` rows),
   one transaction per batch: a file's old rows (when its content changed) are deleted and its new
   rows, its ``files`` row and its labels inserted in the same transaction, so a file is either
   wholly in the database or not at all, even if the process is killed; if a batch fails, its files
   are retried one transaction each; failures go to ``ingest_errors`` and never stop the others;
   stored files gone from a listed folder are removed, or renamed when a new path holds their bytes;
5. ``labels``: re-apply the manifest when it differs from the one last applied, and say what in it
   matches nothing;
6. ``export``: bring the Parquet files up to date (stamped per table, temp file then rename).

``ingest`` (module ``pipeline``) runs them; ``db`` opens the database and keeps its schema and
bookkeeping; ``faults`` tells faults of the database, the disk and the user apart. Every database
or disk fault ends the ingest with a StoreError (one line); the database keeps every transaction
committed before it.

Where the time goes, and what was tried: benchmarks/results/ingest.md (``./run bench``).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING

from .db import code_signature, connect, current_parser_versions, ensure_schema, schema_signature
from .export import STAMP, export_parquet, parquet_dir_for
from .faults import StoreError
from .listing import SKIP_NAMES, ListedFile, files_to_read, key_for, list_files

if TYPE_CHECKING:  # the names below, for type checkers; at run time they load on first use (__getattr__)
    from .labels import labels_by_key
    from .pipeline import Summary, ingest
    from .worker import Outcome, parse_chunk, parse_one

# The ingest, its workers and the labels (the pipeline's stream, writer, worker and process pool: multiprocessing,
# tqdm; pyarrow) load when first used: every command imports this package (the CLI's fault handling, `sql`'s and
# `export`'s database), and only `ingest`, `build` and `spark-ingest` run an ingest (issue 28: 50-60 ms of CPU less
# for each other command)
_LATER = {
    "labels_by_key": "labels",
    "Summary": "pipeline",
    "ingest": "pipeline",
    "Outcome": "worker",
    "parse_chunk": "worker",
    "parse_one": "worker",
}


def __getattr__(name: str):
    """A name of _LATER, or a stage module not imported yet (``store.worker``, ``store.labels`` ...), on first use."""
    if name in _LATER:
        value = getattr(importlib.import_module(f".{_LATER[name]}", __name__), name)
    elif importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = [
    "STAMP",
    "SKIP_NAMES",
    "ListedFile",
    "Outcome",
    "StoreError",
    "Summary",
    "code_signature",
    "connect",
    "current_parser_versions",
    "ensure_schema",
    "export_parquet",
    "files_to_read",
    "ingest",
    "key_for",
    "labels_by_key",
    "list_files",
    "parquet_dir_for",
    "parse_chunk",
    "parse_one",
    "schema_signature",
]
