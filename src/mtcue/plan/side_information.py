"""Hoang et al.'s side-information experiment (sideinfo.smk, their Table 3): its rows and runs.
"""
from __future__ import annotations



def side_information_rows(cfg: dict) -> list[str]:
    """The models of Hoang et al.'s Table 3 in row order: the baseline ("without side information"), then
    the variants; TAGGING and MTCUE beside them where configured."""
    exp = cfg["experiments"]["side_information"]
    return list(dict.fromkeys(([exp["baseline"]] if exp["baseline"] else []) + exp["models"] + exp["beside"]))


def side_information_models(cfg: dict) -> list[tuple[str, str]]:
    """(direction, model) pairs the side-information experiment trains and scores."""
    exp = cfg["experiments"]["side_information"]
    return [(d, m) for d in exp["directions"] for m in side_information_rows(cfg)]


def side_information_table_rows(cfg: dict) -> list[dict]:
    """Hoang et al.'s Table 3 rows in order: {"label" (the seed's name where the model is one of its
    systems), "model", "type" (the model's; "control" for a BASE trained on like the variants, which
    separates the labels' effect from that of the extra epochs), "variant": "", "no_context" (decoded
    without labels) or "predicted_labels" (the target-prefix model predicting its labels)}."""
    exp = cfg["experiments"]["side_information"]
    names = {"base": "base (without side information)", "si_src_prefix": "si-src-prefix",
             "si_src_suffix": "si-src-suffix", "si_trg_prefix": "si-trg-prefix-h", "si_output_layer": "output-layer",
             "si_mtl": "mtl", "tagging": "TAGGING", "mtcue": "MTCUE"}
    rows = []
    for model in side_information_rows(cfg):
        kind = cfg["models"][model]["type"]
        if kind == "base" and model != exp["baseline"]:   # BASE trained on like the variants: not a seed's system
            rows.append({"label": "base, fine-tuned as the variants (no labels)", "model": model, "type": "control",
                         "variant": ""})
            continue
        if kind == "si_trg_prefix":  # one model, decoded with the labels predicted (-p) and given (-h)
            rows.append({"label": "si-trg-prefix-p", "model": model, "type": kind, "variant": "predicted_labels"})
        rows.append({"label": names.get(kind, model), "model": model, "type": kind, "variant": ""})
        if model in exp["no_labels"]:
            rows.append({"label": f"{names.get(kind, model)}, w/o side info at test", "model": model, "type": kind,
                         "variant": "no_context"})
    labels = [r["label"] for r in rows]
    return [{**r, "label": f"{r['label']} [{r['model']}]"} if labels.count(r["label"]) > 1 else r for r in rows]


def targets(cfg: dict) -> dict[str, list[str]]:
    """Table 3's score records: `scores`, `no_context` (decoded without labels), `predicted` (the
    target-prefix model predicting its labels); and the table (`table`)."""
    exp, split, runs = cfg["experiments"]["side_information"], cfg["evaluation"]["split"], side_information_models(cfg)
    records = lambda kind, keep: sorted({f"results/records/{kind}/{d}/{m}.{split}.json" for d, m in runs if keep(m)})
    return {"scores": records("score", lambda m: True),
            "no_context": records("score_no_context", lambda m: m in exp["no_labels"]),
            "predicted": records("score_predicted_labels", lambda m: cfg["models"][m]["type"] == "si_trg_prefix"),
            "table": [f"results/tables/side_information.{ext}" for ext in ("csv", "md", "html")] if runs else []}
