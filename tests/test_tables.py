import hashlib
import math
import re

import pandas as pd
import pytest

from mtcue.cli import main
from mtcue.evaluation.score import bleu
from mtcue.records import write_record
from mtcue.reporting.kit import display_name, write_table
from mtcue.reporting.quality import (
    context_footnotes,
    quality_footnotes,
    quality_marks,
    quality_table,
    write_quality_table,
)
from mtcue.reporting.table3 import models_table, write_models_table

SIG = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
COMET_MODEL = "Unbabel/wmt20-comet-da"
REFS = [
    "did you see the letter on the table",
    "good evening sir how are you today",
    "the cat sat on the mat with a hat",
    "i do not know what you mean by that",
    "we should leave before the rain starts",
    "she gave him the keys to the old car",
    "nobody told me about the party tonight",
    "please close the door when you leave",
]
# GOOD and NEAR differ in one word of one segment: GOOD beats NEAR only in resamples that draw
# that segment, P(not drawn) = (7/8)^8 = 0.34 > 0.05, so NEAR is indistinguishable from GOOD.
GOOD = [*REFS[:7], "please shut the door when you leave"]
NEAR = [*REFS[:6], "nobody told me about the dinner tonight", "please shut the door when you leave"]
BAD = ["yes", "no way", "a dog ran", "hello there", "what", "maybe later", "okay then", "go"]


def rec(model, direction, hyps, accuracy, split="test"):
    """A score record as `mtcue score` writes it, for hypotheses against REFS."""
    return {
        "kind": "score", "model": model, "direction": direction, "split": split, "study": "demo",
        **bleu(hyps, REFS), "bleu_signature": SIG, "n_segments": len(hyps),
        "phenomena": {"all": {"correct": 0, "incorrect": 0, "ignored": 0, "accuracy": accuracy}},
        "hyp_sha256": hashlib.sha256("\n".join(hyps).encode()).hexdigest(),
        "config_hash": "c0ffee", "git_commit": "abc",
    }


def comet_rec(score, segment_scores, unavailable=None):
    """The COMET record of a score record's hypotheses (x100; None when unavailable)."""
    return {
        "kind": "comet", "model": score["model"], "direction": score["direction"], "split": score["split"],
        "study": "demo", "comet_model": COMET_MODEL, "unavailable": unavailable, "segment_scores": segment_scores,
        "comet": None if segment_scores is None else sum(segment_scores) / len(segment_scores),
        "n_segments": score["n_segments"], "hyp_sha256": score["hyp_sha256"],
        "config_hash": "c0ffee", "git_commit": "abc",
    }


RECORDS = [
    rec("mtcue", "de-en", GOOD, None),
    rec("mtcue", "en-de", GOOD, 0.75),
    rec("base", "en-de", BAD, 0.5),
    rec("base_pm", "en-de", NEAR, 0.25),
    rec("base", "en-de", REFS, 0.99, split="valid"),  # other split: left out
]
MTCUE_DE_EN, MTCUE_EN_DE, BASE_EN_DE, BASE_PM_EN_DE = RECORDS[:4]
# COMET ranks en-de differently: BASE-PM best, MTCUE 0.5 behind on one segment only (tied, as
# above), BASE 30 behind on every segment. MTCUE de-en has no COMET record.
COMETS = [
    comet_rec(BASE_PM_EN_DE, [80.0] * 8),
    comet_rec(MTCUE_EN_DE, [80.0] * 7 + [79.5]),
    comet_rec(BASE_EN_DE, [50.0] * 8),
]


@pytest.fixture(scope="module")
def table():
    return quality_table(RECORDS, COMETS)


def test_display_names():
    assert [display_name(m) for m in ("mtcue", "base_pm", "novotney_cue", "tagging")] == [
        "MTCUE", "BASE-PM", "NOVOTNEY-CUE", "TAGGING"]


def test_rows_and_columns_in_paper_order(table):
    assert list(table.index) == ["BASE", "BASE-PM", "MTCUE"]
    assert list(dict.fromkeys(table.columns.get_level_values(0))) == ["en-de", "de-en", "avg"]
    assert list(table["en-de"].columns) == ["BLEU", "COMET", "phenomena %", "paper BLEU", "paper COMET"]


