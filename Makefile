# dgtcast: `make demo` and `make test` are all the set-up a fresh machine needs.
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
SPEED   ?= 4

.PHONY: demo test setup system lint typecheck typecheck-linux typecheck-win32 typecheck-darwin \
	pytest bench wheel clean

setup: $(STAMP) $(NODE_STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

# System packages the tests start for real: a mosquitto broker, headless Chromium and the
# Stockfish engine ([analysis]; Debian puts it in /usr/games, not on every PATH).
system:
	@command -v mosquitto >/dev/null 2>&1 || test -x /usr/sbin/mosquitto || \
	  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q mosquitto; }
	@command -v chromium >/dev/null 2>&1 || \
	  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }
	@command -v stockfish >/dev/null 2>&1 || test -x /usr/games/stockfish || \
	  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q stockfish; }

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The source is type-checked for every platform arbiters run (tests and bench are POSIX-only),
# each in a process and a cache of its own (`make -j2 typecheck` runs them side by side).
typecheck: typecheck-linux typecheck-win32 typecheck-darwin

typecheck-linux: $(STAMP)
	$(VENV)/bin/mypy

typecheck-win32: $(STAMP)
	$(VENV)/bin/mypy --platform win32 --cache-dir .mypy_cache/win32 base daemon drivers broadcast

typecheck-darwin: $(STAMP)
	$(VENV)/bin/mypy --platform darwin --cache-dir .mypy_cache/darwin base daemon drivers broadcast

# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE, as
# in many CI images): the suite starts some 200 Python processes (workers, daemons,
# emulators), and each would compile every module it imports from source again. The tests
# are collected once first, in one process, so that the workers read pytest's rewritten
# test modules instead of each rewriting all of them (about 10 s of CPU per worker).
PYTEST  := env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/pytest
pytest: setup system
	-$(PYTEST) --collect-only -q -n 0 >/dev/null 2>&1
	$(PYTEST)

# Once set up: ruff and the three mypy runs side by side, then pytest, which keeps every
# core busy (beside mypy it took some 20 s longer). pytest runs whatever the checks said;
# each one's output is shown whole when it ends, and any failure fails `make test`.
test: setup system
	$(MAKE) --no-print-directory -j2 --output-sync=target lint typecheck; checks=$$?; \
	$(MAKE) --no-print-directory pytest && exit $$checks

demo: setup
	$(VENV)/bin/dgtcast demo --speed $(SPEED)

# A wheel that works alone: setup.py copies the chessboard and the demo's files into it.
wheel: setup
	rm -rf dist build
	$(PY) -m pip wheel -q --no-deps -w dist .

bench: setup
	bench/run

clean:
	rm -rf $(VENV) node_modules .pytest_cache .mypy_cache .ruff_cache build dist
