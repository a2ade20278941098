"""Reliability-37 (read): root reading files another local user controls, and root's own odd inputs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from test_reliability34_read import _hidden  # a descriptor held only in a UNIX socket's queue

from storagelab import ownership

NB = {"metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _cell(source, tags=("parameters",)):
    meta = {"tags": list(tags) if isinstance(tags, tuple) else tags}
    return {"cell_type": "code", "metadata": meta, "execution_count": None, "outputs": [], "source": source}


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "null",
        "{}",
        json.dumps({**NB, "cells": 5}),
        json.dumps({**NB, "nbformat": 99, "cells": []}),
        '{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
    ids=["list", "null", "empty", "cells-int", "nbformat-99", "nested-100000"],
)
def test_json_that_is_no_notebook_is_one_line_not_a_traceback(tmp_path, text):
    # reliability-37: `storagelab run` of a JSON file that is no notebook ended in a traceback from nbformat
    # (AttributeError, TypeError, ValidationError, NBFormatError, RecursionError)
    from storagelab import nbparams

    nb = tmp_path / "odd.ipynb"
    nb.write_text(text)
    with pytest.raises(nbparams.ParameterError, match="not a notebook"):
        nbparams.notebook_parameters(nb)


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        (_cell("x = (\n"), "not Python code"),
        (_cell("x = " + "-" * 200_000 + "1\n"), "not Python code"),
        (_cell(5), "not Python code"),
        (_cell("x = 1\n", tags=None), "found 0"),
    ],
    ids=["syntax", "200000-minus", "source-int", "tags-null"],
)
def test_a_parameters_cell_that_is_not_python_is_one_line_not_a_traceback(tmp_path, cell, words):
    # reliability-37: a parameters cell that does not parse (SyntaxError, MemoryError, TypeError) or tags that are
    # no list ended `run` in a traceback
    from storagelab import nbparams

    nb = tmp_path / "odd.ipynb"
    nb.write_text(json.dumps({**NB, "cells": [cell]}))
    with pytest.raises(nbparams.ParameterError, match=words):
        nbparams.notebook_parameters(nb)
    with pytest.raises(nbparams.ParameterError, match=words):
        nbparams.parameter_docs(nb)


def test_compare_of_a_duckdb_file_of_other_tables_is_one_line_not_a_traceback(tmp_path):
    # reliability-37: `storagelab compare --db` of a DuckDB file holding tables of its own (not storagelab's) ended in
    # DuckDB's CatalogException traceback ("Table with name fio_groups does not exist!")
    import duckdb
    from conftest import storagelab_cli as cli

    db = tmp_path / "other.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create table t as select 42 as x")
    r = cli("compare", "--study", "homelab-mergerfs", "--db", str(db))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "fio_groups does not exist" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount an overlay")
def test_a_folder_renamed_in_roots_overlay_is_not_judged_by_its_new_names_old_file(tmp_path):
    # reliability-37: root's overlay with redirect_dir=on; in the view lower/newdir removed and lower/olddir renamed
    # to newdir: newdir/nb.ipynb showed lower/olddir/nb.ipynb (the second user holding it open for writing, opened
    # while 0666), but lower/newdir/nb.ipynb, root's old file, was judged: `run` passed and their cell ran as root
    tmp_path.chmod(0o700)
    lower, upper, work, merged = (tmp_path / name for name in ("lower", "upper", "work", "merged"))
    for folder in (lower / "olddir", lower / "newdir", upper, work, merged):
        folder.mkdir(parents=True)
    (lower / "olddir" / "nb.ipynb").write_text("{}")
    (lower / "newdir" / "nb.ipynb").write_text("{} ")
    options = f"lowerdir={lower},upperdir={upper},workdir={work},redirect_dir=on"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(merged)], check=True, timeout=30)
    try:
        subprocess.run(["rm", "-r", str(merged / "newdir")], check=True, timeout=30)
        (merged / "olddir").rename(merged / "newdir")
        assert (merged / "newdir" / "nb.ipynb").read_text() == "{}"  # lower/olddir's file
        queue = _hidden(lower / "olddir" / "nb.ipynb")
        try:
            assert "renamed" in (ownership.file_writers(str(merged / "newdir" / "nb.ipynb")) or "")
        finally:
            queue.close()
        (merged / "newdir" / "nb.ipynb").write_text("{}")  # copied up: the file behind is upper's, judged
        assert ownership.file_writers(str(merged / "newdir" / "nb.ipynb")) is None
    finally:
        subprocess.run(["umount", str(merged)], check=False, timeout=30)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount an overlay")
def test_a_hard_links_other_name_in_roots_overlay_with_index_on_is_not_judged_by_its_lower_file(tmp_path):
    # reliability-37: root's overlay with index=on, lower A.ipynb and B.ipynb one file (hard links); chmod 666 of
    # A in the view copied it up, and B showed that copy too (the index); the second user opened upper/A while 0666
    # and kept the descriptor in a socket's queue, root made A 0644: B was judged by lower/B (no writer), `run`
    # passed and their cell ran as root
    tmp_path.chmod(0o700)
    lower, upper, work, merged = (tmp_path / name for name in ("lower", "upper", "work", "merged"))
    for folder in (lower, upper, work, merged):
        folder.mkdir()
    (lower / "A.ipynb").write_text("{}")
    os.link(lower / "A.ipynb", lower / "B.ipynb")
    options = f"lowerdir={lower},upperdir={upper},workdir={work},index=on"
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(merged)], check=True, timeout=30)
    try:
        assert ownership.file_writers(str(merged / "B.ipynb")) is None
        (merged / "A.ipynb").chmod(0o666)  # copied up, B with it
        queue = _hidden(upper / "A.ipynb")
        try:
            (merged / "A.ipynb").chmod(0o644)
            assert "not judged" in (ownership.file_writers(str(merged / "B.ipynb")) or "")
        finally:
            queue.close()
    finally:
        subprocess.run(["umount", str(merged)], check=False, timeout=30)


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("mergerfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, mergerfs and /dev/fuse",
)
def test_a_mergerfs_pools_file_held_in_two_branches_is_not_judged_by_one(tmp_path):
    # reliability-37: root's mergerfs pool with func.open=newest; root's nb.ipynb in branch one, the second user's
    # newer nb.ipynb of the same size in branch two (theirs): the pool showed root's file (its stat, its fullpath), so
    # root's file was judged, and `run` read and ran theirs as root
    from test_reliability36_read import _mounted

    tmp_path.chmod(0o700)
    one, two, pool = (tmp_path / name for name in ("one", "two", "pool"))
    for folder in (one, two, pool):
        folder.mkdir()
    (one / "nb.ipynb").write_text('{"cells": []}')
    (two / "nb.ipynb").write_text('{"cells": [1]}')
    os.utime(two / "nb.ipynb", (2e9, 2e9))
    with _mounted(["mergerfs", "-o", "func.open=newest", f"{one}:{two}", str(pool)], pool):
        assert (pool / "nb.ipynb").stat().st_size == 13 and (pool / "nb.ipynb").read_text() == '{"cells": [1]'
        assert "in 2 branches" in (ownership.file_writers(str(pool / "nb.ipynb")) or "")


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("mergerfs") or not os.path.exists("/dev/fuse"),
    reason="needs root, mergerfs and /dev/fuse",
)
def test_a_folder_of_roots_mergerfs_pool_with_a_branch_others_can_write_is_refused(tmp_path):
    # reliability-37: root's pool (func.open=newest) of root's folder and one the second user can write: only root's
    # notebook at the check; 5 s into `run` they put their newer notebook of that name in their branch, and it ran
    # as root. The pool's folder showed branch one's mode (0755); the branch folders behind it are judged now
    from test_reliability36_read import _mounted

    tmp_path.chmod(0o700)
    one, two, pool = (tmp_path / name for name in ("one", "two", "pool"))
    for folder in (one, two, pool):
        folder.mkdir()
    one.chmod(0o755)
    two.chmod(0o777)
    (one / "nb.ipynb").write_text("{}")
    with _mounted(["mergerfs", "-o", "func.open=newest", f"{one}:{two}", str(pool)], pool):
        assert pool.stat().st_mode & 0o777 == 0o755
        words = ownership.file_refusal(pool / "nb.ipynb") or ""
        assert f"mergerfs pool whose branch folder {two}" in words and "every user" in words
