"""The classic disk card (notebook 10): CrystalDiskMark's and KDiskMark's four tests, each read and write, as one
card per machine and device, side by side.

The tests are recognised by the workload fio ran (never by a file name or label): SEQ1M Q8T1 is a sequential
read or write of 1 MiB blocks at iodepth 8 with one job; SEQ1M Q1T1 the same at iodepth 1; RND4K Q32T1 random
4 KiB at iodepth 32, one job; RND4K Q1T1 at iodepth 1. ``storagelab lab fio --preset standard`` runs exactly
these; runs of the same workload from any other source count as well, where they are the test: direct I/O, no
fsync, fdatasync or sync (``apart_reason``). A buffered run, one synced as it writes, or one whose direct= fio did
not print is listed apart with the reason, never in a cell or the headline.

Three steps: ``query`` (SQL -> frames), ``compute`` (pure: frames -> ``DiskCard``s of named numbers), ``findings``
(sentences from those numbers). Rates are shown in MB/s (10^6 bytes/s), as CrystalDiskMark and KDiskMark show
them, and the database keeps bytes/s. A result's spread is that of its repeats (runs of the same test on the
same machine and device, whose labels and manifest columns say they are repeats: ``repeat_groups``), never fio's
per-sample spread; one run says it has no run-to-run estimate. Runs of one test on one machine and device that are
not repeats ('baseline' and 'tuned', or notes apart) are a card each, named by their setup: one card's mean of two
configurations would be neither's figure (the card had pooled them and said so; 08 compares them).
"""

from __future__ import annotations

import dataclasses
import html
import re
import statistics
from dataclasses import dataclass, field

import polars as pl

from ..chartsource import SOURCE_STRUCT
from ..devices import STACKED_PREFIXES, not_a_disk, stacked_why
from ..repeat_auto import not_settled
from ..units import MB, MiB
from . import arc, design, io_time, repeat_groups, run_verdicts
from .db import frame
from .fio_runs import config_label
from .fio_runs import runs as fio_runs
from .result import Finding, Result, cite
from .selection import Selection

# (name, sequential?, block size bytes, iodepth, numjobs), in the card's order
TESTS = (
    ("SEQ1M Q8T1", True, MiB, 8, 1),
    ("SEQ1M Q1T1", True, MiB, 1, 1),
    ("RND4K Q32T1", False, 4096, 32, 1),
    ("RND4K Q1T1", False, 4096, 1, 1),
)
DIRECTIONS = ("read", "write")
SYSTEM_FACTS = ("cpu", "kernel", "os", "filesystem", "device", "model", "firmware", "class", "ram")
DEVICE_FACTS = ("device", "model", "firmware", "class")  # none on tmpfs/ramfs: not missing there

# each run's worst p99 of clat and of lat (lat where fio printed it: lat_percentiles=1), its mean slat, clat
# and lat (IOPS-weighted over its jobs) and fio's IO depths at 1: what ``io_time.choose`` needs to tell which is the
# I/O's time
LATENCY_SQL = """
WITH p AS (SELECT file_id, job_index, direction,
                  max(latency_ns) FILTER (WHERE kind = 'clat') AS clat_p99_ns,
                  max(latency_ns) FILTER (WHERE kind = 'lat') AS lat_p99_ns
           FROM fio_percentiles WHERE percentile = 99.0 GROUP BY ALL)
SELECT r.file_id, j.doc_index, j.groupid, r.direction,
       max(p.clat_p99_ns) AS clat_p99_ns, max(p.lat_p99_ns) AS lat_p99_ns,
       sum(r.slat_mean_ns * r.iops) / nullif(sum(r.iops), 0) AS slat_mean_ns,
       sum(r.clat_mean_ns * r.iops) / nullif(sum(r.iops), 0) AS clat_mean_ns,
       sum(r.lat_mean_ns * r.iops) / nullif(sum(r.iops), 0) AS lat_mean_ns,
       min(d.pct) AS depth1_pct
FROM fio_results r JOIN fio_jobs j USING (file_id, job_index) JOIN files f USING (file_id)
LEFT JOIN p USING (file_id, job_index, direction)
LEFT JOIN fio_iodepths d ON d.file_id = j.file_id AND d.job_index = j.job_index AND d.kind = 'depth' AND d.bucket = '1'
WHERE {where} AND j.is_final
GROUP BY ALL
"""
LATENCY_COLUMNS = ("clat_p99_ns", "lat_p99_ns", "slat_mean_ns", "clat_mean_ns", "lat_mean_ns", "depth1_pct")


# ----------------------------------------------------------------------------- query


