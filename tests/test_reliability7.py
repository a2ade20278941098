"""The seventh attack campaign's data-side findings (docs/reliability-7-store.md), each re-run as the attack ran:
real logs, a real ingest from the command line, each state compared with what a user must see."""

import shutil

import duckdb
from conftest import RAW

from storagelab.store import ingest

BONNIE = sorted((RAW / "freebsd-bonnie-dedup").glob("bonnie-raid1*.txt"))[:2]  # real bonnie++ output (data/raw)


def _studies(db) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT regexp_extract(path, '[^/]+$'), study FROM files ORDER BY 1").fetchall()
    finally:
        con.close()


def test_ignoring_a_folder_with_its_own_manifest_keeps_its_stored_files_labels(tmp_path):
    """reliability-7 Medium 1: LOGS/b/c has its own manifest.csv (read with the folder's, manifest.with_nested);
    its files are stored with its labels. `b/` then goes into .storagelabignore: the README says an ignored file stays
    in the database as it was, with its labels; the ingest cleared their study (the subfolder's manifest was only
    looked for beside the files listed, and ignored files are not). Also when the files are deleted while ignored."""
    logs = tmp_path / "logs"
    sub = logs / "b" / "c"
    sub.mkdir(parents=True)
    for f in BONNIE:
        shutil.copy(f, sub / f.name)
    (sub / "manifest.csv").write_text("path,study\n" + "".join(f"{f.name},cee\n" for f in BONNIE))
    db = tmp_path / "x.duckdb"
    labelled = [(f.name, "cee") for f in BONNIE]
    assert ingest([logs], db_path=db, parquet_dir=False, progress=False).failed == 0
    assert _studies(db) == labelled
    (logs / ".storagelabignore").write_text("b/\n")
    assert ingest([logs], db_path=db, parquet_dir=False, progress=False).ignored == 2
    assert _studies(db) == labelled  # was [(name, None), (name, None)]
    for f in BONNIE:
        (sub / f.name).unlink()
    assert ingest([logs], db_path=db, parquet_dir=False, progress=False).removed == 0
    assert _studies(db) == labelled  # deleted while ignored: not looked at, stays as it was
