"""Reliability-23 (issue 26), environment and Spark: reliability-22's fixes attacked (docs/reliability-23-env.md)."""

from __future__ import annotations

from storagelab.sparkjvm import properties_refusal


def test_a_properties_files_continued_or_escaped_path_out_of_sparks_folder_is_refused(tmp_path):
    """Root's spark-defaults.conf `spark.jars a.jar,\\` + `  ../x.jar` (java.util.Properties joins the lines: Spark
    loads /tmp/x.jar, anyone's) passed reliability-22's line-by-line reading; so did `\\u002e\\u002e/x.jar` and a form
    feed between key and value (str.splitlines cut the line there)."""
    conf = tmp_path / "spark-defaults.conf"
    env = {"SPARK_CONF_DIR": str(tmp_path)}
    for text, value in (
        ("spark.jars a.jar,\\\n  ../x.jar\n", "a.jar,../x.jar"),
        ("spark.driver.extraJavaOptions -Dx=1 \\\r\n   @../o\r\n", "-Dx=1 @../o"),
        ("spark.jars \\u002e\\u002e/x.jar\n", "../x.jar"),
        ("spark.jars\f../x.jar\n", "../x.jar"),
    ):
        conf.write_text(text)
        why = properties_refusal(env, "/tmp/storagelab-spark-1")
        assert why is not None and f"={value}: " in why, text
    conf.write_text("# c \\\nspark.jars /a.jar\nspark.x a\\\\\n../y\n")
    assert properties_refusal(env, "/tmp/storagelab-spark-1") is None