def query(con, sel: Selection) -> pl.DataFrame:
    """One row per run and direction of the selection's fio runs, with the group's bandwidth (fio's group line),
    the jobs' IOPS, worst p99 completion (clat) and total (lat) latency and mean latencies, and the workload."""
    runs = fio_runs(con, sel)
    if runs.is_empty():
        return runs
    where, params = sel.sql("f")
    keys = ["file_id", "doc_index", "groupid", "direction"]
    latency = frame(con, LATENCY_SQL.format(where=where), params)
    labels = frame(con, "SELECT f.file_id, f.os FROM files f WHERE " + where, params)
    out = runs.join(labels, on="file_id", how="left") if "os" not in runs.columns else runs
    out = out.drop([c for c in LATENCY_COLUMNS if c in out.columns])
    if not latency.is_empty():
        out = out.join(latency, on=keys, how="left")
    for col in ("iops", *LATENCY_COLUMNS):
        if col not in out.columns:
            out = out.with_columns(pl.lit(None, pl.Float64).alias(col))
    return design.with_design(out)  # the test-design checks every analysis shares (too short, stall, cache ...)


# ----------------------------------------------------------------------------- compute


@dataclass(frozen=True)
class CardResult:
    test: str
    direction: str
    n: int  # runs of this test on this machine and device
    bw_bytes_per_s: float  # mean of the runs' group bandwidths
    bw_min: float
    bw_max: float
    sd_bytes_per_s: float | None  # run-to-run sample sd; None for one run
    iops: float | None
    p99_ns: float | None  # of clat, or of lat where clat is not the I/O's time (``latency``)
    flags: tuple[str, ...] = ()
    file_ids: tuple[int, ...] = ()
    lines: tuple[tuple[str, int, int, str | None], ...] = ()  # each run's group line: (path, start, end, sha256)
    setups: tuple[tuple[str, str, int], ...] = ()  # (label without 'run N', workload, runs): more than one = pooled
    latency: str = "clat"  # which latency p99_ns is ('clat', 'lat'), or 'lat mean' (no lat percentiles printed)
    latency_reasons: tuple[str, ...] = ()  # why its latency is not clat (``io_time``; also among its flags)
    lat_mean_ns: float | None = None  # the runs' median mean lat, where ``latency`` is 'lat mean'
    left_out: tuple[tuple[str, str], ...] = ()  # (run, why): its test's runs notebook 08 leaves out (``counted``)
    left_setups: tuple[str, ...] = ()  # the setups of runs left out that no counted run is of (``setup_of``)


@dataclass(frozen=True)
class Apart:
    """A run of a card's workload that is not CrystalDiskMark's test (``apart_reason``): listed, never in a cell."""

    test: str
    direction: str
    run: str  # its file name
    bw_bytes_per_s: float
    reason: str
    lines: tuple[tuple[str, int, int, str | None], ...] = ()


@dataclass
class DiskCard:
    machine: str
    device: str
    system: dict[str, str | None]
    results: dict[tuple[str, str], CardResult] = field(default_factory=dict)
    apart: list[Apart] = field(default_factory=list)

    @property
    def missing(self) -> list[str]:
        return [f"{t} {d}" for t, *_ in TESTS for d in DIRECTIONS if (t, d) not in self.results]

    @property
    def flagged(self) -> list[CardResult]:
        return [r for r in self.results.values() if r.flags]


def test_of(row: dict) -> str | None:
    """The classic test a run is, from its workload (rw, bs, iodepth, numjobs), or None."""
    rw = (row.get("wl_rw") or "").lower()
    if rw not in ("read", "write", "randread", "randwrite"):
        return None
    try:
        bs, qd, nj = (int(row.get(k) or 0) for k in ("wl_bs", "wl_iodepth", "wl_numjobs"))
    except ValueError:
        return None
    for name, sequential, t_bs, t_qd, t_nj in TESTS:
        if sequential == (not rw.startswith("rand")) and (bs, qd, nj) == (t_bs, t_qd, t_nj):
            return name
    return None


def apart_reason(row: dict) -> str | None:
    """Why a run of a card's workload is not CrystalDiskMark's test (direct I/O, no fsync, fdatasync or sync), or
    None: its writes made durable as they go or at the end (``design.synced_writes``, ``design.final_fsync``: a
    psync+fdatasync run's write() p99 is the page cache's, its rate the device's sync path), buffered I/O
    (direct=0), or direct= not in its output (fio's normal text does not print it)."""
    synced, final = row.get("design_synced"), row.get("design_final_fsync")
    if synced or final:
        return f"not this test: {synced or final}"
    direct = str(row.get("wl_direct") or "")
    if direct == "0":
        return "not this test: buffered (direct=0): the page cache, not the device, may have served it"
    if direct != "1":
        return "direct= unknown: the card cannot say the device served it (fio's normal text does not print direct=)"
    return None


def _note(notes: str | None, key: str) -> str | None:
    m = re.search(rf"(?:^|; |: | ){re.escape(key)}=([^;]*?)(?=;| \w+=|$)", notes or "")
    return m.group(1).strip() if m and m.group(1).strip() not in ("", "None") else None


