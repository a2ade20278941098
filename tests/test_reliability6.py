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
