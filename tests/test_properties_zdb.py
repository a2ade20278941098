"""Property tests for the zdb parser: generated ``zdb -b/-bb/-bbb``, ``-S`` and ``-D/-DD`` output parses
to the values it was generated from.

The generator follows zdb.c (``dump_block_stats``, ``dump_size_histograms``, ``dump_simulated_ddt``,
``dump_ddt``) and libzutil (``zfs_nicenum_format``, ``zpool_dump_ddt``) as docs/formats/log-formats.md D describes
them: the 0.6/0.7 and 0.8+ summary layouts, optional ``ganged count``/``bp deduped``/``bp cloned``/class
lines, ``nan%`` for classes without space, embedded and dittoed lines present only when non-zero, the
tab-separated ``-bb`` table (or tabs expanded by a paste) with ``-bbb`` level rows and ganged counts,
the block size histogram, ``\\r`` progress output glued to stdout lines, and DDT histograms with
nicenum/nicebytes cells.
"""

from __future__ import annotations

import math

from conftest import props
from hypothesis import given
from hypothesis import strategies as st

from storagelab.parsers import zdb

PROPS = props(80)
UNITS = ["", "K", "M", "G", "T", "P", "E"]


def nicenum(num: int, nbytes: bool = False) -> str:
    """libzutil zfs_nicenum_format (ZFS_NICENUM_1024, or ZFS_NICENUM_BYTES with ``nbytes``)."""
    n, index = num, 0
    while n >= 1024 and index < 6:
        n //= 1024
        index += 1
    u = ("B" if nbytes else "") if index == 0 else UNITS[index]
    if index == 0 or num % 1024**index == 0:
        return f"{n}{u}"
    for i in (2, 1, 0):
        s = "%.*f%s" % (i, num / 1024**index, u)
        if len(s) <= 5:
            return s
    return s


def nice_value(tok: str) -> tuple[int, float]:
    """What a nicenum cell means (rounded to an integer, as stored) and its precision vs the true number."""
    t = tok.rstrip("B")
    index = UNITS.index(t[-1]) if t[-1:].isalpha() else 0
    digits = t.rstrip("KMGTPE")
    decimals = len(digits.partition(".")[2])
    return round(float(digits) * 1024**index), (0.5 * 10**-decimals * 1024**index + 0.5) * (1 + 1e-12)


magnitude = st.integers(0, 17).flatmap(lambda e: st.integers(10**e, 10 ** (e + 1) - 1) if e else st.integers(0, 9))


# ----------------------------------------------------------------------------- zdb -b summary


@st.composite
def summary_spec(draw):
    era = draw(st.sampled_from(["pre-dedup", "0.6/0.7", "0.8+", "2.1+", "2.2+", "2.4+"]))
    count = draw(st.integers(1, 10**9))
    lsize, psize, asize = (draw(st.integers(0, 10**15)) for _ in range(3))
    spec = {
        "era": era,
        "count": count,
        "lsize": lsize,
        "psize": psize,
        "asize": asize,
        "ganged": draw(st.none() | st.integers(0, 10**6)) if era != "pre-dedup" else None,
        "deduped": None if era == "pre-dedup" else (draw(st.integers(0, 10**14)), draw(st.integers(0, 10**8))),
        "cloned": (draw(st.integers(0, 10**12)), draw(st.integers(0, 10**7))) if era in ("2.2+", "2.4+") else None,
        "embedded": draw(
            st.lists(st.tuples(st.integers(0, 2), st.integers(1, 10**7)), max_size=2, unique_by=lambda t: t[0])
        ),
        "ditto_vdev": draw(st.integers(0, 10**7)),
        "ditto_ms": draw(st.integers(0, 10**5)),
        "leak": draw(st.sampled_from(["none", "mismatch", "segments", "unchecked"])),
        "leak_bytes": draw(st.integers(-(10**9), 10**9).filter(bool)),
        "classes": [],
        "pool": draw(st.sampled_from([None, "tank", "raid1", "rpool/ROOT"])),
    }
    if era in ("pre-dedup", "0.6/0.7"):
        spec["classes"].append(("SPA allocated:", draw(st.integers(0, 10**15)), draw(st.floats(0, 100))))
    else:
        spec["classes"].append(("Normal class:", draw(st.integers(0, 10**15)), draw(st.floats(0, 100))))
        for label in ("Special class", "Dedup class"):
            if draw(st.booleans()):
                spec["classes"].append((label, draw(st.integers(0, 10**13)), draw(st.floats(0, 100) | st.just(None))))
        if era in ("2.1+", "2.2+", "2.4+"):
            spec["classes"].append(
                ("Embedded log class", draw(st.integers(0, 10**9)), draw(st.floats(0, 100) | st.just(None)))
            )
        if era == "2.4+":
            spec["classes"].append(
                ("Special embedded log", draw(st.integers(0, 10**9)), draw(st.floats(0, 100) | st.just(None)))
            )
    return spec


