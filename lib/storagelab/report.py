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
import functools
import html
import json
import math
import re
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import paths
from .errors import ParameterError

TEMPLATES = Path(__file__).parent / "templates"


# ----------------------------------------------------------------------------- notebooks and parameters


def list_notebooks() -> list[Path]:
    return sorted(p for p in paths.NOTEBOOKS.glob("*.ipynb") if not p.name.startswith("_"))


def resolve(name: str) -> Path:
    p = Path(name)
    if p.suffix == ".ipynb" and p.exists():
        return p.resolve()
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


def parameter_docs(nb_path: Path) -> list[dict[str, Any]]:
    """Every parameter of a notebook: name, type, default and meaning (the comment after it)."""
    import io
    import tokenize

    import nbformat

    nb = nbformat.read(str(nb_path), as_version=4)
    cells = _parameter_cells(nb)
    if len(cells) != 1:
        raise ParameterError(f"{nb_path.name}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    source = cells[0].source
    comments = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("# ").strip()
    out = []
    for node in ast.parse(source).body:
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
    import nbformat

    lines = []
    for nb_path in nbs:
        nb = nbformat.read(str(nb_path), as_version=4)
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


REPORT_DIR_ENV = paths.REPORT_DIR_ENV


def report_dir(nb_path: Path, params: dict[str, Any]) -> Path:
    """reports/<selection>/: the study (or 'all') and any other label filter; a run whose other parameters
    differ from the notebook's defaults gets a suffix of their hash, so no run overwrites another's report.
    Two selections never share a folder: a name that the folder cannot spell as it is (``my nas``, ``my_nas``'s
    twin; ``(unlabelled)``; a study called ``all``) gets ``~`` and a hash of the selection."""
    return paths.REPORTS / _folder_and_identity(nb_path, params)[0]


def _folder_and_identity(nb_path: Path, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The report folder's name and what it holds: the selection's filters and the run's other parameters."""
    import hashlib

    from .analysis.selection import FILTERS, Selection

    def digest(value) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:8]

    defaults = notebook_parameters(nb_path)
    effective = {**defaults, **params}
    selection = Selection.from_params(effective)
    folder = selection.folder()
    filters = selection.filters()
    if not _spelled_as_is(folder, selection.study, filters):
        folder += "~" + digest(filters)
    other = {k: v for k, v in params.items() if k not in FILTERS and k != "db_path" and v != defaults.get(k)}
    if effective.get("db_path"):
        other["db_path"] = effective["db_path"]
    if other:
        folder += "--" + digest(other)
    return folder, {"selection": filters, "parameters": other}


def _spelled_as_is(folder: str, study: str, filters: dict[str, str]) -> bool:
    """True when ``folder`` names the selection unambiguously: every label kept as it is, none holding the
    separator '--' or ending in '-', and no study called 'all' (the folder of no study)."""
    values = [study or "all", *[v for k, v in filters.items() if k != "study"]]
    readable = "--".join([study or "all", *[f"{k}-{v}" for k, v in filters.items() if k != "study"]])
    return folder == readable and study != "all" and not any("--" in v or v.endswith("-") for v in values)


current_report_dir = paths.current_report_dir


class _StderrFilter:
    """Hold the kernel's stderr (it inherits ours) while a notebook runs; pass on all but jupyter's notes that say
    nothing about the user's data: 'Kernel is running over TCP without encryption', and 'KeyboardInterrupt caught
    in kernel', which an idle kernel logs when jupyter_client interrupts it before every shutdown."""

    NOISE = (
        "Kernel is running over TCP without encryption",
        "Unable to parse line",
        "Passed unknown parameter",
        "KeyboardInterrupt caught in kernel",
    )

    def __enter__(self):
        import os
        import tempfile

        self.tmp = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):
        import os

        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        text = self.tmp.read().decode("utf-8", "replace")
        self.tmp.close()
        for line in text.splitlines():
            if line.strip() and not any(n in line for n in self.NOISE):
                print(line, file=sys.stderr)
        return False


def _error_of(exc: Exception) -> str:
    """One line for a failed notebook: the exception the cell raised, without the traceback."""
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    text = f"{ename}: {evalue}" if ename else f"{type(exc).__name__}: {exc}"
    return re.sub(r"\x1b\[[0-9;]*m", "", text).strip().splitlines()[0][:500] if text.strip() else type(exc).__name__


