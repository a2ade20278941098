"""The tables zdb output fills (docs/schema.md is generated from them)."""

from __future__ import annotations

from .. import zdb_config
from ..base import LINES, table

_HUMAN = (
    "human_units",
    "BOOLEAN",
    (
        "true when the row's numbers were printed with K/M/G suffixes (powers of 1024, 3 significant "
        "digits, so the stored integers are approximate); false for raw integers (-P)"
    ),
)

TABLES = {
    "zdb_block_stats": table(
        "zdb -b summary block (one per `bp count:`); counts and bytes are exact integers as zdb prints them.",
        ("block_no", "INTEGER", "1-based number of this summary block in the file"),
        ("pool", "VARCHAR", "pool from the `zdb ... POOL` invocation/prompt line before it, else NULL"),
        ("bp_count", "BIGINT", "block pointers traversed, count (embedded bps included)"),
        ("ganged_count", "BIGINT", "gang blocks, count (NULL before 0.6.5)"),
        ("bp_logical_bytes", "BIGINT", "total logical size (LSIZE), bytes"),
        ("bp_logical_avg_bytes", "BIGINT", "LSIZE per bp as printed (integer), bytes"),
        ("bp_physical_bytes", "BIGINT", "total physical size (PSIZE), bytes"),
        ("bp_physical_avg_bytes", "BIGINT", "PSIZE per bp as printed, bytes"),
        ("compression_physical", "DOUBLE", "LSIZE/PSIZE ratio as printed (2 decimals); NULL for nan/inf"),
        ("bp_allocated_bytes", "BIGINT", "total allocated size (ASIZE, with parity and copies), bytes"),
        ("bp_allocated_avg_bytes", "BIGINT", "ASIZE per bp as printed, bytes"),
        ("compression_allocated", "DOUBLE", "LSIZE/ASIZE ratio as printed; NULL for nan/inf"),
        ("bp_deduped_bytes", "BIGINT", "ASIZE saved by dedup, bytes (NULL in pre-dedup zdb output)"),
        ("dedup_ref_gt1_count", "BIGINT", "blocks referenced more than once (`ref>1:`), count"),
        ("dedup_ratio", "DOUBLE", "`deduplication:` ratio as printed (1 + deduped/allocated); NULL for nan/inf"),
        ("bp_cloned_bytes", "BIGINT", "ASIZE saved by block cloning, bytes (2.2+, else NULL)"),
        ("bp_cloned_count", "BIGINT", "cloned blocks, count (2.2+, else NULL)"),
        ("embedded_bp_count", "BIGINT", "sum of `additional, non-pointer bps of type T` counts (0 when none printed)"),
        ("dittoed_same_vdev", "BIGINT", "`Dittoed blocks on same vdev`, count (0 when not printed)"),
        (
            "dittoed_same_metaslab",
            "BIGINT",
            "`Dittoed blocks in same metaslab`, count (0 when not printed; NULL for the 0.6/0.7 format without it)",
        ),
        (
            "leaks",
            "VARCHAR",
            "'none' (No leaks line), 'leaked' (size mismatch or leaked space lines), NULL when not checked/shown",
        ),
        (
            "leaked_bytes",
            "BIGINT",
            "signed leaked bytes (alloc - traversal; negative = double count); 0 for 'none'; NULL if unknown",
        ),
        ("traversal_bytes", "BIGINT", "`block traversal size` of a mismatch line, bytes (else NULL)"),
        ("alloc_bytes", "BIGINT", "`alloc` of a mismatch line, bytes (else NULL)"),
        (
            "zfs_era",
            "VARCHAR",
            (
                "output layout hint, the lowest OpenZFS release printing it: 'pre-dedup' (no bp deduped:), '0.6/0.7' "
                "(SPA allocated:), '0.8+' (Normal class:; FreeBSD's pre-13 ZFS prints it too), '2.0+' (block size "
                "histogram), '2.1+' (Embedded log class), '2.2+' (bp cloned:), '2.4+' (Special embedded log)"
            ),
        ),
        *LINES,
    ),
    "zdb_classes": table(
        "Allocation class lines of a zdb -b summary.",
        ("block_no", "INTEGER", "zdb_block_stats.block_no"),
        ("class", "VARCHAR", "Normal, Special, Dedup, Embedded log, Special embedded log, SPA allocated"),
        ("allocated_bytes", "BIGINT", "bytes allocated in the class"),
        ("used_pct", "DOUBLE", "percent of the class's space used; NULL for nan/-nan (class has no space)"),
        *LINES,
    ),
    "zdb_embedded_bps": table(
        "`additional, non-pointer bps of type T: N` lines (embedded block pointers).",
        ("block_no", "INTEGER", "zdb_block_stats.block_no"),
        ("embedded_type", "INTEGER", "embedded bp type: 0 data, 1 reserved, 2 redacted"),
        ("bp_count", "BIGINT", "embedded block pointers of this type, count"),
        *LINES,
    ),
    "zdb_block_types": table(
        "zdb -bb per-object-type table (-bbb adds per-level rows). Types with no blocks (`-` rows) are not stored.",
        ("block_no", "INTEGER", "zdb_block_stats.block_no of the preceding summary (NULL if none)"),
        ("type_name", "VARCHAR", "DMU object type as printed (`DMU dnode`, `other`, `Total`, `Metadata Total`)"),
        ("level", "INTEGER", "indirection level of a -bbb `L<n>` row; NULL for the type's total row"),
        ("blocks", "BIGINT", "blocks, count"),
        ("lsize_bytes", "BIGINT", "logical size, bytes"),
        ("psize_bytes", "BIGINT", "physical size, bytes"),
        ("asize_bytes", "BIGINT", "allocated size, bytes"),
        ("avg_bytes", "BIGINT", "ASIZE per block, bytes"),
        ("comp_ratio", "DOUBLE", "LSIZE/PSIZE"),
        ("pct_total", "DOUBLE", "share of the total ASIZE, percent"),
        ("ganged_blocks", "BIGINT", "-bbb `number of ganged blocks` under the row, count (NULL when not printed)"),
        _HUMAN,
        *LINES,
    ),
    "zdb_block_size_histogram": table(
        "zdb -bb `Block Size Histogram` (2.0+): one row per power-of-two block size.",
        ("block_no", "INTEGER", "zdb_block_stats.block_no of the preceding summary (NULL if none)"),
        ("block_size_bytes", "BIGINT", "block size of the row, bytes"),
        ("psize_count", "BIGINT", "blocks of this physical size, count"),
        ("psize_bytes", "BIGINT", "their physical bytes"),
        ("psize_cum_bytes", "BIGINT", "cumulative physical bytes up to this size"),
        ("lsize_count", "BIGINT", "blocks of this logical size, count"),
        ("lsize_bytes", "BIGINT", "their logical bytes"),
        ("lsize_cum_bytes", "BIGINT", "cumulative logical bytes"),
        ("asize_count", "BIGINT", "blocks of this allocated size, count"),
        ("asize_bytes", "BIGINT", "their allocated bytes"),
        ("asize_cum_bytes", "BIGINT", "cumulative allocated bytes"),
        _HUMAN,
        *LINES,
    ),
    "zdb_ddt_histogram": table(
        "DDT histograms: `Simulated DDT histogram` (zdb -S), the aggregated `DDT histogram` (-DD), per-object (-DDD).",
        ("ddt_no", "INTEGER", "1-based number of the -S/-D output in the file (shared with zdb_ddt_ratios/objects)"),
        ("source", "VARCHAR", "'simulated' (zdb -S) or 'ddt' (existing dedup table)"),
        (
            "object",
            "VARCHAR",
            "DDT object of a -DDD per-object histogram (DDT-sha256-zap-unique); NULL when aggregated/simulated",
        ),
        (
            "refcnt_bucket",
            "BIGINT",
            "reference count bucket, its lower edge (1, 2, 4 ... 1K = 1024); NULL on the Total row",
        ),
        ("is_total", "BOOLEAN", "the Total row"),
        ("alloc_blocks", "BIGINT", "allocated (unique) blocks, count = DDT entries"),
        ("alloc_lsize_bytes", "BIGINT", "allocated LSIZE, bytes"),
        ("alloc_psize_bytes", "BIGINT", "allocated PSIZE, bytes"),
        ("alloc_dsize_bytes", "BIGINT", "allocated DSIZE (on disk), bytes"),
        ("ref_blocks", "BIGINT", "referenced blocks, count"),
        ("ref_lsize_bytes", "BIGINT", "referenced LSIZE, bytes"),
        ("ref_psize_bytes", "BIGINT", "referenced PSIZE, bytes"),
        ("ref_dsize_bytes", "BIGINT", "referenced DSIZE, bytes"),
        _HUMAN,
        *LINES,
    ),
    "zdb_ddt_ratios": table(
        "`dedup = X, compress = Y, copies = Z, dedup * compress / copies = W` line of zdb -S / -D.",
        ("ddt_no", "INTEGER", "see zdb_ddt_histogram.ddt_no"),
        ("source", "VARCHAR", "'simulated' or 'ddt'"),
        ("pool", "VARCHAR", "pool from the invocation/prompt line, else NULL"),
        ("dedup", "DOUBLE", "referenced DSIZE / allocated DSIZE, ratio"),
        ("compress", "DOUBLE", "referenced LSIZE / referenced PSIZE, ratio"),
        ("copies", "DOUBLE", "referenced DSIZE / referenced PSIZE, ratio"),
        ("product", "DOUBLE", "dedup * compress / copies, ratio"),
        *LINES,
    ),
    "zdb_ddt_objects": table(
        "zdb -D object lines: DDT objects (<= 2.2 per-entry sizes, 2.3+ totals), 2.3+ table headers and log objects, "
        "or `All DDTs are empty`.",
        ("ddt_no", "INTEGER", "see zdb_ddt_histogram.ddt_no"),
        ("pool", "VARCHAR", "pool from the invocation/prompt line, else NULL"),
        (
            "kind",
            "VARCHAR",
            (
                "'object' (DDT-<cksum>-<type>-<class>), 'table' (2.3+ DDT-<cksum>: version=...), "
                "'log' (2.3+ DDT-log-<cksum>-<n>), 'all_empty' (All DDTs are empty)"
            ),
        ),
        ("name", "VARCHAR", "object name as printed"),
        ("checksum", "VARCHAR", "sha256, sha512, skein, edonr, blake3 ..."),
        ("ddt_type", "VARCHAR", "storage type of an object (zap)"),
        ("ddt_class", "VARCHAR", "ditto, duplicate or unique"),
        ("entries", "BIGINT", "entries, count"),
        (
            "disk_bytes_per_entry",
            "DOUBLE",
            "on-disk bytes per entry: <= 2.2 as printed (`size X on disk`, truncated by zdb); 2.3+ dspace/entries",
        ),
        (
            "core_bytes_per_entry",
            "DOUBLE",
            "in-core bytes per entry: <= 2.2 as printed (`Y in core`); 2.3+ mspace/entries",
        ),
        (
            "disk_bytes_total",
            "DOUBLE",
            "on-disk bytes of the object: 2.3+ dspace as printed; <= 2.2 entries x per-entry",
        ),
        (
            "core_bytes_total",
            "DOUBLE",
            "in-core bytes of the object: 2.3+ mspace as printed; <= 2.2 entries x per-entry",
        ),
        (
            "totals_derived",
            "BOOLEAN",
            (
                "true when the totals were computed as entries x per-entry (<= 2.2; approximate, zdb truncates the "
                "per-entry value), false when printed (2.3+)"
            ),
        ),
        ("ddt_version", "INTEGER", "'table': DDT version (0 legacy, 1 fast dedup)"),
        ("flags", "BIGINT", "'table'/'log': flags value (printed in hex)"),
        ("flag_names", "VARCHAR", "'table'/'log': flag names in brackets as printed (`FLAT LOG`), else NULL"),
        ("object_id", "BIGINT", "'table': rootobj; 'log': obj"),
        ("log_len", "BIGINT", "'log': the `len=` field as printed"),
        ("log_txg", "BIGINT", "'log': the `txg=` field"),
        *LINES,
    ),
    "zdb_events": table(
        "Leak, error and other notable lines of zdb -b (one per line).",
        ("block_no", "INTEGER", "zdb_block_stats.block_no of the summary they belong to (NULL if none followed)"),
        (
            "kind",
            "VARCHAR",
            (
                "'no_leaks', 'size_mismatch' (leaked/unreachable), 'leaked_space', 'read_error', "
                "'error_count', 'indirect_vdev', 'error' (another error line)"
            ),
        ),
        ("vdev", "BIGINT", "vdev id (leaked_space, indirect_vdev)"),
        ("offset_bytes", "BIGINT", "leaked segment offset, bytes"),
        (
            "size_bytes",
            "BIGINT",
            "leaked segment size, or mismatch difference (signed), or indirect mapping memory, bytes",
        ),
        ("errno", "INTEGER", "error number (read_error, error_count)"),
        ("count", "BIGINT", "error_count: occurrences; indirect_vdev: segments"),
        ("text", "VARCHAR", "the line, stripped"),
        *LINES,
    ),
}
TABLES.update(zdb_config.TABLES)
