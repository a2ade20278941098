"""What a notebook shows, the same way in every report: findings as Markdown, the study's own commentary
(only when the selection is that study), the claims table in display units, and the summary for the index."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
from pathlib import Path

import polars as pl
from IPython.display import Markdown

from . import claims as claims_mod
from . import excerpts, paths, report
from .analysis.result import Finding, Result
from .analysis.selection import Selection
from .units import GiB, KiB, MiB, TiB


def _md(text: str):

    return Markdown(text)


def findings(res: Result):
    """The analysis's findings and what its selection lacks, as Markdown. In a report run (the report folder set,
    see paths.REPORT_DIR_ENV) each number a finding cites links to its raw lines: the excerpt pages beside the
    report (raw/...html), written by the code that writes a chart's. A notebook run by hand (JupyterLab) has no
    report folder beside it, so its findings show without links rather than with links that lead nowhere.
    A sentence is escaped (``escape_html``: no link of its own survives, whatever its labels hold) before its
    numbers are linked, so the excerpt links are the only links a finding holds (reliability-34 input, Low 1: a
    label '[99.9 MB/s](raw/NAME.html)' dressed its text as a cited number)."""
    folder = os.environ.get(paths.REPORT_DIR_ENV)
    writer = excerpts.Excerpts(Path(folder)) if folder else None

    def linked(finding: str) -> str:
        cites = [dataclasses.replace(c, text=escape_html(c.text)) for c in getattr(finding, "cites", ())]
        return excerpts.linked(Finding(escape_html(finding), cites), writer)

    return _md(res.markdown(linked if writer else None, text=escape_html))


_RUN = re.compile(r"`+")
_ITEM = re.compile(r"\n(?=[ \t]*(?:[*+-]|\d+[.)])[ \t]|[ \t]*\n)")  # a new list item or a blank line: a new block


def escape_html(markdown: str) -> str:
    """Markdown whose '<', '>' and '&' outside code spans show as themselves: findings name placeholders
    (data/raw/<study>/) and user labels, which Markdown would otherwise pass on as HTML tags (a browser then
    drops them, or runs them). Inside `code` Markdown shows them as they are already. A code span is what the
    report's Markdown (mistune) takes for one: a run of backticks not after a backslash, closed by the next run of
    exactly its length in the same list item; one holding '<' is written as <code> with its text escaped, so that
    nothing of the text is HTML even where mistune's blocks pair backticks otherwise (reliability-27: a label holding
    backticks, put by 03 inside a code span of its advice, made the old pattern's span three lines long, and the
    labels in the lines between, `<img src=x onerror=...>`, ran in the reader's browser)."""
    return "\n".join(_escape_block(b) for b in _ITEM.split(markdown))


def _escape_block(text: str) -> str:
    out, at, pos = [], 0, 0
    while m := _RUN.search(text, pos):
        n, pos = len(m.group()), m.end()
        if m.start() and text[m.start() - 1] == "\\":  # an escaped backtick (or one that may be): not an opener
            continue
        close = next((c for c in _RUN.finditer(text, pos) if len(c.group()) == n), None)
        if close is None:  # no closing run of its length: the backticks are text
            continue
        out.append(_text(text[at : m.start()]))
        code = text[m.end() : close.start()]
        if "<" in code or _defuse_links(code) != code:  # as HTML, escaped: safe however mistune pairs these
            code = _defuse_links(code.replace("\n", " "))  # Markdown inside an HTML tag is still Markdown
            code = code[1:-1] if code.startswith(" ") and code.endswith(" ") and code.strip() else code
            out.append(f"<code>{_entities(html.escape(code, quote=False)).replace('`', '&#96;')}</code>")
        else:
            out.append(text[m.start() : close.end()])
        at = pos = close.end()
    out.append(_text(text[at:]))
    return "".join(out)


_CLOSER = re.compile(r"\](?=[ \t]*\n?[ \t]*[(:])")  # the end of a link's text, then its destination (or a definition's)
_BARE_URL = re.compile(r"(?i)(?<=https:)/|(?<=http:)/|(?<=www)\.")  # what renderers make a link of by itself
_MARK = "\ue000"  # a ']' to write as '&#93;' once the text is escaped
_SLASH, _DOT = "\ue001", "\ue002"  # a bare URL's '/' and 'www.'s '.', written as entities once the text is escaped


