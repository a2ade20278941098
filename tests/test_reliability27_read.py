"""Reliability-27, the read side (issue 26): see docs/reliability-27-read.md."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("folder_mode", [0o777, 0o1777])
def test_a_wal_others_can_write_renamed_away_after_the_reader_took_it_still_refuses_its_views(
    tmp_path, monkeypatch, folder_mode
):
    # root's database (0600) and its WAL (0666: root's umask 000), in a folder the second user can rename in (0777:
    # the reader copies both; 1777 of theirs: hard-linked). They wrote a view into the WAL and renamed the WAL away
    # between the reader's copy (or link) of it and the check of its mode: root's `sql --db` ran the view
    from test_reliability24_read import view_in_its_wal

    from storagelab import database
    from storagelab.errors import StoreError

    folder = tmp_path / "f"
    folder.mkdir()
    db, wal = folder / "x.duckdb", folder / "x.duckdb.wal"
    view_in_its_wal(db)
    db.chmod(0o600)
    wal.chmod(0o666)
    folder.chmod(folder_mode)
    took = database._spill_config_of

    def renamed_away(given, real):  # called between the private view's copy (or link) and DuckDB's open
        wal.rename(folder / "keep")
        return took(given, real)

    monkeypatch.setattr(database, "_spill_config_of", renamed_away)
    with pytest.raises(StoreError, match=r"other users can write \(mode 0622\) with views or macros \(fio_leak\)"):
        database.connect(db, read_only=True)  # main: opened, `SELECT * FROM fio_leak` gave ROOTSECRET


def test_a_database_of_another_user_s_naming_a_file_of_root_s_with_its_sha256_gets_no_page_of_it(tmp_path, monkeypatch):
    # the attack: the second user read a page of root's published report, which prints the path and SHA-256 of root's
    # 0600 log; their database's bonnie rows named that path with that SHA-256 and lines 1-30, and root's
    # `run 09_bonnie -r db_path THEIRS -r study ''` wrote pages of the file's lines into the report (SHA-256 checked)
    import hashlib
    import os

    from test_reliability24_read import their_database_read

    from storagelab import database, excerpts, paths

    if os.geteuid() != 0:
        pytest.skip("needs root to give the database to another user")
    secret = tmp_path / "secret.log"
    secret.write_text("".join(f"root-secret-line-{i}\n" for i in range(30)))
    secret.chmod(0o600)
    sha = hashlib.sha256(secret.read_bytes()).hexdigest()
    row = {"v": 1, "path": str(secret), "sha256": sha, "line_start": 11, "line_end": 11}
    spec = {"datasets": {"d": [row]}, "mark": "bar", "data": {"name": "d"}}
    assert excerpts.enrich(spec, tmp_path / "own")["datasets"]["d"][0].get("raw_href")  # root's own reports: as before
    their_database_read(tmp_path)
    out = excerpts.enrich(spec, tmp_path / "rep")["datasets"]["d"][0]
    assert "raw_href" not in out and not (tmp_path / "rep" / "raw").exists()  # main: a page of lines 3-19
    # a file of the project (a relative path: shown without a SHA-256 too), root's 0600 database there alike
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    assert excerpts.Excerpts(tmp_path / "rep").href("secret.log", None, 11, 11) is None  # before: a page
    assert database.their_writers() == {1002}


def test_a_dataset_exported_from_another_user_s_database_is_their_word_when_read_back(tmp_path):
    # the same attack laundered: root's `export --db THEIRS --dataset ROOTS`, then `run 09_bonnie -r db_path ROOTS`:
    # the dataset was root's own (database.THEIRS empty when it was read), and the pages of root's 0600 file written
    import hashlib
    import os
    import shutil

    from storagelab import database, dataset, excerpts
    from storagelab.store import ingest

    if os.geteuid() != 0:
        pytest.skip("needs root to give the database to another user")
    theirs = tmp_path / "theirs"
    (theirs / "logs").mkdir(parents=True)
    shutil.copy(__file__.rsplit("/", 1)[0] + "/fixtures/fio/3.33/logs/raw_clat.1.log", theirs / "logs")
    (theirs / "m.csv").write_text("path,study,label\n")
    db = theirs / "x.duckdb"
    ingest([theirs / "logs"], db_path=db, manifest_path=theirs / "m.csv", parquet_dir=False, progress=False, workers=1)
    for p in (theirs, db):
        os.chown(p, 1002, 1002)
    con = database.connect(db, read_only=True)
    dataset.export(con, tmp_path / "roots", db)
    con.close()
    database.THEIRS.clear()  # a later process: root's `run -r db_path ROOTS`
    dataset.open_dataset(tmp_path / "roots").close()
    secret = tmp_path / "secret.log"
    secret.write_text("".join(f"root-secret-line-{i}\n" for i in range(30)))
    secret.chmod(0o600)
    sha = hashlib.sha256(secret.read_bytes()).hexdigest()
    assert excerpts.Excerpts(tmp_path / "rep").href(str(secret), sha, 11, 11) is None  # before: a page of lines 3-19
    assert database.their_writers() == {1002}


def test_an_acl_that_denies_them_a_file_others_may_read_gives_it_no_page_from_their_database(tmp_path):
    # the same attack on a file of root's that "other" may read (0644) but an ACL entry denies the second user
    # (setfacl -m u:storagelab-rel5:--- f): the mode bits alone said they could read it, and the page was written
    import hashlib
    import os
    import struct
    import tempfile

    from storagelab import database, excerpts

    folder = tempfile.mkdtemp(dir="/tmp")  # a path every user can search: / /tmp folder
    try:
        os.chmod(folder, 0o755)
        f = os.path.join(folder, "f.txt")
        with open(f, "w") as out:
            out.write("".join(f"line-{i}\n" for i in range(30)))
        os.chmod(f, 0o644)
        sha = hashlib.sha256(open(f, "rb").read()).hexdigest()
        database.THEIRS.append("theirs.duckdb")
        database.THEIR_UIDS["theirs.duckdb"] = 1002
        assert excerpts.Excerpts(tmp_path / "a").href(f, sha, 11, 11)  # they can read it: shown
        entries = [(0x01, 6, 0xFFFFFFFF), (0x02, 0, 1002), (0x04, 4, 0xFFFFFFFF), (0x10, 4, 0xFFFFFFFF)]
        acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries + [(0x20, 4, 0xFFFFFFFF)])
        try:
            os.setxattr(f, "system.posix_acl_access", acl)  # u::rw- u:1002:--- g::r-- m::r-- o::r--
        except OSError:
            pytest.skip("no POSIX ACLs on /tmp here")
        assert excerpts.Excerpts(tmp_path / "b").href(f, sha, 11, 11) is None  # before: a page of lines 3-19
    finally:
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)
