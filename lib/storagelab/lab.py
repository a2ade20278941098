"""Measure your own disks: ``storagelab lab fio | bonnie | zfs-sweep``.

* ``lab fio`` runs a matrix of fio jobs (rw modes x block sizes x (iodepth, numjobs)) against a target
  directory, each run saved verbatim (fio's normal + JSON+ output, its bw/iops/lat/clat/slat logs and
  clat histogram logs) under ``data/raw/lab/<host>/<date>/`` or ``--out``; writes each file's manifest
  row (host, OS, kernel, filesystem, devices with model, rotational flag and sector sizes, RAM, fio
  version, command, ZFS properties when the target is on ZFS, sanity flags); then ingests them.
  A run whose output exists is skipped (a re-run resumes); Ctrl-C keeps the completed runs.
* ``lab bonnie`` does the same for one bonnie++ run (file size 2 x RAM unless ``--size``).
* ``lab zfs-sweep`` is the Ars-style topology sweep: it prints every zpool/zfs/fio command and runs
  nothing without ``--yes`` and the disks named with ``--disks``; every pool it creates it destroys.

Where the manifest rows go: with the output under data/raw/ they are appended to data/raw/manifest.csv
(the one manifest the ingest reads for data/raw/); elsewhere to OUT/manifest.csv, which the lab's own
ingest uses (``storagelab ingest OUT --manifest OUT/manifest.csv`` does the same later).
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import paths
from .devices import beyond_class, classify
from .labhelp import SUBCOMMANDS
from .manifest import COLUMNS as MANIFEST_COLUMNS
from .repeat_auto import repeat_until_settled

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


# ----------------------------------------------------------------------------- presets


@dataclass(frozen=True)
class Preset:
    doc: str
    rw: tuple[str, ...]
    bs: tuple[str, ...]
    depth_jobs: tuple[tuple[int, int], ...]  # (iodepth, numjobs)
    size: str  # per job, fio syntax
    runtime_s: int
    direct: int = 1
    extra: tuple[str, ...] = ()  # more fio options, e.g. ("--fsync=1",)
    log_avg_msec: int = 500  # 500 = fio's own bw/iops sampling window: the logs are its samples
    log_hist_msec: int = 1000
    shared_file: bool = False  # all numjobs clones on one --filename (as the homelab study did)
    # named tests (rw, bs, iodepth, numjobs) instead of the rw x bs x depth_jobs matrix; --rw/--bs/--depth-jobs
    # then choose among them
    points: tuple[tuple[str, str, int, int], ...] = ()


# CrystalDiskMark's and KDiskMark's four tests, each read and write: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1
STANDARD_TESTS = (
    ("SEQ1M Q8T1", "1M", 8, 1),
    ("SEQ1M Q1T1", "1M", 1, 1),
    ("RND4K Q32T1", "4k", 32, 1),
    ("RND4K Q1T1", "4k", 1, 1),
)


PRESETS: dict[str, Preset] = {
    "smoke": Preset(
        "a few seconds: random 4k read and sequential 4k write, iodepth x numjobs 1x1 and 2x2, 2 s each (tests)",
        ("randread", "write"),
        ("4k",),
        ((1, 1), (2, 2)),
        "8M",
        2,
        log_avg_msec=250,
        log_hist_msec=500,
    ),
    "standard": Preset(
        "the classic disk test of CrystalDiskMark/KDiskMark: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1 and RND4K Q1T1, "
        "each read and write, 1 GiB file, 5 s each, direct I/O (--size and --runtime change them); "
        "notebook 10_disk_card shows them as one card per machine and device",
        ("read", "write"),
        ("1M", "4k"),
        ((8, 1), (1, 1), (32, 1)),
        "1G",
        5,
        points=tuple(
            ((("rand" if bs == "4k" else "") + rw), bs, qd, nj)
            for _name, bs, qd, nj in STANDARD_TESTS
            for rw in ("read", "write")
        ),
    ),
    "homelab-seq-write": Preset(
        "the homelab-mergerfs study: sequential 1M write, numjobs 8 x iodepth 8 on one shared "
        "16 GiB file (--filename, as the study did: flagged), 60 s",
        ("write",),
        ("1M",),
        ((8, 8),),
        "16G",
        60,
        shared_file=True,
    ),
    "ars-4k": Preset(
        "the Ars ZFS-vs-RAID study: random 4K read and write, 1 process at iodepth 1 and 8 x 8",
        ("randread", "randwrite"),
        ("4k",),
        ((1, 1), (8, 8)),
        "4G",
        60,
    ),
    "ars-1m": Preset(
        "the Ars ZFS-vs-RAID study: random 1M read and write, 1 process at iodepth 1 and 8 x 8",
        ("randread", "randwrite"),
        ("1M",),
        ((1, 1), (8, 8)),
        "4G",
        60,
    ),
}


@dataclass
class Run:
    run_id: str
    rw: str
    bs: str
    iodepth: int
    numjobs: int
    size: str
    runtime_s: int
    direct: int
    argv: list[str] = field(default_factory=list)  # the fio command, exactly
    shared_file: bool = False

    def renamed(self, run_id: str, out: Path) -> Run:
        """The same run saved under another id: its ``--name`` and log prefix follow, nothing else changes."""
        old_log, new_log = str(out / self.run_id), str(out / run_id)
        argv = []
        for a in self.argv:
            key, eq, value = a.partition("=")
            if a == f"--name={self.run_id}":
                a = f"--name={run_id}"
            elif eq and value == old_log:
                a = f"{key}={new_log}"
            argv.append(a)
        return replace(self, run_id=run_id, argv=argv)


def _size_bytes(text: str) -> int:
    from .units import fio_option_bytes

    return int(fio_option_bytes(text))


def plan_points(preset: Preset, rw=None, bs=None, depth_jobs=None) -> list[tuple[str, str, int, int]]:
    """(rw, bs, iodepth, numjobs) of each run: the preset's named tests, kept where they match the --rw/--bs/
    --depth-jobs given (the standard preset's --rw randread is its two RND4K reads); else the matrix of the
    preset's parts, each replaced by the option given for it."""
    if preset.points:
        return [
            (r, b, qd, nj)
            for r, b, qd, nj in preset.points
            if (not rw or r in rw)
            and (not bs or b.lower() in {x.lower() for x in bs})
            and (not depth_jobs or (qd, nj) in depth_jobs)
        ]
    return [
        (r, b, qd, nj) for r in rw or preset.rw for b in bs or preset.bs for qd, nj in depth_jobs or preset.depth_jobs
    ]


def build_runs(
    preset: Preset,
    *,
    target: Path,
    out: Path,
    rw=None,
    bs=None,
    depth_jobs=None,
    size=None,
    runtime_s=None,
    direct=None,
    ioengine="libaio",
    filename=None,
    log_avg_msec=None,
    log_hist_msec=None,
    fio="fio",
    extra=(),
) -> list[Run]:
    """The matrix of one preset (any part overridden), each run with its exact fio command.

    Each run is one fio job ``RUNID`` with ``numjobs`` clones (group_reporting: one result per run);
    its logs are ``OUT/RUNID_{bw,iops,lat,clat,slat}.N.log`` and ``OUT/RUNID_clat_hist.N.log``
    (N = clone 1..numjobs), its output ``OUT/RUNID.txt``. The data files are fio's own per-clone
    files in ``target`` (or the one shared ``filename``), deleted at the end (unlink=1).
    """
    runs = []
    size = size or preset.size
    runtime_s = preset.runtime_s if runtime_s is None else runtime_s
    direct = preset.direct if direct is None else direct
    log_avg_msec = log_avg_msec or preset.log_avg_msec
    log_hist_msec = log_hist_msec or preset.log_hist_msec
    for r, b, qd, nj in plan_points(preset, rw, bs, depth_jobs):
        run_id = f"{r}-{b}-qd{qd}-nj{nj}".lower()
        log = str(out / run_id)
        argv = [
            fio,
            f"--name={run_id}",
            f"--directory={target}",
            f"--rw={r}",
            f"--bs={b}",
            f"--size={size}",
            f"--ioengine={ioengine}",
            f"--iodepth={qd}",
            f"--numjobs={nj}",
            f"--direct={direct}",
            f"--runtime={runtime_s}",
            "--time_based",
            "--group_reporting",
            "--unlink=1",
        ]
        shared = filename or (f"{run_id}.data" if preset.shared_file else None)
        if shared:
            argv.append(f"--filename={shared}")
        argv += [
            f"--write_bw_log={log}",
            f"--write_iops_log={log}",
            f"--write_lat_log={log}",
            f"--log_avg_msec={log_avg_msec}",
            f"--write_hist_log={log}",
            f"--log_hist_msec={log_hist_msec}",
            *preset.extra,
            *extra,
            "--output-format=normal,json+",
        ]
        runs.append(Run(run_id, r, b, qd, nj, size, runtime_s, direct, argv, bool(shared)))
    return runs


# ----------------------------------------------------------------------------- the system under test


def _cmd(argv: list[str], timeout: float = 20) -> str | None:
    """stdout of a command, or None when it is missing or fails."""
    if not shutil.which(argv[0]):
        return None
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def ram_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def zfs_version() -> str | None:
    v = _read("/sys/module/zfs/version")
    if v:
        return v.split("-")[0]
    out = _cmd(["zfs", "version"])
    if out:
        m = re.search(r"zfs-(?:kmod-)?([0-9][0-9.]*)", out)
        return m.group(1) if m else None
    return None


def _version_tuple(v: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v or "")[:3])


