"""The notebooks in notebooks/ and their parameters: listing, resolving a name, reading the ``parameters``
cell, and checking a run's parameters against it (papermill itself only warns)."""

from __future__ import annotations

import ast
import io
import math
import re
import tokenize
from pathlib import Path
from typing import Any

from . import ownership, paths
from .errors import ParameterError

# ----------------------------------------------------------------------------- notebooks and parameters


def list_notebooks() -> list[Path]:
    return sorted(p for p in paths.NOTEBOOKS.glob("*.ipynb") if not p.name.startswith("_"))


def resolve(name: str) -> Path:
    p = Path(name)
    if p.suffix == ".ipynb" and p.exists():
        if why := ownership.file_refusal(p) or _writers(p):
            # reliability-31: papermill opens the notebook by its name again when it runs it: another user's FIFO
            # swapped in after every check hung `run` for good (2 of 6 runs); and a notebook is code, run as you
            raise ParameterError(
                f"{name}: {why}: a notebook runs as you, and another user could change this one (or swap it for a "
                "FIFO) after it is checked; copy it into a folder of yours"
            )
        if (
            not p.is_file()
        ):  # a FIFO (another user's, or swapped in) waited for a writer for ever; /dev/zero never ended
            raise ParameterError(f"{name}: not a regular file (a FIFO, a device or a folder): give a notebook file")
        return p.resolve()
    if p.suffix == ".ipynb" and len(p.parts) > 1:  # reliability-32 read, Low: ran the project's notebook of that name
        raise ParameterError(f"{name}: no such notebook file (a notebook of the project is named alone: {p.stem})")
    stem = p.stem if p.suffix else p.name
    matches = [
        nb
        for nb in list_notebooks()
        if nb.stem == stem or nb.stem.split("_", 1)[-1] == stem or nb.stem.startswith(stem + "_")
    ]
    if len(matches) != 1:
        known = ", ".join(nb.stem for nb in list_notebooks())
        raise ParameterError(f"no single notebook matches {name!r}; known: {known}")
    return matches[0]


def _writers(p: Path) -> str | None:
    """How another user can write the notebook file ``p`` itself (its mode's group or other write bit, or its access
    control list), as words; None when they cannot. Reliability-32: root's notebook with `setfacl -m u:bob:rw` (or
    mode 0666, or group-writable with bob in the group) passed ``file_refusal``, which looks at the file's owner and
    folders only, and bob's cell ran as root."""
    why = ownership.file_writers(str(p))  # the rule of the files the environment names
    return f"it is a file {why}" if why else None


def _read(nb_path: Path):
    """The notebook at ``nb_path``, opened as ingest opens an input (``ingest_open.open_input``: only a regular file
    when opened, O_NONBLOCK) and read to a bound. Reliability-31 (h2): `storagelab run /tmp/theirs/nb.ipynb`, their
    FIFO, waited in nbformat's open for ever, and Ctrl-C did not end it (polars' runtime handles SIGINT with
    SA_RESTART, so the open is restarted); a link of theirs to /dev/zero read until memory ran out."""
    import nbformat  # noqa: PLC0415  (0.9 s to import: kept out of the CLI's start-up)

    from .ingest_open import open_input, read_text_file  # noqa: PLC0415

    try:
        with open_input(nb_path) as fh:
            data = read_text_file(fh, nb_path, "notebook")
    except OSError as e:
        raise ParameterError(f"{nb_path}: {e.strerror or e}: give a notebook file") from None
    try:
        return nbformat.reads(data.decode("utf-8", errors="replace"), as_version=4)
    except nbformat.reader.NotJSONError:  # reliability-36: a traceback for a cut or rewritten notebook file
        raise ParameterError(f"{nb_path}: not a notebook (not JSON): give a notebook file") from None
    except Exception as e:  # reliability-37: JSON but no notebook ([], {}, "cells": 5, nbformat 99,
        # nested 200,000 deep): a traceback from nbformat's reader, converter or validator (TypeError, ValidationError..)
        why = ": ".join([type(e).__name__, *str(e).splitlines()[:1]])[:160]
        raise ParameterError(f"{nb_path}: not a notebook ({why}): give a notebook file") from None


