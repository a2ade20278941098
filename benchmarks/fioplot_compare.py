"""storagelab ingest against fio-plot on the same real fio JSON files, in one run (issue 14).

fio-plot 1.1.21 (PyPI) is installed in the benchmark's own environment, ``benchmarks/.venv-fioplot/``, never in
the project's. The corpus: the 392 real fio 3.1 JSON files of ``data/fio-plot-benchmark-data.tar.xz`` (see
``data/README.md``) copied into 100 folders (25 per device) with one value changed per copy: 9,800 files, no two
identical. fio-plot ``-C`` (compare graph) reads every JSON file of the folders it is given and draws one chart;
storagelab ingests the same folders into a new database (and its Parquet export). Both wall times include their
process start-up. The json.load floor of the same files is measured too.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "fio-plot-benchmark-data.tar.xz"
VENV = HERE / ".venv-fioplot"
FIOPLOT = "fio-plot==1.1.21"
COPIES = 100


def corpus(root: Path) -> list[Path]:
    """The 100 folders of 98 files (made once; reused while the stamp matches)."""
    d = root / "fioplot-9800"
    stamp = f"{DATA.stat().st_size} {COPIES}\n"
    if (d / ".done").exists() and (d / ".done").read_text() == stamp:
        return sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))
    shutil.rmtree(d, ignore_errors=True)
    src = d / ".src"
    src.mkdir(parents=True)
    with tarfile.open(DATA) as tar:
        tar.extractall(src, filter="data")
    devices = sorted({p.parent for p in src.rglob("*.json")})
    folders = []
    for k in range(COPIES):
        dev = devices[k % len(devices)]
        out = d / f"{k:03d}-{dev.name}"
        out.mkdir()
        for f in sorted(dev.glob("*.json")):
            text = f.read_bytes()
            changed = re.sub(
                rb'("timestamp" : )(\d+)',
                lambda m, k=k: m.group(1) + str(int(m.group(2)) + k + 1).encode(),
                text,
                count=1,
            )
            (out / f.name).write_bytes(changed)
        folders.append(out)
    shutil.rmtree(src)
    (d / ".done").write_text(stamp)
    return folders


def floor(folders: list[Path]) -> float:
    t = time.perf_counter()
    for d in folders:
        for f in d.glob("*.json"):
            with open(f, "rb") as fh:
                json.load(fh)
    return time.perf_counter() - t


def fioplot() -> Path | None:
    """fio-plot's command in its own environment, installed on first use; None (and why, on stderr) if it
    cannot be installed (no access to PyPI)."""
    exe = VENV / "bin" / "fio-plot"
    if exe.exists():
        return exe
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    p = subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", FIOPLOT], capture_output=True, text=True)
    if p.returncode != 0 or not exe.exists():
        print(f"fio-plot skipped: `pip install {FIOPLOT}` failed in {VENV}: {p.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    return exe


def run_fioplot(exe: Path, folders: list[Path], out_png: Path) -> float:
    cmd = [
        str(exe),
        "-i",
        *map(str, folders),
        "-T",
        "storagelab benchmark",
        "-C",
        "-r",
        "randread",
        "-d",
        "1",
        "-n",
        "1",
        "-o",
        str(out_png),
    ]
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=out_png.parent)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"fio-plot failed ({p.returncode}): {p.stderr[-1500:]}")
    return wall
