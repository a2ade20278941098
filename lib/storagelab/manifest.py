"""The manifest: one row of labels per raw file (data/raw/manifest.csv).

The manifest is how a file gets its meaning: which study, host, stack, topology,
recordsize, ... Paths are relative to the manifest's folder and may not leave it.
Numeric labels are in base units (``recordsize_bytes``, ``device_limit_bytes_per_s``).
"""

from __future__ import annotations

import codecs
import csv
import errno
import io
import math
import os
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from .errors import ManifestError
from .ingest_open import open_input, read_text_file

# (name, SQL type, doc)
FIELDS: list[tuple[str, str, str]] = [
    ("path", "VARCHAR", "file path relative to data/raw/"),
    ("study", "VARCHAR", "study the file belongs to (a folder of papers/)"),
    ("seed", "VARCHAR", "source document the file was extracted from (a seed name; scripts/extract_seeds.py)"),
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
    (
        "ram_bytes",
        "BIGINT",
        "RAM of the machine the run was made on, bytes (a test file smaller than RAM + L2ARC can be served from cache)",
    ),
    ("recordsize_bytes", "BIGINT", "ZFS recordsize, bytes"),
    ("ashift", "INTEGER", "ZFS ashift (sector size = 2^ashift bytes)"),
    ("zfs_sync", "VARCHAR", "the dataset's ZFS sync property: standard, always or disabled (zfs get sync wins)"),
    ("zfs_logbias", "VARCHAR", "the dataset's ZFS logbias property: latency or throughput (zfs get logbias wins)"),
    ("partition_start_sector", "BIGINT", "start LBA of the data partition (512-byte sectors); 63 = legacy MBR offset"),
    ("phase", "VARCHAR", "before / after a change the study is about"),
    ("zfs_version", "VARCHAR", "ZFS version"),
    (
        "device_limit_bytes_per_s",
        "DOUBLE",
        "stated sequential limit of the underlying device, bytes/s (for cache-inflation flags)",
    ),
    ("command", "VARCHAR", "command line that produced the output"),
    ("duplicate_of", "VARCHAR", "set when the file re-pastes runs that stand in other files (excluded from analyses)"),
    ("notes", "VARCHAR", "free text"),
]
COLUMNS = [f[0] for f in FIELDS]
LABEL_COLUMNS = COLUMNS[1:]
_TYPES = {f[0]: f[1] for f in FIELDS}


_LIMITS = {"INTEGER": 2**31 - 1, "BIGINT": 2**63 - 1}
_RANGES = {"ashift": (0, 16, "ZFS takes 9-16, 0 = detect")}
_CHOICES = {
    "zfs_sync": ("standard", "always", "disabled"),
    "zfs_logbias": ("latency", "throughput"),
    "phase": ("before", "after"),  # what 03 compares; another word (pre, baseline) was ignored without a word
}
_WHOLE = re.compile(r"[+-]?[0-9]+")