def notebook_parameters(nb_path: Path) -> dict[str, Any]:
    """name -> default value, from the cell tagged ``parameters`` (literals only)."""
    nb = _read(nb_path)
    cells = _parameter_cells(nb)
    if len(cells) != 1:
        raise ParameterError(f"{nb_path.name}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    return _literal_assignments(cells[0].source, nb_path.name)


def _parameter_cells(nb) -> list:
    tags = lambda c: t if isinstance(t := c.metadata.get("tags", []), list) else []  # noqa: E731  (r-37: "tags": 5)
    return [c for c in nb.cells if c.cell_type == "code" and "parameters" in tags(c)]


def _parse(source: str, nb_name: str) -> ast.Module:
    """The parameters cell's code. Reliability-37: a cell that is not Python ("x = (", 200,000 minus signs, a source
    of 5) ended `run` in a traceback (SyntaxError, MemoryError for a 200 kB cell, TypeError)."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as e:
        why = ": ".join([type(e).__name__, *str(e).splitlines()[:1]])[:160]
        raise ParameterError(f"{nb_name}: the cell tagged 'parameters' is not Python code ({why})") from None


def _literal_assignments(source: str, nb_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in _parse(source, nb_name).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and node.value is not None:
                try:
                    out[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    raise ParameterError(f"{nb_name}: parameter {target.id} must have a literal default") from None
    return out


def parameter_docs(nb_path: Path) -> list[dict[str, Any]]:
    """Every parameter of a notebook: name, type, default and meaning (the comment after it)."""

    nb = _read(nb_path)
    cells = _parameter_cells(nb)
    if len(cells) != 1:
        raise ParameterError(f"{nb_path.name}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    source = cells[0].source
    tree = _parse(source, nb_path.name)
    comments = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("# ").strip()
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and node.value is not None:
                default = ast.literal_eval(node.value)
                out.append(
                    dict(
                        name=target.id,
                        type=type(default).__name__,
                        default=default,
                        meaning=comments.get(node.lineno, ""),
                    )
                )
    return out


def notebook_listing(nbs: list[Path]) -> str:
    """`storagelab run --list`: each notebook, its question and its parameters."""
    lines = []
    for nb_path in nbs:
        nb = _read(nb_path)
        lines.append(f"{nb_path.stem}: {_title(nb, nb_path.stem)}")
        for p in parameter_docs(nb_path):
            lines.append(f"    {p['name']:<24} {p['type']:<6} default {p['default']!r:<28} {p['meaning']}")
        lines.append("")
    lines.append("Run one: storagelab run NAME -p PARAM VALUE ... (reports go to reports/<study>/)")
    return "\n".join(lines)


def coerce(name: str, value: Any, default: Any, nb_name: str) -> Any:
    """Check (and convert from CLI text) a parameter value against its default's type."""
    if isinstance(value, str) and not isinstance(default, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise ParameterError(
                f"{nb_name}: parameter {name} expects {type(default).__name__} "
                f"(default {default!r}); got {value!r}, which is not a literal"
            ) from None
    expected = type(default)
    ok = (
        default is None
        or (expected is bool and isinstance(value, bool))
        or (expected is int and isinstance(value, int) and not isinstance(value, bool))
        or (expected is float and isinstance(value, (int, float)) and not isinstance(value, bool))
        or (expected in (str, list, dict, tuple) and isinstance(value, expected))
    )
    if not ok:
        raise ParameterError(
            f"{nb_name}: parameter {name} expects {expected.__name__} (default {default!r}); "
            f"got {type(value).__name__} {value!r}"
        )
    if expected is float:
        value = float(value)
        if math.isnan(value):
            raise ParameterError(f"{nb_name}: parameter {name} may not be NaN")
        if math.isinf(value):  # 1e999 is a literal: a report of "inf GiB" and "+inf %" helps no one
            raise ParameterError(f"{nb_name}: parameter {name} must be a finite number, got {value}")
    return value


def validate(nb_path: Path, params: dict[str, Any], raw: dict[str, str] | None = None) -> dict[str, Any]:
    defaults = notebook_parameters(nb_path)
    out = {}
    for name, value in {**params, **(raw or {})}.items():
        if name not in defaults:
            raise ParameterError(
                f"{nb_path.name}: unknown parameter {name!r}; parameters are: "
                f"{', '.join(f'{k} (default {v!r})' for k, v in defaults.items())}"
            )
        if raw and name in raw:
            if not isinstance(defaults[name], str):
                raise ParameterError(
                    f"{nb_path.name}: -r gives a string, but {name} expects {type(defaults[name]).__name__}"
                )
            out[name] = raw[name]
        else:
            out[name] = coerce(name, value, defaults[name], nb_path.name)
    return out


def _title(nb, default: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return re.sub(r"[`*_]", "", line[2:]).strip()
    return default


def validate_each(
    nbs: list[Path], params: dict[str, Any], raw: dict[str, str] | None = None
) -> tuple[list[tuple[Path, dict[str, Any]]], list[str]]:
    """Each notebook with the parameters it takes (``validate``), and one note per parameter that only some of
    them take. A parameter none of them takes is refused (``ParameterError``), as is a bad value."""
    if len(nbs) <= 1:
        return [(nb, validate(nb, params, raw)) for nb in nbs], []
    known = {nb: notebook_parameters(nb) for nb in nbs}
    notes = []
    for name in {**params, **(raw or {})}:
        takers = [nb.stem for nb in nbs if name in known[nb]]
        if not takers:
            raise ParameterError(
                f"unknown parameter {name!r}: none of the notebooks to run takes it "
                f"({', '.join(nb.stem for nb in nbs)})"
            )
        if len(takers) < len(nbs):
            others = [nb.stem for nb in nbs if name not in known[nb]]
            notes.append(
                f"note: parameter {name} is given to {', '.join(takers)} only; {', '.join(others)} "
                f"take{'s' if len(others) == 1 else ''} no such parameter"
            )

    def own(given: dict, nb: Path) -> dict:
        return {k: v for k, v in given.items() if k in known[nb]}

    return [(nb, validate(nb, own(params, nb), own(raw or {}, nb))) for nb in nbs], notes
