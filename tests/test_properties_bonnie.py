"""Property tests for the bonnie++ parser: generated tables and CSV lines parse to their values.

The generator follows bonnie++'s report code (bon_time.cpp ``DoReportIO``/``DoReportFile``,
``print_stat``, ``print_latency``, ``print_size``; docs/formats/log-formats.md C) for 1.03e, 1.97 and
1.98/2.00a: the 19-column name/size field with bonnie's own name cut, the 1.98+ throughput cells
(``<10000`` KiB/s -> ``Nk``, below 1000 MiB/s -> ``N.Nm``/``Nm``, else ``N.Ng``), blank cells of
tests not run, ``+++++`` for tests shorter than 0.5 s, the latency row (us/ms/s), the file block
(``files:max:min``, ``/dirs``, ``:link``), the 1.98+ size cell ``size:chunk:concurrency:seeks:seekers``
with 2.00a's lost one-digit seeker count, and the CSV lines (27, 48 and 50 fields).
"""

from __future__ import annotations

import re
from itertools import pairwise

from conftest import props
from hypothesis import given
from hypothesis import strategies as st

from storagelab.parsers import bonnie

PROPS = props(80)

KiB, MiB, GiB = 1024, 1024**2, 1024**3
IO_TESTS = ("putc", "put_block", "rewrite", "getc", "get_block", "seeks")
FILE_TESTS = ("seq_create", "seq_read", "seq_delete", "ran_create", "ran_read", "ran_delete")
FAMILY = {"1.03e": "1.0x", "1.97": "1.9x", "1.98": "1.98+", "2.00a": "1.98+"}
HEADS = {
    "io1": "------Sequential Output------ --Sequential Input- --Random-",
    "io2": "-Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--",
    "io3_old": "Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP",
    "io3_new": "Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP",
    "f1": "------Sequential Create------ --------Random Create--------",
    "f2": "-Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--",
    "f3": " /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP",
}


# ----------------------------------------------------------------------------- bonnie's printing


def print_size(size: int, units: str) -> str:
    """bon_time.cpp print_size: ``64M``, ``63G``, ``4k``, ``1m``, ``512``."""
    if size == 0:
        return "0" + units[0].strip()
    i = 0
    while size % 1024 == 0 and i + 1 < len(units):
        size //= 1024
        i += 1
    return f"{size}{units[i]}".rstrip()


def rate_cell(stat: float, new: bool) -> tuple[str, float, float]:
    """A throughput cell (KiB/s in): text, the value it means in bytes/s, and its precision."""
    if not new:
        return f" {int(stat):5d}", int(stat) * KiB, KiB
    if stat < 10000:
        return f" {int(stat):4d}k", int(stat) * KiB, KiB
    if stat / 1024 < 1000:
        m = stat / 1024
        if m < 100:
            t = f"{m:4.1f}"
            return f" {t}m", float(t) * MiB, 0.05 * MiB
        return f" {int(m + 0.5):4d}m", int(m + 0.5) * MiB, 0.5 * MiB
    t = f"{stat / 1024 / 1024:4.1f}"
    return f" {t}g", float(t) * GiB, 0.05 * GiB


def seek_cell(stat: float, csv: bool) -> str:
    s = f"{stat:.0f}" if stat >= 1000 else f"{stat:.1f}"
    return s if csv else f" {s:>5s}"


def latency_text(seconds: float) -> str:
    """bon_time.cpp print_latency (empty for 0)."""
    if seconds == 0:
        return ""
    if seconds > 99.999999:
        return f"{int(seconds)}s"
    if seconds > 0.099999:
        return f"{int(seconds * 1000)}ms"
    return f"{int(seconds * 1e6)}us"


def latency_ns(text: str) -> float | None:
    if not text:
        return None
    for unit, f in (("us", 1e3), ("ms", 1e6), ("s", 1e9)):
        if text.endswith(unit) and text[: -len(unit)].isdigit():
            return int(text[: -len(unit)]) * f
    raise AssertionError(text)