def describe_target(target: Path) -> dict:
    """What the target directory sits on: filesystem, mount options, devices (model, rotational flag,
    logical/physical sector size), and for ZFS the dataset's properties and the pool's layout."""
    info: dict = {"target": str(target)}
    mnt = _cmd(["findmnt", "-no", "FSTYPE,SOURCE,OPTIONS", "-T", str(target)])
    if mnt:
        parts = mnt.split()
        info["fstype"] = parts[0]
        info["source"] = parts[1] if len(parts) > 1 else None
        info["mount_options"] = parts[2] if len(parts) > 2 else None
    devices = []
    if info.get("fstype") == "zfs" and info.get("source"):
        dataset = info["source"]
        pool = dataset.split("/")[0]
        info["pool"] = pool
        info["dataset"] = dataset
        props = _cmd(
            ["zfs", "get", "-Hp", "-o", "property,value", "recordsize,compression,sync,primarycache,atime", dataset]
        )
        if props:
            info["zfs"] = dict(line.split("\t", 1) for line in props.splitlines() if "\t" in line)
        ashift = _cmd(["zpool", "get", "-Hp", "-o", "value", "ashift", pool])
        if ashift and ashift.isdigit() and int(ashift) > 0:
            info["ashift"] = int(ashift)
        else:  # 0: ZFS chose each vdev's ashift, which only the pool's configuration says
            config = _cmd(["zdb", "-C", pool], timeout=60)
            if config and config_ashift(config) is not None:
                info["ashift"] = config_ashift(config)
        status = _cmd(["zpool", "status", "-P", pool])
        if status:
            info["zpool_status"] = status
            info["layout"] = pool_layout(status)
            devices = info["layout"]["devices"]
            sizes = [_cmd(["lsblk", "-bndo", "SIZE", d]) for d in info["layout"]["cache_devices"]]
            info["l2arc_bytes"] = sum(int(v) for v in sizes if v and v.isdigit())
        info["zfs_version"] = zfs_version()
    elif info.get("source", "").startswith("/dev/"):
        devices = [info["source"]]
    info["devices"] = [describe_device(d) for d in devices]
    return info


def config_ashift(text: str) -> int | None:
    """The ashift of a pool's data vdevs from ``zdb -C`` (each top-level child of ``vdev_tree`` prints its own
    ``ashift:``; log vdevs, ``is_log: 1``, are left out); None when it says none or the data vdevs differ."""
    lines = text.expandtabs(8).splitlines()
    tree = next((i for i, ln in enumerate(lines) if ln.strip() == "vdev_tree:"), None)
    if tree is None:
        return None
    base = len(lines[tree]) - len(lines[tree].lstrip())
    child = re.compile(r"children\[\d+\]:")
    top: list[dict] = []
    child_indent = None
    for ln in lines[tree + 1 :]:
        if not ln.strip():
            continue
        indent = len(ln) - len(ln.lstrip())
        if indent <= base:
            break
        if child.fullmatch(ln.strip()) and (child_indent is None or indent == child_indent):
            child_indent = indent
            top.append({})
        elif top and child_indent is not None and ln.lstrip() == ln.strip() and indent == child_indent + 4:
            key, _, value = ln.strip().partition(": ")
            top[-1].setdefault(key, value)
    ashifts = {int(v["ashift"]) for v in top if v.get("ashift", "").isdigit() and v.get("is_log", "0") == "0"}
    return ashifts.pop() if len(ashifts) == 1 else None


_VDEV = re.compile(r"^(mirror|raidz[123]?|draid[123]?)(?::[^-\s]*)?(?:-\d+)?$")
_SECTIONS = {
    "logs": "log_devices",
    "cache": "cache_devices",
    "spares": "spares",
    "special": "special",
    "dedup": "dedup",
}


def pool_layout(status: str) -> dict:
    """The data vdevs of a ``zpool status`` config: vdev_type (single, mirror, raidz1..3, draid; 'mixed'),
    vdev_count, vdev_width (None when the widths differ), the data devices, and the log and cache devices."""
    lines = status.expandtabs(8).splitlines()
    try:
        head = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["NAME", "STATE"])
    except StopIteration:
        return {
            "vdev_type": None,
            "vdev_count": None,
            "vdev_width": None,
            "devices": [],
            "log_devices": [],
            "cache_devices": [],
        }
    indent = lambda ln: len(ln) - len(ln.lstrip())  # noqa: E731
    base = None
    section = None
    vdevs: list[tuple[str, list[str]]] = []
    other: dict[str, list[str]] = {v: [] for v in _SECTIONS.values()}
    for ln in lines[head + 1 :]:
        if not ln.strip():
            if base is not None:
                break
            continue
        name, level = ln.split()[0], indent(ln)
        if base is None:
            base = level  # the pool's own line
            continue
        if level <= base:
            section = _SECTIONS.get(name, name)
            continue
        depth = (level - base) // 2
        if section is not None:
            if depth >= 1 and not _VDEV.match(name):
                other.setdefault(section, []).append(name)
            continue
        if depth == 1:
            m = _VDEV.match(name)
            vdevs.append((m.group(1) if m else "single", [] if m else [name]))
        elif vdevs:
            vdevs[-1][1].append(name)
    kinds = {("raidz1" if k == "raidz" else k) for k, _ in vdevs}
    widths = {len(d) for _, d in vdevs}
    return {
        "vdev_type": (kinds.pop() if len(kinds) == 1 else "mixed") if kinds else None,
        "vdev_count": len(vdevs) or None,
        "vdev_width": widths.pop() if len(widths) == 1 else None,
        "devices": [d for _, ds in vdevs for d in ds],
        "log_devices": other["log_devices"],
        "cache_devices": other["cache_devices"],
    }


