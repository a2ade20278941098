"""``python -m storagelab``. Ctrl-C while Python loads the CLI, before a command's own handling starts, is exit 130
and one line too (it was a 30-line traceback: reliability-5)."""

import sys

try:
    from .cli import main

    rc = main()
except KeyboardInterrupt:
    print("storagelab: interrupted", file=sys.stderr)
    rc = 130
if rc == 130:
    # CPython notes a KeyboardInterrupt that ends any string exec/eval (a dataclass's or namedtuple's generated
    # code: a Ctrl-C landing in an import), caught or not, and `python -m` then ends by SIGINT (-2) whatever the
    # exit code (reliability-32/33: `build`, `report` said their line, then -2). A string exec clears that note.
    exec("None")
sys.exit(rc)