def system_of(row: dict) -> dict[str, str | None]:
    """The system table of a run from what the lab recorded (its manifest row: host, os, stack, devices, RAM and
    the notes' key=value facts); None where nothing says."""
    notes = row.get("notes")
    devices = row.get("devices") or ""
    model = re.search(r"\(([^)]*)\)", devices)
    ram = row.get("ram_bytes")
    return {
        "cpu": _note(notes, "cpu"),
        "kernel": _note(notes, "kernel"),
        "os": row.get("os"),
        "filesystem": row.get("stack") or _note(notes, "fstype"),
        "device": devices.split(" (")[0] or None,
        "model": model.group(1) if model and model.group(1) != "unknown model" else None,
        "firmware": _note(notes, "firmware"),
        "class": _note(notes, "device_class"),
        "ram": f"{float(ram) / 2**30:.1f} GiB" if ram else None,
    }


def flags_of(row: dict) -> tuple[str, ...]:
    """A run's flags: the lab's sanity flags (its notes' 'sanity:' entries: a virtual disk, beyond the device
    class, cache), then the design checks' (``design.sentence``: too short, a stall, a working set in cache ...)."""
    lab = tuple(m.strip() for m in re.findall(r"sanity: ([^;]*)", row.get("notes") or ""))
    flags = design.flags_of(row) if "design_flagged" in row else None
    if flags is not None and any(f.startswith("RAM, not a disk") for f in lab):  # the lab's flag says it
        flags = dataclasses.replace(flags, ram_target=None)
    checked = design.sentence("run", flags) if flags is not None else None
    stacked = () if any(f.startswith("not a disk") for f in lab) else stacked_flags(row)
    return lab + stacked + ((checked.removeprefix("run: ").rstrip("."),) if checked else ())


# a stacked device's kernel name written without /dev/ ('loop0', as lsblk prints it), a whole word of the label
_BARE_STACKED = re.compile(r"(?<![\w/.-])((?:loop|md|zram|nbd)\d+|dm-\d+)(?![\w.-])")


def stacked_flags(row: dict) -> tuple[str, ...]:
    """'not a disk: loop device loop0, ...' where the run's devices label names a loop, md, dm, zram or nbd device
    (``/dev/loop0``, or ``loop0`` as lsblk names it; runs the lab recorded before it flagged them, or other logs),
    with what backs it where the notes say (backing=, backing_fstype=)."""
    label = row.get("devices") or ""
    found = re.findall(r"/dev/([\w.-]+)", label) + _BARE_STACKED.findall(label)
    names = list(dict.fromkeys(n for n in found if n.startswith(STACKED_PREFIXES)))
    if not names:
        return ()
    facts = {"backing": _note(row.get("notes"), "backing"), "backing_fstype": _note(row.get("notes"), "backing_fstype")}
    return (not_a_disk([stacked_why(n, facts if len(names) == 1 else {}) for n in names]),)


def setup_of(row: dict) -> tuple[str, str]:
    """What repeats of one setup share (as notebooks 05 and 08 group them: ``repeat_groups``): the label without
    its 'run N' mark (the file's path, as much as tells it apart, where there is none) with what tells it from another
    group of that label (a manifest column that differs: 'x (notes hot)'; ``repeats_of``, set by ``compute``), and
    the workload fio ran, runtime and size included."""
    return row.get("repeats_of") or "no label", row.get("workload") or "workload unknown"


def setups_of(rows: list[dict]) -> tuple[tuple[str, str, int], ...]:
    """The setups a result's runs come from, in run order, with their run counts."""
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        key = setup_of(r)
        counts[key] = counts.get(key, 0) + 1
    return tuple((label, workload, n) for (label, workload), n in counts.items())


def run_latency(row: dict) -> io_time.IoLatency:
    """A run's latency figure (``io_time.choose``): its clat p99, or lat where submission holds the I/O's time or
    its IOPS contradict the clat p99."""
    given = {"iodepth": row.get("wl_iodepth"), "numjobs": row.get("wl_numjobs")}
    return io_time.choose({**row, **given}, io_time.paced(design.given_options(row)))


def _latency(rows: list[dict]) -> dict:
    """A result's latency from its runs': the median p99 of the kind most of them show (clat unless clat is not
    the I/O's time: ``run_latency``), or, where lat is the I/O's time and fio printed no lat percentiles, no p99
    and the median of their mean lat; the reasons, each once, each named by its run where there are several."""
    chosen = [run_latency(r) for r in rows]
    kind = max(("clat", "lat", "lat mean"), key=lambda k: sum(c.kind == k for c in chosen))
    p99 = [c.p99_ns for c in chosen if c.kind == kind and c.p99_ns is not None]
    means = [c.mean_ns for c in chosen if c.kind == kind and c.mean_ns is not None]
    return {
        "kind": kind,
        "p99_ns": statistics.median(p99) if p99 and kind != "lat mean" else None,
        "lat_mean_ns": statistics.median(means) if means and kind == "lat mean" else None,
        # a run's own figures: named by its run where the result has several (the h6n trial's card put one run's
        # '80,267 IOPS = 12.5 us per I/O' beside a mean of 23,906 IOPS over ten)
        "reasons": list(
            dict.fromkeys(
                (f"{_run_name(r)}, one of its {len(rows)} runs: {c.reason}" if len(rows) > 1 else c.reason)
                for r, c in zip(rows, chosen, strict=True)
                if c.reason
            )
        ),
    }


