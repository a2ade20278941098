"""Reliability-15, Spark and the Parquet dataset (docs/reliability-15-spark.md): the code spark-ingest runs on the
driver, checked in-process (no JVM; the Ctrl-C case is in tests/test_spark.py's Spark run)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest

from storagelab import dataset, spark_ingest
from storagelab.errors import StoreError

py4j = pytest.importorskip("py4j.protocol")


def test_the_empty_files_listing_survives_names_that_go_while_it_walks(tmp_path, monkeypatch):
    """Reliability-15: the user renamed files and a folder of INPUT while root's spark-ingest ran (a swap loop, or a
    log rotated): the driver's listing of the zero-length files (Hadoop's, which runs `ls` per file) failed the
    whole run, `ls: cannot access '.../fio-btrfs-single.txt.keep': No such file or directory` under a Java stack
    trace, exit 1, in 3 of 3 runs. Now a local INPUT is listed in Python: what went is left out, links leading
    outside INPUT are not followed, a link loop is walked once."""
    top = tmp_path / "in"
    (top / "a").mkdir(parents=True)
    (top / "a" / "empty.txt").write_bytes(b"")
    (top / "a" / "full.txt").write_text("x\n")
    (top / "gone").mkdir()
    (top / "gone" / "empty.txt").write_bytes(b"")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "zero.txt").write_bytes(b"")
    (top / "out").symlink_to(tmp_path / "elsewhere")
    (top / "loop").symlink_to(top)
    (top / "dangling").symlink_to(tmp_path / "nowhere")
    real_scandir = os.scandir

    def scandir(path):  # the folder `gone` is removed once the top folder is listed
        found = list(real_scandir(path))
        if Path(path) == top and (top / "gone").exists():
            (top / "gone" / "empty.txt").unlink()
            (top / "gone").rmdir()
        return iter(found)

    monkeypatch.setattr(spark_ingest.os, "scandir", scandir)
    local = spark_ingest.local_input(str(top))
    assert [u for u, _ in spark_ingest._local_empty(local)] == [(top / "a" / "empty.txt").as_uri()]
    found = spark_ingest._empty_files(None, str(top), local)
    assert [(r["key"], r["error"]["kind"]) for r in found] == [(str(top / "a" / "empty.txt"), "empty")]
    # reliability-36 spark-env (Low): a file the parse read, truncated before this listing, is not also 'empty'
    assert spark_ingest._empty_files(None, str(top), local, parsed={str(top / "a" / "empty.txt")}) == []


class _JavaError(py4j.Py4JJavaError):
    """A Py4JJavaError as the JVM raises it, its text the one the attack printed (no JVM here)."""

    def __init__(self, text: str) -> None:
        Exception.__init__(self, text)
        self.text = text

    def __str__(self) -> str:
        return self.text


@pytest.mark.parametrize(
    "java",
    [
        "An error occurred while calling o51.load.\n: java.io.FileNotFoundException: File "
        "file:/tmp/h4/in/thumper-x4500.keep does not exist\n\tat org.apache.hadoop.fs.RawLocalFileSystem",
        "An error occurred while calling o73.hasNext.\n: java.lang.RuntimeException: Error while running command to "
        "get file permissions : ExitCodeException exitCode=2: ls: cannot access '/tmp/h4/in/a.txt.keep': No such "
        "file or directory\n",
        "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:///tmp/h4b/mnt/a/b.txt.  SQLSTATE: "
        "KD001\n...\nCaused by: java.nio.file.FileSystemException: /tmp/h4b/mnt/a/b.txt: Invalid argument\n",
    ],
)
def test_a_file_gone_while_spark_reads_is_one_line(java):
    """Reliability-15: the same run's other failures (Spark's own listing of a folder renamed meanwhile) came as a
    Python traceback with a Java one inside (226 lines, exit 1). Now one line naming what went (exit 2)."""
    with pytest.raises(StoreError) as e, spark_ingest._changing_input("/tmp/h4/in"):
        raise _JavaError(java)
    assert str(e.value).startswith("/tmp/h4/in changed while Spark read it (")
    assert str(e.value).endswith("): the dataset is as it was; run again")
    assert "\n" not in str(e.value)
    with pytest.raises(_JavaError), spark_ingest._changing_input("/tmp/h4/in"):  # anything else: as it was
        raise _JavaError("An error occurred: java.lang.OutOfMemoryError: Java heap space")


def test_spark_ingest_waits_for_the_export_writing_the_same_dataset(tmp_path):
    """Reliability-15: spark-ingest took no lock where `export --dataset` takes one (`_storagelab/.lock`): run at
    once on one dataset, each one's sweep deleted the part files the other had written but not yet committed (and
    spark-ingest's staging folder, `staging-*`), leaving a meta.json that lists missing files. Now spark-ingest
    takes the same lock: it waits while an export holds it."""
    out = tmp_path / "ds"
    (out / dataset.META_DIR).mkdir(parents=True)
    entered = threading.Event()

    def spark_run():
        with spark_ingest._one_writer(str(out)):
            entered.set()

    with open(out / dataset.META_DIR / ".lock", "a") as lock:  # the export's lock
        fcntl.flock(lock, fcntl.LOCK_EX)
        t = threading.Thread(target=spark_run)
        t.start()
        time.sleep(0.2)
        assert not entered.is_set()
    t.join(5)
    assert entered.is_set()


def test_a_name_swapped_while_the_executor_resolves_it_is_an_error_line(tmp_path, monkeypatch):
    """Reliability-15: root's spark-ingest of the user's bindfs, the user swapping a log for a link to root's file
    and back: the executor's `realpath` of the name Spark listed met the link gone (`OSError: [Errno 22] Invalid
    argument: '/tmp/h4b/mnt/homelab-mergerfs/fio-btrfs-raid1.txt'`), and the job failed with a Python and a Java
    traceback, exit 1 (1 run of 1). Now that file is an 'io' error, not read; the others are parsed."""
    import errno
    from datetime import UTC, datetime

    from storagelab import paths

    top = tmp_path / "in"
    top.mkdir()
    raw = paths.ROOT / "data" / "raw" / "homelab-mergerfs"
    for name in ("fio-btrfs-raid1.txt", "fio-btrfs-single.txt"):
        (top / name).write_bytes((raw / name).read_bytes())
    swapped = str(top / "fio-btrfs-raid1.txt")
    real_realpath = os.path.realpath

    def realpath(p, *a, **k):  # what realpath raised in the attack, for that name
        if os.fspath(p) == swapped:
            raise OSError(errno.EINVAL, "Invalid argument", swapped)
        return real_realpath(p, *a, **k)

    monkeypatch.setattr(os.path, "realpath", realpath)
    when = datetime(2026, 11, 27, tzinfo=UTC)
    rows = [
        dict(path=(top / n).as_uri(), modificationTime=when, length=(top / n).stat().st_size)
        for n in sorted(("fio-btrfs-raid1.txt", "fio-btrfs-single.txt"))
    ]
    out = list(spark_ingest.parse_partition(rows, (tmp_path / "staging").as_uri(), spark_ingest.local_input(str(top))))
    assert [(r["key"], r["error"] and r["error"]["kind"], r["tool"]) for r in out] == [
        (swapped, "io", None),
        (str(top / "fio-btrfs-single.txt"), None, "fio"),
    ]
    assert out[0]["error"]["message"] == (
        f"{swapped}: Invalid argument while its name was resolved (it changed while it was read)"
    )
