"""Whether a folder this user writes into by names known in advance is this user's alone: no other user can write
into it, nor swap it (or a folder above it) for one of theirs after it was checked. A symlink another user puts
under such a name is written through, as this user (root: any file; reliability-5 to -8). Used by the lab's
--target/--out, run --output, the Parquet folder beside a database and a dataset folder."""

from __future__ import annotations

import errno
import os
import re
import stat
import struct
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

from . import envfiles
from .emptyvars import empty_is_here
from .envfiles import JAVA_OPTIONS, SHELL_FILES, expansion_refusal, from_spark_folder, named_files, spark_folders, words
from .errors import StoragelabError
from .livewriters import any_writer as _live
from .usernames import group_members as _group_members
from .usernames import group_name as _group_name
from .usernames import user_name as _user_name


class SharedFolderError(StoragelabError):
    """A folder this user would write into by names known in advance that another user can write into, or swap."""


SWAPPED = (
    "stopped being a symlink while it was resolved (another user may be swapping a folder and a link under this name)"
)


def resolved(path: Path, *, strict: bool = False) -> Path:
    """``path.resolve()``, whose ``readlink`` of a name the ``lstat`` just before saw as a symlink fails with EINVAL
    when it is a folder by then (another user's folder and link swapped with renameat2's RENAME_EXCHANGE): said as
    such, not as a bare "[Errno 22] Invalid argument" (reliability-13 and -14 Lows; reliability-15)."""
    try:
        return path.resolve(strict=strict)
    except OSError as e:
        if e.errno != errno.EINVAL:
            raise
        raise OSError(errno.EINVAL, SWAPPED, e.filename or str(path)) from None


def shared(folder: Path) -> str | None:
    """How another user could plant symlinks in ``folder`` (a resolved path) or a folder in it, or swap it after the
    check, as words naming the folder ("/x is another user's (mode drwxr-xr-x)", "/x is inside /y, which ..."); None
    when only this user (or root) can."""
    for sub, _, _ in os.walk(folder):  # its folders too: one of another user's would hold that user's symlinks
        st = os.stat(sub)
        owner = others_can_write(st, sub)
        if owner:
            return f"{sub} {owner} (mode {stat.filemode(st.st_mode)})"
    movable = movable_by_others(folder)
    return f"{folder} {movable}" if movable else None


def foreign_link(path: Path, *, strict: bool = False, steady: bool = False, trusted: int | None = None) -> str | None:
    """The first symlink on ``path``'s way (a folder's name in it, or its last name) that a user other than this one
    and root owns, as words naming it; None when there is none (names that do not exist yet end the walk: this user
    makes them). Another user can turn such a link, after any check, to a folder of theirs holding their symlinks
    under the names about to be written (reliability-8 High 1); the kernel's fs.protected_symlinks refuses to follow
    only those in a sticky world-writable folder, and is 0 on some machines. ``strict``: a name that does not exist
    is refused too (after the command made the path: one missing again was a link of theirs, removed since).
    ``steady``: every name on the way must be one no other user can change: a folder of another user's is refused as
    a link of theirs is, and so is a folder on the way that another user can write without the sticky bit (they
    could rename a name in it to a link of theirs at any time). A path that passes then leads, whenever it is walked
    again, where it led now; one resolved first and checked after could lead elsewhere (reliability-13: `sql
    --parquet /tmp/theirs-link/x.parquet`, their link to a root folder, resolved to root's folder, which passed)."""
    todo = list(reversed(path.absolute().parts[1:]))
    here, hops = Path("/"), 0
    while todo and hops <= 40:  # more hops: a loop, which the write itself reports
        name = todo.pop()
        if name in ("", "."):
            continue
        if name == "..":  # ``here`` holds no symlink, so its parent is the real one
            here = here.parent
            continue
        try:
            st = (here / name).lstat()
        except OSError:
            return (
                f"{here / name} does not exist any more (another user may have removed a link of theirs)"
                if strict
                else None
            )
        if steady and (why := _unsteady(here, name, st, trusted)):
            return why
        if not stat.S_ISLNK(st.st_mode):
            here = here / name
            continue
        if st.st_uid not in (0, os.getuid()):
            return f"{here / name} is a symlink of another user's ({_user_name(st.st_uid)})"
        hops += 1
        try:
            target = Path(os.readlink(here / name))
        except OSError as e:  # swapped since the lstat (reliability-13: a link and a folder exchanged)
            return f"{here / name}: {e.strerror or e} while it was checked (another user may be changing it)"
        if target.is_absolute():
            here = Path("/")
        todo.extend(reversed(target.parts[1:] if target.is_absolute() else target.parts))
    return None


def _unsteady(here: Path, name: str, st: os.stat_result, trusted: int | None = None) -> str | None:
    """How another user could change what ``here / name`` (lstat ``st``) is: a folder (or file) of theirs (not of
    ``trusted``, the sudo invoker's), or ``here`` a folder they can write without the sticky bit; None when they
    cannot."""
    if not stat.S_ISLNK(st.st_mode) and st.st_uid not in (0, os.getuid(), trusted):
        return f"{here / name} is a folder of another user's ({_user_name(st.st_uid)}) on the way"
    try:
        up = os.stat(here)
    except OSError as e:
        return f"{here}: {e.strerror or e} while it was checked (another user may be changing a name on its way)"
    if not up.st_mode & stat.S_ISVTX and (why := _writable_by_others(up, here, made_in=False)):
        return f"{here / name} is in {here}, which {why}, so another user could rename it (mode {stat.filemode(up.st_mode)})"
    return None


