"""Whether a benchmark could measure its disks: the test size against the memory that can cache it.

A file that fits in RAM (page cache or ARC) plus an L2ARC can be read back, and on ZFS also written, largely
from cache, so its numbers say little about the disks (docs/formats/zfs-facts.md F23). The RAM a run had is in
its logs or labels only in two ways, and this module reads exactly those:

* the manifest's ``ram_bytes`` column (``storagelab lab`` writes it from the machine it ran on), or
  ``ram_bytes=N`` in its notes (as the lab wrote it before the column existed);
* bonnie++ ``-r N``: the RAM in MiB bonnie++ was told (it sizes its file at 2 x that by default).
"""

from __future__ import annotations

import re
import shlex

from ..units import MiB

_NOTES_RAM = re.compile(r"(?:^|[;\s])ram_bytes=(\d+)")


def ram_bytes(
    command: str | None, notes: str | None = None, labelled: int | None = None
) -> tuple[int | None, str | None]:
    """(RAM in bytes, where it was read) from the ``ram_bytes`` label, the notes' ``ram_bytes=`` or a bonnie++
    command line's ``-r``."""
    if labelled:
        return int(labelled), "the manifest's ram_bytes"
    if notes:
        m = _NOTES_RAM.search(notes)
        if m:
            return int(m.group(1)), "ram_bytes in the manifest's notes"
    if command:
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        if words and words[0].rsplit("/", 1)[-1].startswith("bonnie"):
            for i, w in enumerate(words):
                v = words[i + 1] if w == "-r" and i + 1 < len(words) else w[2:] if w.startswith("-r") else ""
                if v.isdigit():
                    return int(v) * MiB, f"bonnie++ -r {v} (MiB)"
    return None, None


def direct_bypasses_page_cache(direct, filesystem: str | None, zfs_version: str | None) -> bool:
    """Whether ``direct=1`` goes around the page cache: on every filesystem but ZFS before 2.3 (which ignores or
    refuses O_DIRECT: the ARC serves it). A filesystem (or stack label) not known gets no such credit, nor ZFS of
    an unknown version. ``filesystem`` may be a stack label ('mergerfs+zfs' counts as ZFS)."""
    if str(direct) != "1" or not filesystem:
        return False
    if "zfs" not in filesystem.lower():
        return True
    version = tuple(int(p) for p in re.findall(r"\d+", zfs_version or "")[:2])
    return bool(version) and version >= (2, 3)


def direct_ignored(direct, filesystem: str | None, zfs_version: str | None) -> bool | None:
    """Whether ``direct=1`` was asked of a filesystem that ignores it (ZFS before 2.3: the ARC still caches). None
    where it cannot be told (ZFS of an unknown version, or no filesystem label); False for buffered I/O."""
    if str(direct) != "1":
        return False
    if not filesystem:
        return None
    if "zfs" not in filesystem.lower():
        return False
    if not re.findall(r"\d+", zfs_version or ""):
        return None
    return not direct_bypasses_page_cache(direct, filesystem, zfs_version)


def against_cache(size_bytes: float | None, ram: float | None, l2arc: float | None = None) -> dict | None:
    """The test size against RAM (+ L2ARC): ratios and whether the file fits in the cache that can hold it.
    None when the size or the RAM is unknown."""
    if not size_bytes or not ram:
        return None
    cache = ram + (l2arc or 0)
    return dict(
        size_bytes=size_bytes,
        ram_bytes=ram,
        l2arc_bytes=l2arc,
        cache_bytes=cache,
        size_over_ram=size_bytes / ram,
        size_over_cache=size_bytes / cache,
        fits_in_cache=size_bytes <= cache,
    )
