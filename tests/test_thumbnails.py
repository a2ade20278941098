"""The index's thumbnails are drawn once and kept (reports/_thumbnails/), drawn again only when their chart, the
scale or vl-convert's version changes; pictures no index uses any more are removed (issue 28: every build, run and
report drew every report's thumbnail again)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

import vl_convert as vlc

from storagelab import rendering

SPEC = {
    "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
    "data": {"values": [{"run": "a", "bw": 1.0}, {"run": "b", "bw": 2.5}]},
    "mark": "bar",
    "encoding": {"x": {"field": "run", "type": "nominal"}, "y": {"field": "bw", "type": "quantitative"}},
}


DRAW = vlc.vegalite_to_png  # the real one (the tests count the calls of a wrapper)


def _project(root: Path, spec: dict) -> dict:
    figures = root / "lab" / "figures" / "08-fio"
    figures.mkdir(parents=True, exist_ok=True)
    (figures / "bw.vl.json").write_text(json.dumps(spec), encoding="utf-8")
    (root / "lab" / "summaries").mkdir(exist_ok=True)
    (root / "lab" / "summaries" / "08_fio.json").write_text(json.dumps({"notebook": "08_fio", "title": "fio"}))
    return {"lab/08_fio": {"title": "fio", "params": [], "figures": ["08-fio/bw"]}}


def _pictures(page: str) -> list[bytes]:
    return [base64.b64decode(d) for d in re.findall(r"src='data:image/png;base64,([^']+)'", page)]


def _drawn(monkeypatch) -> list[dict]:
    calls = []

    def draw(spec, **kw):
        calls.append(spec)
        return DRAW(spec, **kw)

    monkeypatch.setattr(vlc, "vegalite_to_png", draw)
    return calls


def test_a_thumbnail_is_drawn_once_then_read_back(tmp_path, monkeypatch):
    pages, calls = _project(tmp_path, SPEC), _drawn(monkeypatch)
    first = _pictures(rendering.index_html("t", tmp_path, pages=pages))
    assert len(calls) == 1 and len(first) == 1 and first[0].startswith(b"\x89PNG\r\n\x1a\n")
    (kept,) = (tmp_path / rendering.THUMBNAILS).glob("*.png")
    assert kept.read_bytes() == first[0]
    again = _pictures(rendering.index_html("t", tmp_path, pages=pages))
    assert again == first and len(calls) == 1  # read back, not drawn
    # the same picture as drawing it now
    assert DRAW(SPEC, scale=rendering.THUMBNAIL_SCALE) == first[0]


def test_a_changed_chart_or_vl_convert_is_drawn_again_and_the_old_picture_removed(tmp_path, monkeypatch):
    pages, calls = _project(tmp_path, SPEC), _drawn(monkeypatch)
    rendering.index_html("t", tmp_path, pages=pages)
    (old,) = (tmp_path / rendering.THUMBNAILS).glob("*.png")
    changed = dict(SPEC, data={"values": [{"run": "a", "bw": 9.0}]})
    _project(tmp_path, changed)
    since = os.stat(old).st_mtime + 1
    new = _pictures(rendering.index_html("t", tmp_path, pages=pages))
    assert len(calls) == 2 and calls[-1] == changed
    assert new == [DRAW(changed, scale=rendering.THUMBNAIL_SCALE)]
    monkeypatch.setattr(vlc, "__version__", vlc.__version__ + "-other")
    assert _pictures(rendering.index_html("t", tmp_path, pages=pages)) == new and len(calls) == 3
    assert len(list((tmp_path / rendering.THUMBNAILS).glob("*.png"))) == 3
    for f in (tmp_path / rendering.THUMBNAILS).glob("*.png"):  # the last two were used after `since`
        if f != old:
            os.utime(f, (since + 5, since + 5))
    rendering.prune_thumbnails(tmp_path, since)
    assert not old.exists() and len(list((tmp_path / rendering.THUMBNAILS).glob("*.png"))) == 2


def test_a_build_keeps_only_the_thumbnails_its_index_shows(tmp_path, monkeypatch):
    """render_reports: an unused picture (a chart since removed) goes, the index's stay."""
    pages = _project(tmp_path, SPEC)
    rendering.index_html("t", tmp_path, pages=pages)
    (used,) = (tmp_path / rendering.THUMBNAILS).glob("*.png")
    unused = tmp_path / rendering.THUMBNAILS / ("0" * 64 + ".png")
    unused.write_bytes(b"\x89PNG old")
    os.utime(unused, (1, 1))
    os.utime(used, (1, 1))
    real = rendering.index_html  # the index of this one report (it has no executed notebook to render)
    monkeypatch.setattr(
        rendering,
        "index_html",
        lambda built, root, pages=None, skip=(), through=None: real(built, root, pages=shown, through=through),
    )
    shown = pages
    rendering.render_reports(tmp_path)
    assert len(_pictures((tmp_path / "index.html").read_text())) == 1
    assert used.exists() and not unused.exists()


