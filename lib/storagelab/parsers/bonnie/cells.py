"""The cells of bonnie++ output: the tests, sizes, file counts, rates, CPU and latency cells, in base units;
and a run and a test's result as read (``Run``, ``Res``) before they become rows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...units import GiB, KiB, MiB, UnitError, bonnie_latency_ns, bonnie_rate
from ..base import ParseError

IO_TESTS = ("putc", "put_block", "rewrite", "getc", "get_block", "seeks")
FILE_TESTS = ("seq_create", "seq_read", "seq_delete", "ran_create", "ran_read", "ran_delete")
RATE_TESTS = frozenset(IO_TESTS[:5])
DEFAULT_CHUNK = 8192
DEFAULT_SEEKS = 8192
FILES_UNIT = 1024  # bonnie++ DirectoryUnit: -n 16 means 16 x 1024 files

# --- cells -----------------------------------------------------------------------------

_NUM = r"[0-9]+(?:\.[0-9]+)?"
_RATE_CELL = re.compile(rf"^{_NUM}[kmgKMG]?$")
_OPS_CELL = re.compile(rf"^{_NUM}$")
_PLUS = re.compile(r"^\+{3,}$")
_LAT_CELL = re.compile(rf"^{_NUM}(?:ns|us|ms|s)$")
_SIZE = re.compile(r"^([0-9]+)([MG]?)$")
_CHUNK = re.compile(r"^([0-9]+)([kKmM]?)$")
_FILES = re.compile(r"^([0-9]+)(?::(link|symlink)|:([0-9]+)(?::([0-9]+))?)?(?:/([0-9]+))?$")
_VERSION_LIKE = re.compile(r"^[0-9]+\.[0-9]+[0-9a-z.]*$")
_CSV_FV = re.compile(r"^[12]\.[0-9]{2}$")  # CSV format_version: 1.96, 1.97, 1.98


def _err(msg, line, expected, kind="invalid"):
    return ParseError(msg, line=line, expected=expected, kind=kind)


def _size_bytes(cell: str, line: int) -> int:
    m = _SIZE.match(cell)
    if not m:
        raise _err(f"bad size cell {cell!r}", line, "a file size like 64M, 8196M or 64G")
    return int(m.group(1)) * (GiB if m.group(2) == "G" else MiB)


def _chunk_bytes(cell: str, line: int) -> int:
    m = _CHUNK.match(cell)
    if not m:
        raise _err(f"bad chunk size {cell!r}", line, "a chunk size like 4k, 64k, 1m or 512")
    return int(m.group(1)) * {"": 1, "k": KiB, "m": MiB}[m.group(2).lower()]


def _int(cell: str, line: int, what: str) -> int:
    if not cell.isdigit():
        raise _err(f"bad {what} {cell!r}", line, f"an integer {what}")
    return int(cell)


def _files_spec(spec: str, line: int) -> dict:
    """``16``, ``16:4096:1024/2``, ``1:symlink`` (text and 1.03 CSV) -> run columns."""
    m = _FILES.match(spec)
    if not m:
        raise _err(f"bad files cell {spec!r}", line, "files[:max[:min]][/dirs] or files:link / files:symlink")
    n = int(m.group(1))
    link = m.group(2)
    return {
        "num_files_printed": n,
        "num_files": n * FILES_UNIT,
        "link_mode": link,
        "max_size_bytes": None if link else int(m.group(3) or 0),
        "min_size_bytes": None if link else int(m.group(4) or 0),
        "num_dirs": int(m.group(5)) if m.group(5) else None,
    }


def _family(version: str | None) -> str | None:
    """'1.0x', '1.9x' or '1.98+' from a version string (None if unknown)."""
    m = re.match(r"^([0-9]+)\.([0-9]{2})", version or "")
    if not m:
        return None
    v = int(m.group(1)) * 100 + int(m.group(2))
    return "1.0x" if v < 190 else ("1.9x" if v < 198 else "1.98+")


@dataclass
class Res:
    test: str
    value_text: str = ""
    cpu_text: str = ""
    latency_text: str = ""
    value: float | None = None
    too_fast: bool = False
    cpu: float | None = None
    latency_ns: float | None = None
    suspect: bool = False
    value_from: str = ""
    lines: tuple[int, int] = (0, 0)

    @property
    def ran(self) -> bool:
        return bool(self.value_text or self.cpu_text or self.latency_text)


@dataclass
class Run:
    source: str
    line_start: int
    line_end: int
    info: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)  # test -> Res
    family: str | None = None
    pair: Run | None = None
    index: int = 0


def _fill_value(res: Res, line: int) -> None:
    """Turn res.value_text / cpu_text / latency_text into numbers (base units)."""
    v, c = res.value_text, res.cpu_text
    if v:
        if _PLUS.match(v):
            res.too_fast = True
        elif res.test in RATE_TESTS:
            if not _RATE_CELL.match(v):
                raise _err(f"bad {res.test} throughput {v!r}", line, "a rate like 83720, 287k, 10.4m, 2.7g or +++++")
            res.value = bonnie_rate(v)
        else:
            if not _OPS_CELL.match(v):
                raise _err(f"bad {res.test} rate {v!r}", line, "a number of operations/s like 200.0, 8891 or +++++")
            res.value = float(v)
    if c and not _PLUS.match(c):
        if not _OPS_CELL.match(c):
            raise _err(f"bad {res.test} CPU cell {c!r}", line, "an integer percentage or +++")
        res.cpu = float(c)
    if res.latency_text:
        try:
            res.latency_ns = bonnie_latency_ns(res.latency_text)
        except UnitError:
            raise _err(
                f"bad {res.test} latency {res.latency_text!r}", line, "a latency like 8631us, 184ms or 437s"
            ) from None
