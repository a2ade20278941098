"""Reliability-22 (issue 26), environment and Spark: reliability-21's fixes attacked (docs/reliability-22-env.md)."""

from __future__ import annotations

import tempfile

from storagelab import ownership
from storagelab.sparkjvm import properties_refusal, relative_conf, unset_empty


def test_every_form_of_a_path_leading_out_of_sparks_folder_is_refused(tmp_path, monkeypatch):
    """`cd /root/w; storagelab spark-ingest IN OUT --conf spark.driver.extraJavaOptions=@../o` (root's /root/o meant)
    -> the JVM read the second user's /tmp/o as more options; their `-Xlog:gc*:file=/root/victim` overwrote a root
    file, rc=0. Reliability-21 took only "/x", "./x", "../x" words: an argument file "@../x", a quoted '"../x"' (the
    launcher and the JVM drop quotes), a bare ".." (`-Djava.library.path=..`: /tmp/libhadoop.so; `--driver-class-path
    ..`: classes from /tmp) and "a/../../x" passed, in --conf and in the environment."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    (tmp / "o").mkdir()
    (tmp / "o").chmod(0o777)  # anyone's, as /tmp/o would be
    tmp.chmod(0o1777)  # as /tmp is
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    # the clone's top and notebooks/ are judged too (ownership._lab_folder, _kernels_folder): in a clone in /tmp,
    # "../c" from there is /tmp/c, refused first (the clean-clone run); here they are folders of the test's own
    monkeypatch.setattr(ownership, "_lab_folder", lambda: str(tmp_path / "work"))
    monkeypatch.setattr(ownership, "_kernels_folder", lambda: str(tmp_path / "work"))
    spark = str(tmp / "storagelab-spark-")
    for value in ("@../o/opts", '-Dlog4j2.configurationFile="../o/l.xml"', "-Djava.library.path=..", "-Dx=a/../../o"):
        said = relative_conf({"spark.driver.extraJavaOptions": value}, spark)
        assert said is not None and said.startswith(f"--conf spark.driver.extraJavaOptions={value}: "), value
    assert relative_conf({"spark.driver.extraJavaOptions": "@opts -Dx='/opt/a b'"}, spark) is None
    for var, value, folder in (
        ("JAVA_TOOL_OPTIONS", "-Djava.library.path=/usr/lib:..", tmp),
        ("SPARK_SUBMIT_OPTS", "-Dlog4j2.configurationFile='../o/l.xml'", tmp / "o"),
        ("PYSPARK_SUBMIT_ARGS", "--driver-class-path .. pyspark-shell", tmp),
        ("PYSPARK_SUBMIT_ARGS", "--driver-class-path \\.\\. pyspark-shell", tmp),  # shlex: ".."
        ("PYSPARK_SUBMIT_ARGS", "--driver-java-options @../o/opts pyspark-shell", tmp / "o"),
        ("JAVA_TOOL_OPTIONS", "-Dx=a/../../o/l.xml", tmp / "o"),
        ("JAVA_TOOL_OPTIONS", f'-javaagent:"{tmp}/o/a.jar"', tmp / "o"),  # absolute, quoted
    ):
        said = ownership.environment_refusal({var: value})
        assert said is not None and said.startswith(f"the environment's {var} ({folder}): {folder} can be"), value
    assert ownership.environment_refusal({"JAVA_TOOL_OPTIONS": "-Dlog4j2.configurationFile=conf/l.xml -Xss4m"}) is None


def test_blank_spark_variables_are_unset_and_a_properties_files_path_out_of_sparks_folder_is_refused(tmp_path):
    """`PYSPARK_PYTHON=' ' storagelab spark-ingest IN OUT` -> Spark's `Cannot run program " "` and a Java stack trace:
    reliability-21 unset only "" values. And Spark's launcher reads settings from spark-defaults.conf (SPARK_CONF_DIR's)
    or PYSPARK_SUBMIT_ARGS' --properties-file: a path there leading out of the run's folder in /tmp names what
    another user may make, as a --conf one does; it was not read."""
    environ = {"PYSPARK_PYTHON": " ", "SPARK_HOME": "\t", "SPARK_LOCAL_DIRS": "", "PYTHONHASHSEED": " ", "HOME": "/r"}
    unset_empty(environ)
    assert environ == {"PYTHONHASHSEED": " ", "HOME": "/r"}
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("# settings\nspark.ui.enabled false\nspark.jars  ../x.jar\n")
    (tmp_path / "p.conf").write_text("! props\nspark.driver.extraJavaOptions = -Xss4m @../o\n")
    spark = "/tmp/storagelab-spark-"
    assert properties_refusal({"SPARK_CONF_DIR": str(conf)}, spark) == (
        f"{conf}/spark-defaults.conf: spark.jars=../x.jar: ../x.jar is relative, and Spark resolves it in this run's "
        "own folder, where it names /tmp/x.jar, not what it names here: give absolute paths"
    )
    said = properties_refusal({"PYSPARK_SUBMIT_ARGS": f"--properties-file '{tmp_path}/p.conf' pyspark-shell"}, spark)
    assert said is not None and said.startswith(f"{tmp_path}/p.conf: spark.driver.extraJavaOptions=-Xss4m @../o: ")
    (conf / "spark-defaults.conf").write_text("spark.jars /opt/x.jar\nspark.driver.extraJavaOptions=@opts\n")
    assert properties_refusal({"SPARK_CONF_DIR": str(conf), "PYSPARK_SUBMIT_ARGS": "--properties-file"}, spark) is None
