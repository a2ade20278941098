"""Whether a selection holds data an analysis can use (what `storagelab build` runs for a source study besides the
notebooks its claims name). Cheap counts, one per analysis notebook."""

from __future__ import annotations

from .db import frame
from .selection import Selection


def _count(con, sel: Selection, sql: str) -> int:
    where, params = sel.sql("f")
    return frame(con, sql.format(where=where), params).item()


def vdev_scaling(con, sel: Selection) -> bool:
    """Layout tables, or runs labelled with a vdev layout beside a single-disk run."""
    if _count(con, sel, "SELECT count(*) FROM thumper_layouts t JOIN files f USING (file_id) WHERE {where}"):
        return True
    return (
        _count(
            con,
            sel,
            """SELECT count(DISTINCT (coalesce(f.vdev_type, ''), f.vdev_count, f.vdev_width)) FROM files f
        WHERE {where} AND f.tool IN ('fio', 'bonnie++') AND f.vdev_count IS NOT NULL""",
        )
        > 1
    )


def recordsize(con, sel: Selection) -> bool:
    return bool(
        _count(con, sel, "SELECT count(*) FROM zdb_block_stats s JOIN files f USING (file_id) WHERE {where}")
        or _count(con, sel, "SELECT count(*) FROM files f WHERE {where} AND f.recordsize_bytes IS NOT NULL")
    )


def before_after(con, sel: Selection) -> bool:
    return bool(
        _count(
            con,
            sel,
            """SELECT count(*) FROM files f WHERE {where} AND f.tool = 'bonnie++'
        AND (f.phase IS NOT NULL OR f.partition_start_sector IS NOT NULL)""",
        )
    )


def dedup(con, sel: Selection) -> bool:
    return bool(
        _count(con, sel, "SELECT count(*) FROM zdb_block_stats s JOIN files f USING (file_id) WHERE {where}")
        or _count(con, sel, "SELECT count(*) FROM zdb_ddt_histogram h JOIN files f USING (file_id) WHERE {where}")
    )


def stacks(con, sel: Selection) -> bool:
    return (
        _count(
            con, sel, "SELECT count(DISTINCT f.file_id) FROM fio_groups g JOIN files f USING (file_id) WHERE {where}"
        )
        > 1
    )


def transports(con, sel: Selection) -> bool:
    return bool(_count(con, sel, "SELECT count(*) FROM mbuffer_summaries s JOIN files f USING (file_id) WHERE {where}"))


def bonnie(con, sel: Selection) -> bool:
    return bool(_count(con, sel, "SELECT count(*) FROM bonnie_runs b JOIN files f USING (file_id) WHERE {where}"))


RELEVANT = {
    "01_vdev_scaling": vdev_scaling,
    "02_recordsize": recordsize,
    "03_sector63": before_after,
    "04_dedup_ddt": dedup,
    "05_stacks": stacks,
    "06_zfs_send_transports": transports,
    "08_fio": stacks,
    "09_bonnie": bonnie,
}
