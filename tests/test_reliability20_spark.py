"""Reliability-20 (issue 26), Spark and the Parquet dataset: what the JVMs and scripts of spark-ingest read from the
environment and the working folder (docs/reliability-20-spark.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from storagelab import ownership

_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the attack needs root and a second user")


def _theirs(tmp_path: Path) -> Path:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 1002, 1002)
    return theirs


def test_an_empty_spark_home_or_python_is_unset_to_the_session(tmp_path, monkeypatch):
    """`cd THEIRS; SPARK_HOME= storagelab spark-ingest IN OUT` -> "their spark-submit ran as uid 0" and a
    PySparkRuntimeError traceback: pyspark runs os.path.join(SPARK_HOME, "./bin/spark-submit"), which for "" is the
    working folder's bin/spark-submit; the session kept a SPARK_HOME that was set. PYSPARK_PYTHON="" (kept the same
    way) is the program "" to the JVM. The session treats both as unset (the builder recorded here: no JVM)."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession  # noqa: PLC0415

    from storagelab import spark_ingest  # noqa: PLC0415

    class Builder:  # every call (config, master, getOrCreate, stop) returns it
        def __getattr__(self, name):
            return lambda *a: self

    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "spark-submit").write_text("#!/bin/sh\n")
    (tmp_path / "jars").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPARK_HOME", "")
    monkeypatch.setenv("PYSPARK_PYTHON", "")
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", "")
    assert os.path.isfile(os.path.join(os.environ["SPARK_HOME"], "./bin/spark-submit"))  # pyspark's reading: theirs
    monkeypatch.setattr(SparkSession, "builder", Builder())
    spark_ingest.stop(spark_ingest.session())
    home = os.environ["SPARK_HOME"]
    assert os.path.isabs(home) and home != str(tmp_path) and any(Path(home, "jars").glob("spark-launcher_*.jar"))
    assert os.environ["PYSPARK_PYTHON"] == os.environ["PYSPARK_DRIVER_PYTHON"] == sys.executable


