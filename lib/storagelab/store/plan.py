"""What an ingest does with each listed file, from what the database already holds: skip it unread
(its stamp, filestamps.py, is the one recorded with the bytes its record holds), read it, and once its SHA-256 is known
store it, keep it (same bytes), move its stored rows to its new path (a rename), or list it as a copy.

The database mirrors the listed folders: a stored file under one of them that is no longer
listed is gone, and is either found again under a new path (same SHA-256: renamed) or removed; a stored file
that is not looked at (ignored, or in a folder that cannot be read) stays as stored.

One rule decides what a file's bytes are, whatever order files change in: bytes no stored file holds are
stored (a new file, or new bytes under a stored path); bytes a gone file held move that file's rows (a rename);
bytes another stored file holds are a copy (listed in ``duplicates``), also when the path was itself a stored
file holding other bytes: its own rows go, as a fresh ingest of the same tree would not have stored them. A stored
file this run does not list is taken to hold its bytes only while its stamp says so (a stat)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from .filestamps import Read, Stamp, holds, matches
from .listing import ListedFile, in_scope


class StoredFile(NamedTuple):
    """A row of ``files`` as the plan needs it."""

    sha256: str
    size: int
    mtime_ns: int
    file_id: int
    tool: str
    parser_version: str


class StoredCopy(NamedTuple):
    """A row of ``duplicates``: a file whose bytes are those of the stored file ``same_as``."""

    sha256: str
    size: int
    mtime_ns: int
    same_as: str


class Rename(NamedTuple):
    """A stored file found under a new path: its rows and file_id stay."""

    key: str
    size: int
    mtime_ns: int
    file_id: int
    old_key: str


class Copy(NamedTuple):
    """A file with the bytes of a stored one (the columns of ``duplicates`` but found_at)."""

    key: str
    sha256: str
    size: int
    mtime_ns: int
    same_as: str


class Action(Enum):
    STORE = "store"  # new rows (a new file, or new bytes under a stored path)
    UNCHANGED = "unchanged"  # same bytes as stored, read again because its mtime changed
    RENAMED = "renamed"
    COPY = "copy"


@dataclass
class Plan:
    stored: dict[str, StoredFile]  # stored files still listed (or outside the listed folders)
    copies: dict[str, StoredCopy]
    gone: dict[str, StoredFile]  # stored files of the listed folders that are not listed
    gone_copies: list[str]
    jobs: list[ListedFile] = field(default_factory=list)  # files to read
    skipped: int = 0  # listed files not read: unchanged
    skipped_copies: int = 0  # ... of which known copies
    touched: list[tuple[int, int]] = field(default_factory=list)  # (new mtime_ns, file_id) of unchanged bytes
    renames: list[Rename] = field(default_factory=list)
    found: list[Copy] = field(default_factory=list)  # copies found in this run
    unique: list[str] = field(default_factory=list)  # paths listed as copies that now hold other bytes
    _gone_by_sha: dict[str, str] = field(default_factory=dict)  # sha256 -> key of a gone file
    _stored_by_sha: dict[str, str] = field(default_factory=dict)  # sha256 -> key of a stored file not re-read
    _seen: dict[str, str] = field(default_factory=dict)  # sha256 -> key of a file of this run
    _versions: dict[str, str] = field(default_factory=dict)  # tool -> the current parser version
    stamps: dict[str, Stamp] = field(default_factory=dict)  # path -> its stamp when its bytes were last read
    read: list[Read] = field(default_factory=list)  # each file read and not stored: as listed, with its SHA-256
    _listing: dict[str, ListedFile] = field(default_factory=dict)

    @classmethod
    def make(
        cls,
        listing: list[ListedFile],
        stored: dict[str, StoredFile],
        copies: dict[str, StoredCopy],
        versions: dict[str, str],
        scopes: list[str],
        kept: Callable[[str], bool] | None = None,
        stamps: dict[str, Stamp] | None = None,
    ) -> Plan:
        """``versions``: tool -> the parser version of the current code (a file stored by another one is read
        again). ``kept``: whether a stored file that is not listed stays all the same (it was not looked at:
        ignored, or in a folder that cannot be read). ``stamps``: path -> its stamp (filestamps.load)."""
        by_key = {f.key: f for f in listing}
        stored = dict(stored)

        def gone_key(k: str) -> bool:
            return k not in by_key and in_scope(k, scopes) and not (kept and kept(k))

        gone = {k: stored.pop(k) for k in [k for k in stored if gone_key(k)]}
        plan = cls(stored, copies, gone, [k for k in copies if gone_key(k)])
        plan._versions, plan._listing, plan.stamps = dict(versions), by_key, dict(stamps or {})
        plan._gone_by_sha = {v.sha256: k for k, v in gone.items() if versions.get(v.tool) == v.parser_version}

        def current(f: StoredFile) -> bool:
            return versions.get(f.tool) == f.parser_version

        # reliability-24, -25, -27: size and mtime did not tell a file's bytes apart (same-size logs of one tar second
        # exchanged by `mv`: each kept the other's rows); a file is skipped only on its stamp (filestamps.py)
        def known(f: StoredFile | StoredCopy, item: ListedFile) -> bool:
            same = f.size == item.size and f.mtime_ns == item.mtime_ns
            return same and matches(plan.stamps.get(item.key), item, f.sha256)

        copies_unread = []
        for item in listing:
            old = stored.get(item.key)
            if old and known(old, item) and current(old):
                plan.skipped += 1
                continue
            copy = None if old else copies.get(item.key)
            if copy and known(copy, item):
                copies_unread.append((copy, item))
                continue
            plan.jobs.append(item)
        rereading = {j.key for j in plan.jobs}  # stored files read again: judged by what they hold now
        if copies_unread:  # skipped unread while the stored file they copy is there and untouched
            stored_shas = {v.sha256 for v in stored.values()}
            for copy, item in copies_unread:
                if copy.sha256 in stored_shas and copy.same_as not in rereading:
                    plan.skipped += 1
                    plan.skipped_copies += 1
                else:
                    plan.jobs.append(item)
        if plan.jobs:
            plan._stored_by_sha = {v.sha256: k for k, v in stored.items() if k not in rereading}
        return plan

    def decide(
        self, key: str, size: int, mtime_ns: int, sha256: str, tool: str, parser_version: str, ctime_ns: int
    ) -> Action:
        """What to do with a file that was read (and parsed by the current parser ``parser_version``). ``ctime_ns``:
        the stamp's ctime of the bytes read (-1: they may not be the listed file's, listing.stamp_of_read)."""
        action = self._decide(key, size, mtime_ns, sha256, parser_version)
        if action is not Action.STORE and (item := self._listing.get(key)) is not None:  # STORE: with its rows
            self.read.append(Read(key, sha256, item.size, item.mtime_ns, item.ino, min(ctime_ns, item.ctime_ns)))
        return action

    def _decide(self, key: str, size: int, mtime_ns: int, sha256: str, parser_version: str) -> Action:
        old = self.stored.get(key)
        if old and old.sha256 == sha256 and old.parser_version == parser_version:
            self.touched.append((mtime_ns, old.file_id))
            self._seen.setdefault(sha256, key)
            return Action.UNCHANGED
        if not old and sha256 in self._gone_by_sha and sha256 not in self._seen:
            was = self._gone_by_sha.pop(sha256)
            self.renames.append(Rename(key, size, mtime_ns, self.gone.pop(was).file_id, was))
            self._seen[sha256] = key
            if key in self.copies:
                self.unique.append(key)
            return Action.RENAMED
        same = self._original(sha256) or self._seen.get(sha256)
        if same and same != key:
            if old:  # a stored file now holding another stored file's bytes: its own rows go, it is a copy
                self.gone[key] = self.stored.pop(key)
                if self._versions.get(old.tool) == old.parser_version and old.sha256 not in self._seen:
                    self._gone_by_sha.setdefault(old.sha256, key)
            self.found.append(Copy(key, sha256, size, mtime_ns, same))
            return Action.COPY
        self._seen[sha256] = key
        if key in self.copies:
            self.unique.append(key)  # a former copy, now different: stored, no longer a copy
        return Action.STORE

    def _original(self, sha256: str) -> str | None:
        """The stored file not read by this run that holds these bytes. One this run does not list is checked by its
        stamp (reliability-25: after s1/a and s2/b were exchanged, `ingest s1` listed s1/a as a copy of s2/b, which
        no longer held those bytes, and removed a's rows). One with no stamp (stored before stamps were kept) is no
        original either. One whose stamp no longer holds: its mtime on record becomes -1 (it is read at its next
        ingest, and a stopped run's settling keeps no rows under it)."""
        key = self._stored_by_sha.get(sha256)
        if key is None or key in self._listing:
            return key
        old, stamp = self.stored[key], self.stamps.get(key)
        if holds(key, stamp, old.sha256):
            return key
        del self._stored_by_sha[sha256]
        if stamp is not None:
            self.touched.append((-1, old.file_id))
        return None
