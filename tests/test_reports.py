"""The HTML reports: self-contained (nothing loaded from outside the file), every chart exported as
SVG + PNG + Vega-Lite JSON, pages that work in headless Chromium with the network off, and text from
logs shown as text, never run (end to end, from a real fio output to the browser).

The reports under reports/ are those of the last build (`./run test` builds beside the tests; `built` waits for
it); the session fixture builds them when reports/index.html is missing. The browser tests need Debian's chromium
and are skipped, not failed, without it. Screenshots go to tests/_artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from headless import CHROMIUM, CHROMIUM_ARGS
from session_once import once_per_session

from storagelab import paths, report
from storagelab.charts import figure_dir

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHOTS = ROOT / "tests" / "_artifacts" / "screenshots"
XSS_JOB = "<script>alert(1)</script>"
XSS_LABEL = "<img src=x onerror=alert(2)>"
XSS_HOST = '"><script>alert(3)</script>'
XSS_STACK = "<b>zfs</b>"


# ----------------------------------------------------------------------------- reading HTML

# tag -> attributes whose URL the browser fetches on its own (links and anchors are not fetched)
_FETCHING = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "image": ("href", "xlink:href"),
    "use": ("href", "xlink:href"),
    "input": ("src",),
    "feimage": ("href", "xlink:href"),
}
_CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""", re.I)
_URL_IN_JS = re.compile(
    r"""(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[/"'\s]|\b(?:import|require)\s*\(|mathjax|require\.js""", re.I
)


class Page(HTMLParser):
    """Every resource a page would fetch, its scripts, figures and a few things the tests look at."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.resources: list[tuple[str, str]] = []  # (where, url)
        self.scripts: list[str] = []  # inline script bodies (code)
        self.data_blocks: list[str] = []  # <script type="application/json">: data, never run (the charts' specs)
        self.script_srcs: list[str] = []
        self.figures: list[str | None] = []  # data-figure of each .sl-figure (None when missing)
        self.attrs_seen: set[str] = set()
        self.tags_seen: dict[str, int] = {}
        self.headers: list[list[str]] = []  # header cells of each table, in order
        self.text_parts: list[str] = []  # the text a reader sees (outside scripts and styles)
        self._in: str | None = None
        self._buf: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags_seen[tag] = self.tags_seen.get(tag, 0) + 1
        self.attrs_seen.update(k.lower() for k in a)
        for name in _FETCHING.get(tag, ()):
            if a.get(name):
                urls = [u.strip().split(" ")[0] for u in a[name].split(",")] if name == "srcset" else [a[name]]
                self.resources += [(f"<{tag} {name}>", u) for u in urls]
        if a.get("style"):
            self.resources += [(f"<{tag} style>", m.group(1) or m.group(2)) for m in _CSS_URL.finditer(a["style"])]
        if tag == "script" and a.get("src"):
            self.script_srcs.append(a["src"])
        if tag == "div" and "sl-figure" in (a.get("class") or "").split():
            self.figures.append(a.get("data-figure"))
        if tag == "table":
            self.headers.append([])
        if tag in ("script", "style", "th"):
            self._in, self._buf = tag, []
            self._data = tag == "script" and (a.get("type") or "").lower() == "application/json"

    def handle_data(self, data):
        if self._in:
            self._buf.append(data)
        if self._in not in ("script", "style"):
            self.text_parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def handle_endtag(self, tag):
        if tag != self._in:
            return
        body = "".join(self._buf)
        if tag == "script":
            (self.data_blocks if self._data else self.scripts).append(body)
        elif tag == "style":
            self.resources += [("<style>", m.group(1) or m.group(2)) for m in _CSS_URL.finditer(body)]
        elif tag == "th" and self.headers:
            self.headers[-1].append(body.strip())
        self._in = None


def offline_problems(text: str) -> list[str]:
    """What in a page would need the network or a file beside it: any fetched URL that is not a
    data: URI or a #fragment, and scripts that load code (URLs, import(), require, MathJax)."""
    page = Page(text)
    out = [
        f"{where} loads {url!r}"
        for where, url in page.resources
        if not (url.startswith("data:") or url.startswith("#"))
    ]
    # Vega/Vega-Lite/vega-embed, inlined as vl-convert bundles them, hold URLs in strings (schemas, docs) and a
    # loader: the browser tests show that they fetch nothing; every other script is checked here
    code = [s for s in page.scripts if s != report.vega_bundle()]
    out += [f"inline script loads code: {m.group(0)!r}" for s in code for m in _URL_IN_JS.finditer(s)]
    return out


def test_offline_check_finds_every_kind_of_external_reference():
    # the checker itself: each of these must be caught, and the allowed forms must pass
    bad = [
        '<script src="https://cdn.example.org/require.js"></script>',
        "<script src='//cdnjs.cloudflare.com/x.js'></script>",
        '<link rel="stylesheet" href="http://fonts.googleapis.com/css?family=Lato">',
        '<link rel="stylesheet" href="style.css">',
        "<style>@import url(https://example.org/a.css);</style>",
        "<style>@import 'http://example.org/b.css';</style>",
        "<style>@font-face{font-family:X;src:url(https://example.org/x.woff2) format('woff2')}</style>",
        '<div style="background:url(http://example.org/bg.png)"></div>',
        '<img src="http://example.org/p.png">',
        '<img srcset="data:image/png;base64,AA 1x, https://example.org/p2.png 2x">',
        '<svg><image href="https://example.org/i.png"/></svg>',
        '<iframe src="https://example.org"></iframe>',
        '<script>var s=document.createElement("script");s.src="https://cdn.jsdelivr.net/npm/vega@5";</script>',
        '<script>import("https://esm.sh/mermaid")</script>',
        "<script>window.MathJax = {};</script>",
    ]
    for snippet in bad:
        assert offline_problems(snippet), snippet
    good = (
        '<a href="https://openzfs.github.io/">docs</a><a href="figures/x/y.svg">SVG</a>'
        '<img src="data:image/png;base64,AAAA"><style>.a{background:url(data:image/svg+xml;base64,AA)}'
        '.b{clip-path:url(#clip1)}</style><svg><use href="#g1"/></svg>'
        '<script>document.body.classList.add("sl-hide-code");</script>'
    )
    assert offline_problems(good) == []


