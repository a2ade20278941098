"""The manifest's labels in the database, and what the ingest says about the manifest: rows that
match no file, files with no row, copies whose own row cannot be applied."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from .. import paths
from ..manifest import LABEL_COLUMNS, Manifest
from ..schema import all_tables
from . import arrow, db, faults
from .listing import ListedFile, in_scope, key_for

WARN_MAX = 20  # warnings of one kind listed in full; the others are counted


def _prefix(manifest: Manifest) -> str:
    """The stored-path prefix of the manifest's folder ("" for the project root)."""
    prefix = key_for(manifest.root).rstrip("/") + "/"
    return "" if prefix == "./" else prefix


def labels_by_key(manifest: Manifest) -> dict[str, dict]:
    """Manifest rows by stored path (key_for form)."""
    prefix = _prefix(manifest)
    return {prefix + rel: labels for rel, labels in manifest.rows.items()}


def manifest_hash(manifest: Manifest) -> str:
    """What ``meta.labels`` records: the manifest last applied (its folder and rows)."""
    return hashlib.sha256(repr((key_for(manifest.root), sorted(manifest.rows.items()))).encode()).hexdigest()


def apply_if_changed(con, manifest: Manifest, unread: Sequence[str] = ()) -> int:
    """Apply the manifest unless it is the one last applied (``unread``: see ``apply``). Returns how many stored
    files it relabelled."""
    applied = manifest_hash(manifest)
    done = con.execute("SELECT value FROM meta WHERE key = 'labels'").fetchone()
    if done and done[0] == applied:
        return 0
    return apply(con, manifest, applied, unread)


def apply(con, manifest: Manifest, applied: str | None = None, unread: Sequence[str] = ()) -> int:
    """Labels come from the manifest every time, so editing the manifest needs no re-parse.

    Files under the manifest's folder get its labels (NULL when not listed); only rows whose
    labels differ are written, in one transaction with ``applied`` (the manifest's hash) recorded
    as ``meta.labels``. Files under ``unread`` (key prefixes of folders the ingest could not read) keep the labels
    they have: such a folder's own manifest.csv cannot be read either, so its rows are unknown, and the ingest says
    its stored files stay (reliability-7 Low 3: their labels were cleared). The hash recorded without that folder's
    rows differs from the one with them, so the first ingest that can read it again applies them.
    Returns how many files (stored files and their copies) got other labels."""
    prefix = _prefix(manifest)
    rows = labels_by_key(manifest)
    types = {c.name: c.type for c in all_tables()["files"].columns}
    data = {"path": list(rows)}
    for c in LABEL_COLUMNS:
        data[c] = [r.get(c) for r in rows.values()]
    schema = pa.schema([("path", pa.string())] + [(c, arrow.ARROW_TYPES[types[c]]) for c in LABEL_COLUMNS])
    sets = ", ".join(f'"{c}" = m."{c}"' for c in LABEL_COLUMNS)
    wanted = ", ".join(f'l."{c}"' for c in LABEL_COLUMNS)
    under = " AND ".join(
        ["starts_with(t.path, ?)" if prefix else "true", *["NOT starts_with(t.path, ?)"] * len(unread)]
    )
    changed = 0
    con.execute("BEGIN")
    try:
        for table in ("files", "duplicates"):  # a copy keeps its own labels (see schema.DUPLICATES)
            differs = " OR ".join(f'"{table}"."{c}" IS DISTINCT FROM m."{c}"' for c in LABEL_COLUMNS)
            n = db.with_view(
                con,
                "_manifest",
                pa.Table.from_pydict(data, schema=schema),
                f'UPDATE "{table}" SET {sets} FROM (SELECT t.path, {wanted} FROM "{table}" t '
                f'LEFT JOIN "_manifest" l ON t.path = l.path WHERE {under}) m '
                f'WHERE "{table}".path = m.path AND ({differs})',
                ([prefix] if prefix else []) + list(unread),
            )
            if n and n[0][0]:
                db.bump(con, [table])
                changed += n[0][0]
        if applied:
            con.execute("INSERT OR REPLACE INTO meta VALUES ('labels', ?)", [applied])
        con.execute("COMMIT")
    except BaseException:
        faults.rollback(con)
        raise
    return changed


def _hidden(key: str) -> bool:
    """A file that is there but hidden (it, or a folder it is in, starts with '.'): the listing leaves it out."""

    if not any(p.startswith(".") and p not in (".", "..") for p in key.split("/")):
        return False
    return os.path.isfile(key if key.startswith("/") else paths.ROOT / key)


