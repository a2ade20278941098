"""Reliability-17, Spark and the Parquet dataset (docs/reliability-17-spark.md): in-process checks of the code
spark-ingest and the dataset's readers run (no JVM; the killed run's temporary folders are checked in
tests/test_spark.py's killed-run test, which runs Spark already)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import tempfile
import threading

import duckdb
import pytest
from conftest import FIXTURES, ingest_unlabelled

from storagelab import dataset, readcopies, spark_ingest
from storagelab.analysis import db
from storagelab.errors import StoreError


@pytest.fixture(scope="module")
def one_log(tmp_path_factory):
    """A database of one fio log (the datasets below are exported from it)."""
    con = duckdb.connect(
        str(ingest_unlabelled([FIXTURES / "fio" / "3.33" / "json_only.txt"], tmp_path_factory.mktemp("db")))
    )
    yield con
    con.close()


def test_a_dataset_rewritten_after_it_was_opened_is_one_line(tmp_path, one_log):
    con = one_log
    """Reliability-13/15/17 Low: a reader that opened the dataset, then queried it after spark-ingest (or an export)
    had rewritten it, got DuckDB's `IO Error: No files found that match the pattern ".../part-....parquet"` (1 read
    in each rewrite of the campaign's reader loop). The rewrite here is a real one: a new generation written and
    committed, the former part files gone, as the writers' sweep leaves it. Now the notebooks' query functions say
    so in one line; a connection opened after the rewrite reads the new dataset."""
    out = tmp_path / "ds"
    dataset.export(con, out)
    first = dataset.read_meta(out)["generation"]
    view = dataset.open_dataset(out)
    assert db.frame(view, "SELECT count(*) AS n FROM files")["n"].to_list() == [1]
    shutil.rmtree(out)
    dataset.export(con, out)  # the rewrite: a new generation, the former parts gone
    now = dataset.read_meta(out)["generation"]
    for query in (db.frame, db.frame_by_rows):
        with pytest.raises(StoreError) as e:
            query(view, "SELECT count(*) AS n FROM files")
        assert str(e.value) == (
            f"{out} was rewritten after it was opened (generation {first} -> {now}): the files this connection "
            "read are gone; open it again"
        )
    assert db.frame(dataset.open_dataset(out), "SELECT count(*) AS n FROM files")["n"].to_list() == [1]
    view = dataset.open_dataset(out)
    for rel in dataset.read_meta(out)["parts"]["files"]:
        os.remove(out / rel)  # gone under the same meta.json (not a rewrite): DuckDB's own error, as before
    with pytest.raises(duckdb.IOException, match="No files found"):
        db.frame(view, "SELECT count(*) FROM files")


@pytest.mark.parametrize("when", ["after meta.json is read", "before the views are made"])
def test_a_dataset_rewritten_while_it_is_opened_is_opened_at_its_new_commit(tmp_path, monkeypatch, when, one_log):
    con = one_log
    """Reliability-17: a reader opening the dataset in a loop while spark-ingest rewrote it failed 1 open in each
    rewrite (DuckDB binds a view's files when it is made: `IO Error: No files found that match the pattern`), 3 in
    1 457 opens during 3 rewrites; between meta.json's read and the check of its parts, the open said the dataset was
    cut short ("a write was cut short, or the folder was edited"). Nothing was read yet: the new commit is opened."""
    out = tmp_path / "ds"
    dataset.export(con, out)
    first = dataset.read_meta(out)["generation"]
    name = "read_meta" if when.startswith("after") else "_views"
    real, done = getattr(dataset, name), []

    def rewrite_once(*args, **kwargs):
        got = real(*args, **kwargs)
        if not done:  # a writer commits a new generation and sweeps the former one, once
            done.append(True)
            shutil.rmtree(out)
            dataset.export(con, out)
            if name == "_views":
                got = real(*args, **kwargs)  # the views of the former generation's files: bound now, as DuckDB does
        return got

    monkeypatch.setattr(dataset, name, rewrite_once)
    view = dataset.open_dataset(out)
    assert done
    now = dataset.read_meta(out)["generation"]
    assert now != first
    assert view.execute("SELECT value FROM meta WHERE key = 'generation'").fetchall() == [(now,)]
    assert db.frame(view, "SELECT count(*) AS n FROM files")["n"].to_list() == [1]


def test_spark_gets_a_private_temporary_folder_and_keeps_the_users_options():
    """Reliability-15 Low 4: Spark (``spark.local.dir``: blockmgr-*, spark-*) and the JVM (``java.io.tmpdir``:
    artifacts-*, the snappy and lz4 libraries) wrote straight into /tmp, and a killed run left its folders there
    (62 on the campaign machine). Now both go into one private folder of the run's."""
    theirs = "-XX:TieredStopAtLevel=1 -Djava.io.tmpdir=/srv/big"
    assert (
        spark_ingest.private_conf("local[2]", {"spark.driver.extraJavaOptions": theirs, "a": "b"}, "/tmp/x")
        == {
            "spark.driver.extraJavaOptions": f"-Djava.io.tmpdir=/tmp/x {theirs}",  # theirs after: theirs wins
            "spark.local.dir": "/tmp/x",
            "a": "b",
        }
        | spark_ingest.LOCAL_ONLY
    )
    assert spark_ingest.LOCAL_ONLY == {
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
        "spark.authenticate": "true",
    }
    assert (
        spark_ingest.private_conf("local[*]", {"spark.local.dir": "/srv/spark"}, "/tmp/x")
        == {
            "spark.driver.extraJavaOptions": "-Djava.io.tmpdir=/tmp/x",
            "spark.local.dir": "/srv/spark",
        }
        | spark_ingest.LOCAL_ONLY
    )
    # a cluster's executors use their worker's folders: only the driver's JVM is given the private folder
    assert spark_ingest.private_conf("spark://head:7077", {}, "/tmp/x") == {
        "spark.driver.extraJavaOptions": "-Djava.io.tmpdir=/tmp/x"
    }


def test_a_killed_runs_private_folder_goes_at_the_next_run_and_a_live_ones_stays(tmp_path, monkeypatch):
    """The private folder of a run SIGKILLed (no shutdown hook, no Python: it stays) is removed when the next run
    makes its own; that of a run still going (this process) and another user's name are left alone."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / f"{spark_ingest.SPARK_TMP}999999999-12345-abcd"
    (dead / "blockmgr-1").mkdir(parents=True)
    (dead / "blockmgr-1" / "shuffle_0.data").write_bytes(b"x")
    live = spark_ingest.private_tmp()
    assert not dead.exists()
    assert re.fullmatch(rf"{spark_ingest.SPARK_TMP}{os.getpid()}-\d+-\w+", os.path.basename(live))
    assert os.stat(live).st_mode & 0o777 == 0o700
    again = spark_ingest.private_tmp()
    assert os.path.isdir(live) and os.path.isdir(again)  # this process's: alive
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(live), os.path.basename(again)])
    assert readcopies.remove_dead(prefix=spark_ingest.SPARK_TMP) == []


@pytest.mark.parametrize(
    "var, value",
    [("PYSPARK_GATEWAY_PORT", None), ("SPARK_REMOTE", "sc://127.0.0.1:1"), ("SPARK_CONNECT_MODE_ENABLED", "1")],
)
def test_spark_ingest_does_not_use_a_spark_it_did_not_start(monkeypatch, var, value):
    """Reliability-17: with PYSPARK_GATEWAY_PORT in root's environment, root's spark-ingest connected to the second
    user's program listening on that port, sent it root's gateway secret (`A\\nroot-secret\\n...`) and took its
    answers as its JVM's (then a Py4JError traceback, exit 1); SPARK_REMOTE and SPARK_CONNECT_MODE_ENABLED ended in
    a pyspark traceback. Now one line, before anything connects: the port below, listened on, is never connected to."""
    pytest.importorskip("pyspark")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    connected = []

    def take():  # the user's program: takes root's connection (and closes it: the old code then failed at once)
        with contextlib.suppress(OSError):
            c, _ = listener.accept()
            connected.append(c.recv(100))
            c.close()

    taker = threading.Thread(target=take)
    taker.start()
    monkeypatch.setenv(var, value or str(listener.getsockname()[1]))
    monkeypatch.setenv("PYSPARK_GATEWAY_SECRET", "root-secret")
    try:
        with pytest.raises(StoreError, match=rf"^the environment's {var} \(.*\) would have this run use a Spark it"):
            spark_ingest.session()
    finally:
        listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        listener.close()
        taker.join()
    assert connected == []