def test_every_cell_comes_from_its_record_or_the_paper(table):
    by_cell = {(display_name(r["model"]), r["direction"]): r for r in RECORDS if r["split"] == "test"}
    comet = {(display_name(r["model"]), r["direction"]): r["comet"] for r in COMETS}
    for (model, direction), r in by_cell.items():
        assert table.loc[model, (direction, "BLEU")] == r["bleu"]
        accuracy = r["phenomena"]["all"]["accuracy"]
        expected = math.nan if accuracy is None else 100 * accuracy
        assert table.loc[model, (direction, "phenomena %")] == pytest.approx(expected, nan_ok=True)
    assert table.loc["MTCUE", ("en-de", "COMET")] == comet[("MTCUE", "en-de")] == pytest.approx(79.9375)
    assert table.loc["BASE-PM", ("en-de", "COMET")] == 80.0
    assert table.loc["BASE", ("en-de", "COMET")] == 50.0
    assert table.loc["BASE", ("en-de", "BLEU")] == BASE_EN_DE["bleu"] < 10  # not the valid-split record
    assert table.loc["MTCUE", ("en-de", "paper BLEU")] == 36.02
    assert table.loc["MTCUE", ("en-de", "paper COMET")] == 50.91
    assert table.loc["MTCUE", ("de-en", "paper BLEU")] == 40.95
    assert table.loc["BASE-PM", ("en-de", "paper COMET")] == 46.77
    assert table.loc["MTCUE", ("avg", "BLEU")] == pytest.approx((MTCUE_EN_DE["bleu"] + MTCUE_DE_EN["bleu"]) / 2)
    assert table.loc["MTCUE", ("avg", "paper COMET")] == pytest.approx((50.91 + 61.58) / 2)


def test_missing_values_stay_nan(table):
    assert math.isnan(table.loc["BASE", ("de-en", "BLEU")])  # no record
    assert math.isnan(table.loc["MTCUE", ("de-en", "COMET")])  # no COMET record
    assert math.isnan(table.loc["MTCUE", ("avg", "COMET")])  # so no average
    assert math.isnan(table.loc["BASE", ("avg", "BLEU")])  # a direction missing
    assert table.loc["BASE", ("de-en", "paper BLEU")] == 39.53  # the paper's figure still shown


def test_marks_best_tied_and_clear_loser():
    marks = quality_marks(RECORDS, COMETS)
    assert list(marks.columns) == [("en-de", "BLEU"), ("en-de", "COMET"), ("de-en", "BLEU"), ("de-en", "COMET")]
    assert marks[("en-de", "BLEU")].to_dict() == {"BASE": "", "BASE-PM": "tied", "MTCUE": "best"}
    assert marks[("en-de", "COMET")].to_dict() == {"BASE": "", "BASE-PM": "best", "MTCUE": "tied"}
    assert marks[("de-en", "BLEU")].to_dict() == {"BASE": "", "BASE-PM": "", "MTCUE": "best"}  # alone
    assert set(marks[("de-en", "COMET")]) == {""}  # no COMET scores at all


def test_marks_follow_significance_not_the_shown_value():
    # NEAR differs from GOOD on 4 segments: GOOD wins unless none of them is drawn,
    # P = (1/2)^8 < 0.05: distinguishable, so BASE-PM loses its underline.
    far = [*REFS[:4], *[h.replace("the", "a") for h in REFS[4:]]]
    marks = quality_marks([rec("mtcue", "en-de", GOOD, None), rec("base_pm", "en-de", far, None)])
    assert marks[("en-de", "BLEU")].to_dict() == {"BASE-PM": "", "MTCUE": "best"}