def made_refusal(folder: Path) -> tuple[str | None, Path]:
    """For a folder this command has just made by its path (``mkdir``, which follows any symlink on the way): why it
    must not be written into, as words (None when it may), and the path to write: resolved once, strictly, after the
    check of the path as given. A free name on the way could be another user's link at the mkdir and gone again at
    the check: resolved without ``strict`` it was a path that did not exist, passed every check, and the export then
    wrote by it once the user had put their link back (reliability-11: the dataset's meta.json written into a
    root-only file through their symlink; rel-9 High 2 was the same for spark-ingest)."""
    why = foreign_link(folder, strict=True)
    if why:
        return why, folder
    try:
        real = resolved(folder, strict=True)
    except OSError as e:
        if e.errno == errno.EINVAL:
            return f"{e.filename}: {e.strerror}", folder
        return f"{folder}: {e.strerror or e} once made (another user may have removed a link of theirs)", folder
    return shared(real) or foreign_link(folder, strict=True, steady=True), real  # rel-13: a swap, see file_refusal


def file_refusal(path: Path, *, sticky_ok: bool = True) -> str | None:
    """Why this user must not write the file ``path`` by its name (a database, a Parquet result), as words naming
    what another user could change; None when nothing. Refused: a symlink of another user's on its way
    (``foreign_link``), the file another user's, its folder (the nearest one that exists; the rest this user makes)
    one that another user owns or can write and that lacks the sticky bit (they could put a symlink under its name
    or a temporary one beside it), or a folder above it that another user can swap (``movable_by_others``).
    ``sticky_ok=False``: a sticky folder (/tmp) is refused too, for a file whose writer also makes files beside it by
    derived names without O_EXCL (DuckDB: ``<db>.wal``, ``<db>.tmp/``): the sticky bit does not stop another user
    putting a symlink under a name that does not exist yet (reliability-9 High 1). (DuckDB 2 derives those names
    from the resolved path: a database reached through this user's own link in /tmp has them beside its real file.)"""
    link = foreign_link(path)
    if link:
        return link
    try:
        real = resolved(path)
    except OSError as e:
        return f"{e.filename}: {e.strerror or e}"
    try:
        st = real.lstat()
        if st.st_uid not in (0, os.getuid()):
            return f"{real} is another user's file ({_user_name(st.st_uid)})"
    except OSError:
        pass
    # last, every name on its way walked again: one another user can change (a folder or link of theirs, swapped for
    # each other with renameat2's RENAME_EXCHANGE, never missing) could have led the checks above to a folder of
    # root's of their choosing (reliability-13: 5 of 2000 tries)
    return _folder_refusal(real, sticky_ok) or foreign_link(path, steady=True)


def read_refusal(db: Path) -> str | None:
    """Why the database ``db`` must not be read by its name: a symlink of another user's on its way, which they can
    turn, once it is checked, to any database (or file) of this user's: root's `sql --db /tmp/their-link` showed
    root's own database, and named a root-only file it led to (reliability-13 Low, reliability-15). The path it leads
    to can be given instead. As words; None when there is no such link."""
    link = foreign_link(db)
    if not link:
        return None
    try:
        leads = f"give the path it leads to ({resolved(db)}) if that is the database you mean"
    except OSError as e:
        leads = f"{e.filename}: {e.strerror or e}"
    return f"{db}: {link}, who could turn it to any database of yours once it is checked: not read; {leads}"


def _folder_refusal(name: Path, sticky_ok: bool) -> str | None:
    """Why the folder of the file ``name`` (the nearest that exists) lets another user put a name beside it or swap
    it, as words; None when it does not."""
    folder = name.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    st = folder.stat()
    why = _writable_by_others(st, folder) if st.st_uid == 0 else others_can_write(st, folder)  # root: any folder anyway
    if why and not (sticky_ok and st.st_mode & stat.S_ISVTX):
        return f"{name} is in {folder}, which {why} (mode {stat.filemode(st.st_mode)})"
    movable = movable_by_others(folder)
    return f"{name} is in {folder}, which {movable}" if movable else None


def beside_refusal(db: Path) -> str | None:
    """Why the database ``db`` must not be opened, read or written, for the files DuckDB keeps beside it: its
    write-ahead log ``<db>.wal`` (replayed into the database when it is opened, read-only too, and appended to by every
    write) and its spill folder ``<db>.tmp``, by the name as given. One that another user (not root, nor the database
    file's owner) made, or a symlink of theirs there, would let them change what the database holds (a WAL of theirs
    put beside a database in /tmp was replayed: rows and labels of their choosing, then kept by the next ingest) and
    read every later write; as words naming it, None when there is none."""
    try:
        owner = db.stat().st_uid
    except OSError:
        owner = os.getuid()
    for name in (db.name + ".wal", db.name + ".tmp"):
        beside = db.with_name(name)
        try:
            st = beside.lstat()
        except OSError:
            continue
        if st.st_uid not in (0, os.getuid(), owner):
            kind = "symlink" if stat.S_ISLNK(st.st_mode) else "folder" if stat.S_ISDIR(st.st_mode) else "file"
            does = (
                "replay it into the database and append every write to it"
                if name.endswith(".wal")
                else "write its temporary files there"
            )
            return (
                f"{beside} is a {kind} of another user's ({_user_name(st.st_uid)}), beside the database: DuckDB would "
                f"{does}, so another user could change what the database holds"
            )
    return None


