# tinygrad_lab — one-command setup, tests and lab.
#   make lab    set up .venv and open JupyterLab on notebooks/
#   make test   set up .venv and run the whole test suite
#   make clean  remove .venv and caches

SHELL := /bin/bash
.DEFAULT_GOAL := test

PYTHON      ?= python3
VENV        := .venv
VPY         := $(VENV)/bin/python
STAMP       := $(VENV)/.installed
# Extra pytest arguments; `make test PYTEST_ARGS=` runs serially.
# --dist loadfile keeps each file on one worker: a notebook's cells must share one kernel.
PYTEST_ARGS ?= -p xdist -n auto --dist loadfile
# Extra JupyterLab arguments, e.g. `make lab LAB_ARGS="--no-browser --port 8899"`.
LAB_ARGS    ?=

.PHONY: setup test lab clean graphviz

setup: $(STAMP)

# Reinstalls only when pyproject.toml changes (or .venv is gone).
$(STAMP): pyproject.toml
	@if [ ! -x "$(VPY)" ]; then \
	  echo "==> creating virtualenv $(VENV) with $(PYTHON)"; \
	  $(PYTHON) -m venv $(VENV); \
	fi
	@echo "==> upgrading pip"
	@$(VPY) -m pip install -q --upgrade pip
	@echo "==> installing tinygrad-lab (editable) with [test,lab,bench] extras"
	@$(VPY) -m pip install -q -e '.[test,lab,bench]'
	@echo "==> installing PyTorch oracle (optional, [oracle] extra)"
	@$(VPY) -m pip install -q -e '.[oracle]' \
	  || echo "!! PyTorch (torch==2.13.0) could not be installed: PyTorch oracle tests will be skipped."
	@$(MAKE) --no-print-directory graphviz
	@touch $@
	@echo "==> setup complete"

# Ensure the Graphviz `dot` binary (system package; the pip `graphviz` package only wraps it).
graphviz:
	@if command -v dot >/dev/null 2>&1; then \
	  echo "==> graphviz: $$(command -v dot) found"; \
	  exit 0; \
	fi; \
	if command -v apt-get >/dev/null 2>&1; then \
	  SUDO=""; \
	  if [ "$$(id -u)" != 0 ]; then \
	    if command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then SUDO="sudo"; else SUDO="none"; fi; \
	  fi; \
	  if [ "$$SUDO" != none ]; then \
	    echo "==> graphviz: installing with apt-get (dot not found on PATH)"; \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
	      && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null \
	      || true; \
	  fi; \
	fi; \
	if command -v dot >/dev/null 2>&1; then \
	  echo "==> graphviz: $$(command -v dot) installed"; \
	else \
	  echo "!! Graphviz 'dot' not found and could not be installed automatically; graph rendering will be unavailable."; \
	  echo "!! Install it with one of: 'sudo apt-get install graphviz' | 'brew install graphviz' | 'conda install -c conda-forge graphviz'"; \
	fi

test: setup
	$(VPY) -m pytest $(PYTEST_ARGS)

lab: setup
	$(VENV)/bin/jupyter lab notebooks/ $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) $(LAB_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist *.egg-info
	find . -path ./.git -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -prune -exec rm -rf {} +
