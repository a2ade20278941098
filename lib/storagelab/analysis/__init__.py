"""Analyses: pure functions on polars frames (tested in tests/test_analysis_*.py), plus the few
read-only queries the notebooks share. Notebooks call these, show the result and say what it means.
"""

from __future__ import annotations

from .db import frame, open_db, provenance  # noqa: F401
from .selection import Selection  # noqa: F401