def test_comet_unavailable_is_na_with_the_reason_in_a_footnote():
    reason = "COMET model 'Unbabel/wmt20-comet-da' is unavailable: no network"
    comets = [comet_rec(MTCUE_EN_DE, None, reason), comet_rec(BASE_EN_DE, None, reason)]
    records = [MTCUE_EN_DE, BASE_EN_DE]
    t = quality_table(records, comets)
    assert t[("en-de", "COMET")].isna().all()
    assert set(quality_marks(records, comets)[("en-de", "COMET")]) == {""}
    notes = quality_footnotes(records, comets)
    assert f"COMET n/a for all systems: `{COMET_MODEL}`: {reason}" in notes
    assert not any(n.startswith("COMET: model") for n in notes)  # no COMET score to describe
    assert "COMET n/a for all systems: no COMET record" in quality_footnotes(records)


def test_comet_of_other_hypotheses_is_an_error_naming_both_hashes():
    stale = {**comet_rec(MTCUE_EN_DE, [1.0] * 8), "hyp_sha256": "0" * 64}
    with pytest.raises(ValueError) as err:
        quality_table(RECORDS, [stale])
    assert "0" * 64 in str(err.value) and MTCUE_EN_DE["hyp_sha256"] in str(err.value)
    with pytest.raises(ValueError, match="has no score record"):
        quality_table([MTCUE_EN_DE], [comet_rec(BASE_EN_DE, [1.0] * 8)])


def test_unknown_model_goes_last_without_paper_figure():
    t = quality_table([rec("mtcue", "en-de", GOOD, None), rec("my_variant", "en-de", NEAR, None)])
    assert list(t.index) == ["MTCUE", "MY-VARIANT"]
    assert math.isnan(t.loc["MY-VARIANT", ("en-de", "paper BLEU")])


def test_custom_paper_csv(tmp_path):
    csv = tmp_path / "paper.csv"
    csv.write_text("model,direction,bleu,comet\nMTCUE,en-de,12.5,7\n")
    t = quality_table([MTCUE_EN_DE], paper_csv=str(csv))
    assert (t.loc["MTCUE", ("en-de", "paper BLEU")], t.loc["MTCUE", ("en-de", "paper COMET")]) == (12.5, 7.0)


def test_duplicate_and_empty_records_are_errors():
    with pytest.raises(ValueError, match="two test score records"):
        quality_table([rec("base", "en-de", GOOD, None), rec("base", "en-de", BAD, None)])
    with pytest.raises(ValueError, match="no test score records"):
        quality_table([rec("base", "en-de", GOOD, None, split="valid")])


def test_write_table_csv_and_markdown(table, tmp_path):
    csv_path, md_path = tmp_path / "t" / "quality.csv", tmp_path / "t" / "quality.md"
    write_table(table, csv_path, md_path, "Translation quality (demo)", quality_footnotes(RECORDS, COMETS))

    back = pd.read_csv(csv_path, index_col="model")
    assert back.loc["MTCUE", "en-de BLEU"] == pytest.approx(MTCUE_EN_DE["bleu"])
    assert back.loc["MTCUE", "en-de paper BLEU"] == 36.02
    assert math.isnan(back.loc["BASE", "de-en BLEU"])
    assert "avg BLEU" in back.columns

    md = md_path.read_text()
    assert md.splitlines()[0] == "# Translation quality (demo)"
    assert f"`{SIG}`" in md and f"`{COMET_MODEL}`" in md
    assert "orientation only" in md


def f2(x):
    return f"{x:.2f}"


