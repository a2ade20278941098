"""Reliability-23, read side: an excerpt is of the bytes its row's SHA-256 names, even when the report asks for
another stored version of the same path first."""

import hashlib

from storagelab import excerpts


def test_a_row_of_an_older_version_of_a_path_gets_no_excerpt_of_the_newer_bytes(tmp_path):
    f = tmp_path / "a.log"
    old, new = b"bw=100\nx\n", b"bw=999\nx\n"
    f.write_bytes(new)
    e = excerpts.Excerpts(tmp_path / "rep")
    assert e.href(str(f), hashlib.sha256(new).hexdigest(), 1, 1) is not None
    assert e.href(str(f), hashlib.sha256(old).hexdigest(), 1, 1) is None
