import importlib
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "raw"
FIXTURES = ROOT / "tests" / "fixtures"
SEEDS = ROOT.parent / "shared" / "seeds"

# The property tests' Hypothesis settings, in one place: fixed examples (derandomized) unless
# STORAGELAB_HYPOTHESIS_RANDOM is set, and each test's example count times STORAGELAB_HYPOTHESIS_SCALE
# (10 for a deep local run; `./run test-quick` uses 0.2).
HYPOTHESIS_SCALE = float(os.environ.get("STORAGELAB_HYPOTHESIS_SCALE", "1"))
settings.register_profile(
    "storagelab",
    derandomize=not os.environ.get("STORAGELAB_HYPOTHESIS_RANDOM"),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("storagelab")


def props(examples: int) -> settings:
    """The project's Hypothesis settings with ``examples`` (scaled by STORAGELAB_HYPOTHESIS_SCALE, at least 1)."""
    return settings(max_examples=max(1, round(examples * HYPOTHESIS_SCALE)))


# every Spark job of the tests (`spark-ingest ... *SPARK_TEST_CONF`): the JVM compiles with C1 only, collects with the
# serial collector and writes no perf-data file; Spark SQL runs interpreted (no generated code to compile) and plans
# without adaptive execution. The same rows (the tests compare them with the local ingest's), less than half the CPU
# of a short local job: one spark-ingest of data/raw/ 38.6 -> 17.1 s (issue 28). Nor does it verify the bytecode of
# Spark's jars (as no JVM does for the JDK's own classes): about 1 s of CPU less per JVM, of 11 (a run on two seed logs;
# a killed run 6). An archive of Spark's classes (class-data sharing) would save 3.3 s per JVM, but making it cost
# 21 s more than a run: about 30 s saved for ~9 JVMs a session, minus 21 to 32 s
SPARK_TEST_CONF = (
    "--conf",
    "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData"
    " -XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote",
    "--conf",
    "spark.sql.codegen.wholeStage=false",
    "--conf",
    "spark.sql.codegen.factoryMode=NO_CODEGEN",
    "--conf",
    "spark.sql.adaptive.enabled=false",
    "--conf",
    "spark.sql.shuffle.partitions=2",
)


def storagelab_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m storagelab ARGS`` from the project root with this checkout's lib/, output captured."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout
    )


def ingest_unlabelled(paths, folder: Path) -> Path:
    """``paths`` ingested, without labels, into a new database in ``folder`` (one worker, no Parquet)."""
    from storagelab.store import ingest

    db = folder / "unlabelled.duckdb"
    ingest(
        [str(x) for x in paths],
        db_path=db,
        manifest_path=folder / "none.csv",
        parquet_dir=False,
        progress=False,
        workers=1,
    )
    return db


def ingest_labelled(raw: Path, manifest: str) -> Path:
    """``raw`` with ``manifest`` written as its manifest.csv, ingested into a new database beside it (one worker,
    no Parquet); every file must ingest."""
    from storagelab.store import ingest

    (raw / "manifest.csv").write_text(manifest, encoding="utf-8")
    db = raw.parent / "labelled.duckdb"
    s = ingest([raw], db_path=db, manifest_path=raw / "manifest.csv", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    return db


# SIGINT's handler when pytest started: SIG_IGN when it was started as a background job of a non-interactive shell
# (its children inherit that), which no test caused; the summary says so (issue 26)
_SIGINT_AT_START = signal.getsignal(signal.SIGINT)
if _SIGINT_AT_START is signal.SIG_IGN:
    # started as a background job of a non-interactive shell (`cmd &` in a script), which ignores Ctrl-C for all it
    # starts: the Ctrl-C tests' commands would inherit that and never see their SIGINT. They test what a command
    # typed at a terminal does, so the tests run with Python's own handler, as such a command has it.
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _sigint_handler_kept():
    """Every test leaves SIGINT's handler as it found it: a command run in-process (``cli.main([...])`` from a
    notebook or a script) that left Ctrl-C ignored or redirected would break its caller (issue 26)."""
    before = signal.getsignal(signal.SIGINT)
    yield
    from storagelab import database  # noqa: PLC0415

    database.THEIRS.clear()  # another user's database read by one test does not change the next one's excerpts
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)  # the next test starts as this one did
        pytest.fail(f"the test left SIGINT handled by {after!r}; it found {before!r}", pytrace=False)


