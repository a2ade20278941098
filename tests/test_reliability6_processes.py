"""The sixth reliability campaign, processes side (docs/reliability-6-processes.md): each test repeats an attack that
broke, as the attack did it (a real second user, a real signal)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest
from conftest import ROOT
from test_processes import project  # noqa: F401  (the fixture: a project of two notebooks and one fio log)
from test_reliability4 import ROOT_ONLY, _fill, _tmpfs
from test_reliability5_processes import GiB_KiB, _as_user, _env, _lab_fio_with_its_jobs_running, _limit, _marked, _name

USER = "storagelab-rel5"  # an unprivileged user made by the fifth campaign's test (useradd) when missing


@pytest.fixture
def shared_tmp():
    """A folder under /tmp the second user can enter (pytest's tmp_path is 0700), removed after the test."""
    if subprocess.run(["id", USER], capture_output=True).returncode:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", USER], check=True)
    folder = Path(tempfile.mkdtemp(prefix="storagelab-rel6-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.mark.e2e
def test_lab_refuses_a_target_folder_another_user_can_plant_symlinks_in(shared_tmp):
    """Attack: a second, unprivileged user plants `write-4k-qd1-nj1.0.0 -> a 2 MiB root-only file` in a world-writable
    (1777) --target, and one in a folder of their own; `lab fio --target` there, run as root, opened fio's test file
    through the symlink and overwrote the first MiB of the root file with fio's data (exit 0). Now both folders are
    refused in one line before anything runs, for bonnie too, and the root file is untouched."""
    shared = shared_tmp / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = shared_tmp / "victim.bin"
    victim.write_bytes(b"V" * (2 << 20))  # larger than --size: fio writes into it rather than laying it out anew
    victim.chmod(0o600)
    link = f"ln -s {shlex.quote(str(victim))} "
    plant = link + shlex.quote(str(shared / "write-4k-qd1-nj1.0.0"))
    plant += f" && mkdir -m 755 {shlex.quote(str(shared / 'theirs'))} && "
    plant += link + shlex.quote(str(shared / "theirs" / "write-4k-qd1-nj1.0.0"))
    subprocess.run(["/bin/sh", "-c", plant], check=True, preexec_fn=_as_user(USER))
    fio = ["lab", "fio", "--rw", "write", "--depth-jobs", "1x1", "--size", "1M", "--runtime", "1"]
    bonnie = ["lab", "bonnie", "--size", "16M", "--files", "0"]
    for args, target, why in (
        (fio, shared, "can be written by every user (mode drwxrwxrwt)"),
        (fio, shared / "theirs", "is another user's (mode drwxr-xr-x)"),
        (bonnie, shared, "can be written by every user (mode drwxrwxrwt)"),
    ):
        r = subprocess.run(
            [sys.executable, "-m", "storagelab", *args, "--target", str(target), "--out", str(shared_tmp / "out"),
             "--no-ingest"],
            capture_output=True, text=True, env=_env(),
        )  # fmt: skip
        name = "fio's test files (<run>.0.0)" if args is fio else "bonnie++'s work folder (.storagelab-bonnie)"
        assert (r.returncode, r.stdout, r.stderr) == (
            2,
            "",
            f"storagelab {args[0]} {args[1]}: --target {target} {why}: another user could put a symlink there under "
            f"the name of {name}, and have them overwrite any file you can write; give a folder of your own (e.g. a "
            "new folder under it)\n",
        )
    assert hashlib.sha256(victim.read_bytes()).hexdigest() == hashlib.sha256(b"V" * (2 << 20)).hexdigest()


def test_run_at_the_old_chart_floor_is_refused_in_one_line_not_a_dead_kernel(tmp_path):
    """Attack: `ulimit -v 69206016` (66 GiB, the floor reliability-5 set for the commands that draw charts), then
    `run 07_explore -p study homelab-mergerfs`: `failed: 07_explore: DeadKernelError: Kernel died`, exit 1 (the
    notebook's code alone under that limit: V8's 'Oilpan: CagedHeap reservation' abort); 66.5 GiB the same, 67 and
    68 GiB ran. vl-convert alone draws at 66 GiB, the kernel around it needs storagelab's own floor too. Now such a
    limit is refused in one line, exit 2, before any kernel starts (on 2 cores: 68 GiB)."""
    from storagelab import memfloor  # noqa: PLC0415

    need_kib = memfloor.floor_bytes(command="run") // 1024
    assert need_kib >= 68 * GiB_KiB if (os.cpu_count() or 1) <= 2 else need_kib > 68 * GiB_KiB
    for kib in (66 * GiB_KiB, 66 * GiB_KiB + GiB_KiB // 2):
        r = subprocess.run(
            [sys.executable, "-m", "storagelab", "run", "07_explore", "--output", str(tmp_path / "rep")],
            capture_output=True, text=True, env=_env(), preexec_fn=_limit(kib),
        )  # fmt: skip
        assert (r.returncode, r.stdout, r.stderr) == (
            2,
            "",
            f"storagelab run: the address-space limit (ulimit -v {kib}) is below the {need_kib // 1024} MiB that "
            "drawing charts needs: vl-convert's JavaScript engine (V8) reserves that much address space when it "
            "starts (not memory used), and aborts the process below it; raise the limit (ulimit -v "
            f"{need_kib}, or unlimited), or set STORAGELAB_MIN_ADDRESS_SPACE=MiB to try a lower floor\n",
        )
    assert not (tmp_path / "rep").exists()


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
def test_a_closed_terminal_stops_lab_fio_and_its_jobs(tmp_path):
    """Attack: `lab fio --depth-jobs 2x2` in a session of its own, SIGHUP to its process group (the terminal closed)
    once fio's job processes run: fio's main process ended, its two jobs (parent 1) did not and held fio's stderr
    open, so the lab waited on it for ever (still there 60 s later, 3 runs of 3) and the jobs ran on. Now the lab
    kills the jobs it finds by the guard's mark at once, and ends with 129 (128 + SIGHUP)."""
    marker = f"fio-group-hup-{os.getpid()}"
    p = _lab_fio_with_its_jobs_running(tmp_path, marker, subprocess.PIPE)
    os.killpg(p.pid, signal.SIGHUP)
    try:
        out, err = p.communicate(timeout=30)  # the pipes too: a job left holding them would keep them open
    finally:
        left = [(q.pid, n) for q in _marked(marker) if (n := _name(q)) is not None]
        for q in _marked(marker):
            with contextlib.suppress(psutil.Error):
                q.kill()
    assert (p.returncode, err, left) == (128 + signal.SIGHUP, b"", [])
    lines = out.decode().splitlines()
    assert lines[-2] == "interrupted: randread-4k-qd2-nj2 discarded; 0 completed runs kept (a re-run resumes)"
    assert lines[-1].startswith("lab fio: 0 files from 0 runs in ") and lines[-1].endswith("s; nothing new to label")


@pytest.mark.e2e
def test_build_whose_reader_went_away_says_it_did_not_finish(project, tmp_path):  # noqa: F811
    """Attack: `build | head -1`: head ends after the ingest's line, and build, at its next line, stopped quietly
    with exit 0 and no report built (ten seconds for what takes minutes). Now it says so on stderr and ends 141,
    as a writer killed by SIGPIPE; a command that only prints (parse) still ends 0."""
    cmd = f"{shlex.quote(sys.executable)} -m storagelab build | head -1; echo rc=${{PIPESTATUS[0]}} >&2"
    r = subprocess.run(
        ["bash", "-c", cmd], capture_output=True, text=True, env=dict(_env(), STORAGELAB_ROOT=str(project)),
        cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert r.stdout.startswith("ingested 1 (of which 0 replaced), skipped 0 unchanged, failed 0; ")
    assert r.stderr.splitlines()[-2:] == [
        "storagelab build: stopped unfinished: the program reading its output ended (| head?); run it again with "
        "its output on the terminal, in a file, or through | tail",
        "rc=141",
    ]
    assert not (project / "reports" / "index.html").exists()


@ROOT_ONLY
def test_the_page_of_a_computed_numbers_inputs_cut_by_a_full_disk_is_not_kept(tmp_path):
    """Attack: the page of one computed number's inputs (raw/from-<hash>.html, excerpts.href_many) written onto a
    full tmpfs (8 KiB left): OSError, and the page stayed cut short (8,192 bytes) under its final name; once there
    was room again it was taken as written (a page that exists is never rewritten), the link pointing at half a page.
    reliability-4 made the one-file excerpt page whole-or-nothing; this page was written in place."""
    from storagelab.excerpts import Excerpts  # noqa: PLC0415

    log = ROOT / "data" / "raw" / "thumper-x4500" / "layout-sweep.csv"
    n = len(log.read_text().splitlines())
    inputs = [{"path": str(log), "line_start": 1, "line_end": n}, {"path": str(log), "line_start": 2, "line_end": 3}]
    with _tmpfs(tmp_path / "mnt", "64k") as mnt:
        filler = _fill(mnt, 8192)  # the page is about 17 KB
        with pytest.raises(OSError):
            Excerpts(mnt).href_many(inputs, "a + b")
        assert list((mnt / "raw").iterdir()) == []
        filler.unlink()
        href = Excerpts(mnt).href_many(inputs, "a + b")
        assert (mnt / href).read_text().endswith("</body></html>")
