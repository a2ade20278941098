"""zfs send transports from mbuffer summaries (notebook 06).

mbuffer of 2008 prints "MB/s" for values that are MiB/s (its kb2str divides by 1024; docs/formats/zfs-facts.md F21),
and the parser stores bytes and bytes/s. When the amount is exactly 10000 of a unit, that kb2str
prints no unit letter (``1e+04 Byte``), so the stored amount is wrong by a power of 1024; the
printed rate and time still hold, and the power that brings the amount in line with rate x time
recovers it (``resolve_unitless``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from ..units import MiB
from . import mbuffer_fill, measures, prose, stream_pairs, transfer_tools, transport_sources
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
_PAIR_SCHEMA = {"label": pl.String, "sender_label": pl.String}


def receiver_waits(rates_df: pl.DataFrame, pair_of: dict[str, str] | None = None) -> pl.DataFrame:
    """Pairs of a receiver and its sender (``pair_of``: receiver label -> sender label, ``stream_pairs``; by default
    the '<name> (sender...)' / '<name> (receiver...)' label convention) that moved the same amount (within 1 %): the
    receiver's clock ran ``wait_s`` longer (it started before data arrived); ``corrected_rate_bytes_per_s`` is the
    receiver's rate without that wait."""
    df = rates_df.with_columns(role=pl.col("label").str.extract(_ROLE, 1), pair=pl.col("label").str.replace(_ROLE, ""))
    if pair_of is None:
        tx, rx = df.filter(pl.col("role") == "sender"), df.filter(pl.col("role") == "receiver")
        both = rx.join(tx, on="pair", suffix="_tx")
    else:
        keys = pl.DataFrame({"label": list(pair_of), "sender_label": list(pair_of.values())}, schema=_PAIR_SCHEMA)
        both = df.join(keys, on="label").join(df, left_on="sender_label", right_on="label", suffix="_tx")
        both = both.with_columns(label_tx=pl.col("sender_label"))
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
    status_lines: pl.DataFrame  # every status line of each run, in order (measures.mbuffer_status_lines)
    tools: transfer_tools.ToolFrames | None = None  # pv, dd, zfs receive -v lines and zfs send -v headers


@dataclass
class TransportNumbers:
    rates: pl.DataFrame  # mbuffer.rates + vs_baseline, fastest first
    status: pl.DataFrame
    waits: pl.DataFrame  # receiver_waits
    fill: pl.DataFrame  # mbuffer_fill.per_transfer: where each run was limited, from its steady status lines
    status_lines: pl.DataFrame  # every status line (TransportFrames.status_lines)
    baseline_label: str  # the run the others are relative to
    baseline_rate_bytes_per_s: float
    asked_baseline: str  # the label asked for ("" when none)
    slowest: dict | None  # the slowest compared run of ``rates`` that is no receiver (None: there is none)
    baseline_why: str = ""  # how the baseline was chosen (transport_sources.choose_baseline)
    pairs: pl.DataFrame | None = None  # stream_pairs.receiver_pairs: each receiver's sender and how it was found
    tools: pl.DataFrame | None = None  # transfer_tools.compute: pv/dd/zfs receive lines and their mbuffer runs

    @property
    def baseline_asked_and_missing(self) -> bool:
        return bool(self.asked_baseline) and self.asked_baseline != self.baseline_label


def query(con, sel: Selection) -> TransportFrames:
    summaries, status = measures.mbuffer_frames(con, sel)
    (failed,) = con.execute("SELECT count(*) FROM ingest_errors").fetchone()
    return TransportFrames(
        summaries, status, failed, measures.mbuffer_status_lines(con, sel), transfer_tools.query(con, sel)
    )


_RECEIVER_WORD = re.compile(r"\breceiver\b", re.I)
_LISTENS = re.compile(r"^\s*(?:(?:nc|netcat)\b.*\s-l\b|socat\b.*LISTEN|mbuffer\b.*\s-I\s)")


