"""How a table reads: blocks of display strings, rendered as Markdown and as a self-contained
HTML page (what the Snakemake report shows).

A table is laid out as the paper lays out its own: one block per metric, models as rows,
directions as columns, and the paper's figures in rows below ours (same columns). Cells, notes
and footnotes may use a small inline markup that both renderers understand: `**bold**`,
`<u>underlined</u>` and `` `code` ``; anything else is text (escaped in HTML).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Block:
    """One table: `display` holds the cells as strings (index: row names), `paper` the paper's
    rows for the same columns (None: the paper has none), `paper_label` says where they are from;
    `note` is a sentence under the table."""

    heading: str
    display: pd.DataFrame
    paper: pd.DataFrame | None = None
    paper_label: str = ""
    note: str = ""
    links: pd.DataFrame | None = None  # per cell of `display`, the address its HTML links to (None: none)


@dataclass(frozen=True)
class Layout:
    title: str
    blocks: Sequence[Block]
    footnotes: Sequence[str] = ()


def flat_columns(columns: pd.Index) -> list[str]:
    """Column labels as one string each: ("en-de", "BLEU") -> "en-de BLEU", ("", "n_seeds") -> "n_seeds"
    (the CSV's column names)."""
    return [" ".join(p for p in c if p) if isinstance(c, tuple) else str(c) for c in columns]


def _header(display: pd.DataFrame) -> list[str]:
    return [display.index.name or "", *flat_columns(display.columns)]


def _rows(display: pd.DataFrame) -> Iterable[list[str]]:
    return ([str(name), *map(str, values)] for name, values in zip(display.index, display.itertuples(index=False)))


def markdown_table(display: pd.DataFrame) -> list[str]:
    """The lines of a GitHub Markdown table (no tabulate dependency), index first, numbers right-aligned."""
    def row(cells: Iterable[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [row(_header(display)), row(["---", *["---:"] * display.shape[1]]), *map(row, _rows(display))]


def render_markdown(layout: Layout) -> str:
    lines = [f"# {layout.title}"]
    for block in layout.blocks:
        lines += ["", f"## {block.heading}"] if block.heading else []
        lines += ["", *markdown_table(block.display)]
        if block.paper is not None:
            lines += ["", f"*{block.paper_label}:*", "", *markdown_table(block.paper)]
        lines += ["", block.note] if block.note else []
    lines += ["", *[f"- {note}" for note in layout.footnotes]] if layout.footnotes else []
    return "\n".join(lines) + "\n"


_MARKUP = ((re.compile(r"\*\*(.+?)\*\*"), r"<b>\1</b>"), (re.compile(r"`(.+?)`"), r"<code>\1</code>"),
           (re.compile(r"&lt;u&gt;(.+?)&lt;/u&gt;"), r"<u>\1</u>"))


def inline_html(text: str) -> str:
    """Escaped text with the inline markup (bold, underline, code) as HTML."""
    out = html.escape(text, quote=False)
    for pattern, replacement in _MARKUP:
        out = pattern.sub(replacement, out)
    return out


def _html_rows(display: pd.DataFrame, css: str = "", links: pd.DataFrame | None = None) -> list[str]:
    cls = f' class="{css}"' if css else ""
    hrefs = links.to_numpy().tolist() if links is not None else [[None] * display.shape[1]] * len(display)

    def cell(text: str, href: str | None) -> str:
        return f'<td><a href="{html.escape(href)}">{inline_html(text)}</a></td>' if href else \
            f"<td>{inline_html(text)}</td>"

    return [f"<tr{cls}><th>{inline_html(name)}</th>" + "".join(cell(c, h) for c, h in zip(cells, row)) + "</tr>"
            for (name, *cells), row in zip(_rows(display), hrefs)]


def html_table(block: Block) -> list[str]:
    head = "".join(f"<th>{inline_html(h)}</th>" for h in _header(block.display))
    lines = ["<table>", f"<thead><tr>{head}</tr></thead>", "<tbody>", *_html_rows(block.display, links=block.links),
             "</tbody>"]
    if block.paper is not None:
        span = block.display.shape[1] + 1
        lines += ['<tbody class="paper">', f'<tr><th colspan="{span}">{inline_html(block.paper_label)}</th></tr>',
                  *_html_rows(block.paper), "</tbody>"]
    return [*lines, "</table>"]


STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.2em; color: #222;
       font-size: 14px; line-height: 1.4; }
h1 { font-size: 1.3em; margin: 0 0 0.6em; }
h2 { font-size: 1.1em; margin: 1.4em 0 0.4em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #ddd; white-space: nowrap; }
thead th { border-bottom: 2px solid #888; text-align: right; }
thead th:first-child, tbody th { text-align: left; }
td { text-align: right; }
/* a number's link to its run is coloured, never underlined: an underline marks "indistinguishable from the best" */
td a { color: #1a4f8b; text-decoration: none; }
td a:hover { text-decoration: underline dotted; }
tbody.paper th[colspan] { text-align: left; font-weight: normal; font-style: italic; color: #555;
                          border-bottom: 1px solid #aaa; padding-top: 0.6em; }
tbody.paper tr > * { color: #666; }
p.note { margin: 0.4em 0; max-width: 60em; }
ul.footnotes { margin-top: 1.6em; padding-left: 1.2em; max-width: 60em; color: #444; font-size: 0.92em; }
code { font-size: 0.92em; word-break: break-all; }
"""


def render_html(layout: Layout) -> str:
    """A self-contained HTML page (inline CSS, no scripts): the report shows it as it is."""
    lines = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             f"<title>{html.escape(layout.title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
             f"<h1>{inline_html(layout.title)}</h1>"]
    for block in layout.blocks:
        lines += [f"<h2>{inline_html(block.heading)}</h2>"] if block.heading else []
        lines += html_table(block)
        lines += [f'<p class="note">{inline_html(block.note)}</p>'] if block.note else []
    if layout.footnotes:
        lines += ['<ul class="footnotes">', *(f"<li>{inline_html(n)}</li>" for n in layout.footnotes), "</ul>"]
    return "\n".join([*lines, "</body>", "</html>"]) + "\n"
