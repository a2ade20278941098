"""The alignment verdict of a partition start (4 KiB and 1 MiB), which every ``partitions`` row carries.

Pure arithmetic on sizes (like ``units``), so that the partition parsers, which fill each row's columns with it, and
analysis/alignment.py (notebook 03), which builds its verdicts on it, both import it without either loading the other
(importing the analysis package loads polars into every parsing worker).
"""

from __future__ import annotations

from .units import MiB


def alignment(start_sector: int, logical_sector_bytes: int = 512) -> dict:
    """Byte offset of a partition start and its 4 KiB / 1 MiB alignment.

    ``alignment(63)`` -> start_bytes 32256, align_4k_rem_bytes 3584, aligned_4k False;
    ``alignment(2048)`` -> start_bytes 1048576, aligned to 4 KiB and to 1 MiB.
    """
    if isinstance(start_sector, bool) or not isinstance(start_sector, int) or start_sector < 0:
        raise ValueError(f"start_sector must be an integer >= 0, not {start_sector!r}")
    if isinstance(logical_sector_bytes, bool) or not isinstance(logical_sector_bytes, int) or logical_sector_bytes <= 0:
        raise ValueError(f"logical_sector_bytes must be an integer > 0, not {logical_sector_bytes!r}")
    start = start_sector * logical_sector_bytes
    r4k, r1m = start % 4096, start % MiB
    return {
        "start_bytes": start,
        "align_4k_rem_bytes": r4k,
        "align_1m_rem_bytes": r1m,
        "aligned_4k": r4k == 0,
        "aligned_1m": r1m == 0,
    }
