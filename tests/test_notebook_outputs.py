"""Every committed notebook as the build ran it with its default parameters: no cell raised, and each cell tagged
nbval-check-output shows what its committed copy shows, compared as `pytest --nbval-lax` compares (nbval's own
stream merging; the same keys left out). This was `pytest notebooks --nbval-lax`, which ran the ten notebooks in
kernels a second time after the build had just run them (issue 28); one item per code cell, as nbval had.

The executed copies are those of the last build (`./run test` builds beside the tests); the `default_runs` fixture
(tests/conftest.py) runs again the notebooks whose copy is missing or whose code has changed since.
"""

from __future__ import annotations

import copy

import nbformat
import pytest
from nbval.plugin import coalesce_streams, transform_streams_for_comparison

from storagelab import report
from storagelab.nbtools import CHECK

pytestmark = pytest.mark.e2e
# the keys nbval leaves out of a comparison (nbval.plugin.IPyNbFile.skip_compare, without --nbdime)
SKIP_COMPARE = {
    "metadata",
    "traceback",
    "prompt_number",
    "output_type",
    "name",
    "execution_count",
    "application/vnd.jupyter.widget-view+json",
    "image/png",
    "image/jpeg",
}
CELLS = [
    (nb, i)
    for nb in report.list_notebooks()
    for i, cell in enumerate(nbformat.read(str(nb), as_version=4).cells)
    if cell.cell_type == "code"
]


def comparable(outputs) -> dict[str, list]:
    """``outputs`` keyed as nbval keys them: every key but those left out, ``data`` flattened to its MIME types."""
    out: dict[str, list] = {}
    for o in transform_streams_for_comparison(coalesce_streams(copy.deepcopy(outputs))):
        for key, value in o.items():
            if key in SKIP_COMPARE:
                continue
            items = value.items() if key == "data" else [(key, value)]
            for k, v in items:
                if k not in SKIP_COMPARE:
                    out.setdefault(k, []).append(v)
    return out


@pytest.mark.parametrize("nb, index", CELLS, ids=[f"{nb.stem}::Cell {i}" for nb, i in CELLS])
def test_notebook_cell_as_the_build_ran_it(default_runs, nb, index):
    committed = nbformat.read(str(nb), as_version=4).cells[index]
    executed = {c.get("id"): c for c in default_runs[nb.stem].cells}[committed.get("id")]
    assert executed.source == committed.source
    errors = [o for o in executed.outputs if o.output_type == "error"]
    assert not errors, f"{nb.name} cell {index} raised {errors[0].ename}: {errors[0].evalue}"
    unrun = committed.execution_count is None
    assert not (unrun and committed.outputs), f"{nb.name} cell {index}: unrun reference cell has outputs"
    if CHECK in committed.metadata.get("tags", []) and not unrun:
        assert comparable(executed.outputs) == comparable(committed.outputs), f"{nb.name} cell {index}: outputs differ"
