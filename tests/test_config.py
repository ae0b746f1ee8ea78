import pytest
import yaml

from conftest import REPO
from mtcue import config as cfg
from mtcue.models.fairseq_args import task_args
from mtcue.experiments.ablation.plan import ABLATION
from mtcue.plan.experiments import experiment_models
from mtcue.experiments.fewshot.plan import FEWSHOT
from mtcue.experiments.formality.plan import FORMALITY
from mtcue.plan.models import all_models, model_columns, model_spec
from mtcue.study import CONTEXT_KIND, CORPUS_PAIRS, pair_of, pairs, store_columns, store_name


def demo():
    return cfg.load(REPO / "config" / "config.yaml")


def test_shipped_configs_validate_and_fill_defaults():
    c = demo()
    assert c["evaluation"]["split"] == "test"            # default from the schema
    assert c["models"]["mtcue"]["arch"]["context_layers"] == 2
    assert c["models"]["base"]["training"] == {}         # overrides get no defaults of their own
    paper = cfg.load(REPO / "config" / "paper.yaml")
    assert len(paper["directions"]) == 8
    assert pairs(paper) == ["en-de", "en-fr", "en-pl", "en-ru"]


def test_diagnosis_overlays_change_only_what_they_name():
    """docs/study.md's diagnosis runs: each overlay, given after the demo's config, is a valid study that
    differs from the demo only in the training length or the training corpus it names (the rest kept)."""
    changed = {"fewshot_30_epochs.yaml": (("experiments", "fewshot", "training"), {"max_epoch": 30, "patience": 30}),
               "mtcue_36_epochs.yaml": (("models", "mtcue", "training"), {"max_epoch": 36, "patience": 36}),
               "corpus_4x.yaml": (("corpus", "docs"), {"train": 1600})}
    assert sorted(p.name for p in (REPO / "config" / "diagnosis").glob("*.yaml")) == sorted(changed)
    for name, (keys, values) in changed.items():
        base = demo()
        merged = cfg.load_files([REPO / "config" / "config.yaml", REPO / "config" / "diagnosis" / name])
        node, expected = merged, base
        for key in keys[:-1]:
            node, expected = node[key], expected[key]
        assert node[keys[-1]] == {**expected[keys[-1]], **values}
        node.pop(keys[-1]), expected.pop(keys[-1])
        assert merged == base


@pytest.mark.parametrize("mutate, where", [
    (lambda c: c.update(unknown_key=1), "(top level)"),
    (lambda c: c["training"].update(lr="fast"), "training.lr"),
    (lambda c: c["models"]["mtcue"]["arch"].update(context_layrs=3), "models.mtcue.arch"),
    (lambda c: c["models"]["mtcue"]["training"].update(patience=0), "models.mtcue.training.patience"),
    (lambda c: c.update(directions=["en-xx1"]), "directions.0"),
])
def test_schema_rejects_wrong_keys_and_types_naming_the_key(mutate, where):
    raw = demo()
    mutate(raw)
    with pytest.raises(cfg.ConfigError) as err:
        cfg.validate(raw)
    assert where in str(err.value)


def test_semantic_errors():
    raw = demo()
    raw["directions"] = ["de-fr"]
    with pytest.raises(cfg.ConfigError, match="from or into English"):
        cfg.validate(raw)
    raw = demo()
    raw["directions"] = ["en-de", "en-es", "xx-en"]
    with pytest.raises(cfg.ConfigError, match=r"directions: \['en-es', 'xx-en'\] need language pairs that "
                                              r"corpus.source 'synthetic' cannot provide \(it provides en-de, "
                                              r"en-fr, en-pl, en-ru, in either direction\)"):
        cfg.validate(raw)
    raw = demo()
    raw["models"]["mtcue"]["init_from"] = "nope"
    with pytest.raises(cfg.ConfigError, match="models.mtcue.init_from"):
        cfg.validate(raw)
    raw = demo()
    raw["models"]["base"]["init_from"] = "mtcue"
    with pytest.raises(cfg.ConfigError, match="cycle"):
        cfg.validate(raw)


def test_model_spec_merges_overrides_over_shared_training():
    spec = model_spec(demo(), "mtcue", "en-de")
    assert spec["training"]["lr"] == 0.0015         # model override
    assert spec["training"]["dropout"] == 0.1       # shared setting
    assert spec["init_from"] == "base"
    with pytest.raises(cfg.ConfigError, match="no model named 'x'"):
        model_spec(demo(), "x", "en-de")


