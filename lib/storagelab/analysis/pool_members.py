"""Pool members that zdb's configuration dump (``zdb -C``, ``zdb_config_vdevs.flags``) marks as missing or failed:
``not_present``, ``removed``, ``faulted``, ``offline``, ``degraded`` (OpenZFS prints each as ``name: 1`` on the
vdev). 02 and 03 say so: a pool that ran with a member missing is not the layout its labels give."""

from __future__ import annotations

from .db import frame
from .result import Finding, cite, lines_of
from .selection import Selection

FLAGGED_SQL = """
SELECT f.path, f.sha256, v.pool, v.type, v.path AS device, v.vdev_key, v.flags, v.line_start, v.line_end
FROM zdb_config_vdevs v JOIN files f USING (file_id)
WHERE {where} AND v.flags IS NOT NULL ORDER BY f.path, v.config_no, v.vdev_key
"""
WORDS = {
    "not_present": "not present (its device was missing)",
    "removed": "removed",
    "faulted": "faulted",
    "offline": "offline",
    "degraded": "degraded",
}


def sentences(con, sel: Selection) -> list[Finding]:
    """One sentence per flagged vdev of the selection's zdb configurations (none on a database without the table)."""
    found = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'zdb_config_vdevs'")
    if not found.fetchone()[0]:
        return []
    where, params = sel.sql("f")
    out = []
    for r in frame(con, FLAGGED_SQL.format(where=where), params).iter_rows(named=True):
        flags = [WORDS.get(f, f) for f in r["flags"].split(",")]
        what = f"{r['type'] or 'vdev'} {r['device'] or r['vdev_key']}"
        out.append(
            Finding(
                f"Pool {r['pool']}: its zdb configuration ({r['path'].rsplit('/', 1)[-1]}) marks {what} as "
                f"{' and '.join(flags)}: when it was read, the pool ran with that member missing (degraded), not as "
                "the layout its labels give; runs on the pool then measured it so (whether the runs were made then, "
                "the logs do not say).",
                [cite(" and ".join(flags), lines_of(r))],
            )
        )
    return out