@pytest.fixture(scope="session")
def playwright():
    """One Playwright (sync API) per test process, for every browser test: its sync API runs an event loop for as
    long as it is open, and a second one started beside it fails ('Playwright Sync API inside the asyncio loop'), as
    test_jupyterlab's did once test_reports' session browser ran first (LONG_FIRST)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture
def raw_copy(tmp_path):
    """A copy of data/raw/ (with its manifest) that a test may change."""
    dest = tmp_path / "raw"
    shutil.copytree(RAW, dest)
    return dest


MEMORY_FS = Path("/dev/shm")


@pytest.fixture
def mem_path(tmp_path):
    """A new empty folder in memory (tmpfs: /dev/shm), removed afterwards; ``tmp_path`` where there is none (or
    under 1 GiB free). For a test whose cost is its database's commits: DuckDB syncs the disk at every commit
    (fdatasync), a no-op on tmpfs, and the same code runs (the every-fixture stream test: 7,416 fdatasync calls
    that waited 4.0 s in all on this machine's disk at load 5-7, 0.2 s on tmpfs; issue 28)."""
    try:
        usable = os.access(MEMORY_FS, os.W_OK) and shutil.disk_usage(MEMORY_FS).free >= 2**30
    except OSError:
        usable = False
    if not usable:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="storagelab-test-", dir=MEMORY_FS))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def seed_db(tmp_path_factory):
    """data/raw/ ingested once into a temporary database (read-only use)."""
    from storagelab.store import ingest

    db = tmp_path_factory.mktemp("db") / "seed.duckdb"
    summary = ingest([RAW], db_path=db, manifest_path=RAW / "manifest.csv", parquet_dir=False, progress=False)
    assert summary.failed == 0, summary.errors
    return db


# real zdb 2.1.11 outputs of one ztest pool (tests/fixtures/zdb/COMMANDS.md), labelled as a user would label them:
# no prompt line in the files, so the pool name comes from the manifest
ZTEST_FILES = {"zdb-b.txt": "b.txt", "zdb-bb.txt": "bb.txt", "zdb-S.txt": "S.txt", "zdb-DD.txt": "DD.txt"}


@pytest.fixture(scope="session")
def ztest_db(tmp_path_factory):
    """The ztest pool's zdb -b, -bb, -S and -DD (study 'ztestlab', pool 'ztest') ingested once (read-only use)."""
    from storagelab.store import ingest

    root = tmp_path_factory.mktemp("ztest")
    (root / "raw" / "ztestlab").mkdir(parents=True)
    rows = ["path,study,pool,label"]
    for name, src in ZTEST_FILES.items():
        shutil.copyfile(FIXTURES / "zdb" / "2.1" / src, root / "raw" / "ztestlab" / name)
        rows.append(f"ztestlab/{name},ztestlab,ztest,{name[:-4]}")
    (root / "raw" / "manifest.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    db = root / "ztest.duckdb"
    summary = ingest([root / "raw"], db_path=db, manifest_path=root / "raw" / "manifest.csv", parquet_dir=False)
    assert summary.failed == 0, summary.errors
    return db


def analyse_study(db, analyse, study: str, **kwargs):
    """``analyse(con, Selection(study=study), **kwargs)`` on a read-only connection to ``db``, closed afterwards."""
    from storagelab.analysis import Selection, open_db

    con = open_db(db)
    try:
        return analyse(con, Selection(study=study), **kwargs)
    finally:
        con.close()


# ----------------------------------------------------------------------------- long builds beside the suite
# A test module may list in BACKGROUND functions ``fn(root: Path) -> value`` that take minutes and need nothing from
# any other test: a project of their own under an empty temporary ``root``, driven through subprocesses (the second
# study's build and runs, tests/test_any_study.py). Once the tests are collected, each starts in a thread beside the
# rest of the suite, and the tests that wait for one (through the `background` fixture) are moved to the end;
# the `background` fixture waits for the value. At the end of the session the thread is waited for (a -x stop too).
# Under pytest-xdist (`-n 2`, ./run test) each runs once per session, not once per worker: worker gw0 runs them in
# its thread and leaves each value, pickled, in a folder the controller made for the session; the other workers'
# `background` fixture waits for that file. The controller prints the times and removes the folder at the end.
_BACKGROUND: dict[Callable, Future] = {}
_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="storagelab-background")
_ROOTS: list[str] = []
_SHARED: dict[str, Path] = {}  # "dir": the session's folder shared by the controller and the workers (xdist)
_FROM_GW0: set[str] = set()  # on a worker other than gw0: the functions gw0 runs (every worker collects the same)
_WAIT_FOR_GW0 = 3600.0  # seconds; a lost gw0 fails the waiting test instead of hanging it


