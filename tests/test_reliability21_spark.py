"""Reliability-21 (issue 26), Spark: reliability-20's fixes attacked (docs/reliability-21-spark.md)."""

from __future__ import annotations

import os
import tempfile

from storagelab import ownership, spark_ingest


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
    said = ownership.environment_refusal({"SPARK_CONF_DIR": "../c"})
    assert said is not None and said.startswith(
        f"the environment's SPARK_CONF_DIR ({theirs}): {theirs} can be written by every user (mode drwxrwxrwx)"
    )
    said = ownership.environment_refusal({"JAVA_TOOL_OPTIONS": "-Dlog4j2.configurationFile=./../c/log4j2.xml"})
    assert said is not None and said.startswith(f"the environment's JAVA_TOOL_OPTIONS ({theirs}): {theirs} can be")
    assert ownership.environment_refusal({"SPARK_CONF_DIR": "c", "JDK_JAVA_OPTIONS": "@o"}) is None  # in Spark's own
