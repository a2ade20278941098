"""Every unit conversion in the project.

The database holds one unit per quantity: bytes, bytes per second, nanoseconds, counts
(and plain percentages). Parsers call these functions at the edge; notebooks and charts
convert back for display only (see ``to_mib`` and friends).

Conventions of the tools (see docs/formats/log-formats.md and docs/formats/zfs-facts.md):

* fio >= 2.17 prints IEC (KiB, MiB, ...) and SI (kB, MB, ...) units correctly.
  fio <= 2.16 prints ``KB``/``MB``/``GB`` meaning powers of 1024 (kb_base=1024), and
  skips ``T`` (the step after G is P).
* fio counts (IOPS, latency min/max) carry SI multipliers ``k``/``K``, ``M``, ``G``...
  of the unit printed on that line: ``max=44735k`` in a ``(usec)`` line is 44,735,000 µs.
* bonnie++ ``k``/``m``/``g`` suffixes are KiB/s, MiB/s, GiB/s; ``K/sec`` columns are KiB/s.
* zdb/zpool ``K M G T P E`` (nicenum) are powers of 1024, with an optional ``B``.
* mbuffer ``kB``/``MB``/``GB`` (releases before 2018) are powers of 1024 as well.
"""

from __future__ import annotations

import math
import re

KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4
PiB = 1024**5
EiB = 1024**6
MB = 1000**2  # SI: what drive datasheets, link rates and CrystalDiskMark/KDiskMark mean by MB/s
GB = 1000**3

_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_IEC_STEP = {"": 0, "K": 1, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}

_TIME_NS = {
    "ns": 1.0,
    "nsec": 1.0,
    "us": 1e3,
    "usec": 1e3,
    "µs": 1e3,
    "μs": 1e3,
    "ms": 1e6,
    "msec": 1e6,
    "s": 1e9,
    "sec": 1e9,
}


# the factor tables, for parsers whose hot loops look a suffix or unit up directly (fio/text.py)
SI_FACTORS = _SI  # k/M/G/... suffix -> factor (as si_number)
TIME_NS_FACTORS = _TIME_NS  # time unit -> nanoseconds (as time_to_ns)


class UnitError(ValueError):
    """A value or unit string could not be understood."""


def _float(text: str) -> float:
    text = text.strip()
    low = text.lower()
    if low in ("nan", "-nan", "+nan"):
        return math.nan
    if low in ("inf", "+inf", "infinity"):
        return math.inf
    if low in ("-inf", "-infinity"):
        return -math.inf
    try:
        return float(text)
    except ValueError:
        raise UnitError(f"not a number: {text!r}") from None


def time_to_ns(value: float | str, unit: str) -> float:
    """Convert a time value in ``unit`` (nsec/usec/msec/sec, ns/us/ms/s) to nanoseconds."""
    try:
        factor = _TIME_NS[unit.strip()]
    except KeyError:
        raise UnitError(f"unknown time unit {unit!r}") from None
    v = _float(value) if isinstance(value, str) else float(value)
    return v * factor


_SUFFIXED = re.compile(r"^\s*(-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*([kKMGTPE]?)\s*$")


def si_number(text: str) -> float:
    """A number with an optional SI multiplier (fio IOPS, latency min/max): ``23.6k`` -> 23600."""
    m = _SUFFIXED.match(text)
    if not m:
        raise UnitError(f"not a number with SI suffix: {text!r}")
    return float(m.group(1)) * _SI[m.group(2)]


_FIO_SIZE = re.compile(r"^\s*(-?[0-9]+(?:\.[0-9]*)?)\s*(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([kKMGTPE]))?\s*(B|bit)?\s*(/s)?\s*$")


def fio_bytes(text: str, *, legacy: bool = False) -> float:
    """A fio size or bandwidth (``72.7GiB``, ``1300MB/s``, ``338589KB/s``, ``405434B/s``) in bytes (per second).

    ``legacy=True`` means fio <= 2.16 output, where ``KB``/``MB``/``GB`` are powers of 1024.
    Bit units (``Kibit/s``) are converted to bytes.
    """
    m = _FIO_SIZE.match(text)
    if not m:
        raise UnitError(f"not a fio size/bandwidth: {text!r}")
    num = float(m.group(1))
    iec, si, unit = m.group(2), m.group(3), m.group(4)
    if iec:
        value = num * 1024 ** _IEC_STEP[iec[0]]
    elif si:
        if legacy:
            value = num * 1024 ** _IEC_STEP[si]
        else:
            value = num * _SI[si]
    else:
        value = num
    if unit == "bit":
        value /= 8.0
    return value


