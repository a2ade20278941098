"""The device view's tables for reading (issue 25): the frames of ``device_iostat.device_beside_fio`` with their
values formatted at the edge. Counts are whole numbers when zpool printed them whole (``-p``, or below 1024) and
"about N" to the 3 significant digits of zpool's nicenum otherwise; times carry their unit; shares are percents;
a value zpool did not print ('-') says so, and a cell that does not apply is an em dash."""

from __future__ import annotations

import math

import polars as pl

from . import prose

EM = "\u2014"
NOT_PRINTED = "not printed ('-')"
NICENUM = "zpool printed the counts to 3 significant digits; `-p` prints them whole"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def count_text(n, exact: bool | None) -> str:
    """'2,173,279' (every count printed whole) or 'about 2,680,000' (a sum of nicenum counts such as 1.68M)."""
    if _missing(n):
        return EM
    if exact:
        return f"{n:,.0f}"
    return f"about {float(f'{n:.3g}'):,.0f}"


def ns_text(n, missing: str = EM) -> str:
    """'4.19 ms', '133 ns' (3 significant digits: zpool prints whole units, -w bounds are powers of two)."""
    if _missing(n):
        return missing
    for unit, step in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if n >= step:
            return f"{n / step:.3g} {unit}"
    return f"{n:.3g} ns"


def share_text(x) -> str:
    """'22.7 %' (prose.percent); an em dash when nothing was counted (0 of 0)."""
    return EM if _missing(x) else prose.percent(100 * x)


def size_text(n) -> str:
    """A power-of-two bucket bound: '512 B', '16 KiB', '1 MiB'."""
    if _missing(n):
        return EM
    n = int(n)
    for unit, step in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= step:
            return f"{n // step} {unit}"
    return f"{n} B"


def _whole(n) -> bool:
    """-q has no exactness flag: zpool prints a count below 1024 whole, above it as nicenum (1.2K)."""
    return not _missing(n) and n < 1024


def _file(path) -> str:
    return str(path).rsplit("/", 1)[-1]


def _text(v) -> str:
    return EM if _missing(v) else str(v)


def _where(r: dict) -> dict:
    """The row's place: its file, pool/vdev (one column for -w/-r, two for -l/-q), report and time stamp."""
    place = {"pool/vdev": r["name"]} if "name" in r else {"pool": r["pool"], "vdev": _text(r["vdev"])}
    return {"file": _file(r["path"]), **place, "report": r["sample"], "time stamp": _text(r["timestamp"])}


def latency(lat: pl.DataFrame) -> pl.DataFrame:
    """device_iostat's ``latency`` (-w) summary, one row per block and column, for reading."""
    rows = [
        {
            **_where(r),
            "block": r["block"],
            "wait": r["wait"],
            "op": _text(r["op"]),
            "I/Os counted": count_text(r["ios"], r["exact"]),
            "median at most": ns_text(r["median_max_ns"]),
            "99 % at most": ns_text(r["p99_max_ns"]),
            "paste cut after": _text(r["cut_at"]),
        }
        for r in lat.iter_rows(named=True)
    ]
    return pl.DataFrame(rows, infer_schema_length=None)


def req_size(req: pl.DataFrame) -> pl.DataFrame:
    """device_iostat's ``req_size`` (-r) summary, one row per block and I/O class, for reading."""
    rows = [
        {
            **_where(r),
            "I/O class": r["io_class"],
            "I/Os counted": count_text(r["ios"], r["exact"]),
            "aggregated by ZFS": share_text(r["agg_share"]),
            "of at most 4 KiB": share_text(r["small_share"]),
            "median request bucket": size_text(r["median_bucket_bytes"]),
        }
        for r in req.iter_rows(named=True)
    ]
    return pl.DataFrame(rows, infer_schema_length=None)


def waits(table: pl.DataFrame) -> pl.DataFrame:
    """device_iostat's ``waits_table`` (-l): read and write waits, or the one column of scrub/trim/rebuild."""
    rows = []
    for r in table.iter_rows(named=True):
        one = r["wait"] in ("scrub", "trim", "rebuild")
        rows.append(
            {
                **_where(r),
                "wait": r["wait"],
                "read": EM if one else ns_text(r["read_ns"], NOT_PRINTED),
                "write": EM if one else ns_text(r["write_ns"], NOT_PRINTED),
                "one column (scrub, trim, rebuild)": ns_text(r["wait_ns"], NOT_PRINTED) if one else EM,
            }
        )
    return pl.DataFrame(rows, infer_schema_length=None)


def queues(table: pl.DataFrame) -> pl.DataFrame:
    """device_iostat's ``queues_table`` (-q): I/Os pending and active, as whole counts."""
    rows = [
        {
            **_where(r),
            "queue": r["queue"],
            "pending": count_text(r["pending"], _whole(r["pending"])),
            "active": count_text(r["active"], _whole(r["active"])),
        }
        for r in table.iter_rows(named=True)
    ]
    return pl.DataFrame(rows, infer_schema_length=None)
