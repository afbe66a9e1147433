# kforensic — developer entry points. `make demo` and `make test` work on a fresh
# Debian/Ubuntu machine with Python >= 3.11 and python3-venv installed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO   := demo-out

.PHONY: demo test lint typecheck pytest clean check-python

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kforensic needs Python >= 3.11; set PYTHON=python3.11 (or newer)")'

$(BIN)/python: | check-python
	$(PYTHON) -m venv $(VENV) || { echo "creating the venv failed: install python3-venv (apt-get install python3-venv)"; exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed

# The main job on data bundled in the repository: triage a real kernel log of the
# project's fixture kernel, then merge the findings into one incident report.
DEMO_LOG := vmcore_fixtures/cases/01-null-member/console.log

demo: $(VENV)/.installed
	@mkdir -p $(DEMO)
	$(BIN)/kforensic dmesg --format json -o $(DEMO)/dmesg.json $(DEMO_LOG)
	$(BIN)/kforensic report --from $(DEMO)/dmesg.json -o demo-report.md
	@echo "wrote demo-report.md"

lint: $(VENV)/.installed-dev
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

pytest: $(VENV)/.installed-dev
	$(BIN)/pytest -q

test: lint typecheck pytest

clean:
	rm -rf $(VENV) $(DEMO) demo-report.md .mypy_cache .ruff_cache .pytest_cache
