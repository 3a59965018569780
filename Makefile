# ntkgap: the two commands are `make figures` and `make test`; both build
# the environment (.venv) from requirements.lock first if it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ntkgap-installed
PROFILE ?= quick
JOBS ?= 2
export PYTHONUNBUFFERED := 1

.PHONY: all env figures test bench clean distclean

all: figures

env: $(STAMP)

# --no-deps: the lock is complete, and neural-tangents' declared need of
# TensorFlow is deliberately left out (README, "Why no TensorFlow").
$(STAMP): requirements.lock setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --no-deps --disable-pip-version-check -r requirements.lock
	$(VENV)/bin/pip install --quiet --no-deps --no-build-isolation --disable-pip-version-check -e .
	@touch $@

figures: $(STAMP)
	$(PY) -m ntkgap figures --profile $(PROFILE) --jobs $(JOBS)

test: $(STAMP)
	$(PY) -m pytest tests

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf results figures/*.pdf figures/*.png REPORT.md

distclean: clean
	rm -rf $(VENV) *.egg-info
