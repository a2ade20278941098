"""Ctrl-C and SIGTERM of long commands, as reliability-3 did them (issue 26): a real signal to a real process
whose SIGINT is at its default disposition (Python's handler installed, as in a terminal), then the exit code,
stderr (one line, no traceback) and, for the dataset writers, the dataset read back with storagelab's own reader:
either the old one whole or the new one whole, compared per table with the databases."""

from __future__ import annotations

import csv
import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import proctree
import psutil
import pytest
from conftest import RAW, ROOT
from session_once import once_per_session

from storagelab.dataset import open_dataset

pytestmark = pytest.mark.e2e

STUDIES = (
    20  # partitions of the dataset: each one a COPY per table, so an export runs for seconds (3 s here; 40: 6.6 s,
)
# and each of the four stopped-writer tests ends with a whole export: 70 s of a clean-clone run)


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "lib"), PYTHONUNBUFFERED="1")


def _default_sigint() -> None:
    """In the child before exec: Ctrl-C as a terminal gives it (a shell's background job has it ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "storagelab", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=ROOT,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )


def _wait_for(p: subprocess.Popen, ready, what: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end and p.poll() is None and not ready():
        time.sleep(0.02)
    assert p.poll() is None, f"ended before {what}: {p.communicate()}"
    assert ready(), f"never {what}"


def _stop(p: subprocess.Popen, sig: int, within: float = 10) -> tuple[float, str, str]:
    """Send ``sig`` to the process group (what a terminal's Ctrl-C does); (seconds to exit, stdout, stderr)."""
    t = time.monotonic()
    os.killpg(p.pid, sig)
    try:
        out, err = p.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"still running {within} s after signal {sig}")
    return time.monotonic() - t, out, err


def _assert_one_line(err: str, cmd: str, rc: int, p: subprocess.Popen) -> None:
    """One line for the stop (an ingest's parser warnings and notes, printed before, aside)."""
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    if cmd == "ingest":
        err = "".join(x for x in err.splitlines(keepends=True) if not x.startswith(("warning: ", "note: ")))
    if rc == 130:
        assert p.returncode == 130 and len(err.splitlines()) == 1, (p.returncode, err)
        assert err.startswith(f"storagelab {cmd}: interrupted"), err
    else:  # SIGTERM: the process ends at once, with one line and 143 (stopsignals)
        assert p.returncode == 143 and err.splitlines()[-1:] == [f"storagelab {cmd}: terminated (SIGTERM)"], err


def _corpus(dest: Path, studies: int, first: bool = False) -> None:
    """``studies`` folders of 6 real bonnie++ outputs each (data/raw, each copy made unique by trailing newlines),
    one study per folder in manifest.csv. ``first``: also a file per folder that sorts before the others (new
    files shift every later file_id, the export analogue of reliability-2's high 2)."""
    srcs = sorted(p for p in (RAW / "freebsd-bonnie-dedup").iterdir() if p.suffix == ".txt")[:6]
    rows = []
    for i in range(studies):
        for j, src in enumerate(srcs[:1] if first else srcs):
            rel = f"s{i:03d}/{'0first-' if first else ''}{j}-{src.name}"
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(src.read_bytes() + b"\n" * (i + 1 + (100 if first else 0)))
            rows.append((rel, f"study{i:03d}"))
    with open(dest / "manifest.csv", "a", newline="") as f:
        w = csv.writer(f)
        if not first:
            w.writerow(["path", "study"])
        w.writerows(rows)


def _ingest(corpus: Path, db: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "ingest", str(corpus), "--db", str(db), "--no-parquet"],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert r.returncode == 0, r.stderr


def _per_table(con) -> dict[str, dict[str, int]]:
    """table -> {path: rows} for every table keyed by file_id (reliability-3's dscheck2)."""
    keyed = [
        t
        for (t,) in con.execute(
            "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'file_id' ORDER BY 1"
        ).fetchall()
        if t not in ("files", "duplicates", "ingest_errors", "meta")
    ]
    out: dict[str, dict[str, int]] = {}
    if keyed:  # one statement for every table, not a DESCRIBE and a count each: a dataset's are Parquet reads
        every = " UNION ALL ".join(
            f"SELECT '{t}' AS t, f.path, count(*) FROM \"{t}\" JOIN files f USING (file_id) GROUP BY 2" for t in keyed
        )
        for t, path, n in con.execute(every).fetchall():
            out.setdefault(t, {})[path] = n
    return out


