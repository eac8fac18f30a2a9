# joint_tf_publisher: the two commands are `make run` and `make test`.
# Every target that needs Python first enters the ROS 2 world (tools/ros_env.sh: a sourced
# distro; else the ROS 2 client kit from ../shared/ros2kit, built into .ros2kit or $ROS2KIT;
# else ROS 2 from PyPI wheels) and sets up .venv (tools/env.py; a second run only checks).
# docs/development.md explains the worlds, the caches and CI.

SHELL  := /bin/bash
PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
MODEL  ?= urdf/demo_arm.urdf
# Prefix of every command that runs Python: enter the ROS 2 world first.
ROS    := source tools/ros_env.sh &&
export PYTHON
# The C++ robot_state_publisher for the bench's vs_rsp section: the rsp build kit beside the
# repository (benchmark infrastructure, not part of the project) builds it into RSP_ROOT.
RSP_KIT  ?= $(abspath ../shared/rsp)
RSP_ROOT ?= $(CURDIR)/.rsp

.PHONY: all env worlds colcon run test lint format typecheck pytest bench rsp soak compat mutate clean distclean help

all: test

help:
	@echo "make run      set up if needed, start the node on $(MODEL) with a demo joint sweep"
	@echo "make test     set up if needed, then ruff, mypy, colcon build and pytest (non-zero on any failure)"
	@echo "make env      build the ROS 2 kit if it is the world, create or check .venv"
	@echo "make worlds   create or check .venv-jazzy and .compat/ (make test runs tests in them)"
	@echo "make colcon   colcon build of the package into .colcon/ (with a distro or the kit)"
	@echo "make lint     ruff check + ruff format --check + mypy"
	@echo "make format   apply ruff's fixes and formatting"
	@echo "make bench    run the benchmarks (builds robot_state_publisher into .rsp first, see rsp)"
	@echo "make rsp      build the C++ robot_state_publisher into RSP_ROOT where the rsp kit is"
	@echo "make soak     run the soak test (tools/soak.py)"
	@echo "make compat   only the core tests under Humble's and Jazzy's Python/numpy/lxml"
	@echo "make mutate MODULES=\"joint_tf_publisher/x.py ...\"  mutation testing of those modules (mutmut; MUTANTS=, MUTATE_JOBS=, MUTATE_KEEP=1, MUTATE_UNTRACED=1)"
	@echo "make clean    remove build, cache and colcon output (keeps .venv and .ros2kit)"
	@echo "make distclean  also remove .venv, .venv-jazzy, .compat and .ros2kit"

env:
	@bash tools/ros_env.sh prepare
	@$(ROS) "$$JTP_PYTHON" tools/env.py
	@sh tools/ensure_graphviz.sh

# The other environments test/test_worlds.py runs tests in: ROS 2 Jazzy's PyPI wheels
# (.venv-jazzy, not beside a sourced distro, whose own rclpy is then the one under test) and
# Humble's and Ubuntu 24.04's Python, numpy and lxml (.compat/, where pyenv or PATH has
# Python 3.10 and 3.12; it says once which is missing). About 3 minutes from nothing, a few
# seconds once built.
worlds: env
	@$(ROS) if [ "$$JTP_ROS_WORLD" != distro ]; then "$$JTP_PYTHON" tools/env.py --world jazzy; fi
	@$(PYTHON) tools/compat.py --build

# The package built as a ROS user builds it (`colcon build --symlink-install` into .colcon/);
# tools/ros_env.sh sources .colcon/install so `ros2 launch joint_tf_publisher ...` finds it.
# Nothing to do in the pip world (no ros2 there).
colcon: env
	@bash tools/ros_env.sh colcon

run: env
	@$(ROS) $(VENV)/bin/joint-tf-publisher run $(MODEL)

lint: env
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(ROS) $(VENV)/bin/mypy

typecheck: env
	$(ROS) $(VENV)/bin/mypy

format: env
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# pytest exits 5 when it collected no test: make fails on every non-zero status, so an
# empty run can never pass.
# JTP_STRICT_SKIPS=1: a skipped test fails (test/conftest.py); only in the pip world (neither
# a distro nor the kit) may the launch tests skip.
pytest: env colcon worlds
	$(ROS) JTP_STRICT_SKIPS=1 $(VPY) -m pytest test -q

