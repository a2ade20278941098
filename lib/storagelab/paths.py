"""The project's folders, derived from the package location (never from the working directory)."""

from __future__ import annotations

import os
from pathlib import Path

# lib/storagelab/paths.py -> project root is two levels above lib/
ROOT = Path(os.environ.get("STORAGELAB_ROOT", Path(__file__).resolve().parents[2]))
DATA = ROOT / "data"
RAW = DATA / "raw"
PARSED = DATA / "parsed"
MANIFEST = RAW / "manifest.csv"
DB = PARSED / "storagelab.duckdb"
NOTEBOOKS = ROOT / "notebooks"
PAPERS = ROOT / "papers"
REPORTS = ROOT / "reports"
FIGURES = REPORTS / "figures"
DOCS = ROOT / "docs"
