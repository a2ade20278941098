"""Property tests for the fio parsers: generated reports parse to the values they were generated from.

Each generator follows fio's own printf formats (stat.c ``show_thread_status_normal``,
``show_ddir_status``, ``display_lat``, ``show_clat_percentiles``, ``show_lat``, ``show_group_stats``,
``print_disk_util``; lib/num2str.c; docs/formats/log-formats.md A and B) for fio 3.x and for the 2.x releases
(``read :``, ``KB`` meaning KiB, ``aggrb=``). The values are drawn by hypothesis and rendered the
way fio rounds them; the rows the parser returns must equal the printed values in base units and
lie within the printed precision of the generated ones.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

import pytest
from conftest import props
from hypothesis import given
from hypothesis import strategies as st

from storagelab.errors import ParseError
from storagelab.parsers import fio
from storagelab.parsers.fio.fastjson import parse_bytes as parse_plain

PROPS = props(60)

KiB, MiB = 1024, 1024**2
SI = ["", "k", "M", "G", "T", "P", "E"]
IEC = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
LEGACY = ["", "K", "M", "G", "P", "E"]  # fio <= 2.16: no T, the step after G prints as P
PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)
EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
DEPTH_LINES = (
    ("depth", "  IO depths    :", ("1", "2", "4", "8", "16", "32", ">=64")),
    ("submit", "     submit    :", ("0", "4", "8", "16", "32", "64", ">=64")),
    ("complete", "     complete  :", ("0", "4", "8", "16", "32", "64", ">=64")),
)


# ----------------------------------------------------------------------------- fio's number printing


def num2str(num: int, maxlen: int = 4, pow2: bool = True, unit: str = "") -> tuple[str, float]:
    """fio >= 2.20 num2str (lib/num2str.c): the text and its precision (one unit of the last digit
    plus the truncation of the integer divisions), in the units of ``num``."""
    thousand = 1024 if pow2 else 1000
    prefixes = IEC if pow2 else SI
    if unit.startswith("bit"):
        num *= 8
    post, modulo, carry = 0, None, False
    while post < len(prefixes) and len(str(num)) > maxlen:
        modulo = num % thousand
        num //= thousand
        carry = modulo >= thousand // 2
        post += 1
    scale = thousand**post / (8 if unit.startswith("bit") else 1)
    if modulo is None:
        return f"{num}{prefixes[post]}{unit}", 0.0
    digits = len(str(num))
    if maxlen - digits <= 1:
        return f"{num + carry}{prefixes[post]}{unit}", scale
    frac = "%.*f" % (maxlen - digits - 1, modulo / thousand)
    if frac[0] == "1":
        num += 1
    return f"{num}.{frac[2:]}{prefixes[post]}{unit}", scale * (10.0 ** -(maxlen - digits - 1) + 1 / thousand)


def num2str_legacy(
    num: int, maxlen: int = 6, base: int = 1, pow2: bool = True, unit: str = "", space: bool = False
) -> str:
    """fio <= 2.16 num2str: K/M/G/P/E (powers of 1024 with kb_base=1024), and its fraction printed
    as an integer (so ``1050`` may read ``1.50K``: docs/formats/log-formats.md A.12). ``space``: fio 2.0.x
    printed a space where no prefix letter was (``iops=170 ,``)."""
    thousand = 1024 if pow2 else 1000
    post = 0
    while base > 1:
        base //= thousand
        post += 1
    modulo, carry = None, False
    while post < len(LEGACY) and len(str(num)) > maxlen:
        modulo = num % thousand
        num //= thousand
        carry = modulo >= thousand // 2
        post += 1
    prefix = LEGACY[post] if post < len(LEGACY) else ""
    if space and not prefix:
        prefix = " "
    if modulo is None or maxlen - len(str(num)) <= 1:
        return f"{num + (carry if modulo is not None else 0)}{prefix}{unit}"
    decimals = maxlen - len(str(num))
    while len(str(modulo)) > decimals - 1:
        modulo = (modulo + 9) // 10
    return f"{num}.{modulo}{prefix}{unit}"


def value_of(token: str, legacy: bool = False) -> Decimal:
    """What a printed fio size/rate/count means in base units (bytes, bytes/s, counts), by its
    letters: ``Ki..Ei`` powers of 1024, ``k..E`` powers of 1000 (powers of 1024 with ``legacy``)."""
    t = token.strip().removesuffix("/s").strip()
    bits = t.endswith("bit")
    t = t.removesuffix("bit").removesuffix("B").strip()
    if t[-1:] == "i":
        step, base, t = IEC.index(t[-2:]), 1024, t[:-2]
    elif t[-1:].isalpha():
        letter = t[-1]
        if legacy:
            step, base = LEGACY.index(letter), 1024
        else:
            step, base = SI.index(letter.replace("K", "k")), 1000
        t = t[:-1]
    else:
        step, base = 0, 1
    v = Decimal(t.strip()) * base**step
    return v / 8 if bits else v


def close(got: float, want: float, tol: float) -> bool:
    return abs(got - want) <= tol * (1 + 1e-9) + 1e-6 * max(1.0, abs(want)) * 1e-3


# ----------------------------------------------------------------------------- strategies


def magnitude(lo: int, hi: int):
    """Integers spread over orders of magnitude 10**lo .. 10**hi."""
    return st.integers(lo, hi - 1).flatmap(lambda e: st.integers(10**e, 10 ** (e + 1) - 1))


names = (
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-.:+ ", min_size=1, max_size=16)
    .map(lambda s: s.strip() or "job")
    .filter(lambda s: not s.startswith(("Run status", "Disk stats")))
)
pcts = st.integers(0, 10000).map(lambda v: v / 100)


@st.composite
def latency(draw, lo_ns=100, hi_exp=11):
    """(min, max, mean, stdev) in ns as fio's io_stat holds them."""
    a = draw(magnitude(2, hi_exp))
    b = draw(magnitude(2, hi_exp))
    mn, mx = min(a, b) + lo_ns, max(a, b) + lo_ns
    mean = draw(st.floats(mn, mx, allow_nan=False))
    dev = draw(st.floats(0, max(1.0, (mx - mn) / 2.0), allow_nan=False))
    return mn, mx, mean, dev


@st.composite
def direction_spec(draw, name: str):
    runt = draw(st.integers(1, 10**7))  # ms
    io = draw(magnitude(4, 16))  # bytes
    ios = draw(st.integers(1, 10**9))
    spec = {
        "dir": name,
        "io": io,
        "runt": runt,
        "ios": ios,
        "short": draw(st.integers(0, 99)),
        "drop": draw(st.integers(0, 99)),
        "slat": draw(st.none() | latency()),
        "clat": draw(latency()),
        "lat": draw(latency()),
        "pct": draw(st.none() | st.lists(magnitude(2, 12), min_size=17, max_size=17).map(sorted)),
        "bw": None,
        "iops": None,
        "tail": draw(st.sampled_from(["", "zone", "cachehit"])),
    }
    if draw(st.booleans()):
        bw = 1000 * io // runt
        spread = draw(st.floats(0.3, 3.0))
        mn = draw(st.integers(0, 10**6)) / 10**6
        spec["bw"] = {
            "scale": spread,
            "min": mn,
            "per": draw(pcts),
            "dev": draw(st.floats(0, 1e4)),
            "samples": draw(st.none() | st.integers(1, 10**6)),
            "bw": bw,
        }
    if draw(st.booleans()):
        spec["iops"] = {
            "min": draw(st.integers(0, 10**6)),
            "max": draw(st.integers(0, 10**7)),
            "avg": draw(st.floats(0, 1e7)),
            "dev": draw(st.floats(0, 1e5)),
            "samples": draw(st.none() | st.integers(1, 10**6)),
        }
    return spec


@st.composite
def job_spec(draw, gid: int):
    dirs = draw(st.lists(st.sampled_from(["read", "write", "trim"]), min_size=1, max_size=3, unique=True))
    dirs.sort(key=["read", "write", "trim"].index)
    return {
        "name": draw(names),
        "gid": gid,
        "jobs": draw(st.integers(1, 64)),
        "pid": draw(st.integers(1, 4 * 10**6)),
        "dirs": [draw(direction_spec(d)) for d in dirs],
        "usr": draw(pcts),
        "sys": draw(pcts),
        "ctx": draw(st.integers(0, 10**9)),
        "majf": draw(st.integers(0, 10**5)),
        "minf": draw(st.integers(0, 10**7)),
        "latdist": draw(
            st.lists(st.tuples(st.sampled_from(["nsec", "usec", "msec"]), st.integers(0, 11), pcts), max_size=12)
        ),
        "depths": [
            draw(st.lists(st.integers(0, 1000).map(lambda v: v / 10), min_size=7, max_size=7)) for _ in range(3)
        ],
        "latency_line": draw(st.sampled_from([None, "old", "3.42"])),
        "err": draw(st.sampled_from([0, 0, 5, 28])),
        "desc": draw(st.none() | st.text(alphabet="abc xyz:;,=", max_size=20)),
        "sync": draw(
            st.none()
            | st.tuples(
                latency(), st.lists(magnitude(2, 10), min_size=17, max_size=17).map(sorted), st.integers(1, 10**6)
            )
        ),
        "errors_line": draw(st.booleans()),
    }


