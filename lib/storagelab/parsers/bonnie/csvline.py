"""bonnie++ CSV lines: the 27-field (1.03), 48-field (1.96/1.97) and 50-field (1.98+) layouts, mapped by
fixed index (docs/formats/log-formats.md C.9), never by the header."""

from __future__ import annotations

import re

from .cells import (
    _CSV_FV,
    _PLUS,
    _RATE_CELL,
    _SIZE,
    _VERSION_LIKE,
    DEFAULT_CHUNK,
    FILE_TESTS,
    FILES_UNIT,
    IO_TESTS,
    Res,
    Run,
    _chunk_bytes,
    _err,
    _family,
    _files_spec,
    _fill_value,
    _int,
    _size_bytes,
)

# --- CSV -------------------------------------------------------------------------------

# layout: (io results start, files cell index, file results start, latencies start or None)
_CSV_LAYOUTS = {27: (2, 14, 15, None), 48: (7, 19, 24, 36), 50: (9, 21, 26, 38)}
_CSV_HEADER = re.compile(r"^(format_version,bonnie_version,|name,file_size,)")


def _csv_width(fields: list[str]) -> int | None:
    """The layout a CSV line follows (27, 48 or 50), or None when it is not a bonnie++ result line.

    A line starting ``1.9x,<digit>`` is taken as a 1.9x+ line whatever its length (a short one is
    reported as truncated); a 1.03 line needs its 27 fields, a size cell and 12 result cells.
    """
    if len(fields) > 1 and _CSV_FV.match(fields[0]) and re.match(r"^[0-9](\.|$)", fields[1]):
        fam = _family(fields[0])
        return {"1.98+": 50, "1.9x": 48}.get(fam or "")
    if len(fields) == 27 and _looks_103(fields):
        return 27
    return None


def _looks_103(fields: list[str]) -> bool:
    return (
        not _VERSION_LIKE.match(fields[0])
        and (not fields[1] or bool(_SIZE.match(fields[1].split(":")[0])))
        and all(x == "" or _RATE_CELL.match(x) or _PLUS.match(x) for x in fields[2:14])
    )


def _csv_sniff(line: str) -> bool:
    """Strict test used by sniff: a full-width bonnie++ CSV line (or the 1.96 -s 0 line)."""
    f = line.rstrip("\r").split(",")
    w = _csv_width(f)
    if w == 27:
        return bool(f[1])
    if w in (48, 50):
        return len(f) == w or (f[0] == "1.96" and len(f) == 47)
    return False


def _parse_csv(fields: list[str], width: int, lineno: int, warnings: list[str]) -> Run:
    if width == 48 and fields[0] == "1.96" and len(fields) == 47 and not any(fields[5:17]):
        # 1.96 -s 0: the IO placeholder is one comma short (docs/formats/log-formats.md C.9)
        fields = fields[:5] + [""] + fields[5:]
        warnings.append(
            f"line {lineno}: 1.96 CSV line with 47 fields (the -s 0 comma bug): one empty IO field inserted"
        )
    if len(fields) < width:
        raise _err(
            f"bonnie++ CSV line has {len(fields)} fields",
            lineno,
            f"{width} fields (format_version {fields[0]})" if width != 27 else "27 fields (1.03 layout)",
            kind="truncated",
        )
    if len(fields) > width:
        raise _err(f"bonnie++ CSV line has {len(fields)} fields", lineno, f"{width} fields")
    io0, files_i, file0, lat0 = _CSV_LAYOUTS[width]
    run = Run("csv", lineno, lineno)
    info = run.info
    if width == 27:
        run.family = "1.0x"
        info.update(
            machine=fields[0], version=None, format_version=None, concurrency=None, seed=None, seeks=None, seekers=None
        )
        size, _, chunk = fields[1].partition(":")
        info["size_bytes"] = _size_bytes(size, lineno) if size else None
        info["chunk_bytes"] = _chunk_bytes(chunk, lineno) if chunk else DEFAULT_CHUNK
        files = _files_spec(fields[files_i], lineno) if fields[files_i] else {}
    else:
        run.family = "1.98+" if width == 50 else "1.9x"
        if fields[0] not in ("1.96", "1.97", "1.98"):
            warnings.append(
                f"line {lineno}: CSV format_version {fields[0]} not seen before; read as the {width}-field layout"
            )
        info.update(
            machine=fields[2],
            version=fields[1],
            format_version=fields[0],
            concurrency=_int(fields[3], lineno, "concurrency") if fields[3] else None,
            seed=fields[4] or None,
        )
        info["size_bytes"] = _size_bytes(fields[5], lineno) if fields[5] else None
        if width == 50:
            info["chunk_bytes"] = _chunk_bytes(fields[6], lineno) if fields[6] else None
            info["seeks"] = _int(fields[7], lineno, "seek count") if fields[7] else None
            info["seekers"] = _int(fields[8], lineno, "seeker count") if fields[8] else None
        else:
            info["chunk_bytes"] = (
                _chunk_bytes(fields[6], lineno) if fields[6] else (DEFAULT_CHUNK if fields[5] else None)
            )
            info["seeks"] = info["seekers"] = None
        files = {}
        if fields[files_i]:
            n = _int(fields[files_i], lineno, "files count")
            mx, mn, gap, dirs = fields[files_i + 1 : files_i + 5]
            link = mx if mx in ("link", "symlink") else None
            files = {
                "num_files_printed": n,
                "num_files": n * FILES_UNIT,
                "link_mode": link,
                "max_size_bytes": None if link else (_int(mx, lineno, "max size") if mx else 0),
                "min_size_bytes": None if link else (_int(mn, lineno, "min size") if mn else 0),
                "num_dirs": _int(dirs, lineno, "directory count") if dirs else None,
            }
            if gap:
                warnings.append(
                    f"line {lineno}: CSV field {files_i + 3} (always empty in bonnie++ 1.96-2.00a) "
                    f"holds {gap!r}; ignored"
                )
    if not info["size_bytes"]:
        info["chunk_bytes"] = None
    info.update(
        files
        or {
            "num_files_printed": None,
            "num_files": None,
            "link_mode": None,
            "max_size_bytes": None,
            "min_size_bytes": None,
            "num_dirs": None,
        }
    )
    for k, test in enumerate(IO_TESTS + FILE_TESTS):
        base = io0 + 2 * k if k < 6 else file0 + 2 * (k - 6)
        res = Res(
            test,
            value_text=fields[base],
            cpu_text=fields[base + 1],
            latency_text=fields[lat0 + k] if lat0 else "",
            value_from="csv",
            lines=(lineno, lineno),
        )
        if res.ran:
            _fill_value(res, lineno)
            run.results[test] = res
    return run