def _text(text: str) -> str:
    """Text outside code spans: '<', '>' and '&' escaped, and no link."""
    return _entities(html.escape(_defuse_links(text), quote=False))


def _entities(text: str) -> str:
    """The ']' of a defused link as an entity: never the end of a link's text (mistune does not always honour an
    escaped '\\]': '[x[L\\](javascript:...)' was still a link); a bare URL's first '/' (and 'www.'s dot) too, so that
    the renderer does not make a link of it."""
    return text.replace(_MARK, "&#93;").replace(_SLASH, "&#47;").replace(_DOT, "&#46;")


def _defuse_links(text: str) -> str:
    """Every Markdown link, image or link definition left as text (its ']' an entity), and bare URLs
    (``https://...``, ``www....``), which the renderer would link by itself, broken with an entity. What this
    escapes holds no link of the project's own (present.findings adds the excerpt links after), so a link in it came
    from a label, a host, a study name or a parameter, and the page's meaning must not depend on it: a label
    '[x](javascript:alert(1))' was a link that ran its script on a click, '![x](https://host/p.png)' a request
    when the report opened (reliability-28 input), '[docs](https://host/x)' or 'https://host/x' a live link to
    elsewhere in the findings (reliability-33 input, Low 1: 477 in a hostile project's pages), and
    '[99.9 MB/s](raw/NAME.html)' a label dressed as a cited number (reliability-34 input, Low 1). A ']' ends a
    link's text even after a backslash (mistune ends '[x[y\\](javascript:...)' there)."""
    marked = _CLOSER.sub(_MARK, text)
    return _BARE_URL.sub(lambda m: _SLASH if m.group() == "/" else _DOT, marked)


def commentary(notebook: str, sel: Selection):
    """papers/<study>/commentary/<notebook>.md when the selection is exactly that study; else nothing. Escaped as
    findings are: a study is a folder name, and one named "x[S](javascript:alert(1))" was a link that ran its script
    in the heading (reliability-29 input); the commentaries hold no HTML, entity or link of their own."""
    if not sel.study:
        return None
    f = paths.PAPERS / sel.study / "commentary" / f"{notebook}.md"
    if not sel.is_study(sel.study) or not f.exists():
        return None
    return _md(
        escape_html(
            f"**About the study {sel.study}** (its own context, from papers/{sel.study}/):\n\n"
            + f.read_text(encoding="utf-8")
        )
    )


def claims_for(notebook: str, sel: Selection, res: Result) -> tuple[pl.DataFrame, str]:
    """The claims of the selection's study for this notebook, checked against the analysis's measures, and a
    sentence saying where they come from (or that the study has none)."""
    if not sel.study:
        return claims_mod.check(claims_mod.load_claims().head(0), res.measures), (
            "No study selected: claims are checked per study (set the parameter study)."
        )
    f = paths.PAPERS / sel.study / "claims.csv"
    if not f.exists():
        return claims_mod.check(claims_mod.load_claims().head(0), res.measures), (
            f"Study {sel.study} has no claims file: to check expected values, add papers/{sel.study}/claims.csv "
            "(one row per value: target file, metric, value, tolerance; see papers/README.md)."
        )
    every = claims_mod.load_claims()
    mine = every.filter((pl.col("study") == sel.study) & (pl.col("notebook") == notebook))
    table = claims_mod.check(mine, res.measures, res.reasons, stated_from=every)
    return table, f"{table.height} claims of papers/{sel.study}/claims.csv checked by this notebook."


