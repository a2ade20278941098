"""Reliability-19 (issue 26), environment: the programs storagelab starts, and what they read from the working
folder or from folders the environment names (docs/reliability-19-env.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from storagelab import ownership

_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the attack needs root and a second user")


@_ROOT_ONLY
def test_bash_env_of_spark_submits_shell_is_checked_like_a_startup_file(tmp_path, monkeypatch):
    """`cd THEIRS; BASH_ENV=x.sh storagelab spark-ingest IN OUT` -> "bash_env ran as uid 0" three times (in
    spark-submit, spark-class and a subshell): pyspark starts Spark through bash scripts, and bash runs BASH_ENV's
    file first, a relative name from the working folder. The check did not know the variable."""
    pyspark = pytest.importorskip("pyspark")
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    assert submit.read_text().splitlines()[0] == "#!/usr/bin/env bash"  # the shell that reads BASH_ENV
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    (theirs / "x.sh").write_text(f"echo ran > {tmp_path}/ran\n")
    os.chown(theirs, 1002, 1002)
    monkeypatch.chdir(theirs)
    subprocess.run(["bash", "-c", "true"], env={"BASH_ENV": "x.sh", "PATH": "/usr/bin:/bin"}, check=True)
    assert (tmp_path / "ran").read_text() == "ran\n"  # bash's own reading: the working folder's x.sh
    said = ownership.environment_refusal({"BASH_ENV": "x.sh"})
    assert said is not None and said.startswith(f"the environment's BASH_ENV (.): {theirs} is another user's")
    monkeypatch.chdir(tmp_path)  # a folder of root's, where "./$TMPDIR" passed as a missing folder of root's
    said = ownership.environment_refusal({"BASH_ENV": "$TMPDIR/x.sh"})  # bash expands it: /tmp/x.sh, anyone's
    assert said is not None and said.startswith("the environment's BASH_ENV ($TMPDIR/x.sh) is expanded by bash")
    own = tmp_path / "own.sh"
    own.write_text("")
    assert ownership.environment_refusal({"BASH_ENV": str(own)}) is None


def test_spark_ingest_takes_neither_spark_nor_classes_from_the_working_folder(tmp_path, monkeypatch):
    """`cd THEIRS; storagelab spark-ingest IN OUT` -> "their SparkSubmit ran as root" (their jar in THEIRS/hive-jackson/,
    no variable needed): Spark 4's launcher puts its default `spark.driver.defaultExtraClassPath`, "hive-jackson/*",
    first on the JVM's class path, relative, so the JVM reads it from the working folder. The session names it under
    Spark's home (the builder recorded here: no JVM). And `cd THEIRS/sub` with THEIRS/bin/spark-submit and THEIRS/jars/
    -> "their spark-submit ran as uid 0": pyspark (and spark-submit's find-spark-home) tries the working folder's
    parent first as Spark's home. The session names pyspark's own in SPARK_HOME."""
    pytest.importorskip("pyspark")
    import zipfile  # noqa: PLC0415

    from pyspark.find_spark_home import _find_spark_home  # noqa: PLC0415
    from pyspark.sql import SparkSession  # noqa: PLC0415

    from storagelab import spark_ingest  # noqa: PLC0415

    jars = Path(_find_spark_home()) / "jars"
    launcher = next(jars.glob("spark-launcher_*.jar"))
    with zipfile.ZipFile(launcher) as z:  # the launcher's own default: relative
        assert b"\x00\x0ehive-jackson/*" in z.read("org/apache/spark/launcher/AbstractCommandBuilder.class")
    settings = {}

    class Builder:  # records .config(key, value); every other call (master, getOrCreate, stop) returns it
        def __getattr__(self, name):
            return lambda *a: (settings.__setitem__(*a) if name == "config" else None) or self

    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "spark-submit").write_text("#!/bin/sh\n")
    (tmp_path / "jars").mkdir()
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    monkeypatch.setenv("SPARK_HOME", "-")
    monkeypatch.delenv("SPARK_HOME")  # unset, and unset again after the test (the session sets it)
    assert _find_spark_home() == str(tmp_path)  # pyspark's own reading: the working folder's parent
    monkeypatch.setattr(SparkSession, "builder", Builder())
    spark_ingest.stop(spark_ingest.session())
    assert os.environ["SPARK_HOME"] != str(tmp_path) and Path(os.environ["SPARK_HOME"], "jars", launcher.name).is_file()
    assert settings["spark.api.mode"] == "classic"  # SPARK_API_MODE=connect: a Spark Connect client, a traceback
    for key in ("spark.driver.defaultExtraClassPath", "spark.executor.defaultExtraClassPath"):
        value = settings.get(key) or ""
        assert os.path.isabs(value) and value.endswith("/hive-jackson/*"), (key, value)
        assert Path(value).parent.parent.samefile(_find_spark_home()), (key, value)


@_ROOT_ONLY
def test_the_spark_launchers_java_options_are_checked(tmp_path):
    """`SPARK_LAUNCHER_OPTS=-javaagent:/tmp/theirs/agent.jar storagelab spark-ingest IN OUT` -> "their agent ran as
    root": spark-class runs Spark's launcher, a JVM of its own, with these options; the check knew the other JVMs'."""
    pyspark = pytest.importorskip("pyspark")
    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    assert '"$RUNNER" -Xmx128m $SPARK_LAUNCHER_OPTS -cp' in spark_class.read_text()
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 1002, 1002)
    said = ownership.environment_refusal({"SPARK_LAUNCHER_OPTS": f"-javaagent:{theirs}/agent.jar"})
    assert said is not None and said.startswith(
        f"the environment's SPARK_LAUNCHER_OPTS ({theirs}): {theirs} is another"
    )
