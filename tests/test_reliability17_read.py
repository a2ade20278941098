"""Reliability-17 (h1): the read side, issue 26's full campaign (docs/reliability-17-read.md)."""

import os
import shutil
import signal
import socket
from pathlib import Path

import pytest
from conftest import FIXTURES

from storagelab import ingest_open
from storagelab.store import listing, worker

LOG = FIXTURES / "fio" / "3.33" / "json_only.txt"


@pytest.mark.e2e  # one CLI run and the 3 s the watcher gives the main thread
@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("bindfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, bindfs and /dev/fuse to mount a FUSE file system that hangs",
)
@pytest.mark.parametrize("sig", [signal.SIGTERM])
def test_sigterm_ends_a_sql_stuck_on_a_fuse_mount_that_never_answers(tmp_path, sig):
    # stopsignals gives SIGTERM and SIGHUP a Python handler (their one line), so they were no longer fatal: `kill` of
    # `sql --db` on a stopped FUSE mount left it in state D (request_wait_answer) until kill -9 (main: TimeoutExpired)
    from test_stuck_read import ctrl_c_when_stuck  # noqa: PLC0415

    def argv(src: Path, mnt: Path) -> list[str]:
        (src / "x.duckdb").write_bytes(b"")
        return ["sql", "--db", str(mnt / "x.duckdb"), "select 1"]

    assert ctrl_c_when_stuck(tmp_path, argv, sig, grace=0.5) == (  # the watcher's grace 0.5 s, not 3 s (issue 28)
        143,
        "",
        "storagelab sql: terminated (SIGTERM) while reading a file system that does not answer (a FUSE or network "
        "mount?); run it again once the mount answers\n",
    )


def test_a_fifo_or_socket_in_an_ingested_folder_is_named_not_left_out_without_a_word(tmp_path):
    # reliability-15 Low 1 (not fixed there): a FIFO and a socket named *.txt were left out of the ingest silently
    shutil.copy(LOG, tmp_path / "a.txt")
    os.mkfifo(tmp_path / "f.txt")
    (tmp_path / "ignored").mkdir()
    os.mkfifo(tmp_path / "ignored" / "g.txt")
    (tmp_path / ".storagelabignore").write_text("ignored/\n")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s.txt"))
        said: list[str] = []
        kept, _, _ = listing.files_to_read([tmp_path], outside=said)
    finally:
        sock.close()
    assert [Path(f.path).name for f in kept] == ["a.txt"]
    assert said == [
        f"{tmp_path / 'f.txt'}: a FIFO, not a regular file: not read",
        f"{tmp_path / 's.txt'}: a socket, not a regular file: not read",
    ]


def test_a_log_grown_after_the_listing_is_not_read_whole(tmp_path):
    # the user's log listed at 6,450 bytes, made a sparse 6 GiB file before the worker reads it: the worker read it
    # whole (root's ingest of 1,501 files under ulimit -v 3 GiB: "out of memory (MemoryError)", nothing stored)
    log = tmp_path / "z.txt"
    shutil.copy(LOG, log)
    st = log.stat()
    job = listing.ListedFile(str(log), str(log), st.st_size, st.st_mtime_ns)
    os.truncate(log, 64 * 2**20)  # (64 MiB here: on the old code it is read and parsed, not said)
    out = worker.parse_one(job)
    assert (out.error, out.n_rows, out.sha256) == (
        dict(
            kind="io",
            line=None,
            expected=None,
            message="the file changed while it was read (6,450 bytes when listed, more now): not stored this time; "
            "the next ingest reads it again",
        ),
        0,
        None,
    )


def test_read_input_reads_no_more_than_the_limit_however_the_file_grows(tmp_path, monkeypatch):
    # `parse` (read_input) checked the size at open, then read to the end: a file growing meanwhile was read whole
    log = tmp_path / "a.txt"
    log.write_bytes(b"x" * 100)
    assert ingest_open.read_input(log) == b"x" * 100  # at the real limit (a first fix's read(limit + 1): MemoryError)
    monkeypatch.setattr(ingest_open, "MAX_INPUT_BYTES", 150)
    checked = ingest_open.too_large

    def check_then_grow(size):  # the size checked, then the file grows (another process appending to it)
        if size == 100:
            with open(log, "ab") as f:
                f.write(b"y" * 1000)
        return checked(size)

    monkeypatch.setattr(ingest_open, "too_large", check_then_grow)
    with pytest.raises(OSError, match=r"1,100 bytes, more than any log \(150 bytes at most"):  # old: DID NOT RAISE
        ingest_open.read_input(log)


