"""The seventh reliability campaign, processes side (docs/reliability-7-processes.md): each test repeats an attack
that broke, as the attack did it (a real second user, a real signal, real concurrency)."""

from __future__ import annotations

import hashlib
import os
import shlex
import signal
import subprocess
import sys
import time

import psutil
import pytest
from test_processes import project  # noqa: F401  (the fixture: a project of two notebooks and one fio log)
from test_reliability5_processes import _as_user, _env, _marked
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)


@pytest.mark.e2e
def test_run_refuses_an_output_folder_another_user_can_plant_symlinks_in(shared_tmp):  # noqa: F811
    """Attack: a second, unprivileged user makes `/tmp/.../rep/executed/` and plants `07_explore.ipynb -> a
    root-only file` in it; `run 07_explore --output /tmp/.../rep`, run as root, wrote the executed notebook through
    the symlink (the 0600 file held 132 kB of notebook JSON, exit 0). Now a folder another user owns, a folder every
    user can write (1777), and a folder of ours holding a folder of theirs are refused in one line before any
    notebook runs, and the root file is untouched."""
    victim = shared_tmp / "victim"
    victim.write_text("root secret\n")
    victim.chmod(0o600)
    shared, ours = shared_tmp / "shared", shared_tmp / "ours"
    theirs = shared / "rep"  # made by the user in the shared folder before root's run
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    ours.mkdir(mode=0o755)
    ours.chmod(0o777)  # the user makes their folder inside ours, then ours is closed again
    plant = f"mkdir -p {shlex.quote(str(theirs / 'executed'))} {shlex.quote(str(ours / 'executed'))}"
    for folder in (theirs, shared, ours):
        plant += f" && ln -s {shlex.quote(str(victim))} {shlex.quote(str(folder / 'executed' / '07_explore.ipynb'))}"
    subprocess.run(["/bin/sh", "-c", f"mkdir -p {shlex.quote(str(shared / 'executed'))} && {plant}"], check=True,
                   preexec_fn=_as_user(USER))  # fmt: skip
    ours.chmod(0o755)
    for out, where, why in (
        (theirs, theirs, "is another user's (mode drwxr-xr-x)"),
        (shared, shared, "can be written by every user (mode drwxrwxrwt)"),
        (ours, ours / "executed", "is another user's (mode drwxr-xr-x)"),
    ):
        r = subprocess.run(
            [sys.executable, "-m", "storagelab", "run", "07_explore", "--output", str(out)],
            capture_output=True, text=True, env=_env(),
        )  # fmt: skip
        assert (r.returncode, r.stdout, r.stderr) == (
            2,
            "",
            f"storagelab run: --output {where} {why}: another user could put a symlink there under a name the run "
            "writes (executed/<notebook>.ipynb, <notebook>.html), and have it overwrite any file you can write; give "
            "a folder of your own (e.g. a new folder under it)\n",
        )
    assert hashlib.sha256(victim.read_bytes()).hexdigest() == hashlib.sha256(b"root secret\n").hexdigest()
    typo = subprocess.run(
        [sys.executable, "-m", "storagelab", "run", "07_explore", "-p", "nosuch", "1", "--output", str(ours / "new")],
        capture_output=True, text=True, env=_env(),
    )  # fmt: skip
    assert typo.returncode == 2 and not (ours / "new").exists()  # made to be checked, and gone again with the typo


