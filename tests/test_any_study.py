"""The notebooks on someone else's logs: a second study made only of real tool outputs (tests/second_study.py),
added to a copy of data/raw/, then `storagelab build --study` of it, runs with non-default parameters, and an empty
study.

Each run completes, shows that study's numbers and figures, and none of the source studies' numbers, prose or
claims; the reports the build made are not touched by the other runs, and no run writes a source study's folder.
The build runs the second study's notebooks and those over every study, not the source studies' 13 (issue 28: 44 s
of CPU): they would run on the same logs as the build `./run test` runs beside the tests, which runs them.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import nbformat
import pytest
from second_study import STUDY, make_project, storagelab

pytestmark = pytest.mark.e2e
ANALYSES = [
    "01_vdev_scaling",
    "02_recordsize",
    "03_sector63",
    "04_dedup_ddt",
    "05_stacks",
    "06_zfs_send_transports",
    "08_fio",
    "09_bonnie",
]
SOURCE_STUDIES = ("homelab-mergerfs", "freebsd-bonnie-dedup", "thumper-x4500", "ars-zfs-vs-raid")
# the report folders `build --study` makes: the second study's (default parameters) and every study's (07, 10); the
# runs with non-default parameters of the same study, and of an empty one, must leave them as they are
BUILT = (STUDY, "all")
# words and numbers that belong to the source studies only: none may appear in another study's results
SEED_MARKS = [
    *SOURCE_STUDIES,
    "homelab",
    "FreeBSD",
    "freebsd",
    "Thumper",
    "thumper",
    "Ars ",
    "alpinaR1",
    "archiv",
    "raid1",
    "ZFS mirror (0.8.4)",
    "mergerfs over",
    "/dev/zero",
    "1240",
    "10.56",
    "33.23",
    "7.59x",
    "583.0",
    "sector 63 Problem",
    "ST4000DM004",
    "nvd0p",
    "WD14TB",
    "seed 00",
]
NON_DEFAULT = {
    "01_vdev_scaling": ["-p", "baseline_vdev_count", "2", "-p", "tests", "['dd_write']"],
    "02_recordsize": ["-p", "raidz_width", "6", "-p", "raidz_parity", "1", "-p", "ashift", "9"],
    "03_sector63": ["-p", "legacy_start_sector", "34", "-p", "physical_sector_bytes", "8192"],
    "04_dedup_ddt": ["-p", "bytes_per_entry", "150.0", "-p", "ram_gib", "16", "-p", "arc_max_gib", "12"],
    "05_stacks": ["-p", "direction", "read", "-p", "inflation_margin", "1.2", "-p", "host", "lab1"],
    "06_zfs_send_transports": ["-p", "baseline_label", "dd 3000M through mbuffer"],
    "08_fio": ["-p", "steady_rounds", "4", "-p", "excursion_pct", "15.0", "-p", "host", "lab2"],
    "09_bonnie": ["-p", "vdev_type", "raidz1"],
}


def run_groups() -> list[list[str]]:
    """The analyses in as few `storagelab run` commands as give each its own parameters and nothing else: those
    whose non-default parameters set no label filter (a filter is given to every notebook of the command: 05's host
    lab1 and 08's lab2) in one command (each notebook takes only the parameters it has; the notebooks have none in
    common here), the others one each (issue 28: 4 commands, not 8)."""
    filters = {"study", "stack", "vdev_type", "host"}
    together = [nb for nb in ANALYSES if not filters & set(NON_DEFAULT[nb][1::3])]
    return [together] + [[nb] for nb in ANALYSES if nb not in together]


def outputs(executed: Path) -> str:
    """Everything the executed notebook shows from its code (text, Markdown, HTML tables), not its own source."""
    nb = nbformat.read(str(executed), as_version=4)
    parts = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                parts.append(f"ERROR {o.get('ename')}: {o.get('evalue')}")
            parts.append(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"]))
            for mime in ("text/markdown", "text/plain", "text/html"):
                v = o.get("data", {}).get(mime)
                if v:
                    parts.append(v if isinstance(v, str) else "".join(v))
    # a finding's number linked to its raw lines ([10.4 MiB/s](raw/... "from: ...")) reads as the number
    return re.sub(r'\[([^\]]+)\]\(raw/[^ )]+ "[^"]*"\)', r"\1", "\n".join(parts))


def digest(folder: Path) -> dict[str, str]:
    """Content hashes of a report folder's summaries and executed notebooks' outputs."""
    out = {}
    for f in sorted(folder.glob("summaries/*.json")):
        d = json.loads(f.read_text())
        d.pop("written_at", None)
        out[f.name] = hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()
    for f in sorted(folder.glob("executed/*.ipynb")):
        out[f.name] = hashlib.sha256(outputs(f).encode()).hexdigest()
    return out


def second_study_build(root: Path) -> dict:
    """The second study's project under ``root``: built (`build --study`), then every analysis run with non-default
    parameters, then an empty study; the digests of the folders the build made before and after those runs."""
    root = make_project(root)
    r = storagelab(root, "build", "--study", STUDY)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    assert "Traceback" not in r.stderr and "Kernel is running over TCP" not in r.stderr
    before = {s: digest(root / "reports" / s) for s in BUILT}
    runs = {}
    for group in run_groups():
        ran = storagelab(
            root, "run", *group, "-p", "study", STUDY, *(a for nb in group for a in NON_DEFAULT[nb]), "--no-report"
        )
        runs.update(dict.fromkeys(group, ran))
    # --no-report: the tests read the executed notebooks; a page of a study without data is rendered by the build
    # (ars-zfs-vs-raid ships no logs: its pages say "Missing:") and checked in Chromium (test_reports). Rendering
    # here re-rendered every page of the project, 41 (5 s of CPU).
    # a paper's study with no logs yet (its folder under papers/, no claims file, nothing labelled with it): the
    # notebooks run and say what is missing; a study neither labelled nor a paper's is refused before any notebook
    # runs (a typo: test_reliability15_lows)
    (root / "papers" / "nobody-labelled-this").mkdir()
    runs["empty"] = storagelab(root, "run", *ANALYSES, "-p", "study", "nobody-labelled-this", "--no-report")
    after = {s: digest(root / "reports" / s) for s in BUILT}
    return dict(root=root, build=r, runs=runs, before=before, after=after)


# minutes of subprocesses in a project of its own: started when the tests are collected, beside the rest of the
# suite (tests/conftest.py), and waited for here
BACKGROUND = [second_study_build]


@pytest.fixture(scope="module")
def project(background):
    return background(second_study_build)


def test_build_with_a_second_study_renders_every_page(project):
    root = project["root"]
    out = project["build"].stdout
    # the build plans 25 runs (the source studies' 13, the second study's 10: every notebook with a study parameter,
    # and 07 and 10 over every study) and makes the second study's and those over every study
    assert "--study fixturelab: 12 of the build's 25 notebook runs; the other reports are as they were" in out
    assert "built 12 reports (12 notebooks ran, 0 failed); open reports/index.html" in out
    assert (
        "==> running 07_explore.ipynb -> reports/all/" in out
        and "==> running 10_disk_card.ipynb -> reports/all/" in out
    )
    for nb in ANALYSES:
        assert f"==> running {nb}.ipynb with {{'study': '{STUDY}'}} -> reports/{STUDY}/" in out
        page = (root / "reports" / STUDY / f"{nb}.html").read_text()
        page = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)  # the inlined Vega bundle has both words
        assert "Traceback" not in page and "FAILED" not in page
    index = (root / "reports" / "index.html").read_text()
    assert f"<h2 id='{STUDY}'>{STUDY}</h2>" in index and "FAILED" not in index


@pytest.mark.parametrize("nb", ANALYSES)
def test_second_study_shows_its_own_numbers_and_none_of_the_sources(project, nb):
    runs = sorted((project["root"] / "reports").glob(f"{STUDY}*/executed/{nb}.ipynb"))
    assert len(runs) == 2  # the build's run and the one with non-default parameters
    for path in runs:
        text = outputs(path)
        assert "ERROR" not in text, text[-2000:]
        for mark in SEED_MARKS:
            assert mark not in text, f"{path.parent.parent.name}/{nb} shows {mark!r}"


def test_second_study_numbers(project):
    root = project["root"]
    default = {nb: outputs(root / "reports" / STUDY / "executed" / f"{nb}.ipynb") for nb in ANALYSES}
    # 04: zdb -b without a prompt line (pool from the manifest), -S and -DD of the ztest pools
    assert "Pool ztest: 5,321 block pointers x 320 B = 1.6 MiB" in default["04_dedup_ddt"]
    assert "Pool names from the manifest (the zdb output has no prompt line): ztest." in default["04_dedup_ddt"]
    assert "Pool ztest, zdb -S (simulated): 1,649 entries" in default["04_dedup_ddt"]
    assert "Pool ztest, zdb -D/-DD (existing DDT): 659 entries" in default["04_dedup_ddt"]
    assert "bp count 5,321 is 3.2x the 1,649 entries zdb counted (simulated)" in default["04_dedup_ddt"]
    # 05: fio runs of several workloads, each its own group
    assert "5 fio write runs for study fixturelab, in 5 workloads" in default["05_stacks"]
    assert (
        "`write bs=1MiB iodepth=1 numjobs=2 psync direct=1 rate=16m size=32MiB runtime=none`: one run "
        "(seq write 1M, 2 jobs, 33.0 MiB/s (34.6 MB/s), ⚠ short, rate-limited)"  # 1.94 s, and fio was told rate=16m
    ) in default["05_stacks"]
    assert "`write bs=250KiB iodepth=1 numjobs=1 psync direct=1" in default["05_stacks"]  # bs=256k at kb_base=1000
    # the user's own claims file
    assert "fixturelab-seq-write-bw" in default["05_stacks"] and "differs by +3.1 %" in default["05_stacks"]
    assert "fixturelab-bp-count" in default["04_dedup_ddt"] and "differs by -46.8 %" in default["04_dedup_ddt"]
    # 03: before/after from the phase labels, partition verdicts from fdisk
    assert "Before: bonnie before; after: bonnie after" in default["03_sector63"]
    assert "per-char write: 1.0 MiB/s before, 1.2 MiB/s after = 1.22x." in default["03_sector63"]
    # fdisk prints 512 B physical sectors: LBA 63 is misaligned only under the 4,096 B parameter, and said so
    assert (
        "dos63.img p1 at LBA 63 would be misaligned on 4,096 B physical sectors (the physical_sector_bytes "
        "parameter)" in default["03_sector63"]
    )
    # 06: the fastest run is the baseline when none is named
    assert (
        "dd 3000M through mbuffer: 1029.0 MiB/s (1079.0 MB/s), 81.1% of the baseline."
        in default["06_zfs_send_transports"]
    )
    # 02: measured block sizes of the ztest pool
    assert "Measured (ztest, zdb -b): 60.1 KiB logical per block pointer" in default["02_recordsize"]
    assert "Measured (ztest, zdb -bb block size histogram): 5,089 blocks, 310.5 MiB logical" in default["02_recordsize"]
    # 01: says what is missing and which logs would answer it
    assert "label each run with vdev_type, vdev_count and vdev_width" in default["01_vdev_scaling"]
    # 08: latency against depth, and the log time series with its steady state
    assert "QD 4 x 1:     28,520 IOPS" in default["08_fio"]
    # its logs cover a 3 s run: under the design checks' 5 s, no steady state is judged (had been "steady from 0.5 s")
    assert (
        "avg bw write: the run lasted 3 s, shorter than the design checks' 5 s: too short to judge a steady state."
        in default["08_fio"]
    )
    # 09: the bonnie++ runs side by side; '+++++' kept, never 0
    assert "2 bonnie++ run(s) from 2 file(s) for study fixturelab." in default["09_bonnie"]
    assert "<td>+++++</td>" in default["09_bonnie"]
    figures = {p.name for p in (root / "reports" / STUDY / "figures").rglob("*.svg")}
    assert {
        "bandwidth-by-run.svg",
        "ratios-after-vs-before.svg",
        "ddt-vs-bytes-per-entry.svg",
        "ddt-ladder.svg",
        "transport-rates.svg",
        "read-amplification.svg",
        "block-size-histogram.svg",
        "iops-latency-vs-depth.svg",
        "time-series.svg",
    } <= figures


def test_non_default_parameters_are_used(project):
    root, runs = project["root"], project["runs"]
    for nb in ANALYSES:
        assert runs[nb].returncode == 0, runs[nb].stderr[-3000:]
    folders = {
        nb: next((root / "reports").glob(f"{STUDY}--*/executed/{nb}.ipynb")) for nb in ANALYSES if nb != "05_stacks"
    }
    text = {nb: outputs(p) for nb, p in folders.items()}
    # each run got its own parameters and no other notebook's (run_groups runs several in one command)
    for nb, path in folders.items():
        given = nbformat.read(str(path), as_version=4).metadata["papermill"]["parameters"]
        assert set(given) == {"study", *NON_DEFAULT[nb][1::3]}, nb
    assert "a 1 MiB block on a 6-wide RAIDz1 at ashift 9" in text["02_recordsize"]
    assert "LBA 34 x 512 B = 17,408 B, 1,024 B past a 8192 B boundary" in text["03_sector63"]
    assert (
        "5,321 block pointers x 150 B" in text["04_dedup_ddt"]
        and "12.00 GiB ARC max x 0.25 = 3.00 GiB" in text["04_dedup_ddt"]
    )
    assert (
        "dd 200M through mbuffer: 1269.0 MiB/s (1330.6 MB/s), 123.3% of the baseline." in text["06_zfs_send_transports"]
    )
    (stacks,) = (root / "reports").glob(f"{STUDY}--host-lab1--*/executed/05_stacks.ipynb")
    s = outputs(stacks)
    assert "3 fio read runs for study fixturelab, host lab1, in 3 workloads" in s
    assert "seq read 1M, 2 jobs" in s and "write 256k" not in s  # lab2's run is filtered out


def test_an_empty_study_says_what_is_missing(project):
    root, r = project["root"], project["runs"]["empty"]
    assert r.returncode == 0, r.stderr[-3000:]
    for nb in ANALYSES:
        text = outputs(root / "reports" / "nobody-labelled-this" / "executed" / f"{nb}.ipynb")
        assert "ERROR" not in text
        assert "Missing:" in text and "nobody-labelled-this" in text
        assert "Study nobody-labelled-this has no claims file" in text
        # the first 'Missing' names the studies the database does hold (a typo is the usual cause): nothing else may
        assert "no file is labelled study nobody-labelled-this (study values in the database: " in text
        rest = re.sub(
            r"no file is labelled study nobody-labelled-this \(study values in the database: [^)]*\)", "", text
        )
        for mark in SEED_MARKS:
            assert mark not in rest, f"empty study {nb} shows {mark!r}"


def test_the_reports_the_build_made_are_untouched_and_no_run_writes_a_source_study(project):
    assert project["before"] == project["after"]
    assert all(project["before"][s] for s in BUILT)
    assert not [s for s in SOURCE_STUDIES if (project["root"] / "reports" / s).exists()]
