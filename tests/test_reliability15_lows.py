"""The open lows of issue 26's campaigns (docs/reliability-15-lows.md), each doing what the attack did."""

from __future__ import annotations

import os
import subprocess

import duckdb
import pytest

from storagelab import cli, report


def test_sqls_duckdb_error_is_printed_as_its_lines_not_with_literal_backslash_n(tmp_path, capsys):
    """`sql` printed DuckDB's error as one line with `\\n` in it: the caret no longer stood under the place."""
    db = tmp_path / "e.duckdb"
    duckdb.connect(str(db)).close()
    assert cli.main(["sql", "--db", str(db), "select nosuch from range(3)"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        'storagelab sql: Binder Error: Referenced column "nosuch" not found in FROM clause!',
        'Candidate bindings: "range"',
        "",
        "LINE 1: select nosuch from range(3)",
        "               ^^^^^^",
    ]


def test_run_with_a_misspelt_study_is_refused_naming_the_studies_before_any_notebook_runs(seed_db, tmp_path, capsys):
    """`run -p study <misspelt>` ran the notebook on no data and ended 0, saying so only inside the report."""
    out = tmp_path / "out"
    argv = ["run", "07_explore", "-p", "study", "homelab-mergrefs", "-p", "db_path", str(seed_db), "--output", str(out)]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == (
        f"storagelab run: -p study 'homelab-mergrefs': no file in {seed_db} is labelled with this study, and no paper "
        "is (studies labelled in it: freebsd-bonnie-dedup, homelab-mergerfs, thumper-x4500; papers: ars-zfs-vs-raid, "
        "freebsd-bonnie-dedup, homelab-mergerfs, thumper-x4500)\n"
    )
    assert not out.exists()
    # a paper's study and the files without a study are selections, not typos
    assert report.unknown_study({"study": "ars-zfs-vs-raid", "db_path": str(seed_db)}) is None
    assert report.unknown_study({"study": "(unlabelled)", "db_path": str(seed_db)}) is None


@pytest.mark.parametrize("argv", [["sql", "--db", "e.duckdb", "select 1"], ["ingest", "x.txt", "--db", "t.duckdb"]])
def test_a_command_run_in_a_removed_working_folder_says_the_folder_is_gone(argv, tmp_path, monkeypatch, capsys):
    """`cd w; rmdir ../w; storagelab sql --db e.duckdb ...` said only `[Errno 2] No such file or directory`; with a
    relative PYTHONPATH (as `PYTHONPATH=lib`), the environment check then refused PYTHONPATH ('lib: No such file')."""
    (tmp_path / "w").mkdir()
    monkeypatch.setenv("PYTHONPATH", "lib")
    monkeypatch.chdir(tmp_path / "w")
    (tmp_path / "w").rmdir()
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"storagelab {argv[0]}: the working folder is gone (removed while the shell was in it): cd to a folder "
        "that exists"
    )


def test_a_path_through_a_file_names_the_file_not_a_bare_not_a_directory(seed_db, tmp_path, capsys):
    """`export --dataset /etc/passwd/ds` said only "/etc/passwd: Not a directory" (issue 26's campaigns, Low): which
    part of the path is a file, not a folder."""
    from storagelab.terminal import os_error_text  # noqa: PLC0415

    (tmp_path / "f").write_text("x")
    assert cli.main(["export", "--db", str(seed_db), "--dataset", str(tmp_path / "f" / "ds")]) == 2
    assert capsys.readouterr().err == f"storagelab export: {tmp_path / 'f'}: a file, not a folder\n"
    deep = tmp_path / "f" / "a" / "b"
    assert (
        os_error_text(NotADirectoryError(20, "Not a directory", str(deep)))
        == f"{deep}: {tmp_path / 'f'} is a file, not a folder"
    )
    gone = tmp_path / "d" / "e"
    assert (
        os_error_text(NotADirectoryError(20, "Not a directory", str(gone)))
        == f"{gone}: a part of it is a file, not a folder"
    )


