"""h7 findings 13 and 22: reports made with `-p db_path OTHER.duckdb` were dropped from the index by the next build
with the false reason "which no file is labelled with now" (only the default database was asked), and the index
said every report was built from data/raw/. A folder made from another database is judged by that database's
labels, its note names it, and its heading in the index says which database it came from."""

from __future__ import annotations

import json
import shutil
import sys

from conftest import FIXTURES

from storagelab import rendering, report, terminal
from storagelab.store import ingest


def _folder(reports, name, study, db=None):
    folder = reports / name
    folder.mkdir(parents=True)
    identity = {"selection": {"study": study}, **({"parameters": {"db_path": str(db)}} if db else {})}
    (folder / ".selection.json").write_text(json.dumps(identity, indent=1))  # as report._claim_folders writes it
    return folder


def test_reports_of_another_database_are_judged_by_its_labels(tmp_path, monkeypatch):
    raw = tmp_path / "coldlab"
    raw.mkdir()
    shutil.copy(FIXTURES / "fio" / "3.33" / "seq_write_group.txt", raw / "seq.txt")
    (raw / "manifest.csv").write_text("path,study\nseq.txt,coldlab-b\n")
    cold = tmp_path / "cold.duckdb"
    s = ingest([raw], db_path=cold, parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    reports = tmp_path / "reports"
    kept = _folder(reports, "coldlab-b--2a7ef8fb", "coldlab-b", cold)
    relabelled = _folder(reports, "gone--11111111", "gone", cold)
    missing_db = _folder(reports, "coldlab-b--22222222", "coldlab-b", tmp_path / "deleted.duckdb")
    default_db = _folder(reports, "old-study", "old-study")
    monkeypatch.setattr(report, "report_folders", lambda: sorted(reports.iterdir()))

    # the default database's labels: neither coldlab-b nor old-study
    stale = report.stale_folders([], {"freebsd-bonnie-dedup"})
    assert stale == [(missing_db, "coldlab-b"), (relabelled, "gone"), (default_db, "old-study")]  # not kept
    assert report.stale_note(relabelled, "gone") == (
        f"note: {relabelled} holds reports of study 'gone', made from another database, {cold}, which no file of it "
        "is labelled with now: left out of index.html (delete the folder if it is not needed)"
    )
    assert report.stale_note(missing_db, "coldlab-b") == (
        f"note: {missing_db} holds reports of study 'coldlab-b', made from another database, "
        f"{tmp_path / 'deleted.duckdb'}, which does not exist now: left out of index.html (delete the folder if it "
        "is not needed)"
    )
    assert report.stale_note(default_db, "old-study") == (
        f"note: {default_db} holds reports of study 'old-study', which no file is labelled with now: left out of "
        "index.html (delete the folder if it is not needed)"
    )

    assert rendering._folder_title(kept) == f"coldlab-b (coldlab-b--2a7ef8fb, from the database {cold})"
    assert rendering._folder_title(default_db) == "old-study"
    page = rendering.index_html("now", reports_dir=reports)
    assert (
        "Built now from the raw logs in <code>data/raw/</code> (a heading that names another database: reports run on "
        "it with <code>-p db_path</code>), grouped by study"
    ) in page


def test_a_progress_line_is_one_write(monkeypatch):
    """h7 finding 16: `==> running 07_explore.ipynb -> reports/all/==> running 10_disk_card.ipynb -> reports/all/`
    then an empty line: print wrote the text and its newline apart, and another notebook worker's line came
    between them. The line and its newline go out in one write."""
    import io

    class Writes(io.StringIO):
        calls: list[str] = []

        def write(self, s):
            self.calls.append(s)
            return super().write(s)

    out = Writes()
    monkeypatch.setattr("sys.stdout", out)
    terminal.say("==> running 10_disk_card.ipynb -> reports/all/", sys.stdout)  # what report's progress line calls
    assert out.calls == ["==> running 10_disk_card.ipynb -> reports/all/\n"]
