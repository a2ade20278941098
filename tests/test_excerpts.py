"""From a chart's mark to the raw lines: excerpt pages and the interactive spec (storagelab.excerpts)."""

from __future__ import annotations

import gzip
import hashlib
import html
import re
import shutil
from pathlib import Path

from storagelab.excerpts import enrich

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "data" / "raw" / "homelab-mergerfs" / "fio-zfs-mirror-zfs0.8.4.txt"


def _spec(rows: list[dict]) -> dict:
    return {
        "datasets": {"d1": rows},
        "data": {"name": "d1"},
        "mark": "bar",
        "encoding": {"x": {"field": "v", "type": "quantitative"}, "tooltip": [{"field": "v", "type": "quantitative"}]},
    }


def test_a_row_with_provenance_links_to_its_lines_highlighted(tmp_path):
    rel = LOG.relative_to(ROOT).as_posix()
    sha = hashlib.sha256(LOG.read_bytes()).hexdigest()
    lines = LOG.read_text().split("\n")
    out = enrich(_spec([{"v": 1, "path": rel, "sha256": sha, "line_start": 21, "line_end": 23}]), tmp_path)
    row = out["datasets"]["d1"][0]
    assert (row["raw_file"], row["raw_lines"]) == (rel, "21-23")
    page_name, anchor = row["raw_href"].split("#")
    assert anchor == "L21" and page_name.startswith("raw/fio-zfs-mirror-zfs0.8.4.txt-")
    assert out["encoding"]["href"] == {"field": "raw_href", "type": "nominal"}
    assert out["encoding"]["tooltip"][1:] == [
        {"field": "raw_file", "type": "nominal", "title": "raw file"},
        {"field": "raw_lines", "type": "nominal", "title": "lines"},
    ]
    assert out["config"]["mark"]["tooltip"] == {"content": "data"}
    page = (tmp_path / page_name).read_text()
    marked = re.findall(r'<span id="L(\d+)" class="hl"><b>\s*\d+</b>  (.*)\n</span>', page)
    assert [int(n) for n, _ in marked] == [21, 22, 23]
    assert [html.unescape(t) for _, t in marked] == lines[20:23]  # the file's own lines 21-23, verbatim
    assert 'id="L13"' in page and 'id="L12"' not in page  # eight lines of context each side


def test_no_link_when_the_file_is_not_the_bytes_that_were_parsed(tmp_path):
    copy = tmp_path / "x.txt"
    shutil.copy(LOG, copy)
    row = {"v": 1, "path": str(copy), "sha256": "0" * 64, "line_start": 3}
    out = enrich(_spec([row]), tmp_path / "report")
    assert out["datasets"]["d1"][0]["raw_lines"] == "3" and "raw_href" not in out["datasets"]["d1"][0]
    assert "href" not in out["encoding"] and not (tmp_path / "report" / "raw").exists()


def test_a_compressed_log_is_shown_decompressed_with_the_database_line_numbers(tmp_path):
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(LOG.read_bytes()))
    sha = hashlib.sha256(gz.read_bytes()).hexdigest()
    out = enrich(_spec([{"v": 1, "path": str(gz), "sha256": sha, "line_start": 5, "line_end": 5}]), tmp_path / "r")
    href = out["datasets"]["d1"][0]["raw_href"]
    page = (tmp_path / "r" / href.split("#")[0]).read_text()
    assert '<span id="L5" class="hl">' in page and "<title>run.txt.gz: lines 5-5</title>" in page


def test_rows_without_provenance_keep_only_the_tooltip(tmp_path):
    out = enrich(_spec([{"v": 1, "label": "<b>x</b>"}]), tmp_path)
    assert out["datasets"]["d1"] == [{"v": 1, "label": "<b>x</b>"}]
    assert "href" not in out["encoding"] and len(out["encoding"]["tooltip"]) == 1


def test_numbers_computed_differently_from_the_same_inputs_open_their_own_arithmetic(tmp_path):
    # h7 finding 3: every bar of 03's ratio chart has the same two bonnie lines as inputs; the page was named by the
    # inputs only, so each bar opened the first bar's page ("putc: after / before ..."), whatever it computed
    rel = LOG.relative_to(ROOT).as_posix()
    sha = hashlib.sha256(LOG.read_bytes()).hexdigest()
    inputs = [
        {"path": rel, "sha256": sha, "line_start": 21, "line_end": 23},
        {"path": rel, "sha256": sha, "line_start": 5, "line_end": 5},
    ]
    rows = [
        {"v": 1, "sources": [dict(s) for s in inputs], "derivation": "putc: after / before (0.25 MiB/s / 0.28 MiB/s)"},
        {"v": 7.59, "sources": [dict(s) for s in inputs], "derivation": "put_block: after / before (78.9 / 10.4)"},
        {"v": 2, "sources": [dict(s) for s in inputs], "derivation": "putc: after / before (0.25 MiB/s / 0.28 MiB/s)"},
    ]
    out = enrich(_spec(rows), tmp_path)
    hrefs = [r["raw_href"] for r in out["datasets"]["d1"]]
    assert hrefs[0] != hrefs[1] and hrefs[0] == hrefs[2]  # one page per computation, not per set of inputs
    first, second = ((tmp_path / h).read_text() for h in hrefs[:2])
    assert "<p>Arithmetic: putc: after / before (0.25 MiB/s / 0.28 MiB/s).</p>" in first
    assert "<p>Arithmetic: put_block: after / before (78.9 / 10.4).</p>" in second
    assert "putc" not in second and "put_block" not in first
    assert all('<span id="L21" class="hl">' in p and '<span id="L5" class="hl">' in p for p in (first, second))
