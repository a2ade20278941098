"""Committed notebooks stay thin and diff-friendly (the build runs them; tests/test_notebook_outputs.py compares
their checked outputs as nbval does; this checks their shape)."""

import nbformat
import pytest

from storagelab import report
from storagelab.claims import NOTEBOOKS as CLAIM_NOTEBOOKS
from storagelab.nbtools import CHECK, IGNORE

NBS = report.list_notebooks()


def test_the_ten_notebooks_exist():
    assert [nb.stem for nb in NBS] == [
        "01_vdev_scaling",
        "02_recordsize",
        "03_sector63",
        "04_dedup_ddt",
        "05_stacks",
        "06_zfs_send_transports",
        "07_explore",
        "08_fio",
        "09_bonnie",
        "10_disk_card",
    ]


@pytest.mark.parametrize("path", NBS, ids=lambda p: p.stem)
def test_notebook_is_stripped_and_small(path):
    assert path.stat().st_size < 100_000
    nb = nbformat.read(str(path), as_version=4)
    assert "papermill" not in nb.metadata
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        assert "injected-parameters" not in tags
        if CHECK in tags:
            assert cell.outputs, f"{path.name}: a checked cell without its stored output"
            assert all(o.output_type != "error" for o in cell.outputs)
        else:
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: unchecked output committed"


@pytest.mark.parametrize("path", NBS, ids=lambda p: p.stem)
def test_notebook_is_thin_and_ends_with_summary_and_provenance(path):
    nb = nbformat.read(str(path), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert len(code) <= 16
    assert max(len(c.source.splitlines()) for c in code) <= 40, "move logic into lib/storagelab/analysis/"
    src = "\n".join(c.source for c in code)
    assert ("present.summary(" in src or "report.write_summary(" in src) and "provenance(" in src
    assert "def " not in src and "lambda" not in src, "functions belong in lib/, with tests"
    for c in code:
        if "charts.show(" in c.source:
            assert IGNORE in c.metadata.get("tags", []), "chart cells are not compared by nbval"
    if path.stem in CLAIM_NOTEBOOKS:
        body = "\n".join(c.source for c in code if "parameters" not in c.metadata.get("tags", []))
        assert "present.claims_for(" in src and "claims.compare(" not in src
        assert "SELECT" not in body, "queries belong in lib/storagelab/analysis/"
        assert "alt.Chart" not in body, "chart builders belong in lib/storagelab/charts.py"
        for study in ("homelab", "freebsd", "thumper", "ars-", "raid1", "archiv"):
            assert study not in body, f"{path.name} names {study!r} outside its parameters: select by labels instead"


@pytest.mark.parametrize("path", [nb for nb in NBS if nb.stem in CLAIM_NOTEBOOKS], ids=lambda p: p.stem)
def test_analysis_notebooks_share_the_selection_contract(path):
    from storagelab.analysis.selection import FILTERS

    params = report.notebook_parameters(path)
    assert list(params)[:5] == ["db_path", *FILTERS], "the same selection parameters first, in the same order"
    assert params["study"], "the default study reproduces a source study"
    assert all(params[k] == "" for k in FILTERS if k != "study")
    docs = {p["name"]: p["meaning"] for p in report.parameter_docs(path)}
    assert all(docs[k] for k in params), f"{path.name}: every parameter has a comment saying what it means"


@pytest.mark.parametrize("path", NBS, ids=lambda p: p.stem)
def test_every_notebook_takes_the_selection(path):
    """`storagelab run -p study X` (every notebook) had exited 2 with nothing run: "07_explore.ipynb: unknown
    parameter 'study'" (new-user-2). Every notebook takes db_path and the label filters, first, in one order."""
    from storagelab.analysis.selection import FILTERS

    params = report.notebook_parameters(path)
    assert list(params)[:5] == ["db_path", *FILTERS]
    assert all(params[k] == "" for k in FILTERS if k != "study")
    body = "\n".join(c.source for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code")
    assert "Selection(study=study, stack=stack, vdev_type=vdev_type, host=host)" in body  # and uses it


def test_every_claim_is_checked_by_an_existing_notebook():
    from storagelab.claims import load_claims

    names = {nb.stem for nb in NBS}
    assert set(load_claims()["notebook"].unique().to_list()) <= names
