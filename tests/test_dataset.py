"""The Parquet dataset (issue 17): equal to the database table by table and row by row, incremental, readable
by DuckDB with hive partitioning, and the notebooks give the same results on it as on the database."""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest
from conftest import RAW
from conftest import storagelab_cli as cli

from storagelab import dataset
from storagelab.schema import all_tables


def rows(con, table):
    return con.execute(f'SELECT * FROM "{table}" ORDER BY ALL').fetchall()


@pytest.fixture(scope="module")
def exported(seed_db, tmp_path_factory):
    out = tmp_path_factory.mktemp("ds") / "dataset"
    con = duckdb.connect(str(seed_db), read_only=True)
    first = dataset.export(con, out)
    yield con, out, first
    con.close()


def test_dataset_equals_the_database_table_by_table(exported):
    con, out, first = exported
    view = dataset.open_dataset(out)
    tables = list(all_tables())
    for t in tables:
        assert [d[0] for d in view.execute(f'SELECT * FROM "{t}" LIMIT 0').description] == [
            d[0] for d in con.execute(f'SELECT * FROM "{t}" LIMIT 0').description
        ], t
        assert rows(view, t) == rows(con, t), t
    n = con.execute(
        "SELECT count(DISTINCT (tool, study, strftime(ingested_at AT TIME ZONE 'UTC', '%Y-%m'))) FROM files"
    ).fetchone()[0]
    assert first["written"] == n and first["removed"] == 0


def test_layout_is_hive_partitioned_and_readable_as_is(exported):
    con, out, _ = exported
    meta = json.loads((out / "_storagelab" / "meta.json").read_text())
    assert meta["partition_keys"] == ["tool", "study", "month"] and meta["tables"]["files"][0] == ["file_id", "INTEGER"]
    parts = sorted(p.relative_to(out).parts[:3] for p in (out / "fio_groups").rglob("*.parquet"))
    assert ("fio_groups", "tool=fio", "study=homelab-mergerfs") in parts
    plain = duckdb.connect()
    got = plain.execute(f"""SELECT study, count(*) FROM read_parquet('{out}/files/**/*.parquet', hive_partitioning=true)
                            GROUP BY ALL ORDER BY ALL""").fetchall()
    assert got == con.execute("SELECT study, count(*) FROM files GROUP BY ALL ORDER BY ALL").fetchall()
    # a file's rows carry no partition columns of their own; tool tables get them from the path
    cols = [
        d[0]
        for d in plain.execute(
            f"SELECT * FROM read_parquet('{out}/fio_groups/**/*.parquet', hive_partitioning=true) LIMIT 0"
        ).description
    ]
    assert cols[-3:] == ["month", "study", "tool"] or set(cols[-3:]) == {"tool", "study", "month"}


def test_incremental_rewrites_only_changed_partitions(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(RAW / "homelab-mergerfs", raw / "homelab-mergerfs")
    shutil.copytree(RAW / "thumper-x4500", raw / "thumper-x4500")
    db, out = tmp_path / "x.duckdb", tmp_path / "ds"
    r = cli("ingest", str(raw), "--db", str(db), "--dataset", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "dataset " in r.stdout and "0 removed, 0 unchanged" in r.stdout
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}
    r = cli("export", "--dataset", str(out), "--db", str(db))
    assert r.returncode == 0 and "0 partition(s) written, 0 removed" in r.stdout
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")} == before  # nothing rewritten
    victim = next((raw / "thumper-x4500").glob("*.txt"))
    victim.unlink()
    r = cli("ingest", str(raw), "--db", str(db), "--dataset", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    after = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}
    changed = {p for p in after if before.get(p) != after[p]} | (set(before) - set(after))
    assert changed and all("tool=fio" not in str(p) for p in changed)  # homelab's partitions untouched
    con = duckdb.connect(str(db), read_only=True)
    view = dataset.open_dataset(out)
    for t in all_tables():
        assert rows(view, t) == rows(con, t), t


@pytest.mark.e2e
def test_a_notebook_gives_the_same_results_on_the_dataset(exported, seed_db, tmp_path):
    _, out, _ = exported
    texts = {}
    for name, db in (("database", seed_db), ("dataset", out)):
        r = cli("run", "04_dedup_ddt", "-p", "db_path", str(db), "--output", str(tmp_path / name), "--no-report")
        assert r.returncode == 0, r.stderr[-3000:]
        summary = json.loads(next((tmp_path / name / "summaries").glob("*.json")).read_text())
        for k in ("written_at", "params", "parameters", "db_path"):
            summary.pop(k, None)
        texts[name] = summary
    assert texts["database"] == texts["dataset"]
    assert texts["dataset"].get("claims") or texts["dataset"].get("headline")