def size_cell_198(run: dict) -> str:
    """The 1.98+ text size cell, with the 2.00a pointer walk that loses a one-digit seeker count."""
    buf = list(print_size(run["size_mib"], "MG"))
    buf.append(":")
    if run["chunk"] != 8192:
        buf += list(print_size(run["chunk"], " km"))
    buf.append(":")
    if run["conc"] != 1:
        buf += list(str(run["conc"]))
    buf.append(":")
    if run["seeks"] != 8192:
        buf += list(str(run["seeks"]))
    buf.append(":")
    tmp = len(buf)
    if run["seekers"] != 5:
        digits = str(run["seekers"])
        buf += list(digits)
        tmp += len(digits) - 1
    tmp -= 1
    while tmp > 0 and buf[tmp] == ":":
        del buf[tmp:]
        tmp -= 1
    return "".join(buf)


def chunk_103(chunk: int) -> str:
    """1.03 size cell chunk part: ``:4k``, ``:1024k``, ``:512``."""
    return f":{chunk // 1024}k" if chunk >= 1024 else f":{chunk}"


def text_size_old(run: dict) -> str:
    """1.03/1.97 text size cell: ``63G``, ``1G:32k`` (1.03 prints the chunk as ``:Nk``, 1.97 as ``:4k``/``:1m``)."""
    size = print_size(run["size_mib"], "MG")
    if run["chunk"] == 8192:
        return size
    if FAMILY[run["version"]] == "1.0x":
        return size + chunk_103(run["chunk"])
    return size + ":" + print_size(run["chunk"], " km")


def name_field(name: str, size: str) -> str:
    """The 19-column machine/size field of the IO row (name cut to 18 - len(size) characters)."""
    buf = (name + " " * 18)[:18]
    offset = 20 - len(size) - 2
    if offset < 0:
        return size
    return buf[:offset] + " " + size


# ----------------------------------------------------------------------------- a generated run


@st.composite
def result(draw, test: str, skipped: bool = False):
    """One test's outcome: None (not run: -f skips the per-char tests), too fast (+++++), or measured.
    A test that ran has a latency > 0 (bonnie++ prints an empty latency only for tests not run)."""
    if skipped:
        return None
    lat = draw(st.floats(1e-6, 2000))
    if draw(st.integers(0, 3)) == 0:
        return {"fast": True, "lat": lat}
    if test == "seeks":
        stat = draw(st.floats(0.1, 1e5))
    elif test in FILE_TESTS:
        stat = draw(st.floats(1, 2e5))
    else:
        stat = draw(st.floats(1, 1e8))
    return {"fast": False, "stat": stat, "cpu": draw(st.integers(0, 3000)), "lat": lat}


@st.composite
def run_spec(draw, version: str):
    fam = FAMILY[version]
    io = draw(st.integers(0, 3)) > 0
    files = draw(st.booleans())
    size_mib = draw(st.sampled_from([64, 1024, 7501, 64 * 1024, 261368]) | st.integers(1, 10**6))
    run = {
        "version": version,
        "name": draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=30)),
        "size_mib": size_mib if io else 0,
        "chunk": draw(st.sampled_from([8192, 8192, 4096, 65536, 1048576, 512])),
        "conc": draw(st.sampled_from([1, 1, 2, 16])) if fam != "1.0x" else 1,
        "seeks": draw(st.sampled_from([8192, 8192, 16384, 100])) if fam == "1.98+" else 8192,
        "seekers": draw(st.sampled_from([5, 5, 3, 12])) if fam == "1.98+" else 5,
        "seed": str(draw(st.integers(10**9, 2 * 10**9))),
        "io": None,
        "files": None,
    }
    if io:
        per_char = draw(st.booleans())  # -f: no per-char tests
        run["io"] = {t: draw(result(t, skipped=not per_char and t in ("putc", "getc"))) for t in IO_TESTS}
    if files:
        link = draw(st.sampled_from([None, None, "link", "symlink"]))
        mx = draw(st.sampled_from([0, 0, 4096, 65536])) if not link else None
        mn = draw(st.sampled_from([0, 1024])) if mx else 0
        run["files"] = {
            "n": draw(st.integers(1, 128)),
            "link": link,
            "max": mx,
            "min": mn,
            "dirs": draw(st.sampled_from([1, 1, 2, 16])),
            "tests": {t: draw(result(t)) for t in FILE_TESTS},
        }
    return run


def stat_csv(r: dict | None, test: str) -> list[str]:
    if r is None:
        return ["", ""]
    if r["fast"]:
        return ["+++++", "+++"]
    v = seek_cell(r["stat"], True) if test == "seeks" else str(int(r["stat"]))
    return [v, str(r["cpu"])]