def _background_functions(item) -> list[Callable]:
    """The module's BACKGROUND functions, for a test that waits for them (uses the `background` fixture): the
    other tests of that module (`./run test-quick` selects some) start nothing."""
    if "background" not in getattr(item, "fixturenames", ()):
        return []
    return list(getattr(getattr(item, "module", None), "BACKGROUND", ()))


def _key(fn: Callable) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def _worker_id(config) -> str | None:
    """The pytest-xdist worker's id ("gw0", ...), None in a serial run and in the controller."""
    return getattr(config, "workerinput", {}).get("workerid")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist's controller, for each worker it starts: the session's shared folder."""
    if "dir" not in _SHARED:
        _SHARED["dir"] = Path(tempfile.mkdtemp(prefix="storagelab-session-"))
    node.workerinput["storagelab_shared"] = str(_SHARED["dir"])


def pytest_configure(config):
    shared = getattr(config, "workerinput", {}).get("storagelab_shared")
    if shared:
        _SHARED["dir"] = Path(shared)


# the longest tests that are not e2e by their own marks, left out of the edit loop too (./run test-quick); CPU seconds
# of one run of `pytest -m "not e2e"` with STORAGELAB_HYPOTHESIS_SCALE=0.2, of 214 in all (issue 28)
NOT_QUICK = (
    "tests/test_robustness.py::test_truncated_at_every_line_boundary",  # 393 fixtures cut at every line: 46 s
    "tests/test_exit_codes.py::test_ctrl_c_during_sql_is_130_and_one_line",  # 14 s
    "tests/test_dataset_commit.py::test_an_export_killed_",  # an export killed at each stage: 8 s
    "tests/test_store_identity.py::test_any_order_of_changes_ends_as_a_fresh_ingest",  # 6 s CPU, 20 s wall
    "tests/test_fio_grid.py::test_every_fixture_unlabelled_",  # every fio fixture ingested and analysed: 4 s
)


def pytest_itemcollected(item):
    """slow and browser tests, and those of NOT_QUICK, are end to end too: `-m "not e2e"` (./run test-quick) leaves
    them out."""
    if item.get_closest_marker("slow") or item.get_closest_marker("browser") or item.nodeid.startswith(NOT_QUICK):
        item.add_marker(pytest.mark.e2e)


# the longest tests, longest first (seconds in the --junitxml of a whole `./run test` on the shared machine, load 15-25,
# 2026-11-27; a test that waits for a BACKGROUND function is not here: those run last): they run first, so that no
# worker is left with one of them at the end while the other has ended (pytest-xdist hands the tests out one at a time
# in this order; issue 28). A prefix of a node id takes every parameter of that test.
LONG_FIRST = (
    "tests/test_spark.py::test_a_killed_spark_ingest_rerun_leaves_the_old_dataset_and_ids_stay",  # 709 s
    "tests/test_robustness.py::test_sigkill_during_ingest_never_leaves_half_a_file",  # 193 s
    "tests/test_stream.py::test_a_24_mb_log_is_ingested_in_bounded_memory",  # 130 s (as 100 MB), 52 s (as 70 MB)
    "tests/test_spark.py::test_ctrl_c_on_spark_ingest_is_one_line_and_leaves_no_jvm",  # 94 s
    "tests/test_reliability_stale_reports.py::test_a_relabelled_study_is_said_in_one_line_and_its_old_reports_",  # 93 s
    "tests/test_reliability4.py::test_an_ingest_under_a_low_memory_limit_never_hangs",  # 84 s
    "tests/test_store_identity.py::test_any_order_of_changes_ends_as_a_fresh_ingest",  # 74 s
    "tests/test_stream.py::test_every_real_fixture_streamed_gives_the_whole_file_rows",  # 70 s
    "tests/test_sigint.py::test_a_dataset_stopped_mid_write_is_the_old_one_whole",  # 4 x 28-68 s
    "tests/test_reliability5_processes.py::test_ctrl_c_on_spark_ingest_is_130_and_one_line",  # 64 s
    "tests/test_reports.py::test_log_text_shows_as_text_in_chromium",  # 61 s
    "tests/test_store.py::test_cli_database_faults_are_one_line",  # 59 s
    "tests/test_reliability5_processes.py::test_a_study_label_longer_than_a_file_name_gets_a_report_folder",  # 52 s
    "tests/test_robustness.py::test_a_second_ingest_while_one_runs_gets_a_clear_message",  # 49 s
    "tests/test_reliability_old_versions.py::test_an_older_",  # 2 x 46 s
    "tests/test_report_folders.py::test_build_of_studies_my_nas_and_my_underscore_nas_keeps_both_reports",  # 43 s
    "tests/test_reliability_workers.py::test_a_worker_killed_by_sigterm_is_one_of_the_pool",  # 40 s
    "tests/test_reports.py::test_reports_in_chromium",  # 38 s
    "tests/test_reliability5_processes.py::test_a_command_that_draws_charts_under_a_memory_limit_",  # 37 s
    "tests/test_processes.py::test_killed_spark_ingest_takes_the_jvm_and_its_python_workers_with_it",  # 2 x 35 s
    "tests/test_store_faults.py::test_a_kill_at_any_stage_then_a_rerun_gives_the_uninterrupted_state",  # 10 x 15-34 s
    "tests/test_reliability4.py::test_08_on_an_unlabelled_fio_text_log_says_why_there_is_no_grid",  # 34 s
    "tests/test_store.py::test_every_stored_row_belongs_to_the_file_it_came_from",  # 32 s
    "tests/test_store_identity.py::test_known_orders",  # 30 s
    "tests/test_reliability4.py::test_an_ingest_whose_pool_feeder_thread_dies_of_memory_ends",  # 29 s
    "tests/test_reliability4.py::test_a_run_whose_pool_feeder_thread_dies_of_memory_ends",  # 29 s
    "tests/test_processes.py::test_two_builds_at_once_both_succeed",  # 29 s
    "tests/test_dataset.py::test_a_notebook_gives_the_same_results_on_the_dataset",  # 28 s
    "tests/test_reliability5.py::test_ctrl_c_while_the_cli_starts_is_one_line",  # 26 s
    "tests/test_runner.py::test_a_relative_db_path_is_from_where_the_command_runs",  # 23 s
    "tests/test_reliability_workers.py::test_a_killed_ingest_worker_is_named_with_its_signal",  # 19 s in another run
    # the longest of the rest that were collected in the last half (load 8-20, 2026-11-27 07:40): a worker would end
    # with one of them while the other, done, waits
    "tests/test_reliability_workers.py::test_a_worker_killed_while_it_sends_its_result_does_not_hang_the_pool",  # 20 s
    "tests/test_store_unfinished.py::test_a_re_ingest_killed_at_any_later_stage_is_refused_and_then_finished",  # 4 x 4 s
    "tests/test_reliability7_processes.py::test_a_second_command_killed_beside_a_build_leaves_the_builds_reports_whole",
    "tests/test_reliability4.py::test_export_on_a_full_disk_is_one_line_and_leaves_the_old_dataset_and_no_parts",  # 11 s
    "tests/test_reliability5_processes.py::test_ctrl_c_ends_a_notebook_run_whose_worker_is_stopped",  # 11 s
    "tests/test_runner.py::test_a_failing_notebook_is_recorded_and_the_others_still_run",  # 8 s
    "tests/test_store.py::test_each_database_has_its_own_parquet_folder",  # 7 s
    "tests/test_store_unfinished.py::test_a_killed_re_ingest_is_refused_by_every_reader_until_the_next_ingest",  # 6 s
)


def _shared_fixtures(item) -> set[str]:
    """The module- and class-scoped fixtures ``item`` uses (built once for the tests of its module that run
    one after another on a worker)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", {}) if info else {}
    return {name for name, d in defs.items() if d and d[-1].scope in ("module", "class")}


