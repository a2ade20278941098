"""The project's folders, derived from the package location (never from the working directory)."""

from __future__ import annotations

import os
import re
from pathlib import Path

# lib/storagelab/paths.py -> project root is two levels above lib/
ROOT = Path(__file__).resolve().parents[2]
# reliability-24: a relative STORAGELAB_ROOT (`cd clone; STORAGELAB_ROOT=. storagelab run 05_stacks`) named another
# folder in each kernel (they run in notebooks/ and inherit it): "FAILED: FileNotFoundError:
# data/parsed/storagelab.duckdb does not exist: run `storagelab ingest`" for a database that exists. Made absolute
# here, for this process and every program it starts (a working folder that is gone leaves it as given); so is
# STORAGELAB_REPORT_DIR (JupyterLab's kernels run in each notebook's folder: a relative one was under notebooks/).
# reliability-25: set but blank is unset (as Spark's variables, sparkjvm.unset_empty): Path("") is ".", and `cd THEIRS;
# STORAGELAB_ROOT= storagelab run 05_stacks` ran the second user's notebooks/05_stacks.ipynb as root (the check
# of the environment reads an empty value as no folder)
# reliability-26: so is IPYTHONDIR, which IPython reads as "." when empty: the kernel's own working folder, whose
# profile_default/startup/*.py every kernel runs (the kernels' folders are checked, but an empty value means unset)
# (STORAGELAB_REPORT_DIR: where a notebook run by hand saves its figures)
for _var in ("STORAGELAB_ROOT", "STORAGELAB_REPORT_DIR", "IPYTHONDIR"):
    if _var in os.environ and not os.environ[_var].strip():
        del os.environ[_var]
    if _var != "IPYTHONDIR" and (_given := os.environ.get(_var)) and not os.path.isabs(_given):
        try:
            os.environ[_var] = os.path.abspath(_given)
        except OSError:
            pass
ROOT = Path(os.environ.get("STORAGELAB_ROOT", ROOT))
DATA = ROOT / "data"
RAW = DATA / "raw"
PARSED = DATA / "parsed"
MANIFEST = RAW / "manifest.csv"
DB = PARSED / "storagelab.duckdb"
NOTEBOOKS = ROOT / "notebooks"
PAPERS = ROOT / "papers"
REPORTS = ROOT / "reports"
FIGURES = REPORTS / "figures"
DOCS = ROOT / "docs"

SELECTION_FILE = ".selection.json"  # in each report folder: the selection (and parameters) whose reports it holds
REPORT_DIR_ENV = "STORAGELAB_REPORT_DIR"  # where a running notebook writes its figures and summary
RUN_STAGE_PREFIX = ".storagelab-run-"  # a run's stage in its report folder (reportstage.PREFIX)


def current_report_dir() -> Path:
    """The report folder of the notebook being run (set by run_notebooks); a notebook run by hand (JupyterLab,
    nbval) writes to reports/_interactive/, which the index leaves out."""
    return Path(os.environ.get(REPORT_DIR_ENV) or REPORTS / "_interactive")


def make_folder(folder: Path) -> None:
    """``folder``, and those above it that are missing, but never the running notebook's stage (``REPORT_DIR_ENV``, made
    before the notebook starts, inside the report folder) nor the folder that holds it. A report folder moved away
    while its notebook ran is not made again at its old name by the run's next write (reliability-31 folders, Low 2:
    a failed run left an empty report folder where the moved one had been); that write fails."""
    folder = Path(folder)
    stage = os.environ.get(REPORT_DIR_ENV)
    if not stage or not folder.is_relative_to(stage):
        folder.mkdir(parents=True, exist_ok=True)
        return
    # the folders under the stage, never the stage: made by mkdtemp before the notebook started, it is missing at its
    # name only when its report folder was moved or another put there (reliability-33 folders: A and B exchanged and
    # back while A's notebook wrote its summary made the stage again inside B and the summary went there, not in A's)
    by_hand = not Path(stage).name.startswith(RUN_STAGE_PREFIX)  # a folder named by hand is made
    made = len(folder.relative_to(stage).parts) + by_hand
    for level in reversed([folder, *folder.parents][:made]):  # under the stage (or from it) down to folder
        level.mkdir(exist_ok=True)


def slug(text: str) -> str:
    """``text`` as a file name: lower case, runs of anything but a-z0-9 as one '-'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "figure"


def figure_dir(notebook: str, out_dir: Path | None = None) -> Path:
    """The folder a notebook's figures are saved in: <report folder>/figures/<notebook>/ (the report folder
    of the run, reports/<study>/, set by ``report.run_notebooks``)."""
    if out_dir is None:
        out_dir = current_report_dir() / "figures"
    return Path(out_dir) / slug(notebook)