def private_folder(folder: Path) -> bool:
    """Whether only this user (and root) can add a name to ``folder`` or swap it: DuckDB spills to ``<db>.tmp/``
    (``./.tmp/`` for an in-memory database) beside it, creating that folder and its files by name through any
    symlink already there."""
    try:
        st = folder.stat()
    except OSError:
        return False
    why = _writable_by_others(st, folder) if st.st_uid == 0 else others_can_write(st, folder)
    return not why and not movable_by_others(folder)


def only_owner_adds(folder: Path, owner: int) -> bool:
    """Whether only ``owner`` (a database's owner) and root can add a name to ``folder`` or swap it: its owner is
    theirs or root's, no group or other write bit, no access control list, not on another user's FUSE mount, and every
    folder above it root's or theirs, sticky or not writable by others. A WAL there is the owner's, which a reader of
    their database trusts anyway (``beside_refusal``)."""
    for at, path in enumerate([folder, *folder.parents]):
        try:
            st = path.stat()
        except OSError:
            return False
        if st.st_uid not in (0, owner):
            return False
        if st.st_mode & 0o022 and not (at and st.st_mode & stat.S_ISVTX):
            return False
        if _served_by_another_user(path):
            return False
        if not at and any(_has_xattr(path, a) for a in ("system.posix_acl_access", "system.posix_acl_default")):
            return False
    return True


def _has_xattr(path: Path, attr: str) -> bool:
    try:
        os.getxattr(path, attr)
    except OSError:
        return False
    return True


def spark_output(output: str) -> tuple[str | None, str]:
    """spark-ingest's OUTPUT made, resolved once and checked: (why it is refused, or None; the path to give Spark).
    Refused: another user can write into it or swap it (the dataset's names are known in advance, as for export
    --dataset), or it is not a folder once made. Spark is given the resolved path only: a name that did not exist when
    the command began could be made the user's symlink before the mkdir, which then followed it, and Spark wrote by
    the name as given (reliability-9 High 2: 22 of 3000 tries passed the check through the user's link). A URI of
    another scheme is left to its file system."""
    u = urlparse(output)
    if u.scheme not in ("", "file"):
        return None, output
    folder = Path(unquote(u.path))
    try:
        if not folder.exists() and (moved := movable_by_others(resolved(folder))):  # r-18: refused, so not made
            return f"output {folder} {moved}: give a folder whose parent folders only you (or root) can change", output
        folder.mkdir(parents=True, exist_ok=True)
        real = resolved(folder, strict=True)
    except OSError as e:
        said = f"{e.filename}: {e.strerror}" if e.errno == errno.EINVAL else e.strerror or e
        return f"output {folder}: {said}", output
    if not real.is_dir():
        return f"output {folder} is not a folder once made (another user may have changed it)", output
    why = foreign_link(folder) or shared(real)  # a link of theirs followed by the mkdir: where they chose
    why = why or foreign_link(folder, strict=True, steady=True)  # reliability-13: swapped between the two (32 of 2000)
    if not why:
        return None, ("file://" if u.scheme == "file" else "") + str(real)
    return (
        f"output {why}: another user could put a symlink there under a name the run writes "
        "(_storagelab/.meta.json.<pid>.tmp, part files), and have it overwrite any file you can write; give a folder "
        "of your own (e.g. a new folder under it)"
    ), output


