"""Reliability-33, the read side (h2): root's reads and runs of paths another local user controls."""

from __future__ import annotations

import os
import subprocess
import sys

from storagelab import ownership, paths


def test_the_files_libraries_read_or_write_by_the_environments_names_are_checked(tmp_path):
    # reliability-33: `OPENSSL_CONF=/tmp/theirs/openssl.cnf storagelab run 07_explore` loaded the shared object their
    # configuration's provider section named, as uid 0 (in the command, at duckdb's import, and in its kernel);
    # COVERAGE_PROCESS_START=their.ini (`data_file = /root/x`) had coverage's .pth overwrite root's 0600 file at exit;
    # SSLKEYLOGFILE and DEBUGPY_LOG_DIR had root's kernel make its files in their folder. None was checked.
    tmp_path.chmod(0o700)
    ok, ww, shared = tmp_path / "ok.cnf", tmp_path / "ww.cnf", tmp_path / "shared"
    for p in (ok, ww):
        p.write_text("# nothing\n")
        p.chmod(0o644)
    ww.chmod(0o666)
    shared.mkdir()
    shared.chmod(0o777)
    for var in ("OPENSSL_CONF", "COVERAGE_PROCESS_START", "SSLKEYLOGFILE", "PYDEVD_DEBUG_FILE", "COVERAGE_DEBUG_FILE"):
        assert ownership.environment_refusal({var: str(ok)}) is None
        assert f"{var} ({ww}) is a file that can be written by every user" in (
            ownership.environment_refusal({var: str(ww)}) or ""
        )
        assert f"{var} ({shared}): {shared} can be written by every user" in (
            ownership.environment_refusal({var: str(shared / "x")}) or ""
        )
    for var in ("OPENSSL_MODULES", "OPENSSL_ENGINES", "DEBUGPY_LOG_DIR"):
        assert ownership.environment_refusal({var: str(tmp_path)}) is None
        assert "can be written by every user" in (ownership.environment_refusal({var: str(shared)}) or "")


def test_the_environment_is_refused_before_openssl_is_loaded_and_coverage_saves_nothing(tmp_path):
    # reliability-33: duckdb's import loads OpenSSL (and OPENSSL_CONF's modules): the CLI imported it (the store,
    # and `lab fio`'s modules) before it checked the environment, so their .so ran even in a refused command; and
    # coverage, started by its .pth before any of this code, wrote their configuration's data_file at exit
    tmp_path.chmod(0o700)
    victim, conf, cov = tmp_path / "victim.txt", tmp_path / "openssl.cnf", tmp_path / "cov.ini"
    victim.write_text("root's\n")
    victim.chmod(0o600)
    conf.write_text("# nothing\n")
    cov.write_text(f"[run]\ndata_file = {victim}\n")
    for p in (conf, cov):
        p.chmod(0o666)
    code = (
        "import sys; from storagelab.cli import main; "
        f"print(main(['lab', 'fio', '--target', {str(tmp_path / 'none')!r}]), main(['sql', 'select 1']), 'duckdb' in sys.modules)"
    )
    env = dict(os.environ, PYTHONPATH=str(paths.ROOT / "lib"))
    for var, value in (("OPENSSL_CONF", conf), ("COVERAGE_PROCESS_START", cov)):
        run = subprocess.run(
            [sys.executable, "-c", code], env=env | {var: str(value)}, capture_output=True, text=True, timeout=60
        )
        assert run.stdout.split() == ["2", "2", "False"], run.stdout + run.stderr
        assert f"{var} ({value}) is a file that can be written by every user" in run.stderr
    assert victim.read_text() == "root's\n"
