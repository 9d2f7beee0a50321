# fastmerge: one command equals CI. `make all` (the default) is what .ci/run and the GitHub
# workflow run; `make help` lists the targets. Everything runs in a virtualenv ($(VENV)), created
# on first use from $(PYTHON) with the tools pyproject.toml lists.

.DEFAULT_GOAL := all
.NOTPARALLEL:
SHELL := bash
.SHELLFLAGS := -euo pipefail -c

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# The drop-in reference of the parity tests and benchmarks, pinned for reproducible results.
# --no-deps: its schema modules need only pydantic (see tests/_support/openjiuwen.py).
OPENJIUWEN ?= openjiuwen==0.1.19.post2
PYTEST_ARGS ?=

# maturin develop installs into this environment, and cargo builds PyO3 against its interpreter
# (the same one maturin uses, so the two do not rebuild each other's pyo3).
export VIRTUAL_ENV := $(abspath $(VENV))
export PYO3_PYTHON := $(abspath $(PY))

# Requirements read from pyproject.toml: the build system's, or the extras named (tomllib: 3.11+).
requirements = $(PY) -c 'import sys, tomllib; p = tomllib.load(open("pyproject.toml", "rb")); \
	print("\n".join(p["build-system"]["requires"] if sys.argv[1:] == ["build"] else \
	[r for extra in sys.argv[1:] for r in p["project"]["optional-dependencies"][extra]]))'

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) \
		| awk 'BEGIN {FS = ":.*## "}; {printf "  make %-12s %s\n", $$1, $$2}'

# --- environment ------------------------------------------------------------------------------

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and \
		"the dev environment needs Python >= 3.11 (tomllib, openjiuwen): make PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)

# pip shows what it collects, downloads and installs (a first install of the test tools takes
# about a quarter of an hour): a long install is never a silent one.
$(VENV)/.build-deps: $(PY) pyproject.toml
	@echo "== pip install (1 of 3): the build requirements (maturin) into $(VENV)"
	@$(requirements) build > $(VENV)/requirements-build.txt
	@$(PY) -m pip install --progress-bar on -r $(VENV)/requirements-build.txt
	@touch $@

$(VENV)/.dev-deps: $(VENV)/.build-deps pyproject.toml Makefile
	@$(requirements) test lint > $(VENV)/requirements-dev.txt
	@echo "== pip install (2 of 3): the test and lint tools into $(VENV), pyproject.toml's [test]" \
		"and [lint]: $$(grep -c . $(VENV)/requirements-dev.txt) requirements and their" \
		"dependencies (a first install takes about 15 minutes)"
	@$(PY) -m pip install --progress-bar on -r $(VENV)/requirements-dev.txt
	@echo "== pip install (3 of 3): $(OPENJIUWEN) --no-deps (the parity tests' reference)"
	@$(PY) -m pip install --progress-bar on --no-deps '$(OPENJIUWEN)'
	@touch $@

.PHONY: venv
venv: $(VENV)/.dev-deps ## create the venv (.venv) with maturin and the test and lint tools

# --- build --------------------------------------------------------------------------------------

# maturin develop, quietly: its report and pip's are shown only when the build fails. A build
# that replaces the other profile's extension (make demo's release build by make all's debug
# one, or back) says so first (tools/build_note.py). A leftover extension of a per-version tag
# (_fastmerge.cpython-3XX-*.so, from before the abi3 build) is removed first: the interpreter
# would import it before the new _fastmerge.abi3.so.
develop = @echo "maturin develop: the $(1) extension into $(VENV) (a first build takes minutes)"; \
	$(PY) tools/build_note.py $(1) || true; \
	rm -f python/fastmerge/_fastmerge.cpython-*.so; \
	PIP_QUIET=1 $(BIN)/maturin develop -q $(2) > $(VENV)/maturin.log 2>&1 \
		|| { cat $(VENV)/maturin.log; exit 1; }

.PHONY: build-dev
build-dev: $(VENV)/.build-deps ## build the extension (debug) and install fastmerge into the venv
	$(call develop,debug)

.PHONY: dev
dev: build-dev $(VENV)/.dev-deps ## a debug build and the test tools: quick rebuilds while you work

.PHONY: build-prod
build-prod: $(VENV)/.build-deps ## build the extension in release mode (what users get; for benchmarks)
	$(call develop,release,--release)

