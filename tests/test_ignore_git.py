"""Malformed ignore patterns against git itself (reliability-7 store Low 2): `**//`, `a**/b`, `******/x` matched
otherwise than git's own `ls-files -i` on the same files, one `.gitignore` = `.storagelabignore` at a time."""

import os
import shutil
import subprocess

import pytest

from storagelab.ignore import IgnoreList

FILES = "a/b c/a/b ab/x/b a/x/b x/y y/x/z a/yb a/y/b z #a/b.a".split()  # the campaign's smallest tree (igncase.sh)
# what git 2.39 ignores (the campaign's table); storagelab before: every file but z, [c/a/b ab/x/b a/x/b y/x/z a/y/b],
# [a/b], [ab/x/b a/x/b y/x/z], every file but z, [a/b a/x/b a/y/b]
CASES = {
    "**//": [],
    "*/**///": [],
    "a**/b": ["a/b", "a/x/b", "a/y/b", "ab/x/b"],
    "******/x": ["a/x/b", "ab/x/b", "x/y", "y/x/z"],
    "//a": [],
    "a**//": ["a/b", "a/x/b", "a/y/b", "a/yb"],
    # reliability-14 (read) Medium: an escaped first '#' or '!' is where git's literal start ends, so `#` was split
    # off and `**/a` read as any folders: `#a/b.a` ignored, which git does not
    "\\#**/a": [],
    "\\#a/b.a": ["#a/b.a"],
}


def test_malformed_patterns_match_as_in_git():
    assert {p: sorted(f for f in FILES if IgnoreList([p]).ignored(f)) for p in CASES} == CASES


@pytest.mark.skipif(not shutil.which("git"), reason="git is needed to compare with")
def test_the_table_is_what_this_machines_git_ignores(tmp_path):
    """The expectations above, from the real git (any version that has them)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for f in FILES:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x")
    found = {}
    for p in CASES:
        (tmp_path / ".gitignore").write_text(p + "\n")
        out = subprocess.run(
            ["git", "-C", str(tmp_path), "ls-files", "-o", "-i", "--exclude-standard"],
            capture_output=True,
            text=True,
            check=True,
            env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=str(tmp_path)),
        )
        found[p] = sorted(out.stdout.split())
    assert found == CASES
