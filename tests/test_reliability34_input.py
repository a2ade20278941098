"""reliability-34 (input): a line whose words (not its numbers) are damaged is refused with its line, not passed
over with the rows it carries; and a newer gdisk's listing of a real disk is read, not refused.

Each case is a real fixture with the one change that docs/reliability-34-scripts/input-labelflip.py.txt (one letter
of a line's label changed, deleted or split) found passed over with exit 0 and no warning (rows lost), or a
public gdisk 1.0.5+ listing (a `Model:` line) that was refused as no known format.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import mutated as _mutated

from storagelab.errors import ParseError
from storagelab.parsers import parse_bytes

FIX = Path(__file__).parent / "fixtures"
SYSCTL = "arcstats/freebsd-14/sysctl-kstat.zfs.misc.arcstats.txt"


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        # fio: a job header, a run status line or a disk stats line with a damaged word lost its rows
        ("fio/3.33/normal_only.txt", "(groupid=0, jobs=1)", "(groZpid=0, jobs=1)", 6),
        ("fio/3.33/text-error-devfull.txt", "full: (groupid=0, jobs=1)", "full: (gro upid=0, jobs=1)", 7),
        ("fio/3.33/text-error-devfull.txt", "jobs=1): err=28", "jobs=1): er=28", 8),
        ("fio/2.2.10/rbd-write-cut-diskstats.txt", "  WRITE: io=1024.0MB", "  WRTE: io=1024.0MB", 29),
        ("fio/3.33/text-steadystate.txt", "   READ: bw=27.6GiB/s", "   REAd: bw=27.6GiB/s", 31),
        ("fio/3.33/clones_nogroup.txt", "  vda: ios=0/458,", "  vd a: ios=0/458, merge=0/0\n  vda: ios=0/458,", 573),
        (
            "fio/3.33/clones_nogroup.txt",
            "  vda: ios=0/458,",
            "  vda: iox=0/458, merge=0/0, ticks=0/1\n  vda: ios=0/458,",
            573,
        ),
        # partitions: a listing after its damaged command line was blanked as another command's output: 0 rows
        ("partitions/gpart-constructed-4kn.txt", "# gpart show da0", "# gpaRt show da0", 1),
        # zdb -C: a damaged `children[1]:` lost the vdevs under it
        ("zdb-config/2.3/C-ashift12.txt", "children[1]:", "chilren[1]:", 42),
        # zdb -b: lines of a known kind whose first words are damaged
        ("zdb/2.3/Pbb.txt", "leaked space: vdev 0, offset 0x25ef3400", "leaked spce: vdev 0, offset 0x25ef3400", 7),
        ("zfs-fuse/0.7.0/zdb-DD-dd.tank.txt", "DDT-sha256-zap-unique: 128", "DDt-sha256-zap-unique: 128", 2),
        ("zdb/2.1/b.txt", "additional, non-pointer bps", "additional, non-pointe bps", None),
        ("zdb/2.3/b.txt", "\tEmbedded log class ", "\tEmbeded log class ", 25),
        # ... and in a middle word (labelflip seed 3, after the first fix)
        ("zdb/2.3/b.txt", "leaked space: vdev 0, offset 0x29b4e800", "leaked space: vdEv 0, offset 0x29b4e800", 9),
        ("zdb/2.3/DD.txt", "DDT-skein-zap-unique: dspace=36864", "DDT-skein-zap-unique: dspaCe=36864", 10),
        ("zdb/2.3-special/DDD.txt", "DDT-skein: version=0", "DDT-skein: ersion=0", 30),
        # sysctl arcstats: a damaged prefix
        (SYSCTL, "kstat.zfs.misc.arcstats.iohits: 2530", "kstat.zfz.misc.arcstats.iohits: 2530", 147),
        (SYSCTL, "kstat.zfs.misc.arcstats.iohits: 2530", "Kstat.zfs.misc.arcstats.iohits: 2530", 147),
    ],
)
def test_a_line_with_a_damaged_label_is_refused_not_passed_over(rel, old, new, line):
    """Before: exit 0, no warning; the job (its results, percentiles, depths), the group, the disk, the vdevs, the
    event, DDT object, embedded-bp count, class or counter the line carried was missing."""
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(rel, old, new), rel)
    if line is not None:
        assert e.value.line == line


def test_another_sysctl_tree_beside_the_arcstats_is_still_ignored():
    text = (FIX / SYSCTL).read_text() + "kstat.zfs.misc.zfetchstats.hits: 5\nvfs.zfs.arc_max: 0\n"
    parsed, _ = parse_bytes(text.encode(), SYSCTL)
    assert len(parsed.rows("arc_stats")) == 148


GDISK_MODEL = """\
GPT fdisk (gdisk) version 1.0.5

