"""Spark's JVM ending under a spark-ingest run (reliability-20): killed alone (the kernel's out-of-memory killer picks
the largest process, which is the JVM), the run printed a pyspark thread's traceback and `[Errno 111] Connection
refused`. Here: the one line saying what happened, and the thread kept quiet."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import stat
from pathlib import Path
from urllib.parse import unquote, urlparse

from . import javaprops, livefolders
from .envfiles import leading_out
from .errors import StoreError
from .procs import die_with_parent


def jvm_gone(spark) -> str | None:
    """Why the job failed, as one line, when Spark's JVM has ended (killed: the kernel's OOM killer, a kill of it
    alone); else None. The run said `[Errno 111] Connection refused` after 20 lines of a Python traceback from
    pyspark's accumulator thread (reliability-20)."""
    proc = getattr(getattr(getattr(spark, "sparkContext", None), "_gateway", None), "proc", None)
    if proc is None or proc.poll() is None:
        return None
    code = proc.returncode
    how = f"killed by {_signal_name(-code)}" if code < 0 else f"exit status {code}"
    return (
        f"Spark's JVM (pid {proc.pid}) ended during the run ({how}: the kernel's out-of-memory killer, or a kill "
        "of it): the dataset is whole (the former one unless this run had committed its meta.json); run again"
    )


def tie_jvm_to_this_process() -> None:
    """Spark's JVM, once pyspark starts it, is SIGKILLed by the kernel when this process ends, however it ends.
    pyspark lets the JVM end when its stdin pipe breaks, which it reads only once it is up: a SIGTERM (or Ctrl-C, or
    SIGKILL) while it started left it running 8-10 s with parent 1, holding the command's stdout and stderr, so that
    `spark-ingest | tee` waited for it (reliability-30). The JVM is pyspark's ``Popen`` child (spark-submit execs
    it: the request survives the exec), asked through the ``preexec_fn`` pyspark already passes."""
    from pyspark import java_gateway  # noqa: PLC0415 - optional dependency (spark extra)

    plain = java_gateway.Popen
    if getattr(plain, "tied_to", None) is not None:
        return
    parent = os.getpid()

    def popen(command, **kwargs):
        theirs = kwargs.get("preexec_fn")

        def preexec() -> None:
            if theirs is not None:
                theirs()
            die_with_parent(signal.SIGKILL, parent)

        kwargs["preexec_fn"] = preexec
        return plain(command, **kwargs)

    popen.tied_to = parent  # type: ignore[attr-defined]
    java_gateway.Popen = popen


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def quiet_accumulators(spark) -> None:
    """pyspark's accumulator server thread prints a traceback (EOFError) when the JVM's connection ends mid-run; the
    run says why in one line instead (``jvm_gone``)."""
    server = getattr(getattr(spark, "sparkContext", None), "_accumulatorServer", None)
    if server is not None:
        server.handle_error = lambda request, client_address: None


def path_not_found(error: BaseException) -> str | None:
    """One line for Spark's PATH_NOT_FOUND (the INPUT does not exist), else None: `spark-ingest /nonexistent OUT` ended
    in a 30-line Python traceback of pyspark's AnalysisException (reliability-30, the lead's review)."""
    condition, parameters = getattr(error, "getCondition", None), getattr(error, "getMessageParameters", None)
    if not callable(condition) or condition() != "PATH_NOT_FOUND":
        return None
    path = (parameters() if callable(parameters) else None) or {}
    return f"{path.get('path', 'INPUT')}: no such file or folder to parse (check INPUT)"


def failed(spark, error: BaseException, output: str) -> str | None:
    """Why ``spark_ingest.run``'s job failed, as one line, when it is one of the known ways; else None."""
    return jvm_gone(spark) or path_not_found(error) or own_file_gone(error, output)


def own_file_gone(error: BaseException, output: str) -> str | None:
    """One line for Spark's FAILED_READ_FILE.FILE_NOT_EXIST (a file this run wrote, in its staging folder under the
    dataset, went while it ran), else None. Reliability-35 (spark-env): the dataset's folder renamed away mid-run
    (``mv ds ds.old``; the staging is named by its resolved path): a 218-line Py4JJavaError traceback, exit 1."""
    java = getattr(error, "java_exception", None)
    try:
        text = str(java.toString()) if java is not None else ""
    except Exception:  # noqa: BLE001  (the JVM gone too: jvm_gone says so)
        return None
    gone = f"cannot access '{output.rstrip('/')}/"  # reliability-36: the folder moved as a table's job committed
    if "FAILED_READ_FILE.FILE_NOT_EXIST" not in text and not (gone in text and "No such file or directory" in text):
        return None
    return (
        f"{output}: files this run wrote under it went while it ran (its folder moved or removed?): nothing "
        "committed; run spark-ingest again"
    )


