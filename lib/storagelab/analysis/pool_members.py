"""Pool members that zdb's configuration dump (``zdb -C``, ``zdb_config_vdevs.flags``) marks as missing or failed:
``not_present``, ``removed``, ``faulted``, ``offline``, ``degraded`` (OpenZFS prints each as ``name: 1`` on the
vdev), and the members ``zpool status`` prints in a state other than ONLINE (OFFLINE, DEGRADED, FAULTED, UNAVAIL,
REMOVED; spares' AVAIL/INUSE are not states of a member), or its pool's state where no member is. 02 and 03 say
so: a pool that ran with a member missing is not the layout its labels give."""

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


STATUS_SQL = """
SELECT f.path, f.sha256, v.pool, v.name, v.leaf, v.state, v.note, v.line_start, v.line_end,
       p.state AS pool_state, p.line_start AS pool_line_start, p.line_end AS pool_line_end
FROM zpool_status_vdevs v JOIN files f USING (file_id)
JOIN zpool_status_pools p ON p.file_id = v.file_id AND p.report_no = v.report_no
WHERE ({where}) AND ((v.depth = 0 AND v.name = v.pool AND p.state <> 'ONLINE')
                   OR (v.leaf AND v.state NOT IN ('ONLINE', 'AVAIL', 'INUSE')))
ORDER BY f.path, v.report_no, v.line_start
"""


def _has(con, table: str) -> bool:
    found = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table])
    return bool(found.fetchone()[0])


def status_sentences(con, sel: Selection) -> list[Finding]:
    """One sentence per member ``zpool status`` prints in a state other than ONLINE, or per pool not ONLINE
    whose members all are (its state is then the pool's alone: SUSPENDED, an unavailable log ...)."""
    if not (_has(con, "zpool_status_vdevs") and _has(con, "zpool_status_pools")):
        return []
    where, params = sel.sql("f")
    rows = frame(con, STATUS_SQL.format(where=where), params).rows(named=True)
    flagged = {(r["path"], r["pool"]) for r in rows if r["leaf"]}
    out = []
    for r in rows:
        name = r["path"].rsplit("/", 1)[-1]
        if r["leaf"]:
            note = f" ({r['note']})" if r["note"] else ""
            how = (
                "the pool ran with a member ZFS counts too many errors on, still in use (a DEGRADED member)"
                if r["state"] == "DEGRADED"
                else "the pool ran with that member missing, not as the layout its labels give"
            )
            text = (
                f"Pool {r['pool']}: its zpool status ({name}) shows {r['name']} {r['state']}{note}, the pool "
                f"{r['pool_state']}: when it was printed, {how}; runs on the pool then measured it so (whether the "
                "runs were made then, the logs do not say)."
            )
            out.append(Finding(text, [cite(r["state"], lines_of(r))]))
        elif (r["path"], r["pool"]) not in flagged:
            text = (
                f"Pool {r['pool']}: its zpool status ({name}) shows the pool {r['pool_state']} with every member "
                "ONLINE: runs on the pool may not have measured the layout its labels give (whether the runs "
                "were made then, the logs do not say)."
            )
            out.append(Finding(text, [cite(r["pool_state"], lines_of(r))]))
    return out


def sentences(con, sel: Selection) -> list[Finding]:
    """One sentence per flagged vdev of the selection's zdb configurations and zpool status outputs (none on a
    database without their tables)."""
    if not _has(con, "zdb_config_vdevs"):
        return status_sentences(con, sel)
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
    return out + status_sentences(con, sel)