def test_model_spec_names_the_context_each_model_reads():
    paper = cfg.load(REPO / "config" / "paper.yaml")
    mtcue_en, mtcue_de = (model_spec(paper, "mtcue", d)["context"] for d in ("en-de", "de-en"))
    assert mtcue_en["encoder"] == "sentence-transformers/all-MiniLM-L12-v2" and mtcue_en["pooling"] == "mean"
    assert mtcue_de["encoder"] == "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
    novotney_en, novotney_de = (model_spec(paper, "novotney_cue", d)["context"] for d in ("en-de", "de-en"))
    assert (novotney_en["encoder"], novotney_en["pooling"]) == ("distilbert-base-uncased", "cls")  # the model's own
    assert novotney_de["encoder"] == "distilbert-base-multilingual-cased"  # German documents: multilingual
    assert model_spec(paper, "tagging", "en-de")["context"]["tags_min_docs"] == 1  # every training value a tag (§3.3)
    assert "context" not in model_spec(paper, "base_pm", "en-de")
    assert store_name(mtcue_de) == "sentence-transformers--paraphrase-multilingual-MiniLM-L12-v2.mean"
    # one store for the models that read the same vectors
    demo_cfg = cfg.validate(demo())
    assert store_name(model_spec(demo_cfg, "mtcue", "en-de")["context"]) == \
        store_name(model_spec(demo_cfg, "novotney_cue", "en-de")["context"]) == "all-MiniLM-L6-v2.mean"


def test_model_types_are_defined_once():
    from mtcue.models.fairseq_args import FAIRSEQ_ARCH

    enum = cfg.schema()["$defs"]["model"]["properties"]["type"]["enum"]
    assert set(enum) == set(CONTEXT_KIND) == set(FAIRSEQ_ARCH)


def test_a_context_encoder_on_a_model_without_vectors_is_refused():
    raw = demo()
    raw["models"]["tagging"]["context_encoder"] = "all-MiniLM-L6-v2"
    with pytest.raises(cfg.ConfigError, match="models.tagging.context_encoder"):
        cfg.validate(raw)