def stat_text(r: dict | None, test: str, new: bool, garbage: int) -> str:
    if r is None:
        return " " * 10
    if r["fast"]:
        return " +++++ +++"
    if test == "seeks":
        v = seek_cell(r["stat"], False)
    elif test in FILE_TESTS:
        v = f" {garbage if new else int(r['stat']):5d}"  # 1.98+ print the double with %d: garbage
    else:
        v = rate_cell(r["stat"], new)[0]
    return v + f" {r['cpu']:3d}"


def files_spec(f: dict, csv: bool) -> str:
    if csv:
        mx = {"link": "link", "symlink": "symlink"}.get(f["link"], str(f["max"]) if f["max"] else "")
        mn = str(f["min"]) if f["max"] and f["min"] else ""
        return f"{f['n']},{mx},{mn},,{f['dirs'] if f['dirs'] > 1 else ''}"
    s = str(f["n"])
    if f["link"]:
        s += ":" + f["link"]
    elif f["max"]:
        s += f":{f['max']}:{f['min']}"
    if f["dirs"] > 1:
        s += f"/{f['dirs']}"
    return s


def render_text(run: dict, garbage: int) -> list[str]:
    v, fam = run["version"], FAMILY[run["version"]]
    new = fam == "1.98+"
    out = []
    if run["io"]:
        out.append(f"Version {v:>5s}       " + HEADS["io1"])
        out.append((f"Concurrency {run['conc']:3d}     " if fam == "1.9x" else " " * 20) + HEADS["io2"])
        head = HEADS["io3_new" if new else "io3_old"]
        if fam == "1.0x" and run["chunk"] != 8192:
            head = head.replace("Machine        Size ", "Machine   Size:chnk ")
        out.append(head)
        if new:
            size = size_cell_198(run)
        else:
            size = text_size_old(run)
        out.append(name_field(run["name"], size) + "".join(stat_text(run["io"][t], t, new, garbage) for t in IO_TESTS))
        if fam != "1.0x":
            out.append(
                "Latency          "
                + "".join(f" {latency_text(r['lat']) if r else '':>9s}" for r in (run["io"][t] for t in IO_TESTS))
            )
    f = run["files"]
    if not f and fam != "1.0x":
        out.append("")  # DoReportFile ends the report with a newline even when no file test ran
    if f:
        if fam == "1.0x" and run["io"]:  # 1.03: Version line and name only when no IO test ran
            out += [" " * 20 + HEADS["f1"], " " * 20 + HEADS["f2"]]
        else:
            out += [f"Version {v:>5s}       " + HEADS["f1"], f"{run['name'][:19]:<19s} " + HEADS["f2"]]
        label = "files:max:min" if f["min"] else ("files:max" if f["max"] else "")
        out.append((f"{label:<20s}" if label else "              files ") + HEADS["f3"])
        out.append(
            f"{files_spec(f, False):>19s}" + "".join(stat_text(f["tests"][t], t, new, garbage) for t in FILE_TESTS)
        )
        if fam != "1.0x":
            out.append(
                "Latency          "
                + "".join(f" {latency_text(r['lat']) if r else '':>9s}" for r in (f["tests"][t] for t in FILE_TESTS))
            )
    return out


def render_csv(run: dict) -> str:
    fam = FAMILY[run["version"]]
    io, f = run["io"], run["files"]
    if fam == "1.0x":
        size = print_size(run["size_mib"], "MG") + (chunk_103(run["chunk"]) if run["chunk"] != 8192 else "")
        cells = [run["name"], size if io else ""]
        for t in IO_TESTS:
            c = stat_csv(io[t], t) if io else ["", ""]
            if t == "seeks" and io and io[t] and not io[t]["fast"]:
                c[0] = f"{io[t]['stat']:.1f}"  # 1.03 always prints one decimal
            cells += c
        cells.append(files_spec(f, False) if f else "")
        for t in FILE_TESTS:
            cells += stat_csv(f["tests"][t], t) if f else ["", ""]
        return ",".join(cells)
    fv = "1.98" if fam == "1.98+" else "1.97"
    cells = [fv, run["version"], run["name"], str(run["conc"]), run["seed"]]
    if io:
        cells.append(print_size(run["size_mib"], "MG"))
        if fam == "1.98+":
            cells += ["", str(run["seeks"]), str(run["seekers"])]
        else:
            cells.append(print_size(run["chunk"], " km") if run["chunk"] != 8192 else "")
        for t in IO_TESTS:
            cells += stat_csv(io[t], t)
    else:
        cells += [""] * (16 if fam == "1.98+" else 14)
    cells += files_spec(f, True).split(",") if f else [""] * 5
    for t in FILE_TESTS:
        cells += stat_csv(f["tests"][t], t) if f else ["", ""]
    for t in IO_TESTS:
        cells.append(latency_text(io[t]["lat"]) if io and io[t] else "")
    for t in FILE_TESTS:
        cells.append(latency_text(f["tests"][t]["lat"]) if f and f["tests"][t] else "")
    return ",".join(cells)