def _db_state(db: Path) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return _per_table(con)
    finally:
        con.close()


def _dataset_state(ds: Path) -> dict:
    con = open_dataset(ds)
    try:
        return _per_table(con)
    finally:
        con.close()


@pytest.fixture(scope="module")
def two_databases(request, tmp_path_factory) -> tuple[Path, Path, Path]:
    """(corpus, old database, new database): the new one has one more file per study, sorting first. Built once per
    session (read-only for the tests: they copy what they change; LONG_FIRST hands them to both workers)."""
    return once_per_session(request.config, tmp_path_factory, "sigint", _two_databases)


def _two_databases(root: Path) -> tuple[Path, Path, Path]:
    corpus = root / "corpus"
    _corpus(corpus, STUDIES)
    old = root / "old.duckdb"
    _ingest(corpus, old)
    _corpus(corpus, STUDIES, first=True)
    new = root / "new.duckdb"
    _ingest(corpus, new)
    return corpus, old, new


def test_ctrl_c_stops_a_long_sql_query_within_a_second(tmp_path, two_databases):
    """reliability-3 medium 1: SIGINT 3 s into this query, and it was still running 10 s later (it ran 4 m 41 s)."""
    p = _start("sql", "select sum(hash(range)) from range(100000000000)", "--db", str(two_databases[1]))
    proc = psutil.Process(p.pid)
    _wait_for(p, lambda: proc.cpu_times().user > 1.5, "the query ran")
    took, out, err = _stop(p, signal.SIGINT)
    assert (p.returncode, out, err) == (130, "", "storagelab sql: interrupted\n")
    assert took < 3, took


def _writing(ds: Path, before: set[Path]):
    """True once the export writes this run's part files (a .tmp or a part file the old dataset did not have)."""

    def ready() -> bool:
        return any(f not in before for f in ds.rglob("*") if f.is_file() and f.parent.name != "_storagelab")

    return ready