def ratio(a: int, b: int) -> tuple[str, float | None]:
    """A ``%6.2f`` ratio as zdb prints it (nan/inf when b is 0) and its stored value."""
    if b == 0:
        txt = "   nan" if a == 0 else "   inf"
        return txt, None
    txt = "%6.2f" % (a / b)
    return txt, float(txt)


def render_summary(spec: dict, progress: str) -> tuple[list[str], dict, list[dict]]:
    new = spec["era"] not in ("pre-dedup", "0.6/0.7")
    lines: list[str] = []
    if spec["pool"]:
        lines += [f"[root@host ~]# zdb -b {spec['pool']}", ""]
    lines += ["Traversing all blocks to verify nothing leaked ...", ""]
    glued_to_count = progress.endswith("  ")  # no '\r': the next stdout line is glued to the progress text
    row = {
        "bp_count": spec["count"],
        "ganged_count": spec["ganged"],
        "bp_logical_bytes": spec["lsize"],
        "bp_physical_bytes": spec["psize"],
        "bp_allocated_bytes": spec["asize"],
        "leaks": None,
        "leaked_bytes": None,
        "traversal_bytes": None,
        "alloc_bytes": None,
    }
    events = []
    if spec["leak"] == "none":
        lines += ["", "\tNo leaks (block sum matches space maps exactly)"]
        row.update(leaks="none", leaked_bytes=0)
        events.append("no_leaks")
    elif spec["leak"] in ("mismatch", "segments"):
        if spec["leak"] == "segments":
            lines.append(f"leaked space: vdev 0, offset 0x{abs(spec['leak_bytes']) * 512:x}, size 1024")
            events.append("leaked_space")
            row["leaks"] = "leaked"
        trav = spec["asize"]
        alloc = trav + spec["leak_bytes"]
        if alloc >= 0:
            lines.append(f"block traversal size {trav} != alloc {alloc} (leaked {spec['leak_bytes']})")
            row.update(leaks="leaked", leaked_bytes=spec["leak_bytes"], traversal_bytes=trav, alloc_bytes=alloc)
            events.append("size_mismatch")
    lines.append("")

    def label(text: str, value: int) -> str:
        return f"\t{text:<16s} {value:14d}" if new else f"\t{text:<14s} {value:10d}"

    if progress and not glued_to_count:
        lines[-1] = progress + lines[-1]
    c = spec["count"]
    lines.append((progress if glued_to_count else "") + label("bp count:", c))
    if spec["ganged"] is not None:
        lines.append(label("ganged count:", spec["ganged"]))
    lines.append(label("bp logical:", spec["lsize"]) + f"      avg: {spec['lsize'] // c:6d}")
    t_p, v_p = ratio(spec["lsize"], spec["psize"])
    lines.append(label("bp physical:", spec["psize"]) + f"      avg: {spec['psize'] // c:6d}     compression: {t_p}")
    t_a, v_a = ratio(spec["lsize"], spec["asize"])
    lines.append(label("bp allocated:", spec["asize"]) + f"      avg: {spec['asize'] // c:6d}     compression: {t_a}")
    row.update(
        bp_logical_avg_bytes=spec["lsize"] // c,
        bp_physical_avg_bytes=spec["psize"] // c,
        bp_allocated_avg_bytes=spec["asize"] // c,
        compression_physical=v_p,
        compression_allocated=v_a,
    )
    if spec["deduped"]:
        d, refs = spec["deduped"]
        t_d, v_d = ratio(d + spec["asize"], spec["asize"])
        lines.append(label("bp deduped:", d) + f"    ref>1: {refs:6d}   deduplication: {t_d}")
        row.update(bp_deduped_bytes=d, dedup_ref_gt1_count=refs, dedup_ratio=v_d)
    else:
        row.update(bp_deduped_bytes=None, dedup_ref_gt1_count=None, dedup_ratio=None)
    if spec["cloned"]:
        lines.append(label("bp cloned:", spec["cloned"][0]) + f"    count: {spec['cloned'][1]:6d}")
    row.update(
        bp_cloned_bytes=spec["cloned"][0] if spec["cloned"] else None,
        bp_cloned_count=spec["cloned"][1] if spec["cloned"] else None,
    )
    classes = []
    for name, alloc, used in spec["classes"]:
        used_txt = ("-nan" if alloc else " nan") if used is None else "%5.2f" % used
        lines.append(label(name, alloc) + f"     used: {used_txt}%")
        classes.append((name.rstrip(":").replace(" class", ""), alloc, None if used is None else float("%.2f" % used)))
    lines.append("")
    for t, n in spec["embedded"]:
        lines.append(f"\tadditional, non-pointer bps of type {t}: {n:10d}")
    row["embedded_bp_count"] = sum(n for _, n in spec["embedded"])
    if spec["ditto_vdev"]:
        lines.append(f"\tDittoed blocks on same vdev: {spec['ditto_vdev']}")
    if spec["ditto_ms"] and new:
        lines.append(f"\tDittoed blocks in same metaslab: {spec['ditto_ms']}")
    row["dittoed_same_vdev"] = spec["ditto_vdev"]
    row["dittoed_same_metaslab"] = spec["ditto_ms"] if new else None
    row["zfs_era"] = spec["era"]
    row["pool"] = spec["pool"].split("/")[0] if spec["pool"] else None
    return lines, row, [{"class": n, "allocated_bytes": a, "used_pct": u} for n, a, u in classes]


