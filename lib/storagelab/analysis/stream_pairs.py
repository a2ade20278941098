"""Which logs of a selection saw the same stream (notebook 06; pure).

Two questions, answered from what the logs and their labels hold, never from a file's name:

* **A receiver and its sender** (two mbuffer runs at the two ends of a network). The ``NAME (sender)`` /
  ``NAME (receiver)`` label convention pairs them outright. Without it, a receiver is paired with the one
  non-receiver run that (1) moved the same amount (within ``TOLERANCE``), (2) ran at the same time (``overlaps``),
  and (3) can have sent it: its command label, when it has one, is not the receiver's and does not end writing to
  /dev/null (``-o /dev/null``, ``> /dev/null``, ``of=/dev/null``: such a run delivered nothing). Several such runs:
  not paired, and the candidates are named. Hosts are not compared: the two ends of a network transfer usually run
  on two machines.
* **A pv, dd or zfs receive line and an mbuffer run** in one pipeline: the same ``command`` label (one pipeline
  wrote both logs); without commands on both, the one run that moved the same amount, overlapped in time
  (``overlaps``) and has the same ``host`` label when both have one.

Times come from each file's modification time (``files.mtime_ns``: written when the tool printed its last line,
the end of its run) less the run's printed duration. A copy that resets modification times (``cp`` without
``-p``, a download, a checkout) makes them say nothing; the sentences say that this is the evidence used.
"""

from __future__ import annotations

import re

import polars as pl

TOLERANCE = 0.01  # two amounts within 1 % of each other: one stream (printed to 3 significant digits: 0.5 %)
SLACK_S = 0.1  # the printed durations' rounding (mbuffer: 0.1 s)


def same_amount(a: float | None, b: float | None, tolerance: float = TOLERANCE) -> bool:
    return bool(a and b and abs(a / b - 1) <= tolerance)


def span(row: dict, resolution_s: float = 0.0) -> tuple[float, float] | None:
    """(start, end) in seconds since the epoch: the file's modification time less the run's printed duration
    (``seconds``) and its ``resolution_s`` (a whole-second timer may have run up to 1 s more); None without both."""
    if row.get("mtime_ns") is None or row.get("seconds") is None:
        return None
    end = row["mtime_ns"] / 1e9
    return end - row["seconds"] - resolution_s, end


def overlaps(a: tuple[float, float] | None, b: tuple[float, float] | None, slack: float = SLACK_S) -> bool:
    """Each of ``a`` and ``b`` started before the other ended, give or take ``slack`` seconds."""
    return bool(a and b and a[0] <= b[1] + slack and b[0] <= a[1] + slack)


def _hosts_agree(a: dict, b: dict) -> bool:
    return not (a.get("host") and b.get("host")) or a["host"] == b["host"]


_TO_NULL = re.compile(r"(?:-o\s*/dev/null|>\s*/dev/null|\bof=/dev/null)\s*$")


def delivers_nothing(command: str | None) -> bool:
    """A pipeline whose last stage writes to /dev/null (mbuffer ``-o /dev/null``, ``> /dev/null``, dd
    ``of=/dev/null``): it sent its stream to no receiver. False when there is no command."""
    return bool(command and _TO_NULL.search(command.strip()))


def receiver_candidates(rx: dict, runs: list[dict]) -> list[dict]:
    """The runs of ``runs`` (non-receivers) that could have sent what ``rx`` received (module doc)."""
    out = []
    for tx in runs:
        if tx["label"] == rx["label"] or not same_amount(tx.get("resolved_bytes"), rx.get("resolved_bytes")):
            continue
        if (rx.get("command") and rx.get("command") == tx.get("command")) or delivers_nothing(tx.get("command")):
            continue  # the same pipeline is not the other end of a network; a run into /dev/null sent nothing
        if overlaps(span(tx), span(rx)):
            out.append(tx)
    return out


def receiver_pairs(r: pl.DataFrame) -> pl.DataFrame:
    """One row per receiver of ``r`` (``transports.roles`` rows: label, receiver, paired, pair, role, amounts, times):
    its sender (label) or none, how the pairing was made, and the candidates when there were several."""
    rows = r.to_dicts()
    by_pair = {x["pair"]: x["label"] for x in rows if x["role"] == "sender"}
    taken = {by_pair[x["pair"]] for x in rows if x["paired"]}
    senders = [x for x in rows if not x["receiver"] and x["label"] not in taken]
    out = []
    for rx in (x for x in rows if x["receiver"]):
        if rx["paired"]:
            out.append({"receiver": rx["label"], "sender": by_pair[rx["pair"]], "how": "label", "candidates": []})
            continue
        found = receiver_candidates(rx, senders)
        sender = found[0]["label"] if len(found) == 1 else None
        how = "stream" if sender else ("several" if found else "none")
        out.append({"receiver": rx["label"], "sender": sender, "how": how, "candidates": [x["label"] for x in found]})
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "receiver": pl.String,
        "sender": pl.String,
        "how": pl.String,
        "candidates": pl.List(pl.String),
    }
    return pl.DataFrame(out, schema=schema)


def line_candidates(line: dict, runs: list[dict]) -> tuple[list[dict], str]:
    """The mbuffer runs (``runs``: rates rows) of the same pipeline as a pv/dd/receive ``line``, and the evidence:
    ``command`` (both have the same command label) or ``stream`` (module doc); ([], "") for none."""
    if line.get("command"):
        same = [m for m in runs if m.get("command") == line["command"]]
        if same or all(m.get("command") for m in runs):
            return same, "command" if same else ""
    found = [
        m
        for m in runs
        if same_amount(m.get("resolved_bytes"), line.get("bytes"))
        and overlaps(span(line, line.get("resolution_s") or 0.0), span(m))
        and _hosts_agree(line, m)
        and not (line.get("command") and m.get("command"))
    ]
    return found, "stream" if found else ""
