"""Reliability-33, the read side (h2): root's reads and runs of paths another local user controls."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from storagelab import ownership, paths


def _real_mounts(monkeypatch) -> None:
    """This process's real mount table, kept while the tests fake /proc's other processes (an unreadable one refuses every file)."""
    from storagelab import livewriters

    mounts, faked = livewriters._mounts(), livewriters._mounts
    monkeypatch.setattr(livewriters, "_mounts", lambda pid="self": mounts if pid == "self" else faked(pid))


def test_the_files_libraries_read_or_write_by_the_environments_names_are_checked(tmp_path):
    # reliability-33: `OPENSSL_CONF=/tmp/theirs/openssl.cnf storagelab run 07_explore` loaded the shared object their
    # configuration's provider section named, as uid 0 (in the command, at duckdb's import, and in its kernel);
    # COVERAGE_PROCESS_START=their.ini (`data_file = /root/x`) had coverage's .pth overwrite root's 0600 file at exit;
    # SSLKEYLOGFILE and DEBUGPY_LOG_DIR had root's kernel make its files in their folder. None was checked.
    tmp_path.chmod(0o700)
    ok, ww, shared = tmp_path / "ok.cnf", tmp_path / "ww.cnf", tmp_path / "shared"
    for p in (ok, ww):
        p.write_text("# nothing\n")
        p.chmod(0o644)
    ww.chmod(0o666)
    shared.mkdir()
    shared.chmod(0o777)
    for var in ("OPENSSL_CONF", "COVERAGE_PROCESS_START", "SSLKEYLOGFILE", "PYDEVD_DEBUG_FILE", "COVERAGE_DEBUG_FILE"):
        assert ownership.environment_refusal({var: str(ok)}) is None
        assert f"{var} ({ww}) is a file that can be written by every user" in (
            ownership.environment_refusal({var: str(ww)}) or ""
        )
        assert f"{var} ({shared}): {shared} can be written by every user" in (
            ownership.environment_refusal({var: str(shared / "x")}) or ""
        )
    for var in ("OPENSSL_MODULES", "OPENSSL_ENGINES", "DEBUGPY_LOG_DIR"):
        assert ownership.environment_refusal({var: str(tmp_path)}) is None
        assert "can be written by every user" in (ownership.environment_refusal({var: str(shared)}) or "")


def test_the_environment_is_refused_before_openssl_is_loaded_and_coverage_saves_nothing(tmp_path):
    # reliability-33: duckdb's import loads OpenSSL (and OPENSSL_CONF's modules): the CLI imported it (the store,
    # and `lab fio`'s modules) before it checked the environment, so their .so ran even in a refused command; and
    # coverage, started by its .pth before any of this code, wrote their configuration's data_file at exit
    tmp_path.chmod(0o700)
    victim, conf, cov = tmp_path / "victim.txt", tmp_path / "openssl.cnf", tmp_path / "cov.ini"
    victim.write_text("root's\n")
    victim.chmod(0o600)
    conf.write_text("# nothing\n")
    cov.write_text(f"[run]\ndata_file = {victim}\n")
    for p in (conf, cov):
        p.chmod(0o666)
    code = (
        "import sys; from storagelab.cli import main; "
        f"print(main(['lab', 'fio', '--target', {str(tmp_path / 'none')!r}]), main(['sql', 'select 1']), 'duckdb' in sys.modules)"
    )
    env = dict(os.environ, PYTHONPATH=str(paths.ROOT / "lib"))
    for var, value in (("OPENSSL_CONF", conf), ("COVERAGE_PROCESS_START", cov)):
        run = subprocess.run(
            [sys.executable, "-c", code], env=env | {var: str(value)}, capture_output=True, text=True, timeout=60
        )
        assert run.stdout.split() == ["2", "2", "False"], run.stdout + run.stderr
        assert f"{var} ({value}) is a file that can be written by every user" in run.stderr
    assert victim.read_text() == "root's\n"


def _fake_process(proc, pid: int, uid: int, groups: str = "", fd_to=None, flags: str = "0100002", maps: str = ""):
    """A process as /proc shows it: its status, one descriptor (a link to ``fd_to``) with its flags, its maps."""
    d = proc / str(pid)
    (d / "fd").mkdir(parents=True)
    (d / "fdinfo").mkdir()
    (d / "status").write_text(
        f"Name:\tx\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t{uid}\t{uid}\t{uid}\t{uid}\nGroups:\t{groups}\n"
    )
    if fd_to is not None:  # as the kernel shows it: the file's mount (its device in mountinfo) and inode
        st = os.stat(fd_to)
        (d / "fd" / "3").symlink_to(fd_to)
        (d / "fdinfo" / "3").write_text(f"pos:\t0\nflags:\t{flags}\nmnt_id:\t7\nino:\t{st.st_ino}\n")
        (d / "mountinfo").write_text(f"7 1 {os.major(st.st_dev)}:{os.minor(st.st_dev)} / / rw - ext4 /dev/x rw\n")
    (d / "maps").write_text(maps)


def test_a_notebook_another_users_process_can_still_write_is_refused(tmp_path, monkeypatch):
    # reliability-33: root's notebook, 0666, opened for writing by the second user, then made 0644 by root: resolve()
    # passed it (mode and ACL say no one else may open it now), and the cell they wrote through their descriptor ran
    # as root, exit 0. And a group-writable one whose group no longer lists them, while a shell of theirs kept it
    from storagelab import livewriters, nbparams
    from storagelab.errors import ParameterError

    tmp_path.chmod(0o755)
    nb = tmp_path / "nb.ipynb"
    shutil.copyfile(paths.NOTEBOOKS / "07_explore.ipynb", nb)
    nb.chmod(0o644)
    proc = tmp_path / "proc"
    _real_mounts(monkeypatch)
    monkeypatch.setattr(livewriters, "PROC", str(proc))
    other = os.getuid() + 4242
    _fake_process(proc, 11, other, fd_to=nb, flags="0100000")  # read only: no writer
    _fake_process(proc, 12, os.getuid(), fd_to=nb)  # this user's own: no writer
    assert nbparams.resolve(str(nb)) == nb.resolve()
    _fake_process(proc, 13, other, fd_to=nb)  # O_RDWR
    # read from fdinfo alone, not by a stat through the link: on the second user's stopped FUSE mount that stat
    # waited until Ctrl-C (a link that leads nowhere stands for it here)
    (proc / "13" / "fd" / "3").unlink()
    (proc / "13" / "fd" / "3").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ParameterError, match=r"\(pid 13\) holds open for writing"):
        nbparams.resolve(str(nb))
    shutil.rmtree(proc / "13")
    st = nb.stat()
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}"
    _fake_process(proc, 14, other, maps=f"7f00-7f01 rw-s 00000000 {dev} {st.st_ino}    {nb}\n")
    with pytest.raises(ParameterError, match=r"\(pid 14\) holds open for writing"):
        nbparams.resolve(str(nb))
    shutil.rmtree(proc / "14")
    gid = st.st_gid
    _fake_process(proc, 15, other, groups=f"{gid + 1} {gid}")
    assert nbparams.resolve(str(nb)) == nb.resolve()  # 0644: the group may not write
    nb.chmod(0o664)
    monkeypatch.setattr(ownership, "_group_members", lambda gid: set())  # /etc/group lists no one else now
    with pytest.raises(ParameterError, match=r"\(pid 15\) can write as a member of its group"):
        nbparams.resolve(str(nb))


def test_a_fifo_at_a_parquet_writes_lock_name_does_not_hold_the_sweep(tmp_path):
    # reliability-33: `sql --parquet /tmp/shared/res.parquet` (a sticky folder) beside root's leftover
    # .res.parquet.<pid>.<8>.tmp whose lock was gone: the second user's FIFO at the lock's name held the sweep's open
    # for ever, saying nothing (Ctrl-C ended it)
    import threading

    from storagelab import sqlout

    dest = tmp_path / "res.parquet"
    left = tmp_path / ".res.parquet.4000000.abcdefgh.tmp"
    left.write_bytes(b"x")
    lock = tmp_path / ".res.parquet.4000000.abcdefgh.lock"
    os.mkfifo(lock)
    t = threading.Thread(target=sqlout._sweep_orphans, args=(dest,), daemon=True)
    t.start()
    t.join(5)
    if t.is_alive():  # the old code: let its open end
        os.close(os.open(lock, os.O_WRONLY | os.O_NONBLOCK))
    assert not t.is_alive()
    assert not left.exists()  # pid 4000000 is gone: its leftover is swept


def test_a_database_another_users_process_can_still_write_is_theirs(tmp_path, monkeypatch):
    # reliability-33: root's database, 0666, opened for writing by the second user, then made 0600 by root: they
    # wrote a view of read_text('/root/...') through their descriptor, and root's `sql --db` printed the file, rc 0
    import duckdb

    from storagelab import database, livewriters
    from storagelab.store.faults import StoreError

    tmp_path.chmod(0o700)
    secret, db = tmp_path / "secret.txt", tmp_path / "r.duckdb"
    secret.write_text("secret-h50r\n")
    con = duckdb.connect(str(db))
    con.execute(f"CREATE VIEW fio_results AS SELECT content AS bw FROM read_text('{secret}')")
    con.close()
    db.chmod(0o600)
    proc = tmp_path / "proc"
    _real_mounts(monkeypatch)
    monkeypatch.setattr(livewriters, "PROC", str(proc))
    _fake_process(proc, 21, os.getuid() + 4242, fd_to=db)
    with pytest.raises(StoreError, match="views or macros"):
        with database.connect(db, read_only=True) as c:
            c.execute("SELECT * FROM fio_results").fetchall()


def _meta(where):
    """The dataset's _storagelab/meta.json, 0644 in a 0755 folder."""
    (where / "_storagelab").mkdir(mode=0o755)
    (where / "_storagelab").chmod(0o755)
    (where / "_storagelab" / "meta.json").write_text("{}")
    (where / "_storagelab" / "meta.json").chmod(0o644)


