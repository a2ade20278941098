"""Reliability-15 (issue 26), paths: the attacks of the campaign on every command that makes or names a path, done
again here as the second user did them (docs/reliability-15-paths.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab import ownership

_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")


def _user(*argv: str) -> None:
    subprocess.run(argv, check=True, preexec_fn=_as_user(USER))


def _pub(top: Path) -> Path:
    """A sticky folder every user can write, as /tmp."""
    pub = top / "pub"
    pub.mkdir(exist_ok=True)
    pub.chmod(0o1777)
    return pub


@_ROOT_ONLY
@pytest.mark.skipif(not shutil.which("bindfs") or not os.path.exists("/dev/fuse"), reason="needs bindfs and /dev/fuse")
def test_a_path_entry_under_the_users_fuse_mount_closed_to_root_is_refused(shared_tmp, tmp_path, monkeypatch):  # noqa: F811
    """Reliability-15: the user's folder in a folder of root's (0755, as /home), their bindfs mounted over it without
    allow_other: root cannot enter it (EACCES), and the check of a folder closed to this user (2a54a53) judged it by
    root's folder above it and passed PATH=/root/h15r/bob/bin. The user unmounted once the check was done and root's
    `lab fio` ran their bin/fio, hidden under the mount, as uid 0 (twice in a 3-run matrix). Refused now: the mount
    is another user's, and a folder this user can enter did not close the path (a refusal below it is a mount's, or
    an NFS root_squash folder's, whose owner can open it later)."""
    roots = shared_tmp / "roots"  # root's 0755 folder, as /home
    roots.mkdir()
    roots.chmod(0o755)
    bob, src = roots / "bob", shared_tmp / "src"
    for folder in (bob, src):
        folder.mkdir()
        shutil.chown(folder, USER, USER)
    _user("mkdir", "-m", "755", str(bob / "bin"))
    _user("bindfs", "--no-allow-other", "-o", "nonempty", str(src), str(bob))
    try:
        with pytest.raises(PermissionError):
            (bob / "bin").stat()
        assert ownership.environment_refusal({"PATH": f"/usr/bin:{bob / 'bin'}"}) == (
            f"the environment's PATH ({bob / 'bin'}): {bob / 'bin'} is on a FUSE file system (fuse of {src}) mounted "
            f"by the user {USER}, whose process shows any owner and mode and can change its names at any time: "
            "another user could put their own files under the names written or read there as you (a Jupyter "
            "kernel's startup scripts, its connection file); unset PATH or give a folder of your own"
        )
        # and without the mount's line (an NFS folder under root_squash refuses root the same way): root can enter
        # root's folder above, so it is not what closed the path
        empty = tmp_path / "mountinfo"
        empty.write_text("")
        monkeypatch.setattr(ownership, "MOUNTINFO", str(empty))
        assert ownership.environment_refusal({"PATH": str(bob / "bin")}) == (
            f"the environment's PATH ({bob / 'bin'}): {bob / 'bin'}: Permission denied while it was checked (a folder of "
            "another user's on its way?): another user could put their own files under the names written or read "
            "there as you (a Jupyter kernel's startup scripts, its connection file); unset PATH or give a folder of "
            "your own"
        )
    finally:
        subprocess.run(["fusermount", "-u", str(bob)], check=False)


def _exchange(a: Path, b: Path) -> None:
    import ctypes  # noqa: PLC0415

    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) == 0, os.strerror(ctypes.get_errno())


@_ROOT_ONLY
def test_a_folder_and_a_link_swapped_while_resolved_are_named_not_invalid_argument(shared_tmp, monkeypatch):  # noqa: F811
    """Reliability-13/-14 Lows, reliability-15: the user swaps their folder /tmp/h15X and their link to a folder of
    root's with renameat2(RENAME_EXCHANGE); a resolve whose lstat saw the link and whose readlink then met the folder
    failed with a bare "[Errno 22] Invalid argument: '/tmp/h15X'" (spark-ingest's and the lab's checks, 19 of 3600
    tries here; file_refusal and made_refusal raised it). Done here at that moment: each check now says what happened, and refuses."""
    pub = _pub(shared_tmp)
    roots = shared_tmp / "roots"
    roots.mkdir()
    x, link = pub / "h15X", pub / "h15X.l"
    _user("mkdir", "-m", "755", str(x))
    _user("ln", "-s", str(roots), str(link))
    _user("mv", "-T", str(link), str(x) + ".t")  # the name is their link now, their folder beside it
    _user("mv", "-T", str(x), str(link))
    _user("mv", "-T", str(x) + ".t", str(x))
    real_readlink = os.readlink

    def swapped_readlink(path, *a, **k):  # the user's exchange, between realpath's lstat and its readlink
        if os.fspath(path) == str(x) and os.path.islink(x):
            _exchange(x, link)
        return real_readlink(path, *a, **k)

    monkeypatch.setattr(os, "readlink", swapped_readlink)
    said = f"{x}: {ownership.SWAPPED}"
    assert ownership.spark_output(str(x / "out")) == (f"output {x / 'out'}: {said}", str(x / "out"))
    _exchange(x, link)  # back: the name is their link again
    with pytest.raises(OSError, match=r"stopped being a symlink while it was resolved \(another user may be swapping"):
        ownership.resolved(x / "out")
    assert [p.name for p in roots.rglob("*")] == []  # reliability-18: spark-ingest's refused before it is made