def counted(rows: list[dict], left: dict[tuple[int, int, str], str]) -> tuple[list[dict], list[tuple[str, str]]]:
    """The runs of one result that count and those left out with why: the one rule of 05, 08 and 10 (``run_verdicts.left_out``:
    a design flag, two regimes or dips in its logs, a firm plausibility flag), where at least one run is clean;
    where none is, all count (the result is flagged: 08 ranks none of them)."""
    out = [(r, left.get((r["file_id"], r["doc_index"], r["direction"]))) for r in rows]
    if all(why for _, why in out):
        return rows, []
    return [r for r, why in out if not why], [(_run_name(r), why) for r, why in out if why]


def machine_device(row: dict, apart: bool = False) -> tuple[str, str]:
    """A card's machine and device: the host label, else the run's own file (named as 08 names its setup: a file
    without a host label is a setup of its own, so runs of five unlabelled files on five filesystems are five
    cards, never one; ``apart``: a run kept off every card, listed with the others without a host label); its
    devices label and stack."""
    own = f"file {row.get('config_name') or row.get('path')} (host not labelled)"
    machine = row.get("host") or ("host not labelled" if apart else own)
    device = (row.get("devices") or "device not labelled") + (f" | {row['stack']}" if row.get("stack") else "")
    return machine, device


# a workload's words that make a test (after its rw mode): block size, depth, jobs, read share
_TEST_WORDS = ("rwmixread=", "bs=", "iodepth=", "numjobs=")


def variant_of(row: dict) -> str:
    """What a run's workload says beyond its test: 'libaio direct=1 size=256MiB runtime=5s' (ioengine, direct, size,
    runtime, a rate cap). Runs of one machine and device with different ones are different setups: one card each
    (the h6n trial's card pooled a 60 s xfs write at 3,106 MB/s and a 5 s btrfs write at 182 MB/s into '1,644
    MB/s')."""
    words = str(row.get("workload") or "").split()
    return " ".join(w for w in words[1:] if not w.startswith(_TEST_WORDS))


def compute(runs: pl.DataFrame, left: dict[tuple[int, int, str], str] | None = None) -> list[DiskCard]:
    """Cards of the runs that are one of the classic tests, one per (machine, device) (``machine_device``), and one
    per setup where runs of one machine and device ran different ones (``variant_of``) or where runs of one test
    there are of different setups (labels or manifest columns apart: ``setup_of``), in machine order.
    ``left``: the runs notebooks 05 and 08 leave out too (``run_verdicts.left_out``), kept out of the results they
    would be in."""
    cards: dict[tuple[str, str], DiskCard] = {}
    groups: dict[tuple[str, str, str, str], list[dict]] = {}
    if not runs.is_empty():
        runs = repeat_groups.with_names(runs.with_columns(config_name=config_label(runs)), "config_name", "repeats_of")
    rows = [r for r in (runs.iter_rows(named=True) if not runs.is_empty() else ()) if test_of(r) is not None]
    variants: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        if apart_reason(row) is None:
            variants.setdefault(machine_device(row), set()).add(variant_of(row))

    def place(row: dict, why: str | None) -> tuple[str, str]:
        machine, device = machine_device(row, apart=why is not None)
        if len(variants.get((machine, device), ())) > 1:  # one card per setup: never a mean across setups
            device = f"{device} | {variant_of(row)}"
        return machine, device

    # runs of one test on one machine and device whose labels (or manifest columns) say they are two setups, not
    # repeats (``repeat_groups``: 'baseline' and 'tuned'; 'x' and 'x (run 2)' are repeats): a card per setup, as 08
    # compares them, never one mean of both (the card had pooled them and said so)
    setups: dict[tuple[str, str], dict[tuple[str | None, str | None], set[str]]] = {}
    for row in rows:
        if apart_reason(row) is None:
            cell = setups.setdefault(place(row, None), {}).setdefault((test_of(row), row.get("direction")), set())
            cell.add(setup_of(row)[0])
    split = {md for md, cells in setups.items() if any(len(s) > 1 for s in cells.values())}
    for row in rows:
        test = test_of(row)
        direction = row.get("direction")
        if test is None or direction not in DIRECTIONS or not row.get("bw_bytes_per_s"):
            continue
        why = apart_reason(row)
        machine, device = place(row, why)
        if why is None and (machine, device) in split:
            device = f"{device} | {setup_of(row)[0]}"
        card = cards.setdefault((machine, device), DiskCard(machine, device, system_of(row)))
        if why is not None:
            card.apart.append(Apart(test, direction, _run_name(row), row["bw_bytes_per_s"], why, _lines([row])))
            continue
        groups.setdefault((machine, device, test, direction), []).append(row)
    for (machine, device, test, direction), every in groups.items():
        rows, dropped = counted(every, left or {})
        bws = [r["bw_bytes_per_s"] for r in rows]
        iops = [r["iops"] for r in rows if r.get("iops")]
        latency = _latency(rows)
        cards[(machine, device)].results[(test, direction)] = CardResult(
            test=test,
            direction=direction,
            n=len(bws),
            bw_bytes_per_s=statistics.fmean(bws),
            bw_min=min(bws),
            bw_max=max(bws),
            sd_bytes_per_s=statistics.stdev(bws) if len(bws) > 1 else None,
            iops=statistics.fmean(iops) if iops else None,
            p99_ns=latency["p99_ns"],
            flags=tuple(
                dict.fromkeys([*(f for r in rows for f in flags_of(r)), *latency["reasons"], *_all_flagged(rows, left)])
            ),
            latency=latency["kind"],
            latency_reasons=tuple(latency["reasons"]),
            lat_mean_ns=latency["lat_mean_ns"],
            file_ids=tuple(sorted({r["file_id"] for r in rows})),
            setups=setups_of(rows),
            lines=_lines(rows),
            left_out=tuple(dropped),
            left_setups=_other_setups(every, rows),
        )
    return [cards[k] for k in sorted(cards)]


