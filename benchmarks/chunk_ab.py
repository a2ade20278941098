"""A worker's cost per file, a git revision's code against the working tree's, in interleaved processes (issue 27).

text_steps.py swaps text.py alone; a change anywhere else (text_fast.py, decode and detect in parsers/__init__.py,
the rows to Arrow in store/arrow.py) shows on both of its sides. Here the whole ``lib`` of revision ``--rev``
(``git archive``) and the working tree's ``lib`` each run in a new process, one after the other, round after
round (the machine is shared: a load that comes and goes falls on both); each process times, in CPU time
(``time.process_time``), best of 3 passes over the first ``--files`` files of a corpus: a whole worker chunk
(``store.parse_chunk``: read, SHA-256, decode, detect, parse, rows to Arrow) and, on their own, decode, detect
and ``parse_bytes``. It prints each round and the medians.

Usage: PYTHONPATH=lib python benchmarks/chunk_ab.py CORPUS_FOLDER [--rev main] [--rounds 3] [--files 3000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_TIMED = r"""
import json, sys, time
from pathlib import Path
from storagelab.parsers import decode, detect, parse_bytes
from storagelab.store import worker
files = sorted(p for p in Path(sys.argv[1]).rglob("*") if p.suffix in (".log", ".json") and p.is_file())
files = files[: int(sys.argv[2])]
jobs = [(str(p), str(p), p.stat().st_size, 0) for p in files]
datas = [p.read_bytes() for p in files]
texts = [decode(b) for b in datas]
steps = {
    "chunk": lambda: [worker.parse_chunk(jobs[i : i + 128]) for i in range(0, len(jobs), 128)],
    "decode": lambda: [decode(b) for b in datas],
    "detect": lambda: [detect(t) for t in texts],
    "parse_bytes": lambda: [parse_bytes(b) for b in datas],
}
best = {}
for name, step in steps.items():
    step()
    for _ in range(3):
        t = time.process_time()
        step()
        best[name] = min(best.get(name, float("inf")), time.process_time() - t)
print(json.dumps({name: s / len(jobs) * 1e6 for name, s in best.items()}))
"""


def lib_at(rev: str, into: Path) -> Path:
    """``lib`` of git revision ``rev``, extracted under ``into``."""
    archive = subprocess.run(["git", "archive", rev, "lib"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "lib"


def timed(lib: Path, corpus: Path, files: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(lib)}
    out = subprocess.run(
        [sys.executable, "-c", _TIMED, str(corpus), str(files)], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path, help="a folder of logs (e.g. benchmarks/corpus/fio-text-10000)")
    ap.add_argument("--rev", default="main", help="the git revision whose lib is 'before'")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--files", type=int, default=3000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sides = {args.rev: lib_at(args.rev, Path(tmp)), "now": ROOT / "lib"}
        runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
        for r in range(args.rounds):
            for side, lib in sides.items():
                runs[side].append(timed(lib, args.corpus, args.files))
            cells = "; ".join(f"{side} chunk {runs[side][-1]['chunk']:.1f}" for side in sides)
            print(f"round {r + 1}: {cells} (µs a file; load {os.getloadavg()[0]:.1f})", flush=True)
    for side, got in runs.items():
        medians = {k: statistics.median(g[k] for g in got) for k in got[0]}
        print(f"{side}: median µs a file (CPU): " + ", ".join(f"{k} {v:.1f}" for k, v in medians.items()))


if __name__ == "__main__":
    main()
