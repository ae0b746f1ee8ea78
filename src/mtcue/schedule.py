"""List scheduling of jobs with dependencies on a number of identical workers: the critical path, the total
work and the makespan of a greedy schedule. Shared by the study's projection on more cores
(reporting/critical_path.py, from benchmark files) and the calendar of its trainings on GPUs (plan/gpu_hours.py).

The schedule starts a job once its dependencies are done and its threads' workers are free, the ready job
with the longest remaining path first: what a good scheduler reaches. No schedule beats max(critical path,
total work / workers).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    name: str
    time: float  # any unit: seconds of a benchmark, GPU-hours of a training
    deps: tuple[str, ...] = ()  # names of the jobs whose outputs it reads
    threads: int = 1


def _dependants(jobs: list[Job]) -> dict[str, list[str]]:
    """{job: the jobs that read its outputs}; a dependency that is not a job is an error."""
    dependants = {job.name: [] for job in jobs}
    unknown = sorted({d for job in jobs for d in job.deps} - set(dependants))
    if unknown:
        raise ValueError(f"dependencies that are not jobs: {unknown[:5]}")
    for job in jobs:
        for dep in job.deps:
            dependants[dep].append(job.name)
    return dependants


def _topological(jobs: list[Job]) -> list[Job]:
    """The jobs, each after its dependencies; a cycle is an error."""
    by_name, dependants = {job.name: job for job in jobs}, _dependants(jobs)
    waiting = {job.name: len(set(job.deps)) for job in jobs}
    ready = [name for name, n in waiting.items() if n == 0]
    order = []
    while ready:
        name = ready.pop()
        order.append(by_name[name])
        for d in set(dependants[name]):
            waiting[d] -= 1
            if waiting[d] == 0:
                ready.append(d)
    if len(order) != len(jobs):
        raise ValueError("the jobs' dependencies form a cycle")
    return order


def remaining(jobs: list[Job]) -> dict[str, float]:
    """{job: its time plus the longest chain of times after it}: the critical path through the job from its
    start, the list schedule's priority."""
    dependants = _dependants(jobs)
    rest: dict[str, float] = {}
    for job in reversed(_topological(jobs)):
        rest[job.name] = job.time + max((rest[d] for d in dependants[job.name]), default=0.0)
    return rest


def critical_path(jobs: list[Job]) -> tuple[float, list[str]]:
    """The longest chain of job times through the dependencies: (its time, job names in run order)."""
    if not jobs:
        return 0.0, []
    rest, dependants = remaining(jobs), _dependants(jobs)
    # The path starts at a job with nothing before it and goes on through the dependant that carries the
    # rest of it; ties go to the first name, so the chain is the same on every run.
    chain = [min((j.name for j in jobs if not j.deps), key=lambda n: (-rest[n], n))]
    while dependants[chain[-1]]:
        chain.append(min(dependants[chain[-1]], key=lambda n: (-rest[n], n)))
    return rest[chain[0]], chain


def total_work(jobs: list[Job]) -> float:
    """Worker-time of all jobs: each job's time on each of its threads."""
    return sum(job.time * job.threads for job in jobs)


def list_schedule(jobs: list[Job], workers: int) -> float:
    """The wall time (makespan) of the jobs on `workers` workers (cores, GPUs), each job as soon as its
    dependencies are done and min(threads, workers) workers are free, longest remaining path first (a lower
    priority job may start beside a higher one that does not fit)."""
    if not jobs:
        return 0.0
    rest, dependants = remaining(jobs), _dependants(jobs)
    need = {job.name: min(job.threads, workers) for job in jobs}
    times = {job.name: job.time for job in jobs}
    waiting = {job.name: len(set(job.deps)) for job in jobs}
    ready = sorted((n for n, w in waiting.items() if w == 0), key=lambda n: (-rest[n], n))
    running: list[tuple[float, str]] = []  # (finish time, job) heap
    now, free = 0.0, workers
    while ready or running:
        for name in list(ready):
            if need[name] <= free:
                ready.remove(name)
                free -= need[name]
                heapq.heappush(running, (now + times[name], name))
        now, name = heapq.heappop(running)
        done = [name]
        while running and running[0][0] <= now:  # every job finishing at this time frees its workers together
            done.append(heapq.heappop(running)[1])
        for name in done:
            free += need[name]
            for d in set(dependants[name]):
                waiting[d] -= 1
                if waiting[d] == 0:
                    ready.append(d)
        ready.sort(key=lambda n: (-rest[n], n))
    return now
