"""The bonnie++ text table: its IO and file blocks, their header lines and result rows, one run per row."""

from __future__ import annotations

from .cells import Run, _err, _family
from .rows import _F_H2, _F_H3, _IO_H2, _IO_H3, _LAT, _V_FILE, _V_IO, Block, TextRow, _latency_cells, _row_cells
from .runs import _text_run


class _Text:
    """Text-table reader: finds IO and file blocks and reads their rows."""

    def __init__(self, lines: list[str], warnings: list[str]):
        self.lines = [ln.rstrip("\r").expandtabs() for ln in lines]
        self.w = warnings

    def line(self, i):
        return self.lines[i] if i < len(self.lines) else None

    def next_nonblank(self, i):
        while i < len(self.lines) and not self.lines[i].strip():
            i += 1
        return i

    def read_rows(self, i, kind, header_line, name=None, latency=False):
        """Result rows (each optionally followed by a Latency row) from line i; returns (rows, next i)."""
        rows = []
        while True:
            ln = self.line(i)
            if kind == "file" and rows and ln is not None:
                m = _F_H3.match(ln)
                label = m.group(1).strip() if m else ""
                if label and not label.startswith(("files", "Name:Size", "Machine")):
                    # a pasted second row announced by `name   /sec %CP ...`
                    name = label
                    i += 1
                    ln = self.line(i)
                    if ln is None or not ln.strip():
                        raise _err("result row missing after a header", i, "a result row", kind="truncated")
            if ln is None or not ln.strip():
                if not rows:
                    raise _err(
                        "table header without a result row",
                        header_line,
                        "a result row after the header",
                        kind="truncated",
                    )
                return rows, i
            prefix, cells, status = _row_cells(ln)
            if status != "ok":
                if not rows:
                    if status == "short" or _LAT.match(ln) or self.is_header(ln):
                        raise _err(
                            f"result row cut short ({len(cells)} of 6 tests)"
                            if status == "short"
                            else "table header without a result row",
                            i + 1,
                            "a result row with 6 value/CPU cells",
                            kind="truncated",
                        )
                    raise _err(
                        f"unreadable result row: {ln.strip()[:60]!r}",
                        i + 1,
                        "a result row: name/size (or files) then 6 value/CPU cells",
                    )
                if status == "short" and cells and all(c is not None for c in cells):
                    raise _err(
                        f"result row cut short ({len(cells)} of 6 tests)", i + 1, "6 value/CPU cells", kind="truncated"
                    )
                cellish = sum(t[:1].isdigit() or t[:1] == "+" for t in ln.split())  # numbers and +++ marks
                if status == "bad" and cellish >= 4 and not (_LAT.match(ln) or self.is_header(ln)):
                    # reliability-33: a row with one unreadable cell (`974MB`) ended the block: the row and the
                    # rows under it were lost with exit 0
                    raise _err(
                        f"unreadable result row: {ln.strip()[:60]!r}",
                        i + 1,
                        "a result row: name/size (or files) then 6 value/CPU cells",
                    )
                return rows, i
            row = TextRow(i + 1, prefix, cells, name)
            name = None
            i += 1
            ln = self.line(i)
            if ln is not None and _LAT.match(ln):
                row.lat = _latency_cells(ln, i + 1)
                row.lat_line = i + 1
                i += 1
            elif latency:  # 1.9x+ print a Latency row under every result row
                if self.next_nonblank(i) >= len(self.lines):
                    raise _err("the output stops after a result row", row.line, "its Latency row", kind="truncated")
                self.w.append(f"line {row.line}: no Latency row under this result row")
            rows.append(row)

    @staticmethod
    def is_header(ln):
        return bool(
            _V_IO.match(ln)
            or _V_FILE.match(ln)
            or _IO_H2.match(ln)
            or _IO_H3.match(ln)
            or _F_H2.match(ln)
            or _F_H3.match(ln)
        )

    def expect(self, i, rx, what, header_line):
        ln = self.line(i)
        if ln is None or not ln.strip():
            raise _err(f"table header stops before its {what}", header_line, what, kind="truncated")
        m = rx.match(ln)
        if not m:
            raise _err(f"unexpected line in a table header: {ln.strip()[:60]!r}", i + 1, what)
        return m

    def io_block(self, i):
        """IO block from line i (a Version line or the Machine/Name:Size header)."""
        start = i
        version = concurrency = None
        m = _V_IO.match(self.lines[i])
        csv2txt = False
        if m:
            version = m.group(2)
            lead = len(m.group(1))
            csv2txt = lead == 1 + max(0, 9 - len(version)) and lead != 1 + max(0, 5 - len(version))
            if csv2txt:
                self.w.append(
                    f"line {i + 1}: a table rebuilt by bon_csv2txt from CSV lines: its size cell is "
                    "size:chunk:seeks:seekers, and a '0k' cell is the script's rendering of +++++ (or 0): stored NULL"
                )
            i += 1
            if _IO_H2.match(self.line(i) or ""):
                concurrency = _IO_H2.match(self.lines[i]).group(1)
                i += 1
            h3 = self.expect(
                i, _IO_H3, "the 'Machine  Size K/sec %CP' / 'Name:Size etc  /sec %CP' header row", start + 1
            )
        else:
            h3 = _IO_H3.match(self.lines[i])
        new_style = h3.group(1) == "Name:Size etc"
        latency = new_style or _family(version) in ("1.9x", "1.98+")
        rows, j = self.read_rows(i + 1, "io", i + 1, latency=latency)
        return Block(version, rows, start, concurrency=concurrency, new=new_style, csv2txt=csv2txt), j

    def file_block(self, i):
        start = i
        version = name = None
        m = _V_FILE.match(self.lines[i])
        if m:
            version = m.group(1)
            i += 1
        m2 = _F_H2.match(self.line(i) or "")
        if m2:
            name = m2.group(1).strip() or None
            i += 1
        elif start != i:
            self.expect(i, _F_H2, "the '-Create-- --Read--- -Delete--' header row", start + 1)
        m3 = self.expect(i, _F_H3, "the 'files  /sec %CP ...' header row", start + 1)
        label = m3.group(1).strip()
        if label and not label.startswith("files"):
            name = label
        rows, j = self.read_rows(i + 1, "file", i + 1, name, latency=_family(version) in ("1.9x", "1.98+"))
        return Block(version, rows, start), j

    def tables(self):
        """Yield (io_block or None, file_block or None) per table, in order."""
        n = len(self.lines)
        i = 0
        while i < n:
            ln = self.lines[i]
            if _V_IO.match(ln) or _IO_H3.match(ln):
                io, i = self.io_block(i)
                k = self.next_nonblank(i)
                fb = None
                if k < n and _V_FILE.match(self.lines[k]):
                    fv = _V_FILE.match(self.lines[k]).group(1)
                    # 1.03 prints a Version line over the file block only when no IO test ran: such a
                    # block is another run (-s 0), not the file half of this one
                    same_run = fv == io.version and _family(fv) != "1.0x"
                    if fv is None or io.version is None or same_run:
                        fb, i = self.file_block(k)
                yield io, fb
            elif _V_FILE.match(ln) or (_F_H2.match(ln) and _F_H3.match(self.line(i + 1) or "")):
                fb, i = self.file_block(i)
                yield None, fb
            else:
                i += 1


