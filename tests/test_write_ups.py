"""An ingest leaves .md files out as documentation; one that holds a tool's output (a benchmark write-up saved as
Markdown) is named in a warning, never left out silently (new user h5 B1: 'ingested 2' of 4 files, and nothing
said that two fio write-ups were not read, though `storagelab parse` reads them)."""

from __future__ import annotations

import shutil
from pathlib import Path

from storagelab.store import ingest

PUB = Path(__file__).resolve().parent / "fixtures" / "fio" / "published"


def test_a_write_up_holding_fio_output_is_named_and_not_ingested(tmp_path):
    raw = tmp_path / "raw"
    (raw / "sub").mkdir(parents=True)
    # the published page as it was saved (Markdown around two fenced fio 3.35 outputs), a note, a README
    shutil.copy(PUB / "fio-3.35-nvme-qd32-4x8-and-8x4.txt", raw / "sub" / "multipath-nvme-results.md")
    shutil.copy(PUB / "fio-2.16-ceph-four-groups.md", raw / "about-ceph.md")  # a note about a log: no output
    (raw / "README.md").write_text("fio output below\n")
    shutil.copy(PUB / "fio-2.16-ceph-four-groups.txt", raw / "ceph.txt")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (1, 0)
    said = [w for w in s.warnings if ".md file(s)" in w]
    assert said == [
        f"1 .md file(s) hold a tool's output but were left out, as .md files are read as documentation: "
        f"{raw / 'sub' / 'multipath-nvme-results.md'} (fio-normal); rename them to .txt to ingest them"
    ]
    # an ignored write-up is not looked at, so not named
    (raw / ".storagelabignore").write_text("sub/\n")
    s = ingest([raw], db_path=tmp_path / "y.duckdb", parquet_dir=False, progress=False, workers=1)
    assert not [w for w in s.warnings if ".md file(s)" in w]
    # renamed as the warning says, it is ingested: two runs of fio 3.35
    (raw / ".storagelabignore").unlink()
    (raw / "sub" / "multipath-nvme-results.md").rename(raw / "sub" / "multipath-nvme-results.txt")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (1, 0) and not [w for w in s.warnings if ".md file(s)" in w]