@dataclass
class RunResult:
    notebook: str
    folder: Path
    executed: Path
    ok: bool
    error: str | None = None


def run_notebooks(
    names: list[str] | None = None,
    params: dict[str, Any] | None = None,
    raw_params: dict[str, str] | None = None,
    out_dir: Path | None = None,
    plans: list[tuple[Path, dict[str, Any]]] | None = None,
    jobs: int | None = None,
) -> list[RunResult]:
    """Execute notebooks with papermill; every notebook's parameters are validated before any runs.

    Each run writes into its own report folder (``report_dir``, or ``out_dir``): executed/<nb>.ipynb,
    figures/<nb>/ and summaries/<nb>.json. A notebook that fails does not stop the others: its summary
    records the error, so the index shows it as failed, never with an older headline. ``jobs`` notebooks run at
    a time (default: one per CPU).
    """
    import os

    if plans is None:
        nbs = [resolve(n) for n in names] if names else list_notebooks()
        plans = [(nb, validate(nb, params or {}, raw_params)) for nb in nbs]
    if out_dir is None:
        _claim_folders(plans)
    n = max(1, min(jobs if jobs is not None else (os.cpu_count() or 1), len(plans)))
    if n == 1:
        return [_run_one(nb, p, out_dir) for nb, p in plans]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # each notebook in its own process (a kernel each): the environment variable that tells a notebook its
    # report folder and the stderr filter are per process. Ctrl-C is this process's to handle: it stops the
    # workers, which shut their kernels down.
    pool = ProcessPoolExecutor(
        max_workers=n,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_notebook_worker_init,
        initargs=(os.getpid(),),
    )
    try:
        futures = [pool.submit(_run_one, nb, p, out_dir) for nb, p in plans]
        results = [f.result() for f in futures]
    except BaseException:
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results


SELECTION_FILE = ".selection.json"  # in each report folder: the selection (and parameters) whose reports it holds


def _claim_folders(plans: list[tuple[Path, dict[str, Any]]]) -> None:
    """Check, before anything runs, that no report folder would hold two selections' reports (two in this run,
    or this run's and the one a folder already holds), and record each folder's selection in it. A collision is
    a ParameterError, never a silent overwrite."""
    claimed: dict[str, dict[str, Any]] = {}
    for nb, p in plans:
        folder, identity = _folder_and_identity(nb, p)
        if claimed.setdefault(folder, identity) != identity:
            raise ParameterError(
                f"reports/{folder}/ would hold the reports of two selections, {_shown(claimed[folder])} and "
                f"{_shown(identity)}: run them one at a time with --output"
            )
    for folder, identity in claimed.items():
        marker = paths.REPORTS / folder / SELECTION_FILE
        try:
            held = json.loads(marker.read_text())
        except (OSError, ValueError):
            held = None  # a new folder, or one written before folders recorded their selection
        if held is not None and held != identity:
            raise ParameterError(
                f"{marker.parent} holds the reports of {_shown(held)}, not of {_shown(identity)}: "
                "move that folder away, or run with --output"
            )
        if held is None:
            _write_json(marker, identity)


def _shown(identity: dict[str, Any]) -> str:
    sel = ", ".join(f"{k} {v!r}" for k, v in identity["selection"].items()) or "every study"
    other = ", ".join(f"{k}={v!r}" for k, v in identity["parameters"].items())
    return sel + (f" ({other})" if other else "")


def _notebook_worker_init(parent: int) -> None:
    """A notebook worker leaves Ctrl-C to the build, and ends on SIGTERM: sent by the build when it stops
    (Ctrl-C), and by the kernel when the build dies, however it dies (PR_SET_PDEATHSIG)."""
    import signal

    from .procs import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_notebook_worker)
    die_with_parent(signal.SIGTERM, parent)


def _end_notebook_worker(signum, frame) -> None:
    """Kill this worker's kernel (and whatever it started) and exit at once. Never sys.exit: the pool's worker
    loop would take the SystemExit for the notebook's result and wait for the next notebook, for ever, holding
    the build's stdout (the reliability campaign's `build | tee` that never ended)."""
    import os
    import shutil

    from .procs import kill_descendants

    kill_descendants()
    for folder in list(_KERNEL_DIRS):
        shutil.rmtree(folder, ignore_errors=True)
    os._exit(128 + signum)


