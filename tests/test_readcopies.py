"""A reader's private copy of a database (database._private_copy, where no hard link can be made): a reader killed
in the middle of it left its ``storagelab-read-*`` copy in TMPDIR for good, and a full TMPDIR said only `[Errno 28] No
space left on device` (issue 26's open lows, reliability-13 h7)."""

import errno
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest

import storagelab
from storagelab import database, readcopies
from storagelab.errors import StoreError

KILLED_MID_COPY = """
import sys, time
from pathlib import Path
from storagelab import database

def slow(src, to):  # half the database copied, then the reader is killed (SIGKILL: nothing of ours runs)
    to.write_bytes(b"half a database")
    print(to.parent.name, flush=True)
    time.sleep(60)

database._copy_fd = slow
db = Path(sys.argv[1])
database._private_copy(db, db)
"""


@pytest.fixture
def shared_db(tmp_path, monkeypatch):
    """A database in a sticky folder everyone can add names to (as /tmp), which a reader copies; TMPDIR a folder
    of the test's."""
    db = tmp_path / "shared" / "x.duckdb"
    db.parent.mkdir()
    db.parent.chmod(0o1777)
    duckdb.connect(str(db)).execute("CREATE TABLE t AS SELECT 'root' AS v").close()
    tmp = tmp_path / "tmp"
    tmp.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return db, tmp


def test_a_readers_copy_left_by_a_kill_is_removed_by_the_next_reader_and_only_it(shared_db):
    db, tmp = shared_db
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_MID_COPY, str(db)],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(Path(storagelab.__file__).parents[1])),
    )
    left = child.stdout.readline().strip()  # its folder, half copied
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    child.stdout.close()
    assert left.startswith("storagelab-read-") and (tmp / left / "x.duckdb").read_bytes() == b"half a database"
    alive = f"storagelab-read-{os.getpid()}-{readcopies.start_time(os.getpid())}-live"  # a reader still copying
    (tmp / alive).mkdir(mode=0o700)
    elsewhere = tmp.parent / "not-a-copy"
    elsewhere.mkdir()
    (tmp / f"storagelab-read-{child.pid}-1-link").symlink_to(elsewhere)  # a link of that name: not followed
    kept = {alive, f"storagelab-read-{child.pid}-1-link"}
    if os.geteuid() == 0:  # another user's folder of a dead reader's name: theirs to remove
        (tmp / f"storagelab-read-{child.pid}-1-theirs").mkdir()
        os.chown(tmp / f"storagelab-read-{child.pid}-1-theirs", 1002, 1002)
        kept.add(f"storagelab-read-{child.pid}-1-theirs")
    view = database._private_copy(db, db.resolve())
    assert view is not None
    assert set(os.listdir(tmp)) - {view.parent.name} == kept  # main: the killed reader's copy stayed
    assert view.parent.name.startswith(f"storagelab-read-{os.getpid()}-{readcopies.start_time(os.getpid())}-")
    con = duckdb.connect(str(view), read_only=True)
    assert con.execute("SELECT v FROM t").fetchall() == [("root",)]
    con.close()
    shutil.rmtree(view.parent)
    assert elsewhere.is_dir()


def test_a_copy_that_does_not_fit_in_tmpdir_says_which_copy_its_size_and_tmpdir(shared_db, monkeypatch):
    db, tmp = shared_db

    def full(*_a, **_k):  # what a full TMPDIR's write raises
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(readcopies, "copy_exactly", full)  # (reliability-17: the copy is no longer copyfileobj)
    size = db.stat().st_size
    with pytest.raises(StoreError) as e:
        database._private_copy(db, db.resolve())
    assert str(e.value) == (  # main: [Errno 28] No space left on device
        f"{db}: no room for this reader's private copy of the database ({size:,} bytes, made where no hard link to it "
        f"can be made) in the temporary folder {tmp} (No space left on device): free space there, or set TMPDIR to a "
        "folder of yours with room"
    )
    assert os.listdir(tmp) == []
