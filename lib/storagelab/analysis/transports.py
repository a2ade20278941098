"""zfs send transports from mbuffer summaries (notebook 06).

mbuffer of 2008 prints "MB/s" for values that are MiB/s (its kb2str divides by 1024; docs/formats/zfs-facts.md F21),
and the parser stores bytes and bytes/s. When the amount is exactly 10000 of a unit, that kb2str
prints no unit letter (``1e+04 Byte``), so the stored amount is wrong by a power of 1024; the
printed rate and time still hold, and the power that brings the amount in line with rate x time
recovers it (``resolve_unitless``).
"""

from __future__ import annotations

import polars as pl

from ..units import MiB
from . import measures, prose
from .mbuffer import rates
from .result import Result


def relative_to(
    df: pl.DataFrame, baseline_label: str, label: str = "label", value: str = "rate_bytes_per_s"
) -> pl.DataFrame:
    """Add ``vs_baseline``: each rate over the rate of the row labelled ``baseline_label`` (exactly one)."""
    base = df.filter(pl.col(label) == baseline_label)
    if base.height != 1:
        raise LookupError(f"expected one row labelled {baseline_label!r}, found {base.height}")
    return df.with_columns(vs_baseline=pl.col(value) / base[value][0])


def delay_corrected_rate(amount_bytes: float, seconds: float, delay_s: float) -> float:
    """Rate once an idle wait at the start (a receiver started before its sender) is taken out."""
    if not 0 <= delay_s < seconds:
        raise ValueError(f"delay {delay_s} s must be >= 0 and shorter than the run ({seconds} s)")
    return amount_bytes / (seconds - delay_s)


# seed 001's transports: manifest label -> claim id (papers/thumper-x4500/claims.csv) of its printed rate
THUMPER_RATE_CLAIMS = {
    "/dev/zero to /dev/null": "thumper-mbuffer-zero-to-null",
    "ssh (default cipher)": "thumper-mbuffer-ssh",
    "ssh -c blowfish": "thumper-mbuffer-ssh-blowfish",
    "netcat (receiver)": "thumper-mbuffer-netcat-receiver",
    "netcat (sender)": "thumper-mbuffer-netcat-sender",
    "socat (receiver)": "thumper-mbuffer-socat-receiver",
    "socat (sender, local)": "thumper-mbuffer-socat-sender",
    "socat (network)": "thumper-mbuffer-socat-network",
}


def to_gbit_s(bytes_per_s: float) -> float:
    """Network units: 10^9 bits per second (netperf, link speeds)."""
    return bytes_per_s * 8 / 1e9


# ----------------------------------------------------------------------------- notebook 06 on any selection

_ROLE = r"\s*\((sender|receiver)[^)]*\)\s*$"


def receiver_waits(rates_df: pl.DataFrame) -> pl.DataFrame:
    """Pairs of a '<name> (sender...)' and a '<name> (receiver...)' run that moved the same amount (within 1 %):
    the receiver's clock ran ``wait_s`` longer (it started before data arrived); ``corrected_rate_bytes_per_s`` is
    the receiver's rate without that wait."""
    df = rates_df.with_columns(role=pl.col("label").str.extract(_ROLE, 1), pair=pl.col("label").str.replace(_ROLE, ""))
    tx, rx = df.filter(pl.col("role") == "sender"), df.filter(pl.col("role") == "receiver")
    both = rx.join(tx, on="pair", suffix="_tx")
    both = both.filter((pl.col("resolved_bytes") / pl.col("resolved_bytes_tx") - 1).abs() <= 0.01)
    return both.select(
        "pair",
        receiver="label",
        sender="label_tx",
        amount_bytes="resolved_bytes",
        receiver_s="seconds",
        sender_s="seconds_tx",
        wait_s=pl.col("seconds") - pl.col("seconds_tx"),
        receiver_rate_bytes_per_s="rate_bytes_per_s",
        sender_rate_bytes_per_s="rate_bytes_per_s_tx",
        corrected_rate_bytes_per_s=pl.col("resolved_bytes") / pl.col("seconds_tx"),
        file_id="file_id",
        file_id_tx="file_id_tx",
    )