@dataclass
class Manifest:
    root: Path
    rows: dict[str, dict]  # key: path relative to root (posix)
    path: Path | None = None  # the CSV file
    missing: bool = False  # no file at ``path``: every file under ``root`` is unlabelled
    lines: dict[str, int] = field(default_factory=dict)  # key -> line of its row
    # key -> the CSV its row is in, for rows of a manifest in a subfolder (with_nested); others are ``path``'s
    sources: dict[str, Path] = field(default_factory=dict)
    nested: list[Path] = field(default_factory=list)  # the subfolders' manifests read into this one

    def source_of(self, key: str) -> Path | None:
        """The CSV that holds (or, for a file without a row, would hold) ``key``'s row: the manifest of the
        nearest folder above it that has one, else ``path``."""
        if key in self.sources:
            return self.sources[key]
        for csv_path in sorted(self.nested, key=lambda p: -len(p.parts)):
            folder = csv_path.parent.resolve().relative_to(self.root.resolve()).as_posix() + "/"
            if key.startswith(folder):
                return csv_path
        return None if self.missing else self.path

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
    if typ == "VARCHAR":
        if name in _CHOICES and value.lower() not in _CHOICES[name]:
            raise ManifestError(f"{where}: column {name} must be one of {', '.join(_CHOICES[name])}, got {value!r}")
        return value.lower() if name in _CHOICES else value
    whole = typ != "DOUBLE"
    bad = f"{where}: column {name} must be a {'whole ' if whole else ''}number (>= 0), got {value!r}"
    if whole:
        if _WHOLE.fullmatch(value):  # exactly, never through a float (2**53 + 1 stays itself)
            n = int(value)
        elif "e" in value.lower() and value.lower() not in ("inf", "-inf", "infinity"):
            # awk's and spreadsheets' 2.52765e+10 for 25276510208: rounded to 6 digits, the rest lost (new user h5)
            raise ManifestError(
                f"{where}: column {name}: {value!r} is in scientific notation, which awk and spreadsheets print "
                "after rounding (its last digits are lost): write the whole number"
            )
        else:
            try:
                d = Decimal(value)
            except InvalidOperation:
                raise ManifestError(bad) from None
            if not d.is_finite() or d.adjusted() > 30 or d != d.to_integral_value():
                raise ManifestError(bad)
            n = int(d)
        if n < 0:
            raise ManifestError(bad)
        if n > _LIMITS[typ]:
            raise ManifestError(f"{where}: column {name}: {value} is too large (at most {_LIMITS[typ]:,})")
        lo, hi, why = _RANGES.get(name, (0, n, ""))
        if not lo <= n <= hi:
            raise ManifestError(f"{where}: column {name}: {value} is out of range {lo}-{hi} ({why})")
        return n
    try:
        f = float(value)
    except ValueError:
        raise ManifestError(bad) from None
    if not math.isfinite(f) or f < 0:
        raise ManifestError(bad)
    return f


def _text(path: Path) -> str:
    """The manifest's text: UTF-8 (a byte-order mark, as Excel writes, is dropped) or UTF-16 (with its
    byte-order mark, or without: every other byte of a CSV's text is then 0); anything else (Latin-1, ...) is refused with the line of the first bad byte."""
    with open_input(path) as fh:  # a FIFO another user swapped in would block the read for ever
        data = read_text_file(fh, path, "manifest")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as e:
            raise ManifestError(f"{path}: not valid UTF-16 ({e.reason}); save it as UTF-8") from None
    sample = data[:4096]
    if b"\x00" in sample and len(sample) >= 4 and sample.count(b"\x00") * 2 >= len(sample) - 2:
        encoding = "utf-16-le" if sample[1] == 0 else "utf-16-be"  # every other byte 0: UTF-16 without its BOM
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as e:
            raise ManifestError(f"{path}: not valid UTF-16 ({e.reason}); save it as UTF-8") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ManifestError(
            f"{path}:{line}: not UTF-8 (byte 0x{data[e.start]:02x}: Latin-1 or another "
            "legacy encoding?); save the manifest as UTF-8 (Excel: 'CSV UTF-8')"
        ) from None


def _rows(reader: csv.DictReader, path: Path):
    """The reader's rows; its error for a misplaced double quote named with the line."""
    while True:
        start = reader.line_num + 1  # the line after the row before
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise ManifestError(f"{path}:{start}: {e} (a double quote must open and close a whole value)") from None
        yield row