.PHONY: demo
demo: build-prod ## (release build) aggregate the bundled Anthropic SSE stream (examples/anthropic_tool_use.sse)
	$(BIN)/fastmerge --version
	$(BIN)/fastmerge merge --provider auto --to anthropic --indent 2 \
		examples/anthropic_tool_use.sse

# --- checks -------------------------------------------------------------------------------------

.PHONY: all
all: build-dev lint test test-pure cargo-test bench-smoke ## what CI runs (the default target)

.PHONY: lint
lint: lint-python lint-rust stubtest ## ruff, mypy, cargo fmt, clippy (with and without python), stubtest

.PHONY: lint-python
lint-python: $(VENV)/.dev-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

.PHONY: lint-rust
lint-rust: $(PY)
	cargo fmt --all --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --no-default-features -- -D warnings

.PHONY: stubtest
stubtest: build-dev $(VENV)/.dev-deps ## check python/fastmerge/_fastmerge.pyi against the built module
	$(PY) -m mypy.stubtest fastmerge._fastmerge

# The pytest runs are given a PostgreSQL server for the session store's tests, as .ci/run gives
# CI one: tools/with-postgres starts a throwaway one where the server is installed (or uses
# FASTMERGE_PG_DSN), and otherwise says before and after the run that those tests are skipped
# and how to run them.
.PHONY: test
test: build-dev $(VENV)/.dev-deps ## pytest, every test on both backends; the extension must load
	FASTMERGE_BACKEND=rust tools/with-postgres $(PY) -m pytest $(PYTEST_ARGS)

.PHONY: test-pure
test-pure: $(VENV)/.dev-deps ## pytest on the pure-Python twin alone (no Rust needed)
	FASTMERGE_BACKEND=python PYTHONPATH=python tools/with-postgres $(PY) -m pytest $(PYTEST_ARGS)

.PHONY: cargo-test
cargo-test: ## cargo test of the engine, without Python; and the binding's own unit tests
	cargo test --no-default-features
	PYO3_PYTHON=$(abspath $(PY)) cargo test --lib py::

.PHONY: bench-smoke
bench-smoke: build-dev $(VENV)/.dev-deps ## run every benchmark once, untimed, checking results
	FASTMERGE_BACKEND=rust tools/with-postgres $(PY) -m pytest benches --benchmark-disable \
		$(PYTEST_ARGS)

# The long differential fuzz: tests/backends/test_fuzz.py with FUZZ_EXAMPLES inputs per test
# instead of the smoke budget the test command runs (4 tests: 4 x FUZZ_EXAMPLES inputs), then
# the engine's JSON readers against serde_json on 4 x FUZZ_EXAMPLES generated texts (stable
# Rust: cargo-fuzz is not used, see docs/architecture.md, "Reliability").
FUZZ_EXAMPLES ?= 250000

.PHONY: fuzz
fuzz: build-dev $(VENV)/.dev-deps ## the long differential fuzz, Rust vs the twin (FUZZ_EXAMPLES=250000 per test)
	FASTMERGE_BACKEND=rust FASTMERGE_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest \
		tests/backends/test_fuzz.py -p no:cacheprovider --hypothesis-show-statistics $(PYTEST_ARGS)
	FASTMERGE_FUZZ_ROUNDS=$$(( 4 * $(FUZZ_EXAMPLES) )) cargo test --no-default-features \
		--test engine json_text:: -- --ignored --nocapture

.PHONY: bench
bench: build-prod $(VENV)/.dev-deps ## time the benchmarks on a release build, print the ratios
	FASTMERGE_BACKEND=rust $(PY) benches/report.py --run
	FASTMERGE_BACKEND=rust $(PY) benches/fresh_fold.py

# --- upkeep -------------------------------------------------------------------------------------

.PHONY: format
format: $(VENV)/.dev-deps ## apply ruff format, ruff's fixes and cargo fmt
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
	cargo fmt --all

.PHONY: clean
clean: ## remove build output and caches (keeps the venv)
	cargo clean
	rm -rf .benchmarks .pytest_cache .mypy_cache .ruff_cache .hypothesis dist
	rm -f python/fastmerge/_fastmerge*.so python/fastmerge/_fastmerge*.pyd