def _row_name(row: TextRow) -> str:
    """The machine name a result row prints before its last field (size or files): '' where it prints none."""
    if row.name:
        return row.name
    toks = row.prefix.split()
    return " ".join(toks[:-1])


def _compatible(a: str, b: str) -> bool:
    """Two printed forms of one machine name: each cut to its field, so one begins the other ('' knows nothing)."""
    return not a or not b or a.startswith(b) or b.startswith(a)


def _paired(io_rows: list[TextRow], f_rows: list[TextRow]) -> list[tuple[TextRow | None, TextRow | None]]:
    """IO rows and file rows of one table, in order. Where their counts differ (bon_csv2txt prints no file row for a
    run without file tests and no IO row for one without IO tests: bon_csv2txt.in ``process``), a row is paired
    with the next row of the other kind whose machine name agrees; a row whose name agrees only with a later row
    of the other kind stands alone."""
    if len(io_rows) == len(f_rows):
        return list(zip(io_rows, f_rows, strict=True))
    out: list[tuple[TextRow | None, TextRow | None]] = []
    i = j = 0
    while i < len(io_rows) and j < len(f_rows):
        a, b = _row_name(io_rows[i]), _row_name(f_rows[j])
        if _compatible(a, b):
            out.append((io_rows[i], f_rows[j]))
            i, j = i + 1, j + 1
        elif any(_compatible(_row_name(r), b) for r in io_rows[i + 1 :]):
            out.append((io_rows[i], None))  # an IO-only run (no file tests)
            i += 1
        else:
            out.append((None, f_rows[j]))  # a file-only run (no IO tests)
            j += 1
    out += [(r, None) for r in io_rows[i:]] + [(None, r) for r in f_rows[j:]]
    return out


def _text_runs(lines: list[str], warnings: list[str]) -> list[Run]:
    runs = []
    for io, fb in _Text(lines, warnings).tables():
        io_rows = io.rows if io else []
        f_rows = fb.rows if fb else []
        pairs = _paired(io_rows, f_rows)
        if io_rows and f_rows and len(io_rows) != len(f_rows):
            alone = [f"IO row at line {r.line}" for r, f in pairs if r is not None and f is None]
            alone += [f"file row at line {f.line}" for r, f in pairs if r is None and f is not None]
            warnings.append(
                f"line {io.start + 1}: {len(io_rows)} IO rows but {len(f_rows)} file rows under one table; paired in "
                f"order where their machine names agree (a run without file or IO tests has no such row); alone: "
                + ", ".join(alone)
            )
        version = (io and io.version) or (fb and fb.version)
        for io_row, f_row in pairs:
            runs.append(_text_run(io if io_row else None, io_row, f_row, version, warnings))
    return runs