@st.composite
def report_spec(draw):
    ngroups = draw(st.integers(1, 2))
    jobs = []
    for gid in range(ngroups):
        jobs += [draw(job_spec(gid)) for _ in range(draw(st.integers(1, 2)))]
    disks = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["sda", "vda", "nvme0n1", "md127", "dm-0"]),
                st.lists(st.integers(0, 10**9), min_size=9, max_size=9),
                pcts,
                st.none() | st.tuples(st.lists(st.integers(0, 10**9), min_size=9, max_size=9), pcts),
            ),
            max_size=3,
            unique_by=lambda d: d[0],
        )
    )
    mixed = draw(st.integers(0, 3)) == 0  # unified_rw_reporting=mixed: one 'mixed' section per job
    if mixed:
        for job in jobs:
            job["dirs"] = job["dirs"][:1]
    return {
        "jobs": jobs,
        "kb_base": draw(st.sampled_from([1024, 1000])),
        "disks": disks,
        "mixed": mixed,
        "sectors": draw(st.booleans()),
        "preamble": draw(st.booleans()),
        "version": draw(st.booleans()),
        "group_header": draw(st.booleans()) or ngroups > 1,
        "indent": draw(st.sampled_from(["keep", "tab", "none"])),
        "crlf": draw(st.booleans()),
        "reports": draw(st.integers(1, 2)),
        "eta": draw(st.booleans()),
    }


# ----------------------------------------------------------------------------- fio 3.x normal output


def display_lat(name: str, lat, exp: dict, kind: str, legacy: bool = False, space: bool = False):
    """fio display_lat: one line, and the expected ns values with their tolerance."""
    mn, mx, mean, dev = lat
    if legacy:  # 2.x: values in usec; msec when all four exceed 1000 usec
        mn, mx, mean, dev = mn // 1000, mx // 1000, mean / 1000, dev / 1000
        div, unit = (1000, "msec") if min(mn, mx, mean, dev) > 1000 else (1, "usec")
        base = 1000
    else:
        base = 1
        if mn > 2_000_000 and mx > 99_999_999 and dev > 1e6:
            div, unit = 10**6, "msec"
        elif mn > 2000 and mx > 99_999 and dev > 1000:
            div, unit = 1000, "usec"
        else:
            div, unit = 1, "nsec"
    smn, smx = mn // div, mx // div
    if legacy:
        tmin, tmax = num2str_legacy(smn, 6, pow2=False, space=space), num2str_legacy(smx, 6, pow2=False, space=space)
        tolmin = tolmax = None
    else:
        (tmin, tolmin), (tmax, tolmax) = num2str(smn, 6, pow2=False), num2str(smx, 6, pow2=False)
    factor = div * base
    # min/max are counts with SI letters in every release (2.x prints them upper-case: 44735K)
    exp[f"{kind}_min_ns"] = (value_of(tmin) * factor, lat[0], None if tolmin is None else (tolmin + 1) * factor)
    exp[f"{kind}_max_ns"] = (value_of(tmax) * factor, lat[1], None if tolmax is None else (tolmax + 1) * factor)
    exp[f"{kind}_mean_ns"] = (Decimal(f"{mean / div:.2f}") * factor, lat[2], 0.005 * factor + base)
    exp[f"{kind}_stdev_ns"] = (Decimal(f"{dev / div:.2f}") * factor, lat[3], 0.005 * factor + base)
    return f"    {name} ({unit}): min={tmin}, max={tmax}, avg={mean / div:5.02f}, stdev={dev / div:5.02f}"


def percentile_lines(title: str, values: list[int], legacy: bool = False) -> tuple[list[str], list]:
    """fio show_clat_percentiles (3.x: ns in, nsec/usec/msec; 2.x: usec in, usec/msec)."""
    minv, maxv = min(values), max(values)
    if legacy:
        scale_down, unit = (1, "msec") if minv > 2000 and maxv > 99999 else (0, "usec")
        base = 1000
    elif minv > 2_000_000 and maxv > 99_999_999:
        scale_down, unit, base = 2, "msec", 1
    elif minv > 2000 and maxv > 99999:
        scale_down, unit, base = 1, "usec", 1
    else:
        scale_down, unit, base = 0, "nsec", 1
    width = 5 if legacy or maxv // 1000**scale_down == 0 else max(5, int(math.log10(maxv // 1000**scale_down) + 1))
    per_line = 73 // (2 + (14 if legacy else 10 + width))
    lines, cur, expected = [f"    {title} percentiles ({unit}):"], "     |", []
    for j, (p, v) in enumerate(zip(PERCENTILES, values, strict=True)):
        if j and j % per_line == 0:
            cur = "     |"
        for _ in range(scale_down):
            v = (v + 999) // 1000
        last = j == len(values) - 1
        pp = (" " if legacy and p < 10 else "") + f"{p:.2f}" if legacy else f"{p:5.2f}"
        cur += f" {pp}th=[{v:{5 if legacy else width}d}]" + ("" if last else ",")
        expected.append((p, v * 1000**scale_down * base))
        if last or j % per_line == per_line - 1:
            lines.append(cur)
    return lines, expected


def latdist_lines(entries, legacy: bool = False) -> tuple[list[str], list]:
    """fio show_lat: non-zero buckets of the nsec/usec/msec families, 5 per line."""
    fams = ("usec", "msec") if legacy else ("nsec", "usec", "msec")
    factor = {"nsec": 1, "usec": 1000, "msec": 10**6}
    table: dict[tuple[str, int], float] = {}
    for fam, k, pct in entries:
        if fam in fams and pct > 0 and (k < 10 or (fam == "msec" and k < 12)):
            table[(fam, k)] = pct
    labels = [str(e) for e in EDGES] + ["2000", ">=2000"]
    lines, expected, prev_end = [], [], 0
    for fam in fams:
        keys = sorted(k for f, k in table if f == fam)
        for i in range(0, len(keys), 5):
            chunk = keys[i : i + 5]
            prefix = f"    lat ({fam}) : " if legacy else f"  lat ({fam})   : "
            lines.append(prefix + ", ".join(f"{labels[k]}={table[(fam, k)]:3.2f}%" for k in chunk))
        for k in keys:
            edge = (list(EDGES) + [2000])[min(k, 10)] * factor[fam]
            lo = prev_end if k == 0 else (list(EDGES) + [2000])[k - 1] * factor[fam]
            if k == 11:
                expected.append((2000 * factor[fam], None, float(f"{table[(fam, k)]:.2f}")))
            else:
                expected.append((lo, edge, float(f"{table[(fam, k)]:.2f}")))
        prev_end = 1000 * factor[fam]
    return lines, expected


def cpu_and_depth_lines(job: dict, ji: int, exp: dict) -> list[str]:
    """A job's cpu line and IO depths lines (alike in fio 2.x and 3.x); the depths rows they should give join exp."""
    out = [
        f"  cpu          : usr={job['usr']:3.2f}%, sys={job['sys']:3.2f}%, ctx={job['ctx']}, "
        f"majf={job['majf']}, minf={job['minf']}"
    ]
    for (kind, head, keys), vals in zip(DEPTH_LINES, job["depths"], strict=True):
        out.append(head + ",".join(f" {k}={v:3.1f}%" for k, v in zip(keys, vals, strict=True)))
        exp["depths"] += [(ji, kind, k, float(f"{v:.1f}")) for k, v in zip(keys, vals, strict=True)]
    return out


def draw_bw_stats(draw, used: bool) -> list:
    """A direction's bandwidth statistics: min, max, share of its group (%), mean, deviation; zeros when unused."""
    if not used:
        return [0, 0, 0.0, 0.0, 0.0]
    return [
        draw(st.integers(0, 10**8)),
        draw(st.integers(0, 10**8)),
        draw(pcts),
        draw(st.floats(0, 1e8)),
        draw(st.floats(0, 1e6)),
    ]


def ctime(pid: int) -> str:
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    return f"{days[pid % 7]} Nov {pid % 28 + 1:2d} 12:{pid % 60:02d}:{pid % 59:02d} 2026"


def expected_job(job: dict, error: int) -> dict:
    """The fio_jobs row the parser should give for a generated ``job`` whose report says ``err=error``."""
    return {
        "jobname": job["name"],
        "groupid": job["gid"],
        "jobs": job["jobs"],
        "error": error,
        "pid": job["pid"],
        "cpu_usr_pct": float(f"{job['usr']:.2f}"),
        "cpu_sys_pct": float(f"{job['sys']:.2f}"),
        "ctx": job["ctx"],
        "majf": job["majf"],
        "minf": job["minf"],
    }


