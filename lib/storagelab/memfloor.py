"""The least address space (``ulimit -v``, RLIMIT_AS) a storagelab command needs, checked before it starts.

Below it, the failure is not Python's to report: a thread that DuckDB, Arrow, glibc or the process pool cannot
start ends the process in native code (SIGSEGV, ``std::bad_alloc``, glibc's "cannot allocate memory for
thread-local data: ABORT"), with no line of storagelab's (docs/reliability-4.md, medium 5). Measured on a 2-core
machine: from 790 to 930 MB an ingest crashed that way in some runs, from about 960 MB up every run finished or
printed its one "out of memory" line. The floor is that measurement, 1 GiB at 2 cores, and grows by 160 MiB for
each further core: DuckDB starts a thread per core, and glibc reserves a 64 MiB malloc arena for each of those
threads and the pool's (an estimate, not measured beyond 2 cores). ``STORAGELAB_MIN_ADDRESS_SPACE`` (MiB) sets
another floor; 0 switches the check off.
"""

from __future__ import annotations

import os
import resource

from .units import MiB

ENV = "STORAGELAB_MIN_ADDRESS_SPACE"
BASE_MIB, PER_CORE_MIB = 704, 160  # 704 + 2 x 160 = 1024 MiB on the 2-core machine it was measured on


def floor_bytes(cores: int | None = None) -> int:
    """The address space a command needs on a machine with ``cores`` cores (this one's by default), in bytes."""
    configured = os.environ.get(ENV, "").strip()
    if configured:
        return int(float(configured) * MiB)
    n = cores or os.cpu_count() or 1
    return int((BASE_MIB + PER_CORE_MIB * max(n, 2)) * MiB)


def too_low() -> str | None:
    """One sentence when the process's address-space limit is below the floor, else None."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    try:
        need = floor_bytes()
    except ValueError:
        return f"{ENV} must be a number of MiB, not {os.environ.get(ENV)!r}"
    if soft == resource.RLIM_INFINITY or need <= 0 or soft >= need:
        return None
    return (
        f"the address-space limit (ulimit -v {soft // 1024}) is below the {need // MiB} MiB storagelab needs on "
        f"{os.cpu_count() or 1} cores (below it DuckDB's and the worker pool's threads crash in native code): raise "
        f"it (ulimit -v {need // 1024}), or set {ENV}=MiB to try a lower floor"
    )
