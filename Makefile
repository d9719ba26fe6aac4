# Every target bootstraps .venv from nothing; the stamp makes it idempotent.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed
FUZZ_STAMP := $(VENV)/.fuzz-installed
FUZZ_SECONDS ?= 30

.PHONY: run test lint bench check clean fuzz

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python -m bot

check: $(STAMP)
	$(BIN)/python -m bot check

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check bot adapters tests bench
	$(BIN)/ruff format --check bot adapters
	$(BIN)/mypy

# The bench extra (LangGraph, the baseline bench/cycle.py compares against)
# is installed for `make bench` only: tests never depend on it.
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python bench/cycle.py
	$(BIN)/python bench/cycle_sql.py
	$(BIN)/python bench/console.py
	$(BIN)/python bench/admin.py
	$(BIN)/python bench/redeem.py
	$(BIN)/python bench/teams_invoke.py
	$(BIN)/python bench/slack_click.py

# atheris on the token decoder and each renderer, FUZZ_SECONDS per target;
# a crashing input is saved under tests/fuzz/corpus/<target>/ and replayed by `make test`.
$(FUZZ_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,fuzz]'
	touch $(FUZZ_STAMP)

fuzz: $(FUZZ_STAMP)
	$(BIN)/python -m tests.fuzz.run --seconds $(FUZZ_SECONDS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
