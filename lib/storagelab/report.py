"""Running notebooks (papermill, with strict parameter validation) and rendering offline HTML reports.

* ``run_notebooks`` executes notebooks/<name>.ipynb into reports/executed/<name>.ipynb.
  Parameters are checked against the notebook's ``parameters`` cell before anything runs:
  an unknown name or a value of the wrong type is an error (papermill itself only warns).
* ``render_reports`` turns every executed notebook into reports/<name>.html with a template
  that references nothing outside the file (no CDN scripts, styles or fonts), and writes
  reports/index.html from the summaries the notebooks leave in reports/summaries/.
"""

from __future__ import annotations

import ast
import html
import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import paths
from .errors import ParameterError

EXECUTED = paths.REPORTS / "executed"
SUMMARIES = paths.REPORTS / "summaries"
TEMPLATES = Path(__file__).parent / "templates"


# ----------------------------------------------------------------------------- notebooks and parameters

def list_notebooks() -> list[Path]:
    return sorted(p for p in paths.NOTEBOOKS.glob("*.ipynb") if not p.name.startswith("_"))


def resolve(name: str) -> Path:
    p = Path(name)
    if p.suffix == ".ipynb" and p.exists():
        return p.resolve()
    stem = p.stem if p.suffix else p.name
    matches = [nb for nb in list_notebooks() if nb.stem == stem or nb.stem.split("_", 1)[-1] == stem
               or nb.stem.startswith(stem + "_")]
    if len(matches) != 1:
        known = ", ".join(nb.stem for nb in list_notebooks())
        raise ParameterError(f"no single notebook matches {name!r}; known: {known}")
    return matches[0]