# Folders named by the environment that a command, or the Jupyter kernel, JupyterLab, Spark and the libraries it
# starts, write into or read code and settings from, by names known in advance (reliability-11).
ENVIRONMENT_FOLDERS = (
    "TMPDIR",  # tempfile: the kernel's private folder (mkdtemp) for its sockets and connection file
    "TEMP",  # read by tempfile when TMPDIR is unset (reliability-13: root's kernel folder made in the user's TEMP)
    "TMP",  # and then this one
    "HOME",  # ~/.ipython (startup scripts), ~/.jupyter, ~/.local/share/jupyter, ~/.cache, ~/.duckdb
    "IPYTHONDIR",  # profile_default/startup/*.py: run by every kernel
    "JUPYTER_CONFIG_DIR",  # jupyter_server_config.py: run by `storagelab lab`
    "JUPYTER_CONFIG_PATH",
    "JUPYTER_DATA_DIR",
    "JUPYTER_PATH",
    "JUPYTER_RUNTIME_DIR",  # JupyterLab's token file and its kernels' connection files
    "HADOOP_CONF_DIR",  # read by Spark (spark-ingest)
    "JAVA_HOME",  # bin/java: run by spark-ingest
    "MPLCONFIGDIR",
    "PATH",  # fio, bonnie++, jupyter, the Chromium of the PDF, java: run by name (reliability-12: the user's fio ran as root)
    "PYTHONPYCACHEPREFIX",  # byte code read back, for every module imported after it is written
    "SPARK_HOME",  # bin/spark-submit and its jars: run by spark-ingest
    "SPARK_CONF_DIR",  # spark-env.sh (run by a shell) and spark-defaults.conf: read by spark-ingest
    "SPARK_LOCAL_DIRS",
    "STORAGELAB_ROOT",  # the clone: its notebooks run, its data is read (reliability-13: the user's notebook ran as root)
    "STORAGELAB_REPORT_DIR",  # a notebook run by hand (storagelab lab) saves its figures there by name
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",  # with JUPYTER_PLATFORM_DIRS=1: Jupyter's system config path (reliability-13: the user's
    "XDG_DATA_DIRS",  # jupyter_server_config.py ran as root in `storagelab lab`); and its system data path
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    # reliability-15: JupyterLab's application folder (its extensions' JavaScript runs in your browser, with the
    # server's token: it can run code in its kernels), its settings and workspaces; pyspark's workers write their
    # crash logs in PYTHON_FAULTHANDLER_DIR by name
    "JUPYTERLAB_DIR",
    "JUPYTERLAB_SETTINGS_DIR",
    "JUPYTERLAB_WORKSPACES_DIR",
    "PYTHON_FAULTHANDLER_DIR",
    # reliability-16: where Python looks for modules before its own (every kernel runs `python -m
    # ipykernel_launcher`: `PYTHONPATH=...:theirs storagelab run` ran their ipykernel_launcher.py as uid 0), and
    # where the dynamic loader looks for the libraries of every program run (fio, bonnie++, java, the kernels)
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "LD_LIBRARY_PATH",
    # reliability-17: fontconfig's configuration (its <include>s and font folders: fonts parsed by FreeType as you, in
    # vl-convert's renderer and every program that draws text), glibc's iconv modules (shared objects it loads), its
    # locale data, and the loader's profiling output (written by name)
    "FONTCONFIG_PATH",
    "FONTCONFIG_SYSROOT",
    "GCONV_PATH",
    "LOCPATH",
    "LD_PROFILE_OUTPUT",
    *envfiles.LIBRARY_FOLDERS,  # reliability-33: OpenSSL's provider and engine modules, debugpy's logs (envfiles)
)
TEMPORARY = ("TMPDIR", "TEMP", "TMP")  # only new names are made there (mkdtemp): a sticky folder will do
# programs named by the environment and run by Spark (spark-ingest keeps them: os.environ.setdefault); their folder
# is checked as a PATH entry is (reliability-13)
ENVIRONMENT_PROGRAMS = ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SHELL")  # SHELL: JupyterLab's terminals (r-15)
BROWSERS = "BROWSER"  # reliability-15: the commands `storagelab lab` opens its page with (webbrowser), run as you
# files read by name (reliability-15): IPython runs PYTHONSTARTUP in every kernel (`run PYTHONSTARTUP=theirs.py`:
# "startup ran as uid 0"); JupyterLab takes its token from JUPYTER_TOKEN_FILE (a token the user knows opens root's
# JupyterLab to them). Their folder is checked as a PATH entry is, and the file must not be another user's
ENVIRONMENT_FILES = ("PYTHONSTARTUP", "JUPYTER_TOKEN_FILE", "FONTCONFIG_FILE", "LD_DEBUG_OUTPUT", *SHELL_FILES)
ENVIRONMENT_FILES += envfiles.LIBRARY_FILES  # reliability-33: OpenSSL's configuration, coverage's (envfiles)
# libraries the dynamic loader loads into every program run, named by path, blanks or colons between
# (reliability-16): the folder of each is checked as a PATH entry is
LOADED_LIBRARIES = ("LD_PRELOAD", "LD_AUDIT")
# spark-submit's arguments, kept by pyspark (--jars, --driver-class-path, --properties-file, --conf ...=PATH): the
# folder of every path in them is checked as a PATH entry is (reliability-15)
SUBMIT_ARGUMENTS = ("PYSPARK_SUBMIT_ARGS",)
# class paths the JVM of spark-ingest loads code from (Spark's launcher puts both on it), and the JVM's option
# variables, whose -javaagent:/-agentpath:/-Xbootclasspath entries load code before Spark's (reliability-14): the
# folder of each entry is checked as a PATH entry is
ENVIRONMENT_CLASSPATHS = ("SPARK_DIST_CLASSPATH", "YARN_CONF_DIR", "CLASSPATH")
_JAVA_CODE = re.compile(r"(?:-javaagent:|-agentpath:|-Xbootclasspath/[ap]?:?|-Djava\.ext\.dirs=)([^=\s]+)")


def environment_refusal(environ=None) -> str | None:
    """Why this command must not run with the environment it has, as one line naming the variable; None when every
    folder ``ENVIRONMENT_FOLDERS`` name is this user's alone. A variable naming a folder another user can write (or
    swap, or make first) hands them what is written and read there by name: with TMPDIR in a folder of theirs they
    renamed root's new kernel folder away and put theirs in its place, and root's kernel made its connection file
    and sockets there; with IPYTHONDIR their startup script ran in root's kernel (reliability-11). TMPDIR may be a
    sticky folder (/tmp): everything made there is made by a new name (mkdtemp); the others may not (names known in
    advance, made by name)."""
    environ = os.environ if environ is None else environ
    if why := _environment_refusal(environ):
        envfiles.unsaved_coverage(environ)  # reliability-33: a refused COVERAGE_PROCESS_START's is not saved
    return why


