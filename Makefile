# gradlab: `make lab` to learn, `make test` to check. Both bootstrap .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8888
STAMP  := $(VENV)/.installed-stamp

.PHONY: install lab test test-unit test-notebooks clean

install: $(STAMP)

# The stamp makes a second `make install` a no-op until pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# JupyterLab refuses to start as root unless told; containers and CI machines often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: install
	$(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(PORT) --ServerApp.root_dir=notebooks $(ROOT_FLAG)

test: test-unit test-notebooks

test-unit: install
	$(BIN)/python -m pytest -q tests

test-notebooks: install
	$(BIN)/python -m pytest -q --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg notebooks/*.ipynb

clean:
	rm -rf $(VENV) .gradlab-cache
