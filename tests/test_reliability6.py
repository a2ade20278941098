"""The sixth attack campaign's data-side findings (docs/reliability-6-store.md), each re-run as the attack ran:
real logs, a real ingest from the command line, each state compared with what a user must see."""

import os
import shutil
import subprocess
import sys

import pytest
from conftest import RAW, ROOT

LOG = RAW / "homelab-mergerfs" / "fio-btrfs-single.txt"  # real fio output (data/raw)


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    try:
        return subprocess.run(
            [sys.executable, "-m", "storagelab", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"storagelab {' '.join(args)}: still running after {timeout} s")


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_an_ignore_file_that_is_a_device_or_a_fifo_is_one_line_not_a_hang(tmp_path, kind):
    """reliability-6 Medium 1: `.storagelabignore` a symlink to /dev/zero (read for ever, memory growing) or a FIFO
    (waiting for a writer for ever): the ingest ran past a 60 s timeout. Now one line naming the file, exit 2."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(LOG, logs / "a.txt")
    ignore_file = logs / ".storagelabignore"
    if kind == "fifo":
        os.mkfifo(ignore_file)
    else:
        ignore_file.symlink_to(kind)
    r = _cli("ingest", str(logs), "--db", str(tmp_path / "x.duckdb"), "--no-parquet", "--quiet", timeout=30)
    assert (r.returncode, r.stderr.strip().splitlines()) == (
        2,
        [
            f"storagelab ingest: {ignore_file}: not a regular file (a FIFO or a device): "
            "make it a text file or remove it"
        ],
    ), r.stderr[-2000:]


@pytest.mark.e2e
def test_an_ingest_just_above_the_old_memory_floor_is_refused_in_one_line(tmp_path):
    """reliability-5 Medium 3, again in reliability-6: `ulimit -v 1060000` (just above the old floor, 1 GiB on 2
    cores) then `ingest --dataset` of data/raw + tests/fixtures aborted in native code in 2 of 7 runs (exit 134,
    "terminate called ... std::bad_alloc", no line of ours). The floor is now 1152 MiB on 2 cores (memfloor.py), so
    that limit is refused before anything starts, one line, exit 2, nothing written."""
    import resource

    from storagelab import memfloor

    kib = 1_060_000
    assert kib * 1024 < memfloor.floor_bytes(cores=2)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    env.pop(memfloor.ENV, None)
    db = tmp_path / "t.duckdb"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "storagelab",
            "ingest",
            str(RAW),
            "--db",
            str(db),
            "--quiet",
            "--dataset",
            str(tmp_path / "ds"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024)),
    )
    floor = memfloor.floor_bytes() // 1024
    assert (r.returncode, r.stderr.splitlines()) == (
        2,
        [
            f"storagelab ingest: the address-space limit (ulimit -v {kib}) is below the {floor // 1024} MiB storagelab "
            f"needs on {os.cpu_count()} cores (below it DuckDB's and the worker pool's threads crash in native code): "
            f"raise it (ulimit -v {floor}), or set {memfloor.ENV}=MiB to try a lower floor"
        ],
    ), r.stderr[-2000:]
    assert not db.exists() and not (tmp_path / "ds").exists()
