# Everything runs from a project-local virtual environment that `install`
# creates on first use, so `make sim` and `make test` work on a machine that
# has only python3 and make.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
ARGS   ?=

.PHONY: install test test-fast lint sim run bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

test: install
	$(BIN)/python -m pytest $(ARGS)

test-fast: install
	$(BIN)/python -m pytest -m 'not slow' $(ARGS)

lint: install
	$(BIN)/ruff check hvpa tests bench
	$(BIN)/ruff format --check hvpa tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# Temporary, until the simulator exists: show what the engine decides on a worked example.
sim: install
	$(BIN)/hvpa recommend -o text -f examples/scenarios/hpa-cpu-scale-up.yaml $(ARGS)

run: install
	$(BIN)/hvpa run $(ARGS)

bench: install
	$(BIN)/python -m bench $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
