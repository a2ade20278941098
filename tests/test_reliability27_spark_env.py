"""Reliability-27 (issue 26), the dataset, Spark and the environment: a fresh campaign on the newest fixes and their
neighbours (docs/reliability-27-spark-env.md)."""

from __future__ import annotations

import os
import tempfile
from types import SimpleNamespace

import pytest
from conftest import their_folder

from storagelab import ownership


def test_a_variable_with_a_separator_is_also_checked_whole(tmp_path, monkeypatch):
    """`TMPDIR=/tmp/: storagelab run` (or `cd THEIRS; TMPDIR=:`): the check split the value at ":" and passed its
    pieces ("/tmp/", a sticky folder; none at all), while tempfile took it whole, the second user's "/tmp/:" ("./:"):
    root's kernel folder, its connection file and sockets were made there, and their rename put their own folder in
    its place. Now the whole value is checked too; from a folder of this user's, or its own, it passes."""
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    their_folder(sticky, ":").chmod(0o777)
    theirs = their_folder(tmp_path)
    (theirs / ":").mkdir(mode=0o777)
    os.chown(theirs / ":", 1002, 1002)
    monkeypatch.chdir(theirs)
    monkeypatch.setenv("TMPDIR", ":")
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert tempfile.gettempdir() == str(theirs / ":")  # what tempfile makes of it (as root: the test runs as root)
    for var in ("TMPDIR", "JUPYTER_RUNTIME_DIR", "XDG_RUNTIME_DIR", "IPYTHONDIR", "JUPYTER_DATA_DIR"):
        for value in (":", ",", "::"):
            said = ownership.environment_refusal({var: value})
            assert said is not None and said.startswith(f"the environment's {var} ({value}): "), (var, value)
    said = ownership.environment_refusal({"TMPDIR": f"{sticky}/:"})
    assert said is not None and said.startswith(f"the environment's TMPDIR ({sticky}/:): {sticky}/: is another user's")
    monkeypatch.chdir(tmp_path)
    assert (
        ownership.environment_refusal({"TMPDIR": ":", "IPYTHONDIR": ",", "XDG_DATA_DIRS": "/usr/share:/usr/lib"})
        is None
    )


def test_spark_start_folder_is_never_on_a_file_system_another_user_serves(tmp_path, monkeypatch):
    """Root's spark-ingest with "/", /run and the home read-only, from a folder that is the second user's bindfs (shown
    as root's, 0700, under a folder of root's): the chain was made there, in their backing folder, where their process
    answers every name a relative path of root's settings climbs to. Now a base on a FUSE file system another user
    mounted is passed over (here: every base but "/" said to be one, in the list of mounts the check reads)."""
    from storagelab import ownership, sparkjvm  # noqa: PLC0415

    bases = [b for b in sparkjvm._bases() if b != "/"]
    if not bases:
        pytest.skip("no base but / on this machine")
    table = tmp_path / "mountinfo"
    table.write_text(
        "1 0 0:1 / / rw - ext4 /dev/vda1 rw\n"
        + "".join(
            f"9{k} 1 0:5{k} / {b} rw - fuse.bindfs /tmp/x rw,user_id=1002,group_id=1002\n" for k, b in enumerate(bases)
        )
    )
    monkeypatch.setattr(ownership, "MOUNTINFO", str(table))
    assert sparkjvm._bases() == ["/"]


class _FakeSpark:
    """What spark_ingest._old_file_ids asks of a session: Hadoop's file sizes (the local files'), and a Parquet read
    (pyarrow's) that fails on a path that is not there, as Spark's PATH_NOT_FOUND does."""

    def __init__(self):
        def path(target):
            fs = SimpleNamespace(getFileStatus=lambda p: SimpleNamespace(getLen=lambda: os.stat(target).st_size))
            return SimpleNamespace(getFileSystem=lambda conf: fs)

        hadoop = SimpleNamespace(fs=SimpleNamespace(Path=path))
        jvm = SimpleNamespace(org=SimpleNamespace(apache=SimpleNamespace(hadoop=hadoop)))
        self.sparkContext = SimpleNamespace(_jvm=jvm, _jsc=SimpleNamespace(hadoopConfiguration=lambda: None))
        self.read = self
        self.asked: list[str] = []

    def option(self, key, value):
        return self

    def parquet(self, *paths):
        import pyarrow.parquet as pq  # noqa: PLC0415

        self.asked = list(paths)
        rows = [r for p in paths for r in pq.read_table(p).to_pylist()]  # FileNotFoundError for a lost part
        return SimpleNamespace(select=lambda *cols: SimpleNamespace(collect=lambda: rows))


