"""A later section of one transcript that another parser reads: the output of a second command pasted after the
first (``arcstat 1`` then ``zpool iostat -vl 1``; ``zpool iostat -r`` then ``zpool iostat -l``).

The parser of the first section stops where its output ends and hands the rest of the lines to the parser of the
second, with the lines before them blank, so that its rows keep the file's own line numbers. Its rows and warnings
join the first parser's, with a warning naming the lines it read; if it cannot read them, a warning names the
lines left unread and why, and the first section's rows are kept (one later section never loses the file).
"""

from __future__ import annotations

from collections.abc import Callable

from .base import SHELL_PROMPT, Parsed, ParseError, Tuples

# commands whose parser reads the output that follows them and hands a later command's on (arcstats.py): a
# transcript that opens with one is that parser's file, never the later command's parser's
FIRST_READS = ("arcstat",)


def opens_with_other(lines: list[str]) -> bool:
    """Whether the first non-blank line is the prompt line of a ``FIRST_READS`` command."""
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    m = SHELL_PROMPT.match(first)
    command = first[m.end() :].split() if m else []
    return bool(command) and command[0 if command[0] != "sudo" else min(1, len(command) - 1)] in FIRST_READS


def rest(parsed: Parsed, lines: list[str], start: int, parse: Callable[[str], Parsed], what: str) -> None:
    """Lines ``start``.. (1-based) of ``lines`` read by ``parse`` (text in, Parsed out) into ``parsed``; ``what``
    names the output ('zpool iostat output') in the warning."""
    end = max((i for i, ln in enumerate(lines, 1) if ln.strip()), default=start)
    text = "\n" * (start - 1) + "\n".join(lines[start - 1 :])
    try:
        other = parse(text)
    except ParseError as e:
        parsed.warnings.append(
            f"lines {start}-{end}: {what} after the {parsed.format} output not read ({e.message}, line {e.line}): "
            "save it in its own file"
        )
        return
    for name, rows in other.tables.items():
        mine = parsed.tables.get(name)
        if mine is None:
            parsed.tables[name] = rows
        elif isinstance(rows, Tuples) or isinstance(mine, Tuples):
            raise TypeError(f"{name}: rows of two sections of one file held as tuples")  # no such parser pair yet
        else:
            mine.extend(rows)
    parsed.warnings += other.warnings
    parsed.warnings.append(f"lines {start}-{end}: read as {what} ({other.format}), after the {parsed.format} output")
