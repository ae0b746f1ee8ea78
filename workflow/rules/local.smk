# A run on one machine (`make demo`, `snakemake --cores N`); a cluster executor keeps Snakemake's defaults.
#
# Snakemake's job-rate limiter (--max-jobs-per-timespan, default 100/1s) arms a one-second timer after
# every scheduling pass that finds ready jobs, and each timer starts another pass: the timers never
# stop, and every finished job adds one more (the demo's main process: 30 passes and new threads a
# second after 60 jobs, 10-47% of a core, growing; snakemake/snakemake#2967, #3744). One machine has
# no submission rate to limit, so here the loop wakes only when a job finishes.
#
# Steps run cold here, each its own process, so Snakemake's benchmark files measure them. `make demo` opts
# into the warm start (MTCUE_WARM=1, mtcue.warm): its 272 model jobs would each spend about 3 s more importing
# torch and fairseq, which its 45-minute budget cannot pay (docs/benchmarks.md, "The warm start").


onstart:
    if workflow.local_exec and not workflow.remote_exec:
        workflow.scheduler.job_rate_limiter = None
