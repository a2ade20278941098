"""Reliability-11, processes (docs/reliability-11-processes.md): each test does the attack with the real second user,
as root."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab.ownership import environment_refusal

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")

ROOT = Path(__file__).resolve().parents[1]


def _user(*argv: str) -> None:
    subprocess.run(argv, check=True, preexec_fn=_as_user(USER))


@pytest.mark.e2e
def test_a_folder_the_environment_names_that_another_user_can_write_is_refused(shared_tmp, tmp_path):  # noqa: F811
    """Attack (main e8a3610): root's IPYTHONDIR (or HOME, or TMPDIR) names a folder the user can write. IPYTHONDIR:
    their profile_default/startup/00-x.py ran in root's kernel (`run 07_explore` exit 0, /tmp/.../pwned-ipy holding
    "0"); TMPDIR: they renamed root's new storagelab-kernel-* folder away and put theirs in its place, and root's
    kernel made its kernel.json and kernel-ipc-1..5 there. Now the command is refused before it starts anything."""
    (shared_tmp / "pub").mkdir()
    (shared_tmp / "pub").chmod(0o1777)
    theirs = shared_tmp / "pub" / "env"
    _user("mkdir", "-m", "777", str(theirs))
    startup = theirs / "ipy" / "profile_default" / "startup"
    pwned = theirs / "pwned"
    code = f"open({str(pwned)!r}, 'w').write(str(__import__('os').getuid()))"
    _user("mkdir", "-p", str(startup))
    _user("sh", "-c", f'echo "{code}" > {startup}/00-x.py')
    ipy = theirs / "ipy"
    for var, value, named in (
        ("IPYTHONDIR", ipy, f"{ipy} is another user's (mode drwxr-xr-x)"),
        ("TMPDIR", theirs, f"{theirs} is another user's (mode drwxrwxrwx)"),
    ):
        env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), **{var: str(value)})
        argv = [sys.executable, "-m", "storagelab", "run", "07_explore", "--output", str(tmp_path / "rep")]
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
        assert (p.returncode, p.stdout) == (2, ""), p.stdout + p.stderr
        assert p.stderr == (
            f"storagelab run: the environment's {var} ({value}): {named}: "
            "another user could put their own files under the names written or read there as you (a Jupyter "
            f"kernel's startup scripts, its connection file); unset {var} or give a folder of your own\n"
        )
    assert not pwned.exists() and not (tmp_path / "rep").exists()
    assert sorted(os.listdir(theirs)) == ["ipy"]  # nothing made there, no kernel folder


def test_the_environment_check_allows_a_sticky_temporary_folder_and_refuses_other_names_made_there(tmp_path):
    """TMPDIR may be sticky (/tmp): everything storagelab makes there has a new name (mkdtemp); IPYTHONDIR and the
    others may not (made by names known in advance: the user makes /tmp/ipy first)."""
    assert environment_refusal({"TMPDIR": "/tmp", "HOME": str(tmp_path)}) is None
    assert "HOME (/tmp/storagelab-none)" in environment_refusal({"HOME": "/tmp/storagelab-none"})
    assert environment_refusal({"IPYTHONDIR": "/tmp/storagelab-none/ipy"}) == (
        "the environment's IPYTHONDIR (/tmp/storagelab-none/ipy): /tmp can be written by every user (mode "
        "drwxrwxrwt): another user could put their own files under the names written or read there as you (a "
        "Jupyter kernel's startup scripts, its connection file); unset IPYTHONDIR or give a folder of your own"
    )
    assert "SPARK_LOCAL_DIRS (/tmp)" in environment_refusal({"SPARK_LOCAL_DIRS": f"{tmp_path},/tmp"})
    assert "SPARK_CONF_DIR (/tmp/storagelab-none/conf)" in environment_refusal(
        {"SPARK_CONF_DIR": "/tmp/storagelab-none/conf"}
    )
    assert environment_refusal({}) is None and environment_refusal() is None  # this test's own environment


def test_the_environment_of_sudo_keeps_the_invokers_own_folders_and_no_one_elses(shared_tmp, tmp_path):  # noqa: F811
    """`sudo -E storagelab lab fio` keeps HOME=/home/them: a folder of the user who ran sudo (SUDO_UID) is theirs and
    root's, not another user's; the same folder without SUDO_UID, or group-writable, is refused."""
    theirs = tmp_path / "home"
    theirs.mkdir(mode=0o755)
    uid = pwd.getpwnam("storagelab-rel5").pw_uid
    os.chown(theirs, uid, -1)
    refused = environment_refusal({"HOME": str(theirs)})
    assert refused and refused.startswith(f"the environment's HOME ({theirs}): {theirs} ")
    assert environment_refusal({"HOME": str(theirs), "SUDO_UID": str(uid)}) is None
    assert environment_refusal({"HOME": str(theirs), "SUDO_UID": str(uid + 1)}) == refused
    theirs.chmod(0o777)
    assert "can be written by every user" in environment_refusal({"HOME": str(theirs), "SUDO_UID": str(uid)})


def test_ctrl_c_while_the_program_loads_is_one_line_and_130_but_a_kernel_keeps_its_interrupt():
    """Reliability-11 (a known low): Ctrl-C 45-100 ms after `storagelab ...` started printed a traceback from the
    module being imported (the console script: 40 of 40 tries 30-106 ms after its start; 10 of 40 now, in Python's
    own start-up, before storagelab's first line). From storagelab's first line on, the program's own start-up handler says
    one line and exits 130, until the command's handling takes over; imported by anything else (a notebook's kernel,
    whose interrupt is SIGINT), Python's handler is left in place."""
    load = "import storagelab, os, signal; os.kill(os.getpid(), signal.SIGINT); import time; time.sleep(5)"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    p = subprocess.run([sys.executable, "-c", "import sys; sys.argv[0] = 'storagelab'; " + load], env=env,
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (p.returncode, p.stdout, p.stderr) == (130, "", "storagelab: interrupted\n")
    p = subprocess.run([sys.executable, "-c", load], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == -2 and p.stderr.rstrip().endswith("KeyboardInterrupt")  # a library's import: Python's own


@pytest.mark.e2e
def test_run_output_stopped_while_it_waits_for_the_report_tree_leaves_no_folder(tmp_path):
    """Reliability-9 Low 4: `run --output reports/zz`, killed by timeout's SIGTERM while it waited for another command
    holding the report tree, left an empty reports/zz (made for its check before the wait)."""
    import fcntl  # noqa: PLC0415

    (tmp_path / "reports").mkdir()
    lock = os.open(tmp_path / "reports" / ".storagelab-writer.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)  # another storagelab command writing the tree
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), STORAGELAB_ROOT=str(tmp_path))
    argv = [sys.executable, "-m", "storagelab", "run", "07_explore", "--output", str(tmp_path / "reports" / "zz")]
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stderr.readline().startswith("storagelab run: waiting for another storagelab command (pid ")
    assert (tmp_path / "reports" / "zz").is_dir()  # made for its check, before the wait
    p.send_signal(signal.SIGTERM)
    assert p.wait(30) == 143 and p.stderr.read() == "storagelab run: terminated (SIGTERM)\n"
    assert sorted(os.listdir(tmp_path / "reports")) == [".storagelab-writer.lock"]
    os.close(lock)


def test_a_dataset_or_parquet_folder_whose_free_name_was_the_users_link_only_at_the_mkdir_is_refused(
    shared_tmp,  # noqa: F811
    monkeypatch,
):
    """Attack (main e8a3610, proc-dswindow.py; free-running proc-dsrace.py: 12-33 of 2000 tries): `export --dataset
    /tmp/L/out`, L a free name. The user makes L a link to a folder of theirs just before the export's mkdir (which
    follows it) and removes it just after; the check resolved L/out without `strict` (a path that did not exist),
    passed, and the export wrote by it once the user had put L back as a link to a folder holding
    _storagelab/.meta.json.<pid>.tmp -> a root-only file: the victim became the dataset's meta.json (37,237 bytes).
    The same for the Parquet copy beside a database. Here the exact window, with the real user at the mkdir."""
    import pathlib  # noqa: PLC0415

    from storagelab import dataset  # noqa: PLC0415
    from storagelab.ownership import SharedFolderError  # noqa: PLC0415
    from storagelab.store import connect  # noqa: PLC0415
    from storagelab.store.export import export_parquet  # noqa: PLC0415

    pub = shared_tmp / "pub"
    pub.mkdir()
    pub.chmod(0o1777)
    _user("mkdir", str(pub / "theirs"))
    real_mkdir, done = pathlib.Path.mkdir, []

    def mkdir(self, *a, **k):  # the user's link at L only while root's (outermost) mkdir runs
        link = {"out": self.parent, "_storagelab": self.parent.parent}.get(self.name)
        if link is None or link.name not in ("L1", "L2") or link in done:
            return real_mkdir(self, *a, **k)
        done.append(link)
        _user("ln", "-s", str(pub / "theirs"), str(link))
        try:
            return real_mkdir(self, *a, **k)
        finally:
            _user("rm", str(link))

    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    (shared_tmp / "dbs").mkdir()
    con = connect(shared_tmp / "dbs" / "x.duckdb")
    try:
        with pytest.raises(SharedFolderError, match=rf"^{pub / 'L1'} does not exist any more \(another user may"):
            export_parquet(con, pub / "L1" / "out")
        with pytest.raises(SharedFolderError, match=rf"^--dataset {pub / 'L2'} does not exist any more \(another"):
            (pub / "L2" / "out" / dataset.META_DIR).mkdir(parents=True, exist_ok=True)  # export's first two steps
            dataset._owned_folder(pub / "L2" / "out")  # (its queries before them need a full database)
    finally:
        con.close()
    assert sorted(os.listdir(pub)) == ["theirs"]


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("fio"), reason="the attack stops a real fio")
def test_lab_fio_stopped_by_a_closed_terminal_leaves_no_test_files(tmp_path):
    """Reliability-9 Low 3 (a closed terminal part): SIGHUP to `lab fio`'s process group (the terminal closed) reached
    fio too, which died without unlinking its test files: `randread-4k-qd2-nj2.0.0 randread-4k-qd2-nj2.1.0` stayed in
    --target, 3 of 3 times (each as large as --size). The lab now removes the stopped run's test files."""
    import psutil  # noqa: PLC0415

    target, out = tmp_path / "t", tmp_path / "o"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    argv = [sys.executable, "-m", "storagelab", "lab", "fio", "--rw", "randread", "--depth-jobs", "2x2"]
    argv += ["--size", "16M", "--runtime", "30", "--target", str(target), "--out", str(out), "--no-ingest"]
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    end = time.monotonic() + 60
    while len([f for f in target.glob("randread-4k-qd2-nj2.*")]) < 2 or not any(
        c.name() == "fio" for c in psutil.Process(p.pid).children(recursive=True)
    ):
        assert p.poll() is None and time.monotonic() < end, "fio never started"
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGHUP)
    assert p.wait(30) == 129
    assert sorted(os.listdir(target)) == []
