"""fio normal (human) output, fio 2.0 - 3.42 -> the fio tables (docs/formats/log-formats.md A.1-A.13, E).

One pass over the lines with a small state machine:

* outside a report: preamble lines ``name: (g=0): rw=..., bs=..., ioengine=..., iodepth=N`` (their
  rw/bs/ioengine/iodepth go to the job blocks of that name), the ``fio-3.16`` version line; anything
  else there (``Starting N processes``, ``note:``, stderr, live ``Jobs:`` lines, a JSON document or
  terse lines of ``--output-format=normal,json``/``terse,normal``) is skipped;
* a job block, from its ``name: (groupid=N, jobs=N): err=...`` header up to the next header, a
  blank line or the run status lines; it is complete once its ``issued`` line was read (the
  oldest releases print the latency distribution after it). Direction sections (3.x
  ``read: IOPS=``, 2.x ``read : io=``, ``fsync/...:`` as direction ``sync``) carry their
  slat/clat/lat, percentile, bw and iops lines; then come the job-wide lines (latency
  distribution, cpu, IO depths, issued, errors, latency target, block lifetime, steadystate).
  Per-priority (cmdprio) lines are recognised but not stored (the tables have no column for
  them; a warning says so); a line not known inside a block is a warning;
* ``Run status group N (all jobs):`` and the group lines (3.x ``bw=``, 2.x ``aggrb=``);
* ``Disk stats (read/write):`` and one line per disk (md/dm aggregates on the same line).

``--status-interval`` prints the whole report again and again: each report gets its own
``doc_index`` (0, 1, ...) and only the last one's jobs have ``is_final``. Several fio runs appended
to one file (``fio ... >> log``, as benchmark scripts do) are told apart by the preamble, version or
``Starting`` line that each run prints before its report (interval reports print none): the last
report of every run is final.

The output ends in the middle of a report (a job block without its ``issued`` line, a percentile
list ending in ``,``, a last line cut short, job blocks with no run status lines after them, or
only the preamble) -> ``ParseError(kind="truncated")``; a line of a known kind whose numbers
cannot be read elsewhere -> ``kind="invalid"`` with its line number.

Units: every number is converted at the edge to bytes, bytes/s, ns, counts or percent. Rules that
matter (A.3, A.4, A.6, A.12):

* a latency line's unit is per line, and a ``k``/``M`` on min/max multiplies that unit
  (``max=44735k`` in ``(usec)`` is 44.735 s);
* fio <= 2.16 (``read : io=``, ``aggrb=``, ``bw (KB  /s)``) prints ``KB``/``MB`` for powers of
  1024 (the default kb_base=1024; a 2.x run with kb_base=1000 cannot be told apart in the text);
* 3.x prints each bandwidth/size twice, in the kb_base family then in the other one, each rounded
  to at most 4 significant figures (``significant_figures``). The one printed with more
  significant digits is used (``977KiB/s (1000kB/s)`` -> 1000 kB/s, ``988MiB (1036MB)`` -> 1036 MB);
  a tie keeps the first, the kb_base family: ``1240MiB/s (1300MB/s)`` -> 1240 MiB/s;
* with kb_base=1000 fio labels a large per-sample bandwidth ``(  MiB/s)`` but divides by 1000:
  those values are MB/s.

* latency distribution keys are bucket upper edges; the lower edge is the previous key of the
  nsec/usec/msec sequence, so ``lat (usec) : 2=`` starts at 1 usec (the last nsec edge) from
  fio 2.99 on and at 0 before (no nsec family); ``>=2000`` (msec) has no upper edge.

Text numbers carry 3-4 significant figures, so every row has ``exact=False``.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

from ... import units
from ..base import SHELL_PROMPT, NotStreamable, Parsed, ParseError, lines_of
from .command import continued, fio_command, paired
from .text_fast import BlockFast
from .text_shapes import (
    _DIR_CUE,
    _DISK_CUE,
    _DISK_HEAD,
    _GROUP_CUE,
    _GROUP_HEAD,
    _HEADER,
    _HEADER_CUE,
    _HEADER_ERR,
    _HEADER_NEAR,
    _HEADING,
    _JOB_CUE,
    _JOBS_ETA,
    _JOBS_STATUS,
    _LAYOUT,
    _PREAMBLE,
    _PREAMBLE_CUE,
    _STATES,
    _VERSION,
)
from .text_state import _BLOCK_SIZES, _CACHE_MAX, Ahead, _block_size
from .text_tail import ReportTail

FORMAT = "fio-normal"


def parse_text(text: str, fast: bool = True) -> Parsed:
    """Parse fio's normal output (any part of a file that is not fio's normal text is skipped). ``fast=False``:
    the plain path alone, every line read the general way (the reference the fast paths are tested against)."""
    return _parser(text, fast).run()


def block_paths(text: str) -> tuple[int, int]:
    """(the job blocks that the whole-block fast path read, all job blocks) when ``parse_text(text)`` reads
    ``text`` (for the tests and the benchmark: which path an output takes)."""
    parser = _parser(text, True)
    parser.run()
    return parser.blocks_fast, parser.blocks


def _parser(text: str, fast: bool) -> _TextParser:
    if not text.strip():
        raise ParseError("empty input", line=1, kind="empty", expected="fio normal output")
    parser = _TextParser(lines_of(text), Parsed(tool="fio", format=FORMAT), fast)
    if fast and "\r" not in text and "Jobs: " not in text:
        parser.text = text  # its lines are exactly its '\n'-separated parts: whole job blocks can be read in it
    return parser


def parse_lines(lines: Iterable[str], parsed: Parsed, fast: bool = True) -> Parsed:
    """``parse_text`` over lines read one at a time (a log of any size, see base.py "Streaming"): the rows
    go to ``parsed`` and, with a sink, on to the database as each job block ends. A JSON document in the
    output (``--output-format=normal,json``) raises NotStreamable: its exact values need the whole file."""
    return _TextParser(lines, parsed, fast).run()


class _TextParser(BlockFast, ReportTail):
    """The state machine over the lines (the module doc): outside a report, in a job block, in the report's tail."""

    def run(self) -> Parsed:
        clean = self.clean
        if isinstance(self.lines, list):
            if self.text is not None:
                whole = self.lines
            else:
                whole = [raw if "\r" not in raw and "Jobs: " not in raw else clean(raw) for raw in self.lines]
                if self.fast:
                    self.text = "\n".join(whole)  # (live status lines dropped) for whole job blocks
            for ln in range(len(whole), 0, -1):
                if whole[ln - 1].strip():
                    self.last = ln
                    break
            lines: Iterable[str] = whole
        else:
            lines = self.ahead = Ahead(
                raw if "\r" not in raw and "Jobs: " not in raw else clean(raw) for raw in self.lines
            )
        in_json = False
        line = self.line
        numbered = enumerate(lines, 1)
        for ln, s in numbered:
            if in_json:
                in_json = s.rstrip() != "}"
                continue
            if s[:1] == "{" and s.rstrip() == "{":
                if self.ahead is not None:
                    raise NotStreamable("a JSON document inside fio's normal output")
                in_json = True
                continue
            line(ln, s)
            if self.skip:  # the lines of a job block that block_fast read
                next(islice(numbered, self.skip - 1, None), None)
                self.skip = 0
        if self.ahead is not None:
            self.last = self.ahead.seen
        self.finish()
        return self.p

    @staticmethod
    def clean(raw: str) -> str:
        """Drop live ``Jobs:`` status text (``\\r``-separated, maybe glued to the next line)."""
        if "\r" not in raw and not _JOBS_STATUS.match(raw):
            return raw
        keep = ""
        for seg in raw.split("\r"):
            if _JOBS_STATUS.match(seg):
                m = _JOBS_ETA.match(seg)
                seg = seg[m.end() :] if m else ""
            if seg.strip():
                keep = seg
        return keep

    def line(self, ln: int, s: str) -> None:
        # each pattern below starts (after blanks) with a fixed word or needs a fixed substring: a
        # test of the first character / the substring rules most patterns out before any regex runs
        w = s.lstrip()
        if self.pct is not None:
            if w.startswith("|"):
                self.pct_line(ln, s)
                self.jstate["last"] = ln
                return
            self.end_pct(ln)
        if self.lifetime:
            self.lifetime = w.startswith("|")
            if self.lifetime or _STATES.match(s):
                self.jstate["last"] = ln
                return
        if not w:
            if self.job is not None and self.jstate["issued"]:
                self.close_job()
            return
        c = w[0]
        if ("(groupid=" in s and (_HEADER_CUE.search(s) or _HEADER_NEAR.search(s))) or (
            "): err=" in s and _HEADER_ERR.search(s)
        ):
            return self.header(ln, s)  # reliability-33: `jobs=8e0` was no header, and its job's rows were lost
        head = _GROUP_HEAD.match(s) if c == "R" else None
        if head:
            self.close_job(ln)
            self.disks = False
            self.group = int(head["gid"])
            self.found = self.report_tail = True
            return
        if c in "RWTM" and _GROUP_CUE.match(s):
            return self.group_line(ln, s)
        if c == "D" and _DISK_HEAD.match(s):
            self.close_job(ln)
            self.disks = self.found = self.report_tail = True
            return
        if self.disks:
            if self.disk_part is not None and "=" in s and not _DISK_CUE.match(s):
                first, part = self.disk_part  # a disk line wrapped after a ',' (as pasted logs show it)
                self.disk_part = None
                return self.disk(first, part + " " + w.rstrip(), ln)
            if ": ios=" in s and _DISK_CUE.match(s):
                return self.disk(ln, s)
            if sum(k in s for k in ("ios=", "merge=", "ticks=", "in_queue=")) >= 2:  # reliability-34: `nvme 0n1: ios=`
                return self.disk(ln, s)  # a damaged name: refused as a malformed disk stats line
            self.end_disks()
            if self.is_last(ln) and not SHELL_PROMPT.match(s) and not s.startswith("```"):  # the file ends inside
                # the disk stats (not with a shell prompt or a Markdown fence closing the pasted output after them):
                # after the results, which are kept
                self.p.warnings.append(
                    f"line {ln}: disk stats line cut at the end of the file, not stored: {w.strip()[:60]!r}"
                )
                return
            self.disks = False
        if self.job is not None:
            if not (self.fast and self.job_line_fast(ln, s, c)):
                self.job_line(ln, s, c)
            self.jstate["last"] = ln
            return
        self.outside(ln, s, c)

    def outside(self, ln: int, s: str, c: str) -> None:
        # reliability-34: a job header or a run status line with a damaged word (`(groZpid=0, ...)`, `WRIT E:`)
        # was passed over as other text, and the job's rows or the group's with it, exit 0
        if _DIR_CUE.match(s) or _JOB_CUE.match(s):
            self.fail(
                ln,
                "a job's result line without a job header before it (a damaged header?)",
                "'name: (groupid=N, jobs=N): err= N: pid=N[: date]' before the job's lines",
            )
        if ("bw=" in s and ", io=" in s and ", run=" in s) or ("aggrb=" in s and "mint=" in s):
            return self.group_line(ln, s)
        m = ": (g=" in s and _PREAMBLE.match(s)
        if m:
            self.started = True
            self.new_run = self.new_run or self.report_tail
            info = {
                "rw": m["rw"].strip(),
                "ioengine": m["engine"].strip(),
                "iodepth": int(m["depth"]),
                "block_size_bytes": self.block_size(ln, m["bs"]),
            }
            self.preamble[(m["name"], int(m["g"]))] = info
            self.preamble.setdefault(m["name"], info)
            return
        if ": (g=" in s and _PREAMBLE_CUE.match(s):  # reliability-33: `iodepth=4e0` left rw, bs, iodepth NULL, no word
            self.p.warnings.append(f"line {ln}: job preamble not read (rw, bs, ioengine, iodepth): {s.strip()[:80]!r}")
            return
        m = c == "f" and _VERSION.match(s)
        if m:
            self.started = True
            self.new_run = self.new_run or self.report_tail
            self.version = (int(m.group(1)), int(m.group(2)))
            self.p.tool_version = "fio-" + s.strip()[4:]
            return
        m = "Laying out IO" in s and _LAYOUT.match(s)
        if m:  # fio prints the MiB count rounded down (>> 20): bytes = MiB x 2^20
            doc = self.report + 1 if self.report_tail else self.report
            self.layout[m["name"]] = (doc, int(m["files"]), int(m["mib"]) * units.MiB)
            return
        if m is not False and ": Laying out IO file" in s:  # reliability-33: `/ 1.6e1MiB)` left the layout NULL
            self.p.warnings.append(f"line {ln}: 'Laying out IO file' line not read: {s.strip()[:80]!r}")
            return
        if c in "#`" and self.markdown(ln, s):
            return
        if c in "2345" and s[1:6] == ";fio-":
            self.terse_lines.append(ln)
            return
        typed = self.commands[-1] if self.commands else None
        if typed is not None and typed[3] == ln - 1 and (joined := continued(typed[1], s)) is not None:
            self.commands[-1] = (typed[0], joined, typed[2], ln)  # the command goes on (wrapped, or a backslash)
            return
        if "fio" in s and (command := fio_command(s)) is not None:  # a transcript's command line starts a run
            self.new_run = self.new_run or self.report_tail
            self.commands.append((self.report + 1 if self.report_tail else self.report, command, ln, ln))
            return
        if (c == "J" and _JOBS_STATUS.match(s)) or s.startswith("Starting "):
            self.started = True
            self.new_run = self.new_run or (self.report_tail and s.startswith("Starting "))

    def markdown(self, ln: int, s: str) -> bool:
        """A Markdown fence (```) or, outside the fenced blocks, a heading line: kept (``add_sections``); True for a
        heading (nothing else to read in it)."""
        if s.startswith("```"):
            self.fences += 1
            return False
        m = self.fences % 2 == 0 and _HEADING.match(s)
        if not m:
            return False
        level = len(m[1])
        self.heading_path = [h for h in self.heading_path if h[0] < level] + [(level, m[2])]
        doc = self.report + 1 if self.report_tail else self.report
        self.headings.append((doc, " > ".join(h for _, h in self.heading_path), ln))
        return True

    def add_sections(self) -> dict[int, int]:
        """``fio_sections``: the headings before each run, in a file with fenced blocks (a Markdown write-up; a log
        whose script echoes '# run 2' has none); {doc_index: the line of its last heading}."""
        last: dict[int, tuple[str, int]] = {}
        for doc, path, ln in self.headings if self.fences else ():
            if doc <= self.report:
                last[doc] = (path, ln)
        for doc, (path, ln) in sorted(last.items()):
            self.p.add("fio_sections", {"doc_index": doc, "section": path, "line_start": ln, "line_end": ln})
        return {doc: ln for doc, (_, ln) in last.items()}

    def add_commands(self, headed: dict[int, int]) -> None:
        """Each run's fio command: the one typed or pasted before it (none after the last report; of several
        different ones, none: ``command.paired`` warns). Where a heading comes between (``headed``: its line), the
        commands under it, if any: those above it are another section's (a write-up's summary of its commands)."""
        per_doc: dict[int, list[tuple[str, int, int]]] = {}
        for doc, typed_line, first, last in self.commands:
            if doc <= self.report:
                per_doc.setdefault(doc, []).append((typed_line, first, last))
        for doc, found in sorted(per_doc.items()):
            under = [f for f in found if f[1] > headed.get(doc, 0)]
            found = under or found
            typed, why = paired(found)
            if why:  # a row without a command: the run before it lends it none
                self.p.warnings.append(why)
            command, lo, hi = typed or (None, found[0][1], found[-1][2])
            self.p.add("fio_commands", {"doc_index": doc, "command": command, "line_start": lo, "line_end": hi})

    def block_size(self, ln: int, bs: str) -> int | None:
        known = _BLOCK_SIZES.get(bs)
        if known is None:
            known = _block_size(bs)
            if len(_BLOCK_SIZES) < _CACHE_MAX:
                _BLOCK_SIZES[bs] = known
        size, bad = known
        for tok in bad:
            self.p.warnings.append(f"line {ln}: block size {tok!r} not understood")
        return size

    def header(self, ln: int, s: str) -> None:
        m = _HEADER.match(s)
        if not m:
            self.fail(ln, "malformed job header", "'name: (groupid=N, jobs=N): err= N: pid=N[: date]'")
        self.close_job(ln)
        self.p.checkpoint()  # the rows of the blocks before are complete (but is_final: see finish)
        if self.report_tail:
            if self.new_run:  # the report before was the last of its run
                self.run_ends.append(self.report)
                self.new_run = False
                self.run_start = self.report + 1
            self.report += 1
            self.report_tail = False
        self.group, self.disks, self.found = None, False, True
        name, gid = m["name"], int(m["gid"])
        pre = self.preamble.get((name, gid)) or self.preamble.get(name) or {}
        laid = self.layout.get(name)
        laid = laid if laid is not None and laid[0] >= self.run_start else None  # this run's, not an earlier one's
        self.job = {
            "job_index": self.p.count("fio_jobs"),
            "doc_index": self.report,
            "is_final": False,
            "jobname": name,
            "groupid": gid,
            "jobs": int(m["jobs"]),
            "error": int(m["err"]),
            "pid": int(m["pid"]),
            "report_time": (m["time"] or None),
            "report_epoch_s": None,
            "rw": pre.get("rw"),
            "block_size_bytes": pre.get("block_size_bytes"),
            "ioengine": pre.get("ioengine"),
            "iodepth": pre.get("iodepth"),
            "numjobs": None,
            "options_json": None,
            "layout_files": None if laid is None else laid[1],
            "layout_bytes": None if laid is None else laid[2],
            "cpu_usr_pct": None,
            "cpu_sys_pct": None,
            "ctx": None,
            "majf": None,
            "minf": None,
            "line_start": ln,
            "line_end": ln,
        }
        self.p.add("fio_jobs", self.job)
        self.jstate = {"issued": None, "results": {}, "last": ln, "kb_base": None, "legacy": False}
        self.res = None
        if self.fast:
            self.block_fast(ln, s)

    def finish(self) -> None:
        self.end_disks()
        if self.pct is not None:
            self.end_pct(None)
        if self.job is not None:
            self.close_job(None)
        if not self.found:
            if self.started:
                raise ParseError(
                    "fio started but its report is missing",
                    line=self.last or 1,
                    kind="truncated",
                    expected="job blocks and 'Run status group' lines",
                )
            raise ParseError(
                "no fio normal output found",
                line=1,
                kind="invalid",
                expected="a job header 'name: (groupid=N, jobs=N): err= N: pid=N', a "
                "'Run status group N (all jobs):' line or a 'READ:/WRITE: bw=' line",
            )
        if self.p.count("fio_jobs") and not self.report_tail:
            self.fail(
                self.last,
                "the output stops after the job blocks",
                "'Run status group N (all jobs):' and its lines after the job blocks",
            )
        if self.terse_lines:
            n = len(self.terse_lines)
            self.p.warnings.append(
                f"line {self.terse_lines[0]}: {n} fio terse line{'s' if n > 1 else ''} beside the normal output "
                "not stored (the normal output is, with its printed rounding)"
            )
        self.add_commands(self.add_sections())
        finals = {*self.run_ends, self.report}
        for job in self.p.rows("fio_jobs"):
            job["is_final"] = job["doc_index"] in finals
        for doc_index in sorted(finals):
            self.p.update_flushed("fio_jobs", {"is_final": True}, {"doc_index": doc_index})
