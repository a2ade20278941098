"""Keeping notebooks small and diff-friendly.

Committed notebooks hold no outputs, except the cells tagged ``nbval-check-output``: those
print the key reproduced numbers (rounded), and nbval compares them on every CI run, so a
change that moves a reproduced number fails. ``refresh`` re-executes a notebook and stores
exactly those outputs; ``strip`` removes everything else (execution counts, papermill
metadata, chart outputs).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbformat
import papermill as pm

CHECK = "nbval-check-output"
IGNORE = "nbval-ignore-output"


def md(text: str):
    return nbformat.v4.new_markdown_cell(text.strip("\n"))


def code(src: str, *tags: str):
    cell = nbformat.v4.new_code_cell(src.strip("\n"))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def new(cells, path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "storagelab (Python 3)", "language": "python", "name": "storagelab"},
        "language_info": {"name": "python"},
    }
    nb.cells = list(cells)
    for i, c in enumerate(nb.cells):
        c["id"] = f"c{i:02d}"
    write(nb, path)


def strip(nb) -> None:
    nb.metadata.pop("papermill", None)
    nb.metadata.pop("widgets", None)
    keep = []
    n = 0
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            continue
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            n += 1
            if CHECK not in cell.metadata.get("tags", []):
                cell.execution_count = None
                cell.outputs = []
            else:
                # nbval skips (and fails) a reference cell with outputs but no execution count
                cell.execution_count = n
                for out in cell.outputs:
                    if "execution_count" in out:
                        out["execution_count"] = n
                    if isinstance(out.get("metadata"), dict):
                        out["metadata"].clear()
        keep.append(cell)
    nb.cells = keep


def write(nb, path: Path) -> None:
    strip(nb)
    nbformat.validate(nb)
    Path(path).write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def refresh(path: Path) -> None:
    """Execute with the default parameters and keep only the checked outputs."""

    path = Path(path)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / path.name
        pm.execute_notebook(str(path), str(out), cwd=str(path.parent), progress_bar=False, kernel_name="python3")
        executed = nbformat.read(str(out), as_version=4)
    write(executed, path)
