"""The classic disk test: `lab fio --preset standard` (CrystalDiskMark/KDiskMark's SEQ1M Q8T1, SEQ1M Q1T1,
RND4K Q32T1, RND4K Q1T1, read and write), `--repeat auto`, device-class flags, and notebook 10's disk card.

Real outputs: tests/fixtures/fio/3.33/lab-standard (the preset run for real on this project's VM: ext4 on a
virtio disk), and the lab run for real here when fio is installed.
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from storagelab import lab
from storagelab.analysis import Selection, disk_card, open_db
from storagelab.devices import beyond_class, classify
from storagelab.lab.manifest import single_device_layout
from storagelab.repeat_auto import key_figure, repeat_until_settled
from storagelab.store import ingest

ROOT = Path(__file__).resolve().parents[1]
STANDARD = ROOT / "tests" / "fixtures" / "fio" / "3.33" / "lab-standard"
FIO = shutil.which("fio")
VIRTIO = {"device": "/dev/vda", "name": "vda", "rota": "1", "tran": None, "driver": "virtio_blk", "model": None}


# ----------------------------------------------------------------------------- the preset


def test_the_standard_preset_is_the_eight_classic_tests(tmp_path):
    runs = lab.build_runs(lab.PRESETS["standard"], target=tmp_path / "t", out=tmp_path / "o")
    assert [r.run_id for r in runs] == [
        "read-1m-qd8-nj1",
        "write-1m-qd8-nj1",
        "read-1m-qd1-nj1",
        "write-1m-qd1-nj1",
        "randread-4k-qd32-nj1",
        "randwrite-4k-qd32-nj1",
        "randread-4k-qd1-nj1",
        "randwrite-4k-qd1-nj1",
    ]
    r = runs[4]
    assert (r.rw, r.bs, r.iodepth, r.numjobs, r.size, r.runtime_s, r.direct) == ("randread", "4k", 32, 1, "1G", 5, 1)
    assert "--time_based" in r.argv and "--output-format=normal,json+" in r.argv
    # --size / --runtime change every test; --rw / --depth-jobs choose among them
    small = lab.build_runs(lab.PRESETS["standard"], target=tmp_path, out=tmp_path, size="8M", runtime_s=2)
    assert {(x.size, x.runtime_s) for x in small} == {("8M", 2)}
    picked = lab.build_runs(
        lab.PRESETS["standard"], target=tmp_path, out=tmp_path, rw=["randread"], depth_jobs=[(1, 1)]
    )
    assert [x.run_id for x in picked] == ["randread-4k-qd1-nj1"]


def _cli(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "storagelab", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT / "lib"), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
        timeout=300,
    )


def fio_standard(root: Path):
    """The standard preset run for real under ``root`` (8 MiB, 1 s each), then notebook 10 on it: root and both
    finished commands (None without fio). Self-contained: started beside the suite (BACKGROUND, tests/conftest.py)."""
    if FIO is None:
        return root, None, None
    out, db = root / "out", root / "lab.duckdb"
    p = _cli(
        "lab", "fio", "--preset", "standard", "--target", str(root / "t"), "--out", str(out), "--db", str(db),
        "--size", "8M", "--runtime", "1",
    )  # fmt: skip
    rendered = _cli("run", "10_disk_card", "-p", "db_path", str(db), "-p", "study", "lab", "--output", str(root / "r"))
    return root, p, rendered


BACKGROUND = [fio_standard]


def test_standard_preset_refuses_a_choice_matching_none_of_its_tests(tmp_path):
    p = _cli("lab", "fio", "--preset", "standard", "--target", str(tmp_path), "--depth-jobs", "4x1", "--dry-run")
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "storagelab lab fio: no test of the standard preset matches --rw/--bs/--depth-jobs (its tests: read 1M 8x1, "
        "write 1M 8x1, read 1M 1x1, write 1M 1x1, randread 4k 32x1, randwrite 4k 32x1, randread 4k 1x1, "
        "randwrite 4k 1x1)"
    )
    auto = _cli("lab", "fio", "--preset", "standard", "--target", str(tmp_path), "--repeat", "auto", "--dry-run")
    assert auto.returncode == 0 and len(auto.stdout.splitlines()) == 8
    assert "# each 3 to 10 times, until its spread is at most 5 % (RUNID, RUNID-2, ...)" in auto.stderr
    bad = _cli("lab", "fio", "--target", str(tmp_path), "--repeat", "often", "--dry-run")
    assert bad.returncode == 2 and "argument --repeat: 'often' is neither a count nor 'auto'" in bad.stderr


# ----------------------------------------------------------------------------- device classes


def test_device_classes_from_the_lab_facts():
    assert classify(VIRTIO).name == "virtual"  # a virtio disk says rotational=1: the driver decides first
    assert classify({"name": "sda", "model": "QEMU HARDDISK", "rota": "1", "tran": "ata"}).name == "virtual"
    assert classify({"name": "nvme0n1", "rota": "0", "tran": "nvme"}).name == "nvme"
    assert classify({"name": "sdb", "rota": "1", "tran": "sata", "model": "ST18000NM000J"}).name == "hdd"
    assert classify({"name": "sdc", "rota": "0", "tran": "sata", "model": "Samsung SSD 870"}).name == "sata-ssd"
    assert classify({"name": "sdd", "rota": "0", "tran": "usb"}).name == "usb"
    assert classify({"name": "sde"}).name == "unknown"


def test_results_beyond_the_class_are_flagged_without_typing_a_limit():
    hdd = {"name": "sdb", "rota": "1", "tran": "sata"}
    # homelab's 18 TB HDD at 194 MB/s is within an HDD's range; 2.7 GB/s is not
    assert beyond_class([hdd], rw="write", bs_bytes=2**20, bw_bytes_per_s=194e6, iops=185) == []
    assert beyond_class([hdd], rw="write", bs_bytes=2**20, bw_bytes_per_s=2.7e9, iops=2575) == [
        "write at 2,700 MB/s is beyond what 1 hdd device(s) can transfer (300 MB/s; class read from rotational=1): "
        "likely served by a cache, or the device is not of that class"
    ]
    assert beyond_class([hdd, hdd], rw="randread", bs_bytes=4096, bw_bytes_per_s=8e6, iops=1953) == [
        "randread at 1,953 IOPS is beyond what 2 hdd device(s) can do (1,200 IOPS; class read from rotational=1): "
        "likely served by a cache, or the device is not of that class"
    ]
    # the review's case: direct writes at 2.7 GB/s on a virtio disk passed unflagged
    assert beyond_class([VIRTIO], rw="write", bs_bytes=2**20, bw_bytes_per_s=2.7e9, iops=2575) == [
        "virtual disk (driver virtio_blk (vda)): the host's cache and storage may serve these figures, which "
        "measure the VM's I/O path, not a device (give --device-limit with the real device's figure)"
    ]
    assert beyond_class([], rw="write", bs_bytes=2**20, bw_bytes_per_s=9e9, iops=1) == []


def test_lab_cache_flags_use_the_device_class_on_a_real_output():
    out = STANDARD / "write-1m-qd1-nj1.txt"  # 3,096 MB/s
    sata = [{"name": "sda", "rota": "0", "tran": "sata"}]
    assert lab.cache_flags(out, None, sata, 2**20) == [
        "write at 3,096 MB/s is beyond what 1 sata-ssd device(s) can transfer (600 MB/s; class read from SATA, "
        "rotational=0): likely served by a cache, or the device is not of that class"
    ]
    # a typed limit is the exact figure: it alone decides
    assert lab.cache_flags(out, 4e9, sata, 2**20) == []
    assert lab.cache_flags(out, None, [{"name": "nvme0n1", "tran": "nvme"}], 2**20) == []


# ----------------------------------------------------------------------------- --repeat auto


def test_key_figure_is_the_group_bandwidth():
    assert key_figure(STANDARD / "randread-4k-qd1-nj1.txt") == 46561822.0  # READ: bw=44.4MiB/s (46.6MB/s)
    assert key_figure(STANDARD / "COMMANDS.md") is None


def test_repeat_until_settled_stops_each_point_on_its_own():
    same = STANDARD / "randread-4k-qd1-nj1.txt"
    apart = [STANDARD / "read-1m-qd1-nj1.txt", STANDARD / "read-1m-qd8-nj1.txt", STANDARD / "randread-4k-qd32-nj1.txt"]
    rounds = []

    def run_round(ids, k):
        rounds.append((tuple(ids), k))
        return 0

    def outputs_of(rid, k):
        return [same] * k if rid == "steady" else (apart * 4)[:k]

    log = []
    rc, states = repeat_until_settled(
        ["steady", "jumpy"], run_round=run_round, outputs_of=outputs_of, min_runs=2, max_runs=4, log=log.append
    )
    assert rc == 0
    assert rounds == [(("steady", "jumpy"), 2), (("jumpy",), 3), (("jumpy",), 4)]
    steady, jumpy = states
    assert (steady.n, steady.spread_pct, steady.settled) == (2, 0.0, True)
    assert (jumpy.n, jumpy.settled) == (4, False) and round(jumpy.spread_pct, 1) == 46.2
    assert log[-2:] == [
        "  steady: 2 runs, mean 44.4 MiB/s, spread 0.0 %: settled (<= 5 %)",
        "  jumpy: 4 runs, mean 842.6 MiB/s, spread 46.2 %: NOT settled at the maximum of 4 runs (tolerance 5 %)",
    ]
    with pytest.raises(ValueError):
        repeat_until_settled(["x"], run_round=run_round, outputs_of=outputs_of, min_runs=3, max_runs=2)
    # a failed or interrupted round stops there with its code
    rc, _ = repeat_until_settled(["x"], run_round=lambda ids, k: 130, outputs_of=outputs_of)
    assert rc == 130


# ----------------------------------------------------------------------------- the card


def _ingest_standard(tmp_path) -> Path:
    raw = tmp_path / "raw"
    raw.mkdir()
    names = sorted(p.name for p in STANDARD.glob("*.txt"))
    for n in names:
        shutil.copy(STANDARD / n, raw / n)
    notes = (
        "kernel=6.18.44-fc-v657; cpu=AMD EPYC x 2; fio_version=3.33; fstype=ext4; /dev/vda: rotational=1 "
        "driver=virtio_blk firmware=None device_class=virtual; sanity: virtual disk (driver virtio_blk (vda)): "
        "the host's cache and storage may serve these figures"
    )
    with open(raw / "manifest.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["path", "study", "host", "stack", "devices", "os", "ram_bytes", "notes"])
        for n in names:
            w.writerow(
                [n, "lab", "vm", "ext4", "/dev/vda (unknown model)", "Debian GNU/Linux 12", 25_000_000_000, notes]
            )
    db = tmp_path / "x.duckdb"
    s = ingest([raw], db_path=db, parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (8, 0), s.errors
    return db


def test_the_disk_card_of_the_real_standard_run(tmp_path):
    with open_db(_ingest_standard(tmp_path)) as con:
        res, cards = disk_card.analyse(con, Selection(study="lab"))
    assert len(cards) == 1
    assert disk_card.card_lines(cards) == [
        "vm | /dev/vda (unknown model) | ext4",
        "  SEQ1M Q8T1 read: 1,147 MB/s, p99 13 ms, n=1, FLAGGED",
        "  SEQ1M Q8T1 write: 2,513 MB/s, p99 9.76 ms, n=1, FLAGGED",
        "  SEQ1M Q1T1 read: 1,056 MB/s, p99 3.92 ms, n=1, FLAGGED",
        "  SEQ1M Q1T1 write: 3,096 MB/s, p99 3.33 ms, n=1, FLAGGED",
        "  RND4K Q32T1 read: 275 MB/s, 67,054 IOPS, p99 4.01 ms, n=1, FLAGGED",
        "  RND4K Q32T1 write: 200 MB/s, 48,780 IOPS, p99 4.42 ms, n=1, FLAGGED",
        "  RND4K Q1T1 read: 46.6 MB/s, 11,368 IOPS, p99 0.905 ms, n=1, FLAGGED",
        "  RND4K Q1T1 write: 37.9 MB/s, 9,242 IOPS, p99 1.91 ms, n=1, FLAGGED",
    ]
    # the lab's flag, then the design checks every analysis shares: a 1 s run is too short
    assert cards[0].results[("SEQ1M Q8T1", "read")].flags == (
        "virtual disk (driver virtio_blk (vda)): the host's cache and storage may serve these figures",
        "it ran 1.01 s, under 5 s: too short to measure a sustained rate",
    )
    r = cards[0].results[("RND4K Q1T1", "read")]
    assert (r.bw_bytes_per_s, r.p99_ns) == (46561822.0, 905216.0)  # bytes/s and ns in the numbers, MB/s shown
    assert cards[0].system == {
        "cpu": "AMD EPYC x 2",
        "kernel": "6.18.44-fc-v657",
        "os": "Debian GNU/Linux 12",
        "filesystem": "ext4",
        "device": "/dev/vda",
        "model": None,
        "firmware": None,
        "class": "virtual",
        "ram": "23.3 GiB",
    }
    assert res.findings == [
        "**vm, /dev/vda (unknown model) | ext4:** 8 of 8 results; the highest is SEQ1M Q1T1 write at 3,096 MB/s "
        "(flagged: below); one run per test: no run-to-run estimate (--repeat auto repeats until the spread settles). 8 flagged, e.g. "
        "RND4K Q1T1 read: virtual disk (driver virtio_blk (vda)): the host's cache and storage may serve these "
        "figures."
    ]
    assert res.missing == [
        "vm, /dev/vda (unknown model) | ext4: the system table lacks model, firmware (the lab records them; for "
        "other logs add host/devices/os/notes columns to the manifest)"
    ]
    page = disk_card.cards_html(cards)
    assert page.count('class="flagged"') == 8 and "<b>3,096</b>" in page and "<script" not in page


def test_no_classic_run_says_what_to_run(tmp_path):
    with open_db(_ingest_standard(tmp_path)) as con:
        res, cards = disk_card.analyse(con, Selection(host="nas2"))
    assert cards == [] and res.findings == []
    assert res.missing == [
        "no file is labelled host nas2 (host values in the database: vm): check the spelling, or ingest and label "
        "the logs (manifest.csv)",
        "no run of the classic tests (SEQ1M Q8T1/Q1T1, RND4K Q32T1/Q1T1) in host nas2: "
        "storagelab lab fio --preset standard --target DIR (a folder on the device)",
    ]


# ----------------------------------------------------------------------------- for real


@pytest.mark.e2e
@pytest.mark.skipif(FIO is None, reason="fio is not installed (apt-get install fio)")
def test_lab_fio_standard_for_real_renders_a_disk_card(background):
    root, p, rendered = background(fio_standard)
    out, db = root / "out", root / "lab.duckdb"
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in out.glob("*.txt")) == sorted(
        f"{r}.txt"
        for r in (
            "read-1m-qd8-nj1", "write-1m-qd8-nj1", "read-1m-qd1-nj1", "write-1m-qd1-nj1",
            "randread-4k-qd32-nj1", "randwrite-4k-qd32-nj1", "randread-4k-qd1-nj1", "randwrite-4k-qd1-nj1",
        )
    )  # fmt: skip
    with open_db(db) as con:
        res, cards = disk_card.analyse(con, Selection(study="lab"))
    assert len(cards) == 1 and len(cards[0].results) == 8 and cards[0].missing == []
    assert cards[0].system["cpu"] and cards[0].system["kernel"] and cards[0].system["class"]
    assert rendered.returncode == 0, rendered.stderr
    page = (root / "r" / "10_disk_card.html").read_text()
    for name in ("SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"):
        assert f"<th>{name}</th>" in page
    assert page.count('class="disk-card"') == 1
    # the chart beside the card: eight bars, each naming its run's output file and linking to its lines
    spec = json.loads((root / "r" / "figures" / "10-disk-card" / "disk-card.vl.json").read_text())
    rows = next(iter(spec["datasets"].values()))
    assert sorted(Path(r["raw_file"]).name for r in rows) == sorted(x.name for x in out.glob("*.txt"))
    assert all(r["raw_href"].startswith("raw/") for r in rows) and 'data-figure="10-disk-card/disk-card"' in page


@pytest.mark.e2e
@pytest.mark.skipif(FIO is None, reason="fio is not installed (apt-get install fio)")
def test_lab_fio_repeat_auto_for_real(tmp_path):
    out = tmp_path / "out"
    common = ["lab", "fio", "--preset", "standard", "--rw", "randread", "--depth-jobs", "1x1", "--target",
              str(tmp_path / "t"), "--out", str(out), "--size", "8M", "--runtime", "1", "--no-ingest",
              "--repeat", "auto", "--repeat-min", "2", "--repeat-max", "3"]  # fmt: skip
    loose = _cli(*common, "--repeat-tolerance", "1000")
    assert loose.returncode == 0, loose.stderr
    assert "randread-4k-qd1-nj1: 2 runs, mean " in loose.stdout and "settled (<= 1000 %)" in loose.stdout
    assert sorted(x.name for x in out.glob("*.txt")) == ["randread-4k-qd1-nj1-2.txt", "randread-4k-qd1-nj1.txt"]
    strict = _cli(*common, "--repeat-tolerance", "0.0001")  # resumes: two saved, one more, then the maximum
    assert strict.returncode == 0, strict.stderr
    assert "lab fio: 2 of 3 runs already saved" in strict.stdout
    assert "randread-4k-qd1-nj1: 3 runs, mean " in strict.stdout
    assert "NOT settled at the maximum of 3 runs (tolerance 0.0001 %)" in strict.stdout
    labels = {r["path"]: r["label"] for r in csv.DictReader(open(out / "manifest.csv"))}
    assert labels["randread-4k-qd1-nj1-3.txt"] == "randread-4k-qd1-nj1 (run 3)"  # repeats of one configuration


def test_lab_help_lists_its_subcommands_one_line_each():
    p = _cli("lab", "--help")
    assert p.returncode == 0
    lines = p.stdout.splitlines()
    start = lines.index("measure your own disks (each has --help):")
    assert [ln.split()[0] for ln in lines[start + 1 : start + 4]] == ["fio", "bonnie", "zfs-sweep"]
    assert "standard = CrystalDiskMark's four tests" in lines[start + 1]


def test_a_single_device_target_is_labelled_a_single_layout():
    """new-user-2: a single-device ext4 target had no layout label, so comparisons showed 'ext4 | ? ? ?'."""
    one = {"fstype": "ext4", "devices": [VIRTIO]}
    assert single_device_layout(one) == {"vdev_type": "single", "vdev_count": 1, "vdev_width": 1}
    assert single_device_layout({"fstype": "ext4", "devices": [{"name": "md0"}]}) == {}  # an md array is not one disk
    assert single_device_layout({"fstype": "zfs", "pool": "tank", "devices": [VIRTIO]}) == {}  # a pool says its own
    assert single_device_layout({"fstype": "tmpfs", "devices": []}) == {}


def test_the_disk_card_chart_of_the_real_standard_run(tmp_path):
    """Issue 29: 10's chart draws the eight results of the real preset run in MB/s on a log axis (38 to 3,096 MB/s
    span two decades), each bar flagged (a virtual disk, 1 s runs) and naming its fio output and the lines of its
    result (its JSON "read" or "write" object: finding 21 of the new-user trial); the saved figure's link opens those
    lines, highlighted."""
    from storagelab import charts

    with open_db(_ingest_standard(tmp_path)) as con:
        _, cards = disk_card.analyse(con, Selection(study="lab"))
    f = disk_card.chart_frame(cards)
    got = [
        (r["test"], r["direction"], round(r["mb_s"], 1), r["flagged"], Path(r["path"]).name, r["line_start"])
        for r in f.iter_rows(named=True)
    ]
    assert got == [
        ("SEQ1M Q8T1", "read", 1147.5, True, "read-1m-qd8-nj1.txt", 36),
        ("SEQ1M Q8T1", "write", 2512.6, True, "write-1m-qd8-nj1.txt", 79),
        ("SEQ1M Q1T1", "read", 1055.9, True, "read-1m-qd1-nj1.txt", 36),
        ("SEQ1M Q1T1", "write", 3096.5, True, "write-1m-qd1-nj1.txt", 79),
        ("RND4K Q32T1", "read", 274.7, True, "randread-4k-qd32-nj1.txt", 36),
        ("RND4K Q32T1", "write", 199.8, True, "randwrite-4k-qd32-nj1.txt", 79),
        ("RND4K Q1T1", "read", 46.6, True, "randread-4k-qd1-nj1.txt", 36),
        ("RND4K Q1T1", "write", 37.9, True, "randwrite-4k-qd1-nj1.txt", 79),
    ]
    assert f["line_end"].to_list() == [251, 420, 192, 370, 363, 479, 332, 481]
    assert f["card"].unique().to_list() == ["vm | /dev/vda (unknown model) | ext4"]
    charts.setup()
    out = charts.save(
        charts.disk_card(f, Selection(study="lab")), "disk-card", "10_disk_card", tmp_path / "r" / "figures"
    )
    spec = json.loads(out["vl.json"].read_text())
    assert spec["spec"]["layer"][0]["encoding"]["x"]["scale"] == {"type": "log", "domain": [10, 3096.494161 * 1.5]}
    rows = next(iter(spec["datasets"].values()))
    one = rows[-1]
    assert (Path(one["raw_file"]).name, one["raw_lines"], one["mark"]) == ("randwrite-4k-qd1-nj1.txt", "79-481", "⚑")
    page = (tmp_path / "r" / one["raw_href"].split("#")[0]).read_text(encoding="utf-8")
    text = Path(one["raw_file"]).read_text(encoding="utf-8").split("\n")
    assert text[78] == '      "write" : {' and text[81] == '        "bw_bytes" : 37853253,'  # the bar's value
    assert f'<span id="L79" class="hl"><b>    79</b>  {html.escape(text[78])}' in page
    assert f'<span id="L82" class="hl"><b>    82</b>  {html.escape(text[81])}' in page
    marked = [int(n) for n in re.findall(r'<span id="L(\d+)" class="hl">', page)]
    # a JSON+ direction holds its latency bins: 403 lines, of which the page shows 400 (the value is on the 4th)
    assert marked == list(range(79, 479)) and "Lines 479-481 of the range are not shown (at most 400)." in page
    assert one["flags"].startswith("virtual disk (driver virtio_blk (vda))")


def test_disk_cards_side_by_side_and_a_mean_names_every_run():
    """Two machines' cards in one chart, one panel each; a result measured twice is the mean of the two runs, named
    with both runs' lines and its arithmetic; results within a decade keep a linear axis."""
    from storagelab import charts, excerpts

    def card(machine, results):
        c = disk_card.DiskCard(machine, "/dev/sda", {})
        for test, d, bws, lines, flags in results:
            c.results[(test, d)] = disk_card.CardResult(
                test, d, len(bws), sum(bws) / len(bws), min(bws), max(bws), None, None, None, flags, (), lines
            )
        return c

    a = card("a", [("SEQ1M Q8T1", "read", [200e6, 300e6], (("a1.txt", 3, 9, None), ("a2.txt", 4, 10, None)), ())])
    b = card("b", [("RND4K Q1T1", "write", [100e6], (("b.txt", 7, 7, None),), ("cache",))])
    f = disk_card.chart_frame([a, b])
    assert f.select("card", "test", "mb_s", "runs", "flagged", "flags", "path", "derivation").rows() == [
        ("a | /dev/sda", "SEQ1M Q8T1", 250.0, 2, False, "none", None, "mean of 2 runs' group bandwidths"),
        ("b | /dev/sda", "RND4K Q1T1", 100.0, 1, True, "cache", "b.txt", None),
    ]
    spec = excerpts.enrich(charts.disk_card(f, Selection()).to_dict(), None)
    rows = next(iter(spec["datasets"].values()))
    assert [(r["raw_file"], r["raw_lines"]) for r in rows] == [
        ("from: a1.txt:3-9; a2.txt:4-10", "2 inputs"),
        ("b.txt", "7"),
    ]
    assert spec["facet"]["column"]["field"] == "card"
    assert spec["spec"]["layer"][0]["encoding"]["x"]["scale"] == {"zero": True}


