"""``python -m storagelab``. Ctrl-C while Python loads the CLI, before a command's own handling starts, is exit 130
and one line too (it was a 30-line traceback: reliability-5)."""

import sys

try:
    from .cli import main

    rc = main()
except KeyboardInterrupt:
    print("storagelab: interrupted", file=sys.stderr)
    rc = 130
sys.exit(rc)
