"""Reliability-13 (issue 26), paths: the attacks of the campaign on every command that makes or names a path, done
again here as the second user did them (docs/reliability-13-paths.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import duckdb
import pytest
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab import cli, ownership

_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")


def _user(*argv: str) -> None:
    subprocess.run(argv, check=True, preexec_fn=_as_user(USER))


@_ROOT_ONLY
def test_sql_parquet_through_the_users_link_to_a_folder_of_roots_is_refused(shared_tmp, tmp_path, capsys):  # noqa: F811
    """Reliability-13 High: the user's symlink /tmp/h13rootlink2 -> /root/h13v (root's folder); root's `sql "SELECT
    'pwned' AS x" --parquet /tmp/h13rootlink2/victim --force` resolved the folder first (reliability-12's fix), saw
    root's own folder, and replaced the root-only victim (12 bytes, 0600) with a 204-byte Parquet file, mode 0644.
    Every other command refuses a symlink of another user's on the way; now sql --parquet does too."""
    roots = tmp_path / "roots"
    roots.mkdir()
    victim = roots / "victim"
    victim.write_text("root secret\n")
    victim.chmod(0o600)
    pub = shared_tmp / "pub"
    pub.mkdir()
    pub.chmod(0o1777)  # as /tmp
    link = pub / "h13rootlink"
    _user("ln", "-s", str(roots), str(link))
    db = tmp_path / "d.duckdb"
    duckdb.connect(str(db)).close()
    rc = cli.main(["sql", "SELECT 'pwned' AS x", "--db", str(db), "--parquet", str(link / "victim"), "--force"])
    assert rc == 2
    assert capsys.readouterr().err == (
        f"storagelab sql: --parquet {link / 'victim'}: {link} is a symlink of another user's ({USER}): another user "
        "could change where it leads; write it to a folder of your own\n"
    )
    assert victim.read_text() == "root secret\n"
    # a folder of theirs on the way, which they could turn into such a link at any time, is refused as well
    _user("mkdir", "-m", "755", str(pub / "theirs"))
    why = ownership.foreign_link(pub / "theirs" / "x", strict=True, steady=True)
    assert why == f"{pub / 'theirs'} is a folder of another user's ({USER}) on the way"
    # root's own path still passes
    assert cli.main(["sql", "SELECT 42 AS a", "--db", str(db), "--parquet", str(roots / "y.parquet")]) == 0
    assert Path(roots / "y.parquet").stat().st_size > 0
