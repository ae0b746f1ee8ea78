# Table 6 (ablations): each row model is trained, translated and scored only in the ablation
# directions, on the split the paper used (experiments.ablation.split); the zero-shot columns read
# the records of the formality and few-shot experiments where this config runs them, and are n/a
# with the reason otherwise.
import shlex

ABLATION = config["experiments"]["ablation"]
ABLATION_SCORES = expand(
    "results/records/score/{direction}/{model}.{split}.json",
    direction=ABLATION["directions"], model=cfg.experiment_models(config)["ablation"], split=ABLATION["split"],
)
ABLATION_COMETS = [p.replace("/score/", "/comet/") for p in ABLATION_SCORES] if config["evaluation"]["comet"]["model"] else []
ABLATION_ZEROSHOT = cfg.ablation_zeroshot(config)
ABLATION_TABLES = (
    expand("results/tables/table6_ablation.{ext}", ext=["csv", "md"])
    if ABLATION["directions"] and ABLATION["rows"] else []
)


def zeroshot_records(kind):
    task = ABLATION_ZEROSHOT[kind]
    if task["unavailable"]:
        return []
    return expand("results/records/{kind}/{direction}/{model}.json", kind=kind, direction=task["direction"],
                  model=cfg.experiment_models(config)["ablation"])


def zeroshot_options(kind):
    task = ABLATION_ZEROSHOT[kind]
    reason = f" --unavailable {kind}={shlex.quote(task['unavailable'])}" if task["unavailable"] else ""
    return f"--zeroshot-direction {kind}={task['direction']}{reason}"


rule table6_ablation:
    input:
        score=ABLATION_SCORES,
        comet=ABLATION_COMETS,
        formality=zeroshot_records("formality"),
        eamt22=zeroshot_records("eamt22"),
    output:
        csv="results/tables/table6_ablation.csv",
        md="results/tables/table6_ablation.md",
    params:
        rows=json.dumps(ABLATION["rows"]),
        zeroshot=" ".join(zeroshot_options(kind) for kind in ABLATION_ZEROSHOT),
        bootstrap=config["evaluation"]["bootstrap"],
    log:
        "results/logs/table6_ablation.log",
    shell:
        "mtcue table-ablation --rows {params.rows:q} --split {ABLATION[split]} --records {input.score} "
        "--comet-records {input.comet} --formality-records {input.formality} --eamt22-records {input.eamt22} "
        "{params.zeroshot} --bootstrap-samples {params.bootstrap[samples]} --alpha {params.bootstrap[alpha]} "
        "--csv {output.csv} --md {output.md} 2> {log}"