def _environment_refusal(environ) -> str | None:
    invoker = _sudo_invoker(environ)
    named = [(var, given) for var in ENVIRONMENT_FOLDERS for given in _listed(environ, var)]
    named += [(var, os.path.dirname(environ[var])) for var in ENVIRONMENT_PROGRAMS if "/" in environ.get(var, "")]
    files = [(var, environ[var]) for var in ENVIRONMENT_FILES if environ.get(var)] + named_files(environ)  # r-20
    named += [(var, os.path.dirname(path) or ".") for var, path in files] + spark_folders(environ)
    named += [
        (var, os.path.dirname(e))
        for var in LOADED_LIBRARIES
        for e in re.split(r"[\s:]", environ.get(var, ""))
        if "/" in e
    ]
    browsers = [w[0] for e in _entries(environ.get(BROWSERS, "")) if (w := e.split())]  # r-28: BROWSER=' ' IndexError
    named += [(BROWSERS, os.path.dirname(b)) for b in browsers if "/" in b]
    named += [
        (var, _folder_of(e))
        for var in SUBMIT_ARGUMENTS
        for word in environ.get(var, "").split()
        for e in _entries(word.rpartition("=")[2])
        if "/" in e
    ]
    named += [(var, _folder_of(e)) for var in ENVIRONMENT_CLASSPATHS for e in _listed(environ, var)]
    named += [
        (var, _folder_of(e))
        for var in JAVA_OPTIONS
        for found in _JAVA_CODE.findall(environ.get(var, ""))
        for e in _entries(found)
    ]
    # reliability-15: every other path in them too (-Djava.library.path=, whose libhadoop.so the JVM loads;
    # -Dlog4j2.configurationFile=, -Djava.security.properties=, -XX:Flags=, ...): the folder of each
    named += [
        (var, _folder_of(part))
        for var in (*JAVA_OPTIONS, *SUBMIT_ARGUMENTS)
        for part in words(environ.get(var, ""))  # r-22: quotes dropped, "@x" is x
        if part.startswith(("/", "./", "../"))
    ]
    if environ.get("PYTHONPLATLIBDIR"):  # r-17: the standard library's folder under Python's prefix ("../..": anywhere)
        named.append(("PYTHONPLATLIBDIR", os.path.join(sys.base_prefix, environ["PYTHONPLATLIBDIR"])))
    # reliability-17: a relative entry names one folder here, another in the notebooks' kernels (in their folder) and
    # in Spark's processes (envfiles, r-21). r-18: IPython expands "~" and "~user" (IPYTHONDIR='~bob': bob's scripts)
    named += [(var, _home_of(given, environ)) for var, given in named if given.startswith("~")]
    # reliability-18: and from the clone's top, where `storagelab lab` runs a kernel for a notebook put there
    # (JupyterLab runs each kernel in its notebook's folder: `../../tmp/theirs` led from the clone to /tmp/theirs)
    named += [
        (var, os.path.join(folder, given))
        for folder in (_kernels_folder(), _lab_folder())
        for var, given in named
        if not os.path.isabs(given)
    ] + from_spark_folder(named, environ)
    for var in LOADER_LISTS:
        if token := _LOADER_TOKEN.search(environ.get(var, "")):
            return (
                f"the environment's {var} ({environ[var]}) holds the loader's {token.group()}, which it expands to a "
                "folder of its own for each program run (fio, java, the kernels' python), beyond what this check "
                f"can name: unset {var} or give absolute folders"
            )
    for var, path in files:
        if whose := file_writers(path, invoker):  # its owner, or (r-32) who else may write it
            return (
                f"the environment's {var} ({path}) is a file {whose}, read as "
                f"you: unset {var} or give a file of your own"
            )
    for var, given in named:
        try:
            why = _environment_folder_refusal(Path(given), sticky_ok=var in TEMPORARY, invoker=invoker)
        except PermissionError as e:  # a folder on its way this user cannot enter: nothing there is run or read
            why = _closed_to_us(Path(given), e)
        except OSError as e:  # a name on its way changed while it was walked (reliability-12 Low 2: a traceback)
            why = (
                None
                if _in_a_removed_folder(given)
                else f"{e.filename or given}: {e.strerror or e} while it was checked (another user may be changing a name on its way)"
            )
        if why:
            return (
                f"the environment's {var} ({given}): {why}: another user could put their own files under the "
                "names written or read there as you (a Jupyter kernel's startup scripts, its connection file); "
                f"unset {var} or give a folder of your own"
            )
    return expansion_refusal(environ)  # reliability-19: BASH_ENV's value is expanded by bash (envfiles)


def _in_a_removed_folder(given: str) -> bool:
    """Whether ``given`` is relative while the working folder is gone: nothing can be made or found under a removed
    folder, so it names nothing anyone can plant in (the command then says the folder is gone)."""
    if os.path.isabs(given):
        return False
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def _folder_of(entry: str) -> str:
    """The folder a class-path entry loads from: itself when it is a folder, else the folder of its jar (or glob)."""
    return entry if os.path.isdir(entry) else os.path.dirname(entry) or "."


