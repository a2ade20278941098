"""The seventh campaign's data-side lows still open in issue 26 (docs/reliability-7-store.md, Lows 3-5), each re-run
as the attack ran: real logs, real ingests (in-process: the code the command line runs)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import RAW
from test_reliability7 import _studies

import storagelab
from storagelab.store import ingest

BONNIE = sorted((RAW / "freebsd-bonnie-dedup").glob("bonnie-raid1*.txt"))[:2]  # real bonnie++ output (data/raw)


def test_a_nested_manifests_row_with_no_file_is_named_as_the_row_says(tmp_path):
    """reliability-7 Low 5: T/b/manifest.csv (read with T's, manifest.with_nested) has a row `gone.txt`; the warning
    named it `b/gone.txt ... no such file under T` (relative to the top folder), which is not what the row says."""
    logs = tmp_path / "T"
    sub = logs / "b"
    sub.mkdir(parents=True)
    shutil.copy(BONNIE[0], sub / BONNIE[0].name)
    (sub / "manifest.csv").write_text(f"path,study\n{BONNIE[0].name},cee\ngone.txt,cee\n")
    summary = ingest([logs], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False)
    assert [w for w in summary.warnings if "gone.txt" in w] == [
        f"{sub / 'manifest.csv'}:3: gone.txt: no such file under {sub} (a typo, or a file that was moved or deleted?)"
    ]


def test_sql_parquet_of_a_dataset_folder_suggests_a_file_it_accepts(tmp_path):
    """reliability-7 Low 4: `sql --parquet DATASET` said `give a file name, e.g. DATASET/result.parquet`, and that
    name was then refused (`is inside the dataset ..., which storagelab writes`). Now the suggestion is accepted."""
    from storagelab.sqlout import parquet_target_refused

    ds, db = tmp_path / "ds", tmp_path / "x.duckdb"
    (ds / "_storagelab").mkdir(parents=True)  # what makes a folder a dataset (dataset.META_DIR)
    other = tmp_path / "out"
    other.mkdir()
    for folder, suggested in [
        (ds, tmp_path / "ds-result.parquet"),
        (other, other / "result.parquet"),
    ]:
        assert parquet_target_refused(str(folder), str(db), False) == (
            f"--parquet {folder} is a folder: give a file name, e.g. {suggested}"
        )
        assert parquet_target_refused(str(suggested), str(db), False) is None


@pytest.mark.e2e  # one CLI run without root's capabilities: 3 s at load 11
def test_a_folder_that_cannot_be_read_keeps_its_stored_files_labels(tmp_path):
    """reliability-7 Low 3: LOGS/b/c has its own manifest.csv; after a first ingest it is made mode 000 and the
    folder ingested by a reader who cannot read it (root without its read-anything capabilities, as an ordinary
    user is): the ingest said `cannot read this folder ... (stored ones stay)`, but cleared their study (its
    manifest could not be read either). Made readable again, the manifest's labels still apply."""
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is needed to drop root's read-anything capabilities")
    logs, db = tmp_path / "logs", tmp_path / "x.duckdb"
    sub = logs / "b" / "c"
    shutil.copytree(BONNIE[0].parent, sub, ignore=lambda _d, names: [n for n in names if Path(_d) / n not in BONNIE])
    (sub / "manifest.csv").write_text("path,study\n" + "".join(f"{f.name},cee\n" for f in BONNIE))
    assert ingest([logs], db_path=db, parquet_dir=False, progress=False).failed == 0
    labelled = [(f.name, "cee") for f in BONNIE]
    assert _studies(db) == labelled
    cmd = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", sys.executable, "-m", "storagelab"]
    sub.chmod(0)
    try:
        r = subprocess.run(
            [*cmd, "ingest", str(logs), "--db", str(db), "--no-parquet", "--quiet"],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(Path(storagelab.__file__).parents[1])),  # the code under test
            timeout=120,
        )
    finally:
        sub.chmod(0o755)
    assert r.returncode == 0, r.stderr
    assert f"warning: {sub}: cannot read this folder (Permission denied)" in r.stderr
    assert _studies(db) == labelled  # was [(name, None), (name, None)]
    (sub / "manifest.csv").write_text("path,study\n" + "".join(f"{f.name},dee\n" for f in BONNIE))
    assert ingest([logs], db_path=db, parquet_dir=False, progress=False).relabelled == 2
    assert _studies(db) == [(f.name, "dee") for f in BONNIE]


def test_running_out_of_memory_in_an_ingest_says_to_raise_the_limit_not_only_to_run_again(tmp_path):
    """reliability-7 Low 11: at the `ulimit -v` the refusal suggests (its floor), data/raw's `ingest --dataset` ran out
    of memory every time, and the line said only `run ingest again`, which failed the same way. DuckDB's own error
    of the attack, as the ingest's one line describes it."""
    from storagelab.database import describe

    db = tmp_path / "db.duckdb"
    e = duckdb.OutOfMemoryException("Out of Memory Error: Failed to allocate block of 262144 bytes (bad allocation)")
    assert describe(db, e, opening=False) == (
        f"{db}: the database failed during the ingest (Out of Memory Error: Failed to allocate block of 262144 bytes "
        "(bad allocation)). Every file committed before it is in the database; raise the memory limit (ulimit -v) "
        "and run ingest again: the floor checked at the start only keeps storagelab's threads from crashing, an "
        "ingest of many files can need more"
    )
