# gradlab: `make lab` to learn, `make app` for the lab alone, `make test` to check
# (`make test-fast` while editing).
# Each bootstraps .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8888
STAMP  := $(VENV)/.installed-stamp

# gradlab caches results in the user's cache directory (~/.cache/gradlab); the repository's
# own runs (lessons, lab, app, table, tests) keep theirs in the checkout, as the lessons say.
export GRADLAB_CACHE ?= $(CURDIR)/.gradlab-cache

.PHONY: install lab app test test-unit test-notebooks test-browser test-wheel test-oldest test-gpu test-fast doctor table bench notebooks clean

install: $(STAMP)

# The stamp makes a second `make install` a no-op until pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[lab,test]'
	touch $(STAMP)

# JupyterLab refuses to start as root unless told; containers and CI machines often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: install
	$(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(PORT) --ServerApp.root_dir=notebooks $(ROOT_FLAG)

# The lab alone as a web page (Voila: title, controls and plots, no code). Voila, unlike
# JupyterLab, has no root check, so it needs no --allow-root.
app: install
	$(BIN)/voila app/lab.ipynb --port=$(PORT) --no-browser --Voila.ip=127.0.0.1

test: test-unit test-notebooks

# The unit tests in JOBS processes (pytest-xdist): much of a test is Python tracing graphs on
# one core, so two workers on two cores took 1,593 s where one took 2,062 s. JOBS=0 runs them
# in this process.
JOBS ?= 2
test-unit: install
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n $(JOBS) --dist worksteal tests

# The edit loop: the unit tests not marked slow (under 2 minutes on 2 cores).
test-fast: install
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -m "not slow" tests

# Two lessons at a time, each in its own worker and kernel (--dist loadscope keeps a lesson's
# cells in order on one worker, as nbval asks); JOBS=0 runs them one after another.
test-notebooks: install
	$(BIN)/python -m pytest -q -n $(JOBS) --dist loadscope --nbval --nbval-current-env --nbval-sanitize-with tests/nbval-sanitize.cfg notebooks/*.ipynb

# The wheel as a user gets it, outside the checkout: core install fits like Keras, [lab]
# runs the table from another directory, neither writes into site-packages (tools/test_wheel.py).
test-wheel: install
	$(BIN)/python tools/test_wheel.py

# The oldest supported pair (TensorFlow 2.18, Keras 3.8) in a venv outside the checkout, cached
# in ~/.cache/gradlab-ci: the wheel installed there, `doctor`, and the engine and training tests
# (the fast tier and those marked `oldest`) against it (tools/test_oldest.py), in JOBS processes.
test-oldest: install
	JOBS=$(JOBS) $(BIN)/python tools/test_oldest.py

# The tests marked `gpu` (towers on GPUs, MirroredStrategy with NCCL, the allocator peak on
# GPU:0, XLA on a conv net); without a GPU each is skipped, saying what it would run.
test-gpu: install
	$(BIN)/python -m gradlab doctor
	$(BIN)/python -m pytest -q -rs -m gpu tests

# What a bug report needs: versions, devices, XLA, the GPU allocator, every private-name probe.
doctor: install
	$(BIN)/python -m gradlab doctor

# A real JupyterLab and the Voila app driven by Debian's Chromium through Playwright;
# installs both if missing.
# Playwright drives /usr/bin/chromium: never `playwright install` (no browser downloads).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

test-browser: install
	test -x /usr/bin/chromium || { $(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	$(BIN)/python -c 'import playwright' 2>/dev/null || $(BIN)/python -m pip install --quiet -e '.[browser]'
	$(BIN)/python -m pytest -q tests/browser

# The published accumulation table, reproduced: 10 runs x 1,000 updates, cached in $(GRADLAB_CACHE).
table: install
	$(BIN)/python -m gradlab table --runs 10 --updates 1000

# Every strategy on the same work: ms/update, ratios to large_batch and keras, peak memory.
bench: install
	$(BIN)/python -m gradlab bench

# Re-execute every lesson in place and store it clean (after changing gradlab).
notebooks: install
	$(BIN)/python tools/run_notebooks.py

# The venv, the checkout's result cache, and build output (`python -m build`, pip wheel, caches).
clean:
	rm -rf $(VENV) .gradlab-cache build dist *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
