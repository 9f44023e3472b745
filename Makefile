# Two entry points, each self-contained on a fresh machine:
#   make run    create .venv, install, start the HTTP service on embedded defaults (SQLite,
#               the offline model, the demo app as repo `demo`); Swagger UI at /docs
#   make test   create .venv, install with dev tools, install Debian's chromium if missing,
#               start the local PostgreSQL if it is installed but stopped, lint, type-check,
#               run the tests
#   make demo     diagnose one sample report with the CLI (no service)
#   make install  the development install: the dev tools too, and the bytecode
#   make browser  install Debian's chromium for the browser tests, only if it is missing
#   make sandbox  install Debian's bubblewrap (and nodejs, a JDK, junit4 and junit5) for --verify,
#                 only if missing
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
# The browser tests drive Debian's chromium through Playwright: Playwright's own browser
# download needs a host that is unreachable here and in air-gapped deployments.
CHROMIUM := /usr/bin/chromium
# --verify runs a report's reproducer under bubblewrap (JavaScript ones with Node.js,
# JUnit tests with a JDK and JUnit 4); the tests run real sandboxes.
BWRAP := /usr/bin/bwrap
NODE := /usr/bin/node
JAVAC := /usr/bin/javac
JUNIT := /usr/share/java/junit4.jar
JUNIT5 := /usr/share/java/junit-platform-console-standalone.jar
PYTEST_WORKERS ?= auto
MYPY_LOG := $(VENV)/mypy.log

.PHONY: run demo test install bytecode lint typecheck browser sandbox postgres clean

# What the service and the CLI need (`make run`, `make demo`); the dev tools come with the
# first target that uses them. Not in a user's install: rich, which schemathesis brings
# and which httpx imports when it is there (~0.1 s of every `diagnoser diagnose`).
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11+) on PATH" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[dev]'
	touch $(DEV_STAMP)

# The development install: the dev tools too (the tests, the benchmarks).
install: $(DEV_STAMP) bytecode

# Our modules' bytecode, written ahead. Where PYTHONDONTWRITEBYTECODE is set (this
# machine and CI set it) Python never caches it, and every start compiled our 20,000
# lines again: 0.2 s of a 2 s `diagnoser diagnose` (docs/benchmarks.md, "CLI start").
# Up to date it costs 0.1 s; Python ignores bytecode older than its source.
bytecode: $(STAMP)
	@$(PY) -m compileall -q api diagnoser repomap diagnoser_entry.py

run: bytecode
	$(VENV)/bin/diagnoser serve

demo: bytecode
	$(VENV)/bin/diagnoser diagnose sample_reports/reports/issue_load_more_500.md --format markdown

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(DEV_STAMP)
	$(VENV)/bin/mypy

browser: $(CHROMIUM)

sandbox: $(BWRAP) $(NODE) $(JAVAC) $(JUNIT) $(JUNIT5)

# File targets: make runs one only when its binary is missing. sudo only when not root;
# the lock timeout waits for another apt-get instead of failing at once.
APT_INSTALL = command -v apt-get >/dev/null || { echo "no apt-get: install $(1) by hand" >&2; exit 1; }; \
	if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null; then sudo=sudo; \
	else echo "installing $(1) needs root or sudo" >&2; exit 1; fi; \
	echo "installing Debian's $(1) $(2)"; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq $(1)

$(CHROMIUM):
	@$(call APT_INSTALL,chromium,for the browser tests)

$(BWRAP):
	@$(call APT_INSTALL,bubblewrap,for the sandboxed runs of --verify)

$(NODE):
	@$(call APT_INSTALL,nodejs,for the JavaScript reproducers of --verify)

$(JAVAC):
	@$(call APT_INSTALL,default-jdk-headless,for the JUnit reproducers of --verify)

$(JUNIT):
	@$(call APT_INSTALL,junit4,for the JUnit reproducers of --verify)

$(JUNIT5):
	@$(call APT_INSTALL,junit5,for the JUnit 5 reproducers of --verify)

# The API tests run on PostgreSQL too (127.0.0.1:5432, database `test`) and fail when it
# is down: start the installed cluster if it is not answering.
postgres:
	@pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null || { \
	  command -v pg_ctlcluster >/dev/null || { echo "PostgreSQL is not running at 127.0.0.1:5432 and pg_ctlcluster is missing" >&2; exit 1; }; \
	  pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start; }

# One worker more than the cores (pytest-xdist, `-n auto`: tests/conftest.py); tests/hostile
# runs whole on one worker (tests/scheduling.py).
# PYTEST_WORKERS=0 runs them in this process, one at a time. mypy (a minute on a fresh
# clone, on one core) runs beside them, where the tests leave a core waiting on their
# servers; its verdict is printed after theirs, and either failing fails `make test`.
test: $(DEV_STAMP) lint bytecode browser sandbox postgres
	@echo "mypy --strict runs beside the tests; its verdict follows theirs"
	@$(VENV)/bin/mypy > $(MYPY_LOG) 2>&1 & mypy=$$!; \
	trap 'kill $$mypy 2>/dev/null' INT TERM; \
	$(VENV)/bin/pytest -q -n $(PYTEST_WORKERS); tests=$$?; \
	if wait $$mypy; then tail -n 1 $(MYPY_LOG); else cat $(MYPY_LOG); exit 1; fi; \
	exit $$tests

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