def _closed_to_us(given: Path, error: OSError) -> str | None:
    """None when ``given`` lies under a folder this user cannot enter that only root or this user can change (root's
    0700 /root, in root's PATH kept by `sudo -u`): nothing under it is run or read as this user, and nobody else can
    open it. Else the words of ``error`` (a folder another user owns, or can change, could be opened later).
    The closed folder must be one this user cannot enter: a folder it can enter, with a name below it refused, is
    not what closed it, but a FUSE file system mounted there without allow_other, which refuses root too
    (reliability-15: the user's bindfs over their folder in root's 0755 one passed as root's; they unmounted it once
    the check was done, and root's `lab fio` ran their fio from PATH as uid 0)."""
    if served := _served_by_another_user(given):
        return f"{given} {served}"
    blocker = given.absolute()
    while blocker != blocker.parent:
        blocker = blocker.parent
        try:
            st = blocker.stat()
        except OSError:
            continue
        if os.access(blocker, os.X_OK, effective_ids=os.access in os.supports_effective_ids):
            break  # not closed to us: what refused us is below it (another user's mount)
        if st.st_uid in (0, os.getuid()) and not _writable_by_others(st, blocker) and not movable_by_others(blocker):
            return None
        break
    return f"{error.filename or given}: {error.strerror or error} while it was checked (a folder of another user's on its way?)"


# search paths in which an empty entry is the working folder (execvp and shutil.which, Python's sys.path, the dynamic
# loader, the JVM): reliability-17, `PATH=:/usr/bin` from the user's folder ran their fio as uid 0 (an empty entry
# was skipped, not checked); PATH set but empty is the working folder too
SEARCH_PATHS = ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "CLASSPATH", "SPARK_DIST_CLASSPATH")
# reliability-18: Jupyter's own lists, read by `storagelab lab` (JupyterLab runs in the working folder): jupyter_core
# keeps an empty entry and strips the trailing "/" of each, so "" and "/" are the working folder (`cd THEIRS;
# JUPYTER_CONFIG_PATH=:/etc/jupyter storagelab lab` ran their jupyter_server_config.py as uid 0); set but empty, unused
JUPYTER_PATHS = ("JUPYTER_PATH", "JUPYTER_CONFIG_PATH")
# the dynamic loader's string tokens, expanded in LD_LIBRARY_PATH, LD_PRELOAD and LD_AUDIT for each program it loads:
# $ORIGIN is the folder of that program (/usr/bin for fio), which no check here can name for every program run
# (reliability-18: `LD_LIBRARY_PATH='$ORIGIN/../../tmp/theirs'` passed as a missing folder under the working one,
# and root's fio loaded their libaio.so.1 from /usr/bin/../../tmp/theirs)
_LOADER_TOKEN = re.compile(r"\$(?:\{)?(?:ORIGIN|LIB|PLATFORM)\b")
LOADER_LISTS = ("LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT")
_SEPARATORS = {"LD_LIBRARY_PATH": "[:;]"}  # r-18: the loader splits on ";" too ("/usr/lib;/tmp/theirs" passed)


def _entries(value: str) -> list[str]:
    return [e for e in value.replace(",", os.pathsep).split(os.pathsep) if e]


def _listed(environ, var: str) -> list[str]:
    """The folders the variable ``var`` lists; in a search path (SEARCH_PATHS) an empty entry is the working folder."""
    if var in JUPYTER_PATHS and environ.get(var):
        return [e.rstrip(os.sep) or "." for e in environ[var].split(os.pathsep)]
    if var not in SEARCH_PATHS or var not in environ:
        return _entries(environ.get(var, "")) + empty_is_here(environ, var)  # r-24: HOME=""; r-27: TMPDIR=/tmp/:
    if not environ[var]:
        return ["."] if var == "PATH" else []
    return [e or "." for e in re.split(_SEPARATORS.get(var, os.pathsep), environ[var])]


def _kernels_folder() -> str:
    from .paths import NOTEBOOKS  # noqa: PLC0415  (the folder report.py runs the kernels in)

    return str(NOTEBOOKS)


def _home_of(given: str, environ) -> str:
    """``given`` with its leading ``~`` (the environment's HOME) or ``~user`` (their home) expanded."""
    head, sep, rest = given.partition("/")
    home = environ.get("HOME", "") if head == "~" else os.path.expanduser(head)
    return (home or os.path.expanduser("~")) + sep + rest


def _lab_folder() -> str:
    from .paths import ROOT  # noqa: PLC0415  (`storagelab lab`'s notebook folder: its kernels run in its folders)

    return str(ROOT)


def _sudo_invoker(environ) -> int | None:
    """The user who ran this command through sudo (``SUDO_UID``), when this command runs as root: their own folders
    named by the environment (``sudo -E storagelab lab fio`` keeps HOME=/home/them) are theirs and root's, not
    another user's. The variable is set by sudo; whoever could set root's environment could already run anything."""
    given = environ.get("SUDO_UID", "")
    return int(given) if os.geteuid() == 0 and given.isdigit() else None


