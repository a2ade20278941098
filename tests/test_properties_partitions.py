"""Property tests for the partition-table parser: one generated layout (sector size, scheme, partitions
with gaps) rendered the way gpart show, fdisk -l (util-linux 2.20 and >= 2.26), sfdisk -d (old and new)
and parted (-m, human; sectors or bytes) print it parses to the same partitions, and the byte offsets
and alignment verdicts follow from the start sectors and the sector size.

Layouts follow the tools' formats as the fixtures in tests/fixtures/partitions/ show them (real
util-linux 2.38.1 and parted 3.5 output; gpart and 2.20 layouts constructed from their sources):
start sectors and sizes consistent with each other (``End = Start + Sectors - 1``), free space between
partitions (gpart ``- free -`` rows, parted ``free`` lines), human sizes rounded as the tools round them.
"""

from __future__ import annotations

from conftest import props
from hypothesis import given
from hypothesis import strategies as st

from storagelab.parsers import partitions

PROPS = props(60)
MiB = 1024**2


def human(nbytes: int) -> str:
    """A rounded size as gpart/fdisk print it (powers of 1024, one decimal below 10)."""
    units = "BKMGTPE"
    v, i = float(nbytes), 0
    while v >= 1000 and i < len(units) - 1:
        v /= 1024
        i += 1
    if i == 0:
        return f"{int(v)}B"
    return f"{v:.1f}{units[i]}" if v < 10 else f"{v:.0f}{units[i]}"


@st.composite
def layout(draw):
    lsec = draw(st.sampled_from([512, 512, 4096]))
    scheme = draw(st.sampled_from(["gpt", "dos"]))
    first = (34 if lsec == 512 else 6) if scheme == "gpt" else draw(st.sampled_from([1, 63, 2048]))
    parts, pos = [], first
    for _ in range(draw(st.integers(1, 6))):
        gap = draw(st.sampled_from([0, 0, 1, 7, 2014, 2048]) | st.integers(0, 10**6))
        size = draw(st.sampled_from([1, 8, 2048, 16384]) | st.integers(1, 10**9))
        start = pos + gap
        parts.append({"start": start, "size": size, "gap": gap})
        pos = start + size
    tail = draw(st.integers(0, 4096))
    last_usable = pos - 1 + tail
    total = last_usable + 1 + (33 if scheme == "gpt" and lsec == 512 else (5 if scheme == "gpt" else 0))
    names = ["bios boot", "EFI system", "my data", "swap", "root", "home"]
    for i, p in enumerate(parts, 1):
        p["index"] = i
        p["name"] = names[i - 1]
        p["boot"] = scheme == "dos" and i == 1 and draw(st.booleans())
    return {
        "lsec": lsec,
        "psec": draw(st.sampled_from([lsec, 4096])),
        "scheme": scheme,
        "first": first,
        "last_usable": last_usable,
        "total": total,
        "parts": parts,
        "tail": tail,
    }


def expected_parts(lay: dict, disk: str, device=None) -> list[dict]:
    out = []
    for p in lay["parts"]:
        start_bytes = p["start"] * lay["lsec"]
        out.append(
            {
                "disk": disk,
                "index": p["index"],
                "start_sector": p["start"],
                "size_sectors": p["size"],
                "end_sector": p["start"] + p["size"] - 1,
                "abs_start_sector": p["start"],
                "logical_sector_bytes": lay["lsec"],
                "start_bytes": start_bytes,
                "size_bytes": p["size"] * lay["lsec"],
                "align_4k_rem_bytes": start_bytes % 4096,
                "align_1m_rem_bytes": start_bytes % MiB,
                "aligned_4k": start_bytes % 4096 == 0,
                "aligned_1m": start_bytes % MiB == 0,
                "table_type": "GPT" if lay["scheme"] == "gpt" else "MBR",
                **({"device": device(p["index"])} if device else {}),
            }
        )
    return out


def check(parsed, want_parts: list[dict], want_disk: dict) -> None:
    got = parsed.rows("partitions")
    assert len(got) == len(want_parts)
    for g, w in zip(got, want_parts, strict=True):
        for k, v in w.items():
            assert g[k] == v, f"partition {w['index']} {k}: {g[k]!r} != {v!r}"
    disks = [d for d in parsed.rows("disks") if d["partitions"]]
    assert len(disks) == 1
    for k, v in want_disk.items():
        assert disks[0][k] == v, f"disk {k}: {disks[0][k]!r} != {v!r}"