def not_started(error: BaseException) -> str | None:
    """One line for pyspark's JAVA_GATEWAY_EXITED (spark-submit ended before its JVM answered; its own lines, above,
    say why), else None. It was a 20-line traceback; since the JVM starts in the run's own folder (reliability-20), a
    relative path in PYSPARK_SUBMIT_ARGS names nothing, and this is what that gives."""
    condition = getattr(error, "getCondition", None)
    if not callable(condition) or condition() != "JAVA_GATEWAY_EXITED":
        return None
    return (
        "Spark did not start: spark-submit ended before its JVM answered (its own lines above say why); Spark starts "
        "in this run's own folder, so give absolute paths in PYSPARK_SUBMIT_ARGS and --conf"
    )


# set but empty is unset to Spark's shells (`[ -z ]`) and not to its JVM (`getenv != null`) or pyspark (`environ.get`):
# `SPARK_LOCAL_DIRS= storagelab spark-ingest ...` -> "Failed to create dir in ." and a 99-line traceback (reliability-21)
_SPARKS = ("SPARK_", "PYSPARK_", "HADOOP_", "YARN_", "LOG4J_")
_SPARKS_TOO = (
    "JAVA_HOME",
    "CLASSPATH",
    "LOCAL_DIRS",
    "CONTAINER_ID",
    "MASTER",
    *("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"),
)


def unset_empty(environ) -> None:
    """Every Spark, pyspark, Hadoop or Java variable set to "" (or blanks) removed from ``environ``: unset, as the user meant."""
    # reliability-22: and one of blanks only (`PYSPARK_PYTHON=' '`: Spark's "Cannot run program \" \"" and a Java
    # stack trace; `SPARK_HOME=' '`: pyspark's " /./bin/spark-submit": No such file)
    for name in [n for n, v in environ.items() if not v.strip() and (n.startswith(_SPARKS) or n in _SPARKS_TOO)]:
        del environ[name]


def relative_conf(conf: dict[str, str], tmp: str, source: str = "--conf ") -> str | None:
    """The one line for a ``--conf`` value naming a path that leads out of Spark's working folder ("../x"), else None.
    Spark's processes start in the run's own folder, in the temporary folder ``tmp`` (reliability-20): "../x" is
    ``tmp``'s x there, which any user can make (`--conf spark.jars=../x.jar` from a folder of root's)."""
    for key, value in conf.items():
        for part in leading_out(value):  # reliability-22: "..", '"../x"', "@../x" too (envfiles)
            named = os.path.normpath(os.path.join(tmp, part))
            return (  # reliability-24: root's Spark starts in a folder of its own under "/" (``start_folder``)
                f"{source}{key}={value}: {part} is relative, and Spark resolves it in this run's own folder, where it "
                f"names {named}, not what it names here: give absolute paths"
            )
    return None


# reliability-22: Spark's launcher reads more settings from a properties file (PYSPARK_SUBMIT_ARGS' --properties-file,
# else SPARK_CONF_DIR's or SPARK_HOME/conf's spark-defaults.conf): a relative path there leads out of the run's folder
# as a --conf one does (`spark.driver.extraJavaOptions @../opts` in root's /root/conf/spark-defaults.conf)
def properties_refusal(environ, tmp: str) -> str | None:
    """The one line for a setting of Spark's properties files whose path leads out of Spark's folder, else None."""
    try:
        args = shlex.split(environ.get("PYSPARK_SUBMIT_ARGS", ""))
    except ValueError:  # pyspark's own shlex.split says so
        args = []
    files = [b for a, b in zip(args, args[1:], strict=False) if a == "--properties-file"]
    files += [a.partition("=")[2] for a in args if a.startswith("--properties-file=")]
    conf_dir = environ.get("SPARK_CONF_DIR") or os.path.join(environ.get("SPARK_HOME", ""), "conf")
    for path in [*files, os.path.join(conf_dir, "spark-defaults.conf")]:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:  # none (a relative one names nothing in Spark's new folder): Spark reads none either
            continue
        # reliability-23: read as java.util.Properties does (a value continued with "\\" on the next line, "\\u002e",
        # a form feed that str.splitlines took for a line's end): `spark.jars a.jar,\\` + `  ../x.jar` passed
        settings = javaprops.load(text)
        if why := relative_conf(settings, tmp, source=f"{path}: "):
            return why
    return None


