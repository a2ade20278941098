"""The fifth attack campaign's data-side findings (docs/reliability-5-store.md), each re-run as the attack ran:
real logs, real ingests, each state compared with a clean ingest of the same tree."""

import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import FIXTURES, RAW

from storagelab import store
from storagelab.analysis.selection import Selection

LOG = RAW / "homelab-mergerfs" / "fio-btrfs-single.txt"  # real fio output (data/raw)


def _ingest(raw: Path, db: Path) -> store.Summary:
    return store.ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False)


def _state(db: Path) -> dict:
    """Where every path is on record, and the fio rows a notebook on study ``sb`` selects."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        where, params = Selection(study="sb").sql("f")
        return {
            "files": sorted(p.rsplit("/", 1)[1] for (p,) in con.execute("SELECT path FROM files").fetchall()),
            "duplicates": sorted(
                (p.rsplit("/", 1)[1], s.rsplit("/", 1)[1])
                for p, s in con.execute("SELECT path, same_as FROM duplicates").fetchall()
            ),
            "ingest_errors": sorted(
                p.rsplit("/", 1)[1] for (p,) in con.execute("SELECT path FROM ingest_errors").fetchall()
            ),
            "study sb fio_groups": con.execute(
                f"SELECT count(*) FROM fio_groups g JOIN files f USING (file_id) WHERE {where}", params
            ).fetchone()[0],
        }
    finally:
        con.close()


def test_a_copy_overwritten_with_junk_and_a_failure_turned_copy_match_a_clean_ingest(tmp_path):
    """reliability-5 High 1: b.txt, a labelled copy of the stored a.txt, is overwritten with bytes no parser reads;
    c.txt, a failure, is overwritten with a.txt's bytes. The re-ingest kept b.txt in ``duplicates`` (so study sb
    still selected a.txt's rows, which no file of sb holds any more) and c.txt in ``ingest_errors`` beside its
    ``duplicates`` row. A clean ingest of the same tree has neither."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copyfile(LOG, logs / "a.txt")
    shutil.copyfile(LOG, logs / "b.txt")
    (logs / "c.txt").write_text("not a log\n")
    (logs / "manifest.csv").write_text("path,study,label\na.txt,sa,A\nb.txt,sb,B\n")
    db = tmp_path / "inc.duckdb"
    _ingest(logs, db)
    assert _state(db) == {
        "files": ["a.txt"],
        "duplicates": [("b.txt", "a.txt")],
        "ingest_errors": ["c.txt"],
        "study sb fio_groups": 1,
    }
    (logs / "b.txt").write_text("not a log either\n")
    shutil.copyfile(LOG, logs / "c.txt")
    s = _ingest(logs, db)
    assert (s.ingested, s.failed) == (0, 1)
    expected = {"files": ["a.txt"], "duplicates": [("c.txt", "a.txt")], "ingest_errors": ["b.txt"]}
    assert _state(db) == {**expected, "study sb fio_groups": 0}
    clean = tmp_path / "clean.duckdb"
    _ingest(logs, clean)
    assert _state(clean) == _state(db)
    _ingest(logs, db)  # and it stays so
    assert _state(db) == _state(clean)


@pytest.mark.slow
def test_ctrl_c_while_the_cli_starts_is_one_line(tmp_path, seed_db):
    """reliability-5 Medium 2: Ctrl-C (SIGINT to the group, default disposition) in the first half second of
    `export`, while Python imports the CLI and duckdb: a 29- to 39-line traceback (KeyboardInterrupt, or duckdb's
    ImportError made of it), exit 1 or -2. Only the interpreter's own start-up (site, before storagelab runs)
    is out of reach; no traceback may pass through storagelab's code."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import ROOT

    db = tmp_path / "t.duckdb"
    shutil.copy(seed_db, db)  # data/raw/ with its manifest, as `_ingest(RAW, db)` made it (the session's, issue 28)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    seen = []
    for i in range(20):
        p = subprocess.Popen(
            [sys.executable, "-m", "storagelab", "export", "--dataset", str(tmp_path / "ds"), "--db", str(db)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        time.sleep(0.08 + 0.025 * i)
        os.killpg(p.pid, signal.SIGINT)
        err = p.communicate(timeout=60)[1]
        seen.append(p.returncode)
        ours = any(f"storagelab/{m}" in err for m in ("cli.py", "__main__.py", "store/"))
        assert not ("Traceback" in err and ours), (0.08 + 0.025 * i, err[-3000:])
        if p.returncode not in (0, 1):
            assert p.returncode in (130, -signal.SIGINT), err
    assert set(seen) & {130, -signal.SIGINT}  # some were interrupted (a machine too fast to reach any is no test)


def test_an_ingest_under_ulimit_n_16_ends_with_one_line_and_does_not_hang(tmp_path):
    """reliability-5 High 3: `ulimit -n 16; storagelab ingest` printed "[Errno 24] Too many open files" and then
    never exited (a 120 s timeout): the pool's first submit failed after forking a worker, no manager thread had
    started to stop it, and Python's exit joined it for ever (multiprocessing.util._exit_function)."""
    import os
    import resource
    import subprocess
    import sys

    from conftest import ROOT

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))

    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    # the fixtures: over POOL_MIN_FILES files, so they are parsed on a process pool
    args = ["ingest", str(FIXTURES), "--db", str(tmp_path / "t.duckdb"), "--quiet", "--workers", "2", "--no-parquet"]
    try:
        r = subprocess.run(
            [sys.executable, "-m", "storagelab", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=limit,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("ulimit -n 16: the ingest hung")
    assert (r.returncode, r.stderr.strip().splitlines()[-1]) == (
        2,
        f"storagelab ingest: {tmp_path / 't.duckdb'}: [Errno 24] Too many open files",
    ), r.stderr[-2000:]
