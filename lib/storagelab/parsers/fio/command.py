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
# a Markdown write-up's lead-in to the command: a list or quote mark, then 'Command:' / 'Command line:' / 'Cmd:'
# (bold or not), then the command, often in inline code (`sudo fio ...`)
_MARKDOWN_LEAD = re.compile(
    r"^(?:[-*+>]\s+)?(?:(?:\*\*|__)?(?:fio )?(?:command(?:[ _-]?line)?|cmd)(?:\*\*|__)?\s*:(?:\*\*|__)?\s*)?`*", re.I
)


def fio_command(line: str) -> str | None:
    """The command from its ``fio`` word on (``sudo fio --bs=4k ...`` -> ``fio --bs=4k ...``), for a line that
    runs fio with at least one argument after an optional shell prompt; None for any other line. fio's
    version line (``fio-3.25``) and its report lines never start with the word ``fio`` and an argument."""
    rest = line.strip()
    if "fio" not in rest:
        return None
    lead = _MARKDOWN_LEAD.match(rest)
    if lead and lead.end():  # Markdown: '- Command: `fio ...` (as root)' -> 'fio ...'
        code = lead.group().endswith("`")
        rest = rest[lead.end() :].split("`")[0].strip() if code else rest[lead.end() :].strip()
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
    args = words[i + 1 :]
    if len(args) > 1 and not any(a.startswith("-") for a in args) and not all(re.search(r"[./\\]", a) for a in args):
        return None  # words, not options or job files: prose ('# fio on the test VM'), not a command
    if any(w.strip("`") in ("...", "\u2026") for w in args):  # an elided command ('fio --rw=x ...')
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


def commands_in(lines: list[str], first_line: int) -> list[tuple[str, int, int]]:
    """The fio command lines among ``lines`` (the first is line ``first_line``), continuation lines joined:
    (command, first line, last line) each."""
    found: list[tuple[str, int, int]] = []
    for ln, line in enumerate(lines, first_line):
        if found and found[-1][2] == ln - 1 and (joined := continued(found[-1][0], line)) is not None:
            found[-1] = (joined, found[-1][1], ln)
        elif "fio" in line and (command := fio_command(line)) is not None:
            found.append((command, ln, ln))
    return found


def paired(
    found: list[tuple[str, int, int]], output_line: int | None = None
) -> tuple[tuple[str, int, int] | None, str | None]:
    """The fio command of the output at ``output_line``, from the commands ``found`` before it (and after the
    previous output): the one command (or one command repeated), else None and a warning naming the commands not
    paired: which of several different commands printed the output is not known, and none is guessed."""
    if len({command for command, _, _ in found}) <= 1:
        return (found[-1] if found else None), None
    lines = ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for _, lo, hi in found)
    return None, (
        f"lines {lines}: {len(found)} different fio commands before one fio output"
        f"{f' (line {output_line})' if output_line else ''}: none is "
        "paired with it (which one printed it the output does not say); put the command in the manifest"
    )


def last_command(lines: list[str], first_line: int) -> tuple[str, int, int] | None:
    """The last fio command line among ``lines`` (the first is line ``first_line``), continuation lines
    joined: (command, first line, last line), or None."""
    found = commands_in(lines, first_line)
    return found[-1] if found else None
