# Every target bootstraps .venv from nothing; the stamp makes it idempotent.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed
FUZZ_STAMP := $(VENV)/.fuzz-installed
FUZZ_SECONDS ?= 30
# Microsoft's Adaptive Cards renderer, pinned for the Teams card tests (tests/adaptivecards/).
CARDS_DIR := tests/adaptivecards
CARDS_STAMP := $(CARDS_DIR)/node_modules/.installed

.PHONY: help run test lint bench check clean fuzz

help: ## list the targets
	@echo "make targets (each creates .venv on first use):"
	@grep -E '^[a-z]+:.*## ' $(firstword $(MAKEFILE_LIST)) | \
		sed -E 's/^([a-z]+):.*## (.*)/  \1\t\2/' | expand -t 10

# The first install takes about a minute: say so, and let pip show each package it fetches.
$(STAMP): pyproject.toml
	@echo ">>> setting up $(VENV) (first run only, about a minute): creating the venv"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo ">>> upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo ">>> installing the bot and its dependencies"
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(STAMP)
	@echo ">>> $(VENV) is ready"

run: $(STAMP) ## serve the bot (SQLite and the console page by default)
	$(BIN)/python -m bot

check: $(STAMP) ## validate the settings and print what is enabled
	$(BIN)/python -m bot check

# npm ci from the lock file; without npm the renderer tests skip, except in CI, which must run them.
$(CARDS_STAMP): $(CARDS_DIR)/package.json $(CARDS_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		echo ">>> installing the Adaptive Cards renderer ($(CARDS_DIR))"; \
		cd $(CARDS_DIR) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	elif [ "$$CI" = true ]; then \
		echo "npm is missing: CI must run the Adaptive Cards renderer tests (apt-get install npm)"; exit 1; \
	else \
		echo ">>> npm not found: the Adaptive Cards renderer tests will skip"; \
	fi

test: $(STAMP) $(CARDS_STAMP) ## run the test suite (README "Tests": wants a local PostgreSQL)
	$(BIN)/python -m pytest

lint: $(STAMP) ## ruff and mypy (strict)
	$(BIN)/ruff check bot adapters tests bench
	$(BIN)/ruff format --check bot adapters
	$(BIN)/mypy

# The bench extra (LangGraph and awaithumans, the baselines bench/cycle.py and
# bench/api.py compare against)
# is installed for `make bench` only: tests never depend on it.
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP) ## print the benchmarks
	$(BIN)/python bench/cycle.py
	$(BIN)/python bench/cycle_sql.py
	$(BIN)/python bench/console.py
	$(BIN)/python bench/admin.py
	$(BIN)/python bench/redeem.py
	$(BIN)/python bench/teams_invoke.py
	$(BIN)/python bench/slack_click.py
	$(BIN)/python bench/click_path.py
	$(BIN)/python bench/api.py

# atheris on the token decoder and each renderer, FUZZ_SECONDS per target;
# a crashing input is saved under tests/fuzz/corpus/<target>/ and replayed by `make test`.
$(FUZZ_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,fuzz]'
	touch $(FUZZ_STAMP)

fuzz: $(FUZZ_STAMP) ## fuzz the token decoder and the renderers (FUZZ_SECONDS each)
	$(BIN)/python -m tests.fuzz.run --seconds $(FUZZ_SECONDS)

clean: ## remove .venv and the tools' caches
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
