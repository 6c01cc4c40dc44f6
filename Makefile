# Two commands do everything: `make demo` and `make test` (each sets up .venv when missing).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
export OMP_NUM_THREADS ?= 1
export MPLBACKEND ?= Agg

.PHONY: demo test setup system-deps browser postgres kube-tools cluster-demo lint bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# the CPU build of torch first: a bare torch requirement would pull a multi-GB CUDA build
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[dev]'
	# numba's kernels compiled once into its disk cache (one episode of each zoo policy), not
	# in the first demo's zoo stage, where each process would compile what it meets first
	$(VENV)/bin/rlsched zoo compile
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/rlsched demo

# Debian packages some tests need (scripts/system-deps.sh): headless Chromium and its driver
# (the leaderboard page test), a PostgreSQL server (the replicated-mode tests start a throwaway
# one on loopback, as an unprivileged user when run as root) and kubectl (its kustomize renders
# deploy/kubernetes/); installed once when missing and apt-get is usable, in one apt-get run;
# otherwise those tests skip and say why
system-deps:
	@sh scripts/system-deps.sh
browser postgres kube-tools:
	@sh scripts/system-deps.sh $@

# the replicated mode on one machine: PostgreSQL (as an unprivileged user, loopback), three
# replicas, an active and a standby learner, 15 s of load with a replica killed, a summary
cluster-demo: $(STAMP) postgres
	$(PY) -m rlsched.serve.cluster --seconds 15

# the layer contract (lint-imports, [tool.importlinter] in pyproject.toml) and mypy
# ([tool.mypy]; incremental with .mypy_cache) run beside ruff, before the tests
test: $(STAMP) system-deps
	$(VENV)/bin/ruff check --output-format concise src tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(PY) -m pytest -q -n 2 --dist worksteal

lint: $(STAMP)
	$(VENV)/bin/ruff check --output-format concise src tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache .mypy_cache .import_linter_cache .grimp_cache
