"""Reliability-37 (store, h54s): the content-identity rule's attacks that found something."""

from __future__ import annotations

import os

import pytest
from test_reliability36_store import _two_log_folders


@pytest.mark.parametrize("spelling", ["project-link", "data-link"])
def test_a_target_under_data_raw_spelled_through_a_link_is_refused_when_data_raw_is_re_pointed(
    tmp_path, monkeypatch, spelling
):
    """data/raw a symlink (-> A); `ingest P/data/raw/sub` (P a link to the project) or `ingest D/raw/sub` (D a link to
    data/) with data/raw re-pointed to B just after pinned_raw (hooked): b137df47 maps only targets spelled under the
    name data/raw/, so this one was resolved on its own to B/sub, outside A: B's ignore file (``*.log``) not read,
    B/sub/skip.log stored, exit 0. Now refused in a line, nothing written."""

    from storagelab import paths
    from storagelab.store import StoreError, ingest, pipeline

    logs = _two_log_folders(tmp_path)
    proj = tmp_path / "proj"
    raw = proj / "data" / "raw"
    raw.parent.mkdir(parents=True)
    monkeypatch.setattr(paths, "RAW", raw)
    monkeypatch.setattr(paths, "MANIFEST", raw / "manifest.csv")
    (tmp_path / "P").symlink_to(proj)
    (tmp_path / "D").symlink_to(proj / "data")

    def point(d):
        (tmp_path / ".t").symlink_to(logs / d)
        os.replace(tmp_path / ".t", raw)

    point("A")
    pin, flips = pipeline.pinned_raw, []

    def pinned_then_flipped():
        out = pin()
        if not flips:
            flips.append(point("B"))
        return out

    monkeypatch.setattr(pipeline, "pinned_raw", pinned_then_flipped)
    target = tmp_path / "P" / "data" / "raw" / "sub" if spelling == "project-link" else tmp_path / "D" / "raw" / "sub"
    db = tmp_path / "d.duckdb"
    with pytest.raises(StoreError, match="re-pointed as the ingest started"):
        ingest([target], db_path=db, manifest_path=None, parquet_dir=False, progress=False)
    assert not db.exists()
    flips.clear()
    point("A")
    monkeypatch.setattr(pipeline, "pinned_raw", pin)
    s = ingest([target], db_path=db, manifest_path=None, parquet_dir=False, progress=False)  # no flip: read, as before
    assert (s.ingested, s.ignored, s.failed) == (1, 1, 0), s.line()


@pytest.mark.parametrize("where", ["listing", "scope"])
def test_a_real_folder_target_replaced_by_a_symlink_during_the_ingest_is_refused(tmp_path, monkeypatch, where):
    """data/raw a real folder when `ingest data/raw/other` starts, replaced by a symlink to A (mv; ln -s) and back
    during it (a racer every 0-4 ms did it through the CLI, no hooks): the listing's keys were taken through the
    link and its scan through the folder (A's files held with the folder's bytes, "2 replaced"), or the removals'
    scope through one and the listing through the other (the folder's files removed while on disk), exit 0. Now
    every key of a pinned folder is checked to lead to itself: refused in a line, nothing written."""
    import duckdb
    from test_store_identity import CONTENTS

    from storagelab import paths
    from storagelab.store import StoreError, ingest, listing, pipeline

    raw, a = tmp_path / "data" / "raw", tmp_path / "mnt" / "A"
    for top, k in ((raw, 0), (a, 2)):
        (top / "other").mkdir(parents=True)
        (top / "other" / "o.txt").write_bytes(CONTENTS[k])
    monkeypatch.setattr(paths, "RAW", raw)
    monkeypatch.setattr(paths, "MANIFEST", raw / "manifest.csv")
    db = tmp_path / "d.duckdb"

    def run():
        ingest([raw / "other"], db_path=db, manifest_path=None, parquet_dir=False, progress=False, workers=1)

    run()
    ingest([a], db_path=db, manifest_path=None, parquet_dir=False, progress=False, workers=1)
    con = duckdb.connect(str(db), read_only=True)
    before = con.execute("SELECT path, sha256 FROM files ORDER BY 1").fetchall()
    con.close()
    swapped = []

    def swap():
        if not swapped:
            os.rename(raw, tmp_path / "data" / "raw.real")
            raw.symlink_to(a)
        else:
            os.unlink(raw)
            os.rename(tmp_path / "data" / "raw.real", raw)
        swapped.append(1)

    key_for, scan, scopes = listing.key_for, listing._scan, pipeline.scopes
    if where == "listing":  # the link when the keys are taken, the folder when it is scanned
        monkeypatch.setattr(listing, "key_for", lambda p: (swap() if not swapped else None, key_for(p))[1])
        monkeypatch.setattr(listing, "_scan", lambda *x, **k: (swap() if len(swapped) == 1 else None, scan(*x, **k))[1])
    else:  # the folder when listed, the link when the removals' scope is taken
        monkeypatch.setattr(pipeline, "scopes", lambda *x, **k: (swap(), scopes(*x, **k), swap())[1])
    with pytest.raises(StoreError, match="replaced by a symlink during the ingest"):
        run()
    if len(swapped) % 2:
        swap()
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT path, sha256 FROM files ORDER BY 1").fetchall() == before
    con.close()