def fio_bw_label_factor(label: str) -> float:
    """Bytes/s per unit for a fio ``bw (  KiB/s)`` / ``bw (KB  /s)`` / ``(Kibit/s)`` label."""
    lab = label.replace(" ", "")
    table = {
        "B/s": 1.0,
        "KiB/s": KiB,
        "MiB/s": MiB,
        "GiB/s": GiB,
        "TiB/s": TiB,
        "kB/s": 1e3,
        "MB/s": 1e6,
        "GB/s": 1e9,
        "TB/s": 1e12,
        "KB/s": KiB,  # fio <= 2.16: KB meant KiB
        "Kibit/s": KiB / 8,
        "Mibit/s": MiB / 8,
        "Gibit/s": GiB / 8,
        "kbit/s": 1e3 / 8,
        "Mbit/s": 1e6 / 8,
        "Gbit/s": 1e9 / 8,
    }
    try:
        return table[lab]
    except KeyError:
        raise UnitError(f"unknown fio bandwidth label {label!r}") from None


_FIO_OPTION = re.compile(r"^\s*(0[xX][0-9a-fA-F]+|[0-9]+)\s*([A-Za-z]*)\s*$")


def fio_option_bytes(text: str, kb_base: int = 1024) -> int:
    """A fio job-option size (``bs=4k``, ``size=1M``, ``bs=4KiB``, ``0x1000``) in bytes.

    fio's option parser (HOWTO "Parameter types"): ``k m g t p`` (optionally with ``b``, any case)
    are powers of ``kb_base`` (1024 by default), and the ``kib mib gib tib pib`` spellings mean the
    *other* base ("opposite" to IEC/SI for compatibility): with the default kb_base=1024, ``4k`` is
    4096 bytes and ``4KiB`` is 4000; with kb_base=1000 it is the other way round.
    """
    if kb_base not in (1000, 1024):
        raise UnitError(f"kb_base must be 1000 or 1024, not {kb_base!r}")
    m = _FIO_OPTION.match(text)
    if not m:
        raise UnitError(f"not a fio option size: {text!r}")
    digits, suffix = m.group(1), m.group(2).lower()
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits)
    if suffix in ("", "b"):
        return value
    power = "kmgtp".find(suffix[0]) + 1
    if power == 0 or suffix[1:] not in ("", "b", "i", "ib"):
        raise UnitError(f"unknown fio size suffix in {text!r}")
    base = kb_base
    if suffix[1:] == "ib":
        base = 2024 - kb_base  # the other base: 1024 <-> 1000
    return value * base**power


def bonnie_rate(text: str) -> float:
    """A bonnie++ throughput cell in bytes/s.

    1.98+ text cells carry ``k``/``m``/``g`` = KiB/s, MiB/s, GiB/s (``10.4m``);
    older text and every CSV cell are plain KiB/s (``83720``).
    """
    t = text.strip()
    if not t:
        raise UnitError("empty bonnie++ rate")
    suffix = t[-1]
    if suffix in "kmgKMG":
        factor = {"k": KiB, "m": MiB, "g": GiB}[suffix.lower()]
        return _float(t[:-1]) * factor
    return _float(t) * KiB


def bonnie_latency_ns(text: str) -> float:
    """A bonnie++ latency cell (``29770us``, ``437s``, ``859ms``) in nanoseconds."""
    m = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(us|ms|s|ns)\s*$", text)
    if not m:
        raise UnitError(f"not a bonnie++ latency: {text!r}")
    return time_to_ns(m.group(1), m.group(2))


_NICE = re.compile(r"^\s*(-?[0-9]+(?:\.[0-9]+)?)\s*([KMGTPE]?)(B?)\s*$")


