"""Ingest benchmark: corpora of 1,000 / 10,000 / 100,000 logs derived from real outputs.

Not part of the tests' pass/fail. For each corpus kind (fio JSON/JSON+, fio normal text, a mix of
bonnie++/zdb/other tools) and size it measures, in one run on this machine:

* the floor: open + read every file (and json.load for the JSON corpus), in this process;
* cold ingest into a new database (wall time, files/s, MB/s, peak RSS of the ingest process);
* re-ingest of the unchanged corpus; ingest after 1 % of the files changed;

and prints every figure also as a ratio to the floor. Results go to benchmarks/results/ingest.md.

Corpus files are made from the real outputs in tests/fixtures/ and data/raw/ by replacing every
number of two or more digits with another of the same width (so no two files are identical and
no cache can flatter the result), and are written once under benchmarks/corpus/ (gitignored; the
.done file holds a stamp of the templates and CORPUS_VERSION, and a corpus whose stamp differs is
rebuilt). The fio JSON corpus takes the JSON document of every real fio JSON/JSON+ output (the last
one of a --status-interval file: what --output-format=json/json+ prints), and varies only numeric
values outside quoted strings: keys (percentiles, JSON+ bins) and string values stay byte for byte.
Every file of the mixed corpus is parsed when it is made: outputs whose numbers must agree with
each other (a partition table's sectors, a zpool tree's sums) fail the parsers' consistency
checks when varied; a failed variation is redrawn, and a template whose variations keep failing
is varied by appending blank lines instead (its values repeat, its bytes do not), or left out
when even that does not parse. The build prints which templates were treated how.

The kinds fio-json-indent2 and fio-json-oneline hold the same varied documents as fio-json, re-serialized
by Python's json module: ``json.dumps(doc, indent=2)`` (as harnesses that post-process fio output save
it) and ``json.dumps(doc)`` (the whole document on one line).

Usage: ./run bench [--sizes 1000,10000] [--kinds fio-json,fio-text,mixed] [--mixed-sizes 1000,10000]
                  [--workers N] [--no-notebooks]

Also timed, in the same run: `storagelab build` on the project's own data (every notebook executed and every
HTML report rendered), and the notebooks' queries on the 100,000-file database when it exists (query_bench.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "corpus"
FIO_31 = "fio-json-3.1"  # fio-plot's real fio 3.1 JSON (duplicate keys), 9,800 files: the fio-plot comparison
KINDS = "fio-json,fio-json-indent2,fio-json-oneline,fio-json-copies,fio-json-3.1,fio-text,mixed"
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import fioplot_compare  # noqa: E402
import msgspec  # noqa: E402
import orjson  # noqa: E402
from parse_free import parse_free  # noqa: E402
from text_steps import steps  # noqa: E402  (benchmarks/text_steps.py: the text parser, and its plain path alone)
from variation import NUM, vary  # noqa: E402

from storagelab import store  # noqa: E402
from storagelab.parsers import decode, detect, parse_bytes  # noqa: E402
from storagelab.parsers.base import Parsed  # noqa: E402
from storagelab.parsers.fio import fastjson  # noqa: E402

# in JSON: a quoted string (kept as it is) or a number of two or more digits outside strings (varied)
JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|' + NUM.pattern, re.S)
CORPUS_VERSION = 2  # bump when vary()/vary_json() or the way files are made changes


def _candidates() -> list[Path]:
    fx = ROOT / "tests" / "fixtures"
    return sorted(
        p
        for p in list(fx.rglob("*")) + list((ROOT / "data" / "raw").rglob("*"))
        if p.is_file() and p.suffix not in (".md", ".sh", ".csv", ".py", ".jsonl")
    )


def templates(kind: str) -> list[bytes]:

    if kind.startswith("fio-json"):
        return json_templates()[0]
    out = []
    for p in _candidates():
        data = p.read_bytes()
        try:
            mod, fmt = detect(decode(data))
            mod.parse(decode(data), fmt)
        except Exception:
            continue
        if kind == "fio-text" and fmt == "fio-normal" and b"groupid=" in data:
            out.append(data)
        elif kind == "mixed" and mod.TOOL != "fio":
            out.append(data)
    if not out:
        raise SystemExit(f"no templates for {kind}")
    return out


def last_json_document(data: bytes) -> bytes | None:
    """The last JSON document of a fio output: from the last line that is exactly '{' to the next
    line that is exactly '}' (fio's JSON is indented, so only its outer braces are at column 0)."""
    lines = data.split(b"\n")
    starts = [i for i, ln in enumerate(lines) if ln.rstrip(b"\r") == b"{"]
    if not starts:
        return None
    end = next((i for i in range(starts[-1] + 1, len(lines)) if lines[i].rstrip(b"\r") == b"}"), None)
    return None if end is None else b"\n".join(lines[starts[-1] : end + 1]) + b"\n"


def json_templates() -> tuple[list[bytes], list[str]]:
    """The JSON document of every real fio JSON/JSON+ output (one per file), and why others were left
    out: each must parse with storagelab's parser and with json.loads (the floor), which refuses the
    bare nan/inf that fio can print."""

    out, left, other_layouts = [], [], []
    for p in _candidates():
        data = p.read_bytes()
        if b'"fio version"' not in data:
            continue
        doc, name = last_json_document(data), p.relative_to(ROOT)
        if b'"client_stats"' in data:  # fio --client's reports: another layout of jobs, left to the tests
            left.append(f"{name} (a fio client/server report)")
            continue
        if doc is None:  # not fio's layout: kept aside, compared by content below
            other_layouts.append((name, data))
            continue
        try:
            json.loads(doc, parse_constant=_refuse)
        except ValueError:
            left.append(f"{name} (bare nan/inf or not JSON: json.loads fails)")
            continue
        try:
            parse_bytes(doc)
        except Exception as e:
            left.append(f"{name} (storagelab: {e})")
            continue
        if doc not in out:
            out.append(doc)
    if not out:
        raise SystemExit("no templates for fio-json")
    decoded = [json.loads(doc) for doc in out]
    for name, data in other_layouts:  # the relayout fixtures: fio's document re-serialized
        try:
            same = json.loads(data) in decoded
        except ValueError:
            same = False
        why = "the same document as a template, laid out otherwise" if same else "not in fio's own layout"
        left.append(f"{name} ({why}: the re-serialized corpora cover its layout)")
    return out, left


_RELAYOUT = {
    "fio-json-indent2": ", then re-serialized with json.dumps(doc, indent=2)",
    "fio-json-oneline": ", then re-serialized onto one line with json.dumps(doc)",
}


def _refuse(name: str):
    raise ValueError(f"bare {name}")


def vary_json(data: bytes, rng: random.Random) -> bytes:
    """vary() for a JSON document: only numbers outside quoted strings, so that keys (percentiles,
    JSON+ bins) and string values ("bs" : "64k") stay as fio wrote them, and no key can repeat."""

    def sub(m):
        s = m.group(1)
        if s is None:
            return m.group(0)
        return str(rng.randrange(10 ** (len(s) - 1), 10 ** len(s))).encode()

    return JSON_TOKEN.sub(sub, data)


def _parses(data: bytes) -> bool:

    try:
        parse_bytes(data)
        return True
    except Exception:
        return False


def choose_variation(tmpl: list[bytes], rng: random.Random) -> list[tuple[bytes, str]]:
    """(template, how) for the templates kept: 'numbers' when 5 varied copies all parse, 'blank lines'
    when the varied numbers break the file's own consistency checks, none when even that fails."""
    kept = []
    for t in tmpl:
        if all(_parses(vary(t, rng)) for _ in range(5)):
            kept.append((t, "numbers"))
        elif _parses(t + b"\n" * 3):
            kept.append((t, "blank lines"))
    return kept


def describe(kind: str, kept: list[tuple[bytes, str]], dropped: int, left: list[str] = ()) -> str:

    if kind.startswith("fio-json"):
        formats: dict[str, int] = {}
        jobs, versions = [], set()
        for t, _ in kept:
            fmt = parse_bytes(t)[0].format  # fio-json+ when the document has latency bins
            formats[fmt] = formats.get(fmt, 0) + 1
            doc = json.loads(t)
            jobs.append(len(doc["jobs"]))
            versions.add(doc.get("fio version", "no version"))
        text = ", ".join(f"{n} {k}" for k, n in sorted(formats.items()))
        return (
            f"{kind}: {len(kept)} templates, the JSON document of each real fio JSON/JSON+ output "
            f"({text}; {min(jobs)}-{max(jobs)} jobs per template; versions {', '.join(sorted(versions))}), "
            f"numeric values outside strings varied"
            + _RELAYOUT.get(kind, "")
            + (f"; left out: {'; '.join(left)}" if left else "; none left out (none has bare nan/inf)")
        )
    counts: dict[str, int] = {}
    for t, how in kept:
        mod, fmt = detect(decode(t))
        key = f"{fmt} ({how})"
        counts[key] = counts.get(key, 0) + 1
    text = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    return f"{kind}: templates varied by {text}" + (f"; {dropped} left out (no variation parses)" if dropped else "")


COPIES_DISTINCT = 300  # the mostly-identical corpus: this many distinct files, the rest byte-identical copies


def build(kind: str, n: int) -> tuple[Path, str]:
    if kind == FIO_31:
        folders = fioplot_compare.corpus(CORPUS)
        return folders[0].parent, (
            f"{FIO_31}: the 392 real fio 3.1 JSON files of fio-plot's published benchmark "
            'data (duplicate "0.00" percentile keys, fio <= 3.3), in 100 folders with the '
            f"timestamp changed per copy: {sum(1 for f in folders for _ in f.glob('*.json'))} "
            "files (benchmarks/data/README.md)"
        )
    d = CORPUS / f"{kind}-{n}"
    rng = random.Random(f"{kind}-{n}")
    tmpl, left = json_templates() if kind.startswith("fio-json") else (templates(kind), [])
    if kind == "fio-json-copies":
        note = f"fio-json-copies: as fio-json, but only {COPIES_DISTINCT} distinct files; the rest are byte-identical copies"
    check = kind == "mixed"  # fio outputs have no cross-checks that varied numbers break
    kept = choose_variation(tmpl, rng) if check else [(t, "numbers") for t in tmpl]
    note = note if kind == "fio-json-copies" else describe(kind, kept, len(tmpl) - len(kept), left)
    h = hashlib.sha256(f"{CORPUS_VERSION} {kind} {n}".encode())
    for t in tmpl:
        h.update(hashlib.sha256(t).digest())
    stamp = f"corpus {CORPUS_VERSION} templates {h.hexdigest()}\n"
    done = d / ".done"
    if done.exists() and done.read_text() == stamp:
        return d, note
    shutil.rmtree(d, ignore_errors=True)  # made from other templates or another variation
    d.mkdir(parents=True)
    vary_one = vary_json if kind.startswith("fio-json") else vary
    if kind in _RELAYOUT:
        indent = 2 if kind == "fio-json-indent2" else None

        def relayout(t: bytes, rng: random.Random) -> bytes:
            return json.dumps(json.loads(vary_json(t, rng)), indent=indent).encode() + b"\n"

        vary_one = relayout
    made, distinct = 0, []
    while made < n:
        if kind == "fio-json-copies" and made >= COPIES_DISTINCT:
            sub = d / f"{made // 1000:04d}"
            sub.mkdir(exist_ok=True)
            (sub / f"run{made:06d}.log").write_bytes(distinct[made % COPIES_DISTINCT])
            made += 1
            continue
        t, how = kept[made % len(kept)]
        if how == "numbers":
            data = vary_one(t, rng)
            for _ in range(5):
                if not check or _parses(data):
                    break
                data = vary_one(t, rng)
            else:
                data = t + b"\n" * (made // len(kept) + 1)
        else:
            data = t + b"\n" * (made // len(kept) + 1)
        sub = d / f"{made // 1000:04d}"
        sub.mkdir(exist_ok=True)
        (sub / f"run{made:06d}.log").write_bytes(data)
        if kind == "fio-json-copies":
            distinct.append(data)
        made += 1
    done.write_text(stamp)
    return d, note


def files_of(d: Path) -> list[Path]:
    return sorted(p for p in d.rglob("*") if p.suffix in (".log", ".json") and not p.name.startswith("."))


def floor(d: Path, kind: str) -> float:
    t = time.perf_counter()
    for p in files_of(d):
        with open(p, "rb") as fh:
            data = fh.read()
        if kind.startswith("fio-json"):
            json.loads(data)
    return time.perf_counter() - t


STAGES = ("read", "sha256", "json.loads", "orjson", "parse", "chunk")
# the parse of one file, step by step: a fio JSON file's fast path (parsers/fio/fastjson.py), a text file's general path
JSON_STEPS = ("orjson", "check", "spans", "typed", "rows")
TEXT_STEPS = ("decode", "detect", "parse text", "text plain")  # the last two: text_steps.steps()
TARGET_X_FLOOR = 1.5  # issue 27 (issue 6 had 2x)


# One cold ingest in a new process, cut where the parsing starts and ends: what ``phases`` runs. Its first line
# runs before any import, so the imports count as start-up.
_PHASES_SCRIPT = """
import time; t0 = time.perf_counter()
import json, sys, tempfile
from pathlib import Path
from storagelab.store import pipeline
imported = time.perf_counter()
real, marks = pipeline.parse_all, {}
def timed_parse_all(*a, **k):
    marks["start"] = time.perf_counter()
    yield from real(*a, **k)
    marks["end"] = time.perf_counter()
pipeline.parse_all = timed_parse_all
with tempfile.TemporaryDirectory() as tmp:
    pipeline.ingest([sys.argv[1]], db_path=Path(tmp) / "x.duckdb", manifest_path=Path(tmp) / "none.csv",
                    progress=False)
    done = time.perf_counter()
print(json.dumps({"imports": imported - t0, "before": marks["start"] - imported,
                  "parsing": marks["end"] - marks["start"], "after": done - marks["end"], "inside": done - t0}))
"""


def phases(d: Path, repeat: int) -> dict[str, float]:
    """Where a cold ingest's wall time goes (medians of ``repeat`` runs), each run a new Python process as
    `storagelab ingest` is: ``start-up`` = the interpreter starting, the imports and the process's exit; ``before`` (manifest, listing,
    schema, plan), ``parsing`` (the workers parse while the main process writes the batches), ``after`` (the
    last batch, the Parquet export, closing the database). Only ``parsing``
    runs on every core: the rest is one process's time, whatever the cores."""
    runs: dict[str, list[float]] = {"start-up": [], "before": [], "parsing": [], "after": []}
    for _ in range(repeat):
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", _PHASES_SCRIPT, str(d)],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "lib")},
        )
        wall = time.perf_counter() - t
        got = json.loads(out.stdout.strip().splitlines()[-1])
        # the interpreter's start before the script's first line and the process's exit: the wall time it did not see
        runs["start-up"].append(got["imports"] + max(wall - got["inside"], 0.0))
        for k in ("before", "parsing", "after"):
            runs[k].append(got[k])
    return {k: statistics.median(v) for k, v in runs.items()}


def breakdown(d: Path, kind: str, sample: int = 2000) -> dict:
    """Where a worker's time goes, per file, in this process on one core (best of 3, CPU time): read,
    SHA-256, parse (decode + detect + parse: parse_bytes), and a whole worker chunk (read, hash, parse,
    rows to typed Arrow columns: store.parse_chunk); with the floor's json.loads for comparison. The
    chunk time x files / cores bounds the cold ingest from below whatever the writer does."""

    files = files_of(d)[:sample]
    datas = [p.read_bytes() for p in files]
    jobs = [(str(p), str(p), len(b), 0) for p, b in zip(files, datas, strict=True)]

    def read():
        for p in files:
            with open(p, "rb") as fh:
                fh.read()

    def chunks():
        for i in range(0, len(jobs), 128):
            store.parse_chunk(jobs[i : i + 128])

    stages = {
        "read": read,
        "sha256": lambda: [hashlib.sha256(b).hexdigest() for b in datas],
        "json.loads": (lambda: [json.loads(b) for b in datas]) if kind.startswith("fio-json") else None,
        "orjson": (lambda: [orjson.loads(b) for b in datas]) if kind.startswith("fio-json") else None,
        "parse": lambda: [parse_bytes(b) for b in datas],
        "chunk": chunks,
    }
    stages.update(parse_steps(datas, kind))
    out = {}
    for name, fn in stages.items():
        if fn is None:
            continue
        best = float("inf")
        for _ in range(3):
            t = time.process_time()
            fn()
            best = min(best, time.process_time() - t)
        out[name] = best / len(files) * 1e6
    out["lines"] = sum(b.count(b"\n") for b in datas) / len(datas)
    return out


def parse_steps(datas: list[bytes], kind: str) -> dict:
    """Each step of a file's parse on its own, over the same files (each step's input made beforehand): for fio
    JSON, the fast path's orjson decode (``orjson`` above), its check of the decoded object against the bytes, the
    line spans from the bytes, the msgspec typing and the row building; for text, decode, detect and the parser."""

    if kind.startswith("fio-json"):
        objs = [orjson.loads(b) for b in datas]
        spans = [fastjson._spans(b, o) for b, o in zip(datas, objs, strict=True)]
        docs = [msgspec.convert(o, fastjson._Doc) for o in objs]

        def rows():
            for doc, o, sp in zip(docs, objs, spans, strict=True):
                fastjson._rows(Parsed(tool="fio", format="fio-json"), doc, o, (3, 0), sp)

        return {
            "check": lambda: [fastjson._decoded_as_written(b, o) for b, o in zip(datas, objs, strict=True)],
            "spans": lambda: [fastjson._spans(b, o) for b, o in zip(datas, objs, strict=True)],
            "typed": lambda: [msgspec.convert(o, fastjson._Doc) for o in objs],
            "rows": rows,
        }
    texts = [decode(b) for b in datas]
    found = [detect(t) for t in texts]
    return {"decode": lambda: [decode(b) for b in datas], "detect": lambda: [detect(t) for t in texts]} | steps(
        texts, found
    )


def _tree_pss_kib(pid: int) -> int:
    """Memory of a process and all its descendants (Linux /proc), in KiB: the proportional set size,
    so that pages the forked workers share with the writer are counted once, not once per process."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                total += next((int(ln.split()[1]) for ln in fh if ln.startswith("Pss:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run_ingest(d: Path, db: Path, workers: int | None) -> tuple[float, float, float, str]:
    """Wall time of a whole `storagelab ingest` process (start-up included), its CPU time and its
    workers', peak memory of them together (PSS, sampled every 100 ms) and its summary line."""
    cmd = [sys.executable, "-m", "storagelab", "ingest", str(d), "--db", str(db), "--quiet"]
    if (d / "manifest.csv").exists():  # (a --manifest that does not exist is refused)
        cmd += ["--manifest", str(d / "manifest.csv")]
    if workers:
        cmd += ["--workers", str(workers)]
    cpu0 = _children_cpu()
    t = time.perf_counter()
    # Python's bytecode cache on, as in any installation (this machine's environment turns it off
    # globally with PYTHONDONTWRITEBYTECODE, which makes every start compile storagelab's sources)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    p = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(env, PYTHONPATH=str(ROOT / "lib"))
    )
    peak = [0]

    def sample() -> None:  # memory every 100 ms in a thread, so the wall time is not rounded up to a sample
        while p.poll() is None:
            peak[0] = max(peak[0], _tree_pss_kib(p.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = p.communicate()
    wall = time.perf_counter() - t
    sampler.join()
    cpu = _children_cpu() - cpu0
    peak = peak[0]
    if p.returncode not in (0, 1):
        raise SystemExit(f"ingest failed ({p.returncode}): {err[-2000:]}")
    summary = out.strip().splitlines()[-1] if out.strip() else err[-500:]
    return wall, cpu, peak / 1024, summary


def _children_cpu() -> float:
    """User + system CPU seconds of the waited-for child processes (and their waited-for children)."""

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def change_one_percent(d: Path) -> int:
    files = files_of(d)
    step = 100
    n = 0
    for p in files[::step]:
        with open(p, "ab") as fh:
            fh.write(b"\n")
        n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--kinds", default=KINDS, help=f"corpora (default {KINDS}; {FIO_31} is always 9,800 files)")
    ap.add_argument("--no-fioplot", action="store_true", help=f"do not time fio-plot on the {FIO_31} corpus")
    ap.add_argument("--mixed-sizes", default=None, help="sizes for the mixed corpus (default: --sizes)")
    ap.add_argument("--large-sizes", default="", help="more sizes for --large-kinds only (e.g. 100000)")
    ap.add_argument("--large-kinds", default="fio-json,fio-text", help="the kinds --large-sizes applies to")
    ap.add_argument(
        "--huge-mb", type=int, default=0, help="also ingest one fio normal-text log of this many MB (peak memory)"
    )
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="cold ingests of each corpus of up to 10,000 files (and fio-plot runs): the median is reported, "
        "with the range (the machine is shared; one run can be 30 %% off)",
    )
    ap.add_argument("--no-notebooks", action="store_true", help="skip timing `storagelab build` (notebooks + reports)")
    args = ap.parse_args()
    rows, notes, parts = [], [], []
    for kind in args.kinds.split(","):
        sizes = args.mixed_sizes if kind == "mixed" and args.mixed_sizes else args.sizes
        if args.large_sizes and kind in args.large_kinds.split(","):
            sizes += "," + args.large_sizes
        if kind == FIO_31:
            sizes = "9800"
        for n in (int(x) for x in sizes.split(",")):
            d, note = build(kind, n)
            if note not in notes:
                notes.append(note)
                print(note, flush=True)
            mb = sum(p.stat().st_size for p in files_of(d)) / 1e6
            fl = min(floor(d, kind) for _ in range(2))
            out_dir = CORPUS / f"{kind}-{n}-db"  # the database and its Parquet export
            db = out_dir / "storagelab.duckdb"
            load = os.getloadavg()[0]
            colds = []
            for _ in range(max(args.repeat, 1) if n <= 10000 else 1):
                shutil.rmtree(out_dir, ignore_errors=True)
                out_dir.mkdir(parents=True)
                colds.append(run_ingest(d, db, args.workers))
            cold = statistics.median(c[0] for c in colds)
            cpu = statistics.median(c[1] for c in colds)
            rss = max(c[2] for c in colds)
            s1 = colds[-1][3]
            warm, _, _, s2 = run_ingest(d, db, args.workers)
            changed = change_one_percent(d)
            one, _, _, s3 = run_ingest(d, db, args.workers)
            row = dict(
                kind=kind,
                files=n,
                mb=mb,
                floor_s=fl,
                cold_s=cold,
                cpu_s=cpu,
                load=load,
                files_per_s=n / cold,
                mb_per_s=mb / cold,
                peak_rss_mib=rss,
                reingest_s=warm,
                changed=changed,
                changed_s=one,
                cold_x_floor=cold / fl,
                cold_range=(min(c[0] for c in colds), max(c[0] for c in colds)),
                runs=len(colds),
                summary=s1,
            )
            rows.append(row)
            print(
                f"{kind:9} {n:>7} files {mb:8.1f} MB | floor {fl:6.2f}s | cold {cold:7.2f}s "
                f"[{row['cold_range'][0]:.2f}-{row['cold_range'][1]:.2f}, {len(colds)} runs] "
                f"({n / cold:7.0f} files/s, {mb / cold:6.1f} MB/s, {cold / fl:5.1f}x floor, CPU {cpu:6.1f}s, "
                f"load before {load:.1f}) | peak {rss:6.0f} MiB | "
                f"re-ingest {warm:5.2f}s ({warm / fl:.2f}x) | 1% changed {one:5.2f}s ({one / fl:.2f}x, {changed} files)",
                flush=True,
            )
            for s in (s1, s2, s3):
                if "failed 0" not in s:
                    print(f"  !! {s}", flush=True)
            if (n == 10000 and kind != "mixed") or kind == FIO_31:
                b = breakdown(d, kind)
                b["kind"], b["files"] = kind, n
                b["bound_s"] = b["chunk"] * n / 1e6 / (args.workers or os.cpu_count() or 1)
                b["phases"] = phases(d, max(args.repeat, 1))
                free = [parse_free(d) for _ in range(max(args.repeat, 1))]
                b["parse_free"] = {
                    k: statistics.median(f[k] for f in free) for k in ("parse_free_s", "parse_free_cpu_s")
                }
                parts.append(b)
                print(
                    "  per file, one core: "
                    + ", ".join(f"{k} {b[k]:.0f} us" for k in STAGES if k in b)
                    + f"; workers alone need >= {b['bound_s']:.2f} s for {n} files; phases "
                    + ", ".join(f"{k} {v:.2f} s" for k, v in b["phases"].items())
                    + f"; with parsing free {b['parse_free']['parse_free_s']:.2f} s after start-up",
                    flush=True,
                )
    extra, measured = [], {}
    if FIO_31 in args.kinds.split(",") and not args.no_fioplot:
        exe = fioplot_compare.fioplot()
        if exe:
            folders = fioplot_compare.corpus(CORPUS)
            times = [
                fioplot_compare.run_fioplot(exe, folders, CORPUS / "fioplot.png") for _ in range(max(args.repeat, 1))
            ]
            measured["fioplot_s"] = statistics.median(times)
            measured["fioplot_range"] = (min(times), max(times))
            print(
                f"fio-plot 1.1.21 -C on the same {FIO_31} folders: {measured['fioplot_s']:.2f} s "
                f"(median of {len(times)}, {min(times):.2f}-{max(times):.2f})",
                flush=True,
            )
        else:
            extra += ["", "fio-plot was not timed: it could not be installed from PyPI in benchmarks/.venv-fioplot/."]
    if args.huge_mb:
        extra += huge_log(args.huge_mb, measured)
    if not args.no_notebooks:
        extra += notebooks_and_reports(measured)
    big = CORPUS / "fio-text-100000-db" / "storagelab.duckdb"
    if big.exists():
        extra += queries(big, measured)
    write_results(rows, notes, parts, targets(rows, measured) + bounds(rows, parts, measured) + extra)


def huge_log(mb: int, measured: dict) -> list[str]:
    """One fio normal-text log of ``mb`` MB (job blocks of a real fio 3.16 output, group_reporting off, as a
    run of many jobs prints it): cold ingest wall time and peak memory (issue 13: under 1 GiB whatever the
    size; the whole-file parse took about 11x the file)."""
    src = (ROOT / "data" / "raw" / "homelab-mergerfs" / "fio-zfs-mirror-zfs0.8.4.txt").read_bytes().split(b"\n")
    block = b"\n".join(src[1:22]) + b"\n"  # one job block: header .. latency target line
    n = mb * 1_000_000 // len(block)
    d = CORPUS / f"huge-{mb}mb"
    log = d / "huge-run.log"
    if not log.exists() or log.stat().st_size < mb * 1_000_000:
        d.mkdir(parents=True, exist_ok=True)
        with open(log, "wb") as fh:
            for _ in range(0, n, 10_000):
                fh.write(block * min(10_000, n - _))
            fh.write(b"\n" + b"\n".join(src[22:]))
    out_dir = CORPUS / f"huge-{mb}mb-db"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    wall, cpu, rss, summary = run_ingest(d, out_dir / "storagelab.duckdb", None)
    size = log.stat().st_size / 1e6
    measured.update(huge_mb=size, huge_s=wall, huge_peak_mib=rss)
    line = (
        f"one fio normal-text log of {size:,.0f} MB ({n:,} job blocks): cold ingest {wall:.1f} s "
        f"({size / wall:.1f} MB/s, CPU {cpu:.1f} s), peak {rss:.0f} MiB; {summary}"
    )
    print(line, flush=True)
    return ["", "## A huge log (streamed)", "", line]


def targets(rows: list[dict], measured: dict) -> list[str]:
    """Issues 6, 14 and 27's targets against this run's figures (a target whose corpus was not run is left out)."""
    by = {(r["kind"], r["files"]): r for r in rows}
    out = []

    def add(target, value, ok):
        out.append(f"| {target} | {value} | {'met' if ok else 'missed'} |")

    j, t = by.get(("fio-json", 10000)), by.get(("fio-text", 10000))
    for kind, n in (("fio-json", 10000), ("fio-json-indent2", 10000), ("fio-json-oneline", 10000), (FIO_31, 9800)):
        r = by.get((kind, n))
        if r:
            add(
                f"{n:,} fio JSON ({kind}): cold ingest within {TARGET_X_FLOOR}x of the json.load floor",
                f"{r['cold_s']:.2f} s {_range(r)} vs floor {r['floor_s']:.2f} s = {r['cold_x_floor']:.2f}x",
                r["cold_x_floor"] <= TARGET_X_FLOOR,
            )
    fp, old = measured.get("fioplot_s"), by.get((FIO_31, 9800))
    if fp and old:
        add(
            "at least 2x faster than fio-plot -C on the same 9,800 files (wall)",
            f"storagelab {old['cold_s']:.2f} s {_range(old)} vs fio-plot {fp:.2f} s "
            f"[{measured['fioplot_range'][0]:.2f}-{measured['fioplot_range'][1]:.2f}] = {fp / old['cold_s']:.1f}x faster",
            fp / old["cold_s"] >= 2,
        )
    cp = by.get(("fio-json-copies", 10000))
    if cp and j:
        add(
            "10,000 mostly identical copies no slower than 10,000 distinct (fio-json)",
            f"{cp['cold_s']:.2f} s {_range(cp)} vs {j['cold_s']:.2f} s {_range(j)}",
            cp["cold_s"] <= j["cold_s"],
        )
    if t:
        add(
            "10,000 fio normal text: at least 5,000 files/s",
            f"{t['files_per_s']:.0f} files/s ({t['cold_s']:.2f} s {_range(t)})",
            t["files_per_s"] >= 5000,
        )
    for r in (j, t):
        if r:
            add(
                f"re-ingest of the unchanged 10,000 ({r['kind']}): under 0.5 s",
                f"{r['reingest_s']:.2f} s",
                r["reingest_s"] < 0.5,
            )
            add(f"1 % changed ({r['kind']}, 10,000): under 1 s", f"{r['changed_s']:.2f} s", r["changed_s"] < 1)
    for kind in ("fio-json", "fio-text"):
        big, ten = by.get((kind, 100000)), by.get((kind, 10000))
        if big:
            add(
                f"peak memory at 100,000 ({kind}): under 500 MiB",
                f"{big['peak_rss_mib']:.0f} MiB",
                big["peak_rss_mib"] < 500,
            )
        if big and ten:
            x = big["cold_s"] / ten["cold_s"]
            add(f"100,000 files at most 11x the 10,000 ({kind})", f"{x:.1f}x", x <= 11)
    if "huge_peak_mib" in measured:
        add(
            f"one {measured['huge_mb']:,.0f} MB fio log: peak memory under 1 GiB (issue 13)",
            f"{measured['huge_peak_mib']:.0f} MiB ({measured['huge_s']:.0f} s)",
            measured["huge_peak_mib"] < 1024,
        )
    if "build_s" in measured:
        add(
            "every notebook and every HTML report: under 60 s",
            f"{measured['build_s']:.1f} s",
            measured["build_s"] < 60 and measured["build_ok"],
        )
    if "slowest_query_s" in measured:
        add(
            "notebook queries at 100,000 runs: under 1 s",
            f"slowest {measured['slowest_query_s'] * 1000:.0f} ms",
            measured["slowest_query_s"] < 1,
        )
    if not out:
        return []
    return [
        "",
        "## Targets (issues 6, 14 and 27), this run",
        "",
        "Cold times are medians, [the range of the runs]; a target is judged on the median.",
        "",
        "| target | measured | |",
        "| --- | --- | --- |",
    ] + out


def _range(r: dict) -> str:
    """'[min-max of n runs]' of a corpus's cold ingests ('' for one run)."""
    lo, hi = r["cold_range"]
    return f"[{lo:.2f}-{hi:.2f}, {r['runs']} runs]" if r["runs"] > 1 else ""


def bounds(rows: list[dict], parts: list[dict], measured: dict) -> list[str]:
    """What bounds the cold ingest of each 10,000-file corpus, from this run's figures: the CPU it used
    over the cores it had (the least wall time at that CPU), split into the parsing workers' part (the
    chunk cost above x files) and the rest (start-up of each process, listing, the DuckDB inserts and
    commits, the Parquet export), against the CPU the target allows."""
    cores = os.cpu_count() or 1
    by = {(r["kind"], r["files"]): r for r in rows}
    out = []
    fp = measured.get("fioplot_s")
    timeline = []
    shares: list[tuple[float, float]] = []  # per corpus: one-process phases / target, parsing / what is left
    budgets: dict[str, float] = {}  # per corpus: the wall time its target allows
    for b in parts:
        r = by.get((b["kind"], b["files"]))
        if not r or b["kind"] == "fio-json-copies":  # its copies are never parsed: chunk x files does not apply
            continue
        workers = b["chunk"] * r["files"] / 1e6
        rest = max(r["cpu_s"] - workers, 0.0)
        x = TARGET_X_FLOOR
        if b["kind"] == FIO_31 and fp:
            budget = min(x * r["floor_s"], fp / 2)
            target = f"{x} x floor {x * r['floor_s']:.2f} s, fio-plot / 2 {fp / 2:.2f} s"
        elif b["kind"].startswith("fio-json"):
            budget = x * r["floor_s"]
            target = f"{x} x floor = {budget:.2f} s"
        else:
            budget = r["files"] / 5000
            target = f"5,000 files/s = {budget:.2f} s"
        budgets[b["kind"]] = budget
        out.append(
            f"| {b['kind']} | {r['cold_s']:.2f} | {r['cpu_s']:.1f} | {r['cpu_s'] / cores:.2f} | {workers:.1f} | "
            f"{rest:.1f} | {target}: CPU <= {budget * cores:.1f} s |"
        )
        ph = b.get("phases")
        if ph:
            serial = ph["start-up"] + ph["before"] + ph["after"]
            left = budget - serial
            need = f"{ph['parsing'] / left:.1f}x" if left > 0 else "impossible"
            shares.append((serial / budget, ph["parsing"] / left if left > 0 else float("inf")))
            timeline.append(
                f"| {b['kind']} | {ph['start-up']:.2f} | {ph['before']:.2f} | {ph['parsing']:.2f} | {ph['after']:.2f} | "
                f"{serial:.2f} | {budget:.2f} | {max(left, 0):.2f} | {need} |"
            )
    if not out:
        return []
    free = parse_free_lines(parts, budgets)
    fj = next((b for b in parts if b["kind"] == "fio-json"), None)
    if timeline:
        timeline = [
            "",
            "Where the wall time goes (medians of --repeat runs, measured after the cold runs, each a new process "
            "as `storagelab ingest` is): start-up = the interpreter starting, the imports and the process's exit; "
            "before = manifest, listing, schema and plan; parsing = the "
            "workers parse while the main process writes the batches (the only phase that uses every core); "
            "after = the last batch, the Parquet export, closing the database. The one-process phases are paid "
            "whatever the parsing costs; what is left of the target is the time the parsing phase would have.",
            "",
            "| corpus | start-up s | before s | parsing s | after s | one process s | target s | left for parsing s "
            "| parsing must get faster by |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            *timeline,
        ]
    lines = [
        "",
        "## What bounds the missed targets",
        "",
        cpu_bound_sentence(rows, cores)
        + " Workers = the parsing chunks' CPU (chunk x files, table above); rest = everything "
        "else: each process's start-up and imports, the listing, the main process's DuckDB inserts and "
        f"commits ({rows_note(by)}), the Parquet export.",
        "",
        "| corpus | cold s | CPU s | CPU / cores s | workers CPU s | rest CPU s | target |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
        *out,
        *timeline,
        *free,
        "",
    ]
    if fj:
        compiled = sum(fj[k] for k in ("orjson", "check", "typed"))
        lines.append(
            f"A fio JSON file (fio-json) costs {fj['parse']:.0f} µs to parse on one core (the floor's json.loads takes "
            f"{fj['json.loads']:.0f} µs): {compiled:.0f} µs in compiled code (orjson's decode {fj['orjson']:.0f}, "
            f"the check against the bytes {fj['check']:.0f}, msgspec's typing {fj['typed']:.0f}), the spans "
            f"{fj['spans']:.0f} µs and the rows {fj['rows']:.0f} µs in Python. A whole worker chunk adds the read, "
            f"the hash and the rows to Arrow: {fj['chunk']:.0f} µs a file."
        )
        lines.append("")
    ft = next((b for b in parts if b["kind"] == "fio-text"), None)
    if ft:
        lines.append(
            f"A fio normal-text file costs {ft['parse']:.0f} µs to parse on one core: decode {ft['decode']:.0f}, "
            f"detect {ft['detect']:.0f}, the text parser {ft['parse text']:.0f} µs (a state machine over the lines "
            f"in Python, about {ft['parse text'] / ft['lines']:.1f} µs a line, {ft['lines']:.0f} lines a file); a whole "
            f"worker chunk {ft['chunk']:.0f} µs."
        )
        lines.append("")
    fp, old = measured.get("fioplot_s"), by.get((FIO_31, 9800))
    if fp and old:
        lines.append(
            f"fio-plot's `-C` ({fp:.2f} s) reads each file with json.load and extracts the few values its chart shows; "
            "the ingest stores every value of every file with its provenance, so 2x faster "
            f"than fio-plot means {fp / 2:.2f} s for all of that. "
        )
        lines.append("")
    lines += [
        (
            f"The one-process phases alone take {min(a for a, _ in shares):.0%}-{max(a for a, _ in shares):.0%} of "
            f"each target (table above), so the parsing phase would have to be "
            f"{min(b for _, b in shares):.1f}-{max(b for _, b in shares):.1f}x as fast. "
            if shares
            else ""
        )
        + "What is left of the parsing phase (issue 27): a fio JSON file's compiled steps (orjson, the check, "
        "msgspec) and its Python (spans, rows) in the step table above; a text file's parser in Python. What "
        "would close the rest: the rows built in compiled code too, DuckDB inserts in fewer transactions "
        "(see below), or more cores: the parsing phase divides by them, the one-process phases do not.",
        "",
        *ISSUE_27_NOTES,
        "",
        "Done (2026-11-24, second session): the fio JSON fast path checks the decoded document against the bytes "
        "by encoding it again in C and counting colons, instead of walking every key in Python (on that day's "
        "corpus of 26 templates a fio JSON parse went from 267 to 218 µs a file; the corpus has since gained real "
        "outputs such as kbench's 12-job documents, so its figures above are not comparable with earlier runs); "
        "percentile, JSON+ bin and iodepth rows are made by zip.",
        "",
        "Tried and not adopted (2026-11-24, 3 runs each): batches of 300,000 rows instead of 100,000, and DuckDB "
        "limited to one thread, each took 0.3-0.4 s of CPU off the main process, inside the run-to-run range. "
        "Writing the batch whenever the workers are behind (so that less is left for after the parsing) cut the "
        "last batch from about 0.11 to 0.03 s but made the whole ingest slower (fio-json-3.1 2.27 -> 2.65 s): "
        "a DuckDB transaction over the eight fio tables costs about 15 ms whatever its size (400,000 rows in 5 "
        "transactions 0.33 s, in 80 transactions 1.46 s), so batches must stay large.",
    ]
    return lines


# What was done and tried for issue 27 (2026-11-26), measured in one process, CPU time per file (medians or best of
# several runs over the same files; the machine was shared by other work at a load of 7-11 on 2 cores throughout)
ISSUE_27_NOTES = [
    "Done (2026-11-26, issue 27): fio JSON has one fast path and one general path. The fast path "
    "(`parsers/fio/fastjson.py`) decodes with orjson, checks the decoded object against the bytes in C (as "
    "before), types it with msgspec `Struct`s (a count that is not whole, a string where a number belongs, an "
    "integer past 64 bits, an unknown layout: declined) and builds the rows from typed values, with the job "
    "options' derived values kept per option set (runs of a study repeat them) and the latency bucket edges "
    "worked out once per label set. The general path decodes with the regex token pass alone (the C-scanner "
    "walk `_Document._fast` and `parse_plain` are gone). Same process, same files, old code against new: "
    "fio-json 290-307 -> 219-244 µs a file, fio-json-3.1 130-149 -> 114-120 µs.",
    "",
    "Tried (2026-11-26): the spans found with bytes.find instead of one regex pass (slower: 9 -> 15 µs a file); "
    "the text parser's percentile and IO depth loops as list comprehensions (3-5 % slower: the comprehension "
    "turns the method's locals into cells); a cheaper first test for a JSON line inside the text (no change "
    "beyond the noise). Rows built column-wise (no tuples) would save at most the transposition, 4-16 µs a "
    "file of the 14-43 µs that rows to Arrow take (the rest is pyarrow converting Python numbers), so it was "
    "not done. Batches of 400,000 rows instead of 100,000 (fewer, larger transactions: each commit of the "
    "eight fio tables costs about 45 ms of the main process's CPU, 21 commits for 10,000 fio-json files): the "
    "writer's CPU went from 2.3 to 1.3 s, but the whole ingest was slower (17.1-18.2 -> 20.0-20.1 s wall at a "
    "load of 8-9, CPU 6.0-6.2 -> 5.6-5.8 s) and its peak memory higher (234-237 -> 264-276 MiB at 10,000 files), "
    "so batches stay at 100,000 rows. DuckDB's checkpoint_threshold raised to 1 GB only moved the checkpoints' "
    "CPU from the commits to the close.",
    "",
    "Done (2026-11-26, evening, issue 27: the main process). Measured by phase in the main process alone "
    "(CPU time, `time.process_time`, the ingest run in-process with its stages timed; load 1.3, one other "
    "process on one core): the 9,800 fio-plot files cost it 1.03 s (imports 0.09, before 0.26, parsing "
    "0.42 of which batch writes 0.40 in 4 batches, after 0.26: the last batch 0.09, the Parquet export "
    "0.11, the close about 0.06) beside the workers' 1.40 s; 10,000 fio-json files 2.35 s (batch writes "
    "1.58 s in 16 batches: inserts 0.91, commits 0.67; the export 0.30 s) beside the workers' 3.1 s. "
    "Three cuts, each measured against the code before it in interleaved runs: (1) the database's own "
    "files (a database inside the folder it ingests) were found with a `realpath` of every listed file, "
    "0.13 s for 9,800 files; now a folder's real path is resolved once, and when no folder listed holds "
    "the database or its Parquet folder only a file named on the command line is checked: main process "
    "1.28 -> 1.12 s (medians of 5). (2) DuckDB on one thread while the workers parse (on 2026-11-24 for "
    "the whole ingest: within the run-to-run range of whole runs; here in interleaved pairs of the main "
    "process alone): the workers hold the cores, and DuckDB's own threads only compete with them; its "
    "default again for the last batch, the export and the close: the batch writes of 10,000 fio-json "
    "files 1.69/1.54/1.81 -> 1.40/1.33/1.52 s (interleaved pairs), of the 9,800 fio-plot files "
    "0.61/0.51/0.59 -> 0.48/0.45/0.42 s. (3) 8 chunks in flight per worker instead of 3: while the main "
    "process wrote a batch (100-150 ms), the workers ran out of submitted chunks (3 chunks are 50-100 ms "
    "of parsing); the submit and start times of every chunk of the 9,800 fio-plot files showed the two "
    "workers waiting 1.1-1.9 s in all for a chunk with 3, 0-0.1 s with 8 (at a load of 10, which "
    "stretches the writer), for 3 MiB more peak memory in the main process (10,000 fio-json files: 217 -> "
    "221 MiB). All three together against the code before them, interleaved, CPU of the whole `storagelab "
    "ingest` process and its workers (load 7-10): the 9,800 fio-plot files 2.80 -> 2.58 s (main process "
    "1.19 -> 0.95 s; medians of 4), 10,000 fio-json files 5.49 -> 4.91 s (main 2.50 -> 2.08 s; medians of "
    "2).",
    "",
    "Tried (2026-11-26, evening), not adopted: the Parquet export (44 tables, 36 of them empty after a "
    "fio ingest, about 0.9 ms each) as one `EXPORT DATABASE` (0.067-0.085 s against 0.084-0.095 s for the "
    "44 COPYs of 9,800 files' tables), as one multi-statement string (0.080-0.090 s), from two threads "
    "with a cursor each (same CPU, no shorter), with `preserve_insertion_order=false` (no parallel write: "
    "0.235-0.238 against 0.243-0.281 s for 10,000 fio-json files) or another compression (uncompressed "
    "0.243-0.247, lz4 0.249-0.254, zstd 0.293-0.296, snappy 0.245-0.279 s): the export's cost is DuckDB "
    "writing 1.6 million rows, and it is part of every ingest by design (README: the Parquet copy is "
    "checked on every run), so it stays (`--no-parquet` skips it); a CHECKPOINT in a thread while "
    "exporting (no overlap). Strings dictionary-encoded before the insert (400,000 rows: 0.138-0.141 "
    "against 0.141-0.142 s). The schema's DDL in one statement (13 against 14 ms: ensure_schema's 58 ms "
    "are the parsers' import, 60 ms of `re.compile` under the profiler, which the forked workers share). "
    "checkpoint_threshold 1 KB (a checkpoint at every commit: main process 2.66-2.86 against 2.32-2.63 s "
    "for 10,000 fio-json files; with auto_checkpoint_skip_wal_threshold 0, 2.73-3.06 s) and 1 GB (the "
    "checkpoints' CPU moves to the close: after 0.39 -> 0.66-0.77 s). Batches of 250,000 rows (7 commits "
    "instead of 16: main process 2.35/2.24 -> 2.09/1.97 s, but a larger last batch and close after the "
    "parsing, 0.39 -> 0.49-0.52 s, and more memory at 100,000 files, whose 459 MiB of 2026-11-25 leave 41 "
    "MiB to the target). fsync_mode NONE (no change: the commits do not wait for the disk here). "
    "`gc.freeze()` before the interpreter's exit (the exit 37 -> 20 ms) made duckdb's bindings report "
    "leaked instances on stderr (tests/test_store_verdicts.py caught it). The start-up: `python -X "
    "importtime -m storagelab ingest` spends 84 ms in `storagelab.store` (duckdb 50 ms, of which its own "
    "importlib.metadata 9, pyarrow 17, tqdm 4) and 15 ms in the CLI: nothing left to defer. On the "
    "workers' side a fio-json-3.1 file's parse is 82-84 µs (json.loads: 50 µs), a whole chunk 123-143 µs "
    "a file (read 8, SHA-256 4, rows to Arrow about 25); fio-json 143-164 µs (json.loads 79).",
    "",
    "Done (2026-11-26, night, issue 27: fio text, the workers). Three cuts in what a worker does per file, each"
    " measured in the same process against the code before it: (1) decode checks the bytes for control "
    "characters with `bytes.translate` (C) and runs its regular expression only when one is there, and replaces"
    " CRLF only when a '\\r' is there: 8.5 -> 2.5 µs a file; fio's sniff finds a job header from its literal "
    "`(groupid=` before the search of its three cues at every character: detect 5.9 -> 1.5 µs (500 files, best "
    "of 5). (2) Rows to Arrow: a Tuples table is transposed with strict zips (a row of another width still "
    "fails, named by its row) instead of a Python pass over every row checking its width: fio_percentiles 10.0 "
    "-> 6.6, fio_iodepths 6.4 -> 4.8 µs a file (2,000 files, best of 3). (3) The whole-block fast path reads "
    "every job block of the 44 real templates (61 of 61; 57 before): per-priority (cmdprio) latency lines and "
    "percentile blocks are read and checked as the general way checks them, not stored, with its warning; fio "
    "2.0's `bw (KB/s)  : min=` spacing too (tests/test_fio_text.py: no real output declines now; 1,000 damaged "
    "cmdprio and 2.0 outputs read alike by both paths). Measured with benchmarks/chunk_ab.py (main's lib "
    "against this one in interleaved processes, medians of 3 rounds, CPU): a whole worker chunk 274 -> 250 µs a"
    " file at a load of 2.0-2.3, 295 -> 261 at a load of 3.9-4.3 (parse_bytes 244 -> 217). The whole cold "
    "ingest of the 10,000 files, interleaved with main's (a new database each, CPU of the process and its "
    "workers): 4.56 -> 4.33 s (medians of 4, load 1.5-2.4), 5.19 -> 5.02 s (medians of 5, load 6.0-6.6). The "
    "bench once (`--kinds fio-text --sizes 10000 --repeat 3`), not quiet (load 3.0 before the cold runs, 4.1 "
    "after): 2.45 s [2.43-2.52], CPU 4.1 s, 4,078 files/s; step table decode 3, detect 2, parse text 211, chunk"
    " 241 µs. Not met on this evidence: with 2 cores the wall time is about (all CPU + the one-process time) / "
    "2, and 2.00 s needs the CPU at about 3.45 s beside 0.55 s of one-process phases; the workers' 2.4 s less "
    "9-12 % and the main process's 1.35 s (imports 0.10, before 0.14, batch writes while the workers parse 0.64"
    " and the rest of that phase 0.15, after 0.33: the last batch 0.09, the export 0.20, the close 0.05) leave "
    "about 3.5-3.9 s: an estimate, for the quiet run to settle. Where a text file's parse goes now (CPU, 2,000 "
    "corpus files, µs a file, of about 175): the whole-block reading 96 (its regular expressions 27, the "
    "direction sections 37 of which percentile rows 16, latency distribution rows 15, IO depth and job-wide "
    "rows 15), job headers 8, run status lines 8 (their 4.4 values printed twice, in both unit families, 5.4), "
    "disk lines 7, lines outside job blocks 11, the line loop and the per-file set-up the rest; no function "
    "holds more than 15 %.",
    "",
    "Tried (2026-11-26, night), not adopted: IO depth rows by zip and itertools.repeat instead of a list "
    "comprehension (1.28 -> 1.19 µs a line, within the noise); a percentile block's entries by one findall (5.9"
    " -> 6.8 µs a block, slower); Tuples to Arrow as a struct array, flattened (3.9 against 4.3 µs for 30 rows,"
    " within the noise). A template parsed again and again costs 141-146 µs a file where the corpus, in its "
    "order, costs 156-161: the value caches (sizes, bucket edges) miss on the varied numbers, as on real logs. "
    "Measured, not changed (the store's side): the Parquet export's 36 empty tables take 27 ms and its 44 "
    "rewrites of the stamp file 12 ms, after the parsing; importing the parsers takes 39 ms before it, about 15"
    " ms of it the other tools' regular expressions, which a fio ingest never uses. 32 empty tables (a fio 3.33 database's) "
    "written by pyarrow (`pq.write_table` of the table's Arrow schema) take 9.6 ms against DuckDB's 20.7 ms, "
    "with the same column types read back (DESCRIBE). A worker chunk has a fixed cost of about 0.9 ms (8 "
    "tables: an Arrow schema built again for each, a pa.array per column, an IPC stream each): chunks of 16 "
    "files cost 314 µs a file, of 128 260; 256 files looked cheaper still (4 interleaved rounds in one process:"
    " 244-276 against 255-306 µs) but hold twice the rows in flight, which the 100,000-file memory target may "
    "not allow.",
]


def parse_free_lines(parts: list[dict], budgets: dict[str, float]) -> list[str]:
    """The ingest with parsing free (benchmarks/parse_free.py) against each target: where start-up plus the
    parse-free ingest is over the target, no parser can meet it with this store."""
    rows, over = [], []
    for b in parts:
        pf, ph, budget = b.get("parse_free"), b.get("phases"), budgets.get(b["kind"])
        if not pf or not ph or budget is None:
            continue
        least = ph["start-up"] + pf["parse_free_s"]
        verdict = (
            "over the target: no parser can meet it" if least > budget else f"{budget - least:.2f} s left for parsing"
        )
        if least > budget:
            over.append(b["kind"])
        rows.append(
            f"| {b['kind']} | {ph['start-up']:.2f} | {pf['parse_free_s']:.2f} | {pf['parse_free_cpu_s']:.2f} | "
            f"{least:.2f} | {budget:.2f} | {verdict} |"
        )
    if not rows:
        return []
    said = (
        f" For {', '.join(over)} the store's own work, with no parsing at all, is already over the target."
        if over
        else ""
    )
    return [
        "",
        "With parsing free (`benchmarks/parse_free.py`: every file parsed beforehand, then a cold ingest into a new "
        "database whose parse step hands out those rows, so the same rows are stored; medians of --repeat runs, each "
        "a new process): what is left is the listing, the plan, the DuckDB inserts and commits, the Parquet export "
        "and the close, which no parser, however fast, removes." + said,
        "",
        "| corpus | start-up s | parse-free ingest s | its CPU s | least wall s | target s | |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
        *rows,
    ]


def cpu_bound_sentence(rows: list[dict], cores: int) -> str:
    """Whether the cold ingests were CPU-bound on the cores, from their wall time over their CPU time per core (a
    machine busy with other work stretches the wall time, not the CPU time)."""
    ratios = [r["cold_s"] / (r["cpu_s"] / cores) for r in rows if r["files"] >= 9800 and r["cpu_s"]]
    loads = [r["load"] for r in rows]
    if not ratios or max(ratios) < 1.5:
        return (
            f"The cold ingest is CPU-bound on this machine's {cores} cores: its wall time is close to its CPU time "
            "over the cores."
        )
    return (
        f"The cold ingests' wall times were {min(ratios):.1f}-{max(ratios):.1f}x their CPU time over the {cores} "
        f"cores: other work on the machine (load {min(loads):.1f}-{max(loads):.1f} before the runs) held the cores, "
        "so the wall times (and the targets judged on them) say more about that work than about the ingest; its CPU "
        "time is the comparable figure, and CPU / cores is the least wall time the ingest could have on idle cores."
    )


def rows_note(by: dict) -> str:
    """'N rows a file' of the 10,000-file fio-json and fio-text corpora, from their ingest summaries."""
    out = []
    for kind in ("fio-json", "fio-text"):
        r = by.get((kind, 10000))
        m = re.search(r"(\d+) rows", r["summary"]) if r else None
        if m:
            out.append(f"{kind} {int(m.group(1)) / r['files']:.0f} rows a file")
    return ", ".join(out) or "the rows of every file"


def notebooks_and_reports(measured: dict) -> list[str]:
    """Wall time of `storagelab build` on the project's own data (data/raw/ ingested first, so the
    time is that of executing every notebook and rendering every HTML report)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT / "lib")
    subprocess.run(
        [sys.executable, "-m", "storagelab", "ingest", "--quiet"], cwd=ROOT, env=env, check=True, capture_output=True
    )
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "storagelab", "build"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - t
    measured.update(build_s=wall, build_ok=out.returncode == 0)
    ok = "ok" if out.returncode == 0 else f"FAILED (exit {out.returncode}): {out.stderr[-300:]}"
    n = len(list((ROOT / "notebooks").glob("*.ipynb")))
    line = f"every notebook executed ({n}) and every HTML report rendered (`storagelab build`): {wall:.1f} s wall, {ok}"
    print(line, flush=True)
    return ["", "## Notebooks and reports", "", line]


def queries(db: Path, measured: dict) -> list[str]:
    """The notebooks' run-level queries on the 100,000-file database (benchmarks/query_bench.py)."""
    rel = db.relative_to(ROOT).as_posix()
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "query_bench.py"), rel],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT / "lib")),
    )
    print(out.stdout, flush=True)
    slowest = re.search(r"^slowest: ([0-9.]+) ms", out.stdout, re.M)
    if slowest:
        measured["slowest_query_s"] = float(slowest.group(1)) / 1000
    return [
        "",
        "## Notebook queries at 100,000 runs",
        "",
        f"`python benchmarks/query_bench.py {rel}` (best of 3, same machine, same run):",
        "",
        "```",
        out.stdout.strip() or out.stderr.strip()[-500:],
        "```",
    ]


