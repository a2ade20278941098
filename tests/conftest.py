import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
FIXTURES = ROOT / "tests" / "fixtures"
SEEDS = ROOT.parent / "shared" / "seeds"


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
