"""The least address space (``ulimit -v``, RLIMIT_AS) a storagelab command needs, checked before it starts.

Below it, the failure is not Python's to report: a thread that DuckDB, Arrow, glibc or the process pool cannot
start ends the process in native code (SIGSEGV, ``std::bad_alloc``, glibc's "cannot allocate memory for
thread-local data: ABORT"), with no line of storagelab's (docs/reliability-4.md, medium 5). Measured on a 2-core
machine: from 790 to 930 MB an ingest crashed that way in some runs, from about 960 MB up every run finished or
printed its one "out of memory" line. The floor was set there, 1 GiB at 2 cores; just above it an ingest still
aborted in native code now and then (``std::bad_alloc``, exit 134: 1 of 17 runs near 1,060,000 kB in
docs/reliability-5-store.md medium 3, 2 of 7 at 1,060,000 kB in docs/reliability-6-store.md, none in 5 runs at
1,120,000 kB), so it is now 1152 MiB (1,179,648 kB) at 2 cores, and grows by 160 MiB for each further core: DuckDB starts a thread per core, and glibc reserves a 64 MiB malloc arena for each of those
threads and the pool's (an estimate, not measured beyond 2 cores). ``STORAGELAB_MIN_ADDRESS_SPACE`` (MiB) sets
another floor; 0 switches the check off.

The commands that draw charts (``run``, ``notebooks``, ``report``, ``build``) need far more: vl-convert, which draws
every chart (in the notebooks' kernels, and in the report's pages), runs V8, whose garbage collector (Oilpan)
reserves its "caged heap" of address space when it starts, and aborts the process (SIGTRAP, exit 133, a 40-line C
stack trace: "Fatal process out of memory: Oilpan: CagedHeap reservation") when the limit does not leave room.
Measured (docs/reliability-5-processes.md, vl-convert-python 1.9.0): ``ulimit -v`` of 64 GiB and less crashed,
66 GiB and more drew. Reserved address space is not memory used: the limit that lets it through costs nothing.
"""

from __future__ import annotations

import os
import resource

from .units import MiB

ENV = "STORAGELAB_MIN_ADDRESS_SPACE"
BASE_MIB, PER_CORE_MIB = 832, 160  # 832 + 2 x 160 = 1152 MiB on the 2-core machine it was measured on
CHARTS_MIB = 66 * 1024  # vl-convert's V8 (see above): 64 GiB crashed, 66 GiB drew
DRAWS_CHARTS = frozenset({"run", "notebooks", "report", "build"})


def floor_bytes(cores: int | None = None, command: str | None = None) -> int:
    """The address space ``command`` needs on a machine with ``cores`` cores (this one's by default), in bytes."""
    configured = os.environ.get(ENV, "").strip()
    if configured:
        return int(float(configured) * MiB)
    if command in DRAWS_CHARTS:
        return CHARTS_MIB * MiB
    n = cores or os.cpu_count() or 1
    return int((BASE_MIB + PER_CORE_MIB * max(n, 2)) * MiB)


def too_low(command: str | None = None) -> str | None:
    """One sentence when the process's address-space limit is below the floor ``command`` needs, else None."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    try:
        need = floor_bytes(command=command)
    except ValueError:
        return f"{ENV} must be a number of MiB, not {os.environ.get(ENV)!r}"
    if soft == resource.RLIM_INFINITY or need <= 0 or soft >= need:
        return None
    if command in DRAWS_CHARTS and not os.environ.get(ENV, "").strip():
        return (
            f"the address-space limit (ulimit -v {soft // 1024}) is below the {need // MiB} MiB that drawing charts "
            f"needs: vl-convert's JavaScript engine (V8) reserves that much address space when it starts (not memory "
            f"used), and aborts the process below it; raise the limit (ulimit -v {need // 1024}, or unlimited), or set "
            f"{ENV}=MiB to try a lower floor"
        )
    return (
        f"the address-space limit (ulimit -v {soft // 1024}) is below the {need // MiB} MiB storagelab needs on "
        f"{os.cpu_count() or 1} cores (below it DuckDB's and the worker pool's threads crash in native code): raise "
        f"it (ulimit -v {need // 1024}), or set {ENV}=MiB to try a lower floor"
    )