# ----------------------------------------------------------------------------- gpart show

GPART_TYPES = {
    "gpt": ["freebsd-boot", "freebsd-swap", "freebsd-zfs", "efi", "ms-basic-data", "linux-data"],
    "dos": ["freebsd", "ntfs", "linux-data", "fat32", "!12", "ebr"],
}


@PROPS
@given(layout(), st.booleans(), st.booleans(), st.data())
def test_gpart_show_round_trips(lay, providers, prompt, data):
    lsec = lay["lsec"]
    geom = data.draw(st.sampled_from(["ada0", "da3", "nvd0"]))
    scheme = "GPT" if lay["scheme"] == "gpt" else "MBR"
    usable = lay["last_usable"] - lay["first"] + 1
    sep = "p" if scheme == "GPT" else "s"
    rows, free = [], 0
    for p in lay["parts"]:
        if p["gap"]:
            rows.append((p["start"] - p["gap"], p["gap"], "", "- free -", f"({human(p['gap'] * lsec)})"))
            free += p["gap"]
        attrs = data.draw(st.sampled_from(["", "[bootme]", "[active]", "[bootme,bootonce]"]))
        p["type"] = data.draw(st.sampled_from(GPART_TYPES[lay["scheme"]]))
        p["attrs"] = attrs[1:-1] or None
        ident = f"{geom}{sep}{p['index']}" if providers else str(p["index"])
        rows.append((p["start"], p["size"], ident, f"{p['type']} {attrs}", f"({human(p['size'] * lsec)})"))
    if lay["tail"]:
        rows.append(
            (lay["last_usable"] - lay["tail"] + 1, lay["tail"], "", "- free -", f"({human(lay['tail'] * lsec)})")
        )
        free += lay["tail"]
    wb = max(len(str(x)) for r in rows for x in r[:2]) if rows else 1
    wb = max(wb, len(str(lay["first"])), len(str(usable)))
    wn = max([len(geom)] + [len(r[2]) for r in rows])
    media = human(lay["total"] * lsec)
    lines = [f"# gpart show{' -p' if providers else ''} {geom}"] if prompt else []
    lines.append(f"=>{lay['first']:>{wb}d}  {usable:>{wb}d}  {geom:>{wn}s}  {scheme}  ({media})")
    for start, size, ident, desc, hum in rows:
        if desc == "- free -":
            lines.append(f"  {start:>{wb}d}  {size:>{wb}d}  {'':>{wn}s}  - free -  {hum}")
        else:
            lines.append(f"  {start:>{wb}d}  {size:>{wb}d}  {ident:>{wn}s}  {desc} {hum}")
    parsed = partitions.parse("\n".join(lines) + "\n\n")
    assert parsed.format == "gpart"
    want = expected_parts(lay, geom, (lambda i: f"{geom}{sep}{i}") if providers else None)
    for w, p in zip(want, lay["parts"], strict=True):
        w.update(
            type=p["type"],
            flags=p["attrs"],
            table_type=scheme,
            physical_sector_bytes=None,
            logical_sector_source="checked" if lsec == 512 else "inferred",
        )
    check(
        parsed,
        want,
        {
            "disk": geom,
            "size_sectors": lay["first"] + usable,
            "size_source": "usable-end",
            "usable_first_sector": lay["first"],
            "usable_sectors": usable,
            "free_sectors": free or None,
            "media_size_text": media,
            "logical_sector_bytes": lsec,
        },
    )


# ----------------------------------------------------------------------------- fdisk -l

FDISK_TYPES = {
    "gpt": ["BIOS boot", "EFI System", "Linux filesystem", "Linux swap", "Microsoft basic data"],
    "dos": [
        ("83", "Linux"),
        ("7", "HPFS/NTFS/exFAT"),
        ("82", "Linux swap / Solaris"),
        ("8e", "Linux LVM"),
        ("a5", "FreeBSD"),
    ],
}