def test_derived_names():
    assert pair_of("de-en") == "en-de" and pair_of("en-pl") == "en-pl"
    columns = store_columns(demo())
    assert columns[:6] == [f"doc{i}" for i in range(6)]
    assert columns[6:12] == ["genre", "pg_rating", "writers", "year", "country", "plot"]
    assert columns[12:] == ["cue1", "cue2", "cue3"]


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(cfg.ConfigError, match="not found"):
        cfg.load(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("study: [unclosed\n")
    with pytest.raises(cfg.ConfigError, match="bad.yaml: not valid YAML"):
        cfg.load(bad)


def test_context_columns_select_groups_and_names_in_store_order():
    raw = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    raw["context"]["columns"] = ["metadata", "doc"]
    raw["models"]["mtcue"]["context_columns"] = ["cue2", "doc0", "genre"]
    c = cfg.validate(raw)
    assert model_columns(c, "novotney_cue") == [f"doc{i}" for i in range(6)] + list(c["context"]["metadata"])
    assert model_spec(c, "mtcue", "en-de")["context"]["columns"] == ["doc0", "genre", "cue2"]
    args = task_args(model_spec(c, "mtcue", "en-de"), "en-de", "bin", "store")
    assert args[args.index("--context-columns") + 1] == "doc0,genre,cue2"


@pytest.mark.parametrize("selection, message", [
    (["doc", "speaker"], r"\['speaker'\] are neither column groups nor store columns"),
    (["doc0", "doc2"], "must run from doc0 without gaps"),
])
def test_context_columns_that_cannot_be_read_are_errors(selection, message):
    raw = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    raw["models"]["mtcue"]["context_columns"] = selection
    with pytest.raises(cfg.ConfigError, match=r"models\.mtcue\.context_columns: .*" + message):
        cfg.validate(raw)


def test_experiments_name_known_models():
    c = demo()
    assert experiment_models(c)["quality"] == ["base", "base_pm", "tagging", "novotney_cue", "mtcue"]
    raw = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    raw["experiments"]["quality"]["models"] = ["base", "mtcue_big"]
    with pytest.raises(cfg.ConfigError, match=r"experiments\.quality\.models: \['mtcue_big'\] are not models"):
        cfg.validate(raw)


def test_config_with_a_byte_order_mark_loads_and_one_not_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xef\xbb\xbfstudy: x\ndirections: [en-de]\nmodels: {base: {type: base}}\n")
    assert cfg.load(path)["study"] == "x"
    path.write_bytes("study: x\n# für\ndirections: [en-de]\n".encode("latin-1"))
    with pytest.raises(cfg.ConfigError, match=r"c\.yaml:2: not UTF-8 \(byte 0xfc at byte 4 of the line\)"):
        cfg.load(path)


def test_every_corpus_source_says_which_pairs_it_provides():
    from mtcue.data import synth

    assert set(CORPUS_PAIRS) == set(cfg.schema()["properties"]["corpus"]["properties"]["source"]["enum"])
    assert CORPUS_PAIRS["synthetic"] == synth.PAIRS


def test_fewshot_variants_are_models_derived_from_the_experiment():
    from mtcue.models.fairseq_args import arch_args

    c = demo()
    fewshot = FEWSHOT.models(c)
    assert [n for n in fewshot if "_seed" not in n] == [f"{m}_fewshot_{s}" for m in ("mtcue", "tagging")
                                                         for s in ("1", "5", "30", "full")]
    assert set(fewshot) <= set(all_models(c)) and not set(fewshot) & set(c["models"])
    spec = model_spec(c, "mtcue_fewshot_5", "en-pl")
    assert spec["type"] == "mtcue" and spec["init_from"] == "mtcue"
    assert spec["fewshot"] == {"parent": "mtcue", "setting": "5", "samples": 5}
    assert spec["context"]["columns"] == ["doc0", "cue1", "cue2", "cue3"]
    assert spec["training"]["max_epoch"] == c["experiments"]["fewshot"]["training"]["max_epoch"]
    assert spec["training"]["lr"] == c["models"]["mtcue"]["training"]["lr"]  # the parent's fine-tuning settings
    args = arch_args(spec)
    assert args[args.index("--context-doc-positions") + 1] == "6"  # the parent's six document slots
    assert "--context-doc-positions" not in arch_args(model_spec(c, "tagging_fewshot_5", "en-pl"))
    assert FEWSHOT.setting(c, "tagging", "zero_shot") == "tagging"  # zero-shot: the parent, not fine-tuned
    points = FEWSHOT.points(c)
    assert {(p["model"], p["setting"], p["record"]) for p in points} >= {
        ("mtcue", "zero_shot", "mtcue"), ("mtcue", "full", "mtcue_fewshot_full"), ("base", "baseline", "base")}


def test_seeded_runs_repeat_only_the_fine_tunings_and_keep_run_1s_name_and_spec():
    c = demo()
    assert c["experiments"]["ablation"]["seeds"] == c["experiments"]["fewshot"]["seeds"] == 3
    one = cfg.validate({**demo(), "experiments": {**demo()["experiments"],
                                                  "ablation": {**demo()["experiments"]["ablation"], "seeds": 1},
                                                  "fewshot": {**demo()["experiments"]["fewshot"], "seeds": 1}}})
    # run 1 is the model itself, trained exactly as with one seed: nothing already trained is retrained
    for model, direction in (("mtcue", "en-de"), ("mtcue_no_doc", "en-de"), ("mtcue_fewshot_5", "en-pl")):
        assert model_spec(c, model, direction) == model_spec(one, model, direction)
    assert ABLATION.seeds(c)["mtcue_no_doc"] == ["mtcue_no_doc", "mtcue_no_doc_seed2", "mtcue_no_doc_seed3"]
    assert ABLATION.seeds(c)["base"] == ["base"]   # trained from scratch: the shared parent, once
    spec = model_spec(c, "mtcue_no_doc_seed3", "en-de")
    assert spec["seed"] == c["seed"] + 2 and spec["init_from"] == "base"
    assert {k: v for k, v in spec.items() if k not in ("seed", "model")} == \
        {k: v for k, v in model_spec(c, "mtcue_no_doc", "en-de").items() if k not in ("seed", "model")}
    variant = model_spec(c, "tagging_fewshot_1_seed2", "en-pl")
    assert variant["seed"] == c["seed"] + 1 and variant["init_from"] == "tagging"
    assert variant["fewshot"]["setting"] == "1"
    points = {(p["model"], p["setting"]): p["records"] for p in FEWSHOT.points(c)}
    assert points[("mtcue", "5")] == ["mtcue_fewshot_5", "mtcue_fewshot_5_seed2", "mtcue_fewshot_5_seed3"]
    assert points[("mtcue", "zero_shot")] == ["mtcue"] and points[("base", "baseline")] == ["base"]
    assert cfg.load(REPO / "config" / "paper.yaml")["experiments"]["ablation"]["seeds"] == 1   # as the paper
    assert not [m for m in all_models(one) if "_seed" in m]


def test_the_paper_config_runs_the_papers_eight_settings():
    import csv

    paper = cfg.load(REPO / "config" / "paper.yaml")
    settings = paper["experiments"]["fewshot"]["settings"]
    with (REPO / "src" / "mtcue" / "paper_figures" / "mtcue_eamt22_fewshot_points.csv").open() as f:
        figure = list(csv.DictReader(f))
    assert [s.replace("_", "-").upper() for s in settings] == [r["setting"].upper() for r in figure]
    assert [str(v) for v in settings.values()] == [r["supervised_samples_per_combination"] for r in figure]
    assert len(FEWSHOT.models(paper)) == 14  # 7 fine-tuned settings x (MTCUE, TAGGING)


def test_eamt22_context_keeps_only_columns_a_model_reads():
    raw = demo()
    raw["models"]["mtcue"]["context_columns"] = ["metadata"]
    c = cfg.validate(raw)
    # no document positions: no doc0
    assert FEWSHOT.eamt22_columns(c, c["models"]["mtcue"]) == ["cue1", "cue2", "cue3"]
    assert FEWSHOT.eamt22_columns(c, c["models"]["tagging"]) == ["doc0", "cue1", "cue2", "cue3"]


@pytest.mark.parametrize("mutate, message", [
    (lambda f: f.update(models=["base"]), "'base' reads no context"),
    (lambda f: f.update(directions=["en-xx"]), r"experiments.fewshot.directions: \['en-xx'\] are not in"),
    (lambda f: f.update(baseline="mtcue"), "'mtcue' is not a non-contextual model"),
    (lambda f: f.update(settings={"1": -1}), "experiments.fewshot.settings.1"),
])
def test_wrong_fewshot_sections_are_errors(mutate, message):
    raw = demo()
    mutate(raw["experiments"]["fewshot"])
    with pytest.raises(cfg.ConfigError, match=message):
        cfg.validate(raw)
    raw = demo()
    raw["models"]["mtcue_fewshot_1"] = raw["models"]["base"]
    with pytest.raises(cfg.ConfigError, match=r"\['mtcue_fewshot_1'\] are the names of few-shot variants"):
        cfg.validate(raw)


def test_the_paper_config_runs_table5_on_the_official_iwslt22_sets():
    paper = cfg.load(REPO / "config" / "paper.yaml")
    assert FORMALITY.directions(paper) == ["en-de", "en-ru"]
    assert paper["evaluation_sets"]["iwslt22"]["pairs"] == ["en-de", "en-ru"]
    raw = cfg.load(REPO / "config" / "paper.yaml")
    raw["evaluation_sets"]["iwslt22"]["pairs"] = ["en-de"]
    with pytest.raises(cfg.ConfigError, match=r"experiments.formality.directions: \['en-ru'\] have no official "
                                              r"IWSLT22 test set"):
        cfg.validate(raw)


@pytest.mark.parametrize("change, message", [
    ({"detector": "labels"}, r"experiments.fewshot.detector: 'labels' reads the synthetic corpus's gold labels"),
    ({"directions": ["en-de"]}, r"experiments.fewshot.directions: \['en-de'\]; on OpenSubtitles the EAMT22 settings "
                                r"run in en-pl only"),
])
def test_on_opensubtitles_eamt22_runs_in_en_pl_judged_by_the_polish_detector(change, message):
    raw = cfg.load(REPO / "config" / "paper.yaml")
    raw["experiments"]["fewshot"].update(change)
    with pytest.raises(cfg.ConfigError, match=message):
        cfg.validate(raw)


@pytest.mark.parametrize("text, line, key, first", [
    ("study: x\nseed: 1\ndirections: [en-de]\nseed: 2\nmodels: {base: {type: base}}\n", 4, "seed", 2),
    ("study: x\ndirections: [en-de]\nmodels:\n  base:\n    type: base\n    type: mtcue\n", 6, "type", 5),
])
def test_a_key_written_twice_names_file_line_and_key(tmp_path, text, line, key, first):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(cfg.ConfigError) as err:
        cfg.load(path)
    assert str(err.value) == f"{path}:{line}: key {key!r} is written twice in one mapping (first on line {first}); " \
                             "keep one"


def test_a_merge_key_may_be_overridden(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("study: x\ndirections: [en-de]\nmodels:\n  base: &base {type: base}\n  big:\n    <<: *base\n"
                    "    type: mtcue\n")
    assert cfg.load(path)["models"]["big"]["type"] == "mtcue"


def test_an_experiments_plan_of_a_config_not_validated_says_so_naming_the_key():
    from mtcue.plan import EXPERIMENTS
    from mtcue.study import ConfigError

    raw = {"study": "t", "directions": ["en-de"], "models": {"base": {"type": "base"}}}  # no defaults filled in
    for name, experiment in EXPERIMENTS.items():
        with pytest.raises(ConfigError, match=rf"^experiment '{name}' targets: the config has no key '\w+': the plan "
                                              "reads a config validated by mtcue.config.load"):
            experiment.targets(raw)
    assert EXPERIMENTS["quality"].targets(cfg.validate(raw)).tables  # a validated one plans as before