# ----------------------------------------------------------------------------- expected rows


def expected_results(run: dict, source: str, garbage: int, with_csv: bool) -> dict:
    """test -> (bytes_per_s or ops_per_s, tolerance vs the generated value, cpu, too_fast, latency_ns, suspect,
    value_from)."""
    fam = FAMILY[run["version"]]
    new = fam == "1.98+"
    out = {}
    groups = ((run["io"], IO_TESTS), (run["files"]["tests"] if run["files"] else None, FILE_TESTS))
    for tests, names in groups:
        if not tests:
            continue
        for t in names:
            r = tests[t]
            if r is None:
                continue
            lat = None if fam == "1.0x" else latency_ns(latency_text(r["lat"]))  # 1.03 prints none
            if r["fast"]:
                out[t] = dict(value=None, cpu=None, too_fast=True, latency_ns=lat, suspect=False, value_from=source)
                continue
            if t == "seeks":
                one_decimal = source == "csv" and fam == "1.0x"  # 1.03 CSV: always one decimal
                value = float(f"{r['stat']:.1f}") if one_decimal else float(seek_cell(r["stat"], True))
                value_from, suspect, tol = source, False, 0.05 if one_decimal or r["stat"] < 1000 else 0.5
            elif t in FILE_TESTS:
                csv_value = float(int(r["stat"]))
                if source == "text" and new and not with_csv:
                    value, value_from, suspect, tol = float(garbage), "text", True, None
                elif source == "text" and new:
                    value, value_from, suspect, tol = csv_value, "csv", False, 1.0
                else:
                    value, value_from, suspect, tol = csv_value, source, False, 1.0
            else:
                if source == "csv":
                    value, tol = float(int(r["stat"]) * KiB), KiB
                else:
                    _, value, tol = rate_cell(r["stat"], new)
                value_from, suspect = source, False
            truth = r["stat"] * KiB if t in IO_TESTS[:5] else r["stat"]
            out[t] = dict(
                value=value,
                truth=truth,
                tol=tol,
                cpu=float(r["cpu"]),
                too_fast=False,
                latency_ns=lat,
                suspect=suspect,
                value_from=value_from,
            )
    return out


def check_results(parsed, run_index: int, want: dict) -> None:
    got = {r["test"]: r for r in parsed.rows("bonnie_results") if r["run_index"] == run_index}
    assert set(got) == set(want), f"run {run_index}: tests {sorted(got)} != {sorted(want)}"
    for t, w in want.items():
        g = got[t]
        value = g["bytes_per_s"] if t in IO_TESTS[:5] else g["ops_per_s"]
        assert (g["bytes_per_s"] if t not in IO_TESTS[:5] else g["ops_per_s"]) is None
        if w["value"] is None:
            assert value is None
        else:
            assert value == w["value"], f"{t}: {value} != {w['value']}"
            if w["tol"] is not None:
                assert abs(value - w["truth"]) <= w["tol"] + 1e-6 * w["truth"], f"{t}: {value} vs {w['truth']}"
        for k in ("cpu", "too_fast", "latency_ns", "suspect", "value_from"):
            col = "cpu_pct" if k == "cpu" else k
            assert g[col] == w[k], f"{t} {k}: {g[col]!r} != {w[k]!r}"


