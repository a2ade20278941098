"""The seventh campaign's data-side lows still open in issue 26 (docs/reliability-7-store.md, Lows 3-5), each re-run
as the attack ran: real logs, real ingests (in-process: the code the command line runs)."""

import shutil

from conftest import RAW

from storagelab.store import ingest

BONNIE = sorted((RAW / "freebsd-bonnie-dedup").glob("bonnie-raid1*.txt"))[:2]  # real bonnie++ output (data/raw)


def test_a_nested_manifests_row_with_no_file_is_named_as_the_row_says(tmp_path):
    """reliability-7 Low 5: T/b/manifest.csv (read with T's, manifest.with_nested) has a row `gone.txt`; the warning
    named it `b/gone.txt ... no such file under T` (relative to the top folder), which is not what the row says."""
    logs = tmp_path / "T"
    sub = logs / "b"
    sub.mkdir(parents=True)
    shutil.copy(BONNIE[0], sub / BONNIE[0].name)
    (sub / "manifest.csv").write_text(f"path,study\n{BONNIE[0].name},cee\ngone.txt,cee\n")
    summary = ingest([logs], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False)
    assert [w for w in summary.warnings if "gone.txt" in w] == [
        f"{sub / 'manifest.csv'}:3: gone.txt: no such file under {sub} (a typo, or a file that was moved or deleted?)"
    ]


def test_sql_parquet_of_a_dataset_folder_suggests_a_file_it_accepts(tmp_path):
    """reliability-7 Low 4: `sql --parquet DATASET` said `give a file name, e.g. DATASET/result.parquet`, and that
    name was then refused (`is inside the dataset ..., which storagelab writes`). Now the suggestion is accepted."""
    from storagelab.sqlout import parquet_target_refused

    ds, db = tmp_path / "ds", tmp_path / "x.duckdb"
    (ds / "_storagelab").mkdir(parents=True)  # what makes a folder a dataset (dataset.META_DIR)
    other = tmp_path / "out"
    other.mkdir()
    for folder, suggested in [
        (ds, tmp_path / "ds-result.parquet"),
        (other, other / "result.parquet"),
    ]:
        assert parquet_target_refused(str(folder), str(db), False) == (
            f"--parquet {folder} is a folder: give a file name, e.g. {suggested}"
        )
        assert parquet_target_refused(str(suggested), str(db), False) is None
