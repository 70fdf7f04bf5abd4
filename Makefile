# tinygrad_lab — one-command setup, tests and lab.
#   make lab    set up .venv for the course (package + lab extra, Graphviz) and open JupyterLab
#   make test   add the test tools, the PyTorch oracle and Chromium to .venv, run every test
#   make clean  remove .venv and caches

SHELL := /bin/bash
.DEFAULT_GOAL := test

PYTHON      ?= python3
VENV        := .venv
VPY         := $(VENV)/bin/python
# Two installs, each redone only when pyproject.toml changes (or .venv is gone):
#   lab   what a learner needs to open the course: the package with its `lab` extra, and Graphviz
#   test  on top of it: the test tools, the PyTorch oracle and the browser the tests drive
LAB_STAMP   := $(VENV)/.lab-installed
TEST_STAMP  := $(VENV)/.test-installed
# Extra pytest arguments; `make test PYTEST_ARGS=` runs serially.
# --dist loadfile keeps each file on one worker: a notebook's cells must share one kernel.
PYTEST_ARGS ?= -p xdist -n auto --dist loadfile
# Extra JupyterLab arguments, e.g. `make lab LAB_ARGS="--no-browser --port 8899"`.
LAB_ARGS    ?=

.PHONY: setup setup-lab test lab notebooks clean system-deps gpu-check

setup: $(TEST_STAMP)
setup-lab: $(LAB_STAMP)

$(VPY):
	@echo "==> creating virtualenv $(VENV) with $(PYTHON)"
	@$(PYTHON) -m venv $(VENV)
	@echo "==> upgrading pip"
	@$(VPY) -m pip install -q --upgrade pip

$(LAB_STAMP): pyproject.toml | $(VPY)
	@echo "==> installing tinygrad-lab (editable) with the [lab] extra"
	@$(VPY) -m pip install -q -e '.[lab]'
	@$(MAKE) --no-print-directory system-deps DEPS="$(LAB_SYSTEM_DEPS)"
	@touch $@
	@echo "==> the course is ready: make lab"

$(TEST_STAMP): pyproject.toml $(LAB_STAMP)
	@echo "==> installing the test tools ([test,lab,bench] extras)"
	@$(VPY) -m pip install -q -e '.[test,lab,bench]'
	@echo "==> installing PyTorch oracle (optional, [oracle] extra)"
	@$(VPY) -m pip install -q -e '.[oracle]' \
	  || echo "!! PyTorch (torch==2.13.0) could not be installed: PyTorch oracle tests will be skipped."
	@$(MAKE) --no-print-directory system-deps DEPS="$(TEST_SYSTEM_DEPS)"
	@touch $@
	@echo "==> setup complete"

# System programs, as "command:apt-package" pairs. The course needs Graphviz `dot` (the pip
# `graphviz` package only wraps it) and OpenMPI's `mpirun` with its library, which the mpi4py wheel
# loads at run time (tinygrad_lab.distributed, lesson 13; no compiler is needed, so installing the
# pip packages first is fine); the tests also drive Chromium (playwright never downloads a browser here).
LAB_SYSTEM_DEPS  := dot:graphviz mpirun:openmpi-bin
TEST_SYSTEM_DEPS := $(LAB_SYSTEM_DEPS) chromium:chromium

# Installs whatever of $(DEPS) is missing with apt-get when it can (root, or passwordless sudo);
# otherwise says how.
system-deps:
	@missing=""; \
	for pair in $(DEPS); do \
	  cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  if command -v $$cmd >/dev/null 2>&1; then echo "==> $$pkg: $$(command -v $$cmd) found"; \
	  else missing="$$missing $$pkg"; fi; \
	done; \
	if [ -n "$$missing" ] && command -v apt-get >/dev/null 2>&1; then \
	  SUDO=""; \
	  if [ "$$(id -u)" != 0 ]; then \
	    if command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then SUDO="sudo"; else SUDO="none"; fi; \
	  fi; \
	  if [ "$$SUDO" != none ]; then \
	    echo "==> installing with apt-get:$$missing"; \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
	      && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
	      || true; \
	  fi; \
	fi; \
	for pair in $(DEPS); do \
	  cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  if ! command -v $$cmd >/dev/null 2>&1; then \
	    echo "!! $$pkg ('$$cmd') is missing and could not be installed automatically."; \
	    echo "!! Install the '$$pkg' package with your system's package manager (e.g. sudo apt-get install $$pkg)."; \
	    echo "!! Without it: graphviz -> graphs are not drawn; chromium -> the browser tests are skipped;"; \
	    echo "!!   openmpi-bin -> tinygrad_lab.distributed cannot start and its tests are skipped."; \
	  fi; \
	done

# The virtualenv's programs first on PATH, as activating it would (lessons start `tensorboard`).
test: $(TEST_STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VPY) -m pytest $(PYTEST_ARGS)

lab: $(LAB_STAMP)
	$(VENV)/bin/tinygrad-lab lab $(LAB_ARGS)

# Re-execute every notebook in place and strip widget state (outputs and counts kept), as committed.
notebooks: $(TEST_STAMP)
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.timeout=300 \
	  notebooks/*.ipynb notebooks/exercises/*.ipynb
	@# a concept check's answer is the output of the cell the student runs after predicting: not committed
	$(VENV)/bin/jupyter nbconvert --to notebook --inplace --TagRemovePreprocessor.enabled=True \
	  --TagRemovePreprocessor.remove_all_outputs_tags concept-check notebooks/[0-9][0-9]_*.ipynb
	$(VENV)/bin/nbstripout --keep-output --keep-count notebooks/*.ipynb notebooks/exercises/*.ipynb

# Everything that needs a real NVIDIA GPU (CUDA tests, GPU benchmark, lesson 06), results in $(OUT).
# Not tied to `setup`: it runs with the python3 of a GPU machine that has CuPy, PyTorch, NumPy and
# pytest but no virtualenv and no network (README: "Checking a real GPU").
OUT ?= gpu-check
gpu-check:
	$(PYTHON) -m tinygrad_lab.gpu_check $(OUT)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist *.egg-info
	find . -path ./.git -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -prune -exec rm -rf {} +
