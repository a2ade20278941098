"""The fio command line of a terminal transcript: ``root@host:~# fio --name=x --rw=randread ...`` (or a bare
``fio --name=...`` line) printed before fio's output, as forum posts and pasted logs show it. The analyses
read a run's workload options (direct, size, ...) from it when fio's own output does not print them."""

from __future__ import annotations

import re

from ..base import SHELL_PROMPT

# words typed before fio that do not change what fio was asked: sudo (and its -flags), time, nice, env,
# VAR=value assignments
_WRAPPERS = frozenset(("sudo", "time", "nice", "ionice", "env", "command", "exec", "nohup"))
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Windows prompts: cmd.exe's 'C:\\Program Files\\fio>' (no space before the command) and PowerShell's 'PS C:\\Users\\me> '
_WINDOWS_PROMPT = re.compile(r"^(?:PS )?[A-Za-z]:\\[^>\n]*>\s*")


def fio_command(line: str) -> str | None:
    """The command from its ``fio`` word on (``sudo fio --bs=4k ...`` -> ``fio --bs=4k ...``), for a line that
    runs fio with at least one argument after an optional shell prompt; None for any other line. fio's
    version line (``fio-3.25``) and its report lines never start with the word ``fio`` and an argument."""
    rest = line.strip()
    if "fio" not in rest:
        return None
    m = SHELL_PROMPT.match(rest) or _WINDOWS_PROMPT.match(rest)
    if m:
        rest = rest[m.end() :].strip()
    words = rest.split()
    i = 0
    while i < len(words) and (
        words[i] in _WRAPPERS or words[i].startswith("-") and i > 0 or _ASSIGNMENT.match(words[i])
    ):
        i += 1
    if i >= len(words) - 1 or re.split(r"[/\\]", words[i])[-1].lower() not in ("fio", "fio.exe"):
        return None
    at = rest.index(words[i], sum(len(w) for w in words[:i]))
    return rest[at:]


def continued(command: str, line: str) -> str | None:
    """``command`` with the next ``line`` joined to it when that line goes on with the command: the command
    ends in a backslash (the line may start with the shell's ``> `` prompt), or the line holds only more options (``    --pool=x --size=1G``: a long command
    wrapped where it was pasted); None when the line is something else."""
    more = line.strip()
    if not more:
        return None
    if command.endswith("\\"):  # the shell shows the next line after its '> ' prompt
        return command[:-1].rstrip() + " " + (more[2:].lstrip() if more.startswith("> ") else more)
    if more.startswith("--"):
        return command + " " + more
    return None


def last_command(lines: list[str], first_line: int) -> tuple[str, int, int] | None:
    """The last fio command line among ``lines`` (the first is line ``first_line``), continuation lines
    joined: (command, first line, last line), or None."""
    found = None
    for ln, line in enumerate(lines, first_line):
        if found is not None and found[2] == ln - 1 and (joined := continued(found[0], line)) is not None:
            found = (joined, found[1], ln)
        elif "fio" in line and (command := fio_command(line)) is not None:
            found = (command, ln, ln)
    return found
