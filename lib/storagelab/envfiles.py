"""What the shells and JVMs spark-ingest starts read from the environment before their own code (reliability-19).

Every non-interactive bash runs the file BASH_ENV names first: spark-ingest starts Spark through pyspark's
``bin/spark-submit``, a bash script that runs ``spark-class``, another. `cd THEIRS; BASH_ENV=x.sh storagelab
spark-ingest IN OUT` ran their ``x.sh`` as root three times (bash reads a relative name from the working folder).
``ownership.environment_refusal`` checks its folder and owner as it checks PYTHONSTARTUP's. bash also expands the
value (``$VAR``, ``$(...)``, backquotes) before it reads the file: a folder this check cannot name in advance, so such a
value is refused (a plain path is not)."""

from __future__ import annotations

import os
import re

SHELL_FILES = ("BASH_ENV",)
# reliability-33: files the libraries of every command and kernel read or write by a name from the environment.
# OpenSSL (Python's ssl, imported by asyncio in every kernel, and pyarrow) reads OPENSSL_CONF and loads the shared
# objects its provider and engine sections name: `OPENSSL_CONF=/tmp/theirs/openssl.cnf storagelab run 07_explore`
# loaded their .so as uid 0. Coverage's a1_coverage.pth starts coverage in every Python process when
# COVERAGE_PROCESS_START names a configuration, and writes its data_file at exit (their `data_file = /root/x`
# overwrote root's 0600 file with coverage's database, mode 0644). Python's ssl appends to SSLKEYLOGFILE, pydevd (the
# kernels' debugger) writes PYDEVD_DEBUG_FILE and DEBUGPY_LOG_DIR's debugpy.pydevd.<pid>.log, coverage its
# COVERAGE_DEBUG_FILE: all by name (root's kernel made its files in the second user's folder)
LIBRARY_FILES = ("OPENSSL_CONF", "COVERAGE_PROCESS_START", "COVERAGE_DEBUG_FILE", "SSLKEYLOGFILE", "PYDEVD_DEBUG_FILE")
# reliability-34 (Low 1): CPython's start-up (getpath, on Linux too) takes its prefix from PYTHONEXECUTABLE's folder:
# it looked for pyvenv.cfg and lib/python3.11/os.py (the standard library) beside the second user's name, as
# PYTHONHOME does; the command itself has started by then, but its kernels inherit it
LIBRARY_FILES += ("PYTHONEXECUTABLE",)
LIBRARY_FOLDERS = ("OPENSSL_MODULES", "OPENSSL_ENGINES", "DEBUGPY_LOG_DIR")


def unsaved_coverage(environ) -> None:
    """Coverage started (by its .pth, before this code ran) from this process's own COVERAGE_PROCESS_START, stopped
    unsaved, once the environment is refused: it writes the data file its configuration names at exit."""
    import sys  # noqa: PLC0415

    coverage = sys.modules.get("coverage")
    if environ is not os.environ or not environ.get("COVERAGE_PROCESS_START") or coverage is None:
        return
    if (current := coverage.Coverage.current()) is not None:
        current._auto_save = False  # noqa: SLF001  (its at-exit save; coverage has no public switch)
        current.stop()


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
    """The one line for a shell file variable whose value bash would expand, or a log4j configuration given as a
    URL (log4j fetches it: another user may serve it on a local port), else None."""
    for var in LOG4J_FILES:
        if ":" in environ.get(var, ""):
            return (
                f"the environment's {var} ({environ[var][:80]}) names a URL, which this check cannot judge "
                f"(another user may serve it): unset {var} or give the configuration file's plain path"
            )
    for var in SHELL_FILES:
        value = environ.get(var, "")
        if "$" in value or "`" in value:
            return (
                f"the environment's {var} ({value}) is expanded by bash (spark-submit's shell) to a file this check "
                f"cannot name in advance: unset {var} or give the file's plain path"
            )
    return None


# reliability-20: files the JVMs of spark-ingest read by a name from the environment, checked as PYTHONSTARTUP is (their
# folder and owner). The java launcher reads "@FILE" words in JDK_JAVA_OPTIONS and on its command line (where Spark puts
# SPARK_SUBMIT_OPTS) as more options, a relative FILE from the working folder (`cd THEIRS;
# JDK_JAVA_OPTIONS=@opts storagelab spark-ingest ...`: their -Xlog:...:file=/root/x overwrote root's file); log4j 2
# takes its configuration from LOG4J_CONFIGURATION_FILE (their File appender wrote lines of their choosing into a
# file of root's)
LOG4J_FILES = ("LOG4J_CONFIGURATION_FILE",)


