"""The manifest: one row of labels per raw file (data/raw/manifest.csv).

The manifest is how a file gets its meaning: which study, host, stack, topology,
recordsize, ... Paths are relative to the manifest's folder and may not leave it.
Numeric labels are in base units (``recordsize_bytes``, ``device_limit_bytes_per_s``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from .errors import ManifestError

# (name, SQL type, doc)
FIELDS: list[tuple[str, str, str]] = [
    ("path", "VARCHAR", "file path relative to data/raw/"),
    ("study", "VARCHAR", "study the file belongs to (a folder of papers/)"),
    ("seed", "VARCHAR", "source document the file was extracted from (shared/seeds/...)"),
    ("seed_lines", "VARCHAR", "line range in the seed, e.g. 84-109"),
    ("also_in", "VARCHAR", "another place the same run stands (seed:line)"),
    ("label", "VARCHAR", "short human label used in tables and charts"),
    ("host", "VARCHAR", "machine the run was made on"),
    ("os", "VARCHAR", "operating system"),
    ("stack", "VARCHAR", "filesystem/stack: zfs, mergerfs+zfs, btrfs-raid1, mdadm-raid1+ext4, ..."),
    ("pool", "VARCHAR", "ZFS pool name"),
    ("vdev_type", "VARCHAR", "single, mirror, raidz1, raidz2, raidz3, draid"),
    ("vdev_count", "INTEGER", "number of top-level vdevs"),
    ("vdev_width", "INTEGER", "disks per vdev"),
    ("devices", "VARCHAR", "devices under test"),
    ("cache_devices", "VARCHAR", "L2ARC devices"),
    ("log_devices", "VARCHAR", "SLOG/ZIL devices"),
    ("recordsize_bytes", "BIGINT", "ZFS recordsize, bytes"),
    ("ashift", "INTEGER", "ZFS ashift (sector size = 2^ashift bytes)"),
    ("partition_start_sector", "BIGINT", "start LBA of the data partition (512-byte sectors); 63 = legacy MBR offset"),
    ("phase", "VARCHAR", "before / after a change the study is about"),
    ("zfs_version", "VARCHAR", "ZFS version"),
    ("device_limit_bytes_per_s", "DOUBLE", "stated sequential limit of the underlying device, bytes/s (for cache-inflation flags)"),
    ("command", "VARCHAR", "command line that produced the output"),
    ("duplicate_of", "VARCHAR", "set when the file re-pastes runs that stand in other files (excluded from analyses)"),
    ("notes", "VARCHAR", "free text"),
]
COLUMNS = [f[0] for f in FIELDS]
LABEL_COLUMNS = COLUMNS[1:]
_TYPES = {f[0]: f[1] for f in FIELDS}


@dataclass
class Manifest:
    root: Path
    rows: dict[str, dict]  # key: path relative to root (posix)

    def labels_for(self, file: Path) -> dict | None:
        try:
            rel = file.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None
        return self.rows.get(rel)


def _convert(name: str, value: str, where: str):
    value = value.strip()
    if value == "":
        return None
    typ = _TYPES[name]
    try:
        if typ in ("INTEGER", "BIGINT"):
            f = float(value)
            if f != int(f):
                raise ValueError
            return int(f)
        if typ == "DOUBLE":
            return float(value)
    except ValueError:
        raise ManifestError(f"{where}: column {name} must be a {'whole ' if typ != 'DOUBLE' else ''}number, got {value!r}") from None
    return value


def load(path: Path) -> Manifest:
    """Read and validate a manifest. Missing file -> empty manifest."""
    path = Path(path)
    root = path.parent
    if not path.exists():
        return Manifest(root, {})
    rows: dict[str, dict] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or "path" not in reader.fieldnames:
            raise ManifestError(f"{path}:1: the header must have a 'path' column")
        unknown = [c for c in reader.fieldnames if c not in _TYPES]
        if unknown:
            raise ManifestError(f"{path}:1: unknown columns {unknown}; known: {', '.join(COLUMNS)}")
        for lineno, raw in enumerate(reader, 2):
            where = f"{path}:{lineno}"
            rel = (raw.get("path") or "").strip()
            if not rel:
                raise ManifestError(f"{where}: empty path")
            p = Path(rel)
            if p.is_absolute() or ".." in p.parts:
                raise ManifestError(f"{where}: path {rel!r} must be relative to {root} and stay inside it")
            resolved = (root / p).resolve()
            try:
                resolved.relative_to(root.resolve())
            except ValueError:
                raise ManifestError(f"{where}: path {rel!r} points outside {root}") from None
            key = p.as_posix()
            if key in rows:
                raise ManifestError(f"{where}: duplicate row for {key}")
            rows[key] = {c: _convert(c, raw.get(c) or "", where) for c in COLUMNS}
    return Manifest(root, rows)