# ----------------------------------------------------------------------------- the built reports


@pytest.fixture(scope="session")
def built(project_built):
    """reports/: the build's (`./run test` builds beside the tests: `project_built` waits for it), reuse the last
    build's, or ingest data/raw/, run every notebook and render."""
    if not (paths.REPORTS / "index.html").exists():
        from storagelab.store import ingest

        ingest(progress=False)
        report.run_notebooks(plans=report.build_plan())
        report.render_reports()
    pages = sorted(paths.REPORTS.glob("*/*.html"))
    assert pages, "no report in reports/ (run ./run build)"
    return pages


@pytest.mark.e2e
def test_every_notebook_has_a_report(built):
    assert {p.stem for p in built} == {nb.stem for nb in report.list_notebooks()}
    # grouped by study: each source study's page for each notebook its claims name
    assert {f"{p.parent.name}/{p.stem}" for p in built} >= {
        "homelab-mergerfs/05_stacks",
        "freebsd-bonnie-dedup/03_sector63",
        "freebsd-bonnie-dedup/04_dedup_ddt",
        "thumper-x4500/01_vdev_scaling",
        "thumper-x4500/06_zfs_send_transports",
        "ars-zfs-vs-raid/02_recordsize",
        "all/07_explore",
    }


@pytest.mark.e2e
def test_reports_need_nothing_outside_the_file(built):
    problems = []
    for page in [*built, paths.REPORTS / "index.html"]:
        problems += [f"{page.name}: {p}" for p in offline_problems(page.read_text(encoding="utf-8"))]
    assert problems == []


@pytest.mark.e2e
def test_only_the_code_toggle_and_the_chart_scripts_run(built):
    for page in built:
        p = Page(page.read_text(encoding="utf-8"))
        assert p.script_srcs == [], page.name
        assert "sl-hide-code" in p.scripts[0], page.name
        if p.figures:  # charts: the Vega bundle, once, and the script that draws each figure's spec with it
            assert len(p.scripts) == 3 and p.scripts[1] == report.vega_bundle(), page.name
            assert p.scripts[2].lstrip().startswith("/* interactive charts"), page.name
            assert len(p.data_blocks) == len(p.figures), page.name  # one spec per figure, as data
            assert all("<" not in d for d in p.data_blocks), page.name  # no '</script' can end a spec early
        else:
            assert len(p.scripts) == 1 and p.data_blocks == [], page.name
        assert not [a for a in p.attrs_seen if a.startswith("on")], page.name


def _inline_figures(text: str) -> dict[str, str]:
    """figure id -> the SVG inlined for it, ids un-prefixed (as saved)."""
    out = {}
    figure = r'<div class="[^"]*\bsl-figure\b[^"]*"[^>]*data-figure="([^"]+)"[^>]*>\s*(<svg.*?</svg>)'
    for m in re.finditer(figure, text, re.S):
        out[m.group(1)] = re.sub(r'(id="|#)sl\d+-', r"\1", m.group(2))
    return out


def _svg_content(svg: str) -> list:
    """An SVG as (element, attributes, text) in document order, names lower-cased: nbconvert re-serializes
    the page with BeautifulSoup, which lower-cases attribute names (the HTML parser restores viewBox etc.)."""
    return [
        (
            el.tag.rsplit("}", 1)[-1].lower(),
            sorted((k.rsplit("}", 1)[-1].lower(), v) for k, v in el.attrib.items()),
            (el.text or "").strip(),
        )
        for el in ET.fromstring(svg).iter()
    ]


