"""Variables that name the working folder when set but empty (reliability-24), beyond PATH (ownership.SEARCH_PATHS).

vl-convert (Rust: fontdb's fontconfig reading) takes an empty HOME as the folder "": it reads ``.fonts``,
``.local/share/fonts`` and ``.config/fontconfig/fonts.conf`` from the working folder, an empty XDG_DATA_HOME ``fonts``
and an empty XDG_CONFIG_HOME ``fontconfig/fonts.conf``. It draws the index's thumbnails in storagelab's own process
(rendering._thumbnail_png): `cd THEIRS; HOME= storagelab report` drew root's charts with the second user's fonts, and
with those of the folders their fonts.conf names (their glyphs for every digit). Python reads an empty HOME as "/", and
tempfile and Jupyter skip an empty variable; the check skipped them all.

Reliability-27: a value with a separator was checked as its pieces only, while tempfile, Jupyter and IPython take it
whole: ``TMPDIR=:`` (no piece at all) is the folder ``:`` under the working folder, ``TMPDIR=/tmp/:`` the folder
``/tmp/:`` (its piece ``/tmp/`` passed): `TMPDIR=/tmp/: storagelab run` made root's kernel folder, its connection file
and sockets in the second user's ``/tmp/:``, and their rename put a folder of theirs in its place."""

from __future__ import annotations

EMPTY_IS_HERE = ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME")


def empty_is_here(environ, var: str) -> list[str]:
    """What ``var`` names beyond the pieces the check splits it into at ``:`` and ``,``: ``["."]`` (the working
    folder) when ``var`` is one of EMPTY_IS_HERE, set but empty; the whole value when it holds a separator, since a
    reader of one folder (tempfile, Jupyter, IPython) takes it whole (``TMPDIR=/tmp/:`` is the folder ``/tmp/:``,
    another user's to make, not ``/tmp/``); else ``[]``."""
    value = environ.get(var)
    if value and (":" in value or "," in value):
        return [value]
    return ["."] if var in EMPTY_IS_HERE and value == "" else []