def manifest_warnings(
    manifest: Manifest,
    listing: list[ListedFile],
    present: set[str],
    scopes: list[str],
    copies: dict[str, str] | None = None,
) -> list[str]:
    """Rows that match no file (``present``: every path the database now holds or lists as a copy; a row whose file
    is there but was not read, a .md write-up, says so), and listed files with no row (under the manifest's folder),
    each named with the manifest it concerns (the folder's own, or the nearest one above it: see
    ``Manifest.source_of``); a file with no row that is a copy of a stored one (``copies``: its path -> the stored
    file's) is not stored again: said so, and whose labels its rows carry (the h6n trial's 'stored without labels'
    for eight copies that were not stored)."""
    copies = copies or {}
    if manifest.missing and not manifest.nested:
        return []
    out = []
    prefix = _prefix(manifest)
    rows = labels_by_key(manifest)
    ghosts = [(manifest.lines.get(k[len(prefix) :], 0), k) for k in rows if k not in present and in_scope(k, scopes)]
    for line, k in sorted(ghosts)[:WARN_MAX]:
        where = manifest.source_of(k[len(prefix) :])
        # a nested manifest's row, as it is written there: relative to that manifest's folder (reliability-7 Low 5)
        folder = where.parent if where in manifest.nested else Path(manifest.root)
        rel = os.path.relpath(Path(manifest.root) / k[len(prefix) :], folder)
        if _hidden(k):
            out.append(
                f"{where}:{line}: {rel}: a hidden file (a name starting with '.'): ingest does not "
                "look at hidden files and folders; rename it to have it stored"
            )
            continue
        there = folder / rel
        if there.is_file() and not there.is_symlink():  # (a link is not followed: said on its own line)
            out.append(
                f"{where}:{line}: {rel}: the file is there but was not stored (left out: the lines above say why; a .md "
                "write-up is read as documentation, rename it to .txt to have its tool output stored)"
            )
            continue
        out.append(f"{where}:{line}: {rel}: no such file under {folder} (a typo, or a file that was moved or deleted?)")
    if len(ghosts) > WARN_MAX:
        out.append(
            f"{manifest.path if not manifest.nested else 'the manifests'}: {len(ghosts) - WARN_MAX} more rows match no file"
        )
    unlabelled: dict[Path | None, list[str]] = {}
    for f in listing:
        if f.key.startswith(prefix) and f.key not in rows:
            unlabelled.setdefault(manifest.source_of(f.key[len(prefix) :]), []).append(f.key)
    for where, keys in unlabelled.items():
        if where is None:  # no manifest above it: said once by the ingest ("no manifest at ...")
            continue
        out += [
            f"{k}: no row in {where}; the same bytes as {copies[k]}: not stored again (its rows are that file's, "
            "with that file's labels)"
            if k in copies
            else f"{k}: no row in {where} (stored without labels)"
            for k in keys[:WARN_MAX]
        ]
        if len(keys) > WARN_MAX:
            out.append(f"{len(keys) - WARN_MAX} more files have no row in {where}")
    outside = [f.key for f in listing if not f.key.startswith(prefix)]
    if outside:
        folders = sorted({k.rsplit("/", 1)[0] if "/" in k else "." for k in outside})
        out.append(
            f"{len(outside)} file(s) outside {manifest.root} (in {', '.join(folders[:3])}"
            f"{', ...' if len(folders) > 3 else ''}) are stored without labels: put a manifest.csv beside them "
            "(or name one with --manifest)"
        )
    return out


def copy_warnings(labels_of: dict, copies: dict[str, str]) -> list[str]:
    """A copy (same bytes as a stored file; ``copies``: its path -> the stored file's) whose manifest row
    says something else than the stored file's: its rows are stored once and its own labels kept in
    ``duplicates``, so that a selection by either file's labels finds them; say so (the reports show the
    stored file's labels)."""
    clashes = [
        (k, same) for k, same in sorted(copies.items()) if labels_of.get(k) and labels_of.get(k) != labels_of.get(same)
    ]
    out = [
        f"{k}: the same bytes as {same}, stored once; its own labels are kept (table duplicates) and select "
        "those rows too, shown under the labels of the stored file"
        for k, same in clashes[:WARN_MAX]
    ]
    if len(clashes) > WARN_MAX:
        out.append(f"{len(clashes) - WARN_MAX} more copies with labels of their own")
    return out
