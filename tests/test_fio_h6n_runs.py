"""What a run is, from the h6n new-user trial (/work/h6n-findings.md): fio's misprinted bandwidth (P1), a write-up of
several machines taken as repeats (H1) and its summary commands paired with the first run (P2). Real output:
fixtures/fio/published/fio-3.1-vps-writeup-five-machines.txt (dyu/vps-comparison, its .md says where from) and
fio-3.25-four-threads-iops0.txt (k8s-homelab)."""

from __future__ import annotations

from conftest import FIXTURES, ingest_unlabelled

from storagelab.analysis import Selection, fio_runs, fio_views, open_db
from storagelab.parsers import parse_bytes

PUB = FIXTURES / "fio" / "published"
VPS = PUB / "fio-3.1-vps-writeup-five-machines.txt"
FOUR = PUB / "fio-3.25-four-threads-iops0.txt"
MACHINES = ("aws ec2 micro - 990M", "gcloud micro - 585M", "vultr - 488M", "linode - 989M")
UPCLOUD = "upcloud - 992M (/usr/bin/python missing, install via: apt-get install python)"


def _parsed(path):
    parsed, _ = parse_bytes(path.read_bytes(), str(path))
    return parsed


def test_p1_a_bandwidth_its_own_io_and_run_cannot_give_is_stored_as_io_over_run():
    """fio 3.1 line 32 'write: IOPS=3068, BW=11.0MiB/s (12.6MB/s)(4096MiB/341704msec)': 4096 MiB / 341.704 s =
    11.99 MiB/s = 12,569,262.57 B/s (its 12.6MB/s agrees); stored was 11.0 x 2^20 = 11,534,336 B/s, 8.3 % low."""
    parsed = _parsed(VPS)
    groups = [
        (g["doc_index"], g["direction"], g["bw_bytes_per_s"], g["bw_max_bytes_per_s"])
        for g in parsed.rows("fio_groups")
    ]
    assert groups[:3] == [
        (0, "write", 12569262.566432, 12569262.566432),  # 4096 x 2^20 x 1000 / 341704
        (1, "read", 12575837.654416, 12575837.654416),  # 3598 x 2^20 x 1000 / 300002
        (2, "write", 20552089.6, 20552089.6),  # 19.6MiB/s (20.6MB/s)(4096MiB/208446msec): printed, agrees
    ]
    assert [r["bw_bytes_per_s"] for r in parsed.rows("fio_results")][:2] == [12569262.566432, 12575837.654416]
    assert [w for w in parsed.warnings if "io/run" in w] == [
        f"line {ln}: bandwidth printed as 11.0MiB/s (12.6MB/s) but the line's io/run gives 11.99MiB/s ({io} in {ms} "
        "ms: +9.0 % on the printed figure); stored io/run (the line's 12.6MB/s agrees with it)"
        for ln, io, ms in (
            (32, "4096MiB", 341704),
            (54, "4096MiB", 341704),
            (74, "3598MiB", 300002),
            (96, "3598MiB", 300002),
        )
    ]


def test_p1_fio_3_25_prints_the_same_carry_wrong():
    """fio 3.25 job 2: 'BW=27.0MiB/s (29.4MB/s)(2368MiB/84578msec)' = 28.00 MiB/s, as its group line's max '28.0MiB/s'
    says; the other three jobs' figures agree with their io/run and stay as printed."""
    parsed = _parsed(FOUR)
    assert [r["bw_bytes_per_s"] for r in parsed.rows("fio_results")] == [
        28626124.8,
        29360128.0,
        29357846.815957,
        28940697.6,
    ]
    assert [w for w in parsed.warnings if "io/run" in w] == [
        "line 54: bandwidth printed as 27.0MiB/s (29.4MB/s) but the line's io/run gives 28.00MiB/s (2368MiB in 84578 ms: "
        "+3.7 % on the printed figure); stored io/run (the line's 29.4MB/s agrees with it)"
    ]


def test_h1_p2_a_writeup_holds_one_section_per_machine_and_each_run_its_own_command():
    parsed = _parsed(VPS)
    assert [(s["doc_index"], s["section"], s["line_start"]) for s in parsed.rows("fio_sections")] == [
        (doc, f"fio results (all on ubuntu 16.04 x64) > {name}", ln)
        for doc, name, ln in zip((0, 2, 4, 6, 8), (*MACHINES, UPCLOUD), (10, 102, 196, 290, 384), strict=True)
    ]
    # P2: the summary's two commands (lines 4 and 7, above the first heading) are not the first run's
    commands = [(c["doc_index"], c["line_start"], c["command"][:40]) for c in parsed.rows("fio_commands")]
    assert commands[:2] == [
        (0, 25, "./fio --filename=test4K-aio --rw=write -"),
        (1, 68, "./fio --filename=test4K-aio --rw=read --"),
    ]
    assert not [w for w in parsed.warnings if "different fio commands" in w]


def test_h1_runs_of_different_machines_are_not_repeats(tmp_path):
    """08 said '5 runs of file vps-fio-libaio-4K.txt (host not labelled): mean 87.0 MiB/s ... 95 % confidence interval
    of the mean ±113.4 %': five machines taken as repeats. Each machine's run is now a setup of its own, named by
    its heading, and no mean or interval is stated across them."""
    db = ingest_unlabelled([VPS], tmp_path)
    with open_db(db) as con:
        runs = fio_runs.runs(con, Selection()).sort("doc_index")
        res = fio_views.analyse(con, Selection())
    names = fio_runs.config_label(runs)
    assert runs.select(names.alias("n"))["n"].to_list()[:4] == [
        "fio-3.1-vps-writeup-five-machines.txt § aws ec2 micro - 990M",
        "fio-3.1-vps-writeup-five-machines.txt § aws ec2 micro - 990M",
        "fio-3.1-vps-writeup-five-machines.txt § gcloud micro - 585M",
        "fio-3.1-vps-writeup-five-machines.txt § gcloud micro - 585M",
    ]
    assert (
        "`write bs=4KiB libaio direct=1 size=4GiB runtime=none` write on file fio-3.1-vps-writeup-five-machines.txt § "
        "aws ec2 micro - 990M (host not labelled): one run (fio-3.1-vps-writeup-five-machines.txt, 4 I/Os in flight): "
        "3,069 IOPS, p99 latency 13.4 ms." in res.findings
    )
    assert not [f for f in res.findings if "mean of 5" in f or "5 runs" in f or "confidence interval" in f]