UNIX_SOCKET_PATH_MAX = 100  # bytes of a Unix socket's path (Linux: 108 with the final NUL; macOS: 104)


def _new_kernel_dir() -> str:
    """A new private folder (mkdtemp, 0700) for a kernel's Unix sockets, named with this process id (see
    sweep_kernel_dirs); in /tmp when $TMPDIR is too long a path for a socket ("File name too long")."""
    import os
    import tempfile

    prefix = f"storagelab-kernel-{os.getpid()}-"
    folder = tempfile.mkdtemp(prefix=prefix)
    if len(os.path.join(folder, "kernel-ipc-99").encode()) > UNIX_SOCKET_PATH_MAX:
        os.rmdir(folder)
        folder = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    return folder


def sweep_kernel_dirs() -> list[Path]:
    """Remove the kernel folders (see _kernel_manager) of storagelab processes that are gone: one killed outright
    (SIGKILL) could not remove its own. Only this user's; the folder's name holds its process id. Returns those
    removed."""
    import os
    import shutil
    import tempfile

    from .procs import alive

    removed = []
    places = {Path(tempfile.gettempdir()), Path("/tmp")}
    for folder in (f for place in sorted(places) for f in place.glob("storagelab-kernel-*-*")):
        pid = folder.name.split("-")[2]
        try:
            mine = folder.is_dir() and not folder.is_symlink() and folder.stat().st_uid == os.getuid()
        except OSError:
            continue
        if mine and pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


_KERNEL_DIRS: list[str] = []  # the private folders of this process's running kernels (see _kernel_manager)


def _kernel_manager(folder: str):
    """A kernel manager class whose kernel talks over Unix sockets in ``folder`` (private: mkdtemp, 0700), with
    its connection file there too. TCP would need free ports, which jupyter_client finds by binding and
    releasing them before the kernel binds them again: two builds at once raced for them ("Address already in
    use", issue 28)."""
    import os

    from jupyter_client import AsyncKernelManager

    class IpcKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.transport = "ipc"
            self.connection_file = os.path.join(folder, "kernel.json")
            self.ip = os.path.join(folder, "kernel-ipc")

    return IpcKernelManager


def _run_one(nb: Path, p: dict[str, Any], out_dir: Path | None) -> RunResult:
    """Execute one notebook into its report folder (see run_notebooks)."""
    import os
    import shutil

    import papermill as pm

    folder = Path(out_dir) if out_dir else report_dir(nb, p)
    dest = folder / "executed" / nb.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    figs = paths.figure_dir(nb.stem, folder / "figures")
    if figs.is_dir():  # figures are the last run's only: no stale chart survives a renamed or removed one
        for f in figs.iterdir():
            if f.is_file() and f.name.endswith((".svg", ".png", ".vl.json")):
                f.unlink()
    summary = folder / "summaries" / f"{nb.stem}.json"
    summary.unlink(missing_ok=True)
    shown = os.path.relpath(folder, paths.ROOT) if folder.is_relative_to(paths.ROOT) else str(folder)
    print(f"==> running {nb.name}" + (f" with {p}" if p else "") + f" -> {shown}/", flush=True)
    old = os.environ.get(REPORT_DIR_ENV)
    os.environ[REPORT_DIR_ENV] = str(folder)
    sweep_kernel_dirs()
    kernel_dir = _new_kernel_dir()
    _KERNEL_DIRS.append(kernel_dir)
    try:
        with _StderrFilter():
            pm.execute_notebook(
                str(nb),
                str(dest),
                parameters=p,
                cwd=str(paths.NOTEBOOKS),
                progress_bar=False,
                kernel_name="python3",
                log_output=False,
                kernel_manager_class=_kernel_manager(kernel_dir),
            )
        ok, error = True, None
    except Exception as e:  # noqa: BLE001 - any failure of one notebook is reported, the others still run
        ok, error = False, _error_of(e)
        print(f"    FAILED: {error}", file=sys.stderr, flush=True)
        _write_json(
            summary,
            dict(
                notebook=nb.stem,
                title=nb.stem,
                answers="",
                study=p.get("study"),
                status="failed",
                error=error,
                headline={},
                claims=[],
                written_at=datetime.now(UTC).isoformat(timespec="seconds"),
            ),
        )
    finally:
        shutil.rmtree(kernel_dir, ignore_errors=True)
        _KERNEL_DIRS.remove(kernel_dir)
        if old is None:
            os.environ.pop(REPORT_DIR_ENV, None)
        else:
            os.environ[REPORT_DIR_ENV] = old
    return RunResult(nb.stem, folder, dest, ok, error)


