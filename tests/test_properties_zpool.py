"""Property tests for the zpool parser: generated ``zpool list`` and ``zpool iostat`` output parses to the
values it was generated from.

The generator follows zpool_main.c as docs/formats/log-formats.md and the parser's module doc describe it: nicenum
cells (K M G T P E = powers of 1024, for bytes and for operation counts), ``-p`` exact integers (and
``0`` for the capacity of vdevs that have none), ``-H`` tab-separated rows (vdev rows start with a
tab), ``-v`` trees indented two spaces per level with ``logs``/``cache``/``spare`` section lines,
``-o`` column lists, the old ``USED AVAIL`` headers, interval reports with ``-T u`` time stamps, and
a prompt line before the table.
"""

from __future__ import annotations

from conftest import props
from hypothesis import given
from hypothesis import strategies as st
from test_properties_zdb import nicenum

from storagelab.parsers import zpool

PROPS = props(80)
UNITS = ["", "K", "M", "G", "T", "P", "E"]


def value(tok: str) -> float | None:
    """What a zpool cell means: nicenum (powers of 1024) or an exact integer; None for '-'."""
    if tok == "-":
        return None
    if tok[-1].isalpha():
        return float(tok[:-1]) * 1024 ** UNITS.index(tok[-1])
    return float(tok)


def cell(n: int | None, exact: bool) -> str:
    if n is None:
        return "-"
    return str(n) if exact else nicenum(n)


def close(got: float | None, n: int | None, tok: str) -> bool:
    """A printed nicenum is within half a unit of its last digit of the generated number."""
    if n is None or got is None:
        return got is None and (n is None or tok == "-")
    t = tok.rstrip("KMGTPE")
    decimals = len(t.partition(".")[2])
    unit = 1024 ** UNITS.index(tok[-1]) if tok[-1].isalpha() else 1
    return abs(got - n) <= 0.5 * 10**-decimals * unit * (1 + 1e-9) + 0.5


# ----------------------------------------------------------------------------- pools and their vdev trees

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=12).filter(
    lambda s: s[0].isalpha() and s not in ("logs", "log", "cache", "spares", "spare", "special", "dedup")
)


@st.composite
def vdev_tree(draw, depth: int = 1):
    """(name, children) with children [] for a disk."""
    if depth >= 3 or draw(st.booleans()):
        return (draw(NAMES), [])
    kind = draw(st.sampled_from(["mirror", "raidz1", "raidz2"]))
    return (f"{kind}-{draw(st.integers(0, 9))}", [draw(vdev_tree(depth + 1)) for _ in range(draw(st.integers(1, 3)))])


@st.composite
def pool_spec(draw):
    return {
        "name": draw(NAMES),
        "vdevs": draw(st.lists(vdev_tree(), min_size=1, max_size=3)),
        "sections": draw(
            st.lists(st.sampled_from(["logs", "cache", "spare", "special", "dedup"]), max_size=2, unique=True).map(
                lambda s: [(x, [(f"{x[:3]}dev{i}", []) for i in range(2)]) for x in s]
            )
        ),
    }


def flatten(pool: dict):
    """Rows in print order: (name, depth, class, is_leaf, is_section_line)."""
    out = [(pool["name"], 0, None, False, False)]

    def walk(node, depth, cls):
        name, children = node
        out.append((name, depth, cls, not children, False))
        for c in children:
            walk(c, depth + 1, cls)

    for v in pool["vdevs"]:
        walk(v, 1, "normal")
    for section, members in pool["sections"]:
        out.append((section, 0, {"logs": "log", "spare": "spare"}.get(section, section), False, True))
        for m in members:
            walk(m, 1, {"logs": "log", "spare": "spare"}.get(section, section))
    return out


# ----------------------------------------------------------------------------- zpool iostat

IOSTAT_GROUPS = "capacity     operations     bandwidth"