def _export(db: Path, ds: Path) -> None:
    """``storagelab export --db DB --dataset DS``, run to its end: it succeeds."""
    r = subprocess.run(
        [sys.executable, "-m", "storagelab", "export", "--db", str(db), "--dataset", str(ds)],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def old_dataset(request, two_databases, tmp_path_factory) -> Path:
    """The old database's dataset, written once per session by `storagelab export --dataset` (each test stops a
    writer on a copy of it; LONG_FIRST hands the four tests to both workers, and each wrote it: issue 28)."""

    def export(root: Path) -> Path:
        _export(two_databases[1], root / "ds")
        return root / "ds"

    return once_per_session(request.config, tmp_path_factory, "sigint-old-dataset", export)


@functools.cache
def _old_state(old_dataset: Path) -> dict:
    return _dataset_state(old_dataset)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("verb", ["export", "ingest"])
def test_a_dataset_stopped_mid_write_is_the_old_one_whole(verb, sig, tmp_path, two_databases, old_dataset):
    """reliability-3's `export --dataset` kills, with Ctrl-C and SIGTERM: the old dataset, whole, then the next
    export gives the new one, whole; `ingest --dataset` the same (the database is complete, the dataset old)."""
    corpus, old, new = two_databases
    ds = tmp_path / "ds"
    db = tmp_path / "t.duckdb"
    shutil.copy(old, db)
    shutil.copytree(old_dataset, ds)  # the old database's export (one for the four tests)
    old_state = _old_state(old_dataset)  # what the copy holds (the same bytes), read once per worker: issue 28
    assert old_state == _db_state(old)
    if verb == "export":
        shutil.copy(new, db)
        p = _start("export", "--db", str(db), "--dataset", str(ds))
    else:  # the ingest adds the new files to the database, then writes the dataset
        p = _start("ingest", str(corpus), "--db", str(db), "--no-parquet", "--dataset", str(ds))
    before = {f for f in ds.rglob("*") if f.is_file()}
    _wait_for(p, _writing(ds, before), "the dataset was being written")
    took, out, err = _stop(p, sig)
    _assert_one_line(err, verb, 130 if sig == signal.SIGINT else 143, p)
    assert took < 5, took
    if verb == "ingest" and sig == signal.SIGINT:
        assert f"interrupted while writing the dataset {ds}: the database is complete" in err, err
    assert _dataset_state(ds) == old_state  # the old dataset, whole: no row joined to another file
    if verb == "ingest":
        assert _db_state(db) == _db_state(new)  # the database was complete before the export began
    _export(db, ds)
    assert _dataset_state(ds) == _db_state(new)
    assert not [f for f in ds.rglob("*.tmp")]


def _depth(pid: int, depth: int):
    """True once ``pid`` has a process ``depth`` levels below it (2: a pool worker's kernel; 1: fio)."""

    def ready() -> bool:
        level = [pid]
        for _ in range(depth):
            level = [c for q in level for c in proctree.children(q)]
        return bool(level)

    return ready


def _cpu(pid: int, seconds: float):
    proc = psutil.Process(pid)
    return lambda: proc.cpu_times().user > seconds


def _long(kind: str, tmp_path: Path, two_databases) -> tuple[list[str], object]:
    """(storagelab arguments, a readiness test taking the pid) for a long run of ``kind``."""
    corpus, old, _new = two_databases
    if kind == "ingest":
        big = tmp_path / "big"
        big.mkdir()
        srcs = sorted(p for p in (RAW / "freebsd-bonnie-dedup").iterdir() if p.suffix == ".txt")
        for i in range(1500):
            (big / f"{i:04d}.txt").write_bytes(srcs[i % len(srcs)].read_bytes() + b"\n" * (i + 1))
        args = ["ingest", str(big), "--db", str(tmp_path / "t.duckdb"), "--no-parquet", "--batch-files", "1"]
        return args, lambda pid: _cpu(pid, 1.0)
    if kind == "run":
        args = ["run", "09_bonnie", "01_vdev_scaling", "-p", "db_path", str(old), "--output", str(tmp_path / "r")]
        return args, lambda pid: _depth(pid, 2)  # a notebook's kernel runs
    if kind == "sql-parquet":
        query = "select sum(hash(range)) as s from range(100000000000)"
        return ["sql", query, "--db", str(old), "--parquet", str(tmp_path / "o.parquet")], lambda pid: _cpu(pid, 1.5)
    if kind == "lab fio":
        args = ["lab", "fio", "--preset", "smoke", "--target", str(tmp_path / "t"), "--out", str(tmp_path / "out")]
        return [*args, "--db", str(tmp_path / "lab.duckdb")], lambda pid: _depth(pid, 1)  # fio runs
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["ingest", "run", "sql-parquet", "lab fio"])
def test_ctrl_c_of_a_long_command_is_130_and_one_line(kind, tmp_path, two_databases):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) while each long command works: exit 130 within
    a few seconds, one line that says it was interrupted, no traceback, nothing left running.
    (sql, export --dataset and ingest --dataset: above.)"""
    if kind == "lab fio" and not shutil.which("fio"):
        pytest.skip("fio is not installed")
    args, ready = _long(kind, tmp_path, two_databases)
    p = _start(*args)
    _wait_for(p, ready(p.pid), f"{kind} was at work", timeout=120)
    below = proctree.below(p.pid)
    took, out, err = _stop(p, signal.SIGINT, within=20)
    said = [ln for ln in err.splitlines() if not ln.startswith(("warning: ", "note: "))]
    if kind == "lab fio" and not err:  # the lab's own stop, once its handler is in place: its log's line, on stdout
        said = [ln for ln in out.splitlines() if ln.startswith("interrupted: ")]  # (test_reliability6_processes)
    assert p.returncode == 130 and "Traceback" not in err and len(said) == 1, (p.returncode, err)
    assert "interrupted" in said[0], said
    assert took < 10, took
    assert not proctree.survivors(below, seconds=1)  # all ended within 1 s (polled: no fixed 1-s sleep; issue 28)