def describe_device(dev: str) -> dict:
    """Model, rotational flag and sector sizes of a block device (of its disk for a partition)."""
    d = {"device": dev}
    out = _cmd(["lsblk", "-ndJ", "-o", "NAME,PKNAME,MODEL,ROTA,TRAN,REV,LOG-SEC,PHY-SEC,SIZE,TYPE", dev])
    if out:
        try:
            row = json.loads(out)["blockdevices"][0]
            keys = ("name", "pkname", "model", "rota", "tran", "rev", "log-sec", "phy-sec", "size", "type")
            d.update({k: row.get(k) for k in keys})
        except (ValueError, KeyError, IndexError):
            pass
    name = (d.get("pkname") or d.get("name") or Path(os.path.realpath(dev)).name).strip()
    q = f"/sys/block/{name}"
    driver = os.path.realpath(f"{q}/device/driver") if os.path.exists(f"{q}/device/driver") else None
    d["driver"] = Path(driver).name if driver else None  # virtio_blk, nvme, sd ...: what lsblk does not say
    for key, f in (
        ("model", "device/model"),
        ("rota", "queue/rotational"),
        ("rev", "device/firmware_rev"),
        ("rev", "device/rev"),
        ("log-sec", "queue/logical_block_size"),
        ("phy-sec", "queue/physical_block_size"),
    ):
        if d.get(key) in (None, ""):
            v = _read(f"{q}/{f}")
            if v is not None:
                d[key] = v
    for key in ("model", "rev"):
        if isinstance(d.get(key), str):
            d[key] = d[key].strip() or None
    if isinstance(d.get("rota"), bool):
        d["rota"] = int(d["rota"])
    return d


def describe_system() -> dict:
    os_name = None
    rel = _read("/etc/os-release") or ""
    m = re.search(r'^PRETTY_NAME="?([^"\n]*)', rel, re.M)
    if m:
        os_name = m.group(1)
    cpu = re.search(r"^model name\s*:\s*(.+)$", _read("/proc/cpuinfo") or "", re.M)
    return {
        "host": socket.gethostname(),
        "os": os_name,
        "kernel": os.uname().release,
        "ram_bytes": ram_bytes(),
        "cpu": f"{cpu.group(1).strip()} x {os.cpu_count()}" if cpu else None,
    }


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
    if fs == "zfs" and direct and zv and _version_tuple(zv) < (2, 3):
        flags.append(f"direct I/O on ZFS {zv} (< 2.3): O_DIRECT is ignored or refused, I/O goes through the ARC")
    from .analysis.plausibility import direct_bypasses_page_cache  # the rule notebook 05 applies too

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
        )
    for k, v in sorted((target_info.get("zfs") or {}).items()):
        parts.append(f"zfs {k}={v}")
    for k, v in (extra or {}).items():
        parts.append(f"{k}={v}")
    parts += [f"sanity: {f}" for f in flags]
    return "; ".join(parts)


# ----------------------------------------------------------------------------- manifest


def manifest_for(out: Path) -> Path:
    """data/raw/manifest.csv for output under data/raw/, else OUT/manifest.csv."""
    try:
        out.resolve().relative_to(paths.RAW.resolve())
        return paths.MANIFEST
    except ValueError:
        return out / "manifest.csv"


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
    layout = tinfo.get("layout") or {}
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
    with open(manifest, "a", newline="", encoding="utf-8") as fh:
        if header is None:
            fh.write(",".join(cols) + "\n")
        else:
            with open(manifest, "rb") as chk:
                chk.seek(0, 2)
                if chk.tell():
                    chk.seek(-1, 2)
                    if chk.read(1) != b"\n":
                        fh.write("\n")
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="raise", lineterminator="\n")
        for r in new:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})
    return len(new)


# ----------------------------------------------------------------------------- running


def default_out(host: str) -> Path:
    return paths.RAW / "lab" / host / _dt.date.today().isoformat()


def _dies_with_us():
    """A preexec_fn for a benchmark child: the kernel kills it when this process dies, however it dies (SIGKILL,
    the OOM killer), so no orphaned benchmark goes on writing into OUT after the lab is gone."""
    from functools import partial

    from .procs import die_with_parent

    return partial(die_with_parent, signal.SIGKILL, os.getpid())


# Kills a process and all its descendants when the lab dies (SIGTERM from the kernel, see _guard): fio's job
# processes are its forks, each in a session of its own, which no signal to fio or its group reaches
_GUARD = """
import os, signal, sys

def tree(root):
    children = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(pid))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found

TARGET = []  # the benchmark's pid, sent on stdin once it has started

def kill(*_):
    for pid in tree(TARGET[0]) if TARGET else []:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(0)

line = sys.stdin.readline()  # SIGTERM is still blocked: a lab killed meanwhile is seen below
if line.strip().isdigit():
    TARGET.append(int(line))
signal.signal(signal.SIGTERM, kill)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # blocked until now: a SIGTERM sent meanwhile waited
if not TARGET or os.getppid() != int(sys.argv[1]):  # the lab died before this guard was ready
    kill()
while True:
    signal.pause()
"""


def _guard() -> subprocess.Popen:
    """A watcher that kills a process and its descendants when this process dies, however it dies; started
    before the benchmark (so it is ready when fio forks its jobs), then told the benchmark's pid with
    ``_guard_on``; ended with ``.kill()`` (SIGKILL: it does not fire) once the benchmark is over. It ignores
    Ctrl-C (the lab stops fio itself), and SIGTERM is blocked until its handler is set."""
    return subprocess.Popen(
        [sys.executable, "-c", _GUARD, str(os.getpid())], stdin=subprocess.PIPE, preexec_fn=_guard_preexec
    )


def _guard_on(guard: subprocess.Popen, pid: int) -> None:
    try:
        guard.stdin.write(f"{pid}\n".encode())
        guard.stdin.close()
    except OSError:  # pragma: no cover - the guard is gone
        pass


def _guard_preexec() -> None:
    from .procs import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # stays ignored through exec: no KeyboardInterrupt traceback
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    die_with_parent(signal.SIGTERM)


STOP_GRACE_S = 10.0  # seconds fio has to end after SIGTERM (Ctrl-C, kill) before it and its jobs are killed


def _wait_for_fio(p: subprocess.Popen, stop: list[int]) -> bytes:
    """fio's stderr once it has ended. Once the lab is told to stop (``stop``), fio gets STOP_GRACE_S to end:
    fio signalled during its start-up was seen to hang for ever (main in a futex wait, its job running on), and
    the lab with it; then fio and its jobs are killed."""
    from .procs import kill_descendants

    stopped_at = None
    while True:
        try:
            return p.communicate(timeout=0.5)[1] or b""
        except subprocess.TimeoutExpired:
            if stop and stopped_at is None:
                stopped_at = time.monotonic()
            if stopped_at is not None and time.monotonic() - stopped_at > STOP_GRACE_S:
                kill_descendants(p.pid)
                p.kill()


