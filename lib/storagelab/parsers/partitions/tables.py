"""The partitions and disks tables every partition-tool parser fills."""

from __future__ import annotations

from ..base import LINES, table

_SOURCE_DOC = (
    "how logical_sector_bytes is known: 'printed' by the tool, 'checked' (gpart: 512 assumed and consistent "
    "with the printed human sizes), 'inferred' (gpart: 4096, from the human sizes), 'assumed' (512, nothing "
    "printed to check it against)"
)

TABLES = {
    "partitions": table(
        "One row per partition of a partition table (gpart/fdisk/sfdisk/parted); free-space rows are not stored.",
        ("disk", "VARCHAR", "disk or geom the table belongs to, as printed (ada3, ada0s1, /dev/sda, gpt.img)"),
        ("table_type", "VARCHAR", "MBR (dos/msdos), GPT, BSD, EBR, ... (normalised, see module doc)"),
        ("index", "INTEGER", "partition number (gpart index, fdisk/sfdisk device suffix, parted Number)"),
        ("device", "VARCHAR", "partition device as printed (fdisk/sfdisk, gpart -p); else NULL"),
        ("start_sector", "BIGINT", "first sector as printed (relative to the table's disk/geom), logical sectors"),
        ("end_sector", "BIGINT", "last sector (inclusive), logical sectors"),
        ("size_sectors", "BIGINT", "length, logical sectors"),
        (
            "abs_start_sector",
            "BIGINT",
            "first sector on the underlying disk: start_sector plus the start of the enclosing slice for a gpart BSD "
            "label "
            "inside an MBR slice listed in the same output; else = start_sector",
        ),
        ("logical_sector_bytes", "INTEGER", "logical sector size, bytes"),
        ("physical_sector_bytes", "INTEGER", "physical sector size, bytes, where printed (fdisk, parted); else NULL"),
        ("logical_sector_source", "VARCHAR", _SOURCE_DOC),
        (
            "start_bytes",
            "BIGINT",
            "byte offset of the partition on the underlying disk (abs_start_sector x logical size)",
        ),
        ("size_bytes", "BIGINT", "length, bytes"),
        (
            "type",
            "VARCHAR",
            "type as named: gpart type (freebsd-zfs), fdisk Type/System (Linux), parted msdos Type "
            "(primary/extended/logical)",
        ),
        ("type_id", "VARCHAR", "type code: MBR id in hex (fdisk Id, sfdisk type=/Id=) or GPT type GUID (sfdisk)"),
        ("name", "VARCHAR", "partition name/label (GPT name: sfdisk name=, parted Name; gpart -l label)"),
        ("filesystem", "VARCHAR", "file system parted detected (parted 'File system'); else NULL"),
        (
            "flags",
            "VARCHAR",
            "flags/attributes as printed, comma-separated (boot, esp, active, bootme, lba...); "
            "the fdisk Boot '*' and sfdisk 'bootable' are stored as 'boot'",
        ),
        (
            "align_check",
            "VARCHAR",
            "parted's own verdict where an interactive session ran `align-check TYPE N` on this partition: "
            "'optimal: aligned', 'optimal: not aligned: 63s % 2048s != 0s' (the reason parted 3.4+ prints); else NULL",
        ),
        ("align_4k_rem_bytes", "BIGINT", "start_bytes mod 4096, bytes (0 = aligned to 4 KiB)"),
        ("align_1m_rem_bytes", "BIGINT", "start_bytes mod 1048576, bytes (0 = aligned to 1 MiB)"),
        ("aligned_4k", "BOOLEAN", "start_bytes is a multiple of 4096"),
        ("aligned_1m", "BOOLEAN", "start_bytes is a multiple of 1 MiB"),
        (
            "rounded_to_bytes",
            "BIGINT",
            "bytes: the tool printed this row's start/end/size rounded to this many bytes (the unit of the last "
            "digit: parted's default unit, 1049kB -> 1000), so start_bytes/size_bytes are as printed, and the sectors "
            "and alignment are NULL (not known); NULL when the values are exact",
        ),
        *LINES,
    ),
    "disks": table(
        "One row per disk/geom of a partition-table listing (also disks without a table).",
        ("disk", "VARCHAR", "disk or geom as printed"),
        ("table_type", "VARCHAR", "MBR, GPT, BSD, ... (normalised); NULL when the disk has no partition table"),
        ("label_id", "VARCHAR", "disk identifier (fdisk 'Disk identifier', sfdisk label-id)"),
        ("size_sectors", "BIGINT", "disk size, logical sectors (see size_source); NULL when not known"),
        ("size_bytes", "BIGINT", "disk size, bytes (size_sectors x logical size, or as printed)"),
        (
            "size_source",
            "VARCHAR",
            "'printed' (fdisk, parted: the whole disk) or 'usable-end' (gpart header first + usable sectors, sfdisk "
            "last-lba + 1: where the usable area ends, a lower bound, short of the disk by the backup GPT and "
            "alignment slack); NULL when no size is known (sfdisk -d of an MBR)",
        ),
        ("usable_first_sector", "BIGINT", "first usable sector (gpart header, sfdisk first-lba); else NULL"),
        ("usable_sectors", "BIGINT", "usable sectors (gpart header, sfdisk last-lba - first-lba + 1); else NULL"),
        (
            "free_sectors",
            "BIGINT",
            "sum of the free-space rows printed (gpart, parted print free); NULL when none printed",
        ),
        ("partitions", "INTEGER", "partitions stored for this disk, count"),
        ("logical_sector_bytes", "INTEGER", "logical sector size, bytes"),
        ("physical_sector_bytes", "INTEGER", "physical sector size, bytes, where printed; else NULL"),
        ("logical_sector_source", "VARCHAR", _SOURCE_DOC),
        ("media_size_text", "VARCHAR", "gpart's media size in parentheses as printed (3.6T); else NULL"),
        ("state", "VARCHAR", "gpart header state tag (CORRUPT); else NULL"),
        (
            "size_rounded_to_bytes",
            "BIGINT",
            "bytes: the disk size was printed rounded to this many bytes (parted's default unit, 67.1MB -> 100000): "
            "size_bytes is as printed and size_sectors NULL; NULL when exact",
        ),
        *LINES,
    ),
}
