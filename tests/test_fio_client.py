"""fio client/server reports (`fio --client=HOST job.fio --output-format=json`): the jobs are in "client_stats",
and fio adds an "All clients" object, the sum of every job of every server. Real outputs of fio 3.33 made here by
tests/fixtures/make_fio_client_fixtures.sh."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagelab.errors import ParseError
from storagelab.parsers import fio
from storagelab.parsers.fio.fastjson import parse_bytes as fast_path

HERE = Path(__file__).parent / "fixtures" / "fio" / "3.33" / "client-server"


def _parsed(name: str):
    """The general path's reading of the file, after checking that the fast path reads it the same (without the
    blank line fio --client prints before the '{': with it, the fast path declines the file)."""
    path = HERE / name
    fast, plain = fast_path(path.read_bytes().lstrip(b"\n")), fio.parse(path.read_text().lstrip("\n"))
    assert fast is not None and (fast.tables, fast.warnings) == (plain.tables, plain.warnings)
    return fio.parse(path.read_text())


def test_one_servers_jobs_are_stored_and_the_all_clients_sum_is_not():
    parsed = _parsed("one-server-two-jobs.json")
    jobs = parsed.rows("fio_jobs")
    assert [(j["jobname"], j["rw"], j["block_size_bytes"], j["jobs"]) for j in jobs] == [
        ("randread", "randread", 4096, 1),
        ("seqwrite", "write", 131072, 1),
    ]
    results = {(r["job_index"], r["direction"]): r for r in parsed.rows("fio_results")}
    assert sorted(results) == [(0, "read"), (1, "write")]  # no third job: "All clients" (both summed) is left out
    read, write = results[(0, "read")], results[(1, "write")]
    assert (read["io_bytes"], read["bw_bytes_per_s"], read["runtime_ns"]) == (27680768, 13826557, 2002 * 10**6)
    assert (write["io_bytes"], write["bw_bytes_per_s"], write["runtime_ns"]) == (3549298688, 1773762462, 2001 * 10**6)
    assert (jobs[0]["line_start"], jobs[1]["line_start"]) == (13, 256)  # each job's own object, not the sum's
    assert parsed.warnings == [
        'line 2: a fio client/server report: its jobs ran on the fio server 127.0.0.1:8766; its "All clients" sum '
        "of every job is not stored"
    ]


def test_one_job_of_one_server_has_no_sum_and_is_stored_whole():
    parsed = _parsed("one-server-one-job.json")
    assert [j["jobname"] for j in parsed.rows("fio_jobs")] == ["rr"]
    (read,) = parsed.rows("fio_results")
    assert (read["direction"], read["io_bytes"], read["bw_bytes_per_s"]) == ("read", 20975616, 20954661)
    assert parsed.warnings == ["line 2: a fio client/server report: its jobs ran on the fio server 127.0.0.1:8766"]


def test_a_report_of_two_servers_is_refused_at_its_line():
    # each server's "global options" come as repeated keys of one object: which server ran with which would be a guess
    with pytest.raises(ParseError) as e:
        fio.parse((HERE / "two-servers.json").read_text())
    assert (e.value.kind, e.value.line) == ("unsupported-version", 2)
    assert "a fio client/server report of 2 servers (127.0.0.1:8766, 127.0.0.1:8767)" in e.value.message