def zfs_nicenum(text: str) -> float:
    """A zdb/zpool human number (``9.15K``, ``1.5G``, ``512B``, ``-``) using powers of 1024.

    Returns NaN for ``-`` (zpool's "not applicable").
    """
    t = text.strip()
    if t in ("-", ""):
        return math.nan
    m = _NICE.match(t)
    if not m:
        raise UnitError(f"not a zfs nicenum: {text!r}")
    return float(m.group(1)) * 1024 ** _IEC_STEP[m.group(2)]


def mbuffer_bytes(number: str, unit: str) -> float:
    """An mbuffer amount (``170 GByte``, ``678 MByte``, ``1e+04 Byte``) in bytes; k/M/G are powers of 1024."""
    u = unit.strip()
    prefix = u[0] if u and u[0] in "kKMGTP" and not u.startswith("Byte") else ""
    if u.startswith(("kiB", "KiB", "MiB", "GiB", "TiB")):
        prefix = u[0]
    return _float(number) * 1024 ** _IEC_STEP[prefix.upper() if prefix else ""]


def mbuffer_rate(number: str, unit: str) -> float:
    """An mbuffer rate (``583 MB/s``, ``32.5 MB/s``, ``12.1 MiB/s``) in bytes/s; powers of 1024."""
    u = unit.strip().replace("/s", "").replace("i", "")
    if u in ("B", ""):
        return _float(number)
    prefix = u[0].upper()
    if prefix not in _IEC_STEP:
        raise UnitError(f"unknown mbuffer rate unit {unit!r}")
    return _float(number) * 1024 ** _IEC_STEP[prefix]


def duration_to_ns(text: str) -> float:
    """An mbuffer-style duration (``4 min 59.3 sec``, ``20.9 sec``, ``1 h 2 min 3 sec``) in ns."""
    part = r"([0-9]+(?:\.[0-9]+)?)\s*(h|min|sec|s)\b"
    # reliability-32: the whole text, not the parts found in it: '20,9 sec' (a decimal comma) was read as 9 s
    if not re.fullmatch(rf"\s*(?:{part}\s*)+", text):
        raise UnitError(f"not a duration: {text!r}")
    total = 0.0
    for num, unit in re.findall(part, text):
        total += float(num) * {"h": 3600.0, "min": 60.0, "sec": 1.0, "s": 1.0}[unit]
    return total * 1e9


# --- display helpers (the only place values leave base units) ---------------------------


def to_mib(value_bytes: float) -> float:
    return value_bytes / MiB


def to_gib(value_bytes: float) -> float:
    return value_bytes / GiB


def to_mb(value_bytes: float) -> float:
    return value_bytes / 1e6


def to_ms(value_ns: float) -> float:
    return value_ns / 1e6


def human_bytes(value: float, *, binary: bool = True, digits: int = 2) -> str:
    """``human_bytes(1300234240) == '1.21 GiB'``; ``binary=False`` gives SI units."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    base = 1024.0 if binary else 1000.0
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"] if binary else ["B", "kB", "MB", "GB", "TB", "PB"]
    v = float(value)
    i = 0
    while abs(v) >= base and i < len(units) - 1:
        v /= base
        i += 1
    return f"{v:.{digits}f} {units[i]}"


def prefixed_bytes(number: str, prefix: str, base: int) -> float:
    """An amount or rate printed as NUMBER + PREFIX (``k``/``K``, ``M``, ``G``, ``T``, ``P``, ``E`` or none) where the
    tool says which base its prefixes are: ``base`` 1000 (SI: GNU dd's ``MB``, pv ``--si``) or 1024 (IEC: ``MiB``,
    BusyBox dd's ``MB``, zfs nicenum). Bytes or bytes/s."""
    if base not in (1000, 1024):
        raise UnitError(f"base must be 1000 or 1024, not {base}")
    step = _IEC_STEP.get(prefix)
    if step is None:
        raise UnitError(f"unknown prefix {prefix!r}")
    return _float(number) * base**step


_HMS = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d\d)\s*$")


def hms_to_ns(text: str) -> float:
    """A clock duration ``H:MM:SS`` or ``M:SS`` (pv's timer and ETA) in nanoseconds."""
    m = _HMS.match(text)
    if not m:
        raise UnitError(f"not a H:MM:SS duration: {text!r}")
    h, mm, ss = int(m.group(1) or 0), int(m.group(2)), int(m.group(3))
    return float((h * 3600 + mm * 60 + ss) * 1e9)
