"""System facts for the lab manifest: host, RAM, ZFS version, the target's filesystem, pool layout and devices."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
from pathlib import Path


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


def backing_of(name: str, sys_block: str = "/sys/block") -> dict:
    """What a stacked block device (``devices.STACKED_PREFIXES``) is made of, from sysfs: a loop device's backing
    file (``loop/backing_file``) and that file's filesystem (tmpfs: RAM), an md or dm device's members
    (``slaves/``), zram's RAM, nbd's server; {} for any other device."""
    q = f"{sys_block}/{name}"
    if name.startswith("loop"):
        backing = _read(f"{q}/loop/backing_file")
        fs = _cmd(["findmnt", "-no", "FSTYPE", "-T", backing]) if backing else None
        return {"backing": backing, "backing_fstype": fs.splitlines()[0].strip() if fs else None}
    if name.startswith(("md", "dm-")):
        try:
            members = sorted(os.listdir(f"{q}/slaves"))
        except OSError:
            members = []
        return {"backing": " + ".join(f"/dev/{m}" for m in members) or None, "backing_fstype": None}
    if name.startswith("zram"):
        return {"backing": "compressed RAM", "backing_fstype": None}
    if name.startswith("nbd"):
        return {"backing": "a network block device server", "backing_fstype": None}
    return {}


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
    d.update(backing_of(name))  # a loop, md, dm, zram or nbd device: what it is made of
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
