"""Every row or ``sources`` element a chart or finding links to a stored file's lines carries that file's SHA-256 as
stored (``files.sha256``: the bytes its numbers were parsed from), so excerpts.py refuses the excerpt of a log
rewritten since its ingest (reliability-24 High 4: a bar of 361m linked to a page of the NEW "999m 99"). One
structural walk of every analysis's frames on the project's data and a zdb fixture, and one end-to-end check: a
rewritten fio output gets no excerpt page, neither for a point's own line nor for a ratio's ``sources``."""

from __future__ import annotations

import dataclasses
import importlib
import json

import polars as pl
from test_chart_provenance import two_fio_runs

from storagelab import charts
from storagelab.analysis import Selection, open_db

# every analysis whose result a report links to raw lines (the modules with an analyse(con, selection))
ANALYSIS_NAMES = "scaling alignment dedup transports recordsize fio_views stacks bonnie_table disk_card".split()
ANALYSES = tuple(importlib.import_module(f"storagelab.analysis.{name}") for name in ANALYSIS_NAMES)
scaling, disk_card = ANALYSES[0], ANALYSES[-1]


def _frames(obj, where="", seen=None):
    """Every polars frame inside ``obj`` (dicts, lists, dataclasses), with where it was found."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, pl.DataFrame):
        yield where, obj
    elif isinstance(obj, dict):
        if obj.get("path") is not None and obj.get("line_start") is not None:  # a finding's cite input
            yield where, pl.DataFrame([{k: obj.get(k) for k in ("path", "line_start", "sha256")}])
        for k, v in obj.items():
            yield from _frames(v, f"{where}.{k}", seen)
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            yield from _frames(v, f"{where}[{i}]", seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from _frames(getattr(obj, f.name), f"{where}.{f.name}", seen)


def _links(where, df):
    """(where, path, sha256) of every link ``df`` makes: each row with a path and lines (``path`` or a
    ``*path*``/``line*`` pair such as single_path, path_before), and every element of a ``sources`` list."""
    for c in df.columns:
        if "path" in c and df.schema[c] == pl.String:
            sha = c.replace("path", "sha256")
            lines = [x for x in df.columns if x.startswith(c.replace("path", "line")) or x == "line_start"]
            if c == "path" and "line_start" not in df.columns or c != "path" and not lines:
                continue
            for r in df.select(c, *([sha] if sha in df.columns else [])).drop_nulls(c).iter_rows(named=True):
                yield f"{where}:{c}", r[c], r.get(sha)
        if "sources" in c and isinstance(df.schema[c], pl.List):
            for s in df[c].explode().drop_nulls().to_list():
                yield f"{where}:{c}", s["path"], s.get("sha256")


def test_every_link_of_every_analysis_carries_the_files_stored_sha256(seed_db, ztest_db):
    checked, wrong = 0, set()
    for db in (seed_db, ztest_db):
        with open_db(db) as con:
            stored = dict(con.execute("SELECT path, sha256 FROM files").fetchall())
            got = {m.__name__.rsplit(".", 1)[-1]: m.analyse(con, Selection()) for m in ANALYSES}
            got["disk_card_chart"] = disk_card.chart_frame(got["disk_card"][1])
            for name, res in got.items():
                for where, df in _frames(res, name):
                    for at, path, sha in _links(where, df):
                        checked += 1
                        if path not in stored or sha != stored[path]:
                            wrong.add((at, sha is None))
    assert (sorted(wrong), checked) == ([], 2577)  # every link of data/raw and the ztest pool


def test_a_log_rewritten_after_ingest_gets_no_excerpt(tmp_path):
    """01's fio chart: a run's point links to its own line (a row link), the other vdev count's mean to the lines
    of the runs behind it (``sources``). Rewrite the file after ingest: neither gets a page any more."""
    raw, raid, other = two_fio_runs(tmp_path)
    with open_db(tmp_path / "x.duckdb") as con:
        res = scaling.analyse(con, Selection(study="t"))
    charts.setup()

    def rows(report):
        chart = charts.fio_vdev_scaling(res["fio"], res["fio_configs"], Selection())
        out = charts.save(chart, "fio", "01_vdev_scaling", report / "figures")
        spec = json.loads(out["vl.json"].read_text())
        got = [r for rs in spec["datasets"].values() for r in rs if "raw_file" in r]
        return {(r["series"], r["vdev_count"]): (r["raw_lines"], r.get("raw_href") is not None) for r in got}

    linked = {("run", 1): ("32", True), ("mean of the runs", 1): ("32", True), ("mean of the runs", 2): ("33", True)}
    assert {k: v for k, v in rows(tmp_path / "a").items() if k in linked} == linked
    for name in (raid, other):  # the same length, new numbers: the lines are there, but not the ones parsed
        p = raw / name
        p.write_text(p.read_text().replace("3", "9"))
    assert {k: v for k, v in rows(tmp_path / "b").items() if k in linked} == {
        ("run", 1): ("32", False),
        ("mean of the runs", 1): ("32", False),
        ("mean of the runs", 2): ("33", False),
    }
