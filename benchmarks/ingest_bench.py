"""Ingest benchmark: corpora of 1,000 / 10,000 / 100,000 logs derived from real outputs.

Not part of the tests' pass/fail. For each corpus kind (fio JSON/JSON+, fio normal text, a mix of
bonnie++/zdb/other tools) and size it measures, in one run on this machine:

* the floor: open + read every file (and json.load for the JSON corpus), in this process;
* cold ingest into a new database (wall time, files/s, MB/s, peak RSS of the ingest process);
* re-ingest of the unchanged corpus; ingest after 1 % of the files changed;

and prints every figure also as a ratio to the floor. Results go to benchmarks/results/ingest.md.

Corpus files are made from the real outputs in tests/fixtures/ and data/raw/ by replacing every
number of two or more digits with another of the same width (so no two files are identical and
no cache can flatter the result), and are written once under benchmarks/corpus/ (gitignored).

Usage: ./run bench [--sizes 1000,10000] [--kinds fio-json,fio-text,mixed] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "corpus"
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "lib"))

NUM = re.compile(rb"(?<![\w.])([1-9][0-9]+)(?![\w])")


def templates(kind: str) -> list[bytes]:
    from storagelab.parsers import decode, detect

    fx = ROOT / "tests" / "fixtures"
    cands = [p for p in list(fx.rglob("*")) + list((ROOT / "data" / "raw").rglob("*")) if p.is_file()
             and p.suffix not in (".md", ".sh", ".csv", ".py")]
    out = []
    for p in sorted(cands):
        data = p.read_bytes()
        try:
            mod, fmt = detect(decode(data))
            mod.parse(decode(data), fmt)
        except Exception:
            continue
        if kind == "fio-json" and fmt == "fio-json" and _plain_json(data):
            out.append(data)
        elif kind == "fio-text" and fmt == "fio-normal" and b"groupid=" in data:
            out.append(data)
        elif kind == "mixed" and mod.TOOL != "fio":
            out.append(data)
    if not out:
        raise SystemExit(f"no templates for {kind}")
    return out


def _plain_json(data: bytes) -> bool:
    """One JSON document and nothing else (what json.load can read: the floor's input)."""
    try:
        json.loads(data)
        return True
    except ValueError:
        return False


def vary(data: bytes, rng: random.Random) -> bytes:
    def sub(m):
        s = m.group(1)
        return str(rng.randrange(10 ** (len(s) - 1), 10 ** len(s))).encode()
    return NUM.sub(sub, data)


def build(kind: str, n: int) -> Path:
    from storagelab.parsers import decode, detect

    d = CORPUS / f"{kind}-{n}"
    if (d / ".done").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    rng = random.Random(f"{kind}-{n}")
    tmpl = templates(kind)
    made = 0
    while made < n:
        t = tmpl[made % len(tmpl)]
        data = vary(t, rng)
        if made < len(tmpl) * 3:  # check the variation keeps the file parseable
            mod, fmt = detect(decode(data))
            mod.parse(decode(data), fmt)
        sub = d / f"{made // 1000:04d}"
        sub.mkdir(exist_ok=True)
        (sub / f"run{made:06d}.log").write_bytes(data)
        made += 1
    (d / ".done").write_text("ok")
    return d


def files_of(d: Path) -> list[Path]:
    return sorted(p for p in d.rglob("*.log"))


def floor(d: Path, kind: str) -> float:
    t = time.perf_counter()
    for p in files_of(d):
        with open(p, "rb") as fh:
            data = fh.read()
        if kind == "fio-json":
            json.loads(data)
    return time.perf_counter() - t


def run_ingest(d: Path, db: Path, workers: int | None) -> tuple[float, float, str]:
    cmd = [sys.executable, "-m", "storagelab", "ingest", str(d), "--db", str(db), "--manifest",
           str(d / "manifest.csv"), "--quiet"]
    if workers:
        cmd += ["--workers", str(workers)]
    code = ("import resource,subprocess,sys,time;t=time.perf_counter();"
            "r=subprocess.run(sys.argv[1:],capture_output=True,text=True);w=time.perf_counter()-t;"
            "m=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
            "print(w,m);print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-500:])")
    out = subprocess.run([sys.executable, "-c", code] + cmd, capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "lib")))
    first, summary = out.stdout.splitlines()[0], out.stdout.splitlines()[1]
    wall, rss_kib = first.split()
    return float(wall), float(rss_kib) / 1024, summary


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
    ap.add_argument("--kinds", default="fio-json,fio-text,mixed")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    rows = []
    for kind in args.kinds.split(","):
        for n in (int(x) for x in args.sizes.split(",")):
            d = build(kind, n)
            mb = sum(p.stat().st_size for p in files_of(d)) / 1e6
            fl = min(floor(d, kind) for _ in range(2))
            db = CORPUS / f"{kind}-{n}.duckdb"
            for ext in ("", ".wal"):
                Path(str(db) + ext).unlink(missing_ok=True)
            cold, rss, s1 = run_ingest(d, db, args.workers)
            warm, _, s2 = run_ingest(d, db, args.workers)
            changed = change_one_percent(d)
            one, _, s3 = run_ingest(d, db, args.workers)
            row = dict(kind=kind, files=n, mb=mb, floor_s=fl, cold_s=cold, files_per_s=n / cold, mb_per_s=mb / cold,
                       peak_rss_mib=rss, reingest_s=warm, changed=changed, changed_s=one,
                       cold_x_floor=cold / fl, summary=s1)
            rows.append(row)
            print(f"{kind:9} {n:>7} files {mb:8.1f} MB | floor {fl:6.2f}s | cold {cold:7.2f}s "
                  f"({n / cold:7.0f} files/s, {mb / cold:6.1f} MB/s, {cold / fl:5.1f}x floor) | peak {rss:6.0f} MiB | "
                  f"re-ingest {warm:5.2f}s | 1% changed {one:5.2f}s ({changed} files)", flush=True)
            for s in (s1, s2, s3):
                if "failed 0" not in s:
                    print(f"  !! {s}", flush=True)
    write_results(rows)


def write_results(rows: list[dict]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    lines = [
        "# Ingest benchmark",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {mem:.0f} GiB RAM, Python {platform.python_version()}, "
        f"{platform.platform()}; run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with `./run bench`.",
        "",
        "Floor = open + read every file (+ json.load for the JSON corpus) in one process. Cold = new database, "
        "including process start-up, parsing, the DuckDB writes and the Parquet export. Peak = max RSS of the ingest process.",
        "",
        "| corpus | files | MB | floor s | cold s | files/s | MB/s | cold / floor | peak MiB | re-ingest s | 1 % changed s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(f"| {r['kind']} | {r['files']} | {r['mb']:.1f} | {r['floor_s']:.2f} | {r['cold_s']:.2f} | "
                     f"{r['files_per_s']:.0f} | {r['mb_per_s']:.1f} | {r['cold_x_floor']:.1f} | {r['peak_rss_mib']:.0f} | "
                     f"{r['reingest_s']:.2f} | {r['changed_s']:.2f} |")
    (RESULTS / "ingest.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS / 'ingest.md'}")


if __name__ == "__main__":
    main()