@_ROOT_ONLY
def test_a_database_read_through_the_users_link_is_refused(shared_tmp, tmp_path):  # noqa: F811
    """Reliability-13 Low, reliability-15: `sql --db /tmp/h15u/l2.duckdb`, the user's link to root's database, showed
    root's rows (count 325), and their link to a root-only file had DuckDB name it; they could turn the link to any
    database of root's once it was checked. A read through another user's link is refused now, as a write was."""
    import duckdb  # noqa: PLC0415

    from storagelab.database import connect  # noqa: PLC0415
    from storagelab.store.faults import StoreError  # noqa: PLC0415

    db = tmp_path / "roots.duckdb"
    duckdb.connect(str(db)).execute("CREATE TABLE t AS SELECT 42 AS x").close()
    link = _pub(shared_tmp) / "l.duckdb"
    _user("ln", "-s", str(db), str(link))
    with pytest.raises(StoreError) as e:
        connect(link, read_only=True)
    assert str(e.value) == (
        f"{link}: {link} is a symlink of another user's ({USER}), who could turn it to any database of yours once it "
        f"is checked: not read; give the path it leads to ({db}) if that is the database you mean"
    )
    connect(db, read_only=True).close()  # the path it leads to is read


@_ROOT_ONLY
def test_a_refused_dataset_export_leaves_no_folder_in_the_users(shared_tmp, monkeypatch):  # noqa: F811
    """Reliability-13 Low, reliability-15: `export --dataset ds/a` with the user's folder as the working one was
    refused, but left root's empty ds/a/_storagelab/ there, which the user could not remove. The folders the refused
    export made are removed; one that was there is left."""
    import duckdb  # noqa: PLC0415

    from storagelab import dataset  # noqa: PLC0415

    theirs = _pub(shared_tmp) / "rel"
    _user("mkdir", "-m", "755", str(theirs))
    _user("mkdir", "-m", "755", str(theirs / "kept"))
    monkeypatch.chdir(theirs)
    con = duckdb.connect()
    con.execute("CREATE TABLE meta (key VARCHAR, value VARCHAR)")  # the refusal comes before any table is read
    try:
        for out in ("ds/a", "kept"):
            with pytest.raises(
                ownership.SharedFolderError, match=r"^--dataset .*(is inside .*rel, which|rel/kept is another user's)"
            ):
                dataset.export(con, out)
    finally:
        con.close()
    assert sorted(str(p.relative_to(theirs)) for p in theirs.rglob("*")) == ["kept"]


@_ROOT_ONLY
def test_a_hard_link_in_the_users_folder_to_a_file_of_roots_is_not_read(shared_tmp, tmp_path):  # noqa: F811
    """Reliability-14 read Low, reliability-15: with fs.protected_hardlinks=0 (the kernel's default; 1 here, so root
    makes the link the user could have made) the user's hard link to root's 0600 fio log in their folder was
    ingested (47 rows) and printed by `parse`: no symlink on the way, so no owner check. Refused now."""
    from storagelab.ingest_open import open_input  # noqa: PLC0415

    secret = tmp_path / "secret.txt"
    secret.write_text("fio-3.33\nroot secret\n")
    secret.chmod(0o600)
    theirs = _pub(shared_tmp) / "hl"
    _user("mkdir", "-m", "755", str(theirs))
    os.link(secret, theirs / "s.txt")
    with pytest.raises(OSError) as e:
        open_input(theirs / "s.txt")
    assert e.value.strerror == (
        f"a hard link (one of 2 names) to a file of root's in a folder of {USER}'s, so another user could have made it: "
        "not read (copy the file in instead)"
    )
    os.link(secret, theirs.parent / "s.txt")  # in a folder every user can write (sticky, as /tmp)
    with pytest.raises(OSError, match="in a folder every user can write, so another user could have made it"):
        open_input(theirs.parent / "s.txt")
    (theirs / "mine.txt").write_text("x\n")  # a root file with one name there: root put it there, read as before
    os.link(theirs / "mine.txt", tmp_path / "again.txt")  # and root's own second name for it elsewhere
    assert open_input(tmp_path / "again.txt").read() == b"x\n"