def test_data_raw_swapped_by_two_renames_while_its_ignore_file_is_read_is_refused(tmp_path, monkeypatch):
    """`mv data/raw data/raw.old; mv new data/raw` during `storagelab ingest`, data/raw's ignore file read in the
    instant between the two (a racer did it through the CLI, no hooks; here a hook): no ignore file, so the new
    folder's ``*.log`` was stored (and kept for good), exit 0. Now the folder must be the same before and after
    the read: refused in a line."""
    from test_store_identity import CONTENTS

    from storagelab import ignore, paths
    from storagelab.store import ingest

    raw, new = tmp_path / "data" / "raw", tmp_path / "data" / "new"
    for top, k in ((raw, 0), (new, 2)):
        (top / "sub").mkdir(parents=True)
        (top / "sub" / "a.txt").write_bytes(CONTENTS[k])
        (top / "sub" / "skip.log").write_bytes(CONTENTS[k + 1])
        (top / ".storagelabignore").write_text("*.log\n")
    monkeypatch.setattr(paths, "RAW", raw)
    monkeypatch.setattr(paths, "MANIFEST", raw / "manifest.csv")
    load, swapped = ignore.IgnoreList.load.__func__, []

    def load_during_a_swap(cls, folder):
        if swapped or os.path.abspath(folder) != str(raw):
            return load(cls, folder)
        swapped.append(os.rename(raw, tmp_path / "data" / "raw.old"))
        try:
            return load(cls, folder)
        finally:
            os.rename(new, raw)

    monkeypatch.setattr(ignore.IgnoreList, "load", classmethod(load_during_a_swap))
    with pytest.raises(OSError, match="replaced by another folder while its ignore file was read"):
        ingest(None, db_path=tmp_path / "d.duckdb", manifest_path=None, parquet_dir=False, progress=False, workers=1)


def test_a_listed_folder_made_a_symlink_loop_before_the_nested_manifests_are_looked_up_is_no_traceback(tmp_path):
    """A listed folder made a symlink loop after the listing (a link re-pointed to a folder holding a link back):
    ``manifest.with_nested`` resolved it and Python 3.11's RuntimeError left `storagelab ingest` as a traceback. Now
    such a folder is passed over (its files fail as they are read)."""
    from storagelab import manifest

    (tmp_path / "manifest.csv").write_text("path,study\n")
    (tmp_path / "lp").symlink_to("lp")
    top = manifest.load(tmp_path / "manifest.csv")
    assert manifest.with_nested(top, [tmp_path / "lp" / "sub"]) is top
