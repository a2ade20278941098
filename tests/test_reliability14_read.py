"""Reliability-14, reading (docs/reliability-14-read.md): `storagelab parse` read a file of root's through the second
user's symlink (and would wait on their FIFO put in place after the listing), where ingest refuses both."""

from __future__ import annotations

import os

import pytest
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)
from test_reliability13_store import _roots_log
from test_write_paths import _theirs, _user

from storagelab import cli

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attack needs root and a second user")


def test_parse_reads_no_file_of_roots_through_the_users_link(shared_tmp, capsys):  # noqa: F811
    """Reliability-14: root's `parse THEIRS/a.txt`, a.txt their symlink to root's 0600 log, printed root's rows
    (ROOTSECRET), exit 0; ingest of the same name refused it. Now parse says what ingest says, exit 1."""
    secret, data = _roots_log(shared_tmp), _theirs(shared_tmp)
    _user("ln", "-s", str(secret), str(data / "a.txt"))
    assert cli.main(["parse", str(data / "a.txt")]) == 1
    out, err = capsys.readouterr()
    assert "ROOTSECRET" not in out + err
    assert out == ""
    assert err == (
        f"storagelab parse: {data / 'a.txt'}: reached through a symlink of the user {USER}'s, it leads to a file of "
        "root's: not read (a link of another user's is followed only to a file of theirs; copy the file in instead)\n"
    )
