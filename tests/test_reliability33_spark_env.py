"""Reliability-33, the spark-env part (h50k): the ignore matcher's class masks, built when asked (77d9f780), kept."""

from __future__ import annotations

from storagelab import ignore
from storagelab.ignore import IgnoreList


def test_a_class_mask_is_built_once_however_many_distinct_characters_the_names_hold(monkeypatch):
    # 77d9f780 built a class's positions mask when a position of it was alive, remembered per character for 256
    # characters only: names of more than 256 distinct characters (CJK) built it again at every character. A line
    # of `*` and 262,000 `[!x]` (the 1,048,576-character cap) cost 7.4 s of CPU for one 200-character name (0.01 s
    # on the code before 77d9f780). The masks of the classes are kept (at most 256 of them).
    cjk = [chr(0x4E00 + k) for k in range(300)]
    names = ["".join(cjk[(k * 7 + j) % 300] for j in range(200)) for k in range(3)]
    il = IgnoreList(["*" + "[!x]" * 2_000])
    built = []
    real = ignore._bits

    def counting(positions):
        positions = list(positions)
        built.append(len(positions))
        return real(positions)

    monkeypatch.setattr(ignore, "_bits", counting)
    assert [il.ignored(n) for n in names] == [False, False, False]
    assert il.ignored("d/" + "".join(cjk[j % 300] for j in range(2_000)))  # 2,000 characters: each one a [!x]
    assert not il.ignored("".join(cjk[j % 300] for j in range(1_000)) + "x" + "".join(cjk[:1_000]))
    # each built once (600 builds of 2,000 positions before): the classes' positions, and since af0f0d0c those of the
    # classes that list characters only, of the negated ones, and of those listing 'x' (Matcher._listed)
    assert sum(n for n in built if n >= 2_000) <= 4 * 2_000, len(built)


def test_a_table_written_while_another_job_adds_part_files_is_not_committed(monkeypatch):
    """The spark-env part's last finding: a spark-ingest run committed a meta.json listing two write jobs' part files
    for one partition of `files` (part-00001-76f70322... beside part-0000N-daee7381...): the dataset opened with 57
    files rows for 46 paths, and thumper_layouts twice. Each table's new part files are taken as the run's own only
    when one job made them all; else nothing is committed (the old dataset stays whole) and the line says why."""
    import pytest

    from storagelab import spark_ingest
    from storagelab.errors import StoreError

    ours = "files/tool=fio/study=a/month=2026-11/part-0000{}-daee7381-6eca-4c07-a653-ecde8a587b28.c000.snappy.parquet"
    theirs = "files/tool=mbuffer/study=__HIVE_DEFAULT_PARTITION__/month=2026-11/part-00001-76f70322-db8b-457e-8904-f5211a7ea2a2.c000.snappy.parquet"
    old = "files/tool=fio/study=a/month=2026-11/part-00000-11111111-2222-3333-4444-555555555555.c000.snappy.parquet"

    class _Writes:  # df.write.mode(...).partitionBy(...).parquet(...): the listing changes as the job ends
        def __getattr__(self, name):
            return lambda *a: self

        def parquet(self, target):
            listings.pop(0)

    for after, kept in (([old, ours.format(0), ours.format(1)], True), ([old, ours.format(0), theirs], False)):
        listings = [{old: 10}, {rel: 10 for rel in after}]
        monkeypatch.setattr(spark_ingest, "_listing", lambda spark, output, name, now=listings: now[0])
        df = type("DF", (), {"write": _Writes()})()
        if kept:
            assert spark_ingest._write(None, df, "/d", "files") == {ours.format(0): 10, ours.format(1): 10}
        else:
            with pytest.raises(StoreError, match=r"^/d/files: part files of 2 write jobs appeared while this run"):
                spark_ingest._write(None, df, "/d", "files")