def test_runs_of_two_setups_are_two_cards_never_one_mean(tmp_path):
    """h7 finding 11: RND4K Q1T1 read averaged the lab-standard run (label 'cdm randread-4k-qd1-nj1', runtime=1s)
    with three lab-repeats runs ('randread-4k-qd1-nj1 repeat (run N)', runtime=2s) as one result, n=4 ±9.6 sd,
    where notebook 08 sees two workloads; h7 had the card keep the mean and say it pooled two setups (59.0 MB/s, n=4),
    and the h6n trial read such a cell as a disk's figure (F2: '1,644 MB/s' of a 3,106 and a 182 MB/s run). One
    card per setup now (``disk_card.variant_of``: runtime 1 s and 2 s), each result of one setup's runs."""
    raw = tmp_path / "raw"
    raw.mkdir()
    rows = [["path", "study", "label", "host", "stack", "devices"]]
    for n in ("randread-4k-qd1-nj1.txt", "randread-4k-qd32-nj1.txt"):
        shutil.copy(STANDARD / n, raw / n)
        rows.append([n, "cold", f"cdm {n[:-4]}", "boreas", "ext4", "vda (virtio disk)"])
    for k in (2, 3, 4):
        n = f"randread-4k-qd1-nj1-{k}.txt"
        shutil.copy(STANDARD.parent / "lab-repeats" / n, raw / f"rep-{n}")
        rows.append(
            [f"rep-{n}", "cold", f"randread-4k-qd1-nj1 repeat (run {k})", "boreas", "ext4", "vda (virtio disk)"]
        )
    with open(raw / "manifest.csv", "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 0, s.errors
    with open_db(tmp_path / "x.duckdb") as con:
        res, cards = disk_card.analyse(con, Selection(study="cold"))
    assert [(c.device, sorted(c.results)) for c in cards] == [
        (
            "vda (virtio disk) | ext4 | libaio direct=1 size=16MiB runtime=1s",
            [("RND4K Q1T1", "read"), ("RND4K Q32T1", "read")],
        ),
        ("vda (virtio disk) | ext4 | libaio direct=1 size=16MiB runtime=2s", [("RND4K Q1T1", "read")]),
    ]
    assert [c.results[("RND4K Q1T1", "read")].setups for c in cards] == [
        (("cdm randread-4k-qd1-nj1", "randread bs=4KiB iodepth=1 numjobs=1 libaio direct=1 size=16MiB runtime=1s", 1),),
        (
            (
                "randread-4k-qd1-nj1 repeat",
                "randread bs=4KiB iodepth=1 numjobs=1 libaio direct=1 size=16MiB runtime=2s",
                3,
            ),
        ),
    ]
    lines = disk_card.card_lines(cards)
    assert "  RND4K Q1T1 read: 46.6 MB/s, 11,368 IOPS, p99 0.905 ms, n=1, FLAGGED" in lines
    assert "  RND4K Q1T1 read: 63.2 MB/s, 15,424 IOPS, p99 0.0773 ms, n=3, FLAGGED" in lines
    assert "  RND4K Q32T1 read: 275 MB/s, 67,054 IOPS, p99 4.01 ms, n=1, FLAGGED" in lines
    assert not [f for f in res.findings if "pooled" in str(f)]
    assert "setups pooled" not in disk_card.cards_html(cards)
    chart = disk_card.chart_frame(cards).filter(test="RND4K Q1T1", direction="read")
    assert chart["derivation"].to_list() == [None, "mean of 3 runs' group bandwidths"]


def test_each_bar_of_a_multi_job_json_opens_its_own_jobs_lines(tmp_path):
    """Finding 21 of the new-user trial: a bar opened the whole JSON document. In one real fio JSON document of four
    jobs (one group each: fixtures/fio/3.33/card-four-groups), each bar of the card opens the lines of its own job's
    "read" or "write" object, where its value is, highlighted; so does the run's row every fio notebook charts."""
    from storagelab import charts
    from storagelab.analysis import fio_runs

    fixture = ROOT / "tests" / "fixtures" / "fio" / "3.33" / "card-four-groups" / "card.json"
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(fixture, raw / "card.json")
    (raw / "manifest.csv").write_text("path,study,host,devices\ncard.json,card,vm,/dev/vda\n", encoding="utf-8")
    db = tmp_path / "x.duckdb"
    s = ingest([raw], db_path=db, parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (1, 0), s.errors
    with open_db(db) as con:
        runs = fio_runs.runs(con, Selection(study="card"))
        _, cards = disk_card.analyse(con, Selection(study="card"))
    expected = [  # (test, direction, MB/s, the lines of its job's direction object)
        ("SEQ1M Q8T1", "read", 975.7, 28, 89),
        ("SEQ1M Q8T1", "write", 1900.4, 316, 377),
        ("RND4K Q32T1", "read", 146.9, 518, 579),
        ("RND4K Q1T1", "write", 10.1, 806, 867),
    ]
    assert runs.select("groupid", "direction", "line_start", "line_end").rows() == [
        (0, "read", 28, 89),
        (1, "write", 316, 377),
        (2, "read", 518, 579),
        (3, "write", 806, 867),
    ]
    f = disk_card.chart_frame(cards)
    assert [
        (r["test"], r["direction"], round(r["mb_s"], 1), r["line_start"], r["line_end"])
        for r in f.iter_rows(named=True)
    ] == expected
    charts.setup()
    out = charts.save(
        charts.disk_card(f, Selection(study="card")), "disk-card", "10_disk_card", tmp_path / "r" / "figures"
    )
    rows = next(iter(json.loads(out["vl.json"].read_text())["datasets"].values()))
    text = fixture.read_text(encoding="utf-8").split("\n")
    for row, (_, direction, mb_s, lo, hi) in zip(rows, expected, strict=True):
        assert (Path(row["raw_file"]).name, row["raw_lines"]) == ("card.json", f"{lo}-{hi}")
        page = (tmp_path / "r" / row["raw_href"].split("#")[0]).read_text(encoding="utf-8")
        marked = [int(n) for n in re.findall(r'<span id="L(\d+)" class="hl">', page)]
        assert marked == list(range(lo, hi + 1))
        assert text[lo - 1] == f'      "{direction}" : {{' and text[hi - 1] == "      },"
        bw = text[lo + 2]  # the bar's value, 3 lines into its object
        assert bw.strip().startswith('"bw_bytes" : ') and round(int(bw.split(":")[1].strip(" ,")) / 1e6, 1) == mb_s
        assert f'<span id="L{lo + 3}" class="hl"><b>{lo + 3:>6}</b>  {html.escape(bw)}' in page