PROGRESS = st.sampled_from(
    [
        "",
        "loading concrete vdev 0, metaslab 14 of 15 ...\r",
        "loading concrete vdev 1, metaslab 3 of 15 ...\rloading concrete vdev 1, metaslab 4 of 15 ...\r",
        "loading space map for vdev 0 of 1, metaslab 9 of 116 ...\r",
        "\r 3.30G completed (  64MB/s) estimated time remaining: 0hr 00min 12sec        \r",
        "3.87T completed (3323MB/s) estimated time remaining: 277098hr 45min 20sec        \r",
        "\r17.0T completed (331016MB/s) estimated time remaining: 0hr 00min 00sec        ",
        "\r 320K completed (   0MB/s) estimated time remaining: 4294540182hr 4294967237min 4294967289sec  ",
    ]
)


@PROPS
@given(
    st.lists(summary_spec(), min_size=1, max_size=3),
    st.lists(PROGRESS, min_size=3, max_size=3),
    st.sampled_from(["tab", "spaces"]),
)
def test_zdb_b_summaries_round_trip(specs, progress, indent):
    lines, want_rows, want_classes = [], [], []
    pool = None
    for k, spec in enumerate(specs):
        text, row, classes = render_summary(spec, progress[k])
        pool = row["pool"] = row["pool"] or pool  # the last prompt line names the pool
        lines += text
        want_rows.append(row)
        want_classes += [dict(c, block_no=k + 1) for c in classes]
    if indent == "spaces":  # a paste with tabs expanded to 8 spaces
        lines = [ln.expandtabs(8) for ln in lines]
    parsed = zdb.parse("\n".join(lines) + "\n")
    got = parsed.rows("zdb_block_stats")
    assert len(got) == len(want_rows)
    for k, (g, w) in enumerate(zip(got, want_rows, strict=True)):
        assert g["block_no"] == k + 1
        for col, v in w.items():
            assert g[col] == v, f"block {k + 1} {col}: {g[col]!r} != {v!r}"
    got_classes = [
        {k: c[k] for k in ("block_no", "class", "allocated_bytes", "used_pct")} for c in parsed.rows("zdb_classes")
    ]
    assert got_classes == want_classes
    assert [e["block_no"] for e in parsed.rows("zdb_events")] == sorted(
        e["block_no"] for e in parsed.rows("zdb_events")
    )


