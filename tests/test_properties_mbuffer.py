"""Property tests for the mbuffer parser: generated ``summary:`` and status lines parse to their values.

The generator follows mbuffer.c ``kb2str`` (KiB in; divide by 1024 while above 10000; ``%4.1f`` below
100, ``%4.0f`` after rint below 10000, and ``%5.lg`` with no unit letter when the value is exactly
10000 of a unit), ``summary()`` (``Nx`` outputs, the three duration forms, ``, Nx empty``/``full``) and
``statusThread()`` (``in @ ..., out @ ..., [N x ]... total, buffer P% full[, D% done]``), in the releases
before 2018 (``MB/s``, ``GByte``) and after (``MiB/s``, ``GiByte``), as stderr (``\\r``-separated) or as a
``-l`` log (``mbuffer: `` prefix, one record per line).
"""

from __future__ import annotations

from conftest import props
from hypothesis import given
from hypothesis import strategies as st

from storagelab.parsers import mbuffer

PROPS = props(100)


def kb2str(kib: float, iec: bool) -> tuple[str, float, float, bool]:
    """mbuffer kb2str: text, the value it prints in bytes, its precision, and whether a unit letter was printed."""
    dims = "kMGT"
    i = 0
    v = kib
    while v > 10000.0:
        v /= 1024.0
        i += 1
    unit = 1024.0 ** (i + 1)
    letter = dims[i] + ("i" if iec else "")
    if v < 100:
        t = "%4.1f" % v
        return f"{t} {letter}", float(t) * unit, 0.05 * unit * (1 + 1e-9), True
    if v < 10000:
        v = float(round(v))  # rint: round half to even, like Python's round
        t = "%4.0f" % v
        return f"{t} {letter}", float(t) * unit, 0.5 * unit * (1 + 1e-9), True
    return "%5.0g " % v, float("%5.0g" % v), 0.0, False  # exactly 10000 of a unit: the unit is lost


def duration(secs: float, new: bool) -> tuple[str, float]:
    h = int(secs) // 3600
    m = (int(secs) - h * 3600) // 60
    s = secs - m * 60 - h * 3600
    st_ = "%04.1f" % s if new and (h or m) else "%4.1f" % s
    if new:
        text = f"{h}h {m:02d}min {st_}sec" if h else (f"{m:2d}min {st_}sec" if m else f"{st_}sec")
    else:
        text = f"{h} h {m} min {st_} sec" if h else (f"{m} min {st_} sec" if m else f"{st_} sec")
    return text, (h * 3600 + m * 60 + float(st_)) * 1e9


amounts = st.one_of(st.floats(1, 4e10), st.sampled_from([10000.0, 10000.0 * 1024, 10000.0 * 1024**2, 99.95, 9999.5]))


@st.composite
def status(draw, iec: bool, outputs: int):
    in_kib, out_kib, total = draw(amounts), draw(amounts), draw(amounts)
    fill = draw(st.floats(0, 100))
    done = draw(st.none() | st.floats(0, 100))
    (ti, vi, ei, li), (to, vo, eo, lo), (tt, vt, et, lt) = (kb2str(x, iec) for x in (in_kib, out_kib * outputs, total))
    text = (
        f"in @ {ti}B/s, out @ {to}B/s, " + (f"{outputs} x " if outputs != 1 else "") + f"{tt}B total, "
        f"buffer {fill:3.0f}% full" + ("" if done is None else f", {done:3.0f}% done")
    )
    letters = [x for x in (li, lo, lt) if x]
    want = {
        "in_rate_bytes_per_s": vi,
        "out_rate_bytes_per_s": vo,
        "outputs": outputs,
        "total_bytes": vt,
        "buffer_fill_pct": float("%.0f" % fill),
        "done_pct": None if done is None else float("%.0f" % done),
        "units_binary": (iec if letters else None),
        "suspect": not (li and lo and lt),
    }
    truth = ((vi, in_kib * 1024, ei), (vo, out_kib * outputs * 1024, eo), (vt, total * 1024, et))
    return text, want, truth


@st.composite
def summary(draw, iec: bool, new_time: bool, outputs: int):
    kib = draw(amounts)
    secs = draw(st.floats(0.1, 20000))
    tn, vn, en, ln = kb2str(kib, iec)
    dt, dns = duration(secs, new_time)
    av = kib / secs * outputs
    ta, va, ea, la = kb2str(av, iec)
    empty, full = draw(st.integers(0, 99)), draw(st.integers(0, 99))
    text = (
        "summary: "
        + (f"{outputs}x " if outputs > 1 else "")
        + f"{tn}Byte in {dt} - average of {ta}B/s"
        + (f", {empty}x empty" if empty else "")
        + (f", {full}x full" if full else "")
    )
    letters = [x for x in (ln, la) if x]
    want = {
        "bytes": vn,
        "duration_ns": dns,
        "rate_bytes_per_s": va,
        "outputs": outputs,
        "empty_count": empty or None,
        "full_count": full or None,
        "units_binary": iec if letters else None,
        "suspect": not (ln and la),
        "computed_rate_bytes_per_s": vn * outputs / (dns / 1e9) if dns else None,
    }
    return text, want, ((vn, kib * 1024, en), (va, av * 1024, ea))


@PROPS
@given(st.booleans(), st.booleans(), st.sampled_from([1, 1, 2, 3]), st.sampled_from(["stderr", "log"]), st.data())
def test_mbuffer_status_and_summary_round_trip(iec, new_time, outputs, layout, data):
    statuses = data.draw(st.lists(status(iec, outputs), max_size=6))
    summ = data.draw(summary(iec, new_time, outputs))
    if layout == "stderr":
        text = "".join("\r" + s for s, _, _ in statuses) + ("\n" if statuses else "") + summ[0] + "\n"
    else:
        lines = [f"mbuffer: {s}" for s, _, _ in statuses]
        lines.insert(len(lines) // 2, "mbuffer: warning: No controlling terminal and no autoloader command specified.")
        text = "\n".join(lines + [summ[0]]) + "\n"
    parsed = mbuffer.parse(text)
    got = parsed.rows("mbuffer_status")
    assert len(got) == len(statuses)
    for k, (g, (_, want, truth)) in enumerate(zip(got, statuses, strict=True)):
        assert g["seq"] == k
        for col, v in want.items():
            assert g[col] == v, f"status {k} {col}: {g[col]!r} != {v!r}"
        for printed, real, tol in truth:
            assert tol == 0 or abs(printed - real) <= tol
    (g,) = parsed.rows("mbuffer_summaries")
    for col, v in summ[1].items():
        if isinstance(v, float):
            assert g[col] == v or abs(g[col] - v) <= 1e-9 * abs(v), f"summary {col}: {g[col]!r} != {v!r}"
        else:
            assert g[col] == v, f"summary {col}: {g[col]!r} != {v!r}"
    for printed, real, tol in summ[2]:
        assert tol == 0 or abs(printed - real) <= tol
    assert bool([w for w in parsed.warnings if "without a unit letter" in w]) == summ[1]["suspect"]
