"""Reliability-34, the dataset and Spark part (h51k)."""

from __future__ import annotations


def test_a_killed_runs_finished_tasks_are_gone_before_the_next_run_writes(tmp_path, monkeypatch):
    """Reliability-33's possible high, its cause: a spark-ingest killed while Spark wrote a table leaves its finished
    tasks' part files in ``<table>/_temporary/0/task_*``. The next run's write job of that table (Hadoop's
    FileOutputCommitter: attempt 0 too) moved them into the table beside its own files, and meta.json listed both:
    thumper_layouts 258 rows for 129, exit 0, on the code before 88bb552f (a planted task, a real JVM); since
    88bb552f the run failed, blaming another process. Now each table's ``_temporary`` goes, under the lock, before the
    run writes; a symlink there is not followed."""
    from storagelab import spark_ingest

    ds = tmp_path / "ds"
    (ds / "_storagelab").mkdir(parents=True)
    (ds / "_storagelab" / "meta.json").write_text("{}")
    task = ds / "thumper_layouts" / "_temporary" / "0" / "task_202611290700_0005_m_000001" / "tool=transcribed"
    task.mkdir(parents=True)
    (task / "part-00001-daee7381-0000-4000-8000-000000000000.c000.snappy.parquet").write_bytes(b"PAR1")
    keep = tmp_path / "elsewhere"
    (keep / "0").mkdir(parents=True)
    (ds / "files").mkdir()
    (ds / "files" / "_temporary").symlink_to(keep)
    seen = []
    monkeypatch.setattr(spark_ingest, "_old_meta", lambda spark, out: {})
    monkeypatch.setattr(spark_ingest, "_old_file_ids", lambda spark, out, old: {})
    monkeypatch.setattr(spark_ingest, "_drop_staging", lambda staging: None)

    def job(spark, input_path, output, manifest, old_ids, staging, *ignored):
        seen.append(sorted(p.relative_to(ds).as_posix() for p in ds.rglob("*") if "_temporary" in p.parts))
        return {}

    monkeypatch.setattr(spark_ingest, "_job", job)
    assert spark_ingest.run(None, str(tmp_path / "in"), str(ds)) == {}
    assert seen == [["files/_temporary"]]  # the link, left as it is
    assert (keep / "0").is_dir()