def _all_flagged(rows: list[dict], left: dict[tuple[int, int, str], str] | None) -> tuple[str, ...]:
    """A result every run of which the one rule flags (``counted``: then all count): '5 of 5 runs flagged as
    notebooks 05 and 08 flag them (08 compares none of them): run (why); ...', else nothing (also for one run flagged
    by its design checks alone, which ``flags_of`` gives)."""
    whys = [(_run_name(r), w) for r in rows if (w := (left or {}).get((r["file_id"], r["doc_index"], r["direction"])))]
    if not whys or (len(rows) == 1 and whys[0][1] == (rows[0].get("design_marker") or None)):
        return ()  # one run whose only verdict is its design flags: the card's own flags say it
    each = "; ".join(f"{run} ({why})" for run, why in whys)
    return (
        f"{len(whys)} of {len(rows)} runs flagged as notebooks 05 and 08 flag them (08 compares none of them): {each}",
    )


def _other_setups(every: list[dict], rows: list[dict]) -> tuple[str, ...]:
    """The setups (labels, ``setup_of``) of the runs of ``every`` left out that none of the counted ``rows`` is of."""
    kept = {setup_of(r) for r in rows}
    return tuple(dict.fromkeys(setup_of(r)[0] for r in every if setup_of(r) not in kept))


def _lines(rows: list[dict]) -> tuple[tuple[str, int, int, str | None], ...]:
    """The runs' group lines: (path, line_start, line_end, sha256: the file's as stored)."""
    got = {
        (r["path"], r["line_start"], r.get("line_end") or r["line_start"], r.get("sha256"))
        for r in rows
        if r.get("path")
    }
    return tuple(sorted(got, key=lambda x: x[:3]))


def _run_name(row: dict) -> str:
    return str(row.get("path") or "").replace("\\", "/").rsplit("/", 1)[-1] or "run"


# ----------------------------------------------------------------------------- findings


def mb_s(x: float) -> str:
    return f"{x / MB:,.1f}" if x < 100 * MB else f"{x / MB:,.0f}"


def pooled_sentence(c: DiskCard, r: CardResult) -> str:
    """A result whose runs are of several setups (labels or workloads apart): said, since its spread is then not
    only run to run."""
    each = ", ".join(f"'{label}' ({n} run{'s' if n > 1 else ''}: {workload})" for label, workload, n in r.setups)
    spread = f" (±{r.sd_bytes_per_s / MB:,.1f} MB/s sd)" if r.sd_bytes_per_s is not None else ""
    return (
        f"{r.test} {r.direction} on {c.machine}, {c.device}: its {r.n} runs are of {len(r.setups)} setups, pooled as "
        f"one result: {each}. Its mean and spread{spread} mix the difference between the setups with run-to-run "
        "noise; notebook 08 keeps them apart."
    )


