"""Which file ids of a former dataset a re-run of ``spark-ingest`` keeps (a file the dataset held, same path and
SHA-256, keeps its file_id: ``spark_ingest._old_file_ids``).

An id kept is only as good as the rows it came from. Reliability-29 (h2): root's `export --db THEIRS --dataset ROOTS`
(the second user's database, every ``files`` row with file_id 1), then root's `spark-ingest LOGS ROOTS` of root's own
logs: the run kept their ids for root's files, all three files took file_id 1, each table's rows joined to every file
(9 rows for 3, the bandwidths summed three times over), and meta.json no longer said whose rows had been there, exit 0.
So nothing is kept from a dataset that holds another user's rows (``rows_of_others``), and an id that more than one
file held, or that is not a file id (not a positive 32-bit integer), is kept by none. Reliability-29 (h6): nor one
past ``_MAX_KEPT``: the run numbers its new files from the largest id kept, and a files part holding 2**31 - 1 (an
INTEGER id, hand-edited) made the next one 2**31: every re-run onto that dataset failed with PySpark's traceback
(VALUE_OUT_OF_BOUNDS), the dataset left as it was; half the range stays free for the new files of any run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

_MAX_ID = 2**31 - 1  # files.file_id is an INTEGER
# the next ids are counted from the largest kept: room for 2**30 - 1 new files in one run
_MAX_KEPT = (_MAX_ID + 1) // 2


def kept_file_ids(rows: Iterable, old: dict) -> dict[tuple[str, str], int]:
    """(path, sha256) -> file_id from ``rows`` (the former ``files`` rows: mappings with path, sha256 and file_id),
    those a re-run may keep; ``old``: the former meta.json."""
    if old.get("rows_of_others"):
        return {}
    pairs = {(r["path"], r["sha256"], r["file_id"]) for r in rows}
    held, ids_of = Counter(i for _, _, i in pairs), Counter((p, s) for p, s, _ in pairs)
    return {
        (p, s): i
        for p, s, i in pairs
        if type(i) is int  # a bool is no id
        and 0 < i <= _MAX_KEPT
        and held[i] == 1
        and ids_of[p, s] == 1  # a file held under two ids: neither (which one was kept followed the set's order)
        and isinstance(p, str)
        and isinstance(s, str)
    }