def table(header: list[str], rows: list[list[str]], left: set[str]) -> list[str]:
    """Columns as fdisk prints them: each as wide as its widest cell, left-aligned or right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    out = []
    for r in [header] + rows:
        cells = [f"{c:<{w}s}" if h in left else f"{c:>{w}s}" for c, w, h in zip(r, widths, header, strict=True)]
        out.append(" ".join(cells).rstrip())
    return out


@PROPS
@given(layout(), st.sampled_from(["2.38", "2.20"]), st.sampled_from(["img", "/dev/sda", "/dev/nvme0n1"]), st.data())
def test_fdisk_l_round_trips(lay, version, disk, data):
    lsec = lay["lsec"]
    if version == "2.20":  # 2.20 knew MBR with 512-byte sectors only
        lay["scheme"], lay["lsec"], lsec = "dos", 512, 512
    dev = (lambda i: f"{disk}p{i}") if disk.startswith("/dev/nvme") else (lambda i: f"{disk}{i}")
    nbytes = lay["total"] * lsec
    rows, want_types = [], []
    for p in lay["parts"]:
        end = p["start"] + p["size"] - 1
        if lay["scheme"] == "gpt":
            t = data.draw(st.sampled_from(FDISK_TYPES["gpt"]))
            rows.append([dev(p["index"]), str(p["start"]), str(end), str(p["size"]), human(p["size"] * lsec), t])
            want_types.append((t, None, None))
        else:
            tid, t = data.draw(st.sampled_from(FDISK_TYPES["dos"]))
            boot = "*" if p["boot"] else ""
            if version == "2.20":
                blocks = p["size"] * lsec // 1024
                rows.append(
                    [
                        dev(p["index"]),
                        boot,
                        str(p["start"]),
                        str(end),
                        f"{blocks}{'+' if p['size'] * lsec % 1024 else ''}",
                        tid,
                        t,
                    ]
                )
            else:
                rows.append(
                    [dev(p["index"]), boot, str(p["start"]), str(end), str(p["size"]), human(p["size"] * lsec), tid, t]
                )
            want_types.append((t, tid, "boot" if p["boot"] else None))
    if version == "2.20":
        lines = [
            "",
            f"Disk {disk}: {nbytes / 1e9:.1f} GB, {nbytes} bytes",
            f"255 heads, 63 sectors/track, {lay['total'] // (255 * 63)} cylinders, total {lay['total']} sectors",
            f"Units = sectors of 1 * {lsec} = {lsec} bytes",
            f"Sector size (logical/physical): {lsec} bytes / {lay['psec']} bytes",
            f"I/O size (minimum/optimal): {lay['psec']} bytes / {lay['psec']} bytes",
            "Disk identifier: 0x0003e2b4",
            "",
        ]
        lines += [
            "   " + ln
            for ln in table(["Device", "Boot", "Start", "End", "Blocks", "Id", "System"], rows, {"Device", "System"})[
                :1
            ]
        ]
        lines += table(["Device", "Boot", "Start", "End", "Blocks", "Id", "System"], rows, {"Device", "System"})[1:]
    else:
        header = (
            ["Device", "Start", "End", "Sectors", "Size", "Type"]
            if lay["scheme"] == "gpt"
            else ["Device", "Boot", "Start", "End", "Sectors", "Size", "Id", "Type"]
        )
        lines = [
            f"Disk {disk}: {human(nbytes)}, {nbytes} bytes, {lay['total']} sectors",
            "Disk model: QEMU HARDDISK   " if disk.startswith("/dev/") else None,
            f"Units: sectors of 1 * {lsec} = {lsec} bytes",
            f"Sector size (logical/physical): {lsec} bytes / {lay['psec']} bytes",
            f"I/O size (minimum/optimal): {lay['psec']} bytes / {lay['psec']} bytes",
            f"Disklabel type: {lay['scheme']}",
            "Disk identifier: 0x0d050063",
            "",
        ]
        lines = [ln for ln in lines if ln is not None] + table(header, rows, {"Device", "Boot", "Type"})
    parsed = partitions.parse("\n".join(lines) + "\n")
    assert parsed.format == "fdisk"
    want = expected_parts(lay, disk, dev)
    for w, (t, tid, flags) in zip(want, want_types, strict=True):
        w.update(type=t, type_id=tid, flags=flags, physical_sector_bytes=lay["psec"], logical_sector_source="printed")
    check(
        parsed,
        want,
        {
            "disk": disk,
            "size_sectors": lay["total"],
            "size_bytes": nbytes,
            "size_source": "printed",
            "logical_sector_bytes": lsec,
        },
    )


# ----------------------------------------------------------------------------- sfdisk -d


@PROPS
@given(layout(), st.booleans(), st.data())
def test_sfdisk_d_round_trips(lay, old, data):
    if old:  # the 2.20 dump: '# partition table of', Id=, no sector size (512 assumed)
        lay["scheme"], lay["lsec"] = "dos", 512
    lsec = lay["lsec"]
    disk = "/dev/sda"
    lines = []
    if old:
        lines += [f"# partition table of {disk}", "unit: sectors", ""]
    else:
        lines += [f"label: {lay['scheme']}", "label-id: 0x0d050063", f"device: {disk}", "unit: sectors"]
        if lay["scheme"] == "gpt":
            lines += [f"first-lba: {lay['first']}", f"last-lba: {lay['last_usable']}"]
        lines += [f"sector-size: {lsec}", ""]
    want_extra = []
    for p in lay["parts"]:
        name = f"{disk}{p['index']}"
        if old:
            tid = data.draw(st.sampled_from(["83", "8e", "a5", " 7"]))
            lines.append(
                f"{name} : start={p['start']:>9d}, size={p['size']:>9d}, Id={tid}" + (", bootable" if p["boot"] else "")
            )
            want_extra.append({"type_id": tid.strip(), "name": None, "flags": "boot" if p["boot"] else None})
        elif lay["scheme"] == "gpt":
            guid = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
            attrs = data.draw(st.sampled_from([None, "RequiredPartition", "LegacyBIOSBootable"]))
            lines.append(
                f"{name} : start={p['start']:>12d}, size={p['size']:>12d}, type={guid}, "
                f'uuid=6B5C0C6E-0000-4000-8000-0000000000{p["index"]:02d}, name="{p["name"]}"'
                + (f', attrs="{attrs}"' if attrs else "")
            )
            want_extra.append({"type_id": guid, "name": p["name"], "flags": attrs})
        else:
            lines.append(
                f"{name} : start={p['start']:>12d}, size={p['size']:>12d}, type=83"
                + (", bootable" if p["boot"] else "")
            )
            want_extra.append({"type_id": "83", "name": None, "flags": "boot" if p["boot"] else None})
    if old:
        for i in range(len(lay["parts"]) + 1, 5):
            lines.append(f"{disk}{i} : start=        0, size=        0, Id= 0")
    parsed = partitions.parse("\n".join(lines) + "\n")
    assert parsed.format == "sfdisk"
    want = expected_parts(lay, disk, lambda i: f"{disk}{i}")
    for w, extra in zip(want, want_extra, strict=True):
        w.update(extra, logical_sector_source="assumed" if old else "printed")
    disk_want = {"disk": disk, "logical_sector_bytes": lsec}
    if lay["scheme"] == "gpt" and not old:
        disk_want.update(
            size_sectors=lay["last_usable"] + 1,
            size_source="usable-end",
            usable_first_sector=lay["first"],
            usable_sectors=lay["last_usable"] - lay["first"] + 1,
        )
    check(parsed, want, disk_want)


# ----------------------------------------------------------------------------- parted


@PROPS
@given(layout(), st.sampled_from(["m-s", "m-B", "human"]), st.booleans(), st.data())
def test_parted_round_trips(lay, form, free_lines, data):
    lsec = lay["lsec"]
    path = "/dev/sdb"
    label = "gpt" if lay["scheme"] == "gpt" else "msdos"

    def unit(sector: int, end: bool = False) -> str:
        if form == "m-B":
            return f"{(sector + 1) * lsec - 1 if end else sector * lsec}B"
        return f"{sector}s"

    def length(n: int) -> str:
        return f"{n * lsec}B" if form == "m-B" else f"{n}s"

    rows, want_extra, free = [], [], 0
    for p in lay["parts"]:
        if free_lines and p["gap"]:
            rows.append(("free", p["start"] - p["gap"], p["gap"]))
            free += p["gap"]
        flags = data.draw(st.sampled_from(["", "boot", "boot, esp", "bios_grub", "lvm"]))
        fs = data.draw(st.sampled_from(["", "ext4", "linux-swap(v1)", "fat32"]))
        rows.append(("part", p, flags, fs))
        name = p["name"] if label == "gpt" else None
        kind = "primary" if label == "msdos" else None
        want_extra.append(
            {
                "flags": flags or None,
                "filesystem": fs or None,
                "name": name,
                **({"type": kind} if form == "human" else {}),
            }
        )
    if form.startswith("m-"):
        lines = ["BYT;", f"{path}:{length(lay['total'])}:scsi:{lsec}:{lay['psec']}:{label}:ATA DISK:;"]
        for r in rows:
            if r[0] == "free":
                lines.append(f"1:{unit(r[1])}:{unit(r[1] + r[2] - 1, True)}:{length(r[2])}:free;")
            else:
                _, p, flags, fs = r
                name = p["name"] if label == "gpt" else ""
                lines.append(
                    f"{p['index']}:{unit(p['start'])}:{unit(p['start'] + p['size'] - 1, True)}:"
                    f"{length(p['size'])}:{fs}:{name}:{flags};"
                )
    else:
        cols = ["Number", "Start", "End", "Size"] + (
            ["File system", "Name", "Flags"] if label == "gpt" else ["Type", "File system", "Flags"]
        )
        table_rows = []
        for r in rows:
            if r[0] == "free":
                cells = ["", unit(r[1]), unit(r[1] + r[2] - 1, True), length(r[2])] + (
                    ["Free Space", "", ""] if label == "gpt" else ["", "Free Space", ""]
                )
            else:
                _, p, flags, fs = r
                cells = [
                    f"{p['index']:2d}",
                    unit(p["start"]),
                    unit(p["start"] + p["size"] - 1, True),
                    length(p["size"]),
                ] + ([fs, p["name"], flags] if label == "gpt" else ["primary", fs, flags])
            table_rows.append(cells)
        widths = [max(len(c), *(len(r[i]) for r in table_rows)) + 2 for i, c in enumerate(cols)]
        lines = [
            "Model: ATA DISK (scsi)",
            f"Disk {path}: {length(lay['total'])}",
            f"Sector size (logical/physical): {lsec}B/{lay['psec']}B",
            f"Partition Table: {label}",
            "Disk Flags: ",
            "",
        ]
        lines.append("".join(f"{c:<{w}s}" for c, w in zip(cols, widths, strict=True)).rstrip())
        lines += ["".join(f"{c:<{w}s}" for c, w in zip(r, widths, strict=True)).rstrip() for r in table_rows]
        lines.append("")
    parsed = partitions.parse("\n".join(lines) + "\n")
    assert parsed.format == "parted"
    want = expected_parts(lay, path)
    for w, extra in zip(want, want_extra, strict=True):
        w.update(extra, physical_sector_bytes=lay["psec"])
    check(
        parsed,
        want,
        {"disk": path, "size_sectors": lay["total"], "free_sectors": free or None, "logical_sector_bytes": lsec},
    )


@PROPS
@given(
    st.sampled_from([63, 2048, 4096]),
    st.lists(st.integers(1, 10**8), min_size=1, max_size=4),
    st.lists(st.integers(0, 4096), min_size=4, max_size=4),
    st.booleans(),
)
def test_gpart_bsd_label_inside_an_mbr_slice_is_placed_on_the_disk(slice_start, sizes, gaps, providers):
    """``gpart show`` of an MBR disk and the BSD label in its slice: the label's offsets are relative to the
    slice, so the partitions' disk position (and their alignment) add the slice's start."""
    parts, pos = [], 0
    for size, gap in zip(sizes, gaps[: len(sizes)], strict=True):  # one gap before each partition
        parts.append((pos + gap, size))
        pos += gap + size
    slice_size = pos + 16
    total = slice_start + slice_size + 100
    lines = [
        "=>" + f"{slice_start:>11d}  {total - slice_start:>10d}  ada0  MBR  ({human(total * 512)})",
        f"  {slice_start:>11d}  {slice_size:>10d}  {'ada0s1' if providers else '1':>6s}  freebsd [active] "
        f"({human(slice_size * 512)})",
        "",
        f"=>{0:>11d}  {slice_size:>10d}  ada0s1  BSD  ({human(slice_size * 512)})",
    ]
    for k, (start, size) in enumerate(parts):
        letter = "abdefgh"[k]
        lines.append(
            f"  {start:>11d}  {size:>10d}  {'ada0s1' + letter if providers else str(k + 1):>7s}  "
            f"freebsd-ufs  ({human(size * 512)})"
        )
    parsed = partitions.parse("\n".join(lines) + "\n")
    rows = parsed.rows("partitions")
    assert rows[0]["disk"] == "ada0" and rows[0]["abs_start_sector"] == slice_start
    label_rows = rows[1:]
    assert len(label_rows) == len(parts)
    for row, (start, size) in zip(label_rows, parts, strict=True):
        assert (row["disk"], row["start_sector"], row["size_sectors"]) == ("ada0s1", start, size)
        assert row["abs_start_sector"] == slice_start + start
        assert row["start_bytes"] == (slice_start + start) * 512
        assert row["aligned_4k"] == ((slice_start + start) * 512 % 4096 == 0)
        assert row["aligned_1m"] == ((slice_start + start) * 512 % 2**20 == 0)


# --- the old sfdisk -l (util-linux <= 2.25): the same partitions in four units -------------------------------
# Rendered as its out_rounddown/out_roundup print them: a start not on a unit boundary rounded down with '+',
# an end rounded up with '-', sizes in #sectors or in 1024-byte #blocks with '+' for an odd sector count.


def _down(n: int, unit: int) -> str:
    return f"{n // unit}{'+' if unit != 1 and n % unit else ' ' if unit != 1 else ''}"


def _up(n: int, unit: int) -> str:
    return f"{n // unit}{'-' if unit != 1 and (n + 1) % unit else ' ' if unit != 1 else ''}"


def legacy_sfdisk(parts: list[tuple[int, int, str]], fmt: str, heads: int = 255, spt: int = 63) -> str:
    cyl = heads * spt
    units = {
        "C": (
            f"cylinders of {cyl * 512} bytes, blocks of 1024 bytes",
            cyl,
            "   Device Boot Start     End   #cyls    #blocks   Id  System",
        ),
        "S": ("sectors of 512 bytes", 1, "   Device Boot    Start       End   #sectors  Id  System"),
        "B": ("blocks of 1024 bytes", 2, "   Device Boot   Start       End    #blocks   Id  System"),
        "M": (
            "1MiB = 1024*1024 bytes, blocks of 1024 bytes",
            2048,
            "   Device Boot Start   End    MiB    #blocks   Id  System",
        ),
    }
    what, unit, header = units[fmt]
    lines = [
        "",
        f"Disk /dev/sdz: 3000 cylinders, {heads} heads, {spt} sectors/track",
        f"Units: {what}, counting from 0",
        "",
        header,
    ]
    for i, (start, size, type_id) in enumerate(parts, 1):
        end = start + size - 1
        blocks = f"{size // 2}{'+' if size % 2 else ' '}"
        cols = [_down(start, unit), _up(end, unit)]
        if fmt == "S":
            cols.append(str(size))
        elif fmt == "B":
            cols.append(blocks)
        else:
            cols += [f"{-(-size // unit)}{'-' if size % unit else ' '}", blocks]  # #cyls / MiB rounded up, '-'
        lines.append(
            f"/dev/sdz{i}   {'*' if i == 1 else ' '} " + " ".join(f"{c:>9}" for c in cols) + f"  {type_id:>2}  Linux"
        )
    lines.append(f"/dev/sdz{len(parts) + 1}            0         -          0   0  Empty")
    return "\n".join(lines) + "\n"


@st.composite
def legacy_layout(draw):
    n = draw(st.integers(1, 3))
    at, parts = draw(st.sampled_from([63, 2048, 1, 16065])), []
    for _ in range(n):
        size = draw(st.integers(1, 5_000_000))
        parts.append((at, size, draw(st.sampled_from(["83", "8e", "fd", "7"]))))
        at += size + draw(st.sampled_from([0, 1, 62, 2048]))
    return parts


@PROPS
@given(legacy_layout(), st.sampled_from("CSBM"))
def test_legacy_sfdisk_l_sizes_exact_starts_where_printed_exactly(parts, fmt):
    text = legacy_sfdisk(parts, fmt)
    p = partitions.parse(text)
    assert p.format == "sfdisk-l"
    unit = {"C": 255 * 63, "S": 1, "B": 2, "M": 2048}[fmt]
    rows = p.rows("partitions")
    assert [(r["device"], r["size_sectors"], r["type_id"]) for r in rows] == [
        (f"/dev/sdz{i}", size, t) for i, (_, size, t) in enumerate(parts, 1)
    ]
    for r, (start, size, _) in zip(rows, parts, strict=True):
        if start % unit:  # printed 'N+': not known to the sector
            assert (r["start_sector"], r["aligned_4k"], r["start_bytes"]) == (None, None, None)
        else:
            assert (r["start_sector"], r["end_sector"], r["start_bytes"]) == (start, start + size - 1, start * 512)
            assert r["aligned_4k"] == (start * 512 % 4096 == 0)
    unknown = [f"/dev/sdz{i}" for i, (start, _, _) in enumerate(parts, 1) if start % unit]
    assert bool(p.warnings) == bool(unknown)
    assert all(d in p.warnings[0] for d in unknown)
