"""A rehearsal of the paper's study (`make rehearsal`, `mtcue rehearsal`; docs/paper-scale.md, "Rehearsal").

The same Snakefile runs with `config/paper.yaml` as it is plus one override (config/rehearsal.yaml
says what it changes: sizes, and offline stand-ins for the paper's encoders and COMET), on miniature
copies of every source the paper's study downloads, in their public formats and layout:
- OPUS OpenSubtitles v2018 (`opus_synth`: language archives shared by the pairs, one alignment per pair),
  the authors' block lists, ContraPro's JSON and its OPUS Moses documents, Lopes et al.'s extracted
  files, annotation and document list, IWSLT22's formality test files and en-de training data (the
  validation set), EAMT22's dev and test JSON and
  Voita et al.'s (2019) four consistency sets, written from the synthetic dialogues (`mtcue.data.synth`);
- OMDb: a local server answering in OMDb's format, under its own key.
The copies form a download mirror (`download.mirror`: `{host}/{path}` of each URL), so the `download`
rule fetches every URL of the paper's DAG from it. The run ends with a summary: jobs planned (dry
run) and executed, every table and figure the workflow reports and whether it was made, what failed
(rule, log, last error line) and the wall time.

Above the stages; no stage imports it. `configs`: the rehearsal's plan file, the override it writes and a slice
of the study; `mirror`: the miniature sources; `stand_ins`: the OMDb server and the COMET model; `run`: the
dry run, the run and the summary; `cli`: the `mtcue rehearsal` step.
"""
