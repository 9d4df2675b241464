# Two commands set everything up on a fresh machine with only python3 and make:
#   make demo   train RankBoost on the bundled MQ2008 fold 1 and print its scores
#   make test   run the test suite
# Each creates a local virtualenv (.venv) and installs what it needs into it (`make lint` adds
# ruff and mypy). pip does not precompile every installed module (--no-compile): Python
# compiles, and caches, only what is imported, which keeps .venv under 1 GB (README).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CORE := $(VENV)/.core-installed
TEST := $(VENV)/.test-installed
DEV := $(VENV)/.dev-installed
BENCH := $(VENV)/.bench-installed

.PHONY: demo test lint bench clean clean-cache

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(CORE): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet --no-compile -e ".[progress]"
	touch $@

$(TEST): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet --no-compile -e ".[test]"
	touch $@ $(CORE)

$(DEV): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet --no-compile -e ".[test,dev]"
	touch $@ $(TEST) $(CORE)

$(BENCH): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet --no-compile -e ".[test,dev,bench]"
	touch $@ $(DEV) $(TEST) $(CORE)

demo: $(CORE)
	$(PY) -m rankboost demo

test: $(TEST)
	$(PY) -m pytest -q -n auto --maxprocesses=4

lint: $(DEV)
	$(VENV)/bin/ruff check src tests benchmarks experiments
	$(VENV)/bin/ruff format --check src tests
	$(VENV)/bin/mypy

bench: $(BENCH)
	$(PY) benchmarks/bench_engine.py
	$(PY) benchmarks/letor.py

# numba's on-disk cache does not notice when a kernel called from another module changes
clean-cache:
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete

clean: clean-cache
	rm -rf $(VENV) build dist src/*.egg-info
