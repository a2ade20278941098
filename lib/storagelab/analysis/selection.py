"""Which files an analysis looks at: the selection contract shared by every analysis notebook.

Every analysis notebook takes the same label filters as parameters (``study``, ``stack``,
``vdev_type``, ``host``), each matched exactly against the manifest labels in ``files``; an empty
filter matches everything, ``"(unlabelled)"`` matches files without that label. Files the manifest
marks as re-pastes (``duplicate_of``) are never selected. A log whose bytes are another stored log's
is stored once; its own labels (in ``duplicates``) select the stored rows too, and a label the copy lacks
is the stored file's (the ingest says so: "its rows are that file's, with that file's labels"). So
``"(unlabelled)"`` never shows a labelled file's rows because an unlabelled copy of it exists: those rows are
shown under the label they carry, and ``copies_left_out`` says so in the notebook (which copy, of which file,
under which label). Data is chosen by labels and parsed fields only, never by file names.

    sel = Selection(study="mylab", stack="zfs")
    where, params = sel.sql("f")   # "((f.duplicate_of IS NULL AND f.study = ? AND f.stack = ?) OR EXISTS
                                   #   (SELECT 1 FROM duplicates d WHERE d.same_as = f.path AND
                                   #    d.duplicate_of IS NULL AND coalesce(d.study, f.study) = ? AND ...))"
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

UNLABELLED = "(unlabelled)"

# the label filters every analysis notebook accepts, with what each means (notebook parameters and docs)
FILTERS = {
    "study": "files labelled with this study (manifest column study); '' = every study",
    "stack": "only files with this stack label (e.g. zfs, mergerfs+zfs); '' = any",
    "vdev_type": "only files with this vdev_type label (single, mirror, raidz1, ...); '' = any",
    "host": "only files with this host label; '' = any",
}


@dataclass(frozen=True)
class Selection:
    study: str = ""
    stack: str = ""
    vdev_type: str = ""
    host: str = ""

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, str):
                raise TypeError(f"selection filter {f.name} must be a string, got {type(v).__name__} {v!r}")

    @classmethod
    def from_params(cls, params: dict) -> Selection:
        """The selection out of a notebook's parameters (names in FILTERS; others are ignored)."""
        return cls(**{k: params[k] for k in FILTERS if k in params and params[k] is not None})

    @classmethod
    def parse(cls, text: str) -> Selection:
        """A selection written as ``key=value`` pairs separated by commas (``host=nas2,stack=zfs``; keys: the
        FILTERS). ValueError naming the keys for anything else."""
        values = {}
        for part in (p.strip() for p in text.split(",")):
            key, eq, value = part.partition("=")
            key = key.strip()
            if not eq or key not in FILTERS or not value.strip():
                raise ValueError(
                    f"{part!r} in {text!r}: write a selection as key=value pairs separated by commas, keys "
                    + ", ".join(FILTERS)
                    + " (e.g. host=nas2,stack=zfs)"
                )
            values[key] = value.strip()
        return cls(**values)

    def filters(self) -> dict[str, str]:
        """The filters that are set, in FILTERS order."""
        return {k: getattr(self, k) for k in FILTERS if getattr(self, k)}

    def sql(self, alias: str = "f") -> tuple[str, list]:
        """A WHERE fragment on the files table (aliased ``alias``) and its bound values: a stored file whose
        labels match, or whose bytes a copy with matching labels holds (table ``duplicates``: identical logs in
        two studies are stored once and selected by either study's labels). A copy's missing label is the stored
        file's: an unlabelled copy of a labelled file does not make that file's rows "(unlabelled)"."""
        if not self.filters():
            return f"{alias}.duplicate_of IS NULL", []
        own, params = self._conditions(alias)
        copy, copy_params = self._conditions("d", stored=alias)
        where = f"(({own}) OR EXISTS (SELECT 1 FROM duplicates d WHERE d.same_as = {alias}.path AND {copy}))"
        return where, params + copy_params

    def _conditions(self, alias: str, stored: str | None = None) -> tuple[str, list]:
        """The filters on the labels of ``alias``; with ``stored`` (the copies' stored file), a label ``alias``
        lacks is ``stored``'s."""
        parts, params = [f"{alias}.duplicate_of IS NULL"], []
        for k, v in self.filters().items():
            col = f"coalesce({alias}.{k}, {stored}.{k})" if stored else f"{alias}.{k}"
            if v == UNLABELLED:
                parts.append(f"{col} IS NULL")
            else:
                parts.append(f"{col} = ?")
                params.append(v)
        return " AND ".join(parts), params

    def copies_left_out(self, con, shown: int = 3) -> str | None:
        """A sentence when a ``"(unlabelled)"`` filter leaves out stored copies that lack that label while the
        file whose bytes they hold has it (they are that file's runs, under its label); None when there are none."""
        unl = [k for k, v in self.filters().items() if v == UNLABELLED]
        if not unl:
            return None
        others = Selection(**{k: v for k, v in self.filters().items() if v != UNLABELLED})
        cond = " OR ".join(f"(d.{k} IS NULL AND f.{k} IS NOT NULL)" for k in unl)
        extra, params = others._conditions("d", stored="f") if others.filters() else ("TRUE", [])
        labels = ", ".join(f"f.{k}" for k in unl)
        rows = con.execute(
            f"SELECT d.path, f.path, {labels} FROM duplicates d JOIN files f ON f.path = d.same_as "
            f"WHERE d.duplicate_of IS NULL AND f.duplicate_of IS NULL AND ({cond}) AND {extra} ORDER BY d.path",
            params,
        ).fetchall()
        if not rows:
            return None
        said = []
        for copy, original, *values in rows[:shown]:
            held = ", ".join(f"{k} {v}" for k, v in zip(unl, values, strict=True) if v is not None)
            said.append(f"{copy} is the same bytes as {original} ({held})")
        more = f" and {len(rows) - shown} more" if len(rows) > shown else ""
        which = " or ".join(unl)
        return (
            f"{len(rows)} file(s) without a {which} label are copies of labelled files, not unlabelled data: "
            f"{'; '.join(said)}{more}. Their rows are that file's, shown under its labels, not under {UNLABELLED}"
        )

    def unmatched(self, con) -> str | None:
        """A sentence when no stored file has the labels asked for (a typo in a study name looks like a study
        without data otherwise), naming the values the database does hold; None when some file matches."""
        if not self.filters():
            return None
        where, params = self.sql("f")
        if con.execute(f"SELECT count(*) FROM files f WHERE {where}", params).fetchall()[0][0]:
            return None
        known = []
        for k, v in self.filters().items():
            if v == UNLABELLED:
                continue
            values = [
                r[0] for r in con.execute(f"SELECT DISTINCT {k} FROM files WHERE {k} IS NOT NULL ORDER BY 1").fetchall()
            ]
            if v not in values:
                shown = ", ".join(values[:12]) + (", ..." if len(values) > 12 else "")
                known.append(f"no file is labelled {k} {v} ({k} values in the database: {shown or 'none'})")
        return (
            "; ".join(known) if known else f"no file has all of {self.describe()}"
        ) + ": check the spelling, or ingest and label the logs (manifest.csv)"

    def describe(self) -> str:
        """'study mylab, stack zfs' / 'every study' (for captions and prose)."""
        f = self.filters()
        if not f:
            return "every study"
        return ", ".join(f"{k} {v}" for k, v in f.items())

    def is_study(self, study: str) -> bool:
        """True when this selection is exactly the study ``study`` (study-specific commentary)."""
        return self.study == study and not (self.stack or self.vdev_type or self.host)

    def folder(self) -> str:
        """A folder name for this selection's reports: the study, or 'all'."""

        name = self.study or "all"
        extra = [f"{k}-{v}" for k, v in self.filters().items() if k != "study"]
        text = "--".join([name, *extra])
        return re.sub(r"[^A-Za-z0-9._+-]+", "_", text).strip("._") or "all"
