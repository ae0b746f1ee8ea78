# Two entry points (README): `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
CORES ?= all

.PHONY: setup demo test

setup: $(STAMP)

# Every version is pinned in envs/requirements.lock, so pip has nothing to resolve.
$(STAMP): envs/requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet "pip==25.3"
	$(VENV)/bin/pip install --quiet --progress-bar off -r envs/requirements.lock
	$(VENV)/bin/pip install --quiet --no-deps -e .
	touch $@

demo: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES)

test: $(STAMP)
	$(VENV)/bin/python -m pytest -ra
