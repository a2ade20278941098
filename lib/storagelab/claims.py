"""The source studies' stated numbers (papers/<study>/claims.csv) and how a notebook checks them.

``load_claims()`` reads and validates every claims.csv; ``compare()`` sets a notebook's reproduced
values against them. Values are compared in base units (``value_base``, ``base_unit``: bytes,
bytes/s, ns, ratio, count); claims without a base value (percentages of something) are compared
in their stated unit (``value``, ``unit``). See papers/README.md.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import math
import operator
import re
from pathlib import Path

import polars as pl

from . import paths
from .errors import StoragelabError

COLUMNS = (
    "claim_id",
    "study",
    "quantity",
    "value",
    "unit",
    "value_base",
    "base_unit",
    "source",
    "notebook",
    "check",
    "target",
    "metric",
    "tolerance",
    "notes",
)
REQUIRED = ("claim_id", "study", "quantity", "value", "unit", "source", "notebook", "check", "tolerance")
NOTEBOOKS = (
    "01_vdev_scaling",
    "02_recordsize",
    "03_sector63",
    "04_dedup_ddt",
    "05_stacks",
    "06_zfs_send_transports",
    "08_fio",
    "09_bonnie",
)
CHECKS = ("raw", "arithmetic", "none")
BASE_UNITS = ("bytes", "bytes/s", "ns", "1/s", "ratio", "count", "percent")
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

SCHEMA = {
    "claim_id": pl.Utf8,
    "study": pl.Utf8,
    "quantity": pl.Utf8,
    "value": pl.Float64,
    "unit": pl.Utf8,
    "value_base": pl.Float64,
    "base_unit": pl.Utf8,
    "source": pl.Utf8,
    "notebook": pl.Utf8,
    "check": pl.Utf8,
    "tolerance": pl.Float64,
    "notes": pl.Utf8,
    "target": pl.Utf8,
    "metric": pl.Utf8,
    "file": pl.Utf8,
    "line": pl.Int64,
    "sha256": pl.Utf8,
}


class ClaimsError(StoragelabError):
    """A claims.csv is malformed, or compare() was given ids that are not claims."""


def _number(text: str, column: str, where: str, *, optional: bool = False) -> float | None:
    if text == "" and optional:
        return None
    try:
        if "_" in text:  # Python would read 1_000; a claims file writes plain numbers
            raise ValueError
        value = float(text)
    except ValueError:
        raise ClaimsError(f"{where}: column {column} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ClaimsError(f"{where}: column {column} must be a finite number, got {text!r}")
    return value


def _read(path: Path, study: str) -> list[dict]:
    rows = []
    data = path.read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()  # the bytes the claims were read from: a chart's excerpt checks them
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ClaimsError(f"{path}:{line}: not UTF-8 text (byte {e.start})") from None
    with io.StringIO(text, newline="") as fh:
        reader = csv.reader(fh, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise ClaimsError(f"{path}:1: file is empty (expected a header: {','.join(COLUMNS)})")
            header = [h.strip() for h in header]
            problems = [f"lacks {c}" for c in COLUMNS if c not in header]
            problems += [f"has unknown {c}" for c in header if c not in COLUMNS]
            problems += [f"repeats {c}" for c in sorted({c for c in header if header.count(c) > 1})]
            if problems:
                raise ClaimsError(f"{path}:1: header {'; '.join(problems)} (expected {','.join(COLUMNS)})")
            start = reader.line_num + 1
            for cells in reader:
                where = f"{path}:{start}"
                start = reader.line_num + 1
                if not any(c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    raise ClaimsError(f"{where}: {len(cells)} fields, the header has {len(header)}")
                row = {k: v.strip() for k, v in zip(header, cells, strict=True)}
                rows.append({**_validate(row, study, where, path), "sha256": sha256})
        except csv.Error as e:
            raise ClaimsError(f"{path}:{reader.line_num}: not valid CSV: {e}") from None
    return rows


def _validate(row: dict, study: str, where: str, path: Path) -> dict:
    for c in REQUIRED:
        if not row[c]:
            raise ClaimsError(f"{where}: column {c} is empty")
    if not _ID.match(row["claim_id"]):
        raise ClaimsError(f"{where}: claim_id {row['claim_id']!r} must be lower-case words joined by '-'")
    if row["study"] != study:
        raise ClaimsError(f"{where}: study {row['study']!r} differs from its folder papers/{study}/")
    if row["notebook"] not in NOTEBOOKS:
        raise ClaimsError(f"{where}: unknown notebook {row['notebook']!r} (expected one of {', '.join(NOTEBOOKS)})")
    if row["check"] not in CHECKS:
        raise ClaimsError(f"{where}: check {row['check']!r} is not one of {', '.join(CHECKS)}")
    if row["check"] != "none" and not row["metric"]:
        raise ClaimsError(
            f"{where}: a claim with check={row['check']} names the metric that reproduces it "
            "(column metric; see papers/README.md)"
        )
    if row["metric"] and is_formula(row["metric"]):
        try:
            _formula(row["metric"])
        except ClaimsError as e:
            raise ClaimsError(f"{where}: metric {row['metric']!r}: {e}") from None
    out = dict(row)
    out["value"] = _number(row["value"], "value", where)
    out["value_base"] = _number(row["value_base"], "value_base", where, optional=True)
    out["tolerance"] = _number(row["tolerance"], "tolerance", where)
    if out["tolerance"] < 0:
        raise ClaimsError(f"{where}: tolerance must be >= 0, got {row['tolerance']!r}")
    if row["base_unit"] not in BASE_UNITS:
        raise ClaimsError(f"{where}: base_unit {row['base_unit']!r} is not one of {', '.join(BASE_UNITS)}")
    if (out["value_base"] is None) != (row["base_unit"] == "percent"):
        raise ClaimsError(
            f"{where}: value_base must be empty exactly when base_unit is percent, "
            f"got {row['value_base']!r} / {row['base_unit']!r}"
        )
    out["file"] = path.as_posix()
    out["line"] = int(where.rsplit(":", 1)[1])
    return out


def load_claims(study: str | None = None, *, papers_dir: Path | str | None = None) -> pl.DataFrame:
    """Every claim of papers/*/claims.csv (or of one study), validated; ``file``/``line`` say where each stands,
    ``sha256`` the bytes of its file that were read."""
    root = Path(papers_dir) if papers_dir else paths.PAPERS
    files = sorted(root.glob("*/claims.csv"))
    if study is not None:
        files = [f for f in files if f.parent.name == study]
        if not files:
            raise ClaimsError(f"no claims for study {study!r} (no {root / study / 'claims.csv'})")
    rows: list[dict] = []
    seen: dict[str, str] = {}
    for f in files:
        for r in _read(f, f.parent.name):
            if r["claim_id"] in seen:
                raise ClaimsError(
                    f"{r['file']}:{r['line']}: claim_id {r['claim_id']!r} is already used at {seen[r['claim_id']]}"
                )
            seen[r["claim_id"]] = f"{r['file']}:{r['line']}"
            rows.append(r)
    return pl.DataFrame(rows, schema=SCHEMA, orient="row") if rows else pl.DataFrame(schema=SCHEMA)