@pytest.mark.e2e
def test_every_chart_is_exported_as_svg_png_and_vega_lite(built):
    for page in built:
        text = page.read_text(encoding="utf-8")
        shown = Page(text).figures
        assert None not in shown, f"{page.name}: a chart shown without charts.show (no exported files)"
        figs = figure_dir(page.stem, page.parent / "figures")
        exported = {f"{figs.name}/{f.name[:-4]}" for f in figs.glob("*.svg")}
        assert sorted(shown) == sorted(exported), page.name  # each exported once, each shown once
        inline = _inline_figures(text)
        for fig in shown:
            base = page.parent / "figures" / fig
            svg = base.with_suffix(".svg").read_text(encoding="utf-8")
            assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
            assert _svg_content(inline[fig]) == _svg_content(svg), f"{fig}: the page shows another SVG than saved"
            png = base.with_suffix(".png").read_bytes()
            assert png[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
            assert width >= 200 and height >= 100, (fig, width, height)
            spec = json.loads(base.with_suffix(".vl.json").read_text(encoding="utf-8"))
            assert "vega-lite" in spec["$schema"] and (
                "mark" in spec
                or "layer" in spec
                or "concat" in spec
                or "hconcat" in spec
                or "vconcat" in spec
                or "facet" in spec
            )
            for suffix in (".svg", ".png", ".vl.json"):  # the page links the files
                assert f'href="figures/{fig}{suffix}"' in text


def _drawn(el) -> bool:
    """A mark element with a visible extent (bars are paths `M x,y h W v H h -W Z`: zero W or H draws nothing)."""
    tag = el.tag.rsplit("}", 1)[-1]
    if tag != "path":
        return tag in ("line", "rect", "circle")
    d = el.get("d", "")
    bar = re.fullmatch(r"M\s*[-\d.e]+\s*,\s*[-\d.e]+\s*h\s*([-\d.e]+)\s*v\s*([-\d.e]+)\s*h\s*[-\d.e]+\s*Z", d)
    if bar:
        return float(bar.group(1)) != 0 and float(bar.group(2)) != 0
    return bool(d) and "NaN" not in d


@pytest.mark.e2e
def test_every_chart_draws_its_data(built):
    """A chart whose marks are all empty (e.g. bars on a log axis with no base) renders as bare axes."""
    for svg_file in sorted(paths.REPORTS.glob("*/figures/*/*.svg")):
        root = ET.fromstring(svg_file.read_text(encoding="utf-8"))
        data_marks = [
            g
            for g in root.iter("{http://www.w3.org/2000/svg}g")
            if "role-mark" in g.get("class", "")
            and not any(
                k in g.get("class", "") for k in ("mark-rule", "mark-text", "role-axis", "role-legend", "role-title")
            )
        ]
        assert data_marks, f"{svg_file.name}: no data marks"
        for g in data_marks:
            assert any(_drawn(el) for el in g), f"{svg_file.name}: {g.get('class')} draws nothing"


def test_degenerate_bars_are_caught():
    ok = ET.fromstring('<path xmlns="http://www.w3.org/2000/svg" d="M0,21h57.3v18h-57.3Z"/>')
    empty = ET.fromstring('<path xmlns="http://www.w3.org/2000/svg" d="M0,21h0v18h0Z"/>')
    assert _drawn(ok) and not _drawn(empty)


@pytest.mark.e2e
def test_reports_show_parameters_run_times_and_provenance(built):
    for page in built:
        text = page.read_text(encoding="utf-8")
        p = Page(text)
        assert 'id="sl-run"' in text and "HTML built" in text and "executed" in text, page.name
        defaults = report.notebook_parameters(paths.NOTEBOOKS / f"{page.stem}.ipynb")
        params = next((h for h in p.headers if h[:2] == ["parameter", "value used"]), None)
        assert params is not None, f"{page.name}: no parameter table"
        for name in defaults:
            assert f"<td><code>{name}</code></td>" in text, (page.name, name)
        assert any("sha256_16" in h and "path" in h for h in p.headers[-3:]), f"{page.name}: no provenance at the end"


# ----------------------------------------------------------------------------- report.py pieces


def test_inline_svg_prefixes_ids_and_refuses_active_content():
    svg = (
        '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
        '<defs><clipPath id="clip1"><rect width="5" height="5"/></clipPath></defs>'
        '<g clip-path="url(#clip1)"><text>&lt;b&gt;</text></g></svg>'
    )
    out = report._inline_svg(svg, "sl3-")
    assert out.startswith("<svg") and 'id="sl3-clip1"' in out and "url(#sl3-clip1)" in out and "&lt;b&gt;" in out
    ns = 'xmlns="http://www.w3.org/2000/svg"'
    for active in (
        f"<svg {ns}><script>alert(1)</script></svg>",
        f'<svg {ns}><rect onclick="alert(1)"/></svg>',
        f"<svg {ns}><foreignObject><div>x</div></foreignObject></svg>",
        f'<svg {ns} xmlns:xlink="http://www.w3.org/1999/xlink"><image xlink:href="http://example.org/a.png"/></svg>',
        f'<svg {ns}><a href="javascript:alert(1)"><text>x</text></a></svg>',
        f'<svg {ns}><rect style="fill:url(https://example.org/p)"/></svg>',
        "<svg><unclosed>",
        "<html/>",
    ):
        assert report._inline_svg(active, "p-") is None, active


def test_a_truncated_executed_notebook_is_a_failed_page_and_marked_on_the_index(tmp_path):
    """Issue 13, case 64: an executed notebook cut short (a run killed while saving) was a NotJSONError
    traceback with index.html and the page left stale; now its page says it failed and the index marks it."""
    folder = tmp_path / "mylab"
    (folder / "executed").mkdir(parents=True)
    good = '{\n "cells": [\n  {\n   "cell_type": "markdown",\n   "metadata": {},\n   "source": ["# x"]'
    (folder / "executed" / "08_fio.ipynb").write_text(good)  # cut mid-file
    (folder / "08_fio.html").write_text("<html>an older page</html>")
    failures: list[str] = []
    pages = report.render_reports(tmp_path, failures=failures)
    assert pages == [folder / "08_fio.html"]
    assert len(failures) == 1 and failures[0].startswith("mylab/08_fio: NotJSONError")  # `report` exits 1
    page = (folder / "08_fio.html").read_text()
    assert "an older page" not in page and "<title>08_fio (failed)" in page and "NotJSONError" in page
    index = Page((tmp_path / "index.html").read_text())
    assert "08_fio FAILED NotJSONError" in " ".join(index.text.split())


def test_index_escapes_summary_text(tmp_path):
    (tmp_path / "f" / "summaries").mkdir(parents=True)
    (tmp_path / "f" / "summaries" / "x.json").write_text(
        json.dumps(
            {
                "notebook": "x'><script>alert(5)</script>",
                "title": XSS_JOB,
                "answers": XSS_LABEL,
                "verdict": XSS_LABEL,
                "selection": XSS_HOST,
                "missing": [XSS_JOB],
                "headline": {XSS_HOST: XSS_STACK},
                "claims": [{"status": "<i>reproduced</i>", "basis": "<i>raw</i>"}],
            }
        )
    )
    page = report.index_html("<now>", tmp_path, pages={"f/y": {"title": XSS_LABEL, "params": []}})
    p = Page(page)
    assert p.scripts == [] and "img" not in p.tags_seen and "b" not in p.tags_seen and "i" not in p.tags_seen
    assert not [a for a in p.attrs_seen if a.startswith("on")]
    for s in (XSS_JOB, XSS_LABEL, XSS_HOST, XSS_STACK, "<now>"):
        assert s not in page and s in p.text  # escaped in the source, shown as text
    assert "<i>reproduced</i>" in p.text


# ----------------------------------------------------------------------------- text from logs, end to end


@pytest.fixture(scope="module")
def xss_build(request, tmp_path_factory):
    """A project of its own (STORAGELAB_ROOT) holding one real fio output whose job is named
    <script>alert(1)</script>, with hostile labels; ingested, 07_explore run on it (db_path), rendered. Built once
    per session: its two tests ran on both workers, each built it (11-12 s)."""
    return once_per_session(request.config, tmp_path_factory, "xss", _xss_project)


def _xss_project(root: Path) -> Path:
    raw = root / "data" / "raw" / "hostile"
    raw.mkdir(parents=True)
    shutil.copy(FIXTURES / "fio" / "3.33" / "xss_jobname.txt", raw / "fio-xss.txt")
    import csv

    with open(root / "data" / "raw" / "manifest.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["path", "study", "label", "host", "stack"])
        w.writerow(["hostile/fio-xss.txt", "hostile", XSS_LABEL, XSS_HOST, XSS_STACK])
    (root / "notebooks").mkdir()
    shutil.copy(paths.NOTEBOOKS / "07_explore.ipynb", root / "notebooks")
    env = dict(os.environ, STORAGELAB_ROOT=str(root), PYTHONPATH=str(ROOT / "lib"))
    db = root / "data" / "parsed" / "storagelab.duckdb"

    def cli(*args):
        r = subprocess.run(
            [sys.executable, "-m", "storagelab", *args], env=env, cwd=root, capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, f"storagelab {' '.join(args)}:\n{r.stdout}\n{r.stderr}"
        return r

    assert "ingested 1 " in cli("ingest", "--quiet", "--workers", "1", "--no-parquet").stdout
    cli("run", "07_explore", "-p", "db_path", str(db), "--no-report")  # `report` renders the pages, once
    cli("report")
    return root / "reports"


@pytest.mark.e2e
def test_log_text_is_escaped_in_the_html(xss_build):
    page = next(xss_build.glob("all--*/07_explore.html")).read_text(encoding="utf-8")
    index = (xss_build / "index.html").read_text(encoding="utf-8")
    for text, what in ((page, "report"), (index, "index")):
        for hostile in (XSS_JOB, XSS_LABEL, XSS_HOST, XSS_STACK):
            assert hostile not in text, f"{what}: {hostile!r} pasted unescaped"
        p = Page(text)
        # no <img> but the index's embedded thumbnails (data: URIs)
        assert all(u.startswith("data:image/png;base64,") for w, u in p.resources if w == "<img src>"), what
        assert "b" not in p.tags_seen, what
        assert not [a for a in p.attrs_seen if a.startswith("on")], what
        assert all("alert" not in s for s in p.scripts), what
    # its one run lasted 3 ms (a design flag): the headline names it as the fastest, flagged (h6 trial S13)
    assert f"fastest write run with no flagnone: all 1 write run(s) are flagged; the fastest, {XSS_LABEL}: " in (
        Page(index).text
    )  # the label, as text
    # shown as text: the job name in the SQL table (polars quotes strings), the labels in the files table
    text = Page(page).text
    assert f'"{XSS_JOB}"' in text
    for s in (XSS_LABEL, XSS_HOST, XSS_STACK):
        assert f'"{s}"' in text, s
    # and in the chart: the saved SVG and the one inlined in the page hold the label as escaped text
    svg = next(xss_build.glob("all--*/figures/07-explore/run-bandwidth-write.svg")).read_text(encoding="utf-8")
    assert XSS_LABEL not in svg and XSS_LABEL in "".join(ET.fromstring(svg).itertext())
    assert _svg_content(_inline_figures(page)["07-explore/run-bandwidth-write"]) == _svg_content(svg)
    # the run's parameter is shown, escaped like the rest
    assert "<td><code>db_path</code></td>" in page and "(set for this run)" in page


# ----------------------------------------------------------------------------- headless Chromium


@pytest.fixture(scope="session")
def browser(tmp_path_factory, request):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    pw = request.getfixturevalue("playwright")  # the process's one Playwright (conftest)
    ctx = pw.chromium.launch_persistent_context(
        str(tmp_path_factory.mktemp("chromium-profile")),
        executable_path=CHROMIUM,
        args=CHROMIUM_ARGS,
        headless=True,
        offline=True,
        viewport={"width": 1280, "height": 900},
        java_script_enabled=True,
    )
    yield ctx
    ctx.close()


class Visit:
    """Open one file:// page with the network cut, recording what a reader would see go wrong."""

    def __init__(self, ctx, path: Path):
        self.requests, self.blocked, self.failed, self.errors, self.dialogs = [], [], [], [], []
        page = ctx.new_page()

        def route(r):
            if r.request.url.startswith(("file:", "data:")):
                r.continue_()
            else:
                self.blocked.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url}: {r.failure}"))
        page.on(
            "console", lambda m: m.type in ("error", "assert") and self.errors.append(f"console {m.type}: {m.text}")
        )
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.on("dialog", lambda d: (self.dialogs.append(f"{d.type}: {d.message}"), d.dismiss()))
        page.goto(path.resolve().as_uri(), wait_until="load")
        self.page = page

    def problems(self) -> list[str]:
        external = [u for u in self.requests if not u.startswith(("file:", "data:"))]
        return (
            [f"external request {u}" for u in external + self.blocked]
            + [f"failed {f}" for f in self.failed]
            + self.errors
            + [f"dialog {d}" for d in self.dialogs]
        )

    def screenshot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


_CHARTS_JS = """els => els.map(e => {
  const live = e.classList.contains('sl-interactive') ? e.querySelector('.sl-vega svg') : null;
  const s = live || e.querySelector(':scope > svg'), img = live ? null : e.querySelector(':scope > img');
  if (s) { const r = s.getBoundingClientRect();
           return {figure: e.dataset.figure, w: r.width, h: r.height, interactive: !!live,
                   marks: s.querySelectorAll('path,rect,line,symbol,circle').length,
                   texts: Array.from(s.querySelectorAll('text')).filter(t => t.textContent.trim()).length}; }
  if (img) return {figure: e.dataset.figure, w: img.naturalWidth, h: img.naturalHeight,
                   marks: img.complete ? 99 : 0, texts: 99};
  return {figure: e.dataset.figure, w: 0, h: 0, marks: 0, texts: 0};
})"""

_ALL_INTERACTIVE_JS = """() => Array.from(document.querySelectorAll('.sl-figure'))
  .every(e => e.classList.contains('sl-interactive'))"""

_INPUTS_VISIBLE_JS = """() => Array.from(document.querySelectorAll('.jp-CodeCell .jp-Cell-inputWrapper'))
  .map(e => e.getClientRects().length > 0)"""


@pytest.mark.browser
def test_index_in_chromium(built, browser):
    v = Visit(browser, paths.REPORTS / "index.html")
    v.screenshot("index")
    assert v.problems() == []
    assert v.page.title() == "storagelab reports"
    links = set(v.page.eval_on_selector_all(".card a", "els => els.map(a => a.getAttribute('href'))"))
    assert links == {f"{p.parent.name}/{p.name}" for p in built}  # every report reachable, no dead link
    v.page.close()


@pytest.mark.browser
def test_reports_in_chromium(built, browser):
    failures = []
    for path in built:
        v = Visit(browser, path)
        v.screenshot(f"{path.parent.name}-{path.stem}")
        page, name = v.page, path.name
        failures += [f"{name}: {p}" for p in v.problems()]
        # every exported chart is drawn, interactive (Vega, from its spec), with marks and text, at a readable size
        page.wait_for_function(_ALL_INTERACTIVE_JS, timeout=60_000)
        charts = page.eval_on_selector_all(".sl-figure", _CHARTS_JS)
        failures += [f"{name}: chart {c['figure']} is not interactive" for c in charts if not c.get("interactive")]
        n_exported = len(list(figure_dir(path.stem, path.parent / "figures").glob("*.svg")))
        if len(charts) != n_exported:
            failures.append(f"{name}: {len(charts)} charts drawn, {n_exported} exported")
        for c in charts:
            if c["w"] < 200 or c["h"] < 100 or c["marks"] < 5 or c["texts"] < 2:
                failures.append(f"{name}: chart {c['figure']} not drawn properly: {c}")
        # no page scrolls sideways: a wide table (09's) or chart scrolls in its own box
        wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        if wide > 1:
            failures.append(f"{name}: the page is {wide} px wider than the window")
        # code hidden at load, shown by the button, hidden again
        shown = page.evaluate(_INPUTS_VISIBLE_JS)
        if not shown or any(shown):
            failures.append(f"{name}: code not hidden at load ({sum(shown)} of {len(shown)} visible)")
        toggle = page.locator("#sl-toggle")
        if toggle.text_content() != "Show code":
            failures.append(f"{name}: toggle reads {toggle.text_content()!r}")
        toggle.click()
        shown = page.evaluate(_INPUTS_VISIBLE_JS)
        if not shown or not all(shown) or toggle.text_content() != "Hide code":
            failures.append(f"{name}: 'Show code' showed {sum(shown)} of {len(shown)} code cells")
        toggle.click()
        if any(page.evaluate(_INPUTS_VISIBLE_JS)):
            failures.append(f"{name}: 'Hide code' left code visible")
        # the header with the parameters is visible, the title is the notebook's
        if not page.locator("#sl-run").is_visible():
            failures.append(f"{name}: run header not visible")
        h1 = page.locator("h1").first.text_content().rstrip("¶").strip()
        if page.title() != h1:
            failures.append(f"{name}: title {page.title()!r} is not the first heading {h1!r}")
        page.close()
    assert failures == []


@pytest.mark.browser
def test_log_text_shows_as_text_in_chromium(xss_build, browser):
    for name in ("07_explore", "index"):
        v = Visit(
            browser, next(xss_build.glob("all--*/07_explore.html")) if name != "index" else xss_build / "index.html"
        )
        v.screenshot(f"escaping-{name}")
        assert v.problems() == [], name  # no dialog fired, no request for the <img src=x>
        page = v.page
        # the toggle, the Vega bundle and the chart script on the report (the chart's spec is data); none on the index
        scripts = "() => document.querySelectorAll('script:not([type=\"application/json\"])').length"
        assert page.evaluate(scripts) == (3 if name != "index" else 0)
        assert page.evaluate("() => document.querySelectorAll('img[src=\"x\"], [onerror]').length") == 0
        assert page.get_by_text(XSS_LABEL).first.is_visible(), name
        if name != "index":
            for s in (XSS_JOB, XSS_HOST, XSS_STACK):
                assert page.get_by_text(s).first.is_visible(), s
            assert page.evaluate("() => document.querySelectorAll('.jp-OutputArea b').length") == 0
        page.close()


@pytest.mark.e2e
def test_index_answers_at_a_glance(built):
    """Issue 12: per study, a verdict per report that states no cause the data cannot carry, a thumbnail of the
    report's first chart, claims counted by basis, caveat badges on inflated or confounded headlines, and an
    explore headline that does not promote a cache-inflated run."""
    index = (paths.REPORTS / "index.html").read_text(encoding="utf-8")
    studies = dict(re.findall(r"<h2 id='([^']+)'>.*?</h2>(.*?)(?=<h2 id=|\Z)", index, flags=re.S))
    for study in ("ars-zfs-vs-raid", "freebsd-bonnie-dedup", "homelab-mergerfs", "thumper-x4500"):
        part = studies[study]
        assert "<p class='verdict'>" in part, study
        assert "class='thumb'" in part and "src='data:image/png;base64," in part, study
    text = {s: Page(part).text for s, part in studies.items()}
    free, home, thumper = text["freebsd-bonnie-dedup"], text["homelab-mergerfs"], text["thumper-x4500"]
    assert (
        "Block writes ran 7.59x faster after than before; the two runs differ in more than the partition offset, so "
        "the data do not show what caused it."
    ) in free
    assert "block write after/before7.59x (one 'after' run: noise unknown)" in free.replace(" | ", "")
    assert "raid1 fits (6.55 GiB to 6.95 GiB; not above 367 B/entry)" in free
    for badge in (
        "pool raid1 full, fragmented or deduplicating: confounders",
        "a run faster than its disks: cache artefact",
    ):
        assert badge in free
    assert "recomputed from raw logs: 15 reproduced" in free  # 03's claims, all from the bonnie++ logs
    assert "arithmetic on stated figures: 6 reproduced" in text["ars-zfs-vs-raid"]  # Ars 01: no raw data
    assert "Stated by the study, not measured here" in text["ars-zfs-vs-raid"]
    assert "Fastest write run with no flag: btrfs (single NVMe) at 902 MiB/s" in home
    # the HDD run just above an 'about 170 MB/s' limit is a weak flag, not counted (analyses-2); btrfs raid1 stalled
    assert "1 run(s) above the device's limit" in home and "direct=1 ignored by ZFS < 2.3" in home
    assert "1 run(s) stalled" in home
    assert "zfs_send_read fits a serial-reader model (fitted, mean error 7.7 %)" in thumper
    assert "rule 23x" not in thumper  # reads of one fixed disk set are not set against the sum-of-vdevs rule
    explore = text["all"]
    assert "btrfs (single NVMe): 902.0 MiB/s; 2 faster run(s) flagged (05_stacks, design checks)" in explore
    assert "1240" not in explore


def test_a_parameter_given_its_default_value_is_not_shown_as_set():
    """`-p baseline_vdev_count 1` (the default) had been listed on the index as run 'not the defaults'."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell('study = "x"\nbaseline_vdev_count = 1\nram_gib = 32.0\n')
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell]
    nb.metadata["papermill"] = {"parameters": {"baseline_vdev_count": 1, "ram_gib": 16.0, "study": "x"}}
    info = report._run_info(nb, "01_vdev_scaling")
    assert [(p["name"], p["value"], p["set"]) for p in info["params"]] == [
        ("study", "'x'", False),
        ("baseline_vdev_count", "1", False),
        ("ram_gib", "16.0", True),
    ]


@pytest.mark.browser
def test_a_chart_mark_names_its_raw_lines_and_a_click_opens_them(built, browser):
    """Issue 29: from a number in a chart to the lines it came from. In 05's bandwidth chart a bar's tooltip
    names its raw file and line, and a click opens the excerpt beside the report with those lines highlighted:
    the file's own lines, verbatim."""
    v = Visit(browser, paths.REPORTS / "homelab-mergerfs" / "05_stacks.html")
    page = v.page
    page.wait_for_function(_ALL_INTERACTIVE_JS, timeout=60_000)
    bar = page.locator(".sl-vega svg g.mark-rect path").first
    bar.scroll_into_view_if_needed()
    bar.hover()
    page.wait_for_selector("#vg-tooltip-element.visible", timeout=10_000)
    tip = page.locator("#vg-tooltip-element").inner_text().split("\n")
    cells = [t.strip() for t in tip if t.strip()]
    raw_file = cells[cells.index("raw file") + 1]
    lines = cells[cells.index("lines") + 1]
    assert raw_file.startswith("data/raw/homelab-mergerfs/fio-") and lines.isdigit()
    bar.click()
    page.wait_for_url("**/raw/**", timeout=10_000)
    assert page.url.endswith(f"#L{lines}")
    highlighted = [t.rstrip("\n") for t in page.locator(".hl").all_inner_texts()]
    text = (paths.ROOT / raw_file).read_text(encoding="utf-8").split("\n")
    assert highlighted == [f"{int(lines):>6}  {text[int(lines) - 1]}"]
    assert "Run status group" in text[int(lines) - 2] or "WRITE: bw=" in highlighted[0]  # fio's group line
    assert v.problems() == []  # nothing left the machine, no error on either page
    page.close()


def _rows_without_raw_file(spec: dict) -> list[dict]:
    """The data rows of a saved figure's spec (every dataset its marks draw) without ``raw_file``."""
    return [r for rows in (spec.get("datasets") or {}).values() for r in rows if "raw_file" not in r]


@pytest.mark.e2e
def test_every_chart_mark_names_its_raw_files(built):
    """Issue 29: every mark of every chart of every report names where it came from: one file's lines, the inputs
    of a number computed from several ('from: a.txt:4; b.txt:5', with its arithmetic), or why no log is behind it
    (a reference line, a model on the parameters alone: 'none: ...'). A computed number links to its inputs' page."""
    specs = sorted(paths.REPORTS.glob("*/figures/*/*.vl.json"))
    assert len(specs) >= 15
    missing, computed = {}, 0
    for f in specs:
        spec = json.loads(f.read_text(encoding="utf-8"))
        if bad := _rows_without_raw_file(spec):
            missing[str(f.relative_to(paths.REPORTS))] = sorted(bad[0])
        for r in (r for rows in spec["datasets"].values() for r in rows):
            if r.get("raw_file", "").startswith("from: "):
                computed += 1
                assert r.get("derivation") and r["raw_lines"].endswith(("input", "inputs")), (f.name, r)
                page = (f.parents[2] / r["raw_href"]).read_text(encoding="utf-8")
                assert page.count("<pre>") == int(r["raw_lines"].split()[0]), (f.name, r["raw_href"])
    assert missing == {}
    assert computed > 0


def test_a_computed_number_names_its_inputs_and_opens_them(tmp_path):
    """03's after/before bar: one ratio of two bonnie++ lines names both files and lines in its tooltip and opens
    one page with both lines highlighted."""
    from storagelab import excerpts

    a, b = tmp_path / "before.txt", tmp_path / "after.txt"
    a.write_text("x\nputc 100\n", encoding="utf-8")
    b.write_text("y\nz\nputc 150\n", encoding="utf-8")
    spec = {
        "datasets": {
            "d": [
                {
                    "ratio": 1.5,
                    "derivation": "putc: after / before (150 / 100)",
                    "sources": [
                        {"path": str(a), "line_start": 2, "line_end": 2},
                        {"path": str(b), "line_start": 3, "line_end": 3},
                    ],
                }
            ]
        },
        "mark": "bar",
        "encoding": {"tooltip": [{"field": "ratio", "type": "quantitative"}]},
    }
    out = excerpts.enrich(spec, tmp_path / "report")
    row = out["datasets"]["d"][0]
    assert (row["raw_file"], row["raw_lines"]) == ("from: before.txt:2; after.txt:3", "2 inputs")
    assert "sources" not in row
    assert [t["field"] for t in out["encoding"]["tooltip"]] == ["ratio", "raw_file", "raw_lines", "derivation"]
    page = (tmp_path / "report" / row["raw_href"]).read_text(encoding="utf-8")
    assert re.findall(r'class="hl"><b>\s*(\d+)</b>  ([^\n]*)', page) == [("2", "putc 100"), ("3", "putc 150")]
    assert "Arithmetic: putc: after / before (150 / 100)." in page
    many = [{"path": f"d/f{i}.txt", "line_start": i, "line_end": i + 1} for i in range(1, 7)]
    assert excerpts.from_text(many) == (
        "from: f1.txt:1-2; f2.txt:2-3; f3.txt:3-4; f4.txt:4-5; and 2 more files (6 in all)"
    )
    lines = [{"path": "d/t.csv", "line_start": n} for n in (3, 6, 9, 12, 15, 18)]
    assert excerpts.from_text(lines) == "from: t.csv:3, 6, 9, 12 and 2 more"
    two = [{"path": "a/x.txt", "line_start": 1}, {"path": "b/x.txt", "line_start": 2}]
    assert excerpts.from_text(two) == "from: a/x.txt:1; b/x.txt:2"  # the same name twice: the paths


@pytest.mark.browser
def test_a_computed_bar_names_its_inputs_and_a_click_opens_both(built, browser):
    """Issue 29: a number computed from two files. In 03's after/before chart a bar (one ratio of two bonnie++ runs)
    names both files and lines and its arithmetic in its tooltip, and a click opens one page with each run's line
    highlighted: the files' own lines, verbatim."""
    v = Visit(browser, paths.REPORTS / "freebsd-bonnie-dedup" / "03_sector63.html")
    page = v.page
    page.wait_for_function(_ALL_INTERACTIVE_JS, timeout=60_000)
    bar = page.locator(".sl-vega svg g.mark-rect path").first
    bar.scroll_into_view_if_needed()
    bar.hover()
    page.wait_for_selector("#vg-tooltip-element.visible", timeout=10_000)
    cells = [t.strip() for t in page.locator("#vg-tooltip-element").inner_text().split("\n") if t.strip()]
    raw_file, how = cells[cells.index("raw file") + 1], cells[cells.index("arithmetic") + 1]
    assert cells[cells.index("lines") + 1] == "2 inputs"
    m = re.fullmatch(r"from: (bonnie-[^:]+\.txt):(\d+); (bonnie-[^:]+\.txt):(\d+)", raw_file)
    assert m, raw_file
    assert re.fullmatch(r"\w+: after / before \([\d.]+( MiB)?/s / [\d.]+( MiB)?/s\)", how), how
    bar.click()
    page.wait_for_url("**/raw/from-*.html", timeout=10_000)
    highlighted = [t.rstrip("\n") for t in page.locator(".hl").all_inner_texts()]
    folder = paths.ROOT / "data" / "raw" / "freebsd-bonnie-dedup"
    expected = []
    for name, line in ((m.group(1), int(m.group(2))), (m.group(3), int(m.group(4)))):
        text = (folder / name).read_text(encoding="utf-8").split("\n")
        expected.append(f"{line:>6}  {text[line - 1]}")
    assert highlighted == expected
    assert v.problems() == []  # nothing left the machine, no error on either page
    page.close()


@pytest.mark.browser
def test_a_findings_number_opens_its_raw_lines(built, browser):
    """Issue 29: from a number in a finding to the lines it came from. In 03's findings the block write's 'before'
    value is a link: a click opens the raw log's excerpt with its line highlighted, the file's own line verbatim; its
    ratio opens the page of both runs' lines, the chart's page for that number."""
    v = Visit(browser, paths.REPORTS / "freebsd-bonnie-dedup" / "03_sector63.html")
    page = v.page
    finding = page.locator("li", has_text="block write: 10.4 MiB/s before").first
    link = finding.locator("a", has_text="10.4 MiB/s")
    assert link.get_attribute("title") == "from: bonnie-raid1-sec63-cache-log.txt:4"
    link.click()
    page.wait_for_url("**/raw/bonnie-raid1-sec63-cache-log.txt-*.html#L4", timeout=10_000)
    raw = (paths.RAW / "freebsd-bonnie-dedup" / "bonnie-raid1-sec63-cache-log.txt").read_text(encoding="utf-8")
    assert [t.rstrip("\n") for t in page.locator(".hl").all_inner_texts()] == [f"     4  {raw.split(chr(10))[3]}"]
    assert " 10.4m " in raw.split("\n")[3]  # bonnie++'s block write cell
    page.go_back()
    page.locator("li", has_text="block write: 10.4 MiB/s before").first.locator("a", has_text="7.59x").click()
    page.wait_for_url("**/raw/from-*.html", timeout=10_000)
    after = (paths.RAW / "freebsd-bonnie-dedup" / "bonnie-raid1-aligned-cache-log.txt").read_text(encoding="utf-8")
    assert [t.rstrip("\n") for t in page.locator(".hl").all_inner_texts()] == [
        f"     4  {raw.split(chr(10))[3]}",
        f"     5  {after.split(chr(10))[4]}",
    ]
    assert "Arithmetic: put_block: after / before." in page.content()
    assert v.problems() == []
    page.close()


@pytest.mark.browser
def test_a_one_file_marks_tooltip_leaves_its_empty_fields_out(built, browser):
    """h7 audit gap 6: a chart whose computed marks have 'arithmetic' lists it in every mark's tooltip (08's
    latency lines: the median of a setup's repeats); a mark from one file's lines has none (null in its data), and
    its tooltip showed 'arithmetic null'. It shows its value, labels, raw file and lines only. (Was 08's iodepth x
    numjobs grid: homelab-mergerfs's nine runs are one cell each, no grid, and the grid is drawn no more.)"""
    figure = "08-fio/iops-latency-vs-depth"
    spec = json.loads((paths.REPORTS / f"homelab-mergerfs/figures/{figure}.vl.json").read_text())
    assert "arithmetic" in json.dumps(spec["hconcat"])
    v = Visit(browser, paths.REPORTS / "homelab-mergerfs" / "08_fio.html")
    page = v.page
    page.wait_for_function(_ALL_INTERACTIVE_JS, timeout=60_000)
    page.locator(f'[data-figure="{figure}"] .sl-vega').scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, -200)")  # clear of the report's top bar
    # a point of the latency panel's lines (its third chart): the median of one run, from that run's lines; the
    # panel's crosses (flagged runs, other rows) may lie over one: the first point whose tooltip is a line's
    lines = next(rows for rows in spec["datasets"].values() if rows and "pct" in rows[0] and "derivation" in rows[0])
    points = page.locator(f'[data-figure="{figure}"] .sl-vega svg g.mark-symbol.concat_2_layer_0_layer_1_marks path')
    row, cells = None, []
    for point in points.all():
        box = point.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.move(x + 0.5, y + 0.5)
        page.wait_for_selector("#vg-tooltip-element.visible", timeout=10_000)
        cells = [t.strip() for t in page.locator("#vg-tooltip-element").inner_text().split("\n") if t.strip()]
        tip = dict(zip(cells[::2], cells[1::2], strict=False))  # title, value, title, value ...
        row = next(
            (
                r
                for r in lines
                if [r["label"], r["pct"], r["raw_file"]] == [tip.get("label"), tip.get("pct"), tip.get("raw file")]
            ),
            None,
        )
        if row is not None:
            break
    assert row is not None, cells
    assert row.get("derivation", "absent") is None  # the data has the empty field ...
    assert "arithmetic" not in cells and "null" not in cells  # ... the tooltip does not show it
    assert cells[-4:] == ["raw file", row["raw_file"], "lines", row["raw_lines"]]
    assert v.problems() == []
    page.close()


# the links of each report's findings on the demo data (issue 29: from a number to its raw lines): numbers read from
# raw lines and the arithmetic on them; a count that falls means a sentence lost its rows
FINDING_LINKS = {
    "ars-zfs-vs-raid/01_vdev_scaling.html": 12,  # figures the study only states: their claims.csv lines
    "ars-zfs-vs-raid/02_recordsize.html": 12,
    "freebsd-bonnie-dedup/01_vdev_scaling.html": 9,
    "freebsd-bonnie-dedup/02_recordsize.html": 5,
    "freebsd-bonnie-dedup/03_sector63.html": 40,
    "freebsd-bonnie-dedup/04_dedup_ddt.html": 48,  # its claims table links the zdb -b / zpool values too
    "freebsd-bonnie-dedup/06_zfs_send_transports.html": 0,  # no mbuffer log in that study
    "freebsd-bonnie-dedup/09_bonnie.html": 17,
    "homelab-mergerfs/01_vdev_scaling.html": 6,
    "homelab-mergerfs/05_stacks.html": 35,
    "homelab-mergerfs/08_fio.html": 25,
    "thumper-x4500/01_vdev_scaling.html": 38,
    "thumper-x4500/06_zfs_send_transports.html": 30,  # the buffer verdict cites its status lines once (h6 trial S1)
    "all/07_explore.html": 0,
    "all/10_disk_card.html": 0,  # the demo data has no lab run
}
_MARKDOWN_OUTPUT = re.compile(r'data-mime-type="text/markdown"[^>]*>(.*?)</div>', re.S)


@pytest.mark.e2e
def test_each_reports_findings_link_their_numbers_to_pages_that_exist(built):
    """Per report, the links in its findings (Markdown outputs) to raw/ excerpt pages, counted; every page exists."""
    got, missing = {}, []
    for page in built:
        hrefs = [
            h for m in _MARKDOWN_OUTPUT.finditer(page.read_text(encoding="utf-8"))
            for h in re.findall(r'<a href="(raw/[^"#]+)', m.group(1))
        ]  # fmt: skip
        got[f"{page.parent.name}/{page.name}"] = len(hrefs)
        missing += [h for h in hrefs if not (page.parent / h).exists()]
    assert got == FINDING_LINKS
    assert missing == []