def _fmt_s(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")


def _ingest(files: list[Path], db: Path | None, manifest: Path) -> int:
    from .store import ingest

    if not files:
        return 0
    from .errors import DatabaseBusyError

    db_path = Path(db) if db else paths.DB
    try:
        s = ingest([str(f) for f in files], db_path=db_path, manifest_path=manifest, progress=False)
    except DatabaseBusyError:
        print(
            f"storagelab lab: the runs are saved but not ingested: {db_path} is in use by another process; run this "
            "lab command again when it is free (it ingests the saved runs and runs nothing again)",
            file=sys.stderr,
        )
        return 2
    print(f"ingest: {s.line()}")
    for e in s.errors:
        print(f"error: {e}", file=sys.stderr)
    return 1 if s.failed else 0


def _run_files(out: Path, run_id: str) -> list[Path]:
    return sorted(
        p
        for p in out.glob(f"{run_id}*")
        if p.name == f"{run_id}.txt"
        or re.fullmatch(re.escape(run_id) + r"_(bw|iops|lat|clat|slat|clat_hist)(\.\d+)?\.log", p.name)
    )


def saved_commands(manifest: Path) -> dict[str, str]:
    """path -> command of the manifest's rows (paths relative to the manifest's folder); {} without a manifest."""
    if not manifest.exists():
        return {}
    with open(manifest, newline="", encoding="utf-8") as fh:
        return {(r.get("path") or "").strip(): r.get("command") or "" for r in csv.DictReader(fh)}


def output_slots(stem: str, out: Path, saved: dict[str, str], repeat: int, command_of, tool: str, log=print):
    """Where ``repeat`` outputs of one command go in OUT, and whether each is already saved: ``(id, done)`` for ids
    STEM, STEM-2, STEM-3 ... (output ``OUT/<id>.txt``); an id whose saved output was made by another command (its
    manifest row says) is skipped over, one whose output has no manifest row is taken as this command's.
    ``command_of(id)``: the command line that id's run would have."""
    root = manifest_for(out).parent.resolve()
    slots: list[tuple[str, bool]] = []
    k = 1
    while len(slots) < repeat:
        rid = stem if k == 1 else f"{stem}-{k}"
        output = out / f"{rid}.txt"
        k += 1
        if not output.exists():
            slots.append((rid, False))
            continue
        command = saved.get(output.resolve().relative_to(root).as_posix())
        if command is None or command == command_of(rid):
            slots.append((rid, True))
        else:
            log(f"lab {tool}: {output.name} in {out} was made by another command: kept, this run gets the next id")
    return slots


def slot_labels(name: str, stem: str, ids: list[str]) -> dict[str, str]:
    """The labels of one command's runs, saved as ``ids`` (its slots, in order): ``name``, then ``name (run 2)``
    ..., the form the analyses take out to find repeats of one configuration (stacks.repeats). When the command's
    first id is not ``stem`` (a run of another command holds it: another target, size ...), its runs are
    ``name [ID]``, ``name [ID] (run 2)`` ...: not taken for repeats of that other command."""
    base = name if not ids or ids[0] == stem else f"{name} [{ids[0]}]"
    return {rid: base if k == 0 else f"{base} (run {k + 1})" for k, rid in enumerate(ids)}


def run_slots(run: Run, out: Path, saved: dict[str, str], repeat: int = 1, log=print) -> list[tuple[Run, bool]]:
    """``output_slots`` of one fio run: the run under each id (its name and logs follow the id)."""

    def named(rid: str) -> Run:
        return run if rid == run.run_id else run.renamed(rid, out)

    slots = output_slots(run.run_id, out, saved, repeat, lambda rid: shlex.join(named(rid).argv), "fio", log)
    return [(named(rid), done) for rid, done in slots]


def run_fio_matrix(
    runs: list[Run],
    *,
    target: Path,
    out: Path,
    db: Path | None = None,
    labels: dict | None = None,
    ingest: bool = True,
    shared_file: bool = False,
    fio: str = "fio",
    device_limit: float | None = None,
    repeat: int = 1,
    log=print,
) -> int:
    """Run each fio command ``repeat`` times, save and label its files, ingest them. A run already saved in OUT
    with the same command is not run again (a re-run resumes); a saved run of the same id made with another command
    (other size, runtime, target ...) is kept, and this one is saved as ``RUNID-2`` (the next free id).
    ``device_limit``: what the devices can deliver, bytes/s; a run measured faster is flagged (cache)."""
    target.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    version = _cmd([fio, "--version"])
    system = describe_system()
    tinfo = describe_target(target)
    manifest = manifest_for(out)
    root = manifest.parent
    saved = saved_commands(manifest)
    planned = [(slot, done, r.run_id) for r in runs for slot, done in run_slots(r, out, saved, repeat, log=log)]
    todo = [r for r, done, _ in planned if not done]
    label_of: dict[str, str] = {}
    for stem in dict.fromkeys(stem for _, _, stem in planned):  # each command's slots, in order
        label_of.update(slot_labels(stem, stem, [r.run_id for r, _, s in planned if s == stem]))
    if len(todo) < len(planned):
        log(f"lab fio: {len(planned) - len(todo)} of {len(planned)} runs already saved in {out}: skipped (resume)")
    done_files: list[Path] = []
    started = time.monotonic()
    spent: list[float] = []

    def _run_one(i: int, run: Run) -> None:
        est_each = (sum(spent) / len(spent)) if spent else run.runtime_s + 2
        left = len(todo) - i
        log(f"[{i}/{len(todo)}] {run.run_id}: {left} left after this, about {_fmt_s(est_each * (left + 1))} to go")
        shared = shared_file or run.shared_file
        total = _size_bytes(run.size) * (1 if shared else run.numjobs)
        flags = sanity_flags(
            target_info=tinfo,
            direct=run.direct,
            total_bytes=total,
            ram=system["ram_bytes"],
            numjobs=run.numjobs,
            shared_file=shared,
            l2arc_bytes=tinfo.get("l2arc_bytes", 0),
            rw=run.rw,
        )
        for f in flags:
            log(f"  sanity: {f}")
        part = out / f".{run.run_id}.txt.part"  # hidden: an ingest skips it should this process be killed outright
        t0 = time.monotonic()
        with open(part, "wb") as fh:
            # fio and its job processes are killed by a guard should this process be killed outright
            guard = _guard()
            try:
                p = subprocess.Popen(run.argv, stdout=fh, stderr=subprocess.PIPE)
                _guard_on(guard, p.pid)
                current[:] = [p]
                err = _wait_for_fio(p, stop)
            finally:
                guard.kill()
                guard.wait()
            current.clear()
        if stop:  # fio may have stopped early and still written everything: not a complete run
            for f in _run_files(out, run.run_id) + [part]:
                f.unlink(missing_ok=True)
            log(f"interrupted: {run.run_id} discarded; {i - 1} completed runs kept (a re-run resumes)")
            return
        if p.returncode != 0:
            # kept outside OUT (under data/raw/ every file needs a manifest row and must parse), in a folder of
            # this run's own (mkdtemp: a new name, mode 0700): never a fixed path another user could plant a
            # symlink at, which the lab (as root) would write through
            import tempfile

            if not failed_dir:
                failed_dir.append(Path(tempfile.mkdtemp(prefix="storagelab-lab-failed-")))
            keep = failed_dir[0] / f"{run.run_id}.txt"
            shutil.move(str(part), keep)
            log(f"  fio failed ({p.returncode}), output kept in {keep}: {err.decode(errors='replace').strip()[-500:]}")
            failed.append(run.run_id)
            for f in _run_files(out, run.run_id):
                f.unlink(missing_ok=True)
            return
        part.rename(out / f"{run.run_id}.txt")
        spent.append(time.monotonic() - t0)
        files = _run_files(out, run.run_id)
        empty = [f for f in files if f.stat().st_size == 0]
        for f in empty:  # e.g. slat with a synchronous ioengine: fio writes the file, with no line
            f.unlink()
        files = [f for f in files if f not in empty]
        for f in cache_flags(out / f"{run.run_id}.txt", device_limit, tinfo.get("devices"), _size_bytes(run.bs)):
            log(f"  sanity: {f}")
            flags.append(f)
        notes = _notes(
            system, tinfo, version, flags, {"empty logs not kept": ",".join(f.name for f in empty)} if empty else None
        )
        extra = {**({"device_limit_bytes_per_s": device_limit} if device_limit else {}), **(labels or {})}
        append_manifest(
            manifest,
            [manifest_row(f, root, label_of[run.run_id], system, tinfo, run.argv, notes, extra) for f in files],
        )
        done_files.extend(files)

    failed: list[str] = []
    failed_dir: list[Path] = []  # where failed runs' output is kept (made at the first failure)
    stop: list[int] = []  # Ctrl-C: the running fio is stopped and its run discarded; completed runs stay
    current: list[subprocess.Popen] = []

    def on_sigint(signum, frame):
        stop.append(signum)
        for proc in current:
            if proc.poll() is None:
                proc.terminate()

    old_handler = _catch_stop_signals(on_sigint)
    try:
        for i, run in enumerate(todo, 1):
            if stop:
                break
            _run_one(i, run)
    finally:
        _restore_signals(old_handler)
    log(
        f"lab fio: {len(done_files)} files from {len(spent)} runs in {_fmt_s(time.monotonic() - started)}; "
        + (f"manifest {manifest}" if done_files else "nothing new to label")
    )
    # the new runs, and any saved before but not yet in the database (an ingest that failed or was stopped: a
    # re-run resumes it; the ingest skips the files it already has)
    saved_files = [
        f for slot, _, _ in planned if (out / f"{slot.run_id}.txt").exists() for f in _run_files(out, slot.run_id)
    ]
    rc = _ingest(saved_files, db, manifest) if ingest else 0
    if failed:
        log(f"lab fio: {len(failed)} runs failed: {', '.join(failed)}")
    return 128 + stop[0] if stop else (1 if failed else rc)  # 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP


def run_fio_auto(
    runs: list[Run],
    *,
    out: Path,
    db: Path | None,
    ingest: bool,
    tolerance_pct: float,
    min_runs: int,
    max_runs: int,
    log=print,
    **matrix,
) -> int:
    """``--repeat auto``: each run repeated until the spread of its bandwidth settles (``repeat_auto``), then the
    saved runs ingested once. ``matrix``: the other arguments of ``run_fio_matrix``."""
    by_id = {r.run_id: r for r in runs}
    manifest = manifest_for(out)

    def run_round(ids: list[str], k: int) -> int:
        return run_fio_matrix([by_id[i] for i in ids], out=out, db=db, ingest=False, repeat=k, log=log, **matrix)

    def outputs_of(rid: str, k: int) -> list[Path]:
        slots = run_slots(by_id[rid], out, saved_commands(manifest), k, log=lambda *_: None)
        return [out / f"{slot.run_id}.txt" for slot, _ in slots if (out / f"{slot.run_id}.txt").exists()]

    rc, states = repeat_until_settled(
        list(by_id),
        run_round=run_round,
        outputs_of=outputs_of,
        tolerance_pct=tolerance_pct,
        min_runs=min_runs,
        max_runs=max_runs,
        log=log,
    )
    if not ingest:
        return rc
    files = [f for s in states for p in outputs_of(s.run_id, s.n) for f in _run_files(out, p.name.removesuffix(".txt"))]
    ingest_rc = _ingest(files, db, manifest) if files else 0
    return rc or ingest_rc


def cache_flags(
    output: Path, device_limit: float | None, devices: list[dict] | None = None, bs_bytes: int | None = None
) -> list[str]:
    """Flags for directions of a saved fio output whose bandwidth exceeds what the devices can deliver: the
    typed ``device_limit`` (bytes/s), and without typing, the physical range of the devices' class (a rotational
    disk, SATA, NVMe ... ``devices.beyond_class``; a virtual disk is said to be one)."""
    if not device_limit and not devices:
        return []
    from .errors import ParseError
    from .parsers import parse_bytes

    try:
        parsed, _ = parse_bytes(output.read_bytes(), str(output))
    except (ParseError, OSError) as e:
        return [f"could not read the run's output to check it against the device limit: {e}"]
    final = {r["job_index"] for r in parsed.rows("fio_jobs") if r.get("is_final", True)}
    bw: dict[str, float] = {}
    iops: dict[str, float] = {}
    for r in parsed.rows("fio_results"):
        if r["job_index"] in final and r.get("bw_bytes_per_s"):
            bw[r["direction"]] = bw.get(r["direction"], 0.0) + r["bw_bytes_per_s"]
            iops[r["direction"]] = iops.get(r["direction"], 0.0) + (r.get("iops") or 0.0)
    flags = [
        f"{d} at {v:.0f} B/s, faster than the devices can deliver ({device_limit:.0f} B/s): cache"
        for d, v in sorted(bw.items())
        if device_limit and v > device_limit
    ]
    if devices and not device_limit:  # a typed limit is the exact figure: the class's range only without one
        rw = {r.get("rw") for r in parsed.rows("fio_jobs")} - {None}
        random = any(str(m).startswith("rand") for m in rw)
        for d, v in sorted(bw.items()):
            mode = ("rand" if random else "") + d
            for f in beyond_class(devices, rw=mode, bs_bytes=bs_bytes, bw_bytes_per_s=v, iops=iops.get(d)):
                if f not in flags:
                    flags.append(f)
    return flags


def _catch_stop_signals(handler) -> dict:
    """Install ``handler`` for SIGINT, SIGTERM and SIGHUP (Ctrl-C, kill, a closed terminal: each stops the
    running benchmark and discards its partial output); the former handlers, for ``_restore_signals``.
    Main thread only; elsewhere the signals keep Python's defaults (and {} is returned)."""
    import signal

    try:
        return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    except ValueError:
        return {}


def _restore_signals(old: dict) -> None:
    import signal

    for sig, handler in old.items():
        signal.signal(sig, handler)


def run_bonnie(
    *,
    target: Path,
    out: Path,
    size_bytes: int | None,
    db: Path | None,
    files: int = 16,
    bonnie="bonnie++",
    ingest: bool = True,
    labels: dict | None = None,
    repeat: int = 1,
    log=print,
) -> int:
    """``repeat`` bonnie++ runs (file size 2 x RAM unless ``size_bytes``), saved as OUT/bonnie-<size>m-n<files>.txt,
    then -2, -3 ...; an output already saved by the same command counts (a re-run resumes), one made by another
    command (other target) is kept. Ctrl-C discards the running one and keeps, labels and ingests the others."""
    system = describe_system()
    ram = system["ram_bytes"]
    size = size_bytes or 2 * ram
    size_mib = max(1, size // MIB if size_bytes else -(-size // MIB))  # the default: 2 x RAM, rounded up to MiB
    # bonnie++ refuses a file size below twice the RAM it is told: tell it half the file size
    ram_mib = min(ram // MIB, size_mib // 2) or 1
    target.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    # bonnie++ works in a folder of its own under the target, removed after each run: a run killed mid-way
    # (Ctrl-C) leaves no Bonnie.NNNN file of twice the RAM behind
    work = target / ".storagelab-bonnie"
    argv = [bonnie, "-d", str(work), "-s", str(size_mib), "-r", str(ram_mib), "-n", str(files), "-m", system["host"]]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv += ["-u", "root"]
    tinfo = describe_target(target)
    flags = sanity_flags(
        target_info=tinfo,
        direct=0,
        total_bytes=size_mib * MIB,
        ram=ram,
        numjobs=1,
        shared_file=False,
        l2arc_bytes=tinfo.get("l2arc_bytes", 0),
        rw="readwrite",
    )
    if size_mib * MIB < 2 * ram:
        flags.append(f"bonnie++ file size {size_mib} MiB below 2 x RAM ({2 * ram // MIB} MiB), set with --size")
    manifest = manifest_for(out)
    stem = f"bonnie-{size_mib}m-n{files}"
    slots = output_slots(stem, out, saved_commands(manifest), repeat, lambda _: shlex.join(argv), "bonnie", log)
    todo = [rid for rid, done in slots if not done]
    labels_of = slot_labels(f"bonnie++ {size_mib} MiB", stem, [rid for rid, _ in slots])
    if len(todo) < len(slots):
        log(f"lab bonnie: {len(slots) - len(todo)} of {len(slots)} runs already saved in {out}: skipped (resume)")
    for f in flags if todo else ():
        log(f"  sanity: {f}")
    saved: list[Path] = []
    rc = 0
    stop: list[int] = []

    def on_signal(signum, frame):  # SIGTERM and SIGHUP as Ctrl-C: the running bonnie++ is killed, its run discarded
        stop.append(signum)
        raise KeyboardInterrupt

    old_handlers = _catch_stop_signals(on_signal)
    try:
        for i, rid in enumerate(todo, 1):
            dest = out / f"{rid}.txt"
            log(f"[{i}/{len(todo)}] lab bonnie: {shlex.join(argv)} > {dest.name}")
            part = out / f".{rid}.txt.part"  # hidden: an ingest skips it should this process be killed outright
            try:
                work.mkdir(exist_ok=True)
                with open(part, "wb") as fh:
                    # killed on KeyboardInterrupt, and with this process however it dies
                    p = subprocess.run(argv, stdout=fh, stderr=subprocess.PIPE, preexec_fn=_dies_with_us())
            except KeyboardInterrupt:
                part.unlink(missing_ok=True)
                log(f"interrupted: {rid} discarded; {len(saved)} completed runs kept (a re-run resumes)")
                rc = 128 + (stop[0] if stop else 2)
                break
            finally:
                shutil.rmtree(work, ignore_errors=True)
            if p.returncode != 0:
                log(f"bonnie++ failed ({p.returncode}): {p.stderr.decode(errors='replace').strip()[-500:]}")
                part.unlink(missing_ok=True)
                rc = 1
                continue
            saved.append(
                _keep_bonnie(part, dest, rid, labels_of, size_mib, system, tinfo, flags, argv, manifest, labels)
            )
    finally:
        _restore_signals(old_handlers)
    outputs = [out / f"{rid}.txt" for rid, _ in slots if (out / f"{rid}.txt").exists()]
    ingested = _ingest(outputs, db, manifest) if ingest else 0  # the new ones, and any saved but not yet ingested
    return rc or ingested


def _keep_bonnie(part, dest, rid, labels_of, size_mib, system, tinfo, flags, argv, manifest, labels) -> Path:
    """A finished bonnie++ run: its output under its name, its manifest row written."""
    part.rename(dest)
    version = None
    m = re.search(r"Version\s+([0-9][0-9.a-z]*)", dest.read_text(errors="replace"))
    if m:
        version = f"bonnie++ {m.group(1)}"
    notes = _notes(system, tinfo, version, flags, {"file_size_bytes": size_mib * MIB})
    label = labels_of[rid]
    append_manifest(manifest, [manifest_row(dest, manifest.parent, label, system, tinfo, argv, notes, labels)])
    return dest


# ----------------------------------------------------------------------------- ZFS topology sweep

RECORDSIZES = {"4K": 4096, "128K": 131072, "1M": 1048576}


def sweep_layouts(disks: list[str]) -> list[dict]:
    """Ars-style layouts over the named disks, in order: 1 disk; 2..N single-disk vdevs; 1..N/2 two-way
    mirrors; raidz1 of width 3..N; raidz2 of width 4..N (one vdev each)."""
    n = len(disks)
    out = [dict(vdev_type="single", vdev_count=1, vdev_width=1, vdevs=[[disks[0]]])]
    for k in range(2, n + 1):
        out.append(dict(vdev_type="single", vdev_count=k, vdev_width=1, vdevs=[[d] for d in disks[:k]]))
    for k in range(1, n // 2 + 1):
        out.append(
            dict(vdev_type="mirror", vdev_count=k, vdev_width=2, vdevs=[disks[2 * i : 2 * i + 2] for i in range(k)])
        )
    for kind, least in (("raidz1", 3), ("raidz2", 4)):
        for w in range(least, n + 1):
            out.append(dict(vdev_type=kind, vdev_count=1, vdev_width=w, vdevs=[disks[:w]]))
    return out


def zpool_create_argv(pool: str, layout: dict, ashift: int) -> list[str]:
    argv = [
        "zpool",
        "create",
        "-f",
        "-o",
        f"ashift={ashift}",
        "-O",
        "compression=off",
        "-O",
        "atime=off",
        "-m",
        f"/{pool}",
        pool,
    ]
    for vdev in layout["vdevs"]:
        if layout["vdev_type"] != "single":
            argv.append(layout["vdev_type"])
        argv += vdev
    return argv


def sweep_plan(
    disks: list[str],
    *,
    pool: str = "labsweep",
    ashift: int = 12,
    recordsizes=("4K", "128K", "1M"),
    presets=None,
    out: Path,
    size=None,
    runtime_s=None,
    fio="fio",
) -> list[dict]:
    """Every step of the sweep: per layout, the zpool create, then per recordsize a zfs create/set and the
    fio runs, then zpool destroy. ``presets`` maps recordsize -> preset names (default: ars-4k at 4K,
    ars-1m at 1M, both at 128K, ZFS's default)."""
    presets = presets or {"4K": ("ars-4k",), "128K": ("ars-4k", "ars-1m"), "1M": ("ars-1m",)}
    plan = []
    for layout in sweep_layouts(disks):
        name = f"{layout['vdev_type']}-{layout['vdev_count']}x{layout['vdev_width']}"
        steps = [("zpool", zpool_create_argv(pool, layout, ashift))]
        runs_by_rs = []
        for rs in recordsizes:
            ds = f"{pool}/rs{rs.lower()}"
            steps.append(("zfs", ["zfs", "create", ds]))
            steps.append(("zfs", ["zfs", "set", f"recordsize={rs}", ds]))
            run_out = out / name / f"rs{rs.lower()}"
            runs = []
            for pname in presets.get(rs, ()):
                runs += build_runs(
                    PRESETS[pname], target=Path(f"/{ds}"), out=run_out, size=size, runtime_s=runtime_s, fio=fio
                )
            for r in runs:
                steps.append(("fio", r.argv))
            runs_by_rs.append((rs, ds, run_out, runs))
        steps.append(("zpool", ["zpool", "destroy", pool]))
        plan.append(dict(name=name, layout=layout, steps=steps, runs=runs_by_rs))
    return plan


def _all_saved(item: dict) -> bool:
    """Every fio run of one layout of the sweep already saved with its command (a re-run skips the layout)."""
    for _rs, _ds, run_out, runs in item["runs"]:
        saved = saved_commands(manifest_for(run_out))
        if not all(done for r in runs for _, done in run_slots(r, run_out, saved, log=lambda *a: None)):
            return False
    return True


def run_sweep(plan: list[dict], *, pool: str, ashift: int, db: Path | None, log=print) -> int:
    """Run the plan layout by layout; each pool is destroyed after its runs, also when a step fails or on Ctrl-C.
    A failed zpool/zfs step or Ctrl-C stops the sweep (status 1 or 130); a failed fio run does not (status 1).
    Layouts whose runs are all saved are skipped without creating their pool (a re-run resumes)."""
    rc = 0
    for item in plan:
        lay = item["layout"]
        if _all_saved(item):
            log(f"sweep: {item['name']}: every run already saved: skipped (resume)")
            continue
        create = item["steps"][0][1]
        log(f"sweep: {item['name']}: {shlex.join(create)}")
        try:
            subprocess.run(create, check=True)
        except subprocess.CalledProcessError as e:
            log(
                f"sweep: {item['name']}: zpool create failed (status {e.returncode}): sweep stopped, nothing to destroy"
            )
            return 1
        except KeyboardInterrupt:
            log(f"sweep: interrupted during zpool create: sweep stopped (check `zpool list {pool}`)")
            return 130
        stop = 0
        try:
            for rs, ds, run_out, runs in item["runs"]:
                step = ["zfs", "create", ds]
                subprocess.run(step, check=True)
                step = ["zfs", "set", f"recordsize={rs}", ds]
                subprocess.run(step, check=True)
                labels = dict(
                    vdev_type=lay["vdev_type"],
                    vdev_count=lay["vdev_count"],
                    vdev_width=lay["vdev_width"],
                    recordsize_bytes=RECORDSIZES[rs],
                    ashift=ashift,
                    pool=pool,
                )
                r = run_fio_matrix(runs, target=Path(f"/{ds}"), out=run_out, db=db, labels=labels, log=log)
                if r == 130:
                    stop = 130
                    break
                rc = max(rc, r)
        except subprocess.CalledProcessError as e:
            log(f"sweep: {item['name']}: {shlex.join(step)} failed (status {e.returncode}): sweep stopped")
            stop = 1
        except KeyboardInterrupt:
            log(f"sweep: {item['name']}: interrupted: sweep stopped")
            stop = 130
        finally:
            gone = subprocess.run(["zpool", "destroy", pool])
            if gone.returncode == 0:
                log(f"sweep: {item['name']}: zpool destroy {pool}")
            else:
                log(
                    f"sweep: {item['name']}: zpool destroy {pool} failed (status {gone.returncode}): destroy it by hand"
                )
                stop = stop or 1
        if stop:
            return stop
    return rc


# ----------------------------------------------------------------------------- command line


def _depth_jobs(text: str) -> list[tuple[int, int]]:
    """'1x1,8x8' -> [(1, 1), (8, 8)] (iodepth x numjobs, each at least 1)."""
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*0*([1-9]\d*)\s*x\s*0*([1-9]\d*)\s*", part)
        if not m:
            raise argparse.ArgumentTypeError(f"{part!r}: expected IODEPTHxNUMJOBS, each at least 1, e.g. 8x8")
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def _rate(text: str) -> float:
    """'900MB/s' -> 9e8, '550MiB/s' -> 576716800.0, '900mb/s' -> 9e8, '123456B/s' -> 123456.0 (bytes per second).
    A number without a unit is refused: '900' is far more likely meant as MB/s than as bytes/s."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(?:([kKmMgGtT])?(i?)[bB](?:/s)?)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a rate with its unit, such as 900MB/s, 550MiB/s or 123456B/s"
        )
    value, prefix, binary = float(m.group(1)), (m.group(2) or "").upper(), m.group(3)
    power = " KMGT".index(prefix) if prefix else 0
    return value * (1024 if binary else 1000) ** power


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


FIO_RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite")


def _rw_modes(text: str) -> list[str]:
    """fio rw modes, comma separated, each one fio knows (checked before anything runs)."""
    modes = _csv(text)
    bad = [m for m in modes if m not in FIO_RW_MODES]
    if bad or not modes:
        raise argparse.ArgumentTypeError(
            f"{', '.join(bad) or repr(text)}: not an fio rw mode ({', '.join(FIO_RW_MODES)})"
        )
    return modes


def _fio_size(text: str) -> str:
    """A size in fio's syntax (4k, 512M, 64G), checked before anything runs; kept as written."""
    from .units import UnitError

    try:
        if _size_bytes(text) <= 0:
            raise UnitError("not above zero")
    except (UnitError, ValueError) as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size fio takes (e.g. 4k, 512M, 64G): {e}") from None
    return text


def _fio_sizes(text: str) -> list[str]:
    return [_fio_size(t) for t in _csv(text)]


def _repeat(text: str) -> int | str:
    """--repeat: a count, or 'auto'."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a count nor 'auto'") from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of at least 1")
    return value


LAB_EXIT_CODES = """\
exit codes:
  0    every run saved (and ingested)
  1    a run failed (its output is kept outside OUT, named in the messages) or a saved file failed to parse
  2    usage or environment error (bad option, missing tool, target or database; a busy database: the runs
       are saved, and re-running the same command ingests them)
  130  interrupted (Ctrl-C; 143 for SIGTERM): the running benchmark is discarded, the completed runs are kept
       and labelled, and re-running the same command resumes"""

_LAB_EXAMPLES = {
    "fio": """\
examples:
  storagelab lab fio --target /mnt/tank/scratch                      # the smoke preset: a few seconds
  storagelab lab fio --target /mnt/tank/scratch --preset ars-4k --repeat 3
  storagelab lab fio --target /mnt/tank/scratch --rw randread --bs 4k --depth-jobs 1x1,8x1,32x1 \\
      --size 4G --runtime 60 --device-limit 550MB/s
  storagelab lab fio --target /mnt/tank/scratch --preset ars-4k --dry-run   # print the fio commands
Without --preset the smoke preset is the plan; --rw, --bs, --depth-jobs, --size, --runtime and the log
options replace its parts. A re-run with the same options resumes: saved runs are skipped (and ingested
if they were not).""",
    "bonnie": """\
examples:
  storagelab lab bonnie --target /mnt/tank/scratch                   # file size 2 x RAM
  storagelab lab bonnie --target /mnt/tank/scratch --size 64G --files 0 --repeat 3""",
    "zfs-sweep": """\
examples:
  storagelab lab zfs-sweep --disks /dev/sdb,/dev/sdc                 # print the plan only
  storagelab lab zfs-sweep --disks /dev/sdb,/dev/sdc --yes           # DESTROYS the disks' contents""",
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="storagelab lab", description=("Measure your own disks. `storagelab lab` alone opens JupyterLab.")
    )
    sub = p.add_subparsers(dest="what", required=True)
    presets = "; ".join(f"{k}: {v.doc}" for k, v in PRESETS.items())

    f = sub.add_parser(
        "fio",
        help=SUBCOMMANDS["fio"],
        description=f"Presets - {presets}",
    )
    f.add_argument("--preset", default="smoke", choices=sorted(PRESETS), help="the plan to start from (default smoke)")
    f.add_argument("--target", required=True, help="directory to test (fio's files are created there and deleted)")
    f.add_argument("--out", default=None, help="where the outputs go (default data/raw/lab/<host>/<date>/)")
    f.add_argument("--db", default=None, help="database to ingest into (default data/parsed/storagelab.duckdb)")
    f.add_argument("--rw", type=_rw_modes, help="rw modes, comma separated (overrides the preset)")
    f.add_argument("--bs", type=_fio_sizes, help="block sizes, e.g. 4k,1M")
    f.add_argument("--depth-jobs", type=_depth_jobs, help="IODEPTHxNUMJOBS list, e.g. 1x1,8x8")
    f.add_argument("--size", type=_fio_size, help="file size per job (fio syntax, e.g. 4G)")
    f.add_argument("--runtime", type=_positive_int, help="seconds per run (at least 1)")
    f.add_argument("--direct", type=int, choices=(0, 1))
    f.add_argument("--ioengine", default="libaio")
    f.add_argument(
        "--filename", help="one file in --target shared by all jobs (a name, no folder; flagged when numjobs > 1)"
    )
    f.add_argument(
        "--device-limit",
        type=_rate,
        help="what the devices can deliver, e.g. 900MB/s or 550MiB/s: a faster "
        "run is flagged as cached (and the manifest's device_limit_bytes_per_s set)",
    )
    f.add_argument(
        "--log-avg-msec", type=_positive_int, help="log window, ms (default 500 = fio's bw/iops samples; smoke 250)"
    )
    f.add_argument("--log-hist-msec", type=_positive_int, help="histogram log interval, ms (default 1000; smoke 500)")
    f.add_argument(
        "--repeat",
        type=_repeat,
        default=1,
        help="runs of each matrix point (RUNID, RUNID-2, ...): repeats give the run-to-run noise comparisons need; "
        "'auto': repeat each point until its bandwidth's spread (sd/mean) is at most --repeat-tolerance, "
        "between --repeat-min and --repeat-max runs",
    )
    f.add_argument("--repeat-tolerance", type=float, default=5.0, help="--repeat auto: spread to reach, %% (default 5)")
    f.add_argument("--repeat-min", type=_positive_int, default=3, help="--repeat auto: runs at least (default 3)")
    f.add_argument("--repeat-max", type=_positive_int, default=10, help="--repeat auto: runs at most (default 10)")
    f.add_argument("--no-ingest", action="store_true")
    f.add_argument("--dry-run", action="store_true", help="print the fio commands only")

    b = sub.add_parser("bonnie", help=SUBCOMMANDS["bonnie"])
    b.add_argument("--target", required=True, help="directory to test (bonnie++ works in a folder of its own there)")
    b.add_argument("--out", default=None, help="where the outputs go (default data/raw/lab/<host>/<date>/)")
    b.add_argument("--db", default=None, help="database to ingest into (default data/parsed/storagelab.duckdb)")
    b.add_argument("--size", type=_fio_size, help="file size (e.g. 512M, 64G; default 2 x RAM)")
    b.add_argument(
        "--files", type=int, default=16, help="bonnie++ -n: file creation tests, in 1024s of files (0: none)"
    )
    b.add_argument("--repeat", type=int, default=1, help="runs of bonnie++ (bonnie-...txt, -2, -3 ...)")
    b.add_argument("--no-ingest", action="store_true")

    z = sub.add_parser(
        "zfs-sweep",
        help=SUBCOMMANDS["zfs-sweep"],
    )
    z.add_argument(
        "--disks", type=_csv, required=True, help="disks to DESTROY, comma separated (e.g. /dev/sdb,/dev/sdc)"
    )
    z.add_argument("--pool", default="labsweep")
    z.add_argument("--ashift", type=int, default=12)
    z.add_argument("--recordsizes", type=_csv, default=["4K", "128K", "1M"])
    z.add_argument("--size", type=_fio_size, help="file size per job (default: the presets')")
    z.add_argument("--runtime", type=_positive_int, help="seconds per run (default: the presets')")
    z.add_argument("--out", default=None)
    z.add_argument("--db", default=None)
    z.add_argument("--dry-run", action="store_true", help="print the commands (the default without --yes)")
    z.add_argument("--yes", action="store_true", help="really create and destroy pools on the named disks")
    for name, sub_parser in sub.choices.items():
        sub_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        sub_parser.epilog = _LAB_EXAMPLES[name] + "\n\n" + LAB_EXIT_CODES
    return p


def _target_ok(target: Path, what: str) -> bool:
    """A target folder that exists, or whose parent does (it is created there): a mistyped mount point whose
    parent is missing is refused rather than benchmarking whatever filesystem would hold it."""
    if target.is_dir() or (not target.exists() and target.parent.is_dir()):
        return True
    if target.exists():
        print(
            f"storagelab lab {what}: --target {target} is a file, not a folder: give the folder to test",
            file=sys.stderr,
        )
        return False
    why = "does not exist, nor does its parent folder (a mistyped mount point?)"
    print(f"storagelab lab {what}: --target {target} {why}; create it on the filesystem to test", file=sys.stderr)
    return False


def _out_ok(out: Path, what: str) -> bool:
    """--out is a folder, or can be made one (not an existing file)."""
    if out.exists() and not out.is_dir():
        print(
            f"storagelab lab {what}: --out {out} is a file, not a folder: give the folder for the outputs",
            file=sys.stderr,
        )
        return False
    return True


def _db_ok(db: Path | None, what: str) -> bool:
    """The database the runs will be ingested into can be opened for writing (checked before any run: a run
    of minutes is not wasted on a mistyped --db). A database busy now is only said: a re-run ingests what
    this one could not."""
    from .errors import DatabaseBusyError
    from .store import db as store_db
    from .store.faults import StoreError

    try:
        store_db.connect(db).close()
    except DatabaseBusyError as e:
        print(f"storagelab lab {what}: note: {e}; the runs will be saved and ingested by a re-run", file=sys.stderr)
    except StoreError as e:
        print(f"storagelab lab {what}: {e}", file=sys.stderr)
        return False
    return True


def main(argv: list[str]) -> int:
    p = parser()
    args, extra = p.parse_known_args(argv)
    if extra:  # named by the subcommand that was given them ('storagelab lab fio: error: ...')
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices[args.what].error(f"unrecognized arguments: {' '.join(extra)}")
    host = socket.gethostname()
    out = Path(args.out) if getattr(args, "out", None) else default_out(host)
    db = Path(args.db) if getattr(args, "db", None) else None
    if args.what == "fio":
        if not args.dry_run and not shutil.which("fio"):
            print("storagelab lab fio: fio is not installed (Debian: apt-get install fio)", file=sys.stderr)
            return 2
        target = Path(args.target).resolve()
        if args.filename and "/" in args.filename:  # fio puts it under --directory: /a/b would become TARGET/a/b
            print(
                f"storagelab lab fio: --filename {args.filename}: a file name inside --target, without a folder; "
                f"for a file elsewhere give its folder as --target (--target {Path(args.filename).parent} "
                f"--filename {Path(args.filename).name})",
                file=sys.stderr,
            )
            return 2
        if not args.dry_run and not (_target_ok(target, "fio") and _out_ok(out, "fio")):
            return 2
        if not args.dry_run and not args.no_ingest and not _db_ok(db, "fio"):
            return 2
        runs = build_runs(
            PRESETS[args.preset],
            target=target,
            out=out.resolve(),
            rw=args.rw,
            bs=args.bs,
            depth_jobs=args.depth_jobs,
            size=args.size,
            runtime_s=args.runtime,
            direct=args.direct,
            ioengine=args.ioengine,
            filename=args.filename,
            log_avg_msec=args.log_avg_msec,
            log_hist_msec=args.log_hist_msec,
        )
        if not runs:
            print(
                f"storagelab lab fio: no test of the {args.preset} preset matches --rw/--bs/--depth-jobs "
                f"(its tests: {', '.join(f'{r} {b} {q}x{j}' for r, b, q, j in plan_points(PRESETS[args.preset]))})",
                file=sys.stderr,
            )
            return 2
        auto = args.repeat == "auto"
        if not auto and args.repeat < 1:
            print("storagelab lab fio: --repeat must be 1 or more, or auto", file=sys.stderr)
            return 2
        if auto and not (args.repeat_min <= args.repeat_max and args.repeat_tolerance > 0):
            print(
                "storagelab lab fio: --repeat auto needs --repeat-min <= --repeat-max and --repeat-tolerance > 0",
                file=sys.stderr,
            )
            return 2
        small = sorted({(r.size, r.bs) for r in runs if _size_bytes(r.size) < _size_bytes(r.bs.split(",")[-1])})
        if small:  # fio would refuse each run after it started ("size too small")
            print(
                f"storagelab lab fio: --size {small[0][0]} is below the block size {small[0][1]}: each job's file must "
                "hold at least one block",
                file=sys.stderr,
            )
            return 2
        if args.dry_run:
            for r in runs:
                print(shlex.join(r.argv))
            if auto:
                print(
                    f"# each {args.repeat_min} to {args.repeat_max} times, until its spread is at most "
                    f"{args.repeat_tolerance:g} % (RUNID, RUNID-2, ...)",
                    file=sys.stderr,
                )
            elif args.repeat > 1:
                print(f"# each {args.repeat} times (RUNID, RUNID-2, ...)", file=sys.stderr)
            return 0
        common = dict(target=target, shared_file=bool(args.filename), device_limit=args.device_limit)
        if auto:
            return run_fio_auto(
                runs,
                out=out.resolve(),
                db=db,
                ingest=not args.no_ingest,
                tolerance_pct=args.repeat_tolerance,
                min_runs=args.repeat_min,
                max_runs=args.repeat_max,
                **common,
            )
        return run_fio_matrix(runs, out=out.resolve(), db=db, ingest=not args.no_ingest, repeat=args.repeat, **common)
    if args.what == "bonnie":
        if not shutil.which("bonnie++"):
            print(
                "storagelab lab bonnie: bonnie++ is not installed (Debian: apt-get install bonnie++)", file=sys.stderr
            )
            return 2
        if args.repeat < 1:
            print("storagelab lab bonnie: --repeat must be 1 or more", file=sys.stderr)
            return 2
        size = _size_bytes(args.size) if args.size else None
        if not (_target_ok(Path(args.target).resolve(), "bonnie") and _out_ok(out, "bonnie")):
            return 2
        if not args.no_ingest and not _db_ok(db, "bonnie"):
            return 2
        return run_bonnie(
            target=Path(args.target).resolve(),
            out=out.resolve(),
            size_bytes=size,
            db=db,
            files=args.files,
            ingest=not args.no_ingest,
            repeat=args.repeat,
        )
    # zfs-sweep
    plan = sweep_plan(
        args.disks,
        pool=args.pool,
        ashift=args.ashift,
        recordsizes=args.recordsizes,
        out=out.resolve() / "zfs-sweep",
        size=args.size,
        runtime_s=args.runtime,
    )
    if args.dry_run or not args.yes:
        for item in plan:
            print(f"# {item['name']}")
            for _kind, a in item["steps"]:
                print(shlex.join(a))
        if not args.yes:
            print(
                "# dry run: nothing was run. --yes runs it, destroying everything on " + ", ".join(args.disks),
                file=sys.stderr,
            )
        return 0
    for tool in ("zpool", "zfs", "fio"):
        if not shutil.which(tool):
            print(f"storagelab lab zfs-sweep: {tool} not found", file=sys.stderr)
            return 2
    return run_sweep(plan, pool=args.pool, ashift=args.ashift, db=db)
