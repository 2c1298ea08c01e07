# manetlab developer entry points (see README.md):
#   make run    set up .venv, build the extension, run the default study
#               (examples/default_study.toml: NewReno vs ABRA on the same seed)
#   make test   set up, make lint, then cargo tests of the core and the pytest suites
#   make lint   cargo fmt --check and cargo clippy -D warnings (both crates, all
#               targets; rustfmt.toml), ruff (python/manetlab, tests, benchmarks,
#               tools), mypy --strict (python/manetlab) and stubtest (_core.pyi
#               against the built extension); configured in pyproject.toml
#   make bench  set up, then benchmarks/run.py --vs-ns2 (ours vs ns-2.35;
#               BENCH_REPEAT=3 runs each, BENCH_SEEDS=5 seeds of the 20-node row;
#               PGO build when the toolchain has llvm-profdata, as below), then
#               benchmarks/scaling.py (cost per node-second, 100-6400 nodes)
#   make validate  long validations; rewrites the tables in docs/validation/
#               (validate-ns2: manetlab vs ns-2.35, needs `ns` on PATH)
#   make wheel  build an abi3 wheel (release, stripped; no PGO) into dist/, with
#               examples/ and docs/ inside the package (manetlab/_data/)
#   make test-wheel  make wheel, then tests/test_wheel.py: install it into a
#               fresh venv (dependencies from PyPI) and run it there without Rust
#   make clean  remove build outputs (make distclean also removes .venv)
# Set-up is stamp-driven: the venv, its dependencies and the release build are
# redone only when their inputs change, so a second `make run` just runs.

SHELL := /bin/bash
.DEFAULT_GOAL := run

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
DEPS_STAMP := $(VENV)/.manetlab-deps
BUILD_STAMP := $(VENV)/.manetlab-build
EXAMPLE := examples/default_study.toml

# Everything the extension is built from; a change to any of these rebuilds it.
RUST_INPUTS := $(shell find crates -type f -not -path '*/target/*' 2>/dev/null) Cargo.toml Cargo.lock
# maturin develop drops the extension into python/manetlab/; rebuild if it was removed.
EXT_MISSING := $(if $(wildcard python/manetlab/_core*.so),,FORCE)

.PHONY: run test lint bench validate validate-ns2 wheel test-wheel clean distclean FORCE

run: $(BUILD_STAMP)
	$(PY) -m manetlab compare $(EXAMPLE) --flow 0 --transports newreno abra --out results/default_study

test: lint $(BUILD_STAMP)
	cargo test --workspace --exclude manetlab-py
	$(PY) -m pytest -q

# The Python gate of `make test` (settings in pyproject.toml; formatting is not
# checked). stubtest imports the built extension and fails when python/manetlab/_core.pyi,
# which mypy reads for it, disagrees with what the extension defines.
LINT_PATHS := python/manetlab tests benchmarks tools
# rustfmt and clippy ship with rustup's default profile; a minimal toolchain gets
# them added here (without rustup the commands below fail and say so).
lint: $(BUILD_STAMP)
	@cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest manetlab._core

# Issue 15's workloads against ns-2.35 (when `ns` is on PATH), alternating runs.
BENCH_REPEAT ?= 3
BENCH_SEEDS ?= 5
bench: $(BUILD_STAMP)
	$(PY) benchmarks/run.py --vs-ns2 --repeat $(BENCH_REPEAT) --seeds $(BENCH_SEEDS) --pgo $(if $(filter 0,$(PGO)),off,auto)
	cargo build --release --quiet -p manetlab-core --example run_scenario
	$(PY) benchmarks/scaling.py --repeats $(BENCH_REPEAT)

