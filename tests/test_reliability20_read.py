"""Reliability-20 (h1): the read side, attacked again (docs/reliability-20-read.md)."""

import os
import re

import duckdb
from conftest import FIXTURES

from storagelab import store
from storagelab.store import stream


def a_log_and_another(tmp_path):
    """A streamed clat log in ``tmp_path/logs`` (the ingest's path), and other bytes of its size (other latencies)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "ceph_clat.log"
    text = (FIXTURES / "fio" / "published" / "fio-2.2.10-ceph-randread-4k-KERNEL_clat.log").read_text()
    log.write_text(text)
    return logs, log, re.sub(r"(?m)^(\d+), \d", r"\1, 9", text).encode()


def ingested_and_refused(logs, tmp_path) -> tuple:
    """Ingest ``logs``: (the number of files stored, whether the one error says the file changed while read)."""
    store.ingest([logs], db_path=tmp_path / "x.db", manifest_path=tmp_path / "m.csv", parquet_dir=False, progress=False)
    with duckdb.connect(str(tmp_path / "x.db"), read_only=True) as con:
        n = con.execute("select count(*) from files").fetchone()[0]
        said = con.execute("select message like 'the file changed while it was read (%' from ingest_errors").fetchall()
    return n, said


def test_a_huge_log_rewritten_in_the_same_second_on_a_coarse_clock_file_system_is_not_stored(tmp_path, monkeypatch):
    # the attack (an ext2 image with 128-byte inodes, 1-second times): the user keeps their log's ctime in the
    # current second (chmod to the same mode, every millisecond), and on root's first read rewrites it in place and
    # puts the mtime back; inode, size, mtime and the 1-second ctime all stay, so the identity check passed and
    # root's ingest stored the first content's SHA-256 with the second's rows (3 of 3, exit 0). A file system whose
    # ctime does not move within its tick is modelled by an identity without the ctime.
    logs, log, other = a_log_and_another(tmp_path)
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "identity", lambda st: (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    real = stream.detect

    def rewritten_after_the_hash(head):
        st = os.stat(log)
        with open(log, "r+b") as w:  # in place: the inode stays
            w.write(other)
        os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
        return real(head)

    monkeypatch.setattr(stream, "detect", rewritten_after_the_hash)
    # main: one file, the first content's SHA-256 with the second's latencies
    assert ingested_and_refused(logs, tmp_path) == (0, [(True,)])


def test_an_excerpt_of_a_log_swapped_for_a_huge_sparse_file_is_not_read_into_memory(tmp_path, monkeypatch):
    # the attack: the user's stored log swapped for a 3 GiB sparse file (truncate -s 3G); root's report read it
    # whole (3,119 MiB of memory, 20 s) before the SHA-256 said it was not the stored one; 16 MiB stand for it here
    import hashlib

    from storagelab import excerpts

    log = tmp_path / "run.log"
    log.write_bytes(b"1, 4890, 0, 4096, 0\n")
    stored = hashlib.sha256(log.read_bytes()).hexdigest()
    log.unlink()
    with open(log, "wb") as f:
        f.truncate(16 << 20)
    reads = []
    real = excerpts.open_input

    def counted(path, *a, **k):
        fh = real(path, *a, **k)
        read = fh.read
        fh.read = lambda n=-1: reads.append(n) or read(n)
        return fh

    monkeypatch.setattr(excerpts, "open_input", counted)
    assert excerpts.Excerpts(tmp_path / "report").href(str(log), stored, 1, 1) is None
    assert reads and all(0 < n <= 1 << 20 for n in reads)  # main: one read() of all 16 MiB
    log.write_bytes(b"1, 4890, 0, 4096, 0\n")  # the stored bytes again: their excerpt
    assert (
        excerpts.Excerpts(tmp_path / "report").href(str(log), stored, 1, 1)
        == "raw/" + next(p.name for p in (tmp_path / "report" / "raw").iterdir()) + "#L1"
    )


def _sleep(seconds: float) -> None:
    import time

    time.sleep(seconds)


def test_ctrl_c_ends_an_ingest_whose_pool_worker_even_sigkill_does_not_end(monkeypatch, capfd):
    # the attack: root's ingest of 1,500 logs on a bindfs mount, 2 workers, the mount stopped while a worker's
    # request was in its hands (no signal cuts that wait short, SIGKILL included), then Ctrl-C: nothing said, the
    # pool's manager thread awaited for ever (a second Ctrl-C ignored), only SIGTERM ended it. A worker that
    # SIGKILL does not end is modelled by a kill that does not kill; os._exit by an exception saying its code.
    import threading
    import time
    import types
    from concurrent.futures import ProcessPoolExecutor

    from storagelab import pool_deaths, stuck

    class Exited(Exception):
        pass

    def exit_(code):
        raise Exited(code)

    monkeypatch.setattr(pool_deaths, "SHUTDOWN_GRACE_S", 0.1)
    monkeypatch.setattr(pool_deaths, "kill", lambda procs: None)
    monkeypatch.setattr(pool_deaths, "os", types.SimpleNamespace(write=os.write, _exit=exit_), raising=False)
    monkeypatch.setattr(stuck, "_LINES", ["storagelab ingest: interrupted while reading (stuck line)"])
    pool = ProcessPoolExecutor(max_workers=1)
    said, procs = [], []

    def stop():
        try:
            with pool_deaths.stopped_at_the_end(pool):
                pool.submit(_sleep, 30)
                procs.extend(pool._processes.values())
                time.sleep(0.05)  # the task in the worker's hands
                raise KeyboardInterrupt
        except BaseException as e:  # noqa: BLE001 - what ended it
            said.append(e)

    try:
        t = threading.Thread(target=stop, daemon=True)
        t.start()
        t.join(3)
        assert said and isinstance(said[0], Exited) and said[0].args == (130,)  # main: still waiting
        err = capfd.readouterr().err
        assert "storagelab ingest: interrupted while reading (stuck line)\nnote: worker process " in err
        assert "still waits for a file system that does not answer, even killed, and will end once it answers" in err
    finally:
        for p in procs:
            p.kill()
            p.join(5)
