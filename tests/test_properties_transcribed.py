"""Property tests for the transcribed-table parser: generated layout-sweep tables (the v1 CSV format of
data/raw/thumper-x4500/layout-sweep.csv) parse to their values, TB as powers of 1000 and mbuffer MB/s as
MiB/s, with blank and comment lines, quoting, padding and CRLF line ends; a repeated row is refused."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from conftest import props
from hypothesis import given
from hypothesis import strategies as st

from storagelab.errors import ParseError
from storagelab.parsers import parse_bytes, transcribed

PROPS = props(100)
HEADER = ["test", "layout", "vdev_count", "vdev_widths", "vdev_type", "size_tb", "speed_mb_per_s", "speed_text"]
MiB = 1024**2


def label(widths: list[int]) -> str:
    out, k = [], 0
    while k < len(widths):
        n = 1
        while k + n < len(widths) and widths[k + n] == widths[k]:
            n += 1
        out.append(f"{n}x{widths[k]}")
        k += n
    return "+".join(out)


decimal_text = st.integers(0, 10**6).flatmap(lambda v: st.sampled_from([str(v), f"{v / 10:.1f}", f"{v / 100:.2f}"]))


@st.composite
def table_row(draw):
    widths = draw(st.lists(st.integers(1, 48), min_size=1, max_size=6))
    measured = draw(st.integers(0, 4)) > 0
    size = (
        draw(decimal_text.filter(lambda s: Decimal(s) > 0))
        if measured
        else draw(st.sampled_from(["0", "0.0"]) | decimal_text)
    )
    speed = draw(decimal_text) if measured else ""
    return {
        "test": draw(st.sampled_from(["zfs_send_read", "dd_write", "scrub_2"])),
        "widths": widths,
        "vdev_type": draw(st.sampled_from(["single", "mirror", "raidz1", "raidz2", "raidz3", "draid"])),
        "size": size,
        "speed": speed,
        "measured": measured,
    }


@PROPS
@given(
    st.lists(table_row(), min_size=1, max_size=12, unique_by=lambda r: (r["test"], label(r["widths"]), r["vdev_type"])),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_layout_tables_round_trip(rows, quote, pad, comments, crlf):
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL if quote else csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerow(HEADER)
    for r in rows:
        cells = [
            r["test"],
            label(r["widths"]),
            str(len(r["widths"])),
            " ".join(map(str, r["widths"])),
            r["vdev_type"],
            r["size"],
            r["speed"],
            r["speed"] if r["measured"] else "---",
        ]
        writer.writerow([f" {c} " if pad and not quote else c for c in cells])
    body = buf.getvalue().splitlines()
    if comments:
        body = body[:1] + ["", "# zfs send read, lines 59-209"] + body[1:] + ["", "# end"]
    text = "\n".join(["# storagelab transcribed table v1: 001_0fa8eb419950c07e.txt lines 59-209", *body]) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    parsed, mod = parse_bytes(text.encode())
    assert mod is transcribed
    got = parsed.rows("thumper_layouts")
    assert len(got) == len(rows)
    for g, r in zip(got, rows, strict=True):
        w = r["widths"]
        assert (g["test"], g["layout"], g["vdev_count"], g["vdev_widths"], g["vdev_type"]) == (
            r["test"],
            label(w),
            len(w),
            " ".join(map(str, w)),
            r["vdev_type"],
        )
        assert (g["disks"], g["vdev_width_min"], g["vdev_width_max"]) == (sum(w), min(w), max(w))
        assert g["measured"] == r["measured"]
        if r["measured"] or Decimal(r["size"]) != 0:
            assert g["size_bytes"] == int(Decimal(r["size"]) * 10**12)  # TB are powers of 1000
        else:
            assert g["size_bytes"] is None
        if r["measured"]:
            assert g["speed_bytes_per_s"] == pytest.approx(float(Decimal(r["speed"]) * MiB), rel=1e-12)
            assert g["speed_text"] == r["speed"]
        else:
            assert g["speed_bytes_per_s"] is None and g["speed_text"] == "---"
        assert g["source"] == "001_0fa8eb419950c07e.txt lines 59-209"
    # the same row twice is an error naming the second line
    dup = text.rstrip("\r\n").splitlines()
    data_lines = [k for k, ln in enumerate(dup) if ln and not ln.startswith("#")][1:]
    dup.append(dup[data_lines[0]])
    with pytest.raises(ParseError) as e:
        transcribed.parse("\n".join(dup) + "\n")
    assert e.value.line == len(dup) and "duplicate" in e.value.message


def test_regression_size_tb_converts_exactly():
    """size_tb went through a float: 8302.2 TB became 8302200000000001 bytes (the decimal is exact)."""
    text = (
        "# storagelab transcribed table v1: hand-made\n"
        "test,layout,vdev_count,vdev_widths,vdev_type,size_tb,speed_mb_per_s,speed_text\n"
        "dd_write,1x46,1,46,raidz1,8302.2,95.2,95.2\n"
        "dd_write,2x23,2,23 23,raidz1,0.000000000001,95.2,95.2\n"
    )
    a, b = transcribed.parse(text).rows("thumper_layouts")
    assert (a["size_bytes"], b["size_bytes"]) == (8_302_200_000_000_000, 1)