def _environment_folder_refusal(folder: Path, *, sticky_ok: bool, invoker: int | None = None) -> str | None:
    link = foreign_link(folder.absolute())
    if link:
        return link
    near = start = resolved(folder.absolute())
    while not near.exists() and near != near.parent:  # the rest is made by name, in the nearest that exists
        near = near.parent
    try:
        st = near.stat()
    except OSError:
        return None
    own = st.st_uid == 0 or st.st_uid == invoker  # root's, or the sudo invoker's (who is root here)
    why = _writable_by_others(st, near) if own else others_can_write(st, near)
    if (
        why and sticky_ok and near != start
    ):  # reliability-13: TMPDIR=/tmp/x missing passed (sticky); the user made /tmp/x after
        return f"{start} does not exist, and {near} {why} (mode {stat.filemode(st.st_mode)}), so another user can make it first"
    if why and not (sticky_ok and st.st_mode & stat.S_ISVTX):
        return f"{near} {why} (mode {stat.filemode(st.st_mode)})"
    movable = movable_by_others(near)
    return f"{near} {movable}" if movable else foreign_link(folder.absolute(), steady=True, trusted=invoker)


def others_can_write(st: os.stat_result, folder: Path | str | None = None) -> str | None:
    """How users other than this one can write into the folder of stat ``st`` (another owns it, every user may,
    or its group may and has another user in it), as the words after its name; None when only this user can. A
    group-writable folder of this user's own group (Debian's user-private groups, umask 002) is this user's alone.
    ``folder``, its path: its access control list is read too (reliability-10 High 1)."""
    if st.st_uid != os.getuid():
        return "is another user's"
    return _writable_by_others(st, folder)


def movable_by_others(folder: Path) -> str | None:
    """How another user could swap ``folder`` for one of theirs after it was checked (rename it away, put their own
    folder, holding their symlinks, under its name): a folder above it that another user (not root) owns, or that
    another user can write and that lacks the sticky bit (/tmp has it: there only a name's owner may rename it).
    The words to say, naming that folder; None when no such folder is above it (reliability-7: a root-owned --target
    in a 0777 folder was swapped between the check and fio, and fio overwrote a root-only file)."""
    for parent in folder.absolute().parents:
        try:
            st = parent.stat()
        except OSError:
            continue
        if st.st_uid not in (0, os.getuid()):
            why = "is another user's"
        elif st.st_mode & stat.S_ISVTX:
            continue
        elif not (why := _writable_by_others(st, parent, made_in=False) or ""):  # renaming: its own ACL only
            continue
        return (
            f"is inside {parent}, which {why} (mode {stat.filemode(st.st_mode)}): another user could rename "
            f"{folder.name} away once it is checked and put a folder of theirs in its place"
        )
    return None


def _writable_by_others(st: os.stat_result, folder: Path | str | None = None, *, made_in: bool = True) -> str | None:
    # reliability-37: a folder of root's mergerfs pool, by its branch folders (a file there: livewriters._pooled)
    pooled = folder is not None and stat.S_ISDIR(st.st_mode) and _pooled_with_others(folder, made_in)
    if folder is not None and (served := _served_by_another_user(folder) or pooled):
        return served
    if st.st_mode & 0o002:
        return "can be written by every user"
    if st.st_mode & 0o020 and (others := _group_members(st.st_gid) - {_user_name(os.getuid())}):
        users = ", ".join(sorted(others)[:3])
        return f"can be written by its group {_group_name(st.st_gid)}, which has other users ({users})"
    return _acl_writers(folder, made_in=made_in) if folder is not None else None


def _pooled_with_others(folder: Path | str, made_in: bool) -> str | None:
    """How a folder of root's mergerfs pool lets another user add or swap a name in it: a branch folder behind it
    (``user.mergerfs.allpaths``) that is theirs or that they can write. Reliability-37: root's pool with
    func.open=newest of root's folder and the second user's; 5 s into `run` of root's notebook in the pool they put
    their newer notebook of the same name in their branch, and it ran as root."""
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as f:
            if " - fuse.mergerfs " not in f.read():  # no pool at all: no path resolved (every folder check asks)
                return None
        if (_mount_of(str(resolved(Path(folder)))) or ("",))[0] != "fuse.mergerfs":
            return None
        branches = [os.fsdecode(b) for b in os.getxattr(folder, "user.mergerfs.allpaths").split(b"\0") if b]
    except OSError as e:
        return f"is in a mergerfs pool that does not say its branch folders ({e.strerror or e})"
    for branch in branches:
        try:
            st = os.stat(branch)
        except OSError as e:
            return f"is in a mergerfs pool whose branch folder {branch} cannot be looked at ({e.strerror or e})"
        why = (
            "is another user's"
            if st.st_uid not in (0, os.getuid())
            else _writable_by_others(st, branch, made_in=made_in)
        )
        if why:
            return f"is in a mergerfs pool whose branch folder {branch} {why}"
    return None


MOUNTINFO = "/proc/self/mountinfo"  # the kernel's list of this process's mounts (a test gives another)


