"""Reliability-21 (h6): reliability-20's reading fixes, attacked again (docs/reliability-21-read.md)."""

import gzip
import hashlib
import os

import duckdb
from conftest import FIXTURES

from storagelab import store
from storagelab.store import stream


def test_a_compressed_huge_log_rewritten_for_its_format_detection_alone_is_not_stored(tmp_path, monkeypatch):
    # the attack (a file system with 1-second times): a gzip log's head is decompressed from a second read, after the
    # hash; the user rewrites the log in place for that read alone (the mtime put back, the same size), with a byte
    # that makes the text Latin-1, and puts the hashed bytes back before the rows are read: main decoded the UTF-8
    # log as Latin-1 and stored 'lecture-alÃ©atoire' as its job's name beside the SHA-256 of the bytes saying
    # 'lecture-aléatoire', no error. A file system whose ctime does not move within its tick: an identity without it.
    logs = tmp_path / "logs"
    logs.mkdir()
    text = (FIXTURES / "fio" / "published" / "fio-3.19-m1-randread-8-threads.txt").read_text()
    text = text.replace("random-read-4KB-8Thread", "lecture-aléatoire")
    hashed = gzip.compress(text.encode(), mtime=0)
    other = gzip.compress(("\xff" + text).encode("latin-1", "replace"), mtime=0)
    size = max(len(hashed), len(other))  # gzip's trailing zeros are padding
    hashed, other = hashed.ljust(size, b"\0"), other.ljust(size, b"\0")
    log = logs / "run.txt.gz"
    log.write_bytes(hashed)
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_MIN_COMPRESSED_BYTES", 0)
    monkeypatch.setattr(stream, "identity", lambda st: (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))

    def put(data):
        st = os.stat(log)
        with open(log, "r+b") as w:  # in place: the inode stays
            w.write(data)
        os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))

    real_same, real_detect, opens = stream._same, stream.detect, []

    def same(h):  # the check of each new descriptor: the first is the head's
        opens.append(h)
        if len(opens) == 1:
            put(other)
        return real_same(h)

    def detect(head):
        if len(opens) == 1:
            put(hashed)
        return real_detect(head)

    monkeypatch.setattr(stream, "_same", same)
    monkeypatch.setattr(stream, "detect", detect)
    store.ingest([logs], db_path=tmp_path / "x.db", manifest_path=tmp_path / "m.csv", parquet_dir=False, progress=False)
    with duckdb.connect(str(tmp_path / "x.db"), read_only=True) as con:
        stored = con.execute("select sha256 from files").fetchall()
        said = con.execute("select message like 'the file changed while it was read (%' from ingest_errors").fetchall()
    # main: [(sha256 of the hashed bytes,)] and fio_jobs.jobname 'lecture-alÃ©atoire', no error
    assert (stored, said) == ([], [(True,)]), hashlib.sha256(hashed).hexdigest()
    log.write_bytes(hashed)  # the next ingest, unhindered: the right name
    monkeypatch.setattr(stream, "_same", real_same)
    store.ingest([logs], db_path=tmp_path / "x.db", manifest_path=tmp_path / "m.csv", parquet_dir=False, progress=False)
    with duckdb.connect(str(tmp_path / "x.db"), read_only=True) as con:
        assert con.execute("select distinct jobname from fio_jobs").fetchall() == [("lecture-aléatoire",)]


def test_a_huge_log_rewritten_for_its_first_read_alone_is_not_read_again_as_latin_1(tmp_path, monkeypatch):
    # the attack (a file system with 1-second times): the user rewrites their UTF-8 log in place for the first read
    # of its rows alone (one byte that is not UTF-8, the mtime put back) and puts the hashed bytes back before the
    # next: the read that met the byte stopped there, unchecked, and the parse started again as Latin-1 on the
    # hashed bytes: main stored 'lecture-alÃ©atoire' as the job's name beside the SHA-256 of the UTF-8 bytes
    logs = tmp_path / "logs"
    logs.mkdir()
    text = (FIXTURES / "fio" / "published" / "fio-3.19-m1-randread-8-threads.txt").read_text()
    hashed = text.replace("random-read-4KB-8Thread", "lecture-aléatoire").encode()
    other = hashed.replace(b"\nfio-3.19", b"\xfffio-3.19")
    log = logs / "run.txt"
    log.write_bytes(hashed)
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "identity", lambda st: (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    real_same, opens = stream._same, []

    def same(h):  # the check of each new descriptor (a plain log's head is the hashed bytes': the rows' reads)
        opens.append(h)
        st = os.stat(log)
        with open(log, "r+b") as w:  # in place: the inode stays
            w.write(other if len(opens) == 1 else hashed)
        os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
        return real_same(h)

    monkeypatch.setattr(stream, "_same", same)
    store.ingest([logs], db_path=tmp_path / "x.db", manifest_path=tmp_path / "m.csv", parquet_dir=False, progress=False)
    with duckdb.connect(str(tmp_path / "x.db"), read_only=True) as con:
        stored = con.execute("select sha256 from files").fetchall()
        said = con.execute("select message like 'the file changed while it was read (%' from ingest_errors").fetchall()
        names = con.execute("select distinct jobname from fio_jobs").fetchall()
    assert (stored, said, names) == ([], [(True,)], [])  # main: the file stored, 'lecture-alÃ©atoire', no error


def _streams_of_a_worker(chunk):
    """A pool task (module level: pickled by name) that writes where its stdin, stdout and stderr lead."""
    leads = [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)]
    for fd in os.listdir("/proc/self/fd"):
        if int(fd) > 2 and os.path.exists(f"/proc/self/fd/{fd}"):  # (not the listing's own, closed since)
            leads.append(os.readlink(f"/proc/self/fd/{fd}"))
    with open(chunk[0].path, "w") as f:
        f.write("\n".join(leads))
    os.write(2, b"a worker's own line\n")
    return [], {}


def test_the_ingest_pool_workers_hold_none_of_the_command_s_streams(tmp_path, monkeypatch, capfd):
    # the attack: root's `ingest ... --workers 2 | cat` on a bindfs stacked on a stopped one, Ctrl-C: the command
    # ended (10 s), a worker stayed in the kernel's wait for the mount (SIGKILL pending) holding the command's stdout
    # and stderr: `cat` waited until the mount was resumed. Now the workers' output goes through a pipe of the pool's
    # own (copied to the command's stderr), their stdin is /dev/null
    from storagelab.store import worker
    from storagelab.store.listing import ListedFile

    monkeypatch.setattr(worker, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(worker, "parse_chunk_ipc", _streams_of_a_worker)
    out = tmp_path / "leads"
    copy = os.dup(2)  # as stopsignals keeps one (a fork inherits it)
    try:
        assert list(worker.parse_all([ListedFile("k", str(out), 0, 0)], 2)) == []
    finally:
        os.close(copy)
    mine = [os.readlink(f"/proc/self/fd/{fd}") for fd in (1, 2)]
    leads = out.read_text().split("\n")
    assert leads[0] == os.devnull and leads[1] == leads[2] and leads[1].startswith("pipe:")
    assert not set(leads) & set(mine)  # main: the command's own stdout and stderr (and the copy)
    assert capfd.readouterr().err == "a worker's own line\n"  # copied to the command's stderr
