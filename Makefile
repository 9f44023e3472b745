# Two entry points, each self-contained on a fresh machine:
#   make run    create .venv, install, diagnose a sample crash report against the bundled demo app
#   make test   create .venv, install with dev tools, install Debian's chromium if missing,
#               lint, type-check, run the tests
#   make browser  install Debian's chromium for the browser tests, only if it is missing
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The browser tests drive Debian's chromium through Playwright: Playwright's own browser
# download needs a host that is unreachable here and in air-gapped deployments.
CHROMIUM := /usr/bin/chromium

.PHONY: run test install lint typecheck browser clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11+) on PATH" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/diagnoser diagnose sample_reports/reports/issue_load_more_500.md --format markdown

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

browser: $(CHROMIUM)

# A file target: make runs it only when the binary is missing. sudo only when not root;
# the lock timeout waits for another apt-get instead of failing at once.
$(CHROMIUM):
	@command -v apt-get >/dev/null || { echo "no apt-get: install chromium at $@ by hand" >&2; exit 1; }
	@if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null; then sudo=sudo; \
	else echo "installing chromium needs root or sudo" >&2; exit 1; fi; \
	echo "installing Debian's chromium for the browser tests"; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium

test: lint typecheck browser
	$(VENV)/bin/pytest -q

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
