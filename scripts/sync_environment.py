"""Write environment.yml from requirements.lock: the conda path gets exactly the packages ./run installs.

Run by `./run lock` after it re-pins requirements.lock; tests/test_environment.py fails when the two
disagree. Usage: python scripts/sync_environment.py [ROOT]
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

HEADER = """\
# The conda path: the same environment as ./run builds in .venv/ (written from requirements.lock by
# `./run lock`; tests/test_environment.py fails if the two disagree).
#   conda env create -f environment.yml && conda activate storagelab
#   ./run build          # uses the active environment (no .venv/) and registers the storagelab kernel
# Kernel registration by hand: python -m ipykernel install --sys-prefix --name storagelab --display-name "storagelab (Python 3)"
# The browser tests use Debian's chromium (apt-get install chromium; ./run test installs it as root).
name: storagelab
channels:
  - conda-forge
dependencies:
  - python={python}
  - pip
  - pip:
"""


def pins(lock: Path) -> list[str]:
    return [ln.strip() for ln in lock.read_text().splitlines() if ln.strip() and not ln.startswith("#")]


def render(root: Path, python: str) -> str:
    lines = [f"      - {p}" for p in pins(root / "requirements.lock")]
    lines.append("      - -e .[test,lab,spark]")
    return HEADER.format(python=python) + "\n".join(lines) + "\n"


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    python = ".".join(platform.python_version_tuple()[:2])
    (root / "environment.yml").write_text(render(root, python))
    return 0


if __name__ == "__main__":
    sys.exit(main())
