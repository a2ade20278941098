"""The claims table's reproduced values link to the raw lines they were read from (as findings' numbers do): the
measures carry their lines, ``claims.check`` keeps those of each claim's values (``raw_lines``), and in a report run
``present.claims_display`` links the value. The FreeBSD study's bonnie++ claims of notebook 03 (data/raw)."""

from __future__ import annotations

import json

from storagelab import paths, present
from storagelab.analysis import Selection, alignment, open_db

STUDY = "freebsd-bonnie-dedup"


def _claims(seed_db, analyse, notebook: str):
    """The study's claims of ``notebook`` checked against ``analyse``'s measures, and each claim's raw lines."""
    con = open_db(seed_db)
    try:
        sel = Selection(study=STUDY)
        table, _ = present.claims_for(notebook, sel, analyse(con, sel))
    finally:
        con.close()
    return table, {r["claim_id"]: json.loads(r["raw_lines"]) for r in table.iter_rows(named=True)}


def test_03_claims_link_their_bonnie_lines(seed_db, tmp_path, monkeypatch):
    table, lines = _claims(seed_db, alignment.analyse, "03_sector63")
    before = "freebsd-bonnie-dedup/bonnie-raid1-sec63-cache-log.txt"
    after = "freebsd-bonnie-dedup/bonnie-raid1-aligned-cache-log.txt"
    # bonnie++ 1.98's result row and its Latency row: lines 4-5 ('alpinaR1 64G 287k 99 10.4m ...'), and 5-6 in
    # the 'after' file (its first line is the shell prompt)
    assert [
        (x["path"].split("data/raw/")[-1], x["line_start"], x["line_end"])
        for x in lines["freebsd-sec63-block-write-before"]
    ] == [(before, 4, 5)]
    assert [(x["path"].split("data/raw/")[-1], x["line_start"]) for x in lines["freebsd-sec63-seeks-after"]] == [
        (after, 5)
    ]
    # a report run: the value is a link to that line's excerpt page, written beside the report
    monkeypatch.setenv(paths.REPORT_DIR_ENV, str(tmp_path))
    html = present.claims_display(table)._repr_html_()
    row = next(r for r in html.split("<tr>") if "freebsd-sec63-block-write-before" in r)
    assert "<a href='raw/" in row and "#L4'>10.4</a>" in row
    page = next((tmp_path / "raw").glob("*.html")).read_text()
    assert "alpina" in page
    # without a report folder (JupyterLab by hand) no link leads nowhere
    monkeypatch.delenv(paths.REPORT_DIR_ENV)
    assert "<a href" not in present.claims_display(table)._repr_html_()


LINE = 9  # the zdb -b summary's first line in both files: '\tbp count:   35419785' (raid1), '111509014' (archiv)


def test_04_claims_link_their_zdb_and_zpool_lines(seed_db):
    """A formula's value (bp_count x a stated entry size) links to the zdb -b summary it read bp_count from; the
    L2ARC size claim to its `zpool iostat -v` cache line (nvd0p7 19.5G alloc + 9.52G free)."""
    from storagelab.analysis import dedup

    _, lines = _claims(seed_db, dedup.analyse, "04_dedup_ddt")

    def at(claim: str) -> list[tuple[str, int]]:
        return [(x["path"].rsplit("/", 1)[-1], x["line_start"]) for x in lines[claim]]

    assert at("freebsd-l2arc-size") == [("zpool-iostat-raid5-1.txt", 13)]
    assert at("freebsd-ddt-raid1") == at("freebsd-bp-count-raid1") == [("zdb-b-raid1.txt", LINE)]
    assert at("freebsd-ddt-archiv") == [("zdb-b-archiv.txt", LINE)]
    assert lines["freebsd-ram"] == []  # check=none: nothing reproduced, nothing linked