test: lint colcon worlds
	$(ROS) JTP_STRICT_SKIPS=1 $(VPY) -m pytest test -q

# vs_rsp needs robot_state_publisher: built first (target rsp) and, after the sections, its
# smoke test (test/bench/smoke_vs_rsp.py, which make test does not collect), unless
# BENCH_SECTIONS leaves vs_rsp out. A failed build does not stop the sections (vs_rsp then runs
# without RSP and says why); a failed section or smoke test fails the run.
RSP_ENV = RSP_KIT="$(RSP_KIT)" RSP_ROOT="$(RSP_ROOT)"
WANTS_RSP = case ",$${BENCH_SECTIONS:-vs_rsp}," in *,vs_rsp,*) true;; *) false;; esac
bench: env
	@$(ROS) "$$JTP_PYTHON" tools/env.py --extra requirements/bench.txt || echo "bench: requirements/bench.txt not installed (above); the fk table names the missing peers"
	@if $(WANTS_RSP); then $(MAKE) --no-print-directory rsp || true; fi
	@$(ROS) $(RSP_ENV) $(VPY) -m bench; status=$$?; \
	if $(WANTS_RSP); then $(ROS) $(RSP_ENV) $(VPY) -m pytest test/bench/smoke_vs_rsp.py -q || status=1; fi; \
	exit $$status

# About 13 minutes of compiling on 2 cores the first time, seconds once built. RSP_ROOT=DIR
# reuses a build elsewhere. Its Debian packages: once, RSP_ROOT=... bash $(RSP_KIT)/build.sh --apt.
rsp:
	@if [ -f "$(RSP_KIT)/build.sh" ]; then \
		echo "robot_state_publisher: building into $(RSP_ROOT) if needed (log: $(RSP_ROOT)/build.log)"; \
		mkdir -p "$(RSP_ROOT)"; \
		RSP_ROOT="$(RSP_ROOT)" bash "$(RSP_KIT)/build.sh" >"$(RSP_ROOT)/build.log" 2>&1 \
			&& echo "robot_state_publisher: ready" \
			|| { tail -20 "$(RSP_ROOT)/build.log"; echo "robot_state_publisher: build failed (log: $(RSP_ROOT)/build.log)" >&2; exit 1; }; \
	else echo "robot_state_publisher: no rsp build kit at $(RSP_KIT) (set RSP_KIT): not built"; fi

soak: env
	$(ROS) $(VPY) tools/soak.py

# The core tests alone under CPython 3.10 and 3.12 (pyenv), one line per environment;
# `make test` runs them too, counted one by one (test/test_worlds.py).
compat:
	@$(PYTHON) tools/compat.py

# Mutation testing (docs/development.md): mutmut over MODULES with the tests that mirror them
# (tools/mutate_tests.yaml where they do not), its surviving mutants and a count per module.
# Not in CI. mutmut goes into .venv on first use (requirements/mutate.txt, numpy held).
mutate: env
	@if [ -z "$(MODULES)" ]; then echo 'make mutate: give MODULES="joint_tf_publisher/node_core/parameters.py ..."' >&2; exit 2; fi
	@$(ROS) $(VPY) -c "import importlib.metadata as m; m.version('mutmut'); m.version('pytest-timeout')" 2>/dev/null \
		|| { $(ROS) "$$JTP_PYTHON" tools/env.py --extra requirements/mutate.txt; }
	@$(ROS) $(VPY) tools/mutate.py $(MODULES) $(if $(MUTANTS),--mutants $(MUTANTS))

clean:
	rm -rf build install log .colcon .mutate dist .pytest_cache .mypy_cache .ruff_cache .hypothesis *.egg-info
	find . \( -path ./.venv -o -path ./.venv-jazzy -o -path ./.compat -o -path ./.ros2kit \) -prune -o -name __pycache__ -type d -print -exec rm -rf {} +

# .ros2kit is the kit built here (never a kit elsewhere named by ROS2KIT).
distclean: clean
	rm -rf $(VENV) .venv-jazzy .compat .ros2kit
