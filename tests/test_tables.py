import math

import pandas as pd
import pytest

from mtcue.tables import (
    display_name,
    quality_footnotes,
    quality_table,
    write_quality_table,
    write_table,
)

SIG = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"


def rec(model, direction, bleu, accuracy, split="test"):
    return {
        "kind": "score", "model": model, "direction": direction, "split": split, "bleu": bleu, "study": "demo",
        "bleu_signature": SIG, "phenomena": {"all": {"correct": 0, "incorrect": 0, "ignored": 0,
                                                     "accuracy": accuracy}},
    }


RECORDS = [
    rec("mtcue", "de-en", 20.0, None),
    rec("mtcue", "en-de", 30.5, 0.75),
    rec("base", "en-de", 25.0, 0.5),
    rec("base_pm", "en-de", 26.0, 0.25),
    rec("base", "en-de", 99.0, 0.99, split="valid"),  # other split: left out
]


@pytest.fixture(scope="module")
def table():
    return quality_table(RECORDS)


def test_display_names():
    assert [display_name(m) for m in ("mtcue", "base_pm", "novotney_cue", "tagging")] == [
        "MTCUE", "BASE-PM", "NOVOTNEY-CUE", "TAGGING"]


def test_rows_and_columns_in_paper_order(table):
    assert list(table.index) == ["BASE", "BASE-PM", "MTCUE"]
    assert list(dict.fromkeys(table.columns.get_level_values(0))) == ["en-de", "de-en", "avg"]
    assert list(table["en-de"].columns) == ["BLEU", "phenomena %", "paper BLEU"]


def test_values_and_paper_figures_in_the_right_cells(table):
    assert table.loc["MTCUE", ("en-de", "BLEU")] == 30.5
    assert table.loc["MTCUE", ("en-de", "phenomena %")] == 75.0
    assert table.loc["MTCUE", ("en-de", "paper BLEU")] == 36.02
    assert table.loc["MTCUE", ("de-en", "paper BLEU")] == 40.95
    assert table.loc["BASE", ("en-de", "BLEU")] == 25.0  # not the valid-split record
    assert table.loc["BASE-PM", ("en-de", "paper BLEU")] == 34.36
    assert table.loc["MTCUE", ("avg", "BLEU")] == pytest.approx(25.25)
    assert table.loc["MTCUE", ("avg", "paper BLEU")] == pytest.approx((36.02 + 40.95) / 2)


def test_missing_values_stay_nan(table):
    assert math.isnan(table.loc["BASE", ("de-en", "BLEU")])  # no record
    assert math.isnan(table.loc["MTCUE", ("de-en", "phenomena %")])  # accuracy None
    assert math.isnan(table.loc["BASE", ("avg", "BLEU")])  # a direction missing
    assert table.loc["BASE", ("de-en", "paper BLEU")] == 39.53  # the paper's figure still shown


def test_unknown_model_goes_last_without_paper_figure():
    t = quality_table([rec("mtcue", "en-de", 1.0, None), rec("my_variant", "en-de", 2.0, None)])
    assert list(t.index) == ["MTCUE", "MY-VARIANT"]
    assert math.isnan(t.loc["MY-VARIANT", ("en-de", "paper BLEU")])


def test_custom_paper_csv(tmp_path):
    csv = tmp_path / "paper.csv"
    csv.write_text("model,direction,bleu,comet\nMTCUE,en-de,12.5,0\n")
    t = quality_table([rec("mtcue", "en-de", 1.0, None)], paper_csv=str(csv))
    assert t.loc["MTCUE", ("en-de", "paper BLEU")] == 12.5


def test_duplicate_and_empty_records_are_errors():
    with pytest.raises(ValueError, match="two test score records"):
        quality_table([rec("base", "en-de", 1.0, None), rec("base", "en-de", 2.0, None)])
    with pytest.raises(ValueError, match="no test score records"):
        quality_table([rec("base", "en-de", 1.0, None, split="valid")])


def test_write_table_csv_and_markdown(table, tmp_path):
    csv_path, md_path = tmp_path / "t" / "quality.csv", tmp_path / "t" / "quality.md"
    write_table(table, csv_path, md_path, "Translation quality (demo)", quality_footnotes(RECORDS))

    back = pd.read_csv(csv_path, index_col="model")
    assert back.loc["MTCUE", "en-de BLEU"] == 30.5
    assert back.loc["MTCUE", "en-de paper BLEU"] == 36.02
    assert math.isnan(back.loc["BASE", "de-en BLEU"])
    assert "avg BLEU" in back.columns

    md = md_path.read_text()
    lines = md.splitlines()
    assert lines[0] == "# Translation quality (demo)"
    assert lines[2].startswith("| model | en-de BLEU | en-de phenomena % | en-de paper BLEU | de-en BLEU |")
    assert "| MTCUE | 30.50 | 75.00 | 36.02 | 20.00 | n/a | 40.95 | 25.25 | n/a | 38.48 |" in lines
    assert "| BASE | 25.00 | 50.00 | 33.60 | n/a | n/a | 39.53 | n/a | n/a | 36.56 |" in lines
    assert f"`{SIG}`" in md
    assert "orientation only" in md


def test_write_quality_table_titles_with_the_study(table, tmp_path):
    write_quality_table(table, RECORDS, tmp_path / "q.csv", tmp_path / "q.md")
    md = (tmp_path / "q.md").read_text()
    assert md.startswith("# Translation quality, study demo (cf. MTCue paper, Table 4)\n")
    assert "| MTCUE | 30.50 |" in md and "n/a" in md


def test_phenomena_table_per_phenomenon_and_direction(tmp_path):
    from mtcue.tables import phenomena_table, write_phenomena_table

    def counts(c, i):
        return {"correct": c, "incorrect": i, "ignored": 1, "accuracy": c / (c + i) if c + i else None}

    records = [
        {**rec("mtcue", "en-pl", 30.0, 0.8), "phenomena": {"formality": counts(9, 1), "speaker_gender": counts(3, 1),
                                                           "all": counts(12, 2)}},
        {**rec("base", "en-pl", 25.0, 0.5), "phenomena": {"formality": counts(5, 5), "speaker_gender": counts(0, 0),
                                                          "all": counts(5, 5)}},
    ]
    df = phenomena_table(records)
    assert list(df.index) == ["BASE", "MTCUE"]
    assert df.loc["MTCUE", ("en-pl", "formality %")] == pytest.approx(90.0)
    assert df.loc["MTCUE", ("en-pl", "speaker_gender judged")] == 4
    assert df.loc["BASE", ("en-pl", "formality %")] == pytest.approx(50.0)
    assert math.isnan(df.loc["BASE", ("en-pl", "speaker_gender %")])
    write_phenomena_table(df, records, tmp_path / "p.csv", tmp_path / "p.md")
    md = (tmp_path / "p.md").read_text()
    assert "| MTCUE | 85.71 | 14 | 90.00 | 10 | 75.00 | 4 |" in md
