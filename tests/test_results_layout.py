"""The results layout (mtcue.layout): the paths the rules, the Translator and the MLflow copy of a model
all read, written out by hand."""
from pathlib import Path

import pytest

from mtcue import layout


def test_a_models_files_and_its_directions_data():
    assert layout.model_dir("en-de", "mtcue") == Path("results/models/en-de/mtcue")
    assert layout.checkpoint("en-de", "mtcue") == Path("results/models/en-de/mtcue/checkpoint_best.pt")
    assert layout.train_record("en-de", "mtcue") == Path("results/records/train/en-de/mtcue.json")
    assert layout.spm_model("de-en") == Path("results/spm/de-en.model")
    assert layout.bin_dir("de-en") == Path("results/bin/de-en")
    assert layout.clean_corpus("en-pl", "valid") == Path("results/clean/en-pl/valid.jsonl")
    assert layout.checkpoint("en-de", "base", Path("/s/results")) == Path("/s/results/models/en-de/base/checkpoint_best.pt")


def test_each_artefact_of_a_trained_model_and_of_the_study():
    assert layout.hyps("en-de", "mtcue", "test") == Path("results/hyps/en-de/mtcue.test.txt")
    assert layout.record("score", "en-de", "mtcue", "test") == Path("results/records/score/en-de/mtcue.test.json")
    assert layout.record("formality", "en-de", "mtcue") == Path("results/records/formality/en-de/mtcue.json")
    assert layout.record("train", "en-de", "mtcue") == layout.train_record("en-de", "mtcue")
    assert layout.table_files("voita2018") == [Path("results/tables/voita2018.csv"), Path("results/tables/voita2018.md"),
                                               Path("results/tables/voita2018.html")]
    assert layout.figure("style_levels", "svg") == Path("results/figures/style_levels.svg")
    assert layout.log("train", "en-de.base") == Path("results/logs/train/en-de.base.log")
    assert layout.log("comet_model") == Path("results/logs/comet_model.log")
    assert layout.benchmark("tables", "voita2018") == Path("results/benchmarks/tables/voita2018.tsv")
    assert layout.hyps("en-pl", "tagging", "test", "eamt22") == Path("results/hyps/eamt22/en-pl/tagging.test.txt")
    assert layout.hyps_dir("formality", "en-de", "mtcue") == Path("results/hyps/formality/en-de/mtcue")
    assert layout.evalset("iwslt22_valid", "en-de") == Path("results/eval/iwslt22_valid/en-de")
    assert layout.suite("en-de", "synthetic") == Path("results/eval/contrastive/en-de/synthetic.jsonl")
    assert layout.resume_dir("en-de", "mtcue") == Path("results/checkpoints/en-de/mtcue")
    assert layout.record_run(layout.record("contrastive", "en-de", "mtcue", "synthetic")) == ("en-de", "mtcue")
    assert layout.study_record("data", "en-de") == Path("results/records/data/en-de.json")
    assert layout.record_run(layout.study_record("data", "en-de")) is None


def test_wildcard_placeholders_give_a_rules_pattern():
    """A rule's output is the same function called with its wildcards' placeholders."""
    assert str(layout.hyps("{direction}", "{model}", "{split}")) == "results/hyps/{direction}/{model}.{split}.txt"
    assert str(layout.record("score", "{direction}", "{model}", "{split}")) == \
        "results/records/score/{direction}/{model}.{split}.json"
    assert str(layout.log("translate", "{direction}.{model}.{split}")) == \
        "results/logs/translate/{direction}.{model}.{split}.log"


def test_each_kind_of_store():
    assert layout.store_dir("vectors", "en-de", "minilm.mean") == Path("results/embed/en-de/minilm.mean")
    assert layout.store_dir("tokens", "en-de") == Path("results/tokens/en-de")
    assert layout.store_dir("tags", "en-de") == Path("results/tags/en-de")
    assert layout.store_dir("labels", "en-de") == Path("results/labels/en-de")
    assert layout.store_dir("style", "en-ja") == Path("results/style/en-ja")
    assert layout.store_dir("fewshot", "en-pl", "tagging_fewshot_a") == Path("results/fewshot/en-pl/tagging_fewshot_a")
    with pytest.raises(ValueError, match="unknown store kind 'embed': one of vectors, tokens, tags"):
        layout.store_dir("embed", "en-de")


def test_a_trained_model_reads_a_tag_store_only_of_tags_or_labels():
    files = {"checkpoint": Path("results/models/en-de/tagging/checkpoint_best.pt"),
             "record": Path("results/records/train/en-de/tagging.json"),
             "spm": Path("results/spm/en-de.model"), "data": Path("results/bin/en-de")}
    assert layout.model_files("en-de", "tagging", "tags") == {**files, "tags": Path("results/tags/en-de")}
    assert layout.model_files("en-de", "tagging", "labels")["tags"] == Path("results/labels/en-de")
    for kind in (None, "vectors", "tokens"):
        assert "tags" not in layout.model_files("en-de", "tagging", kind)


def test_a_model_folder_names_its_study_direction_and_model():
    assert layout.model_at("/s/results/models/en-de/mtcue") == (Path("/s/results"), "en-de", "mtcue")
    assert layout.model_at(layout.model_dir("de-en", "base")) == (Path("results"), "de-en", "base")
    with pytest.raises(ValueError, match=r"mtcue: not a trained model's folder \(results/models/\{direction\}/\{model\}/\)"):
        layout.model_at("/mtcue")


def test_a_folder_without_a_model_is_answered_with_the_studys_trained_models(tmp_path):
    from mtcue.models.translator import TrainedModel

    for direction, model in (("en-de", "mtcue"), ("en-de", "base"), ("de-en", "base")):
        layout.checkpoint(direction, model, tmp_path / "results").parent.mkdir(parents=True)
        layout.checkpoint(direction, model, tmp_path / "results").touch()
    layout.model_dir("en-fr", "base", tmp_path / "results").mkdir(parents=True)  # a folder, but never trained
    with pytest.raises(FileNotFoundError) as missing:
        TrainedModel.find(tmp_path / "results" / "models" / "en-ja" / "mtcue")
    assert str(missing.value).endswith(f"en-ja/mtcue: no checkpoint_best.pt: not a trained model's folder "
                                       "(results/models/{direction}/{model}/, written by the train step); the study "
                                       f"in {tmp_path / 'results'} has trained de-en: base; en-de: base, mtcue")
