"""The fourth attack campaign's findings (docs/reliability-4.md), each re-run as the attack ran: a real full disk
(a tmpfs), real processes, real concurrency."""

import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import ROOT

from storagelab import store
from storagelab.dataset import open_dataset

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="needs a tmpfs mount (root)")


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


@contextmanager
def _tmpfs(where: Path, size: str):
    where.mkdir(parents=True, exist_ok=True)
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    ).returncode:
        pytest.skip("mount not permitted here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(folder: Path, leave: int) -> Path:
    """A file that takes all but ``leave`` bytes of ``folder``'s filesystem."""
    st = os.statvfs(folder)
    filler = folder / "filler"
    filler.write_bytes(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
    return filler


def _per_path(con) -> dict:
    """(table, path, study) -> rows, for every table with a file_id, through the project's own reader."""
    tables = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'file_id'"
        ).fetchall()
    ]
    out = {}
    for t in tables:
        if t in ("files", "duplicates", "ingest_errors"):
            continue
        for path, study, n in con.execute(
            f'SELECT f.path, f.study, count(*) FROM "{t}" x JOIN files f USING (file_id) GROUP BY 1, 2'
        ).fetchall():
            out[(t, path, study)] = n
    return out


def _ingest(raw: Path, db: Path) -> None:
    store.ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False, workers=1)


@ROOT_ONLY
def test_export_on_a_full_disk_is_one_line_and_leaves_the_old_dataset_and_no_parts(tmp_path, raw_copy):
    """Attack: export --dataset onto a full tmpfs over an existing dataset. It was a 36-line traceback (48 for
    ingest --dataset), and the new run's part files stayed, holding the space the next run needs."""
    db = tmp_path / "t.duckdb"
    _ingest(raw_copy, db)
    with _tmpfs(tmp_path / "mnt", "2m") as mnt:
        ds = mnt / "ds"
        assert _cli("export", "--dataset", str(ds), "--db", str(db)).returncode == 0
        old = _per_path(open_dataset(ds))
        # every file relabelled: every partition is rewritten
        m = raw_copy / "manifest.csv"
        m.write_text(m.read_text().replace("homelab-mergerfs,", "homelab-2,"))
        _ingest(raw_copy, db)
        filler = _fill(mnt, 24 * 1024)
        used = {f for f in ds.rglob("*") if f.is_file()}
        for cmd in (
            ["export", "--dataset", str(ds), "--db", str(db)],
            ["ingest", str(raw_copy), "--db", str(db), "--dataset", str(ds), "--quiet"],
        ):
            r = _cli(*cmd)
            assert r.returncode == 2, r.stderr
            assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert "disk full" in r.stderr and "as it was before" in r.stderr
            assert {f for f in ds.rglob("*") if f.is_file()} == used  # nothing of the failed run left
            assert _per_path(open_dataset(ds)) == old
        filler.unlink()
        assert _cli("export", "--dataset", str(ds), "--db", str(db)).returncode == 0
        import duckdb

        assert _per_path(open_dataset(ds)) == _per_path(duckdb.connect(str(db), read_only=True))
        assert _per_path(open_dataset(ds)) != old
