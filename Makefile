# Two commands set everything up on a fresh machine with only python3 and make:
#   make demo   train RankBoost on the bundled MQ2008 fold 1 and print its scores
#   make test   run the test suite
# Each creates a local virtualenv (.venv) and installs what it needs into it (`make lint` adds
# ruff and mypy). The installs go through uv, itself pip-installed into .venv first: it fetches
# and unpacks the wheels in parallel, and the `test` extra installs in about a third of pip's
# wall time (README). Like pip --no-compile, uv does not precompile every installed module:
# Python compiles, and caches, only what is imported, which keeps .venv under 1 GB.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CORE := $(VENV)/.core-installed
TEST := $(VENV)/.test-installed
DEV := $(VENV)/.dev-installed
BENCH := $(VENV)/.bench-installed

.PHONY: demo test lint bench clean clean-cache

UV := $(VENV)/bin/uv
# copy, not hardlink, from uv's cache: .venv owns its files (and `du -sh .venv` counts them)
INSTALL := UV_LINK_MODE=copy $(UV) pip install --quiet --python $(PY)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(UV): | $(VENV)/bin/python
	$(PY) -m pip install --quiet uv

$(CORE): pyproject.toml | $(UV)
	$(INSTALL) -e ".[progress]"
	touch $@

$(TEST): pyproject.toml | $(UV)
	$(INSTALL) -e ".[test]"
	touch $@ $(CORE)

$(DEV): pyproject.toml | $(UV)
	$(INSTALL) -e ".[test,dev]"
	touch $@ $(TEST) $(CORE)

$(BENCH): pyproject.toml | $(UV)
	$(INSTALL) -e ".[test,dev,bench]"
	touch $@ $(DEV) $(TEST) $(CORE)

# uv, unlike pip, does not compile the installed modules to bytecode, and these machines set
# PYTHONDONTWRITEBYTECODE, so every `rankboost` command would compile numpy (and rankboost)
# from source: about half of a `rankboost predict` on MQ2008 (README). A training compiles
# numba's modules too: 0.7 s of CPU more for `import numba` and numba's set-up than with their
# bytecode (issue 47, benchmarks/bench_first_fit.py --bytecode). Compiled once here for the
# commands a user runs (15 MB; the tests keep theirs in .pycache).
CLI_BYTECODE := $(VENV)/.cli-bytecode
$(CLI_BYTECODE): $(CORE)
	PYTHONPYCACHEPREFIX= $(PY) -m compileall -q -j0 -x '/tests/' \
		"$$($(PY) -c 'import numpy, os; print(os.path.dirname(numpy.__file__))')" \
		"$$($(PY) -c 'import numba, os; print(os.path.dirname(numba.__file__))')" \
		"$$($(PY) -c 'import llvmlite, os; print(os.path.dirname(llvmlite.__file__))')" src/rankboost
	touch $@

demo: $(CORE) $(CLI_BYTECODE)
	$(PY) -m rankboost demo

# Python caches the bytecode of what the tests import, in .pycache (not in .venv), even where
# the environment sets PYTHONDONTWRITEBYTECODE: otherwise every xdist worker, CLI subprocess
# and Dask worker compiles numpy, scipy, scikit-learn and numba from source again (about 6 s
# of CPU each on these machines).
test: $(TEST)
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX="$(CURDIR)/.pycache" \
	$(PY) -m pytest -q -n auto --maxprocesses=4 --dist loadgroup

lint: $(DEV)
	$(VENV)/bin/ruff check src tests benchmarks experiments
	$(VENV)/bin/ruff format --check src tests
	$(VENV)/bin/mypy

bench: $(BENCH) $(CLI_BYTECODE)
	$(PY) benchmarks/bench_engine.py
	$(PY) benchmarks/letor.py

# numba's on-disk cache does not notice when a kernel called from another module changes
clean-cache:
	find src -name '*.nbi' -delete -o -name '*.nbc' -delete

clean: clean-cache
	rm -rf $(VENV) .pycache build dist src/*.egg-info