def notebook_parameters(nb_path: Path) -> dict[str, Any]:
    """name -> default value, from the cell tagged ``parameters`` (literals only)."""
    import nbformat

    nb = nbformat.read(str(nb_path), as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ParameterError(f"{nb_path.name}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    tree = ast.parse(cells[0].source)
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and node.value is not None:
                try:
                    out[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    raise ParameterError(f"{nb_path.name}: parameter {target.id} must have a literal default") from None
    return out


def coerce(name: str, value: Any, default: Any, nb_name: str) -> Any:
    """Check (and convert from CLI text) a parameter value against its default's type."""
    if isinstance(value, str) and not isinstance(default, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise ParameterError(f"{nb_name}: parameter {name} expects {type(default).__name__} "
                                 f"(default {default!r}); got {value!r}, which is not a literal") from None
    expected = type(default)
    ok = (
        default is None
        or (expected is bool and isinstance(value, bool))
        or (expected is int and isinstance(value, int) and not isinstance(value, bool))
        or (expected is float and isinstance(value, (int, float)) and not isinstance(value, bool))
        or (expected in (str, list, dict, tuple) and isinstance(value, expected))
    )
    if not ok:
        raise ParameterError(f"{nb_name}: parameter {name} expects {expected.__name__} (default {default!r}); "
                             f"got {type(value).__name__} {value!r}")
    if expected is float:
        value = float(value)
        if math.isnan(value):
            raise ParameterError(f"{nb_name}: parameter {name} may not be NaN")
    return value


def validate(nb_path: Path, params: dict[str, Any], raw: dict[str, str] | None = None) -> dict[str, Any]:
    defaults = notebook_parameters(nb_path)
    out = {}
    for name, value in {**params, **(raw or {})}.items():
        if name not in defaults:
            raise ParameterError(f"{nb_path.name}: unknown parameter {name!r}; parameters are: "
                                 f"{', '.join(f'{k} (default {v!r})' for k, v in defaults.items())}")
        if raw and name in raw:
            if not isinstance(defaults[name], str):
                raise ParameterError(f"{nb_path.name}: -r gives a string, but {name} expects {type(defaults[name]).__name__}")
            out[name] = raw[name]
        else:
            out[name] = coerce(name, value, defaults[name], nb_path.name)
    return out


def run_notebooks(names: list[str] | None = None, params: dict[str, Any] | None = None,
                  raw_params: dict[str, str] | None = None, out_dir: Path | None = None) -> list[Path]:
    """Execute notebooks with papermill; every notebook's parameters are validated before any runs."""
    import papermill as pm

    nbs = [resolve(n) for n in names] if names else list_notebooks()
    plans = [(nb, validate(nb, params or {}, raw_params)) for nb in nbs]
    out_dir = Path(out_dir or EXECUTED)
    out_dir.mkdir(parents=True, exist_ok=True)
    done = []
    for nb, p in plans:
        dest = out_dir / nb.name
        print(f"==> running {nb.name}" + (f" with {p}" if p else ""), flush=True)
        pm.execute_notebook(str(nb), str(dest), parameters=p, cwd=str(paths.NOTEBOOKS), progress_bar=False,
                            kernel_name="python3", log_output=False)
        done.append(dest)
    return done


# ----------------------------------------------------------------------------- summaries (written by notebooks)

def write_summary(notebook: str, *, title: str, answers: str, headline: dict[str, str],
                  claims=None, study: str | None = None) -> Path:
    """Called by a notebook's last cell: what the report answers, its headline numbers, its claims status."""
    SUMMARIES.mkdir(parents=True, exist_ok=True)
    rows = []
    if claims is not None:
        for r in claims.iter_rows(named=True):
            rows.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()})
    data = dict(notebook=notebook, title=title, answers=answers, study=study, headline=headline, claims=rows,
                written_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    dest = SUMMARIES / f"{notebook}.json"
    dest.write_text(json.dumps(data, indent=1, default=str))
    return dest


# ----------------------------------------------------------------------------- HTML

def _exporter():
    from nbconvert import HTMLExporter

    exp = HTMLExporter(template_name="storagelab_html", extra_template_basedirs=[str(TEMPLATES)])
    exp.exclude_input_prompt = True
    exp.exclude_output_prompt = True
    exp.embed_images = True
    return exp


def render_reports(executed_dir: Path | None = None, out_dir: Path | None = None) -> list[Path]:
    import nbformat

    executed_dir = Path(executed_dir or EXECUTED)
    out_dir = Path(out_dir or paths.REPORTS)
    out_dir.mkdir(parents=True, exist_ok=True)
    built = datetime.now(timezone.utc).isoformat(timespec="seconds")
    exp = _exporter()
    pages = []
    for nb_path in sorted(executed_dir.glob("*.ipynb")):
        nb = nbformat.read(str(nb_path), as_version=4)
        body, _ = exp.from_notebook_node(nb, resources={"storagelab_built": built,
                                                        "metadata": {"name": nb_path.stem}})
        dest = out_dir / f"{nb_path.stem}.html"
        dest.write_text(body, encoding="utf-8")
        pages.append(dest)
    (out_dir / "index.html").write_text(index_html(built), encoding="utf-8")
    return pages


_STATUS_CLASS = {"reproduced": "ok", "cannot": "na", "differs": "bad"}


def index_html(built: str) -> str:
    summaries = []
    for f in sorted(SUMMARIES.glob("*.json")):
        summaries.append(json.loads(f.read_text()))
    e = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        "<title>storagelab reports</title><style>",
        "body{font:14px/1.45 DejaVu Sans,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}",
        "h1{font-size:1.6em} h2{font-size:1.2em;margin-bottom:.2em} .answers{color:#444;margin:.2em 0 .6em}",
        "table{border-collapse:collapse;margin:.4em 0 1.2em} td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}",
        "th{background:#f4f4f4} .ok{color:#17692c} .bad{color:#a31515} .na{color:#777} .card{border-top:1px solid #ccc;padding-top:.6em}",
        "</style></head><body>",
        "<h1>storagelab reports</h1>",
        f"<p>Built {e(built)} from the raw logs in <code>data/raw/</code>. Each report re-runs one analysis of the "
        "source studies; every number can be traced to a raw file (sha256) and its lines. "
        "Statuses: <span class='ok'>reproduced</span>, <span class='bad'>differs</span>, "
        "<span class='na'>cannot be reproduced</span> (from the data available).</p>",
    ]
    for s in summaries:
        nb = s["notebook"]
        counts: dict[str, int] = {}
        for c in s.get("claims", []):
            key = str(c.get("status", "")).split(" ")[0]
            counts[key] = counts.get(key, 0) + 1
        status = ", ".join(f"<span class='{_STATUS_CLASS.get(k, 'na')}'>{n} {e(k)}</span>" for k, n in sorted(counts.items()))
        parts.append(f"<div class='card'><h2><a href='{e(nb)}.html'>{e(s['title'])}</a></h2>")
        parts.append(f"<p class='answers'>{e(s['answers'])}</p>")
        if s.get("headline"):
            parts.append("<table><tr><th>headline</th><th>value</th></tr>")
            parts += [f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>" for k, v in s["headline"].items()]
            parts.append("</table>")
        if counts:
            parts.append(f"<p>Claims: {status}</p>")
        parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts)