def _repo_path(file: str) -> str:
    """A claims file's path relative to the repository when it is in it (papers/<study>/claims.csv), else as read."""
    try:
        return Path(file).resolve().relative_to(paths.ROOT.resolve()).as_posix()
    except ValueError:
        return file


def stated_where(claims_df: pl.DataFrame) -> pl.DataFrame:
    """Where each claim of ``claims_df`` is stated, as a chart's provenance columns (chartsource.PROVENANCE): per
    ``claim_id``, its claims.csv (``path``, relative to the repository when in it), ``line_start`` = ``line_end`` =
    its line, the file's ``sha256`` as read (an excerpt of changed bytes is not shown), and ``stated_in``: the claim
    id and the study's passage it cites (column source)."""
    return claims_df.select(
        "claim_id",
        path=pl.col("file").map_elements(_repo_path, return_dtype=pl.Utf8),
        line_start=pl.col("line"),
        line_end=pl.col("line"),
        sha256="sha256",
        stated_in=pl.format("{}: {}", "claim_id", "source"),
    )


def _status(claimed: float, got: float | None, tol: float, reason: str) -> tuple[float | None, str]:
    if got is None or (isinstance(got, float) and math.isnan(got)):
        return None, f"cannot be reproduced: {reason}"
    if claimed == 0:
        rel = 0.0 if got == 0 else math.inf
    else:
        rel = (got - claimed) / abs(claimed)
    if abs(rel) <= tol + 1e-12:
        return rel, "reproduced"
    return rel, f"differs by {rel * 100:+.1f} %"