# ----------------------------------------------------------------------------- zdb -bb / -bbb table

TYPES = [
    "object directory",
    "object array",
    "packed nvlist",
    "bpobj",
    "SPA space map",
    "ZIL intent log",
    "DMU dnode",
    "DMU objset",
    "DSL directory child map",
    "DSL dataset snap map",
    "ZFS plain file",
    "ZFS directory",
    "zvol object",
    "other uint8[]",
    "other uint64[]",
    "other ZAP",
    "SPA history offsets",
    "ZFS user/group/project used",
    "DDT ZAP algorithm",
    "deferred free",
    "dedup ditto",
    "other",
]


@st.composite
def table_row(draw, name: str):
    if draw(st.integers(0, 3)) == 0:
        return None  # a type with no blocks: '-' in every column
    blocks = draw(st.integers(1, 10**10))
    lsize = draw(st.integers(blocks * 512, blocks * 16 * 2**20))
    psize = draw(st.integers(blocks * 512, max(blocks * 512, lsize)))
    asize = draw(st.integers(psize, psize * 3))
    return {
        "name": name,
        "blocks": blocks,
        "lsize": lsize,
        "psize": psize,
        "asize": asize,
        "pct": draw(st.floats(0, 100)),
        "ganged": draw(st.none() | st.integers(1, 999)),
        "levels": draw(st.lists(st.integers(0, 6), max_size=3, unique=True).map(sorted)),
        "P": False,
    }


def table_line(cells: list[str], name: str, tabs: bool) -> str:
    widths = (6, 5, 5, 5, 5, 5, 6)
    parts = [f"{c:>{w}s}" for c, w in zip(cells, widths, strict=True)]
    return ("\t".join(parts) + "\t" + name) if tabs else (" ".join(parts) + " " + name).expandtabs()


def render_row(r: dict, raw: bool, tabs: bool, level: int | None = None) -> tuple[str, dict]:
    fmt = (lambda n: str(n)) if raw else nicenum
    avg = r["asize"] // r["blocks"]
    vals = [r["blocks"], r["lsize"], r["psize"], r["asize"], avg]
    cells = [fmt(v) for v in vals] + ["%5.2f" % (r["lsize"] / r["psize"]), "%6.2f" % r["pct"]]
    name = r["name"] if level is None else f"    L{level} {r['name']}"
    want = {"type_name": r["name"], "level": level}
    for col, tok, v in zip(
        ("blocks", "lsize_bytes", "psize_bytes", "asize_bytes", "avg_bytes"), cells[:5], vals, strict=True
    ):
        if raw:
            want[col] = (v, 0)
        else:
            printed, tol = nice_value(tok)
            assert abs(printed - v) <= tol, (tok, v)  # the generator's own nicenum
            want[col] = (printed, tol)
    want["comp_ratio"] = float(cells[5])
    want["pct_total"] = float(cells[6])
    want["human_units"] = any(c[-1:].isalpha() for c in cells[:5])
    return table_line(cells, name, tabs), want