@_ROOT_ONLY
def test_pythonstartup_jupyterlab_and_spark_submit_paths_of_another_user_are_refused(shared_tmp):  # noqa: F811
    """Reliability-15: the environment list lacked what IPython, JupyterLab and pyspark read by name.
    `PYTHONSTARTUP=/tmp/h15u/env/s.py storagelab run 07_explore ...` (the user's file) -> rc 0 and "startup ran as
    uid 0": IPython runs that file in every kernel. JUPYTER_TOKEN_FILE (a token the user knows opens root's
    JupyterLab to them), JUPYTERLAB_DIR (extensions' JavaScript, run in root's browser with the token),
    JUPYTERLAB_SETTINGS_DIR, JUPYTERLAB_WORKSPACES_DIR, PYTHON_FAULTHANDLER_DIR (pyspark's workers write there by
    name), the paths in PYSPARK_SUBMIT_ARGS (--jars, --conf ...extraClassPath=) and the JVM options' paths other than
    -javaagent/-agentpath/-Xbootclasspath (-Djava.library.path=, -Dlog4j2.configurationFile=) all passed."""
    theirs = _pub(shared_tmp) / "env"
    _user("mkdir", "-m", "755", str(theirs))
    _user("touch", str(theirs / "s.py"))
    tail = (
        "another user could put their own files under the names written or read there as you (a Jupyter kernel's "
        "startup scripts, its connection file); unset {var} or give a folder of your own"
    )
    refused = {
        "PYTHONSTARTUP": str(theirs / "s.py"),
        "JUPYTER_TOKEN_FILE": str(theirs / "token"),
        "JUPYTERLAB_DIR": str(theirs),
        "JUPYTERLAB_SETTINGS_DIR": str(theirs),
        "JUPYTERLAB_WORKSPACES_DIR": str(theirs),
        "PYTHON_FAULTHANDLER_DIR": str(theirs),
        "PYSPARK_SUBMIT_ARGS": f"--master local[2] --jars {theirs}/x.jar pyspark-shell",
        "SHELL": f"{theirs}/sh",  # JupyterLab's terminals run it
        "BROWSER": f"firefox:{theirs}/b %s",  # `storagelab lab` opens its page with it
    }
    for var, value in refused.items():
        said = ownership.environment_refusal({var: value})
        if var == "PYTHONSTARTUP":
            assert said == (
                f"the environment's PYTHONSTARTUP ({theirs / 's.py'}) is a file of another user's ({USER}), read as "
                "you: unset PYTHONSTARTUP or give a file of your own"
            )
            continue
        assert said == (
            f"the environment's {var} ({theirs}): {theirs} is another user's (mode drwxr-xr-x): " + tail.format(var=var)
        ), var
    for var, value in (
        ("JAVA_TOOL_OPTIONS", f"-Xmx1g -Djava.library.path={theirs}"),  # the JVM loads libhadoop.so from there
        ("SPARK_SUBMIT_OPTS", f"-Dlog4j2.configurationFile={theirs}/log4j2.xml"),
    ):
        assert ownership.environment_refusal({var: value}).startswith(f"the environment's {var} ({theirs}): "), var
    assert (
        ownership.environment_refusal({"JAVA_TOOL_OPTIONS": "-Xlog:gc:/var/log/gc.log -Dfile.encoding=UTF-8"}) is None
    )
    conf = f"--conf spark.driver.extraClassPath={theirs}/a.jar pyspark-shell"
    assert ownership.environment_refusal({"PYSPARK_SUBMIT_ARGS": conf}).startswith(
        f"the environment's PYSPARK_SUBMIT_ARGS ({theirs}): "
    )
    ok = {"PYTHONSTARTUP": "/etc/hostname", "PYSPARK_SUBMIT_ARGS": "--master local[2] --driver-memory 2g pyspark-shell"}
    assert ownership.environment_refusal(ok) is None