def compare(
    claims_df: pl.DataFrame, reproduced: dict[str, float | None], reasons: dict[str, str] | None = None
) -> pl.DataFrame:
    """One row per claim of ``claims_df``: claimed and reproduced value, relative difference, status.

    ``reproduced`` maps claim_id to the notebook's value *in the claim's base unit* (``base_unit``; the
    stated ``unit`` where the claim has no ``value_base``, i.e. percentages), or None when the notebook
    cannot compute it. ``reasons`` says why a value is missing; without one the reason is taken from the
    claim (check=none: its notes, else "not computed by the notebook"). Status: ``reproduced`` (within
    ``tolerance``, relative), ``differs by +X.X %``, or ``cannot be reproduced: <reason>``.
    """
    reasons = reasons or {}
    known = set(claims_df["claim_id"].to_list())
    unknown = sorted((set(reproduced) | set(reasons)) - known)
    if unknown:
        raise ClaimsError(f"not claims of this table: {', '.join(unknown)}")
    out = []
    for c in claims_df.iter_rows(named=True):
        base = c["value_base"] is not None
        claimed = c["value_base"] if base else c["value"]
        reason = reasons.get(c["claim_id"]) or (
            f"check=none ({c['notes']})"
            if c["check"] == "none" and c["notes"]
            else "check=none: no data to recompute it from"
            if c["check"] == "none"
            else "not computed by the notebook"
        )
        got = reproduced.get(c["claim_id"])
        rel, status = _status(claimed, None if got is None else float(got), c["tolerance"], reason)
        out.append(
            dict(
                claim_id=c["claim_id"],
                quantity=c["quantity"],
                stated=f"{c['value']:.15g} {c['unit']}",
                claimed=claimed,
                reproduced=None if got is None else float(got),
                unit=c["base_unit"] if base else c["unit"],
                rel_diff=rel,
                tolerance=c["tolerance"],
                check=c["check"],
                status=status,
                source=c["source"],
            )
        )
    schema = {
        "claim_id": pl.Utf8,
        "quantity": pl.Utf8,
        "stated": pl.Utf8,
        "claimed": pl.Float64,
        "reproduced": pl.Float64,
        "unit": pl.Utf8,
        "rel_diff": pl.Float64,
        "tolerance": pl.Float64,
        "check": pl.Utf8,
        "status": pl.Utf8,
        "source": pl.Utf8,
    }
    return pl.DataFrame(out, schema=schema, orient="row") if out else pl.DataFrame(schema=schema)


# ----------------------------------------------------------------------------- claims by data

# A claim names what reproduces it: ``target`` (a raw file, as its path under data/raw/, or empty for a
# study-level number) and ``metric``: either the name of a value the notebook's analysis measures for
# that target (``write.bw_bytes_per_s``, ``bp_count``, ...) or a formula over such values and other
# claims' stated values: ``100 * (1 - m('write.bw_bytes_per_s', 'x/b.txt') / m('write.bw_bytes_per_s', 'x/a.txt'))``,
# ``stated('freebsd-recv-size') / (stated('freebsd-recv-time') / 1e9)``. ``m(name)`` without a path
# reads the claim's own target. Nothing else is allowed in a formula (numbers, + - * / **, parentheses,
# m(), stated(), min(), max(), abs()).

_FUNCS = ("m", "stated", "min", "max", "abs")


def is_formula(metric: str) -> bool:
    """A metric is a formula when it has parentheses or spaces, or is a plain number; else a measure's name."""
    if "(" in metric or any(ch.isspace() for ch in metric):
        return True
    try:
        float(metric)
    except ValueError:
        return False
    return True


def _formula(text: str):

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ClaimsError(f"not a formula: {e.msg}") from None
    for node in ast.walk(tree):
        if isinstance(
            node,
            (
                ast.Expression,
                ast.BinOp,
                ast.UnaryOp,
                ast.Add,
                ast.Sub,
                ast.Mult,
                ast.Div,
                ast.Pow,
                ast.USub,
                ast.UAdd,
                ast.Load,
            ),
        ):
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
            continue
        if isinstance(node, ast.Name) and node.id in _FUNCS:
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCS
            and not node.keywords
        ):
            if node.func.id in ("m", "stated") and not all(
                isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args
            ):
                raise ClaimsError(f"{node.func.id}() takes quoted names only")
            continue
        raise ClaimsError(f"{type(node).__name__} is not allowed (numbers, + - * / **, m(), stated(), min, max, abs)")
    return tree