def analyse(con, sel, baseline_label: str = ""):
    """Notebook 06 on any selection: each mbuffer run's rate, relative to a baseline run (``baseline_label``, else
    the fastest), unit-less amounts resolved, receivers' start-up waits taken out."""

    res = Result.start(con, sel, measures.per_file(con, sel))
    summ, status = measures.mbuffer_frames(con, sel)
    if summ.is_empty():
        (failed,) = con.execute("SELECT count(*) FROM ingest_errors").fetchone()
        res.missing.append(
            f"no mbuffer summary for {sel.describe()}: pipe the transfer through mbuffer "
            "(`zfs send ... | mbuffer -s 128k -m 1G 2> mbuffer.log | ...`), save its output under "
            "data/raw/<study>/ and label each run (label names the transport)"
            + (
                f"; {failed} file(s) in this database failed to parse: if this study's mbuffer logs are among them, "
                '`storagelab sql "SELECT path, line, message FROM ingest_errors"` says why'
                if failed
                else ""
            )
        )
        return res
    r = rates(summ)
    base = r.filter(pl.col("label") == baseline_label) if baseline_label else r.head(0)
    if base.height != 1:
        fastest = r.sort("rate_bytes_per_s", descending=True)["label"][0]
        if baseline_label:
            res.findings.append(
                f"No single run labelled '{baseline_label}' in the selection: rates are relative to the "
                f"fastest run, {fastest}."
            )
        baseline_label = fastest
    r = relative_to(r, baseline_label).sort("rate_bytes_per_s", descending=True)
    res.frames.update(rates=r, status=status)
    res.file_ids = r["file_id"].to_list() + status["file_id"].to_list()
    res.findings.append(
        f"{r.height} mbuffer run(s) for {sel.describe()}; baseline {baseline_label} at "
        f"{prose.rate(r.filter(pl.col('label') == baseline_label)['rate_bytes_per_s'][0])}."
    )
    for x in r.filter(pl.col("label") != baseline_label).iter_rows(named=True):
        res.findings.append(
            f"{x['label']}: {prose.rate(x['rate_bytes_per_s'])}, {x['vs_baseline']:.1%} of the baseline."
        )
    for x in r.filter(pl.col("suspect")).iter_rows(named=True):
        res.findings.append(
            f"{x['label']} printed its amount without a unit (`1e+04 Byte`): rate x time = "
            f"{prose.size(x['implied_bytes'])}, so the amount is 10000 x 1024^{x['unit_power_lost']} B = "
            f"{prose.size(x['resolved_bytes'])}."
        )
    waits = receiver_waits(r)
    res.frames["waits"] = waits
    for w in waits.iter_rows(named=True):
        res.findings.append(
            f"{w['receiver']}: its clock ran {w['wait_s']:.1f} s longer than {w['sender']} for the same "
            f"{prose.size(w['amount_bytes'])}; without that wait it received at "
            f"{prose.rate(w['corrected_rate_bytes_per_s'])} (printed: {prose.rate(w['receiver_rate_bytes_per_s'])}). "
            f"That is the amount over {w['sender']}'s time, so it equals the sender's rate by construction: it "
            "shows what the receiver's printed rate lost to waiting, not a second measurement of the transfer."
        )
    for s in status.iter_rows(named=True):
        if s["buffer_fill_pct"] is not None:
            res.findings.append(
                f"{s['label']}: last status line in {prose.rate(s['in_rate_bytes_per_s'])}, buffer "
                f"{s['buffer_fill_pct']:.0f} % full"
                + (
                    " (full: the consumer after mbuffer was the limit)"
                    if s["buffer_fill_pct"] >= 90
                    else " (empty: the producer before mbuffer was the limit)"
                    if s["buffer_fill_pct"] <= 10
                    else ""
                )
                + "."
            )
    res.headline = {
        x["label"]: f"{x['rate_mib_s']:.1f} MiB/s ({x['vs_baseline']:.0%} of {baseline_label})"
        for x in r.iter_rows(named=True)
    }
    for w in waits.iter_rows(named=True):  # a receiver's printed rate includes its wait for the sender
        res.headline[w["receiver"]] = (
            f"{w['corrected_rate_bytes_per_s'] / MiB:.1f} MiB/s without its {w['wait_s']:.1f} s start-up wait "
            f"(the sender's rate, by construction; printed {w['receiver_rate_bytes_per_s'] / MiB:.1f})"
        )
    slow = r.row(-1, named=True)
    res.verdict = (
        f"Slowest transport: {slow['label']} at {slow['rate_mib_s']:.1f} MiB/s, {slow['vs_baseline']:.1%} "
        f"of {baseline_label}."
    )
    return res