@PROPS
@given(
    st.lists(st.sampled_from(TYPES), min_size=1, max_size=8, unique=True).flatmap(
        lambda names: st.tuples(*[table_row(n) for n in names])
    ),
    st.booleans(),
    st.sampled_from(["tabs", "spaces"]),
    st.booleans(),
    st.booleans(),
)
def test_zdb_bb_table_round_trips(rows, raw, layout, bbb, metadata_total):
    tabs = layout == "tabs"
    lines = [
        "Blocks\tLSIZE\tPSIZE\tASIZE\t  avg\t comp\t%Total\tType"
        if tabs
        else "Blocks  LSIZE  PSIZE  ASIZE    avg   comp %Total Type"
    ]
    want = []
    total = {
        "name": "Total",
        "blocks": 0,
        "lsize": 0,
        "psize": 0,
        "asize": 0,
        "pct": 100.0,
        "ganged": None,
        "levels": [],
    }
    for r in rows:
        if r is None:
            lines.append(table_line(["-"] * 7, "unallocated", tabs))
            continue
        if bbb:
            for lv in reversed(r["levels"]):
                line, w = render_row(r, raw, tabs, level=lv)
                lines.append(line)
                want.append(dict(w, ganged_blocks=None))
        line, w = render_row(r, raw, tabs)
        lines.append(line)
        if bbb and r["ganged"]:
            lines.append(f"\t number of ganged blocks: {r['ganged']}")
        want.append(dict(w, ganged_blocks=r["ganged"] if bbb else None))
        for k in ("blocks", "lsize", "psize", "asize"):
            total[k] += r[k]
    if not want:
        total.update(blocks=1, lsize=512, psize=512, asize=512)
    line, w = render_row(total, raw, tabs)
    lines.append(line)
    want.append(dict(w, ganged_blocks=None))
    if metadata_total:
        line, w = render_row(dict(total, name="Metadata Total"), raw, tabs)
        lines.append(line)
        want.append(dict(w, ganged_blocks=None))
    parsed = zdb.parse("\n".join(lines) + "\n\n")
    got = parsed.rows("zdb_block_types")
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        for col, v in w.items():
            if isinstance(v, tuple):
                assert g[col] == v[0], f"{w['type_name']} L{w['level']} {col}: {g[col]} != {v[0]}"
            else:
                assert g[col] == v, f"{w['type_name']} L{w['level']} {col}: {g[col]!r} != {v!r}"


# ----------------------------------------------------------------------------- block size histogram


@PROPS
@given(
    st.lists(st.tuples(*[st.integers(0, 10**12)] * 6), min_size=16, max_size=16),
    st.booleans(),
    st.sampled_from([(), ("(note: all categories are binned separately)",)]),
)
def test_zdb_block_size_histogram_round_trips(cells, raw, notes):
    fmt = (lambda n: str(n)) if raw else nicenum
    sep = "\t" if raw else " "
    lines = [
        "",
        "Block Size Histogram",
        *notes,
        "",
        "  block   psize                lsize                asize",
        "   size   Count   Size   Cum.  Count   Size   Cum.  Count   Size   Cum.",
    ]
    cum = [0, 0, 0]
    want = []
    for k, c in enumerate(cells):
        size = 512 * 2**k
        row_vals = [size]
        for j in range(3):
            count, nbytes = c[2 * j], c[2 * j + 1]
            cum[j] += nbytes
            row_vals += [count, nbytes, cum[j]]
        toks = [fmt(v) for v in row_vals]
        head = f"{toks[0]:>7s}:" if not raw else f"{toks[0]}:"
        lines.append(head + "".join(f"{sep}{t:>6s}" for t in toks[1:]))
        want.append([nice_value(t)[0] if not raw else int(t) for t in toks])
        for t, v in zip(toks, row_vals, strict=True):
            assert raw or abs(nice_value(t)[0] - v) <= nice_value(t)[1]
    # printed under the -bb table; alone (a pasted snippet) it is read as zdb -b output when told so
    parsed = zdb.parse("\n".join(lines) + "\n\n", "zdb-b")
    got = parsed.rows("zdb_block_size_histogram")
    names = (
        "block_size_bytes",
        "psize_count",
        "psize_bytes",
        "psize_cum_bytes",
        "lsize_count",
        "lsize_bytes",
        "lsize_cum_bytes",
        "asize_count",
        "asize_bytes",
        "asize_cum_bytes",
    )
    assert [[g[n] for n in names] for g in got] == want


# ----------------------------------------------------------------------------- -S and -D/-DD/-DDD


