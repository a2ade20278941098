"""A copy of a labelled log stored without labels (same bytes: stored once, listed in ``duplicates``) is that file's
runs under that file's labels: a "(unlabelled)" selection does not show the labelled file's rows because of it,
and says which copy it left out and why (Result.missing, in every notebook that starts its Result)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ingest_labelled

from storagelab.analysis import Selection, open_db
from storagelab.analysis.result import Result

FIO = Path(__file__).parent / "fixtures" / "fio" / "3.33"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("copies") / "raw"
    (raw / "labelled").mkdir(parents=True)
    (raw / "loose").mkdir()
    shutil.copy(FIO / "normal_only.txt", raw / "labelled" / "nas1-seq.txt")
    shutil.copy(FIO / "normal_only.txt", raw / "loose" / "seq-copy.txt")  # the same bytes, no manifest row
    shutil.copy(FIO / "psync_iodepth_note.txt", raw / "loose" / "other.txt")  # really unlabelled
    path = ingest_labelled(raw, "path,study,host\nlabelled/nas1-seq.txt,h5study,nas1\n")
    con = open_db(path)
    yield con, raw
    con.close()


def _selected(con, sel: Selection) -> list[tuple]:
    where, params = sel.sql("f")
    return con.execute(f"SELECT f.path, f.study, f.host FROM files f WHERE {where} ORDER BY 1", params).fetchall()


def test_unlabelled_selects_only_unlabelled_data_and_says_which_copy_it_left_out(db):
    con, raw = db
    other, original, copy = (str(raw / p) for p in ("loose/other.txt", "labelled/nas1-seq.txt", "loose/seq-copy.txt"))
    assert con.execute("SELECT path, same_as, study, host FROM duplicates").fetchall() == [(copy, original, None, None)]
    for key, label in (("study", "study h5study"), ("host", "host nas1")):
        sel = Selection(**{key: "(unlabelled)"})
        assert _selected(con, sel) == [(other, None, None)]
        res = Result.start(con, sel, measures=None)  # type: ignore[arg-type]
        assert res.missing == [
            f"1 file(s) without a {key} label are copies of labelled files, not unlabelled data: {copy} is the "
            f"same bytes as {original} ({label}). Their rows are that file's, shown under its labels, not under "
            "(unlabelled)"
        ]


def test_a_copy_s_missing_label_is_the_stored_file_s(db):
    con, raw = db
    original = str(raw / "labelled/nas1-seq.txt")
    assert _selected(con, Selection(study="h5study")) == [(original, "h5study", "nas1")]
    assert _selected(con, Selection(study="h5study", host="(unlabelled)")) == []
    sel = Selection(study="h5study", host="(unlabelled)")
    assert sel.copies_left_out(con) is not None and "(host nas1)" in (sel.copies_left_out(con) or "")
    assert Selection(study="h5study").copies_left_out(con) is None  # no "(unlabelled)" filter: nothing to say
    assert Selection(study="nosuch", host="(unlabelled)").copies_left_out(con) is None  # the copy is not in it