@_ROOT_ONLY
def test_the_jvms_argument_files_and_log4j_configuration_are_checked(tmp_path, monkeypatch):
    """`cd THEIRS; JDK_JAVA_OPTIONS=@opts storagelab spark-ingest IN OUT` with opts holding
    `-Xlog:safepoint=info:file=/root/h4victim.txt` -> root's file overwritten by the JVM's log: the java launcher reads
    "@FILE" as more options (a relative FILE from the working folder), which the check never looked into.
    `LOG4J_CONFIGURATION_FILE=THEIRS/log4j2.properties` -> their File appender wrote 45 lines of their pattern into a
    file of root's. Both files are now checked as PYTHONSTARTUP is (folder and owner); a URL is refused."""
    theirs = _theirs(tmp_path)
    opts = theirs / "opts"
    opts.write_text("-Dh20.from.argfile=yes\n")
    os.chown(opts, 1002, 1002)
    monkeypatch.chdir(theirs)
    java = shutil.which("java")
    if java:  # the launcher's own reading of the relative argument file
        shown = subprocess.run(
            [java, "-XshowSettings:properties", "-version"],
            env={"JDK_JAVA_OPTIONS": "@opts", "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
        )
        assert "h20.from.argfile = yes" in shown.stderr
    said = ownership.environment_refusal({"JDK_JAVA_OPTIONS": "@opts"})
    assert said == (
        "the environment's JDK_JAVA_OPTIONS (opts) is a file of another user's (storagelab-rel5), read as you: "
        "unset JDK_JAVA_OPTIONS or give a file of your own"
    )
    said = ownership.environment_refusal({"SPARK_SUBMIT_OPTS": f"-Dx=1 @{opts}"})  # on java's command line
    assert said is not None and said.startswith(f"the environment's SPARK_SUBMIT_OPTS ({opts}) is a file of another")
    log4j = theirs / "log4j2.properties"
    log4j.write_text("rootLogger.level = info\n")
    os.chown(log4j, 1002, 1002)
    said = ownership.environment_refusal({"LOG4J_CONFIGURATION_FILE": f"/etc/hostname,{log4j}"})
    assert said is not None and said.startswith(f"the environment's LOG4J_CONFIGURATION_FILE ({log4j}) is a file of")
    monkeypatch.chdir(tmp_path)
    said = ownership.environment_refusal({"LOG4J_CONFIGURATION_FILE": "http://127.0.0.1:8000/x.xml"})
    assert said is not None and said.startswith("the environment's LOG4J_CONFIGURATION_FILE (http://127.0.0.1:8000/")
    own = tmp_path / "own.properties"
    own.write_text("")
    assert (
        ownership.environment_refusal({"JDK_JAVA_OPTIONS": f"@{own} @@x", "LOG4J_CONFIGURATION_FILE": str(own)}) is None
    )


@_ROOT_ONLY
def test_sparks_other_local_folders_are_checked(tmp_path):
    """`CONTAINER_ID=c LOCAL_DIRS=THEIRS storagelab spark-ingest IN OUT` (a local master) -> root's blockmgr-* (0755)
    and spark-*/pyspark-* folders made in THEIRS, which the user can rename and replace: Spark takes a YARN
    container's LOCAL_DIRS whenever CONTAINER_ID is set, before SPARK_EXECUTOR_DIRS, SPARK_LOCAL_DIRS (checked) and
    spark.local.dir (the run's private folder). Both are checked as SPARK_LOCAL_DIRS is."""
    theirs = _theirs(tmp_path)
    said = ownership.environment_refusal({"CONTAINER_ID": "container_1", "LOCAL_DIRS": f"{tmp_path},{theirs}"})
    assert said is not None and said.startswith(f"the environment's LOCAL_DIRS ({theirs}): {theirs} is another user's")
    assert ownership.environment_refusal({"LOCAL_DIRS": str(theirs)}) is None  # not Spark's without CONTAINER_ID
    said = ownership.environment_refusal({"SPARK_EXECUTOR_DIRS": f"{tmp_path}:{theirs}"})
    assert said is not None and said.startswith(f"the environment's SPARK_EXECUTOR_DIRS ({theirs}): {theirs} is")


def test_spark_starts_in_the_runs_own_folder_and_a_relative_input_stays_ours(tmp_path, monkeypatch):
    """`cd THEIRS; JAVA_TOOL_OPTIONS=-Dlog4j2.configurationFile=log4j2.properties storagelab spark-ingest IN OUT` ->
    their log4j configuration in root's JVM (its File appender writes where they say): spark-submit's shells, the JVMs
    and the Python workers started in the working folder and resolved relative names there. The session starts them
    in the run's private folder and goes back (the builder's getOrCreate records the folder: no JVM); a relative
    INPUT is made absolute first."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession  # noqa: PLC0415

    from storagelab import spark_ingest  # noqa: PLC0415

    seen = []

    class Builder:  # getOrCreate records the working folder; every call returns it
        def __getattr__(self, name):
            return lambda *a: (seen.append(os.getcwd()) if name == "getOrCreate" else None) or self

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(SparkSession, "builder", Builder())
    spark = spark_ingest.session()
    tmp = spark_ingest._TMP[id(spark)]
    start = spark_ingest._TMP[-id(spark)]  # reliability-24/25: a chain of its own (root's under "/"), else tmp
    assert seen[0].startswith(start) and os.path.basename(tmp).startswith("storagelab-spark-")
    assert len(seen) == 1 and os.getcwd() == str(tmp_path)
    spark_ingest.stop(spark)
    given = []
    monkeypatch.setattr(spark_ingest, "_one_writer", lambda out: given.append(out) or open(os.devnull))  # noqa: SIM115
    monkeypatch.setattr(spark_ingest, "_old_meta", lambda *a: {})
    monkeypatch.setattr(spark_ingest, "_old_file_ids", lambda *a: {})
    monkeypatch.setattr(spark_ingest, "_job", lambda spark, input_path, *a: given.append(input_path) or {})
    spark_ingest.run(None, "in", str(tmp_path / "out"))
    assert given == [str(tmp_path / "out"), str(tmp_path / "in")]


def test_a_jvm_killed_alone_is_one_line_and_no_thread_traceback(tmp_path, monkeypatch, capfd):
    """SIGKILL (or SIGTERM) to Spark's JVM alone at 20-25 s (the kernel's OOM killer's choice: the largest process) ->
    exit 2 after 20 lines of a Python traceback from pyspark's accumulator thread (EOFError) and `storagelab
    spark-ingest: [Errno 111] Connection refused`. Now one line saying the JVM ended and how. A real process killed
    by SIGKILL stands for the JVM, and a real accumulator server gets a connection that ends mid-read."""
    pytest.importorskip("pyspark")
    import signal  # noqa: PLC0415
    import socket  # noqa: PLC0415
    import struct  # noqa: PLC0415
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415
    from types import SimpleNamespace  # noqa: PLC0415

    from pyspark import accumulators  # noqa: PLC0415

    from storagelab import spark_ingest  # noqa: PLC0415
    from storagelab.errors import StoreError  # noqa: PLC0415

    jvm = subprocess.Popen(["sleep", "30"])
    jvm.send_signal(signal.SIGKILL)
    jvm.wait()
    server = accumulators.AccumulatorServer(("localhost", 0), accumulators._UpdateRequestHandler, "token")
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:

        def refused():
            raise ConnectionRefusedError(111, "Connection refused")

        spark = SimpleNamespace(
            sparkContext=SimpleNamespace(_gateway=SimpleNamespace(proc=jvm), _accumulatorServer=server)
        )
        spark.stop = refused
        spark_ingest.quiet_accumulators(spark)
        with socket.create_connection(server.server_address) as s:  # authenticated; then the connection ends (EOFError)
            s.sendall(b"token" + struct.pack("!i", 0))  # the token, then no updates: acknowledged
            assert s.recv(1) == b"\x01"
        time.sleep(0.1)
        monkeypatch.setattr(spark_ingest, "_one_writer", lambda out: open(os.devnull))  # noqa: SIM115
        monkeypatch.setattr(spark_ingest, "_old_meta", lambda *a: {})
        monkeypatch.setattr(spark_ingest, "_old_file_ids", lambda *a: {})
        monkeypatch.setattr(spark_ingest, "_job", lambda *a: refused())
        with pytest.raises(StoreError) as said:
            spark_ingest.run(spark, str(tmp_path / "in"), str(tmp_path / "out"))
        spark_ingest.stop(spark)  # a JVM that has ended: nothing to stop, no error
    finally:
        server.shutdown()
        server.server_close()
    assert str(said.value) == (
        f"Spark's JVM (pid {jvm.pid}) ended during the run (killed by SIGKILL: the kernel's out-of-memory killer, or a "
        "kill of it): the dataset is whole (the former one unless this run had committed its meta.json); run again"
    )
    assert "Traceback" not in capfd.readouterr().err


def test_spark_that_did_not_start_is_one_line(tmp_path, monkeypatch):
    """`PYSPARK_SUBMIT_ARGS="--properties-file p.conf pyspark-shell" storagelab spark-ingest ...` (a relative path,
    which names a file in the run's own folder since Spark starts there) -> spark-submit's `Error: Invalid properties
    file 'p.conf'.`, then a 20-line PySparkRuntimeError traceback ([JAVA_GATEWAY_EXITED]). Now one line after
    spark-submit's own; the run's folder is removed and the working folder restored (pyspark's real error; no JVM)."""
    pytest.importorskip("pyspark")
    from pyspark.errors import PySparkRuntimeError  # noqa: PLC0415
    from pyspark.sql import SparkSession  # noqa: PLC0415

    from storagelab import spark_ingest  # noqa: PLC0415
    from storagelab.errors import StoreError  # noqa: PLC0415

    class Builder:  # getOrCreate fails as pyspark's launch_gateway does when spark-submit ends first
        def __getattr__(self, name):
            if name == "getOrCreate":
                return lambda: (_ for _ in ()).throw(
                    PySparkRuntimeError(errorClass="JAVA_GATEWAY_EXITED", messageParameters={})
                )
            return lambda *a: self

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(SparkSession, "builder", Builder())
    with pytest.raises(StoreError) as said:
        spark_ingest.session()
    assert str(said.value) == (
        "Spark did not start: spark-submit ended before its JVM answered (its own lines above say why); Spark starts "
        "in this run's own folder, so give absolute paths in PYSPARK_SUBMIT_ARGS and --conf"
    )
    assert os.getcwd() == str(tmp_path) and not list(tmp_path.glob("storagelab-spark-*"))
