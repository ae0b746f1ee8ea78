"""The study plan: one module per experiment says which runs it trains, in which directions, from which
parents, and what it reads; `workflow/rules/common.smk` reads them. `models` gathers every run of every
experiment (entries, specs); `experiments` names each experiment's configured models.
"""