def _sharing(item, items: list) -> list:
    """``item`` and the tests of its module that share a module- or class-scoped fixture with it."""
    shared, module = _shared_fixtures(item), getattr(item, "module", None)
    return [item] + [
        o for o in items if shared and getattr(o, "module", None) is module and shared & _shared_fixtures(o)
    ]


def _long_first(items: list) -> tuple[list, list]:
    """LONG_FIRST's tests, in its order, each followed by the tests of its module that share a module-scoped
    fixture with it (so that the fixture is not built once more for them); and the rest as collected."""
    first: list = []
    taken: set[int] = set()
    for prefix in LONG_FIRST:
        for it in (it for it in items if it.nodeid.startswith(prefix) and id(it) not in taken):
            for other in _sharing(it, items):
                if id(other) not in taken:
                    taken.add(id(other))
                    first.append(other)
    return first, [it for it in items if id(it) not in taken]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    first, rest = _long_first(items)
    # the tests that wait for the build `./run test` runs beside them start after the longest ones, which keep both
    # workers busy meanwhile
    waiting = [it for it in first + rest if _waits_for_the_build(it)]
    items[:] = [it for it in first if not _waits_for_the_build(it)] + waiting
    items += [it for it in rest if not _waits_for_the_build(it)]
    # the tests that wait for a BACKGROUND function, late (it has ended by then), but before the last quarter of the
    # rest (short tests, none in LONG_FIRST), which keep both workers busy to the end whatever these take after it
    late = [it for it in items if _background_functions(it)]
    if late:
        rest = [it for it in items if not _background_functions(it)]
        tail = len(rest) // 4
        items[:] = rest[: len(rest) - tail] + late + rest[len(rest) - tail :]