def render_v3(spec: dict) -> tuple[str, dict]:
    kb = spec["kb_base"]
    i2p = kb == 1024
    out: list[str] = []
    exp: dict = {"jobs": [], "results": [], "percentiles": [], "buckets": [], "depths": [], "groups": [], "disks": []}
    if spec["preamble"]:
        for job in spec["jobs"]:
            out.append(
                f"{job['name']}: (g={job['gid']}): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, "
                "(T) 4096B-4096B, ioengine=psync, iodepth=1"
            )
    if spec["version"]:
        out += ["fio-3.33", f"Starting {len(spec['jobs'])} processes"]
    out.append("")
    groups: dict[tuple[int, str], list] = {}
    for ji, job in enumerate(spec["jobs"]):
        if spec["eta"] and ji == 0:
            out.append("Jobs: 1 (f=1)\rJobs: 1 (f=1): [W(1)][100.0%][w=1585KiB/s][w=24 IOPS][eta 00m:00s]\r")
        err = f"err={job['err']:2d}" + (
            " (file:io_u.c:1889, func=io_u error, error=Input/output error)" if job["err"] else ""
        )
        out.append(
            f"{job['name']}: (groupid={job['gid']}, jobs={job['jobs']}): {err}: pid={job['pid']}: {ctime(job['pid'])}"
        )
        if job["desc"]:
            out.append(f"  Description  : [{job['desc']}]")
        exp["jobs"].append(expected_job(job, job["err"]))
        for d in job["dirs"]:
            r = {"job_index": ji, "direction": d["dir"]}
            bw = 1000 * d["io"] // d["runt"]
            iops = 1000 * d["ios"] // d["runt"]
            t_io, tol_io = num2str(d["io"], 4, i2p, "B")
            (t_bw, tol_bw), (t_bw2, tol_bw2) = num2str(bw, 4, i2p, "B/s"), num2str(bw, 4, not i2p, "B/s")
            t_iops, tol_iops = num2str(iops, 4, False)
            tail = {
                "": "",
                "zone": "; 0 zone resets" if d["dir"] == "write" else "",
                "cachehit": "; Cachehit=12.50%" if d["dir"] == "read" else "",
            }[d["tail"]]
            dname = "mixed" if spec["mixed"] else d["dir"]
            out.append(f"  {dname}: IOPS={t_iops}, BW={t_bw} ({t_bw2})({t_io}/{d['runt']}msec){tail}")
            r["direction"] = dname
            r["io_bytes"] = (value_of(t_io), d["io"], tol_io)
            r["bw_bytes_per_s"] = (
                [value_of(t_bw), value_of(t_bw2)],
                bw,
                {value_of(t_bw): tol_bw, value_of(t_bw2): tol_bw2},
            )
            r["iops"] = (value_of(t_iops), iops, tol_iops)
            r["runtime_ns"] = (Decimal(d["runt"]) * 10**6, d["runt"] * 10**6, 0)
            r["total_ios"], r["short_ios"], r["dropped_ios"] = d["ios"], d["short"], d["drop"]
            if value_of(t_iops) == 0 and d["ios"]:  # 'IOPS=0' for under one I/O a second: the rate is stored
                r["iops"] = d["ios"] / (d["runt"] * 1e6 / 1e9)
            for kind, label in (("slat", "slat"), ("clat", "clat"), ("lat", " lat")):
                if d[kind] is not None:
                    out.append(display_lat(label, d[kind], r, kind))
                else:
                    r.update({f"{kind}_{c}_ns": None for c in ("min", "max", "mean", "stdev")})
            if d["pct"]:
                lines, pe = percentile_lines("clat", d["pct"])
                out += lines
                exp["percentiles"] += [(ji, dname, "clat", p, v) for p, v in pe]
            if d["bw"]:
                b = d["bw"]
                mean = bw / kb * b["scale"]
                mn, mx = int(mean * b["min"]), int(mean * (2 - b["min"]) + 1)
                dev = b["dev"]
                label, factor = ("KiB" if i2p else "kB"), kb
                if mean > kb * kb:
                    mn, mx, mean, dev = int(mn / kb), int(mx / kb), mean / kb, dev / kb
                    label, factor = "MiB", kb * kb
                samples = "" if b["samples"] is None else f", samples={b['samples']}"
                out.append(
                    f"   bw ({label:>5s}/s): min={mn:5d}, max={mx:5d}, per={b['per']:3.2f}%, "
                    f"avg={mean:5.02f}, stdev={dev:5.02f}{samples}"
                )
                r["bw_min_bytes_per_s"] = Decimal(mn) * factor
                r["bw_max_bytes_per_s"] = Decimal(mx) * factor
                r["bw_mean_bytes_per_s"] = Decimal(f"{mean:.2f}") * factor
                r["bw_stdev_bytes_per_s"] = Decimal(f"{dev:.2f}") * factor
                r["bw_agg_pct"] = float(f"{b['per']:.2f}")
                r["bw_samples"] = b["samples"]
            else:
                r.update(
                    {
                        c: None
                        for c in (
                            "bw_min_bytes_per_s",
                            "bw_max_bytes_per_s",
                            "bw_mean_bytes_per_s",
                            "bw_stdev_bytes_per_s",
                            "bw_agg_pct",
                            "bw_samples",
                        )
                    }
                )
            if d["iops"]:
                i = d["iops"]
                samples = "" if i["samples"] is None else f", samples={i['samples']}"
                out.append(
                    f"   iops        : min={i['min']:5d}, max={i['max']:5d}, avg={i['avg']:5.02f}, "
                    f"stdev={i['dev']:5.02f}{samples}"
                )
                r.update(
                    iops_min=float(i["min"]),
                    iops_max=float(i["max"]),
                    iops_mean=float(f"{i['avg']:.2f}"),
                    iops_stdev=float(f"{i['dev']:.2f}"),
                    iops_samples=i["samples"],
                )
            else:
                r.update({c: None for c in ("iops_min", "iops_max", "iops_mean", "iops_stdev", "iops_samples")})
            exp["results"].append(r)
            groups.setdefault((job["gid"], dname), []).append((d["io"], bw, d["runt"]))
        lines, be = latdist_lines(job["latdist"])
        out += lines
        exp["buckets"] += [(ji, *b) for b in be]
        if job["sync"]:  # fsync/fdatasync section: a 'sync' row holding the sync latencies as lat
            lat, pct, count = job["sync"]
            r = {
                "job_index": ji,
                "direction": "sync",
                "io_bytes": None,
                "total_ios": count,
                "short_ios": None,
                **{f"{k}_{c}_ns": None for k in ("slat", "clat") for c in ("min", "max", "mean", "stdev")},
            }
            out.append("  fsync/fdatasync/sync_file_range:")
            out.append(display_lat("sync", lat, r, "lat"))
            lines, pe = percentile_lines("sync", pct)
            out += lines
            exp["percentiles"] += [(ji, "sync", "lat", p, v) for p, v in pe]
            exp["results"].append(r)
        out += cpu_and_depth_lines(job, ji, exp)
        tot = {d["dir"]: d for d in job["dirs"]}
        cnt = [tot[x]["ios"] if x in tot else 0 for x in ("read", "write", "trim")]
        sh = [tot[x]["short"] if x in tot else 0 for x in ("read", "write", "trim")]
        dr = [tot[x]["drop"] if x in tot else 0 for x in ("read", "write", "trim")]
        nsync = job["sync"][2] if job["sync"] else 0
        out.append(
            f"     issued rwts: total={cnt[0]},{cnt[1]},{cnt[2]},{nsync} short={sh[0]},{sh[1]},{sh[2]},0 "
            f"dropped={dr[0]},{dr[1]},{dr[2]},0"
        )
        if job["errors_line"]:
            out.append("     errors    : total=3, first_error=5/<Input/output error>")
        if job["latency_line"] == "old":
            out.append("     latency   : target=0, window=0, percentile=100.00%, depth=1")
        elif job["latency_line"]:
            out.append("     latency   : target=10.00ms, window=500.00ms, percentile=99.00%, depth=8")
    for gid in sorted({g for g, _ in groups}):
        out.append("")
        if spec["group_header"]:
            out.append(f"Run status group {gid} (all jobs):")
        for direction, label in (("read", "   READ"), ("write", "  WRITE"), ("trim", "   TRIM"), ("mixed", "  MIXED")):
            if (gid, direction) not in groups:
                continue
            members = groups[(gid, direction)]
            io = sum(m[0] for m in members)
            runs = [m[2] for m in members]
            agg = io * 1000 // max(runs)
            bws = [m[1] for m in members]
            toks = {}
            for key, v in (("agg", agg), ("min", min(bws)), ("max", max(bws))):
                toks[key] = (num2str(v, 4, i2p, "B/s"), num2str(v, 4, not i2p, "B/s"), v)
            toks["io"] = (num2str(io, 4, i2p, "B"), num2str(io, 4, not i2p, "B"), io)
            t = {k: (v[0][0], v[1][0]) for k, v in toks.items()}
            out.append(
                f"{label}: bw={t['agg'][0]} ({t['agg'][1]}), {t['min'][0]}-{t['max'][0]} "
                f"({t['min'][1]}-{t['max'][1]}), io={t['io'][0]} ({t['io'][1]}), "
                f"run={min(runs)}-{max(runs)}msec"
            )
            exp["groups"].append(
                {
                    "groupid": gid,
                    "direction": direction,
                    "toks": toks,
                    "run_min_ns": float(min(runs) * 10**6),
                    "run_max_ns": float(max(runs) * 10**6),
                }
            )
    if spec["disks"]:
        out += ["", "Disk stats (read/write):"]
        for name, v, util, aggr in spec["disks"]:
            sectors = f" sectors={v[7]}/{v[8]}," if spec["sectors"] else ""
            line = (
                f"{'  ' if aggr else ''}  {name}: ios={v[0]}/{v[1]},{sectors} merge={v[2]}/{v[3]}, "
                f"ticks={v[4]}/{v[5]}, in_queue={v[6]}, util={util:3.2f}%"
            )
            row = {
                "disk": name,
                "read_ios": v[0],
                "write_ios": v[1],
                "read_merges": v[2],
                "write_merges": v[3],
                "read_ticks_ns": v[4] * 1e6,
                "write_ticks_ns": v[5] * 1e6,
                "in_queue_ns": v[6] * 1e6,
                "util_pct": float(f"{util:.2f}"),
                "read_sectors": v[7] if spec["sectors"] else None,
                "write_sectors": v[8] if spec["sectors"] else None,
                "has_slaves": aggr is not None,
            }
            if aggr:
                a, autil = aggr
                asec = f" aggsectors={a[7]}/{a[8]}," if spec["sectors"] else ""
                line += (
                    f", aggrios={a[0]}/{a[1]},{asec} aggrmerge={a[2]}/{a[3]}, aggrticks={a[4]}/{a[5]}, "
                    f"aggrin_queue={a[6]}, aggrutil={autil:3.2f}%"
                )
                row.update(
                    aggr_read_ios=a[0],
                    aggr_write_ios=a[1],
                    aggr_read_merges=a[2],
                    aggr_write_merges=a[3],
                    aggr_read_ticks_ns=a[4] * 1e6,
                    aggr_write_ticks_ns=a[5] * 1e6,
                    aggr_in_queue_ns=a[6] * 1e6,
                    aggr_util_pct=float(f"{autil:.2f}"),
                    aggr_read_sectors=a[7] if spec["sectors"] else None,
                    aggr_write_sectors=a[8] if spec["sectors"] else None,
                )
            out.append(line)
            exp["disks"].append(row)
    out = [_indent(ln, spec["indent"]) for ln in out]
    exp["reports"] = 1
    if spec["reports"] > 1:  # --status-interval: the whole report again; only the last one is final
        head = [ln for ln in out[: out.index("")]] if "" in out else []
        body = out[len(head) :]
        out = head + body * spec["reports"]
        n = len(exp["jobs"])
        for key in ("results", "percentiles", "buckets", "depths"):
            exp[key] = exp[key] + [_shift(x, n) for x in exp[key]]
        exp["jobs"] = exp["jobs"] * 2
        exp["groups"] = exp["groups"] * 2
        exp["reports"] = 2
    return ("\r\n" if spec["crlf"] else "\n").join(out) + "\n", exp


