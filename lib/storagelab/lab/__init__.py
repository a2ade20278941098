"""Measure your own disks: ``storagelab lab fio | bonnie | zfs-sweep``.

* ``lab fio`` runs a matrix of fio jobs (rw modes x block sizes x (iodepth, numjobs)) against a target
  directory, each run saved verbatim (fio's normal + JSON+ output, its bw/iops/lat/clat/slat logs and
  clat histogram logs) under ``data/raw/lab/<host>/<date>/`` or ``--out``; writes each file's manifest
  row (host, OS, kernel, filesystem, devices with model, rotational flag and sector sizes, RAM, fio
  version, command, ZFS properties when the target is on ZFS, sanity flags); then ingests them.
  A run whose output exists is skipped (a re-run resumes); Ctrl-C keeps the completed runs.
* ``lab bonnie`` does the same for one bonnie++ run (file size 2 x RAM unless ``--size``).
* ``lab zfs-sweep`` is the Ars-style topology sweep: it prints every zpool/zfs/fio command and runs
  nothing without ``--yes`` and the disks named with ``--disks``; every pool it creates it destroys.

Where the manifest rows go: with the output under data/raw/ they are appended to data/raw/manifest.csv
(the one manifest the ingest reads for data/raw/); elsewhere to OUT/manifest.csv, which the lab's own
ingest uses (``storagelab ingest OUT --manifest OUT/manifest.csv`` does the same later).

The package, module by module: ``presets`` (the tests and fio command lines), ``system`` (facts about the host,
target and devices), ``manifest`` (manifest rows and sanity flags), ``fio`` (the fio matrix), ``bonnie``,
``sweep`` (the ZFS sweep) and ``cli`` (parser, checks, ``main``). The process guard is in ``storagelab.procs``.
"""

from __future__ import annotations

import subprocess  # noqa: F401  (tests patch lab.subprocess.run)

from .bonnie import _keep_bonnie, run_bonnie
from .cli import (
    _LAB_EXAMPLES,
    FIO_RW_MODES,
    LAB_EXIT_CODES,
    _csv,
    _db_ok,
    _depth_jobs,
    _fio_size,
    _fio_sizes,
    _out_ok,
    _positive_int,
    _rate,
    _repeat,
    _rw_modes,
    _target_ok,
    main,
    parser,
)
from .fio import (
    STOP_GRACE_S,
    _catch_stop_signals,
    _dies_with_us,
    _fmt_s,
    _guard,
    _guard_on,
    _guard_preexec,
    _ingest,
    _restore_signals,
    _run_files,
    _wait_for_fio,
    cache_flags,
    output_slots,
    run_fio_auto,
    run_fio_matrix,
    run_slots,
    saved_commands,
    slot_labels,
)
from .manifest import (
    _add_columns,
    _cache_effect,
    _device_text,
    _notes,
    append_manifest,
    default_out,
    manifest_for,
    manifest_row,
    sanity_flags,
)
from .presets import PRESETS, STANDARD_TESTS, Preset, Run, _size_bytes, build_runs, plan_points
from .sweep import RECORDSIZES, _all_saved, run_sweep, sweep_layouts, sweep_plan, zpool_create_argv
from .system import (
    _SECTIONS,
    _VDEV,
    _cmd,
    _read,
    _version_tuple,
    config_ashift,
    describe_device,
    describe_system,
    describe_target,
    pool_layout,
    ram_bytes,
    zfs_version,
)

__all__ = [
    "FIO_RW_MODES",
    "LAB_EXIT_CODES",
    "PRESETS",
    "Preset",
    "RECORDSIZES",
    "Run",
    "STANDARD_TESTS",
    "STOP_GRACE_S",
    "_LAB_EXAMPLES",
    "_SECTIONS",
    "_VDEV",
    "_add_columns",
    "_all_saved",
    "_cache_effect",
    "_catch_stop_signals",
    "_cmd",
    "_csv",
    "_db_ok",
    "_depth_jobs",
    "_device_text",
    "_dies_with_us",
    "_fio_size",
    "_fio_sizes",
    "_fmt_s",
    "_guard",
    "_guard_on",
    "_guard_preexec",
    "_ingest",
    "_keep_bonnie",
    "_notes",
    "_out_ok",
    "_positive_int",
    "_rate",
    "_read",
    "_repeat",
    "_restore_signals",
    "_run_files",
    "_rw_modes",
    "_size_bytes",
    "_target_ok",
    "_version_tuple",
    "_wait_for_fio",
    "append_manifest",
    "build_runs",
    "cache_flags",
    "config_ashift",
    "default_out",
    "describe_device",
    "describe_system",
    "describe_target",
    "main",
    "manifest_for",
    "manifest_row",
    "output_slots",
    "parser",
    "plan_points",
    "pool_layout",
    "ram_bytes",
    "run_bonnie",
    "run_fio_auto",
    "run_fio_matrix",
    "run_slots",
    "run_sweep",
    "sanity_flags",
    "saved_commands",
    "slot_labels",
    "sweep_layouts",
    "sweep_plan",
    "zfs_version",
    "zpool_create_argv",
]
