"""The s37 new-user trial of the configuration outputs engineers paste besides fio (h6): real files in
tests/fixtures/trial-h6c (sources in its COMMANDS.md; findings in /work/scratch/h6-findings.md). Each test
parses one file in-process and asserts the exact values its raw lines give."""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from storagelab.errors import ParseError
from storagelab.parsers import parse_bytes

TRIAL = FIXTURES / "trial-h6c"


def _rows(name: str, table: str) -> list[dict]:
    parsed, _ = parse_bytes((TRIAL / name).read_bytes(), name)
    return [dict(r) for r in parsed.rows(table)]


def test_parted_align_check_survives_the_exact_listing_printed_after_it():
    """H1: `print`, `align-check opt 1`, `align-check min 2`, then `unit s print` (the order the warning itself
    advises): the verdicts were given under the rounded listing, which is dropped for the exact one, and were
    lost with it. Lines 15-18 of the session: '1 not aligned: 7s % 256s != 0s', '2 aligned'."""
    parts = {r["index"]: r for r in _rows("parted-session-4k-align-check.txt", "partitions")}
    assert parts[1]["align_check"] == "optimal: not aligned: 7s % 256s != 0s"
    assert parts[2]["align_check"] == "minimal: aligned"
    # the kept listing is the exact one (line 27-28: '1 7s 8191s 8185s', '2 8192s 16378s 8187s', 4096 B sectors)
    assert (parts[1]["start_sector"], parts[1]["size_sectors"], parts[1]["line_start"]) == (7, 8185, 27)
    assert (parts[2]["start_sector"], parts[2]["size_sectors"], parts[2]["line_start"]) == (8192, 8187, 28)
    assert (parts[1]["start_bytes"], parts[1]["logical_sector_bytes"]) == (28672, 4096)


def test_zpool_status_days_to_go_of_openzfs_08_and_later():
    """M1: '123G resilvered, 66.46% done, 0 days 01:24:38 to go' (print_scan_status, 0.8+) refused the file."""
    (pool,) = _rows("zpool-status-resilver-openzfs-7537.txt", "zpool_status_pools")
    assert pool["to_go_ns"] == (3600 + 24 * 60 + 38) * 1e9
    assert pool["scanned_bytes"] == pytest.approx(6.18 * 2**40)
    assert pool["issued_bytes"] == pytest.approx(4.26 * 2**40)
    assert pool["scan_total_bytes"] == pytest.approx(6.42 * 2**40)
    assert (pool["scan_rate_bytes_per_s"], pool["issue_rate_bytes_per_s"]) == (644 * 2**20, 444 * 2**20)
    assert (pool["scan_processed_bytes"], pool["done_pct"]) == (123 * 2**30, 66.46)
    vdevs = _rows("zpool-status-resilver-openzfs-7537.txt", "zpool_status_vdevs")
    assert [(v["name"], v["note"]) for v in vdevs if v["note"]] == [
        ("sdh", "(resilvering)"),
        ("ata-WDC_WD3001FFSX-68JNUN0_WD-WCC13HETXXKA", "too many errors"),
    ]


def test_proc_mdstat_is_named_when_refused():
    """M2: /proc/mdstat (and mdadm, smartctl, lsblk) was refused as 'no known tool output found', with a list of
    readable tools that left out zfs get, zpool status, arcstats and the rest."""
    with pytest.raises(ParseError) as e:
        parse_bytes((TRIAL / "mdstat-procfs-676.txt").read_bytes())
    assert e.value.kind == "unknown-format" and e.value.line == 1
    assert str(e.value).startswith("<input>:1: unknown-format: /proc/mdstat: storagelab does not read this tool")
    said = str(e.value)
    assert "zpool (zpool list, zpool iostat" in said and "arcstats (/proc/spl/kstat/zfs/arcstats" in said
    for name, head in (
        ("lsblk-b-o.txt", "lsblk: storagelab does not read this tool's output"),
        ("zfs-list.txt", "no known tool output found"),  # NAME USED AVAIL REFER MOUNTPOINT: not lsblk's header
    ):
        with pytest.raises(ParseError) as e:
            parse_bytes((TRIAL / name).read_bytes())
        assert str(e.value).startswith(f"<input>:1: unknown-format: {head} (expected output of fio")
    with pytest.raises(ParseError) as e:  # zpool status -x with nothing wrong: one line, no pool
        parse_bytes((TRIAL / "zpool-status-x-healthy.txt").read_bytes())
    assert str(e.value).startswith(
        "<input>:1: unknown-format: zpool status -x: 'all pools are healthy' names no pool: nothing to store"
    )


