"""The lows of docs/reliability-4.md left open until issue 26, each repeated as the attack did it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import duckdb
from conftest import RAW, ROOT

BONNIE = sorted((RAW / "freebsd-bonnie-dedup").glob("*.txt"))[0]  # a real bonnie++ log of the seed data


def _cli(*args: str, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    return subprocess.run([sys.executable, "-m", "storagelab", *args], capture_output=True, text=True, env=env, **kw)


def test_parse_of_a_folder_reads_a_symlinked_file_once_as_ingest_stores_it(tmp_path):
    """Low 5: `parse /tmp/h3-ln/in` printed 2 `files` records (`sub/a.txt` and the symlink `alias.txt` beside it)
    where ingest stores 1."""
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.txt").write_bytes(BONNIE.read_bytes())
    (folder / "alias.txt").symlink_to("sub/a.txt")
    r = _cli("parse", str(folder))
    assert r.returncode == 0, r.stderr
    heads = [json.loads(x) for x in r.stdout.splitlines() if x.startswith('{"table": "files"')]
    assert [h["size_bytes"] for h in heads] == [BONNIE.stat().st_size]
    i = _cli("ingest", str(folder), "--db", str(tmp_path / "t.duckdb"), "--no-parquet", "--quiet")
    assert i.returncode == 0, i.stderr
    with duckdb.connect(str(tmp_path / "t.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT path, sha256 FROM files").fetchall()
    assert stored == [(str((folder / "sub" / "a.txt").resolve()), heads[0]["sha256"])]
