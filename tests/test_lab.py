"""storagelab lab fio|bonnie|zfs-sweep: the smoke preset and bonnie++ run for real (when the tools are
installed: Debian packages fio and bonnie++), the ZFS sweep in its dry-run form."""

from __future__ import annotations

import argparse
import csv
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import RAW, ROOT

from storagelab import lab
from storagelab.manifest import load as load_manifest

ENV = dict(os.environ)


def _cli(*args: str, cwd=None, **env_vars: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), **env_vars)
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300
    )


def _lab_process(args: list[str], **popen) -> subprocess.Popen:
    """`storagelab ARGS` running, its output (stdout and stderr) unbuffered on p.stdout, line by line."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "storagelab", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        **popen,
    )


def _within(seconds: float, check) -> bool:
    """Poll ``check()`` every 50 ms until it is true (True) or ``seconds`` have passed (False): waits as long as
    a loaded machine needs, and no longer than an idle one does."""
    import time

    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _running(pattern: str) -> bool:
    """A process whose command line matches ``pattern`` (pgrep -f) is running."""
    return subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True).returncode == 0


def _sigterm_during_first_run(args: list[str], part: Path) -> tuple[int, str]:
    """Start `storagelab ARGS`, send it SIGTERM about a second into its first run (once the run's hidden partial
    output exists), and return its exit code and output."""
    import signal
    import time

    p, lines = _lab_process(args), []
    for line in p.stdout:
        lines.append(line)
        if line.startswith("[1/1]"):
            _within(60, part.exists)  # the benchmark has started writing its output
            time.sleep(1.0)
            p.send_signal(signal.SIGTERM)
            break
    text = "".join(lines) + p.communicate(timeout=60)[0]
    return p.returncode, text


def fio_smoke(root: Path) -> tuple[Path, Path, Path, subprocess.CompletedProcess | None]:
    """`lab fio --preset smoke` for real under ``root`` (target, out, db and the finished command; None without
    fio): half a minute of fio, started beside the rest of the suite (BACKGROUND, tests/conftest.py)."""
    target, out, db = root / "target", root / "out", root / "lab.duckdb"
    if not shutil.which("fio"):
        return target, out, db, None
    # the environment as the session started (tests beside this thread may set variables in-process)
    env = dict(ENV, PYTHONPATH=str(ROOT / "lib"))
    args = ["lab", "fio", "--preset", "smoke", "--target", str(target), "--out", str(out), "--db", str(db)]
    p = subprocess.run(
        [sys.executable, "-m", "storagelab", *args, "--device-limit", "1kB/s"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    return target, out, db, p


def bonnie_runs(root: Path) -> dict:
    """bonnie++ for real under ``root`` (32 MiB, no file tests): one run, what it left (its output and the manifest
    copied, the database's files and result count), then --repeat 2 of the same command and a run on another
    target. Self-contained: started beside the suite (BACKGROUND, tests/conftest.py); None without bonnie++."""
    if not shutil.which("bonnie++"):
        return None
    target, out, db = root / "target", root / "out", root / "lab.duckdb"
    env = dict(ENV, PYTHONPATH=str(ROOT / "lib"))

    def cli(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "storagelab", *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)

    args = ["lab", "bonnie", "--out", str(out), "--db", str(db), "--size", "32M", "--files", "0"]
    runs = dict(target=target, out=out, db=db, first=cli(*args, "--target", str(target)))
    runs["first_saved"], runs["first_manifest"] = root / "first-run.txt", root / "first-manifest.csv"
    for src, dest in ((out / "bonnie-32m-n0.txt", runs["first_saved"]), (out / "manifest.csv", runs["first_manifest"])):
        if src.exists():
            shutil.copyfile(src, dest)
    if db.exists():
        con = duckdb.connect(str(db), read_only=True)
        files = con.execute("SELECT tool, label FROM files").fetchall()
        runs["first_db"] = (files, con.execute("SELECT count(*) FROM bonnie_results").fetchone()[0])
        con.close()
    runs["again"] = cli(*args, "--target", str(target), "--repeat", "2")
    runs["other"] = cli(*args, "--target", str(root / "elsewhere"))
    return runs


BACKGROUND = [fio_smoke, bonnie_runs]


def _fstype(path: Path) -> str | None:
    out = subprocess.run(["findmnt", "-no", "FSTYPE", "-T", str(path)], capture_output=True, text=True)
    return out.stdout.strip() or None


@pytest.mark.e2e
@pytest.mark.skipif(
    not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio); ./run test installs it"
)
def test_lab_fio_smoke_for_real(background, tmp_path):
    target, out, db, p = background(fio_smoke)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "[1/4] randread-4k-qd1-nj1: 3 left after this" in p.stdout
    assert "[4/4] write-4k-qd2-nj2: 0 left after this" in p.stdout
    runs = ["randread-4k-qd1-nj1", "randread-4k-qd2-nj2", "write-4k-qd1-nj1", "write-4k-qd2-nj2"]
    version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    for run in runs:
        text = (out / f"{run}.txt").read_text()
        assert f'"fio version" : "{version}"' in text and "Run status group 0" in text  # JSON+ and normal
        nj = int(run[-1])
        for kind in ("bw", "iops", "lat", "clat"):
            for n in range(1, nj + 1):
                assert (out / f"{run}_{kind}.{n}.log").stat().st_size > 0
        assert (out / f"{run}_clat_hist.1.log").exists()
    assert not list(target.iterdir())  # fio's data files are deleted (unlink=1)
    assert not [f for f in out.iterdir() if f.stat().st_size == 0]  # empty logs are not kept

    # one manifest row per file, labelled from the system
    manifest = load_manifest(out / "manifest.csv")
    files = sorted(f.name for f in out.iterdir() if f.name != "manifest.csv")
    assert sorted(manifest.rows) == files
    row = manifest.rows["write-4k-qd2-nj2_bw.2.log"]
    assert row["host"] == socket.gethostname() and row["study"] == "lab" and row["label"] == "write-4k-qd2-nj2"
    assert row["stack"] == _fstype(target)
    assert f"fio_version={version.removeprefix('fio-')}" in row["notes"]
    assert "logical_sector_bytes=" in row["notes"] and "physical_sector_bytes=" in row["notes"]
    assert "rotational=" in row["notes"] and "kernel=" in row["notes"]
    assert row["ram_bytes"] == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")  # its own column, bytes
    # below RAM: a cache flag, unless O_DIRECT goes around the page cache there (any filesystem but ZFS < 2.3)
    direct_bypasses = row["stack"] not in (None, "zfs") or (row.get("zfs_version") or "0") >= "2.3"
    assert ("sanity: file size 16777216 B below RAM" in row["notes"]) != direct_bypasses, row["notes"]
    assert (
        "sanity: write at " in row["notes"] and "faster than the devices can deliver (1000 B/s): cache" in row["notes"]
    )
    assert row["device_limit_bytes_per_s"] == 1000.0
    assert row["command"].startswith("fio --name=write-4k-qd2-nj2 ") and "--numjobs=2" in row["command"]

    # ingested with the labels, logs as time series
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM files").fetchone()[0] == len(files)
    assert con.execute("SELECT count(*) FROM ingest_errors").fetchone()[0] == 0
    assert con.execute("SELECT count(DISTINCT host) FROM files").fetchone() == (1,)
    series = con.execute("""
        SELECT f.label, l.job_index, count(*), min(l.time_ns), bool_and(l.windowed)
        FROM fio_log_samples l JOIN files f USING (file_id) WHERE l.kind = 'bw' GROUP BY ALL ORDER BY ALL""").fetchall()
    assert [s[:2] for s in series] == [
        ("randread-4k-qd1-nj1", 1),
        ("randread-4k-qd2-nj2", 1),
        ("randread-4k-qd2-nj2", 2),
        ("write-4k-qd1-nj1", 1),
        ("write-4k-qd2-nj2", 1),
        ("write-4k-qd2-nj2", 2),
    ]
    assert all(s[2] >= 4 and s[4] for s in series)  # 2 s at log_avg_msec=250
    assert con.execute("SELECT count(*) FROM fio_hist_samples").fetchone()[0] > 0
    jobs = con.execute(
        "SELECT f.label, j.numjobs, j.iodepth FROM fio_jobs j JOIN files f USING (file_id) ORDER BY 1"
    ).fetchall()
    assert jobs == [
        ("randread-4k-qd1-nj1", 1, 1),
        ("randread-4k-qd2-nj2", 2, 2),
        ("write-4k-qd1-nj1", 1, 1),
        ("write-4k-qd2-nj2", 2, 2),
    ]
    con.close()

    # a re-run resumes: nothing left to do
    again = _cli("lab", "fio", "--preset", "smoke", "--target", str(target), "--out", str(out), "--db", str(db))
    assert again.returncode == 0 and "4 of 4 runs already saved" in again.stdout
    assert len(load_manifest(out / "manifest.csv").rows) == len(files)

    # in notebook 08's report: every run against its depth with its percentiles, its logs over time, its histogram
    rep = tmp_path / "report"
    nb = _cli("run", "08_fio", "-p", "study", "lab", "-p", "db_path", str(db), "--output", str(rep))
    assert nb.returncode == 0, nb.stderr[-3000:]
    page = (rep / "08_fio.html").read_text()
    for run in runs:
        assert f"{run} bw {'read' if run.startswith('randread') else 'write'}: " in page  # its time series finding
        assert f"{run}" in page and f"QD {run[-5]} x {run[-1]}: " in page
    assert page.count("p50/p99/p99.9 ") >= 4
    assert (
        "4 from fio&#x27;s JSON+ completion latency bins" in page
        or "4 from fio's JSON+ completion latency bins" in page
    )
    figures = sorted(p.name for p in (rep / "figures").rglob("*.svg"))
    assert figures == [
        "iodepth-numjobs-grid.svg",
        "iops-latency-vs-depth.svg",
        "latency-histograms.svg",
        "time-series.svg",
    ]
    series = json.loads(next((rep / "figures").rglob("time-series.vl.json")).read_text())
    panels = {d["panel"] for d in next(iter(series["datasets"].values()))}
    # 2 s smoke runs carry the design checks' mark in their panel titles: too short to measure a sustained rate (on a
    # loaded machine a run's log may also dip, and its mark then names that too: '⚠ short, dips')
    for run in runs:
        title = f"{run} bw {'read' if run.startswith('randread') else 'write'} (MiB/s) ⚠ "
        marks = [p.removeprefix(title).split(", ") for p in panels if p.startswith(title)]
        assert len(marks) == 1 and "short" in marks[0], (run, sorted(panels))


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("bonnie++"), reason="bonnie++ is not installed (Debian: apt-get install bonnie++)")
def test_lab_bonnie_for_real(background):
    runs = background(bonnie_runs)
    target, out, db, p = runs["target"], runs["out"], runs["db"], runs["first"]
    assert p.returncode == 0, p.stdout + p.stderr
    saved = runs["first_saved"]  # bonnie-32m-n0.txt and the manifest as the first run left them
    assert "Version" in saved.read_text()
    row = load_manifest(runs["first_manifest"]).rows["bonnie-32m-n0.txt"]
    assert row["host"] == socket.gethostname() and row["stack"] == _fstype(target)
    assert "file_size_bytes=33554432" in row["notes"] and "below 2 x RAM" in row["notes"]
    assert "bonnie++_version=" in row["notes"]
    assert row["command"].startswith("bonnie++ -d ") and " -s 32 -r 16 -n 0 " in row["command"]
    files, results = runs["first_db"]  # the database's answers after the first run
    assert files == [("bonnie++", "bonnie++ 32 MiB")]
    assert results >= 1

    # --repeat 2 of the same command: one saved, one more run; another target: kept apart, not taken as done
    again, other = runs["again"], runs["other"]
    assert again.returncode == 0, again.stdout + again.stderr
    assert "lab bonnie: 1 of 2 runs already saved" in again.stdout and "> bonnie-32m-n0-2.txt" in again.stdout
    assert other.returncode == 0, other.stdout + other.stderr
    assert f"lab bonnie: bonnie-32m-n0.txt in {out} was made by another command" in other.stdout
    assert "> bonnie-32m-n0-3.txt" in other.stdout
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT label FROM files ORDER BY 1").fetchall() == [
        ("bonnie++ 32 MiB",),
        ("bonnie++ 32 MiB (run 2)",),
        ("bonnie++ 32 MiB [bonnie-32m-n0-3]",),  # another target: not a repeat of the two above
    ]
    assert con.execute("SELECT label FROM files WHERE command LIKE '%/elsewhere/.storagelab-bonnie %'").fetchall() == [
        ("bonnie++ 32 MiB [bonnie-32m-n0-3]",)
    ]
    con.close()


def test_smoke_commands_exact(tmp_path):
    runs = lab.build_runs(lab.PRESETS["smoke"], target=Path("/t"), out=Path("/o"))
    assert [r.run_id for r in runs] == [
        "randread-4k-qd1-nj1",
        "randread-4k-qd2-nj2",
        "write-4k-qd1-nj1",
        "write-4k-qd2-nj2",
    ]
    assert runs[1].argv == [
        "fio",
        "--name=randread-4k-qd2-nj2",
        "--directory=/t",
        "--rw=randread",
        "--bs=4k",
        "--size=8M",
        "--ioengine=libaio",
        "--iodepth=2",
        "--numjobs=2",
        "--direct=1",
        "--runtime=2",
        "--time_based",
        "--group_reporting",
        "--unlink=1",
        "--write_bw_log=/o/randread-4k-qd2-nj2",
        "--write_iops_log=/o/randread-4k-qd2-nj2",
        "--write_lat_log=/o/randread-4k-qd2-nj2",
        "--log_avg_msec=250",
        "--write_hist_log=/o/randread-4k-qd2-nj2",
        "--log_hist_msec=500",
        "--lat_percentiles=1",
        "--output-format=normal,json+",
    ]
    home = lab.build_runs(lab.PRESETS["homelab-seq-write"], target=Path("/t"), out=Path("/o"))
    assert [r.run_id for r in home] == ["write-1m-qd8-nj8"]
    assert "--size=16G" in home[0].argv and "--runtime=60" in home[0].argv and "--log_avg_msec=500" in home[0].argv
    assert "--filename=write-1m-qd8-nj8.data" in home[0].argv and home[0].shared_file  # one file, as the study did
    assert not any(a.startswith("--filename") for a in runs[1].argv) and not runs[1].shared_file
    assert [r.run_id for r in lab.build_runs(lab.PRESETS["ars-1m"], target=Path("/t"), out=Path("/o"))] == [
        "randread-1m-qd1-nj1",
        "randread-1m-qd8-nj8",
        "randwrite-1m-qd1-nj1",
        "randwrite-1m-qd8-nj8",
    ]
    custom = lab.build_runs(
        lab.PRESETS["smoke"],
        target=Path("/t"),
        out=Path("/o"),
        rw=["read"],
        bs=["1M", "64k"],
        depth_jobs=[(4, 1)],
        filename="shared",
    )
    assert [r.run_id for r in custom] == ["read-1m-qd4-nj1", "read-64k-qd4-nj1"]
    assert "--filename=shared" in custom[0].argv


def test_lab_fio_dry_run_prints_commands(tmp_path):
    p = _cli(
        "lab",
        "fio",
        "--preset",
        "ars-4k",
        "--target",
        "/mnt/x",
        "--out",
        str(tmp_path),
        "--dry-run",
        "--depth-jobs",
        "8x8",
        "--rw",
        "randwrite",
        "--size",
        "1G",
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        f"fio --name=randwrite-4k-qd8-nj8 --directory=/mnt/x --rw=randwrite --bs=4k --size=1G --ioengine=libaio "
        f"--iodepth=8 --numjobs=8 --direct=1 --runtime=60 --time_based --group_reporting --unlink=1 "
        f"--write_bw_log={tmp_path}/randwrite-4k-qd8-nj8 --write_iops_log={tmp_path}/randwrite-4k-qd8-nj8 "
        f"--write_lat_log={tmp_path}/randwrite-4k-qd8-nj8 --log_avg_msec=500 "
        f"--write_hist_log={tmp_path}/randwrite-4k-qd8-nj8 --log_hist_msec=1000 --lat_percentiles=1 --output-format=normal,json+"
    ]
    assert not list(tmp_path.iterdir())


def test_zfs_sweep_dry_run_exact_commands(tmp_path):
    p = _cli(
        "lab",
        "zfs-sweep",
        "--disks",
        "/dev/sdx,/dev/sdy,/dev/sdz,/dev/sdw",
        "--out",
        str(tmp_path),
        "--recordsizes",
        "4K",
        "--size",
        "1G",
        "--runtime",
        "10",
    )
    assert p.returncode == 0, p.stderr
    assert "dry run: nothing was run" in p.stderr and "/dev/sdx, /dev/sdy, /dev/sdz, /dev/sdw" in p.stderr
    lines = p.stdout.splitlines()
    create = "zpool create -f -o ashift=12 -O compression=off -O atime=off -m /labsweep labsweep"
    assert [ln for ln in lines if ln.startswith(("#", "zpool"))] == [
        "# single-1x1",
        f"{create} /dev/sdx",
        "zpool destroy labsweep",
        "# single-2x1",
        f"{create} /dev/sdx /dev/sdy",
        "zpool destroy labsweep",
        "# single-3x1",
        f"{create} /dev/sdx /dev/sdy /dev/sdz",
        "zpool destroy labsweep",
        "# single-4x1",
        f"{create} /dev/sdx /dev/sdy /dev/sdz /dev/sdw",
        "zpool destroy labsweep",
        "# mirror-1x2",
        f"{create} mirror /dev/sdx /dev/sdy",
        "zpool destroy labsweep",
        "# mirror-2x2",
        f"{create} mirror /dev/sdx /dev/sdy mirror /dev/sdz /dev/sdw",
        "zpool destroy labsweep",
        "# raidz1-1x3",
        f"{create} raidz1 /dev/sdx /dev/sdy /dev/sdz",
        "zpool destroy labsweep",
        "# raidz1-1x4",
        f"{create} raidz1 /dev/sdx /dev/sdy /dev/sdz /dev/sdw",
        "zpool destroy labsweep",
        "# raidz2-1x4",
        f"{create} raidz2 /dev/sdx /dev/sdy /dev/sdz /dev/sdw",
        "zpool destroy labsweep",
    ]
    first = lines[: lines.index("# single-2x1")]
    out = tmp_path / "zfs-sweep" / "single-1x1" / "rs4k"
    fio = [ln for ln in first if ln.startswith("fio ")]
    assert first[2:4] == ["zfs create labsweep/rs4k", "zfs set recordsize=4K labsweep/rs4k"]
    assert len(fio) == 4  # ars-4k: randread/randwrite x (1x1, 8x8)
    assert fio[3] == (
        f"fio --name=randwrite-4k-qd8-nj8 --directory=/labsweep/rs4k --rw=randwrite --bs=4k --size=1G "
        f"--ioengine=libaio --iodepth=8 --numjobs=8 --direct=1 --runtime=10 --time_based --group_reporting "
        f"--unlink=1 --write_bw_log={out}/randwrite-4k-qd8-nj8 --write_iops_log={out}/randwrite-4k-qd8-nj8 "
        f"--write_lat_log={out}/randwrite-4k-qd8-nj8 --log_avg_msec=500 --write_hist_log={out}/randwrite-4k-qd8-nj8 "
        f"--log_hist_msec=1000 --lat_percentiles=1 --output-format=normal,json+"
    )


def test_zfs_sweep_default_recordsizes_and_presets(tmp_path):
    plan = lab.sweep_plan(["a", "b"], out=tmp_path)
    assert [p["name"] for p in plan] == ["single-1x1", "single-2x1", "mirror-1x2"]
    steps = [a for kind, a in plan[0]["steps"] if kind == "zfs"]
    assert steps == [
        ["zfs", "create", "labsweep/rs4k"],
        ["zfs", "set", "recordsize=4K", "labsweep/rs4k"],
        ["zfs", "create", "labsweep/rs128k"],
        ["zfs", "set", "recordsize=128K", "labsweep/rs128k"],
        ["zfs", "create", "labsweep/rs1m"],
        ["zfs", "set", "recordsize=1M", "labsweep/rs1m"],
    ]
    bs = {rs: sorted({r.bs for r in runs}) for rs, _ds, _o, runs in plan[0]["runs"]}
    assert bs == {"4K": ["4k"], "128K": ["1M", "4k"], "1M": ["1M"]}


def test_zfs_sweep_runs_nothing_without_yes(tmp_path, monkeypatch):
    called = []
    monkeypatch.setattr(lab.subprocess, "run", lambda *a, **k: called.append(a))
    assert lab.main(["zfs-sweep", "--disks", "/dev/sdx", "--out", str(tmp_path)]) == 0
    assert called == []


def _fake_zfs(calls, fail=None):
    def fake_run(argv, check=False, **kw):
        calls.append(list(argv))
        if fail and argv[: len(fail)] == fail:
            if check:
                raise subprocess.CalledProcessError(1, argv)
            return subprocess.CompletedProcess(argv, 1)
        return subprocess.CompletedProcess(argv, 0)

    return fake_run


def test_zfs_sweep_destroys_the_pool_and_stops_when_a_step_fails(tmp_path, monkeypatch):
    calls, said = [], []
    monkeypatch.setattr(lab.subprocess, "run", _fake_zfs(calls, fail=["zfs", "set"]))
    plan = lab.sweep_plan(["/dev/sdx", "/dev/sdy"], out=tmp_path, recordsizes=("4K",))
    assert lab.run_sweep(plan, pool="labsweep", ashift=12, db=None, log=said.append) == 1
    assert calls == [
        plan[0]["steps"][0][1],
        ["zfs", "create", "labsweep/rs4k"],
        ["zfs", "set", "recordsize=4K", "labsweep/rs4k"],
        ["zpool", "destroy", "labsweep"],
    ]  # no second layout
    assert said[1:] == [
        "sweep: single-1x1: zfs set recordsize=4K labsweep/rs4k failed (status 1): sweep stopped",
        "sweep: single-1x1: zpool destroy labsweep",
    ]


def test_zfs_sweep_stops_when_zpool_create_or_destroy_fails(tmp_path, monkeypatch):
    plan = lab.sweep_plan(["/dev/sdx", "/dev/sdy"], out=tmp_path, recordsizes=("4K",))
    calls, said = [], []
    monkeypatch.setattr(lab.subprocess, "run", _fake_zfs(calls, fail=["zpool", "create"]))
    assert lab.run_sweep(plan, pool="labsweep", ashift=12, db=None, log=said.append) == 1
    assert calls == [plan[0]["steps"][0][1]]  # a pool it did not create is not destroyed
    assert said[-1] == "sweep: single-1x1: zpool create failed (status 1): sweep stopped, nothing to destroy"
    calls.clear(), said.clear()
    monkeypatch.setattr(lab.subprocess, "run", _fake_zfs(calls, fail=["zpool", "destroy"]))
    monkeypatch.setattr(lab.sweep, "run_fio_matrix", lambda runs, **kw: 0)
    assert lab.run_sweep(plan, pool="labsweep", ashift=12, db=None, log=said.append) == 1
    assert calls[-1] == ["zpool", "destroy", "labsweep"] and len([c for c in calls if c[1] == "create"]) == 2
    assert said[-1] == "sweep: single-1x1: zpool destroy labsweep failed (status 1): destroy it by hand"


def test_zfs_sweep_ctrl_c_stops_the_sweep(tmp_path, monkeypatch):
    """Ctrl-C during a fio run (run_fio_matrix returns 130) ends the sweep after destroying the pool."""
    calls, said, matrices = [], [], []
    monkeypatch.setattr(lab.subprocess, "run", _fake_zfs(calls))
    monkeypatch.setattr(lab.sweep, "run_fio_matrix", lambda runs, **kw: matrices.append(kw["labels"]) or 130)
    plan = lab.sweep_plan(["/dev/sdx", "/dev/sdy"], out=tmp_path)
    assert lab.run_sweep(plan, pool="labsweep", ashift=12, db=None, log=said.append) == 130
    assert matrices == [
        dict(vdev_type="single", vdev_count=1, vdev_width=1, recordsize_bytes=4096, ashift=12, pool="labsweep")
    ]
    assert [c[:2] for c in calls] == [["zpool", "create"], ["zfs", "create"], ["zfs", "set"], ["zpool", "destroy"]]
    assert said[-1] == "sweep: single-1x1: zpool destroy labsweep"
    # KeyboardInterrupt outside fio (during a zfs command): the same
    calls.clear()

    def interrupted(argv, check=False, **kw):
        calls.append(list(argv))
        if argv[:2] == ["zfs", "create"]:
            raise KeyboardInterrupt
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(lab.subprocess, "run", interrupted)
    assert lab.run_sweep(plan, pool="labsweep", ashift=12, db=None, log=said.append) == 130
    assert calls[-1] == ["zpool", "destroy", "labsweep"] and len(calls) == 3


def test_zfs_sweep_resumes_without_recreating_finished_layouts(tmp_path, monkeypatch):
    plan = lab.sweep_plan(["/dev/sdx", "/dev/sdy"], out=tmp_path, recordsizes=("4K",))
    for _rs, _ds, run_out, runs in plan[0]["runs"]:  # the first layout's runs saved, as run_fio_matrix saves them
        run_out.mkdir(parents=True)
        for r in runs:
            (run_out / f"{r.run_id}.txt").write_text("saved")
        lab.append_manifest(
            run_out / "manifest.csv", [{"path": f"{r.run_id}.txt", "command": shlex.join(r.argv)} for r in runs]
        )
    calls, said = [], []
    monkeypatch.setattr(lab.subprocess, "run", _fake_zfs(calls))
    monkeypatch.setattr(lab.sweep, "run_fio_matrix", lambda runs, **kw: 0)
    assert lab.run_sweep(plan, pool="labsweep", ashift=12, db=None, log=said.append) == 0
    assert said[0] == "sweep: single-1x1: every run already saved: skipped (resume)"
    assert [c for c in calls if c[1] == "create" and c[0] == "zpool"] == [
        plan[1]["steps"][0][1],
        plan[2]["steps"][0][1],
    ]


def test_rates_and_cache_flags():
    assert lab._rate("900MB/s") == 9e8 and lab._rate("550MiB/s") == 550 * 2**20 and lab._rate("1kB/s") == 1000.0
    assert lab._rate("900mb/s") == 9e8 and lab._rate("123456B/s") == 123456.0 and lab._rate("1.5GiB") == 1.5 * 2**30
    with pytest.raises(argparse.ArgumentTypeError):
        lab._rate("fast")
    fixture = ROOT / "tests" / "fixtures" / "fio" / "3.33" / "logs" / "avg.txt"  # 2 jobs at 4 MiB/s: 8380228 B/s
    assert lab.cache_flags(fixture, 8_000_000) == [
        "write at 8380228 B/s, faster than the devices can deliver (8000000 B/s): cache"
    ]
    assert lab.cache_flags(fixture, 9_000_000) == [] and lab.cache_flags(fixture, None) == []


def test_sanity_flags():
    zfs = {"fstype": "zfs", "zfs_version": "2.1.5"}
    flags = lab.sanity_flags(target_info=zfs, direct=1, total_bytes=8 << 30, ram=16 << 30, numjobs=8, shared_file=True)
    assert flags == [
        "direct I/O on ZFS 2.1.5 (< 2.3): O_DIRECT is ignored or refused, I/O goes through the ARC",
        f"file size {8 << 30} B below RAM ({16 << 30} B): reads may come from the page cache/ARC",
        "numjobs=8 share one file: the jobs contend for the same blocks",
    ]
    assert (
        lab.sanity_flags(
            target_info={"fstype": "zfs", "zfs_version": "2.3.0"},
            direct=1,
            total_bytes=64 << 30,
            ram=16 << 30,
            numjobs=8,
            shared_file=False,
        )
        == []
    )
    assert (
        lab.sanity_flags(target_info={"fstype": "ext4"}, direct=1, total_bytes=1, ram=0, numjobs=1, shared_file=True)
        == []
    )
    # O_DIRECT goes around the page cache on ext4 and on ZFS >= 2.3: a file below RAM is no cache flag there; the
    # same file buffered, on ZFS 2.1, or where the filesystem is not known, is
    small = dict(total_bytes=16 << 20, ram=16 << 30, numjobs=1, shared_file=False, rw="write")
    assert lab.sanity_flags(target_info={"fstype": "ext4"}, direct=1, **small) == []
    assert lab.sanity_flags(target_info={"fstype": "zfs", "zfs_version": "2.3.1"}, direct=1, **small) == []
    below = f"file size {16 << 20} B below RAM ({16 << 30} B): writes may be absorbed by the page cache/ARC and counted"
    for info, direct in (({"fstype": "ext4"}, 0), ({"fstype": "zfs", "zfs_version": "2.1.5"}, 1), ({}, 1)):
        assert any(f.startswith(below) for f in lab.sanity_flags(target_info=info, direct=direct, **small)), info


def test_append_manifest_keeps_existing_rows(tmp_path):
    m = tmp_path / "manifest.csv"
    assert lab.append_manifest(m, [{"path": "a.txt", "host": "h", "notes": "x, y; z"}]) == 1
    assert lab.append_manifest(m, [{"path": "a.txt", "host": "other"}, {"path": "b.txt", "label": "B"}]) == 1
    rows = load_manifest(m).rows
    assert rows["a.txt"]["host"] == "h" and rows["a.txt"]["notes"] == "x, y; z" and rows["b.txt"]["label"] == "B"
    with open(m, newline="") as fh:
        assert len(list(csv.reader(fh))) == 3
    with pytest.raises(ValueError):
        lab.append_manifest(m, [{"path": "c.txt", "nonsense": 1}])


def test_manifest_goes_to_data_raw_for_output_under_it(tmp_path):
    from storagelab import paths

    assert lab.manifest_for(paths.RAW / "lab" / "h" / "2026-01-01") == paths.MANIFEST
    assert lab.manifest_for(tmp_path / "x") == tmp_path / "x" / "manifest.csv"


def test_plain_lab_is_still_jupyterlab(monkeypatch):
    from storagelab import cli

    seen = []
    monkeypatch.setattr(cli, "cmd_lab", lambda args: seen.append(args.extra) or 0)
    cli.main(["lab", "--no-browser"])
    assert seen == [["--no-browser"]]


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
def test_lab_fio_ctrl_c_keeps_completed_runs_and_resumes(tmp_path):
    import signal
    import time

    target, out, db = tmp_path / "target", tmp_path / "out", tmp_path / "lab.duckdb"
    args = [
        "lab",
        "fio",
        "--preset",
        "smoke",
        "--rw",
        "write",
        "--depth-jobs",
        "1x1,2x2",
        "--runtime",
        "2",
        "--target",
        str(target),
        "--out",
        str(out),
        "--db",
        str(db),
    ]
    # its own process group, as a terminal's Ctrl-C reaches python and fio together
    p, lines = _lab_process(args, start_new_session=True), []
    for line in p.stdout:
        lines.append(line)
        if line.startswith("[2/2]"):
            assert _within(60, lambda: _running(f"--name=write-4k-qd2-nj2 --directory={target}")), "run 2 never ran"
            time.sleep(1.0)  # fio of run 2 is running
            os.killpg(p.pid, signal.SIGINT)
            break
    rest = p.communicate(timeout=180)[0]
    text = "".join(lines) + rest
    assert p.returncode == 130, text
    assert "interrupted: write-4k-qd2-nj2 discarded; 1 completed runs kept" in text
    assert (out / "write-4k-qd1-nj1.txt").exists()
    assert not list(out.glob("write-4k-qd2-nj2*"))
    rows = load_manifest(out / "manifest.csv").rows
    assert rows and all(r.startswith("write-4k-qd1-nj1") for r in rows)
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT DISTINCT label FROM files").fetchall() == [("write-4k-qd1-nj1",)]
    con.close()
    again = _cli(*args)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 of 2 runs already saved" in again.stdout and "[1/1] write-4k-qd2-nj2" in again.stdout
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT DISTINCT label FROM files ORDER BY 1").fetchall() == [
        ("write-4k-qd1-nj1",),
        ("write-4k-qd2-nj2",),
    ]
    con.close()


# `zpool status -P` as OpenZFS 2.x prints it (CONSTRUCTED: ZFS cannot run on the test host; the layout
# follows cmd/zpool/zpool_main.c print_status_config: a tab, then two spaces per level)
STATUS = """  pool: tank
 state: ONLINE
config:

\tNAME              STATE     READ WRITE CKSUM
\ttank              ONLINE       0     0     0
\t  raidz2-0        ONLINE       0     0     0
\t    /dev/sda1     ONLINE       0     0     0
\t    /dev/sdb1     ONLINE       0     0     0
\t    /dev/sdc1     ONLINE       0     0     0
\t    /dev/sdd1     ONLINE       0     0     0
\t  raidz2-1        ONLINE       0     0     0
\t    /dev/sde1     ONLINE       0     0     0
\t    /dev/sdf1     ONLINE       0     0     0
\t    /dev/sdg1     ONLINE       0     0     0
\t    /dev/sdh1     ONLINE       0     0     0
\tlogs
\t  mirror-2        ONLINE       0     0     0
\t    /dev/nvme0n1p1  ONLINE     0     0     0
\t    /dev/nvme1n1p1  ONLINE     0     0     0
\tcache
\t  /dev/nvme0n1p2  ONLINE       0     0     0
\tspares
\t  /dev/sdi1       AVAIL

errors: No known data errors
"""


def test_pool_layout():
    lay = lab.pool_layout(STATUS)
    assert (lay["vdev_type"], lay["vdev_count"], lay["vdev_width"]) == ("raidz2", 2, 4)
    assert lay["devices"] == [f"/dev/sd{c}1" for c in "abcdefgh"]
    assert lay["log_devices"] == ["/dev/nvme0n1p1", "/dev/nvme1n1p1"]
    assert lay["cache_devices"] == ["/dev/nvme0n1p2"]
    stripe = lab.pool_layout("config:\n\n\tNAME STATE\n\tp ONLINE\n\t  /dev/sdx ONLINE\n\t  /dev/sdy ONLINE\n")
    assert (stripe["vdev_type"], stripe["vdev_count"], stripe["vdev_width"]) == ("single", 2, 1)
    mixed = lab.pool_layout(
        "\tNAME STATE\n\tp ONLINE\n\t  mirror-0 ONLINE\n\t    a ONLINE\n\t    b ONLINE\n"
        "\t  raidz1-1 ONLINE\n\t    c ONLINE\n\t    d ONLINE\n\t    e ONLINE\n"
    )
    assert (mixed["vdev_type"], mixed["vdev_count"], mixed["vdev_width"]) == ("mixed", 2, None)
    assert lab.pool_layout("no pools available")["vdev_type"] is None
    row = lab.manifest_row(
        Path("/r/x.txt"),
        Path("/r"),
        "x",
        {"host": "h", "os": "o", "kernel": "k"},
        {"fstype": "zfs", "pool": "tank", "layout": lay, "zfs": {"recordsize": "131072"}},
        ["fio"],
        "n",
    )
    assert (row["vdev_type"], row["vdev_count"], row["vdev_width"], row["recordsize_bytes"]) == (
        "raidz2",
        2,
        4,
        "131072",
    )
    assert row["log_devices"] == "/dev/nvme0n1p1 /dev/nvme1n1p1" and row["cache_devices"] == "/dev/nvme0n1p2"


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
def test_lab_fio_failed_run_leaves_nothing_in_out(tmp_path):
    out = tmp_path / "out"
    p = _cli(
        "lab",
        "fio",
        "--preset",
        "smoke",
        "--rw",
        "write",
        "--depth-jobs",
        "1x1",
        "--ioengine",
        "nosuchengine",
        "--target",
        str(tmp_path / "t"),
        "--out",
        str(out),
        "--db",
        str(tmp_path / "db.duckdb"),
        TMPDIR=str(tmp_path),  # the failed run's output is kept in a new folder there (not left in the real /tmp)
    )
    assert p.returncode == 1, p.stdout + p.stderr
    assert [d.name for d in tmp_path.glob("storagelab-lab-failed-*/*")] == ["write-4k-qd1-nj1.txt"]
    assert (
        "fio failed" in p.stdout
        and "1 runs failed: write-4k-qd1-nj1" in p.stdout
        and "storagelab-lab-failed" in p.stdout
    )
    assert not [f for f in out.iterdir() if f.name != "manifest.csv"]


@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
@pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root: the attack is another user's symlink that root writes through"
)
def test_lab_fio_failed_run_never_writes_through_another_users_symlink(tmp_path):
    """reliability-2 high 5: a failed run's output went to $TMPDIR/storagelab-lab-failed/RUN.txt, a fixed path:
    another local user planted a symlink there and the lab, as root, overwrote its target (a 0600 file of
    root's became 0644 with fio's error text). Here the user nobody plants it, in a shared sticky /tmp folder."""
    import pwd
    import stat
    import tempfile

    nobody = pwd.getpwnam("nobody")
    shared = Path(tempfile.mkdtemp(prefix="storagelab-shared-tmp-", dir="/tmp"))
    try:
        shared.chmod(0o1777)
        secret = tmp_path / "secret"
        secret.write_text("root's\n")
        secret.chmod(0o600)
        plant = f"mkdir {shared}/storagelab-lab-failed && ln -s {secret} {shared}/storagelab-lab-failed/write-4k-qd1-nj1.txt"
        subprocess.run(
            ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups", "sh", "-c", plant],
            check=True,
        )
        assert (shared / "storagelab-lab-failed" / "write-4k-qd1-nj1.txt").is_symlink()
        assert (shared / "storagelab-lab-failed").stat().st_uid == nobody.pw_uid
        env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"), TMPDIR=str(shared))
        args = ["lab", "fio", "--preset", "smoke", "--rw", "write", "--depth-jobs", "1x1", "--ioengine", "nosuchengine"]
        args += ["--target", str(tmp_path / "t"), "--out", str(tmp_path / "out"), "--db", str(tmp_path / "db.duckdb")]
        p = subprocess.run(
            [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, timeout=300
        )
        assert p.returncode == 1, p.stdout + p.stderr
        assert secret.read_text() == "root's\n" and stat.S_IMODE(secret.stat().st_mode) == 0o600
        kept = [d for d in shared.iterdir() if d.name.startswith("storagelab-lab-failed-")]
        assert len(kept) == 1 and stat.S_IMODE(kept[0].stat().st_mode) == 0o700 and kept[0].stat().st_uid == 0
        assert [f.name for f in kept[0].iterdir()] == ["write-4k-qd1-nj1.txt"]
        assert f"output kept in {kept[0] / 'write-4k-qd1-nj1.txt'}" in p.stdout
        assert "nosuchengine" in (kept[0] / "write-4k-qd1-nj1.txt").read_text()  # fio's own words on the failure
    finally:
        shutil.rmtree(shared)


ZDB_CONFIG = ROOT / "tests" / "fixtures" / "zdb-config" / "2.1"


def test_config_ashift_from_real_zdb_C():
    assert lab.config_ashift((ZDB_CONFIG / "C-ashift12.txt").read_text()) == 12  # one top-level vdev
    nine = (ZDB_CONFIG / "C-ashift9.txt").read_text()
    assert lab.config_ashift(nine) == 9  # a mirror and a single vdev, both 9
    # derived from the real output: the second data vdev as a log device with another ashift is left out;
    # as a data vdev the two differ and no single ashift is claimed
    second = nine.index("ashift: 9", nine.index("ashift: 9") + 1)
    other = nine[:second] + "ashift: 12" + nine[second + len("ashift: 9") :]
    assert lab.config_ashift(other) is None
    assert lab.config_ashift(other.replace("is_log: 0", "is_log: 1").replace("is_log: 1", "is_log: 0", 1)) == 9
    assert lab.config_ashift("zdb: can't open 'tank': No such file or directory") is None


def test_describe_target_on_zfs_reads_ashift_from_zdb_and_l2arc_size(monkeypatch, tmp_path):
    """`zpool get ashift` says 0 (ZFS chose): the vdevs' ashift comes from zdb -C; the cache devices' sizes
    count as L2ARC in the file-size flag. (The commands' outputs: zdb's is real, zpool status CONSTRUCTED.)"""
    outputs = {
        ("findmnt", "-no"): "zfs tank/scratch rw,xattr,noacl",
        ("zfs", "get"): "recordsize\t131072\ncompression\toff\nsync\tstandard\nprimarycache\tall\natime\toff",
        ("zpool", "get"): "0",
        ("zdb", "-C"): (ZDB_CONFIG / "C-ashift9.txt").read_text(),
        ("zpool", "status"): STATUS,
        ("lsblk", "-bndo"): "256060514304",
    }
    seen = []

    def fake_cmd(argv, timeout=20):
        seen.append(argv)
        return outputs.get(tuple(argv[:2]))

    monkeypatch.setattr(lab.system, "_cmd", fake_cmd)
    monkeypatch.setattr(lab.system, "zfs_version", lambda: "2.1.11")
    info = lab.describe_target(tmp_path)
    assert info["ashift"] == 9 and ["zdb", "-C", "tank"] in seen
    assert info["l2arc_bytes"] == 256060514304 and ["lsblk", "-bndo", "SIZE", "/dev/nvme0n1p2"] in seen
    assert info["zfs"]["recordsize"] == "131072" and info["layout"]["vdev_type"] == "raidz2"
    flags = lab.sanity_flags(
        target_info=info,
        direct=0,
        total_bytes=64 << 30,
        ram=32 << 30,
        numjobs=1,
        shared_file=False,
        l2arc_bytes=info["l2arc_bytes"],
    )
    assert flags == [
        f"file size {64 << 30} B below RAM + L2ARC ({(32 << 30) + 256060514304} B): reads may come from the page "
        "cache/ARC"
    ]
    outputs[("zpool", "get")] = "12"  # set at creation: zpool get says it, zdb is not asked
    seen.clear()
    assert lab.describe_target(tmp_path)["ashift"] == 12 and not [a for a in seen if a[0] == "zdb"]


def test_run_renamed_changes_only_name_and_logs():
    run = lab.build_runs(lab.PRESETS["homelab-seq-write"], target=Path("/t"), out=Path("/o"))[0]
    two = run.renamed("write-1m-qd8-nj8-2", Path("/o"))
    assert two.run_id == "write-1m-qd8-nj8-2" and run.run_id == "write-1m-qd8-nj8"
    assert [(a, b) for a, b in zip(run.argv, two.argv, strict=True) if a != b] == [
        ("--name=write-1m-qd8-nj8", "--name=write-1m-qd8-nj8-2"),
        ("--write_bw_log=/o/write-1m-qd8-nj8", "--write_bw_log=/o/write-1m-qd8-nj8-2"),
        ("--write_iops_log=/o/write-1m-qd8-nj8", "--write_iops_log=/o/write-1m-qd8-nj8-2"),
        ("--write_lat_log=/o/write-1m-qd8-nj8", "--write_lat_log=/o/write-1m-qd8-nj8-2"),
        ("--write_hist_log=/o/write-1m-qd8-nj8", "--write_hist_log=/o/write-1m-qd8-nj8-2"),
    ]  # the shared data file keeps its name: it is fio's scratch file in the target, deleted after each run


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
def test_lab_fio_resumes_only_runs_made_by_the_same_command(tmp_path):
    """A saved run of the same id but another size is not taken for this one (it is kept, this one saved as -2);
    --repeat N saves N runs of each point."""
    target, out, db = tmp_path / "target", tmp_path / "out", tmp_path / "lab.duckdb"
    base = ["lab", "fio", "--rw", "write", "--depth-jobs", "1x1", "--runtime", "1", "--target", str(target)]
    base += ["--out", str(out), "--db", str(db)]
    first = _cli(*base, "--size", "4M")
    assert first.returncode == 0, first.stdout + first.stderr
    other = _cli(*base, "--size", "8M")
    assert other.returncode == 0, other.stdout + other.stderr
    assert other.stdout.splitlines()[:2] == [
        f"lab fio: write-4k-qd1-nj1.txt in {out} was made by another command: kept, this run gets the next id",
        "[1/1] write-4k-qd1-nj1-2: 0 left after this, about 3s to go",
    ]
    rows = load_manifest(out / "manifest.csv").rows
    assert "--size=4M" in rows["write-4k-qd1-nj1.txt"]["command"]
    assert "--size=8M" in rows["write-4k-qd1-nj1-2.txt"]["command"]
    assert "--name=write-4k-qd1-nj1-2 " in rows["write-4k-qd1-nj1-2.txt"]["command"]
    # made by another command: labelled apart, not as a repeat of the 4M run ('(run 2)' had pooled them)
    assert rows["write-4k-qd1-nj1-2_bw.1.log"]["label"] == "write-4k-qd1-nj1 [write-4k-qd1-nj1-2]"
    again = _cli(*base, "--size", "8M")
    assert again.returncode == 0 and "lab fio: 1 of 1 runs already saved" in again.stdout
    assert "[1/" not in again.stdout
    repeat = _cli(*base, "--size", "4M", "--repeat", "2")
    assert repeat.returncode == 0, repeat.stdout + repeat.stderr
    assert "lab fio: 1 of 2 runs already saved" in repeat.stdout and "[1/1] write-4k-qd1-nj1-3:" in repeat.stdout
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute(
        "SELECT f.label, j.options_json::JSON->>'size' FROM fio_jobs j JOIN files f USING (file_id) ORDER BY 1"
    ).fetchall() == [
        ("write-4k-qd1-nj1", "4M"),
        ("write-4k-qd1-nj1 (run 2)", "4M"),
        ("write-4k-qd1-nj1 [write-4k-qd1-nj1-2]", "8M"),
    ]
    con.close()
    # the two 4M runs are repeats of one configuration for the analyses (05_stacks said none was repeated)
    from storagelab.analysis import fio_runs, open_db, stacks
    from storagelab.analysis.selection import Selection

    c = open_db(db)
    rep = stacks.repeats(fio_runs.runs(c, Selection()))
    c.close()
    assert (rep["config"].to_list(), rep["n"].to_list()) == (["write-4k-qd1-nj1"], [2])
    bad = _cli(*base, "--repeat", "0")
    assert bad.returncode == 2 and "--repeat must be 1 or more" in bad.stderr


def test_a_manifest_written_before_a_column_existed_gains_it(tmp_path):
    """A manifest written before the ram_bytes column existed (data/raw/manifest.csv without it, as it was): a lab
    row grows the header by that column, every row kept as it was, and the manifest still reads."""
    from storagelab.lab import append_manifest

    m = tmp_path / "manifest.csv"
    old = (RAW / "manifest.csv").read_text().replace(",ram_bytes\n", "\n", 1)
    m.write_text(old)
    before = load_manifest(m).rows
    n = append_manifest(m, [{"path": "lab/x.txt", "study": "lab", "ram_bytes": 8 * 2**30, "notes": "a, b"}])
    assert n == 1
    lines = m.read_text().splitlines()
    assert lines[0] == old.splitlines()[0] + ",ram_bytes"
    rows = load_manifest(m).rows
    assert {k: v for k, v in rows.items() if k != "lab/x.txt"} == {
        k: {**v, "ram_bytes": None} for k, v in before.items()
    }
    assert rows["lab/x.txt"]["ram_bytes"] == 8 * 2**30 and rows["lab/x.txt"]["notes"] == "a, b"


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
def test_lab_fio_sigterm_discards_the_running_run(tmp_path):
    """kill PID (SIGTERM, as `timeout` or a service manager sends it, to storagelab only): the running fio is
    stopped and its partial output (.txt.part and logs) removed, so a later ingest never stores a cut run
    (new-user trial: it stayed and was ingested unlabelled); exit 128 + 15."""
    import signal

    target, out, db = tmp_path / "target", tmp_path / "out", tmp_path / "lab.duckdb"
    args = ["lab", "fio", "--rw", "write", "--depth-jobs", "1x1", "--runtime", "30", "--size", "4M"]
    args += ["--target", str(target), "--out", str(out), "--db", str(db)]
    rc, text = _sigterm_during_first_run(args, out / ".write-4k-qd1-nj1.txt.part")
    assert rc == 128 + signal.SIGTERM, text
    assert "interrupted: write-4k-qd1-nj1 discarded; 0 completed runs kept" in text
    assert not list(out.glob("write-4k-qd1-nj1*")) and not list(out.glob(".*part")), sorted(out.iterdir())


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--size", "4X"], "argument --size: '4X' is not a size fio takes (e.g. 4k, 512M, 64G)"),
        (["--size", "0"], "argument --size: '0' is not a size fio takes"),
        (["--bs", "4k,4q"], "argument --bs: '4q' is not a size fio takes"),
        (["--runtime", "-1"], "argument --runtime: '-1': expected a whole number of at least 1"),
        (["--runtime", "0"], "argument --runtime: '0': expected a whole number of at least 1"),
        (["--log-avg-msec", "0"], "argument --log-avg-msec: '0': expected a whole number of at least 1"),
        (["--depth-jobs", "0x1,1x0"], "argument --depth-jobs: '0x1': expected IODEPTHxNUMJOBS, each at least 1"),
        (["--rw", "banana"], "argument --rw: banana: not an fio rw mode (read, write, randread, randwrite,"),
        (["--bs", "1M", "--size", "64k"], "--size 64k is below the block size 1M: each job's file must hold"),
        (["--device-limit", "900"], "argument --device-limit: '900': expected a rate with its unit, such as 900MB/s"),
        (["--filename", "/tmp/x/y"], "--filename /tmp/x/y: a file name inside --target, without a folder"),
        (["--wait", "60"], "storagelab lab fio: error: unrecognized arguments: --wait 60"),
    ],
)
def test_lab_fio_options_checked_before_anything_runs(tmp_path, extra, message, capsys):
    """The first case through the command (a process: its exit code and its one line); the others through cli.main
    in this process, which returns (or argparse exits with) the same code and prints the same line (11 processes
    fewer: 0.45 s of CPU each; issue 28)."""
    out = tmp_path / "out"
    args = ["lab", "fio", "--preset", "smoke", "--target", str(tmp_path), "--out", str(out), *extra]
    if extra == ["--size", "4X"]:
        r = _cli(*args)
        rc, stdout, stderr = r.returncode, r.stdout, r.stderr
    else:
        from storagelab import cli

        try:
            rc = cli.main(args)
        except SystemExit as e:  # argparse's own errors
            rc = e.code
        stdout, stderr = capsys.readouterr()
    assert rc == 2 and message in stderr and "Traceback" not in stderr, stderr
    assert not out.exists() and "[1/" not in stdout


def test_lab_refuses_a_target_whose_folder_and_parent_are_missing(tmp_path):
    missing = tmp_path / "mnt" / "pol" / "scratch"  # a mistyped mount point
    for tool in ("fio", "bonnie"):
        r = _cli("lab", tool, "--target", str(missing), "--out", str(tmp_path / "out"))
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert r.stderr.strip() == (
            f"storagelab lab {tool}: --target {missing} does not exist, nor does its parent folder "
            "(a mistyped mount point?); create it on the filesystem to test"
        )
    assert not (tmp_path / "mnt").exists()
    afile = tmp_path / "file"
    afile.write_text("x")
    r = _cli("lab", "bonnie", "--target", str(afile), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and f"--target {afile} is a file, not a folder" in r.stderr


def test_cache_flag_says_what_a_cache_does_to_the_direction():
    def flag(rw):
        return lab.sanity_flags(
            target_info={"fstype": "ext4"},
            direct=0,
            total_bytes=1 << 20,
            ram=1 << 30,
            numjobs=1,
            shared_file=False,
            rw=rw,
        )[0].split(": ", 1)[1]

    assert flag("randread") == flag("read") == "reads may come from the page cache/ARC"
    assert (
        flag("write")
        == flag("randwrite")
        == ("writes may be absorbed by the page cache/ARC and counted before they reach the disks")
    )
    assert flag("randrw") == flag("readwrite") == "reads may come from, and writes be absorbed by, the page cache/ARC"


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("bonnie++"), reason="bonnie++ is not installed (Debian: apt-get install bonnie++)")
def test_lab_bonnie_sigterm_discards_the_running_run(tmp_path):
    """kill PID: bonnie++ is stopped, its partial output removed, nothing labelled or ingested; exit 128 + 15."""
    import signal

    target, out, db = tmp_path / "target", tmp_path / "out", tmp_path / "lab.duckdb"
    args = ["lab", "bonnie", "--target", str(target), "--out", str(out), "--db", str(db), "--size", "1G"]
    rc, text = _sigterm_during_first_run([*args, "--files", "0"], out / ".bonnie-1024m-n0.txt.part")
    assert rc == 128 + signal.SIGTERM, text
    assert "interrupted: bonnie-1024m-n0 discarded; 0 completed runs kept" in text
    assert not list(out.glob("*.txt")) and not list(out.glob(".*part")) and not (out / "manifest.csv").exists()
    assert not subprocess.run(["pgrep", "-f", "--", f"bonnie\\+\\+ -d {target}"], capture_output=True).stdout
    # bonnie++ worked in a folder of its own under the target, removed: no Bonnie.NNNN file of the cut run is left
    assert not list(target.rglob("Bonnie.*")) and not (target / ".storagelab-bonnie").exists()


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
def test_lab_fio_killed_outright_takes_fio_with_it(tmp_path):
    """kill -9 of the lab (or the OOM killer): its fio dies with it, so no orphaned fio writes logs into OUT after
    the lab is gone (new-user trial: they appeared beside the .part file and a later ingest stored them)."""
    import signal
    import time

    target, out = tmp_path / "target", tmp_path / "out"
    args = ["lab", "fio", "--rw", "write", "--depth-jobs", "1x1", "--runtime", "30", "--size", "4M", "--no-ingest"]
    args += ["--target", str(target), "--out", str(out)]
    p = _lab_process(args)
    part = out / ".write-4k-qd1-nj1.txt.part"
    # polled to deadlines, not slept: under load fio may take seconds to start, and to be reaped
    assert _within(60, part.exists), "the run never started"
    assert _within(60, lambda: _running(f"--name=write-4k-qd1-nj1 --directory={target}")), "fio is not running"
    time.sleep(1.0)  # fio has been writing for a moment: an orphan would go on and write its logs into OUT
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=30)
    # the kernel ends fio at once; give it time to be reaped
    assert _within(30, lambda: not _running(f"--directory={target}")), "fio outlived the lab"
    assert not list(out.glob("write-4k-qd1-nj1*")), sorted(out.iterdir())  # no log written by an orphan


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
def test_lab_fio_rerun_ingests_runs_saved_but_not_ingested(tmp_path):
    """Runs saved while the database could not take them (--no-ingest here; a busy or bad --db, or Ctrl-C during the
    ingest in the trial) are ingested by the re-run, which runs nothing again; a --db that is no database is
    refused before any run."""
    target, out, db = tmp_path / "target", tmp_path / "out", tmp_path / "lab.duckdb"
    base = ["lab", "fio", "--rw", "write", "--depth-jobs", "1x1", "--runtime", "1", "--size", "4M"]
    base += ["--target", str(target), "--out", str(out)]
    first = _cli(*base, "--no-ingest")
    assert first.returncode == 0 and not db.exists(), first.stdout + first.stderr
    again = _cli(*base, "--db", str(db))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "lab fio: 1 of 1 runs already saved" in again.stdout and "[1/" not in again.stdout
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM files WHERE path LIKE '%write-4k-qd1-nj1%'").fetchone()[0] >= 2
    con.close()
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database\n")
    bad = _cli(*base, "--db", str(junk), "--rw", "read")
    assert bad.returncode == 2 and "is not a usable DuckDB database" in bad.stderr and "Traceback" not in bad.stderr
    assert "[1/" not in bad.stdout and not list(out.glob("read-*"))


def test_lab_helps_end_with_examples_and_exit_codes():
    """As every storagelab --help does (README); the lab's exit code 1 is a failed run, not a failed parse only."""
    for what in ("fio", "bonnie", "zfs-sweep"):
        r = _cli("lab", what, "--help")
        assert r.returncode == 0 and "examples:\n  storagelab lab " + what in r.stdout, r.stdout
        assert r.stdout.rstrip().endswith(
            "completed runs are kept\n       and labelled, and re-running the same command resumes"
        )
        assert "  1    a run failed" in r.stdout


def test_lab_names_a_file_given_as_target_or_out(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x\n")
    r = _cli("lab", "fio", "--target", str(f), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and r.stderr.strip() == (
        f"storagelab lab fio: --target {f} is a file, not a folder: give the folder to test"
    )
    r = _cli("lab", "bonnie", "--target", str(tmp_path), "--out", str(f))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert (
        r.stderr.strip() == f"storagelab lab bonnie: --out {f} is a file, not a folder: give the folder for the outputs"
    )


def test_a_benchmark_that_ignores_sigterm_is_killed_with_its_children_after_the_grace(monkeypatch):
    """fio signalled during its start-up was seen to hang for ever after SIGTERM (its main in a futex wait, its
    job running on), and the lab waited with it: past STOP_GRACE_S the benchmark and its children are killed.
    Here a real process that ignores SIGTERM stands in for the hung fio, with a child as its job."""
    import signal
    import time

    import psutil

    monkeypatch.setattr(lab.fio, "STOP_GRACE_S", 1.0)
    p = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 300 & echo started >&2; wait"], stderr=subprocess.PIPE)
    end = time.monotonic() + 30
    while time.monotonic() < end and not psutil.Process(p.pid).children():
        time.sleep(0.05)
    job = psutil.Process(p.pid).children()[0]
    p.terminate()  # what the lab's Ctrl-C/SIGTERM handler does, and sh ignores
    t0 = time.monotonic()
    err = lab._wait_for_fio(p, [signal.SIGTERM])
    assert 1.0 <= time.monotonic() - t0 < 15
    assert err == b"started\n" and p.returncode == -signal.SIGKILL
    job.wait(10)
    assert not job.is_running()


def test_lab_lines_escape_control_characters(tmp_path, capsys):
    """reliability-4 low 1, left open for `storagelab lab`'s own lines: a --target holding ESC ] 0 ; ... BEL (a
    terminal's set-title command) and a newline reached the terminal as they are, in an error and in --dry-run's
    commands. Now every line goes through terminal.one_line, as the rest of the CLI's do."""
    from storagelab.lab import main

    odd = tmp_path / "t\x1b]0;TITLE\x07\nx"
    shown = str(tmp_path) + "/t\\x1b]0;TITLE\\x07\\nx"
    assert main(["fio", "--preset", "smoke", "--target", str(odd / "a" / "b"), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"storagelab lab fio: --target {shown}/a/b does not exist, nor does its parent folder (a mistyped mount "
        "point?); create it on the filesystem to test\n"
    )
    args = ["fio", "--preset", "smoke", "--target", str(odd), "--out", str(tmp_path / "o"), "--rw", "read", "--dry-run"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(ln.startswith("fio --name=read-4k-qd") for ln in lines), lines
    assert all(f"'--directory={shown}' " in ln and "\x1b" not in ln and "\x07" not in ln for ln in lines)


def test_the_default_lab_folder_is_named_by_the_utc_date(monkeypatch):
    """A reliability-27 low: data/raw/lab/HOST/DATE took the machine's local date. At any hour one of these two zones
    (UTC+14, UTC-12) has another date than UTC's, so the old code failed one of them whenever the test ran."""
    import datetime as dt
    import time

    from storagelab.lab.manifest import default_out

    for zone in ("Etc/GMT-14", "Etc/GMT+12"):
        monkeypatch.setenv("TZ", zone)
        time.tzset()
        try:
            before = dt.datetime.now(dt.UTC).date().isoformat()
            got = default_out("h").name
            assert got in (before, dt.datetime.now(dt.UTC).date().isoformat()), (zone, got)
        finally:
            monkeypatch.undo()
            time.tzset()