_TIMES: dict[str, tuple[float, float]] = {}  # background function -> (started, ended), seconds since the epoch
_T0 = time.time()


def _in_new_root(fn: Callable):
    shared = _SHARED.get("dir")  # under xdist the controller removes it, after every worker has ended
    root = tempfile.mkdtemp(prefix=f"storagelab-{fn.__name__}-", dir=shared)
    if shared is None:
        _ROOTS.append(root)
    started = time.time()
    try:
        value = fn(Path(root))
    except BaseException as e:
        _publish(fn, ("raised", e))
        raise
    finally:
        _TIMES[fn.__name__] = (started, time.time())
    _publish(fn, ("returned", value))
    return value


def _publish(fn: Callable, outcome: tuple[str, object]) -> None:
    """Under xdist: ``fn``'s outcome and times, for the other workers and the controller (written whole, then
    renamed)."""
    if "dir" not in _SHARED:
        return
    try:
        data = pickle.dumps((outcome, _TIMES.get(fn.__name__)))
    except Exception as e:  # an unpicklable value or exception: the other workers get its description
        data = pickle.dumps((("raised", RuntimeError(f"{_key(fn)}: {outcome[0]} {outcome[1]!r} ({e})")), None))
    part = _SHARED["dir"] / f"{_key(fn)}.part"
    part.write_bytes(data)
    part.rename(_SHARED["dir"] / f"{_key(fn)}.pickle")


