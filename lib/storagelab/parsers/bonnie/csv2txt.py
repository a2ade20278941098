"""Tables rebuilt from CSV by bon_csv2txt (the perl script shipped with bonnie++): its size cell is the CSV's
``size:chunk:seeks:seekers``, and it prints ``+++++`` (and 0) as ``0k``."""

from __future__ import annotations

import re

from .cells import _chunk_bytes, _err, _int, _size_bytes


def _csv2txt_size(info: dict, parts: list[str], ln: int) -> None:
    """bon_csv2txt's size cell: the CSV's size, chunk, seeks and seekers joined with ':' (2.00a's 50-field CSV)."""
    if len(parts) > 4:
        raise _err(
            f"bon_csv2txt size cell {':'.join(parts)!r} has {len(parts)} parts", ln, "size[:chunk[:seeks[:seekers]]]"
        )
    parts += [""] * (4 - len(parts))
    info["size_bytes"] = _size_bytes(parts[0], ln)
    info["chunk_bytes"] = _chunk_bytes(parts[1], ln) if parts[1] else None
    info["seeks"] = _int(parts[2], ln, "seek count") if parts[2] else None
    info["seekers"] = _int(parts[3], ln, "seeker count") if parts[3] else None


_CSV2TXT_ZERO = re.compile(r"^0+k?$")
