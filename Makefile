# Two commands do everything: `make demo` and `make test` (each sets up .venv when missing).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
export OMP_NUM_THREADS ?= 1
export MPLBACKEND ?= Agg

.PHONY: demo test setup browser postgres kube-tools cluster-demo lint bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# the CPU build of torch first: a bare torch requirement would pull a multi-GB CUDA build
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/rlsched demo

# headless Chromium for the leaderboard page test (tests/report/test_leaderboard_html.py):
# Debian's chromium and chromium-driver, installed once when missing and apt-get is usable
# (root, or sudo without a password); otherwise that test skips and says why
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	else echo "chromium: not installed and no root: the HTML page test will skip"; exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "chromium: no apt-get: the HTML page test will skip"; exit 0; fi; \
	echo "installing chromium and chromium-driver (apt-get)"; log=$$(mktemp); \
	{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends chromium chromium-driver; } >$$log 2>&1 \
	  || { tail -n 5 $$log; echo "chromium: apt-get failed: the HTML page test will skip"; }; \
	rm -f $$log

# a PostgreSQL server for the replicated-mode tests (tests/serve/test_cluster.py and the
# PostgreSQL store/registry tests start a throwaway one on loopback, as an unprivileged user
# when run as root): Debian's postgresql, installed once when no server binaries exist
postgres:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; \
	then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	else echo "postgresql: not installed and no root: the PostgreSQL tests will skip"; exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "postgresql: no apt-get: the PostgreSQL tests will skip"; exit 0; fi; \
	echo "installing postgresql (apt-get)"; log=$$(mktemp); \
	{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends postgresql; } >$$log 2>&1 \
	  || { tail -n 5 $$log; echo "postgresql: apt-get failed: the PostgreSQL tests will skip"; }; \
	rm -f $$log

# kubectl (its kustomize renders deploy/kubernetes/ in tests/deploy/): Debian's
# kubernetes-client when neither kubectl nor kustomize exists
kube-tools:
	@if command -v kubectl >/dev/null 2>&1 || command -v kustomize >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	else echo "kubectl: not installed and no root: the manifest tests will skip"; exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "kubectl: no apt-get: the manifest tests will skip"; exit 0; fi; \
	echo "installing kubernetes-client (apt-get)"; log=$$(mktemp); \
	{ $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends kubernetes-client; } >$$log 2>&1 \
	  || { tail -n 5 $$log; echo "kubectl: apt-get failed: the manifest tests will skip"; }; \
	rm -f $$log

# the replicated mode on one machine: PostgreSQL (as an unprivileged user, loopback), three
# replicas, an active and a standby learner, 15 s of load with a replica killed, a summary
cluster-demo: $(STAMP) postgres
	$(PY) -m rlsched.serve.cluster --seconds 15

# the layer contract (lint-imports, [tool.importlinter] in pyproject.toml) and mypy
# ([tool.mypy]; incremental with .mypy_cache) run beside ruff, before the tests
test: $(STAMP) browser postgres kube-tools
	$(VENV)/bin/ruff check --output-format concise src tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check --output-format concise src tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache .mypy_cache .import_linter_cache .grimp_cache
