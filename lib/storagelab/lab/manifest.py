"""The lab's manifest rows: sanity flags, notes and the manifest.csv the ingest reads beside the saved outputs."""

from __future__ import annotations

import csv
import datetime as _dt
import errno
import io
import os
import shlex
from pathlib import Path

from .. import paths
from ..analysis.plausibility import direct_bypasses_page_cache
from ..devices import classify
from ..manifest import COLUMNS as MANIFEST_COLUMNS
from .system import _version_tuple


def sanity_flags(
    *,
    target_info: dict,
    direct: int,
    total_bytes: int,
    ram: int,
    numjobs: int,
    shared_file: bool,
    l2arc_bytes: int = 0,
    rw: str = "read",
) -> list[str]:
    """Reasons the numbers may not measure the disks, decided before the run (``rw``: fio's rw mode, for
    what a cache does to it: reads served from it, writes absorbed by it)."""
    flags = []
    fs = target_info.get("fstype")
    zv = target_info.get("zfs_version")
    if fs in ("tmpfs", "ramfs"):
        flags.append(
            f"RAM, not a disk: the target is on {fs}, whose files live in memory: these figures measure memory, not a "
            "device"
        )
    if fs == "zfs" and direct and zv and _version_tuple(zv) < (2, 3):
        flags.append(f"direct I/O on ZFS {zv} (< 2.3): O_DIRECT is ignored or refused, I/O goes through the ARC")

    if ram and total_bytes < ram + l2arc_bytes and not direct_bypasses_page_cache(direct, fs, zv):
        flags.append(
            f"file size {total_bytes} B below RAM{' + L2ARC' if l2arc_bytes else ''} "
            f"({ram + l2arc_bytes} B): {_cache_effect(rw)}"
        )
    if numjobs > 1 and shared_file:
        flags.append(f"numjobs={numjobs} share one file: the jobs contend for the same blocks")
    return flags


def _cache_effect(rw: str) -> str:
    """What a page cache/ARC larger than the test file does to fio's rw mode (bonnie++: 'readwrite')."""
    mode = rw.removeprefix("rand")
    if mode in ("read",):
        return "reads may come from the page cache/ARC"
    if mode in ("write", "trim"):
        return "writes may be absorbed by the page cache/ARC and counted before they reach the disks"
    return "reads may come from, and writes be absorbed by, the page cache/ARC"


def _device_text(devs: list[dict]) -> str:
    out = []
    for d in devs:
        model = d.get("model") or "unknown model"
        out.append(f"{d.get('device')} ({model})")
    return " + ".join(out) or None


def _notes(
    system: dict, target_info: dict, tool_version: str | None, flags: list[str], extra: dict | None = None
) -> str:
    parts = [f"kernel={system['kernel']}"]  # (the RAM has a column of its own: ram_bytes)
    if system.get("cpu"):
        parts.append(f"cpu={system['cpu']}")
    if tool_version:  # "fio-3.33" -> fio_version=3.33; "bonnie++ 2.00a" -> bonnie++_version=2.00a
        tool, _, ver = tool_version.replace(" ", "-").partition("-")
        parts.append(f"{tool}_version={ver}")
    parts.append(f"fstype={target_info.get('fstype')}")
    if target_info.get("mount_options"):
        parts.append(f"mount_options={target_info['mount_options']}")
    for d in target_info.get("devices", []):
        parts.append(
            f"{d.get('device')}: rotational={d.get('rota')} logical_sector_bytes={d.get('log-sec')} "
            f"physical_sector_bytes={d.get('phy-sec')} transport={d.get('tran')} driver={d.get('driver')} "
            f"firmware={d.get('rev')} device_class={classify(d).name}"
            + (f" backing={d['backing']} backing_fstype={d.get('backing_fstype')}" if d.get("backing") else "")
        )
    for k, v in sorted((target_info.get("zfs") or {}).items()):
        parts.append(f"zfs {k}={v}")
    for k, v in (extra or {}).items():
        parts.append(f"{k}={v}")
    parts += [f"sanity: {f}" for f in flags]
    return "; ".join(parts)


def manifest_for(out: Path) -> Path:
    """data/raw/manifest.csv for output under data/raw/, else OUT/manifest.csv."""
    try:
        out.resolve().relative_to(paths.RAW.resolve())
        return paths.MANIFEST
    except ValueError:
        return out / "manifest.csv"


