# A run on one machine (`make demo`, `snakemake --cores N`); a cluster executor keeps Snakemake's defaults.
#
# Snakemake's job-rate limiter (--max-jobs-per-timespan, default 100/1s) arms a one-second timer after
# every scheduling pass that finds ready jobs, and each timer starts another pass: the timers never
# stop, and every finished job adds one more (the demo's main process: 30 passes and new threads a
# second after 60 jobs, 10-47% of a core, growing; snakemake/snakemake#2967, #3744). One machine has
# no submission rate to limit, so here the loop wakes only when a job finishes.
#
# MTCUE_WARM: each `mtcue` step is forked from a server that imported torch and fairseq once
# (mtcue.warm; about 2.4 s of CPU saved per model step). Set MTCUE_WARM=0 to run every step cold.

import os


onstart:
    if workflow.local_exec and not workflow.remote_exec:
        workflow.scheduler.job_rate_limiter = None
        os.environ.setdefault("MTCUE_WARM", "1")