def display_parts(value: float | None, unit: str) -> tuple[str, str]:
    """A base-unit value as (number, unit) in the unit a reader expects: MiB/s, GiB, KiB, ms, x, % ...; a stated
    unit's qualifier in parentheses ('% (~)', 'x (12:1)') is left out."""
    if value is None:
        return "", ""
    unit = unit.split(" (")[0].strip()
    if unit == "bytes/s":
        return f"{value / MiB:,.1f}", "MiB/s"
    if unit == "bytes":
        for size, name, digits in ((TiB, "TiB", 2), (GiB / 4, "GiB", 2), (MiB, "MiB", 1), (KiB, "KiB", 1)):
            if abs(value) >= size:
                return f"{value / (GiB if name == 'GiB' else size):,.{digits}f}", name
        return f"{value:,.0f}", "B"
    if unit == "ns":
        return (f"{value / 1e9:,.3f}", "s") if abs(value) >= 1e8 else (f"{value / 1e6:,.3f}", "ms")
    if unit in ("ratio", "x", "fraction"):
        return f"{value:.3g}", "x"
    if unit in ("percent", "%"):
        return f"{value:.3g}", "%"
    if unit == "count":
        return f"{value:,.0f}", ""
    if unit in ("1/s", "/s"):
        return f"{value:,.1f}", "/s"
    return f"{value:.6g}", unit


def display_value(value: float | None, unit: str) -> str:
    """A base-unit value with its display unit: '2,764.8 MiB/s', '124.0 KiB', '14.5 %'."""
    number, shown = display_parts(value, unit)
    return f"{number} {shown}".strip()


def claims_display(table: pl.DataFrame) -> Table:
    """The claims table for reading: stated as written, reproduced in display units with a unit column, basis and
    status."""
    if table.is_empty():
        return Table(
            pl.DataFrame(
                schema={
                    "claim": pl.String,
                    "quantity": pl.String,
                    "stated": pl.String,
                    "reproduced": pl.String,
                    "unit": pl.String,
                    "basis": pl.String,
                    "status": pl.String,
                }
            )
        )
    rows, hrefs = [], []
    folder = os.environ.get(paths.REPORT_DIR_ENV)
    writer = excerpts.Excerpts(Path(folder)) if folder else None  # a report run: values link to their raw lines
    for r in table.iter_rows(named=True):
        number, unit = display_parts(r["reproduced"], r["unit"])
        inputs = json.loads(r.get("raw_lines") or "[]")
        hrefs.append(excerpts.href_of(writer, inputs, "the claim's metric") if writer and number and inputs else None)
        rows.append(
            dict(
                claim=r["claim_id"],
                quantity=r["quantity"],
                stated=r["stated"],
                reproduced=number,
                unit=unit,
                basis={"raw": "raw logs", "arithmetic": "arithmetic", "none": "not checkable"}.get(
                    r["basis"], r["basis"]
                ),
                status=r["status"],
            )
        )
    return Table(pl.DataFrame(rows), {"reproduced": hrefs})


def summary(notebook: str, *, title: str, answers: str, res: Result, claims: pl.DataFrame | None = None):
    """Write the index's summary of this run (verdict, headline, what is missing, claims)."""
    return report.write_summary(
        notebook,
        title=title,
        answers=answers,
        headline=res.headline,
        claims=claims,
        study=res.selection.study or None,
        verdict=res.verdict or None,
        selection=res.selection.describe(),
        missing=res.missing,
        caveats=res.caveats,
    )


class Table:
    """A frame shown as a plain HTML table (strings without quotes, values as given) and as text."""

    def __init__(self, df: pl.DataFrame, hrefs: dict[str, list[str | None]] | None = None):
        self.df = df
        self.hrefs = hrefs or {}  # column -> per row, the link of its cell (an excerpt page) or None

    def _cell(self, column: str, i: int, v) -> str:
        text = "" if v is None else html.escape(str(v))
        href = (self.hrefs.get(column) or [None] * (i + 1))[i]
        return f"<td><a href='{html.escape(href)}'>{text}</a></td>" if href and text else f"<td>{text}</td>"

    def _repr_html_(self) -> str:

        e = html.escape
        head = "".join(f"<th>{e(c)}</th>" for c in self.df.columns)
        rows = "".join(
            "<tr>" + "".join(self._cell(c, i, v) for c, v in zip(self.df.columns, r, strict=True)) + "</tr>"
            for i, r in enumerate(self.df.iter_rows())
        )
        return f"<table class='sl-table'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"

    def __repr__(self) -> str:
        return repr(self.df)


def table(df: pl.DataFrame) -> Table:
    return Table(df)