Partition table scan:
  MBR: protective
  BSD: not present
  APM: not present
  GPT: present

Found valid GPT with protective MBR; using GPT.
Disk /dev/nvme1n1: 1953525168 sectors, 931.5 GiB
Model: WDC WDS100T2B0C-00PXH0<PAD>
Sector size (logical/physical): 512/512 bytes
Disk identifier (GUID): C414FC0B-2D9F-4461-8D68-212FE5A0EAEE
Partition table holds up to 128 entries
Main partition table begins at sector 2 and ends at sector 33
First usable sector is 34, last usable sector is 1953525134
Partitions will be aligned on 2048-sector boundaries
Total free space is 35653598 sectors (17.0 GiB)

Number  Start (sector)    End (sector)  Size       Code  Name
   1         2099200         4196351   1024.0 MiB  EF00  EFI system partition
   2        37750784        71305215   16.0 GiB    8200  Linux swap
   3        71305216      1953525134   897.5 GiB   8300  Linux filesystem
""".replace("<PAD>", " " * 18)  # gdisk pads the model to its field


def test_a_gdisk_listing_of_a_real_disk_with_its_model_line_is_read():
    """Before: gdisk 1.0.5+ prints `Model: ...` between the Disk and Sector size lines for a real disk, and the file
    was refused as no known tool output (a good file refused)."""
    parsed, mod = parse_bytes(GDISK_MODEL.encode(), "gdisk-l.txt")
    rows = parsed.rows("partitions")
    assert [(r["start_sector"], r["end_sector"]) for r in rows] == [
        (2099200, 4196351),
        (37750784, 71305215),
        (71305216, 1953525134),
    ]
    assert parsed.rows("disks")[0]["size_sectors"] == 1953525168


@pytest.mark.parametrize(
    ("rel", "old", "new", "line"),
    [
        # BusyBox fdisk's GPT listing: Start 27, End 263, Size '016' (the columns shifted), exit 0
        ("partitions/published/busybox-fdisk-gpt-petitboot.txt", "27263016", "27 263 016", 13),
        # old sfdisk -l -uB: Start 1 (2 sectors), End 24, the End taken for a #cyls column, exit 0
        ("partitions/util-linux-2.23.2/sfdisk-luB.txt", "*     1024", "*     1 024", 6),
        # old sfdisk -l -uM: '#blocks 1 048 576' read as the MiB value (1024 blocks), Id '1', exit 0 (numforms 16)
        ("partitions/util-linux-2.23.2/sfdisk-luM.txt", "1024    1048576", "1024    1 048 576", 6),
        # a row number with a mark (`2%`) was a shell prompt: the rows from it on blanked, 3 -> 1, exit 0
        ("partitions/linux-tools/sgdisk-p-gpt.txt", "   2            2048", "   2%            2048", 12),
        ("partitions/parted-gpt.txt", " 3      18432s", " 3%      18432s", 10),
    ],
)
def test_a_partition_row_with_a_thousands_separator_is_refused_in_busybox_and_old_sfdisk(rel, old, new, line):
    with pytest.raises(ParseError) as e:
        parse_bytes(_mutated(rel, old, new), rel)
    assert e.value.line == line


def test_lines_after_the_arcstat_rows_that_are_not_read_are_named():
    """Before: a damaged prompt (`ro ot@srv2:~# zpool iostat -vl 1`) made the zpool output after the arcstat rows
    other text: its 4 + 44 rows lost with exit 0 and no word (a prompt that is read hands over, or warns)."""
    rel = "arcstats/linux-2.2-arcstat/arcstat-then-zpool-iostat-vl.log"
    parsed, _ = parse_bytes(_mutated(rel, "root@srv2:~# zpool", "ro ot@srv2:~# zpool"), rel)
    assert any(w.startswith("line 9: lines after the arcstat rows are not read") for w in parsed.warnings)


def test_a_label_dressed_as_a_cited_number_is_text_and_the_finding_s_own_numbers_stay_links(tmp_path, monkeypatch):
    """reliability-34 input, Low 1: a label could still link to the report's own excerpt pages ('[99.9 MB/s](raw/
    NAME.html)'), the one kind of link a61fcb42 kept: label text dressed as a cited number (330 such links and
    images in the hostile project's pages). A finding is escaped before its numbers are linked, so its only links
    are those present.findings makes."""
    import re

    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    from storagelab import paths, present
    from storagelab.analysis.result import Cite, Finding, Result
    from storagelab.analysis.selection import Selection

    log = tmp_path / "a&b <x>.txt"
    log.write_text("first\n  read: IOPS=1234, BW=5.0MiB/s\n")
    folder = tmp_path / "report"
    folder.mkdir()
    monkeypatch.setenv(paths.REPORT_DIR_ENV, str(folder))
    label = "[99.9 MB/s](raw/x.html#L2) ![i](raw/x.html) <b>[y](raw/x.html)</b>"
    res = Result(Selection(study="x"))
    res.findings.append(
        Finding(
            f"run {label} read 5.0 MiB/s & more",
            [Cite("5.0 MiB/s", ({"path": str(log), "line_start": 2, "line_end": 2},))],
        )
    )
    res.missing.append(f"the pool {label} has no ashift")
    page = markdown2html_mistune(present.findings(res).data)
    hrefs = re.findall(r'<a href="([^"]*)"[^>]*>([^<]*)</a>', page)
    assert [text for _, text in hrefs] == ["5.0 MiB/s"] and hrefs[0][0].startswith("raw/a_b_x_.txt-")
    assert "<img" not in page and "<b>" not in page and "& more" not in page and "&amp; more" in page
    (page_file,) = (folder / "raw").iterdir()
    assert "BW=5.0MiB/s" in page_file.read_text()


def test_a_latency_target_line_with_an_unreadable_depth_is_named_on_both_paths():
    """reliability-34 input, Medium 3: a fio text output whose jobs' iodepth only its latency target line prints
    (no preamble line with iodepth=), that line damaged (`depth=2x`): iodepth was left NULL with no word. Now a
    warning names the line, on the fast path and the plain one alike."""
    from storagelab.parsers.fio.text import parse_text

    rel = "tests/fixtures/fio/newuser-h5/b/rawstor-perftest-4k-2-1.txt"
    text = (Path(__file__).resolve().parent.parent / rel).read_text()
    lines = text.split("\n")
    at = [i for i, s in enumerate(lines) if s.strip().startswith("latency") and "target=0" in s]
    assert at and all(lines[i].endswith("depth=2") for i in at)
    damaged = "\n".join(s + "x" if i == at[0] else s for i, s in enumerate(lines))
    fast, plain = parse_text(damaged), parse_text(damaged, fast=False)
    assert fast.tables == plain.tables and fast.warnings == plain.warnings
    said = [w for w in fast.warnings if "latency target" in w]
    assert said == [
        f"line {at[0] + 1}: fio's latency target line has no readable depth, so the job's iodepth is not known: "
        f"{lines[at[0]].strip() + 'x'!r}"
    ]
    assert [j["iodepth"] for j in fast.tables["fio_jobs"]].count(None) == 1
    assert [w for w in parse_text(text).warnings if "latency target" in w] == []
