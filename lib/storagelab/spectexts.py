"""A Vega-Lite spec with the texts of its data rows and its title cut short, for what vl-convert draws.

vl-convert's CPU grows with every character of every label it draws (about 0.4 ms each per chart). Reliability-36
(input, Medium E): with manifest labels 3,000 letters longer, 05_stacks' bandwidth-by-run took 22 s of CPU to save as
SVG and 21 s to draw as the index's thumbnail, and a hostile build's index had not ended after 40 minutes. The
interactive spec (the chart's page, drawn by the browser) keeps them whole. Real labels are shorter than LONGEST
(08_fio's series names of the seeds reach 228 characters) and are drawn as they are.

Reliability-37 (folders): the same texts in the encodings (a colour scale's ``domain``, a ``sort`` order, a filter's
``oneOf``/``equal``) are cut by the same rule, or a long label's series, cut in the data but not in its colour
scale's domain (``chartkit.top_categories``, 08_fio's series), was drawn in no colour at all, two such series alike,
under a legend giving each its own; and a text of LONGEST characters is cut too, so that no uncut text can be the
cut form of another (a label equal to another's cut was drawn as one series with it)."""

from __future__ import annotations

import hashlib

LONGEST = 300  # characters of a data text vl-convert draws (a title line twice that)
_NAMES_VALUES = frozenset(("domain", "sort", "values", "oneOf", "in"))  # lists of data values (scale, axis, legend,
_NAMES_VALUE = frozenset(("equal", "value"))  # sort, filter predicates) and one data value beside the rows


def short_texts(spec: dict, limit: int = LONGEST) -> dict:
    """``spec`` with every text of its data rows (``datasets``, ``data.values``) of ``limit`` characters or more cut
    to ``limit``, and each title line to twice that, and the same cut for the values the spec names beside its rows
    (a scale's domain, a sort or legend list, a filter's values); ``spec`` itself is left as it is. A cut text ends
    in an ellipsis and 8 hex digits of its whole text's SHA-256, so two texts that differ stay two (a series, a
    colour, a facet each), and a text left whole is shorter than any cut (reliability-37 folders)."""

    def cut(value, most=limit):
        if isinstance(value, str) and len(value) >= most:
            return value[: most - 9] + "\u2026" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        if isinstance(value, list):
            return [cut(v, most) for v in value]
        return value

    def rows(values):
        if not isinstance(values, list):
            return values
        return [{k: cut(v) for k, v in r.items()} if isinstance(r, dict) else r for r in values]

    def named(node, key=None):  # reliability-37: a colour scale's domain (chartkit.top_categories) named the whole
        # texts: the cut rows matched none of it and their marks were drawn with no colour (08_fio's depth lines gone
        # from the report's figure, their legend kept); the same cut for every value a spec names beside its rows
        if isinstance(node, dict):
            return {k: named(v, k) for k, v in node.items()}
        if isinstance(node, list) and key == "values" and any(isinstance(v, dict) for v in node):
            return rows(node)  # a layer's own data rows
        if isinstance(node, list):
            return [cut(v) if key in _NAMES_VALUES else named(v) for v in node]
        return cut(node) if key in _NAMES_VALUE else node

    spec = {k: v if k in ("datasets", "data", "title") else named(v, k) for k, v in spec.items()}
    if isinstance(spec.get("datasets"), dict):
        spec["datasets"] = {name: rows(values) for name, values in spec["datasets"].items()}
    if isinstance(spec.get("data"), dict) and "values" in spec["data"]:
        spec["data"] = {**spec["data"], "values": rows(spec["data"]["values"])}
    if isinstance(spec.get("title"), dict):
        spec["title"] = {k: cut(v, 2 * limit) for k, v in spec["title"].items()}
    elif isinstance(spec.get("title"), str | list):
        spec["title"] = cut(spec["title"], 2 * limit)
    return spec
