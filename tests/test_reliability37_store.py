"""Reliability-37 (store, h54s): the content-identity rule's attacks that found something."""

from __future__ import annotations

import os

import pytest


@pytest.mark.parametrize("spelling", ["project-link", "data-link"])
def test_a_target_under_data_raw_spelled_through_a_link_is_refused_when_data_raw_is_re_pointed(
    tmp_path, monkeypatch, spelling
):
    """data/raw a symlink (-> A); `ingest P/data/raw/sub` (P a link to the project) or `ingest D/raw/sub` (D a link to
    data/) with data/raw re-pointed to B just after pinned_raw (hooked): b137df47 maps only targets spelled under the
    name data/raw/, so this one was resolved on its own to B/sub, outside A: B's ignore file (``*.log``) not read,
    B/sub/skip.log stored, exit 0. Now refused in a line, nothing written."""
    from test_store_identity import CONTENTS

    from storagelab import paths
    from storagelab.store import StoreError, ingest, pipeline

    logs = tmp_path / "mnt"
    for d in "AB":
        (logs / d / "sub").mkdir(parents=True)
        (logs / d / "sub" / "a.txt").write_bytes(CONTENTS[0])
        (logs / d / "sub" / "skip.log").write_bytes(CONTENTS[1])
        (logs / d / ".storagelabignore").write_text("*.log\n")
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