def load(path: Path) -> Manifest:
    """Read and validate a manifest. Missing file -> empty manifest with ``missing`` set (the
    command line refuses a --manifest that does not exist)."""
    path = Path(path)
    root = path.parent
    if not path.exists():
        return Manifest(root, {}, path=path, missing=True)
    if path.is_dir():
        raise ManifestError(f"{path} is a folder, not a manifest CSV file")
    rows: dict[str, dict] = {}
    lines: dict[str, int] = {}
    try:
        text = _text(path)
    except OSError as e:
        raise ManifestError(f"{path}: cannot read the manifest: {e.strerror or e}") from None
    with io.StringIO(text, newline="") as fh:
        reader = csv.DictReader(fh, strict=True)  # strict: a stray double quote is an error, not a shifted row
        if reader.fieldnames is None or "path" not in reader.fieldnames:
            raise ManifestError(f"{path}:1: the header must have a 'path' column")
        unknown = [c for c in reader.fieldnames if c not in _TYPES]
        if unknown:
            raise ManifestError(  # refused, not dropped: a misspelt ram_byte would lose its labels without a word
                f"{path}:1: unknown columns {unknown} (free text goes in notes); known: {', '.join(COLUMNS)}"
            )
        twice = sorted({c for c in reader.fieldnames if reader.fieldnames.count(c) > 1})
        if twice:  # csv keeps the last of two columns of one name: an empty second one would wipe the first
            raise ManifestError(f"{path}:1: the header names {', '.join(map(repr, twice))} twice")
        last_line = 1  # the header's
        for raw in _rows(reader, path):
            lineno = reader.line_num
            where = f"{path}:{lineno}"
            if None in raw:  # more fields than the header has: every later column would shift
                raise ManifestError(
                    f"{where}: {len(reader.fieldnames) + len(raw[None])} fields, the header has "
                    f"{len(reader.fieldnames)} (a value with a comma must be in double quotes)"
                )
            start, last_line = last_line + 1, lineno  # the row's first line: the one after the row before it
            if any("\n" in v for v in raw.values() if isinstance(v, str)):  # an unclosed quote took later rows
                raise ManifestError(
                    f"{path}:{start}: a quoted value runs on to line {lineno} (an unclosed double quote?): every "
                    "row must be one line"
                )
            rel = (raw.get("path") or "").strip()
            if not rel:
                raise ManifestError(f"{where}: empty path")
            p = Path(rel)
            if p.is_absolute() or ".." in p.parts:
                raise ManifestError(f"{where}: path {rel!r} must be relative to {root} and stay inside it")
            key = p.as_posix()
            if key in rows:
                raise ManifestError(f"{where}: duplicate row for {key}")
            rows[key] = {c: _convert(c, raw.get(c) or "", where) for c in COLUMNS}
            lines[key] = lineno
    return Manifest(root, rows, path=path, lines=lines)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # in a folder that cannot be read (no permission): as if there were none
        return False


def _resolved(path: Path) -> Path:
    """Path.resolve, a symlink loop an OSError (ELOOP) as Python 3.13 raises, not 3.11's RuntimeError. Reliability-37
    (store): a listed folder made a loop after the listing (a link re-pointed to a folder holding a link back): the
    RuntimeError left `storagelab ingest` as a traceback."""
    try:
        return path.resolve()
    except RuntimeError:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path)) from None


def with_nested(top: Manifest, folders: list[Path]) -> Manifest:
    """``top`` with the manifest.csv of every folder in ``folders`` that lies below ``top.root`` (the folders of
    the files an ingest lists, and theirs up to the root): a lab run's own ``DIR/lab/manifest.csv`` labels its
    files when ``DIR`` is ingested. A nested manifest's paths are relative to its folder. One row per file: a file
    with a row in two manifests is refused, naming both lines."""
    root = _resolved(top.root)
    found = set()
    for folder in folders:
        try:
            here = _resolved(folder)
        except OSError:  # gone or made a loop since the listing: its files fail as they are read
            continue
        while here != root and root in here.parents:
            if _is_file(here / "manifest.csv"):
                found.add(here)
            here = here.parent
    if not found:
        return top
    rows, lines = dict(top.rows), dict(top.lines)
    sources: dict[str, Path] = {}
    nested = []
    for folder in sorted(found, key=lambda f: (len(f.parts), f.as_posix())):  # the outer ones first
        sub = load(folder / "manifest.csv")
        prefix = folder.relative_to(root).as_posix() + "/"
        for rel, labels in sub.rows.items():
            key = prefix + rel
            if key in rows:
                other = sources.get(key, top.path)
                raise ManifestError(
                    f"{folder / 'manifest.csv'}:{sub.lines[rel]}: {rel} also has a row in {other}:{lines[key]}: one row per file "
                    "(delete one of the two rows)"
                )
            rows[key], lines[key], sources[key] = labels, sub.lines[rel], folder / "manifest.csv"
        nested.append(folder / "manifest.csv")
    return Manifest(top.root, rows, path=top.path, missing=top.missing, lines=lines, sources=sources, nested=nested)
