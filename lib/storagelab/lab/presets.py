"""The fio presets of ``storagelab lab fio``: the tests each preset runs and the fio command lines they become."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..units import fio_option_bytes


@dataclass(frozen=True)
class Preset:
    doc: str
    rw: tuple[str, ...]
    bs: tuple[str, ...]
    depth_jobs: tuple[tuple[int, int], ...]  # (iodepth, numjobs)
    size: str  # per job, fio syntax
    runtime_s: int
    direct: int = 1
    extra: tuple[str, ...] = ()  # more fio options, e.g. ("--fsync=1",)
    log_avg_msec: int = 500  # 500 = fio's own bw/iops sampling window: the logs are its samples
    log_hist_msec: int = 1000
    shared_file: bool = False  # all numjobs clones on one --filename (as the homelab study did)
    # named tests (rw, bs, iodepth, numjobs) instead of the rw x bs x depth_jobs matrix; --rw/--bs/--depth-jobs
    # then choose among them
    points: tuple[tuple[str, str, int, int], ...] = ()


# CrystalDiskMark's and KDiskMark's four tests, each read and write: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1
STANDARD_TESTS = (
    ("SEQ1M Q8T1", "1M", 8, 1),
    ("SEQ1M Q1T1", "1M", 1, 1),
    ("RND4K Q32T1", "4k", 32, 1),
    ("RND4K Q1T1", "4k", 1, 1),
)


PRESETS: dict[str, Preset] = {
    "smoke": Preset(
        "a few seconds: random 4k read and sequential 4k write, iodepth x numjobs 1x1 and 2x2, 2 s each (tests)",
        ("randread", "write"),
        ("4k",),
        ((1, 1), (2, 2)),
        "8M",
        2,
        log_avg_msec=250,
        log_hist_msec=500,
    ),
    "standard": Preset(
        "the classic disk test of CrystalDiskMark/KDiskMark: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1 and RND4K Q1T1, "
        "each read and write, 1 GiB file, 5 s each, direct I/O (--size and --runtime change them); "
        "notebook 10_disk_card shows them as one card per machine and device",
        ("read", "write"),
        ("1M", "4k"),
        ((8, 1), (1, 1), (32, 1)),
        "1G",
        5,
        points=tuple(
            ((("rand" if bs == "4k" else "") + rw), bs, qd, nj)
            for _name, bs, qd, nj in STANDARD_TESTS
            for rw in ("read", "write")
        ),
    ),
    "homelab-seq-write": Preset(
        "the homelab-mergerfs study: sequential 1M write, numjobs 8 x iodepth 8 on one shared "
        "16 GiB file (--filename, as the study did: flagged), 60 s",
        ("write",),
        ("1M",),
        ((8, 8),),
        "16G",
        60,
        shared_file=True,
    ),
    "ars-4k": Preset(
        "the Ars ZFS-vs-RAID study: random 4K read and write, 1 process at iodepth 1 and 8 x 8",
        ("randread", "randwrite"),
        ("4k",),
        ((1, 1), (8, 8)),
        "4G",
        60,
    ),
    "ars-1m": Preset(
        "the Ars ZFS-vs-RAID study: random 1M read and write, 1 process at iodepth 1 and 8 x 8",
        ("randread", "randwrite"),
        ("1M",),
        ((1, 1), (8, 8)),
        "4G",
        60,
    ),
}


@dataclass
class Run:
    run_id: str
    rw: str
    bs: str
    iodepth: int
    numjobs: int
    size: str
    runtime_s: int
    direct: int
    argv: list[str] = field(default_factory=list)  # the fio command, exactly
    shared_file: bool = False

    def renamed(self, run_id: str, out: Path) -> Run:
        """The same run saved under another id: its ``--name`` and log prefix follow, nothing else changes."""
        old_log, new_log = str(out / self.run_id), str(out / run_id)
        argv = []
        for a in self.argv:
            key, eq, value = a.partition("=")
            if a == f"--name={self.run_id}":
                a = f"--name={run_id}"
            elif eq and value == old_log:
                a = f"{key}={new_log}"
            argv.append(a)
        return replace(self, run_id=run_id, argv=argv)


def _size_bytes(text: str) -> int:
    return int(fio_option_bytes(text))


def plan_points(preset: Preset, rw=None, bs=None, depth_jobs=None) -> list[tuple[str, str, int, int]]:
    """(rw, bs, iodepth, numjobs) of each run: the preset's named tests, kept where they match the --rw/--bs/
    --depth-jobs given (the standard preset's --rw randread is its two RND4K reads); else the matrix of the
    preset's parts, each replaced by the option given for it."""
    if preset.points:
        return [
            (r, b, qd, nj)
            for r, b, qd, nj in preset.points
            if (not rw or r in rw)
            and (not bs or b.lower() in {x.lower() for x in bs})
            and (not depth_jobs or (qd, nj) in depth_jobs)
        ]
    return [
        (r, b, qd, nj) for r in rw or preset.rw for b in bs or preset.bs for qd, nj in depth_jobs or preset.depth_jobs
    ]


def fio_name(path: Path | str) -> str:
    """One file or folder in fio's --directory/--filename syntax, where ":" separates several names and "\\:" is a
    colon of the name (fio's get_next_name). Reliability-24: `lab fio --target /root/t:b` (root's folder "t:b", beside
    a "t") gave fio the folders /root/t and "b", relative to the working folder: from another user's folder, their
    symlink b/<run>.1.0 had fio write its test data into a 0600 file of root's, and half the jobs measured their file
    system, stored as the target's."""
    return str(path).replace(":", "\\:")


# reliability-25: fio cuts an option's value at ";" or "#" (a comment) and drops blanks and control characters at its
# ends (parse.c's strip_blank_front/end), and has no escape for them; in --filename (not --directory, checked with fio
# 3.33): `lab fio --target T --filename 'd;x'` wrote fio's data into T/d, a file of the user's, and unlinked it
_FIO_CUTS = re.compile(r"[;#]|^\s|[\s\x00-\x1f\x7f]$")


def fio_filename_refusal(name: str) -> str | None:
    """The words for a --filename fio would read as another name (see _FIO_CUTS), else None."""
    if not _FIO_CUTS.search(name):
        return None
    return (
        f"--filename {name!r}: fio reads a name up to a ';' or '#' and without blanks at its ends, so it would write "
        "(and delete) another file: give a name without them"
    )


def build_runs(
    preset: Preset,
    *,
    target: Path,
    out: Path,
    rw=None,
    bs=None,
    depth_jobs=None,
    size=None,
    runtime_s=None,
    direct=None,
    ioengine="libaio",
    filename=None,
    log_avg_msec=None,
    log_hist_msec=None,
    fio="fio",
    extra=(),
) -> list[Run]:
    """The matrix of one preset (any part overridden), each run with its exact fio command.

    Each run is one fio job ``RUNID`` with ``numjobs`` clones (group_reporting: one result per run);
    its logs are ``OUT/RUNID_{bw,iops,lat,clat,slat}.N.log`` and ``OUT/RUNID_clat_hist.N.log``
    (N = clone 1..numjobs), its output ``OUT/RUNID.txt``. The data files are fio's own per-clone
    files in ``target`` (or the one shared ``filename``), deleted at the end (unlink=1).
    """
    runs = []
    size = size or preset.size
    runtime_s = preset.runtime_s if runtime_s is None else runtime_s
    direct = preset.direct if direct is None else direct
    log_avg_msec = log_avg_msec or preset.log_avg_msec
    log_hist_msec = log_hist_msec or preset.log_hist_msec
    for r, b, qd, nj in plan_points(preset, rw, bs, depth_jobs):
        run_id = f"{r}-{b}-qd{qd}-nj{nj}".lower()
        log = str(out / run_id)
        argv = [
            fio,
            f"--name={run_id}",
            f"--directory={fio_name(target)}",
            f"--rw={r}",
            f"--bs={b}",
            f"--size={size}",
            f"--ioengine={ioengine}",
            f"--iodepth={qd}",
            f"--numjobs={nj}",
            f"--direct={direct}",
            f"--runtime={runtime_s}",
            "--time_based",
            "--group_reporting",
            "--unlink=1",
        ]
        shared = filename or (f"{run_id}.data" if preset.shared_file else None)
        if shared:
            argv.append(f"--filename={fio_name(shared)}")
        argv += [
            f"--write_bw_log={log}",
            f"--write_iops_log={log}",
            f"--write_lat_log={log}",
            f"--log_avg_msec={log_avg_msec}",
            f"--write_hist_log={log}",
            f"--log_hist_msec={log_hist_msec}",
            *preset.extra,
            *extra,
            # lat's percentiles too: where submission holds the I/O's time (btrfs on a loop device, libaio), clat's
            # are near zero and lat's are the I/O's latency (analysis/io_time.py); fio >= 2.x has the option
            "--lat_percentiles=1",
            "--output-format=normal,json+",
        ]
        runs.append(Run(run_id, r, b, qd, nj, size, runtime_s, direct, argv, bool(shared)))
    return runs
