"""Reliability-24, Spark: the end of reliability-20..23's class (a relative path in Spark's settings, in whatever
program's syntax, resolved in Spark's folder in /tmp, where another user makes what it names)."""

import os
import shutil
import stat

import pytest

from storagelab import spark_ingest


def test_spark_starts_where_no_relative_path_reaches_another_users_folder(tmp_path, monkeypatch):
    """Root's own `JDK_JAVA_OPTIONS=@/root/opts` holding `-Dlog4j2.configurationFile=../l.properties`, a `--conf
    ...=file:%2e%2e/l.properties`, root's spark-env.sh setting SPARK_SUBMIT_OPTS to a "../" path: Spark's JVM started
    in /tmp/storagelab-spark-X read the second user's /tmp/l.properties, whose File appender wrote 44 lines into a file
    of root's. Now every folder a climb ("../" k times) from Spark's start folder reaches is this user's own and
    shut to others, or "/" after as many climbs as the user's own folder needs: the same file an absolute path names
    (the builder's getOrCreate records the folder: no JVM)."""
    pytest.importorskip("pyspark")
    if os.geteuid() != 0:
        pytest.skip("only root can make the start folder under / (others keep the temporary folder's)")
    from pyspark.sql import SparkSession  # noqa: PLC0415

    seen = []

    class Builder:  # getOrCreate records the working folder; every call returns it
        def __getattr__(self, name):
            return lambda *a: (seen.append(os.getcwd()) if name == "getOrCreate" else None) or self

    here = tmp_path / "a" / "b"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    monkeypatch.setattr(SparkSession, "builder", Builder())
    spark = spark_ingest.session()
    [start] = seen
    top = "/" + start.split("/")[1]
    try:
        depth = len(str(here).strip("/").split("/"))
        assert len(start.strip("/").split("/")) == depth and os.getcwd() == str(here)
        for k in range(1, depth + 2):
            reached = os.path.realpath(os.path.join(start, *[".."] * k))
            st = os.lstat(reached)
            if k >= depth:
                assert reached == "/", k
            else:  # the chain's own folders: this user's, 0700 (on the old code: /tmp, 01777)
                assert reached.startswith("/.storagelab-spark-cwd-") and st.st_uid == os.geteuid(), reached
                assert stat.S_IMODE(st.st_mode) == 0o700, reached
    finally:
        spark_ingest.stop(spark)
    assert not os.path.exists(top) and top.startswith("/.storagelab-spark-cwd-")


def test_spark_start_folder_is_as_deep_as_a_removed_working_folder(tmp_path, monkeypatch):
    """A removed working folder still has "..": its depth is read from the kernel's name for it ("(deleted)"), not
    taken as 1 (a "../tmp/x" of the user's, meant beside the removed folder, would have named /tmp/x)."""
    if os.geteuid() != 0:
        pytest.skip("only root can make the start folder under /")
    from storagelab import sparkjvm  # noqa: PLC0415

    gone = tmp_path / "a" / "gone"
    gone.mkdir(parents=True)
    monkeypatch.chdir(gone)
    gone.rmdir()
    start, top = sparkjvm.start_folder({}, "/tmp/storagelab-spark-")
    try:
        assert len(start.strip("/").split("/")) == len(str(gone).strip("/").split("/"))
    finally:
        if top:
            shutil.rmtree(top)


def test_an_export_inside_another_users_folder_is_not_told_to_use_a_folder_under_it(tmp_path):
    """`storagelab export --dataset /tmp/h24su/dsx` (the second user's folder) -> refused, rightly, but told "give a
    folder of your own (e.g. a new folder under it)": under it is inside their folder again, refused the same way."""
    if os.geteuid() != 0:
        pytest.skip("a folder of another user's needs root to make")
    from storagelab import dataset  # noqa: PLC0415
    from storagelab.ownership import SharedFolderError  # noqa: PLC0415

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "dsx").mkdir()  # made by the export, then checked
    os.chown(theirs, 1002, 1002)
    with pytest.raises(SharedFolderError) as e:
        dataset._owned_folder(theirs / "dsx")
    assert str(e.value).endswith("give a folder whose parent folders only you (or root) can change")
    assert "new folder under it" not in str(e.value)
