import polars as pl
import pytest
from conftest import RAW, analyse_study

from storagelab.analysis import mbuffer as mbuffer_rates
from storagelab.analysis import transports
from storagelab.parsers import mbuffer
from storagelab.units import MiB

LABELS = {
    "mbuffer-zero-to-null.txt": "/dev/zero to /dev/null",
    "mbuffer-ssh-localhost.txt": "ssh (default cipher)",
    "mbuffer-socat-receiver.txt": "socat (receiver)",
    "mbuffer-socat-sender.txt": "socat (sender, local)",
    "mbuffer-netcat-receiver.txt": "netcat (receiver)",
}


@pytest.fixture(scope="module")
def summaries():
    """Seed 001's mbuffer summaries as the parser stores them, labelled as in the manifest."""
    rows = []
    for name, label in LABELS.items():
        for r in mbuffer.parse((RAW / "thumper-x4500" / name).read_text()).rows("mbuffer_summaries"):
            rows.append(dict(r, label=label))
    return pl.DataFrame(rows, infer_schema_length=None)


def test_rates_in_mib_s_and_consistency(summaries):
    out = mbuffer_rates.rates(summaries)
    got = dict(zip(out["label"], out["rate_mib_s"], strict=True))
    assert got["/dev/zero to /dev/null"] == 583.0
    assert got["ssh (default cipher)"] == 32.5
    null = out.filter(pl.col("label") == "/dev/zero to /dev/null").row(0, named=True)
    assert null["seconds"] == pytest.approx(299.3, rel=1e-12)
    assert null["implied_bytes"] == pytest.approx(583 * MiB * 299.3, rel=1e-12)
    assert null["amount_vs_implied"] == pytest.approx(170 * 1024**3 / (583 * MiB * 299.3), rel=1e-12)
    ok = out.filter(~pl.col("suspect"))
    assert ((ok["amount_vs_implied"] - 1).abs() < 0.005).all()


def test_unitless_amount_is_resolved_to_10000_mib(summaries):
    out = mbuffer_rates.rates(summaries).filter(pl.col("suspect"))
    assert sorted(out["label"].to_list()) == ["socat (receiver)", "socat (sender, local)"]
    assert out["bytes"].to_list() == [10000.0, 10000.0]  # as printed: "1e+04 Byte"
    assert out["resolved_bytes"].to_list() == [10000.0 * MiB] * 2  # dd bs=1024k count=10000
    assert out["unit_power_lost"].to_list() == [2, 2]
    assert ((out["resolved_vs_implied"] - 1).abs() < 0.001).all()


def test_resolve_unitless():
    assert mbuffer_rates.resolve_unitless(10000, 204 * MiB * 49.0) == (10000 * MiB, 2)
    assert mbuffer_rates.resolve_unitless(10000, 9.9e3) == (10000, 0)
    assert mbuffer_rates.resolve_unitless(1e4, 1e4 * 1024**3 * 0.9) == (1e4 * 1024**3, 3)
    with pytest.raises(ValueError):
        mbuffer_rates.resolve_unitless(0, 1.0)


def test_relative_to_baseline(summaries):
    out = transports.relative_to(mbuffer_rates.rates(summaries), "/dev/zero to /dev/null")
    got = dict(zip(out["label"], out["vs_baseline"], strict=True))
    assert got["/dev/zero to /dev/null"] == 1.0
    assert got["ssh (default cipher)"] == pytest.approx(32.5 / 583, rel=1e-12)
    assert got["socat (sender, local)"] == pytest.approx(231 / 583, rel=1e-12)
    with pytest.raises(LookupError):
        transports.relative_to(out, "rsh")


def test_delay_corrected_rate_netcat():
    # netcat receiver: 7410 MiB in 88.7 s including ~14 s of waiting -> 99.2 MiB/s, the sender's 98.9
    r = transports.delay_corrected_rate(7410 * MiB, 88.7, 14.0)
    assert r / MiB == pytest.approx(7410 / 74.7, rel=1e-12)
    assert round(r / MiB, 1) == 99.2
    with pytest.raises(ValueError):
        transports.delay_corrected_rate(1.0, 10.0, 10.0)


def test_thumper_claim_map_matches_manifest_and_claims():
    from storagelab.claims import load_claims
    from storagelab.manifest import load

    m = load(RAW / "manifest.csv")
    labels = {r["label"] for r in m.rows.values() if r.get("study") == "thumper-x4500" and r.get("stack") == "mbuffer"}
    assert set(transports.THUMPER_RATE_CLAIMS) == labels
    c = load_claims("thumper-x4500")
    assert set(transports.THUMPER_RATE_CLAIMS.values()) <= set(c["claim_id"])


def test_to_gbit_s():
    assert transports.to_gbit_s(311 * MiB) == 311 * MiB * 8 / 1e9
    assert round(transports.to_gbit_s(311 * MiB), 3) == 2.609
    assert transports.to_gbit_s(875e6) == 7.0


def test_receivers_are_shown_without_their_wait(seed_db):
    """Review (low): the receivers' printed rates include their wait for the sender; the report and the index show
    the corrected rates, and no run is matched to a cipher it did not use."""
    res = analyse_study(seed_db, transports.analyse, "thumper-x4500")
    waits = {w["receiver"]: w for w in res["waits"].iter_rows(named=True)}
    assert round(waits["netcat (receiver)"]["wait_s"], 1) == 13.8
    assert round(waits["netcat (receiver)"]["corrected_rate_bytes_per_s"] / MiB, 1) == 98.9
    assert round(waits["socat (receiver)"]["corrected_rate_bytes_per_s"] / MiB, 1) == 230.9
    assert res.headline["netcat (receiver)"] == (
        "98.9 MiB/s without its 13.8 s start-up wait (the sender's rate, by construction; printed 83.5)"
    )
    assert not any("match" in f for f in res.findings)
    # analyses-2 low: amount / the sender's time is the sender's rate (98.9 MiB/s both), and is said to be
    sender = res["rates"].filter(pl.col("label") == "netcat (sender)")["rate_bytes_per_s"][0]
    assert round(sender / MiB, 1) == 98.9
    assert (
        "That is the amount over netcat (sender)'s time, so it equals the sender's rate by construction"
        in "\n".join(res.findings)
    )


def test_06_points_at_failed_files_when_it_has_no_mbuffer_summary(tmp_path):
    """A study whose only mbuffer log failed to parse: 06 had asked for mbuffer output that was there."""
    from storagelab.analysis import Selection, open_db, transports
    from storagelab.store import ingest

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "send.log").write_text("summary: 46.7 MiByte in\n")  # cut short: fails
    (raw / "manifest.csv").write_text("path,study,label\nsend.log,t,send\n")
    s = ingest([raw], db_path=tmp_path / "x.duckdb", parquet_dir=False, progress=False, workers=1)
    assert s.failed == 1
    with open_db(tmp_path / "x.duckdb") as con:
        res = transports.analyse(con, Selection(study="t"))
    assert res.missing[-1].endswith(
        "; 1 file(s) in this database failed to parse: if this study's mbuffer logs are among them, "
        '`storagelab sql "SELECT path, line, message FROM ingest_errors"` says why'
    )
