"""Several fio runs appended to one log (``fio ... >> log``, as benchmark scripts do): each run's last report is
final and every analysis sees every run, while the reports of one ``--status-interval`` run stay one run.
Real output: fixtures/fio/published/fio-2.2.10-five-runs-appended.txt (dyu/vps-comparison, five randread runs
of 8 processes each)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from storagelab.analysis import explore, fio_views, open_db, stacks
from storagelab.parsers import parse_bytes
from storagelab.store import ingest

FIX = Path(__file__).resolve().parent / "fixtures" / "fio"
APPENDED = FIX / "published" / "fio-2.2.10-five-runs-appended.txt"
KiB = 1024
# aggrb= of the five 'READ:' group lines (KB = KiB in fio 2.x) and the pid of each run's job block
GROUP_BW_KIB = [611058, 502251, 592499, 541759, 662188]
PIDS = [2613, 2642, 2671, 2700, 2729]


def test_every_appended_run_is_final():
    parsed, _ = parse_bytes(APPENDED.read_bytes(), str(APPENDED))
    jobs = list(parsed.rows("fio_jobs"))
    assert [(j["job_index"], j["doc_index"], j["is_final"], j["pid"]) for j in jobs] == [
        (i, i, True, pid) for i, pid in enumerate(PIDS)
    ]
    assert [j["line_start"] for j in jobs] == [14, 46, 78, 110, 142]
    groups = list(parsed.rows("fio_groups"))
    assert [(g["doc_index"], g["bw_bytes_per_s"]) for g in groups] == [
        (i, bw * KiB) for i, bw in enumerate(GROUP_BW_KIB)
    ]
    assert parsed.warnings == []


def test_status_interval_reports_stay_one_run():
    """fio 3.33 --status-interval in normal text: several reports, no preamble between them; only the last is final."""
    text = (FIX / "3.33" / "text-status-interval.txt").read_bytes()
    parsed, _ = parse_bytes(text, "x.txt")
    finals = [j["doc_index"] for j in parsed.rows("fio_jobs") if j["is_final"]]
    docs = {j["doc_index"] for j in parsed.rows("fio_jobs")}
    assert len(docs) > 1 and finals == [max(docs)]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    raw = tmp_path_factory.mktemp("raw")
    shutil.copy(APPENDED, raw / APPENDED.name)
    shutil.copy(FIX / "3.33" / "status_interval.txt", raw / "status_interval.txt")
    (raw / "manifest.csv").write_text(
        f"path,study,label,stack\n{APPENDED.name},vps,do-5bucks randread,ext4\nstatus_interval.txt,vps,interval,zfs\n"
    )
    dest = raw.parent / "appended.duckdb"
    s = ingest([raw], db_path=dest, parquet_dir=False, progress=False, workers=1)
    assert (s.ingested, s.failed) == (2, 0), s.errors
    return dest


def test_the_analyses_see_the_five_runs_as_five_runs(db):
    con = open_db(db)
    try:
        runs = stacks.runs(con)
        explored = explore.run_bandwidths(
            con.sql("SELECT * FROM fio_groups").pl(),
            con.sql("SELECT * FROM files").pl(),
            con.sql("SELECT file_id, doc_index, is_final FROM fio_jobs").pl(),
        )
        per_run = fio_views.per_run(fio_views.load_summary(con))
    finally:
        con.close()
    mine = runs.filter(runs["label"] == "do-5bucks randread")
    assert mine["bw_bytes_per_s"].to_list() == [bw * KiB for bw in GROUP_BW_KIB]
    assert mine["doc_index"].to_list() == [0, 1, 2, 3, 4]
    assert mine["jobs"].to_list() == [8] * 5  # each run's own job block, not the five summed
    assert runs.filter(runs["label"] == "interval").height == 1  # the last of its four reports only
    assert explored.filter(explored["label"] == "do-5bucks randread")["bw_bytes_per_s"].to_list() == [
        bw * KiB for bw in GROUP_BW_KIB
    ]
    assert explored.filter(explored["label"] == "interval").height == 1
    threads = per_run.filter(per_run["path"].str.ends_with(APPENDED.name))
    # one row per run (not 5 runs' IOPS summed as threads of one job): the iops= of each run's read line
    assert threads["iops"].to_list() == [152764.0, 125562.0, 148124.0, 135439.0, 165547.0]
    assert threads["threads"].to_list() == [1] * 5


def _doc(name: str) -> str:
    """The JSON document of a real fio 3.33 output (its '{' line to its '}' line)."""
    text = (FIX / "3.33" / name).read_text()
    start = text.index("{\n") if text.startswith("{") else text.index("\n{\n") + 1
    return text[start : text.index("\n}\n", start) + 3]


def test_json_reports_of_two_runs_in_a_terminal_transcript_are_both_final():
    """Two fio JSON reports of different times with a shell prompt between them (`cat out-0`, `cat out-1`) are two
    runs; back to back (--status-interval) or the same report shown twice, only the last is final."""
    first, second = _doc("json_only.txt"), _doc("cmdprio_json.txt")
    prompt = "root@host:/results# cat out-1\n"
    cases = {
        "two runs": ("root@host:/results# cat out-0\n" + first + prompt + second, [True, True]),
        "back to back": (first + second, [False, True]),
    }
    for case, (text, finals) in cases.items():
        parsed, _ = parse_bytes(text.encode(), "x.txt")
        by_doc = {j["doc_index"]: j["is_final"] for j in parsed.rows("fio_jobs")}
        assert [by_doc[d] for d in sorted(by_doc)] == finals, case
    # real: the same report printed by fio and then by `cat out-0` (one timestamp): one run
    real = FIX / "published" / "fio-3.12-json-terminal-transcript.txt"
    parsed, _ = parse_bytes(real.read_bytes(), str(real))
    assert [(j["doc_index"], j["is_final"]) for j in parsed.rows("fio_jobs")] == [(0, False), (1, True)]


def test_05_takes_the_five_appended_runs_as_repeats_with_a_bootstrap(db):
    """Five runs appended to one file are five repeats of one configuration: mean, sd, the intervals and, from
    five runs, the seeded bootstrap interval of the mean (issue 24)."""
    from storagelab.analysis import Selection, stats

    con = open_db(db)
    try:
        res = stacks.analyse(con, Selection(study="vps"), direction="read", min_elapsed_s=1.0)
    finally:
        con.close()
    (r,) = res["repeats"].iter_rows(named=True)
    values = [bw * KiB for bw in GROUP_BW_KIB]
    expected = stats.summarise(values)
    assert (r["config"], r["n"]) == ("do-5bucks randread", 5)
    assert r["mean"] == pytest.approx(2909755 * KiB / 5)
    assert r["pi95_bytes_per_s"] == pytest.approx(expected.pi.half)
    assert (r["boot_low_bytes_per_s"], r["boot_high_bytes_per_s"]) == (expected.bootstrap.low, expected.bootstrap.high)
    assert expected.bootstrap.low < r["mean"] < expected.bootstrap.high
    line = next(f for f in res.findings if f.startswith("do-5bucks randread: 5 repeated runs"))
    assert "bootstrap interval of the mean" in line and "few runs" not in line
