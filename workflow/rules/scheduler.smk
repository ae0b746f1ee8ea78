# Snakemake's own main loop, on one machine. Its job-rate limiter (--max-jobs-per-timespan, default
# 100/1s) arms a one-second timer after every scheduling pass that finds ready jobs, and each timer
# starts another pass: the timers never stop, and every finished job adds one more (measured on the
# demo: 30 passes and threads a second after 60 jobs, the main process 10-47% of a core, growing;
# upstream snakemake/snakemake#2967 and #3744). One machine has no submission rate to limit, so
# locally the loop wakes only when a job finishes; a cluster executor keeps the limiter.


onstart:
    if workflow.local_exec and workflow.scheduler.job_rate_limiter is not None:
        workflow.scheduler.job_rate_limiter = None