def _noise(reps: list[int], done: list[CardResult]) -> str:
    """What a card's spreads are: run to run only where a result's runs are of one setup (``pooled_sentence``)."""
    if reps == [1]:
        return "one run per test: no run-to-run estimate (--repeat auto repeats until the spread settles)"
    head = f"{'/'.join(map(str, reps))} runs per test"
    pooled = sum(1 for r in done if len(r.setups) > 1)
    if not pooled:
        return f"{head}: the spread shown is run to run"
    one = sum(1 for r in done if r.n > 1 and len(r.setups) == 1)
    if not one:
        return (
            f"{head}: each result with more than one run pools runs of several setups (listed below), so none of "
            "the spreads shown is run-to-run noise alone"
        )
    return (
        f"{head}: the spread shown is run to run for the {one} result(s) of one setup run more than once; the "
        f"{pooled} that pool runs of several setups (below) mix the difference between the setups into it"
    )


def _line_dicts(r: CardResult) -> list[dict]:
    """A result's raw lines (each run's job) as cite inputs."""
    return [{"path": p, "line_start": a, "line_end": b, "sha256": h} for p, a, b, h in r.lines]


def _card_sentence(c: DiskCard, done: list[CardResult]) -> list[str]:
    """The card's headline: its results, the highest, what its spreads are, its first flag."""
    if not done:
        return [f"**{c.machine}, {c.device}:** 0 of 8 results: no run of it is CrystalDiskMark's test (below)."]
    best = max(done, key=lambda r: r.bw_bytes_per_s)
    noise = _noise(sorted({r.n for r in done}), done)
    several = any(r.n > 1 and (r.p99_ns is not None or r.lat_mean_ns is not None) for r in done)
    line = (
        f"**{c.machine}, {c.device}:** {len(done)} of 8 results; the highest is {best.test} {best.direction} at "
        f"{mb_s(best.bw_bytes_per_s)} MB/s{' (flagged: below)' if best.flags else ''}; {noise}."
        + (" The latency of a result of several runs is the median of its runs' own figures." if several else "")
    )
    cites = [cite(f"{mb_s(best.bw_bytes_per_s)} MB/s", _line_dicts(best), f"mean of {best.n} run(s)")]
    if c.flagged:
        first = c.flagged[0]
        line += f" {len(c.flagged)} flagged, e.g. {first.test} {first.direction}: {first.flags[0]}."
        cites.append(cite(f"{first.test} {first.direction}", _line_dicts(first)))
    return [Finding(line, cites)]


def left_out_sentence(c: DiskCard, r: CardResult) -> str:
    """The runs of a result left out of its mean, each with why (as notebooks 05 and 08 leave them out: the one rule,
    ``run_verdicts``)."""
    each = "; ".join(f"{run} ({why})" for run, why in r.left_out)
    k = len(r.left_out)
    other = (
        f" The runs left out include another setup than the runs counted ({', '.join(map(repr, r.left_setups))}): "
        "notebooks 05 and 08 count them apart."
        if r.left_setups
        else ""
    )
    return (
        f"{r.test} {r.direction} on {c.machine}, {c.device}: {k} of its {r.n + k} runs left out of its mean, as "
        f"notebooks 05 and 08 leave them out of their repeats: {each}.{other}"
    )


def apart_item(a: Apart) -> str:
    """'ext4-fdatasync-after.txt (RND4K Q1T1 write, 73.4 MB/s): not this test: fdatasync=1'."""
    return f"{a.run} ({a.test} {a.direction}, {mb_s(a.bw_bytes_per_s)} MB/s): {a.reason}"


def apart_sentence(c: DiskCard) -> Finding:
    """The runs of a card's workloads kept off it (``apart_reason``), each with why."""
    items = "; ".join(apart_item(a) for a in c.apart)
    return Finding(
        f"{c.machine}, {c.device}: {len(c.apart)} run(s) of the card's workloads are not CrystalDiskMark's tests "
        f"(direct I/O, no fsync, fdatasync or sync) and are kept off the card (no cell, no headline): {items}.",
        [
            cite(a.run, [{"path": p, "line_start": x, "line_end": y, "sha256": h} for p, x, y, h in a.lines])
            for a in c.apart
        ],
    )


def findings(cards: list[DiskCard], sel: Selection) -> tuple[list[str], list[str]]:
    """(findings, missing): sentences from the cards' numbers only."""
    run_it = "storagelab lab fio --preset standard --target DIR (a folder on the device)"
    if not cards:
        return [], [f"no run of the classic tests (SEQ1M Q8T1/Q1T1, RND4K Q32T1/Q1T1) in {sel.describe()}: {run_it}"]
    out: list[str] = []
    missing: list[str] = []
    for c in cards:
        done = [c.results[(t, d)] for t, *_ in TESTS for d in DIRECTIONS if (t, d) in c.results]
        out += _card_sentence(c, done)
        out += [apart_sentence(c)] if c.apart else []
        out += [pooled_sentence(c, r) for r in done if len(r.setups) > 1]
        out += [left_out_sentence(c, r) for r in done if r.left_out]
        out += [
            f"{r.test} {r.direction} on {c.machine}, {c.device}: {r.n} runs counted.{unsettled}"
            for r in done
            if len(r.setups) == 1 and (unsettled := not_settled(r.n, r.bw_bytes_per_s, r.sd_bytes_per_s))
        ]
        out += [
            Finding(f"{r.test} {r.direction} on {c.machine}, {c.device}: {why}.", [cite(r.test, _line_dicts(r))])
            for r in done
            for why in r.latency_reasons
        ]
        if c.missing:
            missing.append(f"{c.machine}, {c.device}: no {', '.join(c.missing)} ({run_it})")
        in_ram = str(c.system.get("filesystem") or "").lower() in design.RAM_FILESYSTEMS  # no device to record
        unknown = [k for k in SYSTEM_FACTS if not c.system.get(k) and not (in_ram and k in DEVICE_FACTS)]
        if unknown:
            missing.append(
                f"{c.machine}, {c.device}: the system table lacks {', '.join(unknown)} (the lab records them; "
                "for other logs add host/devices/os/notes columns to the manifest)"
            )
    return out, missing