@pytest.fixture(scope="module")
def labelled_db(tmp_path_factory):
    """One database for the analysis tests: the zfs-fuse zpool status (study box), the published resilver paste
    (study pasted) and the parted session in default units (study parted), as a user labels them."""
    from conftest import ingest_labelled

    raw = tmp_path_factory.mktemp("h6c") / "raw"
    raw.mkdir()
    labels = {
        "zpool-status-v-zfs-fuse-degraded.txt": "box,zpool status",
        "zpool-status-resilver-openzfs-7537.txt": "pasted,resilver",
        "parted-session-rounded-only.txt": "parted,parted session",
    }
    for n in labels:
        (raw / n).write_bytes((TRIAL / n).read_bytes())
    return ingest_labelled(raw, "path,study,label\n" + "".join(f"{n},{v}\n" for n, v in labels.items()))


def test_zpool_status_offline_member_is_said(labelled_db):
    """M3: 02 and 03 said a pool ran degraded only from `zdb -C`'s flags; the `zpool status` most users paste
    (tank2 DEGRADED, /root/h6/d6.img OFFLINE, line 36) was read into the database and never said."""
    from conftest import analyse_study

    from storagelab.analysis import pool_members

    db = labelled_db
    found = analyse_study(db, pool_members.sentences, "box")
    assert [str(f) for f in found] == [
        "Pool tank2: its zpool status (zpool-status-v-zfs-fuse-degraded.txt) shows /root/h6/d6.img OFFLINE, the pool "
        "DEGRADED: when it was printed, the pool ran with that member missing, not as the layout its labels give; "
        "runs on the pool then measured it so (whether the runs were made then, the logs do not say)."
    ]
    assert [(c["line_start"], c["line_end"]) for c in found[0].cites[0].inputs] == [(36, 36)]
    # a DEGRADED member is still in use (too many errors): not 'missing'; line 17 of the published paste
    pasted = [str(f) for f in analyse_study(db, pool_members.sentences, "pasted")]
    assert pasted[1] == (
        "Pool vz: its zpool status (zpool-status-resilver-openzfs-7537.txt) shows "
        "ata-WDC_WD3001FFSX-68JNUN0_WD-WCC13HETXXKA DEGRADED (too many errors), the pool DEGRADED: when it was "
        "printed, the pool ran with a member ZFS counts too many errors on, still in use (a DEGRADED member); runs "
        "on the pool then measured it so (whether the runs were made then, the logs do not say)."
    )
    assert pasted[0].startswith("Pool vz: its zpool status (zpool-status-resilver-openzfs-7537.txt) shows ata-WDC")


def test_zpool_get_ashift_0_is_no_ashift():
    """L1: `zpool get all` prints 'tank2  ashift  0  default' for a pool created without -o ashift (each vdev's
    own, 12 here, is in zdb -C). 03 took that 0 as the pool's ashift and dropped the manifest's ashift label."""
    import polars as pl

    from storagelab.analysis.alignment import pool_settings

    name = "zpool-get-all-zfs-fuse.txt"
    props = pl.DataFrame(
        [{"file_id": 1, "path": name, "sha256": "x"} | r for r in _rows(name, "zfs_properties")]
    ).filter(pl.col("property") == "ashift")
    assert props.select("name", "value", "value_count", "line_start").rows() == [("tank2", "0", 0.0, 19)]
    vdevs = pl.DataFrame(schema={"pool": pl.String, "ashift": pl.Int64, "path": pl.String, "file_id": pl.Int64})
    got = pool_settings({"pool": "tank2", "ashift": 12}, props, vdevs)
    assert (got.ashift, got.ashift_source, got.ashift_lines) == (12, "the manifest's ashift label", ())