def expected_run(run: dict, source: str, text_size: str | None) -> dict:
    fam = FAMILY[run["version"]]
    io, f = run["io"], run["files"]
    exp = {
        "source": source,
        "version": run["version"] if source == "text" or fam != "1.0x" else None,
        "size_bytes": run["size_mib"] * MiB if io else None,
    }
    if source == "text":
        exp["format_version"] = None
        exp["concurrency"] = {"1.0x": None, "1.9x": run["conc"] if io else None, "1.98+": run["conc"] if io else None}[
            fam
        ]
        if io:
            exp["chunk_bytes"] = run["chunk"] if fam != "1.0x" or run["chunk"] != 8192 else 8192
            if fam == "1.98+":
                exp["seeks"] = run["seeks"]
                parts = text_size.split(":")
                exp["seekers"] = int(parts[4]) if len(parts) > 4 and parts[4] else None
        else:
            exp["chunk_bytes"] = None
    else:
        exp["format_version"] = {"1.0x": None, "1.9x": "1.97", "1.98+": "1.98"}[fam]
        exp["machine"] = run["name"]
        exp["concurrency"] = None if fam == "1.0x" else run["conc"]
        exp["seed"] = None if fam == "1.0x" else run["seed"]
        if fam == "1.98+":
            exp["seeks"], exp["seekers"] = (run["seeks"], run["seekers"]) if io else (None, None)
        elif io:
            exp["chunk_bytes"] = run["chunk"]
        if not io:
            exp["chunk_bytes"] = None
    if f:
        exp.update(
            num_files_printed=f["n"],
            num_files=f["n"] * 1024,
            link_mode=f["link"],
            max_size_bytes=None if f["link"] else f["max"],
            min_size_bytes=None if f["link"] else f["min"],
            num_dirs=f["dirs"] if f["dirs"] > 1 else None,
        )
    else:
        exp.update(num_files_printed=None, num_files=None)
    return exp


# ----------------------------------------------------------------------------- the properties


@st.composite
def document(draw):
    version = draw(st.sampled_from(sorted(FAMILY)))
    runs = draw(st.lists(run_spec(version), min_size=1, max_size=3))
    for r in runs:  # a text table needs an IO or a file block
        if not r["io"] and not r["files"]:
            r["files"] = {
                "n": 16,
                "link": None,
                "max": 0,
                "min": 0,
                "dirs": 1,
                "tests": {t: {"fast": True, "lat": 1e-3} for t in FILE_TESTS},
            }
    if FAMILY[version] != "1.0x":
        # an IO-only run (-n 0) pasted right above a files-only run (-s 0) reads like one run whose two
        # blocks were pasted apart (as in seed 004): the parser joins them, so the generator avoids it
        for a, b in pairwise(runs):
            if a["io"] and not a["files"] and b["files"] and not b["io"]:
                a["files"] = b["files"]
    layout = draw(st.sampled_from(["text", "text+csv", "csv", "csv-x"]))
    garbage = draw(st.sampled_from([0, 16384, 1024]))
    strip = draw(st.booleans())
    # a 1.9x+ table pasted without its Latency rows (a CSV line follows, so the table is not cut short)
    no_latency = layout == "text+csv" and FAMILY[version] != "1.0x" and draw(st.integers(0, 3)) == 0
    return version, runs, layout, garbage, strip, no_latency


