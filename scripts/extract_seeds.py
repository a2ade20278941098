"""Extract the raw tool outputs of the source studies (../shared/seeds/) into data/raw/, verbatim.

Each file is a byte-exact run of lines from one seed (never edited); its labels go into
data/raw/manifest.csv. Re-running this script reproduces data/raw/ exactly, and
tests/test_raw_data.py checks every raw file against its seed lines. One file is the exception:
thumper-x4500/layout-sweep.csv is a transcription (by code, below) of seed 001's two flattened tables.

Usage: python scripts/extract_seeds.py [SEEDS_DIR]
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
SEEDS = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "seeds"

S000 = "000_b0a2a13340a02677.txt"
S001 = "001_0fa8eb419950c07e.txt"
S003 = "003_1b07dd7640f3036b.txt"
S004 = "004_de9bc2236b7eeadc.txt"

sys.path.insert(0, str(ROOT / "lib"))
from storagelab.manifest import COLUMNS  # noqa: E402
from storagelab.parsers import transcribed  # noqa: E402
from storagelab.parsers.transcribed import LAYOUT_HEADER, MARK, layout_label  # noqa: E402

HOMELAB = dict(
    study="homelab-mergerfs",
    host="nas",
    os="Ubuntu 20.04 (kernel 5.4; 5.15 for ZFS 2.1.4)",
    command="fio --name=fiotest --filename=... --size=16Gb --rw=write --bs=1M --direct=1 --numjobs=8 "
    "--ioengine=libaio --iodepth=8 --group_reporting --runtime=60 --startdelay=60",
)
NVME_SSD = "nvme0n1 (Samsung SSD 950 PRO 256GB) + sdb (QEMU virtual disk)"

ROWS: list[dict] = [
    # --- seed 000/003: homelab fio, sequential 1 MiB writes, 8 jobs x iodepth 8 -------------
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-zfs-mirror-zfs0.8.4.txt",
        seed=S000,
        seed_lines="84-109",
        label="ZFS mirror (0.8.4)",
        stack="zfs",
        pool="cache",
        vdev_type="mirror",
        vdev_count=1,
        vdev_width=2,
        devices=NVME_SSD,
        zfs_version="0.8.4",
        device_limit_bytes_per_s=900e6,
        notes="raw pool /cache; author: NVMe alone writes ~900 MB/s, ARC may inflate results",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-mergerfs-zfs-mirror-zfs2.1.4.txt",
        seed=S000,
        seed_lines="118-145",
        label="mergerfs over ZFS mirror (2.1.4)",
        stack="mergerfs+zfs",
        pool="cache",
        vdev_type="mirror",
        vdev_count=1,
        vdev_width=2,
        devices=NVME_SSD,
        zfs_version="2.1.4",
        device_limit_bytes_per_s=900e6,
        command="fio --name=fiotest --filename=/mnt/cached/speed --size=16Gb --rw=write --bs=1M --direct=1 "
        "--numjobs=8 --ioengine=libaio --iodepth=8 --group_reporting --runtime=60 --startdelay=60",
        notes="after the upgrade from ZFS 0.8.4 to 2.1.4 (kernel 5.15.0-52)",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-mergerfs-hdd.txt",
        seed=S000,
        seed_lines="159-188",
        label="mergerfs over 2 HDDs (18TB + 8TB)",
        stack="mergerfs+hdd",
        devices="sdc, sde (WD 18TB, WD 8TB)",
        device_limit_bytes_per_s=170e6,
        notes="/mnt/slow-storage; category.create=eplus; author: HDDs write ~170 MB/s max",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-mergerfs-zfs-mirror-zfs0.8.4.txt",
        seed=S000,
        seed_lines="206-232",
        label="mergerfs over ZFS mirror (0.8.4)",
        stack="mergerfs+zfs",
        pool="cache",
        vdev_type="mirror",
        vdev_count=1,
        vdev_width=2,
        devices=NVME_SSD,
        zfs_version="0.8.4",
        device_limit_bytes_per_s=900e6,
        notes="/mnt/cached = mergerfs over /cache only; category.create=lfs, cache.files=off",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-btrfs-raid1.txt",
        seed=S000,
        seed_lines="289-319",
        label="btrfs raid1",
        stack="btrfs-raid1",
        vdev_type="mirror",
        vdev_count=1,
        vdev_width=2,
        devices=NVME_SSD,
        device_limit_bytes_per_s=900e6,
        notes="mkfs.btrfs -m raid1 -d raid1; no mergerfs",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-mergerfs-btrfs-raid1.txt",
        seed=S000,
        seed_lines="325-326",
        label="mergerfs over btrfs raid1",
        stack="mergerfs+btrfs-raid1",
        vdev_type="mirror",
        vdev_count=1,
        vdev_width=2,
        devices=NVME_SSD,
        device_limit_bytes_per_s=900e6,
        notes="only the Run status group summary was posted",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-mdadm-raid1-ext4-bitmap-internal.txt",
        seed=S000,
        seed_lines="396-402",
        label="mdadm raid1 ext4 (bitmap internal)",
        stack="mdadm-raid1+ext4",
        vdev_type="mirror",
        vdev_count=1,
        vdev_width=2,
        devices=NVME_SSD,
        device_limit_bytes_per_s=900e6,
        notes="after resync; only the group summary and Disk stats were posted",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-mdadm-raid1-ext4-bitmap-none-run1.txt",
        seed=S000,
        seed_lines="413-414",
        label="mdadm raid1 ext4 (bitmap none, run 1)",
        stack="mdadm-raid1+ext4",
        vdev_type="mirror",
        vdev_count=1,
        vdev_width=2,
        devices=NVME_SSD,
        device_limit_bytes_per_s=900e6,
        notes="mdadm --grow --bitmap=none; the author's mount line says btrfs but the array was formatted ext4",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-mdadm-raid1-ext4-bitmap-none-run2.txt",
        seed=S000,
        seed_lines="418-418",
        label="mdadm raid1 ext4 (bitmap none, run 2)",
        stack="mdadm-raid1+ext4",
        vdev_type="mirror",
        vdev_count=1,
        vdev_width=2,
        devices=NVME_SSD,
        device_limit_bytes_per_s=900e6,
        notes="second run with bitmap none; a lone WRITE summary line",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-mdadm-raid1-ext4-bitmap-chunk128M.txt",
        seed=S000,
        seed_lines="423-424",
        label="mdadm raid1 ext4 (bitmap chunk 128 MiB)",
        stack="mdadm-raid1+ext4",
        vdev_type="mirror",
        vdev_count=1,
        vdev_width=2,
        devices=NVME_SSD,
        device_limit_bytes_per_s=900e6,
        notes="mdadm --grow --bitmap=internal --bitmap-chunk=131072",
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-btrfs-single.txt",
        seed=S000,
        seed_lines="435-461",
        label="btrfs (single NVMe)",
        stack="btrfs",
        vdev_count=1,
        vdev_width=1,
        devices="nvme0n1 (Samsung SSD 950 PRO 256GB)",
        device_limit_bytes_per_s=900e6,
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-mergerfs-btrfs-single.txt",
        seed=S000,
        seed_lines="471-497",
        label="mergerfs over btrfs (single NVMe)",
        stack="mergerfs+btrfs",
        vdev_count=1,
        vdev_width=1,
        devices="nvme0n1 (Samsung SSD 950 PRO 256GB)",
        device_limit_bytes_per_s=900e6,
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-autotier-zfs.txt",
        seed=S000,
        seed_lines="534-559",
        label="autotier over ZFS (0.8.4)",
        stack="autotier+zfs",
        pool="cache",
        devices=NVME_SSD,
        zfs_version="0.8.4",
        device_limit_bytes_per_s=900e6,
    ),
    dict(
        HOMELAB,
        path="homelab-mergerfs/fio-autotier-ext4.txt",
        seed=S000,
        seed_lines="607-635",
        label="autotier over ext4",
        stack="autotier+ext4",
        devices="nvme0n1 (Samsung SSD 950 PRO 256GB)",
        device_limit_bytes_per_s=900e6,
    ),
]

# --- seed 001: Thumper, mbuffer summary lines --------------------------------------------
THUMPER = dict(study="thumper-x4500", host="Sun Fire X4500", os="Solaris (2008)")
for name, line, cmd, label in [
    ("zero-to-null", 14, "cat /dev/zero | mbuffer -m 2048M > /dev/null", "/dev/zero to /dev/null"),
    ("ssh-localhost", 17, "cat /dev/zero | mbuffer -m 2048M | ssh localhost 'cat > /dev/null'", "ssh (default cipher)"),
    (
        "ssh-blowfish-localhost",
        19,
        "cat /dev/zero | mbuffer -m 2048M | ssh -c blowfish localhost 'cat > /dev/null'",
        "ssh -c blowfish",
    ),
    ("netcat-receiver", 24, "netcat -l -p 7000 | mbuffer -m 2048M > /dev/null", "netcat (receiver)"),
    ("netcat-sender", 28, "cat /dev/zero | mbuffer -m 2048M | netcat localhost 7000", "netcat (sender)"),
    ("socat-receiver", 37, "socat TCP4-LISTEN:5678 - | mbuffer -m 2048M > /dev/null", "socat (receiver)"),
    (
        "socat-sender",
        42,
        "dd if=/dev/zero bs=1024k count=10000 | mbuffer -m 2048M | socat - TCP4:localhost:5678",
        "socat (sender, local)",
    ),
    ("socat-network", 45, "socat over the network (command as above)", "socat (network)"),
]:
    ROWS.append(
        dict(
            THUMPER,
            path=f"thumper-x4500/mbuffer-{name}.txt",
            seed=S001,
            seed_lines=f"{line}-{line}",
            label=label,
            stack="mbuffer",
            command=cmd,
            notes="mbuffer of 2008 prints MB/s meaning MiB/s (powers of 1024)",
        )
    )
ROWS[-2]["seed_lines"] = "41-42"  # socat sender: the 'in @' status line is right above its summary

# --- seed 004: FreeBSD bonnie++ / sector 63 / dedup --------------------------------------
FBSD = dict(study="freebsd-bonnie-dedup", host="alpina", os="FreeBSD 12.2", command="bonnie++ -r 32768 -m NAME -u root")
R1 = dict(
    FBSD,
    pool="raid1",
    vdev_type="mirror",
    vdev_count=1,
    vdev_width=2,
    devices="2x Seagate Barracuda ST4000DM004 4TB (ada3, ada5)",
)
ROWS += [
    dict(
        R1,
        path="freebsd-bonnie-dedup/bonnie-raid1-sec63-cache-log.txt",
        seed=S004,
        seed_lines="24-33",
        label="raid1, sector 63 (cache+log)",
        stack="zfs",
        cache_devices="nvme L2ARC 29GB",
        log_devices="nvme ZIL 1GB",
        partition_start_sector=63,
        phase="before",
        notes="pool created on raw devices (author calls it the sector 63 problem); no partition table was posted",
    ),
    dict(
        FBSD,
        path="freebsd-bonnie-dedup/gpart-ada3.txt",
        seed=S004,
        seed_lines="37-41",
        label="gpart show ada3 (after fix)",
        stack="gpart",
        devices="ada3",
        partition_start_sector=2048,
        phase="after",
        command="gpart show ada3",
    ),
    dict(
        FBSD,
        path="freebsd-bonnie-dedup/gpart-ada5.txt",
        seed=S004,
        seed_lines="43-47",
        label="gpart show ada5 (after fix)",
        stack="gpart",
        devices="ada5",
        partition_start_sector=2048,
        phase="after",
        command="gpart show ada5",
    ),
    dict(
        FBSD,
        path="freebsd-bonnie-dedup/bonnie-single-disk.txt",
        seed=S004,
        seed_lines="52-61",
        label="single disk (aligned)",
        stack="zfs",
        vdev_count=1,
        vdev_width=1,
        devices="1x Seagate ST4000DM004",
        partition_start_sector=2048,
        phase="after",
    ),
    dict(
        R1,
        path="freebsd-bonnie-dedup/bonnie-raid1-aligned.txt",
        seed=S004,
        seed_lines="65-74",
        label="raid1 (aligned)",
        stack="zfs",
        partition_start_sector=2048,
        phase="after",
    ),
    dict(
        R1,
        path="freebsd-bonnie-dedup/bonnie-raid1-aligned-cache.txt",
        seed=S004,
        seed_lines="78-88",
        label="raid1 (aligned, cache)",
        stack="zfs",
        cache_devices="nvme L2ARC 29GB",
        partition_start_sector=2048,
        phase="after",
        command="bonnie++ -r 32768 -m alpinaR1_cache -u root",
    ),
    dict(
        R1,
        path="freebsd-bonnie-dedup/bonnie-raid1-aligned-cache-log.txt",
        seed=S004,
        seed_lines="92-102",
        label="raid1 (aligned, cache+log)",
        stack="zfs",
        cache_devices="nvme L2ARC 29GB",
        log_devices="nvme ZIL 1GB",
        partition_start_sector=2048,
        phase="after",
        command="bonnie++ -r 32768 -m alpinaR1_cache_log -u root",
    ),
    dict(
        FBSD,
        path="freebsd-bonnie-dedup/bonnie-compare-single-vs-raid1.txt",
        seed=S004,
        seed_lines="106-121",
        label="comparison table: single disk vs raid1 cache+log",
        stack="zfs",
        duplicate_of="bonnie-single-disk.txt; bonnie-raid1-aligned-cache-log.txt",
        notes="the author's side-by-side re-paste (rows sharing one header, size cells and some digits cut)",
    ),
    dict(
        R1,
        path="freebsd-bonnie-dedup/bonnie-compare-sec63-vs-aligned.txt",
        seed=S004,
        seed_lines="127-142",
        label="comparison table: raid1 sector 63 vs aligned",
        stack="zfs",
        duplicate_of="bonnie-raid1-sec63-cache-log.txt; bonnie-raid1-aligned-cache-log.txt",
        notes="the author's side-by-side re-paste; names edited to alpinaR1-sec63 / alpinaR1_new",
    ),
    dict(
        FBSD,
        path="freebsd-bonnie-dedup/zpool-list-before.txt",
        seed=S004,
        seed_lines="176-182",
        label="zpool list (before reorganisation)",
        stack="zpool",
        command="zpool list",
    ),
    dict(
        FBSD,
        path="freebsd-bonnie-dedup/zpool-iostat-raid5-1.txt",
        seed=S004,
        seed_lines="192-207",
        label="zpool iostat -v raid5 (1)",
        stack="zpool",
        pool="raid5",
        vdev_type="raidz1",
        vdev_count=1,
        vdev_width=4,
        command="zpool iostat -v raid5",
    ),
    dict(
        FBSD,
        path="freebsd-bonnie-dedup/zpool-iostat-raid5-2.txt",
        seed=S004,
        seed_lines="212-227",
        label="zpool iostat -v raid5 (2, after receiving 303GB)",
        stack="zpool",
        pool="raid5",
        vdev_type="raidz1",
        vdev_count=1,
        vdev_width=4,
        command="zpool iostat -v raid5",
    ),
    dict(
        R1,
        path="freebsd-bonnie-dedup/zdb-b-raid1.txt",
        seed=S004,
        seed_lines="231-248",
        label="zdb -b raid1",
        stack="zdb",
        command="zdb -b raid1",
        notes="dedup enabled on this pool",
    ),
    dict(
        FBSD,
        path="freebsd-bonnie-dedup/zdb-b-archiv.txt",
        seed=S004,
        seed_lines="250-267",
        label="zdb -b archiv",
        stack="zdb",
        pool="archiv",
        command="zdb -b archiv",
        notes="Time Machine volume; dedup enabled",
    ),
    dict(
        FBSD,
        path="freebsd-bonnie-dedup/zpool-list-after.txt",
        seed=S004,
        seed_lines="276-281",
        label="zpool list (after reorganisation)",
        stack="zpool",
        command="zpool list",
    ),
]


# --- seed 001: the layout-sweep tables, transcribed (the one file here that is not verbatim) ---
# The two tables are flattened one cell per line ("value |"): an 11-cell header, then rows of 7 cells:
# mirror size, mirror speed, raidz size, raidz speed, raidz2 size, raidz2 speed, and last the layout
# (vdev widths, e.g. "23 23"). "0 | --- |" = that vdev type was not run for the layout.
LAYOUT_SWEEP = dict(
    THUMPER,
    path="thumper-x4500/layout-sweep.csv",
    seed=S001,
    seed_lines="59-387",
    label="layout sweep of 46 disks: zfs send read and dd write by vdev type and count",
    stack="zfs",
    devices="46 data disks of the X4500 (0.5 TB each by the table's 46-way mirror size)",
    command="zfs send fs@snap | mbuffer > /dev/null; dd if=/dev/zero count=20000 bs=1024k | mbuffer -q -m 2048M "
    "> /testpool/benchfile",
    notes="transcribed (not verbatim) from the two flattened tables; sizes are 1000-based TB; speeds are "
    'mbuffer "MB/s" = MiB/s (zfs-facts F21); each speed is the average of 5 runs; test size 27 GB '
    "(16 GB RAM)",
)
LAYOUT_TESTS = (("zfs_send_read", "zfs send read"), ("dd_write", "dd write"))
LAYOUT_HEAD = [
    "zpool type",
    "layout",
    "mirror",
    "raidz",
    "raidz2",
    "size [TB]",
    "speed [MB/s]",
    "size [TB]",
    "speed [MB/s]",
    "size [TB]",
    "speed [MB/s]",
]
LAYOUT_TYPES = ("mirror", "raidz1", "raidz2")  # the seed's mirror / raidz / raidz2 column pairs
THUMPER_DISKS = 46


def _cell(line: str) -> str | None:
    line = line.rstrip()
    return line[:-1].strip() if line.endswith("|") else None


def flattened_tables(lines: list[str]) -> list[tuple[int, int, list[tuple[int, list[str]]]]]:
    """Every flattened table in the seed: (first line, last line, [(row's first line, 7 cells)])."""
    tables = []
    for i in range(len(lines)):
        if [_cell(x) for x in lines[i : i + len(LAYOUT_HEAD)]] != LAYOUT_HEAD:
            continue
        rows, j = [], i + len(LAYOUT_HEAD)
        while j + 7 <= len(lines) and all(_cell(x) is not None for x in lines[j : j + 7]):
            rows.append((j + 1, [_cell(x) for x in lines[j : j + 7]]))
            j += 7
        tables.append((i + 1, j, rows))
    return tables


def transcribe_layout_sweep() -> bytes:
    """The layout-sweep tables of seed 001 as one long-form CSV (one row per test, layout, vdev type)."""
    lines = (SEEDS / S001).read_text(encoding="utf-8").split("\n")
    tables = flattened_tables(lines)
    if len(tables) != len(LAYOUT_TESTS):
        raise SystemExit(f"{S001}: expected {len(LAYOUT_TESTS)} flattened tables, found {len(tables)}")
    where = " and ".join(f"{a}-{b} ({name})" for (a, b, _), (_, name) in zip(tables, LAYOUT_TESTS, strict=True))
    out = [f"{MARK}v1: {S001} lines {where}", ",".join(LAYOUT_HEADER)]
    for (_, _, rows), (test, _) in zip(tables, LAYOUT_TESTS, strict=True):
        for line, cells in rows:
            widths = [int(w) for w in cells[6].split()]
            if sum(widths) != THUMPER_DISKS:
                raise SystemExit(f"{S001}:{line + 6}: layout {cells[6]!r} does not add up to {THUMPER_DISKS} disks")
            for k, vdev_type in enumerate(LAYOUT_TYPES):
                size, speed = cells[2 * k], cells[2 * k + 1]
                number = "" if speed == "---" else speed
                out.append(
                    f"{test},{layout_label(widths)},{len(widths)},{cells[6]},{vdev_type},{size},{number},{speed}"
                )
    text = "\n".join(out) + "\n"
    transcribed.parse(text)  # the parser's checks (numbers, widths vs layout, no duplicates) or ParseError
    return text.encode("utf-8")


def seed_lines(seed: str, spec: str) -> bytes:
    a, b = (int(x) for x in spec.split("-"))
    lines = (SEEDS / seed).read_bytes().split(b"\n")
    chunk = b"\n".join(lines[a - 1 : b])
    return chunk + b"\n"


def also_in(chunk: bytes) -> str:
    """Where the same run stands in seed 003 (the earlier Markdown version of 000)."""
    first = next((ln for ln in chunk.split(b"\n") if b"groupid=" in ln), None)
    if first is None:
        return ""
    lines = (SEEDS / S003).read_bytes().split(b"\n")
    for i, ln in enumerate(lines, 1):
        if ln == first:
            return f"{S003}:{i}"
    return ""


def main() -> None:
    RAW.mkdir(parents=True, exist_ok=True)
    out = []
    for row in ROWS:
        chunk = seed_lines(row["seed"], row["seed_lines"])
        dest = RAW / row["path"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(chunk)
        if row["seed"] == S000:
            row = dict(row, also_in=also_in(chunk))
        unknown = set(row) - set(COLUMNS)
        if unknown:
            raise SystemExit(f"unknown manifest columns {unknown}")
        out.append({c: row.get(c, "") for c in COLUMNS})
    (RAW / LAYOUT_SWEEP["path"]).write_bytes(transcribe_layout_sweep())
    out.append({c: LAYOUT_SWEEP.get(c, "") for c in COLUMNS})
    with open(RAW / "manifest.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print(f"wrote {len(out)} raw files (one transcribed) and data/raw/manifest.csv")


if __name__ == "__main__":
    main()
