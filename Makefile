# ntkgap: the two commands are `make figures` and `make test`; both build
# the environment (.venv) from requirements.lock first if it is missing.
# `make test-ref` runs the kernel-numerics tests on the reference stack
# (jax 0.4.38, requirements-ref.lock, in .venv-ref); `make lint` runs ruff.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ntkgap-installed
REF_VENV := .venv-ref
REF_STAMP := $(REF_VENV)/.ntkgap-installed
# the tests whose numbers must agree on both stacks (kernels, spectra, the shim)
REF_TESTS := tests/test_compat.py tests/test_kernels.py tests/test_spectra.py
PROFILE ?= quick
JOBS ?= 2
export PYTHONUNBUFFERED := 1

.PHONY: all env env-ref figures test test-fast test-ref test-nt lint bench clean distclean FORCE
# Two recipes at a time: figure scripts are single-threaded, so two draw at
# once. Experiment runs still go one at a time (the order-only chain below),
# since each already keeps $(JOBS) processes busy. Not with clean among the
# goals: `make clean figures` must clean first.
ifeq ($(filter clean distclean,$(MAKECMDGOALS)),)
MAKEFLAGS += -j2
endif

all: figures

env: $(STAMP)

env-ref: $(REF_STAMP)

# --no-deps: the lock is complete, and neural-tangents' declared need of
# TensorFlow is deliberately left out (README, "Environment").
$(STAMP): requirements.lock setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --no-deps --disable-pip-version-check -r requirements.lock
	$(VENV)/bin/pip install --quiet --no-deps --no-build-isolation --disable-pip-version-check -e .
	@touch $@

$(REF_STAMP): requirements-ref.lock setup.cfg pyproject.toml
	$(PYTHON) -m venv $(REF_VENV)
	$(REF_VENV)/bin/pip install --quiet --no-deps --disable-pip-version-check -r requirements-ref.lock
	$(REF_VENV)/bin/pip install --quiet --no-deps --no-build-isolation --disable-pip-version-check -e .
	@touch $@

# experiments -> results (resumable, keyed by cell) -> figures -> REPORT.md
# Each profile runs its own experiments (a claim names the profile that
# decides it; REPORT.md lists the others as not run): quick (the default,
# <= 15 minutes) decides the E4 headline, its two halves and control, E1, E3b; paper (<= 75 minutes) runs quick's
# cells and every other seed claim; full holds the extended grids.
EXPS_quick := e1_spectra zoo e3b_parity e4_trees
EXPS_paper := $(EXPS_quick) e6_lazy_rich e3a_sawtooth e2_control e9_rhm e8_universality \
  e11_after_kernel e10_predict
EXPS_full := $(EXPS_paper) e8_modifications e10_linear_plus
FIGS_quick := e1_spectra e3b_parity e4_trees e7_dichotomy spectra
FIGS_paper := $(FIGS_quick) e3a_sawtooth e5_theory e6_lazy_rich e2_control e9_rhm \
  e8_universality e11_after_kernel e10_predict
FIGS_full := $(FIGS_paper) e8_modifications
EXPS := $(EXPS_$(PROFILE))
FIGS := $(FIGS_$(PROFILE))
ifeq ($(EXPS),)
$(error PROFILE=$(PROFILE) is not allowed (allowed: quick, paper, full))
endif
RUN = results/.done-$(PROFILE)-
STYLE := experiments/figures/style.py experiments/analysis.py
FIGFILES := $(FIGS:%=figures/%.png)

figures: REPORT.md

# figures show one profile's cells; this file changes only when PROFILE does,
# so switching profiles redraws everything
MARK := results/.figures-profile
$(MARK): FORCE
	@mkdir -p results; echo $(PROFILE) | cmp -s - $@ || echo $(PROFILE) > $@
FORCE:

REPORT.md: $(FIGFILES) experiments/report.py $(EXPS:%=$(RUN)%) $(MARK)
	$(PY) experiments/report.py $(PROFILE)

# the verdicts, once, before any figure: every figure states its claims' verdicts from
# this file (experiments/figures/style.py), so none decides them again
SUMMARY := results/summary.json
$(SUMMARY): experiments/report.py $(EXPS:%=$(RUN)%) $(MARK)
	$(PY) experiments/report.py $(PROFILE) --summary

$(RUN)%: experiments/%.toml $(STAMP)
	$(PY) -m ntkgap run $< --profile $(PROFILE) --jobs $(JOBS)
	@touch $@

# one experiment run at a time, in the profile's order: each waits for the one
# before it (order-only)
define after
$(RUN)$(2): | $(RUN)$(1)
endef
$(foreach i,$(wordlist 2,$(words $(EXPS)),$(shell seq 1 $(words $(EXPS)))),\
  $(eval $(call after,$(word $(shell expr $(i) - 1),$(EXPS)),$(word $(i),$(EXPS)))))

figures/%.png: experiments/figures/fig_%.py $(STYLE) $(MARK) $(SUMMARY)
	NTKGAP_PROFILE=$(PROFILE) $(PY) $<

figures/e1_spectra.png: $(RUN)e1_spectra
figures/e2_control.png: $(RUN)e2_control
figures/e3a_sawtooth.png: $(RUN)e3a_sawtooth
figures/e3b_parity.png: $(RUN)e3b_parity
figures/e4_trees.png: $(RUN)e4_trees
figures/e5_theory.png: $(RUN)e4_trees $(RUN)e3b_parity $(RUN)e3a_sawtooth
figures/e6_lazy_rich.png: $(RUN)e6_lazy_rich
figures/e7_dichotomy.png: $(RUN)zoo $(RUN)e4_trees
figures/spectra.png: $(RUN)zoo
figures/e9_rhm.png: $(RUN)e9_rhm
figures/e8_universality.png: $(RUN)e8_universality
figures/e8_modifications.png: $(RUN)e8_modifications
figures/e11_after_kernel.png: $(RUN)e11_after_kernel
figures/e10_predict.png: $(RUN)e10_predict $(RUN)e4_trees $(RUN)e8_universality $(RUN)e9_rhm

# $(JOBS) pytest workers, one test file each at a time (--dist loadfile), so
# a file's module fixtures (the pipeline's shrunk experiments) run once
test: $(STAMP)
	$(PY) -m pytest tests -n $(JOBS) --dist loadfile --no-loadscope-reorder --durations=15

# the fast subset (tests marked fast): every module imported and exercised
test-fast: $(STAMP)
	$(PY) -m pytest tests -m fast -q

test-ref: $(REF_STAMP)
	$(REF_VENV)/bin/python -m pytest $(REF_TESTS)

# neural-tangents' own tests (from its sdist on the package index, cached in
# .cache/nt-peer) through ntkgap's shim, on both locks; what is run, left
# out or deselected, and why: tests/nt_peer/peer.toml
test-nt: $(STAMP) $(REF_STAMP)
	$(PY) tests/nt_peer/run.py
	$(REF_VENV)/bin/python tests/nt_peer/run.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf results figures/*.pdf figures/*.png REPORT.md

distclean: clean
	rm -rf $(VENV) $(REF_VENV) *.egg-info