def roles(r: pl.DataFrame) -> pl.DataFrame:
    """``r`` with ``role`` ('sender'/'receiver' of the '<name> (sender)' / '<name> (receiver)' convention), ``pair``
    (the name without the role), ``receiver`` (a receiver by that convention, by its label's word 'receiver' or by a
    command whose first stage listens on the network) and ``paired`` (a receiver with a sender of the same name)."""
    commands = r["command"].to_list() if "command" in r.columns else [None] * r.height
    listens = [bool(c and _LISTENS.match(transport_sources.stages(c)[0])) for c in commands]
    out = r.with_columns(
        role=pl.col("label").str.extract(_ROLE, 1), pair=pl.col("label").str.replace(_ROLE, "")
    ).with_columns(
        receiver=(pl.col("role") == "receiver").fill_null(False)
        | pl.col("label").map_elements(lambda x: bool(_RECEIVER_WORD.search(x)), return_dtype=pl.Boolean)
        | pl.Series(listens, dtype=pl.Boolean)
    )
    senders = set(out.filter(pl.col("role") == "sender")["pair"].to_list())
    return out.with_columns(paired=(pl.col("role") == "receiver") & pl.col("pair").is_in(list(senders)))


def compute(frames: TransportFrames, baseline_label: str = "") -> TransportNumbers:
    """Rates relative to a baseline of the same source (``transport_sources``: the run labelled ``baseline_label``
    when there is exactly one, else the run of the commonest source with no transport); runs of another source get
    no share (``vs_baseline`` null); receivers are marked (``roles``) and never the slowest transport."""
    r = roles(rates(frames.summaries))
    pairs = stream_pairs.receiver_pairs(r)
    pair_of = {x["receiver"]: x["sender"] for x in pairs.iter_rows(named=True) if x["sender"]}
    cands = {x["receiver"]: x["candidates"] for x in pairs.iter_rows(named=True)}
    r = r.with_columns(
        paired=pl.col("label").is_in(list(pair_of)),
        pair_candidates=pl.Series([cands.get(x, []) for x in r["label"]], dtype=pl.List(pl.String)),
    )
    tools = transfer_tools.compute(frames.tools, r) if frames.tools else pl.DataFrame()
    heard = transfer_tools.run_sources(tools, frames.tools.headers, r) if frames.tools else {}
    r = _sources_heard(transport_sources.with_sources(r, pair_of), heard, pair_of)
    chosen, why = transport_sources.choose_baseline(r, baseline_label)
    base = r.filter(pl.col("label") == chosen).row(0, named=True)
    same = transport_sources.compared(r, base)
    r = r.with_columns(
        compared=same, vs_baseline=pl.when(same).then(pl.col("rate_bytes_per_s") / base["rate_bytes_per_s"])
    ).sort("rate_bytes_per_s", descending=True)
    ranked = r.filter(pl.col("compared") & ~pl.col("receiver") & (pl.col("label") != chosen))
    return TransportNumbers(
        rates=r,
        status=frames.status,
        waits=receiver_waits(r, pair_of),
        fill=mbuffer_fill.per_transfer(frames.status_lines),
        status_lines=frames.status_lines,
        baseline_label=chosen,
        baseline_rate_bytes_per_s=base["rate_bytes_per_s"],
        asked_baseline=baseline_label,
        slowest=ranked.row(-1, named=True) if ranked.height else None,
        baseline_why=why,
        pairs=pairs,
        tools=tools,
    )