def test_a_dataset_part_others_can_write_is_not_read_by_name_as_ours(tmp_path):
    # reliability-33: root's dataset (root's 0755 folders) with one part made 0666: the second user rewrote it, its
    # size kept (meta.json's check), with every bandwidth 1; open_dataset read it by name and their_writers() was
    # empty: their numbers in root's sums, unmarked, rc 0. A part others can write makes the dataset theirs too
    from storagelab import dataset

    where = tmp_path / "ds"
    part = where / "fio_results" / "tool=fio" / "part-1.parquet"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"PAR1")
    _meta(where)  # reliability-34: meta.json is judged too
    for d in (where, part.parent, part.parent.parent):
        d.chmod(0o755)
    part.chmod(0o644)
    info = {"parts": {"fio_results": {"fio_results/tool=fio/part-1.parquet": 4}}}
    assert dataset._only_ours(where, info)
    part.chmod(0o666)
    assert not dataset._only_ours(where, info)
    part.chmod(0o664)
    assert not dataset._only_ours(where, info)


def test_a_dataset_part_another_users_process_holds_for_writing_is_not_ours(tmp_path, monkeypatch):
    # reliability-33: the same part made 0644 again after the second user opened it for writing (High 2's descriptor)
    from storagelab import dataset, livewriters

    where = tmp_path / "ds"
    part = where / "t" / "part-1.parquet"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"PAR1")
    part.chmod(0o644)
    _meta(where)
    info = {"parts": {"t": {"t/part-1.parquet": 4}}}
    proc = tmp_path / "proc"
    _real_mounts(monkeypatch)
    monkeypatch.setattr(livewriters, "PROC", str(proc))
    _fake_process(proc, 31, os.getuid() + 4242, fd_to=where / "t", flags="0200000")  # their folder descriptor: no
    assert dataset._only_ours(where, info)
    _fake_process(proc, 32, os.getuid() + 4242, fd_to=part)
    assert not dataset._only_ours(where, info)