def _shift(x, n: int):
    """A row of the second report: job_index moved on by the jobs of the first."""
    if isinstance(x, dict):
        return dict(x, job_index=x["job_index"] + n)
    return (x[0] + n, *x[1:])


def _indent(line: str, how: str) -> str:
    """Pasted logs: leading spaces kept, turned into a tab, or lost."""
    body = line.lstrip(" ")
    if how == "keep" or body == line:
        return line
    return ("\t" + body) if how == "tab" else body


def _check_value(got, want, what):
    """want: exact value, or (printed value(s), generated value, tolerance)."""
    if isinstance(want, tuple):
        printed, truth, tol = want
        if isinstance(printed, list):  # a value printed in both families: either one, within its precision
            match = [p for p in printed if got == pytest.approx(float(p), rel=1e-9, abs=1e-6)]
            assert match, f"{what}: {got} is none of {printed}"
            assert close(got, truth, tol[match[0]]), f"{what}: {got} too far from {truth}"
            return
        assert got == pytest.approx(float(printed), rel=1e-9, abs=1e-6), f"{what}: {got} != printed {printed}"
        if tol is not None:
            assert close(got, truth, tol), f"{what}: {got} too far from generated {truth} (tol {tol})"
    elif isinstance(want, Decimal):
        assert got == pytest.approx(float(want), rel=1e-9, abs=1e-6), f"{what}: {got} != {want}"
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-9), f"{what}: {got} != {want}"
    else:
        assert got == want, f"{what}: {got!r} != {want!r}"


def check_report(parsed, exp: dict, group_header: bool = True) -> None:
    jobs = parsed.rows("fio_jobs")
    assert len(jobs) == len(exp["jobs"])
    for got, want in zip(jobs, exp["jobs"], strict=True):
        for k, v in want.items():
            _check_value(got[k], v, f"job {k}")
    results = parsed.rows("fio_results")
    assert [(r["job_index"], r["direction"]) for r in results] == [
        (r["job_index"], r["direction"]) for r in exp["results"]
    ]
    for got, want in zip(results, exp["results"], strict=True):
        for k, v in want.items():
            _check_value(got[k], v, f"job {want['job_index']} {want['direction']} {k}")
    got_pct = [
        (p["job_index"], p["direction"], p["kind"], p["percentile"], p["latency_ns"])
        for p in parsed.rows("fio_percentiles")
    ]
    assert got_pct == [(j, d, k, float(p), float(v)) for j, d, k, p, v in exp["percentiles"]]
    got_b = [
        (b["job_index"], b["bucket_lo_ns"], b["bucket_hi_ns"], b["pct"]) for b in parsed.rows("fio_latency_buckets")
    ]
    assert got_b == [(j, float(lo), None if hi is None else float(hi), pct) for j, lo, hi, pct in exp["buckets"]]
    got_d = [(d["job_index"], d["kind"], d["bucket"], d["pct"]) for d in parsed.rows("fio_iodepths")]
    assert got_d == exp["depths"]
    groups = parsed.rows("fio_groups")
    assert len(groups) == len(exp["groups"])
    for got, want in zip(groups, exp["groups"], strict=True):
        assert got["direction"] == want["direction"]
        assert got["groupid"] == (want["groupid"] if group_header else 0)
        for col, key in (
            ("bw_bytes_per_s", "agg"),
            ("bw_min_bytes_per_s", "min"),
            ("bw_max_bytes_per_s", "max"),
            ("io_bytes", "io"),
        ):
            (t1, tol1), (t2, tol2), truth = want["toks"][key]
            _check_value(
                got[col],
                ([value_of(t1), value_of(t2)], truth, {value_of(t1): tol1, value_of(t2): tol2}),
                f"group {want['groupid']} {want['direction']} {col}",
            )
        assert got["run_min_ns"] == want["run_min_ns"] and got["run_max_ns"] == want["run_max_ns"]
    # with --status-interval every report prints its disk stats; the text parser keeps them all (the table
    # has no doc_index): the last report's rows are checked
    disks = parsed.rows("fio_disk_stats")
    assert len(disks) == len(exp["disks"]) * exp.get("reports", 1)
    for got, want in zip(disks[len(disks) - len(exp["disks"]) :], exp["disks"], strict=True):
        for k, v in want.items():
            _check_value(got[k], v, f"disk {want['disk']} {k}")