@st.composite
def ddt_histogram(draw):
    buckets = draw(st.lists(st.integers(0, 40), min_size=1, max_size=6, unique=True).map(sorted))
    rows = []
    for h in buckets:
        blocks = draw(st.integers(1, 10**9))
        lsize = draw(st.integers(blocks * 512, blocks * 2**17))
        psize = draw(st.integers(blocks * 512, lsize))
        dsize = draw(st.integers(psize, psize * 2))
        refs = blocks * draw(st.integers(2**h, 2 ** (h + 1) - 1))
        k = refs // blocks
        rows.append((h, [blocks, lsize, psize, dsize, refs, lsize * k, psize * k, dsize * k]))
    total = [sum(r[1][j] for r in rows) for j in range(8)]
    return rows, total


def ddt_lines(rows, total, nbytes: bool) -> tuple[list[str], list]:
    lines = [
        "bucket              allocated                       referenced          ",
        "______   ______________________________   ______________________________",
        "refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE",
        "------   ------   -----   -----   -----   ------   -----   -----   -----",
    ]
    want = []
    for h, vals in rows + [(None, total)]:
        bucket = "Total" if h is None else nicenum(2**h)
        toks = [nicenum(v, nbytes and j % 4 != 0) for j, v in enumerate(vals)]
        lines.append(
            f"{bucket:>6s}   {toks[0]:>6s}   {toks[1]:>5s}   {toks[2]:>5s}   {toks[3]:>5s}   {toks[4]:>6s}   "
            f"{toks[5]:>5s}   {toks[6]:>5s}   {toks[7]:>5s}"
        )
        values = [nice_value(t)[0] for t in toks]
        for t, v in zip(toks, vals, strict=True):
            assert abs(nice_value(t)[0] - v) <= nice_value(t)[1]
        want.append((None if h is None else 2**h, h is None, values))
    return lines, want


def ratio_line(vals) -> tuple[str, list]:
    a_dsize, r_lsize, r_psize, r_dsize = vals[3], vals[5], vals[6], vals[7]
    dedup, compress, copies = r_dsize / a_dsize, r_lsize / r_psize, r_dsize / r_psize
    nums = ["%.2f" % x for x in (dedup, compress, copies, dedup * compress / copies)]
    return (
        f"dedup = {nums[0]}, compress = {nums[1]}, copies = {nums[2]}, dedup * compress / copies = {nums[3]}",
        [float(x) for x in nums],
    )


