"""zfs send transports from mbuffer summaries (notebook 06).

mbuffer of 2008 prints "MB/s" for values that are MiB/s (its kb2str divides by 1024; docs/formats/zfs-facts.md F21),
and the parser stores bytes and bytes/s. When the amount is exactly 10000 of a unit, that kb2str
prints no unit letter (``1e+04 Byte``), so the stored amount is wrong by a power of 1024; the
printed rate and time still hold, and the power that brings the amount in line with rate x time
recovers it (``resolve_unitless``).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..units import MiB
from . import measures, prose
from .mbuffer import rates
from .result import Finding, Result, cite
from .selection import Selection


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


@dataclass
class TransportFrames:
    summaries: pl.DataFrame  # mbuffer summary lines, labelled (measures.mbuffer_frames)
    status: pl.DataFrame  # each run's last status line
    failed_files: int  # files of this database that failed to parse (any tool)


@dataclass
class TransportNumbers:
    rates: pl.DataFrame  # mbuffer.rates + vs_baseline, fastest first
    status: pl.DataFrame
    waits: pl.DataFrame  # receiver_waits
    baseline_label: str  # the run the others are relative to
    baseline_rate_bytes_per_s: float
    asked_baseline: str  # the label asked for ("" when none)
    slowest: dict  # the slowest run's row of ``rates``

    @property
    def baseline_asked_and_missing(self) -> bool:
        return bool(self.asked_baseline) and self.asked_baseline != self.baseline_label


def query(con, sel: Selection) -> TransportFrames:
    summaries, status = measures.mbuffer_frames(con, sel)
    (failed,) = con.execute("SELECT count(*) FROM ingest_errors").fetchone()
    return TransportFrames(summaries, status, failed)


def compute(frames: TransportFrames, baseline_label: str = "") -> TransportNumbers:
    """Rates relative to the run labelled ``baseline_label`` (exactly one), else to the fastest."""
    r = rates(frames.summaries)
    base = r.filter(pl.col("label") == baseline_label) if baseline_label else r.head(0)
    chosen = baseline_label if base.height == 1 else r.sort("rate_bytes_per_s", descending=True)["label"][0]
    r = relative_to(r, chosen).sort("rate_bytes_per_s", descending=True)
    return TransportNumbers(
        rates=r,
        status=frames.status,
        waits=receiver_waits(r),
        baseline_label=chosen,
        baseline_rate_bytes_per_s=r.filter(pl.col("label") == chosen)["rate_bytes_per_s"][0],
        asked_baseline=baseline_label,
        slowest=r.row(-1, named=True),
    )


def missing(frames: TransportFrames, sel: Selection) -> str:
    return (
        f"no mbuffer summary for {sel.describe()}: pipe the transfer through mbuffer "
        "(`zfs send ... | mbuffer -s 128k -m 1G 2> mbuffer.log | ...`), save its output under "
        "data/raw/<study>/ and label each run (label names the transport)"
        + (
            f"; {frames.failed_files} file(s) in this database failed to parse: if this study's mbuffer logs are "
            'among them, `storagelab sql "SELECT path, line, message FROM ingest_errors"` says why'
            if frames.failed_files
            else ""
        )
    )


def _buffer_words(pct: float) -> str:
    if pct >= 90:
        return " (full: the consumer after mbuffer was the limit)"
    if pct <= 10:
        return " (empty: the producer before mbuffer was the limit)"
    return ""


def findings(res: Result, n: TransportNumbers, sel: Selection) -> None:
    """Sentences, headline and verdict from the numbers only."""
    base, r = n.baseline_label, n.rates
    if n.baseline_asked_and_missing:
        res.findings.append(
            f"No single run labelled '{n.asked_baseline}' in the selection: rates are relative to the "
            f"fastest run, {base}."
        )
    based = r.filter(pl.col("label") == base)
    res.findings.append(
        Finding(
            f"{r.height} mbuffer run(s) for {sel.describe()}; baseline {base} at "
            f"{prose.rate(n.baseline_rate_bytes_per_s)}.",
            [cite(prose.rate(n.baseline_rate_bytes_per_s), based)],
        )
    )
    for x in r.filter(pl.col("label") != base).iter_rows(named=True):
        res.findings.append(
            Finding(
                f"{x['label']}: {prose.rate(x['rate_bytes_per_s'])}, {x['vs_baseline']:.1%} of the baseline.",
                [
                    cite(prose.rate(x["rate_bytes_per_s"]), x),
                    cite(f"{x['vs_baseline']:.1%}", [x, *based.to_dicts()], f"its rate / {base}'s"),
                ],
            )
        )
    for x in r.filter(pl.col("suspect")).iter_rows(named=True):
        res.findings.append(
            Finding(
                f"{x['label']} printed its amount without a unit (`1e+04 Byte`): rate x time = "
                f"{prose.size(x['implied_bytes'])}, so the amount is 10000 x 1024^{x['unit_power_lost']} B = "
                f"{prose.size(x['resolved_bytes'])}.",
                [
                    cite(prose.size(x["implied_bytes"]), x, "the printed rate x the printed time"),
                    cite(
                        prose.size(x["resolved_bytes"]), x, "the printed 10000 x the power of 1024 nearest rate x time"
                    ),
                ],
            )
        )
    for w in n.waits.iter_rows(named=True):
        _wait(res, w, r)
    for s in n.status.iter_rows(named=True):
        if s["buffer_fill_pct"] is not None:
            res.findings.append(
                Finding(
                    f"{s['label']}: last status line in {prose.rate(s['in_rate_bytes_per_s'])}, buffer "
                    f"{s['buffer_fill_pct']:.0f} % full{_buffer_words(s['buffer_fill_pct'])}.",
                    [cite(prose.rate(s["in_rate_bytes_per_s"]), s), cite(f"{s['buffer_fill_pct']:.0f} %", s)],
                )
            )
    res.headline = {
        x["label"]: f"{x['rate_mib_s']:.1f} MiB/s ({x['vs_baseline']:.0%} of {base})" for x in r.iter_rows(named=True)
    }
    for w in n.waits.iter_rows(named=True):  # a receiver's printed rate includes its wait for the sender
        res.headline[w["receiver"]] = (
            f"{w['corrected_rate_bytes_per_s'] / MiB:.1f} MiB/s without its {w['wait_s']:.1f} s start-up wait "
            f"(the sender's rate, by construction; printed {w['receiver_rate_bytes_per_s'] / MiB:.1f})"
        )
    slow = n.slowest
    res.verdict = (
        f"Slowest transport: {slow['label']} at {slow['rate_mib_s']:.1f} MiB/s, {slow['vs_baseline']:.1%} of {base}."
    )


def _wait(res: Result, w: dict, r: pl.DataFrame) -> None:
    """A receiver's start-up wait: its numbers from the two runs' summary lines (``r``: the rates, with their lines),
    each computed one with its arithmetic."""
    rx, tx = r.filter(pl.col("label") == w["receiver"]), r.filter(pl.col("label") == w["sender"])
    both = [*rx.to_dicts(), *tx.to_dicts()]
    res.findings.append(
        Finding(
            f"{w['receiver']}: its clock ran {w['wait_s']:.1f} s longer than {w['sender']} for the same "
            f"{prose.size(w['amount_bytes'])}; without that wait it received at "
            f"{prose.rate(w['corrected_rate_bytes_per_s'])} (printed: {prose.rate(w['receiver_rate_bytes_per_s'])}). "
            f"That is the amount over {w['sender']}'s time, so it equals the sender's rate by construction: it "
            "shows what the receiver's printed rate lost to waiting, not a second measurement of the transfer.",
            [
                cite(f"{w['wait_s']:.1f} s", both, "receiver's time - sender's time"),
                cite(prose.size(w["amount_bytes"]), rx),
                cite(prose.rate(w["corrected_rate_bytes_per_s"]), both, "receiver's amount / sender's time"),
                cite(prose.rate(w["receiver_rate_bytes_per_s"]), rx),
            ],
        )
    )


def analyse(con, sel: Selection, baseline_label: str = "") -> Result:
    """Notebook 06 on any selection: each mbuffer run's rate, relative to a baseline run (``baseline_label``, else
    the fastest), unit-less amounts resolved, receivers' start-up waits taken out. query -> compute -> findings."""
    res = Result.start(con, sel, measures.per_file(con, sel))
    frames = query(con, sel)
    if frames.summaries.is_empty():
        res.missing.append(missing(frames, sel))
        return res
    n = compute(frames, baseline_label)
    res.frames.update(rates=n.rates, status=n.status, waits=n.waits)
    res.file_ids = n.rates["file_id"].to_list() + n.status["file_id"].to_list()
    findings(res, n, sel)
    return res
