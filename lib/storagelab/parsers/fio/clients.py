"""fio's client/server reports (``fio --client=HOST job.fio --output-format=json``; fio client.c): the jobs come
in "client_stats", each with the server's "hostname" and "port", and when there is more than one job fio adds an
"All clients" object, the sum of every job of every server, reads and writes alike, which has no "job options".
Both the general path (json.py) and the fast path (fastjson.py) read them by these rules."""

from __future__ import annotations

from ...errors import ParseError

SUM_NAME = "All clients"


def summed_index(jobs: list) -> int | None:
    """The index of fio's "All clients" sum (the last object), None when there is none (one job; a job of the
    user's named so has its "job options")."""
    last = len(jobs) - 1
    if last > 0 and type(jobs[last]) is dict and jobs[last].get("jobname") == SUM_NAME:
        return None if "job options" in jobs[last] else last
    return None


def servers(jobs: list, summed: int | None) -> list[str]:
    """The servers ("hostname:port") whose jobs the report holds, the sum left out."""
    return sorted(
        {f"{j.get('hostname')}:{j.get('port')}" for i, j in enumerate(jobs) if type(j) is dict and i != summed}
    )


def refusal(found: list[str], line: int) -> ParseError | None:
    """A report of several servers is refused: a file is one host's runs, and each server's "global options" come as
    one more copy of the keys of one object, so which server's options a job ran with would be a guess."""
    if len(found) <= 1:
        return None
    return ParseError(
        f"a fio client/server report of {len(found)} servers ({', '.join(found)[:200]}): a file holds one host's runs "
        "here",
        line=line,
        kind="unsupported-version",
        expected="one report per server (fio --client=HOST, once for each)",
    )


def warning(line: int, found: list[str], summed: int | None) -> str:
    """The warning a stored client/server report carries: the server, and the sum not stored."""
    left_out = f'; its "{SUM_NAME}" sum of every job is not stored' if summed is not None else ""
    return f"line {line}: a fio client/server report: its jobs ran on the fio server {', '.join(found)}{left_out}"
