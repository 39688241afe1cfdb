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

# The real controller against a simulated cluster in virtual time: the HVPA proposal's
# example 1 under a 6 h load ramp, in seconds; summary on stdout, report.json and plot.png
# in ./sim-output. More: make sim ARGS='--list', ARGS='--compare --trace spike'.
sim: install
	$(BIN)/hvpa sim $(ARGS)

run: install
	$(BIN)/hvpa run $(ARGS)

# Benchmarks, each against a reference measured in the same run (a few minutes;
# ARGS=--quick for a smaller run, ARGS=ingest for one module). Installs the bench extra (kopf).
BENCH_STAMP := $(VENV)/.bench-stamp

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	@touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m bench $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
