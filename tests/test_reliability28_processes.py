"""Reliability-28 (h3), processes and report folders: the findings' tests (docs/reliability-28-processes.md)."""

from __future__ import annotations

import os
import tempfile

from storagelab import database, readcopies


def test_a_live_readers_copies_are_not_removed_by_a_reader_of_another_pid_namespace(tmp_path, monkeypatch):
    """Reliability-28: a reader's private copy of a database (``readcopies.new_folder``: root reading another user's
    database in their folder) and its view beside a database in a shared folder (``.<db>.read-<pid>-*``) were judged
    by their name's pid: a reader in another pid namespace sharing the folder (another container; `unshare --pid
    --fork --mount-proc`) removed a live reader's copy, and the read failed, "cannot write (IO Error: Cannot open
    database ... in read-only mode: database does not exist)" (93 of 100 reads under a sweeping reader). As seen from
    there: the folder under a pid that is no process here, its reader (this process) alive. Let go, it is removed."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    copy = readcopies.new_folder()
    seen = tmp_path / f"{readcopies.PREFIX}999999999-12345-abcd"
    os.rename(copy, seen)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    (shared / "s.duckdb").write_bytes(b"")
    view = database._private_view(shared / "s.duckdb")
    assert view is not None
    prefix = ".s.duckdb.read-"
    seen_view = shared / f"{prefix}999999999-12345-efgh"
    os.rename(view.parent, seen_view)
    assert readcopies.remove_dead() == []
    assert readcopies.remove_dead(str(shared), prefix) == []
    assert seen.is_dir() and (seen_view / "s.duckdb").is_file()
    readcopies.livefolders.remove(copy)  # the reads' ends (their folders' old names are gone: renamed above)
    readcopies.livefolders.remove(view.parent)
    assert readcopies.remove_dead() == [seen.name]
    assert readcopies.remove_dead(str(shared), prefix) == [seen_view.name]
    assert sorted(os.listdir(tmp_path)) == ["shared"] and os.listdir(shared) == ["s.duckdb"]


def test_a_held_folder_removed_before_it_is_held_is_made_again(tmp_path, monkeypatch):
    """Reliability-28: ``livefolders.mkdtemp_held`` opened its new folder to hold it; a sweeper of another pid
    namespace that removed it in between (it is judged by its name's pid until held) made the open fail,
    FileNotFoundError out of the reader (6-8 of 100 reads under a sweeping reader, after the fix above). Made again."""
    from storagelab import livefolders

    made = []
    real = tempfile.mkdtemp

    def mkdtemp(prefix, dir):  # noqa: A002
        made.append(real(prefix=prefix, dir=dir))
        if len(made) == 1:
            os.rmdir(made[0])  # the sweeper's removal, before the hold
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    folder = livefolders.mkdtemp_held("x-", str(tmp_path))
    assert (len(made), folder, os.listdir(tmp_path)) == (2, made[1], [os.path.basename(made[1])])
    livefolders.remove(folder)
    assert os.listdir(tmp_path) == []


def test_a_run_whose_folder_was_moved_names_no_page_and_renders_none(tmp_path, monkeypatch, capsys):
    """Reliability-28: `run 07_explore -p study A --output o` and `-p study B --output o` at once, o moved away while
    they ran (`mv o o.moved`): the run that lost its folder failed, saying so, and then said `report:
    o/07_explore.html (failed)`: the page there was the other run's, of study B (4 of 4 moved rounds); and it rendered
    o's pages (the other run's) without holding o, whose lock had moved with the folder. Now it names no page and
    renders nothing."""
    import argparse

    from storagelab import cli, report

    out = tmp_path / "o"
    moved = report.RunResult("07_explore", out, out / "executed" / "07_explore.ipynb", False, report._moved(out))
    moved.moved = True
    rendered = []
    monkeypatch.setattr(report, "run_notebooks", lambda *a, **k: [moved])
    monkeypatch.setattr(report, "render_reports", lambda **k: rendered.append(k))
    args = argparse.Namespace(notebooks=["07_explore"], no_report=False)
    assert cli._run(args, {"study": "homelab-mergerfs"}, {}, out, out, False) == 1
    assert rendered == []
    assert "report:" not in capsys.readouterr().out


def test_a_report_folder_replaced_by_a_link_to_another_during_a_build_gets_none_of_its_reports(tmp_path, monkeypatch):
    """Reliability-28: `build`, and 3 s into it `mv reports/homelab-mergerfs reports/hm-old; ln -s thumper-x4500
    reports/homelab-mergerfs`: homelab's notebooks not yet started made their folders through the link and their
    pages went into thumper-x4500's folder (its 05_stacks and 08_fio of study homelab-mergerfs, listed under
    thumper-x4500 in the index), exit 0, "0 failed". A run whose folder is not the one the command claimed fails,
    saying so, and writes nothing there."""
    import sys
    import types
    from pathlib import Path

    from storagelab import report

    nb = Path(report.paths.NOTEBOOKS) / "08_fio.ipynb"
    ran = []
    fake = types.ModuleType("papermill")
    fake.execute_notebook = lambda *a, **k: ran.append(a)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "papermill", fake)
    monkeypatch.setattr(report, "sweep_kernel_dirs", lambda: [])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    out, other = tmp_path / "o", tmp_path / "theirs"
    report._claim_folders([(nb, {"study": "homelab-mergerfs"})], into=out)
    other.mkdir()
    os.rename(out, tmp_path / "o.old")
    out.symlink_to(other)
    result = report._run_one(nb, {"study": "homelab-mergerfs"}, out)
    assert (result.ok, result.error, result.stage, ran) == (False, report._moved(out), None, [])
    assert list(other.iterdir()) == []


def test_sql_parquet_s_sweep_leaves_a_held_write_of_another_pid_namespace(tmp_path):
    """`sql --parquet res` sweeps the files of earlier writes of res that are over. Judged by the pid in their names,
    a live write in another pid namespace (a pid this one does not have) lost its files: 3 of 3 such writes failed
    (reliability-28 processes, Medium). Now a write holds its lock file, and its files stay while it is held."""
    import fcntl

    import duckdb

    from storagelab import sqlout

    live = [".res.999998.abcd1234.lock", ".res.999998.abcd1234.tmp", "tmp_.res.999998.abcd1234.tmp"]
    over = [".res.999997.efgh5678.lock", ".res.999997.efgh5678.tmp", "tmp_.res.999997.efgh5678.tmp"]
    for name in live + over:
        (tmp_path / name).write_text("PAR1 part written")
    held = os.open(tmp_path / live[0], os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_SH)  # as the other namespace's writer holds it
    try:
        sqlout._write_parquet(duckdb.sql("select 42 x"), tmp_path / "res")
    finally:
        os.close(held)
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted([*live, "res"])  # main: only res
