"""``storagelab lab zfs-sweep``: the Ars-style ZFS topology sweep (pools created, measured with fio, destroyed)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from ..terminal import show
from .fio import run_fio_matrix, run_slots, saved_commands
from .manifest import manifest_for
from .presets import PRESETS, build_runs

RECORDSIZES = {"4K": 4096, "128K": 131072, "1M": 1048576}


def sweep_layouts(disks: list[str]) -> list[dict]:
    """Ars-style layouts over the named disks, in order: 1 disk; 2..N single-disk vdevs; 1..N/2 two-way
    mirrors; raidz1 of width 3..N; raidz2 of width 4..N (one vdev each)."""
    n = len(disks)
    out = [dict(vdev_type="single", vdev_count=1, vdev_width=1, vdevs=[[disks[0]]])]
    for k in range(2, n + 1):
        out.append(dict(vdev_type="single", vdev_count=k, vdev_width=1, vdevs=[[d] for d in disks[:k]]))
    for k in range(1, n // 2 + 1):
        out.append(
            dict(vdev_type="mirror", vdev_count=k, vdev_width=2, vdevs=[disks[2 * i : 2 * i + 2] for i in range(k)])
        )
    for kind, least in (("raidz1", 3), ("raidz2", 4)):
        for w in range(least, n + 1):
            out.append(dict(vdev_type=kind, vdev_count=1, vdev_width=w, vdevs=[disks[:w]]))
    return out


def zpool_create_argv(pool: str, layout: dict, ashift: int) -> list[str]:
    argv = [
        "zpool",
        "create",
        "-f",
        "-o",
        f"ashift={ashift}",
        "-O",
        "compression=off",
        "-O",
        "atime=off",
        "-m",
        f"/{pool}",
        pool,
    ]
    for vdev in layout["vdevs"]:
        if layout["vdev_type"] != "single":
            argv.append(layout["vdev_type"])
        argv += vdev
    return argv


def sweep_plan(
    disks: list[str],
    *,
    pool: str = "labsweep",
    ashift: int = 12,
    recordsizes=("4K", "128K", "1M"),
    presets=None,
    out: Path,
    size=None,
    runtime_s=None,
    fio="fio",
) -> list[dict]:
    """Every step of the sweep: per layout, the zpool create, then per recordsize a zfs create/set and the
    fio runs, then zpool destroy. ``presets`` maps recordsize -> preset names (default: ars-4k at 4K,
    ars-1m at 1M, both at 128K, ZFS's default)."""
    presets = presets or {"4K": ("ars-4k",), "128K": ("ars-4k", "ars-1m"), "1M": ("ars-1m",)}
    plan = []
    for layout in sweep_layouts(disks):
        name = f"{layout['vdev_type']}-{layout['vdev_count']}x{layout['vdev_width']}"
        steps = [("zpool", zpool_create_argv(pool, layout, ashift))]
        runs_by_rs = []
        for rs in recordsizes:
            ds = f"{pool}/rs{rs.lower()}"
            steps.append(("zfs", ["zfs", "create", ds]))
            steps.append(("zfs", ["zfs", "set", f"recordsize={rs}", ds]))
            run_out = out / name / f"rs{rs.lower()}"
            runs = []
            for pname in presets.get(rs, ()):
                runs += build_runs(
                    PRESETS[pname], target=Path(f"/{ds}"), out=run_out, size=size, runtime_s=runtime_s, fio=fio
                )
            for r in runs:
                steps.append(("fio", r.argv))
            runs_by_rs.append((rs, ds, run_out, runs))
        steps.append(("zpool", ["zpool", "destroy", pool]))
        plan.append(dict(name=name, layout=layout, steps=steps, runs=runs_by_rs))
    return plan


def _all_saved(item: dict) -> bool:
    """Every fio run of one layout of the sweep already saved with its command (a re-run skips the layout)."""
    for _rs, _ds, run_out, runs in item["runs"]:
        saved = saved_commands(manifest_for(run_out))
        if not all(done for r in runs for _, done in run_slots(r, run_out, saved, log=lambda *a: None)):
            return False
    return True


def run_sweep(plan: list[dict], *, pool: str, ashift: int, db: Path | None, log=show) -> int:
    """Run the plan layout by layout; each pool is destroyed after its runs, also when a step fails or on Ctrl-C.
    A failed zpool/zfs step or Ctrl-C stops the sweep (status 1 or 130); a failed fio run does not (status 1).
    Layouts whose runs are all saved are skipped without creating their pool (a re-run resumes)."""
    rc = 0
    for item in plan:
        lay = item["layout"]
        if _all_saved(item):
            log(f"sweep: {item['name']}: every run already saved: skipped (resume)")
            continue
        create = item["steps"][0][1]
        log(f"sweep: {item['name']}: {shlex.join(create)}")
        try:
            subprocess.run(create, check=True)
        except subprocess.CalledProcessError as e:
            log(
                f"sweep: {item['name']}: zpool create failed (status {e.returncode}): sweep stopped, nothing to destroy"
            )
            return 1
        except KeyboardInterrupt:
            log(f"sweep: interrupted during zpool create: sweep stopped (check `zpool list {pool}`)")
            return 130
        stop = 0
        try:
            for rs, ds, run_out, runs in item["runs"]:
                step = ["zfs", "create", ds]
                subprocess.run(step, check=True)
                step = ["zfs", "set", f"recordsize={rs}", ds]
                subprocess.run(step, check=True)
                labels = dict(
                    vdev_type=lay["vdev_type"],
                    vdev_count=lay["vdev_count"],
                    vdev_width=lay["vdev_width"],
                    recordsize_bytes=RECORDSIZES[rs],
                    ashift=ashift,
                    pool=pool,
                )
                r = run_fio_matrix(runs, target=Path(f"/{ds}"), out=run_out, db=db, labels=labels, log=log)
                if r == 130:
                    stop = 130
                    break
                rc = max(rc, r)
        except subprocess.CalledProcessError as e:
            log(f"sweep: {item['name']}: {shlex.join(step)} failed (status {e.returncode}): sweep stopped")
            stop = 1
        except KeyboardInterrupt:
            log(f"sweep: {item['name']}: interrupted: sweep stopped")
            stop = 130
        finally:
            gone = subprocess.run(["zpool", "destroy", pool])
            if gone.returncode == 0:
                log(f"sweep: {item['name']}: zpool destroy {pool}")
            else:
                log(
                    f"sweep: {item['name']}: zpool destroy {pool} failed (status {gone.returncode}): destroy it by hand"
                )
                stop = stop or 1
        if stop:
            return stop
    return rc
