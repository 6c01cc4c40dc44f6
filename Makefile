# Two commands do everything: `make demo` and `make test` (each sets up .venv when missing).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
export OMP_NUM_THREADS ?= 1
export MPLBACKEND ?= Agg

.PHONY: demo test setup browser lint bench clean

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

# the layer contract (lint-imports, [tool.importlinter] in pyproject.toml) and mypy
# ([tool.mypy]; incremental with .mypy_cache) run beside ruff, before the tests
test: $(STAMP) browser
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