def _served_by_another_user(folder: Path | str) -> str | None:
    """How ``folder`` lies on a FUSE file system that a user other than this one and root mounted, as words; None when
    it does not. Such a file system's process (theirs) answers every lookup: it can show its names as root's, mode
    0755, and put a symlink of theirs at any name once it is checked (reliability-11: bindfs -u 0 -p 0755 -o
    allow_other over a folder of the second user's; root's ingest made its database there and DuckDB appended its WAL
    to a root-only file through the user's symlink). The kernel records who mounted it (``user_id=`` in
    /proc/self/mountinfo); the owner and mode it shows count for nothing."""
    try:
        mount = _mount_of(str(resolved(Path(folder))))
    except OSError as e:  # one of the names on its way swapped while resolved: refused, saying so
        return f"changed while it was checked ({e.filename} {e.strerror or e})"
    if mount is None or not mount[0].startswith("fuse"):
        return None
    fstype, source, options = mount
    uid = next((int(o[8:]) for o in options.split(",") if o.startswith("user_id=") and o[8:].isdigit()), 0)
    if uid in (0, os.getuid()):
        return None
    return (
        f"is on a FUSE file system ({fstype} of {source}) mounted by the user {_user_name(uid)}, whose process "
        "shows any owner and mode and can change its names at any time"
    )


def _mount_of(path: str) -> tuple[str, str, str] | None:
    """The file system type, source and options of the mount ``path`` (a resolved path) is on, from
    /proc/self/mountinfo (the last of those mounted at the deepest mount point above it: the one on top). Its bytes are
    read as Python names paths (surrogateescape): read with errors="replace", a mount point whose name is not UTF-8
    (the user's /tmp/h12<0xff>m) matched no path, and their bindfs there passed for root's (reliability-12)."""
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    best, found = -1, None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        point = _unescape(fields[4])
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) >= best:
            best, found = len(point), (rest[0], _unescape(rest[1]), rest[2])
    return found


def _unescape(name: str) -> str:
    """A mountinfo field with its octal escapes (\\040 a space, \\011, \\012, \\134) undone."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), name)


_ACL_USER, _ACL_GROUP, _ACL_MASK = 0x02, 0x08, 0x10  # <linux/posix_acl.h> tags; entries: u16 tag, u16 perm, u32 id


def _acl_writers(folder: Path | str, *, made_in: bool = True) -> str | None:
    """How a POSIX access control list on ``folder`` lets another user write into it, or into what is made in it (a
    named user, or a named group with another user in it, allowed to write, and the mask allowing it), as words; None
    when none does. The mode alone hides them: ``setfacl -m u:bob:rwx`` on root's folder shows drwxrwxr-x, group
    root (reliability-10 High 1: bob's symlink at <db>.wal, planted once the database existed, had root's ingest
    append its log to a root-only file); a default ACL (``setfacl -d``) gives bob the folders, the database and its
    WAL made in it (High 2); ``made_in=False``: the folder's own list only (a folder above one written, which
    another user could only rename things in)."""
    lists = [("system.posix_acl_access", "")] + [("system.posix_acl_default", " what is made in it:")] * made_in
    for attr, what in lists:
        try:
            acl = os.getxattr(folder, attr)
        except OSError:  # none (ENODATA), or a file system without them
            continue
        if who := _acl_named_writer(acl):
            return f"can be written by{what} {who}"
    return None


def _acl_named_writer(acl: bytes) -> str | None:
    entries = [struct.unpack_from("<HHI", acl, at) for at in range(4, len(acl) - 7, 8)]
    if not any(tag == _ACL_MASK and perm & 2 for tag, perm, _ in entries):
        return None
    me = os.getuid()
    for tag, perm, uid_or_gid in entries:
        if not perm & 2:
            continue
        if tag == _ACL_USER and uid_or_gid not in (0, me):
            return f"the user {_user_name(uid_or_gid)} (its access control list)"
        if tag == _ACL_GROUP and (others := _group_members(uid_or_gid) - {_user_name(me)}):
            users = ", ".join(sorted(others)[:3])
            return f"the group {_group_name(uid_or_gid)} (its access control list), which has {users}"
    return None


def file_writers(path: str, invoker: int | None = None) -> str | None:
    """Who other than this user, root and ``invoker`` can change the file ``path``, as the words after "is a file":
    its owner, or (a regular file of this user's or root's) its mode or access control list letting another user
    write it; None when no one can, or when it is missing (its folder, checked apart, says who could make it).
    Reliability-32: root's own PYTHONSTARTUP with `setfacl -m u:bob:rw` passed (its owner was looked at alone), and
    the line bob wrote into it ran in root's notebook kernel."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_uid not in (0, os.getuid(), invoker):
        return f"of another user's ({_user_name(st.st_uid)})"
    loose = stat.S_ISREG(st.st_mode) and (loose_file(st, path) or _live(path, st, invoker, loose=loose_file))
    return f"that {loose}" if loose else None  # r-33: live_writer: a descriptor they opened while it was writable


def loose_file(st: os.stat_result, path: str) -> str | None:
    """How the mode, group and access control list of the file ``path`` (stat ``st``) let another user write it."""
    return _writable_by_others(st, path, made_in=False)


def no_write_for_others() -> None:
    """Nothing this process (nor DuckDB, Spark, fio, papermill under it) makes is writable by its group or by others,
    whatever the umask it was started with (reliability-11: under root's umask 000 DuckDB made <db>.wal
    -rw-rw-rw- beside a 0600 database in root's own folder, which another user could open and rewrite, and the
    folders the export and the Parquet copy made were 0777 and so refused). A stricter umask is kept."""
    os.umask(os.umask(0) | 0o022)
