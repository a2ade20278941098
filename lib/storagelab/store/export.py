"""The Parquet copy of every table: derived state, checked on every run and rewritten where it does
not match the database.

Each table's export is stamped with the table's generation (``meta``: a token changed in every
transaction that writes the table) and row count; every run rewrites the tables whose stamp does not
match (temp file, then rename), so an export cut short by a kill or a full disk is redone by the next
run. The Parquet folder belongs to its database: ``data/parsed/`` for the default one,
``<name>-parquet/`` beside any other."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

from .. import paths
from ..ownership import SharedFolderError, made_refusal
from ..schema import all_tables
from . import faults

STAMP = ".parquet-stamp.json"  # in the Parquet folder: table -> stamp of the export it holds


def parquet_dir_for(db: Path) -> Path:
    """Where a database's Parquet files go: data/parsed/ for the default database, else a folder
    ``<name>-parquet`` beside it (two databases never share, nor clobber, one set of files)."""
    db = Path(db)
    try:
        if db.resolve() == paths.DB.resolve():
            return paths.DB.parent
    except OSError:  # pragma: no cover
        pass
    return db.with_name(db.stem + "-parquet")


def table_stamps(con) -> dict[str, str]:
    """table -> its stamp: database id, generation (meta ``gen:<table>``, changed by every
    transaction that writes the table) and row count."""
    meta = dict(con.execute("SELECT key, value FROM meta WHERE key = 'db_id' OR starts_with(key, 'gen:')").fetchall())
    names = list(all_tables())
    counts = dict(con.execute(" UNION ALL ".join(f"SELECT '{n}', count(*) FROM \"{n}\"" for n in names)).fetchall())
    return {n: f"{meta.get('db_id')}:{meta.get('gen:' + n, '0')}:{counts[n]}" for n in names}


def _read_stamps(stamp_file: Path) -> dict:
    try:
        stamps = json.loads(stamp_file.read_text())
    except (OSError, ValueError):
        return {}
    return stamps if isinstance(stamps, dict) else {}


def _write_stamps(stamp_file: Path, stamps: dict) -> None:
    tmp = stamp_file.with_name(f"{STAMP}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(stamps, indent=0, sort_keys=True))
        os.replace(tmp, stamp_file)
    except BaseException:  # a full disk, Ctrl-C: not left beside the copy until the next ingest (reliability-7 Low 6)
        tmp.unlink(missing_ok=True)
        raise


def _owned_folder(out_dir: Path) -> Path:
    """``out_dir`` resolved, when only this user can write into it (and swap it), the path the export then uses; else
    SharedFolderError. The folder is named after the database (``--db /tmp/x.duckdb``: /tmp/x-parquet), so another
    user could make it first; root's ingest then wrote ``.parquet-stamp.json.<pid>.tmp`` through their symlink into a
    root-only file (reliability-8)."""
    why, real = made_refusal(out_dir)  # another user's symlink on the way (turned at will), or one gone since the mkdir
    if why:
        raise SharedFolderError(
            f"{why}: another user could put a symlink there under a name the export writes (.<table>.parquet.<pid>.tmp, "
            f".parquet-stamp.json.<pid>.tmp), and have it overwrite any file you can write; remove the folder, give a "
            "database in a folder of your own, or use --no-parquet"
        )
    return real


def export_parquet(con, out_dir: Path) -> list[Path]:
    """Bring ``out_dir/<table>.parquet`` up to date with the database: every table whose export is
    missing or stamped otherwise than the table now is (see table_stamps) is written to a
    temporary file and renamed over the old one, then its stamp is recorded in ``out_dir/STAMP``.
    A kill or a full disk leaves the old file and the old stamp: the next run writes it again (and deletes the
    temporary file a kill left).
    Returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out_dir = _owned_folder(out_dir)
    # temporary files of an export that was killed (one ingest at a time holds the database this folder is for)
    for tmp in [*out_dir.glob(".*.parquet.*.tmp"), *out_dir.glob(f"{glob.escape(STAMP)}.*.tmp")]:
        tmp.unlink(missing_ok=True)
    stamp_file = out_dir / STAMP
    stamps = _read_stamps(stamp_file)
    written = []
    current = table_stamps(con)
    for name in [n for n in stamps if n not in current]:  # a table the schema no longer has
        (out_dir / f"{name}.parquet").unlink(missing_ok=True)
        del stamps[name]
    for name, want in current.items():
        dest = out_dir / f"{name}.parquet"
        if stamps.get(name) == want and dest.exists():
            continue
        tmp = out_dir / f".{name}.parquet.{os.getpid()}.tmp"
        target = tmp.as_posix().replace("'", "''")  # COPY takes no bound parameter for its target
        try:
            con.execute(f"COPY (SELECT * FROM \"{name}\") TO '{target}' (FORMAT PARQUET)")
            faults.inject("parquet-copied")
            os.replace(tmp, dest)
        finally:
            if tmp.exists():
                tmp.unlink()
        faults.inject("parquet-renamed")
        stamps[name] = want
        _write_stamps(stamp_file, stamps)
        written.append(dest)
    return written