def test_a_database_with_no_tables_yet_is_named_with_what_to_run_by_sql_export_and_the_notebooks(tmp_path, capsys):
    """A database file an ingest made and was killed in before its first tables: `sql` printed DuckDB's 'Table with
    name files does not exist', `export --dataset` a traceback, a notebook DuckDB's error."""
    from storagelab.analysis import open_db  # noqa: PLC0415
    from storagelab.store import StoreError  # noqa: PLC0415

    db = tmp_path / "e.duckdb"
    duckdb.connect(str(db)).close()
    line = (
        f"{db}: not a built storagelab database: it has no tables (an ingest stopped before it made them?): run "
        f"`storagelab ingest FOLDER --db {db}` to build it"
    )
    assert cli.main(["sql", "--db", str(db), "select count(*) from files"]) == 2
    assert cli.main(["export", "--db", str(db), "--dataset", str(tmp_path / "ds")]) == 2
    assert capsys.readouterr().err.splitlines() == [f"storagelab sql: {line}", f"storagelab export: {line}"]
    with pytest.raises(StoreError) as e:
        open_db(db)
    assert str(e.value) == line
    assert cli.main(["sql", "--db", str(db), "select 41 + 1 as n", "--csv"]) == 0  # a query of no table still runs
    assert capsys.readouterr().out == "n\n42\n"
    # in a folder others can add names to (as /tmp), export reads a private copy, .<db>.read-*/<db>, and the line
    # named that copy, a path gone once the command has ended (reliability-27)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    db.rename(shared / db.name)
    line = line.replace(str(db), str(shared / db.name))
    assert cli.main(["export", "--db", str(shared / db.name), "--dataset", str(tmp_path / "ds")]) == 2
    assert capsys.readouterr().err.splitlines() == [f"storagelab export: {line}"]


@pytest.mark.parametrize(
    ("cols", "text", "field2", "at"),
    [
        ("value,name,property,source", "lz4\ttank\tcompression\tlocal\n128K\ttank\trecordsize\tdefault\n", "tank", 3),
        ("name,value,property,source", "tank\tlz4\tcompression\tlocal\ntank\t128K\trecordsize\tdefault\n", "lz4", 3),
    ],
)
def test_zfs_get_h_with_its_columns_in_another_order_is_refused_saying_why(cols, text, field2, at):
    """`zfs get -H -o value,name,property,source` with no command line: stored 'tank' as the property and the
    property as the value (the first), or refused as an unknown format without saying why (the second)."""
    from storagelab.parsers import ParseError, detect, zfs_get  # noqa: PLC0415

    assert detect(text)[0] is zfs_get
    with pytest.raises(ParseError) as e:
        zfs_get.parse(text)
    assert e.value.line == 1 and (
        f"invalid: zfs get -H rows with their columns in another order: field 2 holds no property name ({field2!r}), "
        f"field {at} does (line 1); rows alone do not say which column is which (expected NAME, PROPERTY, VALUE"
    ) in str(e.value)
    # with its command line before the rows (a shell transcript), the columns are known and the rows read
    rows = zfs_get.parse(f"$ zfs get -H -o {cols} compression,recordsize tank\n" + text).rows("zfs_properties")
    assert [(r["name"], r["property"], r["value"]) for r in rows] == [
        ("tank", "compression", "lz4"),
        ("tank", "recordsize", "128K"),
    ]


def test_an_8_tb_sparse_file_is_refused_unread_by_ingest_and_parse(tmp_path, capsys):
    """`truncate -s 8T big/huge.txt; storagelab ingest big` hashed zeros for hours (at 1 GB/s: 2.4 hours)."""
    from storagelab.ingest_open import MAX_INPUT_BYTES  # noqa: PLC0415

    (tmp_path / "big").mkdir()
    with open(tmp_path / "big" / "huge.txt", "wb") as f:
        f.truncate(8 * 10**12)
    why = f"8,000,000,000,000 bytes, more than any log ({MAX_INPUT_BYTES:,} bytes at most; STORAGELAB_MAX_FILE_BYTES=N"
    assert cli.main(["ingest", str(tmp_path / "big"), "--db", str(tmp_path / "t.duckdb"), "--quiet"]) == 1
    assert f"error: {tmp_path / 'big' / 'huge.txt'}: io: {why}" in capsys.readouterr().err
    assert cli.main(["parse", str(tmp_path / "big" / "huge.txt")]) == 1
    assert capsys.readouterr().err.startswith(f"storagelab parse: {tmp_path / 'big' / 'huge.txt'}: {why}")