def write_results(rows: list[dict], notes: list[str], parts: list[dict], extra: list[str]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    lines = [
        "# Ingest benchmark",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {mem:.0f} GiB RAM, Python {platform.python_version()}, "
        f"{platform.platform()}; run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with `./run bench`.",
        "",
        "Floor = open + read every file (+ json.load for the JSON corpus) in one process, best of two. "
        "Cold = new database, wall time of the whole `storagelab ingest` process: start-up, listing, parsing, "
        "the DuckDB writes and the Parquet export; the median of several runs (each on a new database) for "
        "corpora of up to 10,000 files, with their range, and its CPU time the median too. Peak = resident memory of the ingest process and its "
        "workers together (proportional set size, sampled every 100 ms). CPU = user + system seconds of the "
        "cold ingest process and its workers. Load = the machine's 1-minute load average before the cold run "
        "(the machine is shared: a load above 0 means other work competed for the 2 cores). Re-ingest = the same command again, nothing changed; "
        "1 % changed = again after appending a newline to every 100th file. Ratios (x) are to the floor "
        'of the same corpus in the same run; "vs 10k" is the cold time (and CPU time) over the 10,000-file one. '
        "The ingest runs with Python's bytecode cache on, as in any installation.",
        "",
        "| corpus | files | MB | floor s | cold s | cold range s (runs) | CPU s | load | files/s | MB/s | cold / floor | "
        "vs 10k | peak MiB | re-ingest s (x) | 1 % changed s (x) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    tenk = {r["kind"]: r for r in rows if r["files"] == 10000}
    for r in rows:
        t = tenk.get(r["kind"])
        vs = f"{r['cold_s'] / t['cold_s']:.1f} (CPU {r['cpu_s'] / t['cpu_s']:.1f})" if t else ""
        lines.append(
            f"| {r['kind']} | {r['files']} | {r['mb']:.1f} | {r['floor_s']:.2f} | {r['cold_s']:.2f} | "
            f"{r['cold_range'][0]:.2f}-{r['cold_range'][1]:.2f} ({r['runs']}) | {r['cpu_s']:.1f} | {r['load']:.1f} | "
            f"{r['files_per_s']:.0f} | {r['mb_per_s']:.1f} | {r['cold_x_floor']:.1f} | {vs} | "
            f"{r['peak_rss_mib']:.0f} | {r['reingest_s']:.2f} ({r['reingest_s'] / r['floor_s']:.2f}) | "
            f"{r['changed_s']:.2f} ({r['changed_s'] / r['floor_s']:.2f}) |"
        )
    if parts:
        lines += [
            "",
            "Where a worker's time goes (10,000-file corpora and the 9,800 of fio-json-3.1; microseconds per file on one core, CPU time, "
            "best of 3 over 2,000 files, measured in the benchmark process): read, SHA-256, parse "
            "(`parse_bytes`: decode, detect, parse), a whole worker chunk (read + hash + parse + rows to typed "
            'Arrow columns, `store.parse_chunk`), and the floor\'s `json.loads`. "Bound" = chunk x files / '
            "cores: the least wall time the parsing workers need, before any start-up or database work.",
            "",
            "The parse step by step (each on its own over the same files, its input made beforehand): a fio JSON "
            "file's fast path (`parsers/fio/fastjson.py`) is orjson's decode, the check of the decoded object against "
            "the bytes (encoded again in C, colons and exponents counted), the line spans read from the bytes, the "
            "msgspec typing into `Struct`s and the row building in Python; a text file's is decode (bytes to str), "
            "detect (each parser's sniff) and the parser.",
            "",
            "| corpus | read | sha256 | json.loads | parse | "
            + " | ".join(JSON_STEPS + TEXT_STEPS)
            + " | chunk | bound s |",
            "| --- |" + " ---: |" * (7 + len(JSON_STEPS) + len(TEXT_STEPS)),
        ]
        for b in parts:
            cells = [
                f"{b[k]:.0f}" if k in b else ""
                for k in ("read", "sha256", "json.loads", "parse", *JSON_STEPS, *TEXT_STEPS)
            ]
            lines.append(f"| {b['kind']} | " + " | ".join(cells) + f" | {b['chunk']:.0f} | {b['bound_s']:.2f} |")
    lines += ["", "Corpora:", ""] + [f"- {n}" for n in notes]
    lines += extra
    (RESULTS / "ingest.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS / 'ingest.md'}")


if __name__ == "__main__":
    main()
