import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
FIXTURES = ROOT / "tests" / "fixtures"
SEEDS = ROOT.parent / "shared" / "seeds"


def storagelab_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m storagelab ARGS`` from the project root with this checkout's lib/, output captured."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout
    )


def ingest_unlabelled(paths, folder: Path) -> Path:
    """``paths`` ingested, without labels, into a new database in ``folder`` (one worker, no Parquet)."""
    from storagelab.store import ingest

    db = folder / "unlabelled.duckdb"
    ingest(
        [str(x) for x in paths],
        db_path=db,
        manifest_path=folder / "none.csv",
        parquet_dir=False,
        progress=False,
        workers=1,
    )
    return db


@pytest.fixture
def raw_copy(tmp_path):
    """A copy of data/raw/ (with its manifest) that a test may change."""
    dest = tmp_path / "raw"
    shutil.copytree(RAW, dest)
    return dest


@pytest.fixture(scope="session")
def seed_db(tmp_path_factory):
    """data/raw/ ingested once into a temporary database (read-only use)."""
    from storagelab.store import ingest

    db = tmp_path_factory.mktemp("db") / "seed.duckdb"
    summary = ingest([RAW], db_path=db, manifest_path=RAW / "manifest.csv", parquet_dir=False, progress=False)
    assert summary.failed == 0, summary.errors
    return db
