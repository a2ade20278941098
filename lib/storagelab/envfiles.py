"""What the shells and JVMs spark-ingest starts read from the environment before their own code (reliability-19).

Every non-interactive bash runs the file BASH_ENV names first: spark-ingest starts Spark through pyspark's
``bin/spark-submit``, a bash script that runs ``spark-class``, another. `cd THEIRS; BASH_ENV=x.sh storagelab
spark-ingest IN OUT` ran their ``x.sh`` as root three times (bash reads a relative name from the working folder).
``ownership.environment_refusal`` checks its folder and owner as it checks PYTHONSTARTUP's. bash also expands the
value (``$VAR``, ``$(...)``, backquotes) before it reads the file: a folder this check cannot name in advance, so such a
value is refused (a plain path is not)."""

from __future__ import annotations

SHELL_FILES = ("BASH_ENV",)
# the JVMs' option variables (ownership.environment_refusal checks the folder of each path in them, reliability-14/15);
# reliability-19: spark-class runs Spark's launcher, a JVM of its own, with SPARK_LAUNCHER_OPTS
# (`SPARK_LAUNCHER_OPTS=-javaagent:/tmp/theirs/agent.jar storagelab spark-ingest ...` -> "their agent ran as root")
JAVA_OPTIONS = (
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "SPARK_SUBMIT_OPTS",
    "SPARK_DAEMON_JAVA_OPTS",
    "SPARK_LAUNCHER_OPTS",
)


def expansion_refusal(environ) -> str | None:
    """The one line for a shell file variable whose value bash would expand, else None."""
    for var in SHELL_FILES:
        value = environ.get(var, "")
        if "$" in value or "`" in value:
            return (
                f"the environment's {var} ({value}) is expanded by bash (spark-submit's shell) to a file this check "
                f"cannot name in advance: unset {var} or give the file's plain path"
            )
    return None