def _sources_heard(r: pl.DataFrame, heard: dict[str, tuple[str, str]], pair_of: dict[str, str]) -> pl.DataFrame:
    """``r`` with the source a zfs send -v header or zfs receive -v line names (``heard``: label -> (source, from))
    in place of the command label's, a paired receiver taking its sender's, and ``source_from`` saying which."""
    own = {x["label"]: (x["source"], "command label" if x["source"] else None) for x in r.iter_rows(named=True)}
    own.update(heard)
    for rx, tx in pair_of.items():
        if rx not in heard and tx in own and own[tx][0]:
            own[rx] = (own[tx][0], f"its sender's {own[tx][1]}")
    labels = r["label"].to_list()
    return r.with_columns(
        source=pl.Series([own[x][0] for x in labels], dtype=pl.String),
        source_from=pl.Series([own[x][1] for x in labels], dtype=pl.String),
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


def _left_out(f: dict) -> str:
    """The status lines a fill verdict leaves out, by number (``f``: a row of ``mbuffer_fill.per_transfer``)."""
    n, end = f["n_lines"], f["end_first"]
    drain = (max(end, 1) + 1, n)
    parts = ["the start (line 1, also the last line with input)" if end == 1 else "the start (line 1)"]
    if end > 1:
        parts.append(f"the last line with input, in which the input ended (line {end})")
    if drain[0] <= drain[1]:
        span = f"line {drain[0]}" if drain[0] == drain[1] else f"lines {drain[0]}-{drain[1]}"
        parts.append(f"the drain after it (`in @ 0`, {span})")
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def _fill_sentence(f: dict, lines: pl.DataFrame) -> Finding:
    """Where one transfer was limited, from the fill of its steady status lines (``lines``: that file's lines)."""
    a, b, n = f["steady_first"], f["steady_last"], f["n_lines"]
    steady = lines.filter(pl.col("seq").is_between(a - 1, b - 1))
    which = f"status lines {a}-{b} of {n}; left out: {_left_out(f)}"
    if not f["limit"]:
        shown = "; ".join(
            f"line {x['seq'] + 1}: in {x['in_rate_bytes_per_s'] / MiB:.1f} MiB/s, out "
            f"{x['out_rate_bytes_per_s'] / MiB:.1f} MiB/s, {x['buffer_fill_pct']:.0f} % full"
            for x in lines.head(3).iter_rows(named=True)
            if x["in_rate_bytes_per_s"] is not None and x["out_rate_bytes_per_s"] is not None
        )
        return Finding(
            f"{f['label']}: no verdict on where the transfer was limited: {f['n_steady']} of its {n} status line(s) "
            f"from its steady part, {mbuffer_fill.MIN_STEADY} needed (left out: {_left_out(f)})."
            + (f" Its lines: {shown}." if shown else "")
            + " A transfer that lasts longer prints more status lines.",
            [cite(f"{n} status line(s)", lines)],
        )
    if f["limit"] == "consumer":
        how = f"at least {mbuffer_fill.FULL_PCT:.0f} % full on {f['n_full']} of its {f['n_steady']} steady"
        verdict = "the consumer after mbuffer was the limit"
    elif f["limit"] == "producer":
        how = f"at most {mbuffer_fill.EMPTY_PCT:.0f} % full on {f['n_empty']} of its {f['n_steady']} steady"
        verdict = "the producer before mbuffer was the limit"
    else:
        how = (
            f"{f['min_pct']:.0f}-{f['max_pct']:.0f} % full ({f['n_full']} full, {f['n_empty']} empty) over its "
            f"{f['n_steady']} steady"
        )
        verdict = "neither side was the limit throughout"
    return Finding(
        f"{f['label']}: buffer {how} status lines ({which}): {verdict}.",
        [cite(f"{f['n_steady']} steady", steady, "status lines between the start and the end of the input")],
    )


def _share(x: dict, base: str, based: pl.DataFrame) -> Finding:
    """One compared run's rate and share of the baseline; a share above 100 % is flagged, a receiver not paired
    with its sender is said to be one."""
    pct = f"{x['vs_baseline']:.1%}"
    text = f"{x['label']}: {prose.rate(x['rate_bytes_per_s'])}, {pct} of the baseline"
    if x["source"] is None and based["source"][0] is not None:
        amount = based["resolved_bytes"][0]
        text += (
            " (its source is not known from its command label"
            + (
                ""
                if transport_sources.same_amount(x["resolved_bytes"], amount)
                else f", and it moved {prose.size(x['resolved_bytes'])}, the baseline {prose.size(amount)}"
            )
            + ": compared as if it moved the baseline's stream)"
        )
    if x["vs_baseline"] > 1:
        src = based["source"][0]
        said = [f"`{src}`"] * bool(src) + ["no transport"] * bool(based["no_transport"][0])
        text += (
            f". **Above 100 %**: faster than the baseline {base}"
            + (f" ({', '.join(said)})" if said else "")
            + ": that baseline is not comparable for it (the data show that the baseline was slower, not why)"
        )
    if x["receiver"] and not x["paired"]:
        cands = x.get("pair_candidates") or []
        why = (
            f"several runs could be its sender ({prose.listing(cands)}: the same amount, at its time)"
            if cands
            else "no run of the same amount ran at its time and could have sent it"
        )
        text += (
            f". It is a receiver (its label or command says so) that could not be paired with a sender ({why}; label "
            "the two 'NAME (sender)' and 'NAME (receiver)'): its printed rate includes any time it waited for its "
            "sender, so it is not ranked"
        )
    return Finding(
        text + ".",
        [cite(prose.rate(x["rate_bytes_per_s"]), x), cite(pct, [x, *based.to_dicts()], f"its rate / {base}'s")],
    )


def _baseline_sentences(res: Result, n: TransportNumbers, sel: Selection) -> pl.DataFrame:
    """The baseline, how it was chosen, and the runs of another source (no share); returns the baseline's row."""
    base, r = n.baseline_label, n.rates
    if n.baseline_asked_and_missing:
        res.findings.append(f"No single run labelled '{n.asked_baseline}' in the selection: baseline chosen below.")
    based = r.filter(pl.col("label") == base)
    src = based["source"][0]
    res.findings.append(
        Finding(
            f"{r.height} mbuffer run(s) for {sel.describe()}; baseline {base} at "
            f"{prose.rate(n.baseline_rate_bytes_per_s)} ({n.baseline_why}"
            + (f"; source `{src}`" if src and src not in n.baseline_why else "")
            + (f", from its {based['source_from'][0]}" if src and based["source_from"][0] != "command label" else "")
            + ").",
            [cite(prose.rate(n.baseline_rate_bytes_per_s), based)],
        )
    )
    other = r.filter(~pl.col("compared"))
    if other.height:
        items = [
            f"{x['label']} (`{x['source']}`, {prose.rate(x['rate_bytes_per_s'])})" for x in other.iter_rows(named=True)
        ]
        res.findings.append(
            Finding(
                f"Not compared with the baseline, another source than `{src}`: {prose.listing(items, limit=20)}; "
                "a share of another stream's rate would not say what the transport costs.",
                [cite(prose.rate(x["rate_bytes_per_s"]), x) for x in other.iter_rows(named=True)],
            )
        )
    return based


def findings(res: Result, n: TransportNumbers, sel: Selection) -> None:
    """Sentences, headline and verdict from the numbers only."""
    base, r = n.baseline_label, n.rates
    based = _baseline_sentences(res, n, sel)
    for x in r.filter(pl.col("compared") & (pl.col("label") != base)).iter_rows(named=True):
        res.findings.append(_share(x, base, based))
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
    for p in n.pairs.filter(pl.col("how") == "stream").iter_rows(named=True) if n.pairs is not None else ():
        res.findings.append(_stream_pair(p, r))
    for w in n.waits.iter_rows(named=True):
        _wait(res, w, r)
    if n.tools is not None and n.tools.height:
        res.findings.extend(transfer_tools.findings(n.tools))
    for f in n.fill.iter_rows(named=True):
        res.findings.append(_fill_sentence(f, n.status_lines.filter(pl.col("file_id") == f["file_id"])))
    _headline(res, n)


def _headline(res: Result, n: TransportNumbers) -> None:
    base = n.baseline_label
    res.headline = {
        x["label"]: f"{x['rate_mib_s']:.1f} MiB/s ({x['vs_baseline']:.0%} of {base})"
        if x["compared"]
        else f"{x['rate_mib_s']:.1f} MiB/s (another source: {x['source']})"
        for x in n.rates.iter_rows(named=True)
    }
    for w in n.waits.filter(pl.col("wait_s") > 0).iter_rows(named=True):  # a receiver's rate includes its wait
        res.headline[w["receiver"]] = (
            f"{w['corrected_rate_bytes_per_s'] / MiB:.1f} MiB/s without its {w['wait_s']:.1f} s start-up wait "
            f"(the sender's rate, by construction; printed {w['receiver_rate_bytes_per_s'] / MiB:.1f})"
        )
    slow = n.slowest
    above = n.rates.filter(pl.col("compared") & (pl.col("vs_baseline") > 1)).height
    res.verdict = (
        f"Slowest transport: {slow['label']} at {slow['rate_mib_s']:.1f} MiB/s, {slow['vs_baseline']:.1%} of {base}"
        " (receivers not ranked)."
        if slow
        else f"No transport to rank against {base}."
    ) + (f" {above} run(s) above 100 % of {base}: that baseline is not comparable for them." if above else "")


def _stream_pair(p: dict, r: pl.DataFrame) -> Finding:
    """A receiver paired with its sender by the stream (``stream_pairs``), the evidence said, never a cause."""
    rx = r.filter(pl.col("label") == p["receiver"]).row(0, named=True)
    tx = r.filter(pl.col("label") == p["sender"]).row(0, named=True)
    return Finding(
        f"{p['receiver']} is paired with {p['sender']} by the stream, not by their labels: the same amount "
        f"({prose.size(rx['resolved_bytes'])} and {prose.size(tx['resolved_bytes'])}, within 1 %), runs that overlap "
        f"in time ({p['sender']}'s {tx['seconds']:.1f} s and {p['receiver']}'s {rx['seconds']:.1f} s, each ending at "
        "its file's modification time; copies that reset modification times void this), and no other run that could "
        "have sent it (a run whose command writes to /dev/null sent nothing). A pairing the data allow, not a proof: label the two "
        "'NAME (sender)' and 'NAME (receiver)' to state it.",
        [cite(prose.size(rx["resolved_bytes"]), rx), cite(prose.size(tx["resolved_bytes"]), tx)],
    )


def _wait(res: Result, w: dict, r: pl.DataFrame) -> None:
    """A receiver's start-up wait: its numbers from the two runs' summary lines (``r``: the rates, with their lines),
    each computed one with its arithmetic."""
    rx, tx = r.filter(pl.col("label") == w["receiver"]), r.filter(pl.col("label") == w["sender"])
    both = [*rx.to_dicts(), *tx.to_dicts()]
    if w["wait_s"] <= 0:
        res.findings.append(
            Finding(
                f"{w['receiver']}: its clock ran {-w['wait_s']:.1f} s shorter than {w['sender']}'s for the same "
                f"{prose.size(w['amount_bytes'])}: its printed rate ({prose.rate(w['receiver_rate_bytes_per_s'])}) "
                "holds no start-up wait to take out; the data show the two times, not why they differ.",
                [cite(f"{-w['wait_s']:.1f} s", both, "sender's time - receiver's time")],
            )
        )
        return
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
        if frames.tools is not None and frames.tools.lines.height:  # pv, dd, zfs receive lines without mbuffer
            tools = transfer_tools.compute(frames.tools, pl.DataFrame())
            res.frames["tools"] = tools
            res.file_ids = tools["file_id"].to_list()
            res.findings.extend(transfer_tools.findings(tools))
        return res
    n = compute(frames, baseline_label)
    res.frames.update(rates=n.rates, status=n.status, waits=n.waits, fill=n.fill)
    if n.tools is not None and n.tools.height:
        res.frames["tools"] = n.tools
    res.file_ids = n.rates["file_id"].to_list() + n.status["file_id"].to_list()
    res.file_ids += n.tools["file_id"].to_list() if n.tools is not None and n.tools.height else []
    findings(res, n, sel)
    return res
