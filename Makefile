# Two entry points, each self-contained on a fresh machine:
#   make run    create .venv, install, start the HTTP service on embedded defaults (SQLite,
#               the offline model, the demo app as repo `demo`); Swagger UI at /docs
#   make test   create .venv, install with dev tools, install Debian's chromium if missing,
#               start the local PostgreSQL if it is installed but stopped, lint, type-check,
#               run the tests
#   make demo     diagnose one sample report with the CLI (no service)
#   make browser  install Debian's chromium for the browser tests, only if it is missing
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The browser tests drive Debian's chromium through Playwright: Playwright's own browser
# download needs a host that is unreachable here and in air-gapped deployments.
CHROMIUM := /usr/bin/chromium
PYTEST_WORKERS ?= auto

.PHONY: run demo test install lint typecheck browser postgres clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11+) on PATH" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/diagnoser serve

demo: $(STAMP)
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

# The API tests run on PostgreSQL too (127.0.0.1:5432, database `test`) and fail when it
# is down: start the installed cluster if it is not answering.
postgres:
	@pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null || { \
	  command -v pg_ctlcluster >/dev/null || { echo "PostgreSQL is not running at 127.0.0.1:5432 and pg_ctlcluster is missing" >&2; exit 1; }; \
	  pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start; }

# On every core (pytest-xdist); tests/hostile runs whole on one worker (tests/scheduling.py).
# PYTEST_WORKERS=0 runs them in this process, one at a time.
test: lint typecheck browser postgres
	$(VENV)/bin/pytest -q -n $(PYTEST_WORKERS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