# An abi3 wheel (CPython >= 3.11) in dist/. examples/ and docs/ are copied into
# python/manetlab/_data/ (git-ignored; included via [tool.maturin] include) for
# the build only and removed afterwards, so they are not duplicated in git; an
# editable install reads them from the repository (manetlab/packaged.py).
WHEEL_DATA := python/manetlab/_data
wheel: $(DEPS_STAMP)
	rm -rf $(WHEEL_DATA)
	mkdir -p $(WHEEL_DATA)/examples $(WHEEL_DATA)/docs/img $(WHEEL_DATA)/docs/validation
	cp examples/* $(WHEEL_DATA)/examples/
	cp README.md docs/*.md $(WHEEL_DATA)/docs/
	cp docs/img/* $(WHEEL_DATA)/docs/img/
	cp docs/validation/*.md $(WHEEL_DATA)/docs/validation/
	env -u CONDA_PREFIX $(VENV)/bin/maturin build --release --strip --out dist; rc=$$?; rm -rf $(WHEEL_DATA); exit $$rc

# Installs dist/'s wheel for this version into a fresh venv (pip, from PyPI) and
# runs `manetlab run`, `reproduce --quick` and `examples` there with no Rust on PATH
# (the test compares against this tree, hence the development build too).
test-wheel: wheel $(BUILD_STAMP)
	$(PY) -m pytest -q -rs tests/test_wheel.py

# Validations too long for `make test` (their pass/fail checks are also tests);
# the tables they print are committed under docs/validation/.
validate:
	mkdir -p docs/validation
	cargo run --release --quiet -p manetlab-core --example validate_wireless > docs/validation/wireless.md.tmp
	mv docs/validation/wireless.md.tmp docs/validation/wireless.md
	cargo run --release --quiet -p manetlab-core --example validate_routing > docs/validation/routing.md.tmp
	mv docs/validation/routing.md.tmp docs/validation/routing.md
	$(MAKE) validate-ns2

# manetlab against the real ns-2.35 (`apt-get install ns2`): NS2_CHAIN_SEEDS seeds per
# chain row, NS2_RWP20_SEEDS per 20-node row, NS2_SEEDS per Broch row (900 s), NS2_JOBS
# processes; an ns-2 run whose trace stalls for 20 s is hung; rows left n.s. (outside
# ±3 % but not distinguishable; chains and 20-node rows) run on once with NS2_EXTEND_SEEDS
# seeds. About 75 min on 2 cores, plus 1–2 min per extended chain row.
NS2_SEEDS ?= 10
NS2_EXTEND_SEEDS ?= 200
NS2_CHAIN_SEEDS ?= 20
NS2_RWP20_SEEDS ?= 100
NS2_JOBS ?= 2
validate-ns2: $(BUILD_STAMP)
	$(PY) -m manetlab.ns2.validate --out docs/validation/ns2.md --seeds $(NS2_SEEDS) --chain-seeds $(NS2_CHAIN_SEEDS) --rwp20-seeds $(NS2_RWP20_SEEDS) --extend-seeds $(NS2_EXTEND_SEEDS) --jobs $(NS2_JOBS) --stall-s 20

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "manetlab needs Python >= 3.11 (set PYTHON=...)")'
	$(PYTHON) -m venv $(VENV)

# Dependencies come from pyproject.toml alone (runtime + dev extras), installed
# without building the project itself; maturin below builds and installs it.
$(DEPS_STAMP): pyproject.toml | $(PY)
	$(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; print("\n".join(p["dependencies"] + p["optional-dependencies"]["dev"]))' > $(VENV)/manetlab-requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r $(VENV)/manetlab-requirements.txt
	touch $@

# Release build installed in editable mode: Python edits need no rebuild, Rust edits do.
# With PGO=auto (default) and rustup's llvm-tools component installed, the core is
# built with profile-guided optimisation (benchmarks/pgo.py: an instrumented build
# runs the training set benchmarks/pgo/, ~1 min more; results are byte-identical,
# 7-18 % less CPU); PGO=0 never does.
PGO ?= auto
PGO_TRAINING := $(wildcard benchmarks/pgo/*.toml) benchmarks/pgo.py
$(BUILD_STAMP): $(RUST_INPUTS) pyproject.toml $(DEPS_STAMP) $(EXT_MISSING) $(PGO_TRAINING)
	@if [ "$(PGO)" != 0 ] && $(PY) benchmarks/pgo.py available; then \
		echo "building with PGO (benchmarks/pgo.py; PGO=0 to skip)"; \
		$(PY) benchmarks/pgo.py profile && \
		env -u CONDA_PREFIX VIRTUAL_ENV="$(abspath $(VENV))" CARGO_TARGET_DIR="$(abspath target/pgo-use)" \
			RUSTFLAGS="$$($(PY) benchmarks/pgo.py rustflags)" $(VENV)/bin/maturin develop --release; \
	else \
		env -u CONDA_PREFIX VIRTUAL_ENV="$(abspath $(VENV))" $(VENV)/bin/maturin develop --release; \
	fi
	touch $@

clean:
	cargo clean
	rm -rf results .pytest_cache .mypy_cache .ruff_cache python/manetlab/_core*.so python/manetlab/_data $(BUILD_STAMP)
	find python tests -name __pycache__ -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)

FORCE:
