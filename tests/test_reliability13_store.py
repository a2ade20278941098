"""Reliability-13, the data side (docs/reliability-13-store.md): the attacks that broke, each done again as it was done,
as root with the real second user: a listed log of theirs swapped, once the listing is done, for their symlink to a
file of root's (or its folder for their link to root's folder); a manifest.csv or .storagelabignore of theirs that is
such a link; their bindfs showing their link as root's."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)
from test_reliability11 import FUSERMOUNT, _bindfs_as_user_ok
from test_write_paths import _theirs, _user

from storagelab import ignore, manifest
from storagelab.ignore import IgnoreError
from storagelab.store import listing, worker

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")

FIO = Path(__file__).parent / "fixtures" / "fio" / "3.33" / "json_only.txt"


def _roots_log(folder: Path) -> Path:
    """A log of root's, 0600 in a 0711 folder: fio's JSON with the job named ROOTSECRET."""
    (folder / "root").mkdir(mode=0o711)
    secret = folder / "root" / "secret.txt"
    secret.write_text(FIO.read_text().replace('"jobname" : "jsononly"', '"jobname" : "ROOTSECRET"'))
    secret.chmod(0o600)
    return secret


def test_a_listed_log_swapped_for_the_users_link_to_a_file_of_roots_is_not_read(shared_tmp):  # noqa: F811
    """Reliability-13: root ingested the user's folder while they put their symlink to root's 0600 log in place of each
    listed log once the listing was done (their watcher saw the ingest in /proc); the worker opened the name and
    root's log was stored under theirs, exit 0 (1 run in 3). Both ways: the log itself, and its folder swapped for
    their link to root's folder, which has a log of the same name."""
    secret, data = _roots_log(shared_tmp), _theirs(shared_tmp)
    _user("mkdir", str(data / "sub"))
    for name in ("a.txt", "sub/secret.txt"):
        _user("cp", str(FIO), str(data / name))
    kept, _, _ = listing.files_to_read([data])
    assert [f.key for f in kept] == [str(data / "a.txt"), str(data / "sub" / "secret.txt")]
    _user("ln", "-sfn", str(secret), str(data / "a.txt"))
    _user("mv", str(data / "sub"), str(data / "sub.was"))
    _user("ln", "-s", str(secret.parent), str(data / "sub"))
    outs = [worker.parse_one(f) for f in kept]
    assert [(o.error or {}).get("message") for o in outs] == [
        # a file listed as a file: a link at its name is not followed (reliability-31 store, Low 1)
        f"[Errno 40] a symlink was put in its place while it was read: '{kept[0].path}'",
        # the folder on its way swapped for their link: followed, and the file it leads to is root's
        f"[Errno 1] reached through a symlink of the user {USER}'s, it leads to a file of root's: not read (a link "
        f"of another user's is followed only to a file of theirs; copy the file in instead): '{kept[1].path}'",
    ]
    assert [o.n_rows for o in outs] == [0, 0]
    # their link to a file of theirs, put at a listed file's name: not followed either (the listing follows no link
    # out of a folder: the next ingest lists it as such a link and says so), where reliability-13 read it
    _user("ln", "-sfn", str(data / "sub.was" / "secret.txt"), str(data / "a.txt"))
    assert worker.parse_one(kept[0]).error["message"].startswith("[Errno 40] a symlink was put in its place")
    # listed as their link to a file of theirs (a file given by name): read, the data is theirs to give
    [given] = list(listing.list_files([data / "a.txt"]))
    assert given.link and [r["jobname"] for r in worker.parse_one(given).columns["fio_jobs"]] == ["jsononly"]


def test_a_manifest_or_ignore_file_that_is_the_users_link_to_a_file_of_roots_is_not_read(shared_tmp):  # noqa: F811
    """Reliability-13: a manifest.csv or .storagelabignore in the user's folder that is their link to a 0600 file of
    root's: root's ingest read it and printed its first line in the error (`... .storagelabignore:1: bad character
    range z-a in 'SECRET[z-a]PATTERN'`); a manifest with a path column would have given root's labels to their logs."""
    data = _theirs(shared_tmp)
    (shared_tmp / "root").mkdir(mode=0o711)
    secret = shared_tmp / "root" / "labels"
    secret.write_text("SECRET[z-a]PATTERN\n")
    secret.chmod(0o600)
    _user("ln", "-s", str(secret), str(data / ".storagelabignore"))
    _user("ln", "-s", str(secret), str(data / "manifest.csv"))
    why = f"reached through a symlink of the user {USER}'s, it leads to a file of root's: not read"
    with pytest.raises(IgnoreError) as e:
        ignore.IgnoreList.load(data)
    assert str(e.value).startswith(f"{data}/.storagelabignore: {why}") and "SECRET" not in str(e.value)
    with pytest.raises(OSError) as e:
        manifest._text(data / "manifest.csv")
    assert why in str(e.value) and "SECRET" not in str(e.value)


@pytest.mark.skipif(not _bindfs_as_user_ok(), reason="needs bindfs, /dev/fuse and user_allow_other in /etc/fuse.conf")
def test_the_users_link_shown_as_roots_by_their_bindfs_is_not_followed(shared_tmp):  # noqa: F811
    """Reliability-13: the user's bindfs -u 0 -g 0 over their folder shows their symlink to root's 0600 log as root's;
    a link of root's is followed anywhere, so the kernel's record of who mounted it decides whose the link is."""
    secret, src, at = _roots_log(shared_tmp), _theirs(shared_tmp), shared_tmp / "pub" / "mnt"
    _user("ln", "-s", str(secret), str(src / "a.txt"))
    _user("mkdir", "-m", "755", str(at))
    _user("bindfs", "-u", "0", "-g", "0", "-p", "0755", "-o", "allow_other", str(src), str(at))
    try:
        assert (at / "a.txt").lstat().st_uid == 0
        out = worker.parse_one(listing.ListedFile(str(at / "a.txt"), str(at / "a.txt"), 0, 0, link=True))
        assert (
            (out.error or {}).get("message", "").startswith(f"[Errno 1] reached through a symlink of the user {USER}'s")
        )
        assert out.n_rows == 0
    finally:
        subprocess.run([FUSERMOUNT, "-u", str(at)], check=False)


def test_spark_ingest_reads_no_file_of_roots_through_the_users_links(shared_tmp, monkeypatch):  # noqa: F811
    """Reliability-13: root's `spark-ingest` of the user's folder stored root's 0600 logs, exit 0: Spark's binaryFile
    follows every symlink (their b.txt -> root's log, their sub -> root's folder) and gave the executor its bytes.
    Here the executor's side as Spark calls it, with the rows Spark's listing gave for that folder: a link that leads
    out of the folder is left out (said, as the local ingest says it), and a file is read by its name, not from
    Spark's bytes, so their link swapped in for a listed log after the listing is not followed to root's."""
    pytest.importorskip("pyspark")
    from datetime import UTC, datetime  # noqa: PLC0415

    from storagelab import spark_ingest  # noqa: PLC0415

    secret, data = _roots_log(shared_tmp), _theirs(shared_tmp)
    _user("cp", str(FIO), str(data / "a.txt"))
    _user("ln", "-s", str(secret), str(data / "b.txt"))
    _user("ln", "-s", str(secret.parent), str(data / "sub"))
    now = datetime.now(UTC)
    rows = [
        dict(path=f"file:{data}/{n}", modificationTime=now, length=6450) for n in ("a.txt", "b.txt", "sub/secret.txt")
    ]
    staging = (shared_tmp / "staging").as_uri()
    local = spark_ingest.local_input(str(data))
    out = list(spark_ingest.parse_partition(rows, staging, local))
    assert [r.get("outside") or (r["key"], r["error"], r["n_rows"]) for r in out] == [
        f"{data}/b.txt: a symlink to {secret}, outside {data}: not followed",
        f"{data}/sub/secret.txt: a symlink to {secret}, outside {data}: not followed",
        (f"{data}/a.txt", None, 46),
    ]
    real_chunk = spark_ingest.parse_chunk

    def swapped_first(jobs, contents):  # the user's link put in place of the listed log, once it was listed
        _user("ln", "-sfn", str(secret), str(data / "a.txt"))
        return real_chunk(jobs, contents)

    monkeypatch.setattr(spark_ingest, "parse_chunk", swapped_first)
    out = list(spark_ingest.parse_partition(rows[:1], staging, local))
    assert [(r["n_rows"], r["error"]["message"]) for r in out] == [
        (0, f"[Errno 40] a symlink was put in its place while it was read: '{data}/a.txt'")  # listed as a file
    ]


def test_a_write_up_swapped_for_a_fifo_after_the_listing_does_not_hang(shared_tmp):  # noqa: F811
    """Reliability-13: the user's notes.md (a write-up with fio's output, which the ingest parses to say so) replaced by
    their FIFO once root's ingest had listed the folder: the write-up was read with read_bytes, whose open waits for a
    writer, and the ingest hung until Ctrl-C (reliability-9 Medium 3, fixed for logs, manifests and ignore files)."""
    import signal  # noqa: PLC0415

    from storagelab.store import documents  # noqa: PLC0415

    data = _theirs(shared_tmp)
    _user("mkfifo", str(data / "notes.md"))

    class Stuck(BaseException):  # not an OSError: output_format takes those for "no output here"
        pass

    def stuck(*_):
        raise Stuck("the read of the FIFO waited for a writer")

    old = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(5)
    try:
        assert (
            documents.output_format(listing.ListedFile(str(data / "notes.md"), str(data / "notes.md"), 10, 0)) is None
        )
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_a_reports_excerpt_is_not_read_through_the_users_link_to_a_file_of_roots(shared_tmp, tmp_path):  # noqa: F811
    """Reliability-13: a chart's rows name a stored file of the user's (the alignment chart's sources carry no
    SHA-256 to check the bytes against); the user's link to root's 0600 log put at that name before root's `build` or
    `report`, and the excerpt page written into the report showed root's lines (ROOTSECRET) with their context."""
    from storagelab.excerpts import Excerpts  # noqa: PLC0415

    secret, data = _roots_log(shared_tmp), _theirs(shared_tmp)
    _user("ln", "-s", str(secret), str(data / "a.txt"))
    assert Excerpts(tmp_path).href(str(data / "a.txt"), None, 1, 40) is None
    assert not (tmp_path / "raw").exists()