def test_a_thumbnail_that_cannot_be_kept_is_still_shown(tmp_path, monkeypatch):
    pages, calls = _project(tmp_path, SPEC), _drawn(monkeypatch)
    (tmp_path / rendering.THUMBNAILS).write_text("a file where the folder would be")
    for _ in range(2):
        assert len(_pictures(rendering.index_html("t", tmp_path, pages=pages))) == 1
    assert len(calls) == 2  # drawn each time, nothing left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == [rendering.THUMBNAILS, "lab"]


def test_a_thumbnail_draws_long_labels_cut_short(tmp_path, monkeypatch):
    """Reliability-36 (input, Medium E): vl-convert's CPU grows with every label character drawn (0.4 ms each per
    chart): with manifest labels 3,000 letters long one thumbnail cost 21 s and a build's index did not end in 40
    minutes. The thumbnail draws each data text cut to spectexts.LONGEST characters (a title line to twice that),
    two long labels that differ stay two; the chart's page (its spec file) keeps them whole, and a chart with short
    texts is drawn as it is."""
    label = "mergerfs over btrfs " * 150  # 3,000 letters
    spec = {
        **SPEC,
        "title": {"text": "bandwidth", "subtitle": ["study " + "x" * 1000]},
        "datasets": {"d1": [{"run": label + "1", "bw": 1.0}, {"run": label + "2", "bw": 1.5}, {"run": "b", "bw": 2.5}]},
        "data": {"name": "d1"},
    }
    drawn = []

    def draw(s, scale):
        drawn.append(s)
        return DRAW(s, scale=scale)

    monkeypatch.setattr(vlc, "vegalite_to_png", draw)
    png = rendering._thumbnail_png(tmp_path, json.dumps(spec).encode())
    assert png.startswith(b"\x89PNG")
    runs = [r["run"] for r in drawn[0]["datasets"]["d1"]]
    assert [len(r) for r in runs] == [300, 300, 1] and runs[2] == "b"
    assert runs[0][:291] == label[:291] and runs[0][291] == "\u2026" and runs[0] != runs[1]  # two stay two
    assert runs[0][292:] == hashlib.sha256((label + "1").encode()).hexdigest()[:8]
    assert drawn[0]["title"]["text"] == "bandwidth" and len(drawn[0]["title"]["subtitle"][0]) == 600
    assert spec["datasets"]["d1"][0]["run"] == label + "1"  # the spec itself untouched
    rendering._thumbnail_png(tmp_path / "other", json.dumps(SPEC).encode())
    assert drawn[1] == SPEC  # short texts: drawn as they are


def test_a_figure_saves_long_labels_cut_short_and_its_page_spec_whole(tmp_path):
    """The same bound for the figure's static SVG and PNG (22 s of CPU for 05_stacks' chart with 3,000-letter
    labels): the SVG vl-convert draws shows the cut label, the interactive spec keeps it whole."""
    import altair as alt

    from storagelab import charts

    label = "raidz2 of eight disks " * 140  # 3,080 letters
    data = alt.Data(values=[{"run": label, "bw": 1.0}, {"run": "one disk", "bw": 2.5}])
    chart = alt.Chart(data).mark_bar().encode(x="run:N", y="bw:Q")
    files = charts.save(chart, "long labels", "08_fio", tmp_path)
    svg = files["svg"].read_text(encoding="utf-8")
    shown = label[:291] + "\u2026" + hashlib.sha256(label.encode()).hexdigest()[:8]
    assert "one disk" in svg and shown in svg and label not in svg  # the cut text in the axis's description
    assert files["png"].read_bytes().startswith(b"\x89PNG")
    kept = json.loads(files["vl.json"].read_text(encoding="utf-8"))
    assert label in json.dumps(kept) and shown not in json.dumps(kept)
