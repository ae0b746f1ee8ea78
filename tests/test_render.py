"""Table layouts rendered as Markdown and as a self-contained HTML page."""
import pandas as pd

from mtcue.reporting.render import Block, Layout, inline_html, render_html, render_markdown
from test_tables import html_tables


def frame(rows: dict[str, list[str]], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("model")


OURS = frame({"BASE": ["1.00", "2.00"], "MTCUE": ["**3.00**", "<u>4.00</u>"]}, ["en-de", "avg"])
PAPER = frame({"BASE": ["33.60", "33.60"], "MTCUE": ["36.02", "36.02"]}, ["en-de", "avg"])
LAYOUT = Layout("Quality | demo", [Block("BLEU", OURS, PAPER, "paper, Table 4", "A note."),
                                   Block("COMET", OURS.iloc[:1])], ["`sig|x` and a <b>raw</b> tag"])


def test_markdown_has_one_section_per_block_and_the_paper_rows_below():
    assert render_markdown(LAYOUT) == "\n".join([
        "# Quality | demo", "",
        "## BLEU", "",
        "| model | en-de | avg |", "| --- | ---: | ---: |", "| BASE | 1.00 | 2.00 |", "| MTCUE | **3.00** | <u>4.00</u> |",
        "", "*paper, Table 4:*", "",
        "| model | en-de | avg |", "| --- | ---: | ---: |", "| BASE | 33.60 | 33.60 |", "| MTCUE | 36.02 | 36.02 |",
        "", "A note.", "",
        "## COMET", "",
        "| model | en-de | avg |", "| --- | ---: | ---: |", "| BASE | 1.00 | 2.00 |",
        "", "- `sig|x` and a <b>raw</b> tag",
    ]) + "\n"


def test_inline_markup_becomes_html_and_everything_else_is_escaped():
    assert inline_html("**3.00**") == "<b>3.00</b>"
    assert inline_html("<u>4.00</u>") == "<u>4.00</u>"
    assert inline_html("`a|b` & <script>x</script>") == "<code>a|b</code> &amp; &lt;script&gt;x&lt;/script&gt;"


def test_html_page_is_self_contained_with_the_same_cells():
    page = render_html(LAYOUT)
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "<script" not in page and "http" not in page  # nothing to fetch: the report embeds it as is
    tables = html_tables(page)
    assert tables[0] == [["model", "en-de", "avg"], ["BASE", "1.00", "2.00"], ["MTCUE", "3.00", "4.00"],
                         ["paper, Table 4"], ["BASE", "33.60", "33.60"], ["MTCUE", "36.02", "36.02"]]
    assert tables[1] == [["model", "en-de", "avg"], ["BASE", "1.00", "2.00"]]
    assert '<tbody class="paper">\n<tr><th colspan="3">paper, Table 4</th></tr>' in page
    assert "<td><b>3.00</b></td><td><u>4.00</u></td>" in page
    assert "<h1>Quality | demo</h1>" in page and "<li><code>sig|x</code> and a &lt;b&gt;raw&lt;/b&gt; tag</li>" in page
