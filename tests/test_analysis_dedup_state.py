"""Notebook 04 with the machine's own ARC statistics (issue 25): the budget from c_max and arc_meta_limit (ZoL 0.8
arcstats) or c_max alone (OpenZFS 2.2+ has no metadata cap), the RAM from memory_all_bytes; on a study of the
ztest pool's real zdb -b / -S / -DD labelled with the same host as a published arcstats."""

import shutil

import pytest
from conftest import FIXTURES

from storagelab.analysis import Selection, dedup, open_db
from storagelab.units import GiB


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    from storagelab.store import ingest

    raw = tmp_path_factory.mktemp("t04") / "raw"
    rows = ["path,study,label,host,pool"]
    for i, (study, arc, pool) in enumerate(
        (("zol08", "linux-0.8/arcstats", "ztest"), ("oz22", "linux-2.2/arcstats", "ztest"), ("zg", None, "zpool1"))
    ):
        (raw / study).mkdir(parents=True)
        for name in ("b.txt", "S.txt", "DD.txt"):
            text = (FIXTURES / "zdb" / "2.1" / name).read_text()
            # one stored copy per study: the same bytes in two studies would be stored once
            (raw / study / f"zdb-{name}").write_text(text + "\n" * i)
            rows.append(f"{study}/zdb-{name},{study},zdb {name[:-4]},vm,{pool}")
        if arc:
            shutil.copy(FIXTURES / "arcstats" / arc, raw / study / "arcstats.txt")
            rows.append(f"{study}/arcstats.txt,{study},arcstats,vm,")
    # the ztest pool's zdb labelled as pool zpool1, beside a published `zfs get all zpool1 -p` (recordsize 131072)
    shutil.copy(FIXTURES / "zfs-get" / "linux-0.8" / "get-all-p.txt", raw / "zg" / "zfs-get.txt")
    rows.append("zg/zfs-get.txt,zg,zfs get,vm,zpool1")
    (raw / "manifest.csv").write_text("\n".join(rows) + "\n")
    s = ingest([raw], db_path=raw.parent / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(raw.parent / "x.duckdb") as con:
        yield {st: dedup.analyse(con, Selection(study=st)) for st in ("zol08", "oz22", "zg")}


def test_the_budget_from_arc_meta_limit(studies):
    res = studies["zol08"]
    b = res.numbers.budgets["vm"]
    # node_exporter's arcstats: c_max 8,367,976,448 B, arc_meta_limit 6,275,982,336 B (3/4 of c_max)
    assert (b.arc_max_bytes, b.bytes, b.rule) == (8367976448, pytest.approx(6275982336), "arc_meta_limit")
    assert b.metadata_fraction == pytest.approx(0.75) and b.ram_source == "parameter"  # no memory_all_bytes there
    text = "\n".join(res.findings)
    assert (
        "Metadata budget of host vm: ARC maximum (c_max) 7.79 GiB x 0.75 (arc_meta_limit) = 5.84 GiB (RAM 32.00 GiB, "
        "parameter; ARC statistics, arcstats.txt); the ARC held 1.49 GiB, 293.8 MiB of it metadata"
    ) in text
    assert not any("are parameters here" in m for m in res.missing)
    assert res.verdict.endswith("ztest fits (151.8 KiB, measured bytes per entry).")
    assert "against the 5.84 GiB metadata budget" in res.verdict


def test_openzfs_2_2_has_no_metadata_cap(studies):
    b = studies["oz22"].numbers.budgets["vm"]
    # telegraf's 2.2 arcstats: c_max 32,458,756,096 B, memory_all_bytes 33,532,497,920 B, no arc_meta_limit
    assert (b.arc_max_bytes, b.metadata_fraction, b.ram_bytes, b.ram_source) == (
        32458756096,
        1.0,
        33532497920,
        "memory_all_bytes",
    )
    assert b.rule.startswith("no metadata cap (OpenZFS 2.2+")
    assert round(b.bytes / GiB, 2) == 30.23
    text = "\n".join(studies["oz22"].findings)
    assert "Metadata budget of host vm: ARC maximum (c_max) 30.23 GiB (no metadata cap (OpenZFS 2.2+" in text


def test_without_arc_statistics_the_missing_line_names_the_commands(seed_db):
    with open_db(seed_db) as con:
        res = dedup.analyse(con, Selection(study="freebsd-bonnie-dedup"))
    assert res.numbers.budgets == {}
    assert any(
        "`cat /proc/spl/kstat/zfs/arcstats` (Linux), `sysctl kstat.zfs.misc.arcstats` (BSD) or `arc_summary`" in m
        for m in res.missing
    )


def test_the_recordsize_from_zfs_get(studies):
    (g,) = studies["zg"].numbers.recordsize
    assert (g.pool, g.recordsize_bytes, g.recordsize_source, g.max_gain) == ("zpool1", 131072, "zfs get", 8.0)
    text = "\n".join(studies["zg"].findings)
    assert "at most 8x fewer entries (1 MiB / the 128.0 KiB recordsize, `zfs get recordsize` of its datasets)" in text


def test_the_ddt_from_zpool_status_D(tmp_path):
    """A published `zpool status -D` (ZoL 0.6: 'DDT entries 3255693, size 311 on disk, 179 in core', per entry)
    beside the ZoL 0.8 arcstats of the same host: rung 7, measured, against arc_meta_limit."""
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(FIXTURES / "zpool-status" / "zol-0.6" / "status-D.txt", raw / "status-D.txt")
    shutil.copy(FIXTURES / "arcstats" / "linux-0.8" / "arcstats", raw / "arcstats.txt")
    (raw / "manifest.csv").write_text("path,study,host\nstatus-D.txt,sd,box\narcstats.txt,sd,box\n")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = dedup.analyse(con, Selection(study="sd"))
    (e,) = res.numbers.best
    # 3,255,693 entries x 179 B = 582,769,047 B = 555.8 MiB, against 6,275,982,336 B (5.84 GiB)
    assert (e.pool, e.rung, e.entries, e.bytes_per_entry, e.ddt_bytes) == ("backup", 7, 3255693, 179.0, 582769047.0)
    assert (e.fits, e.host, e.budget_bytes) == ("fits", "box", 6275982336.0)
    text = "\n".join(res.findings)
    assert (
        "Pool backup, `zpool status -D`: 3,255,693 DDT entries, 555.8 MiB in core = 179 B per entry (measured; "
        "printed per entry)."
    ) in text
    assert res.verdict.endswith("backup fits (555.8 MiB, measured bytes per entry).")
    assert not any("no `zdb -S` or `zdb -DD` output" in m for m in res.missing)


def test_parameters_the_arc_statistics_replace_are_named_and_labels_they_contradict(tmp_path):
    """h7 finding 7: ram_gib 16, arc_max_gib 12 and metadata_fraction 0.75 set for the run were silently unused
    (the host's arcstats give the budget), and its manifest labels (ram_bytes 16 GiB, zfs_version 2.1.11) against
    telegraf's OpenZFS 2.2 arcstats (memory_all_bytes 31.23 GiB, no arc_meta_limit) were not mentioned."""
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    rows = ["path,study,host,pool,ram_bytes,zfs_version"]
    for name in ("b.txt", "DD.txt"):
        shutil.copy(FIXTURES / "zdb" / "2.1" / name, raw / f"zdb-{name}")
        rows.append(f"zdb-{name},cold,atlas,tank,17179869184,2.1.11")
    shutil.copy(FIXTURES / "arcstats" / "linux-2.2" / "arcstats", raw / "arcstats.txt")
    rows.append("arcstats.txt,cold,atlas,,17179869184,2.1.11")
    (raw / "manifest.csv").write_text("\n".join(rows) + "\n")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = dedup.analyse(con, Selection(study="cold"), ram_gib=16, arc_max_gib=12, metadata_fraction=0.75)
    b = res.numbers.budgets["atlas"]
    assert (b.ram_label_bytes, b.zfs_version_label, b.ram_disagrees, b.version_disagrees) == (
        17179869184,
        "2.1.11",
        True,
        True,
    )
    text = "\n".join(res.findings)
    assert (
        "  The parameters ram_gib 16, arc_max_gib 12 and metadata_fraction 0.75 are not used for host atlas: its ARC "
        "statistics (arcstats.txt) measure what they stand for."
    ) in text
    assert (
        "  The manifest labels the RAM of host atlas 16.00 GiB (ram_bytes), its ARC statistics show 31.23 GiB of "
        "memory (memory_all_bytes): the statistics may be of another machine, or the label is wrong; the budget "
        "above uses the statistics."
    ) in text
    assert (
        "  The manifest labels host atlas ZFS 2.1.11 (zfs_version), its ARC statistics show no arc_meta_limit and a "
        "'meta' field (OpenZFS 2.2 and newer): the statistics may be of another machine or another ZFS, or the label "
        "is wrong."
    ) in text
    assert res.caveats[:2] == [
        "atlas: RAM label and ARC statistics disagree",
        "atlas: ZFS version label and ARC statistics disagree",
    ]


def test_labels_that_agree_with_the_arc_statistics_are_not_questioned(studies):
    """The ZoL 0.8 arcstats (an arc_meta_limit, no memory_all_bytes) of a host without RAM or version labels: only
    the parameters it replaces are named (ram_gib stays in use: the output has no memory_all_bytes)."""
    res = studies["zol08"]
    text = "\n".join(res.findings)
    assert (
        "  The parameters arc_max_gib 0 (0: RAM less 1 GiB) and metadata_fraction 0.25 are not used for host vm: its "
        "ARC statistics (arcstats.txt) measure what they stand for."
    ) in text
    assert "The manifest labels" not in text and not any("disagree" in c for c in res.caveats)


def test_a_pool_no_log_nor_manifest_names_is_not_named_after_its_file(tmp_path):
    """h7 finding 8: unlabelled zdb -b and zdb -DD outputs (no prompt line, no manifest) gave 'Pool b.txt' and
    'Pool DD.txt', and the advice `zdb -DD b.txt`. The file stands for the pool in words, never as a name in a
    command."""
    from storagelab.analysis.selection import UNLABELLED
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("b.txt", "DD.txt"):
        shutil.copy(FIXTURES / "zdb" / "2.1" / name, raw / name)
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res = dedup.analyse(con, Selection(study=UNLABELLED))
    assert [e.pool for e in res.numbers.best] == [
        "(pool name not in the output; file DD.txt)",
        "(pool name not in the output; file b.txt)",
    ]
    text = "\n".join(res.findings)
    assert (
        "Pool (pool name not in the output; file b.txt): 5,321 block pointers x 320 B = 1.6 MiB (1.7 MB), an upper "
        "bound (bp count includes metadata and embedded bps); fits the 7.75 GiB budget; it would fit at 1,563,897 B per entry or less."
    ) in text  # h7 finding 20: whole bytes with thousands separators, as every count
    assert (
        "Pool (pool name not in the output; file DD.txt), zdb -D/-DD (existing DDT): 659 entries -> 205.9 KiB at 320 B/entry."
        in text
    )
    assert "  Alone it fits while an entry costs at most 1,634,318 B; over the in-core sizes" in text
    assert "b.txt`" not in text and "DD.txt`" not in text  # no command names a file as a pool
    assert (
        "the verdict rests on the bytes per entry, which only `zdb -DD POOL` or `zpool status -D POOL` on the pool "
        "itself measure (its name is in neither the log nor the manifest)."
    ) in text
    assert "no recordsize label nor `zfs get recordsize POOL` output says otherwise" in text
    assert any(
        m.startswith("the pool of ")
        and m.endswith(
            "/raw/b.txt, " + str(raw / "DD.txt") + " is not in the log nor the manifest: add the pool name "
            "(column pool)"
        )
        for m in res.missing
    ), res.missing