@PROPS
@given(report_spec())
def test_fio3_normal_output_round_trips(spec):
    text, exp = render_v3(spec)
    parsed = fio.parse(text)
    assert parsed.format == "fio-normal"
    check_report(parsed, exp, spec["group_header"])
    jobs = parsed.rows("fio_jobs")
    per_report = len(jobs) // exp["reports"]
    assert [(j["doc_index"], j["is_final"]) for j in jobs] == [
        (k // per_report, k // per_report == exp["reports"] - 1) for k in range(len(jobs))
    ]
    assert [g["doc_index"] for g in parsed.rows("fio_groups")] == [
        k // (len(exp["groups"]) // exp["reports"]) for k in range(len(exp["groups"]))
    ]


# ----------------------------------------------------------------------------- fio 2.x normal output


def legacy_tol(token: str) -> float | None:
    """Precision of a 2.x token vs the generated value: one unit of its scale for whole numbers;
    None for fractions (printed by fio <= 2.19 without their leading zeros)."""
    t = token.strip().removesuffix("/s").strip().removesuffix("B").strip()
    if "." in t:
        return None
    return float(1024 ** (LEGACY.index(t[-1]) if t[-1:].isalpha() else 0))


def render_v2(spec: dict) -> tuple[str, dict]:
    """fio 2.1-2.16 (``v20``: 2.0.x, with a space where no unit letter is and no ``drop=``)."""
    v20 = spec["v20"]
    out: list[str] = []
    exp: dict = {"jobs": [], "results": [], "percentiles": [], "buckets": [], "depths": [], "groups": [], "disks": []}
    if spec["version"]:
        out += ["fio-2.0.15" if v20 else "fio-2.2.10", f"Starting {len(spec['jobs'])} processes"]
    out.append("")
    groups: dict[tuple[int, str], list] = {}
    for ji, job in enumerate(spec["jobs"]):
        date = "" if v20 and job["pid"] % 2 else f": {ctime(job['pid'])}"
        out.append(f"{job['name']}: (groupid={job['gid']}, jobs={job['jobs']}): err= 0: pid={job['pid']}{date}")
        exp["jobs"].append(expected_job(job, 0))
        for d in job["dirs"]:
            r = {"job_index": ji, "direction": d["dir"]}
            bw = 1000 * d["io"] // d["runt"]
            iops = 1000 * d["ios"] // d["runt"]
            t_io = num2str_legacy(d["io"], 6, unit="B", space=v20)
            t_bw = num2str_legacy(bw, 6, unit="B", space=v20)
            t_iops = num2str_legacy(iops, 6, pow2=False, space=v20)
            label = {"read": "read ", "write": "write", "trim": "trim"}[d["dir"]]
            out.append(f"  {label}: io={t_io}, bw={t_bw}/s, iops={t_iops}, runt={d['runt']:6d}msec")
            r["io_bytes"] = (value_of(t_io, True), d["io"], legacy_tol(t_io))
            r["bw_bytes_per_s"] = (value_of(t_bw, True), bw, legacy_tol(t_bw))
            r["iops"] = (value_of(t_iops.replace("K", "k"), False), iops, None)
            r["runtime_ns"] = float(d["runt"] * 10**6)
            r["total_ios"], r["short_ios"] = d["ios"], d["short"]
            if value_of(t_iops.replace("K", "k"), False) == 0 and d["ios"]:  # 'iops=0': the rate is stored
                r["iops"] = d["ios"] / (d["runt"] * 1e6 / 1e9)
            r["dropped_ios"] = None if v20 else d["drop"]
            for kind, name in (("slat", "slat"), ("clat", "clat"), ("lat", " lat")):
                if d[kind] is not None:
                    out.append(display_lat(name, d[kind], r, kind, legacy=True, space=v20))
                else:
                    r.update({f"{kind}_{c}_ns": None for c in ("min", "max", "mean", "stdev")})
            if d["pct"]:
                lines, pe = percentile_lines("clat", [max(1, v // 1000) for v in d["pct"]], legacy=True)
                out += lines
                exp["percentiles"] += [(ji, d["dir"], "clat", p, v) for p, v in pe]
            if d["bw"]:
                b = d["bw"]
                mean = bw / 1024 * b["scale"]
                mn, mx = int(mean * b["min"]), int(mean * (2 - b["min"]) + 1)
                dev, lab, factor = b["dev"], "KB", 1024
                if mean > 1024 * 1024:
                    mn, mx, mean, dev, lab, factor = int(mn / 1024), int(mx / 1024), mean / 1024, dev / 1024, "MB", MiB
                head = "    bw (KB/s)  :" if v20 and lab == "KB" else f"    bw ({lab:<4s}/s):"
                out.append(
                    f"{head} min={mn:5d}, max={mx:5d}, per={b['per']:3.2f}%, avg={mean:5.02f}, stdev={dev:5.02f}"
                )
                r.update(
                    bw_min_bytes_per_s=Decimal(mn) * factor,
                    bw_max_bytes_per_s=Decimal(mx) * factor,
                    bw_mean_bytes_per_s=Decimal(f"{mean:.2f}") * factor,
                    bw_stdev_bytes_per_s=Decimal(f"{dev:.2f}") * factor,
                    bw_agg_pct=float(f"{b['per']:.2f}"),
                    bw_samples=None,
                )
            exp["results"].append(r)
            groups.setdefault((job["gid"], d["dir"]), []).append((d["io"], d["runt"]))
        lines, be = latdist_lines(job["latdist"], legacy=True)
        out += lines
        exp["buckets"] += [(ji, *b) for b in be]
        out += cpu_and_depth_lines(job, ji, exp)
        tot = {d["dir"]: d for d in job["dirs"]}
        c = [[tot[x][key] if x in tot else 0 for x in ("read", "write", "trim")] for key in ("ios", "short", "drop")]
        line = f"     issued    : total=r={c[0][0]}/w={c[0][1]}/d={c[0][2]}, short=r={c[1][0]}/w={c[1][1]}/d={c[1][2]}"
        out.append(line if v20 else line + f", drop=r={c[2][0]}/w={c[2][1]}/d={c[2][2]}")
        if job["latency_line"] and not v20:
            out.append("     latency   : target=0, window=0, percentile=100.00%, depth=1")
    for gid in sorted({g for g, _ in groups}):
        out += ["", f"Run status group {gid} (all jobs):"]
        for direction, label in (("read", "   READ"), ("write", "  WRITE"), ("trim", "   TRIM")):
            if (gid, direction) not in groups:
                continue
            members = groups[(gid, direction)]
            io_kb = sum(m[0] >> 10 for m in members)
            runs = [m[1] for m in members]
            bws = [(m[0] >> 10) * 1000 // m[1] for m in members]
            toks = {
                k: num2str_legacy(v, 6, base=1024, unit="B", space=v20)
                for k, v in (("io", io_kb), ("agg", io_kb * 1000 // max(runs)), ("min", min(bws)), ("max", max(bws)))
            }
            out.append(
                f"{label}: io={toks['io']}, aggrb={toks['agg']}/s, minb={toks['min']}/s, "
                f"maxb={toks['max']}/s, mint={min(runs)}msec, maxt={max(runs)}msec"
            )
            exp["groups"].append(
                {
                    "groupid": gid,
                    "direction": direction,
                    **{
                        col: value_of(toks[k], True)
                        for col, k in (
                            ("io_bytes", "io"),
                            ("bw_bytes_per_s", "agg"),
                            ("bw_min_bytes_per_s", "min"),
                            ("bw_max_bytes_per_s", "max"),
                        )
                    },
                    "run_min_ns": float(min(runs) * 10**6),
                    "run_max_ns": float(max(runs) * 10**6),
                }
            )
    if spec["disks"]:
        out += ["", "Disk stats (read/write):"]
        for name, v, util, _ in spec["disks"]:
            out.append(
                f"  {name}: ios={v[0]}/{v[1]}, merge={v[2]}/{v[3]}, ticks={v[4]}/{v[5]}, in_queue={v[6]}, "
                f"util={util:3.2f}%"
            )
            exp["disks"].append(
                {
                    "disk": name,
                    "read_ios": v[0],
                    "write_ios": v[1],
                    "read_merges": v[2],
                    "write_merges": v[3],
                    "in_queue_ns": v[6] * 1e6,
                    "util_pct": float(f"{util:.2f}"),
                    "read_sectors": None,
                    "has_slaves": False,
                }
            )
    out = [_indent(ln, spec["indent"]) for ln in out]
    return "\n".join(out) + "\n", exp


@PROPS
@given(report_spec(), st.booleans())
def test_fio2_normal_output_round_trips(spec, v20):
    spec = dict(spec, v20=v20)
    for job in spec["jobs"]:
        for d in job["dirs"]:
            d["slat"] = d["slat"] if d["slat"] is None else tuple(max(x, 1000) for x in d["slat"])
            d["clat"], d["lat"] = (tuple(max(x, 1000) for x in d[k]) for k in ("clat", "lat"))
    text, exp = render_v2(spec)
    parsed = fio.parse(text)
    assert parsed.format == "fio-normal"
    exp_groups = exp.pop("groups")
    got_groups = parsed.tables.pop("fio_groups", [])
    check_report(parsed, {**exp, "groups": []})
    assert [(g["groupid"], g["direction"]) for g in got_groups] == [(g["groupid"], g["direction"]) for g in exp_groups]
    for got, want in zip(got_groups, exp_groups, strict=True):
        for k, v in want.items():
            _check_value(got[k], v, f"2.x group {k}")


# ----------------------------------------------------------------------------- fio JSON / JSON+


def json_text(value, level: int = 0) -> str:
    """fio's json.c printer: 2-space indents, ``"key" : value``, floats with %f (bare nan/inf)."""
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(value, dict):
        if not value:
            return "{\n" + pad + "}"
        return (
            "{\n" + ",\n".join(f'{inner}"{k}" : {json_text(v, level + 1)}' for k, v in value.items()) + "\n" + pad + "}"
        )
    if isinstance(value, list):
        return "[\n" + ",\n".join(inner + json_text(v, level + 1) for v in value) + "\n" + pad + "]"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("%f" % value)
    if isinstance(value, int):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


JSON_VERSIONS = {"fio-2.2.10": (2, 2), "fio-2.21": (2, 21), "fio-3.1": (3, 1), "fio-3.13": (3, 13), "fio-3.33": (3, 33)}


@st.composite
def json_direction(draw, used: bool, version):
    lat_ns = version >= (2, 99)
    ddir = {}
    exp = None
    if not used:
        io = bw = runt = ios = 0
        lats = {k: (0, 0, 0.0, 0.0, 0) for k in ("slat", "clat", "lat")}
        pct = None
    else:
        io = draw(magnitude(3, 15))
        runt = draw(st.integers(1, 10**7))
        ios = draw(st.integers(1, 10**9))
        bw = 1000 * io // runt
        lats = {}
        for k in ("slat", "clat", "lat"):
            if k == "slat" and draw(st.booleans()):
                lats[k] = (0, 0, 0.0, 0.0, 0)
            else:
                mn, mx, mean, dev = draw(latency())
                lats[k] = (mn, mx, mean, dev, draw(st.integers(1, 10**9)))
        pct = draw(st.lists(magnitude(2, 12), min_size=17, max_size=17).map(sorted))
    kib_io = version < (2, 21)
    ddir["io_bytes"] = io >> 10 if kib_io else io
    if not kib_io:
        ddir["io_kbytes"] = io >> 10
    if version >= (3, 2):
        ddir["bw_bytes"] = bw
    ddir["bw"] = bw >> 10
    iops = 1000 * ios / runt if runt else 0.0
    ddir["iops"] = iops
    ddir["runtime"] = runt
    ddir.update(total_ios=ios, short_ios=ios % 7, drop_ios=ios % 3)
    scale = 1 if lat_ns else 1000
    for k, (mn, mx, mean, dev, n) in lats.items():
        obj = {"min": mn // scale, "max": mx // scale, "mean": mean / scale, "stddev": dev / scale}
        if version >= (3, 18):
            obj["N"] = n
        if k == "clat" and pct and used:
            p = {f"{q:f}": v // scale for q, v in zip(PERCENTILES, pct, strict=True)}
            if version < (3, 4):  # padding "0.00" : 0 up to 20 entries (duplicate keys)
                p = list(p.items()) + [("0.00", 0)] * 3
            obj["percentile"] = p
        ddir[f"{k}_ns" if lat_ns else k] = obj
    bw_samples = draw(st.integers(0, 10**5)) if used else 0
    bw_stats = draw_bw_stats(draw, used)
    ddir.update(bw_min=bw_stats[0], bw_max=bw_stats[1], bw_agg=bw_stats[2], bw_mean=bw_stats[3], bw_dev=bw_stats[4])
    iops_stats = (
        [draw(st.integers(0, 10**7)), draw(st.integers(0, 10**7)), draw(st.floats(0, 1e7)), draw(st.floats(0, 1e5))]
        if used
        else [0, 0, 0.0, 0.0]
    )
    iops_samples = draw(st.integers(0, 10**5)) if used else 0
    if version >= (2, 99):
        ddir["bw_samples"] = bw_samples
        ddir.update(
            iops_min=iops_stats[0],
            iops_max=iops_stats[1],
            iops_mean=iops_stats[2],
            iops_stddev=iops_stats[3],
            iops_samples=iops_samples,
        )
    if used:
        exp = {
            "io_bytes": float((io >> 10) << 10 if kib_io else io),
            "bw_bytes_per_s": float(bw if version >= (3, 2) else (bw >> 10) << 10),
            "iops": float("%f" % iops),
            "runtime_ns": runt * 1e6,
            "total_ios": ios,
            "short_ios": ios % 7,
            "dropped_ios": ios % 3,
        }
        for k, (mn, mx, mean, dev, n) in lats.items():
            empty = (n == 0) if version >= (3, 18) else not (mn // scale or mx // scale or float("%f" % (mean / scale)))
            vals = (
                float(mn // scale * scale),
                float(mx // scale * scale),
                float("%f" % (mean / scale)) * scale,
                float("%f" % (dev / scale)) * scale,
            )
            for col, v in zip(("min", "max", "mean", "stdev"), vals, strict=True):
                exp[f"{k}_{col}_ns"] = None if empty else v
            exp[f"{k}_samples"] = n if version >= (3, 18) else None
        measured = version < (2, 99) or bw_samples != 0
        kb = 1024
        for col, v in zip(
            ("min", "max", "mean", "stdev"), (bw_stats[0], bw_stats[1], bw_stats[3], bw_stats[4]), strict=True
        ):
            exp[f"bw_{col}_bytes_per_s"] = float("%f" % v) * kb if measured else None
        exp["bw_agg_pct"] = float("%f" % bw_stats[2]) if measured else None
        iops_measured = version < (2, 99) or iops_samples != 0
        for col, v in zip(("min", "max", "mean", "stdev"), iops_stats, strict=True):
            exp[f"iops_{col}"] = (float("%f" % v) if iops_measured else None) if version >= (2, 99) else None
        exp["pct"] = [(float(q), float(v // scale * scale)) for q, v in zip(PERCENTILES, pct, strict=True)]
    return ddir, exp


@st.composite
def json_doc(draw, version_name: str, njobs: int, disks: bool):
    version = JSON_VERSIONS[version_name]
    jobs, exp_jobs = [], []
    for _ in range(njobs):
        used = draw(st.lists(st.booleans(), min_size=3, max_size=3).filter(any))
        job = {
            "jobname": draw(names),
            "groupid": draw(st.integers(0, 1)),
            "error": 0,
            "job options": {
                "rw": draw(st.sampled_from(["read", "randwrite", "rw"])),
                "bs": draw(st.sampled_from(["4k", "128k", "1m", "4096"])),
                "iodepth": str(draw(st.integers(1, 64))),
            },
        }
        exp = {"dirs": {}}
        for name, u in zip(("read", "write", "trim"), used, strict=True):
            job[name], e = draw(json_direction(u, version))
            if e:
                exp["dirs"][name] = e
        cpu = draw(st.floats(0, 100))
        job["usr_cpu"] = math.nan if draw(st.integers(0, 9)) == 0 else cpu
        job["sys_cpu"] = draw(st.floats(0, 100))
        job.update(ctx=draw(st.integers(0, 10**9)), majf=draw(st.integers(0, 10**4)), minf=draw(st.integers(0, 10**6)))
        job["iodepth_level"] = {k: draw(st.floats(0, 100)) for k in ("1", "2", "4", "8", "16", "32", ">=64")}
        fams = (("latency_ns", 1),) if version >= (2, 99) else ()
        fams += (("latency_us", 1000), ("latency_ms", 10**6))
        for fam, _ in fams:
            keys = [str(e) for e in EDGES] + (["2000", ">=2000"] if fam == "latency_ms" else [])
            job[fam] = {k: (draw(pcts) if draw(st.integers(0, 3)) == 0 else 0.0) for k in keys}
        jobs.append(job)
        exp.update(
            jobname=job["jobname"],
            groupid=job["groupid"],
            rw=job["job options"]["rw"],
            block_size_bytes={"4k": 4096, "128k": 131072, "1m": 1048576, "4096": 4096}[job["job options"]["bs"]],
            iodepth=int(job["job options"]["iodepth"]),
            cpu_usr_pct=None if math.isnan(job["usr_cpu"]) else float("%f" % job["usr_cpu"]),
            cpu_sys_pct=float("%f" % job["sys_cpu"]),
            ctx=job["ctx"],
            majf=job["majf"],
            minf=job["minf"],
            depths=[("depth", k, float("%f" % v)) for k, v in job["iodepth_level"].items()],
        )
        buckets, edge = [], 0.0
        for fam, scale in fams:
            for k, v in job[fam].items():
                if k.startswith(">="):
                    lo, hi = 2000.0 * scale, None
                else:
                    lo, hi = edge, float(k) * scale
                    edge = hi
                if float("%f" % v):
                    buckets.append((lo, hi, float("%f" % v)))
        exp["buckets"] = buckets
        exp_jobs.append(exp)
    doc = {"fio version": version_name, "timestamp": 1795263884, "time": "Sat Nov 21 12:24:44 2026", "jobs": jobs}
    exp_disks = []
    if disks:
        doc["disk_util"] = []
        for name in ("vda", "md0")[: draw(st.integers(1, 2))]:
            v = draw(st.lists(st.integers(0, 10**9), min_size=7, max_size=7))
            util = draw(st.floats(0, 100))
            doc["disk_util"].append(
                {
                    "name": name,
                    "read_ios": v[0],
                    "write_ios": v[1],
                    "read_merges": v[2],
                    "write_merges": v[3],
                    "read_ticks": v[4],
                    "write_ticks": v[5],
                    "in_queue": v[6],
                    "util": util,
                }
            )
            exp_disks.append(
                {
                    "disk": name,
                    "read_ios": v[0],
                    "write_ios": v[1],
                    "read_merges": v[2],
                    "write_merges": v[3],
                    "read_ticks_ns": v[4] * 1e6,
                    "write_ticks_ns": v[5] * 1e6,
                    "in_queue_ns": v[6] * 1e6,
                    "util_pct": float("%f" % util),
                    "has_slaves": False,
                }
            )
    return doc, exp_jobs, exp_disks


def _json_with_duplicates(doc) -> str:
    """json_text, with percentile lists given as (key, value) pairs printed in order (duplicate keys)."""

    def fix(v):
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list) and v and isinstance(v[0], tuple):
            return _Pairs(v)
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    return json_text(fix(doc))


class _Pairs(dict):
    """A JSON object that may repeat a key (fio <= 3.3 percentile padding)."""

    def __init__(self, pairs):
        super().__init__()
        self.pairs = pairs

    def items(self):
        return iter(self.pairs)

    def __bool__(self):
        return bool(self.pairs)


@PROPS
@given(st.sampled_from(sorted(JSON_VERSIONS)), st.integers(1, 3), st.integers(1, 2), st.data())
def test_fio_json_round_trips(version_name, njobs, ndocs, data):
    docs = [data.draw(json_doc(version_name, njobs, disks=d == ndocs - 1)) for d in range(ndocs)]
    lead = data.draw(
        st.sampled_from(
            [
                "",
                "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n",
                "Jobs: 1 (f=1): [W(1)][100.0%][w=1MiB/s][eta 00m:00s]\r",
            ]
        )
    )
    text = lead + "\n".join(_json_with_duplicates(doc) for doc, _, _ in docs) + "\n"
    parsed = fio.parse(text)
    assert parsed.format in ("fio-json", "fio-json+")
    # the bytes fast path gives the same result, or declines; it takes every plain single document
    fast = parse_plain(text.encode())
    if fast is not None:
        assert (fast.tables, fast.warnings, fast.format, fast.tool_version) == (
            parsed.tables,
            parsed.warnings,
            parsed.format,
            parsed.tool_version,
        )
    # fio <= 3.3's duplicate "0.00" padding is taken too (those keys are never stored)
    plain = lead == "" and ndocs == 1 and not re.search(r"\b(nan|inf)\b", text)
    assert (fast is not None) == plain
    assert parsed.tool_version == version_name
    jobs = parsed.rows("fio_jobs")
    want_jobs = [(d, e) for d, (_, exps, _) in enumerate(docs) for e in exps]
    assert len(jobs) == len(want_jobs)
    results = iter(parsed.rows("fio_results"))
    pcts = iter(parsed.rows("fio_percentiles"))
    buckets = iter(parsed.rows("fio_latency_buckets"))
    depths = iter(r for r in parsed.rows("fio_iodepths") if r["kind"] == "depth")
    for ji, (got, (doc_index, want)) in enumerate(zip(jobs, want_jobs, strict=True)):
        assert got["doc_index"] == doc_index and got["is_final"] == (doc_index == ndocs - 1)
        for k in (
            "jobname",
            "groupid",
            "rw",
            "block_size_bytes",
            "iodepth",
            "cpu_usr_pct",
            "cpu_sys_pct",
            "ctx",
            "majf",
            "minf",
        ):
            _check_value(got[k], want[k], f"job {ji} {k}")
        for direction, e in want["dirs"].items():
            row = next(results)
            assert (row["job_index"], row["direction"]) == (ji, direction)
            for k, v in e.items():
                if k != "pct":
                    _check_value(row[k], v, f"job {ji} {direction} {k}")
            for q, v in e["pct"]:
                p = next(pcts)
                assert (p["job_index"], p["direction"], p["kind"], p["percentile"], p["latency_ns"]) == (
                    ji,
                    direction,
                    "clat",
                    q,
                    v,
                )
        for lo, hi, v in want["buckets"]:
            b = next(buckets)
            assert (b["job_index"], b["bucket_lo_ns"], b["bucket_hi_ns"], b["pct"]) == (ji, lo, hi, v)
        for _kind, k, v in want["depths"]:
            d = next(depths)
            assert (d["job_index"], d["bucket"], d["pct"]) == (ji, k, v)
    assert next(results, None) is None and next(pcts, None) is None and next(buckets, None) is None
    disks = parsed.rows("fio_disk_stats")
    assert len(disks) == len(docs[-1][2])
    for got, want in zip(disks, docs[-1][2], strict=True):
        for k, v in want.items():
            _check_value(got[k], v, f"disk {k}")
    # run status groups are recomputed as fio does: bytes summed, bw = io x 1000 / longest runtime
    for d, (_, exps, _) in enumerate(docs):
        groups = {}
        for e in exps:
            for direction, r in e["dirs"].items():
                g = groups.setdefault((e["groupid"], direction), [])
                g.append((int(r["io_bytes"]), int(r["runtime_ns"] / 1e6)))
        got = {(g["groupid"], g["direction"]): g for g in parsed.rows("fio_groups") if g["doc_index"] == d}
        assert set(got) == set(groups)
        for key, members in groups.items():
            io = sum(m[0] for m in members)
            assert got[key]["io_bytes"] == float(io)
            assert got[key]["bw_bytes_per_s"] == float(io * 1000 // max(m[1] for m in members))
            assert got[key]["bw_min_bytes_per_s"] == float(min(m[0] * 1000 // m[1] for m in members))
            assert got[key]["exact"] == (JSON_VERSIONS[version_name] >= (2, 21))


# ----------------------------------------------------------------------------- fio terse v2-v5


@st.composite
def terse_job(draw, version: int, gid: int, disks: list):
    """One terse line (stat.c show_thread_status_terse_all / show_ddir_status_terse) and its rows."""
    dirs = ("read", "write") if version == 3 else ("read", "write", "trim")
    fields = [str(version)] + ([] if version == 2 else ["fio-3.33"])
    name = draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-. ", min_size=1, max_size=12))
    fields += [name, str(gid), "0"]
    exp = {"jobname": name, "groupid": gid, "results": [], "percentiles": []}
    for d in dirs:
        used = draw(st.booleans())
        io_kib = draw(magnitude(0, 12)) if used else 0
        runt = draw(st.integers(1, 10**7)) if used else 0
        bw_kib = io_kib * 1000 // runt if runt else 0
        iops = draw(st.integers(0, 10**7)) if used else 0
        fields += [str(io_kib), str(bw_kib), str(iops), str(runt)]
        lats = {}
        for k in ("slat", "clat"):
            lats[k] = draw(latency()) if used and (k == "clat" or draw(st.booleans())) else (0, 0, 0.0, 0.0)
            fields += [
                str(lats[k][0] // 1000),
                str(lats[k][1] // 1000),
                "%f" % (lats[k][2] / 1000),
                "%f" % (lats[k][3] / 1000),
            ]
        pct = sorted(draw(st.lists(st.integers(0, 10**7), min_size=17, max_size=17))) if used else [0] * 17
        fields += ["%f%%=%d" % (q, v) for q, v in zip(PERCENTILES, pct, strict=True)] + ["0%=0"] * 3
        lats["lat"] = draw(latency()) if used else (0, 0, 0.0, 0.0)
        fields += [
            str(lats["lat"][0] // 1000),
            str(lats["lat"][1] // 1000),
            "%f" % (lats["lat"][2] / 1000),
            "%f" % (lats["lat"][3] / 1000),
        ]
        bw = draw_bw_stats(draw, used)
        fields += [str(bw[0]), str(bw[1]), "%f%%" % bw[2], "%f" % bw[3], "%f" % bw[4]]
        samples = iops_stats = None
        if version == 5:
            samples = draw(st.integers(0, 10**5)) if used else 0
            iops_stats = (
                [
                    draw(st.integers(0, 10**6)),
                    draw(st.integers(0, 10**6)),
                    draw(st.floats(0, 1e6)),
                    draw(st.floats(0, 1e5)),
                    draw(st.integers(0, 10**5)),
                ]
                if used
                else [0, 0, 0.0, 0.0, 0]
            )
            fields += [
                str(samples),
                str(iops_stats[0]),
                str(iops_stats[1]),
                "%f" % iops_stats[2],
                "%f" % iops_stats[3],
                str(iops_stats[4]),
            ]
        if not (io_kib or runt):
            continue
        r = {
            "direction": d,
            "io_bytes": float(io_kib * 1024),
            "bw_bytes_per_s": float(bw_kib * 1024),
            "iops": float(iops),
            "runtime_ns": float(runt * 10**6),
        }
        for k, (mn, mx, mean, dev) in lats.items():
            vals = (
                mn // 1000 * 1e3,
                mx // 1000 * 1e3,
                float("%f" % (mean / 1000)) * 1e3,
                float("%f" % (dev / 1000)) * 1e3,
            )
            empty = not any(vals)
            for col, v in zip(("min", "max", "mean", "stdev"), vals, strict=True):
                r[f"{k}_{col}_ns"] = None if empty else v
        measured = samples != 0 and (samples is not None or any(bw[i] for i in (0, 1, 3, 4)))
        for col, v in zip(("min", "max", "mean", "stdev"), (bw[0], bw[1], bw[3], bw[4]), strict=True):
            r[f"bw_{col}_bytes_per_s"] = float("%f" % v) * 1024 if measured else None
        r["bw_agg_pct"] = float("%f" % bw[2]) if measured else None
        r["bw_samples"] = samples
        if version == 5:
            for col, v in zip(("min", "max", "mean", "stdev"), iops_stats[:4], strict=True):
                r[f"iops_{col}"] = float("%f" % v) if iops_stats[4] else None
            r["iops_samples"] = iops_stats[4]
        exp["results"].append(r)
        if lats["clat"][1] // 1000 or lats["lat"][1] // 1000:
            exp["percentiles"] += [(d, float("%f" % q), v * 1e3) for q, v in zip(PERCENTILES, pct, strict=True)]
    cpu = [draw(pcts), draw(pcts)]
    counts = [draw(st.integers(0, 10**9)) for _ in range(3)]
    fields += ["%f%%" % cpu[0], "%f%%" % cpu[1]] + [str(c) for c in counts]
    depth = [draw(st.integers(0, 1000)) / 10 for _ in range(7)]
    fields += ["%3.1f%%" % v for v in depth]
    dist = [draw(pcts) if draw(st.integers(0, 3)) == 0 else 0.0 for _ in range(22)]
    fields += ["%3.2f%%" % v for v in dist]
    exp.update(
        cpu_usr_pct=float("%f" % cpu[0]),
        cpu_sys_pct=float("%f" % cpu[1]),
        ctx=counts[0],
        majf=counts[1],
        minf=counts[2],
        depths=[float("%.1f" % v) for v in depth],
    )
    edges = [e * 1e3 for e in EDGES] + [e * 1e6 for e in EDGES] + [2000e6, None]
    buckets, lo = [], 0.0
    for v, hi in zip(dist, edges, strict=True):
        if float("%.2f" % v):
            buckets.append((lo, hi, float("%.2f" % v)))
        lo = hi if hi is not None else lo
    exp["buckets"] = buckets
    if version >= 3:
        for name_, v, util, aggr in disks:
            fields += [name_] + [str(x) for x in v[:7]] + ["%3.2f%%" % util]
            if aggr:
                fields += ["slaves"] + [str(x) for x in aggr[0][:7]] + ["%3.2f%%" % aggr[1]]
    if draw(st.booleans()):
        fields += ["0", "0"]  # continue_on_error: total_err;first_error
    desc = draw(st.none() | st.text(alphabet="abc ;:=xyz", min_size=1, max_size=10).filter(lambda t: t.strip()))
    line = ";".join(fields)
    if desc is not None:
        line += ("\n;" if version == 2 else ";") + desc
    exp["description"] = desc
    return line, exp


@PROPS
@given(st.sampled_from([2, 3, 4, 5]), st.data())
def test_fio_terse_round_trips(version, data):
    disks = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from(["sda", "vda", "md127"]),
                st.lists(st.integers(0, 10**9), min_size=9, max_size=9),
                pcts,
                st.none() | st.tuples(st.lists(st.integers(0, 10**9), min_size=9, max_size=9), pcts),
            ),
            max_size=2,
            unique_by=lambda d: d[0],
        )
    )
    jobs = [
        data.draw(terse_job(version, gid, disks))
        for gid in data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=3).map(sorted))
    ]
    lead = data.draw(
        st.sampled_from(
            ["", "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n"]
        )
    )
    text = lead + "\n".join(line for line, _ in jobs) + "\n"
    parsed = fio.parse(text)
    assert parsed.format == "fio-terse"
    got_jobs = parsed.rows("fio_jobs")
    assert [j["jobname"] for j in got_jobs] == [e["jobname"] for _, e in jobs]
    results = iter(parsed.rows("fio_results"))
    pct = iter(parsed.rows("fio_percentiles"))
    buckets = iter(parsed.rows("fio_latency_buckets"))
    depths = iter(parsed.rows("fio_iodepths"))
    for ji, (got, (_, want)) in enumerate(zip(got_jobs, jobs, strict=True)):
        for k in ("groupid", "cpu_usr_pct", "cpu_sys_pct", "ctx", "majf", "minf"):
            _check_value(got[k], want[k], f"terse job {k}")
        assert got["options_json"] == (
            None if want["description"] is None else json.dumps({"description": want["description"]})
        )
        for r in want["results"]:
            row = next(results)
            assert (row["job_index"], row["direction"]) == (ji, r["direction"])
            for k, v in r.items():
                _check_value(row[k], v, f"terse {r['direction']} {k}")
        for d, q, v in want["percentiles"]:
            p = next(pct)
            assert (p["job_index"], p["direction"], p["percentile"], p["latency_ns"]) == (ji, d, q, v)
        for lo, hi, v in want["buckets"]:
            b = next(buckets)
            assert (b["job_index"], b["bucket_lo_ns"], b["bucket_hi_ns"], b["pct"]) == (ji, lo, hi, v)
        for v in want["depths"]:
            assert next(depths)["pct"] == v
    assert next(results, None) is None and next(pct, None) is None and next(buckets, None) is None
    if version >= 3:
        got_disks = parsed.rows("fio_disk_stats")
        assert [d["disk"] for d in got_disks] == [d[0] for d in disks]
        for g, (_name, v, util, aggr) in zip(got_disks, disks, strict=True):
            assert (g["read_ios"], g["write_ios"], g["read_merges"], g["write_merges"]) == tuple(v[:4])
            assert g["in_queue_ns"] == v[6] * 1e6 and g["util_pct"] == float("%.2f" % util)
            assert g["has_slaves"] == (aggr is not None)
            if aggr:
                assert g["aggr_read_ios"] == aggr[0][0] and g["aggr_util_pct"] == float("%.2f" % aggr[1])


# ----------------------------------------------------------------------------- normal,json: both parts agree


def text_from_json(doc: dict) -> str:
    """The normal report fio prints next to a JSON document (--output-format=normal,json), from the same
    numbers: the text part of a ``fio-json+normal`` file."""
    out, groups = [], {}
    for job in doc["jobs"]:
        out.append(f"{job['jobname']}: (groupid={job['groupid']}, jobs=1): err= 0: pid=4242: {ctime(4242)}")
        for d in ("read", "write", "trim"):
            o = job[d]
            if not (o["io_bytes"] or o["total_ios"]):
                continue
            bw = 1000 * o["io_bytes"] // o["runtime"]
            iops = 1000 * o["total_ios"] // o["runtime"]
            out.append(
                f"  {d}: IOPS={num2str(iops, 4, False)[0]}, BW={num2str(bw, 4, True, 'B/s')[0]} "
                f"({num2str(bw, 4, False, 'B/s')[0]})({num2str(o['io_bytes'], 4, True, 'B')[0]}/"
                f"{o['runtime']}msec)"
            )
            groups.setdefault((job["groupid"], d), []).append((o["io_bytes"], bw, o["runtime"]))
            for kind, label in (("slat", "slat"), ("clat", "clat"), ("lat", " lat")):
                lat = o[f"{kind}_ns"]
                if lat["N"]:
                    out.append(
                        display_lat(
                            label,
                            (lat["min"], lat["max"], float("%f" % lat["mean"]), float("%f" % lat["stddev"])),
                            {},
                            kind,
                        )
                    )
            pct = o["clat_ns"].get("percentile")
            if pct:
                out += percentile_lines("clat", list(dict(pct).values()))[0]
            if o["bw_samples"]:
                mn, mx, mean, dev = o["bw_min"], o["bw_max"], float("%f" % o["bw_mean"]), float("%f" % o["bw_dev"])
                label = "KiB"
                if mean > 1024 * 1024:
                    mn, mx, mean, dev, label = int(mn / 1024), int(mx / 1024), mean / 1024, dev / 1024, "MiB"
                out.append(
                    f"   bw ({label:>5s}/s): min={mn:5d}, max={mx:5d}, per={min(o['bw_agg'], 100.0):3.2f}%, "
                    f"avg={mean:5.02f}, stdev={dev:5.02f}, samples={o['bw_samples']}"
                )
            if o["iops_samples"]:
                out.append(
                    f"   iops        : min={o['iops_min']:5d}, max={o['iops_max']:5d}, "
                    f"avg={float('%f' % o['iops_mean']):5.02f}, stdev={float('%f' % o['iops_stddev']):5.02f}, "
                    f"samples={o['iops_samples']}"
                )
        entries = []
        for fam, name in (("latency_ns", "nsec"), ("latency_us", "usec"), ("latency_ms", "msec")):
            labels = [str(e) for e in EDGES] + ["2000", ">=2000"]
            entries += [(name, labels.index(k), v) for k, v in job[fam].items()]
        out += latdist_lines(entries)[0]
        out.append(
            f"  cpu          : usr={job['usr_cpu']:3.2f}%, sys={job['sys_cpu']:3.2f}%, ctx={job['ctx']}, "
            f"majf={job['majf']}, minf={job['minf']}"
        )
        out.append("  IO depths    :" + ",".join(f" {k}={v:3.1f}%" for k, v in job["iodepth_level"].items()))
        c = [
            job[d]["total_ios"] if (job[d]["io_bytes"] or job[d]["total_ios"]) else 0 for d in ("read", "write", "trim")
        ]
        s_ = [job[d]["short_ios"] if c[i] else 0 for i, d in enumerate(("read", "write", "trim"))]
        dr = [job[d]["drop_ios"] if c[i] else 0 for i, d in enumerate(("read", "write", "trim"))]
        out.append(
            f"     issued rwts: total={c[0]},{c[1]},{c[2]},0 short={s_[0]},{s_[1]},{s_[2]},0 "
            f"dropped={dr[0]},{dr[1]},{dr[2]},0"
        )
    for gid in sorted({g for g, _ in groups}):
        out += ["", f"Run status group {gid} (all jobs):"]
        for d, label in (("read", "   READ"), ("write", "  WRITE"), ("trim", "   TRIM")):
            if (gid, d) not in groups:
                continue
            m = groups[(gid, d)]
            io, runs, bws = sum(x[0] for x in m), [x[2] for x in m], [x[1] for x in m]
            agg = io * 1000 // max(runs)
            t = {
                k: (num2str(v, 4, True, "B/s")[0], num2str(v, 4, False, "B/s")[0])
                for k, v in (("agg", agg), ("min", min(bws)), ("max", max(bws)))
            }
            out.append(
                f"{label}: bw={t['agg'][0]} ({t['agg'][1]}), {t['min'][0]}-{t['max'][0]} "
                f"({t['min'][1]}-{t['max'][1]}), io={num2str(io, 4, True, 'B')[0]} "
                f"({num2str(io, 4, False, 'B')[0]}), run={min(runs)}-{max(runs)}msec"
            )
    if doc.get("disk_util"):
        out += ["", "Disk stats (read/write):"]
        for dk in doc["disk_util"]:
            out.append(
                f"  {dk['name']}: ios={dk['read_ios']}/{dk['write_ios']}, merge={dk['read_merges']}/"
                f"{dk['write_merges']}, ticks={dk['read_ticks']}/{dk['write_ticks']}, "
                f"in_queue={dk['in_queue']}, util={float('%f' % dk['util']):3.2f}%"
            )
    return "\n".join(out) + "\n"


@PROPS
@given(st.integers(1, 3), st.booleans(), st.data())
def test_fio_normal_and_json_parts_agree(njobs, disks, data):
    doc, _, _ = data.draw(json_doc("fio-3.33", njobs, disks))
    for job in doc["jobs"]:
        if math.isnan(job["usr_cpu"]):
            job["usr_cpu"] = 1.5
        for d in ("read", "write", "trim"):  # fio's JSON percent values are the text's, printed with %f
            job[d]["bw_agg"] = float("%.2f" % job[d]["bw_agg"])
    text = _json_with_duplicates(doc) + "\n" + text_from_json(doc)
    assert fio.sniff(text) == "fio-json+normal"
    parsed = fio.parse(text)
    assert parsed.format == "fio-json"  # the JSON part is what is stored; the text part is checked against it
    disagreements = [w for w in parsed.warnings if " vs JSON " in w or "report only" in w or "job records" in w]
    assert not disagreements, disagreements[:5]
    # the rows stored are the JSON's (exact)
    assert all(r["exact"] for r in parsed.rows("fio_results"))


# ----------------------------------------------------------------------------- regressions found by the properties


def test_regression_json_after_live_status_line_is_detected():
    """A terminal capture: the last '\\r'-ended eta line is glued to the '{' that opens the JSON.
    json.py reads it, but fio.sniff did not see the document (parse_bytes said 'no known tool')."""
    from conftest import FIXTURES

    from storagelab.parsers import parse_bytes

    text = (FIXTURES / "fio" / "3.33" / "json_only.txt").read_text()
    glued = "Jobs: 1 (f=1): [W(1)][100.0%][w=16.0MiB/s][w=16 IOPS][eta 00m:00s]\r" + text[text.index("{") :]
    assert fio.sniff(glued) == "fio-json"
    parsed, module = parse_bytes(glued.encode())
    assert module is fio and parsed.rows("fio_results") == fio.parse(text).rows("fio_results")


def test_regression_terse_description_ending_in_semicolon():
    """A terse line whose description ends in ';' (fio prints the description as it is) was refused as
    cut short; only a last line without its newline can stop inside the trailing fields."""
    from conftest import FIXTURES

    line = (FIXTURES / "fio" / "3.33" / "terse_v3.txt").read_text().splitlines()[0]
    job = fio.parse(line + ";seq write; then read;\n").rows("fio_jobs")[0]
    assert json.loads(job["options_json"]) == {"description": "seq write; then read;"}
    with pytest.raises(ParseError) as e:  # the same text with no newline may be a line cut short
        fio.parse(line + ";seq write; then read;")
    assert e.value.kind == "truncated"


def test_regression_terse_malformed_percentile_cell_is_a_parse_error():
    """A percentile cell like '1.50.000000%=0' (a damaged line) passed the cell pattern and float() raised
    a bare ValueError out of the parser; it is a ParseError naming the line."""
    from conftest import FIXTURES

    line = (FIXTURES / "fio" / "3.33" / "terse_v3.txt").read_text().splitlines()[0]
    with pytest.raises(ParseError) as e:
        fio.parse(line.replace(";20.000000%=", ";1.50.000000%=", 1) + "\n")
    assert type(e.value) is ParseError and (e.value.kind, e.value.line) == ("invalid", 1)
    assert "percentile cell" in e.value.message
