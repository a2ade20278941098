"""pyproject.toml, environment.yml and requirements.lock must agree."""

import re
import tomllib

from conftest import ROOT


def _name(spec: str) -> str:
    return re.split(r"[<>=!~\[ ;]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(data["dependencies"])
    for extra in data["optional-dependencies"].values():
        specs += extra
    return {_name(s) for s in specs}


def _environment_yml():
    pins = {}
    in_pip = False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        if re.match(r"\s+- pip:\s*$", line):
            in_pip = True
            continue
        m = re.match(r"\s+- ([A-Za-z0-9_.-]+)==(\S+)\s*$", line)
        if in_pip and m:
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    return pins


def _lock():
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


def test_environment_yml_pins_exactly_the_locked_packages():
    """The conda path installs the same packages at the same versions as ./run (pip -c requirements.lock)."""
    env, lock = _environment_yml(), _lock()
    assert set(env) == set(lock), (
        f"only in environment.yml: {set(env) - set(lock)}; only in the lock: {set(lock) - set(env)}"
    )
    for name, version in env.items():
        assert lock[name] == version, f"{name}: environment.yml {version}, requirements.lock {lock[name]}"


def test_environment_yml_installs_the_project_with_the_same_extras_as_run():
    text = (ROOT / "environment.yml").read_text()
    assert "      - -e .[test,lab,spark]\n" in text
    assert "-e '.[test,lab]'" in (ROOT / "run").read_text()
    assert "-e '.[spark]'" in (ROOT / "run").read_text()  # the test command adds the Spark extra
    assert re.search(r"^  - python=3\.\d+$", text, re.M)  # the Python the lock was made on (./run lock)


def test_environment_yml_is_what_the_lock_task_writes():
    import importlib.util

    spec = importlib.util.spec_from_file_location("sync_environment", ROOT / "scripts" / "sync_environment.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    python = re.search(r"^  - python=(\S+)$", (ROOT / "environment.yml").read_text(), re.M).group(1)
    assert mod.render(ROOT, python) == (ROOT / "environment.yml").read_text()  # ./run lock regenerates it


def test_every_dependency_is_locked():
    lock = _lock()
    missing = _pyproject() - set(lock)
    assert not missing


def test_gitignore_does_not_hide_lib_or_logs():
    text = (ROOT / ".gitignore").read_text().splitlines()
    assert not any(line.strip() in ("lib/", "/lib/", "*.log", "data/", "/data/") for line in text)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "./run test" in readme
    assert "./run test" in (ROOT / ".ci" / "run").read_text()
