"""A fio JSON job's options (strings, as fio prints them) read as numbers: kb_base, sizes, the block size;
and how many threads one job object sums."""

from __future__ import annotations

import re

from ... import units


def jobs_in_record(objects_in_group: int, numjobs: int | None) -> int | None:
    """Threads summed into one JSON job object. JSON does not say whether group_reporting was on
    (the flag is not listed in "job options"): several objects in a group mean one thread each;
    a lone object with numjobs > 1 is a group report of unknown size (None)."""
    if objects_in_group > 1 or (numjobs or 1) == 1:
        return 1
    return None


def option_kb_base(options: dict[str, str], where: int, warnings: list[str]) -> int:
    value = options.get("kb_base", "1024").strip()
    if value in ("1000", "1024"):
        return int(value)
    warnings.append(f"line {where}: kb_base={value!r} not understood, assuming 1024")
    return 1024


def option_int(
    options: dict[str, str], names: tuple[str, ...], kb_base: int, where: int, warnings: list[str]
) -> int | None:
    for name in names:
        if name in options:
            try:
                return units.fio_option_bytes(options[name], kb_base)
            except units.UnitError:
                warnings.append(f"line {where}: option {name}={options[name]!r} not understood")
                return None
    return None


def block_size(options: dict[str, str], kb_base: int, where: int, warnings: list[str]) -> int | None:
    """Largest size in bs= (``4k``, ``1m,4k`` per direction) or a bs range (``4k-16k``, ``4k:16k``)."""
    for name in ("bs", "blocksize", "bsrange", "blocksize_range"):
        if name in options:
            try:
                sizes = [units.fio_option_bytes(t, kb_base) for t in re.split(r"[,:-]", options[name]) if t.strip()]
            except units.UnitError:
                warnings.append(f"line {where}: option {name}={options[name]!r} not understood")
                return None
            return max(sizes) if sizes else None
    return None
