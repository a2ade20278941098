"""The sixth campaign's lows (docs/reliability-6-store.md, docs/reliability-6-processes.md), each re-run as the attack
ran where that is cheap: real logs, the command line, the exact line a user sees."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import pytest
from conftest import RAW, ROOT

from storagelab import dataset, store

LOG = RAW / "homelab-mergerfs" / "fio-btrfs-single.txt"  # real fio output (data/raw)
SECRET = RAW / "homelab-mergerfs" / "fio-autotier-ext4.txt"
KW = dict(manifest_path=None, parquet_dir=False, progress=False)


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_manifest_that_is_a_device_is_not_a_regular_file(tmp_path):
    """store Low 7: `--manifest /dev/null` said it "does not exist"."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(LOG, logs / "a.txt")
    r = _cli("ingest", str(logs), "--db", str(tmp_path / "t.duckdb"), "--manifest", "/dev/null")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        "storagelab ingest: --manifest /dev/null is not a regular file (a device, a FIFO or a socket): check the "
        "name, or leave --manifest out to use the manifest.csv of the folder you ingest "
        f"({ROOT / 'data' / 'raw' / 'manifest.csv'} by default)\n"
    )


def test_sql_on_a_dataset_folder_says_it_is_a_dataset(tmp_path):
    """store Low 7: `sql --db DATASET_FOLDER` suggested DATASET_FOLDER/storagelab.duckdb, a file no dataset has."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(LOG, logs / "a.txt")
    db, ds = tmp_path / "t.duckdb", tmp_path / "ds"
    store.ingest([logs], db_path=db, **KW)
    con = duckdb.connect(str(db), read_only=True)
    try:
        dataset.export(con, ds)
    finally:
        con.close()
    r = _cli("sql", "SELECT 1", "--db", str(ds))
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (
        f"storagelab sql: {ds} is a dataset folder (storagelab export --dataset), not a database: --db takes the "
        f"database file it was exported from (by default {ROOT / 'data' / 'parsed' / 'storagelab.duckdb'}); the "
        f"notebooks read the dataset with -p db_path {ds}\n"
    )
    plain = tmp_path / "plain"
    plain.mkdir()
    r = _cli("sql", "SELECT 1", "--db", str(plain))
    assert (
        r.stderr
        == f"storagelab sql: {plain} is a folder: --db takes a database file, e.g. {plain / 'storagelab.duckdb'}\n"
    )


def test_a_failed_meta_json_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    """store Low 2: meta.json's write failing on a full disk left `_storagelab/.meta.json.PID.tmp` (holding space on
    the full disk until the next export). The disk is full at the fsync here (ENOSPC, as a tmpfs gives it)."""
    target = tmp_path / "meta.json"
    target.write_text('{"old": 1}')

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(dataset.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        dataset.save_json(target, {"new": 2})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json"]
    assert target.read_text() == '{"old": 1}'


def test_a_symlink_to_an_ignored_file_is_ignored(tmp_path):
    """store Low 6: with `secret/` ignored, `link.txt -> secret/x.txt` stored the file under the ignored path
    (a symlink's key is its target's). The ignore rule applies to the stored path too now."""
    tree = tmp_path / "T"
    (tree / "secret").mkdir(parents=True)
    shutil.copy(SECRET, tree / "secret" / "x.txt")
    shutil.copy(LOG, tree / "y.txt")
    (tree / "link.txt").symlink_to("secret/x.txt")
    (tree / ".storagelabignore").write_text("secret/\n")
    db = tmp_path / "t.duckdb"
    s = store.ingest([tree], db_path=db, **KW)
    assert (s.ingested, s.ignored, s.failed) == (1, 1, 0)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT path FROM files").fetchall() == [(str(tree / "y.txt"),)]
    finally:
        con.close()
    r = _cli("parse", str(tree))  # parse lists the same files
    assert str(tree / "secret" / "x.txt") not in r.stdout and "link.txt" not in r.stdout, r.stdout
    assert r.returncode == 0, r.stderr


def test_a_symlink_out_of_an_ignored_folder_is_not_ignored_by_its_target(tmp_path):
    """The other way round: a file that is not ignored stays, whatever links to it."""
    tree = tmp_path / "T"
    (tree / "secret").mkdir(parents=True)
    shutil.copy(LOG, tree / "y.txt")
    (tree / "secret" / "link.txt").symlink_to("../y.txt")
    (tree / ".storagelabignore").write_text("secret/\n")
    db = tmp_path / "t.duckdb"
    s = store.ingest([tree], db_path=db, **KW)
    assert (s.ingested, s.failed) == (1, 0)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT path FROM files").fetchall() == [(str(tree / "y.txt"),)]
    finally:
        con.close()


@pytest.mark.e2e
@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian: apt-get install fio)")
@pytest.mark.parametrize("gap", [0.05, 0.3])
def test_a_second_ctrl_c_within_half_a_second_still_ends_130(tmp_path, gap):
    """processes Low 8: two SIGINTs to `lab fio`'s group 0.05-0.5 s apart, once fio's jobs run, ended it by Python's
    default SIGINT (exit -2, its line not always said): Python's exit puts SIGINT back to the default. Now 130."""
    import psutil

    args = ["lab", "fio", "--rw", "randread", "--depth-jobs", "2x2", "--runtime", "30", "--size", "16M", "--no-ingest"]
    p = subprocess.Popen(
        [sys.executable, "-m", "storagelab", *args, "--target", str(tmp_path / "t"), "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "lib")),
    )  # fmt: skip
    end = time.monotonic() + 90

    def fio_processes() -> int:  # a process may end between the listing and its name
        n = 0
        for q in psutil.Process(p.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                n += q.name() == "fio"
        return n

    while fio_processes() < 3:
        assert p.poll() is None and time.monotonic() < end, "fio's jobs never ran"
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGINT)
    time.sleep(gap)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, (out, err)
    assert "interrupted: randread-4k-qd2-nj2 discarded; 0 completed runs kept (a re-run resumes)" in out
    assert "Traceback" not in err


def test_a_low_soft_limit_of_open_files_is_raised_and_a_low_hard_one_said_once(tmp_path):
    """processes Low 5: `ulimit -n 64` on a notebook run said why twice in 4 lines, exit 1. The check runs before
    any kernel: a soft limit under a hard one that allows 128 is raised; `ulimit -n 64` (both) is one line, exit 2."""
    code = (
        "import resource; from storagelab import checks; resource.setrlimit(resource.RLIMIT_NOFILE, (64, {hard}));"
        "print(checks.too_few_files('build'), checks.too_few_files('sql'), resource.getrlimit(resource.RLIMIT_NOFILE))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    r = subprocess.run([sys.executable, "-c", code.format(hard=4096)], capture_output=True, text=True, env=env)
    assert r.stdout == "None None (128, 4096)\n", r.stderr
    r = subprocess.run([sys.executable, "-c", code.format(hard=64)], capture_output=True, text=True, env=env)
    assert r.stdout == (
        "the limit of open files (ulimit -n 64) is below the 128 a notebook's run needs (its kernel, the database and "
        "the charts each hold files): raise it (e.g. ulimit -n 1024) and run again None (64, 64)\n"
    ), r.stderr
