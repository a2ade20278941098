"""Reliability-21 (issue 26), Spark: reliability-20's fixes attacked (docs/reliability-21-spark.md)."""

from __future__ import annotations

import os
import tempfile

import pytest

from storagelab import ownership, spark_ingest
from storagelab.errors import StoreError


def test_a_relative_path_leading_out_of_sparks_folder_is_checked_where_spark_resolves_it(tmp_path, monkeypatch):
    """`cd /root/w; SPARK_CONF_DIR=../c storagelab spark-ingest IN OUT` (root's own /root/c meant) -> the second user's
    /tmp/c/spark-env.sh ran as uid 0: since reliability-20, spark-submit's shells, the JVMs and the Python workers
    start in the run's private folder, made in the temporary folder, so "../c" is the temporary folder's c, which any
    user can make. The check judged "../c" from the working folder only; now from Spark's folder too."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    made = spark_ingest.private_tmp()  # the folder Spark's processes start in (spark_ingest.session)
    assert os.path.dirname(made) == str(tmp)
    os.rmdir(made)
    (tmp_path / "work").mkdir()
    (tmp_path / "c").mkdir(mode=0o755)  # root's own, as seen from the working folder
    theirs = tmp / "c"
    theirs.mkdir()
    theirs.chmod(0o777)  # anyone's, as /tmp/c would be
    monkeypatch.chdir(tmp_path / "work")
    # the clone's top and notebooks/ are judged too (ownership._lab_folder, _kernels_folder): in a clone in /tmp,
    # "../c" from there is /tmp/c, refused first (the clean-clone run); here they are folders of the test's own
    monkeypatch.setattr(ownership, "_lab_folder", lambda: str(tmp_path / "work"))
    monkeypatch.setattr(ownership, "_kernels_folder", lambda: str(tmp_path / "work"))
    said = ownership.environment_refusal({"SPARK_CONF_DIR": "../c"})
    assert said is not None and said.startswith(
        f"the environment's SPARK_CONF_DIR ({theirs}): {theirs} can be written by every user (mode drwxrwxrwx)"
    )
    said = ownership.environment_refusal({"JAVA_TOOL_OPTIONS": "-Dlog4j2.configurationFile=./../c/log4j2.xml"})
    assert said is not None and said.startswith(f"the environment's JAVA_TOOL_OPTIONS ({theirs}): {theirs} can be")
    assert ownership.environment_refusal({"SPARK_CONF_DIR": "c", "JDK_JAVA_OPTIONS": "@o"}) is None  # in Spark's own


def test_empty_spark_variables_are_unset_and_a_relative_conf_path_out_of_sparks_folder_is_refused(
    tmp_path, monkeypatch
):
    """`SPARK_LOCAL_DIRS= storagelab spark-ingest IN OUT` -> Spark's `Failed to create dir in .` and a 99-line
    traceback, rc=1: the JVM takes a variable set to "" as set. Such variables are unset to the session. And
    `--conf spark.jars=../x.jar` from a folder of root's named the temporary folder's x.jar (which any user can
    make), since Spark starts in the run's own folder there: refused (the builder recorded: no JVM, on old code too)."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession  # noqa: PLC0415

    class Builder:  # every call (config, master, getOrCreate, stop) returns it
        def __getattr__(self, name):
            return lambda *a: self

    monkeypatch.setattr(SparkSession, "builder", Builder())
    monkeypatch.chdir(tmp_path)
    for var in ("SPARK_LOCAL_DIRS", "SPARK_EXECUTOR_DIRS", "CONTAINER_ID", "HADOOP_HOME", "PYSPARK_PIN_THREAD"):
        monkeypatch.setenv(var, "")
    monkeypatch.setenv("SPARK_SCALA_VERSION", "2.13")
    spark_ingest.stop(spark_ingest.session())
    assert [
        v for v in ("SPARK_LOCAL_DIRS", "SPARK_EXECUTOR_DIRS", "CONTAINER_ID", "HADOOP_HOME") if v in os.environ
    ] == []
    assert "PYSPARK_PIN_THREAD" not in os.environ and os.environ["SPARK_SCALA_VERSION"] == "2.13"
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(StoreError) as e:
        spark_ingest.stop(spark_ingest.session(conf={"spark.driver.extraClassPath": "/opt/a.jar:./../x.jar"}))
    said, named = str(e.value).split("where it names ")  # reliability-24: root's in a folder of its own under "/"
    assert said == (
        "--conf spark.driver.extraClassPath=/opt/a.jar:./../x.jar: ./../x.jar is relative, and Spark resolves it in "
        "this run's own folder, "
    )
    assert named.endswith("/x.jar, not what it names here: give absolute paths")
    # reliability-25: another user's chain is in their runtime folder or home (the temporary folder's if neither)
    assert named.startswith("/.storagelab-spark-cwd-") if os.geteuid() == 0 else "/.storagelab-spark-cwd-" in named
    spark_ingest.stop(spark_ingest.session(conf={"spark.jars": "x.jar", "spark.driver.extraJavaOptions": "-Xss4m"}))
