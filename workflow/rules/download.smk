# Downloads of the paper's public sources (corpus.source: opensubtitles): OPUS OpenSubtitles v2018,
# the held-out film lists and the evaluation sets. Local rules: cluster compute nodes often have no
# internet. Each URL becomes results/download/{host}/{path} (mtcue.data.sources; a URL that would leave
# that folder is refused when the config is validated); a broken transfer resumes from its .part file
# on the next run.
import re

DOWNLOADS = {sources.local(url): url for url in sources.all_urls(config, PAIRS)} if OPENSUBTITLES else {}


if DOWNLOADS:

    rule download:
        output:
            "results/download/{path}",
        wildcard_constraints:
            path="|".join(re.escape(p.removeprefix("results/download/")) for p in DOWNLOADS),
        params:
            source=lambda w: sources.mirrored(config, DOWNLOADS[f"results/download/{w.path}"]),
            policy=config["download"],
        localrule: True
        log:
            layout.log("download", "{path}"),
        benchmark:
            layout.benchmark("download", "{path}")
        shell:
            "mtcue download --source {params.source:q} --out {output:q} --retries {params.policy[retries]:q} "
            "--backoff {params.policy[backoff_s]:q} --timeout {params.policy[timeout_s]:q} 2> {log:q}"