def test_a_spark_reingest_over_a_dataset_with_a_lost_part_keeps_the_intact_parts_ids(tmp_path):
    """A part of `files` lost (or edited by hand) in a spark-ingest dataset: open_dataset says to run spark-ingest
    again, and that run failed before its job on every try, Spark's PATH_NOT_FOUND traceback (rc 1), reading the former
    ids. Now the ids come from the parts there as meta.json lists them; the others' files take new ids."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    from storagelab import spark_ingest  # noqa: PLC0415

    parts = {}
    for k, name in enumerate(("a", "b", "c")):
        rel = f"files/tool={name}/part-0.parquet"
        (tmp_path / rel).parent.mkdir(parents=True)
        pq.write_table(pa.table({"path": [f"in/{name}.log"], "sha256": [name * 4], "file_id": [k + 1]}), tmp_path / rel)
        parts[rel] = (tmp_path / rel).stat().st_size
    (tmp_path / "files/tool=b/part-0.parquet").unlink()  # lost
    with open(tmp_path / "files/tool=c/part-0.parquet", "ab") as f:  # edited: not the size meta.json lists
        f.write(b"x")
    spark = _FakeSpark()
    ids = spark_ingest._old_file_ids(spark, str(tmp_path), {"parts": {"files": parts}})
    assert ids == {("in/a.log", "aaaa"): 1}
    assert spark.asked == [f"{tmp_path}/files/tool=a/part-0.parquet"]
    text = '{"format": "%s", "parts": {"files": ["%s"]}}' % (spark_ingest.dataset.FORMAT, rel)  # meta.json edited
    stream = SimpleNamespace(close=lambda: None)
    fs = SimpleNamespace(exists=lambda p: True, open=lambda p: stream)
    spark.sparkContext._jvm.org.apache.commons = SimpleNamespace(
        io=SimpleNamespace(IOUtils=SimpleNamespace(toByteArray=lambda s: text.encode()))
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spark_ingest, "_fs", lambda spark, out: (fs, SimpleNamespace(suffix=lambda p: p)))
        assert spark_ingest._old_file_ids(spark, str(tmp_path), spark_ingest._old_meta(spark, str(tmp_path))) == {}


def test_a_dataset_is_not_written_into_a_folder_of_other_files(tmp_path, seed_db):
    """`export --dataset ~/work`, whose files/ held the user's part-1-notes.txt, sub/draft.tmp and whose
    fio_groups/_temporary/ held keep.txt: the sweep deleted all three (the names a dataset writer makes), exit 0 and
    not a word. Now a folder with files in it and no _storagelab/ is refused, by export and spark-ingest alike, and
    nothing in it is touched; other files beside the table folders (the sweep never looks there) are no reason."""
    from storagelab import dataset, spark_ingest  # noqa: PLC0415
    from storagelab.errors import StoreError  # noqa: PLC0415
    from storagelab.store import connect  # noqa: PLC0415

    out = tmp_path / "work"
    mine = ["files/part-1-notes.txt", "files/sub/draft.tmp", "fio_groups/_temporary/keep.txt"]
    for rel in mine:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("precious")
    con = connect(seed_db, read_only=True)
    try:
        with pytest.raises(
            StoreError, match=r"^--dataset .*/work: its folder files/ holds files, and it is not a storagelab"
        ):
            dataset.export(con, out)
    finally:
        con.close()
    with (
        pytest.raises(StoreError, match=r"^output .*/work: its folder files/ holds files"),
        spark_ingest._one_writer(str(out)),
    ):
        pass
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == sorted(mine)
    assert not (out / "_storagelab").exists()
    other = tmp_path / "other"
    (other / "notes").mkdir(parents=True)
    (other / ".gitkeep").write_text("")
    (other / "notes" / "part-1.txt").write_text("")
    assert dataset.not_ours(other) is None
