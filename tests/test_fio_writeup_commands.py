"""A Markdown write-up's command beside the pasted fio output (``**Command:** `sudo fio ...` ``, ``Command: fio ...``,
a fenced block): read as the run's command line when it is the one command before the output, never guessed among
several. Real output: fixtures/fio/writeup-commands (fio 3.33 run here, COMMANDS.md); the parametrised lines are
from published write-ups found with the code index (ids in the comments)."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, ingest_unlabelled

from storagelab.analysis import Selection, fio_runs, open_db
from storagelab.parsers import parse_bytes
from storagelab.parsers.fio.command import fio_command

D = FIXTURES / "fio" / "writeup-commands"
TEXT = D / "writeup-fio-command.txt"
JSON = D / "writeup-fio-command-json.txt"
RW4K = (
    "fio --name=rw4k --directory=/tmp/h6lo/fio --rw=randwrite --bs=4k --size=16M --ioengine=libaio --direct=1 "
    "--iodepth=4 --time_based --runtime=2"
)
NOT_PAIRED = (
    "lines 52, 53: 2 different fio commands before one fio output: none is paired with it (which one printed it the "
    "output does not say); put the command in the manifest"
)


@pytest.mark.parametrize(
    "line, command",
    [
        (  # index id 52272807514 (a FUSE file system's benchmark page)
            "**Command:** `fio --name=psfs_randrw --directory=/tmp/psfs_mnt --ioengine=sync --rw=randrw --bs=4k "
            "--numjobs=1 --size=20M`",
            "fio --name=psfs_randrw --directory=/tmp/psfs_mnt --ioengine=sync --rw=randrw --bs=4k --numjobs=1 "
            "--size=20M",
        ),
        (  # index id 56745607983 (a benchmark protocol's list item)
            "- Fio command: `fio --name=frozen_randrw_4k_fdatasync --ioengine=psync --rw=randrw --bs=4k --direct=0`",
            "fio --name=frozen_randrw_4k_fdatasync --ioengine=psync --rw=randrw --bs=4k --direct=0",
        ),
        # elided with '...' (index ids 46226729768, 46328798770): not the command that ran
        ("**Command:** `fio --name=randwrite --ioengine=libaio ... --directory=/mnt/storage`", None),
        ("* **Command:** `fio --name=readtest --rw=read --bs=1m ...`", None),
        ("# fio on the test VM (ext4 on /dev/vda)", None),  # a Markdown heading, not a root prompt's command
        ("Command: sudo fio --name=sync1 --rw=write --fsync=1", "fio --name=sync1 --rw=write --fsync=1"),
        ("**Command:** `sudo fio --name=a --direct=1` (as root)", "fio --name=a --direct=1"),
    ],
)
def test_writeup_command_lines(line, command):
    assert fio_command(line) == command


def test_text_writeup_pairs_one_command_and_names_the_unpaired():
    parsed, _ = parse_bytes(TEXT.read_bytes(), str(TEXT))
    assert parsed.rows("fio_commands") == [
        {"doc_index": 0, "command": RW4K, "line_start": 5, "line_end": 5},
        {"doc_index": 1, "command": None, "line_start": 52, "line_end": 53},
    ]
    assert parsed.warnings == [NOT_PAIRED]


def test_json_writeup_command_line():
    parsed, _ = parse_bytes(JSON.read_bytes(), str(JSON))
    assert [(r["command"], r["line_start"]) for r in parsed.rows("fio_commands")] == [
        (
            "fio --name=sync1 --directory=/tmp/h6lo/fio --rw=write --bs=4k --size=8M --ioengine=sync --fsync=1 "
            "--time_based --runtime=2 --output-format=json",
            3,
        )
    ]
    assert parsed.warnings == []


def test_runs_take_the_writeup_command_and_never_the_previous_runs(tmp_path):
    db = ingest_unlabelled([TEXT], tmp_path)
    con = open_db(db)
    try:
        runs = fio_runs.runs(con, Selection()).sort("doc_index")
    finally:
        con.close()
    assert runs.select("command", "wl_direct", "wl_size", "workload").rows() == [
        (RW4K, "1", "16777216", "randwrite bs=4KiB iodepth=4 numjobs=1 libaio direct=1 size=16MiB runtime=2s"),
        # two commands before it, neither paired: direct= stays unknown (and run 1's command is not lent to it)
        (None, None, "33554432", "read bs=1MiB iodepth=1 numjobs=1 psync direct=? size=32MiB runtime=?"),
    ]


def test_json_after_two_different_commands_pairs_neither():
    """The JSON write-up with a second, different command pasted above its command line: which one printed the
    document is not known, so neither is its command (a NULL row stops an earlier one being lent), and the warning
    names both lines."""
    text = "Command: fio --name=other --rw=read\n" + JSON.read_text()
    parsed, _ = parse_bytes(text.encode(), "two-commands.txt")
    assert parsed.rows("fio_commands") == [{"doc_index": 0, "command": None, "line_start": 1, "line_end": 4}]
    assert parsed.warnings == [
        "lines 1, 4: 2 different fio commands before one fio output (line 7): none is paired with it (which one "
        "printed it the output does not say); put the command in the manifest"
    ]
