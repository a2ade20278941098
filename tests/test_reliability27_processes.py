"""Reliability-27 (h3), processes and report folders: the findings' tests (docs/reliability-27-processes.md)."""

from __future__ import annotations

import os
import tempfile

from storagelab import readcopies, report, reportstage, spark_ingest, sparkjvm


def test_a_live_runs_spark_folders_are_not_removed_by_a_run_of_another_pid_namespace(tmp_path, monkeypatch):
    """Reliability-27: spark-ingest's folders are named by their run's pid, and ``remove_dead`` judged them by it. A run
    in another pid namespace sharing "/" and /tmp (another container; `unshare --pid --fork --mount-proc`) saw no such
    process, or another one, and removed a live run's chain under "/" and its Spark folder (blockmgr-*): the live run
    failed (`NoSuchFileException`, 300 lines, exit 1). The name below is what a run of another namespace sees: a pid
    that is no process of its own (the folder renamed, its owner, this process, alive). Once its owner lets it go (a
    run killed: its files closed), it is removed as before."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sparkjvm, "_bases", lambda: [str(tmp_path)])
    live_tmp = spark_ingest.private_tmp()
    _start, live_chain = sparkjvm.start_folder({}, "/nonexistent")
    assert live_chain is not None
    seen_tmp = tmp_path / f"{spark_ingest.SPARK_TMP}999999999-12345-abcd"  # another namespace's pid, a live run
    seen_chain = tmp_path / f"{sparkjvm.START}999999999-12345-efgh"
    os.rename(live_tmp, seen_tmp)
    os.rename(live_chain, seen_chain)
    (seen_tmp / "blockmgr-1").mkdir()
    assert readcopies.remove_dead(prefix=spark_ingest.SPARK_TMP) == []
    assert readcopies.remove_dead(str(tmp_path), prefix=sparkjvm.START) == []
    assert (seen_tmp / "blockmgr-1").is_dir() and seen_chain.is_dir()
    spark_ingest.livefolders.release(live_tmp)  # its owner gone
    sparkjvm.livefolders.release(live_chain)
    assert readcopies.remove_dead(prefix=spark_ingest.SPARK_TMP) == [seen_tmp.name]
    assert readcopies.remove_dead(str(tmp_path), prefix=sparkjvm.START) == [seen_chain.name]
    assert os.listdir(tmp_path) == []


def test_a_live_kernels_folder_is_not_removed_by_a_run_of_another_pid_namespace(tmp_path, monkeypatch):
    """Reliability-27: a notebook kernel's socket folder (/tmp/storagelab-kernel-<pid>-*) was judged by its name's pid
    (``sweep_kernel_dirs``, at every run's start): a run in another pid namespace sharing /tmp removed a live run's,
    and that notebook failed ("Kernel died before replying to kernel_info", or kernel.json not found; exit 1). As seen
    from there: the folder under a pid that is no process here, its owner (this process) alive. Let go, it is
    removed as before."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    live = report._new_kernel_dir()
    assert os.path.basename(live).startswith(f"storagelab-kernel-{os.getpid()}-")
    seen = tmp_path / "storagelab-kernel-999999999-abcd"
    os.rename(live, seen)
    assert reportstage.removed_if_orphaned(seen, "999999999") is False
    assert seen.is_dir()
    report.livefolders.release(live)
    assert reportstage.removed_if_orphaned(seen, "999999999") is True
    assert os.listdir(tmp_path) == []


def test_a_live_lab_fio_runs_test_files_are_not_removed_by_a_lab_run_of_another_pid_namespace(tmp_path):
    """Reliability-27: `lab fio` marks its target (``.storagelab-lab-fio-<pid>-<start>``) and the next run removes the
    test files of a mark whose process is gone. A lab run in another pid namespace on the same target saw a live run's
    mark as a dead one's and removed the file its fio was writing (`lab fio: removed write-4k-qd1-nj1.0.0 ...: left by a
    lab run that was killed`, the live run's fio 2.5 s in). As seen from there: the mark under a pid that is no process
    here, its run (this process) alive. Once the run unmarks (or dies), the files go as before."""
    from storagelab.lab import leftovers

    def test_files(
        target, run_id
    ):  # fio's name for a one-job run's file (lab/fio.py's _test_files, not imported: 0.6 s)
        return [target / f"{run_id}.0.0"]

    leftovers.mark_fio(tmp_path, "write-4k-qd1-nj1")
    mine = next(p for p in tmp_path.iterdir() if p.name.startswith(leftovers.FIO_MARK))
    seen = tmp_path / f"{leftovers.FIO_MARK}999999999-1"
    os.rename(mine, seen)
    (tmp_path / "write-4k-qd1-nj1.0.0").write_bytes(b"x" * 4096)
    assert leftovers.clean_fio(tmp_path, test_files) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [seen.name, "write-4k-qd1-nj1.0.0"]
    leftovers.unmark_fio(tmp_path)  # the run's end (its mark's old name is gone: renamed above)
    assert leftovers.clean_fio(tmp_path, test_files) == [
        f"lab fio: removed write-4k-qd1-nj1.0.0 from {tmp_path}: left by a lab run that was killed"
    ]
    assert list(tmp_path.iterdir()) == []


def test_a_run_whose_folder_was_moved_while_it_ran_is_failed_not_reported_as_written(tmp_path, monkeypatch):
    """Reliability-27: `run 07_explore -p study A --output o` and `-p study B --output o` started together, o moved
    away (`mv o o.moved`) while A's notebook ran. The notebook's own writes (its summary, figures: mkdir with parents)
    made o/<A's stage>/ again, A moved that into a new o and said `report: o/07_explore.html`, exit 0; B, waiting
    for the lock that had moved with the folder, found no record in the new o and replaced A's page with its own
    (study thumper-x4500's numbers), exit 0. A run whose stage is not the folder it made is failed, saying so, and
    moves nothing in."""
    from pathlib import Path

    out = tmp_path / "o"
    nb = Path(report.paths.NOTEBOOKS) / "07_explore.ipynb"

    def run_all(plans, out_dir, n, results):  # the notebook ran into its stage; meanwhile o was moved away
        stage = reportstage.new(out_dir, "07_explore")
        made = readcopies.identity(stage)
        (stage / "executed").mkdir()
        (stage / "executed" / "07_explore.ipynb").write_text("{}")
        os.rename(out_dir, tmp_path / "o.moved")
        (stage / "summaries").mkdir(parents=True)  # the notebook's summary: its stage's path made again, in a new o
        (stage / "summaries" / "07_explore.json").write_text('{"study": "A"}')
        results.append(report.RunResult("07_explore", out_dir, out_dir / "executed" / "07_explore.ipynb", True))
        results[-1].stage, results[-1].stage_id = stage, made

    monkeypatch.setattr(report, "_run_all", run_all)
    out.mkdir()
    (result,) = report.run_notebooks(plans=[(nb, {"study": "homelab-mergerfs"})], out_dir=out, jobs=1)
    assert (result.ok, result.error) == (
        False,
        f"{out} was moved or removed while the notebook ran: its report is not there",
    )
    assert list(out.iterdir()) == []  # nothing of A's in the new o (B's to claim)


def test_a_run_whose_folder_was_moved_before_its_notebook_started_does_not_make_it_again(tmp_path):
    """Reliability-27, the same attack a moment earlier: o moved away after the run claimed it (its record went with
    it) and before the notebook began: the run made a new o, B's run took it for a new folder (no record) and the
    two wrote one page, both exit 0. Now the run is failed, o not made again."""
    from pathlib import Path

    out = tmp_path / "o"
    nb = Path(report.paths.NOTEBOOKS) / "07_explore.ipynb"
    result = report._run_one(nb, {"study": "homelab-mergerfs"}, out)  # claimed, then moved: no o
    assert (result.ok, result.error, result.stage) == (
        False,
        f"{out} was moved or removed while the notebook ran: its report is not there",
        None,
    )
    assert not out.exists()