def test_write_quality_table_marks_in_markdown_and_csv(tmp_path):
    write_quality_table(RECORDS, tmp_path / "q.csv", tmp_path / "q.md", COMETS)
    md = (tmp_path / "q.md").read_text()
    blocks = md_blocks(md)
    assert md.splitlines()[0] == "# Translation quality, study demo (cf. MTCue paper, Table 4)"
    assert list(blocks) == ["BLEU", "COMET (x100)", "Context-determined phenomena (accuracy %)"]
    mtcue_avg = (MTCUE_EN_DE["bleu"] + MTCUE_DE_EN["bleu"]) / 2
    assert blocks["BLEU"] == [
        "| model | en-de | de-en | avg |", "| --- | ---: | ---: | ---: |",
        f"| BASE | {f2(BASE_EN_DE['bleu'])} | n/a | n/a |",
        f"| BASE-PM | <u>{f2(BASE_PM_EN_DE['bleu'])}</u> | n/a | n/a |",
        f"| MTCUE | **{f2(MTCUE_EN_DE['bleu'])}** | **{f2(MTCUE_DE_EN['bleu'])}** | {f2(mtcue_avg)} |",
        # The paper's Table 4, same directions, its average over them: (33.60 + 39.53) / 2 = 36.565.
        "*MTCue paper, Table 4:*", "| model | en-de | de-en | avg |", "| --- | ---: | ---: | ---: |",
        "| BASE | 33.60 | 39.53 | 36.56 |", "| BASE-PM | 34.36 | 40.32 | 37.34 |", "| MTCUE | 36.02 | 40.95 | 38.48 |",
    ]
    assert blocks["COMET (x100)"][2:5] == ["| BASE | 50.00 | n/a | n/a |", "| BASE-PM | **80.00** | n/a | n/a |",
                                           "| MTCUE | <u>79.94</u> | n/a | n/a |"]
    assert "| MTCUE | 50.91 | 61.58 | 56.24 |" in blocks["COMET (x100)"]
    # de-en has no phenomenon labels: left out, and the average is over en-de alone; no paper rows.
    assert blocks["Context-determined phenomena (accuracy %)"] == [
        "| model | en-de | avg |", "| --- | ---: | ---: |", "| BASE | 50.00 | 50.00 |", "| BASE-PM | 25.00 | 25.00 |",
        "| MTCUE | 75.00 | 75.00 |", "de-en: the test set has no labels for these phenomena (English marks none).",
    ]
    assert "p > 0.05; 1000 resamples, seed 12345" in md
    assert "COMET n/a for MTCUE de-en: no COMET record" in md

    back = pd.read_csv(tmp_path / "q.csv", index_col="model", keep_default_na=False)
    assert list(back.columns[:7]) == ["en-de BLEU", "en-de BLEU mark", "en-de COMET", "en-de COMET mark",
                                      "en-de phenomena %", "en-de paper BLEU", "en-de paper COMET"]
    assert back["en-de BLEU mark"].to_dict() == {"BASE": "", "BASE-PM": "tied", "MTCUE": "best"}
    assert back["en-de COMET mark"].to_dict() == {"BASE": "", "BASE-PM": "best", "MTCUE": "tied"}
    assert not any(c.startswith("avg") and c.endswith("mark") for c in back.columns)
    assert float(back.loc["MTCUE", "en-de BLEU"]) == pytest.approx(MTCUE_EN_DE["bleu"])
    assert float(back.loc["MTCUE", "avg phenomena %"]) == 75.0

    # The HTML rendering beside the Markdown has the same cells, the paper's rows in their own section.
    tables = html_tables((tmp_path / "q.html").read_text())
    assert len(tables) == 3
    assert tables[0][0] == ["model", "en-de", "de-en", "avg"]
    assert tables[0][3] == ["MTCUE", f2(MTCUE_EN_DE["bleu"]), f2(MTCUE_DE_EN["bleu"]), f2(mtcue_avg)]
    assert tables[0][4] == ["MTCue paper, Table 4"] and tables[0][7] == ["MTCUE", "36.02", "40.95", "38.48"]



def test_quality_table_without_any_phenomenon_label_has_no_phenomena_block(tmp_path):
    # the paper's data (OpenSubtitles) labels no phenomenon: every record's accuracy is None
    unlabelled = [{**r, "phenomena": {}} for r in RECORDS]
    write_quality_table(unlabelled, tmp_path / "q.csv", tmp_path / "q.md", COMETS)
    md = (tmp_path / "q.md").read_text()
    assert list(md_blocks(md)) == ["BLEU", "COMET (x100)"]
    assert "phenomena %:" not in md and "English marks none" not in md
    assert "- avg: mean over the directions shown; n/a where a value is missing." in md

ARCH = {"embed_dim": 128, "heads": 4, "encoder_layers": 2, "encoder_ffn_dim": 256, "decoder_layers": 2,
        "decoder_ffn_dim": 512, "context_layers": 3, "context_ffn_dim": 64}


