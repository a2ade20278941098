"""Rendering executed notebooks as offline HTML reports (no CDN scripts, styles or fonts), the summaries the
notebooks leave behind, and reports/index.html built from them."""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import html
import json
import math
import os
import re
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import paths, pinned, readcopies, reportstage, usercache
from .nbparams import _literal_assignments, _parameter_cells, _title
from .spectexts import short_texts

TEMPLATES = Path(__file__).parent / "templates"
SELECTION_FILE = paths.SELECTION_FILE
current_report_dir = paths.current_report_dir


# ----------------------------------------------------------------------------- summaries (written by notebooks)


def _write_json(dest: Path, data: dict) -> Path:
    return write_whole(dest, json.dumps(data, indent=1, default=str))


def write_whole(dest: Path, text: str) -> Path:
    """``text`` into ``dest`` whole or not at all (temporary name, then rename): a full disk leaves the old file (or
    none), never a page cut short, and says which file it could not write."""
    paths.make_folder(dest.parent)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")  # one per process: two builds at once both write
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(dest)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(dest)) from e
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def write_summary(
    notebook: str,
    *,
    title: str,
    answers: str,
    headline: dict[str, str],
    claims=None,
    study: str | None = None,
    verdict: str | None = None,
    selection: str | None = None,
    missing: list[str] | None = None,
    caveats: list[str] | None = None,
) -> Path:
    """Called by a notebook's last cell: what the report answers, its headline numbers, its claims status."""
    rows = []
    if claims is not None:
        for r in claims.iter_rows(named=True):
            rows.append({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()})
    data = dict(
        notebook=notebook,
        title=title,
        answers=answers,
        study=study,
        selection=selection,
        status="ok",
        verdict=verdict,
        missing=missing or [],
        caveats=caveats or [],
        headline=headline,
        claims=rows,
        written_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return _write_json(current_report_dir() / "summaries" / f"{notebook}.json", data)


# ----------------------------------------------------------------------------- HTML


@functools.cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (vl-convert's bundle: no network), inlined in each report
    page that has a chart, so the page stays one file that works offline."""
    import vl_convert as vlc  # noqa: PLC0415  (heavy, optional at start-up: only when a chart is drawn)

    # about 3 s of CPU in each rendering process, for the same text whenever vl-convert's version is the same
    return usercache.cached_text(f"vega-bundle-{vlc.__version__}.js", vlc.javascript_bundle)


def _exporter():
    from nbconvert import HTMLExporter  # noqa: PLC0415  (heavy: only when a report is rendered)

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


def _run_info(nb, name: str) -> dict[str, Any]:
    """What the header of a report shows: parameters (defaults and the ones set for the run), run times."""
    pm = nb.metadata.get("papermill", {}) or {}
    injected = dict(pm.get("parameters") or {})
    cells = _parameter_cells(nb)
    defaults = _literal_assignments(cells[0].source, name) if len(cells) == 1 else {}
    params = [
        # a parameter given its default value (-p baseline_vdev_count 1) is not one set otherwise
        {"name": k, "value": repr(injected.get(k, v)), "set": k in injected and injected[k] != v, "default": repr(v)}
        for k, v in defaults.items()
    ]
    params += [
        {"name": k, "value": repr(v), "set": True, "default": ""} for k, v in injected.items() if k not in defaults
    ]
    source = pm.get("input_path") or ""
    try:
        source = Path(source).resolve().relative_to(paths.ROOT.resolve()).as_posix()
    except (ValueError, OSError):
        pass
    return dict(
        params=params,
        source=source,
        start=pm.get("start_time"),
        end=pm.get("end_time"),
        duration=pm.get("duration"),
        papermill=pm.get("version"),
        unfinished=_unfinished(nb),
    )


def _unfinished(nb) -> str | None:
    """A sentence when papermill left cells running or never started (the run was killed or interrupted: the
    executed notebook was saved as each cell started); None when every cell ran."""
    code = [c for c in nb.cells if c.get("cell_type") == "code"]
    states = [(c.get("metadata", {}).get("papermill") or {}).get("status") for c in code]
    stopped = [i for i, st in enumerate(states) if st in ("running", "pending")]
    if not stopped:
        return None
    return (
        f"This run did not finish: it stopped at code cell {stopped[0] + 1} of {len(code)} (killed or "
        f"interrupted), and {len(stopped)} cell(s) did not run; what follows is incomplete. Run the notebook again."
    )


def _spec_text(folder: Path | None, fig: str) -> str | None:
    """The figure's interactive Vega-Lite spec (saved beside its SVG) as text safe inside a <script> element:
    every '<' written as its JSON escape, so no '</script' or '<!--' can occur."""
    path = (folder / "figures" / f"{fig}.vl.json") if folder is not None else None
    if path is None or not path.is_file():
        return None
    try:
        spec = json.loads(pinned.read_text(path))
    except (OSError, ValueError):
        return None
    return json.dumps(spec, separators=(",", ":")).replace("<", "\\u003c")


def _prepare(nb, name: str, folder: Path | None = None) -> tuple[dict[str, Any], list[str]]:
    """Set the page title, inline the charts' SVG and attach their interactive specs (from ``folder``/figures/);
    return the run info and the figure ids shown."""
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
                spec = _spec_text(folder, fig)
                if spec is not None:
                    out["metadata"]["storagelab_spec"] = spec
    return _run_info(nb, name), figures


def _failed_page(title: str, error: str, built: str) -> str:
    e = html.escape
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>" + e(title) + " (failed)</title>"
        "</head><body style='font:14px/1.45 DejaVu Sans,Helvetica,Arial,sans-serif;max-width:900px;margin:2em auto'>"
        f"<h1>{e(title)}</h1><p style='color:#a31515'><b>This report could not be rendered:</b> {e(error)}</p>"
        f"<p>Built {e(built)}. Run the notebook again (<code>storagelab notebooks run</code>) to replace it.</p>"
        "</body></html>"
    )


def report_folders(reports_dir: Path | None = None) -> list[Path]:
    """Every report folder under reports/ (one per selection: a study, 'all', ...)."""
    root = Path(reports_dir or paths.REPORTS)
    if not root.is_dir():
        return []
    return sorted(d for d in root.iterdir() if d.is_dir() and not d.name.startswith("_") and (d / "executed").is_dir())


def render_reports(
    reports_dir: Path | None = None,
    only: Path | None = None,
    failures: list[str] | None = None,
    skip: set[str] = frozenset(),
    rendered: set | None = None,
) -> list[Path]:
    """reports/<folder>/<name>.html for every executed notebook of every report folder, and reports/index.html.
    ``only``: render that one report folder (e.g. a ``run --output`` outside reports/) and no index.

    An executed notebook that cannot be read (a run killed while saving) becomes a page that says so,
    and the index marks it failed; ``failures`` gets a line for each ("folder/name: error"). ``skip``: report
    folders (names) neither rendered nor listed (build: a study no file carries any more). ``rendered`` gets the
    identity of each folder rendered and still under its name when done (`run` names its page only if its folder is
    one: reliability-33 folders, Low 3, a folder exchanged with another and back while rendered)."""

    root = Path(reports_dir or paths.REPORTS)
    if only is None:
        root.mkdir(parents=True, exist_ok=True)
    built = datetime.now(UTC).isoformat(timespec="seconds")
    exp = _exporter()
    pages, runs, held = [], {}, {}
    for named in [Path(only)] if only is not None else [f for f in report_folders(root) if f.name not in skip]:
        reportstage.finish(named)  # the moves of a run killed in them ended first: no mixed report is rendered
        with pinned.held(named) as folder:
            if folder is None:  # reliability-35 (folders): not a folder now; by the name, its reads could be others'
                continue
            before = set(runs)
            _render_folder(exp, built, named, folder, pages, runs, failures)
            held[named.name] = readcopies.identity(folder)
            if readcopies.identity(named) != held[named.name]:  # moved while rendered: its runs are not the name's
                for key in set(runs) - before:
                    del runs[key]
            elif rendered is not None:
                rendered.add(held[named.name])
    if only is None:
        started = time.time() - 2  # mtimes may be kept to the second (or two: FAT)
        # reliability-33 (folders): reports/ renamed away and another put in its place while the index was read or
        # written had the index of the one written into the other (its cards linking to pages not there, or to
        # another selection's of the same name); read and written in one tree, the one held
        with pinned.folder(root) as tree:
            write_whole(tree / "index.html", _index_of(built, tree, runs, skip, held))
            prune_thumbnails(tree, started)
    return pages


def _index_of(built: str, root: Path, runs: dict, skip: set[str], held: dict) -> str:
    """The index, with the runs rendered of only the folders still under the name they were rendered under (``held``:
    each name's folder as rendered), checked once the index has read the summaries and headings by the names.
    reliability-32 (folders): `mv reports/A A.away; mv reports/B reports/A` while a *later* folder rendered left A's
    runs keyed by the name A: the index joined A's run (its parameters: "Run with study = 'A'", its figures) to B's
    summary under B's heading, and named A's pages under A/, where they are not (reliability-31 low 5).
    reliability-33 (folders): A and B exchanged while the index read them and exchanged back before the check joined
    A's runs to B's summary and heading (and B's to A's): every folder is read through one handle of it (its
    summaries, heading and thumbnails one folder's), and the index is made again if a name no longer holds it.
    reliability-34 (folders): the folders exchanged again and again, the index made after the third try read them by
    the names (a's summaries under b's heading, exit 0): it too reads each through one handle, with the runs of only
    the folders it holds as rendered."""
    for _ in range(3):
        with contextlib.ExitStack() as stack:
            through, ids = _through(stack, root, held, skip)
            moved = {name for name, was in held.items() if ids.get(name) != was}
            if not moved:
                text = index_html(built, root, pages=runs, skip=skip, through=through)
                if all(readcopies.identity(root / name) == was for name, was in ids.items()):
                    return text  # every folder read is still under its name
                moved = {name for name, was in held.items() if readcopies.identity(root / name) != was}
        runs = {k: v for k, v in runs.items() if k.split("/", 1)[0] not in moved}
        held = {name: was for name, was in held.items() if name not in moved}
    with contextlib.ExitStack() as stack:  # still moving: each section one folder's, as read
        through, ids = _through(stack, root, held, skip)
        runs = {k: v for k, v in runs.items() if ids.get(k.split("/", 1)[0]) == held.get(k.split("/", 1)[0])}
        return index_html(built, root, pages=runs, skip=skip, through=through)


def _through(stack: contextlib.ExitStack, root: Path, held: dict, skip: set[str]) -> tuple[dict, dict]:
    """The report folders to index (those rendered, ``held``, and every other with summaries), each open in ``stack``
    (name -> a path through its handle), and the identity of each. reliability-35 (folders), folders exchanged again
    and again: a name that held no folder when opened (a file for a moment) was read by the name, its summaries and
    heading of several folders (thumper-x4500's summary under ars-zfs-vs-raid's heading): it is left out (the index
    made again, or, still moving, without it)."""
    names = (set(held) | {f.parent.name for f in root.glob("[!_]*/summaries")}) - skip
    through = {}
    for name in sorted(names):
        folder = stack.enter_context(pinned.held(root / name))
        if folder is not None:
            through[name] = folder
    return through, {name: readcopies.identity(folder) for name, folder in through.items()}


def _render_folder(exp, built: str, named: Path, folder: Path, pages: list, runs: dict, failures: list | None) -> None:
    """Render the executed notebooks of the report folder ``named``, read and written through ``folder``."""
    import nbformat  # noqa: PLC0415  (0.9 s to import: kept out of the CLI's start-up)

    for nb_path in sorted((folder / "executed").glob("*.ipynb")):
        key = f"{named.name}/{nb_path.stem}"
        dest = folder / f"{nb_path.stem}.html"
        try:
            nb = nbformat.reads(pinned.read_text(nb_path), as_version=4)
            run, figures = _prepare(nb, nb_path.stem, folder)
            interactive = any(
                "storagelab_spec" in (o.get("metadata") or {}) for c in nb.cells for o in c.get("outputs", [])
            )
            # r-20: nbconvert reads "custom/custom.css" under config_dir and the images a markdown names under
            # metadata.path, both "" unless given: the working folder (`cd THEIRS; storagelab report` put their
            # CSS in root's reports); the templates' folder has no custom/, the executed folder is ours
            resources = {"storagelab_built": built, "storagelab_run": run, "config_dir": str(TEMPLATES)}
            resources["metadata"] = {"name": nb_path.stem, "path": str(nb_path.parent)}
            if interactive:
                resources["storagelab_vega"] = vega_bundle()
            body, _ = exp.from_notebook_node(nb, resources=resources)
            runs[key] = dict(run, title=nb.metadata["title"], figures=figures)
        except Exception as e:  # noqa: BLE001 - one unreadable notebook must not stop the index
            error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            error = pinned.shown(error, {folder: named})  # the folder's name, not its handle's /proc/self/fd/N
            body = _failed_page(nb_path.stem, error, built)
            runs[key] = dict(params=[], title=nb_path.stem, figures=[], render_error=error)
            if failures is not None:
                failures.append(f"{key}: {error}")
        write_whole(dest, body)
        pages.append(named / dest.name)


def _folder_title(folder: Path, name: str | None = None) -> str:
    """A report folder's heading: its selection as recorded (``study my nas``), else its name (``name``: the folder's
    name in reports/, when ``folder`` is a handle of it)."""
    name = name or folder.name
    try:
        identity = json.loads(pinned.read_text(folder / SELECTION_FILE))
    except (OSError, ValueError):
        return "every study" if name == "all" else name
    if not isinstance(identity, dict) or not isinstance(identity.get("selection"), dict):
        return name
    sel = identity["selection"]
    title = str(sel["study"]) if list(sel) == ["study"] else ", ".join(f"{k} {v}" for k, v in sel.items())
    title = title or "every study"
    params = identity.get("parameters") if isinstance(identity.get("parameters"), dict) else {}
    db = f", from the database {params['db_path']}" if params.get("db_path") else ""
    return title + (f" ({name}{db})" if params else "")


_STATUS_CLASS = {"reproduced": "ok", "cannot": "na", "differs": "bad"}
_BASIS = {"raw": "recomputed from raw logs", "arithmetic": "arithmetic on stated figures", "none": "not checkable"}


def _summaries(root: Path, through: dict[str, Path] | None = None) -> dict[str, dict]:
    out = {}
    for name, f in _summary_files(root, through):
        try:
            out[f"{name}/{f.stem}"] = json.loads(pinned.read_text(f))
        except (OSError, ValueError) as e:
            out[f"{name}/{f.stem}"] = dict(
                notebook=f.stem, title=f.stem, status="failed", error=f"summary unreadable: {e}"
            )
    return out


def _summary_files(root: Path, through: dict[str, Path] | None) -> list[tuple[str, Path]]:
    """Every report folder's summaries, each with its folder's name; given ``through``, those of its folders only, each
    read through its handle; a folder moved away while they are listed is left out (reliability-32 folders, Low:
    `report` ended 2 with `.../summaries: No such file or directory`, the old index kept)."""
    files = []
    if through is None:
        through = {f.parent.name: f.parent for f in root.glob("[!_]*/summaries")}
    for name, folder in sorted(through.items()):
        with contextlib.suppress(OSError):
            files += [(name, f) for f in sorted((folder / "summaries").glob("*.json"))]
    return files


def _claim_counts(claims: list[dict]) -> str:
    e = html.escape
    by_basis: dict[str, dict[str, int]] = {}
    for c in claims:
        basis = str(c.get("basis") or c.get("check") or "")
        status = str(c.get("status", "")).split(" ")[0]
        by_basis.setdefault(basis, {}).setdefault(status, 0)
        by_basis[basis][status] += 1
    parts = []
    for basis in ("raw", "arithmetic", "none", *sorted(set(by_basis) - {"raw", "arithmetic", "none"})):
        if basis not in by_basis:
            continue
        counts = ", ".join(
            f"<span class='{_STATUS_CLASS.get(k, 'na')}'>{n} {e(k)}</span>" for k, n in sorted(by_basis[basis].items())
        )
        parts.append(f"{e(_BASIS.get(basis, basis or 'unspecified'))}: {counts}")
    return "; ".join(parts)


def _thumbnail(root: Path, key: str, figures: list[str], through: dict[str, Path] | None = None) -> str:
    """The report's first chart as a small picture, embedded (data: URI), linking to the report."""

    if not figures:
        return ""
    name = key.split("/", 1)[0]
    spec = (through or {}).get(name, root / name) / "figures" / f"{figures[0]}.vl.json"
    if not spec.is_file():
        return ""
    try:
        png = _thumbnail_png(root, pinned.read_bytes(spec))
    except Exception:  # noqa: BLE001 - a thumbnail is optional
        return ""
    data = base64.b64encode(png).decode("ascii")
    return (
        f"<a href='{html.escape(key)}.html'><img class='thumb' alt='{html.escape(figures[0])}' "
        f"src='data:image/png;base64,{data}'></a>"
    )


THUMBNAILS = "_thumbnails"  # reports/_thumbnails/<key>.png: the index's pictures, drawn again only when a chart changes
THUMBNAIL_SCALE = 0.5  # a small picture


def _thumbnail_png(root: Path, spec: bytes) -> bytes:
    """The PNG of a Vega-Lite ``spec`` (its file's bytes) at THUMBNAIL_SCALE, drawn once: kept in reports/_thumbnails/
    under the sha256 of the spec, the scale and vl-convert's version (which holds Vega and its renderer), and read
    from there while all three stay the same. Drawing one takes 0.1-0.8 s of CPU; every build, run and report drew
    every report's again (issue 28). Pictures no index uses any more are removed (``prune_thumbnails``)."""
    import vl_convert as vlc  # noqa: PLC0415  (heavy, optional at start-up: only when a chart is drawn)

    key = hashlib.sha256(spec + f"\0scale={THUMBNAIL_SCALE}\0vl-convert={vlc.__version__}".encode()).hexdigest()
    kept = root / THUMBNAILS / f"{key}.png"
    try:
        png = pinned.read_bytes(kept)
    except OSError:
        png = b""
    if png:
        with contextlib.suppress(OSError):
            os.utime(kept)  # used by this index: kept by prune_thumbnails
        return png
    png = vlc.vegalite_to_png(short_texts(json.loads(spec)), scale=THUMBNAIL_SCALE)
    tmp = kept.with_name(f".{kept.name}.{os.getpid()}.tmp")
    try:
        kept.parent.mkdir(exist_ok=True)
        tmp.write_bytes(png)
        tmp.replace(kept)
    except OSError:  # not kept (a read-only or full disk): drawn again next time
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return png


def prune_thumbnails(root: Path, since: float) -> None:
    """Remove the kept thumbnails that the index written after ``since`` (a time.time()) did not use."""
    for f in (root / THUMBNAILS).glob("*.png"):
        try:
            if f.stat().st_mtime < since:
                f.unlink()
        except OSError:
            pass


def index_html(
    built: str,
    reports_dir: Path | None = None,
    pages: dict[str, dict] | None = None,
    skip: set[str] = frozenset(),
    through: dict[str, Path] | None = None,
) -> str:
    """The index page: per report folder (a study or another selection), one card per notebook run with its
    status, verdict, headline and claim counts by basis. Every text from the summaries is escaped. ``skip``:
    report folders (names) left out. ``through``: folders (names) read through a handle of each, not by the name."""
    root = Path(reports_dir or paths.REPORTS)
    summaries = _summaries(root, through)
    through = through or {}
    pages = pages or {}
    e = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        "<title>storagelab reports</title><style>",
        "body{font:14px/1.45 DejaVu Sans,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}",
        "h1{font-size:1.6em} h2{font-size:1.35em;margin:1.4em 0 .2em;border-bottom:2px solid #888}",
        "h3{font-size:1.1em;margin-bottom:.2em} .answers{color:#444;margin:.2em 0 .6em}",
        "table{border-collapse:collapse;margin:.4em 0 1.2em} td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}",
        "th{background:#f4f4f4} .ok{color:#17692c} .bad{color:#a31515} .na{color:#777} .card{border-top:1px solid #ccc;padding-top:.6em}",
        ".params{color:#8a5a00} .failed{color:#a31515;font-weight:bold} .verdict{font-weight:bold}",
        ".missing{color:#8a5a00} .badge{background:#fff3cd;border:1px solid #e0c36a;border-radius:3px;padding:1px 6px;"
        "margin-right:4px;font-size:.9em} .thumb{float:right;width:260px;margin:0 0 .5em 1em;border:1px solid #ddd}"
        ".card{overflow:auto}",
        "</style></head><body>",
        "<h1>storagelab reports</h1>",
        f"<p>Built {e(built)} from the raw logs in <code>data/raw/</code> (a heading that names another database: "
        "reports run on it with <code>-p db_path</code>), grouped by study (the selection each report was run on). Every number can be traced to a raw file (sha256) and its lines. "
        "Claims: <span class='ok'>reproduced</span>, <span class='bad'>differs</span>, "
        "<span class='na'>cannot be reproduced</span>, counted by basis: recomputed from raw logs, arithmetic on "
        "the study's stated figures, or not checkable.</p>",
    ]
    keys = sorted(k for k in set(summaries) | set(pages) if k.split("/", 1)[0] not in skip)
    folders: dict[str, list[str]] = {}
    for k in keys:
        folders.setdefault(k.split("/", 1)[0], []).append(k)
    for folder, ks in sorted(folders.items(), key=lambda t: (t[0] == "all", t[0])):
        parts.append(f"<h2 id='{e(folder)}'>{e(_folder_title(through.get(folder, root / folder), folder))}</h2>")
        for k in ks:
            s = summaries.get(k, {})
            page = pages.get(k, {})
            nb = k.split("/", 1)[1]
            title = str(s.get("title") or page.get("title") or nb)
            failed = s.get("status") == "failed" or page.get("render_error")
            unfinished = None if failed else page.get("unfinished")
            parts.append(
                f"<div class='card'><h3><a href='{e(k)}.html'>{e(title)}</a>"
                + (" <span class='failed'>FAILED</span>" if failed else "")
                + (" <span class='failed'>UNFINISHED</span>" if unfinished else "")
                + "</h3>"
            )
            if unfinished:
                parts.append(f"<p class='failed'>{e(unfinished)}</p></div>")
                continue
            if failed:
                parts.append(f"<p class='failed'>{e(str(s.get('error') or page.get('render_error')))}</p></div>")
                continue
            if not s:
                parts.append("<p class='na'>No summary: the notebook did not finish writing one.</p></div>")
                continue
            if s.get("answers"):
                parts.append(f"<p class='answers'>{e(str(s['answers']))}</p>")
            if s.get("selection"):
                parts.append(f"<p class='params'>Selection: {e(str(s['selection']))}</p>")
            set_params = [p for p in page.get("params", []) if p["set"]]
            if set_params:
                parts.append(
                    "<p class='params'>Run with "
                    + ", ".join(f"<code>{e(p['name'])} = {e(p['value'])}</code>" for p in set_params)
                    + " (not the defaults)</p>"
                )
            thumb = _thumbnail(root, k, page.get("figures") or [], through)
            if thumb:
                parts.append(thumb)
            if s.get("verdict"):
                parts.append(f"<p class='verdict'>{e(str(s['verdict']))}</p>")
            if s.get("caveats"):
                parts.append("<p>" + " ".join(f"<span class='badge'>{e(str(c))}</span>" for c in s["caveats"]) + "</p>")
            for m in s.get("missing") or []:
                parts.append(f"<p class='missing'>Missing: {e(str(m))}</p>")
            if s.get("headline"):
                parts.append("<table><tr><th>headline</th><th>value</th></tr>")
                parts += [f"<tr><td>{e(str(hk))}</td><td>{e(str(hv))}</td></tr>" for hk, hv in s["headline"].items()]
                parts.append("</table>")
            if s.get("claims"):
                parts.append(f"<p>Claims: {_claim_counts(s['claims'])}</p>")
            parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts)