def _from_gw0(fn: Callable):
    """``fn``'s value once worker gw0 has published it (another worker under xdist)."""
    done, deadline = _SHARED["dir"] / f"{_key(fn)}.pickle", time.monotonic() + _WAIT_FOR_GW0
    while not done.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"worker gw0 never published {_key(fn)} ({done})")
        time.sleep(0.5)
    (how, value), _ = pickle.loads(done.read_bytes())
    if how == "raised":
        raise value
    return value


def pytest_terminal_summary(terminalreporter):
    """When each background function ran: one that ends after the tests in the main thread is the critical path,
    one that ends long before leaves the second core idle for the rest (move more work into BACKGROUND)."""
    if _SIGINT_AT_START is signal.SIG_IGN:
        terminalreporter.write_line(
            "pytest started with SIGINT ignored (inherited from whatever started it): the tests ran with Python's own "
            "Ctrl-C handler, as a command typed at a terminal has it"
        )
    times = dict(_TIMES)
    if not times and "dir" in _SHARED:  # the controller under xdist: the times gw0 published
        for f in sorted(_SHARED["dir"].glob("*.pickle"), key=lambda f: f.stat().st_mtime):
            when = pickle.loads(f.read_bytes())[1]
            if when:
                times[f.stem.rsplit(".", 1)[-1]] = when
    for name, (started, ended) in times.items():
        terminalreporter.write_line(
            f"background {name}: {started - _T0:.0f} s to {ended - _T0:.0f} s into the session "
            f"(the tests ended at {time.time() - _T0:.0f} s)"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    """Under pytest-xdist every worker imports every test module. In a fresh clone (no __pycache__/) each import is
    pytest's assertion rewrite and a compile, 8 s of CPU per worker, the same work twice, at the same time, in
    the same order. So worker i of n first imports them starting i/n of the way through the list (gw1 of 2: from
    the middle): each module is rewritten once, by whichever worker reaches it first, and read from its .pyc by the
    others; the collection that follows finds them imported (issue 28)."""
    config = session.config
    worker = _worker_id(config)
    if worker is None or config.option.collectonly:
        return
    here = Path(__file__).resolve().parent
    if [Path(config.invocation_params.dir, a).resolve() for a in config.args] != [here]:
        return  # a selection of files: only those are imported
    i, n = int(worker.removeprefix("gw")), int(config.workerinput.get("workercount", 1))
    files = sorted(here.glob("test_*.py"))
    start = i * len(files) // max(n, 1)
    if start == 0:
        return
    for f in files[start:] + files[:start]:
        try:
            importlib.import_module(f.stem)
        except Exception:  # the collection imports it again and reports the error as usual
            sys.modules.pop(f.stem, None)


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    worker = _worker_id(session.config)
    for item in session.items:
        for fn in _background_functions(item):
            if worker in (None, "gw0"):  # serial, or the one worker that runs them for all
                if fn not in _BACKGROUND:
                    _BACKGROUND[fn] = _POOL.submit(_in_new_root, fn)
            else:
                _FROM_GW0.add(_key(fn))


def pytest_sessionfinish(session):
    _POOL.shutdown(wait=True, cancel_futures=True)
    for root in _ROOTS:
        shutil.rmtree(root, ignore_errors=True)


def pytest_unconfigure(config):
    """The controller under xdist, after every worker has ended and the summary has read the times."""
    if _worker_id(config) is None and "dir" in _SHARED:
        shutil.rmtree(_SHARED["dir"], ignore_errors=True)


@pytest.fixture(scope="session")
def background():
    """``background(fn)``: the value of a BACKGROUND function started when the tests were collected."""

    def wait(fn: Callable):
        if fn not in _BACKGROUND and _key(fn) in _FROM_GW0:
            return _from_gw0(fn)
        if fn not in _BACKGROUND:  # not collected through this module (e.g. called from another): start it now
            _BACKGROUND[fn] = _POOL.submit(_in_new_root, fn)
        return _BACKGROUND[fn].result()

    return wait


# ----------------------------------------------------------------------------- the build's own notebook runs
# `./run test` starts `storagelab build` beside the tests (issue 28) and names here the folder where it leaves the
# build's output (build.log) and, once it has ended, its exit code (build.rc); pytest run by itself has no build to
# wait for (the fixtures below build what is missing)
BUILD_BESIDE = os.environ.get("STORAGELAB_BUILD_BESIDE")
_WAIT_FOR_BUILD = 1800.0  # seconds


@pytest.fixture(scope="session")
def project_built():
    """Waits for the build `./run test` started beside the tests: every test that reads the project's database
    (data/parsed/) or reports (reports/) uses this fixture, and a failed build fails them with its output."""
    if not BUILD_BESIDE:
        return
    folder = Path(BUILD_BESIDE)
    done, deadline = folder / "build.rc", time.monotonic() + _WAIT_FOR_BUILD
    while not done.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"storagelab build beside the tests has not ended after {_WAIT_FOR_BUILD:.0f} s ({folder})")
        time.sleep(0.5)
    rc = int(done.read_text())
    if rc != 0:
        log = (folder / "build.log").read_text(errors="replace")
        pytest.fail(f"storagelab build beside the tests failed (exit {rc}):\n{log[-4000:]}", pytrace=False)