# reliability-24: the structural end of reliability-20..23's class. Spark's processes started in the run's folder in
# the temporary folder, so every relative path in Spark's settings, in whatever program's syntax (the JVM's @file and
# one of root's own @/root/opts holding "../x", log4j's "file:%2e%2e/x", spark-env.sh's shell, a log4j2.properties'
# appender, Ivy's cache), named /tmp's entry, anyone's; each campaign found a form the check did not read. Now they
# start in a folder from which no relative path reaches a place another user can write: a chain of 0700 folders of
# this user made right under "/" (no folder of another user's on the way up but "/", which only root writes), as deep
# as the user's own working folder, so "../" enough times to leave it reaches "/" from there too: the same file an
# absolute path names. Shorter climbs stay in the chain. Only root can make it; another user keeps the temporary folder
# (and the checks of the forms above).
START = ".storagelab-spark-cwd-"


def start_folder(conf: dict[str, str], fallback: str) -> tuple[str, str | None]:
    """(the folder Spark's processes start in, the folder to remove after the run or None): the chain under "/" when
    this user can make it, else ``fallback``. A relative path leading out of it in ``conf`` (``--conf``) or Spark's
    properties files is refused (StoreError): it names there what it does not name in the user's folder."""
    start, top = _start_folder(fallback)
    if why := relative_conf(conf, start) or properties_refusal(os.environ, start):
        if top:
            shutil.rmtree(top, ignore_errors=True)
            livefolders.release(top)
        raise StoreError(why)
    return start, top


def _start_folder(fallback: str) -> tuple[str, str | None]:
    from . import readcopies  # noqa: PLC0415

    depth = _depth()
    if depth > 500:  # the chain is removed by shutil.rmtree, which recurses once per folder
        raise StoreError(f"this folder is {depth} folders deep, and Spark starts in one as deep: run from one nearer /")
    for base in _bases():
        readcopies.remove_dead(base, prefix=START)
        try:
            top = livefolders.mkdtemp_held(readcopies.dead_reader_prefix(START), base)  # reliability-27: another
            # pid namespace's run sharing "/" (another container) judged it dead by its name's pid and removed it
        except OSError:  # a read-only "/" (a container's read-only root), a home that is
            continue
        # under "/" a climb of ``depth`` reaches "/", as from the user's folder; under another base it reaches ``top``
        # itself (a path "../"*depth + "x" names nothing then, where the user's names /x: refused, never another's)
        bottom = os.path.join(top, *["d"] * (depth - (base == "/")))
        os.makedirs(bottom, mode=0o700, exist_ok=True)
        for up in range(depth):  # os.makedirs gives the folders above the last one the umask's mode
            os.chmod(os.path.join(top, *["d"] * up), 0o700)
        return bottom, top
    if os.geteuid() == 0:
        raise StoreError(
            "Spark's processes start in a folder of root's from which no relative path reaches a folder another "
            "user can write; none could be made under /, /run, root's home or this folder (read-only?): make one of "
            "them writable"
        )
    return fallback, None


def _depth() -> int:
    """How many folders deep the working folder is: the kernel's name for it (a removed one's too: "(deleted)",
    ".." from it still leads up); for one deeper than PATH_MAX, whose name the kernel does not give (reliability-25:
    it was taken as 256 deep), the climbs to "/" are counted (up to 501)."""
    try:
        here = os.readlink("/proc/self/cwd").removesuffix(" (deleted)")
        if here.startswith("/"):
            return len([part for part in here.split("/") if part])
    except OSError:
        pass
    depth, path = 0, "."
    while depth <= 500:
        try:
            st, up = os.stat(path), os.stat(path + "/..")
        except OSError as e:  # a folder on the way up this user cannot search
            raise StoreError(
                f"how deep this folder is could not be told ({e.strerror}): run from one nearer /"
            ) from None
        if (st.st_dev, st.st_ino) == (up.st_dev, up.st_ino):
            break
        depth, path = depth + 1, path + "/.."
    return depth


