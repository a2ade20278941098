"""The fio command line a terminal transcript shows before a run (``root@host:~# fio --name=x --size=4G ...``):
stored in ``fio_commands`` and read by the analyses for the options fio's text output does not print (direct,
size, ...), when the manifest gives no command. Real output: fixtures/fio/3.33/transcript_text.txt and
transcript_json.txt (two runs each, prompts and continued command lines; COMMANDS.md), and the published
fixtures/fio/2.2.10/rbd-read-wrapped-diskstats.txt (a CentOS prompt, the command wrapped onto a second line)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from storagelab.analysis import Selection, fio_runs, fio_views, open_db
from storagelab.parsers import parse_bytes
from storagelab.parsers.fio.command import continued, fio_command
from storagelab.store import ingest

FIX = Path(__file__).resolve().parent / "fixtures" / "fio"
TEXT = FIX / "3.33" / "transcript_text.txt"
JSON = FIX / "3.33" / "transcript_json.txt"
WRAPPED = FIX / "2.2.10" / "rbd-read-wrapped-diskstats.txt"


@pytest.mark.parametrize(
    "line, command",
    [
        ("root@truenas[/mnt/tank]# fio --rw=write --size=22m", "fio --rw=write --size=22m"),  # csh (TrueNAS)
        ("user@host:~/x$ fio --name=a", "fio --name=a"),
        ("[root@node74 ~]# fio --name=vol --bs=256K", "fio --name=vol --bs=256K"),
        ("user@gentoo ~ $ fio job.fio", "fio job.fio"),
        ("gentoo ~ # fio --name=b", "fio --name=b"),
        ("$ sudo -E fio --name=c --direct=1", "fio --name=c --direct=1"),
        ("# time fio --name=d", "fio --name=d"),
        ("% FIO_X=1 /usr/local/bin/fio --name=e", "/usr/local/bin/fio --name=e"),
        ("fio --randrepeat=1 --ioengine=libaio --direct=1", "fio --randrepeat=1 --ioengine=libaio --direct=1"),
        ("fio-3.25", None),  # fio's version line
        ("fio", None),
        ("$ fio", None),  # no argument: not a run
        ("$ echo fio --name=x", None),
        ("$ cat fio.txt", None),
        ("mytest: (g=0): rw=write, bs=(R) 4096B-4096B, ioengine=sync, iodepth=1", None),
        ("  READ: bw=1000KiB/s (1024kB/s), io=10.0MiB (10.5MB), run=10240-10240msec", None),
    ],
)
def test_fio_command(line, command):
    assert fio_command(line) == command


def test_continued_lines():
    assert continued("fio --a=1 \\", "> --b=2") == "fio --a=1 --b=2"  # bash's '> ' prompt after a backslash
    assert continued("fio --a=1 \\", "    --b=2 --c") == "fio --a=1 --b=2 --c"
    assert continued("fio --a=1", "        --pool=x") == "fio --a=1 --pool=x"  # a wrapped paste
    assert continued("fio --a=1", "seqwrite: (g=0): rw=write") is None
    assert continued("fio --a=1 \\", "") is None


def _commands(path: Path) -> list[tuple]:
    parsed, _ = parse_bytes(path.read_bytes(), path.name)
    assert parsed.warnings == []
    return [(r["doc_index"], r["command"], r["line_start"], r["line_end"]) for r in parsed.rows("fio_commands")]


def test_text_transcript():
    assert _commands(TEXT) == [
        (0, "fio --name=seqwrite --rw=write --bs=128k --size=16M --end_fsync=1", 1, 1),
        (1, "fio --name=randwrite --rw=randwrite --bs=4k --size=4M --iodepth=4 --ioengine=libaio --direct=1", 30, 31),
    ]
    parsed, _ = parse_bytes(TEXT.read_bytes(), TEXT.name)  # the two runs are two runs, each final
    assert [(j["jobname"], j["doc_index"], j["is_final"]) for j in parsed.rows("fio_jobs")] == [
        ("seqwrite", 0, True),
        ("randwrite", 1, True),
    ]


def test_json_transcript():
    assert _commands(JSON) == [
        (0, "fio --name=seqread --rw=read --bs=64k --size=8M --direct=0 --output-format=json", 1, 1),
        (1, "fio --name=randread --rw=randread --bs=4k --size=4M --ioengine=psync --output-format=json", 270, 271),
    ]
    parsed, _ = parse_bytes(JSON.read_bytes(), JSON.name)
    assert [(j["jobname"], j["doc_index"], j["is_final"]) for j in parsed.rows("fio_jobs")] == [
        ("seqread", 0, True),
        ("randread", 1, True),
    ]


def test_wrapped_published_command():
    assert _commands(WRAPPED) == [
        (
            0,
            "fio --name=vol_base_test --numjobs=1 --ioengine=rbd --rw=read --direct=1 --bs=256K --iodepth=1 --size=1G "
            "--pool=.disk01.rbd --rbdname=vol0 --group_reporting=1",
            1,
            2,
        )
    ]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    for f in (TEXT, JSON, WRAPPED):
        shutil.copy(f, raw / f.name)
    # the manifest's command wins over the log's: here it says --size=2G for the wrapped rbd run
    (raw / "manifest.csv").write_text(
        "path,label,command\n"
        "transcript_text.txt,text,\n"
        "transcript_json.txt,json,\n"
        f"{WRAPPED.name},rbd,fio --name=vol_base_test --ioengine=rbd --rw=read --direct=1 --bs=256K --size=2G\n"
    )
    dest = raw.parent / "commands.duckdb"
    s = ingest([raw], db_path=dest, parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (3, 0), s.errors
    return dest


def test_runs_read_each_runs_own_command(db):
    with open_db(db) as con:
        df = fio_runs.runs(con, Selection())
    got = [(r["label"], r["doc_index"], r["workload"], r["workload_source"]) for r in df.iter_rows(named=True)]
    assert got == [  # by path
        ("rbd", 0, "read bs=256KiB iodepth=1 numjobs=1 rbd direct=1 size=2GiB runtime=none", "command+output"),
        ("json", 0, "read bs=64KiB iodepth=1 numjobs=1 ioengine=? direct=0 size=8MiB runtime=none", "output"),
        ("json", 1, "randread bs=4KiB iodepth=1 numjobs=1 psync direct=0 size=4MiB runtime=none", "output"),
        # text output prints neither direct nor size: the command line before each run gives them
        ("text", 0, "write bs=128KiB iodepth=1 numjobs=1 psync direct=0 size=16MiB runtime=none", "command+output"),
        ("text", 1, "randwrite bs=4KiB iodepth=4 numjobs=1 libaio direct=1 size=4MiB runtime=none", "command+output"),
    ]


def test_per_job_view_reads_the_command_too(db):
    with open_db(db) as con:
        jobs = fio_views.load_summary(con)
    commands = {(r["jobname"], r["command"]) for r in jobs.iter_rows(named=True)}
    assert (
        "randwrite",
        "fio --name=randwrite --rw=randwrite --bs=4k --size=4M --iodepth=4 --ioengine=libaio --direct=1",
    ) in commands
    assert (
        "vol_base_test",
        "fio --name=vol_base_test --ioengine=rbd --rw=read --direct=1 --bs=256K --size=2G",
    ) in commands


@pytest.mark.parametrize(
    "line, command",
    [
        # cmd.exe, published: https://github.com/MysticFoxDE/WINDOWS-OPTIMIZATIONS/issues/9 (fio-3.20, 2023)
        (r"C:\Program Files\fio>fio rndtest", "fio rndtest"),
        # PowerShell (the prompt a PowerShell window shows before the command of axboe/fio issue 1364, fio-3.27)
        (
            r"PS C:\Users\lsg> fio.exe -bs=64k -ioengine=windowsaio -iodepth=1 -direct=1 -rw=read -name=fio-multi-file",
            "fio.exe -bs=64k -ioengine=windowsaio -iodepth=1 -direct=1 -rw=read -name=fio-multi-file",
        ),
        (r"C:\tools\fio\fio.exe --name=x --rw=read", r"C:\tools\fio\fio.exe --name=x --rw=read"),
        (r"C:\Users\me>echo fio --name=x", None),
    ],
)
def test_windows_prompts(line, command):
    assert fio_command(line) == command


def test_windows_prompt_line_before_a_report_is_kept_in_fio_commands():
    """The published cmd.exe line (above) put before a real fio 3.33 text report (tests/fixtures/fio/3.33): the run
    keeps it as its command, as it keeps a Unix prompt line."""
    from conftest import FIXTURES

    from storagelab.parsers import parse_text

    body = (FIXTURES / "fio" / "3.33" / "normal_only.txt").read_text()
    parsed, _ = parse_text("C:\\Program Files\\fio>fio rndtest\n" + body)
    assert parsed.rows("fio_commands") == [{"doc_index": 0, "command": "fio rndtest", "line_start": 1, "line_end": 1}]
