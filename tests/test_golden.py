"""Golden outputs: beside every real fixture under tests/fixtures, ``<fixture>.expected.jsonl`` holds
exactly what ``storagelab parse <fixture>`` prints (run from the repository root), less the volatile
``parser_version`` of the ``files`` record (it carries a hash of the parser code); a fixture that the
parsers refuse holds one ``{"error": ...}`` line with the message ``storagelab parse`` prints.

One sweep test compares them all, so that a change in any parser shows as a diff in some column nobody
asserted by hand. After an intended change, regenerate and review the diff:

    PYTHONPATH=lib python tests/test_golden.py --update      # every fixture
    PYTHONPATH=lib python tests/test_golden.py --update tests/fixtures/fio/3.33/json_only.txt
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SUFFIX = ".expected.jsonl"
NOT_FIXTURES = (".md", ".sh", ".py", ".jsonl")  # recipes, notes and the golden files themselves
VOLATILE = ("parser_version",)


def fixtures() -> list[str]:
    return sorted(
        p.relative_to(ROOT).as_posix() for p in FIXTURES.rglob("*") if p.is_file() and p.suffix not in NOT_FIXTURES
    )


def render(rel: str) -> str:
    """What ``storagelab parse rel`` prints from the repository root, volatile fields left out."""
    from storagelab import cli

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = cli.cmd_parse(argparse.Namespace(files=[rel]))
    finally:
        os.chdir(cwd)
    lines = []
    for line in out.getvalue().splitlines():
        rec = json.loads(line)
        if rec.get("table") == "files":
            for key in VOLATILE:
                rec.pop(key, None)
        lines.append(json.dumps(rec))
    if rc != 0:
        lines.append(json.dumps({"error": err.getvalue().strip()}))
    return "\n".join(lines) + "\n"


def golden_path(rel: str) -> Path:
    return ROOT / (rel + SUFFIX)


def test_every_fixture_has_a_golden_output():
    missing = [rel for rel in fixtures() if not golden_path(rel).exists()]
    orphans = sorted(
        p.relative_to(ROOT).as_posix()
        for p in FIXTURES.rglob("*" + SUFFIX)
        if not Path(str(p)[: -len(SUFFIX)]).exists()
    )
    assert (missing, orphans) == ([], []), "run: PYTHONPATH=lib python tests/test_golden.py --update"


@pytest.mark.parametrize("rel", fixtures())
def test_golden_output(rel):
    path = golden_path(rel)
    if not path.exists():
        pytest.fail(f"no {path.name}: PYTHONPATH=lib python tests/test_golden.py --update {rel}")
    want = path.read_text().splitlines()
    got = render(rel).splitlines()
    if got != want:
        diff = next(
            i for i, (a, b) in enumerate(zip(got + [""] * len(want), want + [""] * len(got), strict=True)) if a != b
        )
        want_line = want[diff] if diff < len(want) else "(none)"
        got_line = got[diff] if diff < len(got) else "(none)"
        pytest.fail(
            f"{rel}: line {diff + 1} of {path.name} differs\n  want {want_line}\n  got  {got_line}\n"
            f"(intended? PYTHONPATH=lib python tests/test_golden.py --update {rel})"
        )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="regenerate the golden outputs of tests/fixtures")
    ap.add_argument("--update", action="store_true", required=True)
    ap.add_argument("files", nargs="*", help="fixtures (paths from the repository root); default: all")
    args = ap.parse_args(argv)
    targets = [Path(f).resolve().relative_to(ROOT).as_posix() for f in args.files] or fixtures()
    changed = 0
    for rel in targets:
        text = render(rel)
        path = golden_path(rel)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed += 1
            print(f"wrote {path.relative_to(ROOT)}")
    print(f"{len(targets)} fixtures, {changed} golden files written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
