"""Where `storagelab lab` starts JupyterLab: in the clone's top, never in the working folder (reliability-20).

JupyterLab starts a kernel asked for without a path (``POST /api/kernels``, a console or a kernel an extension asks
for) in its own working folder, and ``python -m ipykernel_launcher`` puts that folder first on the kernel's sys.path:
`cd THEIRS; storagelab lab` and one such kernel ran their ``ipykernel_launcher.py`` as root. JupyterLab now runs in the
clone's top. A relative path the user gives among JupyterLab's options (``--config=mine.py``, ``--notebook-dir sub``)
is made absolute from the working folder first, so it names what it named before."""

from __future__ import annotations

import os


def from_working_folder(extra: list[str]) -> list[str]:
    """JupyterLab's options ``extra`` with each relative path that exists from the working folder (a whole argument,
    or the value of ``--option=value``) made absolute, so that they mean the same once JupyterLab runs in another
    folder. A working folder that is gone names nothing: the options are kept as they are."""
    try:
        cwd = os.getcwd()
    except OSError:
        return list(extra)
    out = []
    for arg in extra:
        option, eq, value = arg.partition("=") if arg.startswith("-") else ("", "", arg)
        if (
            value
            and not os.path.isabs(value)
            and not value.startswith("~")
            and os.path.lexists(os.path.join(cwd, value))
        ):
            arg = option + eq + os.path.join(cwd, value)
        out.append(arg)
    return out