def test_a_folder_whose_group_a_running_process_of_another_user_keeps_is_theirs_too(tmp_path, monkeypatch):
    # reliability-33: root's notebook in root's folder of group h50g (0775); the second user taken out of h50g
    # (gpasswd -d) while a shell of theirs ran: /etc/group listed no one else, the folder passed as root's alone, and
    # their process (still in h50g) renamed their notebook over root's after the check: its cell ran as root, rc 0
    from storagelab import livewriters, nbparams
    from storagelab.errors import ParameterError

    folder = tmp_path / "g"
    folder.mkdir()
    nb = folder / "nb.ipynb"
    shutil.copyfile(paths.NOTEBOOKS / "07_explore.ipynb", nb)
    nb.chmod(0o644)
    tmp_path.chmod(0o755)
    gid = folder.stat().st_gid
    monkeypatch.setattr(ownership, "_group_members", lambda g: set())  # /etc/group: no one else (as on the old code)
    _real_mounts(monkeypatch)
    monkeypatch.setattr(livewriters, "PROC", str(tmp_path / "proc"))
    folder.chmod(0o775)
    assert nbparams.resolve(str(nb)) == nb.resolve()  # no process of another user in it
    from storagelab import usernames

    monkeypatch.setattr(ownership, "_group_members", usernames.group_members)
    monkeypatch.setattr(usernames.grp, "getgrgid", lambda g: type("G", (), {"gr_mem": [], "gr_name": "g"})())
    _fake_process(tmp_path / "proc", 41, os.getuid() + 4242, groups=f"{gid}")
    with pytest.raises(ParameterError, match=r"can be written by its group .*which has other users"):
        nbparams.resolve(str(nb))