def analyse(con, sel: Selection) -> tuple[Result, list[DiskCard]]:
    runs = query(con, sel)
    cards = compute(runs, run_verdicts.left_out(con, sel) if not runs.is_empty() else {})
    res = Result(selection=sel)
    res.findings, res.missing = findings(cards, sel)
    res.missing += arc.missing(runs) if not runs.is_empty() else []
    # no stored file has the selection's labels, or "(unlabelled)" left out copies of labelled files: said first
    res.missing[:0] = [n for n in (sel.unmatched(con), sel.copies_left_out(con)) if n]
    res.file_ids = sorted({f for c in cards for r in c.results.values() for f in r.file_ids})
    res.headline = {"cards (machine x device)": str(len(cards))}
    return res, cards


# ----------------------------------------------------------------------------- display (HTML, escaped)


def latency_text(r: CardResult) -> str:
    """'p99 6.59 ms' (clat), 'lat p99 0.25 ms' (lat: clat is not the I/O's time), 'lat mean 0.214 ms, no p99' (lat,
    whose percentiles fio did not print), '' (none)."""
    if r.latency == "lat mean":
        return "" if r.lat_mean_ns is None else f"lat mean {r.lat_mean_ns / 1e6:.3g} ms, no p99"
    if r.p99_ns is None:
        return ""
    return f"{'lat ' if r.latency == 'lat' else ''}p99 {r.p99_ns / 1e6:.3g} ms"


def _not_run(c: DiskCard, test: str, direction: str) -> str:
    """'not run', or 'not run as this test (2 runs below)' where runs of its workload are kept off the card."""
    k = sum(1 for a in c.apart if (a.test, a.direction) == (test, direction))
    return f"not run as this test ({k} run{'s' if k > 1 else ''} below)" if k else "not run"


def _cell(r: CardResult | None, sequential: bool, not_run: str = "not run") -> str:
    if r is None:
        return f'<td class="na">{not_run}</td>'
    spread = (
        f"<br><small>±{r.sd_bytes_per_s / MB:,.1f} sd, n={r.n}</small>"
        if r.sd_bytes_per_s is not None
        else "<br><small>n=1</small>"
    )
    if len(r.setups) > 1:
        spread = spread.replace("</small>", f", {len(r.setups)} setups pooled</small>")
    iops = "" if sequential or r.iops is None else f"<br><small>{r.iops:,.0f} IOPS</small>"
    p99 = f"<br><small>{html.escape(latency_text(r))}</small>" if latency_text(r) else ""
    mark = ' class="flagged" title="' + html.escape("; ".join(r.flags)) + '"' if r.flags else ""
    return f"<td{mark}><b>{mb_s(r.bw_bytes_per_s)}</b>{'⚑' if r.flags else ''}{iops}{p99}{spread}</td>"


def flag_items(c: DiskCard) -> list[str]:
    """The card's flag list: each flag once, naming the results it is on ('SEQ1M Q1T1 write, RND4K Q1T1 read: it
    ran 2 s ...'), in the card's order; two runs' flags that differ only in their numbers stay two lines, each
    saying which result it is."""
    on: dict[str, list[str]] = {}
    for name, *_ in TESTS:
        for d in DIRECTIONS:
            r = c.results.get((name, d))
            for f in r.flags if r else ():
                on.setdefault(f, []).append(f"{name} {d}")
    return [f"{', '.join(results)}: {f}" for f, results in on.items()]