def train_rec(model, direction, total, wall_s, best_epoch, type_=None, context=None, init_from=None):
    spec = {"model": model, "type": type_ or model, "init_from": init_from, "arch": ARCH, "training": {}, "seed": 1}
    if context is not None:
        spec["context"] = context
    return {
        "kind": "train", "model": model, "direction": direction, "study": "demo", "spec": spec,
        "params": {"total": total, "trainable": total}, "device": "cpu",
        "epochs": [{"epoch": i + 1, "train_loss": 1.0, "valid_loss": 1.0, "wall_s": w} for i, w in enumerate(wall_s)],
        "best_epoch": best_epoch, "best_valid_loss": 1.0, "config_hash": "c0ffee", "git_commit": "abc",
    }


MINILM = {"encoder": "sentence-transformers/all-MiniLM-L6-v2", "pooling": "mean"}
TRAIN = [
    train_rec("mtcue", "en-de", 1_000_000, [10.0, 20.0], 2, context=MINILM, init_from="base"),
    train_rec("mtcue", "de-en", 1_200_000, [30.0], 6, context=MINILM, init_from="base"),
    train_rec("base", "en-de", 2_345_678, [4.0, 5.0, 9.0], 3),
    train_rec("tagging", "en-de", 3_000_000, [7.0], 1, context={"tags_min_count": 2}),
]


def test_models_table_means_and_sds_by_hand():
    df = models_table(TRAIN)
    assert list(df.index) == ["BASE", "TAGGING", "MTCUE"]
    m = df.loc["MTCUE"]
    assert m["directions"] == 2
    assert m["params (M)"] == pytest.approx(1.1)  # (1.0 + 1.2) / 2
    assert m["paper params (M)"] == 105
    # Per direction: en-de (10 + 20) / 2 = 15 s, de-en 30 s -> mean 22.5, sd |30 - 15| / sqrt(2).
    assert m["s/epoch"] == pytest.approx(22.5)
    assert m["s/epoch sd"] == pytest.approx(15 / math.sqrt(2))
    assert (m["epochs to best"], m["epochs to best sd"]) == (4.0, pytest.approx(math.sqrt(8)))
    assert [m[c] for c in ("d_model", "cxt layers", "src layers", "dec layers", "heads", "cxt FFN", "src FFN",
                           "dec FFN")] == [128, 3, 2, 2, 4, 64, 256, 512]
    assert (m["paper GPU h/epoch"], m["paper GPU h/epoch sd"]) == (0.81, 0.39)
    assert (m["paper epochs to best"], m["paper epochs to best sd"]) == (9.38, 4.57)
    assert m["device"] == "cpu"
    b = df.loc["BASE"]
    assert (b["s/epoch"], b["epochs to best"], b["params (M)"]) == (6.0, 3.0, pytest.approx(2.345678))
    assert math.isnan(b["s/epoch sd"]) and math.isnan(b["epochs to best sd"])  # one direction
    assert math.isnan(b["cxt layers"]) and math.isnan(b["paper GPU h/epoch"])
    assert math.isnan(df.loc["TAGGING", "cxt FFN"]) and df.loc["TAGGING", "src FFN"] == 256  # no context encoder


def test_models_table_rejects_architectures_that_differ_between_directions():
    other = train_rec("base", "de-en", 1, [1.0], 1)
    other["spec"] = {**other["spec"], "arch": {**ARCH, "heads": 8}}
    with pytest.raises(ValueError, match="heads differs between directions"):
        models_table([TRAIN[2], other])


