"""A fio job that failed: ``fio_jobs.error`` is not 0.

fio stores in a job's ``error`` the errno of the call that failed (fio.h: ``td_verror(td, err, func)`` sets
``td->error = err`` and keeps ``strerror(err)`` as its message; the JSON prints ``"error" : ts->error``, the
normal text ``err=28``): the operating system's number, 0 when the job ran. ``ERRNO`` names the numbers of Linux
(include/uapi/asm-generic/errno-base.h 1-34, errno.h for the rest listed) with glibc's ``strerror`` text;
``tests/test_trial_h7.py`` checks it against this machine's ``errno``/``os.strerror``. On another system a number
may mean another error (FreeBSD's EDQUOT is 69): the message says the name is Linux's.

``warn`` gives one warning per file (the first failed job, and how many more failed), so a run that failed never
vanishes from the ingest without a word.
"""

from __future__ import annotations

from ..base import Parsed

ERRNO: dict[int, tuple[str, str]] = {
    1: ("EPERM", "Operation not permitted"),
    2: ("ENOENT", "No such file or directory"),
    3: ("ESRCH", "No such process"),
    4: ("EINTR", "Interrupted system call"),
    5: ("EIO", "Input/output error"),
    6: ("ENXIO", "No such device or address"),
    7: ("E2BIG", "Argument list too long"),
    8: ("ENOEXEC", "Exec format error"),
    9: ("EBADF", "Bad file descriptor"),
    10: ("ECHILD", "No child processes"),
    11: ("EAGAIN", "Resource temporarily unavailable"),
    12: ("ENOMEM", "Cannot allocate memory"),
    13: ("EACCES", "Permission denied"),
    14: ("EFAULT", "Bad address"),
    15: ("ENOTBLK", "Block device required"),
    16: ("EBUSY", "Device or resource busy"),
    17: ("EEXIST", "File exists"),
    18: ("EXDEV", "Invalid cross-device link"),
    19: ("ENODEV", "No such device"),
    20: ("ENOTDIR", "Not a directory"),
    21: ("EISDIR", "Is a directory"),
    22: ("EINVAL", "Invalid argument"),
    23: ("ENFILE", "Too many open files in system"),
    24: ("EMFILE", "Too many open files"),
    25: ("ENOTTY", "Inappropriate ioctl for device"),
    26: ("ETXTBSY", "Text file busy"),
    27: ("EFBIG", "File too large"),
    28: ("ENOSPC", "No space left on device"),
    29: ("ESPIPE", "Illegal seek"),
    30: ("EROFS", "Read-only file system"),
    31: ("EMLINK", "Too many links"),
    32: ("EPIPE", "Broken pipe"),
    33: ("EDOM", "Numerical argument out of domain"),
    34: ("ERANGE", "Numerical result out of range"),
    61: ("ENODATA", "No data available"),
    84: ("EILSEQ", "Invalid or incomplete multibyte or wide character"),
    95: ("EOPNOTSUPP", "Operation not supported"),
    110: ("ETIMEDOUT", "Connection timed out"),
    121: ("EREMOTEIO", "Remote I/O error"),
    122: ("EDQUOT", "Disk quota exceeded"),
    125: ("ECANCELED", "Operation canceled"),
}


def describe(code: int) -> str:
    """'error 28 (No space left on device)'; a number not in ``ERRNO``: 'error 300 (not a Linux errno known here)'."""
    known = ERRNO.get(code)
    return f"error {code} ({known[1]})" if known else f"error {code} (not a Linux errno known here)"


def _jobs(parsed: Parsed) -> list[tuple]:
    """(jobname, error, line_start) of the fio_jobs rows ``parsed`` holds."""
    return [(r.get("jobname"), r.get("error"), r.get("line_start")) for r in parsed.rows("fio_jobs")]


def warn(parsed: Parsed) -> Parsed:
    """``parsed`` with one warning where a job it holds has a non-zero error: the first such job, and how many
    more there are."""
    failed = [j for j in _jobs(parsed) if j[1]]
    if failed:
        name, code, line = failed[0]
        more = f"; {len(failed) - 1} more job(s) failed too (fio_jobs.error)" if len(failed) > 1 else ""
        where = f"line {line}: " if line else ""
        parsed.warnings.append(
            f"{where}fio reported {describe(code)} for job {name}: it stopped there, its results are what it did "
            f"before (none if it had not started){more}"
        )
    return parsed