@PROPS
@given(document())
def test_bonnie_tables_and_csv_round_trip(doc):
    version, runs, layout, garbage, strip, no_latency = doc
    fam = FAMILY[version]
    lines, want = [], []
    if layout == "csv-x" and fam != "1.0x":
        lines.append(
            "format_version,bonnie_version,name,concurrency,seed,file_size,io_chunk_size,putc,putc_cpu,"
            "put_block,put_block_cpu,rewrite,rewrite_cpu,getc,getc_cpu,get_block,get_block_cpu,seeks,"
            "seeks_cpu,num_files,max_size,min_size,num_dirs,file_chunk_size,seq_create,seq_create_cpu,"
            "seq_stat,seq_stat_cpu,seq_del,seq_del_cpu,ran_create,ran_create_cpu,ran_stat,ran_stat_cpu,"
            "ran_del,ran_del_cpu,putc_latency,put_block_latency,rewrite_latency,getc_latency,"
            "get_block_latency,seeks_latency,seq_create_latency,seq_stat_latency,seq_del_latency,"
            "ran_create_latency,ran_stat_latency,ran_del_latency"
        )
    for run in runs:
        if fam == "1.0x" and layout != "text" and re.match(r"^[0-9]+\.[0-9]+", run["name"]):
            run["name"] = "m" + run["name"]  # a 1.03 CSV line starting like a version is another layout
        if layout.startswith("text"):
            text = render_text(run, garbage)
            if no_latency:
                text = [ln for ln in text if not ln.startswith("Latency")]
            size = None
            if run["io"]:
                size = size_cell_198(run) if fam == "1.98+" else None
            want.append(("text", run, size, layout == "text+csv"))
            lines += text
        if layout != "text":
            lines.append(render_csv(run))
            want.append(("csv", run, None, True))
    if strip:
        lines = [ln.rstrip() for ln in lines]
    text = "\n".join(lines) + "\n"
    parsed = bonnie.parse(text)
    got_runs = parsed.rows("bonnie_runs")
    assert [r["source"] for r in got_runs] == [w[0] for w in want], parsed.warnings
    for i, (g, (source, run, size, paired)) in enumerate(zip(got_runs, want, strict=True)):
        exp = expected_run(run, source, size)
        if source == "csv" and layout == "text+csv":
            exp.pop("version" if fam == "1.0x" else "chunk_bytes", None)
        for k, v in exp.items():
            assert g[k] == v, f"run {i} ({source}) {k}: {g[k]!r} != {v!r}"
        if source == "text":
            names = []
            if run["io"]:
                size = size_cell_198(run) if fam == "1.98+" else text_size_old(run)
                if 18 - len(size) > 0:
                    names.append(run["name"][: 18 - len(size)])
            if run["files"] and (fam != "1.0x" or not run["io"]):  # 1.03 names the file block without IO
                names.append(run["name"][:19])
            assert g["machine"] == (max(names, key=len) if names else None), f"run {i} machine"
        elif paired and layout == "text+csv":
            if fam == "1.0x":
                assert g["version"] == version
            if fam == "1.98+" and run["io"]:
                assert g["chunk_bytes"] == run["chunk"]  # the CSV never records it: taken from the paired text
        want_results = expected_results(run, source, garbage, paired)
        if no_latency and source == "text":
            for w in want_results.values():
                w["latency_ns"] = None
        check_results(parsed, i, want_results)
    if no_latency:
        assert [w for w in parsed.warnings if "no Latency row" in w]
    if layout == "text+csv":
        assert not [w for w in parsed.warnings if "beyond" in w or "differ" in w or "only" in w], parsed.warnings
        for k in range(0, len(got_runs), 2):
            assert got_runs[k]["paired_run_index"] == k + 1 and got_runs[k + 1]["paired_run_index"] == k
            assert (got_runs[k]["preferred"], got_runs[k + 1]["preferred"]) == (False, True)


# ----------------------------------------------------------------------------- regressions found by the properties


def test_regression_103_file_block_with_version_is_its_own_run():
    """bonnie++ 1.03 prints a Version line (and the machine name) over the file block only when no IO
    test ran (bon_time.cpp DoReport): pasted under an IO-only table, that block is a second run
    (-s 0), not the file half of the first. It used to be joined to the IO row above."""
    text = "\n".join(
        [
            "Version 1.03e       ------Sequential Output------ --Sequential Input- --Random-",
            "                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--",
            "Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP",
            "raid0            2G 83720  95 813061  95 1185231 100 84567  97 2828489  97  1187   0",
            "Version 1.03e       ------Sequential Create------ --------Random Create--------",
            "raid1               -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--",
            "              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP",
            "                 16  8891  13 +++++ +++ 17536  23 11535  17 +++++ +++ 19876  28",
            "",
        ]
    )
    parsed = bonnie.parse(text)
    io_run, file_run = parsed.rows("bonnie_runs")
    assert (io_run["machine"], io_run["size_bytes"], io_run["num_files"]) == ("raid0", 2 * GiB, None)
    assert (file_run["machine"], file_run["size_bytes"], file_run["num_files"]) == ("raid1", None, 16 * 1024)
    tests = {(r["run_index"], r["test"]): r for r in parsed.rows("bonnie_results")}
    assert tests[(0, "put_block")]["bytes_per_s"] == 813061 * KiB and (0, "seq_create") not in tests
    assert tests[(1, "seq_create")]["ops_per_s"] == 8891.0 and (1, "putc") not in tests
