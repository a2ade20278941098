"""What an ingest does with each listed file, from what the database already holds: skip it unread
(path, size and mtime unchanged, or a known copy), read it, and once its SHA-256 is known store it,
keep it (same bytes), move its stored rows to its new path (a rename), or list it as a copy.

The database mirrors the listed folders: a stored file under one of them that is no longer
listed is gone, and is either found again under a new path (same SHA-256: renamed) or removed; a stored file
that is not looked at (ignored, or in a folder that cannot be read) stays as stored.

One rule decides what a file's bytes are, whatever order files change in: bytes no stored file holds are
stored (a new file, or new bytes under a stored path); bytes a gone file held move that file's rows (a rename);
bytes another stored file holds are a copy (listed in ``duplicates``), also when the path was itself a stored
file holding other bytes: its own rows go, as a fresh ingest of the same tree would not have stored them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

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
    unsure_copies: list[str] = field(default_factory=list)  # unlisted copies whose bytes an exchange may have taken
    _gone_by_sha: dict[str, str] = field(default_factory=dict)  # sha256 -> key of a gone file
    _stored_by_sha: dict[str, str] = field(default_factory=dict)  # sha256 -> key of a stored file not re-read
    _seen: dict[str, str] = field(default_factory=dict)  # sha256 -> key of a file of this run
    _versions: dict[str, str] = field(default_factory=dict)  # tool -> the current parser version
    _listed: set[str] = field(default_factory=set)
    failed: dict[str, StoredCopy] = field(default_factory=dict)  # failed files whose size and mtime are on record

    @classmethod
    def make(
        cls,
        listing: list[ListedFile],
        stored: dict[str, StoredFile],
        copies: dict[str, StoredCopy],
        versions: dict[str, str],
        scopes: list[str],
        kept: Callable[[str], bool] | None = None,
        failed: dict[str, StoredCopy] | None = None,
    ) -> Plan:
        """``versions``: tool -> the parser version of the current code (a file stored by another one is read
        again). ``kept``: whether a stored file that is not listed stays all the same (it was not looked at:
        ignored, or in a folder that cannot be read). ``failed``: the failed files whose size and mtime are on record
        (``same_as`` empty)."""
        listed = {f.key for f in listing}
        stored = dict(stored)

        def gone_key(k: str) -> bool:
            return k not in listed and in_scope(k, scopes) and not (kept and kept(k))

        gone = {k: stored.pop(k) for k in [k for k in stored if gone_key(k)]}
        plan = cls(stored, copies, gone, [k for k in copies if gone_key(k)])
        plan._versions, plan._listed, plan.failed = dict(versions), listed, dict(failed or {})
        plan._gone_by_sha = {v.sha256: k for k, v in gone.items() if versions.get(v.tool) == v.parser_version}

        def current(f: StoredFile) -> bool:
            return versions.get(f.tool) == f.parser_version

        # reliability-24 (h1): size and mtime tell a file's bytes apart only when no other bytes have both: two
        # same-size logs extracted from one tar (whole-second mtimes) exchanged by `mv` (names put right) kept each
        # other's rows, "skipped 2 unchanged". A file is skipped only when the other stored bytes and the other
        # listed files of its size and mtime are all its own bytes (copies); a failed or new file there: read.
        # reliability-25: once an exchange was seen (a path of its size and second marked -1, _moved_unseen), what
        # the database holds for the other files of that size is not sure either: `ingest s2` marked s1/b, then s1/b's
        # bytes reached s2/a by `mv` (one size, one second) and the whole ingest skipped s2/a as unchanged, its old
        # rows kept; the same with s1/c, a copy on record with bytes it no longer held, copied on. Files of that size
        # (``moved``) are read until those paths have been read again.
        shas: dict[tuple[int, int], set[str]] = {}
        moved: set[int] = set()
        # reliability-27: a failed file's bytes are bytes of a size and second too: one moved by `mv` onto a stored
        # log alone in its size and second was skipped as that log, its rows kept (also by whole ingests)
        for k, c in plan.failed.items():
            shas.setdefault((c.size, c.mtime_ns), set()).add(f"failed {c.sha256 or k}")
        for f in [*stored.values(), *gone.values(), *copies.values()]:
            shas.setdefault((f.size, f.mtime_ns), set()).add(f.sha256)
            if f.mtime_ns == -1:
                moved.add(f.size)
        unknown = {(f.size, f.mtime_ns) for f in listing if f.key not in stored and f.key not in copies}

        def known(f: StoredFile | StoredCopy, item: ListedFile) -> bool:
            same = f.size == item.size and f.mtime_ns == item.mtime_ns
            alone = len(shas[(f.size, f.mtime_ns)]) == 1 and f.size not in moved
            return same and alone and (f.size, f.mtime_ns) not in unknown

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

    def decide(self, key: str, size: int, mtime_ns: int, sha256: str, tool: str, parser_version: str) -> Action:
        """What to do with a file that was read (and parsed by the current parser ``parser_version``)."""
        old = self.stored.get(key)
        before = old or self.copies.get(key) or self.failed.get(key)  # a failed file's bytes: exchanged as well
        # reliability-27: whatever the path holds now (also bytes of another size: a rotation of three), the bytes it
        # held may have gone by `mv` to an unlisted file of their size and second, which stat cannot tell from its own
        if before and before.sha256 != sha256 and before.mtime_ns != -1:
            self._moved_unseen(before.size, before.mtime_ns)
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
        same = self._stored_by_sha.get(sha256) or self._seen.get(sha256)
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

    def gone_unseen(self) -> None:
        """reliability-27: a gone file's bytes (not found again in this run) may have gone by `mv` to an unlisted file of
        their size and second, which stat cannot tell from its own: `mv s2/b s3/a` (one size, one second), `ingest s2`
        removed s2/b's rows, and every later ingest skipped s3/a, its old rows kept. Those files are read at their
        next ingest, as after an exchange seen."""
        for v in [*self.gone.values(), *(self.copies[k] for k in self.gone_copies if k in self.copies)]:
            if v.mtime_ns != -1:
                self._moved_unseen(v.size, v.mtime_ns)

    def _moved_unseen(self, size: int, mtime_ns: int) -> None:
        """Bytes came to a path with the size and mtime of the bytes stored there: an exchange (`mv` keeps mtimes).
        reliability-25: a stored file of that size and mtime that this run does not list (another folder than
        the one ingested) may be the other side of it: it is no copy's original now, and its next ingest reads it
        (its stored mtime is set to -1 ns). Before: `ingest s1` after s1/a and s2/b were exchanged listed s1/a as a
        copy of s2/b (now holding s1/a's old bytes) and removed a's rows; every later ingest skipped s2/b."""
        for k, v in self.stored.items():
            if k not in self._listed and (v.size, v.mtime_ns) == (size, mtime_ns):
                if self._stored_by_sha.get(v.sha256) == k:
                    del self._stored_by_sha[v.sha256]
                self.touched.append((-1, v.file_id))
        # reliability-27: a copy on record there too (s3/a, a copy of s1/b, exchanged with s2/b, itself a copy on
        # record of s1/a): else it stayed a known copy of bytes it no longer held, and every later ingest skipped it
        self.unsure_copies += [
            k
            for k, c in self.copies.items()
            if k not in self._listed and (c.size, c.mtime_ns) == (size, mtime_ns) and k not in self.unsure_copies
        ]
