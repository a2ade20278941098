"""Reliability-35, the dataset, Spark, the environment and the ignore language (h52k)."""

from __future__ import annotations

from storagelab.ignore import IgnoreList


def test_space_class_is_gits_ascii_space():
    """``[[:space:]]`` took Python's ``str.isspace``: names ending in \\v, \\f or \\x1c-\\x1f were ignored by
    ``*[[:space:]]`` (and kept by ``*[![:space:]]``), where git's wildmatch (its own ctype: space, \\t, \\n, \\r)
    does the opposite: found by the class fuzz against git, checked on every ASCII character."""
    spaces = IgnoreList(["*[[:space:]]"])
    others = IgnoreList(["*[![:space:]]"])
    for c in "\v\f\x1c\x1d\x1e\x1f":
        assert not spaces.ignored(f"a{c}") and others.ignored(f"a{c}")
    for c in " \t\r":
        assert spaces.ignored(f"a{c}") and not others.ignored(f"a{c}")


def test_a_slash_inside_a_class_is_a_class_member_not_a_cut():
    """``*[a/b]`` was cut at its '/' into ``*[a`` and ``b]`` and refused ("a [ without its closing ]"), exit 2; git
    reads one class, whose '/' never matches: ``xa`` and ``xb`` ignored, ``x/`` never. An escaped '/' outside a
    class still cuts (``a\\/b``), and an escaped '[' starts no class."""
    assert [p for p in ("xa", "xb", "xc", "x/y") if IgnoreList(["*[a/b]"]).ignored(p)] == ["xa", "xb"]
    assert [p for p in ("d/ac/e", "d/a/e", "d/bc/e") if IgnoreList(["d/[a/b]c/e"]).ignored(p)] == ["d/ac/e", "d/bc/e"]
    assert not IgnoreList(["a[/]b"]).ignored("a/b")
    assert IgnoreList(["a\\/b"]).ignored("a/b")
    assert IgnoreList(["\\[a/b]"]).ignored("[a/b]")


def test_classes_with_ranges_or_posix_names_are_not_asked_one_by_one(monkeypatch):
    """af0f0d0c read the classes that only list characters from an index; those with a range or a POSIX name were
    still asked one by one, each alive one at every new character: 2,000 lines ``*[c-d]*[e-f]*g`` (30 KB) cost 5.4 s
    of CPU a 250-character CJK name, 8,000 lines 19.6 s (0.17 s for 2,000 now). The answers are the classes'."""
    from storagelab.ignore import CharClass

    cjk = [chr(0x4E00 + k) for k in range(3_400)]
    lines = [f"*[{cjk[k]}-{cjk[k + 40]}]*[![:digit:]{cjk[k + 7]}-{cjk[k + 9]}]*{cjk[3_000 + k]}" for k in range(300)]
    il = IgnoreList(lines)
    asked = []
    real = CharClass.__contains__

    def counting(self, c):
        asked.append(c)
        return real(self, c)

    monkeypatch.setattr(CharClass, "__contains__", counting)
    names = ["d/" + "".join(cjk[(k * 13 + j * 7) % 3_000] for j in range(250)) for k in range(2)]
    assert [il.ignored(n) for n in names] == [False, False]
    assert il.ignored(cjk[5] + cjk[50] + cjk[3_005])  # [c-d] holds cjk[5], [!...] holds cjk[50]: line 5
    assert not il.ignored(cjk[5] + cjk[13] + cjk[3_005])  # cjk[13] is in line 5's negated range: no line matches
    assert len(asked) < 500, len(asked)  # each alive class asked at each new character before: 300,000 asks


def test_the_dataset_folder_moved_mid_run_is_one_line_not_a_java_traceback(tmp_path, monkeypatch):
    """`mv A Aold; mv B A` while spark-ingest wrote A: its staging (named by the resolved path) was gone, and Spark's
    FAILED_READ_FILE.FILE_NOT_EXIST came out as a 218-line Py4JJavaError traceback, exit 1 (2 tries, real JVMs)."""
    import pytest

    from storagelab import spark_ingest
    from storagelab.errors import StoreError

    class Java:
        def toString(self):  # noqa: N802 - py4j's name
            return "org.apache.spark.SparkException: [FAILED_READ_FILE.FILE_NOT_EXIST] Encountered error while reading"

    class Py4JJavaError(Exception):
        java_exception = Java()

    ds = tmp_path / "ds"
    (ds / "_storagelab").mkdir(parents=True)
    monkeypatch.setattr(spark_ingest, "_old_meta", lambda spark, out: {})
    monkeypatch.setattr(spark_ingest, "_old_file_ids", lambda spark, out, old: {})

    def job(*args):
        raise Py4JJavaError("An error occurred while calling o729.parquet.")

    monkeypatch.setattr(spark_ingest, "_job", job)
    with pytest.raises(StoreError, match="went while it ran .* nothing committed"):
        spark_ingest.run(None, str(tmp_path / "in"), str(ds))
