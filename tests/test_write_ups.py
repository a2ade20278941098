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


def test_only_new_or_changed_write_ups_are_read_again(tmp_path, monkeypatch):
    """The write-up check parses a .md only when it is new or changed since the last ingest into the database (the
    verdicts are kept in its meta): unchanged ones are named from what was kept, without a read."""
    from storagelab.store import documents

    reads: list[str] = []
    real = documents.output_format

    def counted(d):
        reads.append(Path(d.path).name)
        return real(d)

    monkeypatch.setattr(documents, "output_format", counted)
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(PUB / "fio-3.35-nvme-qd32-4x8-and-8x4.txt", raw / "multipath-nvme-results.md")
    shutil.copy(PUB / "fio-2.16-ceph-four-groups.md", raw / "about-ceph.md")
    db = tmp_path / "x.duckdb"

    def again() -> list[str]:
        reads.clear()
        s = ingest([raw], db_path=db, parquet_dir=False, progress=False, workers=1)
        return [w for w in s.warnings if ".md file(s)" in w]

    named = [
        f"1 .md file(s) hold a tool's output but were left out, as .md files are read as documentation: "
        f"{raw / 'multipath-nvme-results.md'} (fio-normal); rename them to .txt to ingest them"
    ]
    assert again() == named and sorted(reads) == ["about-ceph.md", "multipath-nvme-results.md"]
    assert again() == named and reads == []  # nothing new or changed: named from the kept verdict, nothing read
    (raw / "about-ceph.md").write_text((raw / "about-ceph.md").read_text() + "\nedited\n")  # changed: read again
    shutil.copy(PUB / "fio-3.35-nvme-qd32-4x8-and-8x4.txt", raw / "copy.md")  # new: read
    both = (
        f"2 .md file(s) hold a tool's output but were left out, as .md files are read as documentation: "
        f"{raw / 'copy.md'} (fio-normal), {raw / 'multipath-nvme-results.md'} (fio-normal); rename them to .txt to "
        "ingest them"
    )
    assert again() == [both] and sorted(reads) == ["about-ceph.md", "copy.md"]
    (raw / "copy.md").unlink()  # gone: no longer named
    assert again() == named and reads == []
    # another database knows nothing of them: each is read once
    db = tmp_path / "y.duckdb"
    assert again() == named and sorted(reads) == ["about-ceph.md", "multipath-nvme-results.md"]
