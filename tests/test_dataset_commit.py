"""The dataset is written as the database is (issue 26, reliability-2 high 2 and its lows): a run killed at any
point leaves the old dataset whole (or the new one), never new part files under the old meta.json; a reader
refuses a dataset whose files and meta.json disagree; file ids stay where the files are the same; leftovers of a
killed run go with the next one; labels that make no folder name are kept whole."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import FIXTURES, RAW, ROOT
from conftest import storagelab_cli as cli

from storagelab import dataset
from storagelab.schema import all_tables, tool_tables
from storagelab.store.faults import StoreError

NEW_LOG = FIXTURES / "fio" / "3.33" / "normal_only.txt"


def joined(path) -> dict:
    """Every tool table's rows by the path and tool of the file they join to, and each file's id."""
    con = dataset.open_dataset(path)
    try:
        out = {"ids": sorted(con.execute("SELECT path, file_id FROM files").fetchall())}
        for name in tool_tables():
            out[name] = sorted(
                con.execute(
                    f'SELECT f.path, f.tool, count(*) FROM "{name}" t JOIN files f USING (file_id) GROUP BY ALL'
                ).fetchall()
            )
        return out
    finally:
        con.close()


def run_with_fault(fault: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), STORAGELAB_FAULT=fault)
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )


def unlisted(out) -> list[str]:
    """Files under the table folders that meta.json does not list (leftovers)."""
    info = json.loads((out / "_storagelab" / "meta.json").read_text())
    listed = {rel for files in info["parts"].values() for rel in files}
    return sorted(
        p.relative_to(out).as_posix()
        for name in all_tables()
        if (out / name).is_dir()
        for p in (out / name).rglob("*")
        if p.is_file() and p.relative_to(out).as_posix() not in listed
    )


@pytest.fixture(scope="module")
def exported_once(tmp_path_factory):
    """(database, dataset): a copy of data/raw/ ingested with --dataset, then one more log (sorting first) ingested
    into the database alone: the dataset is one file behind. Made once; each test changes a copy (`exported`)."""
    root = tmp_path_factory.mktemp("exported")
    raw_copy, db, out = root / "raw", root / "x.duckdb", root / "ds"
    shutil.copytree(RAW, raw_copy)
    r = cli("ingest", str(raw_copy), "--db", str(db), "--no-parquet", "--dataset", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    (raw_copy / "aaa").mkdir()
    shutil.copy(NEW_LOG, raw_copy / "aaa" / "first.txt")  # sorts first
    r = cli("ingest", str(raw_copy), "--db", str(db), "--no-parquet", "--quiet")
    assert r.returncode == 0 and "ingested 1 " in r.stdout, r.stdout + r.stderr
    return db, out


@pytest.fixture
def exported(exported_once, tmp_path):
    """A copy of ``exported_once``'s database and dataset for one test to change (the two ingests run once per
    module, not once per test: issue 28)."""
    db, out = tmp_path / "x.duckdb", tmp_path / "ds"
    assert not Path(f"{exported_once[0]}.wal").exists()  # the database is whole in its one file
    shutil.copy(exported_once[0], db)
    shutil.copytree(exported_once[1], out)
    return db, out


@pytest.mark.parametrize("fault", ["dataset-part-copied:3", "dataset-before-commit"])
def test_an_export_killed_before_its_commit_leaves_the_old_dataset_and_the_next_one_cleans_up(exported, fault):
    db, out = exported
    before = joined(out)
    r = run_with_fault(fault, "export", "--dataset", str(out), "--db", str(db))
    assert r.returncode == -9, r.stderr
    assert unlisted(out)  # the killed run's new part files (or its temporary file)
    assert joined(out) == before  # the old dataset, whole: no new part joined under the old meta.json
    r = cli("export", "--dataset", str(out), "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert unlisted(out) == []
    assert not list(out.rglob("*.tmp"))
    after = joined(out)
    con = duckdb.connect(str(db), read_only=True)
    assert after["ids"] == sorted(con.execute("SELECT path, file_id FROM files").fetchall())
    con.close()
    assert set(before["ids"]) < set(after["ids"])  # the old files keep their ids; the new one is added


def test_an_export_killed_after_its_commit_is_the_new_dataset(exported):
    db, out = exported
    r = run_with_fault("dataset-committed", "export", "--dataset", str(out), "--db", str(db))
    assert r.returncode == -9
    con = duckdb.connect(str(db), read_only=True)
    assert joined(out)["ids"] == sorted(con.execute("SELECT path, file_id FROM files").fetchall())
    con.close()
    assert cli("export", "--dataset", str(out), "--db", str(db)).returncode == 0
    assert unlisted(out) == []


def test_a_dataset_whose_files_disagree_with_its_meta_is_refused(exported):
    _, out = exported
    info = json.loads((out / "_storagelab" / "meta.json").read_text())
    victim = sorted(info["parts"]["fio_groups"])[0]
    (out / victim).unlink()
    with pytest.raises(StoreError) as e:
        dataset.open_dataset(out)
    assert str(e.value) == (
        f"{out}: {victim} is missing or not the file _storagelab/meta.json lists (a write was cut short, or the "
        f"folder was edited): run `storagelab export --dataset {out}` (or the `storagelab spark-ingest` that wrote "
        "it) again"
    )


def test_a_dataset_of_an_older_version_is_refused_with_what_to_run(exported, tmp_path):
    _, out = exported
    meta = out / "_storagelab" / "meta.json"
    info = json.loads(meta.read_text())
    del info["parts"]
    info["format"] = "storagelab-dataset/1"
    meta.write_text(json.dumps(info))
    r = cli("run", "08_fio", "-p", "db_path", str(out), "--output", str(tmp_path / "rep"), "--no-report")
    assert r.returncode != 0
    assert "Table with name" not in r.stdout + r.stderr
    assert r.stderr.startswith(f"storagelab run: {out} was written by another version of storagelab")
    with pytest.raises(StoreError) as e:
        dataset.open_dataset(out)
    assert str(e.value) == (
        f"{out} was written by another version of storagelab (its meta.json lists no part files): run "
        f"`storagelab export --dataset {out}` (or the `storagelab spark-ingest` that wrote it) again"
    )


def test_export_from_an_older_database_is_one_line(exported, tmp_path):
    db, _ = exported
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = 'an-older-one' WHERE key = 'schema'")
    con.close()
    r = cli("export", "--dataset", str(tmp_path / "ds2"), "--db", str(db))
    assert r.returncode == 2
    assert r.stderr == (
        "storagelab export: the database was built by another version of storagelab (its tables differ from this "
        "one's): run `storagelab ingest` (with the same --db) to rebuild it, then export again\n"
    )


@pytest.mark.parametrize(
    "label", [dataset.NULL_PARTITION, "s" * 300, "é" * 200 + "/x"], ids=["null-name", "300-chars", "long-utf8"]
)
def test_labels_that_make_no_folder_name_are_kept_whole(tmp_path, label):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(NEW_LOG, logs / "a.txt")
    shutil.copy(FIXTURES / "fio" / "3.33" / "json_only.txt", logs / "b.txt")
    (logs / "manifest.csv").write_text(f'path,study\na.txt,"{label}"\n')
    db, out = tmp_path / "x.duckdb", tmp_path / "ds"
    r = cli("ingest", str(logs), "--db", str(db), "--no-parquet", "--dataset", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    con = dataset.open_dataset(out)
    assert sorted(con.execute("SELECT path, study FROM files").fetchall(), key=str) == sorted(
        [(str(logs / "a.txt"), label), (str(logs / "b.txt"), None)], key=str
    )
    assert (
        con.execute("SELECT count(*) FROM fio_groups g JOIN files f USING (file_id) WHERE f.study IS NULL").fetchone()[
            0
        ]
        == (
            duckdb.connect(str(db), read_only=True)
            .execute("SELECT count(*) FROM fio_groups g JOIN files f USING (file_id) WHERE f.study IS NULL")
            .fetchone()[0]
        )
    )
    folders = {p.name for p in (out / "files" / "tool=fio").iterdir()}
    assert len(folders) == 2 and f"study={dataset.NULL_PARTITION}" in folders
    assert all(len(f.encode()) <= 200 for f in folders)
    assert any(f.startswith("study=" + dataset._escape(label[:20])) for f in folders)  # readable: the label's start


def test_two_exports_into_one_folder_at_once_leave_one_whole_dataset(exported):
    """One writer at a time (a lock in _storagelab/): else one run's sweep deletes the other's new part files."""
    db, out = exported
    shutil.rmtree(out)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    cmd = [sys.executable, "-m", "storagelab", "export", "--dataset", str(out), "--db", str(db)]
    procs = [subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in "ab"]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    assert unlisted(out) == []
    con = duckdb.connect(str(db), read_only=True)
    assert joined(out)["ids"] == sorted(con.execute("SELECT path, file_id FROM files").fetchall())
    con.close()
