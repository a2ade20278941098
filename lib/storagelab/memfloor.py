"""The least address space (``ulimit -v``, RLIMIT_AS) a storagelab command needs, checked before it starts.

Below it, the failure is not Python's to report: a thread that DuckDB, Arrow, glibc or the process pool cannot
start ends the process in native code (SIGSEGV, ``std::bad_alloc``, glibc's "cannot allocate memory for
thread-local data: ABORT"), with no line of storagelab's (docs/reliability-4.md, medium 5). Measured on a 2-core
machine: from 790 to 930 MB an ingest crashed that way in some runs (reliability-4), and once in 17 runs at
1,060,000 kB = 1035 MiB, just above the first floor of 1 GiB (docs/reliability-5-store.md, medium 3). A sweep of
300 ingests at 1024, 1100 and 1180 MiB (docs/reliability-5-scripts/memfloor-sweep.py.txt) had no abort: each ended
whole or with its one "out of memory" line. The sixth campaign saw 2 aborts in 7 runs at 1,060,000 kB
(docs/reliability-6-store.md), below this floor. The floor is 1180 MiB at 2 cores: the highest value swept, 14 % above
the highest abort seen (the margin the first floor had over reliability-4's), and grows by 160 MiB for each further
core: DuckDB starts a thread per core, and glibc reserves a 64 MiB malloc arena for each of those threads and the
pool's (an estimate, not measured beyond 2 cores). ``STORAGELAB_MIN_ADDRESS_SPACE`` (MiB) sets
another floor; 0 switches the check off.

The commands that draw charts (``run``, ``notebooks``, ``report``, ``build``) need far more: vl-convert, which draws
every chart (in the notebooks' kernels, and in the report's pages), runs V8, whose garbage collector (Oilpan)
reserves its "caged heap" of address space when it starts, and aborts the process (SIGTRAP, exit 133, a 40-line C
stack trace: "Fatal process out of memory: Oilpan: CagedHeap reservation") when the limit does not leave room.
Measured (docs/reliability-5-processes.md, vl-convert-python 1.9.0): ``ulimit -v`` of 64 GiB and less crashed,
66 GiB and more drew. Reserved address space is not memory used: the limit that lets it through costs nothing.
That is vl-convert alone: a notebook's kernel also holds DuckDB, polars and ipykernel, whose threads and arenas need
the rest of storagelab's own floor beside V8's cage. At the 66 GiB floor `run 07_explore` lost its kernel
("DeadKernelError: Kernel died", V8's CagedHeap abort underneath), and at 66.5 GiB too; 67 GiB ran
(docs/reliability-6-processes.md). So the charts' floor is V8's 66 GiB, plus storagelab's own floor (1180 MiB at 2
cores, more with each core), plus 1 GiB of margin: 68.2 GiB on 2 cores.
"""

from __future__ import annotations

import os
import resource

from .units import MiB

ENV = "STORAGELAB_MIN_ADDRESS_SPACE"
BASE_MIB, PER_CORE_MIB = 860, 160  # 860 + 2 x 160 = 1180 MiB on the 2-core machine it was measured on
V8_CAGE_MIB = 66 * 1024  # vl-convert's V8 alone (see above): 64 GiB crashed, 66 GiB drew
MARGIN_MIB = 1024
DRAWS_CHARTS = frozenset({"run", "notebooks", "report", "build"})


def floor_bytes(cores: int | None = None, command: str | None = None) -> int:
    """The address space ``command`` needs on a machine with ``cores`` cores (this one's by default), in bytes."""
    configured = os.environ.get(ENV, "").strip()
    if configured:
        return int(float(configured) * MiB)
    n = cores or os.cpu_count() or 1
    own = BASE_MIB + PER_CORE_MIB * max(n, 2)
    if command in DRAWS_CHARTS:  # V8's cage beside what the rest of the kernel needs (see above)
        return (V8_CAGE_MIB + own + MARGIN_MIB) * MiB
    return int(own * MiB)


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