def test_write_models_table(tmp_path):
    write_models_table(TRAIN, tmp_path / "m.csv", tmp_path / "m.md")
    md = (tmp_path / "m.md").read_text()
    assert md.startswith("# Model details, study demo (cf. MTCue paper, Table 3)\n")
    header = ("| model | params (M) | d_model | layers cxt/src/dec | heads | FFN cxt/src/dec | time per epoch "
              "| epochs to best | directions |")
    # Ours: as in test_models_table_means_and_sds_by_hand; the paper's: its Table 3 as printed.
    assert md_blocks(md)[""] == [
        header, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        "| BASE | 2.35 | 128 | -/2/2 | 4 | -/256/512 | 6.00 s | 3.00 | 1 |",
        "| TAGGING | 3.00 | 128 | -/2/2 | 4 | -/256/512 | 7.00 s | 1.00 | 1 |",
        "| MTCUE | 1.10 | 128 | 3/2/2 | 4 | 64/256/512 | 22.50 ± 10.61 s | 4.00 ± 2.83 | 2 |",
        "*MTCue paper, Table 3 (A100 80GB GPU hours per epoch; 8 directions):*",
        header, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        "| BASE | 66 | 512 | -/6/6 | 8 | -/2048/2048 | n/a | n/a | 8 |",
        "| TAGGING | 107 | 512 | -/10/6 | 8 | -/4096/2048 | 0.74 ± 0.35 GPU h | 6.13 ± 4.09 | 8 |",
        "| MTCUE | 105 | 512 | 6/6/6 | 8 | 2048/2048/2048 | 0.81 ± 0.39 GPU h | 9.38 ± 4.57 | 8 |",
    ]
    assert "MTCUE starts from BASE's best checkpoint" in md and "(fine-tuning) epochs" in md
    back = pd.read_csv(tmp_path / "m.csv", index_col="model")
    assert back.loc["MTCUE", "s/epoch sd"] == pytest.approx(15 / math.sqrt(2))
    assert back.loc["MTCUE", "paper GPU h/epoch"] == 0.81 and math.isnan(back.loc["BASE", "cxt layers"])


def test_context_footnotes_only_where_the_encoder_differs_from_the_paper():
    notes = context_footnotes(TRAIN)
    assert notes == [
        "MTCUE read sentence-transformers/all-MiniLM-L6-v2 vectors (mean pooling) in all directions; the paper "
        "used all-MiniLM-L12-v2 (en→xx) and paraphrase-multilingual-MiniLM-L12-v2 (xx→en), mean pooling.",
        "MTCUE embedded the non-English context of de-en with sentence-transformers/all-MiniLM-L6-v2, "
        "which is not a multilingual encoder.",
    ]
    as_paper = [
        train_rec("mtcue", "en-de", 1, [1.0], 1, context={"encoder": "sentence-transformers/all-MiniLM-L12-v2",
                                                            "pooling": "mean"}),
        train_rec("mtcue", "de-en", 1, [1.0], 1, context={
            "encoder": "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2", "pooling": "mean"}),
        train_rec("novotney_cue", "en-de", 1, [1.0], 1,
                  context={"encoder": "distilbert-base-uncased", "pooling": "cls"}),
        train_rec("novotney_cue", "en-pl", 1, [1.0], 1, context=MINILM),
        train_rec("novotney_cue", "de-en", 1, [1.0], 1),  # an older record without `context`
    ]
    assert context_footnotes(as_paper) == [
        "NOVOTNEY-CUE read sentence-transformers/all-MiniLM-L6-v2 vectors (mean pooling) in en-pl; "
        "the paper used DistilBERT (CLS, 768-d; a multilingual DistilBERT for xx→en).",
        "NOVOTNEY-CUE: the training records of de-en do not name the context encoder.",
    ]


def test_quality_footnotes_name_the_encoders_of_the_models_in_the_table():
    elsewhere = train_rec("novotney_cue", "en-fr", 1, [1.0], 1, context=MINILM)
    notes = quality_footnotes(RECORDS, COMETS, [*TRAIN, elsewhere])
    assert notes[-2:] == context_footnotes(TRAIN)  # the en-fr model is not in the table