def _until(condition, what: str, timeout: float = 240) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.mark.e2e
def test_a_second_command_killed_beside_a_build_leaves_the_builds_reports_whole(project, tmp_path):  # noqa: F811
    """Attack: two builds at once in one clone, the second killed (SIGKILL, SIGINT, SIGTERM, SIGHUP to its group once
    its kernel ran): the first ended "built 15 reports (15 notebooks ran, 0 failed)", but 1 to 3 of its summaries
    were gone (check-reports: 13 and 14 summaries of 15): each notebook run starts by removing its report's summary
    and figures, and the second build, killed, never wrote them back. Now build, run and report hold the report tree
    (flock) while they write: the second waits, says so once, and its kill touches nothing.
    Here, in the cheapest form of the attack: `run 07_explore` is frozen (SIGSTOP) once its summary is written; a
    second `run 07_explore` beside it is SIGKILLed once it waits (or, without the lock, once its kernel runs); the
    first, let go, ends 0 with its summary there. About 20 s idle (67 s at load 26 with a build as the first): one
    notebook run, and the second command's start; no cheaper way to have two real commands on one report tree."""
    env = dict(_env(), STORAGELAB_ROOT=str(project), REL5_MARKER=f"rel7-second-{os.getpid()}")
    cmd = [sys.executable, "-m", "storagelab"]
    subprocess.run([*cmd, "ingest", "--quiet"], check=True, capture_output=True, env=env, cwd=tmp_path)
    first = subprocess.Popen([*cmd, "run", "07_explore"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=env, cwd=tmp_path, start_new_session=True)  # fmt: skip
    summary = project / "reports" / "all" / "summaries" / "07_explore.json"
    _until(summary.exists, "the build's summary of 07_explore")
    os.killpg(first.pid, signal.SIGSTOP)
    try:
        err = tmp_path / "second.err"
        with err.open("w") as to:
            second = subprocess.Popen([*cmd, "run", "07_explore"], stdout=subprocess.DEVNULL, stderr=to, env=env,
                                      cwd=tmp_path, start_new_session=True)  # fmt: skip

        def waits_or_runs() -> bool:
            kids = psutil.Process(second.pid).children(recursive=True)
            return "waiting for another" in err.read_text() or any("ipykernel" in " ".join(k.cmdline()) for k in kids)

        _until(waits_or_runs, "the second command to wait or run a kernel")
        os.killpg(second.pid, signal.SIGKILL)
        second.wait(30)
    finally:
        os.killpg(first.pid, signal.SIGCONT)
    assert first.wait(240) == 0, first.stderr.read().decode()
    assert summary.exists()  # without the lock: the second run removed it when it started
    assert err.read_text().strip() == (
        f"storagelab run: waiting for another storagelab command (pid {first.pid}) to finish writing "
        f"{project / 'reports'}"
    )
    assert "No summary" not in (project / "reports" / "index.html").read_text()
    assert _marked(env["REL5_MARKER"]) == []


_SWAP = """for i in $(seq 1 3000); do
  if [ -d "$1/mine" ] && [ "$(stat -c %u "$1/mine")" = 0 ]; then
    mv "$1/mine" "$1/mine.root" && mkdir -m 755 "$1/mine" && ln -s "$2" "$1/mine/write-4k-qd1-nj1.0.0" && exit 0
  fi
  sleep 0.005
done"""


@pytest.mark.e2e
def test_a_target_or_output_another_user_can_swap_after_the_check_is_refused(shared_tmp):  # noqa: F811
    """Attack: a folder every user can write, without the sticky bit (0777, not /tmp's 1777); root's `lab fio --target
    DIR/mine` (a new folder of root's, as the lab's own refusal advises) passed the check; the second user, watching,
    renamed `mine` away and put a folder of theirs in its place holding `write-4k-qd1-nj1.0.0 -> a root-only file`
    ("swapped at try 298"), and fio overwrote that file (MD5 843000c9... -> b808e2d4..., exit 0). Now a folder above
    the target (or a run's --output) that another user can write without the sticky bit, or owns, is refused in one
    line before anything runs, with the user's swap loop running, and the root file is untouched."""
    victim = shared_tmp / "victim.bin"
    victim.write_bytes(b"V" * (2 << 20))
    victim.chmod(0o600)
    open_dir = shared_tmp / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    swap = subprocess.Popen(["/bin/sh", "-c", _SWAP, "swap", str(open_dir), str(victim)], preexec_fn=_as_user(USER))
    try:
        why = (
            f"is inside {open_dir}, which can be written by every user (mode drwxrwxrwx): another user could rename "
            "{name} away once it is checked and put a folder of theirs in its place, with symlinks under {writes} "
            "that would overwrite any file you can write; give a folder whose parent folders only you (or root) can "
            "change\n"
        )
        lab = ["lab", "fio", "--target", str(open_dir / "mine"), "--out", str(shared_tmp / "out"), "--rw", "write",
               "--depth-jobs", "1x1", "--size", "1M", "--runtime", "1", "--no-ingest"]  # fmt: skip
        run = ["run", "07_explore", "--output", str(open_dir / "rep")]
        for args, said in (
            (lab, f"storagelab lab fio: --target {open_dir / 'mine'} " + why.format(
                name="mine", writes="the name of fio's test files (<run>.0.0)")),
            (run, f"storagelab run: --output {open_dir / 'rep'} " + why.format(
                name="rep", writes="the names the run writes")),
        ):  # fmt: skip
            r = subprocess.run([sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=_env())
            if r.stderr != said and args is lab:  # the lab makes `mine` before its check, so the user's loop may
                # have swapped theirs in by then: refused as theirs (one line), which is as right
                first = said.split(" is inside ")[0]
                assert r.stderr.startswith(f"{first} ") and "another user's" in r.stderr, r.stderr
                assert r.stderr.count("\n") == 1 and (r.returncode, r.stdout) == (2, ""), r.stderr
                continue
            assert (r.returncode, r.stdout, r.stderr) == (2, "", said)
    finally:
        swap.kill()
        swap.wait()
    assert hashlib.sha256(victim.read_bytes()).hexdigest() == hashlib.sha256(b"V" * (2 << 20)).hexdigest()
    assert not (open_dir / "rep").exists()
