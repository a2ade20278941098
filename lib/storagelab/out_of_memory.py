"""Running out of memory, recognised in whatever form a failure reports it, and what to tell the user."""

from __future__ import annotations

import resource

MEMORY_HINT = "raise the memory limit (ulimit -v), or give fewer files at a time or fewer --workers"


def is_out_of_memory(e: BaseException) -> bool:
    """Running out of memory, as Python, DuckDB or a process pool report it (a worker killed by the limit), or a
    native library's SystemError under an address-space limit (``address_space_limited``)."""
    from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415  (only to recognise a broken pool after a failure)

    import duckdb  # noqa: PLC0415  (kept out of the CLI's start-up (65 ms))

    return (
        isinstance(e, (MemoryError, BrokenProcessPool, duckdb.OutOfMemoryException))
        or (isinstance(e, SystemError) and address_space_limited())
        or (e.__cause__ is not None and is_out_of_memory(e.__cause__))
    )


def address_space_limited() -> bool:
    """``ulimit -v`` is set: a native library that cannot allocate may then return an error without an exception
    (CPython's SystemError "error return without exception set", seen in DuckDB's table creation at 890,000 kB),
    which is running out of memory as that library reports it. Without a limit a SystemError stays a traceback."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft != resource.RLIM_INFINITY
