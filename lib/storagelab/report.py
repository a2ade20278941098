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
import re
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
    cells = _parameter_cells(nb)
    if len(cells) != 1:
        raise ParameterError(f"{nb_path.name}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    return _literal_assignments(cells[0].source, nb_path.name)


def _parameter_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]


def _literal_assignments(source: str, nb_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and node.value is not None:
                try:
                    out[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    raise ParameterError(f"{nb_name}: parameter {target.id} must have a literal default") from None
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
    nbs = [resolve(n) for n in names] if names else list_notebooks()
    plans = [(nb, validate(nb, params or {}, raw_params)) for nb in nbs]
    import papermill as pm

    from .charts import figure_dir

    out_dir = Path(out_dir or EXECUTED)
    out_dir.mkdir(parents=True, exist_ok=True)
    done = []
    for nb, p in plans:
        dest = out_dir / nb.name
        figs = figure_dir(nb.stem)
        if figs.is_dir():  # figures are the last run's only: no stale chart survives a renamed or removed one
            for f in figs.iterdir():
                if f.is_file() and f.name.endswith((".svg", ".png", ".vl.json")):
                    f.unlink()
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


_SVG_ID = re.compile(r'(\bid=")([^"]+)(")')
_SVG_REF = re.compile(r'(url\(#|href="#)([^)"]+)')
_SVG_PROLOG = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?")
_SVG_NS = "{http://www.w3.org/2000/svg}"


def _inline_svg(svg: str, prefix: str) -> str | None:
    """The SVG ready to inline in the page (ids made unique with ``prefix``), or None when it holds
    anything active or external (script, foreignObject, event handlers, non-local links): such an SVG
    is shown as an image instead, where nothing in it can run."""
    import xml.etree.ElementTree as ET

    svg = _SVG_PROLOG.sub("", svg, count=1)
    try:
        root = ET.fromstring(svg)
    except ET.ParseError:
        return None
    if root.tag != _SVG_NS + "svg":
        return None
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1].lower() if isinstance(el.tag, str) else ""
        if tag in ("script", "foreignobject", "iframe"):
            return None
        if tag == "style" and re.search(r"url\(|@import", el.text or ""):
            return None
        for k, v in el.attrib.items():
            name = k.rsplit("}", 1)[-1].lower()
            if name.startswith("on") or (name == "href" and not v.startswith("#")):
                return None
            if "url(" in v and "url(#" not in v:
                return None
    svg = _SVG_ID.sub(lambda m: m.group(1) + prefix + m.group(2) + m.group(3), svg)
    return _SVG_REF.sub(lambda m: m.group(1) + prefix + m.group(2), svg)


def _title(nb, default: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return re.sub(r"[`*_]", "", line[2:]).strip()
    return default


def _run_info(nb, name: str) -> dict[str, Any]:
    """What the header of a report shows: parameters (defaults and the ones set for the run), run times."""
    pm = nb.metadata.get("papermill", {}) or {}
    injected = dict(pm.get("parameters") or {})
    cells = _parameter_cells(nb)
    defaults = _literal_assignments(cells[0].source, name) if len(cells) == 1 else {}
    params = [{"name": k, "value": repr(injected.get(k, v)), "set": k in injected, "default": repr(v)}
              for k, v in defaults.items()]
    params += [{"name": k, "value": repr(v), "set": True, "default": ""}
               for k, v in injected.items() if k not in defaults]
    source = pm.get("input_path") or ""
    try:
        source = Path(source).resolve().relative_to(paths.ROOT.resolve()).as_posix()
    except (ValueError, OSError):
        pass
    return dict(params=params, source=source, start=pm.get("start_time"), end=pm.get("end_time"),
                duration=pm.get("duration"), papermill=pm.get("version"))


def _prepare(nb, name: str) -> tuple[dict[str, Any], list[str]]:
    """Set the page title, inline the charts' SVG; return the run info and the figure ids shown."""
    nb.metadata["title"] = _title(nb, name)
    figures, n = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            svg = out.get("data", {}).get("image/svg+xml")
            if svg is None:
                continue
            n += 1
            inline = _inline_svg(svg if isinstance(svg, str) else "".join(svg), f"sl{n}-")
            out.setdefault("metadata", {})["storagelab_inline"] = inline is not None
            if inline is not None:
                out["data"]["image/svg+xml"] = inline
            fig = (out.get("metadata", {}).get("storagelab") or {}).get("figure")
            if fig:
                figures.append(fig)
    return _run_info(nb, name), figures


def render_reports(executed_dir: Path | None = None, out_dir: Path | None = None) -> list[Path]:
    """reports/<name>.html for every executed notebook, and reports/index.html (summaries from
    <out_dir>/summaries/, where the notebooks write them)."""
    import nbformat

    executed_dir = Path(executed_dir or EXECUTED)
    out_dir = Path(out_dir or paths.REPORTS)
    out_dir.mkdir(parents=True, exist_ok=True)
    built = datetime.now(timezone.utc).isoformat(timespec="seconds")
    exp = _exporter()
    pages, runs = [], {}
    for nb_path in sorted(executed_dir.glob("*.ipynb")):
        nb = nbformat.read(str(nb_path), as_version=4)
        run, figures = _prepare(nb, nb_path.stem)
        body, _ = exp.from_notebook_node(nb, resources={"storagelab_built": built, "storagelab_run": run,
                                                        "metadata": {"name": nb_path.stem}})
        dest = out_dir / f"{nb_path.stem}.html"
        dest.write_text(body, encoding="utf-8")
        pages.append(dest)
        runs[nb_path.stem] = dict(run, title=nb.metadata["title"], figures=figures)
    (out_dir / "index.html").write_text(index_html(built, summaries_dir=out_dir / "summaries", pages=runs),
                                        encoding="utf-8")
    return pages


_STATUS_CLASS = {"reproduced": "ok", "cannot": "na", "differs": "bad"}


def index_html(built: str, summaries_dir: Path | None = None, pages: dict[str, dict] | None = None) -> str:
    """The index page: one card per notebook summary, then any rendered report that wrote none.
    Every text from the summaries (which may quote logs and labels) is escaped."""
    summaries = []
    for f in sorted(Path(summaries_dir or SUMMARIES).glob("*.json")):
        summaries.append(json.loads(f.read_text(encoding="utf-8")))
    pages = pages or {}
    e = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        "<title>storagelab reports</title><style>",
        "body{font:14px/1.45 DejaVu Sans,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}",
        "h1{font-size:1.6em} h2{font-size:1.2em;margin-bottom:.2em} .answers{color:#444;margin:.2em 0 .6em}",
        "table{border-collapse:collapse;margin:.4em 0 1.2em} td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}",
        "th{background:#f4f4f4} .ok{color:#17692c} .bad{color:#a31515} .na{color:#777} .card{border-top:1px solid #ccc;padding-top:.6em}",
        ".params{color:#8a5a00}",
        "</style></head><body>",
        "<h1>storagelab reports</h1>",
        f"<p>Built {e(built)} from the raw logs in <code>data/raw/</code>. Each report re-runs one analysis of the "
        "source studies; every number can be traced to a raw file (sha256) and its lines. "
        "Statuses: <span class='ok'>reproduced</span>, <span class='bad'>differs</span>, "
        "<span class='na'>cannot be reproduced</span> (from the data available).</p>",
    ]
    listed = set()
    for s in summaries:
        nb = str(s["notebook"])
        listed.add(nb)
        counts: dict[str, int] = {}
        for c in s.get("claims", []):
            key = str(c.get("status", "")).split(" ")[0]
            counts[key] = counts.get(key, 0) + 1
        status = ", ".join(f"<span class='{_STATUS_CLASS.get(k, 'na')}'>{n} {e(k)}</span>" for k, n in sorted(counts.items()))
        parts.append(f"<div class='card'><h2><a href='{e(nb)}.html'>{e(str(s['title']))}</a></h2>")
        parts.append(f"<p class='answers'>{e(str(s['answers']))}</p>")
        set_params = [p for p in pages.get(nb, {}).get("params", []) if p["set"]]
        if set_params:
            parts.append("<p class='params'>Run with " + ", ".join(f"<code>{e(p['name'])} = {e(p['value'])}</code>"
                                                                     for p in set_params) + " (not the defaults)</p>")
        if s.get("headline"):
            parts.append("<table><tr><th>headline</th><th>value</th></tr>")
            parts += [f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>" for k, v in s["headline"].items()]
            parts.append("</table>")
        if counts:
            parts.append(f"<p>Claims: {status}</p>")
        parts.append("</div>")
    rest = [nb for nb in sorted(pages) if nb not in listed]
    if rest:
        parts.append("<div class='card'><h2>Other reports</h2><ul>")
        parts += [f"<li><a href='{e(nb)}.html'>{e(str(pages[nb].get('title') or nb))}</a></li>" for nb in rest]
        parts.append("</ul></div>")
    parts.append("</body></html>")
    return "\n".join(parts)