@PROPS
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["S", "DD-old", "DD-new", "empty"]),
            ddt_histogram(),
            st.booleans(),
            st.lists(
                st.tuples(
                    st.sampled_from(["sha256", "skein", "blake3"]),
                    st.sampled_from(["duplicate", "unique"]),
                    st.integers(1, 10**9),
                    st.integers(1, 10**12),
                    st.integers(1, 10**12),
                ),
                min_size=1,
                max_size=3,
                unique_by=lambda t: t[:2],
            ),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_zdb_ddt_outputs_round_trip(outputs):
    lines, want_hist, want_ratios, want_objects = [], [], [], []
    for n, (kind, (rows, total), nbytes, objects) in enumerate(outputs, 1):
        lines += [f"# zdb -{'S' if kind == 'S' else 'DD'} tank", ""]
        if kind == "empty":
            lines += ["All DDTs are empty", ""]
            want_objects.append((n, "all_empty", None, None, None, None))
            continue
        if kind == "S":
            lines += ["Simulated DDT histogram:", ""]
        else:
            for cksum, cls, entries, dspace, mspace in objects:
                name = f"DDT-{cksum}-zap-{cls}"
                if kind == "DD-old":
                    lines.append(f"{name}: {entries} entries, size {dspace % 10**4} on disk, {mspace % 10**4} in core")
                    want_objects.append(
                        (n, "object", name, entries, float(dspace % 10**4), float(entries * (dspace % 10**4)))
                    )
                else:
                    lines.append(f"{name}: dspace={dspace}; mspace={mspace}; entries={entries}")
                    want_objects.append((n, "object", name, entries, dspace / entries, float(dspace)))
            lines += ["", "DDT histogram (aggregated over all DDTs):", ""]
        hist, want = ddt_lines(rows, total, nbytes)
        lines += hist + [""]
        want_hist += [(n, "simulated" if kind == "S" else "ddt", *w) for w in want]
        text, ratios = ratio_line(total)
        lines += [text, ""]
        want_ratios.append((n, "simulated" if kind == "S" else "ddt", "tank", *ratios))
    parsed = zdb.parse("\n".join(lines) + "\n")
    names = (
        "alloc_blocks",
        "alloc_lsize_bytes",
        "alloc_psize_bytes",
        "alloc_dsize_bytes",
        "ref_blocks",
        "ref_lsize_bytes",
        "ref_psize_bytes",
        "ref_dsize_bytes",
    )
    got = [
        (h["ddt_no"], h["source"], h["refcnt_bucket"], h["is_total"], [h[k] for k in names])
        for h in parsed.rows("zdb_ddt_histogram")
    ]
    assert got == want_hist
    got_r = [
        (r["ddt_no"], r["source"], r["pool"], r["dedup"], r["compress"], r["copies"], r["product"])
        for r in parsed.rows("zdb_ddt_ratios")
    ]
    assert got_r == want_ratios
    got_o = [
        (o["ddt_no"], o["kind"], o["name"], o["entries"], o["disk_bytes_per_entry"], o["disk_bytes_total"])
        for o in parsed.rows("zdb_ddt_objects")
    ]
    assert len(got_o) == len(want_objects)
    for g, w in zip(got_o, want_objects, strict=True):
        assert g[:4] == w[:4]
        assert (g[4] is None and w[4] is None) or math.isclose(g[4], w[4], rel_tol=1e-12)
        assert (g[5] is None and w[5] is None) or math.isclose(g[5], w[5], rel_tol=1e-12)


# ----------------------------------------------------------------------------- regressions found by the properties


def test_regression_pre_dedup_summary_has_no_metaslab_ditto_count():
    """zdb before 0.8 never prints `Dittoed blocks in same metaslab`: its count is unknown (NULL), not 0.
    The 0.6/0.7 layout had it right; the older pre-dedup layout (no `bp deduped:`) stored 0."""
    text = (
        "\tbp count:         281486\n\tbp logical:   7345100288      avg:  26094\n"
        "\tbp physical:  3052996608      avg:  10845     compression:   2.41\n"
        "\tbp allocated: 3583172608      avg:  12729     compression:   2.05\n"
        "\tSPA allocated: 3583172608     used: 25.50%\n"
    )
    row = zdb.parse(text).rows("zdb_block_stats")[0]
    assert row["zfs_era"] == "pre-dedup" and row["bp_deduped_bytes"] is None
    assert row["dittoed_same_metaslab"] is None and row["dittoed_same_vdev"] == 0


def test_regression_raw_table_integers_are_exact_beyond_2_to_53():
    """zdb -bbP prints exact integers; the Total row of a pool over 8 PiB exceeds 2**53 and was rounded
    through a float (9007199254740993 stored as ...992)."""
    big = 2**53 + 1
    text = (
        "Blocks\tLSIZE\tPSIZE\tASIZE\t  avg\t comp\t%Total\tType\n"
        f"536870912\t{big}\t{big - 2}\t{big + 2}\t16777216\t 1.00\t100.00\tTotal\n\n"
    )
    row = zdb.parse(text).rows("zdb_block_types")[0]
    assert (row["lsize_bytes"], row["psize_bytes"], row["asize_bytes"]) == (big, big - 2, big + 2)
    assert row["human_units"] is False
    hist = (
        "Block Size Histogram\n\n  block   psize                lsize                asize\n"
        "   size   Count   Size   Cum.  Count   Size   Cum.  Count   Size   Cum.\n"
        f"512:\t1\t{big}\t{big}\t1\t{big}\t{big}\t1\t{big}\t{big}\n\n"
    )
    assert zdb.parse(hist, "zdb-b").rows("zdb_block_size_histogram")[0]["asize_cum_bytes"] == big