def single_device_layout(tinfo: dict) -> dict:
    """The layout of a target that is one block device and no pool (ext4, xfs, btrfs on /dev/sdb): single, 1 vdev of
    width 1, so the analyses compare it as a layout; {} for anything else (a pool says its own; md/LVM are not one
    device)."""
    devices = tinfo.get("devices") or []
    name = str((devices[0] or {}).get("name") or "") if len(devices) == 1 else ""
    if tinfo.get("pool") or not name or name.startswith(("md", "dm-")):
        return {}
    return {"vdev_type": "single", "vdev_count": 1, "vdev_width": 1}


def manifest_row(
    file: Path,
    root: Path,
    label: str,
    system: dict,
    tinfo: dict,
    argv: list[str],
    notes: str,
    labels: dict | None = None,
) -> dict:
    """The manifest row of one saved file: what the lab knows of the system and target, ``labels`` on top."""
    layout = tinfo.get("layout") or single_device_layout(tinfo)
    return {
        "path": file.resolve().relative_to(root.resolve()).as_posix(),
        "study": "lab",
        "label": label,
        "host": system["host"],
        "os": f"{system['os']} (kernel {system['kernel']})",
        "stack": tinfo.get("fstype"),
        "pool": tinfo.get("pool"),
        "devices": _device_text(tinfo.get("devices", [])),
        "ram_bytes": system.get("ram_bytes"),
        **{k: layout.get(k) for k in ("vdev_type", "vdev_count", "vdev_width")},
        **{k: " ".join(layout.get(k) or []) or None for k in ("cache_devices", "log_devices")},
        "recordsize_bytes": (tinfo.get("zfs") or {}).get("recordsize"),
        "ashift": tinfo.get("ashift"),
        "zfs_version": tinfo.get("zfs_version"),
        "command": shlex.join(argv),
        "notes": notes,
        **(labels or {}),
    }


def _add_columns(manifest: Path, columns: list[str]) -> list[str]:
    """Rewrite the manifest with ``columns`` added at the end of its header (empty in its rows); temp file, then
    rename. Returns the new header."""
    with open(manifest, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        rows = list(reader)
    header = rows[0] + columns
    tmp = manifest.with_name(f".{manifest.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for r in rows[1:]:
            w.writerow(r + [""] * len(columns) if r else r)
    os.replace(tmp, manifest)
    return header


def append_manifest(manifest: Path, rows: list[dict]) -> int:
    """Add rows (paths relative to the manifest's folder); rows whose path is already listed are kept as
    they are. Returns the number added."""
    have: set[str] = set()
    header = None
    if manifest.exists() and manifest.stat().st_size:
        with open(manifest, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames
            have = {(r.get("path") or "").strip() for r in reader}
    new = [r for r in rows if r["path"] not in have]
    if not new:
        return 0
    manifest.parent.mkdir(parents=True, exist_ok=True)
    cols = header or MANIFEST_COLUMNS
    unknown = {k for r in new for k in r} - set(cols)
    if unknown - set(MANIFEST_COLUMNS):
        raise ValueError(f"manifest {manifest} has no columns {sorted(unknown - set(MANIFEST_COLUMNS))}")
    if unknown:  # a manifest written before a column existed (ram_bytes): the header grows, the rows stay
        cols = _add_columns(manifest, [c for c in MANIFEST_COLUMNS if c in unknown])
    # the rows in one write (reliability-37: a run's 13 rows, 15 KB, went out in two 8 KB writes of the file's buffer,
    # and a lab killed between them left its output's row without its logs' rows: the re-run took the run as saved
    # and stored those logs unlabelled, exit 0)
    buf = io.StringIO(newline="")
    if header is None:
        buf.write(",".join(cols) + "\n")
    else:
        with open(manifest, "rb") as chk:
            chk.seek(0, 2)
            if chk.tell():
                chk.seek(-1, 2)
                if chk.read(1) != b"\n":
                    buf.write("\n")
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="raise", lineterminator="\n")
    for r in new:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})
    data = buf.getvalue().encode("utf-8")
    with open(manifest, "ab", buffering=0) as fh:
        if fh.write(data) != len(data):  # cut short (a full disk): the caller puts the manifest back as it was
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(manifest))
    return len(new)


def default_out(host: str) -> Path:
    """data/raw/lab/HOST/DATE, the date in UTC as every time storagelab shows (the local date put two runs an hour
    apart in two folders, or one day's runs in yesterday's, by the machine's time zone: reliability-27 low)."""
    return paths.RAW / "lab" / host / _dt.datetime.now(_dt.UTC).date().isoformat()
