# joint_tf_publisher: the two commands are `make run` and `make test`.
# Every target that needs Python sets up .venv first (tools/env.py; a second run only checks).

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
MODEL  ?= urdf/demo_arm.urdf

.PHONY: all env run test lint format typecheck pytest bench soak compat clean distclean help

all: test

help:
	@echo "make run      set up if needed, start the node on $(MODEL) with a demo joint sweep"
	@echo "make test     set up if needed, then ruff, mypy and pytest (non-zero on any failure)"
	@echo "make env      create or check .venv (ROS 2 from PyPI wheels unless a distro is sourced)"
	@echo "make lint     ruff check + ruff format --check + mypy"
	@echo "make format   apply ruff's fixes and formatting"
	@echo "make bench    run the benchmarks"
	@echo "make soak     run the soak test (tools/soak.py)"
	@echo "make compat   core tests under Humble's and Jazzy's Python/numpy/lxml (needs pyenv)"
	@echo "make clean    remove build, cache and colcon output (keeps .venv); distclean: also .venv"

env:
	@$(PYTHON) tools/env.py
	@sh tools/ensure_graphviz.sh

run: env
	@$(VENV)/bin/joint-tf-publisher run $(MODEL)

lint: env
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

typecheck: env
	$(VENV)/bin/mypy

format: env
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# pytest exits 5 when it collected no test: make fails on every non-zero status, so an
# empty run can never pass.
# JTP_STRICT_SKIPS=1: a skipped test fails (test/conftest.py), except launch_testing modules.
pytest: env
	JTP_STRICT_SKIPS=1 $(VPY) -m pytest test -q

test: lint
	JTP_STRICT_SKIPS=1 $(VPY) -m pytest test -q

bench: env
	@if [ -f requirements/bench.txt ]; then $(VPY) -m pip install -q --disable-pip-version-check -r requirements/bench.txt; fi
	@if [ -f bench/__main__.py ]; then $(VPY) -m bench; \
	elif [ -f bench/run.py ]; then $(VPY) bench/run.py; \
	else echo "no benchmarks yet (bench/__main__.py or bench/run.py)" >&2; exit 1; fi

soak: env
	$(VPY) tools/soak.py

# Not part of `make test`: needs CPython 3.10 and 3.12 (pyenv) and builds .compat/ from PyPI.
compat:
	@$(PYTHON) tools/compat.py

clean:
	rm -rf build install log .pytest_cache .mypy_cache .ruff_cache .hypothesis *.egg-info
	find . \( -path ./.venv -o -path ./.compat \) -prune -o -name __pycache__ -type d -print -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) .compat