def _waits_for_the_build(item) -> bool:
    return bool(BUILD_BESIDE) and "project_built" in getattr(item, "fixturenames", ())


def _default_run(nb: Path):
    """The executed copy of ``nb`` that a build or `storagelab run NB` wrote with its default parameters, or None
    when there is none or its code is not the committed notebook's."""
    import nbformat

    from storagelab import report

    executed = report.report_dir(nb, {}) / "executed" / nb.name
    if not executed.exists():
        return None
    ran = nbformat.read(str(executed), as_version=4)
    code = [(c.get("id"), c.source) for c in nbformat.read(str(nb), as_version=4).cells if c.cell_type == "code"]
    sources = {c.get("id"): c.source for c in ran.cells if c.cell_type == "code"}
    return ran if all(sources.get(i) == s for i, s in code) else None


@pytest.fixture(scope="session")
def default_runs(project_built):
    """{notebook: executed notebook} of every committed notebook run with its default parameters, as the last
    build ran it (`./run test` builds beside the tests: `project_built` waits for it); the notebooks without such a
    copy, or whose code has changed since, are run once here (`storagelab run NAME ...`)."""
    from storagelab import report

    nbs = report.list_notebooks()
    runs = {nb.stem: _default_run(nb) for nb in nbs}
    stale = [stem for stem, ran in runs.items() if ran is None]
    if stale:
        from storagelab import paths

        r = storagelab_cli(*(("run", *stale) if paths.DB.exists() else ("build",)), timeout=1800)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
        runs.update({nb.stem: _default_run(nb) for nb in nbs if nb.stem in stale})
    return runs


def their_folder(parent: Path, name: str = "theirs") -> Path:
    """A folder ``parent/name`` (0755) of the second user's (uid 1002, `storagelab-rel5` in the attack tests): what the
    reliability campaigns plant their files in."""
    theirs = parent / name
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 1002, 1002)
    return theirs


def mutated(rel: str, old: str, new: str) -> bytes:
    """The fixture ``tests/fixtures/<rel>`` with its first ``old`` made ``new`` (the reliability input tests' damaged
    real logs)."""
    text = (FIXTURES / rel).read_text()
    assert old in text
    return text.replace(old, new, 1).encode()