def test_parted_error_before_the_listing_of_an_unlabelled_disk():
    """M4: 'Error: /dev/loop1: unrecognised disk label' (parted prints it before the listing of a disk without a
    label, and before that disk's block in parted -l) refused the whole file as 'not parted output'."""
    parsed, _ = parse_bytes((TRIAL / "parted-print-unlabelled.txt").read_bytes(), "x")
    assert parsed.warnings == ["line 1: Error: /dev/loop1: unrecognised disk label"]
    (disk,) = [dict(r) for r in parsed.rows("disks")]
    assert (disk["disk"], disk["table_type"], disk["partitions"]) == ("/dev/loop1", None, 0)
    assert (disk["size_bytes"], disk["size_rounded_to_bytes"], disk["logical_sector_bytes"]) == (
        33_600_000,
        100_000,
        512,
    )
    assert not parsed.rows("partitions")


def test_gdisk_of_a_blank_disk():
    """M5: `gdisk -l` of a new disk ('Creating new GPT entries in memory.', line 9, then an empty table whose
    header is the last line) was refused at line 9 as 'not gdisk output'."""
    parsed, _ = parse_bytes((TRIAL / "gdisk-l-blank.txt").read_bytes(), "x")
    (disk,) = [dict(r) for r in parsed.rows("disks")]
    assert (disk["disk"], disk["table_type"], disk["partitions"], disk["line_start"]) == ("blank.img", None, 0, 10)
    assert (disk["size_sectors"], disk["size_bytes"], disk["logical_sector_bytes"]) == (65536, 32 * 2**20, 512)
    # the in-memory GPT's GUID, usable area and free space are gdisk's invention, not the disk's
    assert (disk["label_id"], disk["usable_sectors"], disk["free_sectors"], disk["state"]) == (None, None, None, None)
    assert parsed.warnings[0].startswith("line 9: gdisk found no partition table")


def test_parted_align_check_of_a_changed_table_is_not_carried():
    """H1's limit: the table changed (rm 1, mkpart 2048s) between the rounded listing the verdicts were given
    under and the exact one kept: p1 there started at 28.7kB, the kept p1 at 2048s, so its verdicts are not
    carried (a warning says so); p2, unmoved, keeps its 'aligned'."""
    parsed, _ = parse_bytes((TRIAL / "parted-session-rm-mkpart.txt").read_bytes(), "x")
    parts = {r["index"]: dict(r) for r in parsed.rows("partitions")}
    assert (parts[1]["start_sector"], parts[1].get("align_check")) == (2048, None)
    assert (parts[2]["start_sector"], parts[2]["align_check"]) == (8192, "optimal: aligned")
    assert parsed.warnings[-1] == (
        "line 12: parted's align-check of partition 1 is not kept: the listing at line 24 has no partition 1 that "
        "starts where that one did"
    )


def test_03_with_parted_verdicts_on_a_rounded_listing(labelled_db):
    """H3: a session in parted's default units (`print`, `align-check opt 1`, `align-check min 2`): its rows have
    no sector (rounded), and 03 multiplied that None by the sector size (TypeError: the notebook failed). parted's
    verdicts are now said as parted's alone, with no arithmetic beside them."""
    from conftest import analyse_study

    from storagelab.analysis import alignment

    res = analyse_study(labelled_db, alignment.analyse, "parted")
    said = [str(f) for f in res.findings if f.startswith("parted's own align-check")]
    assert said == [
        'parted\'s own align-check (optimal) of /dev/loop0 p1: "aligned" (aligned); its start was printed rounded '
        "(parted's default units), so the arithmetic here cannot check it.",
        'parted\'s own align-check (minimal) of /dev/loop0 p2: "aligned" (aligned); its start was printed rounded '
        "(parted's default units), so the arithmetic here cannot check it.",
    ]
