"""Manifests in subfolders (new-user trial h6, F2): `lab fio --out DIR/lab` writes DIR/lab/manifest.csv (host, RAM,
command, devices); ingesting DIR had stored those 203 runs unlabelled, with 'no row in DIR/manifest.csv' warnings
that did not mention the lab's own manifest. The manifest of a file's nearest folder labels it; a file with a
row in two manifests is refused; `--manifest FILE` is the only manifest read."""

import duckdb
import pytest
from conftest import FIXTURES

from storagelab.errors import ManifestError
from storagelab.store import ingest

RUN = FIXTURES / "fio" / "3.33" / "json_only.txt"
RUN_TEXT = FIXTURES / "fio" / "3.33" / "lab-design" / "buffered_32m.txt"
HEADER = "path,study,host,ram_bytes,command\n"


def _tree(tmp_path, top_rows: str | None = HEADER + "top.txt,mine,desk,,\n"):
    d = tmp_path / "logs"
    (d / "lab" / "deep").mkdir(parents=True)
    (d / "top.txt").write_bytes(RUN.read_bytes())
    (d / "lab" / "a.txt").write_bytes(RUN_TEXT.read_bytes())
    (d / "lab" / "deep" / "b.txt").write_bytes(RUN.read_bytes() + b"\n")
    if top_rows is not None:
        (d / "manifest.csv").write_text(top_rows)
    (d / "lab" / "manifest.csv").write_text(HEADER + 'a.txt,lab,vm,25276510208,"fio --name=a --rw=write"\n')
    (d / "lab" / "deep" / "manifest.csv").write_text(HEADER + "b.txt,lab,vm2,1073741824,\n")
    return d


def _labels(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "SELECT regexp_extract(path, 'logs/(.*)$', 1), study, host, ram_bytes, command FROM files ORDER BY 1"
        ).fetchall()
    finally:
        con.close()


def test_a_subfolder_manifest_labels_its_files_when_the_parent_is_ingested(tmp_path):
    d = _tree(tmp_path)
    s = ingest([d], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed, s.warnings) == (3, 0, [])
    assert _labels(tmp_path / "x.duckdb") == [
        ("lab/a.txt", "lab", "vm", 25276510208, "fio --name=a --rw=write"),
        ("lab/deep/b.txt", "lab", "vm2", 1073741824, None),
        ("top.txt", "mine", "desk", None, None),
    ]
    # a lab row edited: the next ingest relabels, nothing re-parsed
    (d / "lab" / "manifest.csv").write_text(HEADER + "a.txt,lab,vm,8589934592,\n")
    s = ingest([d], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.relabelled) == (0, 1)
    assert _labels(tmp_path / "x.duckdb")[0] == ("lab/a.txt", "lab", "vm", 8589934592, None)


def test_a_file_with_rows_in_two_manifests_is_refused_naming_both_lines(tmp_path):
    d = _tree(tmp_path, HEADER + "top.txt,mine,desk,,\nlab/a.txt,mine,desk,,\n")
    with pytest.raises(ManifestError) as e:
        ingest([d], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert str(e.value) == (
        f"{d / 'lab' / 'manifest.csv'}:2: a.txt also has a row in {d / 'manifest.csv'}:3: one row per file "
        "(delete one of the two rows)"
    )
    assert not (tmp_path / "x.duckdb").exists()


def test_unlabelled_files_are_named_with_the_manifest_beside_them(tmp_path):
    d = _tree(tmp_path, top_rows=None)
    (d / "lab" / "c.txt").write_bytes(RUN.read_bytes() + b"\n\n")
    (d / "loose.txt").write_bytes(RUN.read_bytes() + b"\n\n\n")
    s = ingest([d], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    lab, deep = d / "lab", d / "lab" / "deep"
    assert s.warnings == [
        f"no manifest at {d / 'manifest.csv'}: the files under {d} are unlabelled (except those under {lab}, {deep})",
        f"{lab / 'c.txt'}: no row in {lab / 'manifest.csv'} (stored without labels)",
    ]
    assert [r[:3] for r in _labels(tmp_path / "x.duckdb")] == [
        ("lab/a.txt", "lab", "vm"),
        ("lab/c.txt", None, None),
        ("lab/deep/b.txt", "lab", "vm2"),
        ("loose.txt", None, None),
        ("top.txt", None, None),
    ]


def test_a_named_manifest_is_the_only_one_read(tmp_path):
    d = _tree(tmp_path)
    ingest([d], db_path=tmp_path / "x.duckdb", manifest_path=d / "manifest.csv", parquet_dir=False, progress=False)
    assert [r[:3] for r in _labels(tmp_path / "x.duckdb")] == [
        ("lab/a.txt", None, None),
        ("lab/deep/b.txt", None, None),
        ("top.txt", "mine", "desk"),
    ]


def test_an_unknown_phase_or_column_is_refused_with_its_line(tmp_path):
    """h6 F7: `phase=pre` was accepted and 03 then said only 'none labelled phase=before/after'; F1: a spare column
    stops the ingest, and the message says where free text goes."""
    from storagelab.manifest import load

    m = tmp_path / "manifest.csv"
    m.write_text("path,study,phase\nbonnie-256m.txt,H6 VM lab,pre\n")
    with pytest.raises(ManifestError) as e:
        load(m)
    assert str(e.value) == f"{m}:2: column phase must be one of before, after, got 'pre'"
    m.write_text("path,study,flavour\nbonnie-256m.txt,H6 VM lab,vanilla\n")
    with pytest.raises(
        ManifestError, match=r"manifest.csv:1: unknown columns \['flavour'\] \(free text goes in notes\)"
    ):
        load(m)
    m.write_text("path,study,phase\nbonnie-256m.txt,H6 VM lab,After\n")
    assert load(m).rows["bonnie-256m.txt"]["phase"] == "after"