def build_plan(db_path: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """What `storagelab build` runs: every analysis notebook once per study it has something to say about.

    * a source study (papers/<study>/README.md): the notebooks its claims.csv names (the defaults among them) and
      those its data can feed (``analysis.relevance``);
    * any other study in the database (the user's own logs), and the files no study label covers:
      every analysis notebook, each saying what its data lack;
    * the notebooks without a study parameter (07_explore), or whose default is every study (10_disk_card), once.
    """
    from .analysis import open_db
    from .analysis.selection import UNLABELLED
    from .claims import load_claims

    nbs = {nb.stem: nb for nb in list_notebooks()}
    claims = load_claims()
    curated = {p.parent.name for p in paths.PAPERS.glob("*/README.md")}
    from .analysis.relevance import RELEVANT
    from .analysis.selection import Selection

    con = open_db(db_path)
    try:
        rows = con.execute(
            "SELECT DISTINCT coalesce(study, ?) FROM files WHERE duplicate_of IS NULL "
            "UNION SELECT study FROM duplicates WHERE study IS NOT NULL AND duplicate_of IS NULL ORDER BY 1",
            [UNLABELLED],
        ).fetchall()
        relevant = {
            study: {stem for stem, f in RELEVANT.items() if f(con, Selection(study=study))} for study in curated
        }
    finally:
        con.close()
    in_db = [r[0] for r in rows]
    plan: list[tuple[Path, dict[str, Any]]] = []
    seen = set()

    def add(stem, params):
        key = (stem, json.dumps(params, sort_keys=True))
        if stem in nbs and key not in seen:
            seen.add(key)
            plan.append((nbs[stem], params))

    studies = sorted(set(curated) | set(in_db), key=lambda s: (s == UNLABELLED, s))
    for stem, nb in nbs.items():
        if notebook_parameters(nb).get("study", "") == "":  # no study parameter, or every study by default (10)
            add(stem, {})
    for study in studies:
        if study in curated:
            named = set(claims.filter(claims["study"] == study)["notebook"].to_list())
            targets = sorted(named | relevant[study])
        else:
            targets = [s for s, nb in nbs.items() if "study" in notebook_parameters(nb)]
        for stem in targets:
            if stem not in nbs:  # named by a study's claims.csv, but not in notebooks/ (removed or renamed)
                continue
            default = notebook_parameters(nbs[stem]).get("study")
            add(stem, {} if study == default else {"study": study})
    return sorted(plan, key=lambda t: (report_dir(t[0], t[1]).name, t[0].stem))


# ----------------------------------------------------------------------------- summaries (written by notebooks)


def _write_json(dest: Path, data: dict) -> Path:
    import os

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")  # one per process: two builds at once both write
    tmp.write_text(json.dumps(data, indent=1, default=str))
    tmp.replace(dest)
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
    import vl_convert as vlc

    return vlc.javascript_bundle()


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
        spec = json.loads(path.read_text(encoding="utf-8"))
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
    reports_dir: Path | None = None, only: Path | None = None, failures: list[str] | None = None
) -> list[Path]:
    """reports/<folder>/<name>.html for every executed notebook of every report folder, and reports/index.html.
    ``only``: render that one report folder (e.g. a ``run --output`` outside reports/) and no index.

    An executed notebook that cannot be read (a run killed while saving) becomes a page that says so,
    and the index marks it failed; ``failures`` gets a line for each ("folder/name: error")."""
    import nbformat

    root = Path(reports_dir or paths.REPORTS)
    if only is None:
        root.mkdir(parents=True, exist_ok=True)
    built = datetime.now(UTC).isoformat(timespec="seconds")
    exp = _exporter()
    pages, runs = [], {}
    for folder in [Path(only)] if only is not None else report_folders(root):
        for nb_path in sorted((folder / "executed").glob("*.ipynb")):
            key = f"{folder.name}/{nb_path.stem}"
            dest = folder / f"{nb_path.stem}.html"
            try:
                nb = nbformat.read(str(nb_path), as_version=4)
                run, figures = _prepare(nb, nb_path.stem, folder)
                interactive = any(
                    "storagelab_spec" in (o.get("metadata") or {}) for c in nb.cells for o in c.get("outputs", [])
                )
                resources = {"storagelab_built": built, "storagelab_run": run, "metadata": {"name": nb_path.stem}}
                if interactive:
                    resources["storagelab_vega"] = vega_bundle()
                body, _ = exp.from_notebook_node(nb, resources=resources)
                runs[key] = dict(run, title=nb.metadata["title"], figures=figures)
            except Exception as e:  # noqa: BLE001 - one unreadable notebook must not stop the index
                error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                body = _failed_page(nb_path.stem, error, built)
                runs[key] = dict(params=[], title=nb_path.stem, figures=[], render_error=error)
                if failures is not None:
                    failures.append(f"{key}: {error}")
            dest.write_text(body, encoding="utf-8")
            pages.append(dest)
    if only is None:
        (root / "index.html").write_text(index_html(built, root, pages=runs), encoding="utf-8")
    return pages


