"""Report times are UTC, as labelled, whatever TZ is (issue 26, reliability-2 medium): under
TZ=America/St_Johns a file ingested at 14:03:39 UTC showed "10:33:39 UTC" in the report's provenance."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT

PROGRAM = """
import json, sys
import duckdb
from storagelab.analysis.db import provenance
con = duckdb.connect(sys.argv[1], read_only=True)
zone = con.execute("SELECT current_setting('TimeZone')").fetchall()[0][0]
epoch = con.execute("SELECT epoch(ingested_at) FROM files ORDER BY file_id LIMIT 1").fetchall()[0][0]
shown = provenance(con, [1])["ingested_at"].to_list()[0]
print(json.dumps([zone, epoch, shown]))
"""


def test_provenance_times_are_utc_under_any_time_zone(seed_db):
    from datetime import UTC, datetime

    seen = {}
    for tz in ("America/St_Johns", "Asia/Kathmandu", "UTC"):
        r = subprocess.run(
            [sys.executable, "-c", PROGRAM, str(seed_db)],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT / "lib"), TZ=tz),
            check=True,
        )
        zone, epoch, shown = json.loads(r.stdout)
        assert zone == tz  # DuckDB took the process's zone: the case the attack used
        seen[tz] = shown
        assert shown == datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert len(set(seen.values())) == 1, seen
