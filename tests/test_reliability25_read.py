"""Reliability-25, the read side (issue 26, h8): attacks on reliability-24's reading fixes."""

from __future__ import annotations

import os


def test_an_exchange_across_folders_ingested_one_folder_first_keeps_each_file_s_own_rows(tmp_path):
    # the attack: s1/a and s2/b, fio logs of one size and one second (as tar extracts them), ingested; exchanged by
    # `mv`; then `ingest s1` alone. Main read s1/a (the skip rule saw two SHA-256s), found s2/b's stored bytes in it and
    # listed it as s2/b's copy, removing a's rows; s2/b (now a's old bytes) was skipped by every later ingest: b's
    # label reported a's numbers, a's bytes gone from the database
    import duckdb

    from storagelab.store import ingest

    logs = tmp_path / "d"
    a, b = logs / "s1" / "a_clat.1.log", logs / "s2" / "b_clat.1.log"
    for p, v in ((a, 1000), (b, 2000)):
        p.parent.mkdir(parents=True)
        p.write_text("".join(f"{i * 100}, {v + i}, 0, 4096, 0\n" for i in range(50)))
        os.utime(p, ns=(1_700_000_000 * 10**9, 1_700_000_000 * 10**9))
    (logs / "manifest.csv").write_text("path,study,label\n")
    db = tmp_path / "db.duckdb"

    def run(target):
        ingest([target], db_path=db, manifest_path=logs / "manifest.csv", parquet_dir=False, progress=False, workers=1)

    run(logs)
    os.replace(a, logs / "x")
    os.replace(b, a)
    os.replace(logs / "x", b)
    run(logs / "s1")
    run(logs)
    with duckdb.connect(str(db), read_only=True) as con:
        q = "SELECT f.path, avg(s.value) FROM fio_log_samples s JOIN files f USING (file_id) GROUP BY 1 ORDER BY 1"
        got = [(p.rsplit("/", 2)[-2], v) for p, v in con.execute(q).fetchall()]
        assert con.execute("SELECT count(*) FROM duplicates").fetchone() == (0,)
    assert got == [("s1", 2024.5), ("s2", 1024.5)]  # main: [("s2", 2024.5)] and s1/a a copy of s2/b


def test_a_row_whose_sha256_is_null_gets_no_excerpt_in_root_s_own_report(tmp_path):
    # the attack: the second user's database (their files row: path /root/..., sha256 NULL), exported by root into
    # root's own dataset (`export --db THEIRS --dataset ROOTS`: the dataset is root's, so database.THEIRS stays empty
    # when it is read); root's `run 09_bonnie -p db_path ROOTS` wrote raw/secret30.txt-...-L11-11.html, lines 3-19 of
    # root's 0600 file. Here the report's row as the chart gives it, THEIRS empty
    from storagelab import database, excerpts

    assert database.THEIRS == []
    secret = tmp_path / "secret30.txt"
    secret.write_text("".join(f"root-secret-line-{i}\n" for i in range(30)))
    secret.chmod(0o600)
    row = {"v": 1, "path": str(secret), "sha256": None, "line_start": 11, "line_end": 11}
    spec = {"datasets": {"d": [row]}, "mark": "bar", "data": {"name": "d"}}
    out = excerpts.enrich(spec, tmp_path / "rep")["datasets"]["d"][0]
    assert "raw_href" not in out and not (tmp_path / "rep" / "raw").exists()  # main: a page of lines 3-19
