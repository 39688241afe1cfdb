# Everything runs from a project-local virtual environment that `install`
# creates on first use, so `make sim` and `make test` work on a machine that
# has only python3 and make.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
ARGS   ?=

.PHONY: install test test-fast tables lint sim run bench lock audit clean e2e

# Python's bytecode cache, kept outside the checkout. Some machines set
# PYTHONDONTWRITEBYTECODE (this project's CI machines among them); then every Python process
# compiles every module it imports, and `make test` starts dozens (xdist's workers, and the
# `hvpa` commands and simulations tests run): collecting the suite took 11 CPU-seconds a
# process without the cache, 6.5 with it. PYCACHE outside the tree keeps `__pycache__` out
# of the checkout and the wheel; deleting it is always safe (docs/development.md).
PYCACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/hvpa/pycache
export PYTHONDONTWRITEBYTECODE :=
export PYTHONPYCACHEPREFIX := $(PYCACHE)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

# Tests run on every core (pytest-xdist; `auto` is the core count). `--dist loadfile` keeps
# each test file on one worker, so a costly run that a file's tests share (a functools.cache,
# a module fixture) is paid once. Not `loadgroup`: with pytest 9.2 it silently ignores the
# xdist_group marks (pytest-xdist issue 1386). ARGS adds to the command: ARGS=tests/engine,
# ARGS='-n 0' (serial, e.g. for pdb); TEST_WORKERS=4 sets the worker count.
TEST_WORKERS ?= auto
PYTEST := $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# `make test` leaves out the tests marked `tables` (tests/conftest.py): they pin
# docs/strategies.md's comparison tables with 51 six-hour simulations, two thirds of the
# suite's CPU. `make tables` runs them; CI runs both (.ci/run).
test: install
	$(PYTEST) $(ARGS)

test-fast: install
	$(PYTEST) -m 'not slow' $(ARGS)

tables: install
	$(PYTEST) -m tables $(ARGS)

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
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev,bench]'
	@touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python -m bench $(ARGS)

# The image installs requirements.lock with --require-hashes: every runtime dependency of
# hvpa (no extras), pinned for the image's Python (3.12, Linux), with the hash of every
# file of each pinned version; and builds hvpa's wheel with requirements-build.lock (the
# build backend, likewise). Run after changing the dependencies in pyproject.toml.
LOCK_STAMP := $(VENV)/.lock-stamp
IMAGE_PYTHON ?= 3.12

$(LOCK_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev,lock]'
	@touch $(LOCK_STAMP)

UV_COMPILE = $(BIN)/uv pip compile --quiet --generate-hashes --no-header \
	    --python-version $(IMAGE_PYTHON) --python-platform linux

lock: $(LOCK_STAMP)
	$(UV_COMPILE) pyproject.toml --output-file requirements.lock
	$(BIN)/python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires'], sep='\n')" \
	    | $(UV_COMPILE) - --output-file requirements-build.lock

# Known vulnerabilities in what the image installs (PyPI's advisory data, so it needs the
# network). Not part of `lint`: its answer changes with each new advisory, not with the
# code. Without the network it says so plainly (NOT AUDITED) and exits 0.
audit: $(LOCK_STAMP)
	$(BIN)/python tests/manifests/audit_lock.py requirements.lock

# End to end against a real control plane (README: "End to end against a real control
# plane"): builds pinned etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl and kwok from their Go modules into $HVPA_E2E_CACHE (default ~/.cache/hvpa-e2e)
# unless already there, then runs tests/e2e against them. Needs Go; not part of `make test`.
E2E_TIMEOUT ?= 600

e2e: install
	@start=$$(date +%s); \
	$(BIN)/python tests/e2e/e2e_build.py || exit $$?; \
	echo "e2e phase: build $$(( $$(date +%s) - start )) s"
	@start=$$(date +%s); \
	$(BIN)/python -m pytest -m e2e tests/e2e --timeout=$(E2E_TIMEOUT) $(ARGS); rc=$$?; \
	echo "e2e phase: tests $$(( $$(date +%s) - start )) s"; exit $$rc

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
