"""The package says it is typed (PEP 561) and ships the marker; the type checker's scope is declared."""

from __future__ import annotations

import tomllib

from conftest import ROOT


def test_py_typed_exists_and_is_package_data():
    assert (ROOT / "lib" / "storagelab" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["storagelab"]


def test_mypy_checks_parsers_and_analysis_and_runs_in_the_test_command():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert data["files"] == ["lib/storagelab/parsers", "lib/storagelab/analysis"]
    assert data["python_version"] == "3.11"
    run = (ROOT / "run").read_text()
    test_task = run[run.index("  test)") : run.index("  ingest)")]
    assert test_task.index("-m ruff check") < test_task.index("-m mypy") < test_task.index("-m pytest")