class _Missing(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _eval(tree, measure, stated):

    ops = {
        ast.Add: operator.add,
        ast.Sub: operator.sub,
        ast.Mult: operator.mul,
        ast.Div: operator.truediv,
        ast.Pow: operator.pow,
        ast.USub: operator.neg,
        ast.UAdd: operator.pos,
    }

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Div) and b == 0:
                raise _Missing("division by zero in the formula (a measured value is 0)")
            return ops[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp):
            return ops[type(n.op)](ev(n.operand))
        if isinstance(n, ast.Call):
            args = [ev(a) for a in n.args]
            name = n.func.id
            if name == "m":
                return measure(*args)
            if name == "stated":
                return stated(*args)
            return {"min": min, "max": max, "abs": abs}[name](*args)
        raise _Missing(f"cannot evaluate {type(n).__name__}")

    return ev(tree)


def raw_target(path: str) -> str:
    """A files.path as claims and the manifest name it: relative to data/raw/ ('data/raw/x/y.txt' -> 'x/y.txt')."""
    return path[len("data/raw/") :] if path.startswith("data/raw/") else path


def check(
    claims_df: pl.DataFrame,
    measures: pl.DataFrame,
    reasons: dict[str, str] | None = None,
    stated_from: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per claim: stated and reproduced value (from ``measures`` by the claim's target and metric),
    relative difference, status and ``basis`` (raw, arithmetic, none).

    ``measures`` has columns target (path under data/raw/, '' for study-level values), metric, value.
    ``reasons`` (by metric name) says why a value the analysis could not compute is missing.
    ``raw_lines``: JSON, the raw lines ({path, line_start, line_end}) of the measures a reproduced value came from,
    where the measures record them (what the claims table links its value to).
    ``stated_from``: the claims ``stated()`` may read (default: ``claims_df``).
    """
    reasons = reasons or {}
    have = (
        {(r["target"] or "", r["metric"]): r["value"] for r in measures.iter_rows(named=True)}
        if measures.height
        else {}
    )
    where = {  # (target, metric) -> the raw lines the value was read from, where the measures say
        (r["target"] or "", r["metric"]): {k: r[k] for k in ("path", "line_start", "line_end")}
        for r in measures.iter_rows(named=True)
        if r.get("path") and r.get("line_start") is not None
    }
    used: dict[str, list[dict]] = {}  # claim id -> the raw lines of the values it was reproduced from
    targets = {t for t, _ in have}
    pool = stated_from if stated_from is not None else claims_df
    stated_values = {
        r["claim_id"]: (r["value_base"] if r["value_base"] is not None else r["value"])
        for r in pool.iter_rows(named=True)
    }
    rows, reproduced, why = [], {}, {}
    for c in claims_df.iter_rows(named=True):
        cid, metric, target = c["claim_id"], c["metric"] or "", c["target"] or ""
        if c["check"] == "none" or not metric:
            continue

        def measure(name, path=None, _target=target, _cid=cid):
            key = (path if path is not None else _target, name)
            if key in where and where[key] not in used.setdefault(_cid, []):
                used[_cid].append(where[key])
            if key not in have or have[key] is None:
                if key[0] and key[0] not in targets:
                    raise _Missing(reasons.get(name) or f"{key[0]} is not in the selection (no such raw file ingested)")
                raise _Missing(reasons.get(name) or f"no {name} for {key[0] or 'the study'}")
            return have[key]

        def stated(claim_id):
            if claim_id not in stated_values:
                raise _Missing(f"stated() names an unknown claim {claim_id!r}")
            return stated_values[claim_id]

        try:
            value = _eval(_formula(metric), measure, stated) if is_formula(metric) else measure(metric)
            reproduced[cid] = None if value is None else float(value)
        except _Missing as e:
            why[cid] = e.reason
        rows.append(cid)
    out = compare(claims_df, reproduced, why)
    lines = [json.dumps(used.get(c, []) if c in reproduced else []) for c in out["claim_id"].to_list()]
    return out.with_columns(basis=pl.col("check"), raw_lines=pl.Series(lines, dtype=pl.String))


def study_claims(study: str) -> pl.DataFrame:
    """The claims of one study, or an empty table when the study has no papers/<study>/claims.csv."""
    if not study or not (paths.PAPERS / study / "claims.csv").exists():
        return pl.DataFrame(schema=SCHEMA)
    return load_claims(study)
