"""A run read from one IO row and/or one file row of the text table: its size cell, files cell, machine
name and results."""

from __future__ import annotations

from .cells import (
    _FILES,
    _PLUS,
    _SIZE,
    DEFAULT_CHUNK,
    DEFAULT_SEEKS,
    FILE_TESTS,
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
from .csv2txt import _CSV2TXT_ZERO, _csv2txt_size
from .rows import _FIELD, Block, TextRow


def _text_run(
    io: Block | None, io_row: TextRow | None, f_row: TextRow | None, version: str | None, warnings: list[str]
) -> Run:
    head = io_row or f_row
    assert head is not None  # a run has an IO row, a file row or both
    first = head.line
    last = max(r.lat_line or r.line for r in (io_row, f_row) if r)
    run = Run("text", first, last)
    fam = _family(version) or ("1.98+" if io and io.new else None)
    if io and not io.new and fam == "1.98+":
        warnings.append(f"line {io.start + 1}: version {version} with an old 'Machine Size' header")
    run.family = fam
    info = run.info
    info.update(
        version=version,
        format_version=None,
        seed=None,
        size_bytes=None,
        chunk_bytes=None,
        concurrency=None,
        seeks=None,
        seekers=None,
        machine=None,
        num_files_printed=None,
        num_files=None,
        link_mode=None,
        max_size_bytes=None,
        min_size_bytes=None,
        num_dirs=None,
    )
    names = []
    if io_row:
        assert io is not None  # an IO row comes with its block
        toks = io_row.prefix.split()
        size = None
        if toks and _SIZE.match(toks[-1].split(":")[0]):
            size = toks.pop()
        elif toks:
            warnings.append(f"line {io_row.line}: no size cell after the machine name (cut from the table)")
        ln = io_row.line
        if size and io.csv2txt:
            _csv2txt_size(info, size.split(":"), ln)
        elif size:
            parts = size.split(":")
            info["size_bytes"] = _size_bytes(parts[0], ln)
            info["chunk_bytes"] = _chunk_bytes(parts[1], ln) if len(parts) > 1 and parts[1] else DEFAULT_CHUNK
            if len(parts) > 5:
                raise _err(
                    f"size cell {size!r} has {len(parts)} parts", ln, "size[:chunk[:concurrency[:seeks[:seekers]]]]"
                )
            if fam == "1.98+":
                info["concurrency"] = _int(parts[2], ln, "concurrency") if len(parts) > 2 and parts[2] else 1
                info["seeks"] = _int(parts[3], ln, "seek count") if len(parts) > 3 and parts[3] else DEFAULT_SEEKS
                info["seekers"] = _int(parts[4], ln, "seeker count") if len(parts) > 4 and parts[4] else None
        if fam == "1.9x":
            info["concurrency"] = int(io.concurrency) if io.concurrency else None
        name = " ".join(toks) or None
        if name:
            room = _FIELD - 1 - len(size) if size else None  # the name keeps 18 - len(size) characters
            names.append((name, room))
        for k, test in enumerate(IO_TESTS):
            _text_result(run, test, io_row, k, csv2txt=io.csv2txt)
    if f_row:
        toks = f_row.prefix.split()
        named = None
        if len(toks) > 1 and not f_row.name and _FILES.match(toks[-1]):
            # bon_csv2txt of several machines prints each machine's name before its files cell
            named, toks = " ".join(toks[:-1]), toks[-1:]
        if len(toks) != 1:
            raise _err(f"bad files cell {f_row.prefix.strip()!r}", f_row.line, "files[:max[:min]][/dirs]")
        info.update(_files_spec(toks[0], f_row.line))
        if f_row.name:
            names.append((f_row.name, _FIELD))
        elif named:
            names.append((named, _FIELD - 1 - len(toks[0])))
        for k, test in enumerate(FILE_TESTS):
            _text_result(run, test, f_row, k, csv2txt=bool(io and io.csv2txt))  # its rates are the CSV's
    # the machine name: the longest printed form; the others must be its prefixes
    if names:
        best = max(names, key=lambda nr: len(nr[0]))[0]
        for nm, _ in names:
            if not best.startswith(nm):
                warnings.append(f"line {first}: machine names {nm!r} and {best!r} of one run differ")
        info["machine"] = best
        whole = any(len(nm) == len(best) and room is not None and len(nm) < room for nm, room in names)
        info["machine_truncated"] = False if whole else None
    else:
        info["machine_truncated"] = None
    return run


def _text_result(run: Run, test: str, row: TextRow, k: int, csv2txt: bool = False) -> None:
    cell = row.cells[k]
    lat = row.lat[k] if row.lat else ""
    if cell is None and not lat:
        return
    res = Res(
        test,
        value_text=cell[0] if cell else "",
        cpu_text=cell[1] if cell else "",
        latency_text=lat,
        value_from="text",
        lines=(row.line, row.lat_line or row.line),
    )
    zero = csv2txt and _CSV2TXT_ZERO.match(res.value_text)  # bon_csv2txt prints +++++ (and 0) as '0k'
    if zero:
        res.value_text, res.too_fast = "", bool(_PLUS.match(res.cpu_text))
    _fill_value(res, row.line)
    if zero:
        res.value_text = zero.group()
    if (
        test in FILE_TESTS
        and run.family == "1.98+"
        and res.value is not None
        and "." not in res.value_text
        and not csv2txt
    ):
        res.suspect = True
    run.results[test] = res