def named_files(environ) -> list[tuple[str, str]]:
    """(variable, file) for every argument file in the JVM option variables and every log4j configuration file."""
    words = [(var, w) for var in JAVA_OPTIONS for w in environ.get(var, "").split()]
    files = [(var, w[1:]) for var, w in words if w.startswith("@") and w[1:2] not in ("", "@")]  # "@@": a literal "@"
    return files + [(var, f.strip()) for var in LOG4J_FILES for f in environ.get(var, "").split(",") if f.strip()]


# reliability-20: where Spark puts its block manager's and its own folders by these besides SPARK_LOCAL_DIRS: a YARN
# container's LOCAL_DIRS (taken when CONTAINER_ID is set, even on a local master) and SPARK_EXECUTOR_DIRS
# (`CONTAINER_ID=c LOCAL_DIRS=/tmp/theirs storagelab spark-ingest ...`: root's blockmgr-* and spark-* made there)
def spark_folders(environ) -> list[tuple[str, str]]:
    """(variable, folder) for each folder Spark's local directories are taken from."""
    lists = [("SPARK_EXECUTOR_DIRS", os.pathsep), *([("LOCAL_DIRS", ",")] if "CONTAINER_ID" in environ else [])]
    return [(var, f) for var, sep in lists for f in environ.get(var, "").split(sep) if f]


# reliability-21: spark-submit's shells, Spark's JVMs and its Python workers run in the run's private folder, made in
# the temporary folder (spark_ingest.private_tmp), since reliability-20: a relative name leading out of it ("../x")
# names the temporary folder's entry, which any user can make (`cd /root/w; SPARK_CONF_DIR=../conf storagelab
# spark-ingest ...`, meant as root's /root/conf, sourced the second user's /tmp/conf/spark-env.sh as root)
def from_spark_folder(named: list[tuple[str, str]], environ=None) -> list[tuple[str, str]]:
    """(variable, folder) as Spark's processes resolve each relative ``named`` folder that leads out of their own, and
    the folder of each path that leads out in the option strings of ``environ`` (``leading_out``)."""
    import tempfile  # noqa: PLC0415

    spark = os.path.join(os.path.realpath(tempfile.gettempdir()), "storagelab-spark-")
    out = [(var, os.path.normpath(given)) for var, given in named if not os.path.isabs(given)]
    out += [
        (var, _folder(os.path.normpath(w))) for var in OPTION_STRINGS for w in leading_out((environ or {}).get(var, ""))
    ]
    return [(var, os.path.normpath(os.path.join(spark, rel))) for var, rel in out if rel.split(os.sep)[0] == ".."]


# reliability-22: the option strings' paths were taken only as "/x", "./x" or "../x" words: "..", "a/../../x", a
# quoted '"../x"' (Spark's launcher and the JVM drop the quotes) and an argument file "@../x" passed, from root's own
# folder: `--conf spark.driver.extraJavaOptions=@../opts` (root's /root/opts meant) read the second user's /tmp/opts
# as more JVM options (their -Xlog:gc:file=/root/victim overwrote a root file), `-Djava.library.path=..` loads
# /tmp/libhadoop.so, `--driver-class-path ..` loads classes from /tmp
OPTION_STRINGS = (*JAVA_OPTIONS, "PYSPARK_SUBMIT_ARGS", *LOG4J_FILES)


def words(value: str) -> list[str]:
    """The words of an option string as the JVM, Spark's launcher and pyspark read them: quotes (and backslashes) removed, split on
    blanks, ``=``, ``:`` and ``,``, an argument file's ``@`` dropped."""
    parts = re.split(r"[\s=:,]", re.sub(r"[\"'\\]", "", value))  # pyspark's shlex.split also drops "\\" escapes
    return [w[1:] if w.startswith("@") else w for w in parts if w]


def leading_out(value: str) -> list[str]:
    """Each relative path in the option string ``value`` that leads out of the folder it is resolved in (``../x``,
    ``..``, ``a/../../x``, ``"../x"`` as ``../x``, ``@../x`` as ``../x``)."""
    return [w for w in words(value) if not os.path.isabs(w) and os.path.normpath(w).split(os.sep)[0] == ".."]


def _folder(path: str) -> str:
    """The folder of ``path`` ("..", "../.." are folders themselves)."""
    return path if os.path.basename(path) == ".." else os.path.dirname(path)
