"""fio normal text: the text parser's cost per file, before and after a change, side by side (issue 27).

The parser of a git revision (``--rev``, default ``main``) is loaded beside the working tree's, from
``git show REV:lib/storagelab/parsers/fio/text.py``, as a module of the same package (so its relative
imports resolve against this tree's ``units``, ``base``, ``command`` and ``schema``). Both parse the same
texts, interleaved round by round; each figure is the best round's CPU time (``time.process_time``: the
machine is shared) divided by the files. The working tree's parser is timed twice: with its fast paths
(the default) and with the plain, general path only (``parse_text(text, fast=False)``).

The texts: every real fio normal-text output (tests/fixtures/fio, data/raw, /work/shared/seeds: each file
whose sniff says ``fio-normal`` and that the revision's parser reads), and as many copies of each with every
number of two or more digits redrawn at the same width (variation.vary: what the bench's fio-text corpus
holds), so that no cache of printed values can flatter the result.

It prints, too, how many job blocks the whole-block fast path (text_fast.py) read.

Usage: PYTHONPATH=lib python benchmarks/text_steps.py [--rev main] [--rounds 7] [--copies 20] [--profile]

``ingest_bench.py`` takes its step table's text steps from ``steps()``.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from variation import vary

from storagelab.parsers import decode
from storagelab.parsers.fio import sniff
from storagelab.parsers.fio import text as fio_text

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "tests" / "fixtures" / "fio", ROOT / "data" / "raw", Path("/work/shared/seeds"))
TEXT = "lib/storagelab/parsers/fio/text.py"


def steps(texts: list[str], found: list) -> dict[str, Callable[[], object]]:
    """The bench's text steps over decoded texts (``found``: detect() of each): the parser, and the plain
    path alone (its fast paths off), for the step table of ingest_bench.py."""
    normal = [t for t, (_mod, fmt) in zip(texts, found, strict=True) if fmt == "fio-normal"]
    return {
        "parse text": lambda: [mod.parse(t, fmt) for t, (mod, fmt) in zip(texts, found, strict=True)],
        "text plain": lambda: [fio_text.parse_text(t, fast=False) for t in normal],
    }


def real_outputs() -> list[tuple[Path, str]]:
    """(path, text) of every real fio output whose sniff says fio-normal."""
    out = []
    for src in SOURCES:
        for p in sorted(src.rglob("*")) if src.is_dir() else []:
            if not p.is_file() or p.suffix in (".md", ".jsonl", ".csv", ".sh", ".py"):
                continue
            try:
                text = decode(p.read_bytes())
            except ValueError:
                continue
            if sniff(text) == "fio-normal":
                out.append((p, text))
    return out


def revision_parser(rev: str) -> ModuleType:
    """text.py of git revision ``rev`` as the module ``storagelab.parsers.fio._text_at_rev``."""
    source = subprocess.run(
        ["git", "show", f"{rev}:{TEXT}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    name = "storagelab.parsers.fio._text_at_rev"
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "storagelab.parsers.fio"
    sys.modules[name] = mod
    exec(compile(source, f"{rev}:{TEXT}", "exec"), mod.__dict__)
    return mod


def corpus(before: ModuleType, copies: int, seed: int = 27) -> tuple[list[str], list[str]]:
    """(the real texts that the revision's parser reads, those plus ``copies`` varied copies of each that it
    reads too)."""
    rng = random.Random(seed)
    real, texts = [], []
    for _p, text in real_outputs():
        if not _reads(before, text):
            continue
        real.append(text)
        texts.append(text)
        for _ in range(copies):
            varied = vary(text.encode("utf-8"), rng).decode("utf-8")
            if _reads(before, varied):
                texts.append(varied)
    return real, texts


def _reads(mod: ModuleType, text: str) -> bool:
    try:
        mod.parse_text(text)
    except Exception:
        return False
    return True


def compare(parsers: dict[str, Callable[[str], object]], texts: list[str], rounds: int) -> dict[str, float]:
    """µs of CPU time per file for each parser: the best of ``rounds`` rounds, parsers interleaved."""
    best = dict.fromkeys(parsers, float("inf"))
    for _ in range(rounds):
        for name, parse in parsers.items():
            t = time.process_time()
            for text in texts:
                parse(text)
            best[name] = min(best[name], time.process_time() - t)
    return {name: s / len(texts) * 1e6 for name, s in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="main", help="the git revision whose text.py is 'before'")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--copies", type=int, default=20, help="varied copies of each real output")
    ap.add_argument("--profile", action="store_true", help="also cProfile the working tree's parser")
    args = ap.parse_args()
    before = revision_parser(args.rev)
    real, texts = corpus(before, args.copies)
    lines = sum(t.count("\n") for t in texts) / len(texts)
    print(
        f"{len(real)} real fio normal-text outputs, {len(texts)} texts with the varied copies, {lines:.0f} lines a file"
    )
    for label, group in (("real outputs", real), ("real + varied", texts)):
        whole, blocks = (sum(n) for n in zip(*(fio_text.block_paths(t) for t in group), strict=True))
        print(f"{label}: {whole} of {blocks} job blocks read whole by the block fast path ({whole / blocks:.0%})")
    parsers = {
        f"{args.rev}": before.parse_text,
        "now": fio_text.parse_text,
        "now, plain path": lambda t: fio_text.parse_text(t, fast=False),
    }
    for label, group in (("real outputs", real), ("real + varied", texts)):
        us = compare(parsers, group, args.rounds)
        cells = ", ".join(f"{name} {v:.1f}" for name, v in us.items())
        print(
            f"{label}: µs/file (CPU, best of {args.rounds}): {cells}; now/{args.rev} = {us['now'] / us[args.rev]:.2f}"
        )
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for t in texts:
            fio_text.parse_text(t)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