# reliability-25: with a read-only "/" (a container's read-only root file system) root's Spark fell back to the
# temporary folder, and reliability-24's highs came back (`JDK_JAVA_OPTIONS=@/root/opts` holding "../l.properties":
# the second user's /tmp/l.properties wrote 44 lines into a 0600 file of root's). A chain also holds under any folder
# whose every folder up to "/" only root or this user can write: its climbs reach only those (and the chain is one
# deeper, so a climb of the user's depth stops in the chain's own top). Another user's run gets one too (their
# runtime folder or home) instead of /tmp, where the same forms read a third user's files as them.
def _bases() -> list[str]:
    import pwd  # noqa: PLC0415

    try:
        home = pwd.getpwuid(os.geteuid()).pw_dir
    except KeyError:
        home = ""
    try:  # last: the working folder itself (a container's data volume, when all else is read-only)
        here = os.getcwd()
    except OSError:
        here = ""
    given = ["/", os.environ.get("XDG_RUNTIME_DIR", ""), f"/run/user/{os.geteuid()}", "/run", home, here]
    return [b for b in dict.fromkeys(os.path.realpath(g) for g in given if g.startswith("/")) if _shut(b)]


def _shut(folder: str) -> bool:
    """Whether ``folder`` and every folder above it are root's or this user's and writable by no one else, and on no
    file system another user serves (reliability-27: root's working folder on the second user's bindfs, shown as root's
    0700, was the base when "/", /run and the home were read-only; their process made root's chain in their folder,
    and answers every name in it)."""
    from .ownership import _served_by_another_user  # noqa: PLC0415  (ownership imports envfiles, as this module does)

    while True:
        try:
            st = os.lstat(folder)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode) or st.st_uid not in (0, os.geteuid()) or st.st_mode & 0o022:
            return False
        if _served_by_another_user(folder):
            return False
        if folder == "/":
            return True
        folder = os.path.dirname(folder)


def hadoop_size(spark, target: str) -> int | None:
    """The size of the file ``target`` through Hadoop's file system (any scheme Spark reads); None when it is not
    there (or went meanwhile: Hadoop's error through py4j)."""
    try:
        path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(target)
        fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        return int(fs.getFileStatus(path).getLen())
    except Exception:  # noqa: BLE001
        return None


_PART_JOB = re.compile(r"(?:^|/)part-\d+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})[^/]*$")


def drop_unfinished_jobs(spark, output: str, names) -> None:
    """Delete each table's ``_temporary`` under ``output``, before this run writes (under the dataset's lock: no other
    writer's). Reliability-34 (spark-env): a run killed while Spark wrote a table leaves its finished tasks' files in
    ``<table>/_temporary/0/task_*``; the next run's write job (Hadoop's FileOutputCommitter, attempt 0 too) moved
    them into the table beside its own, and meta.json listed both: reliability-33's 57 files rows for 46 paths, and
    thumper_layouts twice, exit 0 (since 88bb552f a failed run, "another process writing into the dataset")."""
    u = urlparse(output)
    for name in names:
        if u.scheme in ("", "file"):  # a link there is not followed (rmtree refuses it)
            shutil.rmtree(Path(unquote(u.path)) / name / "_temporary", ignore_errors=True)
            continue
        path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(f"{output.rstrip('/')}/{name}/_temporary")
        path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(path, True)


def one_write_job(new: dict[str, int], where: str) -> dict[str, int]:
    """``new`` (the part files that appeared under ``where`` while this run wrote one table), when one Spark write job
    made them all (a job names its files part-N-<its UUID>); else StoreError, before meta.json lists them.
    Reliability-33 (spark-env): a dataset committed by a spark-ingest run listed two jobs' part files for one
    partition, its rows twice (57 files rows for 46 paths), exit 130 after its meta.json: another process had
    written into the table while the run did (two runs on one dataset, one of them past its lock)."""
    jobs = {m.group(1) if (m := _PART_JOB.search(rel)) else rel for rel in new}
    if len(jobs) > 1:
        raise StoreError(
            f"{where}: part files of {len(jobs)} write jobs appeared while this run wrote it (another process "
            "writing into the dataset): nothing committed; run spark-ingest again once it has ended"
        )
    return new
