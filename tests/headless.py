"""The headless browser the report and JupyterLab tests drive: Debian's chromium (None when it is not installed)
and its arguments (no sandbox, GPU, QUIC or background network: the pages must work offline)."""

from __future__ import annotations

import os
import shutil

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
