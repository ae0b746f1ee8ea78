# Two entry points (README): `make demo` and `make test`. Both set up .venv first; `make readme`
# then puts the demo's results into README.md (the headlines) and docs/results.md (every section).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
CORES ?= all
# Records of the run the README shows, then of other runs (seeds) for the spread between them.
RECORDS ?= results/records

# The paper's study rehearsed on miniature copies of its sources (docs/paper-scale.md, "Rehearsal"):
# `make rehearsal`, one output with TARGET=results/tables/..., through SLURM with PROFILE=slurm (more
# Snakemake options in SNAKEMAKE_ARGS, e.g. the test cluster's "--slurm-status-command squeue").
REHEARSAL ?= results-rehearsal

.PHONY: setup demo test check readme report ui rehearsal

setup: $(STAMP)

# Every version is pinned in envs/requirements.lock, so pip has nothing to resolve.
$(STAMP): envs/requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet "pip==25.3"
	$(VENV)/bin/pip install --quiet --progress-bar off -r envs/requirements.lock
	$(VENV)/bin/pip install --quiet --no-deps -e .
	touch $@

# The demo's steps start warm (src/mtcue/warm.py): its budget needs it (docs/benchmarks.md, "The warm start");
# WARM=0 runs each step cold, as a plain `snakemake` run does.
WARM ?= 1
demo: $(STAMP)
	MTCUE_WARM=$(WARM) $(VENV)/bin/snakemake --cores $(CORES)

test: $(STAMP)
	$(VENV)/bin/python -m pytest -ra

# The fast layer, while working: every test but those that run Snakemake, train or start servers (marked
# slow by tests/conftest.py from what they call), in about 3 minutes on 2 cores.
check: $(STAMP)
	$(VENV)/bin/python -m pytest -ra -m "not slow"

# The README's results, rendered from the records of a finished `make demo` (never copied by hand).
readme: $(STAMP)
	$(VENV)/bin/mtcue readme-results --records $(RECORDS) --readme README.md --results-page docs/results.md

# The MLflow UI of the study's store: open the address it prints (the study's runs, BLEU and the main results as
# columns, in MLflow's machine-learning view); UI_PORT=5001 for another port (then make report
# MLFLOW_UI=http://127.0.0.1:5001).
UI_PORT ?= 5000
ui: $(STAMP)
	$(VENV)/bin/mtcue ui --port $(UI_PORT)

# The HTML report of the study (every table and figure built so far, captioned; those not built yet listed), one
# file; its numbers link to their MLflow runs in the UI at MLFLOW_UI (default http://127.0.0.1:5000).
MLFLOW_UI ?=
report: $(STAMP)
	$(VENV)/bin/mtcue report --out results/report.html $(if $(MLFLOW_UI),--ui "$(MLFLOW_UI)")

rehearsal: $(STAMP)
	$(VENV)/bin/mtcue rehearsal --out $(REHEARSAL) --cores $(CORES) $(if $(PROFILE),--profile $(PROFILE)) \
		$(if $(SNAKEMAKE_ARGS),--snakemake="$(SNAKEMAKE_ARGS)") $(TARGET)
