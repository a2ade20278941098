"""Reliability-34, process hygiene (h3): the cost of reading other users' processes from /proc."""

from __future__ import annotations

import os

from storagelab import livewriters


def test_a_groups_users_are_read_from_status_alone_not_every_process_s_descriptors(tmp_path, monkeypatch):
    # reliability-34: a notebook run from a path of group-writable folders asked for the group's users once per
    # folder, and each ask read every other user's process's descriptors, mount table and mappings: with 3,000
    # processes of the second user (and processes starting and ending, so no scan served two asks), `run` of one
    # notebook took 167 s instead of 21 s, 112 s of it in 22 scans
    proc = tmp_path / "proc"
    monkeypatch.setattr(livewriters, "PROC", str(proc))
    other = os.getuid() + 4242
    for pid, groups in ((51, "7 8"), (52, "9")):
        d = proc / str(pid)
        (d / "fd").mkdir(parents=True)
        (d / "status").write_text(
            f"Name:\tx\nUid:\t{other}\t{other}\t{other}\t{other}\nGid:\t{other}\t{other}\t{other}\t{other}\nGroups:\t{groups}\n"
        )

    def not_read(pid):
        raise AssertionError(f"process {pid}'s descriptors or mappings read for a group's users")

    monkeypatch.setattr(livewriters, "_held_for_writing", not_read)
    monkeypatch.setattr(livewriters, "_mapped_for_writing", not_read)
    livewriters._SCANNED.clear()
    assert livewriters.group_users(8) == {str(other)}
    assert livewriters.group_users(9) == {str(other)}
    assert livewriters.group_users(10) == set()


def test_a_ctrl_c_duckdb_made_an_error_while_report_read_the_studies_stops_the_report(monkeypatch, tmp_path):
    # reliability-34: `report` given SIGINT at 3.7 s, while left_out_of_index read the database's study labels:
    # DuckDB turned the Ctrl-C into 'Query interrupted', the `except Exception` took it as "no index" and the report
    # rendered all 15 pages (35 s more), said "rendered 15 reports" and ended 130 without its line
    import duckdb
    import pytest

    from storagelab import database, paths, report

    db = tmp_path / "s.duckdb"
    db.write_bytes(b"")
    monkeypatch.setattr(paths, "DB", db)

    def stopped(**kwargs):
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr(report, "labelled_studies", stopped)
    with pytest.raises(KeyboardInterrupt):
        report.left_out_of_index()
    monkeypatch.setattr(
        report, "labelled_studies", lambda **kw: (_ for _ in ()).throw(RuntimeError("Query interrupted"))
    )
    with pytest.raises(KeyboardInterrupt):
        report.left_out_of_index()

    class Con:
        def execute(self, sql):
            raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    with pytest.raises(KeyboardInterrupt):
        database.not_built(Con(), db)


def test_the_database_checks_take_a_ctrl_c_duckdb_made_an_error_as_a_ctrl_c(tmp_path):
    # reliability-34: the same Ctrl-C inside the checks every reader runs first (open_db: _same_schema, not_built,
    # unfinished_ingest), each of which took any error as "not ours / whole" and let the command carry on
    import duckdb
    import pytest

    from storagelab import database
    from storagelab.analysis import db as adb

    for error in (duckdb.InterruptException("INTERRUPT Error: Interrupted!"), RuntimeError("Query interrupted")):

        class Con:
            def execute(self, *args, error=error):
                raise error

        for check in (adb._same_schema, database.unfinished_ingest, database.not_built):
            with pytest.raises((KeyboardInterrupt, RuntimeError)) as stop:  # not taken as an answer
                check(Con(), tmp_path / "x.duckdb")
            assert stop.type is KeyboardInterrupt or check is not adb._same_schema
    assert (
        database.unfinished_ingest(
            type("C", (), {"execute": lambda *a: (_ for _ in ()).throw(duckdb.CatalogException("no meta"))})(), "x"
        )
        is None
    )


def test_a_groups_users_asked_again_while_processes_start_and_end_are_read_once(tmp_path, monkeypatch):
    # reliability-34 processes, Medium 1's remainder: one check asked for a group's users 21 times; with processes
    # starting and ending, no ask found the process list of the one before and each read all 3,000 statuses again
    # (1.6 s each at load 32). One read answers for livewriters.GROUPS_FOR_S seconds, then the next ask reads again.
    proc = tmp_path / "proc"
    monkeypatch.setattr(livewriters, "PROC", str(proc))
    other = os.getuid() + 4242

    def started(pid: int) -> None:
        d = proc / str(pid)
        (d / "fd").mkdir(parents=True)
        (d / "status").write_text(f"Uid:\t{other}\t{other}\t{other}\t{other}\nGid:\t7\t7\t7\t7\nGroups:\t8\n")

    read, real = [], livewriters._credentials
    monkeypatch.setattr(livewriters, "_credentials", lambda pid: read.append(pid) or real(pid))
    clock = [1000.0]
    monkeypatch.setattr(livewriters.time, "monotonic", lambda: clock[0])
    started(51)
    for pid in range(52, 73):  # 21 asks, a process started before each
        assert livewriters.group_users(8) == {str(other)}
        started(pid)
    assert read == ["51"]
    clock[0] += livewriters.GROUPS_FOR_S
    assert livewriters.group_users(8) == {str(other)} and len(read) == 1 + 22


def test_a_ctrl_c_dropped_in_a_finalizer_at_the_interpreter_s_exit_does_not_hang_it():
    # reliability-34 processes: with stopsignals' unraisablehook, a KeyboardInterrupt raised in the __del__ of an
    # object in a reference cycle (collected as the interpreter ends) started a timer thread that could never run,
    # and the process waited for it for good
    import subprocess
    import sys

    from conftest import ROOT

    code = (
        "from storagelab import stopsignals\n"
        "stopsignals.on_stop_signals('x')\n"
        "class D:\n"
        "    def __del__(self):\n"
        "        raise KeyboardInterrupt\n"
        "d = D(); d.cycle = [d]\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]


def test_a_ctrl_c_duckdb_made_an_error_while_a_study_or_another_database_was_checked_stops_the_command(
    monkeypatch, tmp_path
):
    # reliability-34 processes, Medium 2's pattern at two more places: `run -p study X` checks the study's label
    # in the database, and the index reads the labels of the databases other folders were made from; each took any
    # error as "cannot be read now" and went on, a Ctrl-C that DuckDB made 'Query interrupted' too
    import duckdb
    import pytest

    from storagelab import report

    db = tmp_path / "s.duckdb"
    db.write_bytes(b"")

    def stopped(*args, **kwargs):
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr(report, "labelled_studies", stopped)
    with pytest.raises(KeyboardInterrupt):
        report.unknown_study({"study": "x", "db_path": str(db)})
    with pytest.raises(KeyboardInterrupt):
        report._studies_of(str(db), {})
    monkeypatch.setattr(report, "labelled_studies", lambda *a, **k: (_ for _ in ()).throw(OSError("held")))
    assert report.unknown_study({"study": "x", "db_path": str(db)}) is None  # any other error: left to the notebooks
    assert report._studies_of(str(db), {}) is None