def _dead_mark(work) -> str:
    """The mark of a lab run whose process has ended (a real process, started and killed)."""
    from storagelab.lab.leftovers import MARK  # noqa: PLC0415
    from storagelab.readcopies import start_time  # noqa: PLC0415

    p = subprocess.Popen(["sleep", "30"])
    mark = f"{MARK}{p.pid}-{start_time(p.pid)}"
    p.kill()
    p.wait()
    (work / mark).touch()
    return mark


def test_what_a_killed_lab_bonnie_left_is_removed_by_the_next_and_only_what_is_certainly_its_own(tmp_path):
    """`lab bonnie` SIGKILLed left its Bonnie.NNNN (as large as --size) in TARGET/.storagelab-bonnie for good."""
    from storagelab.lab import leftovers  # noqa: PLC0415

    work = tmp_path / ".storagelab-bonnie"
    work.mkdir()
    outside = tmp_path / "keep.txt"
    outside.write_text("not the lab's")
    (work / "Bonnie.123").write_bytes(b"x" * 4096)  # bonnie++'s file and its folder of the file tests
    (work / "Bonnie.124").mkdir()
    (work / "Bonnie.124" / "00001").write_text("")
    (work / "Bonnie.125").symlink_to(outside)  # a link of bonnie++'s name: not followed, not removed
    (work / "Bonnie.126").write_text("")
    os.chown(work / "Bonnie.126", 1002, 1002)  # another user's file of that name: theirs
    (work / "notes.txt").write_text("")  # not a name bonnie++ makes
    (work / "Bonnie.1").write_text("")
    assert leftovers.clean(work) == [  # no mark: not certainly a dead run's
        f"lab bonnie: {work}: Bonnie.1, Bonnie.123, Bonnie.124, Bonnie.125, Bonnie.126 not certainly a dead lab run's "
        "(no mark of the run that made them, or a folder others can change): left as they are"
    ]
    held = leftovers.claim(work)  # a live run's (this process): its files are its own
    assert leftovers.clean(work)[0].endswith(f"in use by the lab run of pid {os.getpid()}: left as they are")
    os.close(held)
    for n in os.listdir(work):
        if n.startswith(leftovers.MARK):
            (work / n).unlink()
    mark = _dead_mark(work)
    assert leftovers.clean(work) == [
        f"lab bonnie: removed Bonnie.1, Bonnie.123, Bonnie.124 from {work}: left by a lab run that was killed"
    ]
    assert sorted(os.listdir(work)) == ["Bonnie.125", "Bonnie.126", "notes.txt"] and mark
    assert outside.read_text() == "not the lab's"


def test_the_test_files_of_a_killed_lab_fio_are_removed_by_the_next_and_only_they(tmp_path):
    """`lab fio` SIGKILLed left fio's RUNID.0.0 (as large as --size) in the target for good."""
    from storagelab.lab import leftovers  # noqa: PLC0415
    from storagelab.lab.fio import _test_files  # noqa: PLC0415
    from storagelab.readcopies import start_time  # noqa: PLC0415

    run = "randread-4k-qd1-nj1"
    p = subprocess.Popen(["sleep", "30"])
    (tmp_path / f"{leftovers.FIO_MARK}{p.pid}-{start_time(p.pid)}").write_text(run)
    p.kill()
    p.wait()
    for name in (f"{run}.0.0", f"{run}.1.0", "seqread-1m-qd1-nj1.0.0", "notes.txt", f"{run}.0.0.bak"):
        (tmp_path / name).write_bytes(b"x")
    os.chown(tmp_path / f"{run}.1.0", 1002, 1002)  # another user's file of fio's name: theirs
    (tmp_path / "keep").write_text("not the lab's")
    (tmp_path / f"{run}.data").symlink_to(tmp_path / "keep")  # a link: not followed, not removed
    leftovers.mark_fio(tmp_path, "seqread-1m-qd1-nj1")  # a live run's (this process): its files are its own
    assert leftovers.clean_fio(tmp_path, _test_files) == [
        f"lab fio: removed {run}.0.0 from {tmp_path}: left by a lab run that was killed"
    ]
    leftovers.unmark_fio(tmp_path)
    assert sorted(os.listdir(tmp_path)) == [
        "keep", "notes.txt", f"{run}.0.0.bak", f"{run}.1.0", f"{run}.data", "seqread-1m-qd1-nj1.0.0"
    ]  # fmt: skip
    assert (tmp_path / "keep").read_text() == "not the lab's"