def _folder_title(folder: Path) -> str:
    """A report folder's heading: its selection as recorded (``study my nas``), else its name."""
    try:
        identity = json.loads((folder / SELECTION_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "every study" if folder.name == "all" else folder.name
    if not isinstance(identity, dict) or not isinstance(identity.get("selection"), dict):
        return folder.name
    sel = identity["selection"]
    title = str(sel["study"]) if list(sel) == ["study"] else ", ".join(f"{k} {v}" for k, v in sel.items())
    title = title or "every study"
    return title + (f" ({folder.name})" if identity.get("parameters") else "")


_STATUS_CLASS = {"reproduced": "ok", "cannot": "na", "differs": "bad"}
_BASIS = {"raw": "recomputed from raw logs", "arithmetic": "arithmetic on stated figures", "none": "not checkable"}


def _summaries(root: Path) -> dict[str, dict]:
    out = {}
    for f in sorted(root.glob("*/summaries/*.json")):
        if f.parent.parent.name.startswith("_"):
            continue
        try:
            out[f"{f.parent.parent.name}/{f.stem}"] = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            out[f"{f.parent.parent.name}/{f.stem}"] = dict(
                notebook=f.stem, title=f.stem, status="failed", error=f"summary unreadable: {e}"
            )
    return out


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


def _thumbnail(root: Path, key: str, figures: list[str]) -> str:
    """The report's first chart as a small picture, embedded (data: URI), linking to the report."""
    import base64

    if not figures:
        return ""
    spec = root / key.split("/", 1)[0] / "figures" / f"{figures[0]}.vl.json"
    if not spec.is_file():
        return ""
    try:
        import vl_convert as vlc

        png = vlc.vegalite_to_png(json.loads(spec.read_text(encoding="utf-8")), scale=0.5)  # a small picture
    except Exception:  # noqa: BLE001 - a thumbnail is optional
        return ""
    data = base64.b64encode(png).decode("ascii")
    return (
        f"<a href='{html.escape(key)}.html'><img class='thumb' alt='{html.escape(figures[0])}' "
        f"src='data:image/png;base64,{data}'></a>"
    )


def index_html(built: str, reports_dir: Path | None = None, pages: dict[str, dict] | None = None) -> str:
    """The index page: per report folder (a study or another selection), one card per notebook run with its
    status, verdict, headline and claim counts by basis. Every text from the summaries is escaped."""
    root = Path(reports_dir or paths.REPORTS)
    summaries = _summaries(root)
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
        f"<p>Built {e(built)} from the raw logs in <code>data/raw/</code>, grouped by study (the selection each "
        "report was run on). Every number can be traced to a raw file (sha256) and its lines. "
        "Claims: <span class='ok'>reproduced</span>, <span class='bad'>differs</span>, "
        "<span class='na'>cannot be reproduced</span>, counted by basis: recomputed from raw logs, arithmetic on "
        "the study's stated figures, or not checkable.</p>",
    ]
    keys = sorted(set(summaries) | set(pages))
    folders: dict[str, list[str]] = {}
    for k in keys:
        folders.setdefault(k.split("/", 1)[0], []).append(k)
    for folder, ks in sorted(folders.items(), key=lambda t: (t[0] == "all", t[0])):
        parts.append(f"<h2 id='{e(folder)}'>{e(_folder_title(root / folder))}</h2>")
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
            thumb = _thumbnail(root, k, page.get("figures") or [])
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
