# Every target bootstraps .venv from nothing; the stamp makes it idempotent.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed
FUZZ_STAMP := $(VENV)/.fuzz-installed
FUZZ_SECONDS ?= 30
# The npm tools the tests drive, each pinned by its lock file: the official MCP
# conformance suite (tests/conformance), Microsoft's Adaptive Cards renderer
# (tests/adaptivecards, for the Teams card tests), and the TypeScript MCP SDK as a
# second client of the MCP gateway (tests/mcp_gateway_client).
NPM_TOOLS := tests/conformance tests/adaptivecards tests/mcp_gateway_client
NPM_STAMPS := $(addsuffix /node_modules/.installed,$(NPM_TOOLS))

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

# npm ci from each lock file. Without npm a user's `make test` goes on (the tests
# that need these skip, saying so), but CI must run them, so there it fails here.
tests/%/node_modules/.installed: tests/%/package.json tests/%/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		echo ">>> installing tests/$* (npm ci)"; \
		cd tests/$* && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	elif [ -n "$$CI" ]; then \
		echo ">>> npm is missing: CI must run the tests that need tests/$* (apt-get install npm)" >&2; exit 1; \
	else \
		echo ">>> npm not found: the tests that need tests/$* will skip"; \
	fi

# The suite runs in parallel (pytest-xdist), one worker per core: each worker's ports,
# PostgreSQL database and folders are its own (docs/development.md "Tests"); worksteal
# hands a worker that ran out the other's queued tests. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= auto
test: $(STAMP) $(NPM_STAMPS) ## run the test suite (docs/development.md "Tests": wants a local PostgreSQL)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

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
	$(BIN)/python bench/mcp_gateway.py
	$(BIN)/python bench/scale.py

# atheris on the token decoder and each renderer, FUZZ_SECONDS per target;
# a crashing input is saved under tests/fuzz/corpus/<target>/ and replayed by `make test`.
$(FUZZ_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,fuzz]'
	touch $(FUZZ_STAMP)

fuzz: $(FUZZ_STAMP) ## fuzz the token decoder and the renderers (FUZZ_SECONDS each)
	$(BIN)/python -m tests.fuzz.run --seconds $(FUZZ_SECONDS)

clean: ## remove .venv, the npm tools and the caches
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache $(addsuffix /node_modules,$(NPM_TOOLS))
