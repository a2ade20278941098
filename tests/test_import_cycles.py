"""No import cycle in lib/storagelab: the graph of every import statement, at module level and inside functions
alike (an import inside a function is still a dependency; moving it there hides a cycle, it does not break it)."""

import ast
import os
import subprocess
import sys
from pathlib import Path

LIB = Path(__file__).resolve().parent.parent / "lib"
ENV = dict(os.environ, PYTHONPATH=str(LIB))

# cycles tolerated for now (none: charts<->report went when figure_dir moved to paths.py, issue 28)
KNOWN: set[frozenset[str]] = set()


def modules(lib: Path = LIB) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package) for every module under ``lib``."""
    out = {}
    for p in sorted(lib.rglob("*.py")):
        parts = list(p.relative_to(lib).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (p, package)
    return out


def targets(name: str, package: bool, node: ast.Import | ast.ImportFrom, known) -> set[str]:
    """The storagelab modules one import statement loads (the deepest module each imported name resolves to)."""
    if isinstance(node, ast.Import):
        wanted = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            here = name.split(".") if package else name.split(".")[:-1]
            here = here[: len(here) - (node.level - 1)]
            base = ".".join(here + ([node.module] if node.module else []))
        wanted = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    out = set()
    for w in wanted:
        while w and w not in known:
            w = w.rpartition(".")[0]
        if w.startswith("storagelab") and w != name:
            out.add(w)
    return out


def graph(lib: Path = LIB) -> dict[str, set[str]]:
    known = modules(lib)
    edges = {}
    for name, (path, package) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges[name] = set()
        for node in ast.walk(tree):  # every import, at any depth (functions, classes, if/try blocks)
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges[name] |= targets(name, package, node, known)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan), each a set of modules in a cycle."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(frozenset(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    found = set(cycles(graph()))
    new = [sorted(c) for c in found - KNOWN]
    assert not new, f"import cycles in lib/storagelab: {new}"


def test_known_cycles_still_exist():
    """A known cycle that is gone must leave the list, so the list never hides a new one."""
    gone = [sorted(c) for c in KNOWN - set(cycles(graph()))]
    assert not gone, f"no longer cycles, remove from KNOWN: {gone}"


def test_graph_counts_imports_inside_functions(tmp_path):
    pkg = tmp_path / "storagelab"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import x\n    return x\n")
    (pkg / "c.py").write_text("import storagelab.b\n")
    edges = graph(tmp_path)
    assert edges == {
        "storagelab": set(),
        "storagelab.a": {"storagelab.b"},
        "storagelab.b": {"storagelab.a"},
        "storagelab.c": {"storagelab.b"},
    }
    assert cycles(edges) == [frozenset({"storagelab.a", "storagelab.b"})]


def test_former_cycles_stay_broken():
    edges = graph()
    for topic in ("scaling", "dedup", "recordsize", "alignment"):  # findings read <topic>_numbers, not <topic>
        assert f"storagelab.analysis.{topic}" not in edges[f"storagelab.analysis.{topic}_findings"]
    assert "storagelab.analysis.design" not in edges["storagelab.analysis.arc"]
    assert "storagelab.analysis.measures" not in edges["storagelab.analysis.result"]
    assert "storagelab.analysis.transports" not in edges["storagelab.analysis.measures"]


def test_read_side_loads_no_ingest():
    """Opening the database for the analyses (analysis.db, dataset) goes through storagelab.database, not the
    store package, whose __init__ loads the whole ingest (pipeline, worker, writer)."""
    code = "import sys, storagelab.analysis; print(sorted(m for m in sys.modules if m.startswith('storagelab.store')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=ENV)
    assert out.stdout.strip() == "[]"