def card_html(c: DiskCard) -> str:
    rows = "".join(
        f"<tr><th>{name}</th>{''.join(_cell(c.results.get((name, d)), seq, _not_run(c, name, d)) for d in DIRECTIONS)}</tr>"
        for name, seq, *_ in TESTS
    )
    system = "".join(f"<tr><th>{k}</th><td>{html.escape(str(c.system.get(k) or '?'))}</td></tr>" for k in SYSTEM_FACTS)
    flag_list = "".join(f"<li>{html.escape(f)}</li>" for f in flag_items(c))
    apart_list = "".join(f"<li>{html.escape(apart_item(a))}</li>" for a in c.apart)
    return (
        '<div class="disk-card" style="border:1px solid #999;border-radius:6px;padding:8px;margin:6px;'
        'min-width:320px;max-width:480px;flex:1">'
        f"<h4>{html.escape(c.machine)}<br><small>{html.escape(c.device)}</small></h4>"
        '<table class="card"><tr><th>MB/s</th><th>Read</th><th>Write</th></tr>'
        f"{rows}</table>"
        f'<table class="system">{system}</table>'
        + (f"<p>⚑ flagged:</p><ul>{flag_list}</ul>" if flag_list else "<p>no flag</p>")
        + (f"<p>not on the card:</p><ul>{apart_list}</ul>" if apart_list else "")
        + "</div>"
    )


def cards_html(cards: list[DiskCard]) -> str:
    """Every card side by side (they wrap on a narrow page)."""
    return '<div style="display:flex;flex-wrap:wrap;overflow-x:auto">' + "".join(card_html(c) for c in cards) + "</div>"


def card_lines(cards: list[DiskCard]) -> list[str]:
    """The cards as text, one line per result in the card's order (the notebook's checked output)."""
    lines = []
    for c in cards:
        lines.append(f"{c.machine} | {c.device}")
        for name, *_ in TESTS:
            for d in DIRECTIONS:
                r = c.results.get((name, d))
                if r is None:
                    lines.append(f"  {name} {d}: {_not_run(c, name, d)}")
                    continue
                iops = f", {r.iops:,.0f} IOPS" if r.iops and name.startswith("RND") else ""
                p99 = f", {latency_text(r)}" if latency_text(r) else ""
                flag = ", FLAGGED" if r.flags else ""
                pooled = f" ({len(r.setups)} setups pooled)" if len(r.setups) > 1 else ""
                lines.append(f"  {name} {d}: {mb_s(r.bw_bytes_per_s)} MB/s{iops}{p99}, n={r.n}{pooled}{flag}")
        lines += [f"  not on the card: {apart_item(a)}" for a in c.apart]
    return lines


def chart_frame(cards: list[DiskCard]) -> pl.DataFrame:
    """The cards' results for their chart, one row per machine and device, test and direction, in the card's order:
    MB/s (the mean of its runs), the card's name ('machine | device'), whether it is flagged and why, and where it
    came from: one run's group line (path, line_start, line_end), or for the mean of several runs their lines
    (``sources``) and the arithmetic (``derivation``)."""
    source = SOURCE_STRUCT
    schema = {
        "card": pl.String(),
        "test": pl.String(),
        "direction": pl.String(),
        "mb_s": pl.Float64(),
        "runs": pl.Int64(),
        "iops": pl.Float64(),
        "p99_ms": pl.Float64(),
        "flagged": pl.Boolean(),
        "flags": pl.String(),
        "path": pl.String(),
        "line_start": pl.Int64(),
        "line_end": pl.Int64(),
        "sha256": pl.String(),
        "sources": pl.List(source),
        "derivation": pl.String(),
    }
    rows = []
    for c in cards:
        for name, *_ in TESTS:
            for d in DIRECTIONS:
                r = c.results.get((name, d))
                if r is None:
                    continue
                one = r.lines[0] if len(r.lines) == 1 else (None, None, None, None)
                many = len(r.lines) > 1
                rows.append(
                    (
                        f"{c.machine} | {c.device}",
                        name,
                        d,
                        r.bw_bytes_per_s / MB,
                        r.n,
                        r.iops,
                        None if r.p99_ns is None else r.p99_ns / 1e6,
                        bool(r.flags),
                        "; ".join(r.flags) or "none",
                        *one,
                        [dict(zip(("path", "line_start", "line_end", "sha256"), x, strict=True)) for x in r.lines]
                        if many
                        else None,
                        f"mean of {r.n} runs' group bandwidths"
                        + (f" ({len(r.setups)} setups pooled)" if len(r.setups) > 1 else "")
                        if r.n > 1
                        else None,
                    )
                )
    return pl.DataFrame(rows, schema=schema, orient="row")


def cards_frame(cards: list[DiskCard]) -> pl.DataFrame:
    """The cards as one table (the checked output and the CSV-like view): one row per machine, device, test."""
    rows = [
        {
            "machine": c.machine,
            "device": c.device,
            "test": r.test,
            "direction": r.direction,
            "runs": r.n,
            "MB/s": round(r.bw_bytes_per_s / MB, 1),
            "IOPS": None if r.iops is None else round(r.iops),
            "p99 ms": None if r.p99_ns is None else float(f"{r.p99_ns / 1e6:.3g}"),
            "flagged": bool(r.flags),
        }
        for c in cards
        for r in c.results.values()
    ]
    return pl.DataFrame(rows) if rows else pl.DataFrame()
