# kubegap-web: `make run` starts the product, `make test` runs every check CI runs.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PORT

.PHONY: run test lint lock demo-data clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "kubegap-web needs Python 3.11 (found " + sys.version.split()[0] + "); set PYTHON=/path/to/python3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.base: requirements/base.txt | $(BIN)/python
	$(BIN)/pip install --quiet --require-hashes -r requirements/base.txt
	@touch $@

$(VENV)/.dev: requirements/dev.txt $(VENV)/.base
	$(BIN)/pip install --quiet --require-hashes -r requirements/dev.txt
	@touch $@

run: $(VENV)/.base
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py load_cases
	$(BIN)/python manage.py setup_demo
	@echo "kubegap-web is starting on http://127.0.0.1:$(PORT)/ (Ctrl-C stops the web server, worker and scheduler)"
	$(BIN)/python -m kubegap_web.supervise --port $(PORT)

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .
	$(BIN)/python manage.py check --fail-level WARNING
	$(BIN)/python manage.py makemigrations --check --dry-run

test: $(VENV)/.dev lint
	$(BIN)/python -m pytest

# Re-pin every dependency (needs network access to PyPI).
lock:
	$(PYTHON) -m pip install --quiet uv
	cd requirements && $(PYTHON) -m uv pip compile --python-version 3.11 --generate-hashes -q base.in -o base.txt
	cd requirements && $(PYTHON) -m uv pip compile --python-version 3.11 --generate-hashes -q dev.in -o dev.txt

# Regenerate the bundled demo snapshots from audits/demo/clusters.py.
demo-data: $(VENV)/.base
	$(BIN)/python -m audits.demo.generate

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache
