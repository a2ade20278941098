"""The fifth reliability campaign (docs/reliability-5-processes.md): each test repeats an attack that broke."""

from __future__ import annotations

import contextlib
import io
import os
import pwd
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from conftest import ROOT
from test_processes import project  # noqa: F401, F811  (the fixture: a project of two notebooks and one fio log)

GiB_KiB = 1024 * 1024


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    env.pop("STORAGELAB_MIN_ADDRESS_SPACE", None)
    return env


def _limit(kib: int):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))


def test_a_command_that_draws_charts_under_a_memory_limit_is_one_line_not_a_v8_abort(tmp_path):
    """Attack: `ulimit -v 1400000` (and up to 34 GB) then `report`: exit 133 (SIGTRAP), 39 lines of V8's C stack
    ("Fatal process out of memory: Oilpan: CagedHeap reservation"), no line of ours; `run` and `build` lost their
    notebooks' kernels the same way. vl-convert's V8 reserves its caged heap when it starts: 64 GiB of address
    space is too little, 66 GiB is enough. Now run, report and build refuse such a limit in one line, exit 2."""

    probe = [sys.executable, "-c", "import vl_convert as v; v.javascript_bundle(); print('drew')"]
    crashed = subprocess.run(probe, capture_output=True, text=True, preexec_fn=_limit(8 * GiB_KiB))
    assert crashed.returncode == -5 and "CagedHeap reservation" in crashed.stdout + crashed.stderr  # SIGTRAP
    drew = subprocess.run(probe, capture_output=True, text=True, preexec_fn=_limit(66 * GiB_KiB))
    assert (drew.returncode, drew.stdout) == (0, "drew\n")

    for args in (["report"], ["run", "08_fio", "--output", str(tmp_path / "rep")], ["build"]):
        r = subprocess.run(
            [sys.executable, "-m", "storagelab", *args],
            capture_output=True, text=True, env=_env(), cwd=tmp_path, preexec_fn=_limit(8 * GiB_KiB),
        )  # fmt: skip
        assert (r.returncode, r.stdout, r.stderr) == (
            2,
            "",
            f"storagelab {args[0]}: the address-space limit (ulimit -v 8388608) is below the 69788 MiB that drawing "
            "charts needs: vl-convert's JavaScript engine (V8) reserves that much address space when it starts (not "
            "memory used), and aborts the process below it; raise the limit (ulimit -v 71462912, or unlimited), or set "
            "STORAGELAB_MIN_ADDRESS_SPACE=MiB to try a lower floor\n",
        )
    assert not (tmp_path / "rep").exists()


def _marked(marker: str) -> list[psutil.Process]:
    """Every live process on the machine whose environment carries ``marker`` (re-parented ones too)."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("REL5_MARKER") == marker and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


def _name(q: psutil.Process) -> str | None:
    """The process's name, or None once it has ended (it may end between the listing and the question)."""
    try:
        return q.name()
    except psutil.Error:
        return None


def _lab_fio_with_its_jobs_running(tmp_path, marker: str, output) -> subprocess.Popen:
    """`lab fio --depth-jobs 2x2` in a session of its own (its processes marked with ``marker``), returned once
    fio's main process and its two job processes run; ``output`` takes its stdout and stderr."""
    env = dict(_env(), REL5_MARKER=marker)
    args = ["lab", "fio", "--rw", "randread", "--depth-jobs", "2x2", "--runtime", "30", "--size", "16M", "--no-ingest"]
    p = subprocess.Popen(
        [sys.executable, "-m", "storagelab", *args, "--target", str(tmp_path / "t"), "--out", str(tmp_path / "out")],
        stdout=output, stderr=output, env=env, start_new_session=True,
    )  # fmt: skip
    end = time.monotonic() + 60
    while sum(_name(q) == "fio" for q in _marked(marker)) < 3:  # fio's main process and its two jobs
        assert p.poll() is None and time.monotonic() < end, "fio's jobs never ran"
        time.sleep(0.05)
    return p


@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
def test_lab_fio_killed_with_its_whole_process_group_leaves_no_fio_job(tmp_path):
    """Attack: `lab fio --depth-jobs 2x2` in a session of its own, SIGKILL to its process group once fio's job
    processes run: both fio jobs (parent 1, sessions of their own) ran on for 30 s and more, writing into the
    target. The guard was in the group and died too; and fio's main process, killed with the lab, no longer had
    the jobs as children. Now the guard has a session of its own and notes fio's descendants as they appear."""
    marker = f"fio-group-kill-{os.getpid()}"
    p = _lab_fio_with_its_jobs_running(tmp_path, marker, subprocess.DEVNULL)
    os.killpg(p.pid, signal.SIGKILL)
    assert p.wait(10) == -signal.SIGKILL
    end = time.monotonic() + 10
    while _marked(marker) and time.monotonic() < end:
        time.sleep(0.1)
    left = [(q.pid, n) for q in _marked(marker) if (n := _name(q)) is not None]
    for q in _marked(marker):
        with contextlib.suppress(psutil.Error):
            q.kill()
    assert left == []


@pytest.mark.parametrize("ready", [False, True], ids=["starting", "serving"])
def test_ctrl_c_on_jupyterlab_without_a_terminal_is_130_and_one_line(tmp_path, ready):
    """Attack: `storagelab lab` with stdin not a terminal (a script, nohup), SIGINT to its process group: exit 130
    with a 56-line KeyboardInterrupt traceback; on a terminal, Ctrl-C during JupyterLab's start-up did the same.
    JupyterLab now ignores SIGINT and the lab stops it with SIGTERM: 130, one line of ours, nothing left."""
    marker = f"lab-ctrl-c-{ready}-{os.getpid()}"
    home = tmp_path / "home"
    env = dict(_env(), REL5_MARKER=marker, HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"))
    env["JUPYTER_RUNTIME_DIR"] = str(home / "runtime")
    p = subprocess.Popen(
        [sys.executable, "-m", "storagelab", "lab", "--no-browser", "--ip=127.0.0.1", "--port=0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True,
    )  # fmt: skip
    end = time.monotonic() + 90
    while not any("jupyterlab" in q.cmdline() for q in _marked(marker)) or (
        ready and not list((home / "runtime").glob("jpserver-*.json"))
    ):
        assert p.poll() is None and time.monotonic() < end, "JupyterLab never started"
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    left = [(q.pid, q.cmdline()) for q in _marked(marker)]
    for q in _marked(marker):
        q.kill()
    assert (p.returncode, left) == (130, [])
    assert "Traceback" not in err.decode() and err.decode().splitlines()[-1] == "storagelab lab: interrupted"


@pytest.mark.slow
def test_ctrl_c_ends_a_notebook_run_whose_worker_is_stopped(project, tmp_path):  # noqa: F811
    """Attack: `run` of two notebooks (two workers), one worker stopped (SIGSTOP: a process frozen or stuck in I/O
    is alike), then Ctrl-C to the group, twice: the run hung in `pool.shutdown(wait=True)`, 40 s and more. Now the
    worker and its kernel are killed after a grace (pool_deaths.SHUTDOWN_GRACE_S): 130, one line, nothing left.
    (`python -m storagelab` as runpy runs it, with a grace of 0.5 s instead of 5 s: the same kill, sooner; issue 28.)"""
    root = project
    env = dict(_env(), STORAGELAB_ROOT=str(root), TMPDIR=str(tmp_path))
    subprocess.run([sys.executable, "-m", "storagelab", "ingest", "--quiet"], env=env, check=True, capture_output=True)
    grace = (
        "import runpy, sys, storagelab.pool_deaths as d; d.SHUTDOWN_GRACE_S = 0.5; sys.argv[0] = 'storagelab'; "
        "runpy.run_module('storagelab', run_name='__main__', alter_sys=True)"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", grace, "run", "07_explore", "08_fio"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True,
    )  # fmt: skip
    end = time.monotonic() + 120
    while True:
        tree = psutil.Process(p.pid).children(recursive=True)
        if sum("ipykernel_launcher" in q.cmdline() for q in tree) == 2:
            break
        assert p.poll() is None and time.monotonic() < end, "the notebooks' kernels never ran"
        time.sleep(0.05)
    worker = psutil.Process(p.pid).children()[0]
    worker.suspend()
    os.killpg(p.pid, signal.SIGINT)
    time.sleep(1)
    os.killpg(p.pid, signal.SIGINT)
    try:
        out, err = p.communicate(timeout=40)
    finally:
        for q in [psutil.Process(p.pid), *tree] if p.poll() is None else []:  # a hung run leaves nothing behind
            with contextlib.suppress(psutil.Error):
                q.kill()
    time.sleep(1)
    left = [q.pid for q in tree if q.is_running() and q.status() != psutil.STATUS_ZOMBIE]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert (p.returncode, left, err.decode()) == (130, [], "storagelab run: interrupted\n")


def _as_user(name: str):
    """A preexec_fn that runs the child as the unprivileged user ``name``."""
    user = pwd.getpwnam(name)

    def drop():
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)

    return drop


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("useradd"), reason="needs root to make a second user")
def test_lab_refuses_an_out_folder_another_user_can_plant_symlinks_in():
    """Attack: a second, unprivileged user plants `.randread-4k-qd1-nj1.txt.part -> /root-only-file` in a
    world-writable folder (1777); `lab fio --out` that folder, run as root, wrote fio's output through the symlink:
    the 0600 root file held fio's text, then a 40-line ValueError traceback. Now such a folder, one another user
    owns, and one writable by a group the other user is in (low 5: it was accepted) are refused in one line before
    anything runs."""
    user = "storagelab-rel5"
    if subprocess.run(["id", user], capture_output=True).returncode:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", user], check=True)
    tmp_path = Path(
        tempfile.mkdtemp(prefix="storagelab-rel5-", dir="/tmp")
    )  # pytest's is 0700: the user could not enter
    tmp_path.chmod(0o755)
    try:
        _plant_and_run(user, tmp_path)
    finally:
        shutil.rmtree(tmp_path)


def _plant_and_run(user: str, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "victim.txt"
    victim.write_text("root only\n")
    victim.chmod(0o600)
    grouped = tmp_path / "grouped"  # root's, writable by a group the user is in (reliability-5 processes low 5)
    grouped.mkdir()
    os.chown(grouped, 0, pwd.getpwnam(user).pw_gid)
    grouped.chmod(0o775)
    plant = f"ln -s {shlex.quote(str(victim))} {shlex.quote(str(shared / '.randread-4k-qd1-nj1.txt.part'))} && "
    plant += f"ln -s {shlex.quote(str(victim))} {shlex.quote(str(grouped / '.randread-4k-qd1-nj1.txt.part'))} && "
    plant += f"mkdir -m 755 {shlex.quote(str(shared / 'theirs'))}"
    subprocess.run(["/bin/sh", "-c", plant], check=True, preexec_fn=_as_user(user))
    args = ["lab", "fio", "--target", str(tmp_path / "t"), "--rw", "randread", "--depth-jobs", "1x1", "--size", "4M"]
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", *args, "--runtime", "1", "--no-ingest", "--out", str(shared)],
        capture_output=True, text=True, env=_env(),
    )  # fmt: skip
    said = (
        "another user could put a symlink there under a name the lab or fio writes, and have them overwrite any file "
    )
    said += "you can write; give a folder of your own (e.g. a new folder under it)\n"
    assert (r.returncode, r.stdout, r.stderr) == (
        2,
        "",
        f"storagelab lab fio: --out {shared} can be written by every user (mode drwxrwxrwt): {said}",
    )
    from storagelab.lab.cli import _out_ok  # noqa: PLC0415  (the same check, in this process: one CLI run is enough)

    for out, why in (
        (shared / "theirs", "is another user's (mode drwxr-xr-x)"),
        (grouped, f"can be written by its group {user}, which has other users ({user}) (mode drwxrwxr-x)"),
    ):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            assert _out_ok(out, "fio") is False
        assert err.getvalue() == f"storagelab lab fio: --out {out} {why}: {said}"
    assert victim.read_text() == "root only\n"


def test_a_group_writable_out_folder_of_this_users_own_group_is_accepted(tmp_path):
    """A group-writable folder whose group has no other user (a user-private group, umask 002) is this user's alone:
    accepted; with the group's write bit it is refused only when another user is in that group (the test above)."""
    from storagelab.lab.cli import _out_ok  # noqa: PLC0415
    from storagelab.lab.outdir import _group_members  # noqa: PLC0415

    mine = tmp_path / "mine"
    mine.mkdir()
    mine.chmod(0o775)
    own = {pwd.getpwuid(os.getuid()).pw_name}
    if _group_members(mine.stat().st_gid) - own:
        pytest.skip("this user's group has other users")
    assert _out_ok(mine, "fio") is True


def test_a_study_label_longer_than_a_file_name_gets_a_report_folder(project, tmp_path):  # noqa: F811
    """Attack: `run 07_explore -p study S...S` (300 bytes): `storagelab run: .../reports/SSS...: File name too long`,
    exit 2 (in `build`, one such label stops every study's reports). Now the folder name is cut to 200 bytes and
    given the selection's hash: two long labels that share their first 200 bytes still get two folders."""
    from storagelab import report  # noqa: PLC0415

    nb = project / "notebooks" / "07_explore.ipynb"
    a, b = (report.report_dir(nb, {"study": "S" * n}).name for n in (300, 301))
    assert a != b and a.startswith("S" * 200 + "~") and len(a.encode()) == 209
    env = dict(_env(), STORAGELAB_ROOT=str(project), TMPDIR=str(tmp_path))
    # the file labelled with the long study (a study nothing is labelled with is refused before any notebook runs)
    (project / "data" / "raw" / "manifest.csv").write_text(f"path,study\nmine/seq-write.txt,{'S' * 300}\n")
    subprocess.run([sys.executable, "-m", "storagelab", "ingest", "--quiet"], env=env, check=True, capture_output=True)
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "run", "07_explore", "-p", "study", "S" * 300],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert (project / "reports" / a / "executed" / "07_explore.ipynb").is_file()


# Ctrl-C on spark-ingest while its job runs (exit 130, one line last, no Python or Java traceback): one Spark run
# with test_spark's test_ctrl_c_on_spark_ingest_is_one_line_and_leaves_no_jvm, which asserts both (issue 28)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("useradd"), reason="needs root to make a second user")
def test_an_out_folder_another_user_makes_after_the_check_is_refused_before_fio_runs(tmp_path):
    """reliability-5 (processes) low 5: a new --out was checked before the lab made it, so another user who made it
    in between (in a shared parent such as /tmp) was not seen. The lab checks the folder again once it is there:
    here it is missing at the check, then made by the other user, and the matrix refuses it before running fio."""
    from storagelab.lab import PRESETS, build_runs, run_fio_matrix  # noqa: PLC0415
    from storagelab.lab.cli import _out_ok  # noqa: PLC0415

    user = "storagelab-rel5"
    if subprocess.run(["id", user], capture_output=True).returncode:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", user], check=True)
    out, target = tmp_path / "out", tmp_path / "t"
    assert _out_ok(out, "fio") is True  # missing when the command starts
    out.mkdir()
    os.chown(out, pwd.getpwnam(user).pw_uid, pwd.getpwnam(user).pw_gid)  # made by the other user meanwhile
    runs = build_runs(PRESETS["smoke"], target=target, out=out, rw=["read"])[:1]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = run_fio_matrix(runs, target=target, out=out, ingest=False, fio=str(tmp_path / "fio-never-run"))
    assert (rc, err.getvalue()) == (
        2,
        f"storagelab lab fio: --out {out} is another user's (mode drwxr-xr-x): another user could put a symlink "
        "there under a name the lab or fio writes, and have them overwrite any file you can write; give a folder of "
        "your own (e.g. a new folder under it)\n",
    )
    assert list(out.iterdir()) == []