@PROPS
@given(
    st.lists(pool_spec(), min_size=1, max_size=2, unique_by=lambda p: p["name"]),
    st.booleans(),
    st.booleans(),
    st.integers(1, 3),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_zpool_iostat_round_trips(pools, verbose, exact, samples, timestamps, old_labels, data):
    lines = [
        f"$ zpool iostat{' -v' if verbose else ''}{' -p' if exact else ''}{' -T u' if timestamps else ''}"
        f" {' '.join(p['name'] for p in pools)} 5 {samples}"
    ]
    want = []
    numbers = st.integers(0, 10**15)
    for s in range(samples):
        if timestamps:
            lines.append(str(1700000000 + 5 * s))
        rows = []
        for p in pools:
            for name, depth, cls, leaf, section in flatten(p) if verbose else flatten(p)[:1]:
                if section:
                    rows.append((name, depth, ["-"] * 6, None))
                    continue
                cap = depth <= 1  # capacity is printed for pools and top-level vdevs
                alloc = data.draw(numbers) if cap else None
                free = data.draw(numbers) if cap else None
                ops = [data.draw(numbers) for _ in range(4)]
                if exact and not cap:
                    cells = ["0", "0"] + [str(v) for v in ops]
                else:
                    cells = [cell(alloc, exact), cell(free, exact)] + [cell(v, exact) for v in ops]
                rows.append((name, depth, cells, (p["name"], name, depth, cls, leaf, [alloc, free] + ops, s)))
            rows.append(("--", 0, None, None))
        width = max(10, *(2 * d + len(n) for n, d, c, _ in rows if c is not None))
        cw = max(5, *(len(x) for _, _, c, _ in rows if c for x in c))
        lines.append(" " * (width + 2) + IOSTAT_GROUPS)
        lines.append(
            f"{'pool':<{width}s}  "
            + "  ".join(
                f"{h:>{cw}s}"
                for h in (("used", "avail") if old_labels else ("alloc", "free")) + ("read", "write", "read", "write")
            )
        )
        dash = "-" * width + "  " + "  ".join("-" * cw for _ in range(6))
        lines.append(dash)
        for name, depth, cells, w in rows:
            if cells is None:
                if verbose:
                    lines.append(dash)
                continue
            lines.append(f"{'  ' * depth + name:<{width}s}  " + "  ".join(f"{c:>{cw}s}" for c in cells))
            if w:
                want.append((w, cells))
        lines.append("")
    parsed = zpool.parse("\n".join(lines) + "\n")
    got = parsed.rows("zpool_iostat")
    assert len(got) == len(want)
    for g, ((pool, name, depth, cls, leaf, nums, sample), cells) in zip(got, want, strict=True):
        assert (g["pool"], g["vdev"], g["depth"], g["sample"]) == (pool, None if depth == 0 else name, depth, sample)
        assert g["class"] == (None if depth == 0 else cls)
        role = (
            "pool"
            if depth == 0
            else (("vdev" if cls == "normal" else cls) if depth == 1 else ("disk" if leaf else "vdev"))
        )
        assert g["role"] == role, (name, g["role"], role)
        assert g["leaf"] == (leaf if depth else not verbose)
        # nicenum prints numbers below 1024 as plain integers: a table without a K/M/G... cell is exact
        all_plain = all(x == "-" or x.isdigit() for w, cells_ in want if w[6] == sample for x in cells_)
        assert g["exact"] == (exact or all_plain)
        assert g["timestamp"] == (str(1700000000 + 5 * sample) if timestamps else None)
        for col, n, tok in zip(
            ("alloc_bytes", "free_bytes", "read_ops_per_s", "write_ops_per_s", "read_bytes_per_s", "write_bytes_per_s"),
            nums,
            cells,
            strict=True,
        ):
            want_value = None if (exact and depth > 1 and col in ("alloc_bytes", "free_bytes")) else value(tok)
            assert g[col] == want_value, f"{name} {col}: {g[col]} != {tok}"
            assert close(g[col], n, tok), f"{name} {col}: {g[col]} vs generated {n}"


# ----------------------------------------------------------------------------- zpool list

LIST_COLUMNS = ("NAME", "SIZE", "ALLOC", "FREE", "CKPOINT", "EXPANDSZ", "FRAG", "CAP", "DEDUP", "HEALTH", "ALTROOT")
OLD_COLUMNS = ("NAME", "SIZE", "USED", "AVAIL", "CAP", "HEALTH", "ALTROOT")


@PROPS
@given(
    st.lists(pool_spec(), min_size=1, max_size=3, unique_by=lambda p: p["name"]),
    st.sampled_from(["default", "old", "-o"]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_zpool_list_round_trips(pools, columns, verbose, scripted, exact, data):
    if columns == "old":
        cols = list(OLD_COLUMNS)
        verbose = exact = False
    elif columns == "-o":  # pool rows only: vdev rows (-v) print their own fixed set of columns
        verbose = False
        cols = ["NAME"] + data.draw(st.lists(st.sampled_from(LIST_COLUMNS[1:]), min_size=1, max_size=6, unique=True))
        if cols == ["NAME", "DEDUP"]:  # the header of `zfs list -o name,dedup` too: not claimed as zpool list
            cols.append("CAP")
    else:
        cols = list(LIST_COLUMNS)
    flags = ("v" if verbose else "") + ("H" if scripted else "") + ("p" if exact else "")
    cmd = f"# zpool list{' -' + flags if flags else ''}"
    if columns == "-o":
        cmd += " -o " + ",".join(c.lower() for c in cols)
    rows = []
    numbers = st.integers(0, 10**16)
    for p in pools:
        for name, depth, cls, _leaf, section in flatten(p) if verbose else flatten(p)[:1]:
            if section:
                rows.append((name, depth, {c: "-" for c in cols[1:]}, None))
                continue
            vals = {"SIZE": data.draw(numbers), "ALLOC": data.draw(numbers), "FREE": data.draw(numbers)}
            vals["USED"], vals["AVAIL"] = vals["ALLOC"], vals["FREE"]
            has_space = depth <= 1
            frag, cap, dedup = (
                data.draw(st.integers(0, 100)),
                data.draw(st.integers(0, 10000)),
                data.draw(st.integers(100, 5000)),
            )
            health = data.draw(st.sampled_from(["ONLINE", "DEGRADED", "FAULTED", "OFFLINE", "UNAVAIL", "AVAIL"]))
            cells = {}
            for c in cols[1:]:
                if c in ("SIZE", "ALLOC", "FREE", "USED", "AVAIL"):
                    cells[c] = cell(vals[c], exact) if has_space else "-"
                elif c in ("CKPOINT", "EXPANDSZ"):
                    cells[c] = "-"
                elif c == "FRAG":
                    cells[c] = (str(frag) if exact else f"{frag}%") if has_space else "-"
                elif c == "CAP":
                    text = f"{cap // 100}" if depth == 0 else f"{cap / 100:.1f}"
                    cells[c] = (text if exact else text + "%") if has_space else "-"
                elif c == "DEDUP":
                    cells[c] = (f"{dedup / 100:.2f}" + ("" if exact else "x")) if depth == 0 else "-"
                elif c == "HEALTH":
                    cells[c] = health
                elif c == "ALTROOT" and depth == 0:  # vdev rows end before ALTROOT
                    cells[c] = data.draw(st.sampled_from(["-", "/mnt", "/a"]))
            rows.append((name, depth, cells, (p["name"], name, depth, cls, vals)))
    lines = [cmd]
    if scripted:
        for name, depth, cells, w in rows:
            if w is None:  # zpool prints class section lines with spaces, also with -H
                lines.append(f"{name:<10s}      -      -      -        -         -      -      -      -  -")
                continue
            lines.append(("\t" if depth else "") + "\t".join([name] + [cells[c] for c in cols[1:] if c in cells]))
    else:
        width = max(4, *(2 * d + len(n) for n, d, _, _ in rows))
        widths = {c: max(len(c), *(len(r[2].get(c, "")) for r in rows)) for c in cols[1:]}
        lines.append(f"{'NAME':<{width}s}" + "".join(f"  {c:>{widths[c]}s}" for c in cols[1:]))
        for name, depth, cells, _ in rows:
            lines.append(
                f"{'  ' * depth + name:<{width}s}"
                + "".join(f"  {cells[c]:>{widths[c]}s}" for c in cols[1:] if c in cells)
            )
    parsed = zpool.parse("\n".join(lines) + "\n")
    got = parsed.rows("zpool_list")
    wanted = [r for r in rows if r[3] is not None]
    assert len(got) == len(wanted)
    for g, (name, depth, cells, (pool, _, _, cls, vals)) in zip(got, wanted, strict=True):
        assert (g["pool"], g["vdev"]) == (pool, None if depth == 0 else name)
        assert g["depth"] == (None if scripted and depth else depth)
        assert g["class"] == (None if depth == 0 else cls)
        for col, key in (("size_bytes", "SIZE"), ("alloc_bytes", "ALLOC"), ("free_bytes", "FREE")):
            tok = cells.get(key, cells.get({"ALLOC": "USED", "FREE": "AVAIL"}.get(key, key), "-"))
            assert g[col] == value(tok), f"{name} {col}: {g[col]} != {tok}"
            assert tok == "-" or close(g[col], vals[key], tok)
        for col, key, suffix in (("frag_pct", "FRAG", "%"), ("cap_pct", "CAP", "%"), ("dedup_ratio", "DEDUP", "x")):
            tok = cells.get(key, "-")
            assert g[col] == (None if tok == "-" else float(tok.removesuffix(suffix))), f"{name} {col}"
        assert g["health"] == cells.get("HEALTH")
        assert g["altroot"] == (None if cells.get("ALTROOT", "-") == "-" else cells["ALTROOT"])


# ----------------------------------------------------------------------------- regressions found by the properties


def test_regression_list_o_selection_without_size_or_health():
    """``zpool list -o name,alloc`` (header without SIZE/HEALTH) and ``zpool list -H -o name,frag`` were
    refused as "not zpool output" although -o selections are read by column name."""
    p = zpool.parse("$ zpool list -o name,alloc,cap\nNAME   ALLOC  CAP\ntank   4.33T  39%\n")
    row = p.rows("zpool_list")[0]
    assert (row["pool"], row["alloc_bytes"], row["cap_pct"], row["size_bytes"]) == ("tank", 4.33 * 1024**4, 39.0, None)
    text = "# zpool list -H -o name,frag,free\ntank\t3%\t6.57T\nrpool\t12%\t354G\n"
    assert zpool.sniff(text) == "zpool-list"
    rows = zpool.parse(text).rows("zpool_list")
    assert [(r["pool"], r["frag_pct"], r["free_bytes"]) for r in rows] == [
        ("tank", 3.0, 6.57 * 1024**4),
        ("rpool", 12.0, 354 * 1024**3),
    ]
    # zfs list output is still not claimed
    assert zpool.sniff("NAME    USED  AVAIL\ntank   1.2T   3.4T\n") is None
    assert zpool.sniff("NAME   DEDUP\ntank/fs  on\n") is None


def test_regression_list_hv_with_section_lines_is_detected():
    """``zpool list -Hv`` prints its class section lines (logs, cache, spare) with spaces: with a prompt
    line and one section, or with two sections, the tab-row test of sniff refused the output."""
    text = (
        "# zpool list -Hv\n"
        "tank\t10.9T\t4.33T\t6.57T\t-\t-\t3%\t39%\t1.00x\tONLINE\t-\n"
        "\tmirror-0\t5.45T\t2.17T\t3.28T\t-\t-\t3%\t39.8%\t-\tONLINE\n"
        "logs           -      -      -        -         -      -      -      -  -\n"
        "\tnvme0n1p1\t15.5G\t1.20M\t15.5G\t-\t-\t0%\t0.00%\t-\tONLINE\n"
        "cache          -      -      -        -         -      -      -      -  -\n"
        "\tnvme0n1p2\t100G\t93.1G\t6.87G\t-\t-\t0%\t93.1%\t-\tONLINE\n"
    )
    assert zpool.sniff(text) == "zpool-list"
    rows = zpool.parse(text).rows("zpool_list")
    assert [(r["vdev"], r["class"]) for r in rows] == [
        (None, None),
        ("mirror-0", "normal"),
        ("nvme0n1p1", "log"),
        ("nvme0n1p2", "cache"),
    ]
    assert rows[3]["alloc_bytes"] == 93.1 * 1024**3