def test_a_readers_private_copy_of_a_sparse_database_keeps_its_holes(tmp_path):
    # the user's 2 GiB sparse file (3.5 MB on disk) in their folder, given to root's `sql --db`, was copied byte by
    # byte into /tmp: 2 GiB written in 22-27 s (a 1 TB one fills the disk); the copy now takes what the file takes
    from storagelab import database  # noqa: PLC0415

    src = tmp_path / "sp.duckdb"
    with open(src, "wb") as f:
        f.write(b"DUCK" * 1024)
        f.truncate(256 * 2**20)
    fd = os.open(src, os.O_RDONLY)
    try:
        database._copy_fd(fd, tmp_path / "copy.duckdb")
    finally:
        os.close(fd)
    st = (tmp_path / "copy.duckdb").stat()
    assert (st.st_size, st.st_blocks * 512 <= 1 << 20) == (256 * 2**20, True)  # old: 268,435,456 bytes on disk
    with open(tmp_path / "copy.duckdb", "rb") as f:
        assert f.read(4096) == b"DUCK" * 1024


def test_a_private_copy_is_never_longer_than_the_size_checked(tmp_path):
    # a dataset's part (or a database) grown after its size was checked was copied to its new end
    from storagelab import readcopies  # noqa: PLC0415

    src = tmp_path / "part.parquet"
    src.write_bytes(b"p" * 5000)
    fd = os.open(src, os.O_RDONLY)
    try:
        assert readcopies.copy_exactly(fd, tmp_path / "a", 5000) is True
        with open(src, "ab") as f:
            f.truncate(2**30)  # grown (sparse) after the check
        assert readcopies.copy_exactly(fd, tmp_path / "b", 5000) is False
    finally:
        os.close(fd)
    assert [(tmp_path / n).read_bytes() for n in "ab"] == [b"p" * 5000, b"p" * 5000]


def test_a_link_swapped_for_a_file_as_it_is_read_is_said_not_a_bare_invalid_argument(tmp_path, monkeypatch):
    # read-toggle-sticky: 82 of 39,272 root `sql --db` ended "/tmp/h17t.duckdb: Invalid argument" (the user's link
    # renamed over by their file between the lstat and the readlink)
    from storagelab import readcopies  # noqa: PLC0415
    from storagelab.errors import StoreError  # noqa: PLC0415

    db, own = tmp_path / "t.duckdb", tmp_path / "own.duckdb"
    own.write_bytes(b"theirs")
    db.symlink_to(own)
    readlink = os.readlink

    def swapped_then_read(name):
        os.replace(own, db)  # their file renamed over the link, as the attack's loop does
        return readlink(name)

    monkeypatch.setattr(os, "readlink", swapped_then_read)
    with pytest.raises(StoreError) as e:
        readcopies.read_target(db)
    assert str(e.value) == f"{db}: a symlink on its way was replaced while it was read"  # old: "...: Invalid argument"


@pytest.mark.skipif(os.geteuid() != 0, reason="a folder of another user's needs root to chown it")
def test_a_hard_link_is_judged_by_the_folder_it_was_opened_from_not_by_its_name_again(tmp_path, monkeypatch):
    # read-hlswap: in their folder d, x.txt a hard link to root's 0600 log; they swap the name d for their symlink to
    # /root (a folder of root's) and back: the folder was stat'ed by name after the open, and root's log was read
    # through their link in 31,544 of 663,745 tries (fs.protected_hardlinks=0, the kernel's default, lets them link)
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"ROOTSECRET")
    secret.chmod(0o600)
    d, roots = tmp_path / "d", tmp_path / "roots"
    d.mkdir()
    roots.mkdir(mode=0o755)
    os.link(secret, d / "x.txt")
    os.chown(d, 12345, 12345)  # the user's folder
    real_open = os.open

    def open_then_swap(name, flags, *a, **k):
        fd = real_open(name, flags, *a, **k)
        if name == "x.txt":  # the file opened: now they swap their folder's name for their link to root's folder
            os.rename(d, tmp_path / "away")
            d.symlink_to(roots)
        return fd

    monkeypatch.setattr(os, "open", open_then_swap)
    with pytest.raises(OSError, match="a hard link \\(one of 2 names\\) to a file of root's in a folder of 12345's"):
        ingest_open.read_input(d / "x.txt")  # old: b"ROOTSECRET"
