"""Reliability-12 (issue 26): the attacks on reliability-11's fixes that broke them, each done again here."""

from __future__ import annotations

import os
from pathlib import Path

from storagelab import ownership

# the kernel's line in /proc/self/mountinfo for the user's bindfs -u 0 -g 0 -p 0755 -o allow_other (reliability-11),
# its mount point the test's folder: the kernel escapes only space, tab, newline and backslash, other bytes as they are
_BINDFS = b"54 27 0:50 / %s rw,nosuid,nodev,relatime - fuse /tmp/h12u/src rw,user_id=%d,group_id=%d,allow_other\n"


def test_a_fuse_mount_of_another_users_at_a_name_that_is_not_utf8_is_refused(tmp_path, monkeypatch):
    """Reliability-12: the user's bindfs at /tmp/h12<0xff>m showed root 0755; mountinfo read with errors="replace"
    named it /tmp/h12\\ufffdm, which matched no path, so it passed for root's, and root's `run --output` there
    truncated a root-only file through the user's symlink at out/executed/08_fio.ipynb."""
    at = Path(os.fsdecode(os.fsencode(tmp_path) + b"/h12\xffm"))
    at.mkdir()
    other = os.getuid() + 1
    info = tmp_path / "mountinfo"
    info.write_bytes(open("/proc/self/mountinfo", "rb").read() + _BINDFS % (os.fsencode(at), other, other))
    monkeypatch.setattr(ownership, "MOUNTINFO", str(info))
    assert ownership._mount_of(str(at / "out")) == (
        "fuse",
        "/tmp/h12u/src",
        f"rw,user_id={other},group_id={other},allow_other",
    )
    assert ownership.shared(at) == (
        f"{at} is on a FUSE file system (fuse of /tmp/h12u/src) mounted by the user {ownership._user_name(other)}, "
        "whose process shows any owner and mode and can change its names at any time (mode "
        f"{__import__('stat').filemode(at.stat().st_mode)})"
    )
    assert ownership.made_refusal(at)[0] is not None


def test_run_output_made_through_a_link_removed_before_the_check_is_refused(tmp_path, monkeypatch):
    """Reliability-12: `run --output /tmp/h12L/out` while the user toggled /tmp/h12L between a symlink and no name:
    the mkdir went through their link, the name was free again at the check, and the non-strict resolve gave
    /tmp/h12L/out itself, which did not exist, so nothing was checked and the run would write by that name, theirs to
    make (7 of 1500 tries of the check). Here the link is removed right after the mkdir, as the user did."""
    from storagelab import runoutput  # noqa: PLC0415

    elsewhere, link = tmp_path / "elsewhere", tmp_path / "L"
    elsewhere.mkdir()
    link.symlink_to(elsewhere)
    real_mkdir = Path.mkdir

    def mkdir_then_unlink(self, *a, **k):
        real_mkdir(self, *a, **k)
        if link.is_symlink():
            link.unlink()

    monkeypatch.setattr(Path, "mkdir", mkdir_then_unlink)
    why, real = runoutput.refusal(link / "out")
    assert (elsewhere / "out").is_dir()
    assert (
        why
        == f"--output {link / 'out'}: {link} does not exist any more (another user may have removed a link of theirs), who could turn it once it is checked: give a folder of your own"
    )


def test_sql_parquet_writes_where_its_folder_led_when_checked(tmp_path):
    """Reliability-12: `sql --parquet /tmp/h12P/x.parquet` while the user toggled /tmp/h12P between no name and their
    link to a folder of theirs: the check saw no name (nothing to refuse in sticky /tmp) and the result was then
    written through their link into their folder (10 of 6000 tries). The folder is now resolved once, strictly: a
    missing one is refused, and the result goes where it led when it was checked."""
    from storagelab import cli, sqlout  # noqa: PLC0415

    first, later, link = tmp_path / "first", tmp_path / "later", tmp_path / "P"
    first.mkdir()
    later.mkdir()
    assert sqlout.pinned_target(str(link / "x.parquet")) == (
        f"--parquet {link / 'x.parquet'}: the folder {link}: No such file or directory; give a file in a folder that exists",
        str(link / "x.parquet"),
    )
    link.symlink_to(first)
    why, target = sqlout.pinned_target(str(link / "x.parquet"))
    assert (why, target) == (None, str(first / "x.parquet"))
    link.unlink()
    link.symlink_to(later)  # turned after the check: the result still goes where it was checked
    db = tmp_path / "d.duckdb"
    __import__("duckdb").connect(str(db)).close()
    assert cli.main(["sql", "SELECT 42 AS a", "--db", str(db), "--parquet", str(link / "y.parquet")]) == 0
    assert (later / "y.parquet").exists() and not (first / "y.parquet").exists()


def test_a_path_entry_another_user_can_write_is_refused(tmp_path):
    """Reliability-12: root's PATH with a folder the user could write first: `lab fio` ran their `fio` as root
    (PWNED-fio-as-0). PATH, JAVA_HOME, SPARK_HOME and HADOOP_CONF_DIR are checked as the other folders are."""
    shared = tmp_path / "bin"
    shared.mkdir()
    shared.chmod(0o777)
    for var in ("PATH", "JAVA_HOME", "SPARK_HOME", "HADOOP_CONF_DIR"):
        value = f"/usr/bin:{shared}" if var == "PATH" else str(shared)
        why = ownership.environment_refusal({var: value})
        assert why is not None and why.startswith(
            f"the environment's {var} ({shared}): {shared} can be written by every user"
        )
    assert ownership.environment_refusal({"PATH": os.environ["PATH"]}) is None
