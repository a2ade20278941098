"""Notebooks 05 and 08 print one sentence, word for word, for a run whose working set fits the RAM but whose
direct= is unknown (``design.direct_unknown_sentence``): the h5 trial's grid runs (fio normal text, direct=1 not
printed; tests/fixtures/fio/newuser-h5), each notebook run by papermill on the small database of
test_io_time_h5."""

from __future__ import annotations

import json

import pytest
from test_io_time_h5 import MAYBE_CACHED, h5_db  # noqa: F401 - the fixture and the sentence of that module

from storagelab import report

pytestmark = pytest.mark.e2e


def _printed(folder, notebook: str) -> str:
    nb = json.loads((folder / "executed" / f"{notebook}.ipynb").read_text())
    return "\n".join(
        "".join(o.get("data", {}).get("text/markdown", "")) for c in nb["cells"] for o in c.get("outputs", [])
    )


@pytest.mark.parametrize("notebook, extra", [("05_stacks", {"direction": "read"}), ("08_fio", {})])
def test_the_notebook_prints_the_shared_sentence(h5_db, tmp_path, notebook, extra):  # noqa: F811
    (run,) = report.run_notebooks([notebook], {"db_path": str(h5_db), "study": "H5", **extra}, out_dir=tmp_path, jobs=1)
    assert run.ok, run.error
    assert MAYBE_CACHED in _printed(tmp_path, notebook)