def test_cli_tables(tmp_path):
    def write_all(records, folder):
        return [str(write_record(tmp_path / folder / f"{i}.json", r)) for i, r in enumerate(records)]

    scores, comets, train = write_all(RECORDS, "score"), write_all(COMETS, "comet"), write_all(TRAIN, "train")
    out = tmp_path / "out"
    assert main(["table", "--records", *scores, "--comet-records", *comets, "--train-records", *train,
                 "--csv", str(out / "q.csv"), "--md", str(out / "q.md"), "--html", str(out / "q.html")]) == 0
    assert "<u>79.94</u>" in (out / "q.md").read_text()
    assert "not a multilingual encoder" in (out / "q.md").read_text()
    assert main(["table", "--kind", "models", "--records", *train, "--csv", str(out / "m.csv"),
                 "--md", str(out / "m.md"), "--html", str(out / "m.html")]) == 0
    assert "22.50 ± 10.61" in (out / "m.md").read_text()
    assert main(["table", "--kind", "phenomena", "--records", *scores, "--csv", str(out / "p.csv"),
                 "--md", str(out / "p.md"), "--html", str(out / "p.html")]) == 0
    # Without COMET and train records the quality table still builds, COMET n/a.
    assert main(["table", "--records", *scores, "--csv", str(out / "q2.csv"), "--md", str(out / "q2.md"),
                 "--html", str(out / "q2.html")]) == 0
    assert "COMET n/a for all systems: no COMET record" in (out / "q2.md").read_text()


def test_phenomena_table_per_phenomenon_and_direction(tmp_path):
    from mtcue.reporting.phenomena import phenomena_table, write_phenomena_table

    def counts(c, i):
        return {"correct": c, "incorrect": i, "ignored": 1, "accuracy": c / (c + i) if c + i else None}

    records = [
        {**rec("mtcue", "en-pl", GOOD, 0.8), "phenomena": {"formality": counts(9, 1), "speaker_gender": counts(3, 1),
                                                           "all": counts(12, 2)}},
        {**rec("base", "en-pl", BAD, 0.5), "phenomena": {"formality": counts(5, 5), "speaker_gender": counts(0, 0),
                                                         "all": counts(5, 5)}},
    ]
    df = phenomena_table(records)
    assert list(df.index) == ["BASE", "MTCUE"]
    assert df.loc["MTCUE", ("en-pl", "formality %")] == pytest.approx(90.0)
    assert df.loc["MTCUE", ("en-pl", "speaker_gender judged")] == 4
    assert df.loc["BASE", ("en-pl", "formality %")] == pytest.approx(50.0)
    assert math.isnan(df.loc["BASE", ("en-pl", "speaker_gender %")])
    write_phenomena_table(df, records, tmp_path / "p.csv", tmp_path / "p.md")
    blocks = md_blocks((tmp_path / "p.md").read_text())
    # One block per phenomenon, pooled first: accuracy (judged); 12 / 14 = 85.71%.
    assert list(blocks) == ["all phenomena, pooled", "formality", "speaker gender"]
    assert blocks["all phenomena, pooled"] == ["| model | en-pl |", "| --- | ---: |", "| BASE | 50.00 (10) |",
                                               "| MTCUE | 85.71 (14) |"]
    assert blocks["speaker gender"][2:] == ["| BASE | n/a (0) |", "| MTCUE | 75.00 (4) |"]
    back = pd.read_csv(tmp_path / "p.csv", index_col="model")
    assert back.loc["MTCUE", "en-pl formality judged"] == 10


def test_each_table_row_names_its_mlflow_runs_from_its_records(tmp_path):
    """No sync needed: each number names its run `{direction}/{model}` (the name the sync gives it in the
    study's experiment) and its HTML links to the study's MLflow page at that name, which goes on to the run."""
    from mtcue.reporting.kit import Runs

    tables = tmp_path / "results" / "tables"
    runs = Runs.of_records([*RECORDS, *COMETS], tables / "q.html")
    write_quality_table(RECORDS, tables / "q.csv", tables / "q.md", COMETS, runs=runs)
    quality = pd.read_csv(tables / "q.csv", index_col="model")
    assert quality.loc["BASE-PM", "en-de run"] == "en-de/base_pm"
    assert quality.loc["MTCUE", "de-en run"] == "de-en/mtcue"
    assert pd.isna(quality.loc["BASE-PM", "de-en run"])          # no de-en record for BASE-PM
    assert "avg run" not in quality.columns
    study = RECORDS[0]["study"]
    page_link = f"../mlflow/{study}.html"  # results/tables/ to results/mlflow/
    assert (f"MLflow: experiment `{study}`, one run per model and direction, named `{{direction}}/{{model}}` (the "
            f"CSV's `run` columns). Each number links to its run through the study's MLflow page (`{page_link}`)"
            ) in (tables / "q.md").read_text()
    page = (tables / "q.html").read_text()
    linked = re.findall(r'<td><a href="([^"#]+)#([^"]+)">(.*?)</a></td>', page)
    assert {href for href, _run, _cell in linked} == {page_link}
    first = {}
    for _href, run, cell in linked:
        first.setdefault(run, re.sub("<[^>]+>", "", cell))
    # every record's cells, and no others; the averages over directions link to the model's line of runs
    assert set(first) == {f"{r['direction']}/{r['model']}" for r in RECORDS} | {r["model"] for r in RECORDS}
    assert first["en-de/mtcue"] == f"{quality.loc['MTCUE', 'en-de BLEU']:.2f}"  # the first block: BLEU
    assert "#" not in page.split('<tbody class="paper">')[1].split("</tbody>")[0]  # the paper's rows link nowhere
    write_models_table(TRAIN, tmp_path / "m.csv", tmp_path / "m.md", runs=Runs.of_records(TRAIN))
    models = pd.read_csv(tmp_path / "m.csv", index_col="model")
    assert models.loc["MTCUE", "run"] == "en-de/mtcue de-en/mtcue"
    assert models.loc["BASE", "run"] == " ".join(f"{r['direction']}/base" for r in TRAIN if r["model"] == "base")
    assert "<a " not in (tmp_path / "m.html").read_text()  # no HTML path given: names, no links


def md_blocks(md: str) -> dict[str, list[str]]:
    """{"## heading" text ("" before the first): its non-empty lines} of a table's Markdown, up to the footnotes."""
    blocks: dict[str, list[str]] = {}
    heading = ""
    for line in md.splitlines()[1:]:
        if line.startswith("- "):
            break
        if line.startswith("## "):
            heading = line[3:]
        elif line:
            blocks.setdefault(heading, []).append(line)
    return blocks


def html_tables(page: str) -> list[list[list[str]]]:
    """The text of each cell, row by row, of each <table> of a page (parsed by the standard library)."""
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tables, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.tables.append([])
            elif tag == "tr":
                self.tables[-1].append([])
            elif tag in ("td", "th"):
                self.cell = ""

        def handle_endtag(self, tag):
            if tag in ("td", "th"):
                self.tables[-1][-1].append(self.cell)
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

    parser = Cells()
    parser.feed(page)
    return parser.tables


def test_the_papers_printed_base_average_is_set_beside_its_rows_mean(tmp_path):
    """The paper's Table 4 prints BASE's average as 34.65; its rows, 33.60 + 34.54 + 28.08 + 31.37 + 39.53 + 35.46
    + 34.42 + 39.37 = 276.37 over 8, average 34.55; its "+1.51" is MTCUE's printed 36.16 minus 34.65."""
    write_quality_table(RECORDS, tmp_path / "q.csv", tmp_path / "q.md", COMETS)
    assert ("The paper prints BASE's average BLEU as 34.65; its eight directions average 34.55 (the avg of its rows "
            'here, with every direction shown), so its "+1.51 BLEU over BASE" for MTCUE (36.16) is +1.51 against the '
            "printed average and +1.62 against the directions' mean.") in (tmp_path / "q.md").read_text()


def test_each_table_rule_runs_a_step_registered_from_the_registry(capsys):
    """reporting/cli.py registers the steps the registered tables declare (`Table.step`): each table rule's command
    names one, and `mtcue <step>` takes the options each of its `Option`s declares."""
    from mtcue.plan import EXPERIMENTS

    tables = [table for experiment in EXPERIMENTS.values() for table in experiment.tables]
    steps = {table.step.name: table.step for table in tables if table.step}
    assert {table.command.split()[1] for table in tables} == set(steps)
    for name, step in steps.items():
        with pytest.raises(SystemExit) as done:
            main([name, "--help"])
        assert done.value.code == 0
        usage = capsys.readouterr().out
        assert all(option.flag in usage for option in step.options), name
